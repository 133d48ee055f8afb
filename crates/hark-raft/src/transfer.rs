//! Leader transfer (etcd's MoveLeader) on openraft 0.9, which has no transfer
//! of its own. A follower refuses votes for a leader lease
//! (`election_timeout_max`) after the last append it received, so the leader
//! makes the lease run out on purpose and lets only the target stand:
//!
//! 1. the leader stops appending (proposals and read-index rounds wait) and
//!    waits until the target's log matches its own;
//! 2. the other voters hold their elections for a while;
//! 3. the leader stops its heartbeats;
//! 4. the target stands for election once every lease is over, and wins: its
//!    log is as long as anyone's and no one else is standing.
//!
//! Whatever happens, the leader resumes heartbeats and appends at the end;
//! held elections resume by themselves.

use serde::{Deserialize, Serialize};
use tokio::time::Instant;

/// A step of a leader transfer, sent by the leader to another voter.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum TransferStep {
    /// Start no election for this long (the voters other than the target).
    HoldElections { millis: u64 },
    /// Stand for election once `after_millis` have passed (every follower's
    /// lease on the old leader is over then), until leader or `for_millis`.
    StandForElection { after_millis: u64, for_millis: u64 },
    /// The transfer failed: stop standing.
    Cancel,
}

/// A member's side of transfers: whether one is running here (as the leader),
/// and until when this member holds its elections.
pub(crate) struct TransferState {
    /// One transfer at a time.
    pub(crate) serial: tokio::sync::Mutex<()>,
    pub(crate) running: tokio::sync::watch::Sender<bool>,
    /// Held (shared) by each append and read-index round from the check that
    /// no transfer runs until raft has it; a transfer takes it alone to
    /// start, so none of them slips in after the transfer began.
    pub(crate) gate: tokio::sync::RwLock<()>,
    pub(crate) held_until: parking_lot::Mutex<Option<Instant>>,
    /// Bumped by each StandForElection and Cancel: a standing loop whose
    /// number is no longer current stops.
    pub(crate) standing: std::sync::atomic::AtomicU64,
}

impl Default for TransferState {
    fn default() -> Self {
        TransferState {
            serial: tokio::sync::Mutex::new(()),
            running: tokio::sync::watch::channel(false).0,
            gate: tokio::sync::RwLock::new(()),
            held_until: parking_lot::Mutex::new(None),
            standing: std::sync::atomic::AtomicU64::new(0),
        }
    }
}
