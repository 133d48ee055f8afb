//! The chunked index's cases, and the model check against [`super::reference`].

use super::*;

fn rev(main: i64) -> Revision {
    Revision::new(main, 0)
}

/// Key "foo": put 2, put 3, delete 4; put 6, put 7, delete 8; put 10.
fn history() -> TreeIndex {
    let mut idx = TreeIndex::default();
    let k: &[u8] = b"foo";
    idx.put(k, rev(2), 2, 1, 0);
    idx.put(k, rev(3), 2, 1, 0);
    idx.tombstone(k, rev(4));
    idx.put(k, rev(6), 6, 1, 0);
    idx.put(k, rev(7), 6, 1, 0);
    idx.tombstone(k, rev(8));
    idx.put(k, rev(10), 10, 1, 0);
    idx
}

#[test]
fn live_keys_go_up_on_create_and_down_on_delete() {
    let mut idx = history();
    assert_eq!((idx.len(), idx.live_len()), (1, 1));
    let bar: &[u8] = b"bar";
    idx.put(bar, rev(11), 11, 1, 0);
    idx.put(bar, rev(12), 11, 1, 0);
    assert_eq!(idx.live_len(), 2, "a second put of a key creates nothing");
    idx.tombstone(bar, rev(13));
    idx.tombstone(b"foo", rev(14));
    assert_eq!((idx.len(), idx.live_len()), (2, 0));
    // A tombstone at the compaction revision is kept; one below it goes.
    idx.compact(14);
    assert_eq!((idx.len(), idx.live_len()), (1, 0));
    idx.compact(15);
    assert_eq!((idx.len(), idx.live_len()), (0, 0));
}

#[test]
fn get_follows_generations() {
    let idx = history();
    let at = |r| {
        idx.get(b"foo", r)
            .map(|e| (e.rev.main, e.create_revision, e.version))
    };
    assert_eq!(at(1), None);
    assert_eq!(at(2), Some((2, 2, 1)));
    assert_eq!(at(3), Some((3, 2, 2)));
    assert_eq!(at(4), None);
    assert_eq!(at(5), None);
    assert_eq!(at(6), Some((6, 6, 1)));
    assert_eq!(at(7), Some((7, 6, 2)));
    assert_eq!(at(8), None);
    assert_eq!(at(9), None);
    assert_eq!(at(10), Some((10, 10, 1)));
    assert_eq!(at(100), Some((10, 10, 1)));
    assert_eq!(idx.get(b"bar", 10), None);
}

#[test]
fn compaction_keeps_newest_at_or_before_and_tombstone_exactly_at() {
    // Each case: compact at, revisions kept <= at, what reads at >= at still see.
    let cases: &[(i64, &[i64])] = &[
        (1, &[]),
        (2, &[2]),
        (3, &[3]),
        (4, &[4]), // tombstone exactly at the compaction revision stays
        (5, &[]),  // older tombstone and its generation go
        (6, &[6]),
        (7, &[7]),
        (8, &[8]),
        (9, &[]),
        (10, &[10]),
        (11, &[10]),
    ];
    // foo's changes: (revision, is a deletion).
    let changes = [
        (2, false),
        (3, false),
        (4, true),
        (6, false),
        (7, false),
        (8, true),
        (10, false),
    ];
    for &(at, kept) in cases {
        let full = history();
        let mut idx = history();
        let mut dropped: Vec<(i64, bool)> = idx
            .compact(at)
            .into_iter()
            .map(|d| (d.rev.main, d.tombstone))
            .collect();
        dropped.sort();
        let want: Vec<(i64, bool)> = changes
            .iter()
            .filter(|(r, _)| *r <= at && !kept.contains(r))
            .copied()
            .collect();
        assert_eq!(
            dropped, want,
            "compact at {at}: all at or before it but {kept:?}"
        );
        for r in at..=12 {
            assert_eq!(
                idx.get(b"foo", r),
                full.get(b"foo", r),
                "read at {r} after compact at {at}"
            );
        }
    }
}

/// What the simple index's compaction at `at` drops, found apart from how
/// the chunked index finds it: every change it holds at or before `at`
/// that the compaction does not keep.
fn model_dropped(model: &mut super::reference::Reference, at: i64) -> Vec<Dropped> {
    let mut all = Vec::new();
    model.changes(KeyRange::new(b"\0", b"\0"), 1, at, |_, rev, tombstone| {
        all.push(Dropped { rev, tombstone })
    });
    let keep = model.compact(at);
    let mut dropped: Vec<Dropped> = all.into_iter().filter(|d| !keep.contains(&d.rev)).collect();
    dropped.sort();
    dropped
}

