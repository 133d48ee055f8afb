//! The store: reads from any thread; every change goes through one committer
//! thread (the apply seam), which batches concurrent requests into one backend
//! write with one sync (group commit), then publishes what changed.
//!
//! Rooms: `shared.rs` (the state readers, the committer and the compactor
//! share; the committer's jobs), `open.rs` (opening a store), `load.rs`
//! (rebuilding the in-memory state from the backend, on open and install),
//! `checkpoint.rs` (the key index's checkpoint, so a large store opens
//! without reading every row), `committer.rs` (the apply seam), `compactor.rs`, `history.rs` (history
//! reads for watchers), `image.rs` (whole-store views for snapshots),
//! `maintenance.rs` (sizes, defragmentation, hashes). This file holds the
//! store's handle and its read and write API.

mod checkpoint;
#[cfg(all(test, any(feature = "rocksdb", feature = "fjall")))]
mod checkpoint_check;
mod committer;
mod compactor;
pub(crate) mod history;
pub(crate) mod image;
mod load;
pub(crate) mod maintenance;
mod open;
pub(crate) mod range_stream;
pub(crate) mod shared;
#[cfg(test)]
mod usage_check;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::thread::JoinHandle;

use bytes::Bytes;
use crossbeam_channel::Sender;
use parking_lot::Mutex;

use crate::alarm::{Alarm, AlarmRequest, AlarmResponse};
use crate::backend::Table;
use crate::error::{Error, Result};
use crate::feed::{self, DEFAULT_FEED_BYTES, Feed};
use crate::layout::META_LOG_POSITION;
use crate::read_plan::{RangePlan, finish_range, finish_range_encoded, plan_range};
use crate::request::{
    CompactRequest, CompactResponse, DeleteRangeRequest, DeleteRangeResponse, EncodedRangeResponse,
    LeaseGrantRequest, LeaseGrantResponse, LeaseRevokeRequest, LeaseRevokeResponse, PutRequest,
    PutResponse, RangeRequest, RangeResponse, TxnRequest, TxnResponse, WriteRequest, WriteResponse,
};
use crate::usage::PrefixStat;
use crate::validate;
use committer::Committer;
use shared::{Done, Job, JobDone, LoggedDone, PrevKvInterest, Shared, Work};

/// Requests [`Store::apply`] lets wait for the committer before refusing
/// more with [`Error::TooManyRequests`] (etcd's limit on proposals its apply
/// has not caught up with is 5000 entries).
pub const MAX_QUEUED_REQUESTS: usize = 5000;

/// A revisioned key-value store with etcd's semantics. Cheap to clone; the last
/// clone dropped stops the background threads and closes the backend.
#[derive(Clone)]
pub struct Store {
    inner: Arc<StoreInner>,
}

/// Tells whether a store's backend has closed: clones may outlive the one a
/// caller drops (in tasks still finishing), and reopening the same directory
/// must wait for the last of them.
pub struct BackendClosed(Arc<std::sync::atomic::AtomicBool>);

