//! The cluster's members and their changes (etcd's MemberAdd, MemberRemove,
//! MemberPromote, MemberUpdate and a started member's publish), run on the
//! leader with etcd's checks.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use openraft::ChangeMembers;
use openraft::error::{ChangeMembershipError, ClientWriteError, RaftError};
use serde::{Deserialize, Serialize};
use tokio::time::Instant;

use super::{Member, MembershipError, Replica, ReplicaError};
use crate::metrics_watch::MetricsWatch;
use crate::network::Method;
use crate::types::MemberInfo;

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
    pub(super) fn shown_in(&self, members: &[Member]) -> bool {
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
fn members_of(metrics: &crate::types::RaftMetrics) -> Vec<Member> {
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

/// How long a voter must have answered without a break to count as active
/// for membership changes (etcd's `HealthInterval`).
const HEALTH_INTERVAL: Duration = Duration::from_secs(5);

/// Most learners at once (etcd's `--max-learners` default).
const MAX_LEARNERS: usize = 1;

/// A learner within this share of the leader's log may be promoted (etcd's
/// `readyPercentThreshold`).
const PROMOTE_READY: f64 = 0.9;

impl Replica {
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
    pub(super) async fn until_shown(&self, change: &MembershipChange, limit: Instant) {
        let mut metrics = self.raft.metrics();
        loop {
            if change.shown_in(&members_of(&metrics.borrow())) {
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
        // A learner this leader is to promote (a voter added to a cluster of
        // one) counts as the voter etcd would have made it: a second voter
        // added before it has started is refused, as etcd refuses it.
        let intended = self.intended_voters.lock().clone();
        let votes = |m: &&Member| !m.is_learner || intended.contains(&m.id);
        // etcd's strict reconfiguration check: a voter change must leave a
        // quorum of started (published) voters.
        let started = |except: Option<u64>| {
            members
                .iter()
                .filter(votes)
                .filter(|m| !m.info.client_urls.is_empty() && Some(m.id) != except)
                .count()
        };
        let voters = members.iter().filter(votes).count();
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
        let voter_ids: Vec<u64> = members.iter().filter(votes).map(|m| m.id).collect();
        let with_info = |id: u64, edit: &dyn Fn(&mut MemberInfo)| {
            let mut info = find(id).ok_or(MembershipError::MemberNotFound)?.info;
            edit(&mut info);
            Ok::<_, MembershipError>(ChangeMembers::SetNodes(BTreeMap::from([(id, info)])))
        };
        let promotion = matches!(change, MembershipChange::Promote { .. });
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
                // A learner this leader is to promote is the voter etcd
                // would have made it: it takes no learner's place.
                let learners = members.iter().filter(|m| m.is_learner && !votes(m)).count();
                if learner && learners >= MAX_LEARNERS {
                    return Err(MembershipError::TooManyLearners);
                }
                if self.strict_reconfig_check {
                    // A cluster of one started voter may grow to two (how a
                    // cluster restored from a snapshot is rebuilt); otherwise
                    // the started voters must stay a quorum with the new one.
                    let started = started(None);
                    let grows_one = voters == 1 && started == 1;
                    if !learner && !grows_one && started < quorum(voters + 1) {
                        return Err(MembershipError::NotEnoughStarted);
                    }
                    // etcd 3.7, for learners too: counting the new member as
                    // a voter that is down, this member must be connected to
                    // a quorum (a cluster of one always is).
                    let connected = voter_ids.iter().filter(|v| active(**v)).count();
                    if voters > 1 && connected < quorum(voters + 1) {
                        return Err(MembershipError::Unhealthy);
                    }
                }
                let nodes = BTreeMap::from([(id, member)]);
                if learner {
                    ChangeMembers::AddNodes(nodes)
                } else if voters == 1 {
                    // etcd grows a cluster of one to two in one step; raft's
                    // joint consensus here would need the new member's vote
                    // to commit the change, and it has not started yet. So
                    // it joins as a learner and this leader promotes it once
                    // it has caught up (see `promote_intended_voters`).
                    self.run_change(ChangeMembers::AddNodes(nodes), deadline)
                        .await?;
                    self.intended_voters.lock().insert(id);
                    return Ok(());
                } else {
                    ChangeMembers::AddVoters(nodes)
                }
            }
            MembershipChange::Remove { id } => match find(id) {
                None => return Err(MembershipError::MemberNotFound),
                Some(m) if m.is_learner => ChangeMembers::RemoveNodes(BTreeSet::from([id])),
                Some(_) if !self.strict_reconfig_check => {
                    ChangeMembers::RemoveVoters(BTreeSet::from([id]))
                }
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
                // As etcd: the learner must have caught up in any case; the
                // quorum check only under --strict-reconfig-check.
                if !self.learner_in_sync(id) {
                    return Err(MembershipError::LearnerNotReady);
                }
                if self.strict_reconfig_check && started(None) + 1 < quorum(voters + 1) {
                    return Err(MembershipError::NotEnoughStarted);
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
        let changed = self.run_change(changes, deadline).await;
        if promotion && changed.is_ok() {
            metrics::counter!("etcd_server_learner_promote_successes").increment(1);
        }
        changed
    }

    pub(super) async fn run_change(
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
            Ok(Err(RaftError::APIError(e))) => Err(MembershipError::Failed(e.to_string())),
            Ok(Err(RaftError::Fatal(e))) => Err(MembershipError::Failed(e.to_string())),
        }
    }

    /// Promotes, while this member leads, each learner added as a voter to
    /// a cluster of one (see the `Add` case of
    /// [`Replica::change_membership`]) once it has caught up. Returns when
    /// the member is dropped or stops.
    pub(crate) async fn promote_intended_voters(replica: std::sync::Weak<Replica>) {
        loop {
            tokio::time::sleep(Duration::from_millis(200)).await;
            let Some(replica) = replica.upgrade() else {
                return;
            };
            let pending: Vec<u64> = replica.intended_voters.lock().iter().copied().collect();
            if pending.is_empty() || !replica.is_leader() {
                continue;
            }
            for id in pending {
                // The promotion itself checks that it has caught up (any
                // refusal but the two below is retried next time round).
                match replica
                    .change_membership_here(MembershipChange::Promote { id })
                    .await
                {
                    Ok(()) => {
                        tracing::info!("promoted-member-id" = %format!("{id:x}"), "promoted a member added as a voter");
                        replica.intended_voters.lock().remove(&id);
                    }
                    // Removed, or promoted by an operator meanwhile.
                    Err(MembershipError::NotLearner | MembershipError::MemberNotFound) => {
                        replica.intended_voters.lock().remove(&id);
                    }
                    Err(e) => {
                        tracing::debug!(error = %e, "promoting a member added as a voter; retrying")
                    }
                }
            }
        }
    }

    /// Whether learner `id` has replicated at least [`PROMOTE_READY`] of the leader's log.
    pub(super) fn learner_in_sync(&self, id: u64) -> bool {
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

    pub(crate) fn node(&self, id: u64) -> Option<MemberInfo> {
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

    /// etcd's publish: makes this member's name and client URLs part of the
    /// membership (a `Publish` change through the leader), then checks
    /// every 5 s, after a read barrier, that the log still shows them;
    /// a change that fails is retried every 200 ms. Returns only when the
    /// member stops.
    ///
    /// A `Publish` that committed is not proposed again while this member
    /// is still catching up to it: each one is a membership entry, at which
    /// openraft rebuilds every replication stream, and so restarts a
    /// snapshot being sent to this very member. Proposed every time a read
    /// barrier timed out, a new member behind a snapshot longer to send
    /// than the barrier's time-out never caught up (the fault suite's
    /// member-replace, seed 1351).
    ///
    /// `first` is told once the membership first shows them: etcd serves
    /// clients only from then on, so a client that reads the member list
    /// (clientv3's endpoint sync) finds every serving member's client URLs.
    /// It is told once the other members' links to this one are up too
    /// (see `Replica::wait_for_peer_links`).
    pub async fn keep_published(
        &self,
        name: String,
        client_urls: Vec<String>,
        first: tokio::sync::oneshot::Sender<()>,
    ) {
        let id = self.member_id;
        let mut first = Some(first);
        // Whether a Publish of ours committed since the last time the
        // membership was seen, caught up, without our attributes.
        let mut committed = false;
        loop {
            let caught_up = self.read_barrier().await.is_ok();
            let shown = self
                .members()
                .into_iter()
                .any(|m| m.id == id && m.info.name == name && m.info.client_urls == client_urls);
            let wait = if caught_up && shown {
                if let Some(first) = first.take() {
                    // etcd's line, which tools wait for, with etcd's keys.
                    tracing::info!(
                        "local-member-id" = %format!("{id:x}"),
                        "local-member-attributes" = %format!("{{Name:{name} ClientURLs:[{}]}}", client_urls.join(" ")),
                        "cluster-id" = %format!("{:x}", self.cluster_id()),
                        "published local member to cluster through raft"
                    );
                    self.wait_for_peer_links(self.election_timeout).await;
                    let _ = first.send(());
                }
                Duration::from_secs(5)
            } else if (committed || shown) && !caught_up {
                // Ours is in the log (this member's view, however far
                // behind, shows it, or our last Publish committed): wait
                // until this member has caught up.
                Duration::from_millis(200)
            } else {
                let change = MembershipChange::Publish {
                    id,
                    name: name.clone(),
                    client_urls: client_urls.clone(),
                };
                match self.change_membership(change).await {
                    Ok(()) => {
                        committed = true;
                        Duration::ZERO
                    }
                    Err(ReplicaError::Stopped) => return,
                    Err(e) => {
                        tracing::debug!(error = %e, "publishing this member's attributes; retrying");
                        Duration::from_millis(200)
                    }
                }
            };
            tokio::time::sleep(wait).await;
        }
    }
}
