//! Leader transfer (etcd's MoveLeader), run by the leader; the steps and
//! the state are in [`crate::transfer`].

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::time::Instant;

use super::{Replica, ReplicaError};
use crate::metrics_watch::MetricsWatch;
use crate::network::Method;
use crate::transfer::TransferStep;
use crate::types::millis;

/// Ends a transfer on the leader however it ends: heartbeats and appends resume.
struct Running<'a>(&'a Replica);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.0.raft.runtime_config().heartbeat(true);
        self.0.transfer.running.send_replace(false);
    }
}

impl Replica {
    /// etcd's MoveLeader: makes voter `target` the leader. Only the leader
    /// runs it; returns once `target` leads (at once when it already does).
    pub async fn move_leader(&self, target: u64) -> Result<(), ReplicaError> {
        let _serial = self.transfer.serial.lock().await;
        let deadline = Instant::now() + self.request_timeout;
        if !self.is_leader() {
            return Err(ReplicaError::NotLeader);
        }
        if !self.voters().contains(&target) {
            return Err(ReplicaError::BadLeaderTransferee);
        }
        if target == self.member_id() {
            return Ok(());
        }
        // Appends already past the gate finish first (bounded by their deadline).
        let Ok(started) = tokio::time::timeout_at(deadline, self.transfer.gate.write()).await
        else {
            return Err(ReplicaError::LeaderTransferTimeout);
        };
        self.transfer.running.send_replace(true);
        drop(started);
        let running = Running(self);
        let transferred = self.run_transfer(target, deadline).await;
        drop(running);
        if transferred.is_err() {
            // Heartbeats are back: the target must not stand any more.
            let cancel_by = Instant::now() + Duration::from_millis(500);
            let _ = self
                .call_member::<_, (), ()>(
                    target,
                    Method::TransferLeader,
                    &TransferStep::Cancel,
                    cancel_by,
                )
                .await;
        }
        transferred
    }

    pub(super) async fn run_transfer(
        &self,
        target: u64,
        deadline: Instant,
    ) -> Result<(), ReplicaError> {
        let config = self.raft.config().clone();
        let lease = Duration::from_millis(config.election_timeout_max);
        let heartbeat = Duration::from_millis(config.heartbeat_interval);

        // 1. Nothing new is appended from here on; the target catches up,
        // within an election timeout (as etcd's raft gives a transfer) so
        // that writes are not held up long for a target that is down.
        let caught_up_by = deadline.min(Instant::now() + lease);
        let mut metrics = self.raft.metrics();
        loop {
            let m = metrics.borrow().clone();
            if m.current_leader != Some(self.member_id()) {
                return Err(ReplicaError::NotLeader);
            }
            let matched = m
                .replication
                .as_ref()
                .and_then(|r| r.get(&target).cloned().flatten())
                .map(|l| l.index);
            if matched.is_some() && matched == m.last_log_index {
                break;
            }
            if tokio::time::timeout_at(caught_up_by, metrics.changed())
                .await
                .is_err()
            {
                return Err(ReplicaError::LeaderTransferTimeout);
            }
        }

        // 2. Only the target may stand: the others hold their elections until
        // well after it won (or gave up).
        let stand_after = lease + heartbeat + Duration::from_millis(50);
        let remaining = deadline.saturating_duration_since(Instant::now());
        let hold = TransferStep::HoldElections {
            millis: millis(remaining + lease),
        };
        // Each step is answered at once by a live member: one that does not
        // answer soon is not waited for.
        let step_deadline = || deadline.min(Instant::now() + lease / 2);
        for voter in self.voters() {
            if voter != target && voter != self.member_id() {
                // Best effort: a voter that misses it may stand too, and the
                // transfer then takes a second round or times out.
                let _ = self
                    .call_member::<_, (), ()>(voter, Method::TransferLeader, &hold, step_deadline())
                    .await;
            }
        }

        // 3. and 4. Silence, then the target stands once every lease is over.
        self.raft.runtime_config().heartbeat(false);
        let stand = TransferStep::StandForElection {
            after_millis: millis(stand_after),
            for_millis: millis(remaining),
        };
        match self
            .call_member::<_, (), ()>(target, Method::TransferLeader, &stand, step_deadline())
            .await
        {
            Ok(Some(Ok(Ok(())))) => {}
            _ => return Err(ReplicaError::LeaderTransferTimeout),
        }
        loop {
            match metrics.borrow().current_leader {
                Some(l) if l == target => return Ok(()),
                // Someone else won: the transfer did not happen.
                Some(l) if l != self.member_id() => {
                    return Err(ReplicaError::LeaderTransferTimeout);
                }
                _ => {}
            }
            if tokio::time::timeout_at(deadline, metrics.changed())
                .await
                .is_err()
            {
                return Err(ReplicaError::LeaderTransferTimeout);
            }
        }
    }

