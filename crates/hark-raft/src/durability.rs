//! When a log entry is durable on this member, and who waits for it.
//!
//! A leader appends its own proposals to its log without syncing, tells
//! openraft they are flushed at once, and a sync thread makes them durable
//! while openraft already sends them to the followers: the leader's fsync
//! overlaps the followers' (Raft thesis §10.2.1; etcd's leader does the
//! same). Every other append (a follower's, a member alone, a vote, a
//! truncation) is synced before it is acknowledged.
//!
//! openraft 0.9 then counts the leader in the quorum before its own entry is
//! on disk, so two rules keep a commit what Raft means by one — on disk on a
//! majority — before anyone acts on it:
//!
//! 1. the leader applies an entry (and so answers its client) only once the
//!    entry is durable here ([`LogDurability::wait`], in the state machine);
//! 2. the commit index the leader sends to followers is held back to what is
//!    durable here ([`LogDurability::clamp_commit`], in the peer transport), so
//!    a follower never applies what the leader could still lose.
//!
//! A commit counted by openraft is on disk on the followers that acknowledged
//! it (they sync before answering); with the leader's own copy durable too,
//! it is on a majority. When a held-back commit becomes durable, a heartbeat
//! carries it to the followers at once ([`LogDurability::held_back_then_durable`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::{Condvar, Mutex};
use tokio::sync::watch;

use crate::types::LogId;

/// Shared by the log store (which writes and syncs), the state machine (which
/// waits before applying) and the peer transport (which holds commits back).
#[derive(Clone)]
pub struct LogDurability {
    shared: Arc<Shared>,
}

struct Shared {
    /// The last log entry known to be on disk here, or why syncing failed.
    durable: watch::Sender<Durable>,
    sync: Mutex<SyncState>,
    wake: Condvar,
    /// The highest commit index held back from a follower (0: none since the
    /// last nudge).
    held_back: AtomicU64,
}

#[derive(Clone, Default, Debug)]
struct Durable {
    last: Option<LogId>,
    failed: Option<Arc<str>>,
    /// The log store closed: nothing more becomes durable.
    closed: bool,
}

impl Durable {
    fn index(&self) -> u64 {
        self.last.map_or(0, |l| l.index)
    }
}

#[derive(Default)]
struct SyncState {
    /// The last entry written without sync and not yet handed to a sync.
    pending: Option<LogId>,
    /// Raised by each truncation: a sync that started before one must not
    /// vouch for entries at the indexes it replaced.
    generation: u64,
    stopped: bool,
}

/// What the sync thread is given to do: the last entry written before it
/// started, and the generation then.
pub(crate) struct SyncJob {
    target: LogId,
    generation: u64,
}

impl Default for LogDurability {
    fn default() -> Self {
        LogDurability {
            shared: Arc::new(Shared {
                durable: watch::Sender::new(Durable::default()),
                sync: Mutex::new(SyncState::default()),
                wake: Condvar::new(),
                held_back: AtomicU64::new(0),
            }),
        }
    }
}

impl LogDurability {
    /// The log ends at `last` and all of it is on disk: a synced write
    /// ended there (it syncs every earlier write too), or the log as found
    /// at open, after a sync.
    pub(crate) fn synced_through(&self, last: Option<LogId>) {
        let _sync = self.shared.sync.lock();
        self.shared.durable.send_if_modified(|d| {
            let changed = d.last != last;
            d.last = last;
            changed
        });
    }

    /// The log was cut, by a synced write, and now ends at `last`: what was
    /// durable beyond it is gone, and a sync already under way does not
    /// count for the entries that will replace it.
    pub(crate) fn truncated(&self, last: Option<LogId>) {
        let mut sync = self.shared.sync.lock();
        sync.generation += 1;
        sync.pending = None;
        self.shared.durable.send_modify(|d| d.last = last);
    }

    /// Entries up to `last` were written without sync: the sync thread
    /// takes them.
    pub(crate) fn written_unsynced(&self, last: LogId) {
        let mut sync = self.shared.sync.lock();
        sync.pending = Some(last);
        self.shared.wake.notify_one();
    }

