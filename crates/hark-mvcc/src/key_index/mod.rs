//! The in-memory key index: for every key, the revisions at which it changed,
//! grouped into generations (one per life of the key, from creation to deletion).
//! Values live in the backend, addressed by revision; the index answers "which
//! revision holds this key's value at revision R" without touching the backend.
//!
//! Keys are held in key order in chunks of a few dozen, each one buffer of
//! front-coded keys and varint-encoded histories ([`chunk`], [`history`]),
//! found through a B-tree of the chunks' first keys. A key costs the bytes
//! its encoding takes, not a tree node's share, a key allocation and two
//! history vectors (docs/ARCHITECTURE.md, "The key index", has the figures);
//! a read decodes the chunk up to its key, a write re-encodes one chunk.

mod chunk;
mod history;
#[cfg(test)]
mod reference;

use std::collections::{BTreeMap, HashSet};
use std::ops::Bound;

use bytes::Bytes;
use imbl::OrdMap;

use self::chunk::{Chunk, ChunkWriter, Cursor};
use self::history::KeyHistory;
use crate::revision::Revision;

/// Most keys a chunk holds: one more splits it in two. A write re-encodes
/// its key's chunk, so this bounds a write's index work; fewer would add a
/// first key and a tree entry per chunk.
const CHUNK_MAX: usize = 32;
/// Keys per chunk when chunks are written anew (compaction): room for
/// writes before a chunk splits.
const CHUNK_FILL: usize = 24;

/// What the index knows about a live key at some revision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct IndexEntry {
    /// Revision of the change that produced the value (its `mod_revision` is `rev.main`).
    pub rev: Revision,
    pub create_revision: i64,
    pub version: i64,
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
/// Cloning costs a reference count: the map of chunks is persistent (its
/// nodes are shared until one side writes one, which then copies that node
/// and its path alone) and a chunk is written anew, never changed in place.
/// A checkpoint takes its copy under the committer's lock and writes it out
/// while the store goes on; a `BTreeMap` copy took 40 ms there at 5 M keys.
#[derive(Debug, Default, Clone)]
pub(crate) struct TreeIndex {
    /// Chunks by their first key.
    chunks: OrdMap<Bytes, Chunk>,
    /// Keys with any retained history.
    len: usize,
    /// Keys live at the newest revision (etcd's `keys_total` gauge).
    live: usize,
    /// The chunks' buffers and first keys, in bytes.
    bytes: usize,
}

impl TreeIndex {
    /// The first key of the chunk that holds `key`, or would hold it.
    fn chunk_for(&self, key: &[u8]) -> Option<&Bytes> {
        self.chunks
            .range::<_, [u8]>((Bound::Unbounded, Bound::Included(key)))
            .next_back()
            .or_else(|| self.chunks.iter().next())
            .map(|(first, _)| first)
    }

    /// Decodes `key`'s history into `history`; false if the index has no such key.
    fn find(&self, key: &[u8], history: &mut KeyHistory) -> bool {
        let Some(chunk) = self.chunk_for(key).and_then(|f| self.chunks.get(f)) else {
            return false;
        };
        let mut cursor = Cursor::new(&chunk.data);
        while let Some(bytes) = cursor.next() {
            match cursor.key.as_slice().cmp(key) {
                std::cmp::Ordering::Less => continue,
                std::cmp::Ordering::Equal => return decode(history, bytes),
                std::cmp::Ordering::Greater => return false,
            }
        }
        false
    }

    /// Visits `(key, encoded history)` for the keys in `[start, end)` in
    /// order, while `f` returns true.
    fn scan(&self, start: &[u8], end: Option<&[u8]>, mut f: impl FnMut(&[u8], &[u8]) -> bool) {
        if end.is_some_and(|e| start >= e) {
            return;
        }
        let Some(first) = self.chunk_for(start) else {
            return;
        };
        let chunks = self
            .chunks
            .range::<_, [u8]>((Bound::Included(first.as_ref()), Bound::Unbounded));
        for (_, chunk) in chunks {
            let mut cursor = Cursor::new(&chunk.data);
            while let Some(bytes) = cursor.next() {
                if cursor.key.as_slice() < start {
                    continue;
                }
                if end.is_some_and(|e| cursor.key.as_slice() >= e) || !f(&cursor.key, bytes) {
                    return;
                }
            }
        }
    }

