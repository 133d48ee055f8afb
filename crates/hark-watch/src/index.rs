//! Compact bookkeeping of watchers: a slab with intrusive links, and the index
//! that finds the watchers of a key. Built for memory: an idle watcher costs
//! its slab entry (64 bytes, short keys inline) plus one hash-table slot.

use std::collections::HashMap;
use std::hash::{BuildHasher, BuildHasherDefault, Hasher, RandomState};

use bytes::Bytes;
use hark_mvcc::KeyRange;

use crate::response::WatchId;

pub(crate) type Slot = u32;
pub(crate) const NIL: Slot = u32::MAX;

const INLINE: usize = 22;

/// The keys a watcher covers. Keys up to 22 bytes are stored inline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Keys {
    Short { len: u8, buf: [u8; INLINE] },
    Long(Box<[u8]>),
    Span(Box<Span>),
}

/// `[start, end)`; `end: None` means every key `>= start`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Span {
    start: Box<[u8]>,
    end: Option<Box<[u8]>>,
}

impl Keys {
    pub(crate) fn new(key: &Bytes, range_end: &Bytes) -> Keys {
        match KeyRange::new(key, range_end) {
            KeyRange::Single(k) if k.len() <= INLINE => {
                let mut buf = [0; INLINE];
                buf[..k.len()].copy_from_slice(k);
                Keys::Short {
                    len: k.len() as u8,
                    buf,
                }
            }
            KeyRange::Single(k) => Keys::Long(k.into()),
            KeyRange::Span { start, end } => Keys::Span(Box::new(Span {
                start: start.into(),
                end: end.map(Into::into),
            })),
        }
    }

    /// The one key watched, if it is a single key.
    pub(crate) fn single(&self) -> Option<&[u8]> {
        match self {
            Keys::Short { len, buf } => Some(&buf[..*len as usize]),
            Keys::Long(k) => Some(k),
            Keys::Span(_) => None,
        }
    }

