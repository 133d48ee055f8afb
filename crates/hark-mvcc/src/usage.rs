//! Space per key prefix: for every prefix up to a depth (the key cut after
//! its first, second, … `/`), how many keys live under it and their bytes,
//! now and with the history compaction has not yet removed. Kept up to date
//! by the committer (each commit group, once durable) and the compactor
//! (each batch of rows deleted), never by a scan; rebuilt with the key index
//! when rows are loaded.

use std::collections::BTreeMap;
use std::ops::Bound;

use bytes::Bytes;

use crate::error::{Error, Result};

/// Prefixes longer than this are not tracked: a key's share goes to its
/// deepest prefix within it. Each tracked level holds its own copy of the
/// prefix, so without a cap a writer's long keys would cost the server
/// their length again at every level.
pub const MAX_TRACKED_PREFIX: usize = 512;

/// Most entries one [`PrefixUsage::du`] answer lists.
pub const MAX_DU_ENTRIES: usize = 10_000;

/// Depth tracked unless [`crate::StoreOptions::usage_depth`] says otherwise:
/// Kubernetes' `/registry/<resource>/<namespace>/` is depth 4.
pub const DEFAULT_USAGE_DEPTH: usize = 4;

/// What lives under one prefix.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// Keys that exist now.
    pub keys: i64,
    /// Their keys' and values' lengths, summed.
    pub bytes: i64,
    /// Stored revisions (every retained version, deletions included): what
    /// a compaction can remove.
    pub revisions: i64,
    /// Bytes of those stored rows (revision key plus encoded key-value),
    /// what compaction and then defragmentation give back.
    pub history_bytes: i64,
}

impl Usage {
    fn add(&mut self, d: &Usage) {
        self.keys += d.keys;
        self.bytes += d.bytes;
        self.revisions += d.revisions;
        self.history_bytes += d.history_bytes;
    }

    fn is_zero(&self) -> bool {
        *self == Usage::default()
    }
}

/// One prefix in a [`PrefixUsage::du`] answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrefixStat {
    /// The prefix: empty (every key) or ending with `/`.
    pub prefix: Bytes,
    /// Its number of `/`.
    pub depth: usize,
    /// What lives under it.
    pub usage: Usage,
}

/// A change to one key's share: the deltas of a put, a deletion or a
/// compacted row.
#[derive(Debug, Clone)]
pub(crate) struct UsageChange {
    pub key: Bytes,
    pub delta: Usage,
}

impl UsageChange {
    /// A new revision of `key`: its row of `row_bytes`, and its live size
    /// going from `before` to `after` (`None`: not live).
    pub(crate) fn revision(
        key: Bytes,
        row_bytes: usize,
        before: Option<u32>,
        after: Option<u32>,
    ) -> Self {
        let live = |s: Option<u32>| s.map_or((0, 0), |s| (1, i64::from(s)));
        let (keys_before, bytes_before) = live(before);
        let (keys_after, bytes_after) = live(after);
        UsageChange {
            key,
            delta: Usage {
                keys: keys_after - keys_before,
                bytes: bytes_after - bytes_before,
                revisions: 1,
                history_bytes: row_bytes as i64,
            },
        }
    }

    /// A stored row of `key` removed by compaction.
    pub(crate) fn compacted(key: Bytes, row_bytes: usize) -> Self {
        UsageChange {
            key,
            delta: Usage {
                revisions: -1,
                history_bytes: -(row_bytes as i64),
                ..Usage::default()
            },
        }
    }
}

/// The live size the key index keeps per key: key plus value, saturated.
pub(crate) fn live_size(key: &[u8], value: &[u8]) -> u32 {
    u32::try_from(key.len() + value.len()).unwrap_or(u32::MAX)
}

/// The prefixes of `key` tracked at `depth`: the empty one, then `key` cut
/// after each of its first `depth` slashes, as long as the cut is at most
/// [`MAX_TRACKED_PREFIX`] bytes.
fn prefixes(key: &[u8], depth: usize) -> impl Iterator<Item = &[u8]> {
    let within = &key[..key.len().min(MAX_TRACKED_PREFIX)];
    std::iter::once(&key[..0]).chain(
        within
            .iter()
            .enumerate()
            .filter(|(_, b)| **b == b'/')
            .take(depth)
            .map(move |(i, _)| &key[..=i]),
    )
}

fn depth_of(prefix: &[u8]) -> usize {
    prefix.iter().filter(|b| **b == b'/').count()
}

/// Usage per tracked prefix. Only prefixes something lives under are held,
/// so its size follows the number of distinct prefixes, at most one per
/// key and depth. Ordered, so `du` reads only its prefix's part.
#[derive(Debug, Clone)]
pub struct PrefixUsage {
    depth: usize,
    by_prefix: BTreeMap<Box<[u8]>, Usage>,
}

