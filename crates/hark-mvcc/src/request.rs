//! Requests and responses of the store, shaped like etcd's `etcdserverpb` ones but
//! free of any wire types: the server translates.

use bytes::Bytes;

use crate::alarm::{AlarmRequest, AlarmResponse};
use crate::kv::KeyValue;
use crate::records::{RecordGuard, RecordsRequest, RecordsResponse};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
/// How a range read sorts its kvs (etcd's `RangeRequest.SortOrder`).
pub enum SortOrder {
    /// Unsorted, which is key order; with a [`SortTarget`] other than
    /// `Key`, ascending by it (as etcd).
    #[default]
    None,
    /// Ascending by [`SortTarget`].
    Ascend,
    /// Descending by [`SortTarget`].
    Descend,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
/// What a sorted range read sorts by (etcd's `RangeRequest.SortTarget`).
pub enum SortTarget {
    /// The key.
    #[default]
    Key,
    /// The key's version.
    Version,
    /// The key's create revision.
    Create,
    /// The key's mod revision.
    Mod,
    /// The value's bytes.
    Value,
}

/// etcd's `RangeRequest`. `range_end`: empty for one key, `"\0"` for every key
/// `>= key`, otherwise `[key, range_end)`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct RangeRequest {
    /// The key, or the start of the range.
    pub key: Bytes,
    /// The end of the range (exclusive); see the type's doc.
    pub range_end: Bytes,
    /// At most this many kvs (0: no limit); `more` tells whether some were left out.
    pub limit: i64,
    /// Read at this revision; `<= 0` reads the current one.
    pub revision: i64,
    /// Sort order of `kvs`.
    pub sort_order: SortOrder,
    /// What `sort_order` sorts by.
    pub sort_target: SortTarget,
    /// Return keys without values.
    pub keys_only: bool,
    /// Return only `count`, no kvs.
    pub count_only: bool,
    /// Only kvs last modified at or above this revision (0: no filter).
    pub min_mod_revision: i64,
    /// Only kvs last modified at or below this revision (0: no filter).
    pub max_mod_revision: i64,
    /// Only kvs created at or above this revision (0: no filter).
    pub min_create_revision: i64,
    /// Only kvs created at or below this revision (0: no filter).
    pub max_create_revision: i64,
}

/// The range end that covers every key starting with `prefix` (etcd's
/// `GetPrefixRangeEnd`): the prefix with its last byte below 0xff raised by
/// one and what follows dropped; `"\0"` (every key from the start) when
/// there is no such byte, as for the empty prefix.
///
/// ```
/// use hark_mvcc::prefix_end;
///
/// assert_eq!(prefix_end(b"jobs/"), "jobs0");
/// assert_eq!(prefix_end(b"a\xff"), "b");
/// assert_eq!(prefix_end(b""), "\0");
/// ```
pub fn prefix_end(prefix: &[u8]) -> Bytes {
    match prefix.iter().rposition(|&b| b < 0xff) {
        Some(last) => {
            let mut end = prefix[..=last].to_vec();
            end[last] += 1;
            end.into()
        }
        None => Bytes::from_static(b"\0"),
    }
}

impl RangeRequest {
    /// A read of every key starting with `prefix` at the current revision
    /// (the range `[prefix, prefix_end(prefix))`, see [`prefix_end`]).
    ///
    /// ```
    /// use hark_mvcc::{PutRequest, RangeRequest, Store};
    ///
    /// let store = Store::in_memory();
    /// for key in ["jobs/a", "jobs/b", "jobsz", "other"] {
    ///     store.put(PutRequest::new(key, "v")).unwrap();
    /// }
    /// let jobs = store.range(&RangeRequest::prefix("jobs/")).unwrap();
    /// let keys: Vec<_> = jobs.kvs.iter().map(|kv| kv.key.clone()).collect();
    /// assert_eq!(keys, ["jobs/a", "jobs/b"]);
    /// // A limit leaves out the rest, and says so.
    /// let first = store
    ///     .range(&RangeRequest { limit: 1, ..RangeRequest::prefix("jobs/") })
    ///     .unwrap();
    /// assert_eq!((first.kvs.len(), first.more, first.count), (1, true, 2));
    /// ```
    pub fn prefix(prefix: impl Into<Bytes>) -> Self {
        let prefix = prefix.into();
        let end = prefix_end(&prefix);
        RangeRequest::range(prefix, end)
    }

