//! The list-and-watch cache and the blocking queries against a server.

use std::collections::HashMap;
use std::time::Duration;

use bytes::Bytes;
use hark_client::{Cache, CacheEvent, Changed, Client};

mod common;

use common::server;

/// (key, value, mod_revision) of every key under the prefix, on the server.
async fn server_view(c: &Client, prefix: &str) -> (i64, Vec<(Bytes, Bytes, i64)>) {
    let r = c.get_prefix(prefix.to_string()).await.unwrap();
    let rows = r
        .kvs
        .into_iter()
        .map(|kv| (kv.key, kv.value, kv.mod_revision))
        .collect();
    (r.header.unwrap().revision, rows)
}

fn cache_view(cache: &Cache) -> Vec<(Bytes, Bytes, i64)> {
    cache
        .snapshot()
        .1
        .into_iter()
        .map(|kv| (kv.key, kv.value, kv.mod_revision))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cache_equals_the_server_under_concurrent_writes_and_a_compaction() {
    let (srv, _dir) = server(&[]).await;
    let c = Client::connect(srv.endpoints()).await.unwrap();
    for i in 0..20 {
        c.put(format!("c/{i}"), "seed").await.unwrap();
    }
    let cache = Cache::start(c.clone(), "c/").await.unwrap();
    assert_eq!(cache.len(), 20);
    let mut writers = Vec::new();
    for w in 0..4u64 {
        let c = c.clone();
        writers.push(tokio::spawn(async move {
            let mut x = w.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
            for n in 0..150 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let key = format!("c/{}", x % 40);
                match x % 5 {
                    0 => drop(c.delete(key).await.unwrap()),
                    1 => drop(c.put(format!("other/{n}"), "x").await.unwrap()),
                    _ => drop(c.put(key, format!("{w}-{n}")).await.unwrap()),
                }
                if w == 0 && n == 75 {
                    let rev = c.status().await.unwrap().header.unwrap().revision;
                    c.compact(rev, true).await.unwrap();
                }
            }
        }));
    }
    for w in writers {
        w.await.unwrap();
    }
    let (rev, rows) = server_view(&c, "c/").await;
    cache
        .wait_for_revision(rev, Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(cache_view(&cache), rows);
    // Writes outside the prefix move the server but not the cache's events:
    // a consistent snapshot still reaches the server's revision.
    c.put("other/last", "x").await.unwrap();
    let (at, items) = cache
        .consistent_snapshot(Duration::from_secs(30))
        .await
        .unwrap();
    assert!(at > rev);
    assert_eq!(items.len(), rows.len());
    srv.shutdown().await;
}

#[tokio::test]
async fn a_cache_resumed_from_a_compacted_revision_relists() {
    let (srv, _dir) = server(&[]).await;
    let c = Client::connect(srv.endpoints()).await.unwrap();
    for i in 0..5 {
        c.put(format!("r/{i}"), "v").await.unwrap();
    }
    c.delete("r/0").await.unwrap();
    let rev = c.status().await.unwrap().header.unwrap().revision;
    c.compact(rev, false).await.unwrap();
    // A snapshot saved at revision 1 (empty) can no longer be followed.
    let cache = Cache::resume(c.clone(), "r/", 1, Vec::new());
    let mut changes = cache.subscribe();
    let relisted = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            if let CacheEvent::Relisted { revision } = changes.recv().await.unwrap() {
                return revision;
            }
        }
    })
    .await
    .unwrap();
    assert_eq!(relisted, rev);
    assert_eq!(cache_view(&cache), server_view(&c, "r/").await.1);
    // And it follows on from there.
    c.put("r/9", "new").await.unwrap();
    let event = tokio::time::timeout(Duration::from_secs(30), changes.recv())
        .await
        .unwrap()
        .unwrap();
    assert!(matches!(event, CacheEvent::Put(kv) if kv.key == "r/9"));
    srv.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blocking_queries() {
    let (srv, _dir) = server(&[]).await;
    let c = Client::connect(srv.endpoints()).await.unwrap();
    c.put("jobs/a", "1").await.unwrap(); // 2
    c.put("jobs/b", "1").await.unwrap(); // 3
    let seen = 3;
    // Nothing changes: the query times out empty.
    let none = c
        .wait_for_change("jobs/", seen, Duration::from_millis(200))
        .await
        .unwrap();
    assert!(none.is_empty());
    // A change made while the query waits wakes it.
    let writer = {
        let c = c.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            c.txn(hark_client::Txn::new().and_then([
                hark_client::Op::put("jobs/a", "2"),
                hark_client::Op::delete("jobs/b"),
            ]))
            .await
            .unwrap();
        })
    };
    let changed = c
        .wait_for_change("jobs/", seen, Duration::from_secs(30))
        .await
        .unwrap();
    writer.await.unwrap();
    assert_eq!(
        changed,
        vec![
            Changed {
                key: "jobs/a".into(),
                mod_revision: 4,
                deleted: false
            },
            Changed {
                key: "jobs/b".into(),
                mod_revision: 4,
                deleted: true
            },
        ]
    );
    // Only what moved is fetched.
    c.put("jobs/c", "1").await.unwrap(); // 5
    let view: HashMap<Bytes, i64> = [("jobs/a".into(), 2), ("jobs/b".into(), 3)].into();
    let diff = c.changed_since("jobs/", &view).await.unwrap();
    assert_eq!(diff.revision, 5);
    let updated: Vec<_> = diff
        .updated
        .iter()
        .map(|kv| (kv.key.clone(), kv.value.clone()))
        .collect();
    assert_eq!(
        updated,
        vec![("jobs/a".into(), "2".into()), ("jobs/c".into(), "1".into())]
    );
    assert_eq!(diff.deleted, vec![Bytes::from("jobs/b")]);
    let view: HashMap<Bytes, i64> = [("jobs/a".into(), 4), ("jobs/c".into(), 5)].into();
    let diff = c.changed_since("jobs/", &view).await.unwrap();
    assert!(diff.updated.is_empty() && diff.deleted.is_empty());
    srv.shutdown().await;
}
