//! Memory per idle watcher: resident set growth while 100k and then 1M watchers
//! (each on its own key, spread over 1000 streams) are registered, divided by
//! the number of watchers. Not timed; prints bytes per watcher.
//!
//! Run: `cargo bench -p hark-benches --bench watch_memory`.

use std::time::{Duration, Instant};

use hark_mvcc::{PutRequest, Store};
use hark_watch::{WatchConfig, WatchHub, WatchRequest};

fn rss_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("Linux /proc");
    let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

fn main() {
    // `cargo bench` passes `--bench`; ignore arguments.
    let store = Store::in_memory();
    let hub = WatchHub::new(store.clone(), WatchConfig::default());
    let mut streams = Vec::new();
    let mut registered = 0usize;
    let base = rss_bytes();
    for target in [100_000usize, 1_000_000] {
        while registered < target {
            if registered % 1000 == 0 {
                streams.push(hub.new_stream());
            }
            let (ws, _) = streams.last().unwrap();
            ws.watch(WatchRequest::key(format!("key/{registered:09}")))
                .unwrap();
            registered += 1;
        }
        // Wait until the engine processed every create: a put on the last key
        // reaches its watcher only after that.
        let last = format!("key/{:09}", registered - 1);
        store.put(PutRequest::new(last, "x")).unwrap();
        let (_, rx) = streams.last().unwrap();
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let r = rx.recv_timeout(Duration::from_secs(1));
            if r.is_some_and(|r| !r.events().is_empty()) {
                break;
            }
            assert!(Instant::now() < deadline, "engine did not catch up");
        }
        // Drain created replies so queued responses are not counted as watcher cost.
        for (_, rx) in &streams {
            while rx.try_recv().is_some() {}
        }
        let grown = rss_bytes().saturating_sub(base);
        println!(
            "watch_memory: {target} idle watchers: RSS +{} MiB, {} bytes per watcher",
            grown >> 20,
            grown / target as u64
        );
    }
}
