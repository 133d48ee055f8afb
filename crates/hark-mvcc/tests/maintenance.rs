//! Maintenance of a store: HashKV (etcd's algorithm and etcd's numbers),
//! alarms and what they refuse, whole-store images and restoring them, and
//! reclaiming space while writes go on.

#![cfg(any(feature = "rocksdb", feature = "fjall"))]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use hark_mvcc::*;

fn put(s: &Store, k: &str, v: &str) -> i64 {
    s.put(PutRequest::new(k.to_string(), v.to_string()))
        .unwrap()
        .header_revision
}

fn delete(s: &Store, k: &str) -> i64 {
    s.delete_range(DeleteRangeRequest::new(k.to_string(), ""))
        .unwrap()
        .header_revision
}

fn nospace(member_id: u64) -> AlarmRequest {
    AlarmRequest {
        action: AlarmAction::Activate,
        member_id,
        kind: Some(AlarmKind::NoSpace),
    }
}

/// Values worked out by hand from etcd 3.5's `hashByRev` (CRC-32C over
/// "key", then each revision row's key and value bytes).
#[test]
fn hash_kv_matches_etcds_numbers() {
    let s = Store::in_memory();
    assert_eq!(s.hash_kv(0).unwrap().hash, 1_084_519_789, "crc32c(\"key\")");
    put(&s, "foo", "bar");
    assert_eq!(s.hash_kv(0).unwrap().hash, 3_305_255_506);
    delete(&s, "foo");
    let h = s.hash_kv(0).unwrap();
    assert_eq!(h.hash, 2_489_925_301);
    assert_eq!((h.hash_revision, h.current_revision), (3, 3));
    // Hashing at an older revision leaves later rows out.
    assert_eq!(s.hash_kv(2).unwrap().hash, 3_305_255_506);
    assert_eq!(s.hash_kv(4), Err(Error::FutureRevision));
}

#[test]
fn hash_kv_is_equal_across_restarts_and_compaction_progress() {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(dir.path(), StoreOptions::default()).unwrap();
    for i in 0..50 {
        put(&s, &format!("k{}", i % 7), &format!("v{i}"));
        if i % 9 == 0 {
            delete(&s, &format!("k{}", i % 7));
        }
    }
    let before = s.hash_kv(0).unwrap();
    drop(s);
    let s = Store::open(dir.path(), StoreOptions::default()).unwrap();
    assert_eq!(s.hash_kv(0).unwrap(), before);

    // Two stores with the same history compacted at 30, one waiting for the
    // rows to be removed and one not: the same hash, whatever the compactor
    // has removed yet.
    let twin = Store::in_memory();
    let other = Store::in_memory();
    for i in 0..50 {
        for t in [&twin, &other] {
            put(t, &format!("k{}", i % 7), &format!("v{i}"));
            if i % 9 == 0 {
                delete(t, &format!("k{}", i % 7));
            }
        }
    }
    twin.compact(30, true).unwrap();
    other.compact(30, false).unwrap();
    let (a, b) = (twin.hash_kv(0).unwrap(), other.hash_kv(0).unwrap());
    assert_eq!(a.hash, b.hash);
    assert_eq!(a.compact_revision, 30);
    assert_ne!(
        a.hash,
        s.hash_kv(0).unwrap().hash,
        "compaction changes the hash"
    );
    assert_eq!(twin.hash_kv(29), Err(Error::Compacted));
    assert!(
        twin.hash_kv(30).is_ok(),
        "etcd hashes at the compacted revision"
    );
}

