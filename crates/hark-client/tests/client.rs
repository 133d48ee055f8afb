//! hark-client against an in-process Hark server: KV, txn, leases, status,
//! watches (options, progress, compaction, fragments, cancel on drop).

use std::time::Duration;

use hark_client::{
    Client, Compare, CompareOp, EventType, Op, Txn, Watch, WatchError, WatchOptions, WatchUpdate,
    pb,
};

mod common;

use common::server;

const WAIT: Duration = Duration::from_secs(30);

async fn next(w: &mut Watch) -> Result<WatchUpdate, WatchError> {
    tokio::time::timeout(WAIT, w.next())
        .await
        .expect("a watch update in time")
        .expect("the watch is open")
}

fn keys_of(u: &WatchUpdate) -> Vec<(EventType, String, i64)> {
    u.events
        .iter()
        .map(|e| {
            let kv = e.kv.as_ref().unwrap();
            (
                e.r#type(),
                String::from_utf8(kv.key.to_vec()).unwrap(),
                kv.mod_revision,
            )
        })
        .collect()
}

#[tokio::test]
async fn kv_txn_leases_and_status() {
    let (srv, _dir) = server(&[]).await;
    let c = Client::connect(srv.endpoints()).await.unwrap();
    assert_eq!(c.put("a/1", "x").await.unwrap().header.unwrap().revision, 2);
    c.put("a/2", "y").await.unwrap();
    c.put("b", "z").await.unwrap();
    assert_eq!(c.get("a/1").await.unwrap().kvs[0].value, "x");
    assert_eq!(c.get_prefix("a/").await.unwrap().count, 2);
    let r = c
        .range(pb::RangeRequest {
            key: "a".into(),
            range_end: "c".into(),
            keys_only: true,
            limit: 2,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!((r.kvs.len(), r.more, r.kvs[0].value.len()), (2, true, 0));

    let t = c
        .txn(
            Txn::new()
                .when([Compare::value("b", CompareOp::Equal, "z")])
                .and_then([Op::put("t", "yes"), Op::get("a/2")])
                .or_else([Op::put("t", "no")]),
        )
        .await
        .unwrap();
    assert!(t.succeeded);
    let t = c
        .txn(
            Txn::new()
                .when([Compare::mod_revision("b", CompareOp::Less, 2)])
                .and_then([Op::delete("b")]),
        )
        .await
        .unwrap();
    assert!(!t.succeeded);
    assert_eq!(c.delete("b").await.unwrap().deleted, 1);

    // Errors carry etcd's messages.
    let e = c.put("", "v").await.unwrap_err();
    assert_eq!(e.to_string(), "etcdserver: key is not provided");

    let lease = c.lease_grant(60, 0).await.unwrap();
    assert!(lease.id > 0 && lease.ttl == 60);
    c.put_request(pb::PutRequest {
        key: "leased".into(),
        value: "v".into(),
        lease: lease.id,
        ..Default::default()
    })
    .await
    .unwrap();
    let ttl = c.lease_time_to_live(lease.id, true).await.unwrap();
    assert_eq!((ttl.granted_ttl, ttl.keys.len()), (60, 1));
    assert_eq!(c.leases().await.unwrap().leases.len(), 1);
    let keeper = c.keep_alive(lease.id).await.unwrap();
    assert_eq!(keeper.ttl(), 60);
    drop(keeper);
    c.lease_revoke(lease.id).await.unwrap();
    assert!(c.get("leased").await.unwrap().kvs.is_empty());
    assert_eq!(c.lease_time_to_live(lease.id, false).await.unwrap().ttl, -1);

    let rev = c.status().await.unwrap().header.unwrap().revision;
    c.compact(rev, true).await.unwrap();
    let e = c
        .range(pb::RangeRequest {
            key: "a/1".into(),
            revision: 2,
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "etcdserver: mvcc: required revision has been compacted"
    );
    srv.shutdown().await;
}

#[tokio::test]
async fn watches_share_a_stream_with_their_options() {
    let (srv, _dir) = server(&[]).await;
    let c = Client::connect(srv.endpoints()).await.unwrap();
    c.put("w/a", "1").await.unwrap(); // 2
    c.put("w/b", "1").await.unwrap(); // 3

    let mut history = c
        .watch("w/", WatchOptions::prefix().from_revision(2))
        .await
        .unwrap();
    let notify = WatchOptions {
        created_notify: true,
        ..Default::default()
    };
    let mut now = c.watch("w/a", notify.clone()).await.unwrap();
    let mut no_put = c
        .watch(
            "w/",
            WatchOptions {
                prefix: true,
                no_put: true,
                prev_kv: true,
                ..notify
            },
        )
        .await
        .unwrap();
    assert!(next(&mut now).await.unwrap().created);
    assert!(next(&mut no_put).await.unwrap().created);
    let u = next(&mut history).await.unwrap();
    assert_eq!(
        keys_of(&u),
        [
            (EventType::Put, "w/a".into(), 2),
            (EventType::Put, "w/b".into(), 3)
        ]
    );
    // Every watch is created and caught up: a progress request reaches all.
    c.request_progress();
    for w in [&mut history, &mut now, &mut no_put] {
        let p = next(w).await.unwrap();
        assert!(p.is_progress());
        assert_eq!(p.revision, 3);
    }
    c.put("w/a", "2").await.unwrap(); // 4
    c.delete("w/a").await.unwrap(); // 5
    assert_eq!(
        keys_of(&next(&mut history).await.unwrap()),
        [(EventType::Put, "w/a".into(), 4)]
    );
    assert_eq!(
        keys_of(&next(&mut history).await.unwrap()),
        [(EventType::Delete, "w/a".into(), 5)]
    );
    assert_eq!(
        keys_of(&next(&mut now).await.unwrap()),
        [(EventType::Put, "w/a".into(), 4)]
    );
    let d = next(&mut no_put).await.unwrap();
    assert_eq!(keys_of(&d), [(EventType::Delete, "w/a".into(), 5)]);
    assert_eq!(d.events[0].prev_kv.as_ref().unwrap().value, "2");

    // Compaction surfaces as a typed error with the compact revision.
    c.compact(4, false).await.unwrap();
    let mut old = c
        .watch("w/", WatchOptions::prefix().from_revision(2))
        .await
        .unwrap();
    assert_eq!(
        next(&mut old).await,
        Err(WatchError::Compacted {
            compact_revision: 4
        })
    );
    assert!(old.next().await.is_none(), "the watch ends after its error");

    // A dropped watch is cancelled; the others carry on.
    drop(now);
    c.put("w/a", "3").await.unwrap(); // 6
    assert_eq!(
        keys_of(&next(&mut history).await.unwrap()),
        [(EventType::Put, "w/a".into(), 6)]
    );
    srv.shutdown().await;
}

#[tokio::test]
async fn fragments_are_joined() {
    let (srv, _dir) = server(&["--max-request-bytes=4096"]).await;
    let c = Client::connect(srv.endpoints()).await.unwrap();
    for i in 0..10 {
        c.put(format!("big/{i}"), vec![b'x'; 1000]).await.unwrap();
    }
    let mut w = c
        .watch(
            "big/",
            WatchOptions {
                prefix: true,
                fragment: true,
                start_revision: 2,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let mut events = 0;
    while events < 10 {
        let u = next(&mut w).await.unwrap();
        // Each update holds whole revisions: the joined pieces.
        events += u.events.len();
    }
    assert_eq!(events, 10);
    srv.shutdown().await;
}

/// Calls ride through their only endpoint's restart: a read is retried
/// while the server is down, and so is a put whose connection could not be
/// made (it certainly reached no server); both succeed once it is back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_ride_through_a_server_restart() {
    let dir = tempfile::tempdir().unwrap();
    let port = common::etcd::free_port();
    let config = <hark_server::Config as clap::Parser>::try_parse_from([
        "hark".to_string(),
        format!("--listen-client-urls=http://127.0.0.1:{port}"),
        "--listen-peer-urls=http://127.0.0.1:0".into(),
        format!("--data-dir={}", dir.path().display()),
        "--unsafe-no-fsync".into(),
    ])
    .unwrap();
    let server = hark_server::start(&config).await.unwrap();
    let c = Client::connect([format!("http://127.0.0.1:{port}")])
        .await
        .unwrap();
    c.put("k", "v1").await.unwrap();
    server.shutdown().await;
    let restart = async {
        tokio::time::sleep(Duration::from_millis(800)).await;
        hark_server::start(&config).await.unwrap()
    };
    let (server, read, put) = tokio::join!(restart, c.get("k"), c.put("k2", "v2"));
    let read = read.expect("the read is retried until the server is back");
    assert_eq!(read.kvs[0].value, "v1");
    put.expect("the put is retried: its connections were refused");
    assert_eq!(c.get("k2").await.unwrap().kvs[0].value, "v2");
    server.shutdown().await;
}

/// etcd 3.7's RangeStream: chunks of about `--max-request-bytes` at one
/// revision, key-values only but for the last, which has the header, the
/// count and `more`; merged, what Range answers. Sort orders and revision
/// filters are refused with etcd's Unimplemented messages.
#[tokio::test]
async fn range_stream_sends_chunks_at_one_revision() {
    let (srv, _dir) = server(&["--max-request-bytes=65536"]).await;
    let c = Client::connect(srv.endpoints()).await.unwrap();
    for i in 0..100 {
        c.put(format!("s/{i:03}"), vec![b'x'; 4096]).await.unwrap();
    }
    let prefix = |limit| pb::RangeRequest {
        key: "s/".into(),
        range_end: "s0".into(),
        limit,
        ..Default::default()
    };
    let whole = c.range(prefix(0)).await.unwrap();
    let mut stream = c.range_stream(prefix(0)).await.unwrap();
    let mut chunks = Vec::new();
    while let Some(chunk) = stream.message().await.unwrap() {
        chunks.push(chunk.range_response.unwrap());
        // Written after the stream began: not in it.
        c.put("s/050", "later").await.unwrap();
    }
    assert!(chunks.len() > 2, "{} chunks", chunks.len());
    let (last, rest) = chunks.split_last().unwrap();
    for chunk in rest {
        assert!(chunk.header.is_none() && chunk.count == 0 && !chunk.more);
        let bytes: usize = chunk.kvs.iter().map(|kv| kv.value.len()).sum();
        assert!(bytes <= 4 * 65536, "a chunk of {bytes} bytes");
    }
    let merged: Vec<_> = chunks.iter().flat_map(|c| c.kvs.clone()).collect();
    assert_eq!(merged, whole.kvs);
    assert_eq!((last.count, last.more), (100, false));
    let header = last.header.as_ref().unwrap();
    assert_eq!(header.revision, whole.header.as_ref().unwrap().revision);
    assert_ne!(header.member_id, 0, "a full header, as Range has");

    let limited = c.range_streamed(prefix(30)).await.unwrap();
    assert_eq!(
        (limited.kvs.len(), limited.count, limited.more),
        (30, 100, true)
    );
    let counted = c
        .range_streamed(pb::RangeRequest {
            count_only: true,
            ..prefix(0)
        })
        .await
        .unwrap();
    assert_eq!((counted.kvs.len(), counted.count), (0, 100));

    let refused = |req| async { c.range_streamed(req).await.unwrap_err() };
    let sorted = refused(pb::RangeRequest {
        sort_order: pb::range_request::SortOrder::Descend as i32,
        ..prefix(0)
    })
    .await;
    assert_eq!(
        sorted.to_string(),
        "RangeStream does not support custom sort orders"
    );
    assert!(
        matches!(&sorted, hark_client::Error::Status(s) if s.code() == tonic::Code::Unimplemented),
        "{sorted:?}"
    );
    let filtered = refused(pb::RangeRequest {
        min_mod_revision: 2,
        ..prefix(0)
    })
    .await;
    assert_eq!(
        filtered.to_string(),
        "RangeStream does not support revision filters"
    );
    let now = c.get("s/000").await.unwrap().header.unwrap().revision;
    c.compact(now, false).await.unwrap();
    let compacted = refused(pb::RangeRequest {
        revision: 2,
        ..prefix(0)
    })
    .await;
    assert_eq!(
        compacted.to_string(),
        "etcdserver: mvcc: required revision has been compacted"
    );
    srv.shutdown().await;
}
