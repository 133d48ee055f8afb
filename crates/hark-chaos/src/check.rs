//! The checkers. Each returns the anomalies it found, in words.
//!
//! - The revision log: every event any watcher received, by revision. Two
//!   watchers (on different members) disagreeing on a revision is an anomaly.
//! - Watch guarantees, as etcd's robustness suite names them: ordered,
//!   unique, atomic, reliable, resumable, bookmarkable, `prev_kv`.
//! - Writes: every acknowledged write is in the log at its revision; the
//!   members' final states are equal and equal the log's.
//! - Reads and CAS against the log, and real-time order of revisions.
//! - Lease safety and the lock workload's mutual exclusion (see
//!   [`crate::safety`]).
//! - Linearizability of each key's register history with stateright's
//!   tester (see [`crate::linearizable`]).

use std::collections::{BTreeMap, HashMap};

use crate::history::{Call, Event, History, LeaseFate, Op, Outcome, RevisionLog, WatchResponse};
use crate::report::Report;

pub fn check(history: &History) -> Report {
    let mut report = Report::default();
    let log = revision_log(history, &mut report);
    check_watches(history, &log, &mut report);
    check_writes_and_reads(history, &log, &mut report);
    check_final_state(history, &log, &mut report);
    check_leases(history, &log, &mut report);
    crate::safety::check_lease_safety(history, &mut report);
    crate::safety::check_lock_holds(history, &mut report);
    crate::limits::check(&history.limits, &mut report);
    crate::limits::check_hashes(&history.final_hashes, &mut report);
    crate::backup::check(history, &log, &mut report);
    check_lists(history, &log, &mut report);
    crate::linearizable::check(history, &log, &mut report.anomalies, &mut report.facts);
    report_failed_calls(history, &mut report);
    report
}

/// How many register calls failed, and how many of those began while a
/// fault was on or within 2 s of its end (a leader change, a member down):
/// what the clients' retries did not ride through.
fn report_failed_calls(history: &History, report: &mut Report) {
    if history.ops.is_empty() {
        return;
    }
    let undo = ["restart", "heal", "resume", "power back"];
    let mut windows = Vec::new();
    for (i, f) in history.faults.iter().enumerate() {
        if undo.iter().any(|u| f.what.starts_with(u)) {
            continue;
        }
        let end = history
            .faults
            .get(i + 1)
            .map_or(u64::MAX, |next| next.at_us.saturating_add(2_000_000));
        windows.push((f.at_us, end));
    }
    let failed: Vec<&Op> = history
        .ops
        .iter()
        .filter(|op| matches!(op.outcome, Outcome::Failed { .. }))
        .collect();
    let during = failed
        .iter()
        .filter(|op| {
            windows
                .iter()
                .any(|(from, to)| (*from..=*to).contains(&op.invoked_us))
        })
        .count();
    report.facts.push(format!(
        "{} of {} register calls failed ({during} of them during a fault or within 2 s of its end)",
        failed.len(),
        history.ops.len()
    ));
}

/// The union of what every watcher saw.
pub fn revision_log(history: &History, report: &mut Report) -> RevisionLog {
    let mut log = RevisionLog::new();
    for w in &history.watches {
        for r in &w.responses {
            let WatchResponse::Events { events, .. } = r else {
                continue;
            };
            for e in events {
                // prev_kv is not part of what happened; compare without it.
                let plain = Event {
                    prev_value: None,
                    ..e.clone()
                };
                match log.entry(e.revision).or_default().get(&e.key) {
                    Some(known) if *known != plain => report.anomaly(format!(
                        "members disagree on revision {} of {}: {known:?} and (watcher {} on {}) {plain:?}",
                        e.revision, e.key, w.watcher, w.endpoint
                    )),
                    Some(_) => {}
                    None => {
                        log.get_mut(&e.revision)
                            .expect("just inserted")
                            .insert(e.key.clone(), plain);
                    }
                }
            }
        }
    }
    report.facts.push(format!(
        "{} revisions in the log, seen by {} watchers",
        log.len(),
        history.watches.len()
    ));
    log
}

