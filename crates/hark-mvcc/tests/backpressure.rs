//! The committer's queue is bounded: with the committer held up (its backend
//! write blocked), requests past `MAX_QUEUED_REQUESTS` are refused with
//! etcd's "too many requests" at once, and every request it took is applied.

use std::sync::Arc;
use std::time::Duration;

use hark_mvcc::backend::{BackendHooks, Hooked};
use hark_mvcc::{
    Error, MAX_QUEUED_REQUESTS, MemoryBackend, PutRequest, Result, Store, StoreOptions,
    WriteRequest,
};
use parking_lot::Mutex;

/// Writes wait while the test holds `gate`.
#[derive(Default)]
struct Gate {
    gate: Mutex<()>,
}

impl BackendHooks for Gate {
    fn before_write(&self, _sync: bool) -> Result<()> {
        drop(self.gate.lock());
        Ok(())
    }
}

#[test]
fn a_held_up_committer_refuses_requests_past_its_queue_and_loses_none() {
    let gate = Arc::new(Gate::default());
    let backend = Hooked {
        inner: MemoryBackend::new(),
        hooks: gate.clone(),
    };
    let store = Store::with_backend(Box::new(backend), StoreOptions::default()).unwrap();
    let start = store.current_revision();
    let (tx, rx) = crossbeam_channel::unbounded();
    let put = |i: usize| {
        let tx = tx.clone();
        store.apply(
            WriteRequest::Put(PutRequest::new(format!("k{i}"), "v")),
            Box::new(move |r| {
                let _ = tx.send(r.map(drop));
            }),
        );
    };
    let held = gate.gate.lock();
    put(0); // taken by the committer, which then waits in its write
    std::thread::sleep(Duration::from_millis(200));
    for i in 1..=MAX_QUEUED_REQUESTS {
        put(i);
    }
    put(MAX_QUEUED_REQUESTS + 1);
    assert_eq!(
        rx.recv_timeout(Duration::from_secs(5)).unwrap(),
        Err(Error::TooManyRequests),
        "the request past the bound is refused at once"
    );
    drop(held);
    for _ in 0..=MAX_QUEUED_REQUESTS {
        rx.recv_timeout(Duration::from_secs(30))
            .expect("every queued request is answered")
            .expect("and applied");
    }
    assert_eq!(
        store.current_revision(),
        start + 1 + MAX_QUEUED_REQUESTS as i64
    );
}