fn sorted(mut dropped: Vec<Dropped>) -> Vec<Dropped> {
    dropped.sort();
    dropped
}

#[test]
fn keep_names_the_newest_live_revision_at_or_before() {
    // foo: put 2, put 3, delete 4; put 6, put 7, delete 8; put 10.
    let idx = history();
    let kept = |at| {
        let mut k: Vec<i64> = idx.keep(at).into_iter().map(|r| r.main).collect();
        k.sort();
        k
    };
    assert_eq!(kept(1), Vec::<i64>::new());
    assert_eq!(kept(3), vec![3]);
    // Deleted at 4: nothing of the ended generation; the next starts at 6.
    assert_eq!(kept(4), Vec::<i64>::new());
    assert_eq!(kept(5), Vec::<i64>::new());
    assert_eq!(kept(7), vec![7]);
    assert_eq!(kept(9), Vec::<i64>::new());
    assert_eq!(kept(12), vec![10]);
}

#[test]
fn compaction_removes_fully_deleted_keys_and_keeps_versions() {
    let mut idx = TreeIndex::default();
    let k: &[u8] = b"k";
    idx.put(k, rev(2), 2, 1, 0);
    idx.tombstone(k, rev(3));
    idx.compact(3);
    assert_eq!(idx.len(), 1, "tombstone at the compaction revision is kept");
    idx.compact(4);
    assert_eq!(idx.len(), 0);

    let mut idx = TreeIndex::default();
    for (i, r) in (5..9).enumerate() {
        idx.put(k, rev(r), 5, 1, 0);
        assert_eq!(idx.get(b"k", r).unwrap().version, i as i64 + 1);
    }
    idx.compact(7);
    let e = idx.get(b"k", 8).unwrap();
    assert_eq!((e.rev.main, e.create_revision, e.version), (8, 5, 4));
    assert_eq!(idx.get(b"k", 7).unwrap().version, 3);
    assert_eq!(idx.get(b"k", 100).unwrap().version, 4);
}

#[test]
fn changes_list_puts_and_deletes_in_a_window() {
    let idx = history();
    let mut got = vec![];
    idx.changes(KeyRange::new(b"foo", b""), 3, 8, |_, r, del| {
        got.push((r.main, del))
    });
    assert_eq!(
        got,
        [(3, false), (4, true), (6, false), (7, false), (8, true)]
    );
    got.clear();
    idx.changes(KeyRange::new(b"a", b"z"), 9, 100, |_, r, del| {
        got.push((r.main, del))
    });
    assert_eq!(got, [(10, false)]);
}

#[test]
fn visit_respects_range_forms() {
    let mut idx = TreeIndex::default();
    for (i, k) in ["a", "b", "c", "d"].iter().enumerate() {
        idx.put(k.as_bytes(), rev(i as i64 + 2), i as i64 + 2, 1, 0);
    }
    idx.tombstone(b"c", rev(6));
    let keys = |r: KeyRange<'_>, at| {
        let mut out = vec![];
        idx.visit(r, at, |k, _| {
            out.push(String::from_utf8(k.to_vec()).unwrap())
        });
        out
    };
    assert_eq!(keys(KeyRange::new(b"b", b""), 6), ["b"]);
    assert_eq!(keys(KeyRange::new(b"b", b"d"), 6), ["b"]);
    assert_eq!(keys(KeyRange::new(b"b", b"d"), 5), ["b", "c"]);
    assert_eq!(keys(KeyRange::new(b"b", b"\0"), 6), ["b", "d"]);
    assert_eq!(keys(KeyRange::new(b"\0", b"\0"), 3), ["a", "b"]);
    assert!(keys(KeyRange::new(b"d", b"b"), 6).is_empty());
}

/// What a model step does to both indexes.
#[derive(Debug, Clone)]
enum Step {
    Put(u16),
    Delete(u16),
    /// Compact at the revision this many back from the newest (0: the newest).
    Compact(u8),
}

fn step() -> impl proptest::strategy::Strategy<Value = Step> {
    use proptest::prelude::*;
    // Keys from a few hundred, so chunks fill, split and are written anew
    // by compactions; shared prefixes of every length, as front coding meets.
    prop_oneof![
        6 => (0u16..400).prop_map(Step::Put),
        2 => (0u16..400).prop_map(Step::Delete),
        1 => (0u8..20).prop_map(Step::Compact),
    ]
}

