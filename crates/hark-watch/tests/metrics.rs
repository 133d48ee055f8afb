//! The engine's gauges and counters under etcd's names, and gauges back at 0
//! once every stream has closed. Its own test binary: the recorder is global.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hark_mvcc::{PutRequest, Store};
use hark_watch::*;
use metrics::{Counter, Gauge, Histogram, Key, KeyName, Metadata, Recorder, SharedString, Unit};

/// Keeps the latest value of every gauge and the total of every counter.
#[derive(Default)]
struct Values(Mutex<HashMap<String, Arc<Cell>>>);

#[derive(Default)]
struct Cell(AtomicU64);

impl metrics::GaugeFn for Cell {
    fn increment(&self, v: f64) {
        self.set(f64::from_bits(self.0.load(Ordering::Relaxed)) + v)
    }
    fn decrement(&self, v: f64) {
        self.increment(-v)
    }
    fn set(&self, v: f64) {
        self.0.store(v.to_bits(), Ordering::Relaxed)
    }
}

impl metrics::CounterFn for Cell {
    fn increment(&self, v: u64) {
        self.0.fetch_add(v, Ordering::Relaxed);
    }
    fn absolute(&self, v: u64) {
        self.0.store(v, Ordering::Relaxed);
    }
}

impl Values {
    fn cell(&self, key: &Key) -> Arc<Cell> {
        self.0
            .lock()
            .unwrap()
            .entry(key.name().to_string())
            .or_default()
            .clone()
    }
    fn gauge(&self, name: &str) -> f64 {
        self.0
            .lock()
            .unwrap()
            .get(name)
            .map_or(f64::NAN, |c| f64::from_bits(c.0.load(Ordering::Relaxed)))
    }
    fn counter(&self, name: &str) -> u64 {
        self.0
            .lock()
            .unwrap()
            .get(name)
            .map_or(0, |c| c.0.load(Ordering::Relaxed))
    }
}

struct TestRecorder(Arc<Values>);

impl Recorder for TestRecorder {
    fn describe_counter(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_gauge(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_histogram(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn register_counter(&self, key: &Key, _: &Metadata<'_>) -> Counter {
        Counter::from_arc(self.0.cell(key))
    }
    fn register_gauge(&self, key: &Key, _: &Metadata<'_>) -> Gauge {
        Gauge::from_arc(self.0.cell(key))
    }
    fn register_histogram(&self, _: &Key, _: &Metadata<'_>) -> Histogram {
        Histogram::noop()
    }
}

fn wait_until(what: &str, mut ok: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !ok() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn gauges_follow_streams_and_return_to_zero() {
    let values = Arc::new(Values::default());
    metrics::set_global_recorder(TestRecorder(values.clone())).unwrap();
    let store = Store::in_memory();
    let hub = WatchHub::new(
        store.clone(),
        WatchConfig {
            stream_capacity: 1,
            tick: Duration::from_millis(5),
            ..WatchConfig::default()
        },
    );
    let (reader, reader_rx) = hub.new_stream();
    let (stalled, _stalled_rx) = hub.new_stream();
    for i in 0..3 {
        reader.watch(WatchRequest::key(format!("k{i}"))).unwrap();
    }
    stalled.watch(WatchRequest::range("k", "l")).unwrap();
    // Every watcher synced before the writes: one created after them would
    // catch up with all ten events in one response, fit the stalled
    // stream's one slot and never count as slow (seen on a loaded machine).
    wait_until("4 watchers on 2 streams", || {
        values.gauge("etcd_debugging_mvcc_watcher_total") == 4.0
            && values.gauge("etcd_debugging_mvcc_watch_stream_total") == 2.0
    });
    for i in 0..10 {
        store
            .put(PutRequest::new(format!("k{}", i % 3), "v"))
            .unwrap();
    }
    let mut received = 0;
    while received < 10 {
        let r = reader_rx
            .recv_timeout(Duration::from_secs(10))
            .expect("the reader's events");
        received += r.events().len();
    }
    wait_until("the stalled watcher to count as slow", || {
        values.gauge("etcd_debugging_mvcc_slow_watcher_total") == 1.0
    });
    assert!(
        values.gauge("etcd_debugging_mvcc_pending_events_total") >= 1.0,
        "the stalled stream holds a batch"
    );
    // The engine publishes the count of events handed out on its next round.
    wait_until("the events handed to the reader to be counted", || {
        values.counter("etcd_debugging_mvcc_events_total") >= 10
    });
    assert!(values.counter("etcd_mvcc_put_total") >= 10);
    drop((reader, reader_rx, stalled, _stalled_rx));
    for gauge in [
        "etcd_debugging_mvcc_watch_stream_total",
        "etcd_debugging_mvcc_watcher_total",
        "etcd_debugging_mvcc_slow_watcher_total",
        "etcd_debugging_mvcc_pending_events_total",
    ] {
        wait_until(gauge, || values.gauge(gauge) == 0.0);
    }
}
