//! The peer transport, client side: openraft's messages to other members over
//! gRPC (`harkpeerpb.Peer`) on their peer URLs. Connections are made lazily
//! and kept; each RPC is one unary call. Appends to a follower whose link
//! hands them to raft in order go over that link, several in flight
//! (`Connection::stream_append`, up to `--peer-append-window`).
//! An `https://` peer URL is dialled through [`PeerTls`], which the server
//! supplies: this crate makes TCP connections and knows nothing of
//! certificates.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hark_proto::harkpeerpb::Envelope;
use hark_proto::harkpeerpb::peer_client::PeerClient;
use openraft::base::{BoxFuture, BoxStream};
use openraft::error::decompose::DecomposeResult;
use openraft::error::{
    NetworkError, RPCError, RaftError, RemoteError, ReplicationClosed, StreamingError, Unreachable,
};
use openraft::network::{Backoff, RPCOption, RaftNetworkFactory, RaftNetworkV2};
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, SnapshotResponse, StreamAppendError,
    StreamAppendResult, TransferLeaderRequest, TransferLeaderResponse, VoteRequest, VoteResponse,
};
use openraft_legacy::network_v1::{
    InstallSnapshotError, InstallSnapshotRequest, InstallSnapshotResponse, RaftNetwork,
};
use parking_lot::Mutex;
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpSocket, TcpStream};
use tonic::transport::{Channel, Endpoint};

use crate::admission::Caller;
use crate::durability::LogDurability;
use crate::state_machine::SnapshotSource;
use crate::types::{MemberInfo, Snapshot, TypeConfig, Vote, decode, encode, encode_with_capacity};

/// How long a peer has to accept a connection (and, with TLS, finish its
/// handshake).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);

/// HTTP/2 windows of a connection to a peer, the peer listener's.
const CONNECTION_WINDOW: u32 = 64 << 20;
const STREAM_WINDOW: u32 = 16 << 20;

/// A byte stream to a peer: TLS over TCP, as [`PeerTls`] makes it.
pub trait PeerStream: AsyncRead + AsyncWrite + Send + Unpin + 'static {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin + 'static> PeerStream for T {}

/// The future [`PeerTls`] returns.
pub type PeerHandshake = Pin<Box<dyn Future<Output = std::io::Result<Box<dyn PeerStream>>> + Send>>;

/// Secures a fresh TCP connection to the peer named `host` (the host of
/// its `https://` peer URL): the TLS client handshake, with whatever
/// certificates the server was given.
#[derive(Clone)]
pub struct PeerTls(Arc<dyn Fn(String, TcpStream) -> PeerHandshake + Send + Sync>);

impl PeerTls {
    pub fn new(
        handshake: impl Fn(String, TcpStream) -> PeerHandshake + Send + Sync + 'static,
    ) -> Self {
        PeerTls(Arc::new(handshake))
    }
}

impl std::fmt::Debug for PeerTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PeerTls")
    }
}

/// One gRPC channel per peer URL, shared by replication and forwarding,
/// and the links peers opened to this member (see [`crate::reverse`]).
#[derive(Clone, Default)]
pub struct PeerChannels {
    channels: Arc<Mutex<HashMap<String, Channel>>>,
    pub(crate) links: crate::reverse::ReverseLinks,
    /// The address connections to peers leave from (see
    /// [`crate::ReplicaConfig::peer_source`]).
    source: Option<IpAddr>,
    /// How `https://` peers are dialled (`None`: they cannot be).
    tls: Option<PeerTls>,
}

impl PeerChannels {
    pub fn new(source: Option<IpAddr>, tls: Option<PeerTls>) -> Self {
        PeerChannels {
            channels: Arc::default(),
            links: Default::default(),
            source,
            tls,
        }
    }

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
        if let Some(path) = unix_peer_path(url)? {
            // As etcd: a `unix://` peer URL's host is the socket file
            // (relative to the working directory); plain HTTP/2 over it.
            let endpoint = Endpoint::from_static("http://localhost")
                .connect_timeout(CONNECT_TIMEOUT)
                .http2_keep_alive_interval(Duration::from_secs(5))
                .initial_connection_window_size(CONNECTION_WINDOW)
                .initial_stream_window_size(STREAM_WINDOW);
            let channel =
                endpoint.connect_with_connector_lazy(tower::service_fn(move |_: http::Uri| {
                    let path = path.clone();
                    async move {
                        let stream = tokio::net::UnixStream::connect(path).await?;
                        Ok::<_, std::io::Error>(hyper_util::rt::TokioIo::new(stream))
                    }
                }));
            channels.insert(url.clone(), channel.clone());
            return Ok(PeerClient::new(channel).max_decoding_message_size(usize::MAX));
        }
        let endpoint = Endpoint::from_shared(url.clone())
            .map_err(|e| format!("bad peer URL {url}: {e}"))?
            .connect_timeout(CONNECT_TIMEOUT)
            .tcp_nodelay(true)
            .http2_keep_alive_interval(Duration::from_secs(5))
            // Calls also come back on these connections, over the links
            // (see `reverse.rs`): windows as large as the peer listener's.
            .initial_connection_window_size(CONNECTION_WINDOW)
            .initial_stream_window_size(STREAM_WINDOW)
            .local_address(self.source);
        let channel = if url.starts_with("https://") {
            let Some(tls) = self.tls.clone() else {
                return Err(format!(
                    "peer URL {url} is https:// but this member has no peer TLS \
                     (--peer-cert-file and --peer-key-file, or --peer-auto-tls)"
                ));
            };
            let source = self.source;
            endpoint.connect_with_connector_lazy(tower::service_fn(move |uri: http::Uri| {
                let tls = tls.clone();
                async move {
                    let stream = tokio::time::timeout(CONNECT_TIMEOUT, dial_tls(uri, source, tls))
                        .await
                        .map_err(|_| std::io::Error::other("peer connect timed out"))??;
                    Ok::<_, std::io::Error>(hyper_util::rt::TokioIo::new(stream))
                }
            }))
        } else {
            endpoint.connect_lazy()
        };
        channels.insert(url.clone(), channel.clone());
        Ok(PeerClient::new(channel).max_decoding_message_size(usize::MAX))
    }
}

