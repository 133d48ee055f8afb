//! The peer transport, server side: `harkpeerpb.Peer` on `--listen-peer-urls`,
//! handing openraft's messages to the local raft and running proposals and
//! read-index requests forwarded by followers. Every method but `Members`
//! first admits its caller: a current member of this cluster (see
//! [`crate::admission`]).

use std::sync::Arc;

use hark_proto::harkpeerpb::Envelope;
use hark_proto::harkpeerpb::peer_server::{Peer, PeerServer};
use openraft::raft::{AppendEntriesRequest, TransferLeaderRequest, VoteRequest};
use openraft_legacy::network_v1::{ChunkedSnapshotReceiver, InstallSnapshotRequest};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tonic::{Request, Response, Status};

use crate::admission::Asks;
use crate::network::Method;
use crate::replica::{MembershipChange, Replica};
use crate::transfer::TransferStep;
use crate::types::{Batch, MemberInfo, TypeConfig, decode, encode};

/// The `Peer` service of one member.
pub struct PeerService {
    pub(crate) replica: Arc<Replica>,
}

impl PeerService {
    /// Runs `method` as if called over the wire: a call that came over a
    /// link (see [`crate::reverse`]).
    pub(crate) async fn dispatch(
        &self,
        method: Method,
        req: Request<Envelope>,
    ) -> Result<Response<Envelope>, Status> {
        match method {
            Method::AppendEntries => self.append_entries(req).await,
            Method::Vote => self.vote(req).await,
            Method::InstallSnapshot => self.install_snapshot(req).await,
            Method::Propose => self.propose(req).await,
            Method::ReadIndex => self.read_index(req).await,
            Method::ChangeMembership => self.change_membership(req).await,
            Method::Members => self.members(req).await,
            Method::Forward => self.forward(req).await,
            Method::TransferLeader => self.transfer_leader(req).await,
            Method::HashKv => self.hash_kv(req).await,
            Method::PreVote => self.pre_vote(req).await,
            Method::RaftTransferLeader => self.raft_transfer_leader(req).await,
        }
    }

    /// An append, once its caller is admitted and it decodes: what every
    /// append goes through before raft sees it, dialled or over a link.
    pub(crate) async fn accept_append(
        &self,
        req: Request<Envelope>,
    ) -> Result<AppendEntriesRequest<TypeConfig>, Status> {
        self.admit(&req, Asks::Raft).await?;
        unpack(req)
    }

    /// Refuses `req` unless its caller may ask this of this member.
    async fn admit(&self, req: &Request<Envelope>, asks: Asks) -> Result<(), Status> {
        self.replica.admit(req.metadata(), asks).await?;
        // Counted only once admitted: a member's id, so the labels stay as
        // few as the cluster's members.
        if let Ok(Some(from)) =
            crate::admission::header_id(req.metadata(), crate::admission::MEMBER_ID_HEADER)
        {
            self.replica
                .peer_received_bytes(from)
                .increment(req.get_ref().data.len() as u64);
        }
        Ok(())
    }
}

fn unpack<T: DeserializeOwned>(req: Request<Envelope>) -> Result<T, Status> {
    let envelope = req.into_inner();
    crate::format::check_peer_format(envelope.format)
        .map_err(|e| Status::failed_precondition(format!("peer message of {e}")))?;
    decode(&envelope.data)
        .map_err(|e| Status::invalid_argument(format!("undecodable peer message: {e}")))
}

/// A vote request from a member of either build (see
/// [`crate::format::decode_vote_request`]).
fn unpack_vote(req: Request<Envelope>) -> Result<VoteRequest<TypeConfig>, Status> {
    let envelope = req.into_inner();
    crate::format::check_peer_format(envelope.format)
        .map_err(|e| Status::failed_precondition(format!("peer message of {e}")))?;
    crate::format::decode_vote_request(&envelope.data)
        .map_err(|e| Status::invalid_argument(format!("undecodable peer message: {e}")))
}

fn pack<T: Serialize>(value: &T) -> Result<Response<Envelope>, Status> {
    Ok(Response::new(Envelope {
        data: encode(value).into(),
        format: crate::format::PEER_FORMAT,
    }))
}

#[tonic::async_trait]
impl Peer for PeerService {
    type ReverseStream = tokio_stream::wrappers::ReceiverStream<Result<Envelope, Status>>;

    /// A link a member opens so that this member sends it its calls (see
    /// the `reverse` module); open only to this cluster's members.
    async fn reverse(
        &self,
        req: Request<tonic::Streaming<Envelope>>,
    ) -> Result<Response<Self::ReverseStream>, Status> {
        self.replica.admit(req.metadata(), Asks::Raft).await?;
        let peer = crate::admission::header_id(req.metadata(), crate::admission::MEMBER_ID_HEADER)?
            .ok_or_else(|| Status::permission_denied("a link from a caller with no member id"))?;
        // Only a member this member's own membership lists (not one vouched
        // for by others): its calls are about to go there.
        if peer == self.replica.member_id() || self.replica.node(peer).is_none() {
            return Err(Status::permission_denied(format!(
                "member {peer:x} may not open a link to this member"
            )));
        }
        let appends_in_order = req
            .metadata()
            .contains_key(crate::reverse::APPENDS_IN_ORDER_HEADER);
        let frames = self
            .replica
            .channels
            .links
            .serve(peer, appends_in_order, req.into_inner())?;
        Ok(Response::new(frames))
    }

