//! The backend quota (etcd's `quotaKVServer` / `quotaLeaseServer`): before a
//! write that can grow the store is applied, its estimated cost
//! (`WriteRequest::quota_cost`) is checked against `--quota-backend-bytes`. A write that would pass it raises the
//! NOSPACE alarm (through the apply path, so it is persisted) and fails; from
//! then on the store itself refuses such writes until the alarm is disarmed.

use hark_mvcc::{AlarmAction, AlarmKind, AlarmRequest, WriteRequest};
use tonic::Status;

use crate::grpc::errors::{no_space, replica_status};
use crate::node::Node;

/// Lets `req` through if the store has room for it; otherwise raises NOSPACE
/// for this member and answers etcd's `database space exceeded`.
pub async fn check(node: &Node, req: &WriteRequest) -> Result<(), Status> {
    let cost = req.quota_cost();
    // A negative quota disables the check, as etcd's passthrough quota.
    let Ok(quota) = u64::try_from(node.quota_bytes) else {
        return Ok(());
    };
    if cost == 0 || node.store.db_size() + cost < quota {
        return Ok(());
    }
    tracing::warn!(
        db_size = node.store.db_size(),
        quota = node.quota_bytes,
        "backend quota exceeded; raising NOSPACE"
    );
    let raise = WriteRequest::Alarm(AlarmRequest {
        action: AlarmAction::Activate,
        member_id: node.member_id(),
        kind: Some(AlarmKind::NoSpace),
    });
    node.apply(raise).await.map_err(replica_status)?;
    Err(no_space())
}