/// The socket file of a `unix://` peer URL: its host, as etcd reads it;
/// `None` for other schemes. TLS over a unix socket (`unixs://`) is not
/// dialled.
fn unix_peer_path(url: &str) -> Result<Option<std::path::PathBuf>, String> {
    if url.starts_with("unixs://") {
        return Err(format!(
            "peer URL {url}: TLS over a unix socket (unixs://) is not supported"
        ));
    }
    Ok(url
        .strip_prefix("unix://")
        .and_then(|rest| rest.split('/').next())
        .filter(|host| !host.is_empty())
        .map(std::path::PathBuf::from))
}

/// A TCP connection to the peer at `uri`, from `source`, with `tls` over it.
async fn dial_tls(
    uri: http::Uri,
    source: Option<IpAddr>,
    tls: PeerTls,
) -> std::io::Result<Box<dyn PeerStream>> {
    let bad = || std::io::Error::other(format!("peer URL {uri} has no host and port"));
    let host = uri.host().ok_or_else(bad)?;
    let port = uri.port_u16().ok_or_else(bad)?;
    let host = host.trim_matches(['[', ']']).to_string();
    let addr = tokio::net::lookup_host((host.as_str(), port))
        .await?
        .next()
        .ok_or_else(bad)?;
    let socket = match addr {
        SocketAddr::V4(_) => TcpSocket::new_v4()?,
        SocketAddr::V6(_) => TcpSocket::new_v6()?,
    };
    if let Some(source) = source {
        socket.bind(SocketAddr::new(source, 0))?;
    }
    let tcp = socket.connect(addr).await?;
    tcp.set_nodelay(true)?;
    (tls.0)(host, tcp).await
}

/// Calls `method` on a peer: `T` out, `Result<R, E>` back (both postcard).
/// `from` names the calling member (see [`crate::admission`]); only a
/// member that does not know its id yet calls without.
pub(crate) async fn call<T, R, E>(
    client: &mut PeerClient<Channel>,
    method: Method,
    request: &T,
    timeout: Option<Duration>,
    from: Option<Caller>,
) -> Result<Result<R, E>, tonic::Status>
where
    T: Serialize,
    R: DeserializeOwned,
    E: DeserializeOwned,
{
    let request = Envelope {
        data: encode(request).into(),
        format: crate::format::PEER_FORMAT,
    };
    call_encoded(client, method, request, timeout, from).await
}

/// Calls `method` on member `peer` (at `node`): over the link it opened to
/// this member when one is open (see [`crate::reverse`]), else dialled.
pub(crate) async fn call_peer<R, E>(
    channels: &PeerChannels,
    peer: u64,
    node: &MemberInfo,
    method: Method,
    request: Vec<u8>,
    timeout: Duration,
    from: Caller,
) -> Result<Result<R, E>, tonic::Status>
where
    R: DeserializeOwned,
    E: DeserializeOwned,
{
    let request = Envelope {
        data: request.into(),
        format: crate::format::PEER_FORMAT,
    };
    if crate::reverse::over_links(method)
        && let Some(answer) = channels
            .links
            .call(peer, method, request.clone(), timeout)
            .await
    {
        return decode_answer(answer?);
    }
    let mut client = channels.client(node).map_err(tonic::Status::unavailable)?;
    call_encoded(&mut client, method, request, Some(timeout), Some(from)).await
}