fn model_key(k: u16) -> Vec<u8> {
    match k % 4 {
        0 => format!("/registry/pods/ns-{}/p-{k}", k % 7).into_bytes(),
        1 => format!("/registry/pods/ns-{}/p-{k}-x", k % 7).into_bytes(),
        2 => vec![b'a'; usize::from(k % 40)],
        _ => k.to_be_bytes().to_vec(),
    }
}

/// A put, or a delete of a key live in `model` (else nothing), to both
/// indexes at the next revision: both answer the same.
fn apply_write(
    idx: &mut TreeIndex,
    model: &mut super::reference::Reference,
    step: Step,
    newest: &mut i64,
) {
    match step {
        Step::Put(k) => {
            *newest += 1;
            let key = model_key(k);
            let size = key.len() as u32 + 7;
            let got = idx.put(&key, rev(*newest), *newest, 1, size);
            let want = model.put(bytes::Bytes::from(key), rev(*newest), *newest, 1, size);
            assert_eq!(got, want);
        }
        Step::Delete(k) => {
            let key = model_key(k);
            if model.get(&key, *newest).is_some() {
                *newest += 1;
                let got = idx.tombstone(&key, rev(*newest));
                assert_eq!(got, model.tombstone(bytes::Bytes::from(key), rev(*newest)));
            }
        }
        Step::Compact(_) => unreachable!("a compaction is no write"),
    }
}

/// Everything both indexes answer, at every revision still readable.
fn assert_same(idx: &TreeIndex, model: &super::reference::Reference, newest: i64, compacted: i64) {
    assert_eq!(idx.len(), model.len(), "keys held");
    assert_eq!(idx.live_len(), model.live_len(), "live keys");
    for at in compacted.max(1)..=newest {
        let mut got = Vec::new();
        idx.visit(KeyRange::new(b"\0", b"\0"), at, |k, e| {
            got.push((k.to_vec(), e))
        });
        let mut want = Vec::new();
        model.visit(KeyRange::new(b"\0", b"\0"), at, |k, e| {
            want.push((k.to_vec(), e))
        });
        assert_eq!(got, want, "every key at {at}");
        for (k, e) in &want {
            assert_eq!(idx.get(k, at), Some(*e), "get {k:?} at {at}");
        }
    }
    let span = KeyRange::new(b"/registry/pods/ns-3", b"/registry/pods/ns-5");
    for from in [compacted.max(1), (compacted + newest) / 2] {
        let mut got = Vec::new();
        idx.changes(span, from, newest, |k, r, d| got.push((k.to_vec(), r, d)));
        let mut want = Vec::new();
        model.changes(span, from, newest, |k, r, d| want.push((k.to_vec(), r, d)));
        assert_eq!(got, want, "changes from {from}");
    }
    assert_eq!(idx.keep(newest), model.keep(newest), "keep at {newest}");
    check_chunks(idx);
}

/// Each chunk is found by its first key, holds what it counts, and the
/// bytes counted are the bytes held.
/// Counts over ranges of every form, from their start and past a key
/// inside them: as many as the simple index visits.
fn check_counts(
    idx: &TreeIndex,
    model: &super::reference::Reference,
    at: i64,
) -> Result<(), proptest::test_runner::TestCaseError> {
    let ranges: [(&[u8], &[u8]); 7] = [
        (b"\0", b"\0"),
        (b"/registry/pods/ns-3", b"/registry/pods/ns-5"),
        (b"/registry/", b"/registry0"),
        (b"aaaa", b"\0"),
        (b"aaaaaaaaaa", b""),
        (b"\0\0", b"\x01"),
        (b"z", b"a"),
    ];
    let afters: [Option<&[u8]>; 5] = [
        None,
        Some(b"/registry/pods/ns-4/p-4"),
        Some(b"aaaaa"),
        Some(b"\0\x40"),
        Some(b""),
    ];
    for (key, end) in ranges {
        let range = KeyRange::new(key, end);
        for after in afters {
            let mut want = 0;
            model.visit(range, at, |k, _| {
                want += usize::from(after.is_none_or(|a| k > a));
            });
            proptest::prop_assert_eq!(
                idx.count(range, after, at),
                want,
                "count of {:?}..{:?} after {:?} at {}",
                key,
                end,
                after,
                at
            );
        }
    }
    Ok(())
}

