//! `hark-raft`: the replicated log in front of `hark-mvcc`'s apply seam.
//!
//! * [`Replica`] — one member: proposes writes (a follower forwards them to
//!   the leader), answers each from its own apply, serves linearizable reads
//!   after the leader's read index, runs membership changes on the leader.
//! * The log and the vote live in their own RocksDB (`log_store`), fsynced
//!   once per group of appends before openraft counts them durable.
//! * The state machine (`state_machine`) is the store: each committed entry
//!   goes through `Store::apply_logged`, which records the entry's log id in
//!   the same backend write as the revision it produced.
//! * Members talk gRPC (`harkpeerpb.Peer`) on their peer URLs: `network`
//!   (client) and `service` (server).
//!   Every call names its caller, and the server refuses raft RPCs and
//!   forwarded work from callers that are not current members of its
//!   cluster (`admission`).
//! * [`ids`] derives member and cluster ids as etcd does.
//! * `transfer` moves the leadership to another voter (etcd's MoveLeader),
//!   which openraft 0.9 lacks, by letting the leader's lease run out.
//!
//! `replica/` holds the member in rooms (start-up, proposing, forwarding,
//! reads, membership, transfer, admission); they import from its `mod.rs`
//! and from the leaf rooms at the crate root (`admission`, `transfer`,
//! `network`, `types`), which never import the replica back.
//!
//! Consensus itself is openraft's; this crate only adapts it.

mod admission;
pub mod corruption;
mod durability;
pub mod format;
#[cfg(test)]
mod format_golden;
pub mod ids;
mod log_store;
mod metrics_watch;
mod network;
mod replica;
mod reverse;
mod service;
mod stages;
mod state_machine;
mod transfer;
mod types;

pub use admission::{CLUSTER_ID_HEADER, MEMBER_ID_HEADER};
pub use network::{APPENDS_IN_FLIGHT, DEFAULT_APPEND_WINDOW, MAX_APPEND_WINDOW};
pub use network::{PeerHandshake, PeerStream, PeerTls};
pub use replica::{DEFAULT_BATCHES_IN_FLIGHT, MAX_BATCHES_IN_FLIGHT};
pub use replica::{
    FOLLOWER_READ_INDEX_CALLS, ForwardHandler, Join, LeadershipWatch, Member, MembershipChange,
    MembershipError, PROPOSED_AGAIN, Replica, ReplicaConfig, ReplicaDirs, ReplicaError,
    ReplicaStatus,
};
pub use reverse::PEER_LINKS;
pub use service::PeerService;
pub use stages::WRITE_STAGE_SECONDS;
pub use transfer::TransferStep;
pub use types::{MemberInfo, decode_message, encode_message};
