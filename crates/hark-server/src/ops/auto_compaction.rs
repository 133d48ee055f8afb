//! Auto-compaction (`--auto-compaction-mode` / `--auto-compaction-retention`),
//! submitted through the apply path like a client's Compact.
//!
//! * periodic: keeps `retention` of history. The revision is sampled every tenth
//!   of the retention (at least every second); each sample that is a full
//!   retention old becomes the compaction target, as etcd's periodic compactor.
//! * revision: every five minutes (etcd's interval), compacts to the current
//!   revision minus `retention`.

use std::collections::VecDeque;
use std::future::Future;
use std::time::{Duration, Instant};

use hark_mvcc::{CompactRequest, WriteRequest};

use crate::config::Retention;
use crate::node::{Node, NodeHandle};

const REVISION_MODE_INTERVAL: Duration = Duration::from_secs(300);

/// Revisions sampled over time; says which one is a full retention old.
#[derive(Debug)]
pub struct PeriodicPlan {
    retention: Duration,
    samples: VecDeque<(Instant, i64)>,
}

impl PeriodicPlan {
    pub fn new(retention: Duration) -> Self {
        PeriodicPlan {
            retention,
            samples: VecDeque::new(),
        }
    }

    pub fn interval(&self) -> Duration {
        (self.retention / 10).max(Duration::from_secs(1))
    }

    /// Records `rev` at `now`; returns the newest sampled revision at least a
    /// retention old, dropping the samples it supersedes.
    pub fn observe(&mut self, now: Instant, rev: i64) -> Option<i64> {
        self.samples.push_back((now, rev));
        let mut target = None;
        while let Some(&(at, rev)) = self.samples.front() {
            if now.duration_since(at) < self.retention {
                break;
            }
            target = Some(rev);
            self.samples.pop_front();
        }
        target
    }
}

/// The revision-mode target: `current - retention`, if that is a revision.
pub fn revision_target(current: i64, retention: i64) -> Option<i64> {
    let target = current - retention;
    (target > 0).then_some(target)
}

/// The compactor `retention` asks for, if any: a loop that runs until it is
/// dropped (at shutdown) or the node is gone.
pub fn run(node: NodeHandle, retention: Retention) -> Option<impl Future<Output = ()>> {
    let every = match retention {
        Retention::Off => return None,
        Retention::Period(period) => PeriodicPlan::new(period).interval(),
        Retention::Revisions(_) => REVISION_MODE_INTERVAL,
    };
    Some(async move {
        let mut periodic = match retention {
            Retention::Period(period) => Some(PeriodicPlan::new(period)),
            _ => None,
        };
        let mut tick = tokio::time::interval(every);
        loop {
            tick.tick().await;
            let Ok(node) = node.get() else {
                return;
            };
            let current = node.store.current_revision();
            let target = match (&mut periodic, retention) {
                (Some(plan), _) => plan.observe(Instant::now(), current),
                (None, Retention::Revisions(keep)) => revision_target(current, keep),
                (None, _) => None,
            };
            if let Some(target) = target {
                compact(&node, target).await;
            }
        }
    })
}

async fn compact(node: &Node, revision: i64) {
    if revision <= node.store.compacted_revision() {
        return;
    }
    // In a cluster only the leader compacts (through the log), as in etcd.
    if !node.replica.is_leader() {
        return;
    }
    let req = WriteRequest::Compact(CompactRequest {
        revision,
        physical: false,
    });
    match node.apply(req).await {
        Ok(_) => tracing::info!(revision, "auto-compaction finished"),
        Err(e) => tracing::warn!(revision, error = %e, "auto-compaction failed"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn periodic_targets_the_revision_a_retention_ago() {
        let t0 = Instant::now();
        let s = Duration::from_secs;
        let mut plan = PeriodicPlan::new(s(10));
        assert_eq!(plan.interval(), s(1));
        assert_eq!(plan.observe(t0, 5), None);
        assert_eq!(plan.observe(t0 + s(4), 9), None);
        assert_eq!(plan.observe(t0 + s(9), 20), None);
        assert_eq!(plan.observe(t0 + s(10), 21), Some(5));
        assert_eq!(plan.observe(t0 + s(12), 30), None);
        // Three samples (revs 9, 20, 21) aged out at once: the newest one wins.
        assert_eq!(plan.observe(t0 + s(20), 40), Some(21));
        assert_eq!(plan.observe(t0 + s(21), 41), None);
        assert_eq!(PeriodicPlan::new(s(3600)).interval(), s(360));
    }

    #[test]
    fn revision_mode_keeps_the_last_n_revisions() {
        assert_eq!(revision_target(100, 1000), None);
        assert_eq!(revision_target(1000, 1000), None);
        assert_eq!(revision_target(1500, 1000), Some(500));
    }
}
