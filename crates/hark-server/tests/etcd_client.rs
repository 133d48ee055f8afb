//! Hark driven by an independent etcd client (the `etcd-client` crate) over gRPC:
//! KV, Watch, Lease, Maintenance and Cluster, errors, limits, metrics and health.

mod common;

use std::time::Duration;

use etcd_client::{
    Compare, CompareOp, DeleteOptions, EventType, GetOptions, LeaseGrantOptions,
    LeaseTimeToLiveOptions, PutOptions, SortOrder, SortTarget, Txn, TxnOp, TxnOpResponse,
    WatchFilterType, WatchOptions, WatchResponse, WatchStream,
};
use tonic::Code;

use common::{http_get, start, status};

const WAIT: Duration = Duration::from_secs(30);

async fn next(stream: &mut WatchStream) -> WatchResponse {
    tokio::time::timeout(WAIT, stream.message())
        .await
        .expect("a watch response in time")
        .unwrap()
        .expect("the stream is open")
}

/// (type, key, value, mod_revision) of each event.
fn events(resp: &WatchResponse) -> Vec<(EventType, String, String, i64)> {
    resp.events()
        .iter()
        .map(|e| {
            let kv = e.kv().unwrap();
            (
                e.event_type(),
                kv.key_str().unwrap().to_string(),
                kv.value_str().unwrap().to_string(),
                kv.mod_revision(),
            )
        })
        .collect()
}

