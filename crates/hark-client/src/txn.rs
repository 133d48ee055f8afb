//! A small builder for etcd transactions: `if compares { ops } else { ops }`.

use bytes::Bytes;
use hark_proto::etcdserverpb::{
    self as pb, compare::CompareResult, compare::CompareTarget, compare::TargetUnion,
    request_op::Request,
};

/// How a [`Compare`] relates the key's field to the operand (etcd's
/// `Compare.CompareResult`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompareOp {
    /// Field `==` operand.
    Equal,
    /// Field `!=` operand.
    NotEqual,
    /// Field `>` operand.
    Greater,
    /// Field `<` operand.
    Less,
}

impl CompareOp {
    fn result(self) -> CompareResult {
        match self {
            CompareOp::Equal => CompareResult::Equal,
            CompareOp::NotEqual => CompareResult::NotEqual,
            CompareOp::Greater => CompareResult::Greater,
            CompareOp::Less => CompareResult::Less,
        }
    }
}

/// One condition of a transaction (etcd's `Compare`), on one key or (with
/// [`Compare::with_range_end`]) on every key of a range. A missing key has
/// version, revisions and lease 0, and no value matches it.
#[derive(Debug, Clone, PartialEq)]
pub struct Compare(pub pb::Compare);

impl Compare {
    fn new(
        key: impl Into<Bytes>,
        op: CompareOp,
        target: CompareTarget,
        value: TargetUnion,
    ) -> Self {
        Compare(pb::Compare {
            result: op.result() as i32,
            target: target as i32,
            key: key.into(),
            range_end: Bytes::new(),
            target_union: Some(value),
        })
    }

    /// The key's value (bytes) against `value`.
    pub fn value(key: impl Into<Bytes>, op: CompareOp, value: impl Into<Bytes>) -> Self {
        Compare::new(
            key,
            op,
            CompareTarget::Value,
            TargetUnion::Value(value.into()),
        )
    }

    /// The key's version (puts since its creation; 0: it does not exist).
    pub fn version(key: impl Into<Bytes>, op: CompareOp, version: i64) -> Self {
        Compare::new(
            key,
            op,
            CompareTarget::Version,
            TargetUnion::Version(version),
        )
    }

    /// The revision that created the key (0: it does not exist).
    pub fn create_revision(key: impl Into<Bytes>, op: CompareOp, revision: i64) -> Self {
        Compare::new(
            key,
            op,
            CompareTarget::Create,
            TargetUnion::CreateRevision(revision),
        )
    }

    /// The revision of the key's last change (0: it does not exist); with
    /// `Equal`, the usual compare-and-swap guard.
    pub fn mod_revision(key: impl Into<Bytes>, op: CompareOp, revision: i64) -> Self {
        Compare::new(
            key,
            op,
            CompareTarget::Mod,
            TargetUnion::ModRevision(revision),
        )
    }

    /// The id of the key's lease (0: none).
    pub fn lease(key: impl Into<Bytes>, op: CompareOp, lease: i64) -> Self {
        Compare::new(key, op, CompareTarget::Lease, TargetUnion::Lease(lease))
    }

    /// Applies the condition to every key in `[key, range_end)`.
    pub fn with_range_end(mut self, range_end: impl Into<Bytes>) -> Self {
        self.0.range_end = range_end.into();
        self
    }
}

/// One operation of a transaction branch (etcd's `RequestOp`); reads in a
/// branch see the branch's earlier writes.
#[derive(Debug, Clone, PartialEq)]
pub struct Op(pub pb::RequestOp);

impl Op {
    /// Reads `key`.
    pub fn get(key: impl Into<Bytes>) -> Self {
        Op::range(pb::RangeRequest {
            key: key.into(),
            ..Default::default()
        })
    }

    /// Any range read.
    pub fn range(req: pb::RangeRequest) -> Self {
        Op(pb::RequestOp {
            request: Some(Request::RequestRange(req)),
        })
    }

    /// Sets `key` to `value`.
    pub fn put(key: impl Into<Bytes>, value: impl Into<Bytes>) -> Self {
        Op::put_request(pb::PutRequest {
            key: key.into(),
            value: value.into(),
            ..Default::default()
        })
    }

    /// A put with every option (lease, prev_kv, ...).
    pub fn put_request(req: pb::PutRequest) -> Self {
        Op(pb::RequestOp {
            request: Some(Request::RequestPut(req)),
        })
    }

    /// Deletes `key`.
    pub fn delete(key: impl Into<Bytes>) -> Self {
        Op::delete_range(pb::DeleteRangeRequest {
            key: key.into(),
            ..Default::default()
        })
    }

    /// A delete with every option (a range, prev_kv).
    pub fn delete_range(req: pb::DeleteRangeRequest) -> Self {
        Op(pb::RequestOp {
            request: Some(Request::RequestDeleteRange(req)),
        })
    }

    /// A nested transaction (its compares see the state before the outer
    /// transaction changed anything, as etcd evaluates them).
    pub fn txn(txn: Txn) -> Self {
        Op(pb::RequestOp {
            request: Some(Request::RequestTxn(txn.into_request())),
        })
    }
}

/// An etcd transaction, `Txn::new().when(..).and_then(..).or_else(..)`: if
/// every compare holds, the `and_then` ops run, else the `or_else` ops, all
/// atomically at one revision ([`crate::Client::txn`]). etcd refuses a
/// branch that writes one key twice (`etcdserver: duplicate key given in
/// txn request`).
///
/// ```no_run
/// # async fn demo(client: hark_client::Client) -> Result<(), hark_client::Error> {
/// use hark_client::{Compare, CompareOp, Op, Txn};
///
/// // Compare-and-swap: bump the counter only if nobody changed it since we read it.
/// let read = client.get("counter").await?;
/// let (old, rev) = read
///     .kvs
///     .first()
///     .map(|kv| (String::from_utf8_lossy(&kv.value).parse::<u64>().unwrap(), kv.mod_revision))
///     .unwrap_or((0, 0));
/// let resp = client
///     .txn(
///         Txn::new()
///             .when([Compare::mod_revision("counter", CompareOp::Equal, rev)])
///             .and_then([Op::put("counter", (old + 1).to_string())])
///             .or_else([Op::get("counter")]),
///     )
///     .await?;
/// if !resp.succeeded {
///     println!("lost the race; the counter moved on");
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Txn {
    request: pb::TxnRequest,
}

impl Txn {
    /// A transaction with no compares (so `and_then` runs) and no ops.
    pub fn new() -> Self {
        Txn::default()
    }

    /// Adds compares; all must hold for the `and_then` branch.
    pub fn when(mut self, compares: impl IntoIterator<Item = Compare>) -> Self {
        self.request
            .compare
            .extend(compares.into_iter().map(|c| c.0));
        self
    }

    /// Adds ops to the branch run when every compare holds.
    pub fn and_then(mut self, ops: impl IntoIterator<Item = Op>) -> Self {
        self.request.success.extend(ops.into_iter().map(|o| o.0));
        self
    }

    /// Adds ops to the branch run when some compare fails.
    pub fn or_else(mut self, ops: impl IntoIterator<Item = Op>) -> Self {
        self.request.failure.extend(ops.into_iter().map(|o| o.0));
        self
    }

    /// The etcd `TxnRequest` it stands for.
    pub fn into_request(self) -> pb::TxnRequest {
        self.request
    }
}