impl PrefixUsage {
    /// Tracks prefixes up to `depth` slashes (0: only the whole store).
    pub fn new(depth: usize) -> Self {
        PrefixUsage {
            depth,
            by_prefix: BTreeMap::new(),
        }
    }

    /// The deepest prefix tracked.
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// Every tracked prefix with what lives under it, in prefix order (what
    /// an index checkpoint stores).
    pub(crate) fn entries(&self) -> impl ExactSizeIterator<Item = (&[u8], &Usage)> {
        self.by_prefix.iter().map(|(p, u)| (&p[..], u))
    }

    /// Usage made of `entries` (read back from a checkpoint, untrusted):
    /// `None` unless the prefixes ascend, each is one `depth` tracks, and
    /// no figure is negative or all zero.
    pub(crate) fn from_entries(depth: usize, entries: Vec<(Box<[u8]>, Usage)>) -> Option<Self> {
        let mut usage = PrefixUsage::new(depth);
        for (prefix, u) in entries {
            let tracked = prefix.is_empty()
                || (prefix.len() <= MAX_TRACKED_PREFIX
                    && prefix.last() == Some(&b'/')
                    && depth_of(&prefix) <= depth);
            let sane = u.keys >= 0 && u.bytes >= 0 && u.revisions >= 0 && u.history_bytes >= 0;
            let ascending = usage
                .by_prefix
                .last_key_value()
                .is_none_or(|(last, _)| **last < *prefix);
            if !tracked || !sane || u.is_zero() || !ascending {
                return None;
            }
            usage.by_prefix.insert(prefix, u);
        }
        Some(usage)
    }

    pub(crate) fn apply(&mut self, change: &UsageChange) {
        self.add(&change.key, &change.delta);
    }

    /// Adds `delta` to every tracked prefix of `key`.
    pub(crate) fn add(&mut self, key: &[u8], delta: &Usage) {
        for p in prefixes(key, self.depth) {
            let now = match self.by_prefix.get_mut(p) {
                Some(u) => {
                    u.add(delta);
                    *u
                }
                None => {
                    self.by_prefix.insert(p.into(), *delta);
                    *delta
                }
            };
            debug_assert!(
                now.keys >= 0 && now.bytes >= 0 && now.revisions >= 0 && now.history_bytes >= 0,
                "usage of {p:?} went negative: {now:?}"
            );
            if now.is_zero() {
                self.by_prefix.remove(p);
            }
        }
    }

    /// What lives under `prefix` (a tracked one).
    pub fn get(&self, prefix: &[u8]) -> Usage {
        self.by_prefix.get(prefix).copied().unwrap_or_default()
    }

    /// `du`: `prefix` itself, then the tracked prefixes under it at most
    /// `levels` deeper, in key order, at most [`MAX_DU_ENTRIES`] of them;
    /// the flag says whether more were left out. `prefix` must be empty or
    /// end with `/`, and be tracked.
    pub fn du(&self, prefix: &[u8], levels: usize) -> Result<(Vec<PrefixStat>, bool)> {
        if !(prefix.is_empty() || prefix.ends_with(b"/")) {
            return Err(Error::InvalidArgument(
                "prefix must be empty or end with '/'".into(),
            ));
        }
        let depth = depth_of(prefix);
        if depth > self.depth || prefix.len() > MAX_TRACKED_PREFIX {
            return Err(Error::InvalidArgument(format!(
                "prefix is {depth} levels deep or longer than {MAX_TRACKED_PREFIX} bytes; sizes are kept to depth {}",
                self.depth
            )));
        }
        let deepest = depth.saturating_add(levels);
        let mut out = vec![PrefixStat {
            prefix: Bytes::copy_from_slice(prefix),
            depth,
            usage: self.get(prefix),
        }];
        let under = self
            .by_prefix
            .range::<[u8], _>((Bound::Excluded(prefix), Bound::Unbounded))
            .take_while(|(p, _)| p.starts_with(prefix));
        let mut truncated = false;
        for (p, u) in under {
            let d = depth_of(p);
            if d > deepest {
                continue;
            }
            if out.len() > MAX_DU_ENTRIES {
                truncated = true;
                break;
            }
            out.push(PrefixStat {
                prefix: Bytes::copy_from_slice(p),
                depth: d,
                usage: *u,
            });
        }
        Ok((out, truncated))
    }

