//! Alarms (etcd's `AlarmStore`): conditions raised against a member that
//! restrict what the store accepts. They change only through the apply path,
//! so a replicated log carries them like any write, and they survive restarts.
//!
//! * `NoSpace`: the backend passed its quota. Writes that can grow the store
//!   (puts, txns with a put, lease grants) fail; reads, deletes, compaction,
//!   lease revokes and reclaiming space still work.
//! * `Corrupt`: the data is not to be trusted. Writes, compaction and lease
//!   grants and revokes fail; reads and read-only txns are still served, as
//!   etcd serves them outside its applier.

use std::collections::BTreeSet;

/// etcd's `AlarmType` (`NONE` = 0 is "no particular alarm").
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum AlarmKind {
    /// `NOSPACE`: the backend passed its quota.
    NoSpace,
    /// `CORRUPT`: the data is not to be trusted.
    Corrupt,
}

impl AlarmKind {
    /// The wire number of etcd's `AlarmType`.
    pub fn number(self) -> i32 {
        match self {
            AlarmKind::NoSpace => 1,
            AlarmKind::Corrupt => 2,
        }
    }

    /// The kind of wire number `n` (`None` for `NONE` and unknown numbers).
    pub fn from_number(n: i32) -> Option<AlarmKind> {
        match n {
            1 => Some(AlarmKind::NoSpace),
            2 => Some(AlarmKind::Corrupt),
            _ => None,
        }
    }

    /// etcd's enum name, as `/health` and `etcdctl alarm list` print it.
    pub fn name(self) -> &'static str {
        match self {
            AlarmKind::NoSpace => "NOSPACE",
            AlarmKind::Corrupt => "CORRUPT",
        }
    }
}

/// One raised alarm: which member, which condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Alarm {
    /// The member it is raised against.
    pub member_id: u64,
    /// The condition.
    pub kind: AlarmKind,
}

/// What an [`AlarmRequest`] does (etcd's `AlarmRequest.AlarmAction`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum AlarmAction {
    /// List the raised alarms (of `kind`, or all when `kind` is `None`).
    Get,
    /// Raise `kind` for `member_id`. Without a kind nothing happens.
    Activate,
    /// Clear `kind` (every kind when `None`) for `member_id` (every member when 0).
    Deactivate,
}

/// etcd's `AlarmRequest`, applied through [`crate::Store::alarm`] or
/// [`crate::WriteRequest::Alarm`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct AlarmRequest {
    /// List, raise or clear.
    pub action: AlarmAction,
    /// The member (see [`AlarmAction`] for what 0 means).
    pub member_id: u64,
    /// The condition (`None`: any, see [`AlarmAction`]).
    pub kind: Option<AlarmKind>,
}

/// etcd's `AlarmResponse`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct AlarmResponse {
    /// The current revision (alarms change no key).
    pub header_revision: i64,
    /// For `Get`, the alarms listed; for `Activate` and `Deactivate`, the ones
    /// raised or cleared (an alarm already raised is reported, as etcd does).
    pub alarms: Vec<Alarm>,
}

/// The raised alarms, kept in step with the meta table by the committer.
#[derive(Debug, Default, Clone)]
pub(crate) struct AlarmSet {
    raised: BTreeSet<Alarm>,
}

impl AlarmSet {
    pub fn insert(&mut self, alarm: Alarm) -> bool {
        self.raised.insert(alarm)
    }

    pub fn remove(&mut self, alarm: &Alarm) -> bool {
        self.raised.remove(alarm)
    }

    pub fn any(&self, kind: AlarmKind) -> bool {
        self.raised.iter().any(|a| a.kind == kind)
    }

    /// Raised alarms of `kind` (all when `None`), by member then kind.
    pub fn list(&self, kind: Option<AlarmKind>) -> Vec<Alarm> {
        self.raised
            .iter()
            .filter(|a| kind.is_none_or(|k| a.kind == k))
            .copied()
            .collect()
    }

    /// The raised alarms a `Deactivate` of `(member_id, kind)` clears.
    pub fn matching(&self, member_id: u64, kind: Option<AlarmKind>) -> Vec<Alarm> {
        self.raised
            .iter()
            .filter(|a| member_id == 0 || a.member_id == member_id)
            .filter(|a| kind.is_none_or(|k| a.kind == k))
            .copied()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deactivate_matches_one_member_or_all() {
        let mut set = AlarmSet::default();
        let a = |member_id, kind| Alarm { member_id, kind };
        set.insert(a(1, AlarmKind::NoSpace));
        set.insert(a(2, AlarmKind::NoSpace));
        set.insert(a(2, AlarmKind::Corrupt));
        assert_eq!(set.matching(1, None), vec![a(1, AlarmKind::NoSpace)]);
        assert_eq!(
            set.matching(0, Some(AlarmKind::NoSpace)),
            vec![a(1, AlarmKind::NoSpace), a(2, AlarmKind::NoSpace)]
        );
        assert_eq!(set.matching(0, None).len(), 3);
        assert_eq!(
            set.list(Some(AlarmKind::Corrupt)),
            vec![a(2, AlarmKind::Corrupt)]
        );
        assert!(set.any(AlarmKind::Corrupt));
        set.remove(&a(2, AlarmKind::Corrupt));
        assert!(!set.any(AlarmKind::Corrupt));
    }
}
