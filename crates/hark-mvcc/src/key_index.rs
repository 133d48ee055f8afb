//! The in-memory key index: for every key, the revisions at which it changed,
//! grouped into generations (one per life of the key, from creation to deletion).
//! Values live in the backend, addressed by revision; the index answers "which
//! revision holds this key's value at revision R" without touching the backend.

use std::collections::{BTreeMap, HashSet};
use std::ops::Bound;

use bytes::Bytes;

use crate::revision::Revision;

/// What the index knows about a live key at some revision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct IndexEntry {
    /// Revision of the change that produced the value (its `mod_revision` is `rev.main`).
    pub rev: Revision,
    pub create_revision: i64,
    pub version: i64,
}

/// One life of a key: created, modified, possibly ended by a tombstone.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Generation {
    create_revision: i64,
    /// Version of the change at `revs[0]` (compaction drops older revisions).
    first_version: i64,
    /// Never empty; ascending.
    revs: Vec<Revision>,
    /// The last element of `revs` is a deletion.
    ended: bool,
}

/// All generations of one key, oldest first; never empty while in the index.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct KeyHistory {
    generations: Vec<Generation>,
    /// Key plus value length of the newest put while the key is live (for
    /// space per prefix: a put or deletion learns what it replaces without
    /// reading the old value).
    live_size: u32,
}

impl KeyHistory {
    /// The key's entry at main revision `at`, or `None` if it did not exist then.
    pub(crate) fn get(&self, at: i64) -> Option<IndexEntry> {
        let gi = self.generations.partition_point(|g| g.revs[0].main <= at);
        let g = self.generations.get(gi.checked_sub(1)?)?;
        let ri = g.revs.partition_point(|r| r.main <= at) - 1;
        if g.ended && ri == g.revs.len() - 1 {
            return None;
        }
        Some(IndexEntry {
            rev: g.revs[ri],
            create_revision: g.create_revision,
            version: g.first_version + ri as i64,
        })
    }

    /// Visits the changes with main revision in `from..=to`, oldest first:
    /// `(revision, is_deletion)`.
    fn changes(&self, from: i64, to: i64, mut f: impl FnMut(Revision, bool)) {
        for g in &self.generations {
            let last = g.revs.len() - 1;
            let start = g.revs.partition_point(|r| r.main < from);
            for (i, r) in g.revs.iter().enumerate().skip(start) {
                if r.main > to {
                    break;
                }
                f(*r, g.ended && i == last);
            }
        }
    }

    /// The live size, if the newest generation is live.
    fn live(&self) -> Option<u32> {
        self.generations
            .last()
            .filter(|g| !g.ended)
            .map(|_| self.live_size)
    }

    /// Records a put at `rev` (newer than every recorded revision).
    fn put(&mut self, rev: Revision, create_revision: i64, version: i64) -> IndexEntry {
        match self.generations.last_mut() {
            Some(g) if !g.ended => {
                g.revs.push(rev);
                IndexEntry {
                    rev,
                    create_revision: g.create_revision,
                    version: g.first_version + g.revs.len() as i64 - 1,
                }
            }
            _ => {
                self.generations.push(Generation {
                    create_revision,
                    first_version: version,
                    revs: vec![rev],
                    ended: false,
                });
                IndexEntry {
                    rev,
                    create_revision,
                    version,
                }
            }
        }
    }

    /// Records a deletion at `rev`. A key with no live generation (only possible
    /// while rebuilding a partly compacted history) gets a tombstone-only generation.
    fn tombstone(&mut self, rev: Revision) {
        match self.generations.last_mut() {
            Some(g) if !g.ended => {
                g.revs.push(rev);
                g.ended = true;
            }
            _ => self.generations.push(Generation {
                create_revision: 0,
                first_version: 0,
                revs: vec![rev],
                ended: true,
            }),
        }
    }

    /// Adds to `keep` the revision etcd's `keyIndex.keep(at)` names: in the
    /// first generation still alive after `at` (not ended by then), the newest
    /// revision at or before `at`. A key deleted at or before `at` and not
    /// created again contributes nothing. Unlike [`KeyHistory::compact`] this
    /// changes nothing; `HashKV` uses it.
    fn keep_at(&self, at: i64, keep: &mut HashSet<Revision>) {
        let alive = self.generations.iter().find(|g| {
            let last = g.revs.last().expect("generations are never empty");
            !g.ended || last.main > at
        });
        if let Some(g) = alive {
            let newer = g.revs.partition_point(|r| r.main <= at);
            if newer > 0 {
                keep.insert(g.revs[newer - 1]);
            }
        }
    }