    pub(crate) fn get(&self, key: &[u8], at: i64) -> Option<IndexEntry> {
        let mut history = KeyHistory::default();
        if self.find(key, &mut history) {
            history.get(at)
        } else {
            None
        }
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
                if let Some(e) = self.get(key, at) {
                    f(key, e);
                }
            }
            KeyRange::Span { start, end } => {
                let mut history = KeyHistory::default();
                self.scan(start, end, |k, bytes| {
                    if !decode(&mut history, bytes) {
                        return true;
                    }
                    match history.get(at) {
                        Some(e) => f(k, e),
                        None => true,
                    }
                });
            }
        }
    }

    /// How many keys in `range`, after `after` if given, exist at `at`.
    /// A chunk wholly inside the range whose newest change is at or before
    /// `at` counts from its summary, undecoded: a count over millions of
    /// keys decodes only the chunks at its ends and those written since
    /// `at`.
    pub(crate) fn count(&self, range: KeyRange<'_>, after: Option<&[u8]>, at: i64) -> usize {
        let (start, end) = match range {
            KeyRange::Single(key) => {
                let counted = after.is_none_or(|a| key > a) && self.get(key, at).is_some();
                return usize::from(counted);
            }
            KeyRange::Span { start, end } => (start, end),
        };
        // Counting from `start`, past it too when it is `after`.
        let (start, exclusive) = match after {
            Some(a) if a >= start => (a, true),
            _ => (start, false),
        };
        if end.is_some_and(|e| start >= e) {
            return 0;
        }
        let Some(first) = self.chunk_for(start) else {
            return 0;
        };
        let mut chunks = self
            .chunks
            .range::<_, [u8]>((Bound::Included(first.as_ref()), Bound::Unbounded))
            .peekable();
        let mut count = 0;
        let mut history = KeyHistory::default();
        while let Some((first, chunk)) = chunks.next() {
            if end.is_some_and(|e| first.as_ref() >= e) {
                break;
            }
            let from_start = if exclusive {
                first.as_ref() > start
            } else {
                first.as_ref() >= start
            };
            // Every key of the chunk is before the next chunk's first.
            let to_end = match end {
                None => true,
                Some(e) => chunks.peek().is_some_and(|(next, _)| next.as_ref() <= e),
            };
            let inside = from_start && to_end;
            if inside && chunk.newest <= at {
                count += chunk.live;
                continue;
            }
            let mut cursor = Cursor::new(&chunk.data);
            while let Some(bytes) = cursor.next() {
                let key = cursor.key.as_slice();
                if key < start || (exclusive && key == start) {
                    continue;
                }
                if end.is_some_and(|e| key >= e) {
                    return count;
                }
                if decode(&mut history, bytes) && history.get(at).is_some() {
                    count += 1;
                }
            }
        }
        count
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
        let mut history = KeyHistory::default();
        match range {
            KeyRange::Single(key) => {
                if self.find(key, &mut history) {
                    history.changes(from, to, |r, del| f(key, r, del));
                }
            }
            KeyRange::Span { start, end } => self.scan(start, end, |k, bytes| {
                if decode(&mut history, bytes) {
                    history.changes(from, to, |r, del| f(k, r, del));
                }
                true
            }),
        }
    }

    /// Changes `key`'s history with `change` (an empty history if the index
    /// has no such key; it must not leave it empty) by writing its chunk
    /// anew, in two if it outgrew [`CHUNK_MAX`].
    fn update<R>(&mut self, key: &[u8], change: impl FnOnce(&mut KeyHistory) -> R) -> R {
        let first = self.chunk_for(key).cloned();
        let old = first
            .as_ref()
            .and_then(|f| self.chunks.remove(f))
            .unwrap_or_default();
        self.bytes -= first.as_ref().map_or(0, Bytes::len) + old.data.len();
        // Split only when the key is new and the chunk full: halves leave
        // room for the next writes.
        let half = old.keys.div_ceil(2).max(1);
        let mut out = vec![ChunkWriter::with_capacity(old.data.len() + key.len() + 16)];
        let push = |out: &mut Vec<ChunkWriter>, k: &[u8], h: &[u8], split: bool| {
            let full = out.last().is_some_and(|w| split && w.keys >= half);
            if full {
                out.push(ChunkWriter::with_capacity(
                    old.data.len() / 2 + k.len() + 16,
                ));
            }
            if let Some(w) = out.last_mut() {
                w.push(k, h);
            }
        };
        let mut history = KeyHistory::default();
        let mut encoded = Vec::new();
        let mut change = Some(change);
        let mut result = None;
        let split = old.keys >= CHUNK_MAX;
        let mut cursor = Cursor::new(&old.data);
        loop {
            let next = cursor.next();
            let at_key = next.is_none() || cursor.key.as_slice() >= key;
            if at_key && let Some(change) = change.take() {
                let exists = next.is_some() && cursor.key == key;
                if let Some(bytes) = next.filter(|_| exists) {
                    decode(&mut history, bytes);
                }
                result = Some(change(&mut history));
                debug_assert!(!history.is_empty(), "a change leaves history behind");
                history.encode(&mut encoded);
                push(&mut out, key, &encoded, split);
                if exists {
                    continue;
                }
            }
            match next {
                Some(bytes) => push(&mut out, &cursor.key, bytes, split),
                None => break,
            }
        }
        for mut writer in out {
            if let Some((first_key, chunk)) = writer.finish() {
                let name = match &first {
                    Some(f) if f.as_ref() == first_key.as_slice() => f.clone(),
                    _ => Bytes::copy_from_slice(&first_key),
                };
                self.bytes += name.len() + chunk.data.len();
                self.chunks.insert(name, chunk);
            }
        }
        result.expect("the change ran")
    }

    /// Records a put of a value whose key and value are `live_size` bytes;
    /// `create_revision` and `version` are used only when the put starts a
    /// new generation (normally `rev.main` and 1; from the stored value when
    /// rebuilding). Also returns the live size it replaced, if the key was live.
    pub(crate) fn put(
        &mut self,
        key: &[u8],
        rev: Revision,
        create_revision: i64,
        version: i64,
        live_size: u32,
    ) -> (IndexEntry, Option<u32>) {
        let (entry, before, new) = self.update(key, |h| {
            let new = h.is_empty();
            let before = h.live();
            h.live_size = live_size;
            (h.put(rev, create_revision, version), before, new)
        });
        self.len += usize::from(new);
        if before.is_none() {
            self.live += 1;
        }
        (entry, before)
    }

    /// Records a deletion; returns the live size it ended, if the key was live.
    pub(crate) fn tombstone(&mut self, key: &[u8], rev: Revision) -> Option<u32> {
        let (before, new) = self.update(key, |h| {
            let new = h.is_empty();
            let before = h.live();
            h.tombstone(rev);
            (before, new)
        });
        self.len += usize::from(new);
        if before.is_some() {
            self.live -= 1;
        }
        before
    }

    /// Compacts every key at `at`; returns the revisions it dropped (whose
    /// rows the store deletes). Every chunk is written anew, [`CHUNK_FILL`]
    /// keys each.
    pub(crate) fn compact(&mut self, at: i64) -> Vec<Dropped> {
        let mut progress = IndexCompaction::default();
        while !self.compact_step(at, &mut progress, usize::MAX) {}
        progress.dropped
    }

    /// Compacts at `at` the next `chunks` chunks after where `progress`
    /// got to, writing them anew ([`CHUNK_FILL`] keys each); true once
    /// every chunk has been. Between steps the index may take any puts and
    /// tombstones (all above `at`, as the store's compaction bar makes
    /// them): a key they add after the last compacted one is new, so needs
    /// no compaction, and each unvisited chunk's first key stays after it.
    /// Reads at `at` or later answer the same from a half-compacted index:
    /// compaction only drops revisions a read there cannot reach.
    pub(crate) fn compact_step(
        &mut self,
        at: i64,
        progress: &mut IndexCompaction,
        chunks: usize,
    ) -> bool {
        let after = match &progress.after {
            Some(after) => Bound::Excluded(after.as_slice()),
            None => Bound::Unbounded,
        };
        let firsts: Vec<Bytes> = self
            .chunks
            .range::<_, [u8]>((after, Bound::Unbounded))
            .take(chunks)
            .map(|(first, _)| first.clone())
            .collect();
        let Some(last_first) = firsts.last() else {
            return true;
        };
        let finished = firsts.len() < chunks;
        let last_first = last_first.clone();
        let mut writer = ChunkWriter::default();
        let mut history = KeyHistory::default();
        let mut encoded = Vec::new();
        for first in firsts {
            let Some(chunk) = self.chunks.remove(&first) else {
                continue;
            };
            self.bytes -= first.len() + chunk.data.len();
            self.len -= chunk.keys;
            let mut cursor = Cursor::new(&chunk.data);
            while let Some(bytes) = cursor.next() {
                if !decode(&mut history, bytes) {
                    continue;
                }
                let was_live = history.live().is_some();
                let kept = history.compact(at, &mut progress.dropped);
                self.live -= usize::from(was_live);
                if !kept {
                    continue;
                }
                self.len += 1;
                self.live += usize::from(history.live().is_some());
                encoded.clear();
                history.encode(&mut encoded);
                writer.push(&cursor.key, &encoded);
                if writer.keys >= CHUNK_FILL {
                    self.insert_finished(&mut writer);
                }
            }
            if first == last_first {
                progress.after = Some(cursor.key);
            }
        }
        self.insert_finished(&mut writer);
        finished
    }

    fn insert_finished(&mut self, writer: &mut ChunkWriter) {
        if let Some((first, chunk)) = writer.finish() {
            self.bytes += first.len() + chunk.data.len();
            self.chunks.insert(Bytes::copy_from_slice(&first), chunk);
        }
    }

    /// The revisions etcd's `kvindex.Keep(at)` returns (see [`KeyHistory::keep_at`]).
    pub(crate) fn keep(&self, at: i64) -> HashSet<Revision> {
        let mut keep = HashSet::new();
        let mut history = KeyHistory::default();
        self.scan(&[], None, |_, bytes| {
            if decode(&mut history, bytes) {
                history.keep_at(at, &mut keep);
            }
            true
        });
        keep
    }

    /// Number of keys with any retained history, deleted ones included
    /// until compaction drops them.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Number of keys that exist at the newest revision (etcd's
    /// `keys_total`: up on a create, down on a delete).
    pub(crate) fn live_len(&self) -> usize {
        self.live
    }

    /// Bytes the index's chunks hold (their buffers and first keys; not the
    /// tree's nodes): the `hark_mvcc_key_index_bytes` gauge.
    pub(crate) fn chunk_bytes(&self) -> usize {
        self.bytes
    }
}

