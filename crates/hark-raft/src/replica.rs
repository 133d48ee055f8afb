//! `Replica`: one member's replicated log in front of its store. Writes are
//! proposed (forwarded to the leader when this member is a follower) and
//! answered from this member's own apply; linearizable reads wait for the
//! leader's read index; membership changes run on the leader.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hark_mvcc::{Store, WriteRequest, WriteResponse};
use hark_proto::harkpeerpb::peer_server::PeerServer;
use openraft::error::{ChangeMembershipError, CheckIsLeaderError, ClientWriteError, RaftError};
use openraft::storage::{RaftSnapshotBuilder, RaftStateMachine};
use openraft::{ChangeMembers, SnapshotPolicy};
use serde::{Deserialize, Serialize};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use crate::admission::{Caller, Vouches};
use crate::log_store::{Alone, LogStore, PurgeFloor};
use crate::network::{Method, Network, PeerChannels, PeerHealth, call};
use crate::service::PeerService;
use crate::state_machine::{Pending, StateMachine, decode_position, finish_interrupted_install};
use crate::transfer::TransferState;
use crate::types::{Batch, Command, MemberInfo, Proposal, Raft};

/// Drops the waiter for a proposal's apply when its writer is done.
struct Forget<'a>(&'a Pending, u64);

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        self.0.forget(self.1);
    }
}

/// What became of a proposal sent towards the leader's log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Proposed {
    /// In the leader's log and committed.
    Appended,
    /// Certainly in no log (no leader, a follower asked, never sent).
    NotAppended,
    /// Maybe appended (lost reply, leadership lost after appending).
    Unknown,
    /// This member is stopping.
    Stopped,
}

/// Most proposals in one log entry, and roughly most bytes.
const BATCH_PROPOSALS: usize = 512;
const BATCH_BYTES: usize = 2 << 20;

/// Proposals waiting for the proposer. When it is full, writers wait to
/// queue (backpressure up to the gRPC handlers), nothing is dropped.
const PROPOSAL_QUEUE: usize = 8192;

type ProposalQueue = mpsc::Sender<(Proposal, oneshot::Sender<Proposed>)>;

/// Gathers the proposals queued while the batch before was on its way into
/// one log entry: a log fsync then serves many writes. One batch at a time
/// per member (two or three in flight made smaller batches, more fsyncs and
/// fewer writes per second, measured again with the inline sync of a cluster
/// of one: 6.3 writes per entry instead of 8.4, no faster). Before giving
/// up on an empty queue it yields twice, so handlers whose requests have
/// just arrived can join the batch (8.4 writes per entry instead of 7.5).
async fn run_proposer(
    replica: std::sync::Weak<Replica>,
    mut queue: mpsc::Receiver<(Proposal, oneshot::Sender<Proposed>)>,
) {
    while let Some(first) = queue.recv().await {
        let mut weight = first.0.weight();
        let mut batch = vec![first];
        let mut yields = 0;
        while batch.len() < BATCH_PROPOSALS && weight < BATCH_BYTES {
            match queue.try_recv() {
                Ok(next) => {
                    weight += next.0.weight();
                    batch.push(next);
                }
                Err(_) if yields < 2 => {
                    yields += 1;
                    tokio::task::yield_now().await;
                }
                Err(_) => break,
            }
        }
        let Some(replica) = replica.upgrade() else {
            return;
        };
        let (proposals, answers): (Vec<Proposal>, Vec<_>) = batch.into_iter().unzip();
        let outcomes = replica.propose_batch(Batch { proposals }).await;
        drop(replica);
        for (answer, outcome) in answers.into_iter().zip(outcomes) {
            let _ = answer.send(outcome);
        }
    }
}

/// Keeps `alone` true exactly while this member is the cluster's only member
/// (one voter, no learners); ends when raft stops.
async fn track_alone(
    // The server metrics change with leadership and membership only, not
    // with every entry.
    mut metrics: tokio::sync::watch::Receiver<
        openraft::metrics::RaftServerMetrics<u64, MemberInfo>,
    >,
    member_id: u64,
    alone: Alone,
) {
    loop {
        let only_me = {
            let m = metrics.borrow_and_update();
            let config = m.membership_config.membership();
            config.nodes().count() == 1 && config.voter_ids().eq([member_id])
        };
        alone.set(only_me);
        if metrics.changed().await.is_err() {
            return;
        }
    }
}

/// What the leader does with requests forwarded to it by
/// [`Replica::forward_to_leader`] (set by the layer above the log).
pub trait ForwardHandler: Send + Sync + 'static {
    fn handle(
        &self,
        request: Vec<u8>,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Vec<u8>> + Send>>;
}

/// How a member is started.
#[derive(Debug, Clone)]
pub struct ReplicaConfig {
    /// This member's id for a new cluster (from its peer URLs and the token).
    /// Once the log exists, the id recorded in it is used instead.
    pub member_id: u64,
    /// The cluster id of a new cluster (from its initial members).
    pub cluster_id: u64,
    /// Joining an existing cluster (`--initial-cluster-state existing`):
    /// this member's peer URLs, and the peer URLs of members to ask for the
    /// id MemberAdd gave it.
    pub join: Option<Join>,
    /// `--initial-cluster-token`: part of every member id.
    pub cluster_token: String,
    /// Members of a new cluster (`--initial-cluster` with
    /// `--initial-cluster-state new`): the log starts with this membership.
    /// Empty to join an existing cluster. Ignored when the log exists.
    pub initial_members: BTreeMap<u64, MemberInfo>,
    pub heartbeat_interval: Duration,
    pub election_timeout: Duration,
    /// Applied entries between snapshots (etcd's `--snapshot-count`).
    pub snapshot_count: u64,
    /// How long a write or a linearizable read may wait for the cluster.
    pub request_timeout: Duration,
    /// Sync the log before reporting appends durable; `false` only for
    /// `--unsafe-no-fsync` (tests and benchmarks).
    pub fsync: bool,
    /// The local address connections to peers leave from (`None`: the
    /// system's choice).
    pub peer_source: Option<std::net::IpAddr>,
    /// How `https://` peer URLs are dialled (the server's peer TLS).
    pub peer_tls: Option<crate::network::PeerTls>,
}