    async fn append_entries(&self, req: Request<Envelope>) -> Result<Response<Envelope>, Status> {
        let rpc = self.accept_append(req).await?;
        let answer = self.replica.raft.append_entries(rpc).await;
        // Taken from the leader this member follows (or now follows): any
        // answer but a higher vote of its own.
        if matches!(&answer, Ok(r) if !matches!(r, openraft::raft::AppendEntriesResponse::HigherVote(_)))
        {
            self.replica.heard_from_leader();
        }
        pack(&answer)
    }

    async fn vote(&self, req: Request<Envelope>) -> Result<Response<Envelope>, Status> {
        self.admit(&req, Asks::Raft).await?;
        let rpc = unpack_vote(req)?;
        pack(&self.replica.raft.vote(rpc).await)
    }

    async fn pre_vote(&self, req: Request<Envelope>) -> Result<Response<Envelope>, Status> {
        self.admit(&req, Asks::Raft).await?;
        let rpc = unpack_vote(req)?;
        pack(&self.replica.raft.pre_vote(rpc).await)
    }

    async fn raft_transfer_leader(
        &self,
        req: Request<Envelope>,
    ) -> Result<Response<Envelope>, Status> {
        self.admit(&req, Asks::Raft).await?;
        let rpc: TransferLeaderRequest<TypeConfig> = unpack(req)?;
        pack(&self.replica.raft.handle_transfer_leader(rpc).await)
    }

    async fn install_snapshot(&self, req: Request<Envelope>) -> Result<Response<Envelope>, Status> {
        self.admit(&req, Asks::Raft).await?;
        self.replica
            .clone()
            .hold_elections_while_receiving_a_snapshot();
        // A chunk is up to a mebibyte decoded byte by byte: not on the
        // threads that serve clients and heartbeats.
        let rpc: InstallSnapshotRequest<TypeConfig> =
            tokio::task::spawn_blocking(move || unpack(req))
                .await
                .map_err(|e| Status::internal(format!("decoding a snapshot chunk: {e}")))??;
        pack(&self.replica.raft.install_snapshot(rpc).await)
    }

    async fn propose(&self, req: Request<Envelope>) -> Result<Response<Envelope>, Status> {
        self.admit(&req, Asks::Forwarded).await?;
        let batch: Batch = unpack(req)?;
        pack(&Ok::<_, ()>(self.replica.propose_forwarded(batch).await))
    }

    async fn read_index(&self, req: Request<Envelope>) -> Result<Response<Envelope>, Status> {
        self.admit(&req, Asks::Forwarded).await?;
        let () = unpack(req)?;
        let deadline = tokio::time::Instant::now() + self.replica.request_timeout;
        pack(&self.replica.read_index_here(deadline).await)
    }

    /// Open to anyone: a member being added asks for its id with it before
    /// it knows the id to name itself with.
    async fn members(&self, req: Request<Envelope>) -> Result<Response<Envelope>, Status> {
        let () = unpack(req)?;
        let members: Vec<(u64, MemberInfo, bool)> = self
            .replica
            .members()
            .into_iter()
            .map(|m| (m.id, m.info, m.is_learner))
            .collect();
        pack(&Ok::<_, ()>((self.replica.cluster_id(), members)))
    }

    async fn forward(&self, req: Request<Envelope>) -> Result<Response<Envelope>, Status> {
        self.admit(&req, Asks::Forwarded).await?;
        let request: Vec<u8> = unpack(req)?;
        pack(&self.replica.handle_forwarded(request).await)
    }

    async fn change_membership(
        &self,
        req: Request<Envelope>,
    ) -> Result<Response<Envelope>, Status> {
        self.admit(&req, Asks::Forwarded).await?;
        let change: MembershipChange = unpack(req)?;
        pack(&self.replica.change_membership_here(change).await)
    }

    async fn transfer_leader(&self, req: Request<Envelope>) -> Result<Response<Envelope>, Status> {
        self.admit(&req, Asks::Forwarded).await?;
        let step: TransferStep = unpack(req)?;
        self.replica.clone().take_transfer_step(step);
        pack(&Ok::<(), ()>(()))
    }

    async fn hash_kv(&self, req: Request<Envelope>) -> Result<Response<Envelope>, Status> {
        self.admit(&req, Asks::Forwarded).await?;
        let revision: i64 = unpack(req)?;
        pack(&self.replica.hash_for_peer(revision).await)
    }
}

impl Replica {
    /// The gRPC service to serve on the peer URLs.
    pub fn peer_service(self: &Arc<Self>) -> PeerServer<PeerService> {
        PeerServer::new(PeerService {
            replica: self.clone(),
        })
        .max_decoding_message_size(usize::MAX)
        .max_encoding_message_size(usize::MAX)
    }
}
