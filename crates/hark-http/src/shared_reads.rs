//! One read for every blocking query that one change wakes.
//!
//! Queries parked on the same read (the same token, key or prefix and
//! answer shape) hold a [`Ticket`] to it. When a change wakes them, the
//! first to read issues the one Range, the others wait for it and take its
//! answer, whenever they get there: the latest answer is kept while any
//! ticket to it is held. A query takes an answer only at or above the
//! revision it needs (that of the change that woke it, and that of its own
//! first read), so sharing never hands it something older than what it has
//! seen or than the change it was woken for; an answer below that is read
//! again.
//!
//! Memory: one answer per distinct read that has a parked query, at most
//! one per parked query, kept until the last of them has answered.

use std::collections::HashMap;
use std::future::Future;
use std::hash::Hash;
use std::sync::Arc;

use parking_lot::Mutex;
use tokio::sync::OnceCell;

/// Counter: woken blocking queries, by whether they issued their read
/// (`own`) or took the one another query issued (`shared`).
const WOKEN_READS: &str = "hark_consul_woken_query_reads_total";

/// Reads that never reach the revision a query needs (they should not
/// exist: a read made after a change sees it) are tried this many times,
/// then the last is answered.
const MOST_READS: usize = 3;

/// A read's result and the store revision it was made at (`None`: it
/// failed, and the failure is the answer).
pub(crate) struct ReadAt<V> {
    pub(crate) revision: Option<i64>,
    pub(crate) value: V,
}

/// The reads queries share, by what they read (`K`).
pub(crate) struct SharedReads<K, V> {
    reads: Arc<Mutex<HashMap<K, Shared<V>>>>,
}

impl<K, V> Clone for SharedReads<K, V> {
    fn clone(&self) -> Self {
        SharedReads {
            reads: self.reads.clone(),
        }
    }
}

struct Shared<V> {
    /// Tickets held to this read.
    tickets: usize,
    /// The latest read: done, or in flight (whoever gets there first makes
    /// it; if that query goes away, the next one waiting does).
    latest: Arc<OnceCell<Arc<ReadAt<V>>>>,
}

/// A parked query's claim on a shared read; the read and its answer go
/// when the last ticket does.
pub(crate) struct Ticket<K: Eq + Hash, V> {
    reads: SharedReads<K, V>,
    key: K,
}

impl<K: Eq + Hash + Clone, V> SharedReads<K, V> {
    pub(crate) fn new() -> SharedReads<K, V> {
        metrics::describe_counter!(
            WOKEN_READS,
            "Woken Consul blocking queries, by whether they issued their read (own) or took the read another query woken by the same change issued (shared)."
        );
        for read in ["own", "shared"] {
            metrics::counter!(WOKEN_READS, "read" => read).increment(0);
        }
        SharedReads {
            reads: Arc::new(Mutex::new(HashMap::new())),
        }
    }

    /// A ticket to the read of `key`, taken when a query parks.
    pub(crate) fn ticket(&self, key: K) -> Ticket<K, V> {
        self.reads
            .lock()
            .entry(key.clone())
            .or_insert_with(|| Shared {
                tickets: 0,
                latest: Arc::new(OnceCell::new()),
            })
            .tickets += 1;
        Ticket {
            reads: self.clone(),
            key,
        }
    }

    /// The read to wait on for an answer at or above `needed`: the latest
    /// if it is in flight or answered that, else a new one.
    fn read_for(&self, key: &K, needed: i64) -> Arc<OnceCell<Arc<ReadAt<V>>>> {
        let mut reads = self.reads.lock();
        let shared = reads.get_mut(key).expect("a ticket keeps its read");
        let usable = shared
            .latest
            .get()
            .is_none_or(|done| done.revision.is_some_and(|at| at >= needed));
        if !usable {
            shared.latest = Arc::new(OnceCell::new());
        }
        shared.latest.clone()
    }
}