    /// A read of exactly `key` at the current revision.
    pub fn key(key: impl Into<Bytes>) -> Self {
        RangeRequest {
            key: key.into(),
            ..Default::default()
        }
    }

    /// A read of `[key, range_end)` (see the type's doc for the special ends).
    pub fn range(key: impl Into<Bytes>, range_end: impl Into<Bytes>) -> Self {
        RangeRequest {
            key: key.into(),
            range_end: range_end.into(),
            ..Default::default()
        }
    }

    /// Why a streamed range ([`crate::Store::range_stream`]) refuses this
    /// request, in etcd 3.7's words, if it does: chunks come in key order
    /// at one revision, so other sort orders and revision filters are not
    /// served.
    pub fn stream_refusal(&self) -> Option<&'static str> {
        let key_order = self.sort_order == SortOrder::None
            || (self.sort_target == SortTarget::Key && self.sort_order == SortOrder::Ascend);
        if !key_order {
            return Some("RangeStream does not support custom sort orders");
        }
        let filtered = self.min_mod_revision != 0
            || self.max_mod_revision != 0
            || self.min_create_revision != 0
            || self.max_create_revision != 0;
        filtered.then_some("RangeStream does not support revision filters")
    }
}

/// etcd's `RangeResponse`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct RangeResponse {
    /// The store's current revision when the read was served.
    pub header_revision: i64,
    /// The key-values read, per the request's sort (by key by default).
    pub kvs: Vec<KeyValue>,
    /// Whether `limit` left some kvs out.
    pub more: bool,
    /// Number of keys in the range at the read revision (before `limit` and filters).
    pub count: i64,
}

/// etcd's `RangeResponse` with each key-value already in its wire form
/// (`mvccpb.KeyValue`, as a client decodes it), for a transport that writes
/// the answer without decoding and encoding every value again
/// ([`crate::Store::range_encoded`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EncodedRangeResponse {
    /// The store's current revision when the read was served.
    pub header_revision: i64,
    /// Each key-value's `mvccpb.KeyValue` encoding, in answer order.
    pub kvs: Vec<Bytes>,
    /// Whether `limit` left some kvs out.
    pub more: bool,
    /// Number of keys in the range at the read revision (before `limit` and filters).
    pub count: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
/// etcd's `PutRequest`: sets a key's value, creating the key if needed.
pub struct PutRequest {
    /// The key (not empty).
    pub key: Bytes,
    /// The new value.
    pub value: Bytes,
    /// The lease to attach the key to (it must exist); 0 for none, which
    /// also detaches the key from a lease it had.
    pub lease: i64,
    /// Return the key's previous value in [`PutResponse::prev_kv`].
    pub prev_kv: bool,
    /// Keep the current value (the key must exist).
    pub ignore_value: bool,
    /// Keep the current lease (the key must exist).
    pub ignore_lease: bool,
    /// Consul's flags, kept with the value (and with it under `ignore_value`).
    pub flags: u64,
}

impl PutRequest {
    /// A plain put of `value` at `key`.
    pub fn new(key: impl Into<Bytes>, value: impl Into<Bytes>) -> Self {
        PutRequest {
            key: key.into(),
            value: value.into(),
            ..Default::default()
        }
    }
}

/// etcd's `PutResponse`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PutResponse {
    /// The revision of the put.
    pub header_revision: i64,
    /// The key's value before the put, if asked for and the key existed.
    pub prev_kv: Option<KeyValue>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
