//! The store: reads from any thread; every change goes through one committer
//! thread (the apply seam), which batches concurrent requests into one backend
//! write with one sync (group commit), then publishes what changed.
//!
//! Rooms: `open.rs` (open and recovery), `committer.rs` (the apply seam),
//! `compactor.rs`, `history.rs` (history reads for watchers), `image.rs`
//! (whole-store views for snapshots). This file holds the shared state and
//! the public API.

mod committer;
mod compactor;
mod history;
mod image;
mod open;

pub use history::HistoryChunk;
pub use image::StoreImage;

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bytes::Bytes;
use crossbeam_channel::{Receiver, Sender};
use parking_lot::{Mutex, RwLock};

use crate::alarm::{self, Alarm, AlarmAction, AlarmKind, AlarmRequest, AlarmResponse, AlarmSet};
use crate::apply::{TxnWriter, decode_kv, finish_range, load_kv, missing_value, plan_range};
use crate::backend::{Backend, BackendView, MemoryBackend, RocksBackend, Table, WriteBatch};
use crate::error::{Error, Result};
use crate::feed::{self, DEFAULT_FEED_BYTES, Feed, FeedSender};
use crate::key_index::{KeyRange, TreeIndex};
use crate::kv::{CommittedRevision, Event, EventKind, KeyValue};
use crate::lease_table::{self, LeaseTable};
use crate::records::{self, RecordChange, RecordTable, RecordsRequest, RecordsResponse};
use crate::request::{
    CompactRequest, CompactResponse, DeleteRangeRequest, DeleteRangeResponse, LeaseGrantRequest,
    LeaseGrantResponse, LeaseRevokeRequest, LeaseRevokeResponse, PutRequest, PutResponse,
    RangeRequest, RangeResponse, TxnRequest, TxnResponse, WriteRequest, WriteResponse,
};
use crate::revision::Revision;
use crate::validate;

pub(crate) const META_CURRENT_REV: &[u8] = b"current_rev";
pub(crate) const META_SCHEDULED_COMPACT: &[u8] = b"scheduled_compact_rev";
pub(crate) const META_FINISHED_COMPACT: &[u8] = b"finished_compact_rev";
/// Revisions deleted per backend write during physical compaction.
const COMPACTION_BATCH: usize = 10_000;
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
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            sync: true,
            max_txn_ops: 128,
            max_group: 1024,
            commit_on_caller: false,
        }
    }
}

/// Called once with the outcome of a write, on the committer thread (or the
/// submitting one, with [`StoreOptions::commit_on_caller`]): keep it short.
pub type Done = Box<dyn FnOnce(Result<WriteResponse>) + Send + 'static>;

/// What the committer takes: requests applied together (never split across
/// backend writes), each with its callback.
struct Job {
    parts: Vec<(Work, JobDone)>,
    /// A replicated log's position of these requests, recorded in the same
    /// backend write as their changes (see [`Store::apply_logged`]).
    position: Option<Vec<u8>>,
}

impl Job {
    fn is_install(&self) -> bool {
        matches!(self.parts.first(), Some((Work::Install(_), _)))
    }
}

enum Work {
    Request(WriteRequest),
    /// A logged request that failed validation: its position is still recorded.
    Refused(Error),
    /// Nothing to apply: a logged entry that does not change the store, or a barrier.
    Nothing,
    /// Replace everything with another store's contents (see [`Store::install`]).
    Install(Store),
}

/// Called with `None` for [`Work::Nothing`].
type JobDone = Box<dyn FnOnce(Option<Result<WriteResponse>>) + Send + 'static>;

/// The callback of one request of [`Store::apply_logged`]; `None` for an
/// entry without a request.
pub type LoggedDone = JobDone;

/// Requests [`Store::apply`] lets wait for the committer before refusing
/// more with [`Error::TooManyRequests`] (etcd's limit on proposals its apply
/// has not caught up with is 5000 entries).
pub const MAX_QUEUED_REQUESTS: usize = 5000;

/// Meta key of the replicated log's position applied last (opaque to the store).
pub(crate) const META_LOG_POSITION: &[u8] = b"log_position";

