//! The store's errors. Messages are etcd's, so a server can pass them through.

/// Errors of the store. `Display` is etcd's message for the same condition.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Error {
    /// The revision asked for (a read's, a history read's start, or a
    /// compaction's) is below the compacted revision, or a compaction asked
    /// for a revision not above it.
    #[error("mvcc: required revision has been compacted")]
    Compacted,
    /// The revision asked for is above the current one.
    #[error("mvcc: required revision is a future revision")]
    FutureRevision,
    /// A request or compare has an empty key.
    #[error("etcdserver: key is not provided")]
    EmptyKey,
    /// A txn has more compares, or more ops in a branch, than
    /// [`crate::StoreOptions::max_txn_ops`].
    #[error("etcdserver: too many operations in txn request")]
    TooManyOps,
    /// A txn branch writes one key twice (puts, or a put and a delete
    /// covering it).
    #[error("etcdserver: duplicate key given in txn request")]
    DuplicateKey,
    /// A put with `ignore_value` or `ignore_lease` names a key that does not exist.
    #[error("etcdserver: key not found")]
    KeyNotFound,
    /// A put with `ignore_value` also carries a value.
    #[error("etcdserver: value is provided")]
    ValueProvided,
    /// A put with `ignore_lease` also carries a lease.
    #[error("etcdserver: lease is provided")]
    LeaseProvided,
    /// A put or revoke names a lease the store does not hold.
    #[error("etcdserver: requested lease not found")]
    LeaseNotFound,
    /// A lease grant names an id already granted.
    #[error("etcdserver: lease already exists")]
    LeaseExists,
    /// A NOSPACE alarm is raised: writes that can grow the store are refused.
    #[error("mvcc: database space exceeded")]
    NoSpace,
    /// A CORRUPT alarm is raised: writes are refused.
    #[error("etcdserver: corrupt cluster")]
    Corrupt,
    /// A [`crate::WriteRequest::Guarded`] request's guard did not hold.
    #[error("mvcc: guard of a guarded write did not hold")]
    GuardFailed,
    /// A record bucket name is empty or holds a NUL.
    #[error("mvcc: invalid record bucket name")]
    InvalidBucket,
    /// More requests wait for the committer than it will queue (etcd refuses
    /// proposals the same way when its apply falls too far behind).
    #[error("etcdserver: too many requests")]
    TooManyRequests,
    /// The store is shutting down or a previous write failed; nothing more is accepted.
    #[error("mvcc: store is closed")]
    Closed,
    /// A request names something the store cannot answer (a prefix space
    /// is not kept for), or holds more than every backend and etcd's
    /// snapshot format can store (see [`crate::MAX_RECORD_KEY_LEN`]).
    #[error("{0}")]
    InvalidArgument(String),
    /// The storage backend failed (I/O, corruption). The write was not acknowledged.
    #[error("mvcc: backend error: {0}")]
    Backend(String),
}

/// The store's `Result`, [`Error`] by default.
pub type Result<T, E = Error> = std::result::Result<T, E>;
