//! `StoreOptions::commit_on_caller`: a submission applied on the submitting
//! thread, in order with what the committer thread still holds.

#![cfg(any(feature = "rocksdb", feature = "fjall"))]

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use hark_mvcc::*;

fn on_caller() -> StoreOptions {
    StoreOptions {
        sync: false,
        commit_on_caller: true,
        ..StoreOptions::default()
    }
}

fn put(key: &str) -> WriteRequest {
    WriteRequest::Put(PutRequest::new(key.to_string(), "v".to_string()))
}

#[test]
fn an_uncontended_submission_is_applied_before_apply_returns() {
    let store = Store::with_backend(Box::new(MemoryBackend::new()), on_caller()).unwrap();
    let answered = Arc::new(AtomicI64::new(0));
    let seen = answered.clone();
    store.apply(
        put("a"),
        Box::new(move |r| {
            let Ok(WriteResponse::Put(p)) = r else {
                panic!("a put answers with a put response: {r:?}")
            };
            seen.store(p.header_revision, Ordering::SeqCst);
        }),
    );
    assert_eq!(
        answered.load(Ordering::SeqCst),
        2,
        "answered on this thread"
    );
    assert_eq!(store.current_revision(), 2, "and visible to readers");
    let (tx, rx) = std::sync::mpsc::channel();
    store.barrier(move || tx.send(()).unwrap());
    rx.try_recv()
        .expect("a barrier with nothing queued passes at once");
}

#[test]
fn each_submitters_writes_keep_their_order_among_concurrent_submitters() {
    const THREADS: usize = 4;
    const WRITES: usize = 500;
    let store = Store::with_backend(Box::new(MemoryBackend::new()), on_caller()).unwrap();
    let revisions: Vec<Vec<i64>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let store = store.clone();
                scope.spawn(move || {
                    let (tx, rx) = std::sync::mpsc::channel();
                    for i in 0..WRITES {
                        let tx = tx.clone();
                        store.apply(
                            put(&format!("{t}/{i}")),
                            Box::new(move |r| {
                                let Ok(WriteResponse::Put(p)) = r else {
                                    panic!("a put answers with a put response: {r:?}")
                                };
                                tx.send((i, p.header_revision)).unwrap();
                            }),
                        );
                    }
                    drop(tx);
                    let mut got: Vec<(usize, i64)> = rx.iter().collect();
                    got.sort();
                    assert_eq!(got.len(), WRITES, "every write answered once");
                    got.into_iter().map(|(_, rev)| rev).collect::<Vec<i64>>()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for revs in &revisions {
        assert!(
            revs.windows(2).all(|w| w[0] < w[1]),
            "a submitter's writes apply in its order"
        );
    }
    let mut all: Vec<i64> = revisions.concat();
    all.sort();
    let want: Vec<i64> = (2..2 + (THREADS * WRITES) as i64).collect();
    assert_eq!(all, want, "one revision per write, none skipped");
    assert_eq!(store.current_revision(), 1 + (THREADS * WRITES) as i64);
}

#[test]
fn a_store_committing_on_callers_closes_and_reopens() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), on_caller()).unwrap();
    for i in 0..10 {
        store.apply_blocking(put(&format!("k{i}"))).unwrap();
    }
    store.compact(5, true).unwrap();
    let closed = store.backend_closed();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        drop(store);
        tx.send(()).unwrap();
    });
    rx.recv_timeout(Duration::from_secs(10))
        .expect("the store closes (its committer and compactor stop)");
    assert!(closed.is_closed());
    let store = Store::open(dir.path(), on_caller()).unwrap();
    assert_eq!(store.current_revision(), 11);
}
