//! The Lease service over `hark_lease::Lessor`.

use std::sync::Arc;

use hark_lease::{LeaseError, TimeToLive};
use hark_proto::etcdserverpb::{self as pb, lease_server::Lease};
use prost::Message;
use tokio::sync::{mpsc, oneshot};
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Code, Request, Response, Status, Streaming};

use crate::errors::{lease_status, request_too_large};
use crate::grpc_metrics;
use crate::node::Node;

const SERVICE: &str = "etcdserverpb.Lease";

pub struct LeaseService {
    node: Arc<Node>,
}

impl LeaseService {
    pub fn new(node: Arc<Node>) -> Self {
        LeaseService { node }
    }

    async fn grant(&self, req: pb::LeaseGrantRequest) -> Result<pb::LeaseGrantResponse, Status> {
        if req.encoded_len() > self.node.max_request_bytes {
            return Err(request_too_large());
        }
        let (tx, rx) = oneshot::channel();
        self.node.lessor.grant(
            req.id,
            req.ttl,
            Box::new(move |r| {
                let _ = tx.send(r);
            }),
        );
        let granted = closed_if_dropped(rx.await).map_err(lease_status)?;
        Ok(pb::LeaseGrantResponse {
            header: self.node.header(granted.header_revision),
            id: granted.id,
            ttl: granted.ttl,
            error: String::new(),
        })
    }

    async fn revoke(&self, req: pb::LeaseRevokeRequest) -> Result<pb::LeaseRevokeResponse, Status> {
        let (tx, rx) = oneshot::channel();
        self.node.lessor.revoke(
            req.id,
            Box::new(move |r| {
                let _ = tx.send(r);
            }),
        );
        let revision = closed_if_dropped(rx.await).map_err(lease_status)?;
        Ok(pb::LeaseRevokeResponse {
            header: self.node.header(revision),
        })
    }

    fn time_to_live(&self, req: pb::LeaseTimeToLiveRequest) -> pb::LeaseTimeToLiveResponse {
        let header = self.node.header(self.node.store.current_revision());
        match self.node.lessor.time_to_live(req.id, req.keys) {
            Ok(TimeToLive {
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
            Err(_) => pb::LeaseTimeToLiveResponse {
                header,
                id: req.id,
                ttl: -1,
                granted_ttl: 0,
                keys: Vec::new(),
            },
        }
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
        let call = grpc_metrics::unary(SERVICE, "LeaseGrant");
        call.finish(self.grant(request.into_inner()).await.map(Response::new))
    }

    async fn lease_revoke(
        &self,
        request: Request<pb::LeaseRevokeRequest>,
    ) -> Result<Response<pb::LeaseRevokeResponse>, Status> {
        let call = grpc_metrics::unary(SERVICE, "LeaseRevoke");
        call.finish(self.revoke(request.into_inner()).await.map(Response::new))
    }

    type LeaseKeepAliveStream = ReceiverStream<Result<pb::LeaseKeepAliveResponse, Status>>;

    async fn lease_keep_alive(
        &self,
        request: Request<Streaming<pb::LeaseKeepAliveRequest>>,
    ) -> Result<Response<Self::LeaseKeepAliveStream>, Status> {
        let call = grpc_metrics::bidi_stream(SERVICE, "LeaseKeepAlive");
        let mut inbound = request.into_inner();
        let node = self.node.clone();
        let (tx, rx) = mpsc::channel(64);
        tokio::spawn(async move {
            let mut shutdown = node.shutdown.clone();
            let code = loop {
                let req = tokio::select! {
                    msg = inbound.message() => match msg {
                        Ok(Some(req)) => req,
                        Ok(None) => break Code::Ok,
                        Err(status) => break status.code(),
                    },
                    _ = crate::server::shutting_down(&mut shutdown) => break Code::Unavailable,
                };
                // etcd answers a keep-alive of an unknown or expired lease with TTL 0.
                let ttl = node.lessor.keep_alive(req.id).unwrap_or(0);
                let resp = pb::LeaseKeepAliveResponse {
                    header: node.header(node.store.current_revision()),
                    id: req.id,
                    ttl,
                };
                if tx.send(Ok(resp)).await.is_err() {
                    break Code::Cancelled;
                }
            };
            call.handled(code);
        });
        Ok(Response::new(ReceiverStream::new(rx)))
    }

    async fn lease_time_to_live(
        &self,
        request: Request<pb::LeaseTimeToLiveRequest>,
    ) -> Result<Response<pb::LeaseTimeToLiveResponse>, Status> {
        let call = grpc_metrics::unary(SERVICE, "LeaseTimeToLive");
        call.finish(Ok(Response::new(self.time_to_live(request.into_inner()))))
    }

    async fn lease_leases(
        &self,
        _request: Request<pb::LeaseLeasesRequest>,
    ) -> Result<Response<pb::LeaseLeasesResponse>, Status> {
        let call = grpc_metrics::unary(SERVICE, "LeaseLeases");
        let leases = self
            .node
            .lessor
            .leases()
            .into_iter()
            .map(|id| pb::LeaseStatus { id })
            .collect();
        call.finish(Ok(Response::new(pb::LeaseLeasesResponse {
            header: self.node.header(self.node.store.current_revision()),
            leases,
        })))
    }
}