async fn call_encoded<R, E>(
    client: &mut PeerClient<Channel>,
    method: Method,
    request: Envelope,
    timeout: Option<Duration>,
    from: Option<Caller>,
) -> Result<Result<R, E>, tonic::Status>
where
    R: DeserializeOwned,
    E: DeserializeOwned,
{
    let mut req = tonic::Request::new(request);
    if let Some(t) = timeout {
        req.set_timeout(t);
    }
    if let Some(from) = from {
        from.stamp(&mut req);
    }
    let resp = match method {
        Method::AppendEntries => client.append_entries(req).await,
        Method::Vote => client.vote(req).await,
        Method::InstallSnapshot => client.install_snapshot(req).await,
        Method::Propose => client.propose(req).await,
        Method::ReadIndex => client.read_index(req).await,
        Method::ChangeMembership => client.change_membership(req).await,
        Method::Members => client.members(req).await,
        Method::Forward => client.forward(req).await,
        Method::TransferLeader => client.transfer_leader(req).await,
        Method::HashKv => client.hash_kv(req).await,
        Method::PreVote => client.pre_vote(req).await,
        Method::RaftTransferLeader => client.raft_transfer_leader(req).await,
    }?;
    decode_answer(resp.into_inner())
}

/// A peer's answer, its format checked and decoded.
fn decode_answer<R, E>(resp: Envelope) -> Result<Result<R, E>, tonic::Status>
where
    R: DeserializeOwned,
    E: DeserializeOwned,
{
    crate::format::check_peer_format(resp.format)
        // Internal, not FailedPrecondition: the peer did the work, so the
        // call must not look refused (a refused proposal is retried).
        .map_err(|e| tonic::Status::internal(format!("peer response of {e}")))?;
    decode(&resp.data)
        .map_err(|e| tonic::Status::internal(format!("undecodable peer response: {e}")))
}

#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub(crate) enum Method {
    AppendEntries,
    Vote,
    InstallSnapshot,
    Propose,
    ReadIndex,
    ChangeMembership,
    Members,
    Forward,
    TransferLeader,
    HashKv,
    /// Added with openraft 0.10 (after every method above, whose encodings
    /// stay): pre-vote, and openraft's own leader transfer.
    PreVote,
    RaftTransferLeader,
}

/// Most bytes in one AppendEntries of several entries: openraft gives each
/// append a heartbeat interval to arrive, so a follower far behind gets its
/// entries in pieces it can take in time.
pub(crate) const APPEND_BYTES: usize = 2 << 20;

/// Room for an append's fields besides its entries (vote, previous log id,
/// commit index, the entries' count: a few dozen bytes of varints).
const APPEND_HEADER_BYTES: usize = 256;

/// Since when each peer has answered this member's raft calls without a
/// break (etcd's transport `ActiveSince`): membership changes are refused
/// while the members they rely on have not been reachable for a while.
///
/// As in etcd, where a peer counts as active while its stream stays
/// connected, a call that only ran out of time does not break the streak
/// unless the peer has not answered for [`SILENCE_BREAKS_STREAK`]: on a
/// loaded machine heartbeats run late now and then, and a streak that
/// every late one broke kept MemberAdd refused for over a minute.
#[derive(Clone, Default)]
pub(crate) struct PeerHealth(Arc<parking_lot::Mutex<HashMap<u64, Streak>>>);

#[derive(Clone, Copy)]
struct Streak {
    since: Instant,
    last_answer: Instant,
}

/// How a raft call to a peer ended, for [`PeerHealth`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CallEnded {
    Answered,
    /// Ran out of its own time allowance.
    TimedOut,
    /// Refused, reset, unreachable or failed.
    Broken,
}

/// A peer silent for this long is no longer active, whatever the reason.
const SILENCE_BREAKS_STREAK: Duration = Duration::from_secs(1);

impl PeerHealth {
    pub(crate) fn record(&self, peer: u64, ended: CallEnded) {
        self.record_at(peer, ended, Instant::now());
    }

    fn record_at(&self, peer: u64, ended: CallEnded, now: Instant) {
        let mut streaks = self.0.lock();
        match ended {
            CallEnded::Answered => {
                streaks
                    .entry(peer)
                    .or_insert(Streak {
                        since: now,
                        last_answer: now,
                    })
                    .last_answer = now;
            }
            CallEnded::TimedOut
                if streaks.get(&peer).is_some_and(|s| {
                    now.saturating_duration_since(s.last_answer) < SILENCE_BREAKS_STREAK
                }) => {}
            CallEnded::TimedOut | CallEnded::Broken => {
                streaks.remove(&peer);
            }
        }
    }

    /// Since when `peer` has answered without a break (`None`: it does not).
    pub(crate) fn active_since(&self, peer: u64) -> Option<Instant> {
        self.active_since_at(peer, Instant::now())
    }

    fn active_since_at(&self, peer: u64, now: Instant) -> Option<Instant> {
        self.0
            .lock()
            .get(&peer)
            .filter(|s| now.saturating_duration_since(s.last_answer) < SILENCE_BREAKS_STREAK)
            .map(|s| s.since)
    }
}

