//! What readers, the committer and the compactor share: the in-memory state
//! beside the backend, the store's options, and the jobs the committer takes.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use parking_lot::{Mutex, RwLock};

use crate::alarm::AlarmSet;
use crate::backend::{Backend, BackendView};
use crate::error::{Error, Result};
use crate::feed::FeedSender;
use crate::key_index::TreeIndex;
use crate::lease_table::LeaseTable;
use crate::records::RecordTable;
use crate::request::WriteRequest;
use crate::request::WriteResponse;
use crate::usage::PrefixUsage;

/// Revisions deleted per backend write during physical compaction.
pub(super) const COMPACTION_BATCH: usize = 10_000;
/// How stale the backend's measured size may be. Measuring lists the data
/// dir, so it is not done for every write that checks the quota.
const SIZE_REFRESH: Duration = Duration::from_millis(100);

/// How a store commits and what it accepts.
#[derive(Debug, Clone)]
pub struct StoreOptions {
    /// Sync each commit group to stable storage before acknowledging it (default).
    /// `false` is for benchmarks: a crash may lose acknowledged writes.
    pub sync: bool,
    /// Most compares, and most ops per branch, in one txn (etcd's `--max-txn-ops`).
    pub max_txn_ops: usize,
    /// Most requests the committer applies in one backend write.
    pub max_group: usize,
    /// Apply a submission on the submitting thread when nothing else is
    /// queued, instead of handing it to the committer thread and back. For a
    /// single submitter that can afford a backend write on its own thread:
    /// a replicated log's apply into an unsynced store (measured on a Hark
    /// member: one thread hand-off fewer per log entry). Snapshot installs
    /// always run on the committer thread.
    pub commit_on_caller: bool,
    /// Space per prefix is kept for prefixes up to this many `/` deep
    /// ([`crate::Store::prefix_usage`]); each write updates one entry per
    /// level, and memory follows the number of distinct prefixes.
    pub usage_depth: usize,
    /// The on-disk backend [`crate::Store::open`] opens (RocksDB when this
    /// build has it). A directory another backend wrote is refused.
    pub backend: crate::BackendKind,
    /// Stored revisions a compaction looks at per backend write (etcd's
    /// `--compaction-batch-limit`); `None`: Hark's own batch of 10,000.
    pub compaction_batch_limit: Option<usize>,
    /// Pause between a compaction's batches (etcd's
    /// `--compaction-sleep-interval`); zero: none, Hark's default.
    pub compaction_sleep: Duration,
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            sync: true,
            max_txn_ops: 128,
            max_group: 1024,
            commit_on_caller: false,
            usage_depth: crate::usage::DEFAULT_USAGE_DEPTH,
            backend: crate::BackendKind::DEFAULT,
            compaction_batch_limit: None,
            compaction_sleep: Duration::ZERO,
        }
    }
}

/// Called once with the outcome of a write, on the committer thread (or the
/// submitting one, with [`StoreOptions::commit_on_caller`]): keep it short.
pub type Done = Box<dyn FnOnce(Result<WriteResponse>) + Send + 'static>;

/// What the committer takes: requests applied together (never split across
/// backend writes), each with its callback.
pub(super) struct Job {
    pub(super) parts: Vec<(Work, JobDone)>,
    /// A replicated log's position of these requests, recorded in the same
    /// backend write as their changes (see [`Store::apply_logged`](crate::Store::apply_logged)).
    pub(super) position: Option<Vec<u8>>,
}

impl Job {
    pub(super) fn is_install(&self) -> bool {
        matches!(self.parts.first(), Some((Work::Install(_), _)))
    }
}

pub(super) enum Work {
    Request(WriteRequest),
    /// A logged request that failed validation: its position is still recorded.
    Refused(Error),
    /// Nothing to apply: a logged entry that does not change the store, or a barrier.
    Nothing,
    /// Replace everything with another store's contents (see [`Store::install`](crate::Store::install)).
    Install(Arc<Shared>),
}

/// The callback of one request of [`Store::apply_logged`](crate::Store::apply_logged); `None` for an
/// entry without a request.
pub type LoggedDone = Box<dyn FnOnce(Option<Result<WriteResponse>>) + Send + 'static>;

/// A job's callback: called with `None` for [`Work::Nothing`].
pub(super) type JobDone = LoggedDone;

