//! Where the lessor writes: any [`LeaseLog`], the store's own apply path
//! by default.

use hark_mvcc::{Store, WriteRequest, WriteResponse};

use crate::error::LeaseError;

/// Where lease grants and revokes are written: the store's apply path, or a
/// replicated log in front of it.
pub trait LeaseLog: Send + Sync + 'static {
    /// Submits a grant or revoke; `done` is called once with its outcome.
    fn apply(&self, req: WriteRequest, done: LogDone);
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
