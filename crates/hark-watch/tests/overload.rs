//! The lag policy: an engine that cannot keep up (here: paused) under a
//! writer at full speed, with consumers that read nothing. The store's queue
//! for the engine stays within its budget, and once the engine and the
//! consumers resume, every watcher gets every event once, in order.

use std::time::Duration;

use hark_mvcc::{EventKind, PutRequest, Store};
use hark_watch::*;

const PUTS: usize = 20_000;
const VALUE: usize = 512;
const FEED_BYTES: usize = 1 << 20;

/// Reads until `count` events arrived (after the created reply); returns
/// (revision, key, value length) of each.
fn read_all(rx: &Responses, count: usize) -> Vec<(i64, Vec<u8>, usize)> {
    let mut seen = Vec::new();
    while seen.len() < count {
        let r = rx
            .recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|| panic!("stalled after {} of {count} events", seen.len()));
        match &r.kind {
            ResponseKind::Created => {}
            ResponseKind::Events { .. } => seen.extend(r.events().iter().map(|e| {
                assert_eq!(e.kind, EventKind::Put);
                (e.revision(), e.kv.key.to_vec(), e.kv.value.len())
            })),
            other => panic!("unexpected {other:?}"),
        }
    }
    assert!(rx.recv_timeout(Duration::from_millis(200)).is_none());
    seen
}

#[test]
fn a_starved_engine_keeps_its_queue_within_budget_and_loses_nothing() {
    let store = Store::in_memory();
    let hub = WatchHub::new(
        store.clone(),
        WatchConfig {
            feed_bytes: FEED_BYTES,
            stream_capacity: 16,
            stream_bytes: 256 << 10,
            ..WatchConfig::default()
        },
    );
    let (all_ws, all_rx) = hub.new_stream();
    all_ws.watch(WatchRequest::range("k", "l")).unwrap();
    let (one_ws, one_rx) = hub.new_stream();
    one_ws
        .watch(WatchRequest::key("k07").with_prev_kv())
        .unwrap();
    let first = store.current_revision() + 1;
    std::thread::sleep(Duration::from_millis(100)); // the creates are in

    let paused = hub.pause();
    let mut peak = 0;
    for i in 0..PUTS {
        let key = format!("k{:02}", i % 100);
        store.put(PutRequest::new(key, vec![b'v'; VALUE])).unwrap();
        peak = peak.max(store.feed_backlog_bytes());
    }
    let written = (PUTS * (VALUE + 3)) as f64 / (1 << 20) as f64;
    assert!(
        peak <= FEED_BYTES,
        "the engine's queue held {peak} bytes, over its budget of {FEED_BYTES} \
         ({written:.1} MiB written)"
    );
    drop(paused);

    let last = store.current_revision();
    let all = read_all(&all_rx, PUTS);
    let expected: Vec<_> = (0..PUTS)
        .map(|i| {
            (
                first + i as i64,
                format!("k{:02}", i % 100).into_bytes(),
                VALUE,
            )
        })
        .collect();
    assert_eq!(all.len(), expected.len());
    assert!(all == expected, "events missing, repeated or out of order");
    assert_eq!(all.last().unwrap().0, last);

    let one = read_all(&one_rx, PUTS / 100);
    let revs: Vec<i64> = one.iter().map(|e| e.0).collect();
    let expected: Vec<i64> = (0..PUTS / 100)
        .map(|i| first + 7 + 100 * i as i64)
        .collect();
    assert_eq!(revs, expected);
}

