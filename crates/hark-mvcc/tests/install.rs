//! A snapshot install replaces the store's rows in place, in batches: no
//! reader may see it half done (#35). Ranges, history reads (watch
//! catch-up), images (`snapshot save`, raft snapshot builds) and hashes run
//! on other threads while installs go back and forth between two stores;
//! each answer must be one of the two stores' whole.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use hark_mvcc::backend::{BackendHooks, Hooked};
use hark_mvcc::*;

/// More rows than one install batch (10,000), so an install is seen in part
/// unless readers are kept out of it.
fn source(prefix: &str, keys: usize) -> Store {
    let s = Store::in_memory();
    for i in 0..keys {
        s.put(PutRequest::new(format!("{prefix}{i:06}"), "v"))
            .unwrap();
    }
    s
}

fn install(target: &Store, source: &Store) {
    let (tx, rx) = std::sync::mpsc::channel();
    target.install(source.clone(), b"pos".to_vec(), move |r| {
        tx.send(r).unwrap()
    });
    rx.recv().unwrap().unwrap();
}

/// What a reader may see of the target: either source, whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Whole {
    revision: i64,
    rows: usize,
    keys: i64,
    hash: u32,
}

fn image_of(s: &Store) -> (i64, usize) {
    let (mut revision, mut rows) = (0, 0);
    s.read_image(&mut |image| {
        revision = image.revision()?;
        rows = 0;
        image.for_each_row(&mut |_, _| {
            rows += 1;
            true
        })
    })
    .unwrap();
    (revision, rows)
}

/// A thread that checks `read` of `target` against `wholes` until `done`;
/// it returns how many reads it checked.
fn reader(
    target: &Store,
    wholes: &Arc<Vec<Whole>>,
    done: &Arc<AtomicBool>,
    read: impl Fn(&Store, &[Whole]) + Send + 'static,
) -> std::thread::JoinHandle<usize> {
    let (target, wholes, done) = (target.clone(), wholes.clone(), done.clone());
    std::thread::spawn(move || {
        let mut seen = 0;
        while !done.load(Ordering::Acquire) {
            read(&target, &wholes);
            seen += 1;
        }
        seen
    })
}

#[test]
fn readers_never_see_a_half_done_install() {
    let a = source("a", 25_000);
    let b = source("b", 12_000);
    let target = Store::in_memory();
    // What each source looks like once installed, read while nothing runs.
    let mut wholes = Vec::new();
    for s in [&a, &b] {
        install(&target, s);
        let (revision, rows) = image_of(&target);
        let keys = target
            .range(&RangeRequest {
                count_only: true,
                ..RangeRequest::range("\0", "\0")
            })
            .unwrap()
            .count;
        let (hash, _) = target.hash().unwrap();
        wholes.push(Whole {
            revision,
            rows,
            keys,
            hash,
        });
    }
    assert_ne!(wholes[0], wholes[1]);
    let wholes = Arc::new(wholes);

    let done = Arc::new(AtomicBool::new(false));
    let readers = [
        // Images: the revision they claim and the rows they hold go together.
        reader(&target, &wholes, &done, |target, wholes| {
            let (revision, rows) = image_of(target);
            assert!(
                wholes
                    .iter()
                    .any(|w| (w.revision, w.rows) == (revision, rows)),
                "an image at revision {revision} with {rows} rows; installs hold {wholes:?}"
            );
        }),
        // Ranges: every key of one source, and never an error.
        reader(&target, &wholes, &done, |target, wholes| {
            let all = target.range(&RangeRequest::range("\0", "\0")).unwrap();
            let count = all.kvs.len() as i64;
            assert!(
                wholes.iter().any(|w| w.keys == count),
                "a range found {count} keys; installs hold {wholes:?}"
            );
            let first = all.kvs[0].key[0];
            assert!(
                all.kvs.iter().all(|kv| kv.key[0] == first),
                "a range mixed two installs"
            );
        }),
        // History from the start (a watch catching up): one source's every
        // revision, never a short or empty read. (It may claim to cover up
        // to the revision before the install: the store's revision is
        // published after its rows, and a raft install only moves forward.)
        reader(&target, &wholes, &done, |target, wholes| {
            let chunk = target.history_chunk(2, usize::MAX, usize::MAX).unwrap();
            let events: usize = chunk.revisions.iter().map(|r| r.events.len()).sum();
            assert!(
                wholes
                    .iter()
                    .any(|w| w.keys as usize == events && chunk.next > w.revision),
                "history read {events} events up to {}; installs hold {wholes:?}",
                chunk.next
            );
        }),
        // Hashes: one source's whole.
        reader(&target, &wholes, &done, |target, wholes| {
            let (hash, revision) = target.hash().unwrap();
            assert!(
                wholes
                    .iter()
                    .any(|w| (w.hash, w.revision) == (hash, revision)),
                "hash {hash} at revision {revision}; installs hold {wholes:?}"
            );
        }),
    ];
    for round in 0..20 {
        install(&target, if round % 2 == 0 { &a } else { &b });
    }
    done.store(true, Ordering::Release);
    for r in readers {
        let reads = r.join().expect("a reader saw a half-done install");
        assert!(reads > 0, "each reader read during the installs");
    }
}

/// Holds up the unsynced writes a physical compaction deletes rows with
/// (the store's own commits are synced), so a source can be installed
/// between a compaction's scheduling and its end.
#[derive(Default)]
struct CompactionGate {
    held: parking_lot::RwLock<()>,
}

impl BackendHooks for CompactionGate {
    fn before_write(&self, sync: bool) -> Result<()> {
        if !sync {
            drop(self.held.read());
        }
        Ok(())
    }
}

/// After an install the key index holds what the source's holds: keys a
/// compaction forgot are forgotten here too, and a compaction the source had
/// not finished is finished here, as a restart would do (else key counts and
/// hashes differ between healthy members until one restarts).
#[test]
fn an_install_compacts_the_key_index_as_the_source_did() {
    let gate = Arc::new(CompactionGate::default());
    let s = Store::with_backend(
        Box::new(Hooked {
            inner: MemoryBackend::new(),
            hooks: gate.clone(),
        }),
        StoreOptions::default(),
    )
    .unwrap();
    for i in 0..10 {
        s.put(PutRequest::new(format!("gone{i}"), "v")).unwrap();
    }
    s.delete_range(DeleteRangeRequest::new("gone", "gonf"))
        .unwrap();
    let at = s.put(PutRequest::new("kept", "1")).unwrap().header_revision;
    let held = gate.held.write();
    s.compact(at, false).unwrap();
    // The compactor thread compacts the index (a step at a time) before it
    // deletes rows, which the gate holds up.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while s.key_count() != 1 {
        assert!(
            std::time::Instant::now() < deadline,
            "the source's index never forgot the deleted keys: {}",
            s.key_count()
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let (_, rows) = image_of(&s);
    assert_eq!(rows, 21, "its compaction has not deleted their rows yet");

    let target = Store::in_memory();
    target.put(PutRequest::new("old", "x")).unwrap();
    install(&target, &s);
    assert_eq!(target.key_count(), 1);
    assert_eq!(target.compacted_revision(), at);
    assert_eq!(image_of(&target), (at, 1), "the compaction was finished");
    let kept = target.range(&RangeRequest::key("kept")).unwrap();
    assert_eq!(kept.kvs[0].value, "1");
    drop(held);
    assert_eq!(target.hash_kv(0).unwrap(), s.hash_kv(0).unwrap());
}
