//! Looking after a member over the wire, with the `etcd-client` crate: the
//! Alarm RPC, the backend quota and NOSPACE, `/health` under an alarm,
//! Defragment, Hash and HashKV, honest Status, and grpc-go's answer to an
//! oversized request. (The metric set is checked in `metrics.rs`.)

mod common;

use common::{http_get, start, start_in, status};
use etcd_client::{AlarmAction, AlarmOptions, AlarmType, Compare, CompareOp, Txn, TxnOp};

/// Alarm options naming one member.
fn member(id: u64) -> Option<AlarmOptions> {
    let mut opts = AlarmOptions::new();
    opts.with_member(id);
    Some(opts)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alarm_rpc_raises_lists_and_clears_and_nospace_blocks_growth() {
    let srv = start(&[]).await;
    let mut c = srv.client().await;
    let id = srv.server.node().member_id();
    c.put("a", "1", None).await.unwrap();

    let raised = c
        .alarm(AlarmAction::Activate, AlarmType::Nospace, member(id))
        .await
        .unwrap();
    assert_eq!(raised.alarms().len(), 1);
    assert_eq!(raised.alarms()[0].member_id(), id);

    let listed = c
        .alarm(AlarmAction::Get, AlarmType::None, None)
        .await
        .unwrap();
    assert_eq!(listed.alarms().len(), 1);
    assert_eq!(listed.alarms()[0].alarm(), AlarmType::Nospace);

    let no_space = (
        tonic::Code::ResourceExhausted,
        "etcdserver: mvcc: database space exceeded".to_string(),
    );
    assert_eq!(status(c.put("b", "2", None).await.unwrap_err()), no_space);
    assert_eq!(status(c.lease_grant(60, None).await.unwrap_err()), no_space);
    let txn = Txn::new()
        .when([Compare::value("a", CompareOp::Equal, "x")])
        .or_else([TxnOp::put("b", "2", None)]);
    assert_eq!(status(c.txn(txn).await.unwrap_err()), no_space);
    // Reads, deletes and compaction go on.
    assert_eq!(c.get("a", None).await.unwrap().kvs().len(), 1);
    assert_eq!(c.delete("a", None).await.unwrap().deleted(), 1);
    let rev = c.status().await.unwrap().header().unwrap().revision();
    c.compact(rev, None).await.unwrap();

    let st = c.status().await.unwrap();
    assert_eq!(
        st.errors(),
        [format!("memberID:{id} alarm:NOSPACE ")].as_slice()
    );
    let (code, body) = http_get(srv.server.client_addrs[0], "/health");
    assert_eq!(
        (code, body.as_str()),
        (503, "{\"health\":\"false\",\"reason\":\"ALARM NOSPACE\"}\n")
    );
    let (code, _) = http_get(srv.server.client_addrs[0], "/health?exclude=NOSPACE");
    assert_eq!(code, 200);

    // Disarming an alarm nobody raised clears nothing and is no error.
    let none = c
        .alarm(AlarmAction::Deactivate, AlarmType::Nospace, member(id + 1))
        .await
        .unwrap();
    assert!(none.alarms().is_empty());
    let cleared = c
        .alarm(AlarmAction::Deactivate, AlarmType::Nospace, member(id))
        .await
        .unwrap();
    assert_eq!(cleared.alarms().len(), 1);
    c.put("b", "2", None).await.unwrap();
    let (code, _) = http_get(srv.server.client_addrs[0], "/health");
    assert_eq!(code, 200);
}

/// Over the quota, a write raises NOSPACE itself; after compaction,
/// defragmentation and a disarm, writes resume, as etcd's runbook says.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quota_raises_nospace_and_the_runbook_recovers() {
    let quota = 4 << 20;
    let srv = start(&[&format!("--quota-backend-bytes={quota}")]).await;
    let mut c = srv.client().await;
    assert_eq!(c.status().await.unwrap().db_size_quota(), quota);
    let value = vec![b'x'; 64 << 10];
    let mut written = 0;
    let refusal = loop {
        match c
            .put(format!("k{}", written % 8), value.clone(), None)
            .await
        {
            Ok(_) => written += 1,
            Err(e) => break status(e),
        }
        assert!(written < 2000, "the quota was never reached");
    };
    assert_eq!(
        refusal,
        (
            tonic::Code::ResourceExhausted,
            "etcdserver: mvcc: database space exceeded".to_string()
        )
    );
    let alarms = c
        .alarm(AlarmAction::Get, AlarmType::None, None)
        .await
        .unwrap();
    assert_eq!(alarms.alarms().len(), 1);
    assert_eq!(
        alarms.alarms()[0].member_id(),
        srv.server.node().member_id(),
        "the member that hit the quota raised the alarm"
    );
    // The alarm itself refuses writes now, whatever their size.
    assert!(c.put("tiny", "", None).await.is_err());

    let st = c.status().await.unwrap();
    let rev = st.header().unwrap().revision();
    c.compact(
        rev,
        Some(etcd_client::CompactionOptions::new().with_physical()),
    )
    .await
    .unwrap();
    c.defragment().await.unwrap();
    let after = c.status().await.unwrap().db_size();
    assert!(after < quota, "defragment left {after} bytes");
    c.alarm(
        AlarmAction::Deactivate,
        AlarmType::Nospace,
        member(srv.server.node().member_id()),
    )
    .await
    .unwrap();
    c.put("again", "1", None).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hash_kv_and_hash_are_stable_across_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_in(dir.path(), &[]).await;
    let mut c = common::client(&server.endpoints()[0]).await;
    for i in 0..20 {
        c.put(format!("k{}", i % 3), format!("v{i}"), None)
            .await
            .unwrap();
    }
    c.delete("k1", None).await.unwrap();
    let kv = c.hash_kv(0).await.unwrap();
    let whole = c.hash().await.unwrap();
    assert_eq!(kv.hash_revision(), 22);
    assert_eq!(kv.compact_version(), -1, "never compacted");
    let at_10 = c.hash_kv(10).await.unwrap();
    assert_ne!(at_10.hash(), kv.hash());
    assert_eq!(
        status(c.hash_kv(100).await.unwrap_err()),
        (
            tonic::Code::OutOfRange,
            "etcdserver: mvcc: required revision is a future revision".to_string()
        )
    );
    drop(c);
    server.shutdown().await;

    let server = start_in(dir.path(), &[]).await;
    let mut c = common::client(&server.endpoints()[0]).await;
    assert_eq!(c.hash_kv(0).await.unwrap().hash(), kv.hash());
    assert_eq!(c.hash_kv(10).await.unwrap().hash(), at_10.hash());
    assert_eq!(c.hash().await.unwrap().hash(), whole.hash());
    c.compact(15, None).await.unwrap();
    assert_eq!(c.hash_kv(0).await.unwrap().compact_version(), 15);
    assert_eq!(
        status(c.hash_kv(14).await.unwrap_err()).0,
        tonic::Code::OutOfRange
    );
    drop(c);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_reports_measured_sizes_and_the_configured_quota() {
    let srv = start(&["--quota-backend-bytes=123456789"]).await;
    let mut c = srv.client().await;
    let empty = c.status().await.unwrap();
    assert!(empty.db_size() > 0);
    assert_eq!(empty.db_size_quota(), 123_456_789);
    for i in 0..200 {
        c.put(format!("k{i}"), vec![b'v'; 8 << 10], None)
            .await
            .unwrap();
    }
    // Sizes are re-measured at most every 100 ms.
    tokio::time::sleep(std::time::Duration::from_millis(150)).await;
    let full = c.status().await.unwrap();
    assert!(
        full.db_size() >= empty.db_size() + (1 << 20),
        "1.6 MB written, db size {} -> {}",
        empty.db_size(),
        full.db_size()
    );
    assert!(
        full.raft_used_db_size() >= 1 << 20,
        "1.6 MB of live data, in use {}",
        full.raft_used_db_size()
    );
    assert!(full.errors().is_empty());
    c.defragment().await.unwrap();
}

/// grpc-go (and so etcd) refuses a message over the receive limit with
/// RESOURCE_EXHAUSTED; the server keeps serving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_request_is_resource_exhausted() {
    let srv = start(&["--max-request-bytes=1048576"]).await;
    let mut c = srv.client().await;
    let limit = (1 << 20) + (512 << 10);
    let (code, message) = status(c.put("big", vec![0u8; 2 << 20], None).await.unwrap_err());
    assert_eq!(code, tonic::Code::ResourceExhausted);
    assert!(
        message.starts_with("grpc: received message larger than max (")
            && message.ends_with(&format!(" vs. {limit})")),
        "{message}"
    );
    c.put("small", "ok", None).await.unwrap();
}