#[test]
fn nospace_refuses_what_grows_the_store_until_disarmed() {
    let s = Store::in_memory();
    put(&s, "a", "1");
    s.lease_grant(7, 60).unwrap();
    let raised = s.alarm(nospace(42)).unwrap();
    assert_eq!(
        raised.alarms,
        vec![Alarm {
            member_id: 42,
            kind: AlarmKind::NoSpace
        }]
    );
    assert_eq!(s.put(PutRequest::new("b", "2")), Err(Error::NoSpace));
    assert_eq!(s.lease_grant(8, 60), Err(Error::NoSpace));
    let txn = TxnRequest {
        compare: vec![],
        success: vec![],
        failure: vec![RequestOp::Put(PutRequest::new("c", "3"))],
    };
    assert_eq!(
        s.txn(txn),
        Err(Error::NoSpace),
        "a put in either branch counts"
    );
    // Reads, deletes, delete-only txns, revokes and compaction still work.
    assert_eq!(s.range(&RangeRequest::key("a")).unwrap().count, 1);
    let deleted = s.delete_range(DeleteRangeRequest::new("a", "")).unwrap();
    assert_eq!(deleted.deleted, 1);
    s.lease_revoke(7).unwrap();
    s.compact(s.current_revision(), true).unwrap();
    s.defragment().unwrap();

    // Deactivating an alarm that is not raised clears nothing.
    let none = s
        .alarm(AlarmRequest {
            action: AlarmAction::Deactivate,
            member_id: 1,
            kind: Some(AlarmKind::NoSpace),
        })
        .unwrap();
    assert!(none.alarms.is_empty());
    // Member 0 clears the alarm for every member.
    let cleared = s
        .alarm(AlarmRequest {
            action: AlarmAction::Deactivate,
            member_id: 0,
            kind: None,
        })
        .unwrap();
    assert_eq!(cleared.alarms.len(), 1);
    assert!(s.alarms().is_empty());
    put(&s, "b", "2");
}

#[test]
fn alarms_survive_a_restart_and_corrupt_refuses_writes_but_not_reads() {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(dir.path(), StoreOptions::default()).unwrap();
    put(&s, "a", "1");
    s.alarm(nospace(5)).unwrap();
    s.alarm(AlarmRequest {
        action: AlarmAction::Activate,
        member_id: 5,
        kind: Some(AlarmKind::Corrupt),
    })
    .unwrap();
    drop(s);
    let s = Store::open(dir.path(), StoreOptions::default()).unwrap();
    assert_eq!(s.alarms().len(), 2);
    assert_eq!(s.range(&RangeRequest::key("a")).unwrap().count, 1);
    let read_only = TxnRequest {
        compare: vec![],
        success: vec![RequestOp::Range(RangeRequest::key("a"))],
        failure: vec![],
    };
    assert!(s.txn(read_only).is_ok());
    assert_eq!(
        s.delete_range(DeleteRangeRequest::new("a", "")),
        Err(Error::Corrupt)
    );
    assert_eq!(s.compact(2, false), Err(Error::Corrupt));
    let listed = s
        .alarm(AlarmRequest {
            action: AlarmAction::Get,
            member_id: 0,
            kind: Some(AlarmKind::Corrupt),
        })
        .unwrap();
    assert_eq!(listed.alarms.len(), 1);
    s.alarm(AlarmRequest {
        action: AlarmAction::Deactivate,
        member_id: 5,
        kind: Some(AlarmKind::Corrupt),
    })
    .unwrap();
    assert_eq!(
        s.delete_range(DeleteRangeRequest::new("zz", ""))
            .unwrap()
            .deleted,
        0
    );
    assert_eq!(s.put(PutRequest::new("b", "2")), Err(Error::NoSpace));
}

