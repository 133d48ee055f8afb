//! The store: reads from any thread; every change goes through one committer
//! thread (the apply seam), which batches concurrent requests into one backend
//! write with one sync (group commit), then publishes what changed.

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

#[derive(Debug, Clone)]
pub struct StoreOptions {
    /// Sync each commit group to stable storage before acknowledging it (default).
    /// `false` is for benchmarks: a crash may lose acknowledged writes.
    pub sync: bool,
    /// Most compares, and most ops per branch, in one txn (etcd's `--max-txn-ops`).
    pub max_txn_ops: usize,
    /// Most requests the committer applies in one backend write.
    pub max_group: usize,
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            sync: true,
            max_txn_ops: 128,
            max_group: 1024,
        }
    }
}

/// Called once with the outcome of a write, on the committer thread: keep it short.
pub type Done = Box<dyn FnOnce(Result<WriteResponse>) + Send + 'static>;

/// What the committer takes: requests applied together (never split across
/// backend writes), each with its callback.
struct Job {
    parts: Vec<(Work, JobDone)>,
    /// A replicated log's position of these requests, recorded in the same
    /// backend write as their changes (see [`Store::apply_logged`]).
    position: Option<Vec<u8>>,
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
    pub fn is_closed(&self) -> bool {
        self.0.strong_count() == 0
    }
}

struct StoreInner {
    shared: Arc<Shared>,
    jobs: Option<Sender<Job>>,
    threads: Vec<JoinHandle<()>>,
}

impl Drop for StoreInner {
    fn drop(&mut self) {
        self.jobs.take();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

impl Store {
    /// A probe that turns true once every clone of this store is gone and
    /// the backend is closed.
    pub fn backend_closed(&self) -> BackendClosed {
        BackendClosed(Arc::downgrade(&self.inner.shared))
    }

    /// Opens (or creates) a RocksDB-backed store in directory `path`.
    pub fn open(path: impl AsRef<Path>, options: StoreOptions) -> Result<Store> {
        Store::with_backend(Box::new(RocksBackend::open(path)?), options)
    }

    /// A store that lives in memory only.
    pub fn in_memory() -> Store {
        Store::with_backend(Box::new(MemoryBackend::new()), StoreOptions::default())
            .expect("an empty memory backend always opens")
    }

    /// Opens a store over any backend: rebuilds the key index from it and finishes
    /// a compaction that a crash interrupted.
    pub fn with_backend(backend: Box<dyn Backend>, options: StoreOptions) -> Result<Store> {
        if backend
            .get(Table::Meta, crate::restore::META_RESTORING)?
            .is_some()
        {
            return Err(Error::Backend(
                "this data dir holds a restore that did not finish; delete it and restore again"
                    .into(),
            ));
        }
        let Loaded {
            index,
            leases,
            alarms,
            records,
            current,
            scheduled,
            finished,
        } = load_state(backend.as_ref())?;
        let shared = Arc::new(Shared {
            backend,
            index: RwLock::new(index),
            leases: Mutex::new(leases),
            committed_rev: AtomicI64::new(current),
            compact_rev: AtomicI64::new(scheduled),
            subscribers: Mutex::new(Vec::new()),
            prev_kv_interest: AtomicUsize::new(0),
            queued_jobs: AtomicUsize::new(0),
            failed: AtomicBool::new(false),
            nospace: AtomicBool::new(alarms.any(AlarmKind::NoSpace)),
            corrupt: AtomicBool::new(alarms.any(AlarmKind::Corrupt)),
            alarms: Mutex::new(alarms),
            records: RwLock::new(records),
            records_generation: AtomicU64::new(1),
            sizes: SizeCache::default(),
            proposals: AtomicU64::new(0),
            reclaiming: Mutex::new(()),
            compacting: Mutex::new(()),
            generation: AtomicU64::new(0),
            options,
        });
        if scheduled > 0 {
            let keep = shared.index.write().compact(scheduled);
            if scheduled > finished {
                tracing::info!(revision = scheduled, "finishing interrupted compaction");
                shared.delete_compacted(scheduled, &keep)?;
            }
        }
        shared.record_gauges();

        let (jobs_tx, jobs_rx) = crossbeam_channel::unbounded::<Job>();
        let (compact_tx, compact_rx) = crossbeam_channel::unbounded::<Compaction>();
        let committer = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("hark-mvcc-committer".into())
                .spawn(move || Committer::new(shared, compact_tx).run(jobs_rx))
                .map_err(|e| Error::Backend(format!("cannot start committer: {e}")))?
        };
        let compactor = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("hark-mvcc-compactor".into())
                .spawn(move || run_compactor(shared, compact_rx))
                .map_err(|e| Error::Backend(format!("cannot start compactor: {e}")))?
        };
        Ok(Store {
            inner: Arc::new(StoreInner {
                shared,
                jobs: Some(jobs_tx),
                threads: vec![committer, compactor],
            }),
        })
    }

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
    /// [`SIZE_REFRESH`] ago.
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

    /// Reads a key or range at a revision (etcd's `Range`).
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
    /// replicated log feeding committed entries.
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

    /// [`Store::apply`], waiting for the outcome.
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

