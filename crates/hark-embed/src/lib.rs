//! `hark-embed`: Hark inside your own process.
//!
//! A revisioned key-value store on RocksDB (or in memory, for tests) with
//! etcd's semantics, opened from a directory like a database file: every
//! write gets the next revision, reads can be served at any revision not yet
//! compacted, transactions compare and write atomically, and watches tell
//! you, in revision order and exactly once, about every change to a key or a
//! range — from now, or replayed from a past revision. There is no server,
//! no network and no gRPC in the dependency tree: the same store
//! ([`hark_mvcc`]) and watch engine ([`hark_watch`]) the `hark` server runs,
//! behind one handle.
//!
//! # Guarantees
//!
//! * **Durable when acknowledged.** A write returns (or its future
//!   resolves) only once it is synced to disk ([`Options::sync`], on by
//!   default); after a crash, even `SIGKILL`, every acknowledged write is
//!   there and nothing half-applied is.
//! * **One order.** Revisions increase by one per write that changes
//!   something; a transaction is one revision.
//! * **Watches are exact.** A watch from revision `r` sees every change at
//!   `r` and after, once, in order; a restart loses nothing a watcher could
//!   resume: open again, and watch from the revision after the last one you
//!   handled. If that history was compacted, the watch says so
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

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use hark_mvcc::{CompactRequest, Store, StoreOptions, WriteRequest, WriteResponse};
use hark_watch::{Responses, WatchHub, WatchId, WatchStream};

pub use hark_mvcc::prefix_end;
pub use hark_mvcc::{
    Compare, CompareResult, CompareTarget, DeleteRangeRequest, DeleteRangeResponse, Error,
    EventKind, KeyValue, PutRequest, PutResponse, RangeRequest, RangeResponse, RequestOp,
    ResponseOp, Result, SortOrder, SortTarget, TxnRequest, TxnResponse,
};
pub use hark_watch::{
    ResponseKind, WatchConfig, WatchError, WatchEvent, WatchRequest, WatchResponse,
};

/// How [`Hark::open_with`] opens a store.
#[derive(Debug, Clone)]
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
}

impl Default for Options {
    fn default() -> Self {
        let store = StoreOptions::default();
        Options {
            sync: store.sync,
            max_txn_ops: store.max_txn_ops,
            watch: WatchConfig::default(),
        }
    }
}

/// An open store with its watch engine. Cheap to clone; every clone is the
/// same store. Safe to share between threads and tasks.
#[derive(Clone)]
pub struct Hark {
    store: Store,
    hub: WatchHub,
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
    pub fn open_with(dir: impl AsRef<Path>, options: Options) -> Result<Hark> {
        let store = Store::open(
            dir,
            StoreOptions {
                sync: options.sync,
                max_txn_ops: options.max_txn_ops,
                ..StoreOptions::default()
            },
        )?;
        Ok(Hark::with_store(store, options.watch))
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
        Hark::with_store(Store::in_memory(), WatchConfig::default())
    }

    fn with_store(store: Store, watch: WatchConfig) -> Hark {
        let hub = WatchHub::new(store.clone(), watch);
        Hark { store, hub }
    }

    /// The revision of the latest write.
    pub fn revision(&self) -> i64 {
        self.store.current_revision()
    }

    /// Revisions up to this one are compacted: reads at them fail with
    /// [`Error::Compacted`], watches from them get [`ResponseKind::Compacted`].
    pub fn compacted_revision(&self) -> i64 {
        self.store.compacted_revision()
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
        self.store.range(request)
    }

    /// Sets `key` to `value`; returns the write's revision once it is durable.
    pub fn put(&self, key: impl Into<Bytes>, value: impl Into<Bytes>) -> Result<i64> {
        Ok(self.put_with(PutRequest::new(key, value))?.header_revision)
    }

    /// etcd's Put with all its options (`prev_kv`, `ignore_value`, a lease…).
    pub fn put_with(&self, request: PutRequest) -> Result<PutResponse> {
        self.store.put(request)
    }

    /// Deletes `key`; returns whether it existed.
    pub fn delete(&self, key: impl Into<Bytes>) -> Result<bool> {
        let request = DeleteRangeRequest::new(key, Bytes::new());
        Ok(self.delete_range(request)?.deleted > 0)
    }

    /// etcd's DeleteRange: a key, a range or a prefix, optionally returning
    /// what was deleted.
    pub fn delete_range(&self, request: DeleteRangeRequest) -> Result<DeleteRangeResponse> {
        self.store.delete_range(request)
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
        self.store.txn(request)
    }

    /// Drops the history before `revision` (the versions live at it stay).
    pub fn compact(&self, revision: i64) -> Result<()> {
        self.store.compact(revision, false).map(drop)
    }

    /// [`Hark::put_with`] without blocking the caller's thread: the future
    /// resolves once the write is durable. Any async runtime will do.
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
        self.store.apply(
            request,
            Box::new(move |r| {
                let _ = done.send(r);
            }),
        );
        outcome.await.unwrap_or(Err(Error::Closed))
    }

    /// Starts a watch (etcd's Watch create): a key, a range or a prefix, from
    /// the next revision or replayed from `start_revision`, with filters and
    /// `prev_kv`. The first response is [`ResponseKind::Created`]; then come
    /// the events, in revision order. Dropping the [`Watch`] cancels it.
    pub fn watch(&self, request: WatchRequest) -> std::result::Result<Watch, WatchError> {
        let (stream, responses) = self.hub.new_stream();
        let id = stream.watch(request)?;
        Ok(Watch {
            stream,
            responses,
            id,
        })
    }
}

/// One watch: its responses, in order. Blocking and async receiving both
/// work; dropping it cancels the watch.
pub struct Watch {
    stream: WatchStream,
    responses: Responses,
    id: WatchId,
}

impl Watch {
    /// The next response, waiting at most `timeout`; `None` on timeout (or
    /// once the store has shut down).
    pub fn recv_timeout(&self, timeout: Duration) -> Option<WatchResponse> {
        self.responses.recv_timeout(timeout)
    }

    /// The next response if one is waiting.
    pub fn try_recv(&self) -> Option<WatchResponse> {
        self.responses.try_recv()
    }

    /// The next response, as a future (any async runtime); `None` once the
    /// store has shut down.
    pub async fn recv(&self) -> Option<WatchResponse> {
        self.responses.recv().await
    }

    /// The events that arrive within `timeout`, at least `count` of them
    /// unless the time runs out; created and progress responses are skipped.
    /// A compaction cancel ends the wait early (check
    /// [`Watch::recv_timeout`] yourself to act on it).
    pub fn events_timeout(&self, count: usize, timeout: Duration) -> Vec<Arc<WatchEvent>> {
        let deadline = Instant::now() + timeout;
        let mut events = Vec::new();
        while events.len() < count {
            let left = deadline.saturating_duration_since(Instant::now());
            let Some(response) = self.recv_timeout(left) else {
                break;
            };
            match response.kind {
                ResponseKind::Events { .. } => {
                    events.extend(response.events().iter().cloned());
                }
                ResponseKind::Compacted { .. } | ResponseKind::Canceled => break,
                _ => {}
            }
        }
        events
    }

    /// Asks for a progress response: no events, the store's revision, sent
    /// once every earlier event was (only while the watch is caught up).
    pub fn request_progress(&self) {
        self.stream.request_progress(self.id);
    }
}
