//! hark-client against a real etcd (the `etcd-3.7` binary on PATH, which CI
//! installs; skipped without it unless HARK_REQUIRE_ETCDCTL=1, see
//! `common/etcd.rs`), and failover between endpoints.

use std::time::Duration;

use hark_client::{Cache, Client, Compare, CompareOp, Op, Txn, WatchError, WatchOptions};

mod common;

use common::etcd::{binary, free_port, launch, ready, start as start_etcd};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_works_against_etcd() {
    let Some(etcd) = start_etcd() else { return };
    let c = Client::connect([&etcd.endpoint]).await.unwrap();
    ready(&c).await;
    let status = c.status().await.unwrap();
    assert!(status.version.starts_with("3.7"), "{}", status.version);

    let base = c.put("e/a", "1").await.unwrap().header.unwrap().revision;
    let mut w = c
        .watch("e/", WatchOptions::prefix().from_revision(base))
        .await
        .unwrap();
    let cache = Cache::start(c.clone(), "e/").await.unwrap();
    let t = c
        .txn(
            Txn::new()
                .when([Compare::value("e/a", CompareOp::Equal, "1")])
                .and_then([Op::put("e/b", "2"), Op::delete("e/a")]),
        )
        .await
        .unwrap();
    assert!(t.succeeded);
    let mut revisions = Vec::new();
    while revisions.len() < 3 {
        let u = tokio::time::timeout(Duration::from_secs(30), w.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        revisions.extend(u.events.iter().map(|e| e.kv.as_ref().unwrap().mod_revision));
    }
    assert_eq!(revisions, [base, base + 1, base + 1]);
    let now = c.status().await.unwrap().header.unwrap().revision;
    cache
        .wait_for_revision(now, Duration::from_secs(30))
        .await
        .unwrap();
    let keys: Vec<_> = cache.snapshot().1.into_iter().map(|kv| kv.key).collect();
    assert_eq!(keys, ["e/b"]);

    let lease = c.lease_grant(30, 0).await.unwrap();
    let keeper = c.keep_alive(lease.id).await.unwrap();
    assert_eq!(keeper.ttl(), 30);
    assert_eq!(
        c.lease_time_to_live(lease.id, false)
            .await
            .unwrap()
            .granted_ttl,
        30
    );
    c.lease_revoke(lease.id).await.unwrap();

    c.compact(now, true).await.unwrap();
    let mut old = c
        .watch("e/", WatchOptions::prefix().from_revision(base))
        .await
        .unwrap();
    let err = tokio::time::timeout(Duration::from_secs(30), old.next())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        err,
        Err(WatchError::Compacted {
            compact_revision: now
        })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_fail_over_to_a_live_endpoint() {
    let Some(etcd) = start_etcd() else { return };
    let dead = format!("http://127.0.0.1:{}", free_port());
    let c = Client::connect([dead.as_str(), etcd.endpoint.as_str()])
        .await
        .unwrap();
    ready(&c).await;
    for i in 0..20 {
        c.put(format!("f/{i}"), "v").await.unwrap();
    }
    assert_eq!(c.get_prefix("f/").await.unwrap().count, 20);
}

/// The test etcd's start-up sees a port taken by someone else at once,
/// instead of waiting a minute for an etcd that exited (how
/// `on_etcd::blocking_query` once failed with "server did not come up"):
/// ports are picked free, then let go, and a parallel test can take one.
#[test]
fn an_etcd_whose_port_is_taken_is_seen_to_exit() {
    let Some(bin) = binary() else {
        return assert!(start_etcd().is_none());
    };
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let Err(log) = launch(&bin, port, free_port()) else {
        panic!("etcd started on a port another listener holds");
    };
    assert!(log.contains("address already in use"), "{log}");
}