/// Peers that refused this member as no member of their cluster, and when
/// they last did (cleared by any answer): a member removed while it could
/// not apply its removal learns it from them (see
/// [`crate::Replica::removed`]), as etcd's hears "removed" from its peers.
#[derive(Clone, Default)]
pub(crate) struct PeerRefusals(Arc<parking_lot::Mutex<HashMap<u64, Instant>>>);

impl PeerRefusals {
    fn record(&self, peer: u64, answer: &Result<impl Sized, tonic::Status>) {
        let not_a_member = matches!(answer, Err(s) if s.code() == tonic::Code::PermissionDenied
            && s.message().contains(crate::admission::NOT_A_MEMBER));
        let mut refusals = self.0.lock();
        if not_a_member {
            refusals.insert(peer, Instant::now());
        } else if answer.is_ok() {
            refusals.remove(&peer);
        }
    }

    /// The peers that refused this member within `within`.
    pub(crate) fn refusing(&self, within: Duration) -> std::collections::BTreeSet<u64> {
        let now = Instant::now();
        self.0
            .lock()
            .iter()
            .filter(|(_, at)| now.saturating_duration_since(**at) < within)
            .map(|(peer, _)| *peer)
            .collect()
    }
}

/// openraft's connection factory.
pub struct Network {
    pub(crate) channels: PeerChannels,
    pub(crate) heartbeat: Duration,
    pub(crate) health: PeerHealth,
    pub(crate) refusals: PeerRefusals,
    /// This member, as it names itself to the others.
    pub(crate) caller: Caller,
    /// What of this member's log is on disk: the commit index sent to
    /// followers is held back to it (see [`crate::durability`]).
    pub(crate) durability: LogDurability,
    /// Most appends in flight to one follower (`--peer-append-window`).
    pub(crate) append_window: usize,
    pub(crate) pipeline: PipelineStats,
    /// What a follower too far behind is sent.
    pub(crate) snapshots: SnapshotSource,
}

/// What the append pipelines did, for tests and metrics.
#[derive(Clone, Default)]
pub(crate) struct PipelineStats {
    /// The most appends that were ever in flight to one follower at once.
    pub(crate) most_in_flight: Arc<std::sync::atomic::AtomicUsize>,
}

impl RaftNetworkFactory<TypeConfig> for Network {
    type Network = Connection;

    async fn new_client(&mut self, target: u64, node: &MemberInfo) -> Connection {
        Connection {
            target,
            node: node.clone(),
            channels: self.channels.clone(),
            heartbeat: self.heartbeat,
            health: self.health.clone(),
            refusals: self.refusals.clone(),
            caller: self.caller,
            durability: self.durability.clone(),
            append_window: self.append_window,
            pipeline: self.pipeline.clone(),
            snapshots: self.snapshots.clone(),
            sent_bytes: metrics::counter!("etcd_network_peer_sent_bytes_total",
                "To" => format!("{target:x}")),
        }
    }
}

/// openraft's connection to one member.
#[derive(Clone)]
pub struct Connection {
    target: u64,
    node: MemberInfo,
    channels: PeerChannels,
    heartbeat: Duration,
    health: PeerHealth,
    refusals: PeerRefusals,
    caller: Caller,
    durability: LogDurability,
    append_window: usize,
    pipeline: PipelineStats,
    snapshots: SnapshotSource,
    /// `etcd_network_peer_sent_bytes_total` for this peer, looked up once
    /// (a lookup per call formats its label and hashes the key).
    sent_bytes: metrics::Counter,
}

impl Connection {
    async fn send<R, E>(
        &mut self,
        method: Method,
        request: Vec<u8>,
        option: &RPCOption,
    ) -> Result<R, RPCError<TypeConfig, RaftError<TypeConfig, E>>>
    where
        R: DeserializeOwned,
        E: DeserializeOwned + std::error::Error,
    {
        let answer = self.call::<R, E>(method, request, option).await;
        self.rpc_result(answer)
    }

    /// A call's outcome as openraft takes it (openraft's error type is
    /// large; it is what its network trait returns).
    #[allow(clippy::result_large_err)]
    fn rpc_result<R, E: std::error::Error>(
        &self,
        answer: Result<Result<R, RaftError<TypeConfig, E>>, tonic::Status>,
    ) -> Result<R, RPCError<TypeConfig, RaftError<TypeConfig, E>>> {
        match answer {
            Ok(Ok(r)) => Ok(r),
            Ok(Err(remote)) => Err(RPCError::RemoteError(RemoteError::new(self.target, remote))),
            Err(status) if peer_unreachable(&status) => {
                Err(RPCError::Unreachable(Unreachable::new(&status)))
            }
            Err(status) => Err(RPCError::Network(NetworkError::new(&status))),
        }
    }