/// State shared by readers, the committer and the compactor.
pub(super) struct Shared {
    pub(super) backend: Box<dyn Backend>,
    pub(super) index: RwLock<TreeIndex>,
    /// Changed only by the committer, under the index write lock.
    pub(super) leases: Mutex<LeaseTable>,
    /// Newest durable revision; readers never look past it.
    pub(super) committed_rev: AtomicI64,
    /// Reads below this revision fail with `Compacted`.
    pub(super) compact_rev: AtomicI64,
    /// Holders of [`PrevKvInterest`]: while any, published events carry the
    /// keys' previous values.
    pub(super) prev_kv_interest: AtomicUsize,
    /// Guards publishing, so a subscriber learns exactly where its stream starts.
    pub(super) subscribers: Mutex<Vec<FeedSender>>,
    /// A backend write failed: the in-memory state is ahead of the disk, so no more
    /// writes are taken (reopen to recover from what is durable).
    pub(super) failed: AtomicBool,
    /// Raised alarms; changed only by the committer.
    pub(super) alarms: Mutex<AlarmSet>,
    /// Records of the layers above; changed only by the committer.
    pub(super) records: RwLock<RecordTable>,
    /// Space per prefix, as of the last durable commit group and the last
    /// batch of compacted rows deleted.
    pub(super) usage: Mutex<PrefixUsage>,
    /// Bumped after every applied records change (and install).
    pub(super) records_generation: AtomicU64,
    /// Who takes announcements, by topic (see [`crate::Announcement`]).
    pub(super) listeners: RwLock<std::collections::HashMap<String, crate::announce::Listener>>,
    /// Whether a NOSPACE / CORRUPT alarm is raised (for readers, without the lock).
    pub(super) nospace: AtomicBool,
    pub(super) corrupt: AtomicBool,
    pub(super) sizes: SizeCache,
    /// Jobs submitted and not yet taken by the committer.
    pub(super) queued_jobs: AtomicUsize,
    /// One space reclamation at a time.
    pub(super) reclaiming: Mutex<()>,
    /// Bytes of rows physical compaction deleted since the last space
    /// reclamation in this process: what defragmenting would give back
    /// (RocksDB's own live-size estimate counts them until it compacts).
    pub(super) reclaimable: AtomicU64,
    /// Whole-store images being read (snapshots): automatic
    /// defragmentation stands aside while any is.
    pub(super) images_reading: AtomicUsize,
    /// Held while physical compaction deletes rows (an install waits for it).
    pub(super) compacting: Mutex<()>,
    /// Bumped by every install, under the index write lock, before it
    /// changes a row: compactions planned before it are void, and readers
    /// that saw it change read again (see [`Shared::outside_installs`]).
    pub(super) generation: AtomicU64,
    pub(super) options: StoreOptions,
    /// Where the key index's checkpoint lives (a store on disk), see
    /// [`super::checkpoint`].
    pub(super) checkpoint_dir: Option<std::path::PathBuf>,
    /// The revision of the checkpoint the store was opened from.
    pub(super) opened_from_checkpoint: Option<i64>,
    /// Wakes the checkpoint thread early: a compaction finished (a
    /// checkpoint from before it is not used), or the store is closing.
    pub(super) checkpoint_due: Nudge,
    /// The newest compaction physically finished, and who waits for one
    /// (see [`crate::Store::when_compacted`]).
    pub(super) finished_compaction: Mutex<(i64, Vec<(i64, CompactionWaiter)>)>,
    /// Held while a checkpoint is taken and written: one at a time.
    pub(super) checkpoint_writer: Mutex<()>,
    /// Held while a checkpoint file is put in place or removed.
    pub(super) checkpoint_file: Mutex<()>,
    /// Raised when the store closes: a compaction pausing between batches
    /// stops there (and is finished on the next open).
    pub(super) closing: Closing,
    /// Last, so it drops after `backend`: [`crate::BackendClosed`] turns
    /// true only once the backend has closed (an `Arc`'s strong count
    /// reaches zero before its contents are dropped).
    pub(super) closed: SetOnDrop,
}

/// A flag raised once, that a pause can wait on.
#[derive(Default)]
pub(super) struct Closing {
    raised: Mutex<bool>,
    wake: parking_lot::Condvar,
}

impl Closing {
    pub(super) fn raise(&self) {
        *self.raised.lock() = true;
        self.wake.notify_all();
    }

    pub(super) fn is_raised(&self) -> bool {
        *self.raised.lock()
    }

    /// Waits `pause` unless raised meanwhile; whether it was raised.
    pub(super) fn wait(&self, pause: Duration) -> bool {
        let deadline = Instant::now() + pause;
        let mut raised = self.raised.lock();
        while !*raised {
            if self.wake.wait_until(&mut raised, deadline).timed_out() {
                break;
            }
        }
        *raised
    }
}

/// Called once a compaction at or past its revision finished.
pub(super) type CompactionWaiter = Box<dyn FnOnce() + Send + 'static>;

