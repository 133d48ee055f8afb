//! The store's publication of committed revisions, bounded per subscriber.
//!
//! The committer never waits for a subscriber, and never queues more than the
//! subscriber's byte budget: a revision that would exceed it is not queued,
//! and the subscriber is told it lagged ([`Feed::take_lag`]). It then reads
//! what it missed from the store's history, as a `tokio::sync::broadcast`
//! receiver that lagged does. Bytes count from publication until the
//! subscriber drops the [`Published`] revision, so a slow consumer's whole
//! backlog stays within the budget.

use std::ops::Deref;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crossbeam_channel::{Receiver, Sender};

use crate::kv::CommittedRevision;

/// The budget of [`crate::Store::subscribe`].
pub const DEFAULT_FEED_BYTES: usize = 64 << 20;

struct Budget {
    queued_bytes: AtomicUsize,
    limit: usize,
    lagged: AtomicBool,
    /// The subscriber dropped its [`Feed`].
    gone: AtomicBool,
}

/// A subscriber's end: every committed revision in order, except those the
/// budget refused (then [`Feed::take_lag`] says so). Dereferences to the
/// channel, for `recv`, `try_iter` and `select!`.
pub struct Feed {
    rx: Receiver<Published>,
    budget: Arc<Budget>,
}

/// A committed revision in a subscriber's queue; dropping it frees its share
/// of the budget.
pub struct Published {
    revision: Arc<CommittedRevision>,
    bytes: usize,
    budget: Arc<Budget>,
}

pub(crate) struct FeedSender {
    tx: Sender<Published>,
    budget: Arc<Budget>,
}

pub(crate) fn feed(limit: usize) -> (FeedSender, Feed) {
    let (tx, rx) = crossbeam_channel::unbounded();
    let budget = Arc::new(Budget {
        queued_bytes: AtomicUsize::new(0),
        limit,
        lagged: AtomicBool::new(false),
        gone: AtomicBool::new(false),
    });
    (
        FeedSender {
            tx,
            budget: budget.clone(),
        },
        Feed { rx, budget },
    )
}

impl FeedSender {
    /// Queues `revision` if the budget allows (one revision is always
    /// allowed into an empty queue, however large); otherwise marks the
    /// subscriber lagged. `false` once the subscriber is gone.
    pub(crate) fn offer(&self, revision: &Arc<CommittedRevision>) -> bool {
        let budget = &self.budget;
        let bytes = revision.approx_bytes();
        let queued = budget.queued_bytes.load(Ordering::Acquire);
        // Every revision is charged at least its allocation
        // (`CommittedRevision::approx_bytes`), so bytes also bound the count.
        if queued > 0 && queued + bytes > budget.limit {
            budget.lagged.store(true, Ordering::Release);
            metrics::counter!("hark_watch_feed_dropped_revisions_total").increment(1);
            return !budget.gone.load(Ordering::Acquire);
        }
        budget.queued_bytes.fetch_add(bytes, Ordering::AcqRel);
        self.tx
            .send(Published {
                revision: revision.clone(),
                bytes,
                budget: budget.clone(),
            })
            .is_ok()
    }

    pub(crate) fn queued_bytes(&self) -> usize {
        self.budget.queued_bytes.load(Ordering::Acquire)
    }
}

impl Feed {
    /// Whether revisions were left out since the last call (and clears it).
    /// Everything left out is committed: read it from the store's history.
    pub fn take_lag(&self) -> bool {
        self.budget.lagged.swap(false, Ordering::AcqRel)
    }

    /// Bytes of revisions queued and not yet dropped by the subscriber.
    pub fn queued_bytes(&self) -> usize {
        self.budget.queued_bytes.load(Ordering::Acquire)
    }
}

impl Drop for Feed {
    fn drop(&mut self) {
        self.budget.gone.store(true, Ordering::Release);
    }
}

impl Deref for Feed {
    type Target = Receiver<Published>;

    fn deref(&self) -> &Receiver<Published> {
        &self.rx
    }
}

impl Deref for Published {
    type Target = CommittedRevision;

    fn deref(&self) -> &CommittedRevision {
        &self.revision
    }
}

impl std::fmt::Debug for Published {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.revision.fmt(f)
    }
}

impl Drop for Published {
    fn drop(&mut self) {
        self.budget
            .queued_bytes
            .fetch_sub(self.bytes, Ordering::AcqRel);
    }
}