    /// A member receiving a snapshot is behind the leader sending it: an
    /// election it called would only depose that leader at a higher term
    /// and start the send over (openraft 0.9 has no pre-vote), which under
    /// load kept a member behind a many-megabyte snapshot out for minutes.
    /// So each chunk holds its elections for as long as the next chunk may
    /// take; the caught-up members still elect if the leader dies.
    pub(crate) fn hold_elections_while_receiving_a_snapshot(self: Arc<Self>) {
        let millis = self.raft.config().install_snapshot_timeout;
        self.take_transfer_step(TransferStep::HoldElections { millis });
    }

    /// A transfer step asked of this member by the leader (runs in the
    /// background; the leader watches the outcome).
    pub(crate) fn take_transfer_step(self: Arc<Self>, step: TransferStep) {
        match step {
            TransferStep::HoldElections { millis } => {
                let until = Instant::now() + Duration::from_millis(millis);
                *self.transfer.held_until.lock() = Some(until);
                self.raft.runtime_config().elect(false);
                // Weak: a hold must not keep a stopped member (and its
                // store) alive until it ends.
                let member = Arc::downgrade(&self);
                tokio::spawn(async move {
                    tokio::time::sleep_until(until).await;
                    let Some(member) = member.upgrade() else {
                        return;
                    };
                    let mut held = member.transfer.held_until.lock();
                    // The latest hold decides when elections resume.
                    if held.is_some_and(|u| u <= Instant::now()) {
                        *held = None;
                        member.raft.runtime_config().elect(true);
                    }
                });
            }
            TransferStep::Cancel => {
                self.transfer.standing.fetch_add(1, Ordering::SeqCst);
            }
            TransferStep::StandForElection {
                after_millis,
                for_millis,
            } => {
                let turn = self.transfer.standing.fetch_add(1, Ordering::SeqCst) + 1;
                let term = self.term();
                tokio::spawn(async move {
                    let start = Instant::now() + Duration::from_millis(after_millis);
                    let give_up = Instant::now() + Duration::from_millis(for_millis);
                    let round = Duration::from_millis(self.raft.config().election_timeout_max);
                    tokio::time::sleep_until(start).await;
                    // Stands until it leads, the transfer is called off, or
                    // another member won a later term.
                    let over = |r: &Replica| {
                        r.is_leader()
                            || r.transfer.standing.load(Ordering::SeqCst) != turn
                            || (r.status().leader.is_some() && r.term() > term)
                    };
                    while Instant::now() < give_up && !over(&self) {
                        if self.raft.trigger().elect(false).await.is_err() {
                            return;
                        }
                        let _ = self
                            .raft
                            .wait(Some(round))
                            .metrics(|m| m.current_leader == Some(m.id), "won the election")
                            .await;
                    }
                });
            }
        }
    }

    /// etcd's graceful stop: a leader hands its leadership to the voter
    /// whose log matches the most of its own before it stops, so that the
    /// cluster does not wait out an election timeout without a leader.
    /// Returns whether another member leads within `within` (at once when
    /// this member does not lead, or leads alone).
    pub async fn hand_over_leadership(&self, within: Duration) -> bool {
        let target = {
            let m = self.raft.metrics();
            let m = m.borrow();
            if m.current_leader != Some(self.member_id()) {
                return true;
            }
            let voters: Vec<u64> = m.membership_config.membership().voter_ids().collect();
            m.replication.as_ref().and_then(|matched| {
                voters
                    .iter()
                    .filter(|v| **v != self.member_id())
                    .max_by_key(|v| matched.get(v).copied().flatten().map(|l| l.index))
                    .copied()
            })
        };
        let Some(target) = target else {
            return true;
        };
        if self.raft.trigger().transfer_leader(target).await.is_err() {
            return false;
        }
        let me = self.member_id();
        let moved = self.metrics_reach(|m| m.current_leader.is_some_and(|l| l != me));
        let moved = matches!(tokio::time::timeout(within, moved).await, Ok(true));
        if moved {
            tracing::info!(
                "local-member-id" = %format!("{me:x}"),
                transferee = %format!("{target:x}"),
                "leadership transferred before stopping"
            );
        } else {
            tracing::warn!(
                "local-member-id" = %format!("{me:x}"),
                transferee = %format!("{target:x}"),
                "the leadership transfer before stopping did not finish"
            );
        }
        moved
    }

    /// Waits while this member (as the leader) transfers its leadership:
    /// appends and read-index rounds would renew the followers' lease on it.
    /// The guard returned is held until raft has the append or round.
    pub(crate) async fn until_no_transfer(
        &self,
        deadline: Instant,
    ) -> tokio::sync::RwLockReadGuard<'_, ()> {
        loop {
            // Every batch passes here: no timer nor subscription when idle.
            if *self.transfer.running.borrow() {
                let mut running = self.transfer.running.subscribe();
                let _ = tokio::time::timeout_at(deadline, running.wait_for(|r| !*r)).await;
            }
            let pass = self.transfer.gate.read().await;
            // A transfer that outlasts the deadline no longer holds anyone up.
            if !*self.transfer.running.borrow() || Instant::now() >= deadline {
                return pass;
            }
        }
    }
}