#[derive(Debug, Clone)]
pub struct Join {
    pub own_peer_urls: Vec<String>,
    pub cluster_peer_urls: Vec<String>,
}

/// Why a replicated request failed; the messages are etcd's.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum ReplicaError {
    #[error("etcdserver: request timed out")]
    Timeout,
    #[error("etcdserver: no leader")]
    NoLeader,
    #[error("etcdserver: not leader")]
    NotLeader,
    #[error("etcdserver: bad leader transferee")]
    BadLeaderTransferee,
    #[error("etcdserver: request timed out, leader transfer took too long")]
    LeaderTransferTimeout,
    #[error("etcdserver: server stopped")]
    Stopped,
    #[error(transparent)]
    Store(#[from] hark_mvcc::Error),
    #[error(transparent)]
    Membership(#[from] MembershipError),
}

/// A membership change refused; the messages are etcd's.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq, Serialize, Deserialize)]
pub enum MembershipError {
    #[error("etcdserver: member not found")]
    MemberNotFound,
    #[error("etcdserver: Peer URLs already exists")]
    PeerUrlsExist,
    #[error("etcdserver: member ID already exist")]
    IdExists,
    #[error("etcdserver: can only promote a learner member")]
    NotLearner,
    #[error("etcdserver: can only promote a learner member which is in sync with leader")]
    LearnerNotReady,
    #[error("etcdserver: re-configuration failed due to not enough started members")]
    NotEnoughStarted,
    /// A voter added while another is unreachable, or removed while the
    /// rest would not be a quorum of reachable members (etcd's
    /// `ErrUnhealthy`).
    #[error("etcdserver: unhealthy cluster")]
    Unhealthy,
    #[error("etcdserver: too many learner members in cluster")]
    TooManyLearners,
    #[error("etcdserver: not leader")]
    NotLeader,
    /// Another membership change is still being committed (retried).
    #[error("etcdserver: a membership change is in progress")]
    InProgress,
    #[error("etcdserver: request timed out")]
    TimedOut,
    #[error("etcdserver: {0}")]
    Failed(String),
}

/// A change to the cluster's members, run by the leader.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum MembershipChange {
    Add {
        id: u64,
        member: MemberInfo,
        learner: bool,
    },
    Remove {
        id: u64,
    },
    Promote {
        id: u64,
    },
    UpdatePeerUrls {
        id: u64,
        peer_urls: Vec<String>,
    },
    /// A started member's name and client URLs (etcd's publish).
    Publish {
        id: u64,
        name: String,
        client_urls: Vec<String>,
    },
}

impl MembershipChange {
    /// Whether `members` already reflect this change.
    fn shown_in(&self, members: &[Member]) -> bool {
        let find = |id: u64| members.iter().find(|m| m.id == id);
        match self {
            MembershipChange::Add { id, .. } => find(*id).is_some(),
            MembershipChange::Remove { id } => find(*id).is_none(),
            MembershipChange::Promote { id } => find(*id).is_some_and(|m| !m.is_learner),
            MembershipChange::UpdatePeerUrls { id, peer_urls } => {
                find(*id).is_some_and(|m| m.info.peer_urls == *peer_urls)
            }
            MembershipChange::Publish {
                id,
                name,
                client_urls,
            } => find(*id)
                .is_some_and(|m| m.info.name == *name && m.info.client_urls == *client_urls),
        }
    }
}

/// The members in a raft metrics snapshot's membership.
fn members_of(metrics: &openraft::RaftMetrics<u64, MemberInfo>) -> Vec<Member> {
    let membership = metrics.membership_config.membership();
    let voters: BTreeSet<u64> = membership.voter_ids().collect();
    membership
        .nodes()
        .map(|(id, info)| Member {
            id: *id,
            info: info.clone(),
            is_learner: !voters.contains(id),
        })
        .collect()
}

/// One member as the cluster sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    pub id: u64,
    pub info: MemberInfo,
    pub is_learner: bool,
}

/// What `Status` reports of the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplicaStatus {
    pub leader: Option<u64>,
    pub term: u64,
    /// Newest entry in this member's log.
    pub last_log_index: u64,
    pub applied_index: u64,
    pub is_learner: bool,
}

/// How long a voter must have answered without a break to count as active
/// for membership changes (etcd's `HealthInterval`).
const HEALTH_INTERVAL: Duration = Duration::from_secs(5);

/// Most learners at once (etcd's `--max-learners` default).
const MAX_LEARNERS: usize = 1;

/// A learner within this share of the leader's log may be promoted (etcd's
/// `readyPercentThreshold`).
const PROMOTE_READY: f64 = 0.9;