/// etcd's `DeleteRangeRequest`: deletes a key or a range (`range_end` as in
/// [`RangeRequest`]), all at one revision.
pub struct DeleteRangeRequest {
    /// The key, or the start of the range.
    pub key: Bytes,
    /// The end of the range (exclusive); empty for `key` alone, `"\0"` for
    /// every key `>= key`.
    pub range_end: Bytes,
    /// Return the deleted key-values in [`DeleteRangeResponse::prev_kvs`].
    pub prev_kv: bool,
}

impl DeleteRangeRequest {
    /// Deletes every key starting with `prefix`.
    pub fn prefix(prefix: impl Into<Bytes>) -> Self {
        let prefix = prefix.into();
        let end = prefix_end(&prefix);
        DeleteRangeRequest::new(prefix, end)
    }

    /// Deletes `[key, range_end)` (`range_end` as in the fields' docs).
    pub fn new(key: impl Into<Bytes>, range_end: impl Into<Bytes>) -> Self {
        DeleteRangeRequest {
            key: key.into(),
            range_end: range_end.into(),
            prev_kv: false,
        }
    }
}

/// etcd's `DeleteRangeResponse`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct DeleteRangeResponse {
    /// The revision of the delete, or the current one if nothing was deleted.
    pub header_revision: i64,
    /// How many keys were deleted.
    pub deleted: i64,
    /// The deleted key-values, if asked for.
    pub prev_kvs: Vec<KeyValue>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
/// How a [`Compare`] relates a key's field to the operand.
pub enum CompareResult {
    /// Field `==` operand.
    Equal,
    /// Field `>` operand.
    Greater,
    /// Field `<` operand.
    Less,
    /// Field `!=` operand.
    NotEqual,
}

/// What a compare looks at, with the operand.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum CompareTarget {
    /// The key's version (0 for a missing key).
    Version(i64),
    /// The key's create revision (0 for a missing key).
    CreateRevision(i64),
    /// The key's mod revision (0 for a missing key).
    ModRevision(i64),
    /// The key's value, compared as bytes.
    Value(Bytes),
    /// The key's lease (0 for none).
    Lease(i64),
}

/// etcd's `Compare`: holds when `result` relates every key in the range to the
/// operand. A missing key compares as zeros, except that a value compare fails.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Compare {
    /// The key, or the start of the range.
    pub key: Bytes,
    /// The end of the range, as in [`RangeRequest`] (empty: `key` alone).
    pub range_end: Bytes,
    /// The relation that must hold.
    pub result: CompareResult,
    /// The field compared, with the operand.
    pub target: CompareTarget,
}

/// One operation of a txn branch (etcd's `RequestOp`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum RequestOp {
    /// A read; it sees the txn's earlier writes.
    Range(RangeRequest),
    /// A put.
    Put(PutRequest),
    /// A delete.
    DeleteRange(DeleteRangeRequest),
    /// A nested txn.
    Txn(TxnRequest),
}

/// The answer to one [`RequestOp`], in the same position (etcd's `ResponseOp`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum ResponseOp {
    /// A read's.
    Range(RangeResponse),
    /// A put's.
    Put(PutResponse),
    /// A delete's.
    DeleteRange(DeleteRangeResponse),
    /// A nested txn's.
    Txn(TxnResponse),
}

/// etcd's `TxnRequest`: if every compare holds, the `success` ops run, else
/// the `failure` ops, all atomically at one revision. Compares (nested
/// txns' included) are evaluated against the state before any change.
///
/// ```
/// use hark_mvcc::{
///     Compare, CompareResult, CompareTarget, PutRequest, RequestOp, ResponseOp, Store,
///     TxnRequest,
/// };
///
/// let store = Store::in_memory();
/// let rev = store.put(PutRequest::new("leader", "a")).unwrap().header_revision;
/// // Compare-and-swap: take over only if nobody changed the key since `rev`.
/// let cas = |value: &'static str| TxnRequest {
///     compare: vec![Compare {
///         key: "leader".into(),
///         range_end: Default::default(),
///         result: CompareResult::Equal,
///         target: CompareTarget::ModRevision(rev),
///     }],
///     success: vec![RequestOp::Put(PutRequest::new("leader", value))],
///     failure: vec![RequestOp::Range(hark_mvcc::RangeRequest::key("leader"))],
/// };
/// let first = store.txn(cas("b")).unwrap();
/// assert!(first.succeeded);
/// assert_eq!(first.header_revision, rev + 1);
/// let second = store.txn(cas("c")).unwrap();
/// assert!(!second.succeeded);
/// let ResponseOp::Range(now) = &second.responses[0] else { unreachable!() };
/// assert_eq!(now.kvs[0].value, "b");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct TxnRequest {
    /// The conditions; all must hold for `success` to run (none: it runs).
    pub compare: Vec<Compare>,
    /// The ops run when every compare holds.
    pub success: Vec<RequestOp>,
    /// The ops run otherwise.
    pub failure: Vec<RequestOp>,
}

