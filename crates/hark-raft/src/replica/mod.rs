//! `Replica`: one member's replicated log in front of its store. Writes are
//! proposed (forwarded to the leader when this member is a follower) and
//! answered from this member's own apply; linearizable reads wait for the
//! leader's read index; membership changes run on the leader.
//!
//! Rooms: `start.rs` (opening the log, identity, starting raft and the
//! member's tasks), `propose.rs` (writes: batching proposals into log
//! entries, a follower's proposals forwarded to the leader), `forward.rs`
//! (calls to the leader: the layers' forwarded requests, any peer method),
//! `read.rs` (linearizable reads through the leader's read index),
//! `membership.rs` (members and their changes), `transfer.rs` (leader
//! transfer), `admit.rs` (which callers the peer port lets in). This file
//! holds the member's handle, its configuration, errors and status.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use crate::admission::Vouches;
use crate::metrics_watch::MetricsWatch;
use crate::network::{PeerChannels, PeerHealth};
use crate::state_machine::Pending;
use crate::transfer::TransferState;
use crate::types::{Applied, MemberInfo, Proposal, Proposed, Raft, TypeConfig};

mod admit;
mod force;
mod forward;
mod membership;
mod propose;
mod read;
mod start;
mod transfer;

pub use membership::MembershipChange;
pub use propose::PROPOSED_AGAIN;
pub use read::FOLLOWER_READ_INDEX_CALLS;

/// What became of a proposal, with the leader's apply of it when the
/// leader sent it (see [`crate::types::ProposeAnswer`]).
#[derive(Debug)]
struct Outcome {
    proposed: Proposed,
    leaders_apply: Option<Applied>,
    /// The term the proposal was bound to (see [`Queued::bind_to_term`]).
    term: u64,
}

/// A proposal on its way to the proposer.
struct Queued {
    proposal: Proposal,
    /// Where its outcome goes.
    outcome: oneshot::Sender<Outcome>,
    queued: std::time::Instant,
    /// A plain write that the proposer binds to the term of the leader it
    /// proposes to (a [`crate::types::Command::WriteInTerm`]), so that it
    /// applies in that term or never: once this member applies an entry of
    /// a later term, its writer knows it never will and proposes it again.
    bind_to_term: bool,
}
type ProposalQueue = mpsc::Sender<Queued>;

/// What the leader does with requests forwarded to it by
/// [`Replica::forward_to_leader`] (set by the layer above the log).
pub trait ForwardHandler: Send + Sync + 'static {
    fn handle(
        &self,
        request: Vec<u8>,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Vec<u8>> + Send>>;
}

/// Where a member keeps its log and its snapshots.
#[derive(Debug, Clone)]
pub struct ReplicaDirs {
    /// The replicated log (etcd's `--wal-dir`, when given).
    pub log: std::path::PathBuf,
    /// The latest snapshot, and one being received or installed.
    pub snapshots: std::path::PathBuf,
}

impl ReplicaDirs {
    /// Both in `dir`: `dir/log` and `dir/snapshots`.
    pub fn under(dir: &std::path::Path) -> Self {
        ReplicaDirs {
            log: dir.join("log"),
            snapshots: dir.join("snapshots"),
        }
    }
}

