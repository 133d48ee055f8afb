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
        "grpc_server_handled_total{grpc_type=\"unary\",grpc_service=\"etcdserverpb.KV\",grpc_method=\"Put\",grpc_code=\"ResourceExhausted\"} 0",
    ] {
        assert!(body.contains(line), "no line {line:?}");
    }
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
    let canceled = "grpc_server_handled_total{grpc_type=\"bidi_stream\",grpc_service=\"etcdserverpb.Watch\",grpc_method=\"Watch\",grpc_code=\"Canceled\"} 1";
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
        "grpc_server_msg_received_total{grpc_type=\"unary\",grpc_service=\"etcdserverpb.KV\",grpc_method=\"Put\"} 1",
        "grpc_server_msg_sent_total{grpc_type=\"unary\",grpc_service=\"etcdserverpb.KV\",grpc_method=\"Put\"} 1",
        // The create and the cancel in; created, the event and canceled out.
        "grpc_server_msg_received_total{grpc_type=\"bidi_stream\",grpc_service=\"etcdserverpb.Watch\",grpc_method=\"Watch\"} 2",
        "grpc_server_msg_sent_total{grpc_type=\"bidi_stream\",grpc_service=\"etcdserverpb.Watch\",grpc_method=\"Watch\"} 3",
    ] {
        assert!(body.contains(line), "no line {line:?} in\n{body}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_etcd_dashboards_read() {
    let srv = start(&[]).await;
    covers_etcds_mixin_from_the_first_scrape(&srv).await;
    watch_streams_end_canceled_and_messages_are_counted(&srv).await;
}
