//! What the engine reads from the store, seen through a backend that counts
//! and can fail its reads: history read errors hold up only the watchers
//! that need history, and `prev_kv` watchers cost no read per event.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use hark_mvcc::backend::{BackendHooks, Hooked, Table};
use hark_mvcc::{EventKind, MemoryBackend, PutRequest, Result, Store, StoreOptions};
use hark_watch::*;

/// Key-value reads fail while `failing` is set, as from a disk that returns
/// I/O errors (writes keep working); those made on the watch engine's
/// thread are counted.
#[derive(Default)]
struct ProbedReads {
    failing: AtomicBool,
    engine_reads: AtomicUsize,
}

impl BackendHooks for ProbedReads {
    fn before_read(&self, table: Table) -> Result<()> {
        if table != Table::Kv {
            return Ok(());
        }
        if std::thread::current().name() == Some("hark-watch-engine") {
            self.engine_reads.fetch_add(1, Ordering::SeqCst);
        }
        if self.failing.load(Ordering::SeqCst) {
            return Err(hark_mvcc::Error::Backend("injected read failure".into()));
        }
        Ok(())
    }
}

/// A memory store behind `probe`.
fn probed_store(probe: &Arc<ProbedReads>) -> Store {
    let backend = Hooked {
        inner: MemoryBackend::new(),
        hooks: probe.clone(),
    };
    Store::with_backend(Box::new(backend), StoreOptions::default()).unwrap()
}

fn put(s: &Store, k: &str, v: &str) -> i64 {
    s.put(PutRequest::new(k.to_string(), v.to_string()))
        .unwrap()
        .header_revision
}

/// (revision, key) of every event received until `upto`, after the created reply.
fn events_until(rx: &Responses, upto: i64, within: Duration) -> Vec<(i64, String)> {
    let deadline = Instant::now() + within;
    let mut seen = Vec::new();
    while seen.last().is_none_or(|(rev, _)| *rev < upto) {
        let left = deadline.saturating_duration_since(Instant::now());
        let Some(r) = rx.recv_timeout(left) else {
            panic!("only {seen:?} arrived within {within:?}, expected up to revision {upto}");
        };
        match &r.kind {
            ResponseKind::Created => {}
            ResponseKind::Events { .. } => seen.extend(r.events().iter().map(|e| {
                assert_eq!(e.kind, EventKind::Put);
                (e.revision(), String::from_utf8(e.kv.key.to_vec()).unwrap())
            })),
            other => panic!("unexpected {other:?}"),
        }
    }
    seen
}

#[test]
fn failed_history_reads_hold_up_only_the_watchers_that_need_history() {
    let backend = Arc::new(ProbedReads::default());
    let store = probed_store(&backend);
    let config = WatchConfig {
        window_revisions: 10,
        // Long enough that an engine that sleeps on a failed read is seen stalling.
        tick: Duration::from_secs(5),
        ..WatchConfig::default()
    };
    let hub = WatchHub::new(store.clone(), config);
    let mut keys = Vec::new();
    for i in 0..30 {
        let key = format!("k{i:02}");
        keys.push((put(&store, &key, "v"), key));
    }
    let current = store.current_revision();
    backend.failing.store(true, Ordering::SeqCst);

    // Need history (older than the window): a range, and a single key.
    let (range_ws, range_rx) = hub.new_stream();
    range_ws
        .watch(WatchRequest::range("k", "l").from_revision(2))
        .unwrap();
    let (key_ws, key_rx) = hub.new_stream();
    key_ws
        .watch(WatchRequest::key("k03").from_revision(2))
        .unwrap();
    // Needs only the window.
    let (recent_ws, recent_rx) = hub.new_stream();
    recent_ws
        .watch(WatchRequest::range("k", "l").from_revision(current - 3))
        .unwrap();
    let recent = events_until(&recent_rx, current, Duration::from_secs(2));
    assert_eq!(recent, keys[keys.len() - 4..].to_vec());

    // Live events keep flowing to synced watchers.
    let (live_ws, live_rx) = hub.new_stream();
    live_ws.watch(WatchRequest::key("live")).unwrap();
    for _ in 0..3 {
        let rev = put(&store, "live", "x");
        let got = events_until(&live_rx, rev, Duration::from_secs(2));
        assert_eq!(got.last(), Some(&(rev, "live".to_string())));
    }

    // The history watchers were told nothing but "created" meanwhile.
    let quiet = |rx: &Responses| {
        let r = rx
            .recv_timeout(Duration::from_millis(200))
            .expect("created");
        assert!(matches!(r.kind, ResponseKind::Created), "{r:?}");
        assert!(rx.recv_timeout(Duration::from_millis(200)).is_none());
    };
    quiet(&range_rx);
    quiet(&key_rx);

    // Reads work again: each gets everything it missed, once, in order.
    backend.failing.store(false, Ordering::SeqCst);
    let wanted: Vec<_> = keys.iter().filter(|(rev, _)| *rev >= 2).cloned().collect();
    assert_eq!(
        events_until(&range_rx, current, Duration::from_secs(10)),
        wanted
    );
    assert_eq!(
        events_until(&key_rx, keys[3].0, Duration::from_secs(10)),
        vec![keys[3].clone()]
    );
    let rev = put(&store, "k99", "after");
    assert_eq!(
        events_until(&range_rx, rev, Duration::from_secs(2)),
        vec![(rev, "k99".to_string())]
    );
    assert!(key_rx.recv_timeout(Duration::from_millis(200)).is_none());
}

