//! Memory per idle watcher: resident set growth while 100k and then 1M watchers
//! (each on its own key, spread over 1000 streams) are registered, divided by
//! the number of watchers. Not timed; prints bytes per watcher.
//!
//! Run: `cargo bench -p hark-benches --bench watch_memory`.

use std::time::{Duration, Instant};

use hark_mvcc::{PutRequest, Store};
use hark_watch::{Responses, WatchConfig, WatchHub, WatchRequest, WatchStream};

fn rss_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("Linux /proc");
    let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

fn main() {
    // `cargo bench` passes `--bench`; ignore arguments.
    let store = Store::in_memory();
    let hub = WatchHub::new(store.clone(), WatchConfig::default());
    let mut streams: Vec<(WatchStream, Responses)> = Vec::new();
    let mut registered = 0usize;
    let base = rss_bytes();
    for target in [100_000usize, 1_000_000] {
        while registered < target {
            // One stream of 1000 watchers at a time, and wait for their created
            // replies, so no backlog of create commands inflates the figure.
            let (ws, rx) = hub.new_stream();
            for _ in 0..1000 {
                ws.watch(WatchRequest::key(format!("key/{registered:09}")))
                    .unwrap();
                registered += 1;
            }
            let deadline = Instant::now() + Duration::from_secs(60);
            let mut created = 0;
            while created < 1000 {
                assert!(
                    Instant::now() < deadline,
                    "engine did not answer the creates"
                );
                if rx.recv_timeout(Duration::from_secs(1)).is_some() {
                    created += 1;
                }
            }
            streams.push((ws, rx));
        }
        // Every watcher is live: a put on the last key reaches its watcher.
        let last = format!("key/{:09}", registered - 1);
        store.put(PutRequest::new(last, "x")).unwrap();
        let (_, rx) = streams.last().unwrap();
        let r = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("the event on the last key");
        assert_eq!(r.events().len(), 1);
        let grown = rss_bytes().saturating_sub(base);
        println!(
            "watch_memory: {target} idle watchers: RSS +{} MiB, {} bytes per watcher",
            grown >> 20,
            grown / target as u64
        );
    }
}
