//! `hark-mvcc`: a revisioned key-value store with etcd v3's semantics, the
//! storage layer under Hark's server (and usable alone, as
//! `examples/hark-store.rs` shows). It knows nothing of gRPC, watchers or
//! lease expiry: the layers above translate etcd's requests into
//! [`WriteRequest`]s and [`RangeRequest`]s.
//!
//! * Every change is applied at a revision by one committer thread
//!   ([`Store::apply`]): one backend write batch per group of concurrent requests,
//!   synced once (group commit), then published in revision order to subscribers
//!   ([`Store::subscribe`]) without the writer ever waiting for them.
//! * Reads ([`Store::range`], [`Store::history`]) run on the caller's thread
//!   against an in-memory key index and the backend, at any retained revision.
//! * Storage sits behind the [`Backend`] trait: on disk `RocksBackend` (the
//!   default `rocksdb` feature) or the pure-Rust `FjallBackend` (`fjall`),
//!   chosen by [`BackendKind`]; [`MemoryBackend`] for tests. No RocksDB type
//!   appears in this crate's API, and without `rocksdb` no C++ is built.
//!
//! # Guarantees
//!
//! * **Revision order.** Writes are applied one at a time in the order the
//!   committer receives them. Each write that changes at least one key gets
//!   the next revision (the store starts at 1), and all its changes share
//!   it; a write that changes nothing (a delete of a missing key, a txn that
//!   only reads, a failed write) leaves the revision alone.
//! * **Durability.** A write's callback runs only after the backend write
//!   holding its whole commit group has returned, synced to stable storage
//!   when [`StoreOptions::sync`] is on (the default). A group is written
//!   atomically: after a crash it survives whole or not at all. A failed
//!   backend write fails the whole group and the store takes no more writes
//!   ([`Error::Closed`]) until it is reopened.
//! * **What a reader sees.** Key-value readers ([`Store::range`],
//!   [`Store::history`]) see only committed revisions: a write is visible
//!   once its group's backend write returned, never before its callback
//!   could run, and a group becomes visible all at once. (Records, alarms and
//!   the lease table change in memory as their group is applied, before
//!   that write.) A read at revision `r` (0: the
//!   current one) sees exactly the keys as of `r`; below
//!   [`Store::compacted_revision`] it fails with [`Error::Compacted`] (etcd's
//!   `mvcc: required revision has been compacted`), above the current revision
//!   with [`Error::FutureRevision`].
//! * **Subscribers** get every committed revision in order, each once, unless
//!   their byte budget overflowed; then [`Feed::take_lag`] says so and the
//!   missed revisions are in [`Store::history`], unless a compaction passed
//!   them meanwhile ([`Error::Compacted`]: list again). A snapshot install
//!   sends one empty revision in place of those it replaced.
//!
//! ```
//! use hark_mvcc::{PutRequest, RangeRequest, Store, WriteRequest, WriteResponse};
//!
//! let store = Store::in_memory();
//! assert_eq!(store.current_revision(), 1);
//! let WriteResponse::Put(put) = store
//!     .apply_blocking(WriteRequest::Put(PutRequest::new("jobs/a", "1")))
//!     .unwrap()
//! else {
//!     unreachable!()
//! };
//! assert_eq!(put.header_revision, 2);
//! store.put(PutRequest::new("jobs/b", "2")).unwrap();
//!
//! let jobs = store.range(&RangeRequest::prefix("jobs/")).unwrap();
//! assert_eq!(jobs.count, 2);
//! assert_eq!(jobs.header_revision, 3);
//! // The past stays readable until it is compacted.
//! let then = store
//!     .range(&RangeRequest { revision: 2, ..RangeRequest::prefix("jobs/") })
//!     .unwrap();
//! assert_eq!(then.kvs.len(), 1);
//! ```

#![warn(missing_docs)]

mod alarm;
mod announce;
pub mod backend;
pub mod chaos;
mod error;
mod feed;
mod key_index;
mod kv;
pub mod layout;
mod lease_table;
mod private_dir;
mod read_plan;
pub mod records;
mod request;
#[cfg(any(feature = "rocksdb", feature = "fjall"))]
mod restore;
mod revision;
mod store;
mod txn_writer;
mod usage;
mod validate;

pub use alarm::{Alarm, AlarmAction, AlarmKind, AlarmRequest, AlarmResponse};
pub use announce::{
    ANNOUNCEMENT_BUCKET, Announcement, Listener, MAX_ANNOUNCEMENT_BODY_LEN,
    MAX_ANNOUNCEMENT_TOPIC_LEN,
};
#[cfg(feature = "fjall")]
pub use backend::FjallBackend;
#[cfg(feature = "rocksdb")]
pub use backend::RocksBackend;
pub use backend::{Backend, BackendKind, BackendView, MemoryBackend};
pub use error::{Error, Result};
pub use feed::{DEFAULT_FEED_BYTES, Feed, Published};
pub use key_index::KeyRange;
pub use kv::{CommittedRevision, Event, EventKind, KeyValue};
pub use private_dir::{PRIVATE_DIR_MODE, ensure_private_dir};
pub use records::{RecordChange, RecordGuard, RecordsRequest, RecordsResponse};
pub use request::*;
#[cfg(any(feature = "rocksdb", feature = "fjall"))]
pub use restore::{RestoredStore, Restorer};
pub use store::history::HistoryChunk;
pub use store::image::StoreImage;
pub use store::maintenance::{AutoDefrag, KvHash};
pub use store::range_stream::{RangeChunk, RangeChunks, RangeStreamEnd};
pub use store::shared::{Done, LoggedDone, PrevKvInterest, StoreOptions};
pub use store::{BackendClosed, MAX_QUEUED_REQUESTS, Store};
pub use usage::{
    DEFAULT_USAGE_DEPTH, MAX_DU_ENTRIES, MAX_TRACKED_PREFIX, PrefixStat, PrefixUsage, Usage,
};
pub use validate::{
    MAX_KEY_VALUE_LEN, MAX_RECORD_BUCKET_LEN, MAX_RECORD_KEY_LEN, MAX_RECORD_VALUE_LEN,
};
