//! The types openraft is instantiated with, and how they are encoded.

use std::fmt;
use std::time::Duration;

use hark_mvcc::{WriteRequest, WriteResponse};
use serde::{Deserialize, Serialize};

openraft::declare_raft_types!(
    /// Hark's openraft configuration: entries carry [`Proposal`]s, nodes are
    /// [`MemberInfo`]s, snapshots are files (the state machine's and the
    /// network's `SnapshotData`).
    pub TypeConfig:
        D = Batch,
        R = (),
        NodeId = u64,
        Node = MemberInfo,
        AsyncRuntime = openraft::TokioRuntime,
);

pub type Raft = openraft::Raft<TypeConfig, crate::state_machine::StateMachine>;
pub type LogId = openraft::alias::LogIdOf<TypeConfig>;
pub type Vote = openraft::alias::VoteOf<TypeConfig>;
pub type Entry = openraft::alias::EntryOf<TypeConfig>;
pub type Membership = openraft::Membership<u64, MemberInfo>;
pub type StoredMembership = openraft::alias::StoredMembershipOf<TypeConfig>;
pub type SnapshotMeta = openraft::alias::SnapshotMetaOf<TypeConfig>;
pub type Snapshot = openraft::alias::SnapshotOf<TypeConfig, tokio::fs::File>;
pub type RaftMetrics = openraft::RaftMetrics<TypeConfig>;

/// A log id from its term, the leader that appended it and its index.
#[cfg(test)]
pub fn log_id(term: u64, leader: u64, index: u64) -> LogId {
    openraft::LogId::new(
        openraft::alias::CommittedLeaderIdOf::<TypeConfig> {
            term,
            node_id: leader,
        },
        index,
    )
}

/// What the cluster knows of a member (etcd's `Member` minus its id, which is
/// the raft node id). A member added by `MemberAdd` has only peer URLs until it
/// starts and publishes its name and client URLs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemberInfo {
    pub name: String,
    pub peer_urls: Vec<String>,
    pub client_urls: Vec<String>,
}

impl fmt::Display for MemberInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{}", self.name, self.peer_urls.join(","))
    }
}

/// A log entry's payload: proposals gathered while the previous entry was
/// being appended, so one log fsync serves many writes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Batch {
    pub proposals: Vec<Proposal>,
}

impl fmt::Display for Batch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "batch of {}", self.proposals.len())
    }
}

/// A change proposed by member `origin`, which waits
/// for its own apply of entry `(origin, seq)` to answer its client.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Proposal {
    pub origin: u64,
    pub seq: u64,
    pub command: Command,
}

impl fmt::Display for Proposal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "proposal {:x}/{}", self.origin, self.seq)
    }
}

/// What a log entry asks every member to do.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Command {
    /// A change to the store, applied at the same revision on every member.
    Write(WriteRequest),
    /// A change a leader decided in `term` (an expired lease's revoke):
    /// applied only if the leader of that term appended it, refused with
    /// `GuardFailed` on every member otherwise. A deposed leader's queued
    /// revoke, forwarded to the next leader, must not delete a lease that
    /// was kept alive through that leader (etcd issues #12528, #15247).
    WriteInTerm { term: u64, request: WriteRequest },
}

impl Proposal {
    /// Roughly how many bytes it adds to a log entry (batches stay bounded).
    pub fn weight(&self) -> usize {
        let (Command::Write(req) | Command::WriteInTerm { request: req, .. }) = &self.command;
        32 + write_weight(req)
    }
}

fn write_weight(req: &WriteRequest) -> usize {
    match req.unguarded() {
        WriteRequest::Put(p) => p.key.len() + p.value.len(),
        WriteRequest::DeleteRange(d) => d.key.len() + d.range_end.len(),
        WriteRequest::Txn(t) => txn_weight(t),
        _ => 16,
    }
}

fn txn_weight(t: &hark_mvcc::TxnRequest) -> usize {
    use hark_mvcc::RequestOp;
    let compares: usize = t
        .compare
        .iter()
        .map(|c| c.key.len() + c.range_end.len() + 16)
        .sum();
    let ops: usize = t
        .success
        .iter()
        .chain(&t.failure)
        .map(|op| match op {
            RequestOp::Range(r) => r.key.len() + r.range_end.len(),
            RequestOp::Put(p) => p.key.len() + p.value.len(),
            RequestOp::DeleteRange(d) => d.key.len() + d.range_end.len(),
            RequestOp::Txn(inner) => txn_weight(inner),
        })
        .sum();
    compares + ops
}

