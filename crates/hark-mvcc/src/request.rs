//! Requests and responses of the store, shaped like etcd's `etcdserverpb` ones but
//! free of any wire types: the server translates.

use bytes::Bytes;

use crate::alarm::{AlarmRequest, AlarmResponse};
use crate::kv::KeyValue;
use crate::records::{RecordGuard, RecordsRequest, RecordsResponse};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum SortOrder {
    #[default]
    None,
    Ascend,
    Descend,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum SortTarget {
    #[default]
    Key,
    Version,
    Create,
    Mod,
    Value,
}

/// etcd's `RangeRequest`. `range_end`: empty for one key, `"\0"` for every key
/// `>= key`, otherwise `[key, range_end)`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct RangeRequest {
    pub key: Bytes,
    pub range_end: Bytes,
    /// At most this many kvs (0: no limit); `more` tells whether some were left out.
    pub limit: i64,
    /// Read at this revision; `<= 0` reads the current one.
    pub revision: i64,
    pub sort_order: SortOrder,
    pub sort_target: SortTarget,
    pub keys_only: bool,
    pub count_only: bool,
    /// Filters; 0 disables each.
    pub min_mod_revision: i64,
    pub max_mod_revision: i64,
    pub min_create_revision: i64,
    pub max_create_revision: i64,
}

/// The range end that covers every key starting with `prefix` (etcd's
/// `GetPrefixRangeEnd`): the prefix with its last byte below 0xff raised by
/// one and what follows dropped; `"\0"` (every key from the start) when
/// there is no such byte, as for the empty prefix.
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
    /// A read of every key starting with `prefix` at the current revision.
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
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RangeResponse {
    /// The store's current revision when the read was served.
    pub header_revision: i64,
    pub kvs: Vec<KeyValue>,
    pub more: bool,
    /// Number of keys in the range at the read revision (before `limit` and filters).
    pub count: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PutRequest {
    pub key: Bytes,
    pub value: Bytes,
    pub lease: i64,
    pub prev_kv: bool,
    /// Keep the current value (the key must exist).
    pub ignore_value: bool,
    /// Keep the current lease (the key must exist).
    pub ignore_lease: bool,
    /// Consul's flags, kept with the value (and with it under `ignore_value`).
    pub flags: u64,
}

impl PutRequest {
    pub fn new(key: impl Into<Bytes>, value: impl Into<Bytes>) -> Self {
        PutRequest {
            key: key.into(),
            value: value.into(),
            ..Default::default()
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PutResponse {
    pub header_revision: i64,
    pub prev_kv: Option<KeyValue>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct DeleteRangeRequest {
    pub key: Bytes,
    pub range_end: Bytes,
    pub prev_kv: bool,
}

impl DeleteRangeRequest {
    /// Deletes every key starting with `prefix`.
    pub fn prefix(prefix: impl Into<Bytes>) -> Self {
        let prefix = prefix.into();
        let end = prefix_end(&prefix);
        DeleteRangeRequest::new(prefix, end)
    }

    pub fn new(key: impl Into<Bytes>, range_end: impl Into<Bytes>) -> Self {
        DeleteRangeRequest {
            key: key.into(),
            range_end: range_end.into(),
            prev_kv: false,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DeleteRangeResponse {
    pub header_revision: i64,
    pub deleted: i64,
    pub prev_kvs: Vec<KeyValue>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum CompareResult {
    Equal,
    Greater,
    Less,
    NotEqual,
}

/// What a compare looks at, with the operand.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum CompareTarget {
    Version(i64),
    CreateRevision(i64),
    ModRevision(i64),
    Value(Bytes),
    Lease(i64),
}

/// etcd's `Compare`: holds when `result` relates every key in the range to the
/// operand. A missing key compares as zeros, except that a value compare fails.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Compare {
    pub key: Bytes,
    pub range_end: Bytes,
    pub result: CompareResult,
    pub target: CompareTarget,
}

#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum RequestOp {
    Range(RangeRequest),
    Put(PutRequest),
    DeleteRange(DeleteRangeRequest),
    Txn(TxnRequest),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResponseOp {
    Range(RangeResponse),
    Put(PutResponse),
    DeleteRange(DeleteRangeResponse),
    Txn(TxnResponse),
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct TxnRequest {
    pub compare: Vec<Compare>,
    pub success: Vec<RequestOp>,
    pub failure: Vec<RequestOp>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TxnResponse {
    pub header_revision: i64,
    pub succeeded: bool,
    pub responses: Vec<ResponseOp>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct CompactRequest {
    pub revision: i64,
    /// Answer only once the compacted revisions are physically removed.
    pub physical: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CompactResponse {
    pub header_revision: i64,
}

/// Records a lease: from now on puts may attach keys to `id`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct LeaseGrantRequest {
    pub id: i64,
    /// Granted TTL in seconds, kept for the lessor (the store does not expire leases).
    pub ttl: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LeaseGrantResponse {
    pub header_revision: i64,
}

/// Forgets a lease and deletes every key attached to it, in one revision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct LeaseRevokeRequest {
    pub id: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LeaseRevokeResponse {
    pub header_revision: i64,
}

/// Every change to the store enters as one of these (see [`crate::Store::apply`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum WriteRequest {
    Put(PutRequest),
    DeleteRange(DeleteRangeRequest),
    Txn(TxnRequest),
    Compact(CompactRequest),
    LeaseGrant(LeaseGrantRequest),
    LeaseRevoke(LeaseRevokeRequest),
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
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteResponse {
    Put(PutResponse),
    DeleteRange(DeleteRangeResponse),
    Txn(TxnResponse),
    Compact(CompactResponse),
    LeaseGrant(LeaseGrantResponse),
    LeaseRevoke(LeaseRevokeResponse),
    Alarm(AlarmResponse),
    Records(RecordsResponse),
}

#[cfg(test)]
mod prefix_tests {
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
}
