//! The metric set etcd's alerting rules and dashboards read, on `/metrics`.
//! One test in its own binary: the process-wide recorder then holds only
//! this server's series, so the first scrape and exact counts mean something.

mod common;

use common::{http_get, start};

fn metric_names(exposition: &str) -> std::collections::HashSet<String> {
    exposition
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| l.split(['{', ' ']).next().unwrap().to_string())
        .collect()
}

/// etcd's mixin list, checked against the first scrape after start: every
/// series is there, with HELP, before anything happened.
async fn covers_etcds_mixin_from_the_first_scrape(srv: &common::TestServer) {
    let (code, body) = http_get(srv.server.client_addrs[0], "/metrics");
    assert_eq!(code, 200);
    let names = metric_names(&body);
    let mixin = include_str!("data/mixin-metrics.txt");
    let wanted: Vec<&str> = mixin
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .chain([
            "etcd_server_is_leader",
            "grpc_server_msg_received_total",
            "grpc_server_msg_sent_total",
            "process_cpu_seconds_total",
            "process_open_fds",
            "process_max_fds",
        ])
        .collect();
    let missing: Vec<&&str> = wanted.iter().filter(|n| !names.contains(**n)).collect();
    assert!(missing.is_empty(), "missing from /metrics: {missing:?}");
    for name in &wanted {
        let family = name.trim_end_matches("_bucket");
        assert!(
            body.contains(&format!("# HELP {family} ")),
            "no HELP for {family}"
        );
    }
    for line in [
        "etcd_server_has_leader 1",
        "etcd_server_is_leader 1",
        "etcd_server_leader_changes_seen_total 1",
        "etcd_server_quota_backend_bytes 2147483648",
        // etcd's buckets (the log's first entries are synced at start).
        "etcd_disk_wal_fsync_duration_seconds_bucket{le=\"0.001\"} ",
        "etcd_disk_wal_fsync_duration_seconds_bucket{le=\"8.192\"} ",
        "grpc_server_handled_total{grpc_code=\"ResourceExhausted\",grpc_method=\"Put\",grpc_service=\"etcdserverpb.KV\",grpc_type=\"unary\"} 0",
    ] {
        assert!(body.contains(line), "no line {line:?}");
    }
    // Which Hark build this member runs.
    let build = format!(
        "hark_build_info{{commit=\"{}\",version=\"{}\"}} 1",
        hark_server::GIT_COMMIT,
        hark_server::HARK_VERSION
    );
    assert!(body.contains(&build), "no line {build:?}");
}

