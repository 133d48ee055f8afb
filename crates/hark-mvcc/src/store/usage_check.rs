//! Space per prefix against a full scan: after every step of a random
//! history of puts, deletions, txns, lease revokes and compactions, each
//! prefix's counters equal what scanning the live keys and the stored rows
//! finds, and rebuilding from the rows gives the same counters.

use std::collections::{BTreeMap, BTreeSet};

use bytes::Bytes;
use proptest::prelude::*;

use super::Store;
use super::load::load_state;
use super::shared::StoreOptions;
use crate::backend::{MemoryBackend, Table};
use crate::layout::decode_row;
use crate::request::{
    DeleteRangeRequest, LeaseGrantRequest, LeaseRevokeRequest, PutRequest, RangeRequest, RequestOp,
    TxnRequest, WriteRequest,
};
use crate::usage::Usage;

pub(super) const KEYS: &[&str] = &[
    "a",
    "a/",
    "a/x",
    "a/b/c",
    "a/b/d/e/f",
    "/r/pods/ns1/p1",
    "/r/pods/ns1/p2",
    "/r/pods/ns2/p1",
    "/r/svc/ns1/s",
    "b//c",
];

#[derive(Debug, Clone)]
pub(super) enum Step {
    Put {
        key: usize,
        len: usize,
        lease: bool,
    },
    Delete(usize),
    DeletePrefix(&'static str),
    /// A txn putting one key and deleting another.
    Txn {
        put: usize,
        delete: usize,
        len: usize,
    },
    RevokeLease,
    Compact {
        back: i64,
    },
}

pub(super) fn step() -> impl Strategy<Value = Step> {
    let key = 0..KEYS.len();
    prop_oneof![
        5 => (key.clone(), 0..64usize, any::<bool>())
            .prop_map(|(key, len, lease)| Step::Put { key, len, lease }),
        2 => key.clone().prop_map(Step::Delete),
        1 => prop::sample::select(vec!["a/", "/r/pods/", "/r/", "b/"]).prop_map(Step::DeletePrefix),
        2 => (key.clone(), key, 0..64usize)
            .prop_map(|(put, delete, len)| Step::Txn { put, delete, len }),
        1 => Just(Step::RevokeLease),
        1 => (0..4i64).prop_map(|back| Step::Compact { back }),
    ]
}

/// Every prefix `key` could be counted under (cut after each `/`), found
/// without the store's own cutting.
fn cuts(key: &str, depth: usize) -> Vec<String> {
    let mut out = vec![String::new()];
    out.extend(
        key.match_indices('/')
            .take(depth)
            .map(|(i, _)| key[..=i].to_string()),
    );
    out
}

/// What a scan finds under each prefix: live keys from a range read,
/// stored rows from the backend.
fn scanned(store: &Store, depth: usize) -> BTreeMap<String, Usage> {
    let mut out: BTreeMap<String, Usage> = BTreeMap::new();
    let all = store
        .range(&RangeRequest {
            key: Bytes::from_static(b"\0"),
            range_end: Bytes::from_static(b"\0"),
            ..RangeRequest::default()
        })
        .unwrap();
    for kv in &all.kvs {
        let key = std::str::from_utf8(&kv.key).unwrap();
        for p in cuts(key, depth) {
            let u = out.entry(p).or_default();
            u.keys += 1;
            u.bytes += (kv.key.len() + kv.value.len()) as i64;
        }
    }
    store
        .shared()
        .backend
        .scan(Table::Kv, &[], None, &mut |k, v| {
            let (_, _, kv) = decode_row(k, v).unwrap();
            for p in cuts(std::str::from_utf8(&kv.key).unwrap(), depth) {
                let u = out.entry(p).or_default();
                u.revisions += 1;
                u.history_bytes += (k.len() + v.len()) as i64;
            }
            true
        })
        .unwrap();
    out
}

fn check(store: &Store, depth: usize) -> Result<(), TestCaseError> {
    let expected = scanned(store, depth);
    let mut prefixes: BTreeSet<String> = expected.keys().cloned().collect();
    let (listed, truncated) = store.prefix_usage(b"", depth).unwrap();
    prop_assert!(!truncated);
    for stat in &listed {
        prefixes.insert(String::from_utf8(stat.prefix.to_vec()).unwrap());
    }
    for p in &prefixes {
        let got = store.prefix_usage(p.as_bytes(), 0).unwrap().0[0].usage;
        let want = expected.get(p).copied().unwrap_or_default();
        prop_assert_eq!(got, want, "prefix {:?}", p);
    }
    // Held entries are exactly the non-empty prefixes.
    let held = listed
        .iter()
        .filter(|s| s.usage != Usage::default())
        .count();
    prop_assert_eq!(held, listed.len() - usize::from(expected.is_empty()));
    prop_assert_eq!(listed.len(), expected.len().max(1));
    // Rebuilt from the rows (as on open), the counters are the same.
    let rebuilt = load_state(store.shared().backend.as_ref(), depth)
        .unwrap()
        .usage;
    for p in &prefixes {
        prop_assert_eq!(
            rebuilt.get(p.as_bytes()),
            store.prefix_usage(p.as_bytes(), 0).unwrap().0[0].usage,
            "rebuilt {:?}",
            p
        );
    }
    Ok(())
}

/// Applies `s` to `store`; `lease` is granted while `leased`.
pub(super) fn apply_step(store: &Store, s: Step, lease: i64, leased: &mut bool) {
    let value = |len: usize| Bytes::from(vec![b'v'; len]);
    match s {
        Step::Put {
            key,
            len,
            lease: with_lease,
        } => {
            let mut put = PutRequest::new(KEYS[key], value(len));
            if with_lease && *leased {
                put.lease = lease;
            }
            store.put(put).unwrap();
        }
        Step::Delete(key) => {
            store
                .delete_range(DeleteRangeRequest::new(KEYS[key], ""))
                .unwrap();
        }
        Step::DeletePrefix(p) => {
            store.delete_range(DeleteRangeRequest::prefix(p)).unwrap();
        }
        Step::Txn { put, delete, len } => {
            if put == delete {
                return; // etcd refuses a txn writing one key twice
            }
            let txn = TxnRequest {
                success: vec![
                    RequestOp::Put(PutRequest::new(KEYS[put], value(len))),
                    RequestOp::DeleteRange(DeleteRangeRequest::new(KEYS[delete], "")),
                ],
                ..TxnRequest::default()
            };
            store.apply_blocking(WriteRequest::Txn(txn)).unwrap();
        }
        Step::RevokeLease => {
            if *leased {
                store
                    .apply_blocking(WriteRequest::LeaseRevoke(LeaseRevokeRequest { id: lease }))
                    .unwrap();
                *leased = false;
            }
        }
        Step::Compact { back } => {
            let at = (store.current_revision() - back).max(1);
            if at > store.compacted_revision() {
                store.compact(at, true).unwrap();
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn prefix_usage_matches_a_scan(depth in 0..5usize, steps in prop::collection::vec(step(), 1..40)) {
        let options = StoreOptions { usage_depth: depth, ..StoreOptions::default() };
        let store = Store::with_backend(Box::new(MemoryBackend::new()), options).unwrap();
        let lease = 7;
        store
            .apply_blocking(WriteRequest::LeaseGrant(LeaseGrantRequest { id: lease, ttl: 60 }))
            .unwrap();
        let mut leased = true;
        for s in steps {
            apply_step(&store, s, lease, &mut leased);
            check(&store, depth)?;
        }
    }
}
