//! Records (`hark_mvcc::records`): guarded changes, guarded writes, and
//! records surviving a reopen and an install.

#![cfg(any(feature = "rocksdb", feature = "fjall"))]

use bytes::Bytes;
use hark_mvcc::*;

fn put_record(bucket: &str, key: &str, value: &str) -> RecordChange {
    RecordChange::Put {
        bucket: bucket.into(),
        key: Bytes::copy_from_slice(key.as_bytes()),
        value: Bytes::copy_from_slice(value.as_bytes()),
    }
}

fn guard(bucket: &str, key: &str, expected: Option<&str>) -> RecordGuard {
    RecordGuard {
        bucket: bucket.into(),
        key: Bytes::copy_from_slice(key.as_bytes()),
        expected: expected.map(|v| Bytes::copy_from_slice(v.as_bytes())),
    }
}

fn change(s: &Store, req: RecordsRequest) -> RecordsResponse {
    match s.apply_blocking(WriteRequest::Records(req)).unwrap() {
        WriteResponse::Records(r) => r,
        other => panic!("records answered with {other:?}"),
    }
}

#[test]
fn a_change_applies_only_when_its_guards_hold() {
    let s = Store::in_memory();
    let g0 = s.records_generation();
    let first = change(
        &s,
        RecordsRequest {
            guards: vec![guard("auth", "rev", None)],
            changes: vec![
                put_record("auth", "rev", "1"),
                put_record("users", "root", "r"),
            ],
        },
    );
    assert!(first.applied);
    assert_eq!(first.header_revision, 1, "records do not make revisions");
    assert!(s.records_generation() > g0);
    assert_eq!(s.record("auth", b"rev"), Some(Bytes::from_static(b"1")));

    // The same guard again no longer holds: nothing changes.
    let g1 = s.records_generation();
    let stale = change(
        &s,
        RecordsRequest {
            guards: vec![guard("auth", "rev", None)],
            changes: vec![put_record("users", "mallory", "m")],
        },
    );
    assert!(!stale.applied);
    assert_eq!(s.records_generation(), g1);
    assert_eq!(
        s.records("users"),
        vec![(Bytes::from_static(b"root"), Bytes::from_static(b"r"))]
    );

    let delete = change(
        &s,
        RecordsRequest {
            guards: vec![guard("auth", "rev", Some("1"))],
            changes: vec![RecordChange::Delete {
                bucket: "users".into(),
                key: Bytes::from_static(b"root"),
            }],
        },
    );
    assert!(delete.applied);
    assert!(s.records("users").is_empty());
    assert_eq!(s.current_revision(), 1);
}

#[test]
fn a_guarded_write_is_refused_once_its_guard_moved() {
    let s = Store::in_memory();
    change(
        &s,
        RecordsRequest {
            guards: vec![],
            changes: vec![put_record("auth", "rev", "1")],
        },
    );
    let guarded = |expected| {
        WriteRequest::Guarded(
            guard("auth", "rev", Some(expected)),
            Box::new(WriteRequest::Put(PutRequest::new("k", expected))),
        )
    };
    let ok = s.apply_blocking(guarded("1")).unwrap();
    assert!(matches!(ok, WriteResponse::Put(p) if p.header_revision == 2));
    assert!(matches!(
        s.apply_blocking(guarded("0")),
        Err(Error::GuardFailed)
    ));
    assert_eq!(s.current_revision(), 2, "a refused write makes no revision");
    let bad = RecordsRequest {
        guards: vec![],
        changes: vec![put_record("a\0b", "k", "v")],
    };
    assert!(matches!(
        s.apply_blocking(WriteRequest::Records(bad)),
        Err(Error::InvalidBucket)
    ));
}

#[test]
fn records_survive_a_reopen_and_an_install() {
    let dir = tempfile::tempdir().unwrap();
    {
        let s = Store::open(dir.path(), StoreOptions::default()).unwrap();
        s.put(PutRequest::new("k", "v")).unwrap();
        change(
            &s,
            RecordsRequest {
                guards: vec![],
                changes: vec![
                    put_record("authUsers", "root", "x"),
                    put_record("auth", "e", "1"),
                ],
            },
        );
    }
    let s = Store::open(dir.path(), StoreOptions::default()).unwrap();
    assert_eq!(
        s.record("authUsers", b"root"),
        Some(Bytes::from_static(b"x"))
    );
    assert_eq!(s.records("auth").len(), 1);

    let target = Store::in_memory();
    change(
        &target,
        RecordsRequest {
            guards: vec![],
            changes: vec![put_record("authUsers", "stale", "y")],
        },
    );
    let before = target.records_generation();
    let (tx, rx) = std::sync::mpsc::channel();
    target.install(s.clone(), b"pos".to_vec(), move |r| tx.send(r).unwrap());
    rx.recv().unwrap().unwrap();
    assert!(target.records_generation() > before);
    assert_eq!(
        target.records("authUsers"),
        vec![(Bytes::from_static(b"root"), Bytes::from_static(b"x"))]
    );
}
