//! One key's history: the revisions at which it changed, grouped into
//! generations (one per life of the key, from creation to deletion), and
//! its encoding as a few varints, which is how the index keeps it.

use std::collections::HashSet;

use super::{Dropped, IndexEntry};
use crate::revision::Revision;

/// One life of a key: created, modified, possibly ended by a tombstone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Generation {
    create_revision: i64,
    /// Version of the change at its first revision (compaction drops older ones).
    first_version: i64,
    /// Where its revisions start in [`KeyHistory::revs`].
    start: usize,
    /// Its last revision is a deletion.
    ended: bool,
}

/// All generations of one key, oldest first; empty only for a key the index
/// does not hold. Flat (one vector of revisions for all generations) so a
/// history decoded again and again reuses its two buffers.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct KeyHistory {
    gens: Vec<Generation>,
    /// Ascending; each generation's are never empty.
    revs: Vec<Revision>,
    /// Key plus value length of the newest put while the key is live (for
    /// space per prefix: a put or deletion learns what it replaces without
    /// reading the old value).
    pub(super) live_size: u32,
}

impl KeyHistory {
    pub(super) fn is_empty(&self) -> bool {
        self.gens.is_empty()
    }

    pub(super) fn clear(&mut self) {
        self.gens.clear();
        self.revs.clear();
        self.live_size = 0;
    }

    fn revs_of(&self, gi: usize) -> &[Revision] {
        let end = self.gens.get(gi + 1).map_or(self.revs.len(), |g| g.start);
        &self.revs[self.gens[gi].start..end]
    }

    /// The key's entry at main revision `at`, or `None` if it did not exist then.
    pub(super) fn get(&self, at: i64) -> Option<IndexEntry> {
        let gi = self
            .gens
            .partition_point(|g| self.revs[g.start].main <= at)
            .checked_sub(1)?;
        let g = self.gens[gi];
        let revs = self.revs_of(gi);
        let ri = revs.partition_point(|r| r.main <= at) - 1;
        if g.ended && ri == revs.len() - 1 {
            return None;
        }
        Some(IndexEntry {
            rev: revs[ri],
            create_revision: g.create_revision,
            version: g.first_version + ri as i64,
        })
    }

    /// Visits the changes with main revision in `from..=to`, oldest first:
    /// `(revision, is_deletion)`.
    pub(super) fn changes(&self, from: i64, to: i64, mut f: impl FnMut(Revision, bool)) {
        for gi in 0..self.gens.len() {
            let revs = self.revs_of(gi);
            let last = revs.len() - 1;
            let start = revs.partition_point(|r| r.main < from);
            for (i, r) in revs.iter().enumerate().skip(start) {
                if r.main > to {
                    break;
                }
                f(*r, self.gens[gi].ended && i == last);
            }
        }
    }

    /// The main revision of the newest change, if any.
    pub(super) fn newest(&self) -> Option<i64> {
        self.revs.last().map(|r| r.main)
    }

    /// The live size, if the newest generation is live.
    pub(super) fn live(&self) -> Option<u32> {
        self.gens
            .last()
            .filter(|g| !g.ended)
            .map(|_| self.live_size)
    }