#[test]
fn a_stream_that_does_not_read_its_replies_is_held_to_a_bound() {
    let store = Store::in_memory();
    let hub = WatchHub::new(store.clone(), WatchConfig::default());
    let (ws, rx) = hub.new_stream();
    let id = ws.watch(WatchRequest::key("a")).unwrap();
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    // Each progress request is answered (the watcher is synced); nobody reads.
    let mut sent = 1;
    loop {
        if ws.poll_ready(&mut cx).is_pending() {
            // The engine queues a reply just before it counts the request
            // handled: let such a moment pass before calling it full.
            std::thread::sleep(Duration::from_millis(50));
            if ws.poll_ready(&mut cx).is_pending() {
                break;
            }
        }
        ws.request_progress(id);
        sent += 1;
        assert!(sent <= MAX_UNANSWERED, "no bound after {sent} requests");
    }
    assert_eq!(sent, MAX_UNANSWERED);
    // Taking replies makes room again.
    let r = rx.recv_timeout(Duration::from_secs(5)).unwrap();
    assert!(matches!(r.kind, ResponseKind::Created));
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while ws.poll_ready(&mut cx).is_pending() {
        assert!(
            std::time::Instant::now() < deadline,
            "no room after a reply was taken"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    let mut replies = 1;
    while let Some(r) = rx.recv_timeout(Duration::from_millis(200)) {
        assert!(matches!(r.kind, ResponseKind::Progress), "{r:?}");
        replies += 1;
    }
    assert_eq!(replies, sent);
}

#[test]
fn a_stream_whose_consumer_is_gone_is_ready_again() {
    let store = Store::in_memory();
    let hub = WatchHub::new(store.clone(), WatchConfig::default());
    let (ws, rx) = hub.new_stream();
    let id = ws.watch(WatchRequest::key("a")).unwrap();
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while ws.poll_ready(&mut cx).is_ready() || std::time::Instant::now() < deadline {
        if ws.poll_ready(&mut cx).is_ready() {
            ws.request_progress(id);
        } else {
            std::thread::sleep(Duration::from_millis(50));
            if ws.poll_ready(&mut cx).is_pending() {
                break;
            }
        }
    }
    assert!(ws.poll_ready(&mut cx).is_pending(), "the stream filled up");
    // The consumer goes (a client disconnected): the handle must not wait
    // for room forever, or its server never sees the disconnect.
    drop(rx);
    assert!(ws.poll_ready(&mut cx).is_ready());
}

/// The per-stream report behind the console's "deepest queues": a stream
/// whose consumer reads nothing shows its queued events and, once full, its
/// victim; a stream that reads shows none; deepest first.
#[test]
fn stream_loads_name_the_deepest_queues() {
    let store = Store::in_memory();
    let hub = WatchHub::new(
        store.clone(),
        WatchConfig {
            stream_capacity: 4,
            ..WatchConfig::default()
        },
    );
    let (idle_ws, idle_rx) = hub.new_stream_for("127.0.0.1:1111");
    idle_ws.watch(WatchRequest::range("a", "z")).unwrap();
    idle_ws.watch(WatchRequest::key("b")).unwrap();
    let (busy_ws, busy_rx) = hub.new_stream_for("127.0.0.1:2222");
    busy_ws.watch(WatchRequest::key("a")).unwrap();
    assert!(matches!(
        busy_rx.recv_timeout(Duration::from_secs(5)).unwrap().kind,
        ResponseKind::Created
    ));
    for i in 0..6 {
        store.put(PutRequest::new("a", format!("{i}"))).unwrap();
    }
    // The busy stream's consumer takes its six events.
    let mut taken = 0;
    while taken < 6 {
        taken += busy_rx
            .recv_timeout(Duration::from_secs(5))
            .expect("the busy stream's events")
            .events()
            .len();
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let loads = loop {
        let loads = hub.stream_loads(Duration::from_secs(5)).unwrap();
        assert!(
            std::time::Instant::now() < deadline,
            "the idle stream never filled: {loads:?}"
        );
        // Settled: every batch queued or held.
        if loads[0].queued_events + loads[0].victims >= 5 {
            break loads;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(loads.len(), 2);
    let (idle, busy) = (&loads[0], &loads[1]);
    assert_eq!(&*idle.label, "127.0.0.1:1111");
    assert_eq!(idle.watchers, 2);
    // Two created replies and four event batches fill its queue of four
    // batches; the other two batches wait with their victim.
    assert_eq!(idle.queued_responses, 2 + 4);
    assert_eq!(idle.queued_events, 4);
    assert_eq!(idle.victims, 1);
    assert!(idle.queued_bytes > 0);
    assert_eq!(
        (
            &*busy.label,
            busy.watchers,
            busy.queued_events,
            busy.victims
        ),
        ("127.0.0.1:2222", 1, 0, 0)
    );
    drop(idle_rx);
}