    pub fn put(&self, req: PutRequest) -> Result<PutResponse> {
        match self.apply_blocking(WriteRequest::Put(req))? {
            WriteResponse::Put(r) => Ok(r),
            other => unreachable!("put answered with {other:?}"),
        }
    }

    pub fn delete_range(&self, req: DeleteRangeRequest) -> Result<DeleteRangeResponse> {
        match self.apply_blocking(WriteRequest::DeleteRange(req))? {
            WriteResponse::DeleteRange(r) => Ok(r),
            other => unreachable!("delete answered with {other:?}"),
        }
    }

    pub fn txn(&self, req: TxnRequest) -> Result<TxnResponse> {
        match self.apply_blocking(WriteRequest::Txn(req))? {
            WriteResponse::Txn(r) => Ok(r),
            other => unreachable!("txn answered with {other:?}"),
        }
    }

    /// Compacts history up to `revision` (etcd's `Compact`).
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
    /// of [`DEFAULT_FEED_BYTES`] (see [`Store::subscribe_within`]).
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

    /// Reads committed history: the changes of revisions `from..` in order, stopping
    /// at a revision boundary once `max_revisions` revisions or about `max_bytes`
    /// of values were read. Fails with [`Error::Compacted`] when `from` is below the
    /// compacted revision.
    pub fn history(
        &self,
        from: i64,
        max_revisions: usize,
        max_bytes: usize,
    ) -> Result<Vec<CommittedRevision>> {
        Ok(self
            .history_chunk(from, max_revisions, max_bytes)?
            .revisions)
    }

    /// [`Store::history`], also telling where the read stopped: every revision
    /// below `next` was covered (a revision with no changes, like a new store's
    /// first, yields nothing).
    pub fn history_chunk(
        &self,
        from: i64,
        max_revisions: usize,
        max_bytes: usize,
    ) -> Result<HistoryChunk> {
        let shared = self.shared();
        let current = shared.committed_rev.load(Ordering::Acquire);
        if from < shared.compact_rev.load(Ordering::Acquire) {
            return Err(Error::Compacted);
        }
        let mut out: Vec<CommittedRevision> = Vec::new();
        let mut bytes = 0usize;
        let mut next = current + 1;
        let mut failure = None;
        let start = Revision::new(from.max(1), 0).to_bytes(false);
        let end = Revision::new(current + 1, 0).to_bytes(false);
        shared
            .backend
            .scan(Table::Kv, &start, Some(&end), &mut |k, v| {
                let Some((rev, tombstone, kv)) = decode_row(k, v) else {
                    failure = Some(Error::Backend(format!(
                        "corrupt key-value entry at key {k:?}"
                    )));
                    return false;
                };
                let new_revision = out.last().is_none_or(|last| last.revision != rev.main);
                if new_revision {
                    if out.len() >= max_revisions || bytes >= max_bytes {
                        next = rev.main;
                        return false;
                    }
                    out.push(CommittedRevision {
                        revision: rev.main,
                        events: Vec::new(),
                        with_prev_kvs: false,
                    });
                }
                bytes += v.len();
                let kind = if tombstone {
                    EventKind::Delete
                } else {
                    EventKind::Put
                };
                out.last_mut()
                    .expect("pushed above")
                    .events
                    .push(Event::new(kind, kv));
                true
            })?;
        if let Some(e) = failure {
            return Err(e);
        }
        // A compaction that started during the scan may have removed rows we needed.
        if from < shared.compact_rev.load(Ordering::Acquire) {
            return Err(Error::Compacted);
        }
        Ok(HistoryChunk {
            revisions: out,
            next,
        })
    }
}

impl Store {
    /// The changes to keys in `[key, range_end)` (etcd's range forms) with
    /// revisions in `from..=to`, in revision order, found through the key index:
    /// the cost follows that range's own history, not the store's write volume.
    pub fn key_changes(
        &self,
        key: &[u8],
        range_end: &[u8],
        from: i64,
        to: i64,
    ) -> Result<Vec<Event>> {
        let shared = self.shared();
        let mut found: Vec<(Revision, Bytes, bool)> = Vec::new();
        {
            let index = shared.index.read();
            if from < shared.compact_rev.load(Ordering::Acquire) {
                return Err(Error::Compacted);
            }
            let to = to.min(shared.committed_rev.load(Ordering::Acquire));
            index.changes(KeyRange::new(key, range_end), from, to, |k, r, del| {
                found.push((r, k.clone(), del))
            });
        }
        found.sort_unstable_by_key(|(r, _, _)| *r);
        let mut events = Vec::with_capacity(found.len());
        for (rev, key, deleted) in found {
            let kv = if deleted {
                KeyValue {
                    key,
                    mod_revision: rev.main,
                    ..Default::default()
                }
            } else {
                shared.load_committed(rev, from)?
            };
            let kind = if deleted {
                EventKind::Delete
            } else {
                EventKind::Put
            };
            events.push(Event::new(kind, kv));
        }
        Ok(events)
    }
}

