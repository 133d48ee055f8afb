//! Linearizability of each key as a register, with stateright's
//! `LinearizabilityTester`. A put or CAS that was never answered may or may
//! not have happened: the revision log says which, and at what revision; one
//! that happened is answered (with that revision) when the revision was
//! first seen in any answer, so the tester may place it anywhere in between
//! where its revision fits; one that did not is left out.
//!
//! The search has no memo and can take exponential time, so each key's
//! history is cut where no operation on it is in flight, and each piece is
//! tested from the state the previous one ended in. That is sound here:
//! writes to a key take increasing revisions, so every linearization of a
//! piece ends with the same write (the highest revision). Serializable reads
//! are not linearizable by design and are checked against the log instead.

use std::collections::BTreeMap;
use std::sync::mpsc;
use std::time::Duration;

use stateright::semantics::{ConsistencyTester, LinearizabilityTester, SequentialSpec};

use crate::history::{Call, History, Outcome, RevisionLog};

/// A key: its value and mod_revision, and the revision of its last write
/// (a delete included: the next write must come after it).
#[derive(Clone, Debug, Default)]
pub struct Register {
    value: Option<(String, i64)>,
    last_write: i64,
}

impl Register {
    fn mod_revision(&self) -> i64 {
        self.value.as_ref().map_or(0, |(_, m)| *m)
    }
}