/// How far a compaction of the index done a step at a time
/// ([`TreeIndex::compact_step`]) has got.
#[derive(Debug, Default)]
pub(crate) struct IndexCompaction {
    /// The last key compacted; `None` before the first step.
    after: Option<Vec<u8>>,
    /// The revisions the steps dropped (since the caller last took them):
    /// the rows the compaction's physical part deletes.
    pub(crate) dropped: Vec<Dropped>,
}

/// A revision a compaction dropped from the index: no read at or after the
/// compaction needs its row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Dropped {
    pub(crate) rev: Revision,
    /// The row is a deletion's (its key says so).
    pub(crate) tombstone: bool,
}

/// One row's change to a key while an index is built.
#[derive(Debug, Clone, Copy)]
struct Pending {
    rev: Revision,
    /// For a put: the stored value's create revision, version and live size.
    put: Option<(i64, i64, u32)>,
}

/// Changes gathered before they are merged into the chunks: about this
/// many (a few hundred bytes each) are held at once.
const BUILD_BATCH: usize = 1 << 20;

/// Builds a [`TreeIndex`] from rows in revision order (a store's open):
/// changes gather in a plain map and are merged into the chunks in key
/// order a batch at a time, so a row costs a map insert, not a chunk
/// written anew.
pub(crate) struct IndexBuilder {
    index: TreeIndex,
    pending: BTreeMap<Bytes, Vec<Pending>>,
    pending_rows: usize,
    /// Rows gathered before a merge ([`BUILD_BATCH`]; tests merge sooner).
    batch: usize,
}

