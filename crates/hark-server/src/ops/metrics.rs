//! The etcd metric set Hark exports on `/metrics`: every series etcd's own
//! alerting rules and Grafana dashboard (`contrib/mixin`) read that applies to
//! one member, plus the mvcc and watch series the layers below record.
//!
//! Each series is described (Prometheus `HELP`, etcd's text) and created at
//! its zero value when the server starts, so the first scrape already holds
//! the whole set. The layers record under these names themselves
//! (`hark-mvcc`: disk, sizes, mvcc counters; `hark-raft`: proposals; `hark-watch`: watch
//! gauges); this module owns what they mean and what the server adds.

use std::sync::Arc;

use hark_raft::Replica;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder};

use crate::node::Node;

/// etcd's buckets for its disk latency histograms:
/// `prometheus.ExponentialBuckets(0.001, 2, 14)`.
const DISK_BUCKETS: [f64; 14] = [
    0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128, 0.256, 0.512, 1.024, 2.048, 4.096,
    8.192,
];

const DISK_HISTOGRAMS: [(&str, &str); 2] = [
    (
        "etcd_disk_wal_fsync_duration_seconds",
        "The latency distributions of fsync called by WAL.",
    ),
    (
        "etcd_disk_backend_commit_duration_seconds",
        "The latency distributions of commit called by backend.",
    ),
];

const GAUGES: [(&str, &str); 20] = [
    (
        "etcd_server_has_leader",
        "Whether or not a leader exists. 1 is existence, 0 is not.",
    ),
    (
        "etcd_server_is_leader",
        "Whether or not this member is a leader. 1 if is, 0 otherwise.",
    ),
    (
        "etcd_server_proposals_committed_total",
        "The total number of consensus proposals committed.",
    ),
    (
        "etcd_server_proposals_applied_total",
        "The total number of consensus proposals applied.",
    ),
    (
        "etcd_server_proposals_pending",
        "The current number of pending proposals to commit.",
    ),
    (
        "etcd_server_quota_backend_bytes",
        "Current backend storage quota size in bytes.",
    ),
    (
        "etcd_mvcc_db_total_size_in_bytes",
        "Total size of the underlying database physically allocated in bytes.",
    ),
    (
        "etcd_mvcc_db_total_size_in_use_in_bytes",
        "Total size of the underlying database logically in use in bytes.",
    ),
    (
        "etcd_debugging_mvcc_db_total_size_in_bytes",
        "Total size of the underlying database physically allocated in bytes.",
    ),
    (
        "etcd_debugging_mvcc_current_revision",
        "The current revision of store.",
    ),
    (
        "etcd_debugging_mvcc_compact_revision",
        "The revision of the last compaction in store.",
    ),
    ("etcd_debugging_mvcc_keys_total", "Total number of keys."),
    (
        "etcd_debugging_mvcc_watch_stream_total",
        "Total number of watch streams.",
    ),
    (
        "etcd_debugging_mvcc_watcher_total",
        "Total number of watchers.",
    ),
    (
        "etcd_debugging_mvcc_slow_watcher_total",
        "Total number of unsynced slow watchers.",
    ),
    (
        "etcd_debugging_mvcc_pending_events_total",
        "Total number of pending events to be sent.",
    ),
    (
        "etcd_server_version",
        "Which version is running. 1 for 'server_version' label with current version.",
    ),
    (
        "etcd_cluster_version",
        "Which version is running. 1 for 'cluster_version' label with current cluster version",
    ),
    (
        "hark_build_info",
        "Which Hark build is running: 1, with its version and commit as labels.",
    ),
    (
        hark_raft::PEER_LINKS,
        "Members that keep a link open to this member, over which it sends them its calls (the others are dialled).",
    ),
];

