//! `hark-embed`: Hark inside your own process.
//!
//! A revisioned key-value store on RocksDB (or in memory, for tests) with
//! etcd's semantics, opened from a directory like a database file: every
//! write that changes something gets the next revision, reads can be served
//! at any revision not yet compacted, transactions compare and write atomically, and watches tell
//! you, in revision order and exactly once, about every change to a key or a
//! range — from now, or replayed from a past revision. There is no server,
//! no network and no gRPC or HTTP crate in the dependency tree (prost is,
//! for the store's own encoding): the same store
//! ([`hark_mvcc`]) and watch engine ([`hark_watch`]) the `hark` server runs,
//! behind one handle.
//!
//! # Guarantees
//!
//! * **Durable when acknowledged.** A write returns (or its future
//!   resolves) only once RocksDB has synced it to disk ([`Options::sync`],
//!   on by default); after a crash every acknowledged write is there and
//!   nothing half-applied is. (`tests/crash.rs` kills a process with
//!   `SIGKILL` mid-write; a power cut relies on that sync.) With `sync`
//!   off, or in memory, a crash may lose acknowledged writes, and their
//!   revision numbers are then given again to other writes.
//! * **One order.** Revisions increase by one per write that changes
//!   something; a transaction is one revision.
//! * **Watches are exact.** A watch from revision `r` sees every change at
//!   `r` and after, once, in order. After a restart, watch again from the
//!   revision after the last one you handled: nothing durable is missed or
//!   repeated. If that history was compacted, the watch says so
//!   ([`ResponseKind::Compacted`]) instead of skipping.
//!
//! # Example
//!
//! ```
//! use hark_embed::{Hark, ResponseKind, WatchRequest};
//! use std::time::Duration;
//!
//! let dir = tempfile::tempdir()?;
//! let hark = Hark::open(dir.path())?;
//! let rev = hark.put("config/color", "blue")?;
//! assert_eq!(hark.get("config/color")?.unwrap().value, "blue");
//!
//! // Every change under config/ from `rev` on, replayed then live.
//! let watch = hark.watch(WatchRequest::prefix("config/").from_revision(rev))?;
//! hark.put("config/color", "green")?;
//! let mut seen = Vec::new();
//! while seen.len() < 2 {
//!     let response = watch.recv_timeout(Duration::from_secs(5)).expect("events");
//!     if let ResponseKind::Events { .. } = response.kind {
//!         seen.extend(response.events().iter().map(|e| e.kv.value.clone()));
//!     }
//! }
//! assert_eq!(seen, ["blue", "green"]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

// The README's examples run as doctests, so they stay true.
#[cfg(all(doctest, feature = "fjall"))]
#[doc = include_str!("../README.md")]
struct ReadmeExamples;

use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use hark_lease::Lessor;
use hark_mvcc::{CompactRequest, Store, StoreOptions, WriteRequest, WriteResponse};
use hark_watch::{Responses, WatchHub, WatchStream};

mod range_iter;

pub use hark_lease::{Granted, LeaseError, LessorConfig, TimeToLive};
pub use hark_mvcc::prefix_end;
pub use hark_mvcc::{
    BackendKind, Compare, CompareResult, CompareTarget, DeleteRangeRequest, DeleteRangeResponse,
    Error, EventKind, KeyValue, PutRequest, PutResponse, RangeRequest, RangeResponse, RequestOp,
    ResponseOp, Result, SortOrder, SortTarget, TxnRequest, TxnResponse,
};
pub use hark_watch::{
    Events, ResponseKind, WatchConfig, WatchError, WatchEvent, WatchId, WatchRequest, WatchResponse,
};
pub use range_iter::RangeIter;

/// How [`Hark::open_with`] opens a store. Build it from
/// `Options::default()`; fields may be added.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Options {
    /// Sync each group of writes to disk before acknowledging it (the
    /// default). `false` trades durability for speed: a crash may lose
    /// acknowledged writes.
    pub sync: bool,
    /// Most compares, and most operations per branch, in one transaction
    /// (etcd's `--max-txn-ops`, 128 by default).
    pub max_txn_ops: usize,
    /// The watch engine's bounds (queue sizes, catch-up steps).
    pub watch: WatchConfig,
    /// Where [`Hark::open_with`] keeps the data: RocksDB (feature
    /// `rocksdb`, the default) or fjall (feature `fjall`, pure Rust).
    /// Defaults to RocksDB when it is built. A directory the other backend
    /// wrote is refused.
    pub backend: BackendKind,
    /// Lease timing: the shortest TTL granted, how often expiry is checked.
    pub lease: LessorConfig,
}