/// etcd's `TxnResponse`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct TxnResponse {
    /// The txn's revision if it wrote, else the current one.
    pub header_revision: i64,
    /// Whether the compares held (`success` ran).
    pub succeeded: bool,
    /// One response per op of the branch that ran.
    pub responses: Vec<ResponseOp>,
}

/// etcd's `CompactionRequest`: drops the history before `revision`. Each
/// key's version current at `revision` stays (unless it is a deletion);
/// older versions go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct CompactRequest {
    /// Reads below it fail with [`crate::Error::Compacted`] afterwards. It
    /// must be above the compacted revision and at most the current one.
    pub revision: i64,
    /// Answer only once the compacted revisions are physically removed.
    pub physical: bool,
}

/// etcd's `CompactionResponse`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct CompactResponse {
    /// The current revision when the compaction was accepted.
    pub header_revision: i64,
}

/// Records a lease: from now on puts may attach keys to `id`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct LeaseGrantRequest {
    /// The lease id (chosen by the caller; the store does not pick one).
    pub id: i64,
    /// Granted TTL in seconds, kept for the lessor (the store does not expire leases).
    pub ttl: i64,
}

/// The answer to a [`LeaseGrantRequest`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct LeaseGrantResponse {
    /// The current revision (a grant changes no key, so it makes none).
    pub header_revision: i64,
}

/// Forgets a lease and deletes every key attached to it, in one revision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct LeaseRevokeRequest {
    /// The lease id.
    pub id: i64,
}

/// The answer to a [`LeaseRevokeRequest`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct LeaseRevokeResponse {
    /// The revision of the deletions, or the current one if the lease had no keys.
    pub header_revision: i64,
}

/// Every change to the store enters as one of these (see [`crate::Store::apply`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum WriteRequest {
    /// A put.
    Put(PutRequest),
    /// A delete of a key or range.
    DeleteRange(DeleteRangeRequest),
    /// A transaction.
    Txn(TxnRequest),
    /// A compaction of history.
    Compact(CompactRequest),
    /// Records a lease.
    LeaseGrant(LeaseGrantRequest),
    /// Forgets a lease and deletes its keys.
    LeaseRevoke(LeaseRevokeRequest),
    /// Raises, clears or lists alarms.
    Alarm(AlarmRequest),
    /// Changes records (see [`crate::records`]).
    Records(RecordsRequest),
    /// The request, applied only if the guard holds at apply time (else
    /// [`crate::Error::GuardFailed`]): e.g. a write checked against
    /// permissions at one auth revision is refused if they changed since.
    Guarded(RecordGuard, Box<WriteRequest>),
}

impl WriteRequest {
    /// The request a guard wraps, or this one.
    pub fn unguarded(&self) -> &WriteRequest {
        match self {
            WriteRequest::Guarded(_, inner) => inner.unguarded(),
            other => other,
        }
    }

