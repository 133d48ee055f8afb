//! `hark-mvcc` benchmarks: put throughput (1 and 16 writers, with and without
//! fsync), range reads, and the key-index rebuild on open for 1M keys, each
//! on both on-disk backends (`rocksdb/...`, `fjall/...`).
//!
//! Run: `cargo bench -p hark-benches --bench mvcc` (results in docs/benchmarks.md).

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use hark_benches::{backends, options};
use hark_mvcc::{PutRequest, RangeRequest, RequestOp, Store, TxnRequest};

/// Runs `total` puts split over `writers` threads; returns the wall time.
fn timed_puts(store: &Store, writers: u64, total: u64, round: u64) -> Duration {
    let per_writer = total.div_ceil(writers);
    let start = Instant::now();
    std::thread::scope(|s| {
        for w in 0..writers {
            s.spawn(move || {
                for i in 0..per_writer {
                    let key = format!("bench/{round}/{w}/{i}");
                    black_box(store.put(PutRequest::new(key, vec![b'v'; 128])).unwrap());
                }
            });
        }
    });
    start.elapsed()
}

fn put_throughput(c: &mut Criterion) {
    let mut group = c.benchmark_group("put");
    group.throughput(Throughput::Elements(1));
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(5));
    for backend in backends() {
        for sync in [true, false] {
            for writers in [1u64, 16] {
                let dir = tempfile::tempdir().unwrap();
                let store = Store::open(dir.path(), options(backend, sync)).unwrap();
                let mut round = 0;
                let id = BenchmarkId::new(
                    format!("{backend}/{}", if sync { "fsync" } else { "no-fsync" }),
                    format!("{writers}-writers"),
                );
                group.bench_function(id, |b| {
                    b.iter_custom(|iters| {
                        round += 1;
                        timed_puts(&store, writers, iters, round)
                    })
                });
            }
        }
    }
    group.finish();
}

fn populate(store: &Store, keys: u64, prefix: &str) {
    for chunk in (0..keys).collect::<Vec<_>>().chunks(100) {
        let success = chunk
            .iter()
            .map(|i| RequestOp::Put(PutRequest::new(format!("{prefix}{i:08}"), vec![b'v'; 128])))
            .collect();
        store
            .txn(TxnRequest {
                compare: vec![],
                success,
                failure: vec![],
            })
            .unwrap();
    }
}

fn range(c: &mut Criterion) {
    let mut group = c.benchmark_group("range");
    group.throughput(Throughput::Elements(1));
    for backend in backends() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), options(backend, false)).unwrap();
        populate(&store, 10_000, "key/");
        group.bench_function(format!("{backend}/one-key"), |b| {
            let mut i = 0u64;
            b.iter(|| {
                i = (i + 7919) % 10_000;
                black_box(
                    store
                        .range(&RangeRequest::key(format!("key/{i:08}")))
                        .unwrap(),
                )
            })
        });
        let mut hundred = RangeRequest::range("key/00001000", "key/00001100");
        group.bench_function(format!("{backend}/100-keys"), |b| {
            b.iter(|| black_box(store.range(&hundred).unwrap()))
        });
        hundred.revision = store.current_revision() - 50;
        group.bench_function(format!("{backend}/100-keys-at-old-revision"), |b| {
            b.iter(|| black_box(store.range(&hundred).unwrap()))
        });
        let mut count = RangeRequest::range("key/", "key0");
        count.count_only = true;
        group.bench_function(format!("{backend}/count-10k-keys"), |b| {
            b.iter(|| black_box(store.range(&count).unwrap()))
        });
    }
    group.finish();
}

fn index_rebuild(c: &mut Criterion) {
    const KEYS: u64 = 1_000_000;
    let mut group = c.benchmark_group("open");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));
    for backend in backends() {
        let dir = tempfile::tempdir().unwrap();
        {
            let store = Store::open(dir.path(), options(backend, false)).unwrap();
            populate(&store, KEYS, "k/");
            assert_eq!(store.key_count() as u64, KEYS);
        }
        group.bench_function(format!("{backend}/rebuild-index-1M-keys"), |b| {
            b.iter(|| {
                let store = Store::open(dir.path(), options(backend, false)).unwrap();
                assert_eq!(store.key_count() as u64, KEYS);
            })
        });
    }
    group.finish();
}

criterion_group!(benches, put_throughput, range, index_rebuild);
criterion_main!(benches);