#[tokio::test]
async fn kv_put_get_delete_txn_and_compaction() {
    let srv = start(&[]).await;
    let mut c = srv.client().await;

    let r = c.put("a", "1", None).await.unwrap();
    assert_eq!(r.header().unwrap().revision(), 2);
    let r = c
        .put("a", "2", Some(PutOptions::new().with_prev_key()))
        .await
        .unwrap();
    assert_eq!(r.prev_key().unwrap().value(), b"1");
    for (k, v) in [("b", "x"), ("c", "yy"), ("d", "z")] {
        c.put(k, v, None).await.unwrap();
    }
    // rev 6 now; a@3 (version 2), b@4, c@5, d@6.

    let r = c.get("a", None).await.unwrap();
    let kv = &r.kvs()[0];
    assert_eq!(
        (kv.create_revision(), kv.mod_revision(), kv.version()),
        (2, 3, 2)
    );
    assert_eq!(r.header().unwrap().revision(), 6);

    let r = c
        .get("a", Some(GetOptions::new().with_revision(2)))
        .await
        .unwrap();
    assert_eq!(r.kvs()[0].value(), b"1");

    let r = c
        .get("", Some(GetOptions::new().with_all_keys().with_limit(2)))
        .await
        .unwrap();
    assert_eq!((r.kvs().len(), r.more(), r.count()), (2, true, 4));

    let r = c
        .get(
            "",
            Some(
                GetOptions::new()
                    .with_all_keys()
                    .with_sort(SortTarget::Mod, SortOrder::Descend),
            ),
        )
        .await
        .unwrap();
    let keys: Vec<_> = r.kvs().iter().map(|kv| kv.key_str().unwrap()).collect();
    assert_eq!(keys, ["d", "c", "b", "a"]);

    let r = c
        .get(
            "b",
            Some(GetOptions::new().with_from_key().with_keys_only()),
        )
        .await
        .unwrap();
    assert_eq!(r.kvs().len(), 3);
    assert!(r.kvs().iter().all(|kv| kv.value().is_empty()));

    let r = c
        .get(
            "",
            Some(GetOptions::new().with_all_keys().with_count_only()),
        )
        .await
        .unwrap();
    assert_eq!((r.kvs().len(), r.count()), (0, 4));

    let r = c
        .get(
            "",
            Some(
                GetOptions::new()
                    .with_all_keys()
                    .with_min_mod_revision(4)
                    .with_max_mod_revision(5),
            ),
        )
        .await
        .unwrap();
    let keys: Vec<_> = r.kvs().iter().map(|kv| kv.key_str().unwrap()).collect();
    assert_eq!(keys, ["b", "c"]);
    let r = c
        .get(
            "",
            Some(
                GetOptions::new()
                    .with_all_keys()
                    .with_min_create_revision(5)
                    .with_serializable(),
            ),
        )
        .await
        .unwrap();
    assert_eq!(r.kvs().len(), 2);

    let txn = Txn::new()
        .when([Compare::value("a", CompareOp::Equal, "2")])
        .and_then([
            TxnOp::put("t", "yes", None),
            TxnOp::get("a", None),
            TxnOp::delete("d", Some(DeleteOptions::new().with_prev_key())),
        ])
        .or_else([TxnOp::put("t", "no", None)]);
    let r = c.txn(txn).await.unwrap();
    assert!(r.succeeded());
    assert_eq!(r.header().unwrap().revision(), 7);
    let ops = r.op_responses();
    assert!(matches!(&ops[1], TxnOpResponse::Get(g) if g.kvs()[0].value() == b"2"));
    assert!(
        matches!(&ops[2], TxnOpResponse::Delete(d) if d.deleted() == 1 && d.prev_kvs()[0].value() == b"z")
    );
    let txn = Txn::new()
        .when([Compare::version("a", CompareOp::Greater, 5)])
        .and_then([TxnOp::put("t", "yes", None)])
        .or_else([TxnOp::put("t", "no", None)]);
    assert!(!c.txn(txn).await.unwrap().succeeded());
    assert_eq!(c.get("t", None).await.unwrap().kvs()[0].value(), b"no");

    let r = c
        .delete(
            "",
            Some(DeleteOptions::new().with_from_key().with_prev_key()),
        )
        .await
        .unwrap();
    assert_eq!(r.deleted(), 4);
    assert_eq!(r.prev_kvs().len(), 4);
    let rev = r.header().unwrap().revision();

    c.compact(
        5,
        Some(etcd_client::CompactionOptions::new().with_physical()),
    )
    .await
    .unwrap();
    let e = c
        .get("a", Some(GetOptions::new().with_revision(4)))
        .await
        .unwrap_err();
    assert_eq!(
        status(e),
        (
            Code::OutOfRange,
            "etcdserver: mvcc: required revision has been compacted".into()
        )
    );
    let e = c
        .get("a", Some(GetOptions::new().with_revision(rev + 10)))
        .await
        .unwrap_err();
    assert_eq!(
        status(e),
        (
            Code::OutOfRange,
            "etcdserver: mvcc: required revision is a future revision".into()
        )
    );
    let e = c.compact(5, None).await.unwrap_err();
    assert_eq!(status(e).0, Code::OutOfRange);
    let e = c.compact(rev + 1, None).await.unwrap_err();
    assert_eq!(
        status(e),
        (
            Code::OutOfRange,
            "etcdserver: mvcc: required revision is a future revision".into()
        )
    );
    srv.server.shutdown().await;
}

