//! Writes: each is proposed to the leader's log in a batch with the others
//! queued meanwhile (one log entry, one fsync, many writes), then answered
//! from this member's own apply of its entry. A follower sends its batches
//! to the leader.

use std::sync::atomic::Ordering;
use std::time::Duration;

use hark_mvcc::{WriteRequest, WriteResponse};
use openraft::error::{ClientWriteError, RaftError};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use super::{Outcome, Queued, Replica, ReplicaError};
use crate::metrics_watch::MetricsWatch;
use crate::network::{Method, never_sent, refused};
use crate::stages;
use crate::state_machine::{OwnApply, Pending};
use crate::types::{APPLIED_BYTES, Applied, Batch, Command, Proposal, ProposeAnswer, Proposed};

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

/// The counter of writes proposed again because an earlier proposal of
/// them was certain never to apply: bound to a term, and not applied by
/// the time this member applied an entry of a later term.
pub const PROPOSED_AGAIN: &str = "hark_raft_proposals_proposed_again_total";

/// What one attempt at a proposal came to.
enum Attempt {
    Answered(Result<WriteResponse, ReplicaError>),
    /// It was bound to a term and is certain never to apply.
    NeverApplied,
}

/// The writer's answer from its own apply (`bound`: its proposal was bound
/// to a term by the proposer, and may be made again).
fn own_answer(own: Result<OwnApply, oneshot::error::RecvError>, bound: bool) -> Attempt {
    match own {
        Ok(OwnApply::Done(result)) => Attempt::Answered(result.map_err(ReplicaError::Store)),
        Ok(OwnApply::OtherTerm) if bound => Attempt::NeverApplied,
        // A change a leader decided in its term (a lease's revoke) is
        // refused for good once another term's leader appended it.
        Ok(OwnApply::OtherTerm) => {
            Attempt::Answered(Err(ReplicaError::Store(hark_mvcc::Error::GuardFailed)))
        }
        Err(_) => Attempt::Answered(Err(ReplicaError::Stopped)),
    }
}

/// `proposal` bound to `term` if it is a plain write.
fn bind_to(mut proposal: Proposal, term: u64) -> Proposal {
    if let Command::Write(request) = proposal.command {
        proposal.command = Command::WriteInTerm { term, request };
    }
    proposal
}

/// Most proposals in one log entry, and roughly most bytes.
const BATCH_PROPOSALS: usize = 512;

const BATCH_BYTES: usize = 2 << 20;

/// Proposals waiting for the proposer. When it is full, writers wait to
/// queue (backpressure up to the gRPC handlers), nothing is dropped.
pub(super) const PROPOSAL_QUEUE: usize = 8192;