impl Default for IndexBuilder {
    fn default() -> Self {
        IndexBuilder {
            index: TreeIndex::default(),
            pending: BTreeMap::new(),
            pending_rows: 0,
            batch: BUILD_BATCH,
        }
    }
}

impl IndexBuilder {
    /// A put at `rev` of a value with this create revision, version and live size.
    pub(crate) fn put(
        &mut self,
        key: &Bytes,
        rev: Revision,
        create_revision: i64,
        version: i64,
        live_size: u32,
    ) {
        self.add(
            key,
            Pending {
                rev,
                put: Some((create_revision, version, live_size)),
            },
        );
    }

    /// A deletion at `rev`.
    pub(crate) fn tombstone(&mut self, key: &Bytes, rev: Revision) {
        self.add(key, Pending { rev, put: None });
    }

    fn add(&mut self, key: &Bytes, change: Pending) {
        match self.pending.get_mut(key.as_ref()) {
            Some(changes) => changes.push(change),
            None => {
                self.pending.insert(key.clone(), vec![change]);
            }
        }
        self.pending_rows += 1;
        if self.pending_rows >= self.batch {
            self.merge();
        }
    }

    /// Merges the gathered changes into the chunks: one pass in key order;
    /// a chunk no change falls in is kept as it is.
    fn merge(&mut self) {
        let pending = std::mem::take(&mut self.pending);
        self.pending_rows = 0;
        if pending.is_empty() {
            return;
        }
        let index = &mut self.index;
        let old = std::mem::take(&mut index.chunks);
        index.bytes = 0;
        let mut pending = pending.into_iter().peekable();
        let mut writer = ChunkWriter::default();
        let mut history = KeyHistory::default();
        let mut encoded = Vec::new();
        let mut old = old.into_iter().peekable();
        while let Some((first, chunk)) = old.next() {
            let next_first = old.peek().map(|(f, _)| f.clone());
            let touched = pending
                .peek()
                .is_some_and(|(k, _)| next_first.as_ref().is_none_or(|n| k < n));
            if !touched {
                // A chunk being written must not span this one's keys.
                index.insert_finished(&mut writer);
                index.bytes += first.len() + chunk.data.len();
                index.chunks.insert(first, chunk);
                continue;
            }
            let mut cursor = Cursor::new(&chunk.data);
            while let Some(bytes) = cursor.next() {
                while let Some((key, changes)) =
                    pending.next_if(|(k, _)| k.as_ref() < cursor.key.as_slice())
                {
                    history.clear();
                    index.replay(&key, &changes, &mut history, &mut writer, &mut encoded);
                }
                if let Some((key, changes)) =
                    pending.next_if(|(k, _)| k.as_ref() == cursor.key.as_slice())
                {
                    if decode(&mut history, bytes) {
                        index.len -= 1;
                        index.live -= usize::from(history.live().is_some());
                    }
                    index.replay(&key, &changes, &mut history, &mut writer, &mut encoded);
                } else {
                    writer.push(&cursor.key, bytes);
                    if writer.keys >= CHUNK_FILL {
                        index.insert_finished(&mut writer);
                    }
                }
            }
            // Keys past this chunk's last but before the next chunk's first.
            while let Some((key, changes)) =
                pending.next_if(|(k, _)| next_first.as_ref().is_none_or(|n| k < n))
            {
                history.clear();
                index.replay(&key, &changes, &mut history, &mut writer, &mut encoded);
            }
        }
        for (key, changes) in pending {
            history.clear();
            index.replay(&key, &changes, &mut history, &mut writer, &mut encoded);
        }
        index.insert_finished(&mut writer);
    }