#[tokio::test]
async fn bad_input_gets_etcds_errors_and_the_server_keeps_serving() {
    let srv = start(&["--max-txn-ops=4"]).await;
    let mut c = srv.client().await;
    let invalid = |msg: &str| (Code::InvalidArgument, msg.to_string());

    assert_eq!(
        status(c.put("", "v", None).await.unwrap_err()),
        invalid("etcdserver: key is not provided")
    );
    assert_eq!(
        status(c.get("", None).await.unwrap_err()),
        invalid("etcdserver: key is not provided")
    );
    assert_eq!(
        status(c.delete("", None).await.unwrap_err()),
        invalid("etcdserver: key is not provided")
    );
    let e = c
        .put("missing", "", Some(PutOptions::new().with_ignore_value()))
        .await
        .unwrap_err();
    assert_eq!(status(e), invalid("etcdserver: key not found"));
    let e = c
        .put("k", "v", Some(PutOptions::new().with_ignore_value()))
        .await
        .unwrap_err();
    assert_eq!(status(e), invalid("etcdserver: value is provided"));
    let e = c
        .put(
            "k",
            "",
            Some(PutOptions::new().with_ignore_lease().with_lease(5)),
        )
        .await
        .unwrap_err();
    assert_eq!(status(e), invalid("etcdserver: lease is provided"));

    let too_many: Vec<TxnOp> = (0..5)
        .map(|i| TxnOp::put(format!("k{i}"), "v", None))
        .collect();
    let e = c.txn(Txn::new().and_then(too_many)).await.unwrap_err();
    assert_eq!(
        status(e),
        invalid("etcdserver: too many operations in txn request")
    );
    let e = c
        .txn(Txn::new().and_then([TxnOp::put("k", "1", None), TxnOp::put("k", "2", None)]))
        .await
        .unwrap_err();
    assert_eq!(
        status(e),
        invalid("etcdserver: duplicate key given in txn request")
    );

    let e = c
        .put("k", "v", Some(PutOptions::new().with_lease(12345)))
        .await
        .unwrap_err();
    assert_eq!(
        status(e),
        (
            Code::NotFound,
            "etcdserver: requested lease not found".into()
        )
    );
    c.lease_grant(60, Some(LeaseGrantOptions::new().with_id(77)))
        .await
        .unwrap();
    let e = c
        .lease_grant(60, Some(LeaseGrantOptions::new().with_id(77)))
        .await
        .unwrap_err();
    assert_eq!(
        status(e),
        (
            Code::FailedPrecondition,
            "etcdserver: lease already exists".into()
        )
    );
    let e = c.lease_grant(9_000_000_001, None).await.unwrap_err();
    assert_eq!(
        status(e),
        (Code::OutOfRange, "etcdserver: too large lease TTL".into())
    );
    let e = c.lease_revoke(999).await.unwrap_err();
    assert_eq!(
        status(e),
        (
            Code::NotFound,
            "etcdserver: requested lease not found".into()
        )
    );

    // Default --max-request-bytes is 1.5 MiB: 1 MiB round-trips, 2 MiB is refused.
    let mib = vec![7u8; 1 << 20];
    c.put("big", mib.clone(), None).await.unwrap();
    assert_eq!(c.get("big", None).await.unwrap().kvs()[0].value(), &mib[..]);
    let e = c.put("big", vec![7u8; 1_700_000], None).await.unwrap_err();
    assert_eq!(status(e), invalid("etcdserver: request is too large"));

    // Still serving.
    let r = c.put("after", "ok", None).await.unwrap();
    assert!(r.header().unwrap().revision() > 1);
    assert_eq!(c.get("after", None).await.unwrap().kvs()[0].value(), b"ok");
    srv.server.shutdown().await;
}

