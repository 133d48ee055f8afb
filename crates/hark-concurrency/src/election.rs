//! `v3electionpb.Election`: an election is a key prefix (the name and a
//! slash); each candidate a key under it named by its lease and holding
//! its value; the leader the one created first. clientv3's `Election`,
//! run on the server as etcd runs it.

use bytes::Bytes;
use hark_http::GrpcService;
use hark_proto::etcdserverpb::{self as pb, ResponseHeader, range_request::SortOrder};
use hark_proto::mvccpb::{KeyValue, event::EventType};
use hark_proto::v3electionpb::{
    CampaignRequest, CampaignResponse, LeaderKey, LeaderRequest, LeaderResponse, ProclaimRequest,
    ProclaimResponse, ResignRequest, ResignResponse, election_server,
};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};

use crate::calls::{
    Calls, CleanUp, by_creation, created_at, delete_op, first_read, get_key, get_op, holder_key,
    prefix_of, put_op,
};

/// Observations buffered for a slow observer before the watch waits.
const OBSERVED: usize = 16;

/// Serves `v3electionpb.Election` over the KV, Lease and Watch services of
/// `grpc`.
#[derive(Clone)]
pub struct ElectionService {
    grpc: GrpcService,
}

impl ElectionService {
    pub fn new(grpc: GrpcService) -> ElectionService {
        ElectionService { grpc }
    }
}

fn missing_leader() -> Status {
    Status::unknown("\"leader\" field must be provided")
}

fn not_leader() -> Status {
    Status::unknown("election: not leader")
}

/// Sets the leader key's value if that key is still the one created at
/// `leader.rev`.
async fn proclaim(
    calls: &Calls,
    leader: &LeaderKey,
    value: Bytes,
) -> Result<pb::TxnResponse, Status> {
    let key = leader.key.clone();
    let txn = calls
        .txn(pb::TxnRequest {
            compare: vec![created_at(&key, leader.rev)],
            success: vec![put_op(&key, value, leader.lease)],
            failure: vec![],
        })
        .await?;
    if !txn.succeeded {
        return Err(not_leader());
    }
    Ok(txn)
}

/// Deletes the leader key if it is still the one created at `rev`.
fn resignation(key: &Bytes, rev: i64) -> pb::TxnRequest {
    pb::TxnRequest {
        compare: vec![created_at(key, rev)],
        success: vec![delete_op(key)],
        failure: vec![],
    }
}

#[tonic::async_trait]
impl election_server::Election for ElectionService {
    /// Puts the lease's key under the name with the value (or, if the
    /// lease is a candidate already, proclaims the value on its key), then
    /// waits until every key created before it is gone.
    async fn campaign(
        &self,
        request: Request<CampaignRequest>,
    ) -> Result<Response<CampaignResponse>, Status> {
        let calls = Calls::as_sender_of(&self.grpc, &request);
        let CampaignRequest { name, lease, value } = request.into_inner();
        let lease = calls.session_lease(lease).await?;
        let prefix = prefix_of(&name);
        let key = holder_key(&prefix, lease);
        let attempt = calls
            .txn(pb::TxnRequest {
                compare: vec![created_at(&key, 0)],
                success: vec![put_op(&key, value.clone(), lease)],
                failure: vec![get_op(get_key(&key))],
            })
            .await?;
        let mut rev = attempt.header.as_ref().map_or(0, |h| h.revision);
        let leader = LeaderKey {
            name,
            key: key.clone(),
            rev,
            lease,
        };
        let leader = if attempt.succeeded {
            leader
        } else {
            let existing = first_read(&attempt, 0).cloned().unwrap_or_default();
            rev = existing.create_revision;
            let leader = LeaderKey { rev, ..leader };
            if existing.value != value
                && let Err(e) = proclaim(&calls, &leader, value).await
            {
                let _ = calls.txn(resignation(&key, rev)).await;
                return Err(e);
            }
            leader
        };
        // A caller that goes away while waiting withdraws; a wait that
        // fails otherwise leaves the candidacy standing, as clientv3 does.
        let withdraw = CleanUp::new(&calls, resignation(&key, rev));
        let waited = calls.wait_deletes(&prefix, rev - 1).await;
        withdraw.disarm();
        waited?;
        Ok(Response::new(CampaignResponse {
            header: attempt.header,
            leader: Some(leader),
        }))
    }

