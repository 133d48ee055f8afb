//! Writes: each is proposed to the leader's log in a batch with the others
//! queued meanwhile (one log entry, one fsync, many writes), then answered
//! from this member's own apply of its entry. A follower sends its batches
//! to the leader.

use std::sync::atomic::Ordering;
use std::time::Duration;

use hark_mvcc::{WriteRequest, WriteResponse};
use openraft::error::RaftError;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use super::{Outcome, Queued, Replica, ReplicaError};
use crate::network::{Method, never_sent, refused};
use crate::stages;
use crate::state_machine::Pending;
use crate::types::{APPLIED_BYTES, Batch, Command, Proposal, ProposeAnswer, Proposed};

/// Drops the leader's waiters for a follower's proposals when their batch
/// is answered (or its call dropped).
struct ForgetForwarded<'a>(&'a Pending, Vec<(u64, u64)>);

impl Drop for ForgetForwarded<'_> {
    fn drop(&mut self) {
        for &(origin, seq) in &self.1 {
            self.0.forget_forwarded(origin, seq);
        }
    }
}

/// Drops the waiter for a proposal's apply when its writer is done.
struct Forget<'a>(&'a Pending, u64);

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        self.0.forget(self.1);
        metrics::gauge!("etcd_server_proposals_pending").decrement(1.0);
    }
}

/// Most proposals in one log entry, and roughly most bytes.
const BATCH_PROPOSALS: usize = 512;

const BATCH_BYTES: usize = 2 << 20;

/// Proposals waiting for the proposer. When it is full, writers wait to
/// queue (backpressure up to the gRPC handlers), nothing is dropped.
pub(super) const PROPOSAL_QUEUE: usize = 8192;

/// Gathers the proposals queued while the batch before was on its way into
/// one log entry: a log fsync then serves many writes. One batch at a time
/// per member (two or three in flight made smaller batches, more fsyncs and
/// fewer writes per second, measured again with the inline sync of a cluster
/// of one: 6.3 writes per entry instead of 8.4, no faster; in a cluster,
/// with the leader's sync in the background, four in flight moved the wait
/// from the queue into raft's replication and were no faster either: see
/// docs/benchmarks.md). Before giving up on an empty queue it yields twice,
/// so handlers whose requests have just arrived can join the batch (8.4
/// writes per entry instead of 7.5).
pub(super) async fn run_proposer(
    replica: std::sync::Weak<Replica>,
    mut queue: mpsc::Receiver<Queued>,
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
        let mut proposals = Vec::with_capacity(batch.len());
        let mut answers = Vec::with_capacity(batch.len());
        for (proposal, answer, queued) in batch {
            stages::record("queue", queued);
            proposals.push(proposal);
            answers.push(answer);
        }
        let started = std::time::Instant::now();
        let outcomes = replica.propose_batch(Batch { proposals }).await;
        stages::record("batch", started);
        drop(replica);
        for (answer, outcome) in answers.into_iter().zip(outcomes) {
            let _ = answer.send(outcome);
        }
    }
}

impl Replica {
    /// Proposes `req` and answers with this member's own apply of it, once the
    /// cluster committed it; `Timeout` after the request timeout, whatever
    /// held it up.
    /// A request the store's checks refuse (an empty key, a record no
    /// backend could hold, …) is answered here and never reaches the log.
    pub async fn write(&self, req: WriteRequest) -> Result<WriteResponse, ReplicaError> {
        self.store.validate(&req).map_err(ReplicaError::Store)?;
        self.propose(Command::Write(req)).await
    }

    /// [`Replica::write`] for a change this member decided as the leader of
    /// `term`: refused at apply (`GuardFailed`) unless that leader appended
    /// it. Fails at once when this member does not lead in `term`.
    pub async fn write_in_term(
        &self,
        term: u64,
        req: WriteRequest,
    ) -> Result<WriteResponse, ReplicaError> {
        if !self.is_leader() || self.term() != term {
            return Err(ReplicaError::Store(hark_mvcc::Error::GuardFailed));
        }
        self.store.validate(&req).map_err(ReplicaError::Store)?;
        self.propose(Command::WriteInTerm { term, request: req })
            .await
    }

