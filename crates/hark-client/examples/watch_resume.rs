//! Watching from a revision, and resuming: a watch started at revision `r`
//! delivers every change from `r` on, in revision order, then goes on live.
//! A consumer that stops and remembers the revision after the last event it
//! handled can start a new watch there and miss nothing and see nothing
//! twice (the client does the same by itself when its stream breaks). Once
//! that history is compacted, the watch ends with `Compacted` and the
//! consumer lists again.
//!
//! `cargo run -p hark-client --example watch_resume` against `ETCD_ENDPOINT`
//! (default `http://127.0.0.1:2379`; Hark or etcd 3.5). It writes only under
//! `hark-client-examples/watch/`, but it COMPACTS the store's history up to
//! one of its own writes: run it against a scratch server.

use std::time::Duration;

use hark_client::{Client, Event, EventType, Watch, WatchError, WatchOptions};

const PREFIX: &str = "hark-client-examples/watch/";

/// The next `n` events of `watch`: (type, key, revision).
async fn take(
    watch: &mut Watch,
    n: usize,
) -> Result<Vec<(EventType, String, i64)>, Box<dyn std::error::Error>> {
    let mut events = Vec::new();
    while events.len() < n {
        let update = tokio::time::timeout(Duration::from_secs(30), watch.next())
            .await?
            .ok_or("the watch closed")??;
        events.extend(update.events.iter().map(describe));
    }
    Ok(events)
}

fn describe(e: &Event) -> (EventType, String, i64) {
    let kv = e.kv.clone().unwrap_or_default();
    let key = String::from_utf8_lossy(&kv.key);
    (
        e.r#type(),
        key.trim_start_matches(PREFIX).to_string(),
        kv.mod_revision,
    )
}

async fn put(client: &Client, key: &str, value: &str) -> Result<i64, hark_client::Error> {
    let resp = client
        .put(format!("{PREFIX}{key}"), value.to_string())
        .await?;
    Ok(resp.header.unwrap_or_default().revision)
}

pub async fn run(endpoint: &str) -> Result<(), Box<dyn std::error::Error>> {
    use EventType::{Delete, Put};

    let client = Client::connect([endpoint]).await?;
    client.delete_prefix(PREFIX).await?;

    // History first: three changes before anyone watches.
    let r1 = put(&client, "a", "1").await?;
    let r2 = put(&client, "b", "1").await?;
    let r3 = put(&client, "a", "2").await?;

    // A watch from r1 replays them in order, then delivers live changes.
    let mut watch = client
        .watch(PREFIX, WatchOptions::prefix().from_revision(r1))
        .await?;
    let r4 = put(&client, "c", "1").await?;
    let seen = take(&mut watch, 4).await?;
    let expected = [
        (Put, "a", r1),
        (Put, "b", r2),
        (Put, "a", r3),
        (Put, "c", r4),
    ];
    assert_eq!(seen, expected.map(|(t, k, r)| (t, k.to_string(), r)));

    // The consumer stops, remembering where to go on from...
    let resume_at = seen.last().map(|e| e.2 + 1).unwrap_or(r1);
    drop(watch);
    // ...changes happen meanwhile...
    let deleted = client.delete(format!("{PREFIX}b")).await?;
    let r5 = deleted.header.unwrap_or_default().revision;
    let r6 = put(&client, "c", "2").await?;
    // ...and a new watch from `resume_at` delivers exactly those: no gap,
    // no repeat of what it had handled.
    let mut watch = client
        .watch(PREFIX, WatchOptions::prefix().from_revision(resume_at))
        .await?;
    let missed = take(&mut watch, 2).await?;
    assert_eq!(
        missed,
        [(Delete, "b".to_string(), r5), (Put, "c".to_string(), r6)]
    );
    drop(watch);

    // Compaction drops history: a watch from before it can no longer be
    // served, and says from where it could be.
    client.compact(r4, true).await?;
    let mut stale = client
        .watch(PREFIX, WatchOptions::prefix().from_revision(r1))
        .await?;
    let ended = tokio::time::timeout(Duration::from_secs(30), stale.next()).await?;
    assert_eq!(
        ended,
        Some(Err(WatchError::Compacted {
            compact_revision: r4
        }))
    );
    // The way back: list (at some revision), then watch from the next one.
    let listing = client.get_prefix(PREFIX).await?;
    let keys: Vec<_> = listing.kvs.iter().map(|kv| kv.key.clone()).collect();
    assert_eq!(keys, [format!("{PREFIX}a"), format!("{PREFIX}c")]);
    let listed_at = listing.header.unwrap_or_default().revision;
    let mut watch = client
        .watch(PREFIX, WatchOptions::prefix().from_revision(listed_at + 1))
        .await?;
    let r7 = put(&client, "d", "1").await?;
    assert_eq!(take(&mut watch, 1).await?, [(Put, "d".to_string(), r7)]);
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let endpoint =
        std::env::var("ETCD_ENDPOINT").unwrap_or_else(|_| "http://127.0.0.1:2379".into());
    run(&endpoint).await?;
    println!("watch_resume: ok");
    Ok(())
}
