//! The key index as it was first written, a tree node, a key and two
//! vectors per key: the model the chunked index is checked against
//! (`tests.rs`). Simple on purpose; not used outside tests.

use std::collections::{BTreeMap, HashSet};
use std::ops::Bound;

use bytes::Bytes;

use super::{IndexEntry, KeyRange};
use crate::revision::Revision;

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
struct KeyHistory {
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

/// The index of every key, ordered by key.
#[derive(Debug, Default)]
pub(crate) struct Reference {
    keys: BTreeMap<Bytes, KeyHistory>,
    /// Keys live at the newest revision (etcd's `keys_total` gauge).
    live: usize,
}

impl Reference {
    pub(crate) fn get(&self, key: &[u8], at: i64) -> Option<IndexEntry> {
        self.keys.get(key)?.get(at)
    }

    /// Visits every key in `range` that exists at `at`, in key order.
    pub(crate) fn visit(&self, range: KeyRange<'_>, at: i64, mut f: impl FnMut(&[u8], IndexEntry)) {
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
        mut f: impl FnMut(&[u8], IndexEntry) -> bool,
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
        mut f: impl FnMut(&[u8], Revision, bool),
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
