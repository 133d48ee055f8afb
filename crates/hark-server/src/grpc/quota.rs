//! The backend quota (etcd's `quotaKVServer` / `quotaLeaseServer`): before a
//! write that can grow the store is applied, its estimated cost is checked
//! against `--quota-backend-bytes`. A write that would pass it raises the
//! NOSPACE alarm (through the apply path, so it is persisted) and fails; from
//! then on the store itself refuses such writes until the alarm is disarmed.

use hark_mvcc::{AlarmAction, AlarmKind, AlarmRequest, RequestOp, TxnRequest, WriteRequest};
use tonic::Status;

use crate::grpc::errors::{no_space, replica_status};
use crate::node::Node;

/// etcd's per-key overhead estimate in a put's cost.
const KV_OVERHEAD: u64 = 256;
/// etcd's estimate of what a lease grant adds.
const LEASE_OVERHEAD: u64 = 64;

/// Bytes a write may add to the store, by etcd's estimate: a put's key and
/// value plus overhead; a txn's costlier branch (nested txns included); a
/// lease grant's overhead.
pub fn cost(req: &WriteRequest) -> u64 {
    match req.unguarded() {
        WriteRequest::Put(p) => put_cost(p.key.len(), p.value.len()),
        WriteRequest::Txn(t) => txn_cost(t),
        WriteRequest::LeaseGrant(_) => LEASE_OVERHEAD,
        _ => 0,
    }
}

fn put_cost(key: usize, value: usize) -> u64 {
    KV_OVERHEAD + key as u64 + value as u64
}

fn txn_cost(t: &TxnRequest) -> u64 {
    let branch = |ops: &[RequestOp]| -> u64 {
        ops.iter()
            .map(|op| match op {
                RequestOp::Put(p) => put_cost(p.key.len(), p.value.len()),
                RequestOp::Txn(inner) => txn_cost(inner),
                _ => 0,
            })
            .sum()
    };
    branch(&t.success).max(branch(&t.failure))
}

/// Lets `req` through if the store has room for it; otherwise raises NOSPACE
/// for this member and answers etcd's `database space exceeded`.
pub async fn check(node: &Node, req: &WriteRequest) -> Result<(), Status> {
    let cost = cost(req);
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

#[cfg(test)]
mod tests {
    use hark_mvcc::{DeleteRangeRequest, LeaseGrantRequest, PutRequest};

    use super::*;

    #[test]
    fn costs_follow_etcds_estimates() {
        let put = PutRequest::new("k", "vv");
        assert_eq!(cost(&WriteRequest::Put(put.clone())), 256 + 3);
        let txn = TxnRequest {
            compare: vec![],
            success: vec![RequestOp::Put(put.clone()), RequestOp::Put(put.clone())],
            failure: vec![RequestOp::Txn(TxnRequest {
                success: vec![RequestOp::Put(PutRequest::new("k", "v".repeat(1000)))],
                ..Default::default()
            })],
        };
        assert_eq!(cost(&WriteRequest::Txn(txn)), 256 + 1 + 1000);
        assert_eq!(
            cost(&WriteRequest::LeaseGrant(LeaseGrantRequest {
                id: 1,
                ttl: 5
            })),
            64
        );
        assert_eq!(
            cost(&WriteRequest::DeleteRange(DeleteRangeRequest::new("k", ""))),
            0
        );
    }
}
