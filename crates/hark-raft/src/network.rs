//! The peer transport, client side: openraft's messages to other members over
//! gRPC (`harkpeerpb.Peer`) on their peer URLs. Connections are made lazily
//! and kept; each RPC is one unary call, so appends pipeline over HTTP/2.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use hark_proto::harkpeerpb::Envelope;
use hark_proto::harkpeerpb::peer_client::PeerClient;
use openraft::error::{
    InstallSnapshotError, NetworkError, RPCError, RaftError, RemoteError, Unreachable,
};
use openraft::network::{RPCOption, RaftNetwork, RaftNetworkFactory};
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, InstallSnapshotRequest, InstallSnapshotResponse,
    VoteRequest, VoteResponse,
};
use parking_lot::Mutex;
use serde::Serialize;
use serde::de::DeserializeOwned;
use tonic::transport::{Channel, Endpoint};

use crate::types::{MemberInfo, TypeConfig, decode, encode};

/// One gRPC channel per peer URL, shared by replication and forwarding.
#[derive(Clone, Default)]
pub struct PeerChannels {
    channels: Arc<Mutex<HashMap<String, Channel>>>,
}

impl PeerChannels {
    /// A client for the member at `node` (its first peer URL).
    pub fn client(&self, node: &MemberInfo) -> Result<PeerClient<Channel>, String> {
        let url = node
            .peer_urls
            .first()
            .ok_or_else(|| format!("member {node} has no peer URL"))?;
        let mut channels = self.channels.lock();
        if let Some(c) = channels.get(url) {
            return Ok(PeerClient::new(c.clone()).max_decoding_message_size(usize::MAX));
        }
        let channel = Endpoint::from_shared(url.clone())
            .map_err(|e| format!("bad peer URL {url}: {e}"))?
            .connect_timeout(Duration::from_secs(1))
            .tcp_nodelay(true)
            .http2_keep_alive_interval(Duration::from_secs(5))
            .connect_lazy();
        channels.insert(url.clone(), channel.clone());
        Ok(PeerClient::new(channel).max_decoding_message_size(usize::MAX))
    }
}

/// Calls `method` on a peer: `T` out, `Result<R, E>` back (both postcard).
pub(crate) async fn call<T, R, E>(
    client: &mut PeerClient<Channel>,
    method: Method,
    request: &T,
    timeout: Option<Duration>,
) -> Result<Result<R, E>, tonic::Status>
where
    T: Serialize,
    R: DeserializeOwned,
    E: DeserializeOwned,
{
    let mut req = tonic::Request::new(Envelope {
        data: encode(request).into(),
    });
    if let Some(t) = timeout {
        req.set_timeout(t);
    }
    let resp = match method {
        Method::AppendEntries => client.append_entries(req).await,
        Method::Vote => client.vote(req).await,
        Method::InstallSnapshot => client.install_snapshot(req).await,
        Method::Propose => client.propose(req).await,
        Method::ReadIndex => client.read_index(req).await,
        Method::ChangeMembership => client.change_membership(req).await,
        Method::Members => client.members(req).await,
    }?;
    decode(&resp.into_inner().data)
        .map_err(|e| tonic::Status::internal(format!("undecodable peer response: {e}")))
}

#[derive(Debug, Clone, Copy)]
pub(crate) enum Method {
    AppendEntries,
    Vote,
    InstallSnapshot,
    Propose,
    ReadIndex,
    ChangeMembership,
    Members,
}

/// openraft's connection factory.
pub struct Network {
    pub(crate) channels: PeerChannels,
}

impl RaftNetworkFactory<TypeConfig> for Network {
    type Network = Connection;

    async fn new_client(&mut self, target: u64, node: &MemberInfo) -> Connection {
        Connection {
            target,
            client: self.channels.client(node),
        }
    }
}

/// openraft's connection to one member.
pub struct Connection {
    target: u64,
    client: Result<PeerClient<Channel>, String>,
}

impl Connection {
    async fn send<T, R, E>(
        &mut self,
        method: Method,
        request: &T,
        option: &RPCOption,
    ) -> Result<R, RPCError<u64, MemberInfo, RaftError<u64, E>>>
    where
        T: Serialize,
        R: DeserializeOwned,
        E: DeserializeOwned + std::error::Error,
    {
        let client = self.client.as_mut().map_err(|e| {
            RPCError::Unreachable(Unreachable::new(&std::io::Error::other(e.clone())))
        })?;
        match call::<T, R, RaftError<u64, E>>(client, method, request, Some(option.hard_ttl()))
            .await
        {
            Ok(Ok(r)) => Ok(r),
            Ok(Err(remote)) => Err(RPCError::RemoteError(RemoteError::new(self.target, remote))),
            Err(status) if status.code() == tonic::Code::Unavailable => {
                Err(RPCError::Unreachable(Unreachable::new(&status)))
            }
            Err(status) => Err(RPCError::Network(NetworkError::new(&status))),
        }
    }
}

impl RaftNetwork<TypeConfig> for Connection {
    async fn append_entries(
        &mut self,
        rpc: AppendEntriesRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<AppendEntriesResponse<u64>, RPCError<u64, MemberInfo, RaftError<u64>>> {
        self.send(Method::AppendEntries, &rpc, &option).await
    }

    async fn install_snapshot(
        &mut self,
        rpc: InstallSnapshotRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<
        InstallSnapshotResponse<u64>,
        RPCError<u64, MemberInfo, RaftError<u64, InstallSnapshotError>>,
    > {
        self.send(Method::InstallSnapshot, &rpc, &option).await
    }

    async fn vote(
        &mut self,
        rpc: VoteRequest<u64>,
        option: RPCOption,
    ) -> Result<VoteResponse<u64>, RPCError<u64, MemberInfo, RaftError<u64>>> {
        self.send(Method::Vote, &rpc, &option).await
    }
}