/// State shared by readers, the committer and the compactor.
struct Shared {
    backend: Box<dyn Backend>,
    index: RwLock<TreeIndex>,
    /// Changed only by the committer, under the index write lock.
    leases: Mutex<LeaseTable>,
    /// Newest durable revision; readers never look past it.
    committed_rev: AtomicI64,
    /// Reads below this revision fail with `Compacted`.
    compact_rev: AtomicI64,
    /// Holders of [`PrevKvInterest`]: while any, published events carry the
    /// keys' previous values.
    prev_kv_interest: AtomicUsize,
    /// Guards publishing, so a subscriber learns exactly where its stream starts.
    subscribers: Mutex<Vec<FeedSender>>,
    /// A backend write failed: the in-memory state is ahead of the disk, so no more
    /// writes are taken (reopen to recover from what is durable).
    failed: AtomicBool,
    /// Raised alarms; changed only by the committer.
    alarms: Mutex<AlarmSet>,
    /// Records of the layers above; changed only by the committer.
    records: RwLock<RecordTable>,
    /// Bumped after every applied records change (and install).
    records_generation: AtomicU64,
    /// Whether a NOSPACE / CORRUPT alarm is raised (for readers, without the lock).
    nospace: AtomicBool,
    corrupt: AtomicBool,
    sizes: SizeCache,
    /// Jobs submitted and not yet taken by the committer.
    queued_jobs: AtomicUsize,
    /// Requests the committer has taken (etcd's proposals committed/applied).
    proposals: AtomicU64,
    /// One space reclamation at a time.
    reclaiming: Mutex<()>,
    /// Held while physical compaction deletes rows (an install waits for it).
    compacting: Mutex<()>,
    /// Bumped by every install: compactions planned before it are void.
    generation: AtomicU64,
    options: StoreOptions,
}

/// Keeps published events carrying previous values (see
/// [`Store::want_prev_kvs`]); dropping it withdraws the wish.
/// Holds the store weakly: it never keeps a closed store's backend open.
pub struct PrevKvInterest(std::sync::Weak<Shared>);

