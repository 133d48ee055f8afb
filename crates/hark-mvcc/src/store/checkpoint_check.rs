//! The key index's checkpoint against reading every row: a store opened
//! from a checkpoint and the rows after it answers every read at every
//! retained revision, counts every prefix and attaches every lease exactly
//! as the same store opened without it; a checkpoint that no longer
//! describes the backend (a compaction after it, a backend behind it, other
//! rows, a torn file) is not used.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use bytes::Bytes;
use proptest::prelude::*;

use super::Store;
use super::checkpoint::CHECKPOINT_FILE;
use super::shared::StoreOptions;
use super::usage_check::{Step, apply_step, step};
use crate::request::{LeaseGrantRequest, PutRequest, RangeRequest, WriteRequest};

const LEASE: i64 = 7;

/// Everything a reader can learn from `store`: every retained revision's
/// keys and values, space per prefix, leases and their keys, counters.
fn fingerprint(store: &Store) -> String {
    let mut out = format!(
        "current {} compacted {} keys {} live {}\n",
        store.current_revision(),
        store.compacted_revision(),
        store.key_count(),
        store.live_key_count()
    );
    for revision in store.compacted_revision().max(1)..=store.current_revision() {
        let kvs = store
            .range(&RangeRequest {
                key: Bytes::from_static(b"\0"),
                range_end: Bytes::from_static(b"\0"),
                revision,
                ..RangeRequest::default()
            })
            .unwrap()
            .kvs;
        out += &format!("@{revision}: {kvs:?}\n");
    }
    out += &format!("usage {:?}\n", store.prefix_usage(b"", 5).unwrap());
    out += &format!("leases {:?}\n", store.leases());
    for (id, _) in store.leases() {
        out += &format!("lease {id}: {:?}\n", store.lease_keys(id));
    }
    out
}

fn open(dir: &Path) -> Store {
    Store::open(dir, StoreOptions::default()).unwrap()
}

fn close(store: Store) {
    let closed = store.backend_closed();
    drop(store);
    assert!(closed.is_closed());
}

/// Opens `dir` from its checkpoint, then again without it: what each
/// answers, and the checkpoint's revision if the first open used it.
fn both_ways(dir: &Path) -> (String, String, Option<i64>) {
    let store = open(dir);
    let used = store.opened_from_checkpoint();
    let from_checkpoint = fingerprint(&store);
    close(store);
    std::fs::remove_file(dir.join(CHECKPOINT_FILE)).ok();
    let store = open(dir);
    assert_eq!(store.opened_from_checkpoint(), None);
    let from_rows = fingerprint(&store);
    close(store);
    (from_checkpoint, from_rows, used)
}

fn run(store: &Store, steps: Vec<Step>, leased: &mut bool) -> bool {
    let mut compacted = false;
    for s in steps {
        let before = store.compacted_revision();
        apply_step(store, s, LEASE, leased);
        compacted |= store.compacted_revision() != before;
    }
    compacted
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn a_store_opened_from_its_checkpoint_answers_as_one_read_from_every_row(
        before in prop::collection::vec(step(), 0..30),
        after in prop::collection::vec(step(), 0..30),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let store = open(dir.path());
        store
            .apply_blocking(WriteRequest::LeaseGrant(LeaseGrantRequest { id: LEASE, ttl: 60 }))
            .unwrap();
        let mut leased = true;
        run(&store, before, &mut leased);
        let taken = store.checkpoint_index().unwrap();
        prop_assert_eq!(taken, Some(store.current_revision()));
        // This one, not one the store's thread writes after a compaction.
        let file = std::fs::read(dir.path().join(CHECKPOINT_FILE)).unwrap();
        let compacted_after = run(&store, after, &mut leased);
        close(store);
        std::fs::write(dir.path().join(CHECKPOINT_FILE), file).unwrap();
        let (from_checkpoint, from_rows, used) = both_ways(dir.path());
        prop_assert_eq!(from_checkpoint, from_rows);
        // Used unless a compaction finished after it.
        prop_assert_eq!(used, (!compacted_after).then_some(taken.unwrap()));
    }
}

