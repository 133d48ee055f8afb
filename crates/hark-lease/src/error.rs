//! Why a lease operation failed, in etcd's words.

/// Why a lease operation failed. `Display` is etcd's message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LeaseError {
    /// No such lease (never granted, revoked, or expired).
    #[error("etcdserver: requested lease not found")]
    NotFound,
    /// A grant asked for an id in use.
    #[error("etcdserver: lease already exists")]
    Exists,
    /// A grant asked for more than [`MAX_LEASE_TTL`](crate::MAX_LEASE_TTL).
    #[error("etcdserver: too large lease TTL")]
    TtlTooLarge,
    /// This member's lessor cannot answer for the cluster: it no longer
    /// leads, or could not confirm with a quorum that it still does
    /// (etcd's `lease.ErrNotPrimary`, which its clients see as Unknown).
    #[error("not a primary lessor")]
    NotPrimary,
    /// The store refused or failed the write.
    #[error("{0}")]
    Store(hark_mvcc::Error),
    /// The replicated log could not take the write (no leader, timed out);
    /// etcd's message.
    #[error("{0}")]
    Unavailable(String),
}

impl From<hark_mvcc::Error> for LeaseError {
    fn from(e: hark_mvcc::Error) -> Self {
        match e {
            hark_mvcc::Error::LeaseNotFound => LeaseError::NotFound,
            hark_mvcc::Error::LeaseExists => LeaseError::Exists,
            other => LeaseError::Store(other),
        }
    }
}
