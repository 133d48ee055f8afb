//! `start` wires a member from its [`Plan`]; [`RunningServer::shutdown`]
//! stops it in the order `tasks.rs` states.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt;
use hark_lease::Lessor;
use hark_mvcc::Store;
use hark_raft::{Replica, ReplicaConfig};
use hark_watch::WatchHub;
use tonic::service::Routes;

use crate::cluster_leases::{LeaseForwards, ReplicatedLeases, follow_leadership};
use crate::config::Config;
use crate::listeners::{Bound, ConnectionRules, Schemes, Traffic, serve, serve_peers};
use crate::node::{Node, NodeHandle};
use crate::ops::{auto_compaction, auto_defrag, probes, scheduled_backups};
use crate::plan::{Plan, TlsPlan};
use crate::routes::listener_routes;
use crate::tasks::Tasks;
use crate::transport::tls::TlsServer;

/// How long shutdown waits for in-flight requests, and then for each later step.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(10);

/// A serving Hark member; [`RunningServer::shutdown`] stops it cleanly.
pub struct RunningServer {
    /// Bound client addresses (gRPC and HTTP), in `--listen-client-urls` order.
    pub client_addrs: Vec<SocketAddr>,
    /// Bound `--listen-metrics-urls` addresses.
    pub metrics_addrs: Vec<SocketAddr>,
    /// Bound `--listen-client-http-urls` addresses.
    pub client_http_addrs: Vec<SocketAddr>,
    /// `http(s)://addr` of each client listener, in the same order.
    client_endpoints: Vec<String>,
    node: Arc<Node>,
    node_dropped: tokio::sync::oneshot::Receiver<()>,
    tasks: Tasks,
    /// Resolves once this member's client URLs are in the membership: its
    /// client listeners serve from then on (etcd's ReadyNotify).
    published: futures_util::future::Shared<tokio::sync::oneshot::Receiver<()>>,
}