fn check_watches(history: &History, full: &RevisionLog, report: &mut Report) {
    let mut events_seen = 0usize;
    // The compactor's compactions, with when each was asked for.
    let asked = &history.compactions;
    // Every compaction known: those the compactor saw acknowledged, and
    // those a watch was canceled for (one whose answer was lost shows so).
    let compacted: Vec<i64> = history
        .compactions
        .iter()
        .map(|(_, revision)| *revision)
        .chain(history.watches.iter().flat_map(|w| {
            w.responses.iter().filter_map(|r| match r {
                WatchResponse::Broken {
                    compact_revision, ..
                } if *compact_revision > 0 => Some(*compact_revision),
                _ => None,
            })
        }))
        .collect();
    let without_deletes: RevisionLog = full
        .iter()
        .filter_map(|(rev, events)| {
            let puts: BTreeMap<String, Event> = events
                .iter()
                .filter(|(_, e)| e.value.is_some())
                .map(|(k, e)| (k.clone(), e.clone()))
                .collect();
            (!puts.is_empty()).then_some((*rev, puts))
        })
        .collect();
    for w in &history.watches {
        let who = format!("watcher {} on {}", w.watcher, w.endpoint);
        // What this watcher is owed: every event, or with its filter applied.
        let log = if w.no_delete { &without_deletes } else { full };
        let last_revision = log.keys().next_back().copied().unwrap_or(0);
        // The revision the stream must deliver next (or later, if nothing
        // happened in between).
        let mut expected_from = 1i64;
        let mut last: Option<(i64, String)> = None;
        let mut delivered_to = 0i64;
        // Set by a cancel for compaction: the watch may resume there, and
        // what came before is gone (not owed).
        let mut compacted_to = None;
        for r in &w.responses {
            match r {
                WatchResponse::Started { start_revision } => {
                    // Resumable: a watcher resumes right after what it saw.
                    let past_compaction =
                        compacted_to == Some(*start_revision) && *start_revision > expected_from;
                    if *start_revision != expected_from && !past_compaction {
                        report.anomaly(format!(
                            "{who}: resumed from {start_revision}, expected {expected_from}"
                        ));
                    }
                    expected_from = *start_revision;
                    compacted_to = None;
                }
                WatchResponse::Progress { revision } => {
                    // Bookmarkable: nothing up to the bookmark is still owed.
                    if expected_from <= *revision
                        && let Some((owed, _)) = log.range(expected_from..=*revision).next()
                    {
                        report.anomaly(format!(
                            "{who}: progress at {revision} while revision {owed} was not delivered"
                        ));
                    }
                    delivered_to = delivered_to.max(*revision);
                    expected_from = expected_from.max(revision + 1);
                }
                WatchResponse::Events {
                    events,
                    received_us,
                    ..
                } => {
                    let mut revisions: Vec<i64> = events.iter().map(|e| e.revision).collect();
                    revisions.dedup();
                    for e in events {
                        events_seen += 1;
                        // Ordered and unique.
                        let here = (e.revision, e.key.clone());
                        if let Some(prev) = &last
                            && *prev >= here
                        {
                            report.anomaly(format!(
                                "{who}: event {here:?} after {prev:?} (out of order or repeated)"
                            ));
                        }
                        last = Some(here);
                        // Reliable: no revision skipped.
                        if expected_from < e.revision
                            && let Some((skipped, _)) = log.range(expected_from..e.revision).next()
                        {
                            report.anomaly(format!(
                                "{who}: revision {skipped} skipped (next delivered: {})",
                                e.revision
                            ));
                        }
                        expected_from = expected_from.max(e.revision + 1);
                        if w.prev_kv {
                            let compaction = Compaction {
                                known: &compacted,
                                asked,
                                received_us: *received_us,
                            };
                            check_prev_kv(full, e, &compaction, &who, report);
                        }
                        if w.no_delete && e.value.is_none() {
                            report.anomaly(format!(
                                "{who}: a delete of {} at {} despite its NODELETE filter",
                                e.key, e.revision
                            ));
                        }
                    }
                    // Atomic: a revision's events arrive in one response.
                    for rev in revisions {
                        let got = events.iter().filter(|e| e.revision == rev).count();
                        let all = log.get(&rev).map_or(0, BTreeMap::len);
                        if got != all {
                            report.anomaly(format!(
                                "{who}: revision {rev} split: {got} of its {all} events in one response"
                            ));
                        }
                        expected_from = rev + 1;
                        delivered_to = delivered_to.max(rev);
                    }
                }
                WatchResponse::Broken {
                    compact_revision, ..
                } => {
                    if *compact_revision > 0 {
                        compacted_to = Some(*compact_revision);
                        // The events before it are gone, not skipped.
                        delivered_to = delivered_to.max(compact_revision - 1);
                    }
                }
            }
        }
        // Reliable to the end: the watcher drained the whole log.
        if delivered_to < last_revision {
            report.anomaly(format!(
                "{who}: delivered up to revision {delivered_to}, the log goes to {last_revision}"
            ));
        }
    }
    report.facts.push(format!(
        "{events_seen} watch events checked (ordered, unique, atomic, reliable, resumable, bookmarkable, prev_kv, filters)"
    ));
}