/// Deletes every row of `table`, in batches.
fn clear_table(backend: &dyn Backend, table: Table) -> Result<()> {
    loop {
        let mut batch = WriteBatch::default();
        backend.scan(table, &[], None, &mut |k, _| {
            batch.delete(table, k.to_vec());
            batch.len() < COMPACTION_BATCH
        })?;
        if batch.is_empty() {
            return Ok(());
        }
        backend.write(batch, false)?;
    }
}

/// The in-memory state rebuilt from a backend's rows and records.
struct Loaded {
    index: TreeIndex,
    leases: LeaseTable,
    alarms: AlarmSet,
    records: RecordTable,
    current: i64,
    scheduled: i64,
    finished: i64,
}

/// Rebuilds the key index, the lease table and the alarms from `backend`
/// (on open, and after a snapshot is installed in place).
fn load_state(backend: &dyn Backend) -> Result<Loaded> {
    let meta = |key: &[u8]| -> Result<i64> {
        Ok(backend
            .get(Table::Meta, key)?
            .and_then(|v| v.try_into().ok().map(i64::from_be_bytes))
            .unwrap_or(0))
    };
    let scheduled = meta(META_SCHEDULED_COMPACT)?;
    let finished = meta(META_FINISHED_COMPACT)?;
    let mut current = meta(META_CURRENT_REV)?.max(1);
    let mut index = TreeIndex::default();
    let mut key_lease: HashMap<Bytes, i64> = HashMap::new();
    let mut bad = None;
    backend.scan(Table::Kv, &[], None, &mut |k, v| {
        let Some((rev, tombstone, kv)) = decode_row(k, v) else {
            bad = Some(k.to_vec());
            return false;
        };
        current = current.max(rev.main);
        // Rows come in revision order, so the last one of a key is its current state.
        if tombstone || kv.lease == 0 {
            key_lease.remove(&kv.key);
        } else {
            key_lease.insert(kv.key.clone(), kv.lease);
        }
        if tombstone {
            index.tombstone(kv.key, rev);
        } else {
            index.put(kv.key, rev, kv.create_revision, kv.version);
        }
        true
    })?;
    if let Some(k) = bad {
        return Err(Error::Backend(format!(
            "corrupt key-value entry at key {k:?}"
        )));
    }
    let mut leases = LeaseTable::default();
    let (from, to) = lease_table::record_range();
    backend.scan(Table::Meta, &from, Some(&to), &mut |k, v| {
        match lease_table::decode_record(k, v) {
            Some((id, ttl)) => leases.grant(id, ttl),
            None => bad = Some(k.to_vec()),
        }
        bad.is_none()
    })?;
    if let Some(k) = bad {
        return Err(Error::Backend(format!("corrupt lease record at key {k:?}")));
    }
    let mut alarms = AlarmSet::default();
    let (from, to) = alarm::record_range();
    backend.scan(Table::Meta, &from, Some(&to), &mut |k, _| {
        match alarm::decode_record(k) {
            Some(a) => {
                alarms.insert(a);
            }
            None => bad = Some(k.to_vec()),
        }
        bad.is_none()
    })?;
    if let Some(k) = bad {
        return Err(Error::Backend(format!("corrupt alarm record at key {k:?}")));
    }
    let mut records = RecordTable::default();
    let (from, to) = records::record_range();
    backend.scan(Table::Meta, &from, Some(&to), &mut |k, v| {
        match records::decode_record_key(k) {
            Some((bucket, key)) => records.put(bucket, key, Bytes::copy_from_slice(v)),
            None => bad = Some(k.to_vec()),
        }
        bad.is_none()
    })?;
    if let Some(k) = bad {
        return Err(Error::Backend(format!("corrupt record at key {k:?}")));
    }
    for (key, lease) in &key_lease {
        leases.attach(key, *lease);
    }
    Ok(Loaded {
        index,
        leases,
        alarms,
        records,
        current,
        scheduled,
        finished,
    })
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

/// A consistent image of a whole store, for snapshots: the raw `kv` rows (in
/// etcd's encoding: revision bytes → `mvccpb.KeyValue`), the leases, the
/// alarms, and the revisions that frame them.
pub struct StoreImage<'a> {
    view: &'a dyn BackendView,
}

