//! Checks a request needs before it may enter the apply path: the ones etcd makes
//! in its gRPC layer (empty keys, op counts, duplicate keys in a txn).

use std::collections::HashSet;

use crate::error::{Error, Result};
use crate::key_index::KeyRange;
use crate::request::{
    DeleteRangeRequest, PutRequest, RangeRequest, RequestOp, TxnRequest, WriteRequest,
};

/// The checks of an entry a replicated log committed: every one that depends
/// on the request alone, none that depends on this member's flags.
pub(crate) fn check_logged(req: &WriteRequest) -> Result<()> {
    check_write(req, usize::MAX)
}

pub(crate) fn check_write(req: &WriteRequest, max_txn_ops: usize) -> Result<()> {
    match req {
        WriteRequest::Put(p) => check_put(p),
        WriteRequest::DeleteRange(d) => check_delete(d),
        WriteRequest::Txn(t) => check_txn(t, max_txn_ops),
        WriteRequest::Guarded(_, inner) => check_write(inner, max_txn_ops),
        WriteRequest::Records(r) => check_records(r),
        WriteRequest::Compact(_)
        | WriteRequest::LeaseGrant(_)
        | WriteRequest::LeaseRevoke(_)
        | WriteRequest::Alarm(_) => Ok(()),
    }
}

/// Longest key of a record (auth's user and role names): bbolt's
/// `MaxKeySize`, since etcd's snapshot format keeps each record under its
/// key in a bucket of the same name. fjall's key limit (65,535 bytes, for
/// `rec/` + bucket + NUL + key) and RocksDB's are wider.
pub const MAX_RECORD_KEY_LEN: usize = 32 * 1024;
/// Longest record bucket name (the layers above name them, never clients).
pub const MAX_RECORD_BUCKET_LEN: usize = 255;
/// Largest record value: far above any user or role etcd's own requests
/// can build, far below bbolt's 2 GiB and fjall's 4 GiB value limits. A
/// record grows by rewrites (a role gains one permission per request), so
/// the bound holds however many requests led up to it.
pub const MAX_RECORD_VALUE_LEN: usize = 16 * 1024 * 1024;
/// Largest key plus value of a put: the row stores both in one value
/// (`mvccpb.KeyValue`), which bbolt keeps under 2 GiB and fjall under 4 GiB;
/// a member's request size limit (`--max-request-bytes`) is normally far
/// below, this holds whatever it is set to.
pub const MAX_KEY_VALUE_LEN: usize = 1024 * 1024 * 1024;

fn check_records(r: &crate::records::RecordsRequest) -> Result<()> {
    use crate::records::{RecordChange, valid_bucket};
    check_announcement(r)?;
    let guards = r
        .guards
        .iter()
        .map(|g| (&g.bucket, &g.key, g.expected.as_ref()));
    let changes = r.changes.iter().map(|c| match c {
        RecordChange::Put { bucket, key, value } => (bucket, key, Some(value)),
        RecordChange::Delete { bucket, key } => (bucket, key, None),
    });
    for (bucket, key, value) in guards.chain(changes) {
        if !valid_bucket(bucket) || bucket.len() > MAX_RECORD_BUCKET_LEN {
            return Err(Error::InvalidBucket);
        }
        if key.is_empty() {
            return Err(Error::InvalidArgument(
                "etcdserver: a record key is empty".into(),
            ));
        }
        if key.len() > MAX_RECORD_KEY_LEN {
            return Err(Error::InvalidArgument(format!(
                "etcdserver: a record key of {} bytes is longer than {MAX_RECORD_KEY_LEN}",
                key.len()
            )));
        }
        if let Some(value) = value
            && value.len() > MAX_RECORD_VALUE_LEN
        {
            return Err(Error::InvalidArgument(format!(
                "etcdserver: a record of {} bytes is larger than {MAX_RECORD_VALUE_LEN}",
                value.len()
            )));
        }
    }
    Ok(())
}

