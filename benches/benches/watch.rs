//! `hark-watch` benchmarks, in process:
//! * fan-out: one writer, 1k / 10k / 100k watchers on one prefix;
//! * catch-up: 100 watchers over 100k revisions of history (RocksDB and fjall,
//!   fsync on)
//!   while writes go on; prints put latency percentiles measured meanwhile;
//! * put latency with one stalled watcher versus none.
//!
//! Run: `cargo bench -p hark-benches --bench watch` (results in docs/benchmarks.md).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use criterion::{
    BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main,
};
use hark_benches::{backends, options};
use hark_mvcc::{PutRequest, Store, StoreOptions};
use hark_watch::{Responses, WatchConfig, WatchHub, WatchRequest, WatchStream};

/// Streams whose consumer threads count every event received.
struct Consumers {
    received: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
    streams: Vec<WatchStream>,
}

impl Consumers {
    fn start(
        hub: &WatchHub,
        streams: usize,
        watchers: usize,
        req: impl Fn(usize) -> WatchRequest,
    ) -> Self {
        let received = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let mut handles = Vec::new();
        let mut receivers: Vec<Vec<Responses>> = (0..2).map(|_| Vec::new()).collect();
        for s in 0..streams {
            let (ws, rx) = hub.new_stream();
            for w in 0..watchers / streams {
                ws.watch(req(s * (watchers / streams) + w)).unwrap();
            }
            handles.push(ws);
            receivers[s % 2].push(rx);
        }
        // Two reader threads (the machine has two cores), each polling its streams.
        let threads = receivers
            .into_iter()
            .map(|rxs| {
                let (received, stop) = (received.clone(), stop.clone());
                std::thread::spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        let mut any = false;
                        for rx in &rxs {
                            while let Some(r) = rx.try_recv() {
                                received.fetch_add(r.events().len(), Ordering::Relaxed);
                                any = true;
                            }
                        }
                        if !any {
                            std::thread::sleep(Duration::from_micros(50));
                        }
                    }
                })
            })
            .collect();
        Consumers {
            received,
            stop,
            threads,
            streams: handles,
        }
    }

    fn wait_for(&self, total: usize, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        while self.received.load(Ordering::Relaxed) < total {
            assert!(
                Instant::now() < deadline,
                "only {} of {total} events arrived",
                self.received.load(Ordering::Relaxed)
            );
            std::hint::spin_loop();
        }
    }
}

impl Drop for Consumers {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
        self.streams.clear();
    }
}

fn big_streams() -> WatchConfig {
    WatchConfig {
        stream_capacity: 1 << 20,
        ..WatchConfig::default()
    }
}

fn fan_out(c: &mut Criterion) {
    let mut group = c.benchmark_group("fan-out");
    group.sample_size(10);
    group.sampling_mode(SamplingMode::Flat);
    for watchers in [1_000usize, 10_000, 100_000] {
        let store = Store::in_memory();
        let hub = WatchHub::new(store.clone(), big_streams());
        let consumers =
            Consumers::start(&hub, 10, watchers, |_| WatchRequest::range("fan/", "fan0"));
        // Make sure every create was processed before timing.
        store.put(PutRequest::new("fan/warm", "x")).unwrap();
        consumers.wait_for(watchers, Duration::from_secs(60));
        group.throughput(Throughput::Elements(watchers as u64));
        group.bench_function(BenchmarkId::new("one-put-to-all", watchers), |b| {
            b.iter_custom(|iters| {
                let start = Instant::now();
                for i in 0..iters {
                    let before = consumers.received.load(Ordering::Relaxed);
                    store.put(PutRequest::new(format!("fan/{i}"), "v")).unwrap();
                    consumers.wait_for(before + watchers, Duration::from_secs(60));
                }
                start.elapsed()
            })
        });
    }
    group.finish();
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p) as usize]
}

fn catch_up(c: &mut Criterion) {
    const HISTORY: usize = 100_000;
    const WATCHERS: usize = 100;
    let mut group = c.benchmark_group("catch-up");
    group.sample_size(10);
    group.sampling_mode(SamplingMode::Flat);
    group.throughput(Throughput::Elements((HISTORY * WATCHERS) as u64));
    for backend in backends() {
        // On disk with fsync, like etcd: the put latency measured meanwhile is real.
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), options(backend, true)).unwrap();
        let hub = WatchHub::new(store.clone(), WatchConfig::default());
        let first = store.current_revision() + 1;
        // One revision per put (catch-up is about revisions); 16 writers share syncs.
        std::thread::scope(|s| {
            for w in 0..16 {
                let store = &store;
                s.spawn(move || {
                    for i in (w..HISTORY).step_by(16) {
                        store
                            .put(PutRequest::new(
                                format!("hist/{}", i % 1000),
                                vec![b'v'; 64],
                            ))
                            .unwrap();
                    }
                });
            }
        });
        let mut latencies = Vec::new();
        group.bench_function(format!("{backend}/100-watchers-100k-revisions"), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let writing = Arc::new(AtomicBool::new(true));
                    let writer = {
                        let (store, writing) = (store.clone(), writing.clone());
                        std::thread::spawn(move || {
                            let mut lat = Vec::new();
                            let mut i = 0u64;
                            while writing.load(Ordering::Relaxed) {
                                let t = Instant::now();
                                store
                                    .put(PutRequest::new(format!("live/{}", i % 100), "x"))
                                    .unwrap();
                                lat.push(t.elapsed());
                                i += 1;
                                std::thread::sleep(Duration::from_millis(1));
                            }
                            lat
                        })
                    };
                    let start = Instant::now();
                    // Watchers on the history's prefix: each must receive all 100k events.
                    let consumers = Consumers::start(&hub, 10, WATCHERS, |_| {
                        WatchRequest::range("hist/", "hist0").from_revision(first)
                    });
                    consumers.wait_for(HISTORY * WATCHERS, Duration::from_secs(300));
                    total += start.elapsed();
                    writing.store(false, Ordering::Relaxed);
                    latencies.extend(writer.join().unwrap());
                }
                total
            })
        });
        latencies.sort();
        if !latencies.is_empty() {
            eprintln!(
                "catch-up on {backend}: put latency during catch-up over {} puts: p50 {:?}, p99 {:?}, max {:?}",
                latencies.len(),
                percentile(&latencies, 0.5),
                percentile(&latencies, 0.99),
                latencies.last().unwrap()
            );
        }
    }
    group.finish();
}

fn put_latency_stalled_watcher(c: &mut Criterion) {
    let mut group = c.benchmark_group("put-latency");
    for stalled in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(
            dir.path(),
            StoreOptions {
                sync: false,
                ..StoreOptions::default()
            },
        )
        .unwrap();
        let hub = WatchHub::new(store.clone(), WatchConfig::default());
        // A watcher whose consumer never reads: it fills its stream and becomes a victim.
        let (ws, rx) = hub.new_stream();
        if stalled {
            ws.watch(WatchRequest::range("lat/", "lat0")).unwrap();
        }
        let name = if stalled {
            "one-stalled-watcher"
        } else {
            "no-watchers"
        };
        let mut i = 0u64;
        group.bench_function(name, |b| {
            b.iter(|| {
                i += 1;
                store
                    .put(PutRequest::new(
                        format!("lat/{}", i % 1000),
                        vec![b'v'; 128],
                    ))
                    .unwrap()
            })
        });
        drop((ws, rx));
    }
    group.finish();
}

criterion_group!(benches, fan_out, catch_up, put_latency_stalled_watcher);
criterion_main!(benches);