    async fn proclaim(
        &self,
        request: Request<ProclaimRequest>,
    ) -> Result<Response<ProclaimResponse>, Status> {
        let calls = Calls::as_sender_of(&self.grpc, &request);
        let ProclaimRequest { leader, value } = request.into_inner();
        let mut leader = leader.ok_or_else(missing_leader)?;
        // etcd binds the value to the session's lease, a new one if none
        // is named.
        leader.lease = calls.session_lease(leader.lease).await?;
        let txn = proclaim(&calls, &leader, value).await?;
        Ok(Response::new(ProclaimResponse { header: txn.header }))
    }

    async fn leader(
        &self,
        request: Request<LeaderRequest>,
    ) -> Result<Response<LeaderResponse>, Status> {
        let calls = Calls::as_sender_of(&self.grpc, &request);
        let prefix = prefix_of(&request.into_inner().name);
        let first = calls.range(by_creation(&prefix, SortOrder::Ascend)).await?;
        let kv = first
            .kvs
            .into_iter()
            .next()
            .ok_or_else(|| Status::unknown("election: no leader"))?;
        Ok(Response::new(LeaderResponse {
            header: first.header,
            kv: Some(kv),
        }))
    }

    type ObserveStream = ReceiverStream<Result<LeaderResponse, Status>>;

    /// The leader now (or once there is one), then each change of its
    /// value, then the next leader when its key goes, and so on until the
    /// caller goes away. A failed step ends the stream without an error,
    /// as etcd's does.
    async fn observe(
        &self,
        request: Request<LeaderRequest>,
    ) -> Result<Response<Self::ObserveStream>, Status> {
        let calls = Calls::as_sender_of(&self.grpc, &request);
        let prefix = prefix_of(&request.into_inner().name);
        let (observed, stream) = mpsc::channel(OBSERVED);
        tokio::spawn(async move {
            if let Err(e) = observe(&calls, &prefix, &observed).await {
                tracing::debug!(error = %e, "an election's observation ended");
            }
        });
        Ok(Response::new(ReceiverStream::new(stream)))
    }

    async fn resign(
        &self,
        request: Request<ResignRequest>,
    ) -> Result<Response<ResignResponse>, Status> {
        let calls = Calls::as_sender_of(&self.grpc, &request);
        let leader = request.into_inner().leader.ok_or_else(missing_leader)?;
        let txn = calls.txn(resignation(&leader.key, leader.rev)).await?;
        Ok(Response::new(ResignResponse { header: txn.header }))
    }
}

type Observed = mpsc::Sender<Result<LeaderResponse, Status>>;

/// Sends each leader and each of its values until `observed` closes.
async fn observe(calls: &Calls, prefix: &Bytes, observed: &Observed) -> Result<(), Status> {
    let send = |header: Option<ResponseHeader>, kv: KeyValue| async move {
        let response = LeaderResponse {
            header,
            kv: Some(kv),
        };
        observed
            .send(Ok(response))
            .await
            .map_err(|_| Status::cancelled("the observer went away"))
    };
    loop {
        let first = calls.range(by_creation(prefix, SortOrder::Ascend)).await?;
        let (header, leader) = match first.kvs.into_iter().next() {
            Some(kv) => (first.header, kv),
            None => {
                let revision = first.header.map_or(0, |h| h.revision);
                first_put(calls, prefix, revision).await?
            }
        };
        let revision = header.as_ref().map_or(0, |h| h.revision);
        let key = leader.key.clone();
        send(header, leader).await?;
        // The leader's key from the next revision: each put is a new value,
        // a delete the end of this leader.
        let mut watch = calls.watch(key, Bytes::new(), revision + 1).await?;
        'leader: loop {
            let response = watch.next().await?;
            for event in response.events {
                if event.r#type() == EventType::Delete {
                    break 'leader;
                }
                send(response.header, event.kv.unwrap_or_default()).await?;
            }
        }
    }
}

/// Waits for the first key put under `prefix` from `revision` on; its
/// header names the put's own revision.
async fn first_put(
    calls: &Calls,
    prefix: &Bytes,
    revision: i64,
) -> Result<(Option<ResponseHeader>, KeyValue), Status> {
    let end = hark_proto::keys::prefix_end(prefix).into();
    let mut watch = calls.watch(prefix.clone(), end, revision).await?;
    loop {
        let response = watch.next().await?;
        let put = response
            .events
            .into_iter()
            .find(|e| e.r#type() == EventType::Put);
        if let Some(kv) = put.and_then(|e| e.kv) {
            let header = response.header.map(|h| ResponseHeader {
                revision: kv.mod_revision,
                ..h
            });
            return Ok((header, kv));
        }
    }
}
