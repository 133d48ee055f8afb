//! Compact bookkeeping of watchers: a slab with intrusive links, and the index
//! that finds the watchers of a key. Built for memory: an idle watcher costs
//! its slab entry (64 bytes, short keys inline) plus one hash-table slot.

use std::collections::{BTreeMap, HashMap};
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
    Short {
        len: u8,
        buf: [u8; INLINE],
    },
    Long(Box<[u8]>),
    /// Every key starting with these bytes (etcd's `WithPrefix` range).
    Prefix(Box<[u8]>),
    /// Every key `>= start` (`range_end == "\0"`).
    From(Box<[u8]>),
    /// Any other `[start, end)`.
    Span(Box<Span>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Span {
    start: Box<[u8]>,
    end: Box<[u8]>,
}

/// The end of the range of keys starting with `prefix` (etcd's
/// `GetPrefixRangeEnd`); `None` when every byte is 0xff (no end).
fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let end = hark_mvcc::prefix_end(prefix);
    (end[..] != b"\0"[..]).then(|| end.to_vec())
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
            KeyRange::Span { start, end: None } => Keys::From(start.into()),
            KeyRange::Span {
                start,
                end: Some(end),
            } if !start.is_empty() && prefix_end(start).as_deref() == Some(end) => {
                Keys::Prefix(start.into())
            }
            KeyRange::Span {
                start,
                end: Some(end),
            } => Keys::Span(Box::new(Span {
                start: start.into(),
                end: end.into(),
            })),
        }
    }

    /// The one key watched, if it is a single key.
    pub(crate) fn single(&self) -> Option<&[u8]> {
        match self {
            Keys::Short { len, buf } => Some(&buf[..*len as usize]),
            Keys::Long(k) => Some(k),
            Keys::Prefix(_) | Keys::From(_) | Keys::Span(_) => None,
        }
    }

    pub(crate) fn contains(&self, key: &[u8]) -> bool {
        match self {
            Keys::Prefix(p) => key.starts_with(p),
            Keys::From(start) => key >= &**start,
            Keys::Span(span) => key >= &*span.start && key < &*span.end,
            one => one.single() == Some(key),
        }
    }

    fn open_start(&self) -> &[u8] {
        match self {
            Keys::From(start) => start,
            _ => unreachable!("only from-key watchers are in the sorted list"),
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
/// Its event responses may be split (etcd's `fragment`).
pub(crate) const FRAGMENT: u8 = 32;

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

    /// Every live watcher's slot.
    pub(crate) fn live_slots(&self) -> Vec<Slot> {
        (0..self.entries.len() as Slot)
            .filter(|&s| self.entries[s as usize].is_some())
            .collect()
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

/// Finds the watchers of a key, at a cost that follows what matches, not how
/// many watchers there are (an interval tree's job, specialised to the ranges
/// etcd clients use). Watchers hang in intrusive chains (`Watcher::prev/next`),
/// so the index itself holds one slot per distinct key or range:
/// * single keys: a table from the key's hash to its chain;
/// * prefixes: the same, keyed by the prefix; a key probes only the prefix
///   lengths in use;
/// * from-key ranges: chains sorted by start; all with start <= key match;
/// * other ranges (and colliding keys): one chain per distinct range, checked
///   one by one.
///
/// Every chain holds watchers of one identical key or range, so a walk only
/// compares its head.
#[derive(Default)]
pub(crate) struct KeyIndex<S = RandomState> {
    hasher: S,
    keys: HashMap<u64, Slot, BuildHasherDefault<PassThrough>>,
    prefixes: HashMap<u64, Slot, BuildHasherDefault<PassThrough>>,
    /// Prefix length → prefix watchers of that length.
    prefix_lens: BTreeMap<usize, usize>,
    from_keys: Vec<Slot>,
    /// Heads of the chains checked one by one: arbitrary ranges, and the rare
    /// key or prefix whose hash collides with another's.
    listed: Vec<Slot>,
}

impl<S: BuildHasher> KeyIndex<S> {
    pub(crate) fn insert(&mut self, slot: Slot, slab: &mut Slab) {
        let keys = &slab.get(slot).keys;
        let head = match keys {
            Keys::From(start) => {
                match self
                    .from_keys
                    .binary_search_by(|&h| slab.get(h).keys.open_start().cmp(start))
                {
                    Ok(i) => std::mem::replace(&mut self.from_keys[i], slot),
                    Err(i) => {
                        self.from_keys.insert(i, slot);
                        NIL
                    }
                }
            }
            Keys::Span(_) => self.push_listed(slot, slab),
            hashed => {
                if let Keys::Prefix(p) = hashed {
                    *self.prefix_lens.entry(p.len()).or_default() += 1;
                }
                let (table, h) = self.table_of(hashed);
                match table.get(&h) {
                    // A chain holds one key only, so a walk needs no comparisons.
                    Some(&head) if slab.get(head).keys == *keys => {
                        table.insert(h, slot);
                        head
                    }
                    // A different key with the same hash: rare, so listed.
                    Some(_) => self.push_listed(slot, slab),
                    None => {
                        table.insert(h, slot);
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

    /// The hash table for single keys or prefixes, and the key's hash in it.
    fn table_of(
        &mut self,
        keys: &Keys,
    ) -> (
        &mut HashMap<u64, Slot, BuildHasherDefault<PassThrough>>,
        u64,
    ) {
        match keys {
            Keys::Prefix(p) => (&mut self.prefixes, self.hasher.hash_one(&**p)),
            one => (
                &mut self.keys,
                self.hasher.hash_one(one.single().expect("single key")),
            ),
        }
    }

    /// Joins the listed chain of equal keys, or starts one; returns the old head.
    fn push_listed(&mut self, slot: Slot, slab: &Slab) -> Slot {
        let keys = &slab.get(slot).keys;
        match self.listed.iter().position(|&h| slab.get(h).keys == *keys) {
            Some(i) => std::mem::replace(&mut self.listed[i], slot),
            None => {
                self.listed.push(slot);
                NIL
            }
        }
    }

    pub(crate) fn remove(&mut self, slot: Slot, slab: &mut Slab) {
        let (prev, next) = {
            let w = slab.get(slot);
            (w.prev, w.next)
        };
        if let Keys::Prefix(p) = &slab.get(slot).keys {
            let n = self
                .prefix_lens
                .get_mut(&p.len())
                .expect("indexed prefix length");
            *n -= 1;
            if *n == 0 {
                self.prefix_lens.remove(&p.len());
            }
        }
        if next != NIL {
            slab.get_mut(next).prev = prev;
        }
        if prev != NIL {
            slab.get_mut(prev).next = next;
            return;
        }
        // It was the head of its chain: whoever points at it must point at the next.
        let keys = &slab.get(slot).keys;
        if let Keys::From(start) = keys {
            let i = self
                .from_keys
                .binary_search_by(|&h| slab.get(h).keys.open_start().cmp(start))
                .expect("indexed from-key range");
            replace_head(&mut self.from_keys, i, next);
            return;
        }
        if !matches!(keys, Keys::Span(_)) {
            let (table, h) = self.table_of(keys);
            if table.get(&h) == Some(&slot) {
                if next == NIL {
                    table.remove(&h);
                } else {
                    table.insert(h, next);
                }
                return;
            }
        }
        let i = self
            .listed
            .iter()
            .position(|&h| h == slot)
            .expect("listed chain");
        replace_head(&mut self.listed, i, next);
    }

    /// Calls `f` for every indexed watcher whose keys include `key`.
    pub(crate) fn matching(&self, key: &[u8], slab: &Slab, mut f: impl FnMut(Slot)) {
        let mut walk = |head: Slot| {
            let mut s = head;
            while s != NIL {
                f(s);
                s = slab.get(s).next;
            }
        };
        let hash = |k: &[u8]| self.hasher.hash_one(k);
        if let Some(&head) = self.keys.get(&hash(key))
            && slab.get(head).keys.single() == Some(key)
        {
            walk(head);
        }
        for &len in self.prefix_lens.keys().take_while(|&&len| len <= key.len()) {
            let prefix = &key[..len];
            if let Some(&head) = self.prefixes.get(&hash(prefix))
                && matches!(&slab.get(head).keys, Keys::Prefix(p) if **p == *prefix)
            {
                walk(head);
            }
        }
        for &head in &self.from_keys {
            if slab.get(head).keys.open_start() > key {
                break;
            }
            walk(head);
        }
        for &head in &self.listed {
            if slab.get(head).keys.contains(key) {
                walk(head);
            }
        }
    }
}

/// Points a listed chain at its new head, or drops it when it is empty.
fn replace_head(list: &mut Vec<Slot>, i: usize, next: Slot) {
    if next == NIL {
        list.remove(i);
    } else {
        list[i] = next;
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
        let mut idx: KeyIndex = KeyIndex::default();
        let long = "k".repeat(40);
        let specs = [
            ("a", ""),
            ("a", ""),
            ("b", ""),
            (long.as_str(), ""),
            ("a", "c"),
            ("a", "c"),
            ("b", "\0"),
            ("b", "c"),   // the prefix "b"
            ("ab", "ac"), // the prefix "ab"
            ("c", "\0"),
        ];
        let slots: Vec<Slot> = specs
            .iter()
            .map(|(k, e)| slab.insert(watcher(k, e)))
            .collect();
        for &s in &slots {
            idx.insert(s, &mut slab);
        }
        assert!(matches!(slab.get(4).keys, Keys::Span(_)));
        assert!(matches!(slab.get(7).keys, Keys::Prefix(_)));
        assert!(matches!(slab.get(9).keys, Keys::From(_)));
        assert_eq!(find_in(&idx, &slab, "a"), [0, 1, 4, 5]);
        assert_eq!(find_in(&idx, &slab, "b"), [2, 4, 5, 6, 7]);
        assert_eq!(find_in(&idx, &slab, "ab"), [4, 5, 8]);
        assert_eq!(find_in(&idx, &slab, "bz"), [4, 5, 6, 7]);
        assert_eq!(find_in(&idx, &slab, &long), [3, 6, 9]);
        assert_eq!(find_in(&idx, &slab, "c"), [6, 9]);
        assert!(find_in(&idx, &slab, "0").is_empty());
        for &s in &[1, 4, 0, 6] {
            idx.remove(s, &mut slab);
        }
        assert_eq!(find_in(&idx, &slab, "a"), [5]);
        assert_eq!(find_in(&idx, &slab, "b"), [2, 5, 7]);
        assert_eq!(find_in(&idx, &slab, "c"), [9]);
        for &s in &[8, 5, 2, 3, 9, 7] {
            idx.remove(s, &mut slab);
        }
        assert!(idx.keys.is_empty() && idx.prefixes.is_empty() && idx.prefix_lens.is_empty());
        assert!(idx.from_keys.is_empty() && idx.listed.is_empty());
    }

    fn find_in<S: BuildHasher>(idx: &KeyIndex<S>, slab: &Slab, key: &str) -> Vec<Slot> {
        let mut v = vec![];
        idx.matching(key.as_bytes(), slab, |s| v.push(s));
        v.sort();
        v
    }

    /// Every key hashes alike: all but the first key or prefix per table go to
    /// the listed chains, which must give the same answers.
    #[test]
    fn colliding_hashes_fall_back_to_listed_chains() {
        let mut slab = Slab::default();
        let mut idx = KeyIndex::<BuildHasherDefault<ZeroHasher>>::default();
        let specs = [
            ("a", ""),
            ("b", ""),
            ("b", ""),
            ("p/", "p0"),
            ("q/", "q0"),
            ("q/", "q0"),
        ];
        for (k, e) in specs {
            let s = slab.insert(watcher(k, e));
            idx.insert(s, &mut slab);
        }
        assert_eq!(find_in(&idx, &slab, "a"), [0]);
        assert_eq!(find_in(&idx, &slab, "b"), [1, 2]);
        assert_eq!(find_in(&idx, &slab, "p/x"), [3]);
        assert_eq!(find_in(&idx, &slab, "q/x"), [4, 5]);
        for s in [0, 2, 3, 4] {
            idx.remove(s, &mut slab);
        }
        assert_eq!(find_in(&idx, &slab, "a"), [] as [Slot; 0]);
        assert_eq!(find_in(&idx, &slab, "b"), [1]);
        assert_eq!(find_in(&idx, &slab, "q/x"), [5]);
    }

    /// Hashes everything to 0.
    #[derive(Default)]
    struct ZeroHasher;
    impl Hasher for ZeroHasher {
        fn finish(&self) -> u64 {
            0
        }
        fn write(&mut self, _: &[u8]) {}
    }

    #[test]
    fn prefix_ends_follow_etcd() {
        assert_eq!(prefix_end(b"a"), Some(b"b".to_vec()));
        assert_eq!(prefix_end(b"a\xff"), Some(b"b".to_vec()));
        assert_eq!(prefix_end(b"\xff\xff"), None);
        let k = |key: &[u8], end: &[u8]| {
            Keys::new(&Bytes::copy_from_slice(key), &Bytes::copy_from_slice(end))
        };
        assert!(matches!(k(b"a\xff", b"b"), Keys::Prefix(_)));
        assert!(matches!(k(b"a", b"\0"), Keys::From(_)));
        assert!(matches!(k(b"a", b"bb"), Keys::Span(_)));
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
