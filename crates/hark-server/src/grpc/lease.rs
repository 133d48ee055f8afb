//! The Lease service over `hark_lease::Lessor`.

use hark_auth::Access;
use hark_lease::{LeaseError, TimeToLive};
use hark_proto::etcdserverpb::{self as pb, lease_server::Lease};
use prost::Message;
use tokio::sync::{mpsc, oneshot};
use tokio_stream::wrappers::ReceiverStream;
use tonic::metadata::MetadataMap;
use tonic::{Request, Response, Status, Streaming};

use crate::cluster_leases::{keep_alive, time_to_live};
use crate::grpc::access::{Needs, auth_status};
use crate::grpc::errors::{lease_status, request_too_large, stopped};
use crate::grpc::oversize::stream_receive_error;
use crate::grpc::watch::{NO_LEADER, REQUIRE_LEADER_KEY, leader_lost};
use crate::node::NodeHandle;

pub struct LeaseService {
    node: NodeHandle,
}

impl LeaseService {
    pub fn new(node: NodeHandle) -> Self {
        LeaseService { node }
    }

    async fn grant(
        &self,
        metadata: MetadataMap,
        req: pb::LeaseGrantRequest,
    ) -> Result<pb::LeaseGrantResponse, Status> {
        let node = self.node.get()?;
        if req.encoded_len() > node.max_request_bytes {
            return Err(request_too_large());
        }
        let grant = hark_mvcc::WriteRequest::LeaseGrant(hark_mvcc::LeaseGrantRequest {
            id: req.id,
            ttl: req.ttl,
        });
        node.check_write(&node.caller(&metadata)?, &grant)?;
        crate::grpc::quota::check(&node, &grant).await?;
        let (tx, rx) = oneshot::channel();
        node.lessor.grant(
            req.id,
            req.ttl,
            Box::new(move |r| {
                let _ = tx.send(r);
            }),
        );
        let granted = closed_if_dropped(rx.await).map_err(lease_status)?;
        Ok(pb::LeaseGrantResponse {
            header: node.header(granted.header_revision),
            id: granted.id,
            ttl: granted.ttl,
            error: String::new(),
        })
    }

    async fn revoke(
        &self,
        metadata: MetadataMap,
        req: pb::LeaseRevokeRequest,
    ) -> Result<pb::LeaseRevokeResponse, Status> {
        let node = self.node.get()?;
        let revoke =
            hark_mvcc::WriteRequest::LeaseRevoke(hark_mvcc::LeaseRevokeRequest { id: req.id });
        node.check_write(&node.caller(&metadata)?, &revoke)?;
        let (tx, rx) = oneshot::channel();
        node.lessor.revoke(
            req.id,
            Box::new(move |r| {
                let _ = tx.send(r);
            }),
        );
        let revision = closed_if_dropped(rx.await).map_err(lease_status)?;
        Ok(pb::LeaseRevokeResponse {
            header: node.header(revision),
        })
    }

    async fn time_to_live(
        &self,
        metadata: MetadataMap,
        req: pb::LeaseTimeToLiveRequest,
    ) -> Result<pb::LeaseTimeToLiveResponse, Status> {
        let node = self.node.get()?;
        let caller = node.caller(&metadata)?;
        Needs::Authenticated.check(&caller)?;
        if req.keys {
            caller
                .lease_keys(Access::Read, &node.lease_keys(req.id))
                .map_err(auth_status)?;
        }
        let asked = time_to_live(&node.replica, &node.lessor, req.id, req.keys)
            .await
            .map_err(lease_status)?;
        let header = node.header(node.store.current_revision());
        Ok(match asked {
            Some(TimeToLive {
                id,
                ttl,
                granted_ttl,
                keys,
            }) => pb::LeaseTimeToLiveResponse {
                header,
                id,
                ttl,
                granted_ttl,
                keys,
            },
            // etcd answers an unknown lease with TTL -1, not an error.
            None => pb::LeaseTimeToLiveResponse {
                header,
                id: req.id,
                ttl: -1,
                granted_ttl: 0,
                keys: Vec::new(),
            },
        })
    }
}

fn closed_if_dropped<T>(
    r: Result<Result<T, LeaseError>, oneshot::error::RecvError>,
) -> Result<T, LeaseError> {
    r.unwrap_or(Err(LeaseError::Store(hark_mvcc::Error::Closed)))
}

#[tonic::async_trait]
impl Lease for LeaseService {
    async fn lease_grant(
        &self,
        request: Request<pb::LeaseGrantRequest>,
    ) -> Result<Response<pb::LeaseGrantResponse>, Status> {
        let (metadata, _, message) = request.into_parts();
        self.grant(metadata, message).await.map(Response::new)
    }

