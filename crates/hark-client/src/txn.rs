//! A small builder for etcd transactions: `if compares { ops } else { ops }`.

use bytes::Bytes;
use hark_proto::etcdserverpb::{
    self as pb, compare::CompareResult, compare::CompareTarget, compare::TargetUnion,
    request_op::Request,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompareOp {
    Equal,
    NotEqual,
    Greater,
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

/// One condition of a transaction.
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

    pub fn value(key: impl Into<Bytes>, op: CompareOp, value: impl Into<Bytes>) -> Self {
        Compare::new(
            key,
            op,
            CompareTarget::Value,
            TargetUnion::Value(value.into()),
        )
    }

    pub fn version(key: impl Into<Bytes>, op: CompareOp, version: i64) -> Self {
        Compare::new(
            key,
            op,
            CompareTarget::Version,
            TargetUnion::Version(version),
        )
    }

    pub fn create_revision(key: impl Into<Bytes>, op: CompareOp, revision: i64) -> Self {
        Compare::new(
            key,
            op,
            CompareTarget::Create,
            TargetUnion::CreateRevision(revision),
        )
    }

    pub fn mod_revision(key: impl Into<Bytes>, op: CompareOp, revision: i64) -> Self {
        Compare::new(
            key,
            op,
            CompareTarget::Mod,
            TargetUnion::ModRevision(revision),
        )
    }

    pub fn lease(key: impl Into<Bytes>, op: CompareOp, lease: i64) -> Self {
        Compare::new(key, op, CompareTarget::Lease, TargetUnion::Lease(lease))
    }

    /// Applies the condition to every key in `[key, range_end)`.
    pub fn with_range_end(mut self, range_end: impl Into<Bytes>) -> Self {
        self.0.range_end = range_end.into();
        self
    }
}

/// One operation of a transaction branch.
#[derive(Debug, Clone, PartialEq)]
pub struct Op(pub pb::RequestOp);

impl Op {
    pub fn get(key: impl Into<Bytes>) -> Self {
        Op::range(pb::RangeRequest {
            key: key.into(),
            ..Default::default()
        })
    }

    pub fn range(req: pb::RangeRequest) -> Self {
        Op(pb::RequestOp {
            request: Some(Request::RequestRange(req)),
        })
    }

    pub fn put(key: impl Into<Bytes>, value: impl Into<Bytes>) -> Self {
        Op::put_request(pb::PutRequest {
            key: key.into(),
            value: value.into(),
            ..Default::default()
        })
    }

    pub fn put_request(req: pb::PutRequest) -> Self {
        Op(pb::RequestOp {
            request: Some(Request::RequestPut(req)),
        })
    }

    pub fn delete(key: impl Into<Bytes>) -> Self {
        Op::delete_range(pb::DeleteRangeRequest {
            key: key.into(),
            ..Default::default()
        })
    }

    pub fn delete_range(req: pb::DeleteRangeRequest) -> Self {
        Op(pb::RequestOp {
            request: Some(Request::RequestDeleteRange(req)),
        })
    }

    pub fn txn(txn: Txn) -> Self {
        Op(pb::RequestOp {
            request: Some(Request::RequestTxn(txn.into_request())),
        })
    }
}

/// `Txn::new().when(..).and_then(..).or_else(..)`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Txn {
    request: pb::TxnRequest,
}

impl Txn {
    pub fn new() -> Self {
        Txn::default()
    }

    pub fn when(mut self, compares: impl IntoIterator<Item = Compare>) -> Self {
        self.request
            .compare
            .extend(compares.into_iter().map(|c| c.0));
        self
    }

    pub fn and_then(mut self, ops: impl IntoIterator<Item = Op>) -> Self {
        self.request.success.extend(ops.into_iter().map(|o| o.0));
        self
    }

    pub fn or_else(mut self, ops: impl IntoIterator<Item = Op>) -> Self {
        self.request.failure.extend(ops.into_iter().map(|o| o.0));
        self
    }

    pub fn into_request(self) -> pb::TxnRequest {
        self.request
    }
}