impl Options {
    /// These options on the backend `kind`.
    pub fn with_backend(mut self, kind: BackendKind) -> Options {
        self.backend = kind;
        self
    }

    /// These options with the lease timing `lease`.
    pub fn with_lease(mut self, lease: LessorConfig) -> Options {
        self.lease = lease;
        self
    }
}

impl Default for Options {
    fn default() -> Self {
        let store = StoreOptions::default();
        Options {
            sync: store.sync,
            max_txn_ops: store.max_txn_ops,
            watch: WatchConfig::default(),
            backend: store.backend,
            lease: LessorConfig::default(),
        }
    }
}

/// An open store with its watch engine. Cheap to clone; every clone is the
/// same store. Safe to share between threads and tasks.
///
/// The store stays open while any clone, or any [`Watch`], is alive. The
/// drop of the last one stops the watch engine and closes RocksDB before it
/// returns, so the directory can be opened again at once (and no thread is
/// still closing it when the process exits).
#[derive(Clone)]
pub struct Hark {
    inner: Arc<Inner>,
}

struct Inner {
    /// Expires leases; taken (its thread joined) before the store closes.
    lessor: Option<Lessor>,
    store: Store,
    /// Taken when the last handle goes, to stop the engine first.
    hub: Option<WatchHub>,
}

impl Inner {
    fn lessor(&self) -> &Lessor {
        self.lessor
            .as_ref()
            .expect("the lessor lives as long as the handles")
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        // Every Watch is gone (each holds this), so every stream is closed
        // and the engine stops; it drops its store handle before the join
        // returns. The lessor drops next and joins its thread, and `store`,
        // dropped last, is then the last handle: the backend closes here.
        if let Some(hub) = self.hub.take() {
            hub.shutdown();
        }
        drop(self.lessor.take());
        // A lease write's callback can still hold the lessor's store handles
        // on the committer thread: a barrier behind it returns once every
        // earlier callback has run and been dropped.
        let (passed, barrier) = std::sync::mpsc::channel();
        self.store.barrier(move || {
            let _ = passed.send(());
        });
        let _ = barrier.recv();
    }
}

impl Hark {
    /// Opens (or creates) the store in `dir` with the default [`Options`].
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// let hark = hark_embed::Hark::open(dir.path())?;
    /// assert_eq!(hark.revision(), 1); // a new store starts at revision 1, as etcd
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open(dir: impl AsRef<Path>) -> Result<Hark> {
        Hark::open_with(dir, Options::default())
    }

