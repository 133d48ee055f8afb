//! Linearizable reads: the leader's read index, reached (from a follower,
//! through a peer call) and then applied here before the read runs.

use std::time::Duration;

use openraft::error::{LinearizableReadError, RaftError};
use tokio::time::Instant;

use super::{Replica, ReplicaError};
use crate::network::Method;
use crate::types::TypeConfig;

/// The counter of read-index calls a follower made to its leader, each
/// for all the linearizable reads that waited for it.
pub const FOLLOWER_READ_INDEX_CALLS: &str = "hark_raft_follower_read_index_calls_total";

impl Replica {
    /// The leader's read index, once a quorum confirmed its leadership (for
    /// its own reads and those its followers ask for).
    ///
    /// A leader is never restored at restart in its old term (see
    /// `leader_restore` in start.rs): it is elected anew, with a blank entry
    /// of its new term, so openraft's read index covers every write
    /// acknowledged before the restart. (Restored, with no new entry, its
    /// read index was the commit index it had saved, lazily: the fault
    /// suite's power loss saw a read at revision 1706 after 1710 was
    /// acknowledged. The mutation `read-index-after-restore` brings that
    /// back.)
    pub(crate) async fn read_index_here(
        &self,
        deadline: Instant,
    ) -> Result<u64, RaftError<TypeConfig, LinearizableReadError<TypeConfig>>> {
        let _no_transfer = self.until_no_transfer(deadline).await;
        let (read, _applied) = self
            .raft
            .get_read_log_id(openraft::ReadPolicy::ReadIndex)
            .await?;
        Ok(read.index())
    }

    /// etcd's ensureLeadership: whether this member leads, confirmed now by
    /// a quorum (a read index) within the request timeout, in the same term
    /// before and after, with everything up to that index applied here. A
    /// leader cut off from the others answers `false`: openraft 0.9 has no
    /// check-quorum step-down, so without this it would go on answering
    /// for the cluster (a lease kept alive on it, expired by the new leader).
    pub async fn confirm_leadership(&self) -> bool {
        if hark_mvcc::chaos::mutation("lease-without-leadership-check") {
            return self.is_leader();
        }
        if !self.is_leader() {
            return false;
        }
        let term = self.term();
        let deadline = Instant::now() + self.request_timeout;
        let Ok(Ok(index)) = tokio::time::timeout_at(deadline, self.read_index_here(deadline)).await
        else {
            return false;
        };
        let remaining = deadline.saturating_duration_since(Instant::now());
        let applied = self
            .raft
            .wait(Some(remaining))
            .applied_index_at_least(Some(index), "leadership confirmed")
            .await;
        applied.is_ok() && self.is_leader() && self.term() == term
    }