impl Drop for PrevKvInterest {
    fn drop(&mut self) {
        if let Some(shared) = self.0.upgrade() {
            shared.prev_kv_interest.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// The backend's measured sizes, refreshed at most every [`SIZE_REFRESH`].
#[derive(Default)]
struct SizeCache {
    total: AtomicU64,
    in_use: AtomicU64,
    measured_at: Mutex<Option<Instant>>,
}

/// etcd's `HashKV` answer: a CRC-32C over the key-value history up to
/// `revision`, comparable between members holding the same history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KvHash {
    /// The CRC-32C.
    pub hash: u32,
    /// The store's current revision when the hash was taken (etcd's `header.revision`).
    pub current_revision: i64,
    /// The revision hashed up to (etcd's `hash_revision`).
    pub hash_revision: i64,
    /// The compacted revision the hash was taken under.
    pub compact_revision: i64,
}

/// A revisioned key-value store with etcd's semantics. Cheap to clone; the last
/// clone dropped stops the background threads and closes the backend.
#[derive(Clone)]
pub struct Store {
    inner: Arc<StoreInner>,
}

/// Tells whether a store's backend has closed: clones may outlive the one a
/// caller drops (in tasks still finishing), and reopening the same directory
/// must wait for the last of them.
pub struct BackendClosed(std::sync::Weak<Shared>);

impl BackendClosed {
    /// Whether every clone of the store is gone and its backend closed.
    pub fn is_closed(&self) -> bool {
        self.0.strong_count() == 0
    }
}

struct StoreInner {
    shared: Arc<Shared>,
    jobs: Option<Sender<Job>>,
    /// The write side, shared by the committer thread and (with
    /// `commit_on_caller`) submitting threads. Let go of before the threads
    /// are joined: the compactor stops once the committer is dropped.
    committer: Option<Arc<Mutex<committer::Committer>>>,
    threads: Vec<JoinHandle<()>>,
}

impl Drop for StoreInner {
    fn drop(&mut self) {
        self.jobs.take();
        self.committer.take();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}
impl Store {
    fn shared(&self) -> &Shared {
        &self.inner.shared
    }

    /// The newest durable revision (a new store is at 1).
    pub fn current_revision(&self) -> i64 {
        self.shared().committed_rev.load(Ordering::Acquire)
    }

    /// Reads below this revision fail with [`Error::Compacted`] (0: never compacted).
    pub fn compacted_revision(&self) -> i64 {
        self.shared().compact_rev.load(Ordering::Acquire)
    }

    /// Bytes the backend occupies (etcd's `dbSize`), measured at most
    /// 100 ms ago (measuring lists the data dir).
    pub fn db_size(&self) -> u64 {
        self.shared().measure_sizes(false);
        self.shared().sizes.total.load(Ordering::Relaxed)
    }

    /// Bytes of live data in the backend (etcd's `dbSizeInUse`): what
    /// [`Store::defragment`] would shrink [`Store::db_size`] towards.
    pub fn db_size_in_use(&self) -> u64 {
        self.shared().measure_sizes(false);
        self.shared().sizes.in_use.load(Ordering::Relaxed)
    }

    /// Reclaims the space that deleted and compacted revisions still hold
    /// (etcd's defragmentation). Blocks the caller until done; reads, writes
    /// and watches go on meanwhile. Concurrent calls run one after the other.
    pub fn defragment(&self) -> Result<()> {
        let shared = self.shared();
        let _one = shared.reclaiming.lock();
        let started = Instant::now();
        let before = shared.backend.size_bytes();
        shared.backend.reclaim_space()?;
        shared.measure_sizes(true);
        tracing::info!(
            before,
            after = shared.sizes.total.load(Ordering::Relaxed),
            took = ?started.elapsed(),
            "defragmented"
        );
        Ok(())
    }

    /// The raised alarms, by member then kind.
    pub fn alarms(&self) -> Vec<Alarm> {
        self.shared().alarms.lock().list(None)
    }

    /// The records of `bucket`, by key (see [`crate::records`]).
    pub fn records(&self, bucket: &str) -> Vec<(Bytes, Bytes)> {
        self.shared().records.read().bucket(bucket)
    }

    /// One record.
    pub fn record(&self, bucket: &str, key: &[u8]) -> Option<Bytes> {
        self.shared().records.read().get(bucket, key).cloned()
    }

    /// Changes whenever records may have changed: what a reader derived
    /// from them at an equal generation is still current.
    pub fn records_generation(&self) -> u64 {
        self.shared().records_generation.load(Ordering::Acquire)
    }

    /// The checks a write gets before it is applied (empty keys, txn
    /// sizes), for callers that must fail them before checks of their own.
    pub fn validate(&self, req: &WriteRequest) -> Result<()> {
        validate::check_write(req, self.shared().options.max_txn_ops)
    }

    /// Raises, clears or lists alarms through the apply path.
    pub fn alarm(&self, req: AlarmRequest) -> Result<AlarmResponse> {
        match self.apply_blocking(WriteRequest::Alarm(req))? {
            WriteResponse::Alarm(r) => Ok(r),
            other => unreachable!("alarm answered with {other:?}"),
        }
    }

    /// etcd's `HashKV`: a CRC-32C (Castagnoli) over the name `key`, then the
    /// backend key and value of each stored revision up to `revision` (0: the
    /// current one). Rows at or below the compacted revision count only if
    /// they are what `kvindex.Keep(revision)` names, so a store whose
    /// compaction has not yet removed them hashes the same as one where it
    /// has. Rows are etcd's own encoding, so the hash equals etcd 3.5.16+'s
    /// for the same history (etcd's cache of hashes taken at compactions is
    /// not kept: hashing below the compacted revision fails).
    pub fn hash_kv(&self, revision: i64) -> Result<KvHash> {
        let shared = self.shared();
        // The index lock is held until the backend view exists: a compaction
        // accepted meanwhile deletes rows only after it has the index, so the
        // view still holds every row the compaction revision read here names.
        let mut index = Some(shared.index.read());
        let current = shared.committed_rev.load(Ordering::Acquire);
        let compacted = shared.compact_rev.load(Ordering::Acquire);
        // etcd allows hashing at exactly the compacted revision.
        if revision > 0 && revision < compacted {
            return Err(Error::Compacted);
        }
        if revision > current {
            return Err(Error::FutureRevision);
        }
        let at = if revision > 0 { revision } else { current };
        // Only rows at or below the compaction are filtered by it.
        let keep = match &index {
            Some(index) if compacted > 0 => index.keep(at),
            _ => Default::default(),
        };
        let upper = Revision::new(at + 1, 0).to_bytes(false);
        let lower = Revision::new(compacted + 1, 0);
        let mut hash = crc32c::crc32c(b"key");
        shared.backend.read_snapshot(&mut |view| {
            index.take();
            view.scan(Table::Kv, &[], Some(&upper), &mut |k, v| {
                let Some((rev, tombstone)) = Revision::from_bytes(k) else {
                    return true;
                };
                let compacted_away = rev < lower && !keep.is_empty() && !keep.contains(&rev);
                // etcd 3.5.16+: a tombstone at the compacted revision is not
                // counted (some members keep it, some do not).
                let edge_tombstone = tombstone && rev.main == compacted && compacted > 0;
                if compacted_away || edge_tombstone {
                    return true;
                }
                hash = crc32c::crc32c_append(hash, k);
                hash = hash_row_value(hash, tombstone, v);
                true
            })
        })?;
        Ok(KvHash {
            hash,
            current_revision: current,
            hash_revision: at,
            compact_revision: compacted,
        })
    }

    /// etcd's `Hash`: a CRC-32C over every table's name and rows, read from
    /// one consistent view, with the revision that view holds. Stable across
    /// restarts: opening a store writes nothing, and the raft log position is
    /// left out (etcd ignores its consistent index and term the same way: a
    /// restarted member's new term appends entries that change no key).
    pub fn hash(&self) -> Result<(u32, i64)> {
        let mut hash = 0u32;
        let mut revision = 0;
        self.shared().backend.read_snapshot(&mut |view| {
            hash = 0;
            revision = StoreImage { view }.revision()?;
            for table in Table::ALL {
                hash = crc32c::crc32c_append(hash, table.name().as_bytes());
                view.scan(table, &[], None, &mut |k, v| {
                    if table == Table::Meta && k == META_LOG_POSITION {
                        return true;
                    }
                    hash = crc32c::crc32c_append(hash, k);
                    let tombstone = table == Table::Kv
                        && Revision::from_bytes(k).is_some_and(|(_, tombstone)| tombstone);
                    hash = hash_row_value(hash, tombstone, v);
                    true
                })?;
            }
            Ok(())
        })?;
        Ok((hash, revision))
    }

    /// Calls `read` with a consistent image of the whole store (see
    /// [`StoreImage`]), taken without blocking writers.
    pub fn read_image(&self, read: &mut dyn FnMut(&StoreImage<'_>) -> Result<()>) -> Result<()> {
        self.shared()
            .backend
            .read_snapshot(&mut |view| read(&StoreImage { view }))
    }

    /// Number of keys the index holds (live keys and retained tombstones).
    pub fn key_count(&self) -> usize {
        self.shared().index.read().len()
    }

    /// Reads a key or range at a revision (etcd's `Range`): `req.revision`,
    /// or the current revision when it is 0. Fails with
    /// [`Error::Compacted`] below the compacted revision and
    /// [`Error::FutureRevision`] above the current one. Runs on the
    /// caller's thread and never waits for the committer.
    ///
    /// ```
    /// use hark_mvcc::{Error, PutRequest, RangeRequest, Store};
    ///
    /// let store = Store::in_memory();
    /// let first = store.put(PutRequest::new("k", "1")).unwrap().header_revision;
    /// store.put(PutRequest::new("k", "2")).unwrap();
    ///
    /// let now = store.range(&RangeRequest::key("k")).unwrap();
    /// assert_eq!((now.kvs[0].value.as_ref(), now.kvs[0].version), (&b"2"[..], 2));
    /// let then = store
    ///     .range(&RangeRequest { revision: first, ..RangeRequest::key("k") })
    ///     .unwrap();
    /// assert_eq!(then.kvs[0].value, "1");
    /// assert_eq!(then.header_revision, store.current_revision());
    /// let future = RangeRequest { revision: 99, ..RangeRequest::key("k") };
    /// assert_eq!(store.range(&future), Err(Error::FutureRevision));
    /// ```
    pub fn range(&self, req: &RangeRequest) -> Result<RangeResponse> {
        validate::check_range(req)?;
        let shared = self.shared();
        let (plan, current, at) = {
            // Checked under the index lock: compaction changes the index only after
            // raising `compact_rev`, so a read that passes here sees a valid index.
            let index = shared.index.read();
            let current = shared.committed_rev.load(Ordering::Acquire);
            let at = if req.revision > 0 {
                req.revision
            } else {
                current
            };
            if at > current {
                return Err(Error::FutureRevision);
            }
            if at < shared.compact_rev.load(Ordering::Acquire) {
                return Err(Error::Compacted);
            }
            (plan_range(&index, req, at), current, at)
        };
        let mut resp = finish_range(plan, req, |rev| shared.load_committed(rev, at))?;
        resp.header_revision = current;
        metrics::counter!("etcd_mvcc_range_total").increment(1);
        Ok(resp)
    }

    /// Submits a change; `done` is called once it is durable (or failed). Never
    /// blocks on the committer: this is the entry point for async callers and for a
    /// replicated log feeding committed entries. (With
    /// [`StoreOptions::commit_on_caller`] the change may be applied on this
    /// thread before `apply` returns.)
    pub fn apply(&self, req: WriteRequest, done: Done) {
        if let Err(e) = validate::check_write(&req, self.shared().options.max_txn_ops) {
            return done(Err(e));
        }
        if self.shared().failed.load(Ordering::Acquire) {
            return done(Err(Error::Closed));
        }
        // A replicated log's entries are never refused here: they are
        // committed already, and the log bounds what it has in flight.
        if self.shared().queued_jobs.load(Ordering::Acquire) >= MAX_QUEUED_REQUESTS {
            metrics::counter!("etcd_server_proposals_failed_total").increment(1);
            return done(Err(Error::TooManyRequests));
        }
        self.submit(Job {
            parts: vec![(
                Work::Request(req),
                Box::new(move |r| done(r.unwrap_or(Err(Error::Closed)))),
            )],
            position: None,
        });
    }

    /// Applies an entry of a replicated log: its requests are applied in
    /// order as by [`Store::apply`] (`None` stands for a part that changes
    /// nothing here), all in one backend write together with `position`, so
    /// after a crash [`Store::log_position`] names exactly the last entry
    /// whose changes survived: a restart neither applies an entry twice nor
    /// skips one. An entry with no requests records its position only.
    pub fn apply_logged(
        &self,
        requests: Vec<(Option<WriteRequest>, LoggedDone)>,
        position: Vec<u8>,
    ) {
        let max_ops = self.shared().options.max_txn_ops;
        let parts: Vec<(Work, JobDone)> = requests
            .into_iter()
            .map(|(req, done)| {
                let work = match req {
                    None => Work::Nothing,
                    Some(req) => match validate::check_write(&req, max_ops) {
                        Ok(()) => Work::Request(req),
                        Err(e) => Work::Refused(e),
                    },
                };
                (work, done)
            })
            .collect();
        if self.shared().failed.load(Ordering::Acquire) {
            for (_, done) in parts {
                done(Some(Err(Error::Closed)));
            }
            return;
        }
        self.submit(Job {
            parts,
            position: Some(position),
        });
    }

    /// Replaces this store's whole contents with `source`'s (a replicated log
    /// installing a snapshot on a member too far behind), recording
    /// `position` as the log position. Changes submitted before it are
    /// applied first; subscribers then receive an empty revision at the new
    /// current revision, past the ones they never saw (the watch engine
    /// catches its watchers up from the new history). `done` gets the result.
    pub fn install(
        &self,
        source: Store,
        position: Vec<u8>,
        done: impl FnOnce(Result<()>) + Send + 'static,
    ) {
        self.submit(Job {
            parts: vec![(
                Work::Install(source),
                Box::new(move |r| {
                    done(match r {
                        Some(Err(e)) => Err(e),
                        _ => Ok(()),
                    })
                }),
            )],
            position: Some(position),
        });
    }

    /// Calls `done` once every change submitted before it is applied and
    /// visible to readers (not necessarily finished: a physical compaction
    /// may still be deleting rows).
    pub fn barrier(&self, done: impl FnOnce() + Send + 'static) {
        self.submit(Job {
            parts: vec![(Work::Nothing, Box::new(move |_| done()))],
            position: None,
        });
    }

    /// Puts every write the store made so far on stable storage. Under a
    /// replicated log the store's writes are not synced (the log is), so
    /// this comes before the log is purged up to what the store holds.
    pub fn sync_to_disk(&self) -> Result<()> {
        self.shared().backend.sync()
    }

    /// The position recorded by the last [`Store::apply_logged`] whose write
    /// is in the backend (`None` if there was none).
    pub fn log_position(&self) -> Result<Option<Vec<u8>>> {
        self.shared().backend.get(Table::Meta, META_LOG_POSITION)
    }

    fn submit(&self, job: Job) {
        if self.shared().options.commit_on_caller
            && !job.is_install()
            && let Some(committer) = &self.inner.committer
            && let Some(mut committer) = committer.try_lock()
            // Jobs queued before this one (or taken by the thread and not yet
            // applied) go first: then this one queues behind them.
            && self.shared().queued_jobs.load(Ordering::Acquire) == 0
        {
            committer.apply_group(vec![job]);
            return;
        }
        let jobs = self
            .inner
            .jobs
            .as_ref()
            .expect("jobs sender lives as long as the store");
        metrics::gauge!("etcd_server_proposals_pending").increment(1.0);
        self.shared().queued_jobs.fetch_add(1, Ordering::AcqRel);
        if let Err(crossbeam_channel::SendError(job)) = jobs.send(job) {
            metrics::gauge!("etcd_server_proposals_pending").decrement(1.0);
            self.shared().queued_jobs.fetch_sub(1, Ordering::AcqRel);
            for (_, done) in job.parts {
                done(Some(Err(Error::Closed)));
            }
        }
    }

    /// [`Store::apply`], waiting for the outcome: blocks the calling
    /// thread until the write is durable (or failed).
    ///
    /// ```
    /// use hark_mvcc::{PutRequest, Store, WriteRequest, WriteResponse};
    ///
    /// let store = Store::in_memory();
    /// let put = PutRequest { prev_kv: true, ..PutRequest::new("k", "v1") };
    /// let Ok(WriteResponse::Put(first)) = store.apply_blocking(WriteRequest::Put(put.clone()))
    /// else {
    ///     panic!("a put answers with a put response")
    /// };
    /// assert_eq!((first.header_revision, first.prev_kv), (2, None));
    /// let Ok(WriteResponse::Put(second)) = store.apply_blocking(WriteRequest::Put(put)) else {
    ///     panic!("a put answers with a put response")
    /// };
    /// assert_eq!(second.prev_kv.unwrap().mod_revision, 2);
    /// ```
    pub fn apply_blocking(&self, req: WriteRequest) -> Result<WriteResponse> {
        let (tx, rx) = crossbeam_channel::bounded(1);
        self.apply(
            req,
            Box::new(move |r| {
                let _ = tx.send(r);
            }),
        );
        rx.recv().unwrap_or(Err(Error::Closed))
    }

    /// Applies a put and waits until it is durable (etcd's `Put`).
    pub fn put(&self, req: PutRequest) -> Result<PutResponse> {
        match self.apply_blocking(WriteRequest::Put(req))? {
            WriteResponse::Put(r) => Ok(r),
            other => unreachable!("put answered with {other:?}"),
        }
    }

    /// Applies a delete and waits until it is durable (etcd's
    /// `DeleteRange`). Deleting nothing makes no revision.
    pub fn delete_range(&self, req: DeleteRangeRequest) -> Result<DeleteRangeResponse> {
        match self.apply_blocking(WriteRequest::DeleteRange(req))? {
            WriteResponse::DeleteRange(r) => Ok(r),
            other => unreachable!("delete answered with {other:?}"),
        }
    }

    /// Applies a transaction and waits until it is durable (etcd's `Txn`);
    /// see [`TxnRequest`] for an example.
    pub fn txn(&self, req: TxnRequest) -> Result<TxnResponse> {
        match self.apply_blocking(WriteRequest::Txn(req))? {
            WriteResponse::Txn(r) => Ok(r),
            other => unreachable!("txn answered with {other:?}"),
        }
    }

    /// Compacts history up to `revision` (etcd's `Compact`): reads and
    /// history reads below it fail with [`Error::Compacted`] from then on.
    /// `revision` must be above the compacted revision (else
    /// [`Error::Compacted`]) and at most the current one (else
    /// [`Error::FutureRevision`]). The rows go in the background; with
    /// `physical` the call returns only once they are gone.
    ///
    /// ```
    /// use hark_mvcc::{Error, PutRequest, RangeRequest, Store};
    ///
    /// let store = Store::in_memory();
    /// let old = store.put(PutRequest::new("k", "1")).unwrap().header_revision;
    /// let new = store.put(PutRequest::new("k", "2")).unwrap().header_revision;
    /// store.compact(new, true).unwrap();
    /// assert_eq!(store.compacted_revision(), new);
    ///
    /// let at_old = RangeRequest { revision: old, ..RangeRequest::key("k") };
    /// assert_eq!(store.range(&at_old), Err(Error::Compacted));
    /// assert_eq!(store.range(&RangeRequest::key("k")).unwrap().kvs[0].value, "2");
    /// assert_eq!(store.compact(new, false), Err(Error::Compacted));
    /// ```
    pub fn compact(&self, revision: i64, physical: bool) -> Result<CompactResponse> {
        match self.apply_blocking(WriteRequest::Compact(CompactRequest { revision, physical }))? {
            WriteResponse::Compact(r) => Ok(r),
            other => unreachable!("compact answered with {other:?}"),
        }
    }

    /// Records lease `id` with its granted TTL (fails with [`Error::LeaseExists`]).
    pub fn lease_grant(&self, id: i64, ttl: i64) -> Result<LeaseGrantResponse> {
        match self.apply_blocking(WriteRequest::LeaseGrant(LeaseGrantRequest { id, ttl }))? {
            WriteResponse::LeaseGrant(r) => Ok(r),
            other => unreachable!("lease grant answered with {other:?}"),
        }
    }

    /// Revokes lease `id`, deleting its keys in one revision.
    pub fn lease_revoke(&self, id: i64) -> Result<LeaseRevokeResponse> {
        match self.apply_blocking(WriteRequest::LeaseRevoke(LeaseRevokeRequest { id }))? {
            WriteResponse::LeaseRevoke(r) => Ok(r),
            other => unreachable!("lease revoke answered with {other:?}"),
        }
    }

    /// Lease `id`'s granted TTL, if the lease exists.
    pub fn lease_ttl(&self, id: i64) -> Option<i64> {
        self.shared().leases.lock().ttl(id)
    }

    /// Every lease as `(id, granted TTL)`, by id.
    pub fn leases(&self) -> Vec<(i64, i64)> {
        self.shared().leases.lock().list()
    }

    /// The live keys attached to lease `id`, sorted; `None` if there is no such lease.
    pub fn lease_keys(&self, id: i64) -> Option<Vec<Bytes>> {
        self.shared().leases.lock().keys(id)
    }

    /// Subscribes to committed changes: returns the newest revision already
    /// committed and a feed of every later revision, in order, within a budget
    /// of [`DEFAULT_FEED_BYTES`] (see [`Store::subscribe_within`]). A
    /// revision reaches the feed once it is durable; the writer never waits
    /// for the subscriber.
    ///
    /// ```
    /// use hark_mvcc::{DeleteRangeRequest, EventKind, PutRequest, Store};
    ///
    /// let store = Store::in_memory();
    /// let (seen, feed) = store.subscribe();
    /// store.put(PutRequest::new("k", "v")).unwrap();
    /// store.delete_range(DeleteRangeRequest::new("k", "")).unwrap();
    ///
    /// let put = feed.recv().unwrap();
    /// assert_eq!(put.revision, seen + 1);
    /// assert_eq!(put.events[0].kind, EventKind::Put);
    /// let delete = feed.recv().unwrap();
    /// assert_eq!(delete.revision, seen + 2);
    /// assert_eq!(delete.events[0].kind, EventKind::Delete);
    /// assert!(!feed.take_lag());
    /// ```
    pub fn subscribe(&self) -> (i64, Feed) {
        self.subscribe_within(DEFAULT_FEED_BYTES)
    }

    /// Asks the committer to publish each event with the key's previous
    /// value (etcd's `prev_kv`) until the returned guard is dropped. The
    /// committer reads it as it applies the write, where it is at hand (in
    /// its own group's overlay, or just written), so a subscriber serving
    /// `prev_kv` watchers need not read the store per event.
    pub fn want_prev_kvs(&self) -> PrevKvInterest {
        self.shared()
            .prev_kv_interest
            .fetch_add(1, Ordering::AcqRel);
        PrevKvInterest(Arc::downgrade(&self.inner.shared))
    }

    /// The largest backlog, in bytes, that any subscriber's feed holds now.
    pub fn feed_backlog_bytes(&self) -> usize {
        let subs = self.shared().subscribers.lock();
        subs.iter().map(|s| s.queued_bytes()).max().unwrap_or(0)
    }

    /// [`Store::subscribe`] with a budget: the writer never waits for a
    /// subscriber, and a revision that would take its queue past `max_bytes`
    /// is left out and the feed marked lagged (the subscriber then reads the
    /// store's history, where every committed revision is).
    pub fn subscribe_within(&self, max_bytes: usize) -> (i64, Feed) {
        let shared = self.shared();
        let mut subs = shared.subscribers.lock();
        let (tx, rx) = feed::feed(max_bytes);
        subs.push(tx);
        (shared.committed_rev.load(Ordering::Acquire), rx)
    }
}

/// Decodes a `kv` row: its revision, whether it is a tombstone, and the
/// key-value. A tombstone stores only its key (as etcd's do); its
/// `mod_revision` is the row's revision.
pub(crate) fn decode_row(key: &[u8], value: &[u8]) -> Option<(Revision, bool, KeyValue)> {
    let (rev, tombstone) = Revision::from_bytes(key)?;
    let mut kv = decode_kv(value).ok()?;
    if tombstone {
        kv.mod_revision = rev.main;
    }
    Some((rev, tombstone, kv))
}

/// Adds a `kv` row's value to a hash in etcd's form: a tombstone an older
/// Hark stored with its mod_revision counts as the key alone, as etcd's do.
fn hash_row_value(hash: u32, tombstone: bool, value: &[u8]) -> u32 {
    if tombstone && let Ok(kv) = decode_kv(value) {
        return crc32c::crc32c_append(hash, &tombstone_row_value(kv.key));
    }
    crc32c::crc32c_append(hash, value)
}

/// The stored value of a tombstone, as etcd writes it: a `KeyValue` holding
/// only the key.
pub(crate) fn tombstone_row_value(key: Bytes) -> Vec<u8> {
    prost::Message::encode_to_vec(&KeyValue {
        key,
        ..Default::default()
    })
}

impl Shared {
    /// Re-measures the backend's sizes if the last measure is stale (or `now`).
    fn measure_sizes(&self, now: bool) {
        let Some(mut at) = self.sizes.measured_at.try_lock() else {
            return; // another thread is measuring
        };
        if !now && at.is_some_and(|t| t.elapsed() < SIZE_REFRESH) {
            return;
        }
        let total = self.backend.size_bytes();
        let in_use = self.backend.size_in_use_bytes().min(total);
        self.sizes.total.store(total, Ordering::Relaxed);
        self.sizes.in_use.store(in_use, Ordering::Relaxed);
        *at = Some(Instant::now());
        metrics::gauge!("etcd_mvcc_db_total_size_in_bytes").set(total as f64);
        metrics::gauge!("etcd_debugging_mvcc_db_total_size_in_bytes").set(total as f64);
        metrics::gauge!("etcd_mvcc_db_total_size_in_use_in_bytes").set(in_use as f64);
    }

    fn record_gauges(&self) {
        metrics::gauge!("etcd_debugging_mvcc_current_revision")
            .set(self.committed_rev.load(Ordering::Relaxed) as f64);
        metrics::gauge!("etcd_debugging_mvcc_compact_revision")
            .set(self.compact_rev.load(Ordering::Relaxed) as f64);
        metrics::gauge!("etcd_debugging_mvcc_keys_total").set(self.index.read().len() as f64);
    }
}