fn check_chunks(idx: &TreeIndex) {
    let mut bytes = 0;
    for (first, chunk) in &idx.chunks {
        assert!(
            chunk.keys > 0 && chunk.keys <= CHUNK_MAX,
            "{} keys",
            chunk.keys
        );
        let mut cursor = Cursor::new(&chunk.data);
        let mut n = 0;
        while cursor.next().is_some() {
            if n == 0 {
                assert_eq!(
                    cursor.key.as_slice(),
                    first.as_ref(),
                    "a chunk is found by its first key"
                );
            }
            n += 1;
        }
        assert_eq!(n, chunk.keys);
        // The summary a count trusts, against the decoded histories.
        let (mut live, mut newest) = (0, 0);
        let mut history = super::KeyHistory::default();
        let mut cursor = Cursor::new(&chunk.data);
        while let Some(encoded) = cursor.next() {
            assert!(super::decode(&mut history, encoded));
            live += usize::from(history.live().is_some());
            history.changes(0, i64::MAX, |r, _| newest = newest.max(r.main));
        }
        assert_eq!((chunk.live, chunk.newest), (live, newest), "chunk summary");
        bytes += first.len() + chunk.data.len();
    }
    assert_eq!(idx.chunk_bytes(), bytes);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// The chunked index answers every read as the simple one does, through
    /// puts, deletions and compactions.
    #[test]
    fn the_chunked_index_answers_as_the_simple_one(steps in proptest::collection::vec(step(), 1..600)) {
        let mut idx = TreeIndex::default();
        let mut model = super::reference::Reference::default();
        let (mut newest, mut compacted) = (1i64, 0i64);
        for step in steps {
            match step {
                Step::Compact(back) => {
                    let at = (newest - i64::from(back)).max(compacted).max(1);
                    proptest::prop_assert_eq!(sorted(idx.compact(at)), model_dropped(&mut model, at));
                    compacted = at;
                }
                write => apply_write(&mut idx, &mut model, write, &mut newest),
            }
        }
        assert_same(&idx, &model, newest, compacted);
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// An index built from rows in revision order, merged in batches of
    /// any size, is the index those changes make one by one.
    #[test]
    fn an_index_built_in_batches_is_the_one_made_change_by_change(
        steps in proptest::collection::vec(step(), 1..600),
        batch in 1usize..200,
    ) {
        let mut idx = TreeIndex::default();
        let mut built = IndexBuilder { batch, ..IndexBuilder::default() };
        let mut newest = 1i64;
        let mut creates = std::collections::HashMap::new();
        for step in steps {
            let (k, delete) = match step {
                Step::Put(k) => (k, false),
                Step::Delete(k) => (k, true),
                Step::Compact(_) => continue,
            };
            let key = bytes::Bytes::from(model_key(k));
            if delete && idx.get(&key, newest).is_none() {
                continue;
            }
            newest += 1;
            if delete {
                idx.tombstone(&key, rev(newest));
                built.tombstone(&key, rev(newest));
                creates.remove(&key);
            } else {
                let size = key.len() as u32 + u32::from(k);
                let (e, _) = idx.put(&key, rev(newest), newest, 1, size);
                // As a stored value says: its create revision and version.
                let create = *creates.entry(key.clone()).or_insert(newest);
                proptest::prop_assert_eq!((e.create_revision, e.version > 0), (create, true));
                built.put(&key, rev(newest), e.create_revision, e.version, size);
            }
        }
        let built = built.finish();
        let all = |i: &TreeIndex, at: i64| {
            let mut out = Vec::new();
            i.changes(KeyRange::new(b"\0", b"\0"), 1, at, |k, r, d| out.push((k.to_vec(), r, d)));
            let mut live = Vec::new();
            i.visit(KeyRange::new(b"\0", b"\0"), at, |k, e| live.push((k.to_vec(), e)));
            let mut sizes = Vec::new();
            i.visit_live_sizes(|k, s| sizes.push((k.to_vec(), s)));
            (out, live, sizes, i.len(), i.live_len())
        };
        proptest::prop_assert_eq!(all(&built, newest), all(&idx, newest));
        check_chunks(&built);
    }
}

/// Every key live at `at` with its entry: what a read there sees.
fn live_at(
    at: i64,
    visit: impl FnOnce(i64, &mut dyn FnMut(&[u8], IndexEntry)),
) -> Vec<(Vec<u8>, IndexEntry)> {
    let mut out = Vec::new();
    visit(at, &mut |k, e| out.push((k.to_vec(), e)));
    out
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// A compaction done a few chunks at a time, with puts and deletions
    /// between its steps (as the compactor thread does it beside the
    /// committer), retains what a whole one retains; and at every step a
    /// read at or after its revision answers as the simple index compacted
    /// at once does.
    #[test]
    fn a_compaction_in_steps_with_writes_between_them_ends_as_a_whole_one(
        steps in proptest::collection::vec((step(), 0u8..4), 1..600),
    ) {
        let mut idx = TreeIndex::default();
        let mut model = super::reference::Reference::default();
        let (mut newest, mut compacted) = (1i64, 0i64);
        // The compaction under way: its revision, progress and what the
        // simple index's drops.
        let mut running: Option<(i64, IndexCompaction, Vec<Dropped>)> = None;
        let finish = |idx: &mut TreeIndex, running: &mut Option<(i64, IndexCompaction, Vec<Dropped>)>| {
            if let Some((at, mut progress, want)) = running.take() {
                while !idx.compact_step(at, &mut progress, 1) {}
                assert_eq!(sorted(progress.dropped), want, "dropped at {at}");
            }
        };
        for (step, advance) in steps {
            match step {
                Step::Compact(back) => {
                    // One at a time, as the compactor thread takes them.
                    finish(&mut idx, &mut running);
                    let at = (newest - i64::from(back)).max(compacted).max(1);
                    running = Some((at, IndexCompaction::default(), model_dropped(&mut model, at)));
                    compacted = at;
                }
                write => apply_write(&mut idx, &mut model, write, &mut newest),
            }
            if let Some((at, progress, _)) = running.as_mut() {
                for _ in 0..advance {
                    if idx.compact_step(*at, progress, 1) {
                        break;
                    }
                }
            }
            for at in [compacted.max(1), newest] {
                let all = KeyRange::new(b"\0", b"\0");
                proptest::prop_assert_eq!(
                    live_at(at, |at, f| idx.visit(all, at, f)),
                    live_at(at, |at, f| model.visit(all, at, f)),
                    "every key at {}", at
                );
            }
            for at in [compacted.max(1), (compacted + newest) / 2, newest] {
                check_counts(&idx, &model, at)?;
            }
            // HashKV's keep sets, at any revision it may hash.
            for at in [compacted.max(1), (compacted + newest) / 2, newest] {
                proptest::prop_assert_eq!(idx.keep(at), model.keep(at), "keep at {}", at);
            }
            proptest::prop_assert_eq!(idx.live_len(), model.live_len());
            check_chunks(&idx);
        }
        finish(&mut idx, &mut running);
        assert_same(&idx, &model, newest, compacted);
        // As a checkpoint stores and loads it: the summaries are made anew.
        let mut stored = Vec::new();
        idx.try_for_each_chunk(|first, keys, data| {
            stored.push(StoredChunk {
                first: bytes::Bytes::copy_from_slice(first),
                keys,
                data: bytes::Bytes::copy_from_slice(data),
            });
            Ok::<_, ()>(())
        })
        .unwrap();
        let loaded = TreeIndex::from_chunks(stored).expect("the chunks decode");
        check_chunks(&loaded);
        check_counts(&loaded, &model, newest)?;
    }
}

#[test]
fn chunks_split_and_stay_in_order_with_front_coding() {
    let mut idx = TreeIndex::default();
    // In reverse, so every key lands before the chunk's first.
    for i in (0..1000u32).rev() {
        let key = format!("/registry/configmaps/ns-{}/c-{i:05}", i % 3);
        idx.put(key.as_bytes(), rev(i64::from(1000 - i) + 1), 0, 1, 0);
    }
    assert!(
        idx.chunks.len() >= 1000 / CHUNK_MAX,
        "{} chunks",
        idx.chunks.len()
    );
    assert!(idx.chunks.values().all(|c| c.keys <= CHUNK_MAX));
    let mut keys = Vec::new();
    idx.visit(KeyRange::new(b"\0", b"\0"), 2000, |k, _| {
        keys.push(k.to_vec())
    });
    assert_eq!(keys.len(), 1000);
    assert!(keys.windows(2).all(|w| w[0] < w[1]));
    // Front coding: a key costs well under its own length.
    assert!(idx.chunk_bytes() < 1000 * 30, "{} bytes", idx.chunk_bytes());
}