impl StoreImage<'_> {
    fn meta_i64(&self, key: &[u8]) -> Result<i64> {
        Ok(self
            .view
            .get(Table::Meta, key)?
            .and_then(|v| v.try_into().ok().map(i64::from_be_bytes))
            .unwrap_or(0))
    }

    /// The replicated log's position recorded with the image's newest changes.
    pub fn log_position(&self) -> Result<Option<Vec<u8>>> {
        self.view.get(Table::Meta, META_LOG_POSITION)
    }

    /// The newest revision the image holds (written with every commit group,
    /// so it is the image's own).
    pub fn revision(&self) -> Result<i64> {
        Ok(self.meta_i64(META_CURRENT_REV)?.max(1))
    }

    /// Compaction requested up to this revision (rows below it may remain
    /// until the compaction finishes).
    pub fn scheduled_compact_revision(&self) -> Result<i64> {
        self.meta_i64(META_SCHEDULED_COMPACT)
    }

    /// Compaction physically finished up to this revision.
    pub fn finished_compact_revision(&self) -> Result<i64> {
        self.meta_i64(META_FINISHED_COMPACT)
    }

    /// Each `kv` row in revision order: backend key (etcd's 17-byte revision,
    /// plus `t` for a tombstone) and the encoded `mvccpb.KeyValue`. Tombstones
    /// are given as etcd writes them (the key only), whatever the version of
    /// Hark that stored them. `visit` returns `false` to stop.
    pub fn for_each_row(&self, visit: &mut dyn FnMut(&[u8], &[u8]) -> bool) -> Result<()> {
        let mut failure = None;
        self.view.scan(Table::Kv, &[], None, &mut |k, v| {
            let Some((_, tombstone, kv)) = decode_row(k, v) else {
                failure = Some(Error::Backend(format!(
                    "corrupt key-value entry at key {k:?}"
                )));
                return false;
            };
            if tombstone {
                // Older Hark tombstones also held their mod_revision.
                return visit(k, &tombstone_row_value(kv.key));
            }
            visit(k, v)
        })?;
        failure.map_or(Ok(()), Err)
    }

    /// Every lease as `(id, granted TTL)`, by id.
    pub fn leases(&self) -> Result<Vec<(i64, i64)>> {
        let mut out = Vec::new();
        let (from, to) = lease_table::record_range();
        self.view.scan(Table::Meta, &from, Some(&to), &mut |k, v| {
            out.extend(lease_table::decode_record(k, v));
            true
        })?;
        out.sort_unstable();
        Ok(out)
    }

    /// Every record as `(bucket, key, value)`, by bucket then key.
    pub fn records(&self) -> Result<Vec<(String, Bytes, Bytes)>> {
        let mut out = Vec::new();
        let (from, to) = records::record_range();
        self.view.scan(Table::Meta, &from, Some(&to), &mut |k, v| {
            if let Some((bucket, key)) = records::decode_record_key(k) {
                out.push((bucket, key, Bytes::copy_from_slice(v)));
            }
            true
        })?;
        Ok(out)
    }

    /// The raised alarms.
    pub fn alarms(&self) -> Result<Vec<Alarm>> {
        let mut out = Vec::new();
        let (from, to) = alarm::record_range();
        self.view.scan(Table::Meta, &from, Some(&to), &mut |k, _| {
            out.extend(alarm::decode_record(k));
            true
        })?;
        Ok(out)
    }
}

/// A piece of history: the changed revisions read, and the first revision not
/// covered by the read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistoryChunk {
    pub revisions: Vec<CommittedRevision>,
    pub next: i64,
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

    /// The value stored at `rev`, for a read at revision `read_at`: if it is gone,
    /// a compaction past `read_at` removed it after the index was consulted.
    fn load_committed(&self, rev: Revision, read_at: i64) -> Result<KeyValue> {
        match load_kv(self.backend.as_ref(), &HashMap::new(), rev)? {
            Some(kv) => Ok(kv),
            None if read_at < self.compact_rev.load(Ordering::Acquire) => Err(Error::Compacted),
            None => Err(missing_value(rev)),
        }
    }

    fn record_gauges(&self) {
        metrics::gauge!("etcd_debugging_mvcc_current_revision")
            .set(self.committed_rev.load(Ordering::Relaxed) as f64);
        metrics::gauge!("etcd_debugging_mvcc_compact_revision")
            .set(self.compact_rev.load(Ordering::Relaxed) as f64);
        metrics::gauge!("etcd_debugging_mvcc_keys_total").set(self.index.read().len() as f64);
    }

    /// Removes every stored revision `<= at` that is not in `keep`, in batches, then
    /// records the compaction as finished. Safe to repeat after a crash.
    fn delete_compacted(&self, at: i64, keep: &std::collections::HashSet<Revision>) -> Result<()> {
        let end = Revision::new(at + 1, 0).to_bytes(false);
        let mut from = Vec::new();
        loop {
            let mut batch = WriteBatch::default();
            let mut next = None;
            self.backend
                .scan(Table::Kv, &from, Some(&end), &mut |k, _| {
                    if batch.len() >= COMPACTION_BATCH {
                        next = Some(k.to_vec());
                        return false;
                    }
                    if let Some((rev, _)) = Revision::from_bytes(k)
                        && !keep.contains(&rev)
                    {
                        batch.delete(Table::Kv, k.to_vec());
                    }
                    true
                })?;
            if !batch.is_empty() {
                self.backend.write(batch, false)?;
            }
            match next {
                Some(k) => from = k,
                None => break,
            }
        }
        let mut done = WriteBatch::default();
        done.put(
            Table::Meta,
            META_FINISHED_COMPACT.to_vec(),
            at.to_be_bytes().to_vec(),
        );
        self.backend.write(done, true)?;
        self.measure_sizes(true);
        Ok(())
    }
}

/// A compaction whose index part is done, waiting for its physical part.
struct Compaction {
    /// The store's generation when planned ([`Store::install`] voids it).
    generation: u64,
    at: i64,
    keep: std::collections::HashSet<Revision>,
    /// Set for `physical` requests: answered once the rows are gone.
    done: Option<(JobDone, CompactResponse)>,
}