    async fn lease_revoke(
        &self,
        request: Request<pb::LeaseRevokeRequest>,
    ) -> Result<Response<pb::LeaseRevokeResponse>, Status> {
        let (metadata, _, message) = request.into_parts();
        self.revoke(metadata, message).await.map(Response::new)
    }

    type LeaseKeepAliveStream = ReceiverStream<Result<pb::LeaseKeepAliveResponse, Status>>;

    async fn lease_keep_alive(
        &self,
        request: Request<Streaming<pb::LeaseKeepAliveRequest>>,
    ) -> Result<Response<Self::LeaseKeepAliveStream>, Status> {
        let metadata = request.metadata().clone();
        let node = self.node.get()?;
        // A caller who could renew no lease gets no stream (and no task):
        // credentials are fixed for the stream's life.
        Needs::Authenticated.check(&node.caller(&metadata)?)?;
        // clientv3's WithRequireLeader, as on Watch: refused, or ended,
        // while this member has no leader (etcd's stream interceptor).
        let require_leader = metadata
            .get(REQUIRE_LEADER_KEY)
            .is_some_and(|v| v == "true");
        let replica = require_leader.then(|| node.replica.clone());
        if replica.as_ref().is_some_and(|r| !r.has_leader()) {
            return Err(Status::unavailable(NO_LEADER));
        }
        let (stop, streams) = (node.stop.clone(), node.streams.clone());
        drop(node);
        let mut inbound = request.into_inner();
        let handle = self.node.clone();
        let (tx, rx) = mpsc::channel(64);
        streams.spawn(async move {
            // The stream ends OK when the client closes its side (as etcd's
            // does on EOF), with a status when a keep-alive fails, or with
            // the client's reset, seen by the gRPC metrics layer as Canceled.
            let lost_leader = leader_lost(replica.as_ref());
            tokio::pin!(lost_leader);
            let ending: Option<Status> = loop {
                let req = tokio::select! {
                    msg = inbound.message() => match msg {
                        Ok(Some(req)) => req,
                        Ok(None) => break None,
                        Err(status) => break stream_receive_error(status),
                    },
                    _ = stop.raised() => break Some(stopped()),
                    _ = &mut lost_leader => break Some(Status::unavailable(NO_LEADER)),
                };
                let Ok(node) = handle.get() else {
                    break Some(stopped());
                };
                // Any user; unless root, one who may write every key of the lease.
                let allowed = node.caller(&metadata).and_then(|caller| {
                    Needs::Authenticated.check(&caller)?;
                    caller
                        .lease_keys(Access::Write, &node.lease_keys(req.id))
                        .map_err(auth_status)
                });
                if let Err(status) = allowed {
                    break Some(status);
                }
                // etcd answers a keep-alive of an unknown or expired lease with
                // TTL 0; a follower asks the leader, whose lessor keeps time.
                let ttl = match keep_alive(&node.replica, &node.lessor, req.id).await {
                    Ok(ttl) => ttl,
                    Err(e) => break Some(lease_status(e)),
                };
                let resp = pb::LeaseKeepAliveResponse {
                    header: node.header(node.store.current_revision()),
                    id: req.id,
                    ttl,
                };
                // Not held while waiting on a slow client.
                drop(node);
                if tx.send(Ok(resp)).await.is_err() {
                    break None;
                }
            };
            if let Some(status) = ending {
                let _ = tx.send(Err(status)).await;
            }
        });
        Ok(Response::new(ReceiverStream::new(rx)))
    }

    async fn lease_time_to_live(
        &self,
        request: Request<pb::LeaseTimeToLiveRequest>,
    ) -> Result<Response<pb::LeaseTimeToLiveResponse>, Status> {
        let (metadata, _, message) = request.into_parts();
        self.time_to_live(metadata, message)
            .await
            .map(Response::new)
    }

    async fn lease_leases(
        &self,
        request: Request<pb::LeaseLeasesRequest>,
    ) -> Result<Response<pb::LeaseLeasesResponse>, Status> {
        // Unless root, the caller must read every key of every lease.
        let allowed = self.node.get().and_then(|node| {
            let caller = node.caller(request.metadata())?;
            Needs::Authenticated.check(&caller)?;
            for id in node.lessor.leases() {
                caller
                    .lease_keys(Access::Read, &node.lease_keys(id))
                    .map_err(auth_status)?;
            }
            Ok(())
        });
        allowed?;
        let leases = |node: std::sync::Arc<crate::node::Node>| {
            let leases = node
                .lessor
                .leases()
                .into_iter()
                .map(|id| pb::LeaseStatus { id })
                .collect();
            Response::new(pb::LeaseLeasesResponse {
                header: node.header(node.store.current_revision()),
                leases,
            })
        };
        self.node.get().map(leases)
    }
}