    /// Records a put at `rev` (newer than every recorded revision).
    pub(super) fn put(&mut self, rev: Revision, create_revision: i64, version: i64) -> IndexEntry {
        match self.gens.last() {
            Some(&g) if !g.ended => {
                self.revs.push(rev);
                IndexEntry {
                    rev,
                    create_revision: g.create_revision,
                    version: g.first_version + (self.revs.len() - g.start) as i64 - 1,
                }
            }
            _ => {
                self.gens.push(Generation {
                    create_revision,
                    first_version: version,
                    start: self.revs.len(),
                    ended: false,
                });
                self.revs.push(rev);
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
    pub(super) fn tombstone(&mut self, rev: Revision) {
        match self.gens.last_mut() {
            Some(g) if !g.ended => g.ended = true,
            _ => self.gens.push(Generation {
                create_revision: 0,
                first_version: 0,
                start: self.revs.len(),
                ended: true,
            }),
        }
        self.revs.push(rev);
    }

    /// Adds to `keep` the revision etcd's `keyIndex.keep(at)` names: in the
    /// first generation still alive after `at` (not ended by then), the newest
    /// revision at or before `at`. A key deleted at or before `at` and not
    /// created again contributes nothing. Unlike [`KeyHistory::compact`] this
    /// changes nothing; `HashKV` uses it.
    pub(super) fn keep_at(&self, at: i64, keep: &mut HashSet<Revision>) {
        let alive = (0..self.gens.len()).find(|&gi| {
            let revs = self.revs_of(gi);
            !self.gens[gi].ended || revs[revs.len() - 1].main > at
        });
        if let Some(gi) = alive {
            let revs = self.revs_of(gi);
            let newer = revs.partition_point(|r| r.main <= at);
            if newer > 0 {
                keep.insert(revs[newer - 1]);
            }
        }
    }

    /// Drops what no read at or after `at` can need: per key, the newest revision
    /// `<= at` stays when it is a put, or a deletion exactly at `at` (so a watch
    /// starting at `at` still sees it); older ones go, each added to
    /// `dropped`. Returns whether the key has any history left.
    pub(super) fn compact(&mut self, at: i64, dropped: &mut Vec<Dropped>) -> bool {
        // In place: kept revisions move down, never past one not yet read.
        let (mut write, mut kept) = (0, 0);
        for gi in 0..self.gens.len() {
            let g = self.gens[gi];
            let end = self.gens.get(gi + 1).map_or(self.revs.len(), |n| n.start);
            if g.ended && self.revs[end - 1].main < at {
                // The whole generation, its tombstone last.
                dropped.extend(self.revs[g.start..end].iter().enumerate().map(|(i, &rev)| {
                    Dropped {
                        rev,
                        tombstone: g.start + i == end - 1,
                    }
                }));
                continue;
            }
            let newer = self.revs[g.start..end].partition_point(|r| r.main <= at);
            let dropped_here = newer.saturating_sub(1);
            // Never the generation's last revision, so never its tombstone.
            dropped.extend(
                self.revs[g.start..g.start + dropped_here]
                    .iter()
                    .map(|&rev| Dropped {
                        rev,
                        tombstone: false,
                    }),
            );
            let from = g.start + dropped_here;
            self.revs.copy_within(from..end, write);
            self.gens[kept] = Generation {
                first_version: g.first_version + dropped_here as i64,
                start: write,
                ..g
            };
            write += end - from;
            kept += 1;
        }
        self.gens.truncate(kept);
        self.revs.truncate(write);
        !self.gens.is_empty()
    }

    /// Appends the history's encoding to `out`: varints of the live size,
    /// the generation count, then per generation its create revision, first
    /// version, revision count (times two, plus one if it ended) and its
    /// revisions (main as the step from the one before, then sub).
    pub(super) fn encode(&self, out: &mut Vec<u8>) {
        put_varint(out, u64::from(self.live_size));
        put_varint(out, self.gens.len() as u64);
        let mut prev_main = 0i64;
        for gi in 0..self.gens.len() {
            let g = self.gens[gi];
            let revs = self.revs_of(gi);
            put_varint(out, g.create_revision as u64);
            put_varint(out, g.first_version as u64);
            put_varint(out, ((revs.len() as u64) << 1) | u64::from(g.ended));
            for r in revs {
                put_varint(out, r.main.wrapping_sub(prev_main) as u64);
                put_varint(out, r.sub as u64);
                prev_main = r.main;
            }
        }
    }

    /// Replaces this history with the one [`KeyHistory::encode`] wrote into
    /// `bytes`, reusing its buffers; `None` (and an empty history) if the
    /// bytes are not one.
    pub(super) fn decode_from(&mut self, bytes: &[u8]) -> Option<()> {
        self.gens.clear();
        self.revs.clear();
        let decoded = self.decode_inner(bytes);
        if decoded.is_none() {
            self.gens.clear();
            self.revs.clear();
        }
        decoded
    }

    fn decode_inner(&mut self, bytes: &[u8]) -> Option<()> {
        let mut pos = 0;
        self.live_size = u32::try_from(get_varint(bytes, &mut pos)?).ok()?;
        let gens = get_varint(bytes, &mut pos)?;
        let mut prev_main = 0i64;
        for _ in 0..gens {
            let create_revision = get_varint(bytes, &mut pos)? as i64;
            let first_version = get_varint(bytes, &mut pos)? as i64;
            let counted = get_varint(bytes, &mut pos)?;
            let (count, ended) = (counted >> 1, counted & 1 == 1);
            // Each revision takes at least two bytes: a count past what is
            // left is not this encoding (and must not size an allocation).
            if count == 0 || count > (bytes.len() - pos) as u64 / 2 {
                return None;
            }
            self.gens.push(Generation {
                create_revision,
                first_version,
                start: self.revs.len(),
                ended,
            });
            for _ in 0..count {
                let main = prev_main.wrapping_add(get_varint(bytes, &mut pos)? as i64);
                let sub = get_varint(bytes, &mut pos)? as i64;
                self.revs.push(Revision::new(main, sub));
                prev_main = main;
            }
        }
        (pos == bytes.len()).then_some(())
    }
}

/// What a chunk's summary needs of an encoded history, read without
/// decoding it: whether the key is live at its newest change, and that
/// change's main revision. `None` if the bytes are not an encoding.
pub(super) fn newest_of(bytes: &[u8]) -> Option<(bool, i64)> {
    let mut pos = 0;
    get_varint(bytes, &mut pos)?; // live size
    let gens = get_varint(bytes, &mut pos)?;
    let (mut main, mut live) = (0i64, false);
    for _ in 0..gens {
        get_varint(bytes, &mut pos)?; // create revision
        get_varint(bytes, &mut pos)?; // first version
        let counted = get_varint(bytes, &mut pos)?;
        live = counted & 1 == 0;
        for _ in 0..counted >> 1 {
            main = main.wrapping_add(get_varint(bytes, &mut pos)? as i64);
            get_varint(bytes, &mut pos)?; // sub
        }
    }
    Some((live, main))
}

pub(super) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The varint at `*pos`, moving past it; `None` past the end or past 64 bits.
pub(super) fn get_varint(bytes: &[u8], pos: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *bytes.get(*pos)?;
        *pos += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}