    /// Blocks the sync thread until there is something to sync (`None`: stop).
    pub(crate) fn next_job(&self) -> Option<SyncJob> {
        let mut sync = self.shared.sync.lock();
        loop {
            if sync.stopped {
                return None;
            }
            if let Some(target) = sync.pending.take() {
                return Some(SyncJob {
                    target,
                    generation: sync.generation,
                });
            }
            self.shared.wake.wait(&mut sync);
        }
    }

    /// The sync for `job` finished (`Err`: the disk failed; every wait fails).
    pub(crate) fn job_done(&self, job: SyncJob, result: Result<(), String>) {
        let sync = self.shared.sync.lock();
        match result {
            Ok(()) if sync.generation == job.generation => {
                self.shared.durable.send_if_modified(|d| {
                    if d.index() < job.target.index {
                        d.last = Some(job.target);
                        true
                    } else {
                        false
                    }
                });
            }
            Ok(()) => {}
            Err(e) => {
                self.shared
                    .durable
                    .send_modify(|d| d.failed = Some(Arc::from(e)));
            }
        }
    }

    /// Ends the sync thread and every wait (the log store is closing).
    pub(crate) fn stop(&self) {
        self.shared.sync.lock().stopped = true;
        self.shared.wake.notify_all();
        self.shared.durable.send_modify(|d| d.closed = true);
    }

    /// Waits until the entry at `index` is on disk here.
    pub(crate) async fn wait(&self, index: u64) -> Result<(), String> {
        let mut durable = self.shared.durable.subscribe();
        let seen = durable
            .wait_for(|d| d.failed.is_some() || d.closed || d.index() >= index)
            .await
            .map_err(|_| "the raft log closed".to_string())?;
        match &seen.failed {
            Some(e) => Err(format!("syncing the raft log failed: {e}")),
            None if seen.index() >= index => Ok(()),
            None => Err("the raft log closed".to_string()),
        }
    }

    /// The commit index to send a follower: `committed`, or the last entry
    /// durable here if that is earlier (rule 2 above). Entries up to the
    /// durable one are committed too: the log is one sequence.
    pub(crate) fn clamp_commit(&self, committed: Option<LogId>) -> Option<LogId> {
        let committed = committed?;
        let durable_covers = |d: Option<LogId>| d.is_some_and(|d| d.index >= committed.index);
        if durable_covers(self.shared.durable.borrow().last)
            || hark_mvcc::chaos::mutation("commit-before-leader-durable")
        {
            return Some(committed);
        }
        // Held back: under the sync lock, so a sync finishing now either is seen here or
        // sees the held-back mark (and nudges).
        let _sync = self.shared.sync.lock();
        let durable = self.shared.durable.borrow().last;
        if durable_covers(durable) {
            return Some(committed);
        }
        self.shared
            .held_back
            .fetch_max(committed.index, Ordering::Relaxed);
        durable
    }

    /// Waits until a commit index held back from followers is durable here
    /// (then a heartbeat should carry it); `false` once the log is closed.
    pub(crate) async fn held_back_then_durable(&self) -> bool {
        let mut durable = self.shared.durable.subscribe();
        let mut held = 0;
        let ready = match durable
            .wait_for(|d| {
                held = self.shared.held_back.load(Ordering::Relaxed);
                d.closed || (held > 0 && d.index() >= held)
            })
            .await
        {
            Ok(d) => !d.closed,
            Err(_) => false,
        };
        if ready {
            // A later, higher hold stays for the next nudge.
            let _ = self.shared.held_back.compare_exchange(
                held,
                0,
                Ordering::Relaxed,
                Ordering::Relaxed,
            );
        }
        ready
    }

    /// A log whose every entry counts as on disk (tests of what is above it).
    #[cfg(test)]
    pub(crate) fn all_durable() -> LogDurability {
        let d = LogDurability::default();
        d.synced_through(Some(crate::types::log_id(u64::MAX, 0, u64::MAX)));
        d
    }

