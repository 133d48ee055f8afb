//! What the clients did and saw, as the checkers read it (and as a failing
//! run keeps it, in JSON).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One request of the register workload: when it was sent and answered
/// (microseconds since the run began) and the answer.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Op {
    pub client: usize,
    pub key: String,
    pub call: Call,
    pub invoked_us: u64,
    /// `None` when no answer came (a timeout, a broken connection): a write
    /// may then have happened or not.
    pub returned_us: Option<u64>,
    pub outcome: Outcome,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Call {
    Put {
        value: String,
    },
    /// A read; `serializable` ones are served from the member's own state.
    Get {
        serializable: bool,
    },
    /// Txn: if the key's mod_revision is `expect` (0: the key is absent),
    /// put `value`.
    Cas {
        expect: i64,
        value: String,
    },
    /// Txn: if the key's mod_revision is `expect` (never 0: the key exists),
    /// delete it (Kubernetes' optimistic delete).
    CasDelete {
        expect: i64,
    },
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Outcome {
    /// A put, or a CAS or CAS delete that succeeded, at `revision`.
    Written { revision: i64 },
    /// A CAS whose compare failed, answered at header `revision`.
    NotWritten { revision: i64 },
    /// A read at header `revision`: the value and its mod_revision.
    Read {
        revision: i64,
        value: Option<(String, i64)>,
    },
    /// An error: the request had no effect when `definite`, else unknown.
    Failed { definite: bool, error: String },
}

/// One watch event as a watcher received it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    pub revision: i64,
    pub key: String,
    /// `None` for a delete.
    pub value: Option<String>,
    pub prev_value: Option<String>,
}

/// What one watch stream delivered, response by response.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct WatchLog {
    pub watcher: usize,
    pub endpoint: String,
    pub prev_kv: bool,
    /// Created with the NODELETE filter: deletes are not sent.
    #[serde(default)]
    pub no_delete: bool,
    pub responses: Vec<WatchResponse>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum WatchResponse {
    /// A watch was (re)created from `start_revision`.
    Started { start_revision: i64 },
    Events {
        header_revision: i64,
        events: Vec<Event>,
        /// When the response arrived (on the run's clock): every event in it
        /// happened before then.
        #[serde(default)]
        received_us: u64,
    },
    /// A progress notification: every event up to `revision` was sent.
    Progress { revision: i64 },
    /// The watch ended (error, cancel, compaction); it resumes with `Started`.
    Broken {
        reason: String,
        compact_revision: i64,
    },
}

/// One lease of the lease workload: granted, a key put under it, then
/// revoked (after some keep-alives) or left to expire.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LeaseRecord {
    pub client: usize,
    pub lease: i64,
    pub ttl: i64,
    pub key: String,
    /// The put under the lease: acknowledged at this revision, or `None`.
    pub put_revision: Option<i64>,
    /// Keep-alives answered (with a TTL above zero).
    pub kept_alive: usize,
    pub fate: LeaseFate,
    /// When the grant was sent: the lease lives at least `ttl` from then.
    #[serde(default)]
    pub granted_us: u64,
    /// When each keep-alive that was answered with a TTL was sent: the
    /// lease lives at least `ttl` from each.
    #[serde(default)]
    pub renewals_sent_us: Vec<u64>,
    /// When the client itself first let the key go (deleted it or sent the
    /// revoke): from then on its deletion is the client's doing.
    #[serde(default)]
    pub let_go_us: Option<u64>,
}

impl LeaseRecord {
    /// Until when the lease's key must stay: a TTL past the last grant or
    /// acknowledged keep-alive the client sent, unless it let go earlier.
    pub fn protected_until_us(&self) -> u64 {
        let last = self
            .renewals_sent_us
            .iter()
            .copied()
            .fold(self.granted_us, u64::max);
        let expiry = last + self.ttl.max(0) as u64 * 1_000_000;
        self.let_go_us.map_or(expiry, |at| at.min(expiry))
    }
}

/// One hold of the lock workload's mutex: from when the holder learned it
/// held the lock until it released it or its session's lease could have
/// run out, whichever came first.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LockHold {
    pub client: usize,
    pub endpoint: String,
    pub lease: i64,
    pub key: String,
    pub create_revision: i64,
    pub acquired_us: u64,
    pub ended_us: u64,
    /// `released`, or `lease lost` when keep-alives stopped being answered.
    pub how_ended: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum LeaseFate {
    /// Revoke acknowledged, answered at header `revision`.
    Revoked { revision: i64 },
    /// Revoke not acknowledged: the lease ends one way or the other.
    RevokeUnknown,
    /// No keep-alive after the last one: it must expire.
    LeftToExpire,
}

/// A Kubernetes-style list: pages of `limit` keys, every page after the
/// first at the first page's revision.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ListRecord {
    pub client: usize,
    pub prefix: String,
    pub invoked_us: u64,
    pub returned_us: u64,
    pub revision: i64,
    pub pages: usize,
    /// (key, value, mod_revision), in key order.
    pub kvs: Vec<(String, String, i64)>,
}

/// A fault as the schedule injected it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FaultRecord {
    pub at_us: u64,
    pub what: String,
    /// The kind, on the record that injects a fault (none on the ones that
    /// undo it, and on refused attempts).
    #[serde(default)]
    pub fault: Option<String>,
}

/// One near-limit request and how the member answered.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LimitRecord {
    pub member: usize,
    /// Ops in a txn, or 0 for a large put.
    pub txn_ops: usize,
    /// The large put's value size, or 0 for a txn.
    pub value_bytes: usize,
    /// `None` when answered OK, else the error.
    pub refused: Option<String>,
}

/// Every member's HashKV at the final revision.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct FinalHash {
    pub endpoint: String,
    pub revision: i64,
    pub hash: u32,
    pub compact_revision: i64,
    /// Why there is no hash, if there is none.
    pub error: Option<String>,
}

/// One `snapshot save` of the backup workload.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BackupRecord {
    pub member: usize,
    /// Where the file was written (kept with the run's data).
    pub path: String,
    pub started_us: u64,
    pub finished_us: u64,
    /// Why no backup was taken, if none was (a member down, say).
    pub error: Option<String>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct History {
    pub flavor: String,
    pub seed: u64,
    pub ops: Vec<Op>,
    pub watches: Vec<WatchLog>,
    pub faults: Vec<FaultRecord>,
    #[serde(default)]
    pub leases: Vec<LeaseRecord>,
    #[serde(default)]
    pub lists: Vec<ListRecord>,
    #[serde(default)]
    pub locks: Vec<LockHold>,
    #[serde(default)]
    pub limits: Vec<LimitRecord>,
    #[serde(default)]
    pub backups: Vec<BackupRecord>,
    /// Each member's HashKV at the final revision.
    #[serde(default)]
    pub final_hashes: Vec<FinalHash>,
    /// Compactions done: (when the compactor asked for it, revision).
    #[serde(default)]
    pub compactions: Vec<(u64, i64)>,
    /// Each member's answer to a final serializable range of every key.
    pub final_reads: Vec<FinalRead>,
}

/// Every event by revision, then key: the history's watch logs merged, as
/// the checkers read them.
pub type RevisionLog = BTreeMap<i64, BTreeMap<String, Event>>;

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct FinalRead {
    pub endpoint: String,
    pub revision: i64,
    /// Every key and value, in key order.
    pub kvs: Vec<(String, String)>,
}