impl Shared {
    /// Records that the compaction at `at` finished physically and calls
    /// the waiters it satisfies.
    pub(super) fn compaction_finished(&self, at: i64) {
        let ready: Vec<CompactionWaiter> = {
            let mut finished = self.finished_compaction.lock();
            finished.0 = finished.0.max(at);
            let newest = finished.0;
            let (ready, waiting) = std::mem::take(&mut finished.1)
                .into_iter()
                .partition::<Vec<_>, _>(|(revision, _)| *revision <= newest);
            finished.1 = waiting;
            ready.into_iter().map(|(_, done)| done).collect()
        };
        for done in ready {
            done();
        }
    }
}

/// A wake-up a thread can wait on, with a timeout.
#[derive(Default)]
pub(super) struct Nudge {
    due: Mutex<bool>,
    wake: parking_lot::Condvar,
}

impl Nudge {
    pub(super) fn nudge(&self) {
        *self.due.lock() = true;
        self.wake.notify_all();
    }

    /// Waits until nudged or `timeout` passed, and clears the nudge.
    pub(super) fn wait(&self, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        let mut due = self.due.lock();
        while !*due {
            if self.wake.wait_until(&mut due, deadline).timed_out() {
                break;
            }
        }
        *due = false;
    }
}

/// Sets its flag when dropped.
#[derive(Default)]
pub(super) struct SetOnDrop(pub(super) Arc<AtomicBool>);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, std::sync::atomic::Ordering::Release);
    }
}

/// Keeps published events carrying previous values (see
/// [`Store::want_prev_kvs`](crate::Store::want_prev_kvs)); dropping it withdraws the wish.
/// Holds the store weakly: it never keeps a closed store's backend open.
pub struct PrevKvInterest(pub(super) std::sync::Weak<Shared>);

impl Drop for PrevKvInterest {
    fn drop(&mut self) {
        if let Some(shared) = self.0.upgrade() {
            shared.prev_kv_interest.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// The backend's measured sizes, refreshed at most every [`SIZE_REFRESH`].
#[derive(Default)]
pub(super) struct SizeCache {
    pub(super) total: AtomicU64,
    pub(super) in_use: AtomicU64,
    pub(super) measured_at: Mutex<Option<Instant>>,
}

impl Shared {
    /// Runs `read` (again, as often as it takes) until no snapshot install
    /// changed a row while it ran. An install replaces the rows in place, in
    /// batches: a reader walking the backend meanwhile would see some of
    /// them, or miss a row the key index named. Only an install retries a
    /// read: writes and compactions never make it.
    pub(super) fn outside_installs<T>(&self, mut read: impl FnMut() -> Result<T>) -> Result<T> {
        loop {
            // Read under the index lock, which an install holds from before
            // it bumps the generation until it is done.
            let before = {
                let _index = self.index.read();
                self.generation.load(Ordering::Acquire)
            };
            let result = read();
            if self.generation.load(Ordering::Acquire) == before {
                return result;
            }
        }
    }

    /// [`Backend::read_snapshot`] from outside any install: the index lock,
    /// which an install holds throughout, is held until the view exists, so
    /// the view holds the rows from before an install or from after it.
    pub(super) fn whole_view(
        &self,
        read: &mut dyn FnMut(&dyn BackendView) -> Result<()>,
    ) -> Result<()> {
        let mut index = Some(self.index.read());
        self.backend.read_snapshot(&mut |view| {
            index.take();
            read(view)
        })
    }

    /// Re-measures the backend's sizes if the last measure is stale (or `now`).
    pub(super) fn measure_sizes(&self, now: bool) {
        let Some(mut at) = self.sizes.measured_at.try_lock() else {
            return; // another thread is measuring
        };
        if !now && at.is_some_and(|t| t.elapsed() < SIZE_REFRESH) {
            return;
        }
        self.backend.record_memory();
        let total = self.backend.size_bytes();
        let in_use = self.backend.size_in_use_bytes().min(total);
        self.sizes.total.store(total, Ordering::Relaxed);
        self.sizes.in_use.store(in_use, Ordering::Relaxed);
        *at = Some(Instant::now());
        metrics::gauge!("etcd_mvcc_db_total_size_in_bytes").set(total as f64);
        metrics::gauge!("etcd_debugging_mvcc_db_total_size_in_bytes").set(total as f64);
        metrics::gauge!("etcd_mvcc_db_total_size_in_use_in_bytes").set(in_use as f64);
    }

    pub(super) fn record_gauges(&self) {
        metrics::gauge!("etcd_debugging_mvcc_current_revision")
            .set(self.committed_rev.load(Ordering::Relaxed) as f64);
        metrics::gauge!("etcd_debugging_mvcc_compact_revision")
            .set(self.compact_rev.load(Ordering::Relaxed) as f64);
        let index = self.index.read();
        metrics::gauge!("etcd_debugging_mvcc_keys_total").set(index.live_len() as f64);
        metrics::gauge!("hark_mvcc_key_index_bytes").set(index.chunk_bytes() as f64);
    }
}