const COUNTERS: [(&str, &str); 13] = [
    (
        crate::transport::traffic::RECEIVED,
        "The total number of bytes received from grpc clients.",
    ),
    (
        crate::transport::traffic::SENT,
        "The total number of bytes sent to grpc clients.",
    ),
    (
        "etcd_server_leader_changes_seen_total",
        "The number of leader changes seen.",
    ),
    (
        "etcd_server_proposals_failed_total",
        "The total number of failed proposals seen.",
    ),
    (
        "etcd_server_health_success",
        "The total number of successful health checks",
    ),
    (
        "etcd_server_health_failures",
        "The total number of failed health checks",
    ),
    (
        "etcd_mvcc_put_total",
        "Total number of puts seen by this member.",
    ),
    (
        "etcd_mvcc_delete_total",
        "Total number of deletes seen by this member.",
    ),
    (
        "etcd_mvcc_range_total",
        "Total number of ranges seen by this member.",
    ),
    (
        "etcd_mvcc_txn_total",
        "Total number of txns seen by this member.",
    ),
    (
        "etcd_debugging_mvcc_events_total",
        "Total number of events sent by this member.",
    ),
    (
        hark_raft::PROPOSED_AGAIN,
        "Writes proposed again, to a later leader, because an earlier proposal of them was certain never to apply.",
    ),
    (
        hark_raft::FOLLOWER_READ_INDEX_CALLS,
        "Read-index calls this member made to its leader, each shared by the linearizable reads that waited for it.",
    ),
];

/// Hark's own: where a write waits, stage by stage (`hark-raft`'s
/// `stages.rs` names them). Its stages take tens of microseconds to
/// milliseconds, finer than etcd's disk buckets.
const STAGE_HISTOGRAM: (&str, &str) = (
    hark_raft::WRITE_STAGE_SECONDS,
    "Time a write spends in each stage of the write path (label stage).",
);

/// 25 µs doubling to 0.82 s.
const STAGE_BUCKETS: [f64; 16] = [
    0.000025, 0.00005, 0.0001, 0.0002, 0.0004, 0.0008, 0.0016, 0.0032, 0.0064, 0.0128, 0.0256,
    0.0512, 0.1024, 0.2048, 0.4096, 0.8192,
];

/// `prometheus.ExponentialBuckets(start, 2, count)`.
fn doubling(start: f64, count: i32) -> Vec<f64> {
    (0..count).map(|i| start * 2f64.powi(i)).collect()
}

/// More of etcd's histograms, each with its help and its buckets as
/// `ExponentialBuckets(start, 2, count)`: registered at start (so each shows
/// from the first scrape), recorded by the layer where the event happens.
/// bbolt's commit phases have no RocksDB counterpart: they stay empty.
const HISTOGRAMS: [(&str, &str, f64, i32); 21] = [
    (
        "etcd_debugging_disk_backend_commit_rebalance_duration_seconds",
        "The latency distributions of commit.rebalance called by bboltdb backend (none in Hark: its backend is RocksDB).",
        0.001,
        14,
    ),
    (
        "etcd_debugging_disk_backend_commit_spill_duration_seconds",
        "The latency distributions of commit.spill called by bboltdb backend (none in Hark: its backend is RocksDB).",
        0.001,
        14,
    ),
    (
        "etcd_debugging_disk_backend_commit_write_duration_seconds",
        "The latency distributions of commit.write called by bboltdb backend (none in Hark: its backend is RocksDB).",
        0.001,
        14,
    ),
    (
        "etcd_debugging_lease_ttl_total",
        "Bucketed histogram of lease TTLs.",
        1.0,
        24,
    ),
    (
        "etcd_debugging_mvcc_db_compaction_pause_duration_milliseconds",
        "Bucketed histogram of db compaction pause duration.",
        1.0,
        13,
    ),
    (
        "etcd_debugging_mvcc_db_compaction_total_duration_milliseconds",
        "Bucketed histogram of db compaction total duration.",
        100.0,
        14,
    ),
    (
        "etcd_debugging_mvcc_index_compaction_pause_duration_milliseconds",
        "Bucketed histogram of index compaction pause duration.",
        0.5,
        14,
    ),
    (
        "etcd_debugging_server_watch_send_loop_watch_stream_duration_seconds",
        "The total duration in seconds of running through the send loop watch stream response all events.",
        0.001,
        14,
    ),
    (
        "etcd_debugging_server_watch_send_loop_watch_stream_duration_per_event_seconds",
        "The average duration in seconds of running through the send loop watch stream response, per event.",
        0.001,
        14,
    ),
    (
        "etcd_debugging_server_watch_send_loop_control_stream_duration_seconds",
        "The total duration in seconds of running through the send loop control stream response.",
        0.001,
        14,
    ),
    (
        "etcd_debugging_server_watch_send_loop_progress_duration_seconds",
        "The total duration in seconds of running through the progress loop control stream response.",
        0.001,
        14,
    ),
    (
        "etcd_debugging_snap_save_marshalling_duration_seconds",
        "The marshalling cost distributions of save called by snapshot.",
        0.001,
        14,
    ),
    (
        "etcd_debugging_snap_save_total_duration_seconds",
        "The total latency distributions of save called by snapshot.",
        0.001,
        14,
    ),
    (
        "etcd_disk_backend_defrag_duration_seconds",
        "The latency distribution of backend defragmentation.",
        0.1,
        13,
    ),
    (
        "etcd_disk_backend_snapshot_duration_seconds",
        "The latency distribution of backend snapshots.",
        0.01,
        17,
    ),
    (
        "etcd_disk_wal_write_duration_seconds",
        "The latency distributions of write called by WAL.",
        0.001,
        14,
    ),
    (
        "etcd_mvcc_hash_duration_seconds",
        "The latency distribution of storage hash operation.",
        0.01,
        15,
    ),
    (
        "etcd_mvcc_hash_rev_duration_seconds",
        "The latency distribution of storage hash by revision operation.",
        0.01,
        15,
    ),
    (
        "etcd_snap_db_fsync_duration_seconds",
        "The latency distributions of fsyncing .snap.db file",
        0.001,
        14,
    ),
    (
        "etcd_snap_db_save_total_duration_seconds",
        "The total latency distributions of v3 snapshot save",
        0.1,
        10,
    ),
    (
        "etcd_snap_fsync_duration_seconds",
        "The latency distributions of fsync called by snap.",
        0.001,
        14,
    ),
];