/// The value `key` held just before `revision` (None: absent).
fn value_before(log: &RevisionLog, key: &str, revision: i64) -> Option<String> {
    log.range(..revision)
        .rev()
        .find_map(|(_, events)| events.get(key))
        .and_then(|e| e.value.clone())
}

/// The value and mod_revision of `key` as of `revision`.
fn value_at(log: &RevisionLog, key: &str, revision: i64) -> Option<(String, i64)> {
    log.range(..=revision)
        .rev()
        .find_map(|(rev, events)| events.get(key).map(|e| (e.value.clone(), *rev)))
        .and_then(|(v, rev)| v.map(|v| (v, rev)))
}

/// What the checker knows of compactions, for one response's prev_kvs.
struct Compaction<'a> {
    /// Every revision the store was compacted to.
    known: &'a [i64],
    /// The compactor's: (when it was asked for, revision).
    asked: &'a [(u64, i64)],
    /// When the response carrying the event arrived.
    received_us: u64,
}

impl Compaction<'_> {
    /// Whether the event at `revision` may come without its prev_kv. etcd
    /// reads the previous value (at `revision - 1`) as it sends the event,
    /// so it is gone when the store was compacted past it by then:
    /// * at exactly a compaction revision C (a watch started at C, or the
    ///   event sent after C's compaction);
    /// * at or below a revision C whose compaction was asked for before the
    ///   response arrived: the event was read from history (or the window)
    ///   before the compaction applied and sent after it, as a member that
    ///   replays a burst of entries does (etcd's unsynced watchers the same).
    fn excuses(&self, revision: i64) -> bool {
        self.known.contains(&revision)
            || self
                .asked
                .iter()
                .any(|&(at, to)| revision <= to && at < self.received_us)
    }
}

fn check_prev_kv(
    log: &RevisionLog,
    e: &Event,
    compaction: &Compaction,
    who: &str,
    report: &mut Report,
) {
    let want = value_before(log, &e.key, e.revision);
    let gone_with_compaction = e.prev_value.is_none() && compaction.excuses(e.revision);
    if e.prev_value != want && !gone_with_compaction {
        report.anomaly(format!(
            "{who}: prev_kv of {} at {} is {:?}, the history says {want:?}",
            e.key, e.revision, e.prev_value
        ));
    }
}