#[tokio::test]
async fn watch_every_create_field() {
    let srv = start(&["--experimental-watch-progress-notify-interval=200ms"]).await;
    let mut c = srv.client().await;
    c.put("w/a", "1", None).await.unwrap(); // rev 2
    c.put("w/b", "1", None).await.unwrap(); // rev 3
    c.put("w/a", "2", None).await.unwrap(); // rev 4
    c.delete("w/b", None).await.unwrap(); // rev 5

    // Prefix from history, prev_kv, explicit watch id.
    let mut s = c
        .watch(
            "w/",
            Some(
                WatchOptions::new()
                    .with_prefix()
                    .with_start_revision(2)
                    .with_prev_key()
                    .with_watch_id(7),
            ),
        )
        .await
        .unwrap();
    let created = next(&mut s).await;
    assert!(created.created() && created.watch_id() == 7);
    assert!(created.header().unwrap().cluster_id() != 0);
    let mut got = Vec::new();
    while got.len() < 4 {
        let r = next(&mut s).await;
        assert_eq!(r.watch_id(), 7);
        for e in r.events() {
            if e.kv().unwrap().key() == b"w/a" && e.kv().unwrap().mod_revision() == 4 {
                assert_eq!(e.prev_kv().unwrap().value(), b"1");
            }
        }
        got.extend(events(&r));
    }
    assert_eq!(
        got,
        vec![
            (EventType::Put, "w/a".into(), "1".into(), 2),
            (EventType::Put, "w/b".into(), "1".into(), 3),
            (EventType::Put, "w/a".into(), "2".into(), 4),
            (EventType::Delete, "w/b".into(), "".into(), 5),
        ]
    );

    // A duplicate id is refused on the stream, which stays open.
    s.watch("x", Some(WatchOptions::new().with_watch_id(7)))
        .await
        .unwrap();
    let r = next(&mut s).await;
    assert!(r.created() && r.canceled() && r.watch_id() == -1);
    assert_eq!(
        r.cancel_reason(),
        "mvcc: duplicate watch ID provided on the WatchStream"
    );
    // An empty range is refused the same way.
    s.watch("z", Some(WatchOptions::new().with_range("a")))
        .await
        .unwrap();
    let r = next(&mut s).await;
    assert!(r.created() && r.canceled());
    assert_eq!(r.cancel_reason(), "mvcc: watcher range is empty");

    // Filters: one watcher without puts, one without deletes; a from-key watcher.
    s.watch(
        "f",
        Some(
            WatchOptions::new()
                .with_watch_id(20)
                .with_filters([WatchFilterType::NoPut]),
        ),
    )
    .await
    .unwrap();
    assert!(next(&mut s).await.created());
    s.watch(
        "f",
        Some(
            WatchOptions::new()
                .with_watch_id(21)
                .with_filters([WatchFilterType::NoDelete]),
        ),
    )
    .await
    .unwrap();
    assert!(next(&mut s).await.created());
    s.watch(
        "f",
        Some(WatchOptions::new().with_watch_id(22).with_from_key()),
    )
    .await
    .unwrap();
    assert!(next(&mut s).await.created());
    c.put("f", "v", None).await.unwrap(); // rev 6
    c.delete("f", None).await.unwrap(); // rev 7
    let mut by_id: std::collections::BTreeMap<i64, Vec<_>> = Default::default();
    while by_id.values().map(Vec::len).sum::<usize>() < 4 {
        let r = next(&mut s).await;
        by_id.entry(r.watch_id()).or_default().extend(events(&r));
    }
    assert_eq!(
        by_id[&20],
        vec![(EventType::Delete, "f".into(), "".into(), 7)]
    );
    assert_eq!(
        by_id[&21],
        vec![(EventType::Put, "f".into(), "v".into(), 6)]
    );
    assert_eq!(by_id[&22].len(), 2);

    // Cancel: answered with canceled, then nothing more for that id.
    s.cancel(22).await.unwrap();
    let r = next(&mut s).await;
    assert!(r.canceled() && r.watch_id() == 22);

    // Progress request: every watcher is synced, so a reply with id -1 at rev 7.
    s.request_progress().await.unwrap();
    let r = next(&mut s).await;
    assert_eq!((r.watch_id(), r.events().len()), (-1, 0));
    assert_eq!(r.header().unwrap().revision(), 7);

    // progress_notify: an idle watcher gets periodic empty replies.
    let mut p = c
        .watch("idle", Some(WatchOptions::new().with_progress_notify()))
        .await
        .unwrap();
    assert!(next(&mut p).await.created());
    let r = next(&mut p).await;
    assert!(r.events().is_empty() && !r.canceled());
    assert_eq!(r.header().unwrap().revision(), 7);

    // A start below the compacted revision: canceled with compact_revision.
    c.compact(6, None).await.unwrap();
    let mut old = c
        .watch(
            "w/",
            Some(WatchOptions::new().with_prefix().with_start_revision(3)),
        )
        .await
        .unwrap();
    let r = next(&mut old).await;
    assert!(r.created());
    let r = next(&mut old).await;
    assert!(r.canceled());
    assert_eq!(r.compact_revision(), 6);
    srv.server.shutdown().await;
}

