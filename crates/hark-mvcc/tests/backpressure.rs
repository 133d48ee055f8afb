//! The committer's queue is bounded: with the committer held up (its backend
//! write blocked), requests past `MAX_QUEUED_REQUESTS` are refused with
//! etcd's "too many requests" at once, and every request it took is applied.

use std::sync::Arc;
use std::time::Duration;

use hark_mvcc::backend::{Table, WriteBatch};
use hark_mvcc::{
    Backend, BackendView, Error, MAX_QUEUED_REQUESTS, MemoryBackend, PutRequest, Result, Store,
    StoreOptions, WriteRequest,
};
use parking_lot::Mutex;

/// A memory backend whose writes wait while the test holds `gate`.
#[derive(Default)]
struct GatedWrites {
    inner: MemoryBackend,
    gate: Mutex<()>,
}

impl Backend for GatedWrites {
    fn get(&self, table: Table, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.inner.get(table, key)
    }

    fn scan(
        &self,
        table: Table,
        from: &[u8],
        to: Option<&[u8]>,
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        self.inner.scan(table, from, to, visit)
    }

    fn write(&self, batch: WriteBatch, sync: bool) -> Result<()> {
        drop(self.gate.lock());
        self.inner.write(batch, sync)
    }

    fn sync(&self) -> Result<()> {
        self.inner.sync()
    }

    fn size_bytes(&self) -> u64 {
        self.inner.size_bytes()
    }

    fn size_in_use_bytes(&self) -> u64 {
        self.inner.size_in_use_bytes()
    }

    fn read_snapshot(&self, read: &mut dyn FnMut(&dyn BackendView) -> Result<()>) -> Result<()> {
        self.inner.read_snapshot(read)
    }

    fn reclaim_space(&self) -> Result<()> {
        self.inner.reclaim_space()
    }
}

#[test]
fn a_held_up_committer_refuses_requests_past_its_queue_and_loses_none() {
    let backend = Arc::new(GatedWrites::default());
    let store = Store::with_backend(Box::new(backend.clone()), StoreOptions::default()).unwrap();
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
    let held = backend.gate.lock();
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