/// A closed watch stream counts as Canceled (etcd's code for it), and
/// messages are counted both ways.
async fn watch_streams_end_canceled_and_messages_are_counted(srv: &common::TestServer) {
    let mut c = srv.client().await;
    let mut stream = c.watch("w", None).await.unwrap();
    let created = stream.message().await.unwrap().unwrap();
    assert!(created.created());
    c.put("w", "1", None).await.unwrap();
    assert_eq!(stream.message().await.unwrap().unwrap().events().len(), 1);
    stream.cancel(created.watch_id()).await.unwrap();
    assert!(stream.message().await.unwrap().unwrap().canceled());
    drop(stream);
    drop(c);
    let canceled = "grpc_server_handled_total{grpc_code=\"Canceled\",grpc_method=\"Watch\",grpc_service=\"etcdserverpb.Watch\",grpc_type=\"bidi_stream\"} 1";
    let mut body = String::new();
    for _ in 0..100 {
        body = http_get(srv.server.client_addrs[0], "/metrics").1;
        if body.contains(canceled) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(body.contains(canceled), "{body}");
    for line in [
        "grpc_server_msg_received_total{grpc_method=\"Put\",grpc_service=\"etcdserverpb.KV\",grpc_type=\"unary\"} 1",
        "grpc_server_msg_sent_total{grpc_method=\"Put\",grpc_service=\"etcdserverpb.KV\",grpc_type=\"unary\"} 1",
        // The create and the cancel in; created, the event and canceled out.
        "grpc_server_msg_received_total{grpc_method=\"Watch\",grpc_service=\"etcdserverpb.Watch\",grpc_type=\"bidi_stream\"} 2",
        "grpc_server_msg_sent_total{grpc_method=\"Watch\",grpc_service=\"etcdserverpb.Watch\",grpc_type=\"bidi_stream\"} 3",
    ] {
        assert!(body.contains(line), "no line {line:?} in\n{body}");
    }
}

/// One `grpc_server_*` series line, as the exposition prints it.
fn series(name: &str, kind: &str, service: &str, method: &str, code: Option<&str>) -> String {
    // Labels in name order, as etcd's exporter writes them.
    let code = code.map_or(String::new(), |c| format!("grpc_code=\"{c}\","));
    format!(
        "{name}{{{code}grpc_method=\"{method}\",grpc_service=\"etcdserverpb.{service}\",grpc_type=\"{kind}\"}}"
    )
}

/// The value of one series in `/metrics`, once it equals `want` (counters
/// of a stream are counted as its last bytes pass, so they may trail the
/// client by a moment).
async fn settles_at(srv: &common::TestServer, line: &str, want: u64) {
    let mut seen = None;
    for _ in 0..100 {
        let body = http_get(srv.server.client_addrs[0], "/metrics").1;
        seen = body
            .lines()
            .find_map(|l| l.strip_prefix(line)?.trim().parse::<u64>().ok());
        if seen == Some(want) {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    panic!("{line} is {seen:?}, expected {want}");
}

/// A plain HTTP/1.1 POST of JSON to the gateway; returns the status code.
fn http_post(addr: std::net::SocketAddr, path: &str, json: &str) -> u16 {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    write!(
        s,
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{json}",
        json.len()
    )
    .unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    answer.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Every kind of call is counted from what crosses the wire: a unary error
/// by its status, a server stream's messages, a keep-alive stream that the
/// client closes (OK, as etcd), the JSON gateway's calls (which etcd also
/// makes over gRPC), and a watch stream whose client closed its side: it
/// keeps delivering events (etcd's behaviour) and counts as Canceled only
/// when the client resets it.
async fn every_call_is_counted_at_the_wire(srv: &common::TestServer) {
    use hark_proto::etcdserverpb as pb;
    let mut c = srv.client().await;
    let handled = |service, method, code| {
        let kind = match method {
            "LeaseKeepAlive" | "Watch" => "bidi_stream",
            "Snapshot" => "server_stream",
            _ => "unary",
        };
        series(
            "grpc_server_handled_total",
            kind,
            service,
            method,
            Some(code),
        )
    };

    // Unary: one OK Range over gRPC, one over the gateway; a Range at a
    // future revision fails with OutOfRange.
    c.get("w", None).await.unwrap();
    let code = http_post(
        srv.server.client_addrs[0],
        "/v3/kv/range",
        r#"{"key":"dw=="}"#,
    );
    assert_eq!(code, 200);
    let future = c
        .get(
            "w",
            Some(etcd_client::GetOptions::new().with_revision(1000)),
        )
        .await
        .unwrap_err();
    assert_eq!(common::status(future).0, tonic::Code::OutOfRange);
    settles_at(srv, &handled("KV", "Range", "OK"), 2).await;
    settles_at(srv, &handled("KV", "Range", "OutOfRange"), 1).await;
    let range_in = series(
        "grpc_server_msg_received_total",
        "unary",
        "KV",
        "Range",
        None,
    );
    settles_at(srv, &range_in, 3).await;
    let range_out = series("grpc_server_msg_sent_total", "unary", "KV", "Range", None);
    settles_at(srv, &range_out, 2).await;

    // A server stream read to its end.
    let mut snapshot = c.snapshot().await.unwrap();
    let mut chunks = 0;
    while snapshot.message().await.unwrap().is_some() {
        chunks += 1;
    }
    assert!(chunks >= 2, "a snapshot is chunks and a checksum");
    settles_at(srv, &handled("Maintenance", "Snapshot", "OK"), 1).await;
    let sent = series(
        "grpc_server_msg_sent_total",
        "server_stream",
        "Maintenance",
        "Snapshot",
        None,
    );
    settles_at(srv, &sent, chunks).await;

    // Keep-alives: three in, three out, then the client closes its side.
    let lease = c.lease_grant(60, None).await.unwrap().id();
    let mut leases = pb::lease_client::LeaseClient::connect(srv.endpoint())
        .await
        .unwrap();
    let (tx, rx) = tokio::sync::mpsc::channel(4);
    let mut answers = leases
        .lease_keep_alive(tokio_stream::wrappers::ReceiverStream::new(rx))
        .await
        .unwrap()
        .into_inner();
    for _ in 0..3 {
        tx.send(pb::LeaseKeepAliveRequest { id: lease })
            .await
            .unwrap();
        assert_eq!(answers.message().await.unwrap().unwrap().id, lease);
    }
    drop(tx);
    assert!(answers.message().await.unwrap().is_none(), "ends OK");
    settles_at(srv, &handled("Lease", "LeaseKeepAlive", "OK"), 1).await;
    for name in [
        "grpc_server_msg_received_total",
        "grpc_server_msg_sent_total",
    ] {
        let line = series(name, "bidi_stream", "Lease", "LeaseKeepAlive", None);
        settles_at(srv, &line, 3).await;
    }

    // A watch whose client closed its side still gets events.
    let mut watches = pb::watch_client::WatchClient::connect(srv.endpoint())
        .await
        .unwrap();
    let (tx, rx) = tokio::sync::mpsc::channel(4);
    tx.send(pb::WatchRequest {
        request_union: Some(pb::watch_request::RequestUnion::CreateRequest(
            pb::WatchCreateRequest {
                key: "half".into(),
                ..Default::default()
            },
        )),
    })
    .await
    .unwrap();
    drop(tx);
    let mut replies = watches
        .watch(tokio_stream::wrappers::ReceiverStream::new(rx))
        .await
        .unwrap()
        .into_inner();
    assert!(replies.message().await.unwrap().unwrap().created);
    c.put("half", "1", None).await.unwrap();
    let event = tokio::time::timeout(std::time::Duration::from_secs(5), replies.message())
        .await
        .expect("an event after the client closed its side")
        .unwrap()
        .unwrap();
    assert_eq!(event.events.len(), 1);
    // The first watch stream (earlier) and this one, each ended by its client.
    settles_at(srv, &handled("Watch", "Watch", "Canceled"), 1).await;
    drop(replies);
    settles_at(srv, &handled("Watch", "Watch", "Canceled"), 2).await;
    settles_at(srv, &handled("Watch", "Watch", "OK"), 0).await;
    // Its receive task let go of the engine's stream too: none is left.
    settles_at(srv, "etcd_debugging_mvcc_watch_stream_total", 0).await;

    // An oversized request ends its stream as grpc-go's server ends it.
    let (tx, rx) = tokio::sync::mpsc::channel(1);
    tx.send(pb::WatchRequest {
        request_union: Some(pb::watch_request::RequestUnion::CreateRequest(
            pb::WatchCreateRequest {
                key: vec![b'k'; 3 << 20].into(),
                ..Default::default()
            },
        )),
    })
    .await
    .unwrap();
    let status = match watches
        .watch(tokio_stream::wrappers::ReceiverStream::new(rx))
        .await
    {
        Err(status) => status,
        Ok(replies) => {
            let mut replies = replies.into_inner();
            loop {
                match replies.message().await {
                    Err(status) => break status,
                    Ok(Some(_)) => {}
                    Ok(None) => panic!("an oversized request ended the stream OK"),
                }
            }
        }
    };
    assert_eq!(status.code(), tonic::Code::ResourceExhausted, "{status:?}");
    assert!(
        status
            .message()
            .starts_with("grpc: received message larger than max ("),
        "{status:?}"
    );
    drop(tx);
    settles_at(srv, &handled("Watch", "Watch", "ResourceExhausted"), 1).await;
    settles_at(srv, "etcd_debugging_mvcc_watch_stream_total", 0).await;
}

/// The value of the first sample line starting with `prefix`.
fn value_of(body: &str, prefix: &str) -> Option<f64> {
    body.lines()
        .find_map(|l| l.strip_prefix(prefix)?.trim().parse::<f64>().ok())
}

/// Every series etcd 3.7's own e2e test expects of a member is exported,
/// and the ones Hark records move with what happens: leases granted, kept
/// alive and revoked; puts, ranges and their latencies; a compaction, a
/// defragmentation and a hash; the process's threads and descriptors.
async fn exports_what_etcds_e2e_suite_expects(srv: &common::TestServer) {
    let mut c = srv.client().await;
    for i in 0..3 {
        c.put(format!("key_{i}"), format!("value_{i}"), None)
            .await
            .unwrap();
    }
    c.get("k", None).await.unwrap();
    let lease = c.lease_grant(30, None).await.unwrap().id();
    let (mut keeper, mut answers) = c.lease_keep_alive(lease).await.unwrap();
    keeper.keep_alive().await.unwrap();
    answers.message().await.unwrap().unwrap();
    drop((keeper, answers));
    c.lease_revoke(lease).await.unwrap();
    let rev = c
        .put("key_0", "again", None)
        .await
        .unwrap()
        .header()
        .unwrap()
        .revision();
    c.compact(
        rev,
        Some(etcd_client::CompactionOptions::new().with_physical()),
    )
    .await
    .unwrap();
    c.defragment().await.unwrap();
    c.hash_kv(0).await.unwrap();

    let (code, body) = http_get(srv.server.client_addrs[0], "/metrics");
    assert_eq!(code, 200);
    let names = metric_names(&body);
    let missing: Vec<&str> = include_str!("data/etcd-basic-metrics.txt")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter(|n| {
            ["", "_bucket", "_count"]
                .iter()
                .all(|suffix| !names.contains(&format!("{n}{suffix}")))
        })
        .collect();
    assert!(missing.is_empty(), "missing from /metrics: {missing:?}");

    for (series, at_least) in [
        ("etcd_debugging_lease_granted_total ", 1.0),
        ("etcd_debugging_lease_renewed_total ", 1.0),
        ("etcd_debugging_lease_revoked_total ", 1.0),
        ("etcd_debugging_lease_ttl_total_count ", 1.0),
        // Three puts of 5 + 7 bytes, then one of 5 + 5.
        ("etcd_debugging_mvcc_total_put_size_in_bytes ", 46.0),
        // The three first values of the keys, compacted away.
        ("etcd_debugging_mvcc_db_compaction_keys_total ", 1.0),
        (
            "etcd_debugging_mvcc_db_compaction_total_duration_milliseconds_count ",
            1.0,
        ),
        ("etcd_debugging_mvcc_db_compaction_last ", 1.0),
        (
            "etcd_debugging_mvcc_index_compaction_pause_duration_milliseconds_count ",
            1.0,
        ),
        ("etcd_disk_backend_defrag_duration_seconds_count ", 1.0),
        ("etcd_mvcc_hash_rev_duration_seconds_count ", 1.0),
        ("etcd_disk_wal_write_duration_seconds_count ", 1.0),
        ("etcd_disk_wal_write_bytes_total ", 1.0),
        (
            "etcd_server_apply_duration_seconds_count{op=\"Put\",success=\"true\",version=\"v3\"} ",
            4.0,
        ),
        (
            "etcd_server_apply_duration_seconds_count{op=\"LeaseGrant\",success=\"true\",version=\"v3\"} ",
            1.0,
        ),
        (
            "etcd_server_range_duration_seconds_count{success=\"true\"} ",
            1.0,
        ),
        (
            "etcd_server_request_duration_seconds_count{success=\"true\",type=\"Range\"} ",
            1.0,
        ),
        // etcd-client (Rust) sends no `client-api-version`.
        (
            "etcd_server_client_requests_total{client_api_version=\"unknown\",type=\"unary\"} ",
            10.0,
        ),
        (
            "etcd_server_client_requests_total{client_api_version=\"unknown\",type=\"stream\"} ",
            1.0,
        ),
        (
            "grpc_server_handling_seconds_count{grpc_method=\"Put\",grpc_service=\"etcdserverpb.KV\",grpc_type=\"unary\"} ",
            4.0,
        ),
        ("go_threads ", 2.0),
        ("go_goroutines ", 1.0),
        ("go_memstats_sys_bytes ", 1_000_000.0),
        ("os_fd_used ", 1.0),
        ("os_fd_limit ", 1.0),
        ("promhttp_metric_handler_requests_total{code=\"200\"} ", 1.0),
        // RocksDB's own memory: both databases' memtables, and the block
        // cache their files' blocks went through (the hash read them all).
        (
            "hark_rocksdb_memory_bytes{db=\"store\",kind=\"memtables\"} ",
            1.0,
        ),
        (
            "hark_rocksdb_memory_bytes{db=\"log\",kind=\"memtables\"} ",
            1.0,
        ),
        (
            "hark_rocksdb_memory_bytes{db=\"shared\",kind=\"block_cache\"} ",
            1.0,
        ),
    ] {
        let seen = value_of(&body, series);
        assert!(
            seen.is_some_and(|v| v >= at_least),
            "{series}is {seen:?}, expected at least {at_least}"
        );
    }
    for (series, exactly) in [
        ("etcd_disk_defrag_inflight ", 0.0),
        ("etcd_mvcc_db_open_read_transactions ", 0.0),
        ("etcd_server_is_learner ", 0.0),
        ("etcd_server_snapshot_apply_in_progress_total ", 0.0),
        ("go_gc_gogc_percent ", -1.0),
    ] {
        assert_eq!(value_of(&body, series), Some(exactly), "{series}");
    }
    let member = c.member_list().await.unwrap().members()[0].id();
    let id = format!("etcd_server_id{{server_id=\"{member:x}\"}} 1");
    assert!(body.contains(&id), "no line {id:?}");
    let known = format!("etcd_network_known_peers{{Local=\"{member:x}\",Remote=\"{member:x}\"}} 1");
    assert!(body.contains(&known), "no line {known:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_etcd_dashboards_read() {
    let srv = start(&[]).await;
    covers_etcds_mixin_from_the_first_scrape(&srv).await;
    watch_streams_end_canceled_and_messages_are_counted(&srv).await;
    every_call_is_counted_at_the_wire(&srv).await;
    exports_what_etcds_e2e_suite_expects(&srv).await;
}
