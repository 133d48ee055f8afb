//! Lease records in the store: attaching keys, revoking through the apply path,
//! surviving a reopen.

#![cfg(any(feature = "rocksdb", feature = "fjall"))]

use bytes::Bytes;
use hark_mvcc::*;

fn put_with_lease(s: &Store, k: &str, lease: i64) -> Result<PutResponse> {
    let mut p = PutRequest::new(k.to_string(), "v");
    p.lease = lease;
    s.put(p)
}

fn b(s: &str) -> Bytes {
    Bytes::copy_from_slice(s.as_bytes())
}

#[test]
fn a_put_needs_a_granted_lease() {
    let s = Store::in_memory();
    assert_eq!(put_with_lease(&s, "a", 7), Err(Error::LeaseNotFound));
    assert_eq!(s.current_revision(), 1, "a rejected put writes nothing");
    s.lease_grant(7, 30).unwrap();
    assert_eq!(s.lease_grant(7, 30), Err(Error::LeaseExists));
    assert_eq!(put_with_lease(&s, "a", 7).unwrap().header_revision, 2);
    assert_eq!(s.lease_keys(7), Some(vec![b("a")]));
    assert_eq!(s.leases(), vec![(7, 30)]);
    assert_eq!(s.lease_keys(8), None);
}

#[test]
fn a_txn_with_an_unknown_lease_fails_whole() {
    let s = Store::in_memory();
    let mut p = PutRequest::new("a", "1");
    p.lease = 5;
    let txn = TxnRequest {
        compare: vec![],
        success: vec![RequestOp::Put(PutRequest::new("b", "2")), RequestOp::Put(p)],
        failure: vec![],
    };
    assert_eq!(s.txn(txn), Err(Error::LeaseNotFound));
    assert_eq!(s.current_revision(), 1);
}

#[test]
fn revoke_deletes_the_keys_in_one_revision_and_publishes_it() {
    let s = Store::in_memory();
    s.lease_grant(1, 10).unwrap();
    s.lease_grant(2, 10).unwrap();
    put_with_lease(&s, "x", 1).unwrap();
    put_with_lease(&s, "y", 1).unwrap();
    put_with_lease(&s, "z", 2).unwrap();
    // "y" moves to no lease: revoking 1 must leave it alone.
    put_with_lease(&s, "y", 0).unwrap();
    put_with_lease(&s, "w", 1).unwrap();
    s.delete_range(DeleteRangeRequest::new("w", "")).unwrap();
    let (_, changes) = s.subscribe();
    let resp = s.lease_revoke(1).unwrap();
    assert_eq!(resp.header_revision, s.current_revision());
    let rev = changes.recv().unwrap();
    assert_eq!(rev.revision, resp.header_revision);
    let deleted: Vec<_> = rev
        .events
        .iter()
        .map(|e| (e.kind, e.kv.key.clone()))
        .collect();
    assert_eq!(deleted, vec![(EventKind::Delete, b("x"))]);
    assert_eq!(s.lease_revoke(1), Err(Error::LeaseNotFound));
    assert_eq!(s.leases(), vec![(2, 10)]);
    assert!(s.range(&RangeRequest::key("y")).unwrap().kvs.len() == 1);

    // A lease with no keys revokes without a new revision.
    s.lease_grant(3, 10).unwrap();
    let before = s.current_revision();
    assert_eq!(s.lease_revoke(3).unwrap().header_revision, before);
    assert_eq!(s.current_revision(), before);
}

#[test]
fn leases_and_their_keys_survive_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    {
        let s = Store::open(dir.path(), StoreOptions::default()).unwrap();
        s.lease_grant(11, 60).unwrap();
        s.lease_grant(12, 5).unwrap();
        s.lease_grant(13, 5).unwrap();
        put_with_lease(&s, "a", 11).unwrap();
        put_with_lease(&s, "b", 12).unwrap();
        put_with_lease(&s, "b", 11).unwrap();
        put_with_lease(&s, "c", 13).unwrap();
        s.lease_revoke(13).unwrap();
    }
    let s = Store::open(dir.path(), StoreOptions::default()).unwrap();
    assert_eq!(s.leases(), vec![(11, 60), (12, 5)]);
    assert_eq!(s.lease_keys(11), Some(vec![b("a"), b("b")]));
    assert_eq!(s.lease_keys(12), Some(vec![]));
    s.lease_revoke(11).unwrap();
    assert_eq!(s.range(&RangeRequest::range("a", "z")).unwrap().count, 0);
}
