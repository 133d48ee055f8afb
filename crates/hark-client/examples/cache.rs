//! A list-and-watch cache of a prefix (Kubernetes' informer pattern): reads
//! served locally, a wait for "the cache has caught up with revision r"
//! (read-your-writes from the cache), and a stream of what changed.
//!
//! `cargo run -p hark-client --example cache` against `ETCD_ENDPOINT`
//! (default `http://127.0.0.1:2379`; Hark or etcd 3.5). It writes only under
//! `hark-client-examples/cache/`.

use std::time::Duration;

use hark_client::{Cache, CacheEvent, Client, Op, Txn};

const PREFIX: &str = "hark-client-examples/cache/";
const WAIT: Duration = Duration::from_secs(30);

pub async fn run(endpoint: &str) -> Result<(), Box<dyn std::error::Error>> {
    let client = Client::connect([endpoint]).await?;
    client.delete_prefix(PREFIX).await?;
    let key = |name: &str| format!("{PREFIX}{name}");
    client.put(key("a"), "1").await?;
    client.put(key("b"), "1").await?;

    // Returns once the first listing is in.
    let cache = Cache::start(client.clone(), PREFIX).await?;
    assert_eq!(cache.len(), 2);
    let mut changes = cache.subscribe();

    let resp = client
        .txn(Txn::new().and_then([Op::put(key("c"), "1"), Op::delete(key("a"))]))
        .await?;
    let written_at = resp.header.unwrap_or_default().revision;

    // Subscribers get each change the cache applied, in order.
    let mut events = Vec::new();
    while events.len() < 2 {
        match tokio::time::timeout(WAIT, changes.recv()).await?? {
            CacheEvent::Put(kv) => events.push(format!("put {}", String::from_utf8_lossy(&kv.key))),
            CacheEvent::Delete { key, revision } => {
                assert_eq!(revision, written_at);
                events.push(format!("delete {}", String::from_utf8_lossy(&key)));
            }
            CacheEvent::Relisted { .. } => {}
        }
    }
    assert_eq!(
        events,
        [format!("put {}", key("c")), format!("delete {}", key("a"))]
    );
    // Reads are local: the cache now holds the write.
    assert_eq!(
        cache.get(key("c").as_bytes()).map(|kv| kv.value),
        Some("1".into())
    );
    assert!(cache.get(key("a").as_bytes()).is_none());
    let (_, kvs) = cache.snapshot();
    let keys: Vec<_> = kvs.iter().map(|kv| kv.key.clone()).collect();
    assert_eq!(keys, [key("b"), key("c")]);
    // Without a subscription, wait for the revision: the wait returns once
    // the cache reflects every change up to it. (This example waits on the
    // events first because etcd releases without the fix for etcd#15220,
    // such as 3.5.1, can answer the progress request the wait makes ahead of
    // the events it covers; there the wait alone may return early. Hark
    // sends the two in order.)
    // (An error, `Error::Timeout`, if the cache never got there.)
    cache.wait_for_revision(written_at, WAIT).await?;

    // A write elsewhere moves the server's revision but not the prefix; a
    // consistent snapshot still waits until the cache is as new as the
    // server (the cache asks the server for watch progress meanwhile).
    let elsewhere = client
        .put("hark-client-examples/cache-elsewhere", "x")
        .await?
        .header
        .unwrap_or_default()
        .revision;
    let (revision, kvs) = cache.consistent_snapshot(WAIT).await?;
    assert!(revision >= elsewhere, "{revision} < {elsewhere}");
    assert_eq!(kvs.len(), 2);
    client
        .delete("hark-client-examples/cache-elsewhere")
        .await?;
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let endpoint =
        std::env::var("ETCD_ENDPOINT").unwrap_or_else(|_| "http://127.0.0.1:2379".into());
    run(&endpoint).await?;
    println!("cache: ok");
    Ok(())
}