/// Most batches of proposals a member has on their way at once, unless
/// configured otherwise (see `propose.rs`).
pub const DEFAULT_BATCHES_IN_FLIGHT: usize = 4;
/// The most a member takes: each batch in flight may hold a forwarded call
/// and up to 512 writes.
pub const MAX_BATCHES_IN_FLIGHT: usize = 64;

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
    /// Entries kept after a snapshot for slow followers to catch up from
    /// (etcd's `--snapshot-catchup-entries`).
    pub snapshot_catchup_entries: u64,
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
    /// The member will run [`Replica::initial_corruption_check`]: until it
    /// passes, peers asking for this member's hash are refused (etcd serves
    /// no peer traffic before its check).
    pub initial_corruption_check: bool,
    /// etcd's `--force-new-cluster`: an existing member restarts as the
    /// only member of its cluster (see `replica/force.rs`).
    pub force_new_cluster: bool,
    /// etcd's `--strict-reconfig-check`: refuse a membership change that
    /// would leave fewer started, connected voters than a quorum.
    pub strict_reconfig_check: bool,
    /// etcd's `--pre-vote` (default true): a member whose election timer
    /// fires first asks whether it would win, and raises its term only if a
    /// quorum says yes.
    pub pre_vote: bool,
    /// Most appends in flight to one follower, on the link it opened to
    /// this member (`--peer-append-window`); 1 sends each append once the
    /// one before is answered.
    pub append_window: usize,
    /// Most batches of proposals this member has on their way to the log
    /// at once (`--proposal-batches-in-flight`).
    pub batches_in_flight: usize,
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
    /// The last entry purged from this member's log (after a snapshot).
    pub purged_index: u64,
    pub is_learner: bool,
}

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
    /// Sets the gauge of the log database's RocksDB memory.
    log_memory: Box<dyn Fn() + Send + Sync>,
    /// True once openraft's tasks have let go of the store (see `shutdown`).
    state_released: Box<dyn Fn() -> bool + Send + Sync>,
    /// Other members' word on callers this member does not know.
    pub(crate) vouches: Vouches,
    /// The current raft term, kept by a task that follows openraft's server
    /// metrics: every response header reads it, and reading openraft's
    /// metrics would take their lock once per reply.
    term: Arc<AtomicU64>,
    /// When this member last accepted an append (a heartbeat included) from
    /// the leader it follows: with pre-vote, a follower cut off from its
    /// leader keeps that leader in openraft's metrics (it never raises its
    /// term), so this is how it knows it has none (etcd's follower drops
    /// its leader as its election timer fires).
    leader_heard: parking_lot::Mutex<Option<std::time::Instant>>,
    /// The store the log applies to, hashed for the corruption checks.
    pub(crate) store: hark_mvcc::Store,
    /// Peers' hash questions are refused while true (see
    /// [`ReplicaConfig::initial_corruption_check`]).
    pub(crate) hashes_held: std::sync::atomic::AtomicBool,
    /// [`ReplicaConfig::strict_reconfig_check`].
    strict_reconfig_check: bool,
    /// Learners added as voters to a cluster of one, which this member,
    /// leading, promotes once they have caught up. In memory: a leader that
    /// restarts first leaves them learners, for `member promote`.
    intended_voters: parking_lot::Mutex<std::collections::BTreeSet<u64>>,
    /// True once a membership this member applied leaves it out, or a
    /// quorum of its peers refuses it as no member.
    removed: tokio::sync::watch::Receiver<bool>,
    refusals: crate::network::PeerRefusals,
    /// This member's read-index calls to its leader, shared by the reads
    /// that wait meanwhile.
    read_rounds: read::ReadRounds,
    /// `etcd_network_peer_received_bytes_total` per calling member, looked
    /// up once each (see [`Replica::peer_received_bytes`]).
    peer_received: parking_lot::Mutex<std::collections::HashMap<u64, metrics::Counter>>,
    /// What this member's append pipelines did, leading.
    pipeline: crate::network::PipelineStats,
}

/// Most members whose received-bytes counters are kept at hand; past it
/// the cache starts over (callers are admitted members, so it rarely is).
const PEER_COUNTERS_KEPT: usize = 64;

impl Replica {
    /// The most appends this member ever had in flight to one follower.
    pub fn most_appends_in_flight(&self) -> usize {
        self.pipeline
            .most_in_flight
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The received-bytes counter of calls from member `from`.
    pub(crate) fn peer_received_bytes(&self, from: u64) -> metrics::Counter {
        let mut counters = self.peer_received.lock();
        if counters.len() >= PEER_COUNTERS_KEPT && !counters.contains_key(&from) {
            counters.clear();
        }
        counters
            .entry(from)
            .or_insert_with(|| {
                metrics::counter!("etcd_network_peer_received_bytes_total",
                    "From" => format!("{from:x}"))
            })
            .clone()
    }
}

/// Follows this member's leadership as openraft reports it (its server
/// metrics, which change with leadership and membership only, not with
/// every entry).
pub struct LeadershipWatch {
    metrics: openraft::alias::WatchReceiverOf<
        TypeConfig,
        openraft::metrics::RaftServerMetrics<TypeConfig>,
    >,
    member_id: u64,
}

impl LeadershipWatch {
    /// Whether this member leads now.
    pub fn is_leader(&mut self) -> bool {
        self.leader() == Some(self.member_id)
    }

    /// The leader this member knows of now, if any.
    pub fn leader(&mut self) -> Option<u64> {
        self.metrics.borrow().current_leader
    }

    /// Waits until the leadership may have changed since [`Self::is_leader`]
    /// was last asked; `false` once raft has stopped.
    pub async fn changed(&mut self) -> bool {
        self.metrics.changed().await.is_ok()
    }

    /// The leader this member knows of and the term it has voted in.
    fn leader_and_term(&mut self) -> (Option<u64>, u64) {
        let m = self.metrics.borrow();
        (m.current_leader, m.vote.leader_id().term)
    }