/// etcd's labelled histograms: they show once a first sample has labels,
/// as etcd's do.
const LABELLED_HISTOGRAMS: [(&str, &str, f64, i32); 3] = [
    (
        "etcd_server_apply_duration_seconds",
        "The latency distributions of v2 apply called by backend.",
        0.0001,
        20,
    ),
    (
        "etcd_server_range_duration_seconds",
        "The latency distributions of txn.Range",
        0.0001,
        20,
    ),
    (
        "etcd_server_request_duration_seconds",
        "Response latency distribution in seconds for each type.",
        0.001,
        14,
    ),
];

/// More of etcd's counters and gauges, created at zero. The v2 store's and
/// the gRPC proxy's stay at zero: Hark has neither.
const MORE_COUNTERS: [(&str, &str); 14] = [
    (
        "etcd_debugging_lease_granted_total",
        "The total number of granted leases.",
    ),
    (
        "etcd_debugging_lease_renewed_total",
        "The number of renewed leases seen by the leader.",
    ),
    (
        "etcd_debugging_lease_revoked_total",
        "The total number of revoked leases.",
    ),
    (
        "etcd_debugging_mvcc_db_compaction_keys_total",
        "Total number of db keys compacted.",
    ),
    (
        "etcd_debugging_server_lease_expired_total",
        "The total number of expired leases.",
    ),
    (
        "etcd_debugging_store_expires_total",
        "Total number of expired keys.",
    ),
    (
        "etcd_debugging_store_watch_requests_total",
        "Total number of incoming watch requests (new or reestablished).",
    ),
    (
        "etcd_grpc_proxy_events_coalescing_total",
        "Total number of events coalescing",
    ),
    (
        "etcd_server_heartbeat_send_failures_total",
        "The total number of leader heartbeat send failures (likely overloaded from slow disk).",
    ),
    (
        "etcd_server_learner_promote_successes",
        "The total number of successful learner promotions while this member is leader.",
    ),
    (
        "etcd_server_read_indexes_failed_total",
        "The total number of failed read indexes seen.",
    ),
    (
        "etcd_server_slow_apply_total",
        "The total number of slow apply requests (likely overloaded from slow disk).",
    ),
    (
        "etcd_server_slow_read_indexes_total",
        "The total number of pending read indexes not in sync with leader's or timed out read index requests.",
    ),
    (
        "etcd_server_client_requests_total",
        "The total number of client requests per client version.",
    ),
];