fn run_compactor(shared: Arc<Shared>, rx: Receiver<Compaction>) {
    for c in rx {
        let outcome = {
            let _compacting = shared.compacting.lock();
            if shared.generation.load(Ordering::Acquire) == c.generation {
                shared.delete_compacted(c.at, &c.keep)
            } else {
                Ok(()) // the store was replaced since
            }
        };
        if let Err(e) = &outcome {
            tracing::error!(revision = c.at, error = %e, "physical compaction failed; it resumes on reopen");
        }
        if let Some((done, resp)) = c.done {
            done(Some(outcome.map(|()| WriteResponse::Compact(resp))));
        }
    }
}

/// What applying one request produced, to act on once the group is durable.
enum Outcome {
    Ready(Result<WriteResponse>, Option<Arc<CommittedRevision>>),
    /// A job without a request (a barrier, or a log entry for another layer).
    Nothing,
    Compact {
        request: CompactRequest,
        header_revision: i64,
    },
}

/// Owns the write side: applies requests in arrival order, one group per backend write.
struct Committer {
    shared: Arc<Shared>,
    compactions: Sender<Compaction>,
    /// Newest revision applied, durable or not.
    applied_rev: i64,
    /// Newest compaction revision accepted, durable or not.
    compact_target: i64,
}

impl Committer {
    fn new(shared: Arc<Shared>, compactions: Sender<Compaction>) -> Self {
        let applied_rev = shared.committed_rev.load(Ordering::Acquire);
        let compact_target = shared.compact_rev.load(Ordering::Acquire);
        Committer {
            shared,
            compactions,
            applied_rev,
            compact_target,
        }
    }

    fn run(mut self, jobs: Receiver<Job>) {
        let is_install = |job: &Job| matches!(job.parts.first(), Some((Work::Install(_), _)));
        let mut next = None;
        loop {
            let first = match next.take() {
                Some(job) => job,
                None => match jobs.recv() {
                    Ok(job) => job,
                    Err(_) => return,
                },
            };
            if is_install(&first) {
                self.install(first);
                continue;
            }
            let mut group = vec![first];
            while group.len() < self.shared.options.max_group {
                match jobs.try_recv() {
                    // An install runs alone, after the group before it.
                    Ok(job) if is_install(&job) => {
                        next = Some(job);
                        break;
                    }
                    Ok(job) => group.push(job),
                    Err(_) => break,
                }
            }
            self.commit_group(group);
        }
    }

    /// [`Store::install`]: clears both tables, copies the source's image,
    /// rebuilds the in-memory state from it and tells subscribers.
    fn install(&mut self, job: Job) {
        metrics::gauge!("etcd_server_proposals_pending").decrement(1.0);
        self.shared.queued_jobs.fetch_sub(1, Ordering::AcqRel);
        let Job {
            mut parts,
            position,
        } = job;
        let (Work::Install(source), done) = parts.remove(0) else {
            unreachable!("install jobs hold an install")
        };
        let before = self.applied_rev;
        let result = self.replace_contents(&source, position.unwrap_or_default());
        drop(source);
        if let Err(e) = &result {
            tracing::error!(error = %e, "installing a snapshot failed; the store stops taking writes");
            self.shared.failed.store(true, Ordering::Release);
        } else {
            let mut subs = self.shared.subscribers.lock();
            self.shared
                .committed_rev
                .store(self.applied_rev, Ordering::Release);
            if self.applied_rev > before {
                let jump = Arc::new(CommittedRevision {
                    revision: self.applied_rev,
                    events: Vec::new(),
                    with_prev_kvs: false,
                });
                subs.retain(|s| s.offer(&jump));
            }
        }
        self.shared.record_gauges();
        done(result.err().map(Err));
    }

    fn replace_contents(&mut self, source: &Store, position: Vec<u8>) -> Result<()> {
        let shared = self.shared.clone();
        // No physical compaction runs meanwhile, and none planned before runs after.
        let _compacting = shared.compacting.lock();
        shared.generation.fetch_add(1, Ordering::AcqRel);
        let mut index = shared.index.write();
        let mut leases = shared.leases.lock();
        let mut alarms = shared.alarms.lock();
        let backend = shared.backend.as_ref();
        for table in Table::ALL {
            clear_table(backend, table)?;
        }
        source.read_image(&mut |image| {
            let mut batch = WriteBatch::default();
            let mut failed = None;
            image.for_each_row(&mut |k, v| {
                batch.put(Table::Kv, k.to_vec(), v.to_vec());
                if batch.len() >= COMPACTION_BATCH
                    && let Err(e) = backend.write(std::mem::take(&mut batch), false)
                {
                    failed = Some(e);
                    return false;
                }
                true
            })?;
            if let Some(e) = failed {
                return Err(e);
            }
            for (id, ttl) in image.leases()? {
                batch.put(
                    Table::Meta,
                    lease_table::record_key(id),
                    ttl.to_be_bytes().to_vec(),
                );
            }
            for a in image.alarms()? {
                batch.put(Table::Meta, alarm::record_key(a), Vec::new());
            }
            for (bucket, key, value) in image.records()? {
                batch.put(
                    Table::Meta,
                    records::record_key(&bucket, &key),
                    value.to_vec(),
                );
            }
            let meta = |v: i64| v.to_be_bytes().to_vec();
            batch.put(
                Table::Meta,
                META_CURRENT_REV.to_vec(),
                meta(image.revision()?),
            );
            let (scheduled, finished) = (
                image.scheduled_compact_revision()?,
                image.finished_compact_revision()?,
            );
            if scheduled > 0 {
                batch.put(
                    Table::Meta,
                    META_SCHEDULED_COMPACT.to_vec(),
                    meta(scheduled),
                );
                batch.put(Table::Meta, META_FINISHED_COMPACT.to_vec(), meta(finished));
            }
            batch.put(Table::Meta, META_LOG_POSITION.to_vec(), position.clone());
            backend.write(batch, true)
        })?;
        let loaded = load_state(backend)?;
        *index = loaded.index;
        *leases = loaded.leases;
        shared
            .nospace
            .store(loaded.alarms.any(AlarmKind::NoSpace), Ordering::Release);
        shared
            .corrupt
            .store(loaded.alarms.any(AlarmKind::Corrupt), Ordering::Release);
        *alarms = loaded.alarms;
        *shared.records.write() = loaded.records;
        shared.records_generation.fetch_add(1, Ordering::AcqRel);
        shared
            .compact_rev
            .store(loaded.scheduled, Ordering::Release);
        self.applied_rev = loaded.current;
        self.compact_target = loaded.scheduled;
        drop((index, leases, alarms));
        shared.measure_sizes(true);
        Ok(())
    }