/// `fragment` is not exposed by etcd-client, so this test speaks the generated
/// tonic client directly.
#[tokio::test]
async fn fragmented_watch_responses_split_and_reassemble() {
    use hark_proto::etcdserverpb::{
        WatchCreateRequest, WatchRequest, watch_client::WatchClient, watch_request::RequestUnion,
    };
    use prost::Message;
    let srv = start(&["--max-request-bytes=4096"]).await;
    let mut c = srv.client().await;
    // Ten revisions of 1 KB values (revisions 2..=11); caught up together they
    // make one response of about 10 KB, over the 4 KiB limit.
    for i in 0..10 {
        c.put(format!("big/{i}"), vec![b'x'; 1000], None)
            .await
            .unwrap();
    }
    let mut raw = WatchClient::connect(srv.endpoint()).await.unwrap();
    let create = |id: i64, fragment: bool| WatchRequest {
        request_union: Some(RequestUnion::CreateRequest(WatchCreateRequest {
            key: "big/".into(),
            range_end: "big0".into(),
            watch_id: id,
            fragment,
            start_revision: 2,
            ..Default::default()
        })),
    };
    // The request side stays open (a closed one would also do: etcd keeps a
    // watch stream whose client closed its side, and so does Hark).
    let (requests, rx) = tokio::sync::mpsc::channel(4);
    requests.send(create(1, true)).await.unwrap();
    requests.send(create(2, false)).await.unwrap();
    let rx = tokio_stream::wrappers::ReceiverStream::new(rx);
    let mut replies = raw.watch(rx).await.unwrap().into_inner();
    async fn message(
        replies: &mut tonic::Streaming<hark_proto::etcdserverpb::WatchResponse>,
    ) -> hark_proto::etcdserverpb::WatchResponse {
        tokio::time::timeout(WAIT, replies.message())
            .await
            .unwrap()
            .unwrap()
            .unwrap()
    }
    let (mut fragments, mut whole) = (Vec::new(), Vec::new());
    let total = |v: &Vec<(usize, bool, usize)>| v.iter().map(|p| p.0).sum::<usize>();
    while total(&fragments) < 10 || total(&whole) < 10 {
        let r = message(&mut replies).await;
        let piece = (r.events.len(), r.fragment, r.encoded_len());
        match (r.watch_id, r.created) {
            (_, true) => {}
            (1, false) => fragments.push(piece),
            (2, false) => whole.push(piece),
            other => panic!("unexpected reply {other:?}"),
        }
    }
    assert_eq!(total(&fragments), 10);
    assert_eq!(total(&whole), 10);
    assert!(whole.iter().all(|p| !p.1), "no fragments without the flag");
    assert!(
        whole.iter().any(|p| p.2 > 4096),
        "the catch-up is one response over the limit: {whole:?}"
    );
    assert!(
        fragments.len() >= 3,
        "10 KB under a 4 KiB limit comes in pieces: {fragments:?}"
    );
    assert!(
        fragments.iter().all(|p| p.2 < 4096 || p.0 == 1),
        "{fragments:?}"
    );
    let (last, rest) = fragments.split_last().unwrap();
    assert!(rest.iter().all(|p| p.1) && !last.1, "{fragments:?}");
    drop(requests);
    srv.server.shutdown().await;
}