#[test]
fn prev_kv_watchers_get_previous_values_without_a_store_read_per_event() {
    let backend = Arc::new(ProbedReads::default());
    let store = probed_store(&backend);
    let hub = WatchHub::new(store.clone(), WatchConfig::default());
    for i in 0..10 {
        put(&store, &format!("p{i}"), "0");
    }
    let (ws, rx) = hub.new_stream();
    ws.watch(WatchRequest::range("p", "q").with_prev_kv())
        .unwrap();
    let r = rx.recv_timeout(Duration::from_secs(5)).expect("created");
    assert!(matches!(r.kind, ResponseKind::Created));
    let before = backend.engine_reads.load(Ordering::SeqCst);

    const ROUNDS: usize = 100;
    for round in 1..=ROUNDS {
        for i in 0..10 {
            put(&store, &format!("p{i}"), &round.to_string());
        }
    }
    hark_mvcc::Store::delete_range(&store, hark_mvcc::DeleteRangeRequest::new("p", "q")).unwrap();
    let mut seen = Vec::new();
    while seen.len() < ROUNDS * 10 + 10 {
        let r = rx
            .recv_timeout(Duration::from_secs(10))
            .expect("every event arrives");
        for e in r.events() {
            let prev = e
                .prev_kv()
                .map(|p| String::from_utf8(p.value.to_vec()).unwrap());
            seen.push((e.kind, e.kv.key.clone(), prev));
        }
    }
    for (n, (kind, key, prev)) in seen.iter().enumerate() {
        let (round, i) = (n / 10, n % 10);
        assert_eq!(key.as_ref(), format!("p{i}").as_bytes());
        // Round r's put replaces round r - 1's value; the delete, the last.
        let expected_kind = if round == ROUNDS {
            EventKind::Delete
        } else {
            EventKind::Put
        };
        assert_eq!(*kind, expected_kind);
        assert_eq!(
            prev.as_deref(),
            Some(round.to_string().as_str()),
            "event {n}"
        );
    }
    assert_eq!(
        backend.engine_reads.load(Ordering::SeqCst) - before,
        0,
        "the engine read the store for previous values"
    );
}

/// CPU ticks (1/100 s) the watch engine thread has used, from `/proc`.
fn engine_cpu_ticks() -> u64 {
    for task in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if comm.trim() == "hark-watch-engi" {
            let stat = std::fs::read_to_string(task.path().join("stat")).unwrap();
            let fields: Vec<&str> = stat
                .rsplit_once(')')
                .unwrap()
                .1
                .split_whitespace()
                .collect();
            return fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
        }
    }
    panic!("no watch engine thread");
}

#[test]
fn a_history_retry_nobody_waits_for_leaves_the_engine_idle() {
    let backend = Arc::new(ProbedReads::default());
    let store = probed_store(&backend);
    let hub = WatchHub::new(
        store.clone(),
        WatchConfig {
            window_revisions: 2,
            ..WatchConfig::default()
        },
    );
    for i in 0..10 {
        put(&store, &format!("k{i}"), "v");
    }
    backend.failing.store(true, Ordering::SeqCst);
    let (ws, rx) = hub.new_stream();
    let id = ws
        .watch(WatchRequest::range("k", "l").from_revision(2))
        .unwrap();
    let r = rx.recv_timeout(Duration::from_secs(5)).expect("created");
    assert!(matches!(r.kind, ResponseKind::Created));
    std::thread::sleep(Duration::from_millis(100)); // a read failed: a retry is set
    ws.cancel(id);
    let r = rx.recv_timeout(Duration::from_secs(5)).expect("canceled");
    assert!(matches!(r.kind, ResponseKind::Canceled), "{r:?}");
    std::thread::sleep(Duration::from_secs(3)); // past the longest backoff
    let before = engine_cpu_ticks();
    std::thread::sleep(Duration::from_secs(1));
    let used = engine_cpu_ticks() - before;
    assert!(
        used < 20,
        "the idle engine used {used} of 100 CPU ticks in a second"
    );
}
