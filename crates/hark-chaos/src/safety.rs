//! The lease checkers that read time: a lease is a lock, so its key must
//! outlive every keep-alive the cluster acknowledged, and no two clients of
//! the lock workload may hold the mutex at once.
//!
//! Times are the run's clock in one process, so they compare directly; each
//! bound leans towards the cluster: a delete counts from when a watcher
//! received it (it happened earlier), a renewal from when it was sent (the
//! leader renewed later).

use std::collections::HashMap;

use crate::history::{History, WatchResponse};
use crate::report::Report;

/// No lease's key deleted before a TTL past its last grant or acknowledged
/// keep-alive (unless its client deleted it or revoked first).
pub fn check_lease_safety(history: &History, report: &mut Report) {
    let mut first_delete_seen: HashMap<&str, u64> = HashMap::new();
    for w in &history.watches {
        for r in &w.responses {
            let WatchResponse::Events {
                events,
                received_us,
                ..
            } = r
            else {
                continue;
            };
            if *received_us == 0 {
                continue;
            }
            for e in events.iter().filter(|e| e.value.is_none()) {
                let seen = first_delete_seen.entry(&e.key).or_insert(u64::MAX);
                *seen = (*seen).min(*received_us);
            }
        }
    }
    let mut checked = 0;
    for lease in history.leases.iter().filter(|l| l.granted_us > 0) {
        let Some(&deleted_by) = first_delete_seen.get(lease.key.as_str()) else {
            continue;
        };
        checked += 1;
        let protected = lease.protected_until_us();
        if deleted_by < protected {
            report.anomaly(format!(
                "lease {:x} (client {}, key {}): its key was deleted by {:.3}s, before {:.3}s, \
                 a TTL of {} s after the last grant or keep-alive the cluster acknowledged \
                 ({} keep-alives answered; the client let go at {:?})",
                lease.lease,
                lease.client,
                lease.key,
                deleted_by as f64 / 1e6,
                protected as f64 / 1e6,
                lease.ttl,
                lease.renewals_sent_us.len(),
                lease.let_go_us.map(|t| format!("{:.3}s", t as f64 / 1e6)),
            ));
        }
    }
    if checked > 0 {
        report.facts.push(format!(
            "{checked} lease keys deleted: each checked against its last acknowledged keep-alive + TTL"
        ));
    }
}

/// No two holds of the lock workload's mutex overlap.
pub fn check_lock_holds(history: &History, report: &mut Report) {
    let mut holds: Vec<_> = history.locks.iter().collect();
    if holds.is_empty() {
        return;
    }
    holds.sort_by_key(|h| h.acquired_us);
    let mut overlaps = 0;
    for (i, a) in holds.iter().enumerate() {
        for b in holds[i + 1..]
            .iter()
            .take_while(|b| b.acquired_us < a.ended_us)
        {
            overlaps += 1;
            report.anomaly(format!(
                "two clients held the lock at once: client {} (lease {:x}, created at revision {}, \
                 through {}) from {:.3}s to {:.3}s ({}), and client {} (lease {:x}, created at \
                 revision {}, through {}) from {:.3}s",
                a.client,
                a.lease,
                a.create_revision,
                a.endpoint,
                a.acquired_us as f64 / 1e6,
                a.ended_us as f64 / 1e6,
                a.how_ended,
                b.client,
                b.lease,
                b.create_revision,
                b.endpoint,
                b.acquired_us as f64 / 1e6,
            ));
        }
    }
    if overlaps == 0 {
        let lost = holds.iter().filter(|h| h.how_ended != "released").count();
        report.facts.push(format!(
            "{} lock holds, none overlapping ({lost} ended by a lease that could have run out)",
            holds.len()
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{Event, LeaseFate, LeaseRecord, LockHold, WatchLog};

    fn lease(renewed: &[u64], let_go: Option<u64>) -> LeaseRecord {
        LeaseRecord {
            client: 0,
            lease: 0xab,
            ttl: 3,
            key: "/chaos/l0-1".into(),
            put_revision: Some(2),
            kept_alive: renewed.len(),
            fate: LeaseFate::LeftToExpire,
            granted_us: 1_000_000,
            renewals_sent_us: renewed.to_vec(),
            let_go_us: let_go,
        }
    }

    fn deleted_at(received_us: u64) -> WatchLog {
        WatchLog {
            watcher: 0,
            endpoint: "m0".into(),
            prev_kv: false,
            no_delete: false,
            responses: vec![WatchResponse::Events {
                header_revision: 3,
                events: vec![Event {
                    revision: 3,
                    key: "/chaos/l0-1".into(),
                    value: None,
                    prev_value: None,
                }],
                received_us,
            }],
        }
    }

    fn anomalies(h: &History) -> Vec<String> {
        let mut report = Report::default();
        check_lease_safety(h, &mut report);
        check_lock_holds(h, &mut report);
        report.anomalies
    }

    #[test]
    fn a_key_deleted_before_its_renewed_ttl_ran_out_is_caught() {
        let mut h = History::default();
        h.leases.push(lease(&[2_000_000, 3_000_000], None));
        // Renewed at 3 s with TTL 3: protected until 6 s.
        h.watches.push(deleted_at(5_500_000));
        let found = anomalies(&h);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].contains("before 6.000s"), "{found:?}");
        h.watches = vec![deleted_at(6_200_000)];
        assert_eq!(anomalies(&h), Vec::<String>::new());
    }

    #[test]
    fn a_key_its_client_let_go_of_may_go_at_once() {
        let mut h = History::default();
        h.leases.push(lease(&[3_000_000], Some(3_500_000)));
        h.watches.push(deleted_at(3_600_000));
        assert_eq!(anomalies(&h), Vec::<String>::new());
        h.watches = vec![deleted_at(3_400_000)];
        assert_eq!(anomalies(&h).len(), 1);
    }

    fn hold(client: usize, acquired_us: u64, ended_us: u64) -> LockHold {
        LockHold {
            client,
            endpoint: format!("m{client}"),
            lease: client as i64,
            key: format!("/chaos/lock/{client}"),
            create_revision: client as i64 + 2,
            acquired_us,
            ended_us,
            how_ended: "released".into(),
        }
    }

    #[test]
    fn overlapping_lock_holds_are_caught() {
        let mut h = History {
            locks: vec![hold(0, 1_000, 2_000), hold(1, 2_000, 3_000)],
            ..Default::default()
        };
        assert_eq!(anomalies(&h), Vec::<String>::new());
        h.locks.push(hold(2, 2_500, 2_600));
        let found = anomalies(&h);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].contains("client 1") && found[0].contains("client 2"));
    }
}