/// An announcement's bounds; and no other records change may touch its
/// bucket (nothing may ever be stored there).
fn check_announcement(r: &crate::records::RecordsRequest) -> Result<()> {
    use crate::announce::Announcement;
    if !Announcement::touches_bucket(r) {
        return Ok(());
    }
    let Some(a) = Announcement::carried_by(r) else {
        return Err(Error::InvalidBucket);
    };
    use crate::announce::{MAX_ANNOUNCEMENT_BODY_LEN, MAX_ANNOUNCEMENT_TOPIC_LEN};
    if a.topic.is_empty() || a.topic.len() > MAX_ANNOUNCEMENT_TOPIC_LEN {
        return Err(Error::InvalidArgument(format!(
            "etcdserver: an announcement topic of {} bytes (1 to {MAX_ANNOUNCEMENT_TOPIC_LEN})",
            a.topic.len()
        )));
    }
    if a.body.len() > MAX_ANNOUNCEMENT_BODY_LEN {
        return Err(Error::InvalidArgument(format!(
            "etcdserver: an announcement of {} bytes is larger than {MAX_ANNOUNCEMENT_BODY_LEN}",
            a.body.len()
        )));
    }
    Ok(())
}

pub(crate) fn check_range(r: &RangeRequest) -> Result<()> {
    non_empty(&r.key)
}

fn check_put(p: &PutRequest) -> Result<()> {
    non_empty(&p.key)?;
    if p.key.len().saturating_add(p.value.len()) > MAX_KEY_VALUE_LEN {
        return Err(Error::InvalidArgument(format!(
            "etcdserver: a key and value of {} bytes are larger than {MAX_KEY_VALUE_LEN}",
            p.key.len() + p.value.len()
        )));
    }
    if p.ignore_value && !p.value.is_empty() {
        return Err(Error::ValueProvided);
    }
    if p.ignore_lease && p.lease != 0 {
        return Err(Error::LeaseProvided);
    }
    Ok(())
}

fn check_delete(d: &DeleteRangeRequest) -> Result<()> {
    non_empty(&d.key)
}

fn non_empty(key: &[u8]) -> Result<()> {
    if key.is_empty() {
        Err(Error::EmptyKey)
    } else {
        Ok(())
    }
}

fn check_txn(t: &TxnRequest, max_ops: usize) -> Result<()> {
    check_txn_shape(t, max_ops)?;
    branch_writes(&t.success)?;
    branch_writes(&t.failure)?;
    Ok(())
}

/// etcd counts the longest of compares, success and failure against the limit;
/// a nested txn gets what its parent left of the budget.
fn check_txn_shape(t: &TxnRequest, max_ops: usize) -> Result<()> {
    let ops = t.compare.len().max(t.success.len()).max(t.failure.len());
    if ops > max_ops {
        return Err(Error::TooManyOps);
    }
    for c in &t.compare {
        non_empty(&c.key)?;
    }
    for op in t.success.iter().chain(&t.failure) {
        match op {
            RequestOp::Range(r) => check_range(r)?,
            RequestOp::Put(p) => check_put(p)?,
            RequestOp::DeleteRange(d) => check_delete(d)?,
            RequestOp::Txn(nested) => check_txn_shape(nested, max_ops - ops)?,
        }
    }
    Ok(())
}

/// Keys put and ranges deleted by one branch (nested txns included).
#[derive(Default)]
struct BranchWrites<'a> {
    puts: HashSet<&'a [u8]>,
    deletes: Vec<KeyRange<'a>>,
}

impl<'a> BranchWrites<'a> {
    fn deletes_key(&self, key: &[u8]) -> bool {
        self.deletes.iter().any(|d| d.contains(key))
    }
}