    /// Opens (or creates) the store in `dir`.
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// use hark_embed::{BackendKind, Hark, Options};
    ///
    /// // The pure-Rust backend (feature `fjall`; the default build has it
    /// // only if asked for).
    /// # if BackendKind::Fjall.is_built() {
    /// let options = Options::default().with_backend(BackendKind::Fjall);
    /// let hark = Hark::open_with(dir.path(), options)?;
    /// hark.put("k", "v")?;
    /// # }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open_with(dir: impl AsRef<Path>, options: Options) -> Result<Hark> {
        let store = Store::open(
            dir,
            StoreOptions {
                sync: options.sync,
                max_txn_ops: options.max_txn_ops,
                backend: options.backend,
                ..StoreOptions::default()
            },
        )?;
        Ok(Hark::with_store(store, options.watch, options.lease))
    }

    /// A store that lives in memory only, for tests: same semantics, nothing
    /// on disk.
    ///
    /// ```
    /// let hark = hark_embed::Hark::in_memory();
    /// hark.put("k", "v")?;
    /// assert_eq!(hark.get("k")?.unwrap().version, 1);
    /// # Ok::<(), hark_embed::Error>(())
    /// ```
    pub fn in_memory() -> Hark {
        Hark::with_store(
            Store::in_memory(),
            WatchConfig::default(),
            LessorConfig::default(),
        )
    }

    /// [`Hark::in_memory`] with its watch and lease settings.
    pub fn in_memory_with(options: Options) -> Hark {
        Hark::with_store(Store::in_memory(), options.watch, options.lease)
    }

    fn with_store(store: Store, watch: WatchConfig, lease: LessorConfig) -> Hark {
        let hub = WatchHub::new(store.clone(), watch);
        let lessor = Lessor::start(store.clone(), lease);
        Hark {
            inner: Arc::new(Inner {
                lessor: Some(lessor),
                store,
                hub: Some(hub),
            }),
        }
    }

    fn store(&self) -> &Store {
        &self.inner.store
    }

    /// The revision of the latest write.
    pub fn revision(&self) -> i64 {
        self.store().current_revision()
    }

    /// The revision history was compacted at: reads below it fail with
    /// [`Error::Compacted`], watches from below it get
    /// [`ResponseKind::Compacted`]; at it, both still work.
    pub fn compacted_revision(&self) -> i64 {
        self.store().compacted_revision()
    }

    /// The key's current value and revisions, if it exists.
    ///
    /// ```
    /// let hark = hark_embed::Hark::in_memory();
    /// assert!(hark.get("missing")?.is_none());
    /// # Ok::<(), hark_embed::Error>(())
    /// ```
    pub fn get(&self, key: impl Into<Bytes>) -> Result<Option<KeyValue>> {
        Ok(self.range(&RangeRequest::key(key))?.kvs.into_iter().next())
    }

    /// etcd's Range: one key, a range or a prefix ([`RangeRequest`]), at the
    /// current revision or a past one, with limits, sorting and filters.
    ///
    /// ```
    /// use hark_embed::{Hark, RangeRequest};
    /// let hark = Hark::in_memory();
    /// let first = hark.put("jobs/1", "a")?;
    /// hark.put("jobs/1", "b")?;
    /// hark.put("jobs/2", "c")?;
    /// let now = hark.range(&RangeRequest::prefix("jobs/"))?;
    /// assert_eq!(now.kvs.len(), 2);
    /// let then = hark.range(&RangeRequest { revision: first, ..RangeRequest::prefix("jobs/") })?;
    /// assert_eq!(then.kvs[0].value, "a");
    /// # Ok::<(), hark_embed::Error>(())
    /// ```
    pub fn range(&self, request: &RangeRequest) -> Result<RangeResponse> {
        self.store().range(request)
    }

    /// The key-values of a key, range or prefix one by one, in key order,
    /// read a page at a time: memory holds one page, however large the
    /// range. Every page is read at the revision of the first (or at
    /// `request.revision`), so the iteration is one consistent view even
    /// while writes go on; it fails with [`Error::Compacted`] if that
    /// revision is compacted meanwhile.
    ///
    /// `limit` caps the total, the revision filters and `keys_only` apply;
    /// `sort_*` and `count_only` are not for iteration and are refused.
    ///
    /// ```
    /// use hark_embed::{Hark, RangeRequest};
    /// let hark = Hark::in_memory();
    /// for i in 0..2500 {
    ///     hark.put(format!("jobs/{i:04}"), "todo")?;
    /// }
    /// let mut seen = 0;
    /// for kv in hark.range_iter(&RangeRequest::prefix("jobs/"))? {
    ///     assert_eq!(kv?.value, "todo");
    ///     seen += 1;
    /// }
    /// assert_eq!(seen, 2500);
    /// # Ok::<(), hark_embed::Error>(())
    /// ```
    pub fn range_iter(&self, request: &RangeRequest) -> Result<RangeIter> {
        RangeIter::new(self.store().clone(), request, range_iter::PAGE)
    }

    /// Sets `key` to `value`; returns the write's revision once it is durable.
    pub fn put(&self, key: impl Into<Bytes>, value: impl Into<Bytes>) -> Result<i64> {
        Ok(self.put_with(PutRequest::new(key, value))?.header_revision)
    }

    /// etcd's Put with its options (`prev_kv`, `lease`, `ignore_value`,
    /// `ignore_lease`). A put naming a lease that does not exist fails with
    /// [`Error::LeaseNotFound`].
    pub fn put_with(&self, request: PutRequest) -> Result<PutResponse> {
        self.store().put(request)
    }

    /// Deletes `key`; returns whether it existed.
    pub fn delete(&self, key: impl Into<Bytes>) -> Result<bool> {
        let request = DeleteRangeRequest::new(key, Bytes::new());
        Ok(self.delete_range(request)?.deleted > 0)
    }

    /// etcd's DeleteRange: a key, a range or a prefix, optionally returning
    /// what was deleted.
    pub fn delete_range(&self, request: DeleteRangeRequest) -> Result<DeleteRangeResponse> {
        self.store().delete_range(request)
    }

    /// etcd's Txn: if every compare holds, the `success` operations run,
    /// else the `failure` ones; either way as one revision.
    ///
    /// ```
    /// use hark_embed::{Compare, CompareResult, CompareTarget, Hark, PutRequest, RequestOp, TxnRequest};
    /// let hark = Hark::in_memory();
    /// // Create only if absent (a missing key has create revision 0).
    /// let create = |value: &str| TxnRequest {
    ///     compare: vec![Compare {
    ///         key: "leader".into(),
    ///         range_end: Default::default(),
    ///         result: CompareResult::Equal,
    ///         target: CompareTarget::CreateRevision(0),
    ///     }],
    ///     success: vec![RequestOp::Put(PutRequest::new("leader", value.to_owned()))],
    ///     failure: vec![],
    /// };
    /// assert!(hark.txn(create("me"))?.succeeded);
    /// assert!(!hark.txn(create("you"))?.succeeded);
    /// assert_eq!(hark.get("leader")?.unwrap().value, "me");
    /// # Ok::<(), hark_embed::Error>(())
    /// ```
    pub fn txn(&self, request: TxnRequest) -> Result<TxnResponse> {
        self.store().txn(request)
    }

    /// Drops the history before `revision` (the versions live at it stay).
    pub fn compact(&self, revision: i64) -> Result<()> {
        self.store().compact(revision, false).map(drop)
    }

    /// [`Hark::put_with`] without blocking the caller's thread: the future
    /// resolves once the write is durable. Any async runtime will do.
    ///
    /// The write is submitted when the future is first polled; dropping it
    /// after that does not cancel the write. Beyond the blocking call's
    /// errors, a store with more than 5000 writes queued answers
    /// [`Error::TooManyRequests`], and one whose disk failed answers
    /// [`Error::Closed`] from then on.
    pub async fn put_async(&self, request: PutRequest) -> Result<PutResponse> {
        match self.write(WriteRequest::Put(request)).await? {
            WriteResponse::Put(r) => Ok(r),
            other => unreachable!("a put answered {other:?}"),
        }
    }

    /// [`Hark::delete_range`], as a future.
    pub async fn delete_range_async(
        &self,
        request: DeleteRangeRequest,
    ) -> Result<DeleteRangeResponse> {
        match self.write(WriteRequest::DeleteRange(request)).await? {
            WriteResponse::DeleteRange(r) => Ok(r),
            other => unreachable!("a delete answered {other:?}"),
        }
    }

    /// [`Hark::txn`], as a future.
    pub async fn txn_async(&self, request: TxnRequest) -> Result<TxnResponse> {
        match self.write(WriteRequest::Txn(request)).await? {
            WriteResponse::Txn(r) => Ok(r),
            other => unreachable!("a txn answered {other:?}"),
        }
    }

    /// [`Hark::compact`], as a future.
    pub async fn compact_async(&self, revision: i64) -> Result<()> {
        let request = CompactRequest {
            revision,
            physical: false,
        };
        self.write(WriteRequest::Compact(request)).await.map(drop)
    }

    async fn write(&self, request: WriteRequest) -> Result<WriteResponse> {
        let (done, outcome) = tokio::sync::oneshot::channel();
        self.store().apply(
            request,
            Box::new(move |r| {
                let _ = done.send(r);
            }),
        );
        outcome.await.unwrap_or(Err(Error::Closed))
    }

    /// Grants a lease of `ttl` seconds (raised to [`LessorConfig::min_ttl`]);
    /// `id` 0 lets the store pick one. Keys put with the lease
    /// ([`PutRequest::lease`]) are deleted, in one revision, when it
    /// expires or is revoked: watchers see DELETE events. Expiry is kept
    /// in memory, so after a reopen every lease gets its full TTL again,
    /// as etcd gives after a leader change.
    ///
    /// ```
    /// use std::time::Duration;
    /// use hark_embed::{EventKind, Hark, LessorConfig, Options, PutRequest, WatchRequest};
    ///
    /// let lease = LessorConfig { min_ttl: 1, check_interval: Duration::from_millis(50), ..LessorConfig::default() };
    /// let hark = Hark::in_memory_with(Options::default().with_lease(lease));
    /// let granted = hark.grant_lease(0, 1)?;
    /// let mut put = PutRequest::new("workers/alice", "alive");
    /// put.lease = granted.id;
    /// hark.put_with(put)?;
    ///
    /// // No keep-alive: the key goes when the lease expires.
    /// let watch = hark.watch(WatchRequest::prefix("workers/"))?;
    /// let events = watch.events_timeout(1, Duration::from_secs(10)).unwrap();
    /// assert_eq!(events[0].kind, EventKind::Delete);
    /// assert!(hark.get("workers/alice")?.is_none());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn grant_lease(&self, id: i64, ttl: i64) -> std::result::Result<Granted, LeaseError> {
        wait_for_lessor(|done| self.inner.lessor().grant(id, ttl, done))
    }

    /// Renews a lease to its full TTL; returns that TTL.
    pub fn keep_alive(&self, id: i64) -> std::result::Result<i64, LeaseError> {
        self.inner.lessor().keep_alive(id)
    }

    /// Revokes a lease now, deleting its keys in one revision; returns
    /// that revision.
    pub fn revoke_lease(&self, id: i64) -> std::result::Result<i64, LeaseError> {
        wait_for_lessor(|done| self.inner.lessor().revoke(id, done))
    }

    /// A lease's remaining and granted TTL, and its keys if `with_keys`.
    pub fn lease_time_to_live(
        &self,
        id: i64,
        with_keys: bool,
    ) -> std::result::Result<TimeToLive, LeaseError> {
        self.inner.lessor().time_to_live(id, with_keys)
    }

    /// The ids of every lease.
    pub fn leases(&self) -> Vec<i64> {
        self.inner.lessor().leases()
    }

    /// Starts a watch (etcd's Watch create): a key, a range or a prefix, from
    /// the next revision or replayed from `start_revision`, with filters and
    /// `prev_kv`. The first response is [`ResponseKind::Created`]; then come
    /// the events, in revision order. Dropping the [`Watch`] cancels it.
    pub fn watch(&self, request: WatchRequest) -> std::result::Result<Watch, WatchError> {
        let hub = self
            .inner
            .hub
            .as_ref()
            .expect("the hub lives as long as the handles");
        let (stream, responses) = hub.new_stream();
        let id = stream.watch(request)?;
        Ok(Watch {
            stream,
            responses,
            id,
            ended: false,
            _store: self.inner.clone(),
        })
    }

    /// Drops this handle; `true` if it was the last (no clone and no
    /// [`Watch`] left), so the store is closed now and its directory can be
    /// opened again.
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// let hark = hark_embed::Hark::open(dir.path())?;
    /// hark.put("k", "v")?;
    /// assert!(hark.close());
    /// let again = hark_embed::Hark::open(dir.path())?;
    /// assert_eq!(again.get("k")?.unwrap().value, "v");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn close(self) -> bool {
        let closed = self.store().backend_closed();
        drop(self);
        closed.is_closed()
    }
}