fn check_writes_and_reads(history: &History, log: &RevisionLog, report: &mut Report) {
    let last_revision = log.keys().next_back().copied().unwrap_or(0);
    let mut acked = 0;
    for op in &history.ops {
        let who = || format!("client {} {:?} on {}", op.client, op.call, op.key);
        match (&op.call, &op.outcome) {
            (Call::Put { value } | Call::Cas { value, .. }, Outcome::Written { revision }) => {
                acked += 1;
                // Nothing acknowledged is lost.
                let logged = log.get(revision).and_then(|events| events.get(&op.key));
                if logged.and_then(|e| e.value.as_ref()) != Some(value) {
                    report.anomaly(format!(
                        "{}: acknowledged at revision {revision}, the log has {logged:?}",
                        who()
                    ));
                }
            }
            (Call::CasDelete { .. }, Outcome::Written { revision }) => {
                acked += 1;
                let logged = log.get(revision).and_then(|events| events.get(&op.key));
                if logged.is_none_or(|e| e.value.is_some()) {
                    report.anomaly(format!(
                        "{}: delete acknowledged at revision {revision}, the log has {logged:?}",
                        who()
                    ));
                }
            }
            (
                Call::Cas { expect, .. } | Call::CasDelete { expect },
                Outcome::NotWritten { revision },
            ) => {
                let current = value_at(log, &op.key, *revision).map_or(0, |(_, m)| m);
                if current == *expect {
                    report.anomaly(format!(
                        "{}: compare failed at revision {revision}, but the key's mod_revision was {expect} then",
                        who()
                    ));
                }
            }
            (Call::Get { .. }, Outcome::Read { revision, value }) => {
                if *revision > last_revision {
                    report.anomaly(format!(
                        "{}: read at revision {revision}, past the last ({last_revision})",
                        who()
                    ));
                }
                let want = value_at(log, &op.key, *revision);
                if *value != want {
                    report.anomaly(format!(
                        "{}: read {value:?} at revision {revision}, the log has {want:?}",
                        who()
                    ));
                }
            }
            _ => {}
        }
    }
    check_real_time(&history.ops, report);
    report.facts.push(format!(
        "{} operations ({acked} acknowledged writes) checked against the log",
        history.ops.len()
    ));
}

/// The highest revision acknowledged by each moment of a run, to ask what
/// any operation that began at a given moment must at least see.
struct AckedFloor(Vec<(u64, i64)>);

impl AckedFloor {
    fn of(ops: &[Op]) -> AckedFloor {
        let mut acked: Vec<(u64, i64)> = ops
            .iter()
            .filter_map(|op| match (&op.outcome, op.returned_us) {
                (Outcome::Written { revision }, Some(at)) => Some((at, *revision)),
                _ => None,
            })
            .collect();
        acked.sort_unstable();
        let mut max = 0;
        for (_, rev) in &mut acked {
            max = max.max(*rev);
            *rev = max;
        }
        AckedFloor(acked)
    }

    /// The last acknowledgement strictly before `t`: when it came, and the
    /// highest revision acknowledged by then.
    fn before(&self, t: u64) -> Option<(u64, i64)> {
        let n = self.0.partition_point(|(at, _)| *at < t);
        n.checked_sub(1).map(|i| self.0[i])
    }
}

/// Revisions respect real time: an operation that began after a write was
/// acknowledged sees that write's revision or a later one. Serializable
/// reads may be stale and are left out.
fn check_real_time(ops: &[Op], report: &mut Report) {
    let acked = AckedFloor::of(ops);
    for op in ops {
        let revision = match (&op.call, &op.outcome) {
            (Call::Get { serializable: true }, _) => continue,
            (_, Outcome::Written { revision })
            | (_, Outcome::NotWritten { revision })
            | (_, Outcome::Read { revision, .. }) => *revision,
            _ => continue,
        };
        if let Some((at, floor)) = acked.before(op.invoked_us) {
            let stale = match op.outcome {
                // A write takes a revision after every acknowledged one.
                Outcome::Written { .. } => revision <= floor,
                _ => revision < floor,
            };
            if stale {
                report.anomaly(format!(
                    "client {} {:?} on {} began at {}µs and got revision {revision}, but revision {floor} was acknowledged at {at}µs",
                    op.client, op.call, op.key, op.invoked_us
                ));
            }
        }
    }
}