    async fn propose(&self, command: Command) -> Result<WriteResponse, ReplicaError> {
        let started = std::time::Instant::now();
        let result = self.propose_and_wait(command).await;
        stages::record("write", started);
        // etcd's failed proposals: not appended, or no answer in time. A
        // request the store refused at apply was committed and applied.
        if matches!(&result, Err(e) if !matches!(e, ReplicaError::Store(_))) {
            metrics::counter!("etcd_server_proposals_failed_total").increment(1);
        }
        result
    }

    async fn propose_and_wait(&self, command: Command) -> Result<WriteResponse, ReplicaError> {
        let seq = self.next_seq.fetch_add(1, Ordering::Relaxed);
        // etcd refuses proposals once its apply is 5000 entries behind; this
        // member refuses past as many writes of its own waiting to apply.
        let Some(mut applied) = self.pending.register(seq, hark_mvcc::MAX_QUEUED_REQUESTS) else {
            metrics::counter!("etcd_server_proposals_failed_total").increment(1);
            return Err(ReplicaError::Store(hark_mvcc::Error::TooManyRequests));
        };
        metrics::gauge!("etcd_server_proposals_pending").increment(1.0);
        // However this ends (an answer, an error, the caller gone), nobody
        // waits for `seq` any more.
        let _forget = Forget(&self.pending, seq);
        let proposal = Proposal {
            origin: self.member_id,
            seq,
            command,
        };
        let deadline = Instant::now() + self.request_timeout;
        let timed_out = |_| ReplicaError::Timeout;
        // The answer is this member's own apply, which may come before the
        // batch's outcome (openraft answers the batch after its whole apply).
        loop {
            let (tx, rx) = oneshot::channel();
            match tokio::time::timeout_at(
                deadline,
                self.proposals
                    .send((proposal.clone(), tx, std::time::Instant::now())),
            )
            .await
            {
                Err(_) => return Err(ReplicaError::Timeout),
                Ok(Err(_)) => return Err(ReplicaError::Stopped),
                Ok(Ok(())) => {}
            }
            let (outcome, leaders_apply) = tokio::select! {
                biased;
                // Applied here already: the batch's own answer comes later.
                result = &mut applied => {
                    return match result {
                        Ok(result) => result.map_err(ReplicaError::Store),
                        Err(_) => Err(ReplicaError::Stopped),
                    };
                }
                outcome = tokio::time::timeout_at(deadline, rx) => {
                    outcome.map_err(timed_out)?.unwrap_or((Proposed::Stopped, None))
                }
            };
            if let (Proposed::Appended, Some((index, result))) = (outcome, leaders_apply) {
                return self
                    .answer_once_applied(applied, index, result, deadline)
                    .await;
            }
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

    /// Answers a write with the leader's apply of it (`result`, of entry
    /// `index`), once this member has applied that far too, so that a read
    /// here afterwards sees the write: by its own apply (which answers
    /// first, the same answer) or by installing a snapshot that covers the
    /// entry (then its own apply never comes, see [`ProposeAnswer`]).
    ///
    /// [`ProposeAnswer`]: crate::types::ProposeAnswer
    async fn answer_once_applied(
        &self,
        mut own_apply: oneshot::Receiver<hark_mvcc::Result<WriteResponse>>,
        index: u64,
        result: hark_mvcc::Result<WriteResponse>,
        deadline: Instant,
    ) -> Result<WriteResponse, ReplicaError> {
        let mut metrics = self.raft.metrics();
        let applied_here = async move {
            loop {
                if metrics
                    .borrow_and_update()
                    .last_applied
                    .is_some_and(|applied| applied.index >= index)
                {
                    return true;
                }
                if metrics.changed().await.is_err() {
                    return false;
                }
            }
        };
        tokio::select! {
            biased;
            own = &mut own_apply => match own {
                Ok(own) => own.map_err(ReplicaError::Store),
                Err(_) => Err(ReplicaError::Stopped),
            },
            caught_up = tokio::time::timeout_at(deadline, applied_here) => match caught_up {
                Ok(true) => result.map_err(ReplicaError::Store),
                Ok(false) => Err(ReplicaError::Stopped),
                Err(_) => Err(ReplicaError::Timeout),
            },
        }
    }

    /// Gets one batch of proposals into the leader's log (this member's own
    /// raft when it leads, else the leader's over the peer protocol).
    pub(super) async fn propose_batch(&self, batch: Batch) -> Vec<Outcome> {
        let n = batch.proposals.len();
        let all = |proposed: Proposed| vec![(proposed, None); n];
        let deadline = Instant::now() + self.request_timeout;
        let leader = match self.wait_for_leader(deadline).await {
            Ok(l) => l,
            Err(ReplicaError::Stopped) => return all(Proposed::Stopped),
            Err(_) => return all(Proposed::NotAppended),
        };
        if leader == self.member_id {
            return all(self.append_here(batch, deadline).await);
        }
        let sent = match self
            .call_member::<_, ProposeAnswer, ()>(leader, Method::Propose, &batch, deadline)
            .await
        {
            Ok(sent) => sent,
            Err(_) => return all(Proposed::NotAppended),
        };
        match sent {
            Some(Ok(Ok(answer))) if answer.outcomes.len() == n => {
                let mut applied = answer.applied.into_iter();
                answer
                    .outcomes
                    .into_iter()
                    .map(|outcome| (outcome, applied.next().flatten()))
                    .collect()
            }
            // The leader's address is unknown, or the call never left.
            None => all(Proposed::NotAppended),
            Some(Err(status)) if never_sent(&status) => all(Proposed::NotAppended),
            // Refused before any work: this member is not (or not yet)
            // among the leader's members.
            Some(Err(status)) if refused(&status) => all(Proposed::NotAppended),
            // Lost in transit: it may have been appended.
            Some(Ok(_)) | Some(Err(_)) => all(Proposed::Unknown),
        }
    }

    /// A follower's batch, on the leader: its proposals join this member's
    /// own queue, so they share log entries (and fsyncs) with the others.
    /// Answered with each proposal's outcome and this member's apply of it
    /// (up to [`APPLIED_BYTES`] of them).
    pub(crate) async fn propose_forwarded(&self, batch: Batch) -> ProposeAnswer {
        if !self.is_leader() {
            return ProposeAnswer::outcomes(vec![Proposed::NotAppended; batch.proposals.len()]);
        }
        let deadline = Instant::now() + self.request_timeout;
        let mut waiting = Vec::with_capacity(batch.proposals.len());
        // However this ends (the follower's call may be dropped), nobody
        // waits for these applies any more.
        let forget = ForgetForwarded(
            &self.pending,
            batch.proposals.iter().map(|p| (p.origin, p.seq)).collect(),
        );
        for proposal in batch.proposals {
            let apply = self.pending.expect_forwarded(proposal.origin, proposal.seq);
            let (tx, rx) = oneshot::channel();
            let queued = std::time::Instant::now();
            if self.proposals.send((proposal, tx, queued)).await.is_err() {
                waiting.push((None, apply));
            } else {
                waiting.push((Some(rx), apply));
            }
        }
        let mut answer = ProposeAnswer::default();
        let mut applied_bytes = 0;
        for (outcome, apply) in waiting {
            let outcome = match outcome {
                Some(rx) => rx.await.map_or(Proposed::Stopped, |(outcome, _)| outcome),
                None => Proposed::Stopped,
            };
            let mut applied = None;
            // Appended once this member applied the entry: its apply is in
            // (or about to be: the timeout only bounds a wait that the
            // apply always ends).
            if outcome == Proposed::Appended
                && let Ok(Ok((index, result))) = tokio::time::timeout_at(deadline, apply).await
                // A failing store here says nothing of the follower's apply.
                && !matches!(
                    result,
                    Err(hark_mvcc::Error::Backend(_) | hark_mvcc::Error::Closed)
                )
            {
                let bytes = postcard::experimental::serialized_size(&result).unwrap_or(usize::MAX);
                if applied_bytes + bytes <= APPLIED_BYTES {
                    applied_bytes += bytes;
                    applied = Some((index, result));
                }
            }
            answer.outcomes.push(outcome);
            answer.applied.push(applied);
        }
        drop(forget);
        answer
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
}
