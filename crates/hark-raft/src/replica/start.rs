//! Starting a member: its log opened, its identity learned (from the log,
//! from the cluster it joins, or from its configuration), an install a
//! crash interrupted finished, raft started, and the member's own tasks.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hark_mvcc::Store;
use openraft::SnapshotPolicy;
use openraft::storage::{RaftSnapshotBuilder, RaftStateMachine};
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::propose::{PROPOSAL_QUEUE, run_proposer};
use super::{Join, Replica, ReplicaConfig, ReplicaDirs};
use crate::admission::{Caller, Vouches};
use crate::durability::LogDurability;
use crate::log_store::{Alone, LogStore, PurgeFloor};
use crate::metrics_watch::MetricsWatch;
use crate::network::{Method, Network, PeerChannels, PeerHealth, PeerRefusals, call};
use crate::state_machine::{Pending, StateMachine, decode_position, finish_interrupted_install};
use crate::transfer::TransferState;
use crate::types::{MemberInfo, Raft, TypeConfig, millis};

/// The least time a snapshot chunk may take; the last chunk's includes
/// copying the snapshot into the store.
const SNAPSHOT_CHUNK_TIMEOUT: Duration = Duration::from_secs(30);

const SNAPSHOT_CHUNK_BYTES: u64 = 1024 * 1024;

