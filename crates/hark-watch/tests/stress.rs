//! Stress: concurrent writers, many watchers on several streams with consumers
//! that read at different speeds, for a bounded time. Every watcher must get
//! exactly the history of its range, in order, once.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use hark_mvcc::{DeleteRangeRequest, PutRequest, Store};
use hark_watch::*;

const WRITERS: usize = 4;
const STREAMS: usize = 6;
const RUN_FOR: Duration = Duration::from_secs(3);

#[test]
fn concurrent_writes_and_watchers_deliver_exactly_once_in_order() {
    let store = Store::in_memory();
    let config = WatchConfig {
        stream_capacity: 4,
        window_revisions: 500,
        tick: Duration::from_millis(5),
        ..WatchConfig::default()
    };
    let hub = WatchHub::new(store.clone(), config);
    let stop = Arc::new(AtomicBool::new(false));
    let start_rev = store.current_revision();

    // Each stream watches two prefixes; consumer s sleeps s ms per response.
    let consumers: Vec<_> = (0..STREAMS)
        .map(|s| {
            let (ws, rx) = hub.new_stream();
            let a = ws
                .watch(WatchRequest::range(
                    format!("w{}/", s % WRITERS),
                    format!("w{}0", s % WRITERS),
                ))
                .unwrap();
            let b = ws
                .watch(WatchRequest::range("w", "x").from_revision(start_rev + 1))
                .unwrap();
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut got: std::collections::HashMap<WatchId, Vec<(i64, Vec<u8>)>> =
                    Default::default();
                let mut idle_after_stop = 0;
                loop {
                    match rx.recv_timeout(Duration::from_millis(50)) {
                        Some(r) => {
                            for e in r.events() {
                                got.entry(r.watch_id)
                                    .or_default()
                                    .push((e.revision(), e.kv.key.to_vec()));
                            }
                            if s % 3 == 2 {
                                std::thread::sleep(Duration::from_millis(1)); // a slow reader
                            }
                        }
                        None if stop.load(Ordering::Relaxed) => {
                            idle_after_stop += 1;
                            if idle_after_stop > 20 {
                                break;
                            }
                        }
                        None => {}
                    }
                }
                drop(ws);
                (s, a, b, got)
            })
        })
        .collect();

    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let store = store.clone();
            std::thread::spawn(move || {
                let deadline = Instant::now() + RUN_FOR;
                let mut i = 0u64;
                while Instant::now() < deadline {
                    let key = format!("w{w}/{}", i % 13);
                    if i % 5 == 4 {
                        store
                            .delete_range(DeleteRangeRequest::new(key, ""))
                            .unwrap();
                    } else {
                        store.put(PutRequest::new(key, i.to_string())).unwrap();
                    }
                    i += 1;
                }
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    let final_rev = store.current_revision();
    assert!(
        final_rev - start_rev > 1000,
        "writers made only {} revisions",
        final_rev - start_rev
    );

    let history = store
        .history(start_rev + 1, usize::MAX, usize::MAX)
        .unwrap();
    let expect = |prefix: &str| -> Vec<(i64, Vec<u8>)> {
        history
            .iter()
            .flat_map(|c| {
                c.events
                    .iter()
                    .map(move |e| (c.revision, e.kv.key.to_vec()))
            })
            .filter(|(_, k)| k.starts_with(prefix.as_bytes()))
            .collect()
    };
    for c in consumers {
        let (s, a, b, got) = c.join().unwrap();
        let all = expect("w");
        assert_eq!(
            got.get(&b).cloned().unwrap_or_default(),
            all,
            "stream {s}: watcher on every writer"
        );
        // The prefix watcher started "now" at create time: its events are a suffix.
        let mine = expect(&format!("w{}/", s % WRITERS));
        let got_a = got.get(&a).cloned().unwrap_or_default();
        assert!(
            mine.ends_with(&got_a),
            "stream {s}: prefix watcher got a non-suffix"
        );
        assert!(!got_a.is_empty());
    }
}
