//! Space per key prefix: for every prefix up to a depth (the key cut after
//! its first, second, … `/`), how many keys live under it and their bytes,
//! now and with the history compaction has not yet removed. Kept up to date
//! by the committer (each commit group, once durable) and the compactor
//! (each batch of rows deleted), never by a scan; rebuilt with the key index
//! when rows are loaded.

use std::collections::HashMap;

use bytes::Bytes;

use crate::error::{Error, Result};

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
/// after each of its first `depth` slashes.
fn prefixes(key: &[u8], depth: usize) -> impl Iterator<Item = &[u8]> {
    std::iter::once(&key[..0]).chain(
        key.iter()
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
/// key and depth.
#[derive(Debug, Clone)]
pub struct PrefixUsage {
    depth: usize,
    by_prefix: HashMap<Box<[u8]>, Usage>,
}

impl PrefixUsage {
    /// Tracks prefixes up to `depth` slashes (0: only the whole store).
    pub fn new(depth: usize) -> Self {
        PrefixUsage {
            depth,
            by_prefix: HashMap::new(),
        }
    }

    /// The deepest prefix tracked.
    pub fn depth(&self) -> usize {
        self.depth
    }

    pub(crate) fn apply(&mut self, change: &UsageChange) {
        for p in prefixes(&change.key, self.depth) {
            let now = match self.by_prefix.get_mut(p) {
                Some(u) => {
                    u.add(&change.delta);
                    *u
                }
                None => {
                    self.by_prefix.insert(p.into(), change.delta);
                    change.delta
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

    /// `du`: `prefix` itself, then every tracked prefix under it at most
    /// `levels` deeper, in key order. `prefix` must be empty or end with
    /// `/`, and be tracked.
    pub fn du(&self, prefix: &[u8], levels: usize) -> Result<Vec<PrefixStat>> {
        if !(prefix.is_empty() || prefix.ends_with(b"/")) {
            return Err(Error::InvalidArgument(
                "prefix must be empty or end with '/'".into(),
            ));
        }
        let depth = depth_of(prefix);
        if depth > self.depth {
            return Err(Error::InvalidArgument(format!(
                "prefix is {depth} levels deep; sizes are kept to depth {}",
                self.depth
            )));
        }
        let deepest = depth.saturating_add(levels);
        let mut out: Vec<PrefixStat> = self
            .by_prefix
            .iter()
            .filter(|(p, _)| p.len() > prefix.len() && p.starts_with(prefix))
            .filter_map(|(p, u)| {
                let d = depth_of(p);
                (d <= deepest).then(|| PrefixStat {
                    prefix: Bytes::copy_from_slice(p),
                    depth: d,
                    usage: *u,
                })
            })
            .collect();
        out.sort_by(|a, b| a.prefix.cmp(&b.prefix));
        out.insert(
            0,
            PrefixStat {
                prefix: Bytes::copy_from_slice(prefix),
                depth,
                usage: self.get(prefix),
            },
        );
        Ok(out)
    }

    /// The `n` largest prefixes (by bytes with history) at each depth from
    /// 1 to the tracked depth, for a bounded set of metrics: at most
    /// `n * depth` entries, largest first within a depth.
    pub fn top(&self, n: usize) -> Vec<PrefixStat> {
        let mut per_depth: Vec<Vec<PrefixStat>> = vec![Vec::new(); self.depth];
        for (p, u) in &self.by_prefix {
            let d = depth_of(p);
            if d == 0 {
                continue;
            }
            per_depth[d - 1].push(PrefixStat {
                prefix: Bytes::copy_from_slice(p),
                depth: d,
                usage: *u,
            });
        }
        let mut out = Vec::new();
        for mut level in per_depth {
            level.sort_by(|a, b| {
                (b.usage.history_bytes, &a.prefix).cmp(&(a.usage.history_bytes, &b.prefix))
            });
            level.truncate(n);
            out.extend(level);
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
        let root = u.du(b"", 1).unwrap();
        let names: Vec<(&[u8], i64)> = root
            .iter()
            .map(|s| (&s.prefix[..], s.usage.bytes))
            .collect();
        assert_eq!(names, [(&b""[..], 65), (b"a/", 60)]);
        let a = u.du(b"a/", 5).unwrap();
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
        assert_eq!(u.du(b"zz/", 1).unwrap()[0].usage, Usage::default());
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