pub struct Replica {
    pub(crate) raft: Raft,
    member_id: u64,
    cluster_id: u64,
    token: String,
    pending: Arc<Pending>,
    next_seq: AtomicU64,
    pub(crate) channels: PeerChannels,
    pub(crate) request_timeout: Duration,
    proposals: ProposalQueue,
    election_timeout: Duration,
    forward_handler: parking_lot::RwLock<Option<Arc<dyn ForwardHandler>>>,
    pub(crate) transfer: TransferState,
    /// Since when each peer has answered this member's raft calls.
    health: PeerHealth,
    /// True once openraft's tasks have let go of the log (see `shutdown`).
    log_closed: Box<dyn Fn() -> bool + Send + Sync>,
    /// Other members' word on callers this member does not know.
    pub(crate) vouches: Vouches,
}

impl Replica {
    /// Opens the log in `dir/log` (snapshots in `dir/snapshots`), feeds its
    /// committed entries to `store` (from the store's recorded position on),
    /// and joins or starts the cluster.
    pub async fn start(
        config: ReplicaConfig,
        store: Store,
        dir: &Path,
    ) -> Result<Arc<Replica>, String> {
        let raft_config = openraft::Config {
            cluster_name: config.cluster_token.clone(),
            heartbeat_interval: millis(config.heartbeat_interval),
            election_timeout_min: millis(config.election_timeout),
            // openraft's followers refuse votes for election_timeout_max after
            // the last heartbeat (its leader lease), so the first candidate after
            // a leader dies is refused and the second round elects: a narrow
            // window keeps that second round early (about 2.2 election timeouts).
            election_timeout_max: millis(config.election_timeout) * 6 / 5 + 1,
            snapshot_policy: SnapshotPolicy::LogsSinceLast(config.snapshot_count.max(1)),
            max_in_snapshot_log_to_keep: config.snapshot_count.min(5000),
            // Entries are batches of proposals already: fewer per append.
            max_payload_entries: 64,
            ..Default::default()
        }
        .validate()
        .map_err(|e| format!("raft configuration: {e}"))?;
        let purge_floor = PurgeFloor::default();
        let alone = Alone::default();
        let log = LogStore::open(
            &dir.join("log"),
            config.fsync,
            purge_floor.clone(),
            alone.clone(),
        )?;
        let channels = PeerChannels::new(config.peer_source, config.peer_tls.clone());
        if log.identity()?.is_none() && store.log_position().map_err(|e| e.to_string())?.is_some() {
            return Err(format!(
                "the store in this data dir applied raft entries but its log ({}) is missing; \
                 restore the member from a snapshot or remove and re-add it",
                dir.join("log").display()
            ));
        }
        let (member_id, cluster_id) = match (log.identity()?, &config.join) {
            (Some(ids), _) => ids,
            (None, Some(join)) => discover_identity(&channels, join).await?,
            (None, None) => (config.member_id, config.cluster_id),
        };
        log.save_identity((member_id, cluster_id))?;
        let config = ReplicaConfig {
            member_id,
            cluster_id,
            ..config
        };
        let (unfinished, snapshots) = (store.clone(), dir.join("snapshots"));
        tokio::task::spawn_blocking(move || finish_interrupted_install(&unfinished, &snapshots))
            .await
            .map_err(|e| e.to_string())??;
        let applied = match store.log_position().map_err(|e| e.to_string())? {
            Some(p) => Some(
                decode_position(&p)
                    .map_err(|e| format!("the store's recorded log position is unreadable: {e}"))?
                    .0,
            ),
            None => None,
        };
        let pending = Arc::new(Pending::default());
        let mut state_machine = StateMachine::new(
            store,
            config.member_id,
            pending.clone(),
            dir.join("snapshots"),
            purge_floor,
        )?;
        // Killed after a snapshot install reached the store but before its
        // meta was written: the store is past the whole log and no snapshot
        // says so. A snapshot of the store now makes the state whole again.
        if let Some(applied) = applied
            && log.behind(applied.index)?
        {
            tracing::warn!(
                applied = applied.index,
                "the store is ahead of the raft log: snapshotting it before starting"
            );
            state_machine
                .get_snapshot_builder()
                .await
                .build_snapshot()
                .await
                .map_err(|e| format!("snapshotting the store: {e}"))?;
        }
        let log_closed = Box::new(log.closed_probe());
        let health = PeerHealth::default();
        let network = Network {
            channels: channels.clone(),
            heartbeat: config.heartbeat_interval,
            health: health.clone(),
            caller: Caller {
                member_id: config.member_id,
                cluster_id: config.cluster_id,
            },
        };
        let raft = Raft::new(
            config.member_id,
            Arc::new(raft_config),
            network,
            log,
            state_machine,
        )
        .await
        .map_err(|e| format!("starting raft: {e}"))?;
        let initialized = raft
            .is_initialized()
            .await
            .map_err(|e| format!("reading raft state: {e}"))?;
        if !initialized && !config.initial_members.is_empty() {
            // Every member of a new cluster writes the same first entry (the
            // initial membership at index 0), so they agree from the start.
            raft.initialize(config.initial_members.clone())
                .await
                .map_err(|e| format!("initializing the cluster: {e}"))?;
        }
        let (proposals, queue) = mpsc::channel(PROPOSAL_QUEUE);
        let replica = Arc::new(Replica {
            raft,
            member_id: config.member_id,
            cluster_id: config.cluster_id,
            token: config.cluster_token,
            pending,
            // Unique across restarts, so an old entry replayed from the log
            // never answers a new request.
            next_seq: AtomicU64::new(
                SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map_or(1, |d| d.as_nanos() as u64),
            ),
            channels,
            request_timeout: config.request_timeout,
            proposals,
            election_timeout: config.election_timeout,
            health,
            log_closed,
            forward_handler: parking_lot::RwLock::new(None),
            transfer: TransferState::default(),
            vouches: Vouches::default(),
        });
        tokio::spawn(run_proposer(Arc::downgrade(&replica), queue));
        tokio::spawn(track_alone(
            replica.raft.server_metrics(),
            config.member_id,
            alone,
        ));
        if replica.voters() == [config.member_id] {
            // Alone: no one to wait for, elect at once instead of after a timeout.
            let _ = replica.raft.trigger().elect().await;
        }
        Ok(replica)
    }