/// The lessor's answer to the request `start` makes, waited for; a
/// callback dropped unanswered (the store closing) is [`Error::Closed`].
fn wait_for_lessor<T: Send + 'static>(
    start: impl FnOnce(LessorCallback<T>),
) -> std::result::Result<T, LeaseError> {
    let (done, outcome) = std::sync::mpsc::channel();
    start(Box::new(move |r| {
        let _ = done.send(r);
    }));
    outcome
        .recv()
        .unwrap_or(Err(LeaseError::Store(Error::Closed)))
}

type LessorCallback<T> = Box<dyn FnOnce(std::result::Result<T, LeaseError>) + Send + 'static>;

impl std::fmt::Debug for Hark {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hark")
            .field("revision", &self.revision())
            .field("compacted_revision", &self.compacted_revision())
            .finish()
    }
}

/// One watch: its responses, in order. Blocking and async receiving both
/// work; dropping it cancels the watch. It keeps the store open while it
/// lives.
///
/// It is also an [`Iterator`] (blocking) and a [`futures_core::Stream`]
/// (any runtime) of its responses. Both end after a response that ends
/// the watch ([`ResponseKind::Compacted`], [`ResponseKind::Canceled`],
/// [`ResponseKind::CreateRejected`]); a live watch otherwise waits for the
/// next change.
///
/// ```
/// use hark_embed::{Hark, ResponseKind, WatchRequest};
/// let hark = Hark::in_memory();
/// let watch = hark.watch(WatchRequest::prefix("config/"))?;
/// hark.put("config/a", "1")?;
/// hark.put("config/b", "2")?;
/// let values: Vec<_> = watch
///     .flat_map(|response| response.events().to_vec())
///     .map(|event| event.kv.value.clone())
///     .take(2)
///     .collect();
/// assert_eq!(values, ["1", "2"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Watch {
    stream: WatchStream,
    responses: Responses,
    id: WatchId,
    /// A response that ends the watch was handed out: iteration is over.
    ended: bool,
    // Declared last, so dropped last: the stream is closed before this can
    // be the store's last handle.
    _store: Arc<Inner>,
}