    /// One call, its answer or the status it failed with, recorded in the
    /// peer's health.
    async fn call<R, E>(
        &mut self,
        method: Method,
        request: Vec<u8>,
        option: &RPCOption,
    ) -> Result<Result<R, RaftError<TypeConfig, E>>, tonic::Status>
    where
        R: DeserializeOwned,
        E: DeserializeOwned + std::error::Error,
    {
        let started = Instant::now();
        self.sent_bytes.increment(request.len() as u64);
        let answer = call_peer::<R, RaftError<TypeConfig, E>>(
            &self.channels,
            self.target,
            &self.node,
            method,
            request,
            option.hard_ttl(),
            self.caller,
        )
        .await;
        self.record_call(started, option, &answer);
        answer
    }

    /// A call's outcome, in the peer's health.
    fn record_call<R>(
        &self,
        started: Instant,
        option: &RPCOption,
        answer: &Result<R, tonic::Status>,
    ) {
        let ended = match answer {
            Ok(_) => CallEnded::Answered,
            Err(_) if started.elapsed() >= option.hard_ttl() => CallEnded::TimedOut,
            Err(_) => CallEnded::Broken,
        };
        self.health.record(self.target, ended);
        self.refusals.record(self.target, answer);
    }
}

/// The call got no answer from the peer's raft: the connection was refused,
/// broken or reset. openraft backs off after `Unreachable` (see `backoff`);
/// after a `NetworkError` it retries at once, which against a partitioned
/// peer is a busy loop of connection attempts and log lines. A timeout
/// stays a `NetworkError`: it has already waited. A peer that refuses this
/// member (another cluster, or one whose membership does not list this
/// member: see [`crate::admission`]) is backed off from the same way.
fn peer_unreachable(status: &tonic::Status) -> bool {
    matches!(
        status.code(),
        tonic::Code::Unavailable
            | tonic::Code::Unknown
            | tonic::Code::Cancelled
            | tonic::Code::PermissionDenied
            | tonic::Code::FailedPrecondition
    )
}

impl Connection {
    /// An append as it goes on the wire: the commit index held back to
    /// what is on disk here, and entries cut to [`APPEND_BYTES`].
    fn prepare_append(&self, mut rpc: AppendEntriesRequest<TypeConfig>) -> PreparedAppend {
        rpc.leader_commit = self.durability.clamp_commit(rpc.leader_commit);
        let prev = rpc.prev_log_id;
        let last = rpc.entries.last().map(|e| e.log_id).or(prev);
        // A follower far behind gets its entries in pieces it can take in
        // time: only the first ones are sent, and a success reports how far
        // the follower now matches.
        // Cut by the entries' sizes, then encode once: encoding them all
        // to cut afterwards encoded each entry of a far-behind follower's
        // 64 several times.
        let (keep, bytes) = crate::log_store::entries_within(&rpc.entries, APPEND_BYTES);
        let mut cut_at = None;
        if keep < rpc.entries.len() {
            rpc.entries.truncate(keep);
            cut_at = rpc.entries.last().map(|e| e.log_id);
        }
        // The entries' sizes are known: no second size pass over them.
        let request = encode_with_capacity(&rpc, bytes.saturating_add(APPEND_HEADER_BYTES));
        PreparedAppend {
            request,
            entries: rpc.entries.len(),
            prev,
            last: cut_at.or(last),
            cut: cut_at.is_some(),
        }
    }

