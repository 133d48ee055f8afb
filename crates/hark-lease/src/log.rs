//! Where the lessor writes: any [`LeaseLog`], the store's own apply path
//! by default.

use hark_mvcc::{LeaseRevokeRequest, Store, WriteRequest, WriteResponse};

use crate::error::LeaseError;

/// Where lease grants and revokes are written: the store's apply path, or a
/// replicated log in front of it.
pub trait LeaseLog: Send + Sync + 'static {
    /// Submits a grant or revoke; `done` is called once with its outcome.
    fn apply(&self, req: WriteRequest, done: LogDone);

    /// Submits the revoke of a lease this lessor found expired. A replicated
    /// log applies it only while the leader that decided it still leads
    /// (else `done` gets an error and the lease stays).
    fn expire(&self, id: i64, done: LogDone) {
        self.apply(WriteRequest::LeaseRevoke(LeaseRevokeRequest { id }), done);
    }
}

/// Called once with the outcome of a [`LeaseLog::apply`].
pub type LogDone = Box<dyn FnOnce(Result<WriteResponse, LeaseError>) + Send + 'static>;

impl LeaseLog for Store {
    fn apply(&self, req: WriteRequest, done: LogDone) {
        Store::apply(
            self,
            req,
            Box::new(move |r| done(r.map_err(LeaseError::from))),
        );
    }
}
