//! Stored key-values and the change events the store publishes.

use bytes::Bytes;

/// A key's value at one revision, as etcd's `mvccpb.KeyValue`.
///
/// The prost field numbers are `mvccpb.KeyValue`'s, so the bytes Hark stores are
/// the same bytes the wire carries.
#[derive(Clone, PartialEq, Eq, prost::Message)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct KeyValue {
    /// The key.
    #[prost(bytes = "bytes", tag = "1")]
    pub key: Bytes,
    /// Revision of the last creation of this key (kept while the key lives).
    #[prost(int64, tag = "2")]
    pub create_revision: i64,
    /// Revision of the last change of this key.
    #[prost(int64, tag = "3")]
    pub mod_revision: i64,
    /// Number of puts since the key was created; a delete resets it.
    #[prost(int64, tag = "4")]
    pub version: i64,
    /// The value.
    #[prost(bytes = "bytes", tag = "5")]
    pub value: Bytes,
    /// Lease the key is attached to; 0 for none.
    #[prost(int64, tag = "6")]
    pub lease: i64,
    /// Consul's flags for the value (Hark's extension, `hark_flags` on the
    /// wire): 0 unless set through the Consul KV API, and then not encoded.
    #[prost(uint64, tag = "1000")]
    pub flags: u64,
}

/// What an [`Event`] did to its key (etcd's `mvccpb.Event.EventType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// The key was created or modified.
    Put,
    /// The key was deleted (by a delete, or by its lease's revocation).
    Delete,
}

/// One change of one key. A delete carries a `kv` with only `key` and
/// `mod_revision` (the deletion revision), as etcd's watch events do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// Put or delete.
    pub kind: EventKind,
    /// The key-value after the change (for a delete, the key and the
    /// deletion revision only).
    pub kv: KeyValue,
    /// The key's value before this change, when the revision carries
    /// previous values (see [`CommittedRevision::with_prev_kvs`]); `None`
    /// for a put that created the key.
    pub prev_kv: Option<KeyValue>,
}

impl Event {
    /// An event without a previous value.
    pub fn new(kind: EventKind, kv: KeyValue) -> Event {
        Event {
            kind,
            kv,
            prev_kv: None,
        }
    }
}

/// Everything one write transaction changed, published after it is durable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommittedRevision {
    /// The revision every event of it has as `mod_revision`.
    pub revision: i64,
    /// In `sub` revision order. Empty only for a snapshot install, which
    /// stands for every revision up to `revision` (a write that changes
    /// nothing is not published).
    pub events: Vec<Event>,
    /// Whether each event's `prev_kv` is filled in: the committer adds
    /// previous values while someone wants them (see
    /// [`crate::Store::want_prev_kvs`]); history reads do not.
    pub with_prev_kvs: bool,
}

impl CommittedRevision {
    /// Bytes it holds, roughly: what a subscriber's queue is charged for it.
    pub(crate) fn approx_bytes(&self) -> usize {
        64 + self
            .events
            .iter()
            .map(|e| {
                let prev = e
                    .prev_kv
                    .as_ref()
                    .map_or(0, |p| p.key.len() + p.value.len());
                e.kv.key.len() + e.kv.value.len() + prev + 96
            })
            .sum::<usize>()
    }
}