#[tokio::test]
async fn leases_grant_keep_alive_time_to_live_revoke_and_expire() {
    let srv = start(&[]).await;
    let mut c = srv.client().await;
    let chosen = c.lease_grant(60, None).await.unwrap();
    assert!(chosen.id() > 0);
    assert_eq!(chosen.ttl(), 60);
    let given = c
        .lease_grant(1, Some(LeaseGrantOptions::new().with_id(42)))
        .await
        .unwrap();
    // etcd raises TTLs below its minimum (2 s with default timing).
    assert_eq!((given.id(), given.ttl()), (42, 2));
    c.put("l/1", "v", Some(PutOptions::new().with_lease(chosen.id())))
        .await
        .unwrap();
    c.put("l/2", "v", Some(PutOptions::new().with_lease(chosen.id())))
        .await
        .unwrap();
    c.put("l/3", "v", Some(PutOptions::new().with_lease(42)))
        .await
        .unwrap();

    let r = c
        .lease_time_to_live(chosen.id(), Some(LeaseTimeToLiveOptions::new().with_keys()))
        .await
        .unwrap();
    assert_eq!(r.granted_ttl(), 60);
    assert!(r.ttl() > 50 && r.ttl() <= 60);
    assert_eq!(r.keys(), &[b"l/1".to_vec(), b"l/2".to_vec()]);
    let r = c.lease_time_to_live(999, None).await.unwrap();
    assert_eq!(r.ttl(), -1);
    let mut ids: Vec<i64> = c
        .leases()
        .await
        .unwrap()
        .leases()
        .iter()
        .map(|l| l.id())
        .collect();
    ids.sort();
    let mut expected = vec![42, chosen.id()];
    expected.sort();
    assert_eq!(ids, expected);

    let (mut keeper, mut acks) = c.lease_keep_alive(chosen.id()).await.unwrap();
    keeper.keep_alive().await.unwrap();
    let ack = tokio::time::timeout(WAIT, acks.message())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!((ack.id(), ack.ttl()), (chosen.id(), 60));
    // etcd answers a keep-alive of an unknown lease with TTL 0 (etcd-client turns
    // that into an error of its own, so ask over the raw stream).
    let mut raw = hark_proto::etcdserverpb::lease_client::LeaseClient::connect(srv.endpoint())
        .await
        .unwrap();
    let (pings, rx) = tokio::sync::mpsc::channel(1);
    pings
        .send(hark_proto::etcdserverpb::LeaseKeepAliveRequest { id: 31337 })
        .await
        .unwrap();
    let mut acks_raw = raw
        .lease_keep_alive(tokio_stream::wrappers::ReceiverStream::new(rx))
        .await
        .unwrap()
        .into_inner();
    let ack = tokio::time::timeout(WAIT, acks_raw.message())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!((ack.id, ack.ttl), (31337, 0));
    drop(pings);

    // Revoke and expiry both delete keys through the store: watchers see DELETEs.
    let mut w = c
        .watch("l/", Some(WatchOptions::new().with_prefix()))
        .await
        .unwrap();
    assert!(next(&mut w).await.created());
    c.lease_revoke(chosen.id()).await.unwrap();
    let r = next(&mut w).await;
    let got: Vec<_> = events(&r).into_iter().map(|(t, k, _, _)| (t, k)).collect();
    assert_eq!(
        got,
        vec![
            (EventType::Delete, "l/1".into()),
            (EventType::Delete, "l/2".into())
        ]
    );
    // Lease 42 (2 s) is never kept alive: it expires.
    let r = next(&mut w).await;
    let got: Vec<_> = events(&r).into_iter().map(|(t, k, _, _)| (t, k)).collect();
    assert_eq!(got, vec![(EventType::Delete, "l/3".into())]);
    assert!(c.leases().await.unwrap().leases().is_empty());
    srv.server.shutdown().await;
}

#[tokio::test]
async fn leases_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::start_in(dir.path(), &[]).await;
    let mut c = common::client(&server.endpoints()[0]).await;
    c.lease_grant(600, Some(LeaseGrantOptions::new().with_id(5)))
        .await
        .unwrap();
    c.put("held", "v", Some(PutOptions::new().with_lease(5)))
        .await
        .unwrap();
    drop(c);
    server.shutdown().await;

    let server = common::start_in(dir.path(), &[]).await;
    let mut c = common::client(&server.endpoints()[0]).await;
    let r = c
        .lease_time_to_live(5, Some(LeaseTimeToLiveOptions::new().with_keys()))
        .await
        .unwrap();
    assert_eq!(r.granted_ttl(), 600);
    assert_eq!(r.keys(), &[b"held".to_vec()]);
    c.lease_revoke(5).await.unwrap();
    assert!(c.get("held", None).await.unwrap().kvs().is_empty());
    server.shutdown().await;
}

#[tokio::test]
async fn status_member_list_and_headers() {
    let srv = start(&["--name=node-a"]).await;
    let mut c = srv.client().await;
    let put = c.put("k", "v", None).await.unwrap();
    let h = put.header().unwrap();
    assert!(h.cluster_id() != 0 && h.member_id() != 0 && h.raft_term() > 0);
    let s = c.status().await.unwrap();
    let sh = s.header().unwrap();
    assert_eq!(
        (sh.cluster_id(), sh.member_id()),
        (h.cluster_id(), h.member_id())
    );
    assert_eq!(s.leader(), h.member_id());
    assert_eq!(s.version(), "3.7.3");
    assert!(s.db_size() > 0 && s.raft_used_db_size() > 0);
    assert!(s.raft_index() >= 2 && s.raft_term() == h.raft_term());
    let members = c.member_list().await.unwrap();
    assert_eq!(members.members().len(), 1);
    let m = &members.members()[0];
    assert_eq!((m.id(), m.name()), (h.member_id(), "node-a"));
    assert_eq!(m.client_urls(), &[srv.endpoint()]);
    assert!(
        c.alarm(
            etcd_client::AlarmAction::Get,
            etcd_client::AlarmType::None,
            None
        )
        .await
        .unwrap()
        .alarms()
        .is_empty()
    );
    srv.server.shutdown().await;
}

