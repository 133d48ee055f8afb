//! `hark-mvcc`: a revisioned key-value store with etcd v3's semantics.
//!
//! * Every change is applied at a revision by one committer thread
//!   ([`Store::apply`]): one backend write batch per group of concurrent requests,
//!   synced once (group commit), then published in revision order to subscribers
//!   ([`Store::subscribe`]) without the writer ever waiting for them.
//! * Reads ([`Store::range`], [`Store::history`]) run on the caller's thread
//!   against an in-memory key index and the backend, at any retained revision.
//! * Storage sits behind the [`Backend`] trait: [`RocksBackend`] on disk,
//!   [`MemoryBackend`] for tests. No RocksDB type appears in this crate's API.
//!
//! The crate knows nothing of gRPC, watchers or leases.

mod alarm;
mod apply;
pub mod backend;
pub mod chaos;
mod error;
mod feed;
mod key_index;
mod kv;
mod lease_table;
pub mod records;
mod request;
mod restore;
mod revision;
mod store;
mod validate;

pub use alarm::{Alarm, AlarmAction, AlarmKind, AlarmRequest, AlarmResponse};
pub use backend::{Backend, BackendView, MemoryBackend, RocksBackend};
pub use error::{Error, Result};
pub use feed::{DEFAULT_FEED_BYTES, Feed, Published};
pub use key_index::KeyRange;
pub use kv::{CommittedRevision, Event, EventKind, KeyValue};
pub use records::{RecordChange, RecordGuard, RecordsRequest, RecordsResponse};
pub use request::*;
pub use restore::{RestoredStore, Restorer};
pub use revision::Revision;
pub use store::{
    BackendClosed, Done, HistoryChunk, KvHash, LoggedDone, MAX_QUEUED_REQUESTS, PrevKvInterest,
    Store, StoreImage, StoreOptions,
};