/// Binds every listener, resolves the flags, opens the data dir, starts the
/// log, the engine and the lessor, and starts serving.
pub async fn start(config: &Config) -> Result<RunningServer, String> {
    // Ports first: a taken port must fail the start before the store and its
    // threads exist (seen: the process then crashed on its way out).
    let bound = Bound::bind(config).await?;
    let plan = Plan::resolve(config, &bound)?;
    tracing::info!(
        "etcd-version" = crate::ETCD_VERSION,
        "hark-version" = crate::HARK_VERSION,
        name = %config.name,
        "data-dir" = %plan.data_dir.display(),
        "listen-client-urls" = ?config.listen_client_urls,
        "advertise-client-urls" = ?config.advertise_client_urls,
        "listen-peer-urls" = ?config.listen_peer_urls,
        "initial-cluster" = %config.initial_cluster,
        "snapshot-count" = config.snapshot_count,
        "snapshot-catchup-entries" = config.snapshot_catchup_entries(),
        // Hark serves no v2 API: etcd 3.7's enforced level, whatever
        // --v2-deprecation says.
        "v2-deprecation" = "write-only",
        "starting an etcd server"
    );
    if let Some(snapshot) = &config.from_snapshot {
        restore_first(
            snapshot,
            &plan.data_dir,
            &plan.raft_dirs.log,
            plan.store.backend,
        )
        .await?;
    }
    let client_tls = plan.client_tls.map(open_tls).transpose()?;
    let peer_tls = plan.peer_tls.map(open_tls).transpose()?;
    let store = {
        let (dir, options) = (plan.data_dir.clone(), plan.store);
        tokio::task::spawn_blocking(move || Store::open(dir, options))
            .await
            .map_err(|e| e.to_string())?
            .map_err(|e| format!("cannot open data dir {}: {e}", plan.data_dir.display()))?
    };
    remove_snapshot_scratch(&plan.data_dir);
    if config.bootstrap_defrag_threshold_megabytes > 0 {
        bootstrap_defrag(&store, config.bootstrap_defrag_threshold_megabytes).await?;
    }
    // The engine's thread keeps the default priority: at niceness 19 a busy
    // neighbour delayed live events by tens of ms (docs/benchmarks.md, #34).
    let hub = WatchHub::new(store.clone(), plan.watch);
    let replica_config = ReplicaConfig {
        peer_tls: peer_tls.as_ref().and_then(|t| t.peer_tls()),
        ..plan.replica
    };
    let replica = Replica::start(replica_config, store.clone(), &plan.raft_dirs).await?;
    let lease_log = Arc::new(ReplicatedLeases {
        replica: replica.clone(),
        runtime: tokio::runtime::Handle::current(),
    });
    let lessor = Lessor::start_with_log(store.clone(), lease_log, plan.lessor, false);
    let auth = hark_auth::AuthStore::new(store.clone(), plan.auth)
        .map_err(|e| format!("cannot read the auth store: {e}"))?;
    let mut tasks = Tasks::default();
    let (dropped, node_dropped) = tokio::sync::oneshot::channel();
    let node = Arc::new(Node {
        auth,
        store,
        hub,
        lessor,
        name: plan.name,
        data_dir: plan.data_dir,
        client_urls: plan.addrs.advertised_client_urls,
        max_request_bytes: plan.limits.max_request_bytes,
        quota_bytes: plan.limits.quota_bytes,
        replica: replica.clone(),
        stop: tasks.stop(),
        streams: tasks.streams(),
        _dropped: dropped,
    });

    // The recorder first, so that the series registered next are kept.
    let _ = probes::prometheus();
    crate::ops::metrics::register(&node);

    if plan.cors.split(',').any(|o| o.trim() == "*")
        && !node.auth.state().is_ok_and(|s| s.enabled())
    {
        tracing::warn!(
            "--cors='*' with auth disabled: any web page a user opens can read and write this store"
        );
    }
    let handle = NodeHandle::new(&node);
    let routes = listener_routes(
        &handle,
        plan.limits,
        &plan.cors,
        !bound.client_http.is_empty(),
    );
    // As etcd's ReadyNotify: the client listeners serve once the membership
    // shows this member's client URLs (connections wait in the backlog
    // until then); the metrics listener serves at once.
    let (first_published, published) = tokio::sync::oneshot::channel();
    let published = published.shared();
    let rules = |traffic| ConnectionRules {
        traffic,
        max_streams: plan.limits.max_concurrent_streams,
        keepalive: plan.limits.keepalive,
    };
    let tls_if = |schemes: Schemes| schemes.tls().then(|| client_tls.clone()).flatten();
    // (kind, listeners, routes, traffic, waits for publish)
    let listeners = [
        (
            "client",
            bound.client,
            &routes.client,
            Traffic::Counted,
            true,
        ),
        (
            "client-http",
            bound.client_http,
            &routes.client_http,
            Traffic::Counted,
            true,
        ),
        (
            "metrics",
            bound.metrics,
            &routes.metrics,
            Traffic::NotCounted,
            false,
        ),
    ];
    for (kind, bound, routes, traffic, waits) in listeners {
        for listener in bound {
            let address = listener.local_addr();
            let name = format!("{kind} {address}");
            let schemes = listener.schemes;
            let serving = serve(
                listener,
                tls_if(schemes),
                routes.clone(),
                tasks.stop(),
                rules(traffic),
            );
            if !waits {
                tasks.listener(name, serving);
                continue;
            }
            let (published, stop) = (published.clone(), tasks.stop());
            let traffic = if kind == "client" {
                "grpc+http"
            } else {
                "http"
            };
            tasks.listener(name, async move {
                tokio::select! {
                    first = published => if first.is_ok() {
                        log_serving(traffic, &address, schemes);
                        serving.await
                    },
                    _ = stop.raised() => {}
                }
            });
        }
    }
    let peers = Routes::new(replica.peer_service());
    for listener in bound.peer {
        let name = format!("peer {}", listener.local_addr());
        let tls = listener.schemes.tls().then(|| peer_tls.clone()).flatten();
        tasks.listener(
            name,
            serve_peers(listener, tls, peers.clone(), tasks.stop()),
        );
    }
    for tls in client_tls.iter().chain(&peer_tls) {
        tasks.background("certificate reload", tls.clone().watch_files());
    }
    replica.set_forward_handler(Arc::new(LeaseForwards {
        node: handle.clone(),
    }));
    tasks.background("leadership log", replica.leadership().log_changes());
    tasks.background(
        "leadership metrics",
        crate::ops::metrics::follow_leader(replica.clone()),
    );
    tasks.background(
        "metrics upkeep",
        crate::ops::metrics::keep_histograms_drained(),
    );
    tasks.background(
        "lessor follows leadership",
        follow_leadership(replica.clone(), handle.clone()),
    );
    let mut running = RunningServer {
        client_addrs: plan.addrs.client,
        metrics_addrs: plan.addrs.metrics,
        client_http_addrs: plan.addrs.client_http,
        client_endpoints: plan.addrs.client_endpoints,
        node,
        node_dropped,
        tasks,
        published: published.clone(),
    };
    // As etcd, the check comes before the publish, which the client
    // listeners wait for: a member whose data disagrees with its peers'
    // never serves a client.
    if plan.corruption.initial
        && let Err(e) = replica.initial_corruption_check().await
    {
        running.shutdown().await;
        return Err(e);
    }
    let node = running.node.clone();
    running.tasks.background("cluster version log", {
        let (published, replica) = (published.clone(), replica.clone());
        async move {
            if published.await.is_ok() {
                log_cluster_version(&replica);
            }
        }
    });
    // etcd's publish: this member's name and client URLs in the membership.
    running.tasks.background("publish", {
        let (replica, name, urls) = (replica.clone(), node.name.clone(), node.client_urls.clone());
        async move { replica.keep_published(name, urls, first_published).await }
    });
    if let Some(compaction) = auto_compaction::run(handle.clone(), plan.retention) {
        running.tasks.background("auto-compaction", compaction);
    }
    if let Some(backups) = scheduled_backups::run(handle.clone(), plan.backups.clone()) {
        running.tasks.background("scheduled backups", backups);
    }
    if let Some(defrag) = auto_defrag::run(handle.clone(), plan.auto_defrag) {
        running.tasks.background("auto-defrag", defrag);
    }
    if let Some(every) = plan.corruption.compact_hash_every {
        let stop = running.tasks.stop();
        running.tasks.background(
            "compact hash check",
            replica
                .clone()
                .compact_hash_check_every(every, async move { stop.raised().await }),
        );
    }
    if let Some(every) = plan.corruption.every {
        let stop = running.tasks.stop();
        running.tasks.background(
            "corruption check",
            replica.check_for_corruption_every(every, async move { stop.raised().await }),
        );
    }
    tracing::info!(
        name = %node.name,
        data_dir = %node.data_dir.display(),
        clients = ?running.client_addrs,
        metrics = ?running.metrics_addrs,
        client_http = ?running.client_http_addrs,
        revision = node.store.current_revision(),
        "hark is serving"
    );
    drop(node);
    Ok(running)
}