/// A paginated list at revision R holds exactly the keys (values and
/// mod_revisions) the log has under its prefix as of R, and R is no older
/// than any write acknowledged before the list began.
fn check_lists(history: &History, log: &RevisionLog, report: &mut Report) {
    let acked = AckedFloor::of(&history.ops);
    let mut pages = 0;
    for list in &history.lists {
        pages += list.pages;
        let who = || {
            format!(
                "list of {} by client {} at revision {}",
                list.prefix, list.client, list.revision
            )
        };
        let floor = acked.before(list.invoked_us).map_or(0, |(_, floor)| floor);
        if list.revision < floor {
            report.anomaly(format!(
                "{}: began after revision {floor} was acknowledged",
                who()
            ));
        }
        let mut want: BTreeMap<&str, (&str, i64)> = BTreeMap::new();
        for (rev, events) in log.range(..=list.revision) {
            for e in events.values().filter(|e| e.key.starts_with(&list.prefix)) {
                match &e.value {
                    Some(v) => want.insert(&e.key, (v, *rev)),
                    None => want.remove(e.key.as_str()),
                };
            }
        }
        let got: BTreeMap<&str, (&str, i64)> = list
            .kvs
            .iter()
            .map(|(k, v, m)| (k.as_str(), (v.as_str(), *m)))
            .collect();
        if got.len() != list.kvs.len() {
            report.anomaly(format!("{}: a key listed twice across pages", who()));
        }
        if got != want {
            let missing = want
                .keys()
                .filter(|k| !got.contains_key(*k))
                .take(3)
                .collect::<Vec<_>>();
            let wrong = got
                .iter()
                .filter(|(k, v)| want.get(*k) != Some(*v))
                .take(3)
                .collect::<Vec<_>>();
            report.anomaly(format!(
                "{}: {} keys listed, the log has {} (missing e.g. {missing:?}; differing e.g. {wrong:?})",
                who(),
                got.len(),
                want.len()
            ));
        }
    }
    if !history.lists.is_empty() {
        report.facts.push(format!(
            "{} paginated lists ({pages} pages) checked against the log; {} compactions",
            history.lists.len(),
            history.compactions.len()
        ));
    }
}

/// A key put under a lease is deleted (a DELETE event) once the lease ends:
/// by the revoke's answer when it was revoked, by the end of the run when it
/// was left to expire.
fn check_leases(history: &History, log: &RevisionLog, report: &mut Report) {
    let mut ended = 0;
    for lease in &history.leases {
        let who = || format!("lease {:x} (key {})", lease.lease, lease.key);
        let put_at = log
            .iter()
            .find(|(_, events)| events.get(&lease.key).is_some_and(|e| e.value.is_some()))
            .map(|(rev, _)| *rev);
        if let Some(acked) = lease.put_revision
            && put_at != Some(acked)
        {
            report.anomaly(format!(
                "{}: put acknowledged at revision {acked}, the log has it at {put_at:?}",
                who()
            ));
            continue;
        }
        let Some(put_at) = put_at else {
            continue; // an unanswered put that did not happen
        };
        let deleted_at = log
            .range(put_at + 1..)
            .find(|(_, events)| events.get(&lease.key).is_some_and(|e| e.value.is_none()))
            .map(|(rev, _)| *rev);
        match (&lease.fate, deleted_at) {
            (LeaseFate::Revoked { revision }, Some(d)) if d <= *revision => ended += 1,
            (LeaseFate::Revoked { revision }, _) => report.anomaly(format!(
                "{}: revoke acknowledged at revision {revision}, but the key was deleted at {deleted_at:?}",
                who()
            )),
            (_, Some(_)) => ended += 1,
            (_, None) => report.anomaly(format!(
                "{}: the lease ended (left to expire or revoked without an answer), but its key was never deleted",
                who()
            )),
        }
    }
    if !history.leases.is_empty() {
        report.facts.push(format!(
            "{} leases, {ended} of their keys deleted when the lease ended",
            history.leases.len()
        ));
    }
}

fn check_final_state(history: &History, log: &RevisionLog, report: &mut Report) {
    let last_revision = log.keys().next_back().copied().unwrap_or(0);
    let mut want: HashMap<&str, &str> = HashMap::new();
    for events in log.values() {
        for e in events.values() {
            match &e.value {
                Some(v) => want.insert(&e.key, v),
                None => want.remove(e.key.as_str()),
            };
        }
    }
    for read in &history.final_reads {
        let (endpoint, revision) = (&read.endpoint, &read.revision);
        if *revision != last_revision {
            report.anomaly(format!(
                "{endpoint} ended at revision {revision}, the log at {last_revision}"
            ));
        }
        let got: HashMap<&str, &str> = read
            .kvs
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        if got != want {
            let differ = want
                .iter()
                .filter(|(k, v)| got.get(*k) != Some(*v))
                .take(3)
                .collect::<Vec<_>>();
            report.anomaly(format!(
                "{endpoint}'s final state differs from the log ({} keys vs {}; e.g. {differ:?})",
                got.len(),
                want.len()
            ));
        }
    }
    report.facts.push(format!(
        "final state of {} members compared at revision {last_revision}",
        history.final_reads.len()
    ));
}