fn filled(dir: &Path, puts: usize, tag: &str) -> Store {
    let store = open(dir);
    for i in 0..puts {
        store
            .put(PutRequest::new(
                format!("/k/{}", i % 7),
                format!("{tag}{i}"),
            ))
            .unwrap();
    }
    store
}

#[test]
fn a_checkpoint_is_private_and_a_torn_or_changed_one_is_not_used() {
    let dir = tempfile::tempdir().unwrap();
    let store = filled(dir.path(), 20, "v");
    assert_eq!(store.checkpoint_index().unwrap(), Some(21));
    close(store);
    let path = dir.path().join(CHECKPOINT_FILE);
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let whole = std::fs::read(&path).unwrap();

    let store = open(dir.path());
    assert_eq!(store.opened_from_checkpoint(), Some(21));
    let expected = fingerprint(&store);
    close(store);

    let mut flipped = whole.clone();
    let middle = flipped.len() / 2;
    flipped[middle] ^= 0x40;
    for broken in [
        whole[..whole.len() - 3].to_vec(),
        flipped,
        b"HARKIDX1".to_vec(),
    ] {
        std::fs::write(&path, &broken).unwrap();
        let store = open(dir.path());
        assert_eq!(store.opened_from_checkpoint(), None);
        assert_eq!(fingerprint(&store), expected);
        close(store);
    }
}

#[test]
fn a_checkpoint_of_other_rows_or_past_the_backend_is_not_used() {
    // Two stores at the same revision with other values.
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let store = filled(a.path(), 10, "a");
    assert_eq!(store.checkpoint_index().unwrap(), Some(11));
    close(store);
    let store = filled(b.path(), 10, "b");
    let expected = fingerprint(&store);
    close(store);
    std::fs::copy(
        a.path().join(CHECKPOINT_FILE),
        b.path().join(CHECKPOINT_FILE),
    )
    .unwrap();
    let store = open(b.path());
    assert_eq!(store.opened_from_checkpoint(), None);
    assert_eq!(fingerprint(&store), expected);
    close(store);

    // The same rows, but the backend behind the checkpoint (a data dir
    // put back from an older copy).
    let store = open(b.path());
    store.put(PutRequest::new("/k/late", "x")).unwrap();
    assert_eq!(store.checkpoint_index().unwrap(), Some(12));
    close(store);
    let checkpoint = std::fs::read(b.path().join(CHECKPOINT_FILE)).unwrap();
    let c = tempfile::tempdir().unwrap();
    let store = filled(c.path(), 10, "b");
    close(store);
    std::fs::write(c.path().join(CHECKPOINT_FILE), checkpoint).unwrap();
    let store = open(c.path());
    assert_eq!(store.opened_from_checkpoint(), None);
    assert_eq!(fingerprint(&store), expected);
    close(store);
}

#[test]
fn an_install_removes_the_checkpoint_of_the_rows_it_replaces() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let target = filled(a.path(), 10, "a");
    assert_eq!(target.checkpoint_index().unwrap(), Some(11));
    assert!(a.path().join(CHECKPOINT_FILE).exists());
    let source = filled(b.path(), 30, "b");
    let expected = fingerprint(&source);
    let (tx, rx) = std::sync::mpsc::channel();
    target.install(source, b"position".to_vec(), move |r| tx.send(r).unwrap());
    rx.recv().unwrap().unwrap();
    assert!(!a.path().join(CHECKPOINT_FILE).exists());
    assert_eq!(fingerprint(&target), expected);
    close(target);
    let store = open(a.path());
    assert_eq!(store.opened_from_checkpoint(), None);
    assert_eq!(fingerprint(&store), expected);
    close(store);
}

#[test]
fn a_finished_compaction_is_followed_by_a_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let store = filled(dir.path(), 20, "v");
    assert_eq!(store.checkpoint_index().unwrap(), Some(21));
    store.compact(15, true).unwrap();
    // The compaction wakes the checkpoint thread (no minute's wait).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let c = super::checkpoint::read(dir.path()).unwrap().unwrap();
        if c.compacted == 15 {
            assert_eq!(c.revision, 21);
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no checkpoint after the compaction"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let expected = fingerprint(&store);
    close(store);
    let store = open(dir.path());
    assert_eq!(store.opened_from_checkpoint(), Some(21));
    assert_eq!(fingerprint(&store), expected);
    close(store);
}