impl Watch {
    /// The next response, waiting at most `timeout`; `None` on timeout.
    pub fn recv_timeout(&self, timeout: Duration) -> Option<WatchResponse> {
        self.responses.recv_timeout(timeout)
    }

    /// The next response if one is waiting.
    pub fn try_recv(&self) -> Option<WatchResponse> {
        self.responses.try_recv()
    }

    /// The next response, as a future (any async runtime). A watch lives as
    /// long as the store it holds open, so this waits for the next change;
    /// wrap it in a timeout to give up.
    pub async fn recv(&self) -> Option<WatchResponse> {
        self.responses.recv().await
    }

    /// The events that arrive within `timeout`, until there are at least
    /// `count` of them; created and progress responses are skipped.
    /// `Err(compact_revision)` if the watch was canceled because history it
    /// needs was compacted.
    pub fn events_timeout(
        &self,
        count: usize,
        timeout: Duration,
    ) -> std::result::Result<Vec<Arc<WatchEvent>>, i64> {
        let deadline = Instant::now() + timeout;
        let mut events = Vec::new();
        while events.len() < count {
            let left = deadline.saturating_duration_since(Instant::now());
            let Some(response) = self.recv_timeout(left) else {
                break;
            };
            match response.kind {
                ResponseKind::Events { .. } => events.extend(response.events().iter().cloned()),
                ResponseKind::Compacted { compact_revision } => return Err(compact_revision),
                _ => {}
            }
        }
        Ok(events)
    }

