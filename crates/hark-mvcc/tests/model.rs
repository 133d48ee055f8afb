//! Model test: random puts, deletes, txns, compactions and reopens against a simple
//! reference model that keeps every full state. After each step the store's
//! range at every retained revision, and its history, must equal the model's.

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use hark_mvcc::*;
use proptest::prelude::*;

const KEYS: [&str; 5] = ["a", "b", "c", "d", "e"];

#[derive(Debug, Clone)]
enum Op {
    Put {
        key: usize,
        value: u8,
    },
    /// Deletes `[key, key + span)` over KEYS; span 0 deletes one key.
    Delete {
        key: usize,
        span: usize,
    },
    /// If `key` has `version`, put `puts`, else delete `otherwise`.
    Txn {
        key: usize,
        version: i64,
        puts: BTreeMap<usize, u8>,
        otherwise: usize,
    },
    /// Compacts at `compacted + 1 + n % (current - compacted)` (or a bad revision).
    Compact {
        n: i64,
        physical: bool,
    },
    Reopen,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..KEYS.len(), any::<u8>()).prop_map(|(key, value)| Op::Put { key, value }),
        2 => (0..KEYS.len(), 0..3usize).prop_map(|(key, span)| Op::Delete { key, span }),
        2 => (0..KEYS.len(), 0..3i64, prop::collection::btree_map(0..KEYS.len(), any::<u8>(), 0..4), 0..KEYS.len())
            .prop_map(|(key, version, puts, otherwise)| Op::Txn { key, version, puts, otherwise }),
        1 => (-2..20i64, any::<bool>()).prop_map(|(n, physical)| Op::Compact { n, physical }),
        1 => Just(Op::Reopen),
    ]
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Kv {
    value: Bytes,
    create: i64,
    modified: i64,
    version: i64,
}

type State = BTreeMap<&'static str, Kv>;