impl<K: Eq + Hash + Clone, V> Ticket<K, V> {
    /// An answer at or above revision `needed`: the shared read's, or one
    /// `read` makes when none will do.
    pub(crate) async fn answer<F, Fut>(&self, needed: i64, read: F) -> Arc<ReadAt<V>>
    where
        F: Fn() -> Fut,
        Fut: Future<Output = ReadAt<V>>,
    {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let latest = self.reads.read_for(&self.key, needed);
            let mut made_here = false;
            let answer = latest
                .get_or_init(|| {
                    made_here = true;
                    let reading = read();
                    async move { Arc::new(reading.await) }
                })
                .await
                .clone();
            let read_label = if made_here { "own" } else { "shared" };
            metrics::counter!(WOKEN_READS, "read" => read_label).increment(1);
            // A failure is answered as it is (a later ticket reads anew).
            if answer.revision.is_none_or(|at| at >= needed) || attempt == MOST_READS {
                return answer;
            }
        }
    }
}

impl<K: Eq + Hash, V> Drop for Ticket<K, V> {
    fn drop(&mut self) {
        let mut reads = self.reads.reads.lock();
        if let Some(shared) = reads.get_mut(&self.key) {
            shared.tickets -= 1;
            if shared.tickets == 0 {
                reads.remove(&self.key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};

    use super::*;

    /// A store whose reads are counted and answer at its current revision.
    struct Store {
        revision: AtomicI64,
        reads: AtomicUsize,
    }

    impl Store {
        fn read(&self) -> impl Future<Output = ReadAt<i64>> + '_ {
            self.reads.fetch_add(1, Ordering::SeqCst);
            let at = self.revision.load(Ordering::SeqCst);
            async move {
                tokio::task::yield_now().await;
                ReadAt {
                    revision: Some(at),
                    value: at,
                }
            }
        }
    }

    #[tokio::test]
    async fn queries_woken_together_share_one_read_even_when_they_come_late() {
        let store = Store {
            revision: AtomicI64::new(7),
            reads: AtomicUsize::new(0),
        };
        let reads = SharedReads::<&str, i64>::new();
        let tickets: Vec<_> = (0..5).map(|_| reads.ticket("web/")).collect();
        let answers = futures_util::future::join_all(
            tickets[..3].iter().map(|t| t.answer(7, || store.read())),
        )
        .await;
        assert!(answers.iter().all(|a| a.value == 7));
        // Late, after the read is done: still the same answer.
        assert_eq!(tickets[3].answer(7, || store.read()).await.value, 7);
        assert_eq!(store.reads.load(Ordering::SeqCst), 1);
        // Woken by a later change: never the older answer.
        store.revision.store(9, Ordering::SeqCst);
        assert_eq!(tickets[4].answer(9, || store.read()).await.value, 9);
        assert_eq!(store.reads.load(Ordering::SeqCst), 2);
        // Another read, or the same read without tickets, shares nothing.
        assert_eq!(
            reads.ticket("db/").answer(9, || store.read()).await.value,
            9
        );
        drop(tickets);
        assert!(reads.reads.lock().is_empty());
        assert_eq!(
            reads.ticket("web/").answer(0, || store.read()).await.value,
            9
        );
        assert_eq!(store.reads.load(Ordering::SeqCst), 4);
    }

    #[tokio::test]
    async fn a_failed_read_is_not_handed_to_the_next_query() {
        let reads = SharedReads::<&str, &str>::new();
        let (first, second) = (reads.ticket("k"), reads.ticket("k"));
        let failed = first
            .answer(3, || async {
                ReadAt {
                    revision: None,
                    value: "unavailable",
                }
            })
            .await;
        assert_eq!(failed.value, "unavailable");
        let next = second
            .answer(3, || async {
                ReadAt {
                    revision: Some(3),
                    value: "fresh",
                }
            })
            .await;
        assert_eq!(next.value, "fresh");
    }
}