    /// Applies a group of requests in one backend write. In etcd's terms each
    /// request is a proposal, committed and applied here (the names a
    /// replicated log will keep): `etcd_server_proposals_*`.
    fn commit_group(&mut self, group: Vec<Job>) {
        let size = group.len() as u64;
        metrics::gauge!("etcd_server_proposals_pending").decrement(size as f64);
        self.shared
            .queued_jobs
            .fetch_sub(group.len(), Ordering::AcqRel);
        if self.shared.failed.load(Ordering::Acquire) {
            metrics::counter!("etcd_server_proposals_failed_total").increment(size);
            for (_, done) in group.into_iter().flat_map(|j| j.parts) {
                done(Some(Err(Error::Closed)));
            }
            return;
        }
        let mut batch = WriteBatch::default();
        let mut overlay = HashMap::new();
        let mut outcomes = Vec::with_capacity(group.len());
        let mut dones = Vec::with_capacity(group.len());
        let mut position = None;
        for job in group {
            for (work, done) in job.parts {
                outcomes.push(match work {
                    Work::Request(req) => self.apply_one(req, &mut batch, &mut overlay),
                    Work::Refused(e) => Outcome::Ready(Err(e), None),
                    Work::Nothing => Outcome::Nothing,
                    Work::Install(_) => unreachable!("an install runs alone"),
                });
                dones.push(done);
            }
            position = job.position.or(position);
        }
        if let Some(p) = position {
            // A backend failure while applying a logged entry must not be
            // recorded as applied: a restart re-applies it from the log.
            if let Some(e) = outcomes.iter().find_map(|o| match o {
                Outcome::Ready(Err(e @ Error::Backend(_)), _) => Some(e.clone()),
                _ => None,
            }) {
                tracing::error!(error = %e, "applying a logged entry failed; the store stops taking writes");
                metrics::counter!("etcd_server_proposals_failed_total").increment(size);
                self.shared.failed.store(true, Ordering::Release);
                for done in dones {
                    done(Some(Err(e.clone())));
                }
                return;
            }
            batch.put(Table::Meta, META_LOG_POSITION.to_vec(), p);
        }
        let applied = self.shared.proposals.fetch_add(size, Ordering::Relaxed) + size;
        if batch.is_empty() {
            // Only reads, failures or no-op deletes: nothing to make durable.
            metrics::gauge!("etcd_server_proposals_committed_total").set(applied as f64);
            metrics::gauge!("etcd_server_proposals_applied_total").set(applied as f64);
            return self.finish(outcomes, dones);
        }
        batch.put(
            Table::Meta,
            META_CURRENT_REV.to_vec(),
            self.applied_rev.to_be_bytes().to_vec(),
        );
        // Under a replicated log, the log's fsync is the durability point and a
        // restart re-applies what follows the recorded position: no second sync.
        let started = Instant::now();
        let written = self.shared.backend.write(batch, self.shared.options.sync);
        // One synced write is both etcd's WAL fsync and its backend commit:
        // RocksDB's write-ahead log is the store's durability point.
        let took = started.elapsed().as_secs_f64();
        metrics::histogram!("etcd_disk_backend_commit_duration_seconds").record(took);
        if self.shared.options.sync {
            metrics::histogram!("etcd_disk_wal_fsync_duration_seconds").record(took);
        }
        match written {
            Ok(()) => {
                metrics::gauge!("etcd_server_proposals_committed_total").set(applied as f64);
                metrics::gauge!("etcd_server_proposals_applied_total").set(applied as f64);
                self.finish(outcomes, dones)
            }
            Err(e) => {
                tracing::error!(error = %e, "backend write failed; the store stops taking writes");
                metrics::counter!("etcd_server_proposals_failed_total").increment(size);
                self.shared.failed.store(true, Ordering::Release);
                for done in dones {
                    done(Some(Err(e.clone())));
                }
            }
        }
    }