/// An image read while writers run holds whole commit groups only, and a
/// store restored from it serves the same history, leases and compaction.
#[test]
fn image_restores_into_an_equal_store() {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(dir.path().join("a"), StoreOptions::default()).unwrap();
    s.lease_grant(9, 30).unwrap();
    for i in 0..200 {
        let mut p = PutRequest::new(format!("k{}", i % 13), format!("v{i}"));
        p.lease = if i % 5 == 0 { 9 } else { 0 };
        s.put(p).unwrap();
        if i % 17 == 0 {
            delete(&s, &format!("k{}", i % 13));
        }
    }
    s.compact(100, true).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (s, stop) = (s.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                put(&s, "busy", &n.to_string());
                n += 1;
            }
        })
    };
    let mut rows: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    let (mut revision, mut compacted, mut leases) = (0, 0, Vec::new());
    s.read_image(&mut |image| {
        revision = image.revision()?;
        compacted = image.scheduled_compact_revision()?;
        leases = image.leases()?;
        image.for_each_row(&mut |k, v| {
            rows.push((k.to_vec(), v.to_vec()));
            true
        })
    })
    .unwrap();
    stop.store(true, Ordering::Relaxed);
    writer.join().unwrap();
    let newest_row = rows
        .iter()
        .map(|(k, _)| u64::from_be_bytes(k[..8].try_into().unwrap()) as i64)
        .max()
        .unwrap();
    assert_eq!(newest_row, revision, "the image ends at its own revision");

    let mut r = Restorer::create(dir.path().join("b")).unwrap();
    for (k, v) in &rows {
        r.row(k, v).unwrap();
    }
    for (id, ttl) in &leases {
        r.lease(*id, *ttl).unwrap();
    }
    let restored = r.finish(revision, compacted, compacted).unwrap();
    assert_eq!(restored.revision, revision);
    let b = Store::open(dir.path().join("b"), StoreOptions::default()).unwrap();
    assert_eq!(b.current_revision(), revision);
    assert_eq!(b.compacted_revision(), 100);
    assert_eq!(b.leases(), vec![(9, 30)]);
    assert_eq!(
        b.hash_kv(revision).unwrap().hash,
        s.hash_kv(revision).unwrap().hash
    );
    let everything = |st: &Store| {
        let mut req = RangeRequest::range("\0", "\0");
        req.revision = revision;
        st.range(&req).unwrap().kvs
    };
    assert_eq!(everything(&b), everything(&s));
    // History above the compaction carries over, deletes included.
    let old = s.history(101, usize::MAX, usize::MAX).unwrap();
    let new = b.history(101, usize::MAX, usize::MAX).unwrap();
    assert_eq!(new, old[..new.len()].to_vec());
    assert_eq!(new.last().unwrap().revision, revision);
}

#[test]
fn restore_refuses_a_non_empty_dir_and_an_unfinished_restore() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("file"), b"x").unwrap();
    assert!(Restorer::create(dir.path()).is_err());

    let half = dir.path().join("half");
    let mut r = Restorer::create(&half).unwrap();
    assert!(r.row(b"not a revision", b"").is_err());
    drop(r);
    let err = Store::open(&half, StoreOptions::default()).err().unwrap();
    assert!(err.to_string().contains("did not finish"), "{err}");
}

#[test]
fn defragment_shrinks_a_store_while_writes_go_on() {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(dir.path(), StoreOptions::default()).unwrap();
    // Values that do not compress (fjall compresses its journal and tables).
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    for i in 0..3000 {
        let value: Vec<u8> = (0..4096)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                seed as u8
            })
            .collect();
        s.put(PutRequest::new(format!("k{}", i % 10), value))
            .unwrap();
    }
    s.compact(s.current_revision(), true).unwrap();
    let before = s.db_size();
    let in_use_before = s.db_size_in_use();
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (s, stop) = (s.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                put(&s, "during", &n.to_string());
                n += 1;
            }
            n
        })
    };
    s.defragment().unwrap();
    stop.store(true, Ordering::Relaxed);
    let writes_during = writer.join().unwrap();
    assert!(writes_during > 0);
    let after = s.db_size();
    // fjall's active journal keeps everything written since it last
    // rotated (at 64 MB), whatever a defragmentation does: there, what
    // shrinks is the tables and memtables, the in-use figure below.
    if StoreOptions::default().backend == BackendKind::RocksDb {
        assert!(
            after < before / 2,
            "defragment reclaimed too little: {before} -> {after} bytes"
        );
    }
    assert!(in_use_before > 4 << 20, "{in_use_before}");
    // What is in use now: about ten keys of 4 KiB, far below the 12 MB written.
    assert!(s.db_size_in_use() < 1 << 20, "{}", s.db_size_in_use());
}