/// The whole history, naively: one full state per revision.
struct Model {
    /// `states[r]` is the state at revision `r` (0 and 1 are empty).
    states: Vec<State>,
    /// Events per revision, `(key, Some(value))` for puts, `(key, None)` for deletes.
    events: BTreeMap<i64, Vec<(&'static str, Option<Bytes>)>>,
    compacted: i64,
}

impl Model {
    fn new() -> Self {
        Model {
            states: vec![State::new(), State::new()],
            events: BTreeMap::new(),
            compacted: 0,
        }
    }
    fn current(&self) -> i64 {
        self.states.len() as i64 - 1
    }
    fn latest(&self) -> &State {
        self.states.last().unwrap()
    }
    /// Applies a list of changes as one revision (if non-empty).
    fn commit(&mut self, changes: Vec<(&'static str, Option<Bytes>)>) {
        if changes.is_empty() {
            return;
        }
        let rev = self.current() + 1;
        let mut next = self.latest().clone();
        for (k, v) in &changes {
            match v {
                Some(v) => {
                    let (create, version) = next
                        .get(k)
                        .map_or((rev, 1), |kv| (kv.create, kv.version + 1));
                    next.insert(
                        k,
                        Kv {
                            value: v.clone(),
                            create,
                            modified: rev,
                            version,
                        },
                    );
                }
                None => {
                    next.remove(k);
                }
            }
        }
        self.states.push(next);
        self.events.insert(rev, changes);
    }
}

fn value(v: u8) -> Bytes {
    Bytes::from(format!("v{v}"))
}

fn apply(store: &Store, model: &mut Model, op: &Op) {
    match op {
        Op::Put { key, value: v } => {
            let r = store.put(PutRequest::new(KEYS[*key], value(*v))).unwrap();
            model.commit(vec![(KEYS[*key], Some(value(*v)))]);
            assert_eq!(r.header_revision, model.current());
        }
        Op::Delete { key, span } => {
            let end = if *span == 0 {
                Bytes::new()
            } else {
                KEYS.get(key + span)
                    .map_or(Bytes::from_static(b"\0"), |k| Bytes::from(*k))
            };
            let r = store
                .delete_range(DeleteRangeRequest::new(KEYS[*key], end))
                .unwrap();
            let doomed: Vec<_> = KEYS[*key..(key + span.max(&1)).min(KEYS.len())]
                .iter()
                .filter(|k| model.latest().contains_key(*k))
                .map(|k| (*k, None))
                .collect();
            assert_eq!(r.deleted, doomed.len() as i64);
            model.commit(doomed);
            assert_eq!(r.header_revision, model.current());
        }
        Op::Txn {
            key,
            version,
            puts,
            otherwise,
        } => {
            let txn = TxnRequest {
                compare: vec![Compare {
                    key: Bytes::from(KEYS[*key]),
                    range_end: Bytes::new(),
                    result: CompareResult::Equal,
                    target: CompareTarget::Version(*version),
                }],
                success: puts
                    .iter()
                    .map(|(k, v)| RequestOp::Put(PutRequest::new(KEYS[*k], value(*v))))
                    .collect(),
                failure: vec![RequestOp::DeleteRange(DeleteRangeRequest::new(
                    KEYS[*otherwise],
                    "",
                ))],
            };
            let r = store.txn(txn).unwrap();
            let model_version = model.latest().get(KEYS[*key]).map_or(0, |kv| kv.version);
            let ok = model_version == *version;
            assert_eq!(r.succeeded, ok);
            let changes = if ok {
                puts.iter()
                    .map(|(k, v)| (KEYS[*k], Some(value(*v))))
                    .collect()
            } else if model.latest().contains_key(KEYS[*otherwise]) {
                vec![(KEYS[*otherwise], None)]
            } else {
                vec![]
            };
            model.commit(changes);
            assert_eq!(r.header_revision, model.current());
        }
        Op::Compact { n, physical } => {
            let span = model.current() - model.compacted;
            let at = if *n < 0 || span <= 0 {
                model.compacted + n // at or below the compacted revision: an error
            } else {
                model.compacted + 1 + n % span
            };
            let r = store.compact(at, *physical);
            if at <= model.compacted {
                assert_eq!(r, Err(Error::Compacted));
            } else if at > model.current() {
                assert_eq!(r, Err(Error::FutureRevision));
            } else {
                r.unwrap();
                model.compacted = at;
            }
        }
        Op::Reopen => unreachable!("handled by the driver"),
    }
}

/// A revision and its changes: `(key, Some(value))` for a put, `(key, None)` for a delete.
type RevisionChanges = (i64, Vec<(String, Option<Bytes>)>);

fn check(store: &Store, model: &Model) {
    assert_eq!(store.current_revision(), model.current());
    assert_eq!(store.compacted_revision(), model.compacted);
    for rev in 1..=model.current() {
        let mut req = RangeRequest::range("\0", "\0");
        req.revision = rev;
        let got = store.range(&req);
        if rev < model.compacted {
            assert_eq!(got, Err(Error::Compacted), "range at {rev}");
            continue;
        }
        let got: Vec<(String, Kv)> = got
            .unwrap()
            .kvs
            .into_iter()
            .map(|kv| {
                let k = String::from_utf8(kv.key.to_vec()).unwrap();
                (
                    k,
                    Kv {
                        value: kv.value,
                        create: kv.create_revision,
                        modified: kv.mod_revision,
                        version: kv.version,
                    },
                )
            })
            .collect();
        let want: Vec<(String, Kv)> = model.states[rev as usize]
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        assert_eq!(got, want, "range at {rev}");
    }
    let from = model.compacted.max(1);
    let history = store.history(from, usize::MAX, usize::MAX).unwrap();
    let got: Vec<RevisionChanges> = history
        .into_iter()
        .map(|c| {
            let evs = c
                .events
                .into_iter()
                .map(|e| {
                    assert_eq!(e.kv.mod_revision, c.revision);
                    let k = String::from_utf8(e.kv.key.to_vec()).unwrap();
                    (k, (e.kind == EventKind::Put).then_some(e.kv.value))
                })
                .collect();
            (c.revision, evs)
        })
        .collect();
    let want: Vec<RevisionChanges> = model
        .events
        .range(from..)
        .map(|(r, evs)| {
            (
                *r,
                evs.iter()
                    .map(|(k, v)| (k.to_string(), v.clone()))
                    .collect(),
            )
        })
        .collect();
    assert_eq!(got, want, "history from {from}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn store_matches_model(
        ops in prop::collection::vec(op(), 1..40),
        commit_on_caller in any::<bool>(),
    ) {
        let backend = Arc::new(MemoryBackend::new());
        let options = StoreOptions { commit_on_caller, ..StoreOptions::default() };
        let open = || Store::with_backend(Box::new(backend.clone()), options.clone()).unwrap();
        let mut store = open();
        let mut model = Model::new();
        for op in &ops {
            if let Op::Reopen = op {
                drop(store);
                store = open();
            } else {
                apply(&store, &mut model, op);
            }
            check(&store, &model);
        }
    }
}

/// The same model against each on-disk backend built, with every reopen a
/// real close and open of the directory.
#[cfg(any(feature = "rocksdb", feature = "fjall"))]
mod on_disk {
    use super::*;

    fn built_backends() -> Vec<BackendKind> {
        [BackendKind::RocksDb, BackendKind::Fjall]
            .into_iter()
            .filter(|kind| kind.is_built())
            .collect()
    }

    proptest! {
        // Fewer cases: each opens a database and syncs every write.
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

        #[test]
        fn store_on_disk_matches_model(
            ops in prop::collection::vec(op(), 1..40),
            backend in prop::sample::select(built_backends()),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let options = StoreOptions { backend, ..StoreOptions::default() };
            let open = || Store::open(dir.path(), options.clone()).unwrap();
            let mut store = open();
            let mut model = Model::new();
            for op in &ops {
                if let Op::Reopen = op {
                    let closed = store.backend_closed();
                    drop(store);
                    prop_assert!(closed.is_closed(), "the last handle's drop closes the backend");
                    store = open();
                } else {
                    apply(&store, &mut model, op);
                }
                check(&store, &model);
            }
        }
    }
}