/// etcd's lines for the cluster version a serving member works at (Hark's
/// is fixed: [`crate::ETCD_CLUSTER_VERSION`]), with etcd's keys.
fn log_cluster_version(replica: &Replica) {
    let version = crate::cluster_version_minor();
    tracing::info!(
        "cluster-id" = %format!("{:x}", replica.cluster_id()),
        "local-member-id" = %format!("{:x}", replica.member_id()),
        "cluster-version" = version,
        "set initial cluster version"
    );
    tracing::info!(
        "cluster-version" = version,
        "enabled capabilities for version"
    );
}

/// etcd's lines for a client listener that starts serving, which tools
/// and etcd's own test framework wait for (`ready to serve client
/// requests`), with etcd's keys.
fn log_serving(traffic: &str, address: &str, schemes: Schemes) {
    tracing::info!("ready to serve client requests");
    if schemes.tls() {
        tracing::info!(traffic, address, "serving client traffic securely");
    }
    if schemes.plain() {
        tracing::info!(
            traffic,
            address,
            "serving client traffic insecurely; this is strongly discouraged!"
        );
    }
}

/// `--bootstrap-defrag-threshold-megabytes`: defragments the store before
/// it serves when at least that much of it is reclaimable, with etcd's
/// lines and keys either way.
async fn bootstrap_defrag(store: &Store, threshold_mb: u64) -> Result<(), String> {
    let (size, in_use) = (store.db_size(), store.db_size_in_use());
    let threshold = threshold_mb.saturating_mul(1024 * 1024);
    if size.saturating_sub(in_use) < threshold {
        tracing::info!(
            "current-db-size-bytes" = size,
            "current-db-size" = %hark_snapshot::si_bytes(size),
            "current-db-size-in-use-bytes" = in_use,
            "current-db-size-in-use" = %hark_snapshot::si_bytes(in_use),
            "bootstrap-defrag-threshold-bytes" = threshold,
            "bootstrap-defrag-threshold" = %hark_snapshot::si_bytes(threshold),
            "Skipping defragmentation"
        );
        return Ok(());
    }
    tracing::info!(
        "current-db-size-bytes" = size,
        "current-db-size-in-use-bytes" = in_use,
        "defragmenting the store before serving"
    );
    let store = store.clone();
    tokio::task::spawn_blocking(move || store.defragment())
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| format!("bootstrap defragmentation failed: {e}"))
}