    /// The leader's read index for a read on this follower, from a call to
    /// the leader that started after this one was made: the reads that
    /// arrive while a call is on its way share the next one, as etcd's
    /// follower sends one ReadIndex for all the reads pending on it. A call
    /// that started after a read arrived answers an index at or past every
    /// write acknowledged before it, which is all a linearizable read
    /// needs. `None` when the leader gave no index.
    async fn read_index_in_round(
        &self,
        leader: u64,
        deadline: Instant,
    ) -> Result<Option<u64>, ReplicaError> {
        let ask = || async {
            metrics::counter!(FOLLOWER_READ_INDEX_CALLS).increment(1);
            let asked = self
                .call_member::<_, u64, RaftError<TypeConfig, LinearizableReadError<TypeConfig>>>(
                    leader,
                    Method::ReadIndex,
                    &(),
                    deadline,
                )
                .await?;
            Ok(match asked {
                Some(Ok(Ok(index))) => Some(index),
                _ => None,
            })
        };
        self.read_rounds.index_after_now(deadline, ask).await
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
                self.read_index_in_round(leader, deadline).await?
            };
            if index.is_none() {
                metrics::counter!("etcd_server_read_indexes_failed_total").increment(1);
            }
            if let Some(index) = index {
                let remaining = deadline.saturating_duration_since(Instant::now());
                return match self
                    .raft
                    .wait(Some(remaining))
                    .applied_index_at_least(Some(index), "read index")
                    .await
                {
                    Ok(_) => Ok(()),
                    Err(openraft::metrics::WaitError::Timeout(..)) => {
                        metrics::counter!("etcd_server_slow_read_indexes_total").increment(1);
                        Err(ReplicaError::Timeout)
                    }
                    Err(openraft::metrics::WaitError::ShuttingDown) => Err(ReplicaError::Stopped),
                };
            }
            if Instant::now() >= deadline {
                metrics::counter!("etcd_server_slow_read_indexes_total").increment(1);
                return Err(ReplicaError::Timeout);
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

/// A follower's read-index calls to the leader, one at a time (see
/// [`Replica::read_index_in_round`]).
pub(crate) struct ReadRounds {
    state: parking_lot::Mutex<RoundState>,
    /// The last round answered and its index (`None`: no index).
    answers: tokio::sync::watch::Sender<(u64, Option<u64>)>,
}

#[derive(Default)]
struct RoundState {
    /// Rounds started so far.
    started: u64,
    in_flight: bool,
}

impl Default for ReadRounds {
    fn default() -> Self {
        ReadRounds {
            state: Default::default(),
            answers: tokio::sync::watch::Sender::new((0, None)),
        }
    }
}

impl ReadRounds {
    /// The index of a round that starts after this call: this caller's own
    /// (`ask` run, at most once) if none is on its way, else the next one
    /// after it. `Ok(None)` when that round got no index, or none came by
    /// `deadline`.
    pub(crate) async fn index_after_now<F, Fut>(
        &self,
        deadline: Instant,
        ask: F,
    ) -> Result<Option<u64>, ReplicaError>
    where
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = Result<Option<u64>, ReplicaError>>,
    {
        let mut answers = self.answers.subscribe();
        let needed = self.state.lock().started + 1;
        loop {
            let (round, index) = *answers.borrow_and_update();
            if round >= needed {
                return Ok(index);
            }
            if let Some(round) = self.start_round() {
                // The guard hands the rounds on should this caller give up
                // before `ask` is answered.
                let mut driving = DrivingRound {
                    rounds: self,
                    round,
                    index: None,
                };
                let asked = ask().await;
                driving.index = Some(*asked.as_ref().unwrap_or(&None));
                return asked;
            }
            if tokio::time::timeout_at(deadline, answers.changed())
                .await
                .is_err()
            {
                return Ok(None);
            }
        }
    }

    /// Starts the next round unless one is on its way.
    fn start_round(&self) -> Option<u64> {
        let mut state = self.state.lock();
        if state.in_flight {
            return None;
        }
        state.in_flight = true;
        state.started += 1;
        Some(state.started)
    }
}

/// The round a read drives. Dropped, it ends the round: with its index
/// once answered; unanswered (its read was given up), it only wakes the
/// reads waiting on it, one of which starts the next.
struct DrivingRound<'a> {
    rounds: &'a ReadRounds,
    round: u64,
    index: Option<Option<u64>>,
}

impl Drop for DrivingRound<'_> {
    fn drop(&mut self) {
        self.rounds.state.lock().in_flight = false;
        match self.index {
            Some(index) => {
                self.rounds.answers.send_replace((self.round, index));
            }
            None => self.rounds.answers.send_modify(|_| {}),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
    use std::time::Duration;

    use tokio::time::Instant;

    use super::ReadRounds;

    /// 64 reads arriving over 19 ms, each right after a write is
    /// acknowledged, against a leader that takes 5 ms to answer with its
    /// commit index as of the call's arrival: every read gets an index at or
    /// past its write, and the reads share a handful of calls.
    #[tokio::test(start_paused = true)]
    async fn reads_waiting_share_the_next_call_which_sees_every_write_before_them() {
        let rounds = Arc::new(ReadRounds::default());
        let commit = Arc::new(AtomicU64::new(0));
        let calls = Arc::new(AtomicU64::new(0));
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut reads = tokio::task::JoinSet::new();
        for i in 0..64u64 {
            let (rounds, commit, calls) = (rounds.clone(), commit.clone(), calls.clone());
            reads.spawn(async move {
                tokio::time::sleep(Duration::from_micros(300 * i)).await;
                let acknowledged = commit.fetch_add(1, SeqCst) + 1;
                let ask = || async {
                    calls.fetch_add(1, SeqCst);
                    let read_index = commit.load(SeqCst);
                    tokio::time::sleep(Duration::from_millis(5)).await;
                    Ok(Some(read_index))
                };
                let index = rounds.index_after_now(deadline, ask).await.unwrap();
                (acknowledged, index)
            });
        }
        while let Some(read) = reads.join_next().await {
            let (acknowledged, index) = read.unwrap();
            let index = index.expect("every round answers");
            assert!(
                index >= acknowledged,
                "read after write {acknowledged} got {index}"
            );
        }
        let calls = calls.load(SeqCst);
        assert!((4..=6).contains(&calls), "{calls} calls for 64 reads");
    }

    /// A read that drives a round and is given up (its client went away)
    /// before the leader answers hands the rounds on: a read waiting on it
    /// starts the next one.
    #[tokio::test(start_paused = true)]
    async fn a_driver_given_up_hands_the_next_round_to_a_waiting_read() {
        let rounds = Arc::new(ReadRounds::default());
        let deadline = Instant::now() + Duration::from_secs(10);
        let driver = tokio::spawn({
            let rounds = rounds.clone();
            async move { rounds.index_after_now(deadline, std::future::pending).await }
        });
        tokio::time::sleep(Duration::from_millis(1)).await;
        let waiting = tokio::spawn({
            let rounds = rounds.clone();
            async move {
                rounds
                    .index_after_now(deadline, || async { Ok(Some(7)) })
                    .await
            }
        });
        tokio::time::sleep(Duration::from_millis(1)).await;
        assert!(!waiting.is_finished(), "joined the round on its way");
        driver.abort();
        let index = tokio::time::timeout(Duration::from_secs(1), waiting)
            .await
            .expect("the waiting read went on")
            .unwrap()
            .unwrap();
        assert_eq!(index, Some(7));
    }

    /// A read waiting for a round that never ends gives up at its deadline.
    #[tokio::test(start_paused = true)]
    async fn a_read_waits_no_longer_than_its_deadline() {
        let rounds = Arc::new(ReadRounds::default());
        let far = Instant::now() + Duration::from_secs(60);
        let _driver = tokio::spawn({
            let rounds = rounds.clone();
            async move { rounds.index_after_now(far, std::future::pending).await }
        });
        tokio::time::sleep(Duration::from_millis(1)).await;
        let deadline = Instant::now() + Duration::from_millis(100);
        let index = rounds
            .index_after_now(deadline, || async { Ok(Some(1)) })
            .await
            .unwrap();
        assert_eq!(index, None);
        assert!(Instant::now() >= deadline);
    }
}