const MORE_GAUGES: [(&str, &str); 14] = [
    (
        "etcd_debugging_auth_revision",
        "The current revision of auth store.",
    ),
    (
        "etcd_debugging_mvcc_db_compaction_last",
        "The unix time of the last db compaction. Resets to 0 on start.",
    ),
    (
        "etcd_debugging_mvcc_total_put_size_in_bytes",
        "The total size of put kv pairs seen by this member.",
    ),
    (
        "etcd_debugging_store_watchers",
        "Count of currently active watchers.",
    ),
    (
        "etcd_disk_defrag_inflight",
        "Whether or not defrag is active on the member. 1 means active, 0 means not.",
    ),
    (
        "etcd_disk_wal_write_bytes_total",
        "Total number of bytes written in WAL.",
    ),
    (
        "etcd_grpc_proxy_cache_hits_total",
        "Total number of cache hits",
    ),
    (
        "etcd_grpc_proxy_cache_keys_total",
        "Total number of keys/ranges cached",
    ),
    (
        "etcd_grpc_proxy_cache_misses_total",
        "Total number of cache misses",
    ),
    (
        "etcd_grpc_proxy_watchers_coalescing_total",
        "Total number of current watchers coalescing",
    ),
    (
        "etcd_mvcc_db_open_read_transactions",
        "The number of currently open read transactions",
    ),
    (
        "etcd_server_is_learner",
        "Whether or not this member is a learner. 1 if is, 0 otherwise.",
    ),
    (
        "etcd_server_snapshot_apply_in_progress_total",
        "1 if the server is applying the incoming snapshot. 0 if none.",
    ),
    (
        "etcd_network_known_peers",
        "The current number of known peers.",
    ),
];

/// Labelled series described here and created by the layer that counts
/// them (peer ids, client versions).
const LABELLED: [(&str, &str); 5] = [
    (
        "etcd_network_active_peers",
        "The current number of active peer connections.",
    ),
    (
        hark_mvcc::backend::MEMORY_GAUGE,
        "Memory RocksDB holds outside the Rust heap, by database (store, log) and kind (memtables, table_readers, block_cache).",
    ),
    (
        "etcd_network_peer_sent_bytes_total",
        "The total number of bytes sent to peers.",
    ),
    (
        "etcd_network_peer_received_bytes_total",
        "The total number of bytes received from peers.",
    ),
    (
        "etcd_server_id",
        "Server or member ID in hexadecimal format. 1 for 'server_id' label with current ID.",
    ),
];

/// The recorder's histogram buckets: etcd's for each of its series.
pub fn configure(builder: PrometheusBuilder) -> PrometheusBuilder {
    let builder = DISK_HISTOGRAMS.iter().fold(builder, |b, (name, _)| {
        b.set_buckets_for_metric(Matcher::Full((*name).to_string()), &DISK_BUCKETS)
            .expect("the bucket list is not empty")
    });
    let builder = HISTOGRAMS.iter().chain(&LABELLED_HISTOGRAMS).fold(
        builder,
        |b, (name, _, start, count)| {
            b.set_buckets_for_metric(
                Matcher::Full((*name).to_string()),
                &doubling(*start, *count),
            )
            .expect("the bucket list is not empty")
        },
    );
    // go-grpc-prometheus' handling histogram: Prometheus' default buckets.
    let builder = builder
        .set_buckets_for_metric(
            Matcher::Full(crate::transport::grpc_metrics::HANDLING_SECONDS.to_string()),
            &[
                0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
            ],
        )
        .expect("the bucket list is not empty");
    builder
        .set_buckets_for_metric(Matcher::Full(STAGE_HISTOGRAM.0.to_string()), &STAGE_BUCKETS)
        .expect("the bucket list is not empty")
}

