//! `v3lockpb.Lock`: a lock is a key prefix (the name and a slash); each
//! holder or waiter a key under it named by its lease; the holder the one
//! created first. clientv3's `Mutex`, run on the server as etcd runs it.

use bytes::Bytes;
use hark_http::GrpcService;
use hark_proto::etcdserverpb::{self as pb, range_request::SortOrder};
use hark_proto::v3lockpb::{LockRequest, LockResponse, UnlockRequest, UnlockResponse, lock_server};
use tonic::{Request, Response, Status};

use crate::calls::{
    Calls, CleanUp, by_creation, created_at, delete_op, first_read, get_key, get_op, holder_key,
    prefix_of, put_op,
};

/// Serves `v3lockpb.Lock` over the KV, Lease and Watch services of `grpc`.
#[derive(Clone)]
pub struct LockService {
    grpc: GrpcService,
}

impl LockService {
    pub fn new(grpc: GrpcService) -> LockService {
        LockService { grpc }
    }
}

#[tonic::async_trait]
impl lock_server::Lock for LockService {
    /// Creates the lease's key under the name unless it is there already
    /// (the same lease locking again holds the same lock), then waits until
    /// every key created before it is gone.
    async fn lock(&self, request: Request<LockRequest>) -> Result<Response<LockResponse>, Status> {
        let calls = Calls::as_sender_of(&self.grpc, &request);
        let LockRequest { name, lease } = request.into_inner();
        let lease = calls.session_lease(lease).await?;
        let prefix = prefix_of(&name);
        let key = holder_key(&prefix, lease);
        let first = || get_op(by_creation(&prefix, SortOrder::Ascend));
        let attempt = calls
            .txn(pb::TxnRequest {
                compare: vec![created_at(&key, 0)],
                success: vec![put_op(&key, Bytes::new(), lease), first()],
                failure: vec![get_op(get_key(&key)), first()],
            })
            .await?;
        let mine = if attempt.succeeded {
            attempt.header.as_ref().map_or(0, |h| h.revision)
        } else {
            first_read(&attempt, 0).map_or(0, |kv| kv.create_revision)
        };
        let holder = first_read(&attempt, 1).map(|kv| kv.create_revision);
        if holder.is_none_or(|created| created == mine) {
            return Ok(Response::new(LockResponse {
                header: attempt.header,
                key: key.to_vec().into(),
            }));
        }
        let release = CleanUp::new(&calls, release(&key));
        calls.wait_deletes(&prefix, mine - 1).await?;
        // The wait may outlast the lease: the key must still be there.
        let held = calls.range(get_key(&key)).await?;
        release.disarm();
        if held.kvs.is_empty() {
            return Err(Status::unknown("mutex: session is expired"));
        }
        Ok(Response::new(LockResponse {
            header: held.header,
            key: key.to_vec().into(),
        }))
    }

    /// Deletes the key, whoever holds it.
    async fn unlock(
        &self,
        request: Request<UnlockRequest>,
    ) -> Result<Response<UnlockResponse>, Status> {
        let calls = Calls::as_sender_of(&self.grpc, &request);
        let deleted = calls.delete(request.into_inner().key).await?;
        Ok(Response::new(UnlockResponse {
            header: deleted.header,
        }))
    }
}

/// The txn that gives up a hold or a wait.
fn release(key: &Bytes) -> pb::TxnRequest {
    pb::TxnRequest {
        compare: vec![],
        success: vec![delete_op(key)],
        failure: vec![],
    }
}