/// etcd's rule: within one branch a key may be written once. Two puts of a key, or
/// a put inside a deleted range, are duplicates; overlapping deletes are not. The
/// two branches of a nested txn exclude each other, so they may put the same key.
fn branch_writes(ops: &[RequestOp]) -> Result<BranchWrites<'_>> {
    let mut acc = BranchWrites::default();
    for op in ops {
        if let RequestOp::DeleteRange(d) = op {
            acc.deletes.push(KeyRange::new(&d.key, &d.range_end));
        }
    }
    for op in ops {
        let RequestOp::Txn(nested) = op else { continue };
        let then = branch_writes(&nested.success)?;
        let otherwise = branch_writes(&nested.failure)?;
        for &k in &then.puts {
            if acc.puts.contains(k) || acc.deletes_key(k) {
                return Err(Error::DuplicateKey);
            }
        }
        for &k in &otherwise.puts {
            if (acc.puts.contains(k) && !then.puts.contains(k)) || acc.deletes_key(k) {
                return Err(Error::DuplicateKey);
            }
        }
        acc.puts.extend(then.puts);
        acc.puts.extend(otherwise.puts);
        acc.deletes.extend(then.deletes);
        acc.deletes.extend(otherwise.deletes);
    }
    for op in ops {
        let RequestOp::Put(p) = op else { continue };
        if acc.deletes_key(&p.key) || !acc.puts.insert(&p.key) {
            return Err(Error::DuplicateKey);
        }
    }
    Ok(acc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::{Compare, CompareResult, CompareTarget};

    fn put(k: &'static str) -> RequestOp {
        RequestOp::Put(PutRequest::new(k, "v"))
    }
    fn del(k: &'static str, end: &'static str) -> RequestOp {
        RequestOp::DeleteRange(DeleteRangeRequest::new(k, end))
    }
    fn txn(success: Vec<RequestOp>, failure: Vec<RequestOp>) -> TxnRequest {
        TxnRequest {
            compare: vec![],
            success,
            failure,
        }
    }
    fn check(t: TxnRequest) -> Result<()> {
        check_write(&WriteRequest::Txn(t), 128)
    }

    #[test]
    fn duplicate_keys_follow_etcd_rules() {
        assert_eq!(
            check(txn(vec![put("a"), put("a")], vec![])),
            Err(Error::DuplicateKey)
        );
        assert_eq!(
            check(txn(vec![put("b"), del("a", "c")], vec![])),
            Err(Error::DuplicateKey)
        );
        assert_eq!(
            check(txn(vec![put("a")], vec![put("a")])),
            Ok(()),
            "branches exclude each other"
        );
        assert_eq!(
            check(txn(vec![del("a", "c"), del("b", "d")], vec![])),
            Ok(())
        );
        assert_eq!(
            check(txn(vec![put("c"), del("a", "c")], vec![])),
            Ok(()),
            "end is exclusive"
        );
        assert_eq!(
            check(txn(vec![put("z"), del("a", "\0")], vec![])),
            Err(Error::DuplicateKey)
        );
        let nested_same = RequestOp::Txn(txn(vec![put("a")], vec![put("a")]));
        assert_eq!(check(txn(vec![nested_same.clone()], vec![])), Ok(()));
        assert_eq!(
            check(txn(vec![nested_same, put("a")], vec![])),
            Err(Error::DuplicateKey)
        );
        let nested_del = RequestOp::Txn(txn(vec![], vec![del("a", "b")]));
        assert_eq!(
            check(txn(vec![nested_del, put("a")], vec![])),
            Err(Error::DuplicateKey)
        );
    }

    #[test]
    fn shape_errors() {
        let many: Vec<RequestOp> = (0..129)
            .map(|i| RequestOp::Range(RangeRequest::key(format!("k{i}"))))
            .collect();
        assert_eq!(check(txn(many.clone(), vec![])), Err(Error::TooManyOps));
        assert_eq!(check(txn(vec![], many[..128].to_vec())), Ok(()));
        // A nested txn gets what its parent left: 128 - 2 = 126.
        let nested = |n: usize| RequestOp::Txn(txn(many[..n].to_vec(), vec![]));
        assert_eq!(check(txn(vec![nested(126), put("x")], vec![])), Ok(()));
        assert_eq!(
            check(txn(vec![nested(127), put("x")], vec![])),
            Err(Error::TooManyOps)
        );
        let empty_compare = TxnRequest {
            compare: vec![Compare {
                key: Default::default(),
                range_end: Default::default(),
                result: CompareResult::Equal,
                target: CompareTarget::Version(0),
            }],
            success: vec![],
            failure: vec![],
        };
        assert_eq!(check(empty_compare), Err(Error::EmptyKey));
        assert_eq!(check(txn(vec![put("")], vec![])), Err(Error::EmptyKey));
        let mut p = PutRequest::new("k", "v");
        p.ignore_value = true;
        assert_eq!(
            check_write(&WriteRequest::Put(p.clone()), 128),
            Err(Error::ValueProvided)
        );
        p.value = Default::default();
        p.ignore_lease = true;
        p.lease = 7;
        assert_eq!(
            check_write(&WriteRequest::Put(p), 128),
            Err(Error::LeaseProvided)
        );
    }
}