/// Describes every series and creates it at its starting value. Called once
/// the recorder is installed and the node exists.
pub fn register(node: &Node) {
    for (name, help) in GAUGES {
        metrics::describe_gauge!(name, help);
    }
    for (name, help) in COUNTERS {
        metrics::describe_counter!(name, help);
        metrics::counter!(name).increment(0);
    }
    for (name, help) in DISK_HISTOGRAMS {
        metrics::describe_histogram!(name, metrics::Unit::Seconds, help);
        // Registers the histogram, so its buckets show at zero before a sample.
        let _ = metrics::histogram!(name);
    }
    metrics::describe_histogram!(STAGE_HISTOGRAM.0, metrics::Unit::Seconds, STAGE_HISTOGRAM.1);
    for (name, help, ..) in HISTOGRAMS {
        metrics::describe_histogram!(name, help);
        let _ = metrics::histogram!(name);
    }
    for (name, help, ..) in LABELLED_HISTOGRAMS {
        metrics::describe_histogram!(name, help);
    }
    for (name, help) in MORE_COUNTERS {
        metrics::describe_counter!(name, help);
        if name != "etcd_server_client_requests_total" {
            metrics::counter!(name).increment(0);
        }
    }
    for (name, help) in MORE_GAUGES {
        metrics::describe_gauge!(name, help);
        if name != "etcd_network_known_peers" {
            metrics::gauge!(name).increment(0.0);
        }
    }
    for (name, help) in LABELLED {
        metrics::describe_gauge!(name, help);
    }
    let member = format!("{:x}", node.replica.member_id());
    metrics::gauge!("etcd_server_id", "server_id" => member).set(1.0);
    metrics::describe_gauge!(
        "etcd_server_go_version",
        "Which Go version server is running with. 1 for 'server_go_version' label with current version."
    );
    metrics::gauge!("etcd_server_go_version",
        "server_go_version" => crate::ops::runtime_metrics::RUST_VERSION)
    .set(1.0);
    crate::ops::runtime_metrics::register();
    // The gauges the layers below keep up to date start at zero here; those
    // with a known value now get it.
    for (name, _) in GAUGES {
        if !matches!(
            name,
            "etcd_server_version" | "etcd_cluster_version" | "hark_build_info"
        ) {
            metrics::gauge!(name).increment(0.0);
        }
    }
    metrics::gauge!("etcd_server_version", "server_version" => crate::ETCD_VERSION).set(1.0);
    metrics::gauge!("etcd_cluster_version", "cluster_version" => crate::cluster_version_minor())
        .set(1.0);
    metrics::gauge!("hark_build_info", "version" => crate::HARK_VERSION, "commit" => crate::GIT_COMMIT)
        .set(1.0);
    metrics::gauge!("etcd_server_quota_backend_bytes").set(node.quota_bytes as f64);
    metrics::gauge!("etcd_debugging_mvcc_current_revision")
        .set(node.store.current_revision() as f64);
    metrics::gauge!("etcd_debugging_mvcc_compact_revision")
        .set(node.store.compacted_revision() as f64);
    metrics::gauge!("etcd_debugging_mvcc_keys_total").set(node.store.live_key_count() as f64);
    process_collector().describe();
    refresh(node);
}

/// Brings the series measured on demand up to date; called before each scrape.
pub fn refresh(node: &Node) {
    set_leadership(&node.replica);
    set_peers(&node.replica);
    metrics::gauge!("etcd_server_is_learner").set(f64::from(u8::from(node.replica.is_learner())));
    if let Ok(auth) = node.auth.state() {
        metrics::gauge!("etcd_debugging_auth_revision").set(auth.revision() as f64);
    }
    crate::ops::runtime_metrics::refresh();
    node.replica.record_log_memory();
    // Reading the sizes re-measures them when stale, which sets their gauges.
    let _ = node.store.db_size();
    process_collector().collect();
}

/// Drains the recorder's histograms into their buckets every few seconds.
/// The recorder keeps each sample until then: without this, a member that
/// nobody scrapes would hold every write's timings in memory for ever.
pub async fn keep_histograms_drained() {
    let Some(handle) = crate::ops::probes::prometheus() else {
        return;
    };
    let mut every = tokio::time::interval(std::time::Duration::from_secs(5));
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        every.tick().await;
        handle.run_upkeep();
    }
}

/// Prefixes per depth exported as `hark_prefix_*` series.
pub const TOP_PREFIXES: usize = 10;