#[cfg(test)]
mod tests {
    //! Each guarantee broken on purpose in an otherwise good history must be
    //! reported; the good history must pass.
    use super::*;
    use crate::history::{FinalRead, Op, WatchLog};

    fn event(revision: i64, key: &str, value: &str, prev: Option<&str>) -> Event {
        Event {
            revision,
            key: key.into(),
            value: Some(value.into()),
            prev_value: prev.map(String::from),
        }
    }

    fn op(client: usize, key: &str, call: Call, at: (u64, u64), outcome: Outcome) -> Op {
        Op {
            client,
            key: key.into(),
            call,
            invoked_us: at.0,
            returned_us: Some(at.1),
            outcome,
        }
    }

    fn put(value: &str) -> Call {
        Call::Put {
            value: value.into(),
        }
    }

    const LINEARIZABLE: Call = Call::Get {
        serializable: false,
    };

    /// Revisions 2..=4: a=1, b=1, a=2; two watchers (one with prev_kv).
    fn good() -> History {
        let events = [
            event(2, "a", "1", None),
            event(3, "b", "1", None),
            event(4, "a", "2", Some("1")),
        ];
        let watch = |watcher: usize, prev_kv: bool| WatchLog {
            watcher,
            endpoint: format!("m{watcher}"),
            prev_kv,
            no_delete: false,
            responses: vec![
                WatchResponse::Started { start_revision: 1 },
                WatchResponse::Events {
                    header_revision: 3,
                    received_us: 0,
                    events: events[..2]
                        .iter()
                        .map(|e| Event {
                            prev_value: if prev_kv { e.prev_value.clone() } else { None },
                            ..e.clone()
                        })
                        .collect(),
                },
                WatchResponse::Progress { revision: 3 },
                WatchResponse::Broken {
                    reason: "member killed".into(),
                    compact_revision: 0,
                },
                WatchResponse::Started { start_revision: 4 },
                WatchResponse::Events {
                    header_revision: 4,
                    received_us: 0,
                    events: vec![Event {
                        prev_value: if prev_kv { Some("1".into()) } else { None },
                        ..events[2].clone()
                    }],
                },
            ],
        };
        History {
            ops: vec![
                op(0, "a", put("1"), (0, 10), Outcome::Written { revision: 2 }),
                op(1, "b", put("1"), (5, 20), Outcome::Written { revision: 3 }),
                op(0, "a", put("2"), (30, 40), Outcome::Written { revision: 4 }),
                op(
                    1,
                    "a",
                    LINEARIZABLE,
                    (25, 35),
                    Outcome::Read {
                        revision: 3,
                        value: Some(("1".into(), 2)),
                    },
                ),
                op(
                    2,
                    "a",
                    Call::Cas {
                        expect: 2,
                        value: "x".into(),
                    },
                    (50, 60),
                    Outcome::NotWritten { revision: 4 },
                ),
            ],
            watches: vec![watch(0, true), watch(1, false)],
            final_reads: vec![FinalRead {
                endpoint: "m0".into(),
                revision: 4,
                kvs: vec![("a".into(), "2".into()), ("b".into(), "1".into())],
            }],
            ..Default::default()
        }
    }

    fn anomalies(h: &History) -> Vec<String> {
        check(h).anomalies
    }

    fn events_of(h: &mut History, watcher: usize, response: usize) -> &mut Vec<Event> {
        match &mut h.watches[watcher].responses[response] {
            WatchResponse::Events { events, .. } => events,
            other => panic!("response {response} is {other:?}"),
        }
    }

    fn assert_caught(h: &History, words: &str) {
        let found = anomalies(h);
        assert!(
            found.iter().any(|a| a.contains(words)),
            "expected an anomaly saying {words:?}, got {found:#?}"
        );
    }

    #[test]
    fn a_good_history_has_no_anomaly() {
        assert_eq!(anomalies(&good()), Vec::<String>::new());
    }

    #[test]
    fn a_lost_event_is_unreliable() {
        let mut h = good();
        events_of(&mut h, 1, 1).remove(0);
        assert_caught(&h, "revision 2 skipped");
    }