/// Gathers the proposals queued while the batches before were on their way
/// into one log entry: a log fsync then serves many writes. Up to
/// `batches_in_flight` batches per member are on their way at once
/// ([`ReplicaConfig::batches_in_flight`](super::ReplicaConfig)); a batch
/// starts only once there is room for it, so the proposals queued while
/// none was join it. With one append in flight per follower, two to four
/// batches at once made smaller batches and were no faster; with several
/// appends in flight (`--peer-append-window`), four batches at once took
/// 16 writers from 1.02–1.05× etcd's puts/s to 1.18–1.20× on a cluster of
/// three, and a member alone from 1.21× to 1.29–1.35× (docs/benchmarks.md).
/// Before giving up on an empty queue it yields twice, so handlers whose
/// requests have just arrived can join the batch (8.4 writes per entry
/// instead of 7.5).
pub(super) async fn run_proposer(
    replica: std::sync::Weak<Replica>,
    mut queue: mpsc::Receiver<Queued>,
    batches_in_flight: usize,
) {
    let room = std::sync::Arc::new(tokio::sync::Semaphore::new(batches_in_flight.max(1)));
    loop {
        let Ok(place) = room.clone().acquire_owned().await else {
            return;
        };
        let Some(first) = queue.recv().await else {
            return;
        };
        let mut weight = first.proposal.weight();
        let mut batch = vec![first];
        let mut yields = 0;
        while batch.len() < BATCH_PROPOSALS && weight < BATCH_BYTES {
            match queue.try_recv() {
                Ok(next) => {
                    weight += next.proposal.weight();
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
        let mut bound = Vec::with_capacity(batch.len());
        let mut answers = Vec::with_capacity(batch.len());
        for queued in batch {
            stages::record("queue", queued.queued);
            proposals.push(queued.proposal);
            bound.push(queued.bind_to_term);
            answers.push(queued.outcome);
        }
        tokio::spawn(async move {
            let started = std::time::Instant::now();
            let (term, outcomes) = replica.propose_batch(proposals, &bound).await;
            stages::record("batch", started);
            drop((replica, place));
            for (answer, (proposed, leaders_apply)) in answers.into_iter().zip(outcomes) {
                let _ = answer.send(Outcome {
                    proposed,
                    leaders_apply,
                    term,
                });
            }
        });
    }
}

impl Replica {
    /// Proposes `req` and answers with this member's own apply of it, once the
    /// cluster committed it; `Timeout` after the request timeout, whatever
    /// held it up.
    /// A request the store's checks refuse (an empty key, a record no
    /// backend could hold, …) is answered here and never reaches the log.
    ///
    /// A physical compaction is answered once this member's store has
    /// deleted the compacted rows, a wait outside the request timeout (at
    /// millions of keys it takes seconds): etcd, too, waits for its own
    /// physical compaction after the request, without a time-out. The
    /// entry logged is the compaction itself, which every member applies
    /// alike.
    pub async fn write(&self, req: WriteRequest) -> Result<WriteResponse, ReplicaError> {
        self.store.validate(&req).map_err(ReplicaError::Store)?;
        match req {
            WriteRequest::Compact(c) if c.physical => {
                let revision = c.revision;
                let logged = hark_mvcc::CompactRequest {
                    physical: false,
                    ..c
                };
                let answer = self
                    .propose(Command::Write(WriteRequest::Compact(logged)))
                    .await?;
                let (done, finished) = oneshot::channel();
                self.store.when_compacted(revision, move || {
                    let _ = done.send(());
                });
                finished.await.map_err(|_| ReplicaError::Stopped)?;
                Ok(answer)
            }
            req => self.propose(Command::Write(req)).await,
        }
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

    /// Proposes `command` until it is answered, or the request timeout.
    /// An attempt that is certain never to apply is made again: a plain
    /// write is bound to the term it is proposed in, so a write held up by
    /// a leader that died or was paused is proposed to the next leader as
    /// soon as this member has applied that leader's first entry, instead of
    /// waiting out the timeout (a client such as the Kubernetes API server
    /// does not retry a write that may have applied: it answers 500).
    async fn propose_and_wait(&self, command: Command) -> Result<WriteResponse, ReplicaError> {
        let deadline = Instant::now() + self.request_timeout;
        loop {
            match self.attempt(&command, deadline).await {
                Attempt::Answered(result) => return result,
                Attempt::NeverApplied => {
                    metrics::counter!(PROPOSED_AGAIN).increment(1);
                }
            }
        }
    }

    /// One proposal of `command`, under its own sequence number (a later
    /// attempt's apply is never taken for this one's, nor the reverse).
    async fn attempt(&self, command: &Command, deadline: Instant) -> Attempt {
        let seq = self.next_seq.fetch_add(1, Ordering::Relaxed);
        // etcd refuses proposals once its apply is 5000 entries behind; this
        // member refuses past as many writes of its own waiting to apply.
        let Some(mut applied) = self.pending.register(seq, hark_mvcc::MAX_QUEUED_REQUESTS) else {
            metrics::counter!("etcd_server_proposals_failed_total").increment(1);
            return Attempt::Answered(Err(ReplicaError::Store(hark_mvcc::Error::TooManyRequests)));
        };
        metrics::gauge!("etcd_server_proposals_pending").increment(1.0);
        // However this ends (an answer, an error, the caller gone), nobody
        // waits for `seq` any more.
        let _forget = Forget(&self.pending, seq);
        let bind_to_term = matches!(command, Command::Write(_));
        // Read before the proposal leaves: see `await_own_apply`.
        let snapshots = self.pending.snapshots_installed();
        // The answer is this member's own apply, which may come before the
        // batch's outcome (openraft answers the batch after its whole apply).
        let term = loop {
            let (tx, rx) = oneshot::channel();
            let queued = Queued {
                proposal: Proposal {
                    origin: self.member_id,
                    seq,
                    command: command.clone(),
                },
                outcome: tx,
                queued: std::time::Instant::now(),
                bind_to_term,
            };
            match tokio::time::timeout_at(deadline, self.proposals.send(queued)).await {
                Err(_) => return Attempt::Answered(Err(ReplicaError::Timeout)),
                Ok(Err(_)) => return Attempt::Answered(Err(ReplicaError::Stopped)),
                Ok(Ok(())) => {}
            }
            let outcome = tokio::select! {
                biased;
                // Applied here already: the batch's own answer comes later.
                own = &mut applied => return own_answer(own, bind_to_term),
                outcome = tokio::time::timeout_at(deadline, rx) => match outcome {
                    Err(_) => return Attempt::Answered(Err(ReplicaError::Timeout)),
                    Ok(outcome) => outcome.unwrap_or(Outcome {
                        proposed: Proposed::Stopped,
                        leaders_apply: None,
                        term: 0,
                    }),
                },
            };
            if let (Proposed::Appended, Some((index, result))) =
                (outcome.proposed, outcome.leaders_apply)
            {
                // `GuardFailed` from the leader could be its refusal of a
                // write bound to another term: this member's apply tells.
                if !(bind_to_term && matches!(result, Err(hark_mvcc::Error::GuardFailed))) {
                    return self
                        .answer_once_applied(applied, bind_to_term, index, result, deadline)
                        .await;
                }
            }
            match outcome.proposed {
                Proposed::Appended | Proposed::Unknown => break outcome.term,
                // Certainly not in any log: safe to propose again.
                Proposed::NotAppended if Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                Proposed::NotAppended => return Attempt::Answered(Err(ReplicaError::Timeout)),
                Proposed::Stopped => return Attempt::Answered(Err(ReplicaError::Stopped)),
            }
        };
        let bound_term = bind_to_term.then_some(term);
        self.await_own_apply(applied, bound_term, snapshots, deadline)
            .await
    }

    /// Waits for this member's own apply of a proposal that may be in the
    /// log. One bound to `bound_term` that this member has not applied by
    /// the time it applies an entry of a later term never applies: the
    /// committed log's terms never decrease, so every entry of that term is
    /// applied here by then, and the proposal in any later entry is refused.
    /// Unless a snapshot was installed meanwhile (`snapshots` is the count
    /// before the proposal left): its entries are not applied one by one,
    /// and the proposal may be among them, so the writer waits it out.
    async fn await_own_apply(
        &self,
        mut applied: oneshot::Receiver<OwnApply>,
        bound_term: Option<u64>,
        snapshots: u64,
        deadline: Instant,
    ) -> Attempt {
        let bound = bound_term.is_some();
        let later_term_applied = async {
            let Some(term) = bound_term else {
                return std::future::pending().await;
            };
            let applied_past = self.metrics_reach(|m| {
                m.last_applied
                    .is_some_and(|last| last.leader_id.term > term)
            });
            if !applied_past.await {
                // Raft stopped: only the apply or the deadline ends the wait.
                std::future::pending::<()>().await;
            }
        };
        tokio::select! {
            biased;
            own = &mut applied => return own_answer(own, bound),
            () = later_term_applied => {}
            () = tokio::time::sleep_until(deadline) => {
                return Attempt::Answered(Err(ReplicaError::Timeout));
            }
        }
        // The apply answers before raft reports it applied: an apply of this
        // proposal is in the channel by now.
        match applied.try_recv() {
            Ok(own) => own_answer(Ok(own), bound),
            Err(oneshot::error::TryRecvError::Closed) => {
                Attempt::Answered(Err(ReplicaError::Stopped))
            }
            Err(oneshot::error::TryRecvError::Empty)
                if self.pending.snapshots_installed() == snapshots =>
            {
                Attempt::NeverApplied
            }
            Err(oneshot::error::TryRecvError::Empty) => {
                match tokio::time::timeout_at(deadline, applied).await {
                    Ok(own) => own_answer(own, bound),
                    Err(_) => Attempt::Answered(Err(ReplicaError::Timeout)),
                }
            }
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
        mut own_apply: oneshot::Receiver<OwnApply>,
        bound: bool,
        index: u64,
        result: hark_mvcc::Result<WriteResponse>,
        deadline: Instant,
    ) -> Attempt {
        let applied_here =
            self.metrics_reach(|m| m.last_applied.is_some_and(|applied| applied.index >= index));
        tokio::select! {
            biased;
            own = &mut own_apply => own_answer(own, bound),
            caught_up = tokio::time::timeout_at(deadline, applied_here) => Attempt::Answered(match caught_up {
                Ok(true) => result.map_err(ReplicaError::Store),
                Ok(false) => Err(ReplicaError::Stopped),
                Err(_) => Err(ReplicaError::Timeout),
            }),
        }
    }

    /// Gets one batch of proposals into the leader's log (this member's own
    /// raft when it leads, else the leader's over the peer protocol), the
    /// `bound` ones bound to that leader's term. Answers with the term and
    /// each proposal's outcome.
    pub(super) async fn propose_batch(
        &self,
        proposals: Vec<Proposal>,
        bound: &[bool],
    ) -> (u64, Vec<(Proposed, Option<Applied>)>) {
        let n = proposals.len();
        let all = |proposed: Proposed| vec![(proposed, None); n];
        let deadline = Instant::now() + self.request_timeout;
        let (leader, term) = match self.wait_for_leader_in_term(deadline).await {
            Ok(known) => known,
            Err(ReplicaError::Stopped) => return (0, all(Proposed::Stopped)),
            Err(_) => return (0, all(Proposed::NotAppended)),
        };
        let batch = Batch {
            proposals: proposals
                .into_iter()
                .zip(bound)
                .map(|(p, &bind)| if bind { bind_to(p, term) } else { p })
                .collect(),
        };
        if leader == self.member_id {
            return (term, all(self.append_here(batch, term, deadline).await));
        }
        let sent = tokio::select! {
            sent = self.call_member::<_, ProposeAnswer, ()>(
                leader,
                Method::Propose,
                &batch,
                deadline,
            ) => match sent {
                Ok(sent) => sent,
                Err(_) => return (term, all(Proposed::NotAppended)),
            },
            // The leader was replaced while it held the batch (it died, was
            // paused or cut off): the proposer moves on, and the writers
            // learn their proposals' fate from what this member applies.
            () = self.leader_replaced(leader, term) => return (term, all(Proposed::Unknown)),
        };
        let outcomes = match sent {
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
        };
        (term, outcomes)
    }

    /// Returns once this member knows a leader other than `leader`, or a
    /// term after `term`.
    async fn leader_replaced(&self, leader: u64, term: u64) {
        let replaced = self.metrics_reach(|m| {
            m.current_term > term || m.current_leader.is_some_and(|l| l != leader)
        });
        if !replaced.await {
            // Raft stopped: the call ends by itself.
            std::future::pending().await
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
            // As the follower made it (bound to a term or not).
            let queued = Queued {
                proposal,
                outcome: tx,
                queued: std::time::Instant::now(),
                bind_to_term: false,
            };
            if self.proposals.send(queued).await.is_err() {
                waiting.push((None, apply));
            } else {
                waiting.push((Some(rx), apply));
            }
        }
        let mut answer = ProposeAnswer::default();
        let mut applied_bytes = 0;
        for (outcome, apply) in waiting {
            let outcome = match outcome {
                Some(rx) => rx
                    .await
                    .map_or(Proposed::Stopped, |outcome| outcome.proposed),
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

    /// The leader's half of proposing: one log entry for the whole batch,
    /// if this member still leads in `term` (the term its proposals were
    /// bound to).
    pub(crate) async fn append_here(&self, batch: Batch, term: u64, deadline: Instant) -> Proposed {
        let _no_transfer = self.until_no_transfer(deadline).await;
        {
            let m = self.raft.metrics();
            let m = m.borrow();
            if m.current_leader != Some(self.member_id) || m.current_term != term {
                return Proposed::NotAppended;
            }
        }
        match tokio::time::timeout_at(deadline, self.raft.client_write(batch)).await {
            Ok(Ok(_)) => Proposed::Appended,
            // Refused before its entry was appended: not the leader, or a
            // leader whose quorum lease has lapsed (one just elected or
            // restored has none until a quorum answers it; one cut off from
            // its quorum has lost it).
            Ok(Err(RaftError::APIError(ClientWriteError::ForwardToLeader(_)))) => {
                Proposed::NotAppended
            }
            // Raft stopped, or it was appended and then lost leadership: the
            // entry may still commit under the next leader.
            Ok(Err(RaftError::APIError(_))) | Ok(Err(RaftError::Fatal(_))) | Err(_) => {
                Proposed::Unknown
            }
        }
    }
}
