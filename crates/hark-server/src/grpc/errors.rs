//! etcd's gRPC status codes and messages (its `rpctypes`) for Hark's errors.
//! Clients match on the message text, so it must be etcd's exactly.

use hark_lease::LeaseError;
use hark_mvcc::Error;
use hark_raft::{MembershipError, ReplicaError};
use tonic::Status;

pub const REQUEST_TOO_LARGE: &str = "etcdserver: request is too large";
pub const NO_SPACE: &str = "etcdserver: mvcc: database space exceeded";
pub const CORRUPT: &str = "etcdserver: corrupt cluster";
pub const AUTH_OLD_REVISION: &str = "etcdserver: revision of auth store is old";

/// etcd's `ErrGRPCStopped`: the member is shutting down.
pub fn stopped() -> Status {
    Status::unavailable("etcdserver: server stopped")
}

pub fn mvcc_status(e: Error) -> Status {
    match e {
        Error::Compacted => {
            Status::out_of_range("etcdserver: mvcc: required revision has been compacted")
        }
        Error::FutureRevision => {
            Status::out_of_range("etcdserver: mvcc: required revision is a future revision")
        }
        Error::EmptyKey
        | Error::TooManyOps
        | Error::DuplicateKey
        | Error::KeyNotFound
        | Error::ValueProvided
        | Error::LeaseProvided
        | Error::InvalidArgument(_) => Status::invalid_argument(e.to_string()),
        Error::LeaseNotFound => Status::not_found(e.to_string()),
        Error::LeaseExists => Status::failed_precondition(e.to_string()),
        Error::NoSpace => no_space(),
        Error::Corrupt => Status::data_loss(CORRUPT),
        Error::Closed => stopped(),
        Error::TooManyRequests => Status::resource_exhausted(e.to_string()),
        // The server guards writes only with the auth revision they were checked at.
        Error::GuardFailed => Status::invalid_argument(AUTH_OLD_REVISION),
        Error::InvalidBucket => Status::internal(format!("etcdserver: {e}")),
        Error::Backend(msg) => Status::internal(format!("etcdserver: {msg}")),
    }
}

/// A write or read that went through the replicated log.
pub fn replica_status(e: ReplicaError) -> Status {
    match e {
        ReplicaError::Store(inner) => mvcc_status(inner),
        ReplicaError::Timeout
        | ReplicaError::NoLeader
        | ReplicaError::Stopped
        | ReplicaError::LeaderTransferTimeout => Status::unavailable(e.to_string()),
        ReplicaError::NotLeader | ReplicaError::BadLeaderTransferee => {
            Status::failed_precondition(e.to_string())
        }
        ReplicaError::Membership(m) => membership_status(m),
    }
}

pub fn membership_status(e: MembershipError) -> Status {
    match e {
        MembershipError::MemberNotFound => Status::not_found(e.to_string()),
        MembershipError::NotLeader
        | MembershipError::InProgress
        | MembershipError::TimedOut
        | MembershipError::Unhealthy => Status::unavailable(e.to_string()),
        MembershipError::PeerUrlsExist
        | MembershipError::IdExists
        | MembershipError::NotLearner
        | MembershipError::LearnerNotReady
        | MembershipError::NotEnoughStarted
        | MembershipError::TooManyLearners => Status::failed_precondition(e.to_string()),
        MembershipError::Failed(_) => Status::internal(e.to_string()),
    }
}

pub fn lease_status(e: LeaseError) -> Status {
    match e {
        LeaseError::NotFound => Status::not_found(e.to_string()),
        LeaseError::Exists => Status::failed_precondition(e.to_string()),
        LeaseError::TtlTooLarge => Status::out_of_range(e.to_string()),
        LeaseError::NotPrimary => Status::unknown(e.to_string()),
        LeaseError::Store(inner) => mvcc_status(inner),
        LeaseError::Unavailable(msg) => Status::unavailable(msg),
    }
}

pub fn no_space() -> Status {
    Status::resource_exhausted(NO_SPACE)
}

pub fn request_too_large() -> Status {
    Status::invalid_argument(REQUEST_TOO_LARGE)
}
