//! Model test: random writes (put, delete, multi-key txn), watch creates at random
//! start revisions (now, past, future, compacted), cancels, compactions, progress
//! requests, and consumers that stall and resume. Each watcher's received events
//! must equal what a naive model of the history says (or be a prefix of it ending
//! in the right cancel), and no progress reply may precede an event at or below
//! its revision.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use bytes::Bytes;
use hark_mvcc::{DeleteRangeRequest, EventKind, PutRequest, RequestOp, Store, TxnRequest};
use hark_watch::*;
use proptest::prelude::*;

const KEYS: [&str; 4] = ["k/a", "k/b", "k/c", "k/d"];
const STREAMS: usize = 3;

#[derive(Debug, Clone, Copy)]
enum Scope {
    Key(usize),
    /// `[k/a, k/c)`: an arbitrary span
    Prefix,
    /// `[k/, k0)`: the prefix `k/` (etcd's `WithPrefix`)
    KeyPrefix,
    /// Every key `>= "\0"`.
    All,
}

#[derive(Debug, Clone, Copy)]
enum Start {
    Now,
    Back(i64),
    Ahead(i64),
}

#[derive(Debug, Clone)]
enum Op {
    Put(usize),
    Delete(usize),
    Txn(usize, usize),
    Watch {
        stream: usize,
        scope: Scope,
        start: Start,
        no_put: bool,
        no_delete: bool,
        prev_kv: bool,
    },
    Cancel {
        stream: usize,
        nth: usize,
    },
    Compact {
        back: i64,
    },
    Progress {
        stream: usize,
    },
    Stall {
        stream: usize,
    },
    Resume {
        stream: usize,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let scope = prop_oneof![
        (0..KEYS.len()).prop_map(Scope::Key),
        Just(Scope::Prefix),
        Just(Scope::KeyPrefix),
        Just(Scope::All)
    ];
    let start = prop_oneof![
        Just(Start::Now),
        (0..12i64).prop_map(Start::Back),
        (1..4i64).prop_map(Start::Ahead)
    ];
    prop_oneof![
        6 => (0..KEYS.len()).prop_map(Op::Put),
        2 => (0..KEYS.len()).prop_map(Op::Delete),
        2 => (0..KEYS.len(), 0..KEYS.len()).prop_map(|(a, b)| Op::Txn(a, b)),
        4 => (0..STREAMS, scope, start, prop::bool::weighted(0.2), prop::bool::weighted(0.2), any::<bool>())
            .prop_map(|(stream, scope, start, no_put, no_delete, prev_kv)| Op::Watch { stream, scope, start, no_put, no_delete, prev_kv }),
        1 => (0..STREAMS, 0..4usize).prop_map(|(stream, nth)| Op::Cancel { stream, nth }),
        1 => (0..10i64).prop_map(|back| Op::Compact { back }),
        2 => (0..STREAMS).prop_map(|stream| Op::Progress { stream }),
        1 => (0..STREAMS).prop_map(|stream| Op::Stall { stream }),
        1 => (0..STREAMS).prop_map(|stream| Op::Resume { stream }),
    ]
}

type Change = (EventKind, &'static str, Bytes);

/// The history, naively: the changes of each revision and the state after it.
struct History {
    changes: BTreeMap<i64, Vec<Change>>,
    states: Vec<BTreeMap<&'static str, Bytes>>, // index = revision
    compacted: i64,
}

impl History {
    fn current(&self) -> i64 {
        self.states.len() as i64 - 1
    }
    fn commit(&mut self, rev: i64, changes: Vec<Change>) {
        if changes.is_empty() {
            return;
        }
        assert_eq!(rev, self.current() + 1);
        let mut next = self.states.last().unwrap().clone();
        for (kind, k, v) in &changes {
            match kind {
                EventKind::Put => next.insert(k, v.clone()),
                EventKind::Delete => next.remove(k),
            };
        }
        self.states.push(next);
        self.changes.insert(rev, changes);
    }
}

struct ModelWatch {
    stream: usize,
    id: WatchId,
    scope: Scope,
    start: i64,
    no_put: bool,
    no_delete: bool,
    prev_kv: bool,
    /// Store revision when we canceled it.
    canceled_at: Option<i64>,
}

impl ModelWatch {
    fn covers(&self, key: &str) -> bool {
        match self.scope {
            Scope::Key(i) => key == KEYS[i],
            Scope::Prefix => ("k/a".."k/c").contains(&key),
            Scope::KeyPrefix => key.starts_with("k/"),
            Scope::All => true,
        }
    }
}

struct Client {
    ws: WatchStream,
    rx: Responses,
    stalled: bool,
    log: Vec<WatchResponse>,
    /// Outcome of each watch() call, in call order.
    creates: Vec<Result<WatchId, WatchError>>,
}

impl Client {
    fn drain(&mut self) {
        if !self.stalled {
            while let Some(r) = self.rx.try_recv() {
                self.log.push(r);
            }
        }
    }
}

fn scope_request(scope: Scope) -> WatchRequest {
    match scope {
        Scope::Key(i) => WatchRequest::key(KEYS[i]),
        Scope::Prefix => WatchRequest::range("k/a", "k/c"),
        Scope::KeyPrefix => WatchRequest::range("k/", "k0"),
        Scope::All => WatchRequest::range("\0", "\0"),
    }
}

fn run(ops: &[Op]) {
    let store = Store::in_memory();
    let config = WatchConfig {
        stream_capacity: 2,
        window_revisions: 6,
        max_response_bytes: 200,
        catch_up_revisions: 5,
        tick: Duration::from_millis(5),
        ..WatchConfig::default()
    };
    let hub = WatchHub::new(store.clone(), config);
    let mut history = History {
        changes: BTreeMap::new(),
        states: vec![BTreeMap::new(), BTreeMap::new()],
        compacted: 0,
    };
    let mut clients: Vec<Client> = (0..STREAMS)
        .map(|_| {
            let (ws, rx) = hub.new_stream();
            Client {
                ws,
                rx,
                stalled: false,
                log: Vec::new(),
                creates: Vec::new(),
            }
        })
        .collect();
    let mut watches: Vec<ModelWatch> = Vec::new();
    let mut counter = 0u32;
    let mut value = || {
        counter += 1;
        Bytes::from(format!("v{counter}"))
    };

    for op in ops {
        match op {
            Op::Put(k) => {
                let v = value();
                let rev = store
                    .put(PutRequest::new(KEYS[*k], v.clone()))
                    .unwrap()
                    .header_revision;
                history.commit(rev, vec![(EventKind::Put, KEYS[*k], v)]);
            }
            Op::Delete(k) => {
                let r = store
                    .delete_range(DeleteRangeRequest::new(KEYS[*k], ""))
                    .unwrap();
                if r.deleted > 0 {
                    history.commit(
                        r.header_revision,
                        vec![(EventKind::Delete, KEYS[*k], Bytes::new())],
                    );
                }
            }
            Op::Txn(a, b) => {
                let keys: Vec<usize> = if a == b {
                    vec![*a]
                } else {
                    vec![*a.min(b), *a.max(b)]
                };
                let puts: Vec<(usize, Bytes)> = keys.iter().map(|&k| (k, value())).collect();
                let rev = store
                    .txn(TxnRequest {
                        compare: vec![],
                        success: puts
                            .iter()
                            .map(|(k, v)| RequestOp::Put(PutRequest::new(KEYS[*k], v.clone())))
                            .collect(),
                        failure: vec![],
                    })
                    .unwrap()
                    .header_revision;
                history.commit(
                    rev,
                    puts.into_iter()
                        .map(|(k, v)| (EventKind::Put, KEYS[k], v))
                        .collect(),
                );
            }
            Op::Watch {
                stream,
                scope,
                start,
                no_put,
                no_delete,
                prev_kv,
            } => {
                let current = store.current_revision();
                let start = match start {
                    Start::Now => 0,
                    Start::Back(n) => (current - n).max(1),
                    Start::Ahead(n) => current + n,
                };
                let mut req = scope_request(*scope).from_revision(start);
                req.no_put = *no_put;
                req.no_delete = *no_delete;
                req.prev_kv = *prev_kv;
                let c = &mut clients[*stream];
                let result = c.ws.watch(req);
                c.creates.push(result.clone());
                let id = result.expect("valid creates succeed");
                watches.push(ModelWatch {
                    stream: *stream,
                    id,
                    scope: *scope,
                    start,
                    no_put: *no_put,
                    no_delete: *no_delete,
                    prev_kv: *prev_kv,
                    canceled_at: None,
                });
            }
            Op::Cancel { stream, nth } => {
                let live: Vec<usize> = (0..watches.len())
                    .filter(|&i| watches[i].stream == *stream && watches[i].canceled_at.is_none())
                    .collect();
                if let Some(&i) = live.get(*nth) {
                    assert!(clients[*stream].ws.cancel(watches[i].id));
                    watches[i].canceled_at = Some(store.current_revision());
                }
            }
            Op::Compact { back } => {
                let at = store.current_revision() - back;
                if at > history.compacted {
                    store.compact(at, false).unwrap();
                    history.compacted = at;
                }
            }
            Op::Progress { stream } => clients[*stream].ws.request_progress_all(),
            Op::Stall { stream } => clients[*stream].stalled = true,
            Op::Resume { stream } => clients[*stream].stalled = false,
        }
        for c in &mut clients {
            c.drain();
        }
    }

    // Watches waiting for a future revision would block progress: cancel them.
    let final_rev = store.current_revision();
    for w in &mut watches {
        if w.canceled_at.is_none() && w.start > final_rev {
            clients[w.stream].ws.cancel(w.id);
            w.canceled_at = Some(final_rev);
        }
    }
    // Quiesce: resume everyone and wait for a progress reply at the final revision.
    for (s, c) in clients.iter_mut().enumerate() {
        c.stalled = false;
        let deadline = Instant::now() + Duration::from_secs(5);
        'wait: loop {
            assert!(
                Instant::now() < deadline,
                "stream {s} never caught up to {final_rev}"
            );
            // Live: not canceled by us, not canceled by compaction (then the
            // engine holds no watcher for it and owes no progress for it).
            let compacted: Vec<WatchId> = c
                .log
                .iter()
                .filter(|r| matches!(r.kind, ResponseKind::Compacted { .. }))
                .map(|r| r.watch_id)
                .collect();
            let live = watches
                .iter()
                .any(|w| w.stream == s && w.canceled_at.is_none() && !compacted.contains(&w.id));
            if live {
                c.ws.request_progress_all();
            }
            let wait = Duration::from_millis(if live { 20 } else { 300 });
            while let Some(r) = c.rx.recv_timeout(wait) {
                let answered = c
                    .log
                    .iter()
                    .filter(|r| {
                        matches!(
                            r.kind,
                            ResponseKind::Created | ResponseKind::CreateRejected { .. }
                        )
                    })
                    .count();
                let done = matches!(r.kind, ResponseKind::Progress)
                    && r.header_revision == final_rev
                    && r.watch_id == NO_WATCH_ID
                    && answered == c.creates.len();
                c.log.push(r);
                if done {
                    break 'wait;
                }
            }
            if !live {
                break;
            }
        }
    }
    for (s, c) in clients.iter().enumerate() {
        check_stream(s, c, &watches, &history);
    }
}

/// An event as a watcher saw it: revision, kind, key, value, prev_kv's value.
type Seen = (i64, EventKind, String, Bytes, Option<Bytes>);

fn check_stream(s: usize, c: &Client, watches: &[ModelWatch], history: &History) {
    // Creates are answered in order; no event before its created reply or after its cancel.
    let mut answers = c.log.iter().filter(|r| {
        matches!(
            r.kind,
            ResponseKind::Created | ResponseKind::CreateRejected { .. }
        )
    });
    for want in &c.creates {
        let got = answers.next().expect("every create is answered");
        match want {
            Ok(id) => assert!(
                matches!(got.kind, ResponseKind::Created) && got.watch_id == *id,
                "{got:?}"
            ),
            Err(_) => assert!(matches!(got.kind, ResponseKind::CreateRejected { .. })),
        }
    }
    let mut created_at: HashMap<WatchId, i64> = HashMap::new();
    let mut ended: HashMap<WatchId, Option<i64>> = HashMap::new(); // Some(compact rev) or None (canceled)
    // Events per watcher, by the order the model's watch list has them (ids are reused).
    let mut received: HashMap<usize, Vec<Seen>> = HashMap::new();
    let mut last_rev_seen = 0i64;
    // A progress reply at H promises: no later event at or below H for any
    // watcher that existed when it was sent.
    let mut floor: HashMap<WatchId, i64> = HashMap::new();
    let mut generation: HashMap<WatchId, usize> = HashMap::new();
    let mut compacted_watches = std::collections::HashSet::new();
    let model_of = |id: WatchId, generations: &mut HashMap<WatchId, usize>| -> usize {
        let nth = *generations.entry(id).or_insert(0);
        watches
            .iter()
            .enumerate()
            .filter(|(_, w)| w.stream == s && w.id == id)
            .nth(nth)
            .map(|(i, _)| i)
            .unwrap()
    };
    for r in &c.log {
        match &r.kind {
            ResponseKind::Created => {
                assert!(!created_at.contains_key(&r.watch_id) || ended.contains_key(&r.watch_id));
                if ended.remove(&r.watch_id).is_some() {
                    *generation.entry(r.watch_id).or_insert(0) += 1;
                }
                created_at.insert(r.watch_id, r.header_revision);
            }
            ResponseKind::CreateRejected { .. } => {}
            ResponseKind::Events { events, .. } => {
                assert!(
                    created_at.contains_key(&r.watch_id),
                    "events before created: {r:?}"
                );
                assert!(
                    !ended.contains_key(&r.watch_id),
                    "events after cancel: {r:?}"
                );
                let i = model_of(r.watch_id, &mut generation);
                let list = received.entry(i).or_default();
                let first = events[0].revision();
                assert!(
                    list.last().is_none_or(|l| l.0 < first),
                    "revision split or reordered for watch {}",
                    r.watch_id
                );
                for e in events {
                    let f = floor.get(&r.watch_id).copied().unwrap_or(0);
                    assert!(
                        e.revision() > f,
                        "event at {} after progress at {f}",
                        e.revision()
                    );
                    last_rev_seen = last_rev_seen.max(e.revision());
                    let key = String::from_utf8(e.kv.key.to_vec()).unwrap();
                    list.push((
                        e.revision(),
                        e.kind,
                        key,
                        e.kv.value.clone(),
                        e.prev_kv().map(|p| p.value.clone()),
                    ));
                }
            }
            ResponseKind::Progress => {
                if r.watch_id == NO_WATCH_ID {
                    assert!(
                        r.header_revision >= last_rev_seen,
                        "progress {} before event {last_rev_seen}",
                        r.header_revision
                    );
                    for id in created_at.keys().filter(|id| !ended.contains_key(id)) {
                        floor.insert(*id, r.header_revision);
                    }
                }
            }
            ResponseKind::Canceled => {
                ended.insert(r.watch_id, None);
            }
            ResponseKind::Compacted { compact_revision } => {
                assert_eq!(r.header_revision, 0);
                let i = model_of(r.watch_id, &mut generation);
                received.entry(i).or_default();
                ended.insert(r.watch_id, Some(*compact_revision));
                compacted_watches.insert(i);
                // Compared below: what came before must be a prefix below the compaction.
                assert!(received[&i].iter().all(|e| e.0 < *compact_revision));
            }
        }
    }
    for (i, w) in watches.iter().enumerate().filter(|(_, w)| w.stream == s) {
        let created = *created_at.get(&w.id).expect("created");
        let from = if w.start == 0 { created + 1 } else { w.start };
        let mut expected = Vec::new();
        for (&rev, changes) in history.changes.range(from..) {
            for (kind, key, value) in changes {
                let wanted = w.covers(key)
                    && !(w.no_put && *kind == EventKind::Put)
                    && !(w.no_delete && *kind == EventKind::Delete);
                if wanted {
                    let before = history.states[rev as usize - 1].get(key).cloned();
                    expected.push((rev, *kind, key.to_string(), value.clone(), before));
                }
            }
        }
        let got = received.get(&i).cloned().unwrap_or_default();
        let compacted = compacted_watches.contains(&i);
        if w.canceled_at.is_some() || compacted {
            assert!(
                got.len() <= expected.len(),
                "watch {i}: more events than the model"
            );
        } else {
            assert_eq!(
                got.len(),
                expected.len(),
                "watch {i} ({:?} from {from}): {got:?} vs {expected:?}",
                w.scope
            );
        }
        for (g, e) in got.iter().zip(&expected) {
            assert_eq!(
                (g.0, g.1, &g.2, &g.3),
                (e.0, e.1, &e.2, &e.3),
                "watch {i} event"
            );
            if w.prev_kv {
                let created_now = e.1 == EventKind::Put && e.4.is_none();
                match (&g.4, created_now) {
                    (Some(p), _) => {
                        assert_eq!(Some(p), e.4.as_ref(), "watch {i} prev_kv at {}", e.0)
                    }
                    (None, true) => {}
                    (None, false) => assert!(
                        history.compacted >= e.0 - 1,
                        "prev_kv missing at {} without compaction",
                        e.0
                    ),
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn every_watcher_sees_exactly_the_model(ops in prop::collection::vec(op(), 1..60)) {
        run(&ops);
    }
}