    /// The request's name in etcd's apply metrics (`op` of
    /// `etcd_server_apply_duration_seconds`); record changes (users, roles,
    /// members, ...) are `Records`.
    pub fn op_name(&self) -> &'static str {
        match self {
            WriteRequest::Put(_) => "Put",
            WriteRequest::DeleteRange(_) => "DeleteRange",
            WriteRequest::Txn(_) => "Txn",
            WriteRequest::Compact(_) => "Compaction",
            WriteRequest::LeaseGrant(_) => "LeaseGrant",
            WriteRequest::LeaseRevoke(_) => "LeaseRevoke",
            WriteRequest::Alarm(_) => "Alarm",
            WriteRequest::Records(_) => "Records",
            WriteRequest::Guarded(_, inner) => inner.op_name(),
        }
    }

    /// Bytes this write may add to the store, by etcd's estimate (what its
    /// backend quota checks): a put's key and value plus 256 bytes; a
    /// txn's costlier branch, nested txns included; 64 bytes for a lease
    /// grant; nothing for the rest.
    pub fn quota_cost(&self) -> u64 {
        match self.unguarded() {
            WriteRequest::Put(p) => put_cost(p),
            WriteRequest::Txn(t) => txn_cost(t),
            WriteRequest::LeaseGrant(_) => LEASE_OVERHEAD,
            _ => 0,
        }
    }
}

/// etcd's per-key overhead estimate in a put's quota cost.
const KV_OVERHEAD: u64 = 256;
/// etcd's estimate of what a lease grant adds.
const LEASE_OVERHEAD: u64 = 64;

fn put_cost(p: &PutRequest) -> u64 {
    KV_OVERHEAD + p.key.len() as u64 + p.value.len() as u64
}

fn txn_cost(t: &TxnRequest) -> u64 {
    let branch = |ops: &[RequestOp]| -> u64 {
        ops.iter()
            .map(|op| match op {
                RequestOp::Put(p) => put_cost(p),
                RequestOp::Txn(inner) => txn_cost(inner),
                _ => 0,
            })
            .sum()
    };
    branch(&t.success).max(branch(&t.failure))
}

/// The answer to a [`WriteRequest`], of the same variant (a guarded
/// request's is its inner request's).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum WriteResponse {
    /// A put's.
    Put(PutResponse),
    /// A delete's.
    DeleteRange(DeleteRangeResponse),
    /// A transaction's.
    Txn(TxnResponse),
    /// A compaction's.
    Compact(CompactResponse),
    /// A lease grant's.
    LeaseGrant(LeaseGrantResponse),
    /// A lease revoke's.
    LeaseRevoke(LeaseRevokeResponse),
    /// An alarm request's.
    Alarm(AlarmResponse),
    /// A records change's.
    Records(RecordsResponse),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_ends_follow_etcd() {
        assert_eq!(prefix_end(b"a"), "b");
        assert_eq!(prefix_end(b"a/"), "a0");
        assert_eq!(prefix_end(b"a\xff"), "b");
        assert_eq!(prefix_end(b"\xff\xff"), "\0");
        assert_eq!(prefix_end(b""), "\0");
        assert_eq!(RangeRequest::prefix("jobs/").range_end, "jobs0");
        assert_eq!(DeleteRangeRequest::prefix("").range_end, "\0");
    }

    #[test]
    fn quota_costs_follow_etcds_estimates() {
        let put = PutRequest::new("k", "vv");
        assert_eq!(WriteRequest::Put(put.clone()).quota_cost(), 256 + 3);
        let txn = TxnRequest {
            compare: vec![],
            success: vec![RequestOp::Put(put.clone()), RequestOp::Put(put.clone())],
            failure: vec![RequestOp::Txn(TxnRequest {
                success: vec![RequestOp::Put(PutRequest::new("k", "v".repeat(1000)))],
                ..Default::default()
            })],
        };
        assert_eq!(WriteRequest::Txn(txn).quota_cost(), 256 + 1 + 1000);
        let grant = WriteRequest::LeaseGrant(LeaseGrantRequest { id: 1, ttl: 5 });
        assert_eq!(grant.quota_cost(), 64);
        let delete = WriteRequest::DeleteRange(DeleteRangeRequest::new("k", ""));
        assert_eq!(delete.quota_cost(), 0);
    }
}