fn open_tls(plan: TlsPlan) -> Result<Arc<TlsServer>, String> {
    TlsServer::new(plan.settings, &plan.auto_dir, &plan.hosts)
}

/// `--from-snapshot`: a data dir that holds nothing yet is built from the
/// snapshot; one that holds a store is left alone (a restart with the same
/// flags must not lose what was written since). A separate `--wal-dir` that
/// already holds a log is refused, as etcdutl refuses it: that log would be
/// applied again on top of the restored store.
async fn restore_first(
    snapshot: &std::path::Path,
    data_dir: &std::path::Path,
    wal_dir: &std::path::Path,
    backend: hark_mvcc::BackendKind,
) -> Result<(), String> {
    // Scheduled backups' default directory is not a store.
    let empty = std::fs::read_dir(data_dir)
        .map_or(true, |e| e.flatten().all(|e| e.file_name() == "backups"));
    if !empty {
        tracing::info!(
            data_dir = %data_dir.display(),
            "the data dir already holds a store; --from-snapshot is not applied"
        );
        return Ok(());
    }
    if std::fs::read_dir(wal_dir).is_ok_and(|mut e| e.next().is_some()) {
        return Err(format!(
            "wal-dir {:?} not empty or could not be read: --from-snapshot restores into an empty log only",
            wal_dir.display().to_string()
        ));
    }
    let (from, into) = (snapshot.to_path_buf(), data_dir.to_path_buf());
    let restored = tokio::task::spawn_blocking(move || {
        let options = hark_snapshot::RestoreOptions {
            backend,
            ..Default::default()
        };
        hark_snapshot::restore(&from, &into, &options)
    })
    .await
    .map_err(|e| e.to_string())?
    .map_err(|e| format!("cannot restore {}: {e}", snapshot.display()))?;
    tracing::info!(
        snapshot = %snapshot.display(),
        revision = restored.revision,
        compact_revision = restored.compact_revision,
        "restored the data dir from a snapshot"
    );
    Ok(())
}