    /// Drops what no read at or after `at` can need: per key, the newest revision
    /// `<= at` stays when it is a put, or a deletion exactly at `at` (so a watch
    /// starting at `at` still sees it); older ones go. Retained revisions `<= at`
    /// are added to `keep`. Returns whether the key has any history left.
    fn compact(&mut self, at: i64, keep: &mut HashSet<Revision>) -> bool {
        self.generations.retain_mut(|g| {
            let last = *g.revs.last().expect("generations are never empty");
            if g.ended && last.main < at {
                return false;
            }
            let newer = g.revs.partition_point(|r| r.main <= at);
            if newer > 0 {
                let newest_at_or_before = newer - 1;
                g.revs.drain(..newest_at_or_before);
                g.first_version += newest_at_or_before as i64;
                keep.insert(g.revs[0]);
            }
            true
        });
        !self.generations.is_empty()
    }
}

/// Which keys a request covers, from etcd's `(key, range_end)` pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyRange<'a> {
    /// `range_end` empty: exactly `key`.
    Single(&'a [u8]),
    /// `[start, end)`; `end: None` (`range_end == "\0"`) means every key `>= start`.
    Span {
        /// The first key (inclusive).
        start: &'a [u8],
        /// The end (exclusive); `None`: no end.
        end: Option<&'a [u8]>,
    },
}

impl<'a> KeyRange<'a> {
    /// The keys etcd's `(key, range_end)` pair names.
    pub fn new(key: &'a [u8], range_end: &'a [u8]) -> Self {
        match range_end {
            [] => KeyRange::Single(key),
            [0] => KeyRange::Span {
                start: key,
                end: None,
            },
            end => KeyRange::Span {
                start: key,
                end: Some(end),
            },
        }
    }

    pub(crate) fn contains(&self, key: &[u8]) -> bool {
        match *self {
            KeyRange::Single(k) => k == key,
            KeyRange::Span { start, end } => key >= start && end.is_none_or(|e| key < e),
        }
    }
}

/// The index of every key, ordered by key.
#[derive(Debug, Default)]
pub(crate) struct TreeIndex {
    keys: BTreeMap<Bytes, KeyHistory>,
    /// Keys live at the newest revision (etcd's `keys_total` gauge).
    live: usize,
}

impl TreeIndex {
    pub(crate) fn get(&self, key: &[u8], at: i64) -> Option<IndexEntry> {
        self.keys.get(key)?.get(at)
    }

    /// Visits every key in `range` that exists at `at`, in key order.
    pub(crate) fn visit(
        &self,
        range: KeyRange<'_>,
        at: i64,
        mut f: impl FnMut(&Bytes, IndexEntry),
    ) {
        self.visit_while(range, at, |k, e| {
            f(k, e);
            true
        });
    }

    /// Visits the keys in `range` that exist at `at`, in key order, while
    /// `f` returns true: a bounded read stops scanning where it stops.
    pub(crate) fn visit_while(
        &self,
        range: KeyRange<'_>,
        at: i64,
        mut f: impl FnMut(&Bytes, IndexEntry) -> bool,
    ) {
        match range {
            KeyRange::Single(key) => {
                if let Some((k, h)) = self.keys.get_key_value(key)
                    && let Some(e) = h.get(at)
                {
                    f(k, e);
                }
            }
            KeyRange::Span { start, end } => {
                if end.is_some_and(|e| start >= e) {
                    return;
                }
                let upper = end.map_or(Bound::Unbounded, Bound::Excluded);
                for (k, h) in self.keys.range::<[u8], _>((Bound::Included(start), upper)) {
                    if let Some(e) = h.get(at)
                        && !f(k, e)
                    {
                        return;
                    }
                }
            }
        }
    }

    /// Visits every change to a key in `range` with main revision in `from..=to`
    /// (deletions included), key by key.
    pub(crate) fn changes(
        &self,
        range: KeyRange<'_>,
        from: i64,
        to: i64,
        mut f: impl FnMut(&Bytes, Revision, bool),
    ) {
        match range {
            KeyRange::Single(key) => {
                if let Some((k, h)) = self.keys.get_key_value(key) {
                    h.changes(from, to, |r, del| f(k, r, del));
                }
            }
            KeyRange::Span { start, end } => {
                if end.is_some_and(|e| start >= e) {
                    return;
                }
                let upper = end.map_or(Bound::Unbounded, Bound::Excluded);
                for (k, h) in self.keys.range::<[u8], _>((Bound::Included(start), upper)) {
                    h.changes(from, to, |r, del| f(k, r, del));
                }
            }
        }
    }