    pub(crate) fn contains(&self, key: &[u8]) -> bool {
        match self {
            Keys::Span(span) => key >= &*span.start && span.end.as_deref().is_none_or(|e| key < e),
            one => one.single() == Some(key),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum State {
    Synced,
    Unsynced,
    /// Its stream was full; the batch it could not deliver waits in the stream's
    /// victim queue.
    Victim,
}

pub(crate) struct Watcher {
    pub id: WatchId,
    /// The next revision this watcher needs.
    pub min_rev: i64,
    pub start_rev: i64,
    pub keys: Keys,
    pub stream: u32,
    /// Links in its index chain (while indexed).
    prev: Slot,
    next: Slot,
    pub flags: u8,
    pub state: State,
}

pub(crate) const NO_PUT: u8 = 1;
pub(crate) const NO_DELETE: u8 = 2;
pub(crate) const PREV_KV: u8 = 4;
pub(crate) const PROGRESS_NOTIFY: u8 = 8;
/// Events went out since the last progress-notify tick.
pub(crate) const SENT_SINCE_TICK: u8 = 16;

impl Watcher {
    pub(crate) fn new(
        id: WatchId,
        stream: u32,
        keys: Keys,
        min_rev: i64,
        start_rev: i64,
        flags: u8,
    ) -> Self {
        Watcher {
            id,
            min_rev,
            start_rev,
            keys,
            stream,
            prev: NIL,
            next: NIL,
            flags,
            state: State::Unsynced,
        }
    }

    pub(crate) fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }
}

#[derive(Default)]
pub(crate) struct Slab {
    entries: Vec<Option<Watcher>>,
    free: Vec<Slot>,
    pub len: usize,
}

impl Slab {
    pub(crate) fn insert(&mut self, w: Watcher) -> Slot {
        self.len += 1;
        match self.free.pop() {
            Some(s) => {
                self.entries[s as usize] = Some(w);
                s
            }
            None => {
                self.entries.push(Some(w));
                (self.entries.len() - 1) as Slot
            }
        }
    }

    pub(crate) fn remove(&mut self, s: Slot) -> Watcher {
        self.len -= 1;
        self.free.push(s);
        self.entries[s as usize].take().expect("live slot")
    }

    pub(crate) fn get(&self, s: Slot) -> &Watcher {
        self.entries[s as usize].as_ref().expect("live slot")
    }

    pub(crate) fn get_mut(&mut self, s: Slot) -> &mut Watcher {
        self.entries[s as usize].as_mut().expect("live slot")
    }

    pub(crate) fn iter_mut(&mut self) -> impl Iterator<Item = &mut Watcher> {
        self.entries.iter_mut().flatten()
    }
}

/// A hasher for keys that are already hashes.
#[derive(Default)]
pub(crate) struct PassThrough(u64);

impl Hasher for PassThrough {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// Finds the watchers of a key. Single-key watchers hang in chains from a table
/// keyed by the key's hash (a chain may mix keys whose hashes collide, so the
/// walk compares keys); range watchers hang in one chain per distinct range.
/// Chains are intrusive (`Watcher::prev/next`), so the index itself holds one
/// table slot per distinct key.
#[derive(Default)]
pub(crate) struct KeyIndex {
    hasher: RandomState,
    heads: HashMap<u64, Slot, BuildHasherDefault<PassThrough>>,
    /// Head of each distinct range's chain.
    spans: Vec<Slot>,
}

impl KeyIndex {
    fn hash(&self, key: &[u8]) -> u64 {
        self.hasher.hash_one(key)
    }

    pub(crate) fn insert(&mut self, slot: Slot, slab: &mut Slab) {
        let head = match slab.get(slot).keys.single() {
            Some(key) => {
                let h = self.hash(key);
                self.heads.insert(h, slot).unwrap_or(NIL)
            }
            None => {
                let keys = &slab.get(slot).keys;
                match self.spans.iter().position(|&h| slab.get(h).keys == *keys) {
                    Some(i) => std::mem::replace(&mut self.spans[i], slot),
                    None => {
                        self.spans.push(slot);
                        NIL
                    }
                }
            }
        };
        let w = slab.get_mut(slot);
        w.prev = NIL;
        w.next = head;
        if head != NIL {
            slab.get_mut(head).prev = slot;
        }
    }

    pub(crate) fn remove(&mut self, slot: Slot, slab: &mut Slab) {
        let (prev, next) = {
            let w = slab.get(slot);
            (w.prev, w.next)
        };
        if next != NIL {
            slab.get_mut(next).prev = prev;
        }
        if prev != NIL {
            slab.get_mut(prev).next = next;
            return;
        }
        // It was the head of its chain.
        match slab.get(slot).keys.single() {
            Some(key) => {
                let h = self.hash(key);
                if next == NIL {
                    self.heads.remove(&h);
                } else {
                    self.heads.insert(h, next);
                }
            }
            None => {
                let i = self
                    .spans
                    .iter()
                    .position(|&h| h == slot)
                    .expect("indexed range");
                if next == NIL {
                    self.spans.swap_remove(i);
                } else {
                    self.spans[i] = next;
                }
            }
        }
    }

    /// Calls `f` for every indexed watcher whose keys include `key`.
    pub(crate) fn matching(&self, key: &[u8], slab: &Slab, mut f: impl FnMut(Slot)) {
        if let Some(&head) = self.heads.get(&self.hash(key)) {
            let mut s = head;
            while s != NIL {
                let w = slab.get(s);
                if w.keys.single() == Some(key) {
                    f(s);
                }
                s = w.next;
            }
        }
        for &head in &self.spans {
            if slab.get(head).keys.contains(key) {
                let mut s = head;
                while s != NIL {
                    f(s);
                    s = slab.get(s).next;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn watcher(key: &str, end: &str) -> Watcher {
        Watcher::new(
            0,
            0,
            Keys::new(&Bytes::from(key.to_string()), &Bytes::from(end.to_string())),
            0,
            0,
            0,
        )
    }

    #[test]
    fn index_finds_watchers_and_survives_removal_in_any_order() {
        let mut slab = Slab::default();
        let mut idx = KeyIndex::default();
        let long = "k".repeat(40);
        let specs = [
            ("a", ""),
            ("a", ""),
            ("b", ""),
            (long.as_str(), ""),
            ("a", "c"),
            ("a", "c"),
            ("b", "\0"),
        ];
        let slots: Vec<Slot> = specs
            .iter()
            .map(|(k, e)| slab.insert(watcher(k, e)))
            .collect();
        for &s in &slots {
            idx.insert(s, &mut slab);
        }
        let find = |idx: &KeyIndex, slab: &Slab, key: &str| {
            let mut v = vec![];
            idx.matching(key.as_bytes(), slab, |s| v.push(s));
            v.sort();
            v
        };
        assert_eq!(find(&idx, &slab, "a"), [0, 1, 4, 5]);
        assert_eq!(find(&idx, &slab, "b"), [2, 4, 5, 6]);
        assert_eq!(find(&idx, &slab, &long), [3, 6]);
        assert_eq!(find(&idx, &slab, "c"), [6]);
        assert!(find(&idx, &slab, "0").is_empty());
        for &s in &[1, 4, 0, 6] {
            idx.remove(s, &mut slab);
        }
        assert_eq!(find(&idx, &slab, "a"), [5]);
        assert_eq!(find(&idx, &slab, "b"), [2, 5]);
        for &s in &[5, 2, 3] {
            idx.remove(s, &mut slab);
        }
        assert!(idx.heads.is_empty() && idx.spans.is_empty());
    }

    #[test]
    fn short_keys_are_inline_and_watchers_stay_small() {
        assert!(matches!(
            Keys::new(&Bytes::from("x".repeat(22)), &Bytes::new()),
            Keys::Short { .. }
        ));
        assert!(matches!(
            Keys::new(&Bytes::from("x".repeat(23)), &Bytes::new()),
            Keys::Long(_)
        ));
        assert_eq!(std::mem::size_of::<Keys>(), 24);
        assert_eq!(std::mem::size_of::<Option<Watcher>>(), 64);
    }
}