// Multi-threaded: the test's HTTP requests block a thread while the server answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_and_health_over_http() {
    let srv = start(&["--listen-metrics-urls=http://127.0.0.1:0"]).await;
    let mut c = srv.client().await;
    c.put("k", "v", None).await.unwrap();
    c.get("k", None).await.unwrap();
    let _ = c.get("", None).await.unwrap_err();
    let mut w = c.watch("k", None).await.unwrap();
    assert!(next(&mut w).await.created());

    for addr in [srv.server.client_addrs[0], srv.server.metrics_addrs[0]] {
        let (code, body) = http_get(addr, "/health");
        assert_eq!(
            (code, body.as_str()),
            (200, r#"{"health":"true","reason":""}"#)
        );
        let (code, body) = http_get(addr, "/metrics");
        assert_eq!(code, 200);
        for needle in [
            "etcd_debugging_mvcc_current_revision",
            "etcd_mvcc_put_total",
            "etcd_debugging_mvcc_watcher_total",
            "grpc_server_started_total{grpc_method=\"Range\",grpc_service=\"etcdserverpb.KV\",grpc_type=\"unary\"}",
            "grpc_server_handled_total{grpc_code=\"OK\",grpc_method=\"Range\",grpc_service=\"etcdserverpb.KV\",grpc_type=\"unary\"}",
            "grpc_server_handled_total{grpc_code=\"InvalidArgument\",grpc_method=\"Range\",grpc_service=\"etcdserverpb.KV\"",
            "grpc_server_started_total{grpc_method=\"Watch\",grpc_service=\"etcdserverpb.Watch\",grpc_type=\"bidi_stream\"}",
        ] {
            assert!(body.contains(needle), "/metrics lacks {needle}:\n{body}");
        }
    }
    srv.server.shutdown().await;
}

/// A client that opens a connection and then never reads again cannot keep
/// the store open: after the drain timeout its connection is closed, and the
/// data dir opens again (RocksDB locks it while a store holds it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_closes_the_store_even_with_an_unresponsive_client() {
    use tokio::io::AsyncWriteExt;
    let dir = tempfile::tempdir().unwrap();
    let server = common::start_in(dir.path(), &[]).await;
    let mut c = common::client(&server.endpoints()[0]).await;
    c.put("k", "v", None).await.unwrap();
    let mut stuck = tokio::net::TcpStream::connect(server.client_addrs[0])
        .await
        .unwrap();
    // The HTTP/2 preface and an empty SETTINGS frame, then silence.
    stuck
        .write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00")
        .await
        .unwrap();
    server.shutdown().await;
    let reopened = common::start_in(dir.path(), &[]).await;
    let mut c = common::client(&reopened.endpoints()[0]).await;
    assert_eq!(c.get("k", None).await.unwrap().kvs()[0].value(), b"v");
    drop(stuck);
    reopened.shutdown().await;
}

#[tokio::test]
async fn periodic_auto_compaction_compacts_old_revisions() {
    let srv = start(&[
        "--auto-compaction-mode=periodic",
        "--auto-compaction-retention=1s",
    ])
    .await;
    let mut c = srv.client().await;
    c.put("k", "1", None).await.unwrap(); // rev 2
    // A bounded wait, not a timing assertion: revisions older than a second
    // are compacted on one of the next samples.
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        c.put("k", "more", None).await.unwrap();
        match c.get("k", Some(GetOptions::new().with_revision(2))).await {
            Err(e) => {
                assert_eq!(status(e).0, Code::OutOfRange);
                break;
            }
            Ok(_) => assert!(tokio::time::Instant::now() < deadline, "never compacted"),
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // The newest value survives compaction.
    assert_eq!(c.get("k", None).await.unwrap().kvs()[0].value(), b"more");
    srv.server.shutdown().await;
}
