//! Watch ids: the set of a stream's ids in use (kept by the stream's
//! handle) and the map of its ids to watchers (kept by the engine).
//!
//! Clients mostly let the stream pick ids, which are then small and dense
//! (0, 1, 2, …). Those live in plain arrays indexed by id: a bit each in the
//! set, a slot number (4 bytes) each in the map, instead of a hash entry per
//! watcher. An array grows only a little past what it covers, so an id a
//! client picks far out goes to a hash table instead of a huge array.

use std::collections::HashMap;

use crate::index::Slot;
use crate::response::WatchId;

/// How far past its end an array grows to take an id.
const GROWTH: usize = 4096;

/// Where `id` goes: `Some(index)` in an array of `len` entries (growing it
/// if needed and allowed), `None` in the hash table.
fn dense_index(id: WatchId, len: usize, grow: bool) -> Option<usize> {
    let i = usize::try_from(id).ok()?;
    (i < len || (grow && i < len + GROWTH)).then_some(i)
}

/// A set of ids.
#[derive(Default)]
pub(crate) struct IdSet {
    /// Bit `i` of word `i / 64`: id `i` is in.
    dense: Vec<u64>,
    sparse: std::collections::HashSet<WatchId>,
}

impl IdSet {
    pub(crate) fn contains(&self, id: WatchId) -> bool {
        match dense_index(id, self.dense.len() * 64, false) {
            Some(i) => self.dense[i / 64] & (1 << (i % 64)) != 0,
            None => self.sparse.contains(&id),
        }
    }

    /// `false` if it was in already.
    pub(crate) fn insert(&mut self, id: WatchId) -> bool {
        if self.contains(id) {
            return false;
        }
        match dense_index(id, self.dense.len() * 64, true) {
            Some(i) => {
                if self.dense.len() <= i / 64 {
                    let old_end = self.dense.len() * 64;
                    self.dense.resize(i / 64 + 1, 0);
                    self.absorb(old_end);
                }
                self.dense[i / 64] |= 1 << (i % 64);
            }
            None => {
                self.sparse.insert(id);
            }
        }
        true
    }

    /// `false` if it was not in.
    pub(crate) fn remove(&mut self, id: WatchId) -> bool {
        match dense_index(id, self.dense.len() * 64, false) {
            Some(i) => {
                let was = self.dense[i / 64] & (1 << (i % 64)) != 0;
                self.dense[i / 64] &= !(1 << (i % 64));
                was
            }
            None => self.sparse.remove(&id),
        }
    }

    /// Moves sparse ids the grown array now covers into it.
    fn absorb(&mut self, from: usize) {
        let end = self.dense.len() * 64;
        let moved: Vec<WatchId> = self
            .sparse
            .iter()
            .copied()
            .filter(|&id| usize::try_from(id).is_ok_and(|i| (from..end).contains(&i)))
            .collect();
        for id in moved {
            self.sparse.remove(&id);
            let i = id as usize;
            self.dense[i / 64] |= 1 << (i % 64);
        }
    }
}

/// Ids → watcher slots.
#[derive(Default)]
pub(crate) struct IdMap {
    /// Entry `i`: id `i`'s slot, or `ABSENT`.
    dense: Vec<Slot>,
    sparse: HashMap<WatchId, Slot>,
}

/// Marks an id not in the map (slot numbers never reach it).
const ABSENT: Slot = Slot::MAX - 1;

impl IdMap {
    pub(crate) fn get(&self, id: WatchId) -> Option<Slot> {
        match dense_index(id, self.dense.len(), false) {
            Some(i) => Some(self.dense[i]).filter(|&s| s != ABSENT),
            None => self.sparse.get(&id).copied(),
        }
    }

    pub(crate) fn insert(&mut self, id: WatchId, slot: Slot) {
        debug_assert_ne!(slot, ABSENT);
        match dense_index(id, self.dense.len(), true) {
            Some(i) => {
                if self.dense.len() <= i {
                    let old_end = self.dense.len();
                    self.dense.resize(i + 1, ABSENT);
                    self.absorb(old_end);
                }
                self.dense[i] = slot;
            }
            None => {
                self.sparse.insert(id, slot);
            }
        }
    }

    pub(crate) fn remove(&mut self, id: WatchId) -> Option<Slot> {
        match dense_index(id, self.dense.len(), false) {
            Some(i) => Some(std::mem::replace(&mut self.dense[i], ABSENT)).filter(|&s| s != ABSENT),
            None => self.sparse.remove(&id),
        }
    }

    /// Every slot in the map.
    pub(crate) fn slots(&self) -> impl Iterator<Item = Slot> + '_ {
        self.dense
            .iter()
            .copied()
            .filter(|&s| s != ABSENT)
            .chain(self.sparse.values().copied())
    }

    fn absorb(&mut self, from: usize) {
        let end = self.dense.len();
        let moved: Vec<WatchId> = self
            .sparse
            .keys()
            .copied()
            .filter(|&id| usize::try_from(id).is_ok_and(|i| (from..end).contains(&i)))
            .collect();
        for id in moved {
            let slot = self.sparse.remove(&id).expect("listed above");
            self.dense[id as usize] = slot;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use proptest::prelude::*;

    use super::*;

    #[derive(Debug, Clone)]
    enum Op {
        Insert(WatchId),
        Remove(WatchId),
    }

    fn ids() -> impl Strategy<Value = WatchId> {
        prop_oneof![
            0..200i64,
            4000..9000i64,
            Just(-1i64),
            Just(i64::MAX),
            0..1_000_000i64
        ]
    }

    fn ops() -> impl Strategy<Value = Vec<Op>> {
        prop::collection::vec(
            prop_oneof![ids().prop_map(Op::Insert), ids().prop_map(Op::Remove)],
            0..300,
        )
    }

    proptest! {
        #[test]
        fn the_set_and_the_map_agree_with_std_collections(ops in ops()) {
            let (mut set, mut model_set) = (IdSet::default(), BTreeSet::new());
            let (mut map, mut model_map) = (IdMap::default(), BTreeMap::new());
            for (n, op) in ops.iter().enumerate() {
                match *op {
                    Op::Insert(id) => {
                        prop_assert_eq!(set.insert(id), model_set.insert(id));
                        map.insert(id, n as Slot);
                        model_map.insert(id, n as Slot);
                    }
                    Op::Remove(id) => {
                        prop_assert_eq!(set.remove(id), model_set.remove(&id));
                        prop_assert_eq!(map.remove(id), model_map.remove(&id));
                    }
                }
                let probe = match *op { Op::Insert(id) | Op::Remove(id) => id };
                for id in [probe, probe.saturating_add(1), probe.saturating_sub(1), 0, 4095, 4096] {
                    prop_assert_eq!(set.contains(id), model_set.contains(&id));
                    prop_assert_eq!(map.get(id), model_map.get(&id).copied());
                }
            }
            let mut slots: Vec<Slot> = map.slots().collect();
            slots.sort_unstable();
            let mut expected: Vec<Slot> = model_map.values().copied().collect();
            expected.sort_unstable();
            prop_assert_eq!(slots, expected);
            // Each insert grows an array by at most GROWTH entries: a far-out id
            // goes to the hash table instead.
            let inserts = ops.iter().filter(|op| matches!(op, Op::Insert(_))).count();
            prop_assert!(set.dense.len() * 64 <= inserts * (GROWTH + 64));
            prop_assert!(map.dense.len() <= inserts * GROWTH);
        }
    }
}