/// Space per prefix as Prometheus text, appended to each scrape: the
/// [`TOP_PREFIXES`] largest prefixes (by bytes with history) at each tracked
/// depth. Written fresh per scrape, so a prefix that leaves the top set
/// leaves no stale series behind, and the set stays bounded however many
/// prefixes the store holds. Empty while auth is enabled: `/metrics` asks
/// nobody who they are (as etcd's), and prefixes are pieces of key names
/// (`harkctl du` checks read permission instead).
pub fn prefix_usage_text(node: &Node) -> String {
    use std::fmt::Write;
    if node.auth.state().map_or(true, |s| s.enabled()) {
        return String::new();
    }
    let top = node.store.largest_prefixes(TOP_PREFIXES);
    type Series = (&'static str, &'static str, fn(&hark_mvcc::Usage) -> i64);
    let series: [Series; 4] = [
        (
            "hark_prefix_keys",
            "Keys that exist under a key prefix.",
            |u| u.keys,
        ),
        (
            "hark_prefix_bytes",
            "Length of the keys and values that exist under a key prefix.",
            |u| u.bytes,
        ),
        (
            "hark_prefix_revisions",
            "Stored revisions under a key prefix that compaction has not removed.",
            |u| u.revisions,
        ),
        (
            "hark_prefix_history_bytes",
            "Bytes of the stored revisions under a key prefix (what compaction and defragmentation give back).",
            |u| u.history_bytes,
        ),
    ];
    let mut out = String::new();
    for (name, help, value) in series {
        let _ = writeln!(
            out,
            "# HELP {name} {help} The {TOP_PREFIXES} largest prefixes at each depth."
        );
        let _ = writeln!(out, "# TYPE {name} gauge");
        for stat in &top {
            let _ = writeln!(
                out,
                "{name}{{prefix=\"{}\",depth=\"{}\"}} {}",
                escape_label(&String::from_utf8_lossy(&stat.prefix)),
                stat.depth,
                value(&stat.usage)
            );
        }
    }
    out
}

/// The exposition `text` with every sample's labels in name order, as
/// etcd's exporter (client_golang) writes them: tools and etcd's own tests
/// match whole lines such as
/// `grpc_server_handled_total{grpc_code="OK",grpc_method="Range",...}`,
/// while the exporter keeps each series' labels in the order they were
/// given.
pub fn with_sorted_labels(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        match sort_line(line) {
            Some(sorted) => out.push_str(&sorted),
            None => out.push_str(line),
        }
    }
    out
}

/// `line` with its labels sorted; `None` when it has none to sort (or is
/// not a sample line).
fn sort_line(line: &str) -> Option<String> {
    if line.starts_with('#') {
        return None;
    }
    let open = line.find('{')?;
    let (name, rest) = line.split_at(open);
    let mut labels: Vec<&str> = Vec::new();
    let bytes = rest.as_bytes();
    // Past '{': `name="value"` pairs, values with \\, \" and \n escapes.
    let (mut i, mut start, mut in_value) = (1, 1, false);
    let close = loop {
        let b = *bytes.get(i)?;
        match (in_value, b) {
            (true, b'\\') => i += 1,
            (_, b'"') => in_value = !in_value,
            (false, b',') => {
                labels.push(&rest[start..i]);
                start = i + 1;
            }
            (false, b'}') => break i,
            _ => {}
        }
        i += 1;
    };
    if start < close {
        labels.push(&rest[start..close]);
    }
    if labels
        .windows(2)
        .all(|w| label_order(w[0]) <= label_order(w[1]))
    {
        return None;
    }
    labels.sort_by_key(|l| label_order(l));
    Some(format!(
        "{name}{{{}}}{}",
        labels.join(","),
        &rest[close + 1..]
    ))
}

/// Where a label goes: by name, but a bucket's `le` and a summary's
/// `quantile` last, where client_golang writes them.
fn label_order(pair: &str) -> (bool, &str) {
    let name = pair.split('=').next().unwrap_or(pair);
    (matches!(name, "le" | "quantile"), name)
}