    /// The `n` largest prefixes (by bytes with history) at each depth from
    /// 1 to the tracked depth, for a bounded set of metrics: at most
    /// `n * depth` entries, largest first within a depth. Only the winners
    /// are copied.
    pub fn top(&self, n: usize) -> Vec<PrefixStat> {
        let mut per_depth: Vec<Vec<(&[u8], &Usage)>> = vec![Vec::new(); self.depth];
        for (p, u) in &self.by_prefix {
            let d = depth_of(p);
            if d > 0 {
                per_depth[d - 1].push((p, u));
            }
        }
        let mut out = Vec::new();
        for (i, mut level) in per_depth.into_iter().enumerate() {
            let order = |a: &(&[u8], &Usage), b: &(&[u8], &Usage)| {
                (b.1.history_bytes, a.0).cmp(&(a.1.history_bytes, b.0))
            };
            if level.len() > n && n > 0 {
                level.select_nth_unstable_by(n - 1, order);
            }
            level.truncate(n);
            level.sort_by(order);
            out.extend(level.into_iter().map(|(p, u)| PrefixStat {
                prefix: Bytes::copy_from_slice(p),
                depth: i + 1,
                usage: *u,
            }));
        }
        out
    }

    /// Number of prefixes held.
    pub fn len(&self) -> usize {
        self.by_prefix.len()
    }

    /// Whether nothing lives in the store.
    pub fn is_empty(&self) -> bool {
        self.by_prefix.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_cut_after_each_slash_up_to_the_depth() {
        let all: Vec<&[u8]> = prefixes(b"/registry/pods/ns/p1", 4).collect();
        assert_eq!(
            all,
            [
                &b""[..],
                b"/",
                b"/registry/",
                b"/registry/pods/",
                b"/registry/pods/ns/"
            ]
        );
        let shallow: Vec<&[u8]> = prefixes(b"a/b/c", 1).collect();
        assert_eq!(shallow, [&b""[..], b"a/"]);
        let flat: Vec<&[u8]> = prefixes(b"plain", 3).collect();
        assert_eq!(flat, [&b""[..]]);
        // A cut past the cap is not tracked; the shorter ones still are.
        let mut long = b"a/".to_vec();
        long.extend(vec![b'x'; MAX_TRACKED_PREFIX]);
        long.extend(b"/b/c");
        let capped: Vec<&[u8]> = prefixes(&long, 4).collect();
        assert_eq!(capped, [&b""[..], b"a/"]);
    }

    #[test]
    fn du_lists_the_prefix_then_its_children_and_refuses_untracked_ones() {
        let mut u = PrefixUsage::new(2);
        for (key, size) in [("a/x", 10), ("a/b/y", 20), ("a/c/z", 30), ("q", 5)] {
            u.apply(&UsageChange::revision(
                Bytes::from(key),
                100,
                None,
                Some(size),
            ));
        }
        let (root, _) = u.du(b"", 1).unwrap();
        let names: Vec<(&[u8], i64)> = root
            .iter()
            .map(|s| (&s.prefix[..], s.usage.bytes))
            .collect();
        assert_eq!(names, [(&b""[..], 65), (b"a/", 60)]);
        let (a, truncated) = u.du(b"a/", 5).unwrap();
        assert!(!truncated);
        let names: Vec<(&[u8], i64, i64)> = a
            .iter()
            .map(|s| (&s.prefix[..], s.usage.keys, s.usage.history_bytes))
            .collect();
        assert_eq!(
            names,
            [(&b"a/"[..], 3, 300), (b"a/b/", 1, 100), (b"a/c/", 1, 100)]
        );
        assert!(matches!(u.du(b"a", 1), Err(Error::InvalidArgument(_))));
        assert!(matches!(u.du(b"a/b/c/", 1), Err(Error::InvalidArgument(_))));
        // An untouched tracked prefix is empty, not an error.
        assert_eq!(u.du(b"zz/", 1).unwrap().0[0].usage, Usage::default());
    }

    #[test]
    fn a_prefix_nothing_lives_under_is_forgotten() {
        let mut u = PrefixUsage::new(3);
        let key = Bytes::from_static(b"jobs/1/state");
        u.apply(&UsageChange::revision(key.clone(), 40, None, Some(12)));
        u.apply(&UsageChange::revision(key.clone(), 30, Some(12), None));
        assert_eq!(u.get(b"jobs/").keys, 0);
        assert_eq!(u.get(b"jobs/").revisions, 2);
        u.apply(&UsageChange::compacted(key.clone(), 40));
        u.apply(&UsageChange::compacted(key, 30));
        assert!(u.is_empty(), "{u:?}");
    }

    #[test]
    fn top_keeps_the_largest_per_depth() {
        let mut u = PrefixUsage::new(2);
        for (key, row) in [("a/1/k", 10), ("b/1/k", 30), ("c/1/k", 20), ("c/2/k", 5)] {
            u.apply(&UsageChange::revision(Bytes::from(key), row, None, Some(1)));
        }
        let top = u.top(2);
        let top: Vec<(&[u8], i64)> = top
            .iter()
            .map(|s| (&s.prefix[..], s.usage.history_bytes))
            .collect();
        assert_eq!(
            top,
            [(&b"b/"[..], 30), (b"c/", 25), (b"b/1/", 30), (b"c/1/", 20)]
        );
    }
}