    fn apply_one(
        &mut self,
        req: WriteRequest,
        batch: &mut WriteBatch,
        overlay: &mut HashMap<Revision, KeyValue>,
    ) -> Outcome {
        if let Some(refusal) = self.refused_by_alarm(req.unguarded()) {
            return Outcome::Ready(Err(refusal), None);
        }
        let mut req = req;
        while let WriteRequest::Guarded(guard, inner) = req {
            if !self.shared.records.read().holds(&guard) {
                return Outcome::Ready(Err(Error::GuardFailed), None);
            }
            req = *inner;
        }
        if let WriteRequest::Records(r) = req {
            return self.apply_records(r, batch);
        }
        if let WriteRequest::Alarm(a) = req {
            return self.apply_alarm(a, batch);
        }
        if let WriteRequest::Compact(c) = req {
            return self.accept_compaction(c, batch);
        }
        let mut index = self.shared.index.write();
        let mut leases = self.shared.leases.lock();
        if let WriteRequest::LeaseGrant(g) = req {
            if leases.contains(g.id) {
                return Outcome::Ready(Err(Error::LeaseExists), None);
            }
            leases.grant(g.id, g.ttl);
            batch.put(
                Table::Meta,
                lease_table::record_key(g.id),
                g.ttl.to_be_bytes().to_vec(),
            );
            let resp = LeaseGrantResponse {
                header_revision: self.applied_rev,
            };
            return Outcome::Ready(Ok(WriteResponse::LeaseGrant(resp)), None);
        }
        // Read once per request, so every event of a revision agrees.
        let with_prev_kvs = self.shared.prev_kv_interest.load(Ordering::Acquire) > 0;
        let mut writer = TxnWriter {
            index: &mut index,
            backend: self.shared.backend.as_ref(),
            overlay,
            batch,
            leases: &mut leases,
            base_rev: self.applied_rev,
            compact_rev: self.compact_target,
            changes: 0,
            events: Vec::new(),
            with_prev_kvs,
        };
        let result = match req {
            WriteRequest::Put(p) => writer.apply_put(&p).map(WriteResponse::Put),
            WriteRequest::DeleteRange(d) => writer.delete_range(&d).map(WriteResponse::DeleteRange),
            WriteRequest::Txn(t) => {
                metrics::counter!("etcd_mvcc_txn_total").increment(1);
                writer.apply_txn(&t).map(WriteResponse::Txn)
            }
            WriteRequest::LeaseRevoke(r) => {
                writer.revoke_lease(r.id).map(WriteResponse::LeaseRevoke)
            }
            WriteRequest::Compact(_)
            | WriteRequest::LeaseGrant(_)
            | WriteRequest::Alarm(_)
            | WriteRequest::Records(_)
            | WriteRequest::Guarded(..) => {
                unreachable!("handled above")
            }
        };
        let events = std::mem::take(&mut writer.events);
        if events.is_empty() {
            return Outcome::Ready(result, None);
        }
        self.applied_rev += 1;
        let puts = events.iter().filter(|e| e.kind == EventKind::Put).count() as u64;
        metrics::counter!("etcd_mvcc_put_total").increment(puts);
        metrics::counter!("etcd_mvcc_delete_total").increment(events.len() as u64 - puts);
        let committed = Arc::new(CommittedRevision {
            revision: self.applied_rev,
            events,
            with_prev_kvs,
        });
        Outcome::Ready(result, Some(committed))
    }

    /// etcd's capped and corrupt appliers: with NOSPACE raised, what can grow
    /// the store fails; with CORRUPT raised, everything but alarms does.
    fn refused_by_alarm(&self, req: &WriteRequest) -> Option<Error> {
        if matches!(req, WriteRequest::Alarm(_)) {
            return None;
        }
        // etcd serves read-only txns outside its applier, so CORRUPT lets them by.
        let read_only = matches!(req, WriteRequest::Txn(t) if txn_is_read_only(t));
        if self.shared.corrupt.load(Ordering::Acquire) && !read_only {
            return Some(Error::Corrupt);
        }
        let grows = match req {
            WriteRequest::Put(_) | WriteRequest::LeaseGrant(_) => true,
            WriteRequest::Txn(t) => txn_has_put(t),
            _ => false,
        };
        (grows && self.shared.nospace.load(Ordering::Acquire)).then_some(Error::NoSpace)
    }