impl BackendClosed {
    /// Whether every clone of the store is gone and its backend closed.
    pub fn is_closed(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}

struct StoreInner {
    shared: Arc<Shared>,
    jobs: Option<Sender<Job>>,
    /// The write side, shared by the committer thread and (with
    /// `commit_on_caller`) submitting threads. Let go of before the threads
    /// are joined: the compactor stops once the committer is dropped.
    committer: Option<Arc<Mutex<Committer>>>,
    threads: Vec<JoinHandle<()>>,
}

impl Drop for StoreInner {
    fn drop(&mut self) {
        self.jobs.take();
        self.committer.take();
        // A compaction pausing between batches stops now.
        self.shared.closing.raise();
        self.shared.checkpoint_due.nudge();
        // The last handle can go on a store thread itself (a write's
        // callback holding a clone): then no thread is joined. That thread
        // ends on its own once this returns, and the compactor once the
        // committer it waits on lets go of its channel; joining either from
        // here would wait for ever.
        let me = std::thread::current().id();
        if self.threads.iter().any(|t| t.thread().id() == me) {
            self.threads.clear();
            return;
        }
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
    /// Writes the key index's checkpoint now (a store on disk also writes
    /// one every minute while revisions go on, and after each compaction),
    /// so the next open reads it and the rows after it rather than every
    /// row. Its revision, or `None` when none could be taken now (a
    /// compaction under way, an install, no directory: an in-memory store).
    pub fn checkpoint_index(&self) -> Result<Option<i64>> {
        match (&self.shared().checkpoint_dir, &self.inner.committer) {
            (Some(dir), Some(committer)) => checkpoint::write_now(self.shared(), committer, dir),
            _ => Ok(None),
        }
    }

    /// Calls `done` once a compaction at `revision` or later has finished
    /// deleting rows on this store (at once if one has; never if the store
    /// closes first). A replicated log answers a physical compaction with
    /// it, after its own apply and outside the request's time-out, as etcd
    /// waits for its own.
    pub fn when_compacted(&self, revision: i64, done: impl FnOnce() + Send + 'static) {
        let mut finished = self.shared().finished_compaction.lock();
        if finished.0 >= revision {
            drop(finished);
            done();
        } else {
            finished.1.push((revision, Box::new(done)));
        }
    }

    /// Whether this store was opened from its key index's checkpoint: its
    /// revision, or `None` if it read every row.
    pub fn opened_from_checkpoint(&self) -> Option<i64> {
        self.shared().opened_from_checkpoint
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

    /// Hands every [`Announcement`](crate::Announcement) of `topic` this
    /// store applies, in log order, to `listener` (replacing an earlier
    /// one of the topic). Announcements applied before it is set, or of a
    /// topic nobody listens to, are dropped.
    pub fn listen(&self, topic: &str, listener: crate::announce::Listener) {
        self.shared()
            .listeners
            .write()
            .insert(topic.to_owned(), listener);
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

    /// Number of keys the index holds (live keys and retained tombstones).
    pub fn key_count(&self) -> usize {
        self.shared().index.read().len()
    }

    /// Keys that exist at the current revision (etcd's
    /// `etcd_debugging_mvcc_keys_total`).
    pub fn live_key_count(&self) -> usize {
        self.shared().index.read().live_len()
    }

    /// Space per prefix (`du`): `prefix` (empty, or ending with `/`, at
    /// most [`crate::StoreOptions::usage_depth`] deep), then the tracked prefixes
    /// under it at most `levels` deeper, in key order. Kept by every durable
    /// write and compaction, so this reads counters, not keys; history
    /// counts rows until physical compaction has deleted them. The flag
    /// says whether entries past [`crate::MAX_DU_ENTRIES`] were left out.
    pub fn prefix_usage(&self, prefix: &[u8], levels: usize) -> Result<(Vec<PrefixStat>, bool)> {
        self.shared().usage.lock().du(prefix, levels)
    }

    /// The `n` prefixes with the most bytes (history included) at each
    /// tracked depth (see [`crate::PrefixUsage::top`]).
    pub fn largest_prefixes(&self, n: usize) -> Vec<PrefixStat> {
        self.shared().usage.lock().top(n)
    }

    /// How many `/` deep space per prefix is kept.
    pub fn usage_depth(&self) -> usize {
        self.shared().options.usage_depth
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
        let open = OpenRead::start();
        let ranged = shared.outside_installs(|| self.range_once(req));
        open.finish(ranged.is_ok());
        ranged
    }

    /// [`Store::range`] with each key-value in its `mvccpb.KeyValue`
    /// encoding, straight from the stored row: a transport writes the
    /// answer holding it once, not decoded and then encoded again.
    pub fn range_encoded(&self, req: &RangeRequest) -> Result<EncodedRangeResponse> {
        validate::check_range(req)?;
        let shared = self.shared();
        let open = OpenRead::start();
        let ranged = shared.outside_installs(|| {
            let (plan, current, at) = self.plan_read(req)?;
            let mut resp =
                finish_range_encoded(plan, req, |revs| shared.load_committed_rows(revs, at))?;
            resp.header_revision = current;
            metrics::counter!("etcd_mvcc_range_total").increment(1);
            Ok(resp)
        });
        open.finish(ranged.is_ok());
        ranged
    }

    fn range_once(&self, req: &RangeRequest) -> Result<RangeResponse> {
        let shared = self.shared();
        let (plan, current, at) = self.plan_read(req)?;
        let mut resp = finish_range(plan, req, |rev| shared.load_committed(rev, at))?;
        resp.header_revision = current;
        metrics::counter!("etcd_mvcc_range_total").increment(1);
        Ok(resp)
    }

    /// The keys a read selects, with the current revision and the one read at.
    fn plan_read(&self, req: &RangeRequest) -> Result<(RangePlan, i64, i64)> {
        let shared = self.shared();
        Ok({
            // Checked under the index lock: compaction changes the index only after
            // raising `compact_rev`, so a read that passes here sees a valid index.
            let index = shared.index.read();
            let (current, at) = self.read_revisions(req.revision)?;
            (plan_range(&index, req, at), current, at)
        })
    }

    /// The current revision and the one a read of `revision` reads at (the
    /// current one for `<= 0`): refused if that is in the future or has
    /// been compacted.
    pub(crate) fn read_revisions(&self, revision: i64) -> Result<(i64, i64)> {
        let shared = self.shared();
        let current = shared.committed_rev.load(Ordering::Acquire);
        let at = if revision > 0 { revision } else { current };
        if at > current {
            return Err(Error::FutureRevision);
        }
        if at < shared.compact_rev.load(Ordering::Acquire) {
            return Err(Error::Compacted);
        }
        Ok((current, at))
    }

    /// Submits a change; `done` is called once it is durable (or failed). Never
    /// blocks on the committer: this is the entry point for async callers and for a
    /// replicated log feeding committed entries. (With
    /// [`StoreOptions::commit_on_caller`](crate::StoreOptions::commit_on_caller) the change may be applied on this
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
        let parts: Vec<(Work, JobDone)> = requests
            .into_iter()
            .map(|(req, done)| {
                let work = match req {
                    None => Work::Nothing,
                    // Only what the entry itself decides: the txn op limit
                    // is each member's own flag, checked by the member that
                    // took the request. Checked here too, members with
                    // different limits would apply different logs.
                    Some(req) => match if crate::chaos::mutation("limits-at-apply") {
                        validate::check_write(&req, self.shared().options.max_txn_ops)
                    } else {
                        validate::check_logged(&req)
                    } {
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
        let image = source.inner.shared.clone();
        self.submit(Job {
            parts: vec![(
                Work::Install(image),
                Box::new(move |r| {
                    // The source's threads end on the committer's thread,
                    // once its image has been copied.
                    drop(source);
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
        self.shared().queued_jobs.fetch_add(1, Ordering::AcqRel);
        if let Err(crossbeam_channel::SendError(job)) = jobs.send(job) {
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

/// A range being read: counted in `etcd_mvcc_db_open_read_transactions`
/// while it lives (etcd's open read transactions), and timed into
/// `etcd_server_range_duration_seconds{success}` when it finishes.
struct OpenRead {
    started: std::time::Instant,
}

impl OpenRead {
    fn start() -> OpenRead {
        metrics::gauge!("etcd_mvcc_db_open_read_transactions").increment(1.0);
        OpenRead {
            started: std::time::Instant::now(),
        }
    }

    fn finish(self, success: bool) {
        let took = self.started.elapsed().as_secs_f64();
        // Literal labels: the key is built without allocating, on every read.
        if success {
            metrics::histogram!("etcd_server_range_duration_seconds", "success" => "true")
                .record(took);
        } else {
            metrics::histogram!("etcd_server_range_duration_seconds", "success" => "false")
                .record(took);
        }
    }
}

impl Drop for OpenRead {
    fn drop(&mut self) {
        metrics::gauge!("etcd_mvcc_db_open_read_transactions").decrement(1.0);
    }
}