    /// The index of every row given.
    pub(crate) fn finish(mut self) -> TreeIndex {
        self.merge();
        self.index
    }
}

impl TreeIndex {
    /// Applies a key's gathered `changes` to its `history` and writes it.
    fn replay(
        &mut self,
        key: &[u8],
        changes: &[Pending],
        history: &mut KeyHistory,
        writer: &mut ChunkWriter,
        encoded: &mut Vec<u8>,
    ) {
        for c in changes {
            match c.put {
                Some((create_revision, version, live_size)) => {
                    history.live_size = live_size;
                    history.put(c.rev, create_revision, version);
                }
                None => history.tombstone(c.rev),
            }
        }
        self.len += 1;
        self.live += usize::from(history.live().is_some());
        encoded.clear();
        history.encode(encoded);
        writer.push(key, encoded);
        if writer.keys >= CHUNK_FILL {
            self.insert_finished(writer);
        }
    }

    /// Visits every live key and its live size (key plus value bytes).
    pub(crate) fn visit_live_sizes(&self, mut f: impl FnMut(&[u8], u32)) {
        let mut history = KeyHistory::default();
        self.scan(&[], None, |k, bytes| {
            if decode(&mut history, bytes)
                && let Some(size) = history.live()
            {
                f(k, size);
            }
            true
        });
    }
}