    /// The last entry on disk here.
    pub(crate) fn durable_index(&self) -> u64 {
        self.shared.durable.borrow().index()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(term: u64, index: u64) -> LogId {
        crate::types::log_id(term, 1, index)
    }

    #[tokio::test]
    async fn a_wait_ends_when_a_sync_covers_the_entry() {
        let d = LogDurability::default();
        d.synced_through(Some(id(1, 3)));
        d.wait(3).await.unwrap();
        d.written_unsynced(id(1, 5));
        let waiter = tokio::spawn({
            let d = d.clone();
            async move { d.wait(5).await }
        });
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished());
        let job = d.next_job().unwrap();
        assert_eq!(job.target, id(1, 5));
        d.job_done(job, Ok(()));
        waiter.await.unwrap().unwrap();
        assert_eq!(d.durable_index(), 5);
    }

    #[test]
    fn a_sync_that_started_before_a_truncation_does_not_count() {
        let d = LogDurability::default();
        d.synced_through(Some(id(1, 3)));
        d.written_unsynced(id(1, 6));
        let job = d.next_job().unwrap();
        // Stepped down meanwhile; the new leader cut the log after 4.
        d.truncated(Some(id(1, 4)));
        assert_eq!(d.durable_index(), 4);
        d.job_done(job, Ok(()));
        assert_eq!(
            d.durable_index(),
            4,
            "the old sync vouched for replaced entries"
        );
        d.synced_through(Some(id(2, 6)));
        assert_eq!(d.durable_index(), 6);
    }

    #[test]
    fn a_truncation_lowers_what_is_durable() {
        let d = LogDurability::default();
        d.synced_through(Some(id(1, 9)));
        d.truncated(Some(id(1, 5)));
        assert_eq!(d.durable_index(), 5);
    }

    #[tokio::test]
    async fn a_failed_sync_fails_every_wait() {
        let d = LogDurability::default();
        d.written_unsynced(id(1, 2));
        let job = d.next_job().unwrap();
        d.job_done(job, Err("EIO".into()));
        let err = d.wait(2).await.unwrap_err();
        assert!(err.contains("EIO"), "{err}");
    }

    #[tokio::test]
    async fn a_commit_is_held_back_to_what_is_durable_and_released_when_it_is() {
        let d = LogDurability::default();
        d.synced_through(Some(id(1, 4)));
        assert_eq!(d.clamp_commit(Some(id(1, 4))), Some(id(1, 4)));
        assert_eq!(d.clamp_commit(None), None);
        d.written_unsynced(id(1, 8));
        assert_eq!(d.clamp_commit(Some(id(1, 7))), Some(id(1, 4)));
        let nudge = tokio::spawn({
            let d = d.clone();
            async move { d.held_back_then_durable().await }
        });
        tokio::task::yield_now().await;
        assert!(!nudge.is_finished());
        let job = d.next_job().unwrap();
        d.job_done(job, Ok(()));
        assert!(nudge.await.unwrap());
        assert_eq!(d.clamp_commit(Some(id(1, 7))), Some(id(1, 7)));
    }

    #[tokio::test]
    async fn closing_ends_the_sync_thread_and_every_wait() {
        let d = LogDurability::default();
        let worker = std::thread::spawn({
            let d = d.clone();
            move || {
                let mut jobs = 0;
                while d.next_job().is_some() {
                    jobs += 1;
                }
                jobs
            }
        });
        d.written_unsynced(id(1, 1));
        let nudge = tokio::spawn({
            let d = d.clone();
            async move { d.held_back_then_durable().await }
        });
        let wait = tokio::spawn({
            let d = d.clone();
            async move { d.wait(1).await }
        });
        tokio::task::yield_now().await;
        d.stop();
        // The thread returns (it may have taken the one job first; it was
        // never marked done).
        assert!(worker.join().unwrap() <= 1);
        assert!(!nudge.await.unwrap(), "the nudge loop ends");
        assert!(
            wait.await.unwrap().is_err(),
            "an unsynced entry is not durable"
        );
    }
}