    fn apply_alarm(&mut self, req: AlarmRequest, batch: &mut WriteBatch) -> Outcome {
        let mut alarms = self.shared.alarms.lock();
        let listed = match (req.action, req.kind) {
            (AlarmAction::Get, kind) => alarms.list(kind),
            (AlarmAction::Activate, None) => Vec::new(),
            (AlarmAction::Activate, Some(kind)) => {
                let raised = Alarm {
                    member_id: req.member_id,
                    kind,
                };
                if alarms.insert(raised) {
                    tracing::warn!(member = req.member_id, alarm = kind.name(), "alarm raised");
                    batch.put(Table::Meta, alarm::record_key(raised), Vec::new());
                }
                vec![raised]
            }
            (AlarmAction::Deactivate, kind) => {
                let cleared = alarms.matching(req.member_id, kind);
                for a in &cleared {
                    tracing::info!(member = a.member_id, alarm = a.kind.name(), "alarm cleared");
                    alarms.remove(a);
                    batch.delete(Table::Meta, alarm::record_key(*a));
                }
                cleared
            }
        };
        self.shared
            .nospace
            .store(alarms.any(AlarmKind::NoSpace), Ordering::Release);
        self.shared
            .corrupt
            .store(alarms.any(AlarmKind::Corrupt), Ordering::Release);
        let resp = AlarmResponse {
            header_revision: self.applied_rev,
            alarms: listed,
        };
        Outcome::Ready(Ok(WriteResponse::Alarm(resp)), None)
    }

    /// Applies a records change if its guards hold. Readers see it before it
    /// is durable (unlike revisions): records are rare, and a backend write
    /// that fails stops the store, so nothing is served from a state that a
    /// restart would lose without the writer having been told it failed.
    fn apply_records(&mut self, req: RecordsRequest, batch: &mut WriteBatch) -> Outcome {
        let mut table = self.shared.records.write();
        let applied = req.guards.iter().all(|g| table.holds(g));
        if applied {
            for change in req.changes {
                match change {
                    RecordChange::Put { bucket, key, value } => {
                        batch.put(
                            Table::Meta,
                            records::record_key(&bucket, &key),
                            value.to_vec(),
                        );
                        table.put(bucket, key, value);
                    }
                    RecordChange::Delete { bucket, key } => {
                        batch.delete(Table::Meta, records::record_key(&bucket, &key));
                        table.delete(&bucket, &key);
                    }
                }
            }
            self.shared
                .records_generation
                .fetch_add(1, Ordering::AcqRel);
        }
        let resp = RecordsResponse {
            header_revision: self.applied_rev,
            applied,
        };
        Outcome::Ready(Ok(WriteResponse::Records(resp)), None)
    }

    fn accept_compaction(&mut self, request: CompactRequest, batch: &mut WriteBatch) -> Outcome {
        if request.revision <= self.compact_target {
            return Outcome::Ready(Err(Error::Compacted), None);
        }
        if request.revision > self.applied_rev {
            return Outcome::Ready(Err(Error::FutureRevision), None);
        }
        self.compact_target = request.revision;
        batch.put(
            Table::Meta,
            META_SCHEDULED_COMPACT.to_vec(),
            request.revision.to_be_bytes().to_vec(),
        );
        Outcome::Compact {
            request,
            header_revision: self.applied_rev,
        }
    }

    /// The group is durable: make it visible, publish it, answer the callers.
    fn finish(&mut self, outcomes: Vec<Outcome>, dones: Vec<JobDone>) {
        {
            let mut subs = self.shared.subscribers.lock();
            self.shared
                .committed_rev
                .store(self.applied_rev, Ordering::Release);
            for outcome in &outcomes {
                if let Outcome::Ready(_, Some(committed)) = outcome {
                    subs.retain(|s| s.offer(committed));
                }
            }
        }
        for (outcome, done) in outcomes.into_iter().zip(dones) {
            match outcome {
                Outcome::Ready(result, _) => done(Some(result)),
                Outcome::Nothing => done(None),
                Outcome::Compact {
                    request,
                    header_revision,
                } => {
                    self.start_compaction(request, header_revision, done);
                }
            }
        }
        self.shared.record_gauges();
    }

    fn start_compaction(&mut self, request: CompactRequest, header_revision: i64, done: JobDone) {
        let at = request.revision;
        // Raise the bar before touching the index; readers check it under the index lock.
        self.shared.compact_rev.store(at, Ordering::Release);
        let keep = self.shared.index.write().compact(at);
        let resp = CompactResponse { header_revision };
        let done = if request.physical {
            Some((done, resp))
        } else {
            done(Some(Ok(WriteResponse::Compact(resp))));
            None
        };
        if let Err(crossbeam_channel::SendError(c)) = self.compactions.send(Compaction {
            generation: self.shared.generation.load(Ordering::Acquire),
            at,
            keep,
            done,
        }) && let Some((done, _)) = c.done
        {
            done(Some(Err(Error::Closed)));
        }
    }
}

/// Whether a txn holds a put in either branch, at any depth (etcd's quota
/// counts a txn's larger branch, so a put anywhere makes it cost space).
fn txn_has_put(t: &crate::request::TxnRequest) -> bool {
    t.success.iter().chain(&t.failure).any(|op| match op {
        crate::request::RequestOp::Put(_) => true,
        crate::request::RequestOp::Txn(inner) => txn_has_put(inner),
        _ => false,
    })
}

/// Whether a txn only reads, in both branches and at any depth.
fn txn_is_read_only(t: &crate::request::TxnRequest) -> bool {
    t.success.iter().chain(&t.failure).all(|op| match op {
        crate::request::RequestOp::Range(_) => true,
        crate::request::RequestOp::Txn(inner) => txn_is_read_only(inner),
        _ => false,
    })
}