    #[test]
    fn a_repeated_or_reordered_event_is_caught() {
        let mut h = good();
        let again = events_of(&mut h, 1, 1)[0].clone();
        events_of(&mut h, 1, 5).insert(0, again);
        assert_caught(&h, "out of order or repeated");
        let mut h = good();
        events_of(&mut h, 1, 1).swap(0, 1);
        assert_caught(&h, "out of order or repeated");
    }

    #[test]
    fn a_split_revision_is_not_atomic() {
        let mut h = good();
        // Revision 3 wrote two keys, but watcher 1 got only one of them in
        // that response.
        for w in 0..2 {
            events_of(&mut h, w, 1).push(event(3, "c", "1", None));
        }
        events_of(&mut h, 1, 1).pop();
        assert_caught(&h, "revision 3 split");
    }

    #[test]
    fn a_wrong_prev_kv_is_caught() {
        let mut h = good();
        events_of(&mut h, 0, 5)[0].prev_value = Some("0".into());
        assert_caught(&h, "prev_kv of a at 4");
    }

    #[test]
    fn a_missing_prev_kv_is_caught_unless_compacted_at_its_revision() {
        let mut h = good();
        events_of(&mut h, 0, 5)[0].prev_value = None;
        assert_caught(&h, "prev_kv of a at 4");
        // Compacted at 4: the previous value, read at 3, is gone (etcd too
        // sends the event without it).
        h.compactions.push((0, 4));
        assert_eq!(anomalies(&h), Vec::<String>::new());
        // Compacted elsewhere: no excuse.
        h.compactions = vec![(0, 3)];
        assert_caught(&h, "prev_kv of a at 4");
    }

    #[test]
    fn a_missing_prev_kv_is_excused_by_a_compaction_past_it_asked_for_before_it_came() {
        let mut h = good();
        events_of(&mut h, 0, 5)[0].prev_value = None;
        let WatchResponse::Events { received_us, .. } = &mut h.watches[0].responses[5] else {
            panic!("response 5 carries events");
        };
        *received_us = 2_000;
        // Compacted to 6, asked for before the event came: read before the
        // compaction applied, sent after it, its previous value was gone.
        h.compactions = vec![(1_000, 6)];
        assert_eq!(anomalies(&h), Vec::<String>::new());
        // Asked for only after the event came: no excuse.
        h.compactions = vec![(3_000, 6)];
        assert_caught(&h, "prev_kv of a at 4");
        // Asked for before, but below the event's revision: no excuse.
        h.compactions = vec![(1_000, 3)];
        assert_caught(&h, "prev_kv of a at 4");
    }

    #[test]
    fn an_early_bookmark_is_caught() {
        let mut h = good();
        h.watches[1].responses[2] = WatchResponse::Progress { revision: 4 };
        // Revision 4 still came later: the bookmark promised it was sent.
        h.watches[1].responses[4] = WatchResponse::Started { start_revision: 5 };
        assert_caught(&h, "progress at 4 while revision 4 was not delivered");
    }

    #[test]
    fn a_resume_from_the_wrong_revision_is_caught() {
        let mut h = good();
        h.watches[0].responses[4] = WatchResponse::Started { start_revision: 2 };
        assert_caught(&h, "resumed from 2, expected 4");
    }

    #[test]
    fn members_disagreeing_on_a_revision_is_caught() {
        let mut h = good();
        events_of(&mut h, 1, 1)[1].value = Some("other".into());
        assert_caught(&h, "members disagree on revision 3");
    }

    #[test]
    fn a_lost_acknowledged_write_is_caught() {
        let mut h = good();
        // Acknowledged, but no member has it.
        h.ops.push(op(
            3,
            "d",
            put("9"),
            (70, 80),
            Outcome::Written { revision: 5 },
        ));
        assert_caught(&h, "acknowledged at revision 5");
    }

    #[test]
    fn a_stale_linearizable_read_is_caught() {
        let mut h = good();
        // Began after revision 4 was acknowledged, read at 3.
        h.ops.push(op(
            3,
            "a",
            LINEARIZABLE,
            (45, 48),
            Outcome::Read {
                revision: 3,
                value: Some(("1".into(), 2)),
            },
        ));
        assert_caught(&h, "got revision 3, but revision 4 was acknowledged");
        assert_caught(&h, "a: not linearizable");
    }