    /// Asks for a progress response: no events, the store's revision, sent
    /// once every earlier event was (only while the watch is caught up).
    pub fn request_progress(&self) {
        self.stream.request_progress(self.id);
    }
}

/// Whether no response follows this one on its watch.
fn ends_watch(response: &WatchResponse) -> bool {
    matches!(
        response.kind,
        ResponseKind::Compacted { .. }
            | ResponseKind::Canceled
            | ResponseKind::CreateRejected { .. }
    )
}

impl Watch {
    /// Hands out `response`, noting whether it ends the watch.
    fn pass(&mut self, response: Option<WatchResponse>) -> Option<WatchResponse> {
        match response {
            Some(response) => {
                self.ended = ends_watch(&response);
                Some(response)
            }
            None => {
                self.ended = true;
                None
            }
        }
    }
}

impl Iterator for Watch {
    type Item = WatchResponse;

    /// Waits for the next response; `None` once the watch has ended.
    fn next(&mut self) -> Option<WatchResponse> {
        if self.ended {
            return None;
        }
        let response = self.responses.recv_blocking();
        self.pass(response)
    }
}

impl futures_core::Stream for Watch {
    type Item = WatchResponse;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<WatchResponse>> {
        let this = self.get_mut();
        if this.ended {
            return Poll::Ready(None);
        }
        match this.responses.poll_recv(cx) {
            Poll::Ready(response) => Poll::Ready(this.pass(response)),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl std::fmt::Debug for Watch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watch").field("id", &self.id).finish()
    }
}
