//! The lessor against a simple model, on a clock the test moves: grants,
//! keep-alives, attached keys, expiry and revokes, and a lessor restart.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use hark_lease::{Clock, LeaseError, Lessor, LessorConfig};
use hark_mvcc::{DeleteRangeRequest, EventKind, PutRequest, RangeRequest, Store};
use parking_lot::Mutex;
use proptest::prelude::*;

struct Harness {
    store: Store,
    lessor: Option<Lessor>,
    base: Instant,
    secs: Arc<Mutex<u64>>,
}

impl Harness {
    fn new() -> Self {
        let mut h = Harness {
            store: Store::in_memory(),
            lessor: None,
            base: Instant::now(),
            secs: Arc::new(Mutex::new(0)),
        };
        h.restart();
        h
    }

    fn restart(&mut self) {
        self.lessor = None;
        let (base, secs) = (self.base, self.secs.clone());
        let config = LessorConfig {
            min_ttl: 1,
            // The test decides when leases expire.
            check_interval: Duration::from_secs(3600),
            clock: Clock::new(move || base + Duration::from_secs(*secs.lock())),
            ..LessorConfig::default()
        };
        self.lessor = Some(Lessor::start(self.store.clone(), config));
    }

    fn lessor(&self) -> &Lessor {
        self.lessor.as_ref().unwrap()
    }

    fn grant(&self, id: i64, ttl: i64) -> Result<i64, LeaseError> {
        let (tx, rx) = crossbeam_channel::bounded(1);
        self.lessor().grant(
            id,
            ttl,
            Box::new(move |r| {
                let _ = tx.send(r);
            }),
        );
        rx.recv().unwrap().map(|g| g.ttl)
    }

    fn revoke(&self, id: i64) -> Result<i64, LeaseError> {
        let (tx, rx) = crossbeam_channel::bounded(1);
        self.lessor().revoke(
            id,
            Box::new(move |r| {
                let _ = tx.send(r);
            }),
        );
        rx.recv().unwrap()
    }
}

#[derive(Debug, Clone)]
enum Op {
    Grant { slot: i64, ttl: i64 },
    KeepAlive { slot: i64 },
    Put { key: u8, slot: Option<i64> },
    Delete { key: u8 },
    Advance { secs: u64 },
    Expire,
    Revoke { slot: i64 },
    RestartLessor,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0..4i64, 0..5i64).prop_map(|(slot, ttl)| Op::Grant { slot, ttl }),
        (0..4i64).prop_map(|slot| Op::KeepAlive { slot }),
        (0..5u8, proptest::option::of(0..4i64)).prop_map(|(key, slot)| Op::Put { key, slot }),
        (0..5u8).prop_map(|key| Op::Delete { key }),
        (0..4u64).prop_map(|secs| Op::Advance { secs }),
        Just(Op::Expire),
        (0..4i64).prop_map(|slot| Op::Revoke { slot }),
        Just(Op::RestartLessor),
    ]
}

#[derive(Debug, Clone, Copy)]
struct ModelLease {
    ttl: i64,
    expiry: u64,
}

#[derive(Default)]
struct Model {
    now: u64,
    leases: BTreeMap<i64, ModelLease>,
    /// key -> lease (0: none)
    keys: BTreeMap<u8, i64>,
}

impl Model {
    fn drop_lease(&mut self, id: i64) {
        self.leases.remove(&id);
        self.keys.retain(|_, l| *l != id);
    }
}

fn key(k: u8) -> Bytes {
    Bytes::from(vec![b'k', b'0' + k])
}

fn check(h: &Harness, m: &Model) {
    let ids: Vec<i64> = m.leases.keys().copied().collect();
    assert_eq!(h.lessor().leases(), ids);
    for (&id, l) in &m.leases {
        let ttl = h.lessor().time_to_live(id, true).unwrap();
        assert_eq!(ttl.granted_ttl, l.ttl);
        assert_eq!(ttl.ttl, l.expiry.saturating_sub(m.now) as i64, "lease {id}");
        let attached: Vec<Bytes> = m
            .keys
            .iter()
            .filter(|(_, lease)| **lease == id)
            .map(|(k, _)| key(*k))
            .collect();
        assert_eq!(ttl.keys, attached, "keys of lease {id}");
    }
    let stored = h.store.range(&RangeRequest::range("k", "l")).unwrap();
    let stored: Vec<(Bytes, i64)> = stored
        .kvs
        .into_iter()
        .map(|kv| (kv.key, kv.lease))
        .collect();
    let expected: Vec<(Bytes, i64)> = m.keys.iter().map(|(k, l)| (key(*k), *l)).collect();
    assert_eq!(stored, expected);
}