    /// Logs etcd's raft lines for each change of leader, with etcd's words
    /// (`became leader at term`, `elected leader`, `lost leader`), which
    /// operators and tools look for. Returns when raft stops.
    pub async fn log_changes(mut self) {
        let id = self.member_id;
        let mut last = None;
        loop {
            let (leader, term) = self.leader_and_term();
            if leader != last {
                match (last, leader) {
                    (Some(lost), None) => {
                        tracing::info!("raft.node: {id:x} lost leader {lost:x} at term {term}")
                    }
                    (_, Some(new)) => {
                        if new == id {
                            tracing::info!("{id:x} became leader at term {term}");
                        }
                        tracing::info!("raft.node: {id:x} elected leader {new:x} at term {term}");
                    }
                    (None, None) => {}
                }
                last = leader;
            }
            if !self.changed().await {
                return;
            }
        }
    }
}

impl Replica {
    /// A watch on this member's leadership.
    pub fn leadership(&self) -> LeadershipWatch {
        LeadershipWatch {
            metrics: self.raft.server_metrics(),
            member_id: self.member_id,
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

    /// The other members, each with whether it answers this member's raft
    /// calls now (etcd's `etcd_network_known_peers` and `active_peers`).
    pub fn peers(&self) -> Vec<(u64, bool)> {
        self.members()
            .into_iter()
            .filter(|m| m.id != self.member_id)
            .map(|m| (m.id, self.health.active_since(m.id).is_some()))
            .collect()
    }

    /// Ends the links peers opened to this member and those it opened (see
    /// `reverse.rs`): called when the member begins to stop, so that its
    /// listeners can drain; its calls to peers are dialled from then on.
    pub fn close_links(&self) {
        self.channels.links.close();
    }

    /// Waits, up to `within`, until every other member has opened its link
    /// to this one (see the `reverse` module), before this member first
    /// serves clients: its calls to the others go over those links, as
    /// etcd's raft messages go over the streams the receivers open, and
    /// are dialled only until then. Without the wait, a member whose peer
    /// listener was cut off right after it started kept the cluster for a
    /// moment over connections it dialled itself (etcd's e2e
    /// `TestHTTPHealthHandler/network_partitioned` blackholes the leader's
    /// listener as soon as every member serves). A member whose peers are
    /// down serves after `within` all the same.
    pub(crate) async fn wait_for_peer_links(&self, within: Duration) {
        let deadline = Instant::now() + within;
        loop {
            let others: Vec<u64> = self
                .members()
                .into_iter()
                .map(|m| m.id)
                .filter(|&id| id != self.member_id)
                .collect();
            if self.channels.links.is_closed()
                || self.channels.links.open_from_all(&others)
                || Instant::now() >= deadline
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Whether openraft has stopped and let go of the log.
    pub(crate) fn is_shut_down(&self) -> bool {
        (self.log_closed)()
    }

    /// Whether this member is a learner in the membership it knows.
    pub fn is_learner(&self) -> bool {
        self.members()
            .iter()
            .any(|m| m.id == self.member_id && m.is_learner)
    }

    /// Whether this member has a working leader, as etcd's check-quorum
    /// and pre-vote make it see one: itself with a quorum heard from within
    /// an election timeout (openraft 0.10's leader past its quorum lease
    /// keeps its role but takes no writes), or another member it has heard
    /// from within two.
    pub fn has_leader(&self) -> bool {
        let (leader, quorum_acked, sole_voter) = {
            let m = self.raft.metrics();
            let m = m.borrow();
            let mut voters = m.membership_config.membership().voter_ids();
            let sole_voter = voters.next().is_some() && voters.next().is_none();
            (m.current_leader, m.last_quorum_acked, sole_voter)
        };
        match leader {
            None => false,
            // A leader alone is its own quorum (openraft records no
            // acknowledgement for it).
            Some(l) if l == self.member_id && sole_voter => true,
            Some(l) if l == self.member_id => quorum_acked
                .is_some_and(|at| openraft::Instant::elapsed(&*at) <= self.election_timeout),
            // Up to two election timeouts: when etcd's follower, whose
            // randomized election timer fires between one and two, drops
            // its leader at the latest.
            Some(_) => self
                .leader_heard
                .lock()
                .is_some_and(|at| at.elapsed() <= 2 * self.election_timeout),
        }
    }

    /// Records an append from the leader, accepted (see `leader_heard`).
    pub(crate) fn heard_from_leader(&self) {
        *self.leader_heard.lock() = Some(std::time::Instant::now());
    }

    /// Sets the gauges of the raft log's RocksDB memory (called before a
    /// metrics scrape).
    pub fn record_log_memory(&self) {
        (self.log_memory)();
    }

    /// Waits until raft's metrics satisfy `holds`; false if raft stopped
    /// first.
    pub(crate) async fn metrics_reach(
        &self,
        holds: impl FnMut(&crate::types::RaftMetrics) -> bool,
    ) -> bool {
        self.raft.metrics().wait_for(holds).await.is_ok()
    }

    /// How long a request may wait on the log (etcd's request timeout).
    pub fn request_timeout(&self) -> Duration {
        self.request_timeout
    }

    /// Whether this member is the leader now.
    pub fn is_leader(&self) -> bool {
        self.raft.metrics().borrow().current_leader == Some(self.member_id)
    }

    /// The current raft term (cheaper than [`Replica::status`]).
    pub fn term(&self) -> u64 {
        self.term.load(Ordering::Relaxed)
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
            purged_index: m.purged.map_or(0, |l| l.index),
            is_learner,
        }
    }

    /// Waits (up to `timeout`) until this member knows a leader.
    pub async fn wait_leader(&self, timeout: Duration) -> Option<u64> {
        self.wait_for_leader(Instant::now() + timeout).await.ok()
    }

    /// Returns once this member has applied a membership that leaves it out
    /// (or restarted with one): it was removed from its cluster, and should
    /// stop, as etcd's member does ("the member has been permanently
    /// removed from the cluster"). Never returns otherwise.
    pub async fn removed(&self) {
        let mut removed = self.removed.clone();
        if removed.wait_for(|r| *r).await.is_err() {
            // The state machine is gone (the log shut down): not a removal.
            std::future::pending::<()>().await;
        }
    }

    /// A follower removed from the cluster may never apply its removal: the
    /// leader stops sending it entries once the change commits. Its peers
    /// then refuse its calls (votes, once its election timer fires) as
    /// coming from no member; when a quorum of the voters it knows refuse
    /// it, it was removed (etcd's member stops on its peers' "removed").
    pub(crate) async fn learn_removal_from_refusals(
        replica: std::sync::Weak<Replica>,
        removed: Arc<tokio::sync::watch::Sender<bool>>,
    ) {
        loop {
            let Some(me) = replica.upgrade() else { return };
            let interval = me.election_timeout;
            let voters: Vec<u64> = me
                .raft
                .metrics()
                .borrow()
                .membership_config
                .membership()
                .voter_ids()
                .collect();
            let refusing = me.refusals.refusing(interval * 10);
            let refused_by = voters
                .iter()
                .filter(|v| **v != me.member_id && refusing.contains(v))
                .count();
            if !voters.is_empty() && refused_by > voters.len() / 2 {
                tracing::warn!(
                    "local-member-id" = %format!("{:x}", me.member_id),
                    refused_by,
                    "a quorum of the members refuses this member as removed"
                );
                removed.send_replace(true);
                return;
            }
            drop(me);
            tokio::time::sleep(interval).await;
        }
    }

    /// Why the log stopped on its own, if it did: a storage error (an
    /// apply the store refused to make durable, a failed append, a snapshot
    /// that could not be built) or a panic in one of openraft's tasks. The
    /// member then answers nothing; the process should end (as etcd's does).
    pub fn fatal_error(&self) -> Option<String> {
        match &self.raft.metrics().borrow().running_state {
            Ok(()) | Err(openraft::error::Fatal::Stopped) => None,
            Err(e) => Some(e.to_string()),
        }
    }

    /// Waits until the log stops: returns [`Replica::fatal_error`]'s reason,
    /// or `"raft stopped"` after [`Replica::shutdown`]. Wakes only when
    /// leadership or membership changes, not per entry.
    pub async fn stopped(&self) -> String {
        let mut server = self.raft.server_metrics();
        loop {
            if let Some(why) = self.fatal_error() {
                return why;
            }
            // openraft's core holds the sender: the channel closes with it.
            if server.changed().await.is_err() {
                return self.fatal_error().unwrap_or_else(|| "raft stopped".into());
            }
        }
    }

    /// Stops taking part in the cluster. Returns once the log is closed
    /// and the state machine has let go of the store: openraft's state
    /// machine, snapshot and replication tasks end after its core does,
    /// and the same data dir may be opened again right after.
    pub async fn shutdown(&self) {
        // Links are calls that never end by themselves: a peer server
        // shutting down gracefully would wait for them for ever.
        self.close_links();
        let _ = self.raft.shutdown().await;
        let deadline = Instant::now() + Duration::from_secs(10);
        // A store or log reopened in this process (a member restarted in
        // place) must find them closed: RocksDB refuses a second opener.
        while !((self.log_closed)() && (self.state_released)()) {
            if Instant::now() >= deadline {
                tracing::warn!(
                    "raft tasks still hold the log or the store; they close when those end"
                );
                return;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}