/// Encodes a value for the log or the wire (postcard: compact, not self-describing;
/// every member runs the same types).
/// The buffer is sized first (postcard's size pass allocates nothing): an
/// append of megabytes grown by doubling was copied and faulted in anew at
/// each step, which held a leader feeding a new member to ~20 MB/s.
pub fn encode<T: Serialize>(value: &T) -> Vec<u8> {
    let size =
        postcard::experimental::serialized_size(value).expect("sizing a serialization cannot fail");
    encode_with_capacity(value, size)
}

/// [`encode`] into a buffer of `capacity`, for a caller that knows the size.
pub(crate) fn encode_with_capacity<T: Serialize>(value: &T, capacity: usize) -> Vec<u8> {
    postcard::to_io(value, Vec::with_capacity(capacity)).expect("serializing to a Vec cannot fail")
}

pub fn decode<'a, T: Deserialize<'a>>(bytes: &'a [u8]) -> Result<T, postcard::Error> {
    postcard::from_bytes(bytes)
}

/// Encodes a message of the layers above as the peer protocol encodes its
/// own: for [`Replica::forward_to_leader`](crate::Replica::forward_to_leader)
/// and a [`ForwardHandler`](crate::ForwardHandler)'s answer.
pub fn encode_message<T: Serialize>(value: &T) -> Vec<u8> {
    encode(value)
}

/// Decodes what [`encode_message`] made; `None` for anything else.
pub fn decode_message<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Option<T> {
    decode(bytes).ok()
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

/// The leader's own apply of a follower's proposal: the index of the entry
/// it was in, and what applying it gave.
pub(crate) type Applied = (u64, hark_mvcc::Result<WriteResponse>);

/// Most bytes of applies one [`ProposeAnswer`] carries (a txn's reads can
/// be large); the proposals past it are answered by the follower's own
/// apply alone, as before the applies were sent.
pub(crate) const APPLIED_BYTES: usize = 1 << 20;

/// The leader's answer to a follower's batch (`Propose`): what became of
/// each proposal, then the leader's apply of each it applied.
///
/// A follower answers its writes from its own apply of their entry. When it
/// installs a snapshot instead (it fell behind the leader's log), it never
/// applies the entries the snapshot covers, and its writes among them would
/// wait out their time although they were applied: the leader's apply
/// answers them.
///
/// The applies ride behind the outcomes, where a reader from before them
/// stops reading (postcard reads no further than its type): the outcomes
/// are encoded exactly as before, so this is still peer format 1. An answer
/// without them (from such a leader) decodes with none.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct ProposeAnswer {
    pub(crate) outcomes: Vec<Proposed>,
    pub(crate) applied: Vec<Option<Applied>>,
}

impl ProposeAnswer {
    /// `outcomes` alone.
    pub(crate) fn outcomes(outcomes: Vec<Proposed>) -> ProposeAnswer {
        ProposeAnswer {
            outcomes,
            applied: Vec::new(),
        }
    }
}

impl Serialize for ProposeAnswer {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (&self.outcomes, &self.applied).serialize(s)
    }
}

impl<'de> Deserialize<'de> for ProposeAnswer {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Fields;
        impl<'de> serde::de::Visitor<'de> for Fields {
            type Value = ProposeAnswer;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("outcomes, then the applies if any")
            }

            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<ProposeAnswer, A::Error> {
                let outcomes = seq
                    .next_element()?
                    .ok_or_else(|| serde::de::Error::invalid_length(0, &self))?;
                // Absent from an older leader: the input ends here. Applies
                // that do not decode are none too: the follower's own apply
                // still answers (they only spare it the wait).
                let applied = seq.next_element().ok().flatten().unwrap_or_default();
                Ok(ProposeAnswer { outcomes, applied })
            }
        }
        d.deserialize_tuple(2, Fields)
    }
}

/// A duration in whole milliseconds, at least 1 (openraft's settings and
/// transfer steps count milliseconds).
pub(crate) fn millis(d: Duration) -> u64 {
    d.as_millis().max(1) as u64
}