    /// Sets what this member does with requests other members forward to it
    /// while it leads.
    pub fn set_forward_handler(&self, handler: Arc<dyn ForwardHandler>) {
        *self.forward_handler.write() = Some(handler);
    }

    /// Runs `request` on the leader's [`ForwardHandler`] (this member's own
    /// when it leads) and returns its answer. Errors when no leader answers
    /// in time, or the leader changed while it was on its way.
    pub async fn forward_to_leader(&self, request: Vec<u8>) -> Result<Vec<u8>, ReplicaError> {
        let deadline = Instant::now() + self.request_timeout;
        loop {
            let leader = self.wait_for_leader(deadline).await?;
            let answer = if leader == self.member_id {
                self.handle_forwarded(request.clone()).await
            } else {
                match self
                    .call_member::<_, Vec<u8>, ()>(leader, Method::Forward, &request, deadline)
                    .await?
                {
                    Some(Ok(answer)) => answer,
                    _ => Err(()),
                }
            };
            if let Ok(answer) = answer {
                return Ok(answer);
            }
            if Instant::now() >= deadline {
                return Err(ReplicaError::Timeout);
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// A forwarded request, run here if this member leads (`Err` if not).
    pub(crate) async fn handle_forwarded(&self, request: Vec<u8>) -> Result<Vec<u8>, ()> {
        let handler = self.forward_handler.read().clone();
        match handler {
            Some(h) if self.is_leader() => Ok(h.handle(request).await),
            _ => Err(()),
        }
    }

    /// `--election-timeout`.
    pub fn election_timeout(&self) -> Duration {
        self.election_timeout
    }

    pub fn member_id(&self) -> u64 {
        self.member_id
    }

    pub fn cluster_id(&self) -> u64 {
        self.cluster_id
    }

    /// The gRPC service to serve on the peer URLs.
    pub fn peer_service(self: &Arc<Self>) -> PeerServer<PeerService> {
        PeerServer::new(PeerService {
            replica: self.clone(),
        })
        .max_decoding_message_size(usize::MAX)
        .max_encoding_message_size(usize::MAX)
    }

    /// Proposes `req` and answers with this member's own apply of it, once the
    /// cluster committed it; `Timeout` after the request timeout, whatever
    /// held it up.
    pub async fn write(&self, req: WriteRequest) -> Result<WriteResponse, ReplicaError> {
        let seq = self.next_seq.fetch_add(1, Ordering::Relaxed);
        // etcd refuses proposals once its apply is 5000 entries behind; this
        // member refuses past as many writes of its own waiting to apply.
        let Some(mut applied) = self.pending.register(seq, hark_mvcc::MAX_QUEUED_REQUESTS) else {
            return Err(ReplicaError::Store(hark_mvcc::Error::TooManyRequests));
        };
        // However this ends (an answer, an error, the caller gone), nobody
        // waits for `seq` any more.
        let _forget = Forget(&self.pending, seq);
        let proposal = Proposal {
            origin: self.member_id,
            seq,
            command: Command::Write(req),
        };
        let deadline = Instant::now() + self.request_timeout;
        let timed_out = |_| ReplicaError::Timeout;
        // The answer is this member's own apply, which may come before the
        // batch's outcome (openraft answers the batch after its whole apply).
        loop {
            let (tx, rx) = oneshot::channel();
            match tokio::time::timeout_at(deadline, self.proposals.send((proposal.clone(), tx)))
                .await
            {
                Err(_) => return Err(ReplicaError::Timeout),
                Ok(Err(_)) => return Err(ReplicaError::Stopped),
                Ok(Ok(())) => {}
            }
            let outcome = tokio::select! {
                biased;
                // Applied here already: the batch's own answer comes later.
                result = &mut applied => {
                    return match result {
                        Ok(result) => result.map_err(ReplicaError::Store),
                        Err(_) => Err(ReplicaError::Stopped),
                    };
                }
                outcome = tokio::time::timeout_at(deadline, rx) => {
                    outcome.map_err(timed_out)?.unwrap_or(Proposed::Stopped)
                }
            };
            match outcome {
                Proposed::Appended | Proposed::Unknown => break,
                // Certainly not in any log: safe to propose again.
                Proposed::NotAppended if Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                Proposed::NotAppended => return Err(ReplicaError::Timeout),
                Proposed::Stopped => return Err(ReplicaError::Stopped),
            }
        }
        match tokio::time::timeout_at(deadline, applied).await {
            Ok(Ok(result)) => result.map_err(ReplicaError::Store),
            Ok(Err(_)) => Err(ReplicaError::Stopped),
            Err(_) => Err(ReplicaError::Timeout),
        }
    }

    /// Gets one batch of proposals into the leader's log (this member's own
    /// raft when it leads, else the leader's over the peer protocol).
    async fn propose_batch(&self, batch: Batch) -> Vec<Proposed> {
        let n = batch.proposals.len();
        let deadline = Instant::now() + self.request_timeout;
        let leader = match self.wait_for_leader(deadline).await {
            Ok(l) => l,
            Err(ReplicaError::Stopped) => return vec![Proposed::Stopped; n],
            Err(_) => return vec![Proposed::NotAppended; n],
        };
        if leader == self.member_id {
            return vec![self.append_here(batch, deadline).await; n];
        }
        let sent = match self
            .call_member::<_, Vec<Proposed>, ()>(leader, Method::Propose, &batch, deadline)
            .await
        {
            Ok(sent) => sent,
            Err(_) => return vec![Proposed::NotAppended; n],
        };
        match sent {
            Some(Ok(Ok(outcomes))) if outcomes.len() == n => outcomes,
            // The leader's address is unknown, or the call never left.
            None => vec![Proposed::NotAppended; n],
            Some(Err(status)) if never_sent(&status) => vec![Proposed::NotAppended; n],
            // Refused before any work: this member is not (or not yet)
            // among the leader's members.
            Some(Err(status)) if refused(&status) => vec![Proposed::NotAppended; n],
            // Lost in transit: it may have been appended.
            Some(Ok(_)) | Some(Err(_)) => vec![Proposed::Unknown; n],
        }
    }

    /// A follower's batch, on the leader: its proposals join this member's
    /// own queue, so they share log entries (and fsyncs) with the others.
    pub(crate) async fn propose_forwarded(&self, batch: Batch) -> Vec<Proposed> {
        if !self.is_leader() {
            return vec![Proposed::NotAppended; batch.proposals.len()];
        }
        let mut answers = Vec::with_capacity(batch.proposals.len());
        for proposal in batch.proposals {
            let (tx, rx) = oneshot::channel();
            if self.proposals.send((proposal, tx)).await.is_err() {
                answers.push(None);
            } else {
                answers.push(Some(rx));
            }
        }
        let mut outcomes = Vec::with_capacity(answers.len());
        for answer in answers {
            outcomes.push(match answer {
                Some(rx) => rx.await.unwrap_or(Proposed::Stopped),
                None => Proposed::Stopped,
            });
        }
        outcomes
    }

    /// The leader's half of proposing: one log entry for the whole batch.
    pub(crate) async fn append_here(&self, batch: Batch, deadline: Instant) -> Proposed {
        let _no_transfer = self.until_no_transfer(deadline).await;
        if !self.is_leader() {
            return Proposed::NotAppended;
        }
        match tokio::time::timeout_at(deadline, self.raft.client_write(batch)).await {
            Ok(Ok(_)) => Proposed::Appended,
            // Raft stopped, or it was appended and then lost leadership: the
            // entry may still commit under the next leader.
            Ok(Err(RaftError::APIError(_))) | Ok(Err(RaftError::Fatal(_))) | Err(_) => {
                Proposed::Unknown
            }
        }
    }

    /// Sends `request` to member `leader` with what is left until
    /// `deadline`. `None` when this member does not know its address.
    pub(crate) async fn call_member<T, R, E>(
        &self,
        leader: u64,
        method: Method,
        request: &T,
        deadline: Instant,
    ) -> Result<Option<Result<Result<R, E>, tonic::Status>>, ReplicaError>
    where
        T: Serialize,
        R: serde::de::DeserializeOwned,
        E: serde::de::DeserializeOwned,
    {
        let Some(node) = self.node(leader) else {
            return Ok(None);
        };
        let mut client = self
            .channels
            .client(&node)
            .map_err(|_| ReplicaError::NoLeader)?;
        let remaining = deadline.saturating_duration_since(Instant::now());
        Ok(Some(
            call(
                &mut client,
                method,
                request,
                Some(remaining),
                Some(self.as_caller()),
            )
            .await,
        ))
    }

    /// Waits until this member knows a leader.
    async fn wait_for_leader(&self, deadline: Instant) -> Result<u64, ReplicaError> {
        let mut metrics = self.raft.metrics();
        loop {
            if let Some(leader) = metrics.borrow_and_update().current_leader {
                return Ok(leader);
            }
            match tokio::time::timeout_at(deadline, metrics.changed()).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) => return Err(ReplicaError::Stopped),
                Err(_) => return Err(ReplicaError::Timeout),
            }
        }
    }

    /// The leader's read index, once a quorum confirmed its leadership (for
    /// its own reads and those its followers ask for).
    pub(crate) async fn read_index_here(
        &self,
        deadline: Instant,
    ) -> Result<u64, RaftError<u64, CheckIsLeaderError<u64, MemberInfo>>> {
        let _no_transfer = self.until_no_transfer(deadline).await;
        let (read, _applied) = self.raft.get_read_log_id().await?;
        Ok(read.map_or(0, |l| l.index))
    }

    /// Returns once this member has applied every write acknowledged before
    /// the call (a linearizable read may then be served from its store).
    pub async fn read_barrier(&self) -> Result<(), ReplicaError> {
        if hark_mvcc::chaos::mutation("read-without-read-index") {
            return Ok(());
        }
        let deadline = Instant::now() + self.request_timeout;
        loop {
            let leader = self.wait_for_leader(deadline).await?;
            let index = if leader == self.member_id {
                match self.read_index_here(deadline).await {
                    Ok(index) => Some(index),
                    Err(RaftError::Fatal(_)) => return Err(ReplicaError::Stopped),
                    Err(RaftError::APIError(_)) => None,
                }
            } else {
                let asked = self
                    .call_member::<_, u64, RaftError<u64, CheckIsLeaderError<u64, MemberInfo>>>(
                        leader,
                        Method::ReadIndex,
                        &(),
                        deadline,
                    )
                    .await?;
                match asked {
                    Some(Ok(Ok(index))) => Some(index),
                    _ => None,
                }
            };
            if let Some(index) = index {
                let remaining = deadline.saturating_duration_since(Instant::now());
                return match self
                    .raft
                    .wait(Some(remaining))
                    .applied_index_at_least(Some(index), "read index")
                    .await
                {
                    Ok(_) => Ok(()),
                    Err(openraft::metrics::WaitError::Timeout(..)) => Err(ReplicaError::Timeout),
                    Err(openraft::metrics::WaitError::ShuttingDown) => Err(ReplicaError::Stopped),
                };
            }
            if Instant::now() >= deadline {
                return Err(ReplicaError::Timeout);
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Runs `change` on the leader (forwarding it there) and waits until it is
    /// committed.
    pub async fn change_membership(&self, change: MembershipChange) -> Result<(), ReplicaError> {
        let deadline = Instant::now() + self.request_timeout;
        loop {
            let leader = self.wait_for_leader(deadline).await?;
            let outcome = if leader == self.member_id {
                self.change_membership_here(change.clone()).await
            } else {
                let sent = self
                    .call_member::<_, (), MembershipError>(
                        leader,
                        Method::ChangeMembership,
                        &change,
                        deadline,
                    )
                    .await?;
                match sent {
                    Some(Ok(r)) => r,
                    _ => Err(MembershipError::NotLeader),
                }
            };
            match outcome {
                Err(MembershipError::NotLeader | MembershipError::InProgress)
                    if Instant::now() < deadline =>
                {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                Err(MembershipError::NotLeader | MembershipError::InProgress) => {
                    return Err(ReplicaError::Timeout);
                }
                Ok(()) => {
                    // etcd answers once the change is applied on the member
                    // asked, so the members it lists next include it; a
                    // follower hears of the entry after the leader commits.
                    // Bounded: a member removed may never hear of it.
                    let limit = deadline.min(Instant::now() + self.election_timeout * 4);
                    self.until_shown(&change, limit).await;
                    return Ok(());
                }
                Err(e) => return Err(ReplicaError::Membership(e)),
            }
        }
    }

    /// Returns once this member's own membership shows `change`, or at
    /// `limit`.
    async fn until_shown(&self, change: &MembershipChange, limit: Instant) {
        let mut metrics = self.raft.metrics();
        loop {
            if change.shown_in(&members_of(&metrics.borrow_and_update())) {
                return;
            }
            match tokio::time::timeout_at(limit, metrics.changed()).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) | Err(_) => return,
            }
        }
    }

    /// The leader's half of [`Replica::change_membership`].
    pub(crate) async fn change_membership_here(
        &self,
        change: MembershipChange,
    ) -> Result<(), MembershipError> {
        let deadline = Instant::now() + self.request_timeout;
        // A leader change between the two steps of a voter change leaves the
        // joint configuration in force: finish it first.
        let joint = {
            let metrics = self.raft.metrics().borrow().clone();
            let configs = metrics
                .membership_config
                .membership()
                .get_joint_config()
                .clone();
            (configs.len() > 1).then(|| configs.last().cloned().unwrap_or_default())
        };
        if let Some(voters) = joint {
            self.run_change(ChangeMembers::ReplaceAllVoters(voters), deadline)
                .await?;
        }
        let members = self.members();
        let find = |id: u64| members.iter().find(|m| m.id == id).cloned();
        // etcd's strict reconfiguration check: a voter change must leave a
        // quorum of started (published) voters.
        let started = |except: Option<u64>| {
            members
                .iter()
                .filter(|m| !m.is_learner && !m.info.client_urls.is_empty() && Some(m.id) != except)
                .count()
        };
        let voters = members.iter().filter(|m| !m.is_learner).count();
        let quorum = |n: usize| n / 2 + 1;
        // etcd's health check on the leader's own connections: a voter is
        // "active" when it has answered without a break for HEALTH_INTERVAL
        // (this member always is).
        let active = |id: u64| {
            id == self.member_id
                || self
                    .health
                    .active_since(id)
                    .is_some_and(|since| since.elapsed() >= HEALTH_INTERVAL)
        };
        let voter_ids: Vec<u64> = members
            .iter()
            .filter(|m| !m.is_learner)
            .map(|m| m.id)
            .collect();
        let with_info = |id: u64, edit: &dyn Fn(&mut MemberInfo)| {
            let mut info = find(id).ok_or(MembershipError::MemberNotFound)?.info;
            edit(&mut info);
            Ok::<_, MembershipError>(ChangeMembers::SetNodes(BTreeMap::from([(id, info)])))
        };
        let changes = match change {
            MembershipChange::Add {
                id,
                member,
                learner,
            } => {
                // URLs first: re-adding a URL within the same second gives the
                // same id, and the URL is what the caller needs to hear about.
                let urls: BTreeSet<&String> = member.peer_urls.iter().collect();
                if members
                    .iter()
                    .any(|m| m.info.peer_urls.iter().any(|u| urls.contains(u)))
                {
                    return Err(MembershipError::PeerUrlsExist);
                }
                if find(id).is_some() {
                    return Err(MembershipError::IdExists);
                }
                if learner {
                    if members.iter().filter(|m| m.is_learner).count() >= MAX_LEARNERS {
                        return Err(MembershipError::TooManyLearners);
                    }
                } else if started(None) < quorum(voters + 1) {
                    return Err(MembershipError::NotEnoughStarted);
                } else if !voter_ids.iter().all(|v| active(*v)) {
                    return Err(MembershipError::Unhealthy);
                }
                let nodes = BTreeMap::from([(id, member)]);
                if learner {
                    ChangeMembers::AddNodes(nodes)
                } else {
                    ChangeMembers::AddVoters(nodes)
                }
            }
            MembershipChange::Remove { id } => match find(id) {
                None => return Err(MembershipError::MemberNotFound),
                Some(m) if m.is_learner => ChangeMembers::RemoveNodes(BTreeSet::from([id])),
                Some(_) if started(Some(id)) < quorum(voters - 1) => {
                    return Err(MembershipError::NotEnoughStarted);
                }
                // A member down is not part of the active quorum: removing
                // it is safe. Otherwise those left must be a quorum of active
                // members.
                Some(_)
                    if (id == self.member_id || self.health.active_since(id).is_some())
                        && voter_ids.iter().filter(|v| active(**v)).count() - 1
                            < quorum(voters - 1) =>
                {
                    return Err(MembershipError::Unhealthy);
                }
                Some(_) => ChangeMembers::RemoveVoters(BTreeSet::from([id])),
            },
            MembershipChange::Promote { id } => {
                match find(id) {
                    None => return Err(MembershipError::MemberNotFound),
                    Some(m) if !m.is_learner => return Err(MembershipError::NotLearner),
                    Some(_) => {}
                }
                if started(None) + 1 < quorum(voters + 1) {
                    return Err(MembershipError::NotEnoughStarted);
                }
                if !self.learner_in_sync(id) {
                    return Err(MembershipError::LearnerNotReady);
                }
                ChangeMembers::AddVoterIds(BTreeSet::from([id]))
            }
            MembershipChange::UpdatePeerUrls { id, peer_urls } => {
                let urls: BTreeSet<&String> = peer_urls.iter().collect();
                if members
                    .iter()
                    .any(|m| m.id != id && m.info.peer_urls.iter().any(|u| urls.contains(u)))
                {
                    return Err(MembershipError::PeerUrlsExist);
                }
                with_info(id, &|info| info.peer_urls = peer_urls.clone())?
            }
            MembershipChange::Publish {
                id,
                name,
                client_urls,
            } => with_info(id, &|info| {
                info.name = name.clone();
                info.client_urls = client_urls.clone();
            })?,
        };
        self.run_change(changes, deadline).await
    }

    async fn run_change(
        &self,
        changes: ChangeMembers<u64, MemberInfo>,
        deadline: Instant,
    ) -> Result<(), MembershipError> {
        let changed =
            tokio::time::timeout_at(deadline, self.raft.change_membership(changes, false));
        match changed.await {
            Err(_) => Err(MembershipError::TimedOut),
            Ok(Ok(written)) => {
                // The change is committed and applied, but the metrics that
                // `members()` reads are published after: wait for them, so an
                // answer built right after lists the change (MemberAdd's
                // member list missed the new learner once in a while).
                let log_id = Some(written.log_id);
                let left = deadline.saturating_duration_since(Instant::now());
                self.raft
                    .wait(Some(left))
                    .metrics(
                        |m| m.membership_config.log_id() >= &log_id,
                        "the membership change in this member's metrics",
                    )
                    .await
                    .map(drop)
                    .map_err(|_| MembershipError::TimedOut)
            }
            Ok(Err(RaftError::APIError(ClientWriteError::ForwardToLeader(_)))) => {
                Err(MembershipError::NotLeader)
            }
            Ok(Err(RaftError::APIError(ClientWriteError::ChangeMembershipError(
                ChangeMembershipError::InProgress(_),
            )))) => Err(MembershipError::InProgress),
            Ok(Err(RaftError::APIError(ClientWriteError::ChangeMembershipError(e)))) => {
                Err(MembershipError::Failed(e.to_string()))
            }
            Ok(Err(RaftError::Fatal(e))) => Err(MembershipError::Failed(e.to_string())),
        }
    }

    /// Whether learner `id` has replicated at least [`PROMOTE_READY`] of the leader's log.
    fn learner_in_sync(&self, id: u64) -> bool {
        let metrics = self.raft.metrics().borrow().clone();
        let Some(leader_last) = metrics.last_log_index else {
            return false;
        };
        let matched = metrics
            .replication
            .as_ref()
            .and_then(|r| r.get(&id).cloned().flatten())
            .map_or(0, |l| l.index);
        leader_last == 0 || matched as f64 / leader_last as f64 >= PROMOTE_READY
    }

    /// A member id for a member added now (etcd's: hashes the time in).
    pub fn new_member_id(&self, peer_urls: &[String]) -> u64 {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        crate::ids::added_member_id(peer_urls, &self.token, now)
    }

    fn node(&self, id: u64) -> Option<MemberInfo> {
        self.raft
            .metrics()
            .borrow()
            .membership_config
            .membership()
            .get_node(&id)
            .cloned()
    }

    pub(crate) fn voters(&self) -> Vec<u64> {
        self.raft
            .metrics()
            .borrow()
            .membership_config
            .membership()
            .voter_ids()
            .collect()
    }

    /// Every member, voters and learners, by id.
    pub fn members(&self) -> Vec<Member> {
        members_of(&self.raft.metrics().borrow())
    }

    /// Whether this member has a working leader: another member it follows,
    /// or itself with a quorum heard from within an election timeout (an
    /// openraft 0.9 leader cut off from the others does not step down).
    pub fn has_leader(&self) -> bool {
        let m = self.raft.metrics().borrow().clone();
        match m.current_leader {
            None => false,
            Some(l) if l == self.member_id => m
                .millis_since_quorum_ack
                .is_some_and(|ms| u128::from(ms) <= self.election_timeout.as_millis()),
            Some(_) => true,
        }
    }

    /// Whether this member is the leader now.
    pub fn is_leader(&self) -> bool {
        self.raft.metrics().borrow().current_leader == Some(self.member_id)
    }

    /// The current raft term (cheaper than [`Replica::status`]).
    pub fn term(&self) -> u64 {
        self.raft.metrics().borrow().current_term
    }

    pub fn status(&self) -> ReplicaStatus {
        let m = self.raft.metrics().borrow().clone();
        let is_learner = !m
            .membership_config
            .membership()
            .voter_ids()
            .any(|v| v == self.member_id);
        ReplicaStatus {
            leader: m.current_leader,
            term: m.current_term,
            last_log_index: m.last_log_index.unwrap_or(0),
            applied_index: m.last_applied.map_or(0, |l| l.index),
            is_learner,
        }
    }

    /// Waits (up to `timeout`) until this member knows a leader.
    pub async fn wait_leader(&self, timeout: Duration) -> Option<u64> {
        self.wait_for_leader(Instant::now() + timeout).await.ok()
    }

    /// Stops taking part in the cluster. Returns once the log is closed:
    /// openraft's state machine and replication tasks end after its core
    /// does, and the same data dir may be opened again right after.
    pub async fn shutdown(&self) {
        let _ = self.raft.shutdown().await;
        let deadline = Instant::now() + Duration::from_secs(10);
        while !(self.log_closed)() {
            if Instant::now() >= deadline {
                tracing::warn!("raft tasks still hold the log; it closes when they end");
                return;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

/// Asks the members at `join.cluster_peer_urls` for the cluster id and which
/// member has this member's peer URLs (MemberAdd gave it an id before it started).
async fn discover_identity(channels: &PeerChannels, join: &Join) -> Result<(u64, u64), String> {
    let own: BTreeSet<&String> = join.own_peer_urls.iter().collect();
    // A member that has not applied the MemberAdd yet does not list us:
    // ask every member, for a while.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let mut errors = Vec::new();
        for url in join.cluster_peer_urls.iter().filter(|u| !own.contains(u)) {
            let node = MemberInfo {
                peer_urls: vec![url.clone()],
                ..Default::default()
            };
            let mut client = channels.client(&node)?;
            match call::<_, (u64, Vec<(u64, MemberInfo, bool)>), ()>(
                &mut client,
                Method::Members,
                &(),
                Some(Duration::from_secs(5)),
                // This member does not know its id yet: `Members` is open.
                None,
            )
            .await
            {
                Ok(Ok((cluster_id, members))) => {
                    let found = members
                        .into_iter()
                        .find(|(_, info, _)| info.peer_urls.iter().collect::<BTreeSet<_>>() == own);
                    match found {
                        Some((id, _, _)) => return Ok((id, cluster_id)),
                        None => errors.push(format!(
                            "{url} has no member with peer URLs {:?} (add it with MemberAdd first)",
                            join.own_peer_urls
                        )),
                    }
                }
                Ok(Err(())) => errors.push(format!("{url}: refused")),
                Err(status) => errors.push(format!("{url}: {}", status.message())),
            }
        }
        if Instant::now() >= deadline {
            return Err(format!(
                "cannot learn this member's id from the existing cluster: {}",
                errors.join("; ")
            ));
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

/// Whether a peer call failed before the request could leave: tonic keeps
/// the transport error under the status, and a failed connection is a
/// `ConnectError` there.
fn never_sent(status: &tonic::Status) -> bool {
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
fn refused(status: &tonic::Status) -> bool {
    matches!(
        status.code(),
        tonic::Code::PermissionDenied | tonic::Code::FailedPrecondition
    )
}

pub(crate) fn millis(d: Duration) -> u64 {
    d.as_millis().max(1) as u64
}

#[cfg(test)]
mod tests {
    use super::never_sent;

    #[tokio::test]
    async fn alone_follows_the_membership() {
        use std::collections::{BTreeMap, BTreeSet};

        use openraft::metrics::RaftServerMetrics;
        use openraft::{Membership, ServerState, StoredMembership, Vote};

        use crate::log_store::Alone;
        use crate::types::MemberInfo;

        fn metrics(voters: &[u64], learners: &[u64]) -> RaftServerMetrics<u64, MemberInfo> {
            let nodes: BTreeMap<u64, MemberInfo> = voters
                .iter()
                .chain(learners)
                .map(|id| (*id, MemberInfo::default()))
                .collect();
            let config = vec![voters.iter().copied().collect::<BTreeSet<u64>>()];
            RaftServerMetrics {
                id: 1,
                vote: Vote::default(),
                state: ServerState::Leader,
                current_leader: Some(1),
                membership_config: std::sync::Arc::new(StoredMembership::new(
                    None,
                    Membership::new(config, nodes),
                )),
            }
        }

        let (tx, rx) = tokio::sync::watch::channel(metrics(&[1], &[]));
        let alone = Alone::default();
        let task = tokio::spawn(super::track_alone(rx, 1, alone.clone()));
        let until = |want: bool| {
            let alone = alone.clone();
            async move {
                tokio::time::timeout(std::time::Duration::from_secs(5), async {
                    while alone.get() != want {
                        tokio::time::sleep(std::time::Duration::from_millis(1)).await;
                    }
                })
                .await
                .expect("alone follows the membership")
            }
        };
        // Each step flips the flag, so each wait sees the new membership.
        until(true).await;
        tx.send(metrics(&[1], &[2])).unwrap();
        until(false).await;
        tx.send(metrics(&[1], &[])).unwrap();
        until(true).await;
        tx.send(metrics(&[1, 2, 3], &[])).unwrap();
        until(false).await;
        tx.send(metrics(&[1], &[])).unwrap();
        until(true).await;
        // Another member alone is not this one.
        tx.send(metrics(&[2], &[])).unwrap();
        until(false).await;
        drop(tx);
        task.await.unwrap();
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