/// `--auto-defrag-ratio`: once compacted history leaves more than the ratio
/// of the database free, the member defragments by itself, and writes go
/// on meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn defragmentation_runs_by_itself_past_the_ratio() {
    let srv = start(&["--auto-defrag-ratio=0.5", "--auto-defrag-interval=1s"]).await;
    let mut c = srv.client().await;
    // Values that do not compress: 8 MB written three times over.
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut value = || {
        (0..8 << 10)
            .map(|_| {
                seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                (seed >> 56) as u8
            })
            .collect::<Vec<u8>>()
    };
    let mut revision = 0;
    let mut last = Vec::new();
    for _ in 0..3 {
        for i in 0..1000 {
            last = value();
            revision = c
                .put(format!("k{i}"), last.clone(), None)
                .await
                .unwrap()
                .header()
                .unwrap()
                .revision();
        }
    }
    tokio::time::sleep(std::time::Duration::from_millis(150)).await;
    let full = c.status().await.unwrap();
    assert!(
        full.db_size() > 20 << 20,
        "24 MB written: {}",
        full.db_size()
    );
    // All but the last round compacted away: two thirds of it is free.
    c.compact(
        revision,
        Some(etcd_client::CompactionOptions::new().with_physical()),
    )
    .await
    .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let after = loop {
        c.put("during", "x", None).await.unwrap();
        let now = c.status().await.unwrap();
        if now.db_size() < full.db_size() / 2 {
            break now;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no defragmentation by itself: {} bytes (before compacting: {})",
            now.db_size(),
            full.db_size()
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    };
    assert!(
        after.db_size() >= 7 << 20,
        "the live 8 MB are still there: {}",
        after.db_size()
    );
    let got = c.get("k999", None).await.unwrap();
    assert_eq!(got.kvs()[0].value(), last.as_slice());
    // And it was the automatic run that gave the space back.
    let (_, metrics) = http_get(srv.server.client_addrs[0], "/metrics");
    let done = metrics
        .lines()
        .find_map(|l| l.strip_prefix("hark_auto_defrag_total{result=\"done\"} "))
        .and_then(|n| n.trim().parse::<u64>().ok());
    assert!(done.is_some_and(|n| n >= 1), "automatic runs: {done:?}");
}