    #[test]
    fn a_read_that_does_not_match_the_log_is_caught() {
        let mut h = good();
        h.ops[3].outcome = Outcome::Read {
            revision: 3,
            value: Some(("2".into(), 4)),
        };
        assert_caught(&h, "the log has Some((\"1\", 2))");
    }

    #[test]
    fn an_acknowledged_delete_missing_from_the_log_is_caught() {
        let mut h = good();
        // The log has a put of a at 4, not a delete.
        h.ops.push(op(
            3,
            "a",
            Call::CasDelete { expect: 2 },
            (31, 39),
            Outcome::Written { revision: 4 },
        ));
        assert_caught(&h, "delete acknowledged at revision 4");
    }

    #[test]
    fn a_wrong_cas_answer_is_caught() {
        let mut h = good();
        h.ops[4].call = Call::Cas {
            expect: 4,
            value: "x".into(),
        };
        assert_caught(&h, "compare failed at revision 4");
    }

    fn with_lease(fate: LeaseFate, deleted: bool) -> History {
        let mut h = good();
        let mut events = vec![event(5, "l", "lease", None)];
        if deleted {
            events.push(Event {
                revision: 6,
                key: "l".into(),
                value: None,
                prev_value: Some("lease".into()),
            });
        }
        for w in 0..2 {
            let prev_kv = h.watches[w].prev_kv;
            h.watches[w].responses.push(WatchResponse::Events {
                header_revision: 6,
                received_us: 0,
                events: events
                    .iter()
                    .map(|e| Event {
                        prev_value: if prev_kv { e.prev_value.clone() } else { None },
                        ..e.clone()
                    })
                    .collect(),
            });
        }
        h.final_reads[0].revision = if deleted { 6 } else { 5 };
        if !deleted {
            h.final_reads[0].kvs.push(("l".into(), "lease".into()));
        }
        h.leases.push(crate::history::LeaseRecord {
            client: 0,
            lease: 0xab,
            ttl: 3,
            key: "l".into(),
            put_revision: Some(5),
            kept_alive: 1,
            fate,
            granted_us: 0,
            renewals_sent_us: Vec::new(),
            let_go_us: None,
        });
        h
    }

    #[test]
    fn a_lease_that_ends_deletes_its_key() {
        assert_eq!(
            anomalies(&with_lease(LeaseFate::Revoked { revision: 6 }, true)),
            Vec::<String>::new()
        );
        assert_eq!(
            anomalies(&with_lease(LeaseFate::LeftToExpire, true)),
            Vec::<String>::new()
        );
        assert_caught(
            &with_lease(LeaseFate::LeftToExpire, false),
            "its key was never deleted",
        );
        assert_caught(
            &with_lease(LeaseFate::Revoked { revision: 6 }, false),
            "revoke acknowledged at revision 6",
        );
    }

    #[test]
    fn a_nodelete_watcher_is_owed_every_put_and_no_delete() {
        let filtered = |deliver_delete: bool| {
            let mut h = with_lease(LeaseFate::LeftToExpire, true);
            let mut events = vec![
                event(2, "a", "1", None),
                event(3, "b", "1", None),
                event(4, "a", "2", None),
                event(5, "l", "lease", None),
            ];
            if deliver_delete {
                events.push(Event {
                    revision: 6,
                    key: "l".into(),
                    value: None,
                    prev_value: None,
                });
            }
            h.watches.push(WatchLog {
                watcher: 2,
                endpoint: "m0".into(),
                prev_kv: false,
                no_delete: true,
                responses: vec![
                    WatchResponse::Started { start_revision: 1 },
                    WatchResponse::Events {
                        header_revision: 6,
                        received_us: 0,
                        events,
                    },
                ],
            });
            h
        };
        assert_eq!(anomalies(&filtered(false)), Vec::<String>::new());
        assert_caught(&filtered(true), "despite its NODELETE filter");
    }

    #[test]
    fn a_diverged_final_state_is_caught() {
        let mut h = good();
        h.final_reads[0].kvs[1].1 = "stale".into();
        assert_caught(&h, "final state differs");
        let mut h = good();
        h.final_reads[0].revision = 3;
        assert_caught(&h, "ended at revision 3");
    }
}
