//! Whether a user's permissions cover a key or a range, as etcd decides it
//! (its `rangePermCache` over interval trees): the permitted intervals of
//! all the user's roles are merged, a single key needs any interval holding
//! it, and a range needs the intervals overlapping it to cover it whole,
//! without a gap.

use bytes::Bytes;

use crate::records::{PermType, PermissionRecord};

/// `[begin, end)`; `end == None` is +∞ (every key from `begin`).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Interval {
    begin: Bytes,
    end: Option<Bytes>,
}

/// `a < b` where `None` is +∞.
fn end_lt(a: Option<&[u8]>, b: Option<&[u8]>) -> bool {
    match (a, b) {
        (_, None) => a.is_some(),
        (None, Some(_)) => false,
        (Some(a), Some(b)) => a < b,
    }
}

impl Interval {
    /// The keys a permission names.
    fn of_permission(p: &PermissionRecord) -> Interval {
        let end = if p.range_end.is_empty() {
            let mut next = p.key.to_vec();
            next.push(0);
            Some(Bytes::from(next))
        } else if p.range_end.as_ref() == b"\0" {
            None
        } else {
            Some(p.range_end.clone())
        };
        Interval {
            begin: p.key.clone(),
            end,
        }
    }

    fn holds(&self, key: &[u8]) -> bool {
        self.begin.as_ref() <= key && end_lt(Some(key), self.end.as_deref())
    }

    /// Overlaps `[begin, end)`.
    fn overlaps(&self, begin: &[u8], end: Option<&[u8]>) -> bool {
        end_lt(Some(&self.begin), end) && end_lt(Some(begin), self.end.as_deref())
    }
}

/// One user's merged permissions, READ and WRITE apart, sorted by begin.
#[derive(Debug, Clone, Default)]
pub struct UserPerms {
    read: Vec<Interval>,
    write: Vec<Interval>,
}

/// What a request needs of a key or range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
}

impl UserPerms {
    pub fn build<'a>(perms: impl IntoIterator<Item = &'a PermissionRecord>) -> UserPerms {
        let mut out = UserPerms::default();
        for p in perms {
            let Some(kind) = PermType::from_number(p.perm_type) else {
                continue;
            };
            let interval = Interval::of_permission(p);
            if kind.reads() {
                out.read.push(interval.clone());
            }
            if kind.writes() {
                out.write.push(interval);
            }
        }
        out.read.sort_by(|a, b| a.begin.cmp(&b.begin));
        out.write.sort_by(|a, b| a.begin.cmp(&b.begin));
        out
    }

    /// Whether the request's `key` / `range_end` (etcd's encoding: empty for
    /// one key, `"\0"` for every key from `key`) is permitted for `access`.
    pub fn permits(&self, access: Access, key: &[u8], range_end: &[u8]) -> bool {
        let intervals = match access {
            Access::Read => &self.read,
            Access::Write => &self.write,
        };
        if range_end.is_empty() {
            return intervals.iter().any(|i| i.holds(key));
        }
        let end = (range_end != b"\0").then_some(range_end);
        if end.is_some_and(|e| e <= key) {
            // An empty or inverted range reads nothing: its begin decides.
            return intervals.iter().any(|i| i.holds(key));
        }
        let mut overlapping = intervals.iter().filter(|i| i.overlaps(key, end));
        let Some(first) = overlapping.next() else {
            return false;
        };
        if first.begin.as_ref() > key {
            return false;
        }
        let mut reach = first.end.as_deref();
        for next in overlapping {
            if end_lt(reach, Some(&next.begin)) {
                return false;
            }
            if end_lt(reach, next.end.as_deref()) {
                reach = next.end.as_deref();
            }
        }
        !end_lt(reach, end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn perm(kind: PermType, key: &str, end: &str) -> PermissionRecord {
        PermissionRecord {
            perm_type: kind as i32,
            key: Bytes::copy_from_slice(key.as_bytes()),
            range_end: Bytes::copy_from_slice(end.as_bytes()),
        }
    }

    #[test]
    fn a_point_needs_one_interval_holding_it() {
        let p = UserPerms::build(&[
            perm(PermType::Read, "a", ""),
            perm(PermType::Write, "b", "d"),
        ]);
        assert!(p.permits(Access::Read, b"a", b""));
        assert!(!p.permits(Access::Write, b"a", b""));
        assert!(!p.permits(Access::Read, b"a\0", b""));
        assert!(p.permits(Access::Write, b"c", b""));
        assert!(!p.permits(Access::Write, b"d", b""));
    }

    #[test]
    fn a_range_needs_cover_without_gaps() {
        let p = UserPerms::build(&[
            perm(PermType::ReadWrite, "a", "c"),
            perm(PermType::Read, "c", "e"),
            perm(PermType::Read, "x", "\0"),
        ]);
        assert!(p.permits(Access::Read, b"a", b"e"));
        assert!(p.permits(Access::Read, b"b", b"d"));
        assert!(!p.permits(Access::Write, b"a", b"e"));
        assert!(p.permits(Access::Write, b"a", b"c"));
        assert!(!p.permits(Access::Read, b"a", b"f"), "gap [e, x)");
        assert!(p.permits(Access::Read, b"y", b"\0"));
        assert!(!p.permits(Access::Read, b"e", b"\0"));
        assert!(!p.permits(Access::Read, b"\0", b"\0"), "whole key space");
    }

    #[test]
    fn a_point_grant_does_not_cover_from_key() {
        // GHSA-xg4h-6gfc-h4m8: a from-key request is a range, never a point.
        let p = UserPerms::build(&[perm(PermType::Read, "k", "")]);
        assert!(p.permits(Access::Read, b"k", b""));
        assert!(!p.permits(Access::Read, b"k", b"\0"));
        assert!(
            p.permits(Access::Read, b"k", b"k\0"),
            "[k, k\\0) is the key itself"
        );
    }

    #[test]
    fn adjacent_points_chain() {
        let p = UserPerms::build(&[
            perm(PermType::Read, "a", ""),
            perm(PermType::Read, "a\0", ""),
        ]);
        assert!(p.permits(Access::Read, b"a", b"a\0\0"));
    }
}