/// A Prometheus label value: backslash, double quote and newline escaped.
fn escape_label(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// `etcd_server_has_leader` and `etcd_server_is_leader` as the log sees
/// them now. A leader that has not heard from a quorum within an election
/// timeout counts as having none (etcd's check-quorum steps it down), so
/// etcd's `etcdNoLeader` alert fires on a member cut off from the others.
fn set_leadership(replica: &Replica) {
    let has_leader = replica.has_leader();
    metrics::gauge!("etcd_server_has_leader").set(f64::from(u8::from(has_leader)));
    let is_leader = has_leader && replica.is_leader();
    metrics::gauge!("etcd_server_is_leader").set(f64::from(u8::from(is_leader)));
}

/// `etcd_network_known_peers{Local,Remote}`: 1 for each member, this one
/// included, as etcd's; `etcd_network_active_peers`: 1 for each other
/// member answering this member's raft calls now. A member that has left
/// gets 0 in both (a series cannot be taken back once exported).
fn set_peers(replica: &Replica) {
    static SEEN: parking_lot::Mutex<Vec<u64>> = parking_lot::Mutex::new(Vec::new());
    let me = replica.member_id();
    let local = format!("{me:x}");
    let mut known = replica.peers();
    known.push((me, false));
    let mut seen = SEEN.lock();
    for gone in seen
        .iter()
        .filter(|id| !known.iter().any(|(p, _)| p == *id))
    {
        let remote = format!("{gone:x}");
        for name in ["etcd_network_known_peers", "etcd_network_active_peers"] {
            metrics::gauge!(name, "Local" => local.clone(), "Remote" => remote.clone()).set(0.0);
        }
    }
    for (id, active) in &known {
        let remote = format!("{id:x}");
        metrics::gauge!("etcd_network_known_peers",
            "Local" => local.clone(), "Remote" => remote.clone())
        .set(1.0);
        if *id != me {
            metrics::gauge!("etcd_network_active_peers", "Local" => local.clone(), "Remote" => remote)
                .set(f64::from(u8::from(*active)));
        }
    }
    *seen = known.iter().map(|(id, _)| *id).collect();
}

/// Keeps the leadership series current between scrapes and counts
/// `etcd_server_leader_changes_seen_total` as etcd does: each time the
/// leader this member knows of becomes a member other than the last one it
/// knew (an election this member saw end, including the first).
pub async fn follow_leader(replica: Arc<Replica>) {
    let mut leadership = replica.leadership();
    let mut last = None;
    loop {
        let leader = leadership.leader();
        if leader.is_some() && leader != last {
            metrics::counter!("etcd_server_leader_changes_seen_total").increment(1);
        }
        last = leader;
        set_leadership(&replica);
        if !leadership.changed().await {
            return;
        }
    }
}

/// The `process_*` series (resident memory, CPU seconds, open and max file
/// descriptors, start time, threads), as Prometheus' process collector names them.
fn process_collector() -> &'static metrics_process::Collector {
    static COLLECTOR: std::sync::OnceLock<metrics_process::Collector> = std::sync::OnceLock::new();
    COLLECTOR.get_or_init(metrics_process::Collector::default)
}

#[cfg(test)]
mod tests {
    use super::with_sorted_labels;

    #[test]
    fn labels_come_out_in_name_order_as_etcds_exporter_writes_them() {
        let text = "# HELP grpc_server_handled_total Total.\n\
            # TYPE grpc_server_handled_total counter\n\
            grpc_server_handled_total{grpc_type=\"bidi_stream\",grpc_service=\"etcdserverpb.Watch\",grpc_method=\"Watch\",grpc_code=\"Canceled\"} 6\n\
            plain_total 3\n\
            already{a=\"1\",b=\"2\"} 1\n\
            odd{z=\"a,b}\\\"c\",a=\"x\"} 2\n\
            h_bucket{stage=\"queue\",le=\"0.001\"} 3\n\
            h_bucket{le=\"0.001\",stage=\"queue\"} 3\n";
        let want = "# HELP grpc_server_handled_total Total.\n\
            # TYPE grpc_server_handled_total counter\n\
            grpc_server_handled_total{grpc_code=\"Canceled\",grpc_method=\"Watch\",grpc_service=\"etcdserverpb.Watch\",grpc_type=\"bidi_stream\"} 6\n\
            plain_total 3\n\
            already{a=\"1\",b=\"2\"} 1\n\
            odd{a=\"x\",z=\"a,b}\\\"c\"} 2\n\
            h_bucket{stage=\"queue\",le=\"0.001\"} 3\n\
            h_bucket{stage=\"queue\",le=\"0.001\"} 3\n";
        assert_eq!(with_sorted_labels(text), want);
    }
}