    /// Records a put of a value whose key and value are `live_size` bytes;
    /// `create_revision` and `version` are used only when the put starts a
    /// new generation (normally `rev.main` and 1; from the stored value when
    /// rebuilding). Also returns the live size it replaced, if the key was live.
    pub(crate) fn put(
        &mut self,
        key: Bytes,
        rev: Revision,
        create_revision: i64,
        version: i64,
        live_size: u32,
    ) -> (IndexEntry, Option<u32>) {
        let h = self.keys.entry(key).or_default();
        let before = h.live();
        h.live_size = live_size;
        if before.is_none() {
            self.live += 1;
        }
        (h.put(rev, create_revision, version), before)
    }

    /// Records a deletion; returns the live size it ended, if the key was live.
    pub(crate) fn tombstone(&mut self, key: Bytes, rev: Revision) -> Option<u32> {
        let h = self.keys.entry(key).or_default();
        let before = h.live();
        h.tombstone(rev);
        if before.is_some() {
            self.live -= 1;
        }
        before
    }

    /// Compacts every key at `at`; returns the retained revisions `<= at`.
    pub(crate) fn compact(&mut self, at: i64) -> HashSet<Revision> {
        let mut keep = HashSet::new();
        self.keys.retain(|_, h| h.compact(at, &mut keep));
        keep
    }

    /// The revisions etcd's `kvindex.Keep(at)` returns (see [`KeyHistory::keep_at`]).
    pub(crate) fn keep(&self, at: i64) -> HashSet<Revision> {
        let mut keep = HashSet::new();
        for h in self.keys.values() {
            h.keep_at(at, &mut keep);
        }
        keep
    }

    /// Number of keys with any retained history, deleted ones included
    /// until compaction drops them.
    pub(crate) fn len(&self) -> usize {
        self.keys.len()
    }

    /// Number of keys that exist at the newest revision (etcd's
    /// `keys_total`: up on a create, down on a delete).
    pub(crate) fn live_len(&self) -> usize {
        self.live
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rev(main: i64) -> Revision {
        Revision::new(main, 0)
    }

    /// Key "foo": put 2, put 3, delete 4; put 6, put 7, delete 8; put 10.
    fn history() -> TreeIndex {
        let mut idx = TreeIndex::default();
        let k = Bytes::from_static(b"foo");
        idx.put(k.clone(), rev(2), 2, 1, 0);
        idx.put(k.clone(), rev(3), 2, 1, 0);
        idx.tombstone(k.clone(), rev(4));
        idx.put(k.clone(), rev(6), 6, 1, 0);
        idx.put(k.clone(), rev(7), 6, 1, 0);
        idx.tombstone(k.clone(), rev(8));
        idx.put(k, rev(10), 10, 1, 0);
        idx
    }

    #[test]
    fn live_keys_go_up_on_create_and_down_on_delete() {
        let mut idx = history();
        assert_eq!((idx.len(), idx.live_len()), (1, 1));
        let bar = Bytes::from_static(b"bar");
        idx.put(bar.clone(), rev(11), 11, 1, 0);
        idx.put(bar.clone(), rev(12), 11, 1, 0);
        assert_eq!(idx.live_len(), 2, "a second put of a key creates nothing");
        idx.tombstone(bar, rev(13));
        idx.tombstone(Bytes::from_static(b"foo"), rev(14));
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
        for &(at, kept) in cases {
            let full = history();
            let mut idx = history();
            let keep = idx.compact(at);
            let mut keep: Vec<i64> = keep.into_iter().map(|r| r.main).collect();
            keep.sort();
            assert_eq!(keep, kept, "compact at {at}");
            for r in at..=12 {
                assert_eq!(
                    idx.get(b"foo", r),
                    full.get(b"foo", r),
                    "read at {r} after compact at {at}"
                );
            }
        }
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
        let k = Bytes::from_static(b"k");
        idx.put(k.clone(), rev(2), 2, 1, 0);
        idx.tombstone(k.clone(), rev(3));
        idx.compact(3);
        assert_eq!(idx.len(), 1, "tombstone at the compaction revision is kept");
        idx.compact(4);
        assert_eq!(idx.len(), 0);

        let mut idx = TreeIndex::default();
        for (i, r) in (5..9).enumerate() {
            idx.put(k.clone(), rev(r), 5, 1, 0);
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
            idx.put(
                Bytes::from(k.as_bytes().to_vec()),
                rev(i as i64 + 2),
                i as i64 + 2,
                1,
                0,
            );
        }
        idx.tombstone(Bytes::from_static(b"c"), rev(6));
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
}