    async fn append(
        &mut self,
        rpc: AppendEntriesRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<AppendEntriesResponse<TypeConfig>, RPCError<TypeConfig, RaftError<TypeConfig>>>
    {
        let PreparedAppend {
            request,
            entries,
            last,
            cut,
            ..
        } = self.prepare_append(rpc);
        let cut_at = cut.then_some(last).flatten();
        let started = std::time::Instant::now();
        let answer = self.send(Method::AppendEntries, request, &option).await;
        if entries > 0 {
            crate::stages::record("replicate", started);
        } else if answer.is_err() {
            metrics::counter!("etcd_server_heartbeat_send_failures_total").increment(1);
        }
        match (answer, cut_at) {
            (Ok(AppendEntriesResponse::Success), Some(last)) => {
                Ok(AppendEntriesResponse::PartialSuccess(Some(last)))
            }
            (answer, _) => answer,
        }
    }

    async fn request_vote(
        &mut self,
        method: Method,
        rpc: VoteRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<VoteResponse<TypeConfig>, RPCError<TypeConfig, RaftError<TypeConfig>>> {
        self.send(method, encode(&rpc), &option).await
    }

    /// After an unreachable peer: retry soon (a peer back from a restart is
    /// caught up at once), then less often.
    fn retry_backoff(&self) -> Backoff {
        let first = self.heartbeat;
        Backoff::new((0..).map(move |n: u32| {
            (first * 2u32.saturating_pow(n.min(4))).min(Duration::from_millis(500))
        }))
    }
}

/// An append encoded for the wire, and what it carries.
struct PreparedAppend {
    request: Vec<u8>,
    entries: usize,
    prev: Option<crate::types::LogId>,
    /// The last entry sent (`prev` when none is).
    last: Option<crate::types::LogId>,
    /// Entries were left out (see [`APPEND_BYTES`]): the follower matches
    /// only up to `last` once this one succeeds.
    cut: bool,
}

/// An append on its way over a follower's link, its answer still to come.
struct InFlight {
    answer: crate::reverse::LinkAnswer,
    prepared: PreparedAppend,
    started: Instant,
}

/// One pipelined `stream_append`: the appends openraft hands over, sent on
/// the follower's link as they come, at most `append_window` of them
/// unanswered, and their answers in the order they were sent.
struct Pipeline<'s, S> {
    connection: &'s mut Connection,
    /// `None` once it has ended or nothing more may follow (after a cut
    /// append, or an error).
    input: Option<S>,
    in_flight: VecDeque<InFlight>,
    option: RPCOption,
}

type StreamItem = Result<StreamAppendResult<TypeConfig>, RPCError<TypeConfig>>;

impl<S> Pipeline<'_, S>
where
    S: futures_util::Stream<Item = AppendEntriesRequest<TypeConfig>> + Unpin,
{
    /// The next answer, in order; `None` once the pipeline is done.
    async fn next(&mut self) -> Option<StreamItem> {
        loop {
            let room = self.in_flight.len() < self.connection.append_window;
            let can_send = room && self.input.is_some();
            if self.in_flight.is_empty() && !can_send {
                return None;
            }
            tokio::select! {
                biased;
                answer = answer_of_front(&mut self.in_flight) => {
                    let sent = self.in_flight.pop_front().expect("an append is in flight");
                    let item = self.answered(sent, answer);
                    if !matches!(item, Ok(Ok(_))) {
                        // openraft starts a new stream from what was
                        // acknowledged: nothing after this one counts.
                        self.input = None;
                        self.in_flight.clear();
                    }
                    return Some(item);
                }
                rpc = next_of(&mut self.input), if can_send => {
                    let Some(rpc) = rpc else {
                        self.input = None;
                        continue;
                    };
                    if let Err(e) = self.send(rpc).await {
                        self.input = None;
                        self.in_flight.clear();
                        return Some(Err(e));
                    }
                }
            }
        }
    }

    /// Queues `rpc` on the follower's link, behind those in flight.
    async fn send(
        &mut self,
        rpc: AppendEntriesRequest<TypeConfig>,
    ) -> Result<(), RPCError<TypeConfig>> {
        let connection = &*self.connection;
        let mut prepared = connection.prepare_append(rpc);
        if prepared.cut {
            // What follows starts past the cut: it would not fit.
            self.input = None;
        }
        connection
            .sent_bytes
            .increment(prepared.request.len() as u64);
        let started = Instant::now();
        let envelope = Envelope {
            // The bytes go to the link; what stays in flight is what the
            // answer is read against.
            data: std::mem::take(&mut prepared.request).into(),
            format: crate::format::PEER_FORMAT,
        };
        let queued = connection
            .channels
            .links
            .queue(
                connection.target,
                Method::AppendEntries,
                envelope,
                self.option.hard_ttl(),
            )
            .await;
        let answer = match queued {
            Some(Ok(answer)) => answer,
            Some(Err(status)) => {
                connection.record_call::<()>(started, &self.option, &Err(status.clone()));
                return Err(RPCError::Network(NetworkError::new(&status)));
            }
            None => {
                let status = tonic::Status::unavailable("the follower's link closed");
                connection.record_call::<()>(started, &self.option, &Err(status.clone()));
                return Err(RPCError::Unreachable(Unreachable::new(&status)));
            }
        };
        self.in_flight.push_back(InFlight {
            answer,
            prepared,
            started,
        });
        let in_flight = self.in_flight.len();
        metrics::histogram!(APPENDS_IN_FLIGHT).record(in_flight as f64);
        connection
            .pipeline
            .most_in_flight
            .fetch_max(in_flight, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }

    /// An append's answer as openraft's stream takes it.
    fn answered(&self, sent: InFlight, answer: Result<Envelope, tonic::Status>) -> StreamItem {
        let connection = &*self.connection;
        let answer = answer
            .and_then(decode_answer::<AppendEntriesResponse<TypeConfig>, RaftError<TypeConfig>>);
        connection.record_call(sent.started, &self.option, &answer);
        let PreparedAppend {
            entries,
            prev,
            last,
            ..
        } = sent.prepared;
        if entries > 0 {
            crate::stages::record("replicate", sent.started);
        } else if answer.is_err() {
            metrics::counter!("etcd_server_heartbeat_send_failures_total").increment(1);
        }
        let response = connection.rpc_result(answer).decompose_infallible()?;
        Ok(match response {
            // A cut append's success covers only what was sent: `last`.
            AppendEntriesResponse::Success => Ok(last),
            AppendEntriesResponse::PartialSuccess(matching) => Ok(matching),
            AppendEntriesResponse::HigherVote(vote) => Err(StreamAppendError::HigherVote(vote)),
            AppendEntriesResponse::Conflict => match prev {
                Some(prev) => Err(StreamAppendError::Conflict(prev)),
                None => {
                    let status = tonic::Status::internal("a conflict with no previous entry");
                    return Err(RPCError::Network(NetworkError::new(&status)));
                }
            },
        })
    }
}

/// The answer to the first append in flight (pending while none is).
async fn answer_of_front(in_flight: &mut VecDeque<InFlight>) -> Result<Envelope, tonic::Status> {
    match in_flight.front_mut() {
        Some(sent) => sent.answer.answer().await,
        None => std::future::pending().await,
    }
}

/// The next item of `input` (pending once there is none).
async fn next_of<S>(input: &mut Option<S>) -> Option<S::Item>
where
    S: futures_util::Stream + Unpin,
{
    use futures_util::StreamExt;
    match input {
        Some(input) => input.next().await,
        None => std::future::pending().await,
    }
}

/// Most appends a leader keeps in flight to one follower, unless
/// configured otherwise (`--peer-append-window`).
pub const DEFAULT_APPEND_WINDOW: usize = 8;
/// The largest append window a member takes: half of what a follower's
/// link hands to raft at once (its appends past that are refused), so
/// heartbeats and the tail of a stream that just ended still fit beside a
/// full window.
pub const MAX_APPEND_WINDOW: usize = crate::reverse::LANE_DEPTH / 2;

/// Appends in flight to one follower, each time one is sent.
pub const APPENDS_IN_FLIGHT: &str = "hark_raft_appends_in_flight";

impl RaftNetworkV2<TypeConfig> for Connection {
    type SnapshotData = tokio::fs::File;

    /// Several appends in flight to a follower whose link hands them to
    /// raft in order (see [`crate::reverse`]); otherwise one at a time, each
    /// a call of its own, as openraft's default does.
    fn stream_append<'s, S>(
        &'s mut self,
        input: S,
        option: RPCOption,
    ) -> BoxFuture<'s, Result<BoxStream<'s, StreamItem>, RPCError<TypeConfig>>>
    where
        S: futures_util::Stream<Item = AppendEntriesRequest<TypeConfig>> + Send + Unpin + 'static,
    {
        if self.append_window <= 1 || !self.channels.links.appends_in_order(self.target) {
            return openraft::network::stream_append_sequential(self, input, option);
        }
        let pipeline = Pipeline {
            connection: self,
            input: Some(input),
            in_flight: VecDeque::new(),
            option,
        };
        let answers = futures_util::stream::unfold(pipeline, |mut pipeline| async move {
            let item = pipeline.next().await?;
            Some((item, pipeline))
        });
        Box::pin(async move { Ok(Box::pin(answers) as BoxStream<'s, StreamItem>) })
    }

    async fn append_entries(
        &mut self,
        rpc: AppendEntriesRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<AppendEntriesResponse<TypeConfig>, RPCError<TypeConfig>> {
        self.append(rpc, option).await.decompose_infallible()
    }

    async fn vote(
        &mut self,
        rpc: VoteRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<VoteResponse<TypeConfig>, RPCError<TypeConfig>> {
        self.request_vote(Method::Vote, rpc, option)
            .await
            .decompose_infallible()
    }

    /// A member of the openraft 0.9 build has no pre-vote (its peer
    /// service answers `Unimplemented`): it counts as granting, as openraft
    /// counts a network without pre-vote, so a cluster mid-upgrade elects.
    async fn pre_vote(
        &mut self,
        rpc: VoteRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<VoteResponse<TypeConfig>, RPCError<TypeConfig>> {
        let vote = rpc.vote;
        let answer = self
            .call::<VoteResponse<TypeConfig>, openraft::error::Infallible>(
                Method::PreVote,
                encode(&rpc),
                &option,
            )
            .await;
        match answer {
            Err(status) if status.code() == tonic::Code::Unimplemented => {
                Ok(VoteResponse::new(vote, None, true))
            }
            answer => self.rpc_result(answer).decompose_infallible(),
        }
    }

    /// openraft 0.9's chunked transfer, which a peer of either build takes.
    /// A snapshot built here is sent as an export of the store made now
    /// (see [`SnapshotSource`]); one that fails is tried again after a
    /// back-off, as an unreachable peer is.
    async fn full_snapshot(
        &mut self,
        vote: Vote,
        snapshot: Snapshot,
        cancel: impl Future<Output = ReplicationClosed> + Send + 'static,
        option: RPCOption,
    ) -> Result<SnapshotResponse<TypeConfig>, StreamingError<TypeConfig>> {
        let snapshot = self
            .snapshots
            .to_send(snapshot)
            .await
            .map_err(|e| StreamingError::Unreachable(Unreachable::new(&e)))?;
        openraft_legacy::network_v1::Adapter::<TypeConfig, _, tokio::fs::File>::new(self.clone())
            .full_snapshot(vote, snapshot, cancel, option)
            .await
    }

    async fn transfer_leader(
        &mut self,
        rpc: TransferLeaderRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<TransferLeaderResponse<TypeConfig>, RPCError<TypeConfig>> {
        self.send::<_, openraft::error::Infallible>(
            Method::RaftTransferLeader,
            encode(&rpc),
            &option,
        )
        .await
        .decompose_infallible()
    }

    fn backoff(&self) -> Option<Backoff> {
        Some(self.retry_backoff())
    }
}

/// The chunked snapshot transfer's side of the connection (`openraft-legacy`).
impl RaftNetwork<TypeConfig> for Connection {
    async fn append_entries(
        &mut self,
        rpc: AppendEntriesRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<AppendEntriesResponse<TypeConfig>, RPCError<TypeConfig, RaftError<TypeConfig>>>
    {
        self.append(rpc, option).await
    }

    async fn install_snapshot(
        &mut self,
        rpc: InstallSnapshotRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<
        InstallSnapshotResponse<TypeConfig>,
        RPCError<TypeConfig, RaftError<TypeConfig, InstallSnapshotError>>,
    > {
        self.send(Method::InstallSnapshot, encode(&rpc), &option)
            .await
    }

    async fn vote(
        &mut self,
        rpc: VoteRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<VoteResponse<TypeConfig>, RPCError<TypeConfig, RaftError<TypeConfig>>> {
        self.request_vote(Method::Vote, rpc, option).await
    }

    fn backoff(&self) -> Backoff {
        self.retry_backoff()
    }
}

/// Whether a peer call failed before the request could leave: tonic keeps
/// the transport error under the status, and a failed connection is a
/// `ConnectError` there.
pub(crate) fn never_sent(status: &tonic::Status) -> bool {
    let mut cause = std::error::Error::source(status);
    while let Some(e) = cause {
        if e.is::<tonic::ConnectError>() {
            return true;
        }
        cause = e.source();
    }
    false
}

/// Whether a peer refused a call before doing anything (see
/// [`crate::admission`]).
pub(crate) fn refused(status: &tonic::Status) -> bool {
    matches!(
        status.code(),
        tonic::Code::PermissionDenied | tonic::Code::FailedPrecondition
    )
}

#[cfg(test)]
mod tests {
    use super::{CallEnded, Duration, Instant, PeerHealth, SILENCE_BREAKS_STREAK, never_sent};

    #[test]
    fn a_late_call_keeps_a_peers_streak_and_silence_or_a_broken_call_ends_it() {
        let health = PeerHealth::default();
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        health.record_at(7, CallEnded::Answered, at(0));
        health.record_at(7, CallEnded::TimedOut, at(300));
        health.record_at(7, CallEnded::Answered, at(600));
        assert_eq!(health.active_since_at(7, at(700)), Some(at(0)));
        // Silent for longer than the grace: inactive, and the next time-out
        // ends the streak.
        let silent = at(600) + SILENCE_BREAKS_STREAK;
        assert_eq!(health.active_since_at(7, silent), None);
        health.record_at(7, CallEnded::TimedOut, silent);
        health.record_at(7, CallEnded::Answered, silent + Duration::from_millis(1));
        assert_eq!(
            health.active_since_at(7, silent + Duration::from_millis(2)),
            Some(silent + Duration::from_millis(1))
        );
        // A refused or reset call ends it at once.
        health.record_at(7, CallEnded::Broken, silent + Duration::from_millis(3));
        assert_eq!(
            health.active_since_at(7, silent + Duration::from_millis(4)),
            None
        );
        // A time-out with no streak starts none.
        health.record_at(8, CallEnded::TimedOut, at(0));
        assert_eq!(health.active_since_at(8, at(1)), None);
    }

    #[tokio::test]
    async fn a_refused_connection_is_never_sent_and_a_servers_answer_is_not() {
        // A port nothing listens on: the call fails while connecting.
        let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", free.local_addr().unwrap());
        drop(free);
        let channel = tonic::transport::Endpoint::from_shared(url)
            .unwrap()
            .connect_lazy();
        let mut client = hark_proto::harkpeerpb::peer_client::PeerClient::new(channel);
        let refused = client
            .members(hark_proto::harkpeerpb::Envelope::default())
            .await
            .unwrap_err();
        assert_eq!(refused.code(), tonic::Code::Unavailable);
        assert!(never_sent(&refused), "{refused:?}");
        let unavailable = tonic::Status::unavailable("etcdserver: no leader: connect");
        assert!(!never_sent(&unavailable));
    }
}