/// One chunk as a checkpoint stores it: its first key, its number of keys
/// and its encoded entries.
pub(crate) struct StoredChunk {
    pub first: Bytes,
    pub keys: usize,
    pub data: Bytes,
}

impl TreeIndex {
    /// Visits every chunk in key order as `(first key, keys, entries)`,
    /// while `f` returns `Ok`.
    pub(crate) fn try_for_each_chunk<E>(
        &self,
        mut f: impl FnMut(&[u8], usize, &[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        for (first, chunk) in &self.chunks {
            f(first, chunk.keys, &chunk.data)?;
        }
        Ok(())
    }

    /// Number of chunks.
    pub(crate) fn chunk_count(&self) -> usize {
        self.chunks.len()
    }

    /// The index made of `chunks` (what [`TreeIndex::try_for_each_chunk`]
    /// gave, read back), checked as untrusted bytes: every entry decodes,
    /// each chunk holds the keys it says from the first key it says, and
    /// keys ascend across chunks. `None` if any of that fails.
    pub(crate) fn from_chunks(chunks: Vec<StoredChunk>) -> Option<TreeIndex> {
        let mut index = TreeIndex::default();
        let mut history = KeyHistory::default();
        let mut prev = Vec::new();
        let mut any = false;
        for c in chunks {
            let mut cursor = Cursor::new(&c.data);
            let (mut keys, mut live, mut newest) = (0, 0, 0);
            while let Some(bytes) = cursor.checked_next().ok()? {
                if keys == 0 && cursor.key.as_slice() != c.first.as_ref() {
                    return None;
                }
                if any && prev.as_slice() >= cursor.key.as_slice() {
                    return None;
                }
                history.decode_from(bytes)?;
                if history.is_empty() {
                    return None;
                }
                index.len += 1;
                live += usize::from(history.live().is_some());
                newest = newest.max(history.newest()?);
                keys += 1;
                any = true;
                prev.clear();
                prev.extend_from_slice(&cursor.key);
            }
            if keys == 0 || keys != c.keys {
                return None;
            }
            index.bytes += c.first.len() + c.data.len();
            index.live += live;
            let chunk = Chunk {
                data: c.data,
                keys,
                live,
                newest,
            };
            index.chunks.insert(c.first, chunk);
        }
        Some(index)
    }
}

/// [`KeyHistory::decode_from`] for the index's own chunks.
fn decode(history: &mut KeyHistory, bytes: &[u8]) -> bool {
    let decoded = history.decode_from(bytes).is_some();
    debug_assert!(decoded, "the index's chunks hold what its writer wrote");
    decoded
}

#[cfg(test)]
mod tests;