#[derive(Clone, Debug)]
pub enum RegisterOp {
    /// `revision`: where the log put a write that was never answered.
    Put {
        value: String,
        revision: i64,
    },
    Get,
    Cas {
        expect: i64,
        value: String,
        revision: i64,
    },
    CasDelete {
        expect: i64,
        revision: i64,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub enum RegisterRet {
    Written(i64),
    NotWritten,
    Read(Option<(String, i64)>),
}

impl SequentialSpec for Register {
    type Op = RegisterOp;
    type Ret = RegisterRet;

    /// The sequential semantics (the tester calls it only for operations
    /// still in flight at the end, which `timelines` never leaves).
    fn invoke(&mut self, op: &RegisterOp) -> RegisterRet {
        match op {
            RegisterOp::Put { value, revision } => {
                self.value = Some((value.clone(), *revision));
                self.last_write = *revision;
                RegisterRet::Written(*revision)
            }
            RegisterOp::Get => RegisterRet::Read(self.value.clone()),
            RegisterOp::Cas {
                expect,
                value,
                revision,
            } => {
                if self.mod_revision() == *expect {
                    self.value = Some((value.clone(), *revision));
                    self.last_write = *revision;
                    RegisterRet::Written(*revision)
                } else {
                    RegisterRet::NotWritten
                }
            }
            RegisterOp::CasDelete { expect, revision } => {
                if self.mod_revision() == *expect {
                    self.value = None;
                    self.last_write = *revision;
                    RegisterRet::Written(*revision)
                } else {
                    RegisterRet::NotWritten
                }
            }
        }
    }

    /// Revisions come from the server, so an answered write is valid at any
    /// revision after the key's last write.
    fn is_valid_step(&mut self, op: &RegisterOp, ret: &RegisterRet) -> bool {
        let current = self.mod_revision();
        let after = |r: &i64| *r > self.last_write;
        match (op, ret) {
            (RegisterOp::Put { value, .. }, RegisterRet::Written(r)) if after(r) => {
                self.value = Some((value.clone(), *r));
                self.last_write = *r;
                true
            }
            (RegisterOp::Get, RegisterRet::Read(read)) => *read == self.value,
            (RegisterOp::Cas { expect, value, .. }, RegisterRet::Written(r))
                if *expect == current && after(r) =>
            {
                self.value = Some((value.clone(), *r));
                self.last_write = *r;
                true
            }
            (RegisterOp::CasDelete { expect, .. }, RegisterRet::Written(r))
                if *expect == current && after(r) =>
            {
                self.value = None;
                self.last_write = *r;
                true
            }
            (
                RegisterOp::Cas { expect, .. } | RegisterOp::CasDelete { expect, .. },
                RegisterRet::NotWritten,
            ) => *expect != current,
            _ => false,
        }
    }
}

/// One key's history in real-time order: (time, thread, invocation or return).
pub type Timeline = Vec<(u64, u64, Step)>;

#[derive(Clone, Debug)]
pub enum Step {
    Invoke(RegisterOp),
    Return(RegisterRet),
}

/// Builds each key's timeline from the history.
fn timelines(history: &History, log: &RevisionLog) -> BTreeMap<String, Timeline> {
    // Where the log put each value (values are unique per run).
    let mut written_at: BTreeMap<(&str, &str), i64> = BTreeMap::new();
    for (rev, events) in log {
        for e in events.values() {
            if let Some(v) = &e.value {
                written_at.insert((e.key.as_str(), v.as_str()), *rev);
            }
        }
    }
    // When each revision was first known to exist: the earliest answer
    // carrying it or a later one. An unanswered write at revision R took
    // effect before then.
    let mut answered: Vec<(i64, u64)> = history
        .ops
        .iter()
        .filter_map(|op| {
            let revision = match op.outcome {
                Outcome::Written { revision }
                | Outcome::NotWritten { revision }
                | Outcome::Read { revision, .. } => revision,
                Outcome::Failed { .. } => return None,
            };
            Some((revision, op.returned_us?))
        })
        .collect();
    answered.sort_unstable();
    let mut earliest = u64::MAX;
    for entry in answered.iter_mut().rev() {
        earliest = earliest.min(entry.1);
        entry.1 = earliest;
    }
    let known_by = |revision: i64| {
        let i = answered.partition_point(|(r, _)| *r < revision);
        answered.get(i).map_or(u64::MAX, |(_, at)| *at)
    };
    // An unanswered CAS delete happened if the key's next event after the
    // revision it expected is a delete no answered operation claims.
    let mut claimed: std::collections::HashSet<i64> = history
        .ops
        .iter()
        .filter_map(|op| match op.outcome {
            Outcome::Written { revision } => Some(revision),
            _ => None,
        })
        .collect();
    let mut deleted_after = |key: &str, expect: i64| {
        let (rev, _) = log
            .range(expect + 1..)
            .find(|(_, events)| events.contains_key(key))?;
        let deleted = log[rev][key].value.is_none() && claimed.insert(*rev);
        deleted.then_some(*rev)
    };
    type Entry = ((i64, u8), u64, u64, RegisterOp, RegisterRet);
    let mut by_key: BTreeMap<String, Vec<Entry>> = BTreeMap::new();
    for op in &history.ops {
        let logged = |value: &str| written_at.get(&(op.key.as_str(), value)).copied();
        let (register_op, ret) = match (&op.call, &op.outcome) {
            (Call::Get { serializable: true }, _) => continue,
            (Call::Get { .. }, Outcome::Read { value, .. }) => {
                (RegisterOp::Get, Some(RegisterRet::Read(value.clone())))
            }
            (Call::Put { value }, Outcome::Written { revision }) => (
                RegisterOp::Put {
                    value: value.clone(),
                    revision: *revision,
                },
                Some(RegisterRet::Written(*revision)),
            ),
            (Call::Cas { expect, value }, Outcome::Written { revision }) => (
                RegisterOp::Cas {
                    expect: *expect,
                    value: value.clone(),
                    revision: *revision,
                },
                Some(RegisterRet::Written(*revision)),
            ),
            (Call::CasDelete { expect }, Outcome::Written { revision }) => (
                RegisterOp::CasDelete {
                    expect: *expect,
                    revision: *revision,
                },
                Some(RegisterRet::Written(*revision)),
            ),
            (Call::CasDelete { expect }, Outcome::NotWritten { .. }) => (
                RegisterOp::CasDelete {
                    expect: *expect,
                    revision: 0,
                },
                Some(RegisterRet::NotWritten),
            ),
            (
                Call::CasDelete { expect },
                Outcome::Failed {
                    definite: false, ..
                },
            ) => match deleted_after(&op.key, *expect) {
                Some(revision) => (
                    RegisterOp::CasDelete {
                        expect: *expect,
                        revision,
                    },
                    None,
                ),
                None => continue,
            },
            (Call::Cas { expect, value }, Outcome::NotWritten { .. }) => (
                RegisterOp::Cas {
                    expect: *expect,
                    value: value.clone(),
                    revision: 0,
                },
                Some(RegisterRet::NotWritten),
            ),
            (
                Call::Put { value },
                Outcome::Failed {
                    definite: false, ..
                },
            ) => match logged(value) {
                Some(revision) => (
                    RegisterOp::Put {
                        value: value.clone(),
                        revision,
                    },
                    None,
                ),
                None => continue,
            },
            (
                Call::Cas { expect, value },
                Outcome::Failed {
                    definite: false, ..
                },
            ) => match logged(value) {
                Some(revision) => (
                    RegisterOp::Cas {
                        expect: *expect,
                        value: value.clone(),
                        revision,
                    },
                    None,
                ),
                None => continue,
            },
            _ => continue,
        };
        let (returned, ret) = match (ret, op.returned_us) {
            (Some(ret), Some(returned)) => (returned, ret),
            _ => {
                // It happened, at the revision the log gives: as if answered
                // when that revision was first known to exist, so it may take
                // effect any time in between, where its revision fits.
                let revision = match &register_op {
                    RegisterOp::Put { revision, .. }
                    | RegisterOp::Cas { revision, .. }
                    | RegisterOp::CasDelete { revision, .. } => *revision,
                    RegisterOp::Get => unreachable!("only writes go unanswered here"),
                };
                (
                    known_by(revision).max(op.invoked_us),
                    RegisterRet::Written(revision),
                )
            }
        };
        // Where etcd's own order (by revision) puts it: a write at its
        // revision, a read or failed compare just after the revision it
        // was answered at.
        let witness = match (&ret, &op.outcome) {
            (RegisterRet::Written(r), _) => (*r, 0),
            (_, Outcome::Read { revision, .. } | Outcome::NotWritten { revision }) => {
                (*revision, 1)
            }
            _ => (i64::MAX, 1),
        };
        by_key.entry(op.key.clone()).or_default().push((
            witness,
            op.invoked_us,
            returned,
            register_op,
            ret,
        ));
    }
    by_key
        .into_iter()
        .map(|(key, mut ops)| {
            // One thread per operation (real-time order is kept all the
            // same: the tester records what completed before each
            // invocation), numbered in revision order, because the tester
            // tries threads in that order: a history that follows the
            // revision order is confirmed without a search.
            ops.sort_by_key(|(witness, invoked, ..)| (*witness, *invoked));
            let mut timeline: Timeline = Vec::with_capacity(ops.len() * 2);
            for (thread, (_, invoked, returned, op, ret)) in ops.into_iter().enumerate() {
                timeline.push((invoked, thread as u64, Step::Invoke(op)));
                timeline.push((returned, thread as u64, Step::Return(ret)));
            }
            // Stable: an operation's invocation stays before its own return.
            timeline.sort_by_key(|(at, _, _)| *at);
            (key, timeline)
        })
        .collect()
}

/// How long one key's search may take before it is reported undecided.
const SEARCH_BUDGET: Duration = Duration::from_secs(20);

/// Tests every key; anomalies name the key, facts count what was decided.
pub fn check(
    history: &History,
    log: &RevisionLog,
    anomalies: &mut Vec<String>,
    facts: &mut Vec<String>,
) {
    let (mut keys, mut ops, mut pieces) = (0, 0, 0);
    let mut undecided = Vec::new();
    for (key, timeline) in timelines(history, log) {
        keys += 1;
        ops += timeline
            .iter()
            .filter(|(_, _, s)| matches!(s, Step::Invoke(_)))
            .count();
        for (at, state, piece) in quiescent_pieces(timeline) {
            pieces += 1;
            match linearizable(state, piece) {
                Some(Ok(())) => {}
                Some(Err(why)) => {
                    anomalies.push(format!("{key}: not linearizable from {at}µs: {why}"));
                    break;
                }
                None => undecided.push(format!("{key} from {at}µs")),
            }
        }
    }
    facts.push(format!(
        "linearizability: {ops} register operations over {keys} keys in {pieces} pieces (stateright), {} undecided within {SEARCH_BUDGET:?}{}",
        undecided.len(),
        if undecided.is_empty() {
            String::new()
        } else {
            format!(": {undecided:?}")
        }
    ));
}

/// Cuts a key's timeline where nothing is in flight: (start time, the
/// register's state then, the piece).
fn quiescent_pieces(timeline: Timeline) -> Vec<(u64, Register, Timeline)> {
    let mut pieces = Vec::new();
    let mut state = Register::default();
    let mut piece: Timeline = Vec::new();
    let mut in_flight: BTreeMap<u64, RegisterOp> = BTreeMap::new();
    // The highest-revision write answered in the current piece (`None` as
    // the value: a delete).
    let mut last_write: Option<(Option<String>, i64)> = None;
    for (at, thread, step) in timeline {
        match &step {
            Step::Invoke(op) => {
                in_flight.insert(thread, op.clone());
            }
            Step::Return(ret) => {
                let written = match (in_flight.remove(&thread), ret) {
                    (
                        Some(RegisterOp::Put { value, .. } | RegisterOp::Cas { value, .. }),
                        RegisterRet::Written(r),
                    ) => Some((Some(value), *r)),
                    (Some(RegisterOp::CasDelete { .. }), RegisterRet::Written(r)) => {
                        Some((None, *r))
                    }
                    _ => None,
                };
                if let Some(w) = written
                    && last_write.as_ref().is_none_or(|(_, m)| *m < w.1)
                {
                    last_write = Some(w);
                }
            }
        }
        piece.push((at, thread, step));
        if in_flight.is_empty() {
            let start = piece[0].0;
            pieces.push((start, state.clone(), std::mem::take(&mut piece)));
            if let Some((value, r)) = last_write.take()
                && r > state.last_write
            {
                state.value = value.map(|v| (v, r));
                state.last_write = r;
            }
        }
    }
    if !piece.is_empty() {
        pieces.push((piece[0].0, state, piece));
    }
    pieces
}

/// `None` when the search ran out of time.
pub fn linearizable(start: Register, timeline: Timeline) -> Option<Result<(), String>> {
    let (tx, rx) = mpsc::channel();
    // The search recurses once per operation: a deep stack.
    std::thread::Builder::new()
        .stack_size(512 << 20)
        .spawn(move || {
            let mut tester = LinearizabilityTester::new(start);
            for (_, thread, step) in timeline {
                let recorded = match step {
                    Step::Invoke(op) => tester.on_invoke(thread, op).map(|_| ()),
                    Step::Return(ret) => tester.on_return(thread, ret).map(|_| ()),
                };
                if let Err(e) = recorded {
                    let _ = tx.send(Err(format!("malformed history: {e}")));
                    return;
                }
            }
            let verdict = if tester.is_consistent() {
                Ok(())
            } else {
                Err(format!(
                    "no linearization of its {} operations",
                    tester.len()
                ))
            };
            let _ = tx.send(verdict);
        })
        .expect("a checker thread");
    rx.recv_timeout(SEARCH_BUDGET).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(value: &str, revision: i64) -> RegisterOp {
        RegisterOp::Put {
            value: value.into(),
            revision,
        }
    }

    fn read(value: Option<(&str, i64)>) -> RegisterRet {
        RegisterRet::Read(value.map(|(v, m)| (v.to_string(), m)))
    }

    /// Two clients: 1 writes a then b; 2 reads during and after.
    fn timeline(late_read: RegisterRet) -> Timeline {
        vec![
            (0, 1, Step::Invoke(put("a", 2))),
            (10, 1, Step::Return(RegisterRet::Written(2))),
            (20, 1, Step::Invoke(put("b", 3))),
            (25, 2, Step::Invoke(RegisterOp::Get)),
            (28, 2, Step::Return(read(Some(("a", 2))))),
            (30, 1, Step::Return(RegisterRet::Written(3))),
            (40, 2, Step::Invoke(RegisterOp::Get)),
            (50, 2, Step::Return(late_read)),
        ]
    }

    #[test]
    fn a_read_overlapping_a_write_may_see_the_old_value_a_later_one_may_not() {
        assert_eq!(
            linearizable(Register::default(), timeline(read(Some(("b", 3))))),
            Some(Ok(()))
        );
        assert!(matches!(
            linearizable(Register::default(), timeline(read(Some(("a", 2))))),
            Some(Err(_))
        ));
    }

    #[test]
    fn an_unanswered_write_may_take_effect_any_time_after_it_was_sent() {
        // As `timelines` builds it: answered after everything else.
        let unanswered = |mut t: Timeline| {
            t.insert(0, (0, 1 << 33, Step::Invoke(put("x", 5))));
            t.push((u64::MAX, 1 << 33, Step::Return(RegisterRet::Written(5))));
            t
        };
        let t = unanswered(vec![
            (10, 2, Step::Invoke(RegisterOp::Get)),
            (20, 2, Step::Return(read(None))),
            (30, 2, Step::Invoke(RegisterOp::Get)),
            (40, 2, Step::Return(read(Some(("x", 5))))),
        ]);
        assert_eq!(linearizable(Register::default(), t), Some(Ok(())));
        // But a read that began after another read saw it cannot go back.
        let t = unanswered(vec![
            (10, 2, Step::Invoke(RegisterOp::Get)),
            (20, 2, Step::Return(read(Some(("x", 5))))),
            (30, 3, Step::Invoke(RegisterOp::Get)),
            (40, 3, Step::Return(read(None))),
        ]);
        assert!(matches!(linearizable(Register::default(), t), Some(Err(_))));
        // Nor may it take effect before a write of a lower revision.
        let t = unanswered(vec![
            (10, 2, Step::Invoke(put("y", 7))),
            (20, 2, Step::Return(RegisterRet::Written(7))),
            (30, 2, Step::Invoke(RegisterOp::Get)),
            (40, 2, Step::Return(read(Some(("x", 5))))),
        ]);
        assert!(matches!(linearizable(Register::default(), t), Some(Err(_))));
    }

    #[test]
    fn pieces_start_from_where_the_previous_one_ended() {
        let t = |late: RegisterRet| {
            vec![
                (0, 1, Step::Invoke(put("a", 2))),
                (5, 2, Step::Invoke(put("b", 3))),
                (10, 1, Step::Return(RegisterRet::Written(2))),
                (15, 2, Step::Return(RegisterRet::Written(3))),
                // Nothing in flight: a new piece, which starts from b.
                (20, 1, Step::Invoke(RegisterOp::Get)),
                (30, 1, Step::Return(late)),
            ]
        };
        let pieces = quiescent_pieces(t(read(Some(("b", 3)))));
        assert_eq!(pieces.len(), 2);
        assert_eq!(pieces[1].1.value, Some(("b".to_string(), 3)));
        assert_eq!(pieces[1].1.last_write, 3);
        for (_, state, piece) in pieces {
            assert_eq!(linearizable(state, piece), Some(Ok(())));
        }
        let pieces = quiescent_pieces(t(read(Some(("a", 2)))));
        let (_, state, piece) = pieces.into_iter().nth(1).unwrap();
        assert!(matches!(linearizable(state, piece), Some(Err(_))));
    }

    #[test]
    fn a_cas_delete_empties_the_key_for_later_reads() {
        let delete = |expect| RegisterOp::CasDelete {
            expect,
            revision: 0,
        };
        let history = |late: RegisterRet| {
            vec![
                (0, 1, Step::Invoke(put("a", 2))),
                (10, 1, Step::Return(RegisterRet::Written(2))),
                (20, 2, Step::Invoke(delete(2))),
                (30, 2, Step::Return(RegisterRet::Written(3))),
                (40, 2, Step::Invoke(delete(2))),
                (50, 2, Step::Return(RegisterRet::NotWritten)),
                (60, 3, Step::Invoke(RegisterOp::Get)),
                (70, 3, Step::Return(late)),
            ]
        };
        assert_eq!(
            linearizable(Register::default(), history(read(None))),
            Some(Ok(()))
        );
        assert!(matches!(
            linearizable(Register::default(), history(read(Some(("a", 2))))),
            Some(Err(_))
        ));
        // A write after the delete must take a later revision.
        let t = vec![
            (0, 1, Step::Invoke(put("a", 2))),
            (10, 1, Step::Return(RegisterRet::Written(2))),
            (20, 2, Step::Invoke(delete(2))),
            (30, 2, Step::Return(RegisterRet::Written(5))),
            (40, 2, Step::Invoke(put("b", 4))),
            (50, 2, Step::Return(RegisterRet::Written(4))),
        ];
        assert!(matches!(linearizable(Register::default(), t), Some(Err(_))));
    }

    #[test]
    fn a_cas_succeeds_only_on_the_revision_it_expects() {
        let cas = |expect| RegisterOp::Cas {
            expect,
            value: "c".into(),
            revision: 0,
        };
        let base = vec![
            (0, 1, Step::Invoke(put("a", 2))),
            (10, 1, Step::Return(RegisterRet::Written(2))),
        ];
        let mut good = base.clone();
        good.extend([
            (20, 2, Step::Invoke(cas(2))),
            (30, 2, Step::Return(RegisterRet::Written(3))),
            (40, 2, Step::Invoke(cas(2))),
            (50, 2, Step::Return(RegisterRet::NotWritten)),
        ]);
        assert_eq!(linearizable(Register::default(), good), Some(Ok(())));
        let mut bad = base;
        bad.extend([
            (20, 2, Step::Invoke(cas(1))),
            (30, 2, Step::Return(RegisterRet::Written(3))),
        ]);
        assert!(matches!(
            linearizable(Register::default(), bad),
            Some(Err(_))
        ));
    }
}