impl Replica {
    /// Opens the log in `dirs.log` (snapshots in `dirs.snapshots`), feeds
    /// its committed entries to `store` (from the store's recorded position
    /// on), and joins or starts the cluster.
    pub async fn start(
        config: ReplicaConfig,
        store: Store,
        dirs: &ReplicaDirs,
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
            max_in_snapshot_log_to_keep: config.snapshot_catchup_entries,
            // Entries are batches of proposals already: fewer per append.
            max_payload_entries: 64,
            // Each snapshot chunk must arrive, be decoded and (the last one)
            // be installed within this, or the leader starts the whole send
            // again: openraft's 200 ms default and 3 MiB chunks kept a
            // restarted member on a loaded machine out of reach for over a
            // minute. Small chunks waste little when one fails.
            install_snapshot_timeout: millis(
                SNAPSHOT_CHUNK_TIMEOUT.max(config.election_timeout * 20),
            ),
            snapshot_max_chunk_size: SNAPSHOT_CHUNK_BYTES,
            // etcd's --pre-vote (its default since 3.5): a member that cannot
            // win does not raise its term, so one cut off and healed does not
            // depose a working leader.
            enable_pre_vote: Some(config.pre_vote),
            // A leader that restarts is a follower and is elected anew, in a
            // new term, as etcd's is. openraft would otherwise restore it as
            // leader of its old term; one that lost power also lost the
            // entries it had not synced yet, and would append different ones
            // at their indexes in the same term. A follower holding an old
            // one takes the new one for a match (same term, same index) and
            // keeps it: the members' logs disagree. Found by the fault
            // suite's power loss (seed 5815: a member's watcher saw another
            // value at revision 17980 than the others applied).
            enable_leader_restore: Some(leader_restore()),
            ..Default::default()
        }
        .validate()
        .map_err(|e| format!("raft configuration: {e}"))?;
        let purge_floor = PurgeFloor::default();
        let alone = Alone::default();
        let mut log = LogStore::open(&dirs.log, config.fsync, purge_floor.clone(), alone.clone())?;
        let channels = PeerChannels::new(config.peer_source, config.peer_tls.clone());
        if log.identity()?.is_none() && store.log_position().map_err(|e| e.to_string())?.is_some() {
            return Err(format!(
                "the store in this data dir applied raft entries but its log ({}) is missing; \
                 restore the member from a snapshot or remove and re-add it",
                dirs.log.display()
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
        let (unfinished, snapshots) = (store.clone(), dirs.snapshots.clone());
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
        let hashed = store.clone();
        let durability = log.durability();
        let (removed, removed_watch) = tokio::sync::watch::channel(false);
        let removed = Arc::new(removed);
        let mut state_machine = StateMachine::new(
            store,
            config.member_id,
            pending.clone(),
            dirs.snapshots.clone(),
            purge_floor,
            durability.clone(),
            removed.clone(),
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
        if config.force_new_cluster {
            super::force::force_new_cluster(&mut log, &mut state_machine, config.member_id).await?;
        }
        let log_closed = Box::new(log.closed_probe());
        let log_memory = Box::new(log.memory_probe());
        let state_released = Box::new(state_machine.released_probe());
        let health = PeerHealth::default();
        let refusals = PeerRefusals::default();
        let pipeline = crate::network::PipelineStats::default();
        let network = Network {
            append_window: config.append_window.clamp(1, crate::MAX_APPEND_WINDOW),
            pipeline: pipeline.clone(),
            channels: channels.clone(),
            heartbeat: config.heartbeat_interval,
            health: health.clone(),
            refusals: refusals.clone(),
            caller: Caller {
                member_id: config.member_id,
                cluster_id: config.cluster_id,
            },
            durability: durability.clone(),
            snapshots: state_machine.snapshot_source(),
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
        let raft_server_metrics = raft.server_metrics();
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
            log_memory,
            state_released,
            forward_handler: parking_lot::RwLock::new(None),
            transfer: TransferState::default(),
            vouches: Vouches::default(),
            term: Arc::new(AtomicU64::new(raft_term(&raft_server_metrics.borrow()))),
            leader_heard: Default::default(),
            read_rounds: Default::default(),
            peer_received: Default::default(),
            store: hashed,
            hashes_held: config.initial_corruption_check.into(),
            strict_reconfig_check: config.strict_reconfig_check,
            intended_voters: Default::default(),
            removed: removed_watch,
            refusals,
            pipeline,
        });
        tokio::spawn(Replica::learn_removal_from_refusals(
            Arc::downgrade(&replica),
            removed,
        ));
        tokio::spawn(run_proposer(
            Arc::downgrade(&replica),
            queue,
            config
                .batches_in_flight
                .clamp(1, crate::MAX_BATCHES_IN_FLIGHT),
        ));
        tokio::spawn(Replica::promote_intended_voters(Arc::downgrade(&replica)));
        tokio::spawn(crate::reverse::keep_links(Arc::downgrade(&replica)));
        tokio::spawn(release_held_back_commits(
            Arc::downgrade(&replica),
            durability,
        ));
        tokio::spawn(follow_server_metrics(
            raft_server_metrics,
            config.member_id,
            alone,
            replica.term.clone(),
        ));
        if replica.voters() == [config.member_id] {
            // A new cluster of one leads from its initialization, in term
            // 0. Its own writes of that term are let finish first (for up to
            // an election timeout): an election started under them makes
            // openraft drop their notices, with a warning.
            let leading = replica
                .raft
                .with_raft_state(|state| state.server_state == openraft::ServerState::Leader)
                .await
                .unwrap_or(false);
            if leading {
                // The entry must be in the metrics first: before it, both
                // are `None`, which would read as settled.
                let settled = replica.metrics_reach(|m| {
                    m.last_log_index.is_some_and(|last| {
                        m.last_applied.is_some_and(|applied| applied.index >= last)
                    })
                });
                let _ = tokio::time::timeout(config.election_timeout, settled).await;
            }
            // Alone: no one to wait for, elect at once instead of after a
            // timeout.
            let _ = replica.raft.trigger().elect(false).await;
        }
        Ok(replica)
    }
}

/// A commit index held back from the followers (the leader's own copy was
/// not yet on disk) reaches them as soon as it is, in a heartbeat, instead
/// of with the next append or the next scheduled heartbeat. Ends with the
/// log.
async fn release_held_back_commits(replica: Weak<Replica>, durability: LogDurability) {
    while durability.held_back_then_durable().await {
        let Some(replica) = replica.upgrade() else {
            return;
        };
        let _ = replica.raft.trigger().heartbeat().await;
    }
}

/// Whether openraft restores a member that led before a restart as leader
/// of its old term, without an election: never (see the raft config
/// above), but in the mutation run that puts back the restore and, with
/// it, a read index older than writes acknowledged before the restart
/// (`read-index-after-restore`).
fn leader_restore() -> bool {
    hark_mvcc::chaos::mutation("read-index-after-restore")
}

/// The term a server-metrics snapshot holds (its vote's, as openraft's own
/// `current_term`).
fn raft_term(metrics: &openraft::metrics::RaftServerMetrics<TypeConfig>) -> u64 {
    metrics.vote.leader_id.term
}

/// Keeps `alone` true exactly while this member is the cluster's only member
/// (one voter, no learners), and `term` at the current raft term; ends when
/// raft stops.
async fn follow_server_metrics(
    // The server metrics change with votes, leadership and membership only,
    // not with every entry.
    mut metrics: openraft::alias::WatchReceiverOf<
        TypeConfig,
        openraft::metrics::RaftServerMetrics<TypeConfig>,
    >,
    member_id: u64,
    alone: Alone,
    term: Arc<AtomicU64>,
) {
    loop {
        let (only_me, now) = {
            let m = metrics.borrow();
            let config = m.membership_config.membership();
            let only_me = config.nodes().count() == 1 && config.voter_ids().eq([member_id]);
            (only_me, raft_term(&m))
        };
        alone.set(only_me);
        term.store(now, Ordering::Relaxed);
        if metrics.changed().await.is_err() {
            return;
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

#[cfg(test)]
mod tests {
    #[tokio::test]
    pub(super) async fn alone_follows_the_membership() {
        use std::collections::{BTreeMap, BTreeSet};

        use openraft::async_runtime::{Watch, WatchSender};
        use openraft::metrics::RaftServerMetrics;
        use openraft::{ServerState, StoredMembership};

        use crate::log_store::Alone;
        use crate::types::{MemberInfo, Membership, TypeConfig, Vote};

        fn metrics(voters: &[u64], learners: &[u64]) -> RaftServerMetrics<TypeConfig> {
            let nodes: BTreeMap<u64, MemberInfo> = voters
                .iter()
                .chain(learners)
                .map(|id| (*id, MemberInfo::default()))
                .collect();
            let config = vec![voters.iter().copied().collect::<BTreeSet<u64>>()];
            let membership = std::sync::Arc::new(StoredMembership::new(
                None,
                Membership::new(config, nodes).unwrap(),
            ));
            RaftServerMetrics {
                id: 1,
                vote: Vote::new_committed(1, 1),
                state: ServerState::Leader,
                current_leader: Some(1),
                membership_config: membership.clone(),
                committed_membership_config: membership,
            }
        }

        let (tx, rx) = <openraft::alias::WatchOf<TypeConfig> as Watch>::channel(metrics(&[1], &[]));
        let alone = Alone::default();
        let term = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let task = tokio::spawn(super::follow_server_metrics(rx, 1, alone.clone(), term));
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
}