fn run(ops: Vec<Op>) {
    let mut h = Harness::new();
    let mut m = Model::default();
    for op in ops {
        match op {
            Op::Grant { slot, ttl } => {
                let id = slot + 1;
                let got = h.grant(id, ttl);
                if m.leases.contains_key(&id) {
                    assert_eq!(got, Err(LeaseError::Exists));
                } else {
                    let ttl = ttl.max(1);
                    assert_eq!(got, Ok(ttl));
                    let expiry = m.now + ttl as u64;
                    m.leases.insert(id, ModelLease { ttl, expiry });
                }
            }
            Op::KeepAlive { slot } => {
                let id = slot + 1;
                let got = h.lessor().keep_alive(id);
                match m.leases.get_mut(&id) {
                    Some(l) if l.expiry > m.now => {
                        l.expiry = m.now + l.ttl as u64;
                        assert_eq!(got, Ok(l.ttl));
                    }
                    _ => assert_eq!(got, Err(LeaseError::NotFound)),
                }
            }
            Op::Put { key: k, slot } => {
                let lease = slot.map_or(0, |s| s + 1);
                let mut p = PutRequest::new(key(k), "v");
                p.lease = lease;
                let got = h.store.put(p);
                if lease != 0 && !m.leases.contains_key(&lease) {
                    assert_eq!(got, Err(hark_mvcc::Error::LeaseNotFound));
                } else {
                    got.unwrap();
                    m.keys.insert(k, lease);
                }
            }
            Op::Delete { key: k } => {
                h.store
                    .delete_range(DeleteRangeRequest::new(key(k), Bytes::new()))
                    .unwrap();
                m.keys.remove(&k);
            }
            Op::Advance { secs } => {
                *h.secs.lock() += secs;
                m.now += secs;
            }
            Op::Expire => {
                let expired = h.lessor().expire_due();
                let due: Vec<i64> = m
                    .leases
                    .iter()
                    .filter(|(_, l)| l.expiry <= m.now)
                    .map(|(id, _)| *id)
                    .collect();
                assert_eq!(expired, due);
                for id in due {
                    m.drop_lease(id);
                }
            }
            Op::Revoke { slot } => {
                let id = slot + 1;
                let got = h.revoke(id);
                if m.leases.contains_key(&id) {
                    got.unwrap();
                    m.drop_lease(id);
                } else {
                    assert_eq!(got, Err(LeaseError::NotFound));
                }
            }
            Op::RestartLessor => {
                h.restart();
                for l in m.leases.values_mut() {
                    l.expiry = m.now + l.ttl as u64;
                }
            }
        }
        check(&h, &m);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn lessor_matches_the_model(ops in proptest::collection::vec(op(), 1..60)) {
        run(ops);
    }
}

#[test]
fn expiry_deletes_keys_through_the_store_and_watchers_see_it() {
    let store = Store::in_memory();
    let config = LessorConfig {
        min_ttl: 1,
        check_interval: Duration::from_millis(20),
        ..LessorConfig::default()
    };
    let lessor = Lessor::start(store.clone(), config);
    let (tx, rx) = crossbeam_channel::bounded(1);
    lessor.grant(
        0,
        1,
        Box::new(move |r| {
            let _ = tx.send(r);
        }),
    );
    let granted = rx.recv().unwrap().unwrap();
    assert!(granted.id > 0, "a server-chosen id is positive");
    let mut p = PutRequest::new("session", "alive");
    p.lease = granted.id;
    store.put(p).unwrap();
    let (_, changes) = store.subscribe();
    // A bounded wait, not a timing assertion: the lease lasts one second.
    let rev = changes
        .recv_timeout(Duration::from_secs(30))
        .expect("the expired lease's key is deleted");
    assert_eq!(rev.events.len(), 1);
    assert_eq!(rev.events[0].kind, EventKind::Delete);
    assert_eq!(rev.events[0].kv.key, Bytes::from_static(b"session"));
    assert!(lessor.leases().is_empty());
    assert_eq!(
        lessor.time_to_live(granted.id, false),
        Err(LeaseError::NotFound)
    );
}

#[test]
fn too_large_a_ttl_is_refused() {
    let lessor = Lessor::start(Store::in_memory(), LessorConfig::default());
    let (tx, rx) = crossbeam_channel::bounded(1);
    lessor.grant(
        1,
        hark_lease::MAX_LEASE_TTL + 1,
        Box::new(move |r| {
            let _ = tx.send(r);
        }),
    );
    assert_eq!(rx.recv().unwrap(), Err(LeaseError::TtlTooLarge));
}

/// etcd's Promote(extend): a lessor that becomes primary gives every lease
/// its TTL plus the extension, from the moment of promotion.
#[test]
fn a_new_primary_extends_every_lease_by_the_promotion_extension() {
    let store = Store::in_memory();
    let secs = Arc::new(Mutex::new(0u64));
    let base = Instant::now();
    let clock = {
        let secs = secs.clone();
        Clock::new(move || base + Duration::from_secs(*secs.lock()))
    };
    let config = LessorConfig {
        min_ttl: 1,
        check_interval: Duration::from_secs(3600),
        clock,
        promotion_extension: Duration::from_secs(5),
    };
    let lessor = Lessor::start_with_log(store.clone(), Arc::new(store.clone()), config, false);
    let (tx, rx) = crossbeam_channel::bounded(1);
    lessor.grant(
        7,
        10,
        Box::new(move |r| {
            let _ = tx.send(r);
        }),
    );
    rx.recv().unwrap().unwrap();
    *secs.lock() = 100;
    // A follower's lessor expires nothing.
    assert!(lessor.expire_due().is_empty());
    lessor.set_primary(true);
    assert_eq!(lessor.time_to_live(7, false).unwrap().ttl, 15);
    *secs.lock() = 114;
    assert!(lessor.expire_due().is_empty(), "within TTL + extension");
    *secs.lock() = 115;
    assert_eq!(lessor.expire_due(), [7]);
    assert_eq!(store.lease_ttl(7), None);
}
