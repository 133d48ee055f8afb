//! The store's errors. Messages are etcd's, so a server can pass them through.

/// Errors of the store. `Display` is etcd's message for the same condition.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    #[error("mvcc: required revision has been compacted")]
    Compacted,
    #[error("mvcc: required revision is a future revision")]
    FutureRevision,
    #[error("etcdserver: key is not provided")]
    EmptyKey,
    #[error("etcdserver: too many operations in txn request")]
    TooManyOps,
    #[error("etcdserver: duplicate key given in txn request")]
    DuplicateKey,
    #[error("etcdserver: key not found")]
    KeyNotFound,
    #[error("etcdserver: value is provided")]
    ValueProvided,
    #[error("etcdserver: lease is provided")]
    LeaseProvided,
    #[error("etcdserver: requested lease not found")]
    LeaseNotFound,
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
    /// The storage backend failed (I/O, corruption). The write was not acknowledged.
    #[error("mvcc: backend error: {0}")]
    Backend(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