/// Removes what a snapshot being sent left behind when the process died
/// (`Maintenance::Snapshot` writes under `<data-dir>/.snapshot-*`).
fn remove_snapshot_scratch(data_dir: &std::path::Path) {
    let Ok(entries) = std::fs::read_dir(data_dir) else {
        return;
    };
    for entry in entries.flatten() {
        if entry
            .file_name()
            .to_string_lossy()
            .starts_with(".snapshot-")
        {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

impl RunningServer {
    /// `http://addr` (`https://` for TLS) of each client listener.
    pub fn endpoints(&self) -> Vec<String> {
        self.client_endpoints.clone()
    }

    pub fn node(&self) -> &Arc<Node> {
        &self.node
    }

    /// Resolves once the member serves clients: it has joined the cluster
    /// (a quorum elected a leader) and its client URLs are published, as
    /// etcd's ReadyNotify; `false` if it stopped first. What systemd's
    /// `READY=1` waits for: a member of a cluster without quorum is not
    /// ready, whatever its listeners.
    pub async fn serving(&self) -> bool {
        self.published.clone().await.is_ok()
    }

    /// Resolves when the member can no longer serve by itself: its
    /// replicated log stopped on a fatal error (an apply or append the disk
    /// refused, a snapshot it could not build, a panic in the log's tasks).
    /// The reason; the caller should [`RunningServer::shutdown`] and end the
    /// process with a failure, as etcd exits, so that a supervisor restarts
    /// it instead of leaving a member that answers nothing.
    pub async fn failed(&self) -> String {
        self.node.replica.stopped().await
    }

    /// Returns once this member has been removed from its cluster (see
    /// [`hark_raft::Replica::removed`]); the caller should shut down and
    /// end the process successfully, as etcd's removed member does (a
    /// supervisor must not restart it into a cluster that refuses it).
    pub async fn removed(&self) {
        self.node.replica.removed().await
    }

    /// Stops in the order `tasks.rs` states: listeners, streams and
    /// background loops; then the log; then the lessor, the engine and the
    /// store, which makes everything acknowledged durable and releases the
    /// data dir.
    pub async fn shutdown(self) {
        let (name, data_dir) = (
            self.node.name.clone(),
            self.node.data_dir.display().to_string(),
        );
        tracing::info!(name, "data-dir" = data_dir, "closing etcd server");
        // A leader hands its leadership over first, as etcd's does on a
        // graceful stop: the others elect no one meanwhile, so writes stop
        // for the hand-over alone, not for an election timeout.
        // Bounded: a follower of an older build (mid-upgrade) cannot take
        // the leadership, and the member must still stop.
        let replica = &self.node.replica;
        let within = replica
            .request_timeout()
            .min(replica.election_timeout() * 5);
        replica.hand_over_leadership(within).await;
        // Peer links are calls that never end by themselves: closed first,
        // so the peer listener drains like the others.
        self.node.replica.close_links();
        self.tasks.stop_all(DRAIN_TIMEOUT).await;
        self.node.replica.shutdown().await;
        tracing::info!("listeners closed; closing the store");
        let store_closed = self.node.store.backend_closed();
        match Arc::try_unwrap(self.node) {
            Ok(node) => {
                let _ = tokio::task::spawn_blocking(move || node.close()).await;
            }
            Err(shared) => {
                // A request its connection's abort left running: the last
                // holder closes the store when it lets go.
                drop(shared);
                if tokio::time::timeout(DRAIN_TIMEOUT, self.node_dropped)
                    .await
                    .is_err()
                {
                    tracing::warn!("requests still hold the store; it closes when they end");
                }
            }
        }
        // openraft's state machine task may hold a clone of the store for
        // a moment after the log has stopped.
        let deadline = tokio::time::Instant::now() + DRAIN_TIMEOUT;
        while !store_closed.is_closed() {
            if tokio::time::Instant::now() >= deadline {
                tracing::warn!("tasks still hold the store; it closes when they end");
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        tracing::info!(name, "data-dir" = data_dir, "closed etcd server");
        tracing::info!("hark stopped");
    }
}
