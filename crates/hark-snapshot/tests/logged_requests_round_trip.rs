//! Whatever reaches the log can be applied on every backend and held in
//! every format Hark writes. Arbitrary requests, oversized ones included,
//! go through the store's checks (what a member runs before proposing), then
//! through the apply a replicated log makes, on each backend; the store is
//! then saved as an etcd snapshot and restored onto both backends. Each
//! request is either refused before the log (and refused alike, changing
//! nothing, if a log carried it anyway) or applied, and what was applied
//! comes back from the snapshot unchanged.

use std::sync::mpsc;

use bytes::Bytes;
use hark_mvcc::{
    BackendKind, CompactRequest, DeleteRangeRequest, LeaseGrantRequest, LeaseRevokeRequest,
    MAX_RECORD_KEY_LEN, PutRequest, RangeRequest, RecordChange, RecordGuard, RecordsRequest,
    RequestOp, Store, StoreOptions, TxnRequest, WriteRequest, WriteResponse,
};
use hark_snapshot::{Member, RestoreOptions};
use proptest::prelude::*;

/// Lengths around every limit a backend or the snapshot format has: fjall's
/// 65,535-byte keys, bbolt's 32,768-byte keys, the store's record bounds.
fn length() -> impl Strategy<Value = usize> {
    prop_oneof![
        0..40usize,
        Just(MAX_RECORD_KEY_LEN),
        Just(MAX_RECORD_KEY_LEN + 1),
        Just(u16::MAX as usize),
        Just(u16::MAX as usize + 1),
        Just(70_000usize),
    ]
}

fn bytes_of(len: usize, fill: u8) -> Bytes {
    Bytes::from(vec![fill; len])
}

fn key() -> impl Strategy<Value = Bytes> {
    (length(), b'a'..=b'e').prop_map(|(len, fill)| bytes_of(len, fill))
}

/// The buckets auth writes, and names no bucket may have.
fn bucket() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(vec!["auth", "authUsers", "authRoles"]).prop_map(String::from),
        1 => Just(String::new()),
        1 => Just("auth\0Users".to_string()),
        1 => Just("b".repeat(300)),
    ]
}

fn record_change() -> impl Strategy<Value = RecordChange> {
    prop_oneof![
        (
            bucket(),
            key(),
            prop_oneof![0..64usize, Just(17 * 1024 * 1024)]
        )
            .prop_map(|(bucket, key, len)| RecordChange::Put {
                bucket,
                key,
                value: bytes_of(len, b'v'),
            }),
        (bucket(), key()).prop_map(|(bucket, key)| RecordChange::Delete { bucket, key }),
    ]
}

fn put() -> impl Strategy<Value = PutRequest> {
    (key(), 0..100usize, any::<bool>()).prop_map(|(key, value_len, ignore_value)| PutRequest {
        key,
        value: bytes_of(value_len, b'v'),
        ignore_value,
        ..Default::default()
    })
}

fn delete() -> impl Strategy<Value = DeleteRangeRequest> {
    (
        key(),
        prop_oneof![Just(Bytes::new()), Just(Bytes::from_static(b"\0")), key()],
    )
        .prop_map(|(key, range_end)| DeleteRangeRequest::new(key, range_end))
}

fn request() -> impl Strategy<Value = WriteRequest> {
    prop_oneof![
        3 => put().prop_map(WriteRequest::Put),
        1 => delete().prop_map(WriteRequest::DeleteRange),
        1 => (prop::collection::vec(put(), 0..3), prop::collection::vec(delete(), 0..2))
            .prop_map(|(puts, deletes)| WriteRequest::Txn(TxnRequest {
                compare: vec![],
                success: puts.into_iter().map(RequestOp::Put).collect(),
                failure: deletes.into_iter().map(RequestOp::DeleteRange).collect(),
            })),
        1 => (any::<i64>(), any::<i64>())
            .prop_map(|(id, ttl)| WriteRequest::LeaseGrant(LeaseGrantRequest { id, ttl })),
        1 => any::<i64>().prop_map(|id| WriteRequest::LeaseRevoke(LeaseRevokeRequest { id })),
        1 => (0..8i64).prop_map(|revision| WriteRequest::Compact(CompactRequest {
            revision,
            physical: true,
        })),
        3 => (
            prop::collection::vec((bucket(), key()), 0..2),
            prop::collection::vec(record_change(), 1..3),
        )
            .prop_map(|(guards, changes)| WriteRequest::Records(RecordsRequest {
                guards: guards
                    .into_iter()
                    .map(|(bucket, key)| RecordGuard {
                        bucket,
                        key,
                        expected: None,
                    })
                    .collect(),
                changes,
            })),
    ]
}

/// Applies `req` as a replicated log does (no member's own limits).
fn apply_logged(store: &Store, req: WriteRequest, index: u64) -> hark_mvcc::Result<WriteResponse> {
    let (tx, rx) = mpsc::channel();
    store.apply_logged(
        vec![(
            Some(req),
            Box::new(move |r: Option<hark_mvcc::Result<WriteResponse>>| {
                let _ = tx.send(r);
            }),
        )],
        index.to_be_bytes().to_vec(),
    );
    rx.recv()
        .expect("the store answers every logged request")
        .expect("a request, not an empty part")
}

/// Everything a snapshot carries of a store, comparable.
#[derive(Debug, PartialEq)]
struct Contents {
    revision: i64,
    compacted: i64,
    kvs: Vec<hark_mvcc::KeyValue>,
    leases: Vec<(i64, i64)>,
    records: Vec<Vec<(Bytes, Bytes)>>,
}

fn contents(store: &Store) -> Contents {
    let everything = RangeRequest {
        range_end: Bytes::from_static(b"\0"),
        ..RangeRequest::key(Bytes::from_static(b"\0"))
    };
    let mut leases = store.leases();
    leases.sort();
    Contents {
        revision: store.current_revision(),
        compacted: store.compacted_revision(),
        kvs: store.range(&everything).unwrap().kvs,
        leases,
        records: ["auth", "authUsers", "authRoles"]
            .iter()
            .map(|b| {
                let mut records = store.records(b);
                // A snapshot names etcd's initial auth revision when the
                // store has none yet.
                records.retain(|(k, v)| {
                    !(*b == "auth" && k == "authRevision" && v[..] == 1u64.to_be_bytes())
                });
                records
            })
            .collect(),
    }
}

fn open(dir: &std::path::Path, backend: BackendKind) -> Store {
    Store::open(
        dir,
        StoreOptions {
            backend,
            ..StoreOptions::default()
        },
    )
    .unwrap()
}

fn member() -> Member {
    Member {
        id: 0x8e9e05c52164694d,
        name: "default".into(),
        peer_urls: vec!["http://localhost:2380".into()],
        client_urls: vec!["http://localhost:2379".into()],
    }
}

fn backends() -> Vec<BackendKind> {
    let built: Vec<BackendKind> = [BackendKind::RocksDb, BackendKind::Fjall]
        .into_iter()
        .filter(|b| b.is_built())
        .collect();
    assert_eq!(built.len(), 2, "this test needs both backends built");
    built
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn a_logged_request_is_refused_before_the_log_or_applied_and_round_trips(
        requests in prop::collection::vec(request(), 1..6),
    ) {
        for from in backends() {
            let dir = tempfile::tempdir().unwrap();
            let store = open(&dir.path().join("source"), from);
            for (index, req) in requests.iter().enumerate() {
                let before = contents(&store);
                match store.validate(req) {
                    Err(refused) => {
                        // A log written by an older member may still carry
                        // it: every member refuses it alike and moves on.
                        let at_apply = apply_logged(&store, req.clone(), index as u64);
                        prop_assert_eq!(at_apply.err(), Some(refused));
                        prop_assert_eq!(&contents(&store), &before);
                    }
                    // Applied, or refused by the store's state (a missing
                    // lease, a compacted revision): either way an answer.
                    Ok(()) => {
                        let _ = apply_logged(&store, req.clone(), index as u64);
                    }
                }
            }
            // No request stopped the store: it still takes a write.
            let alive = store.put(PutRequest::new("zz-alive", "1"));
            prop_assert!(alive.is_ok(), "{:?} on {}", alive, from.name());
            let want = contents(&store);
            let saved = dir.path().join("saved.db");
            hark_snapshot::save(&store, &member(), &saved).unwrap();
            drop(store);
            for onto in backends() {
                let into = dir.path().join(format!("restored-{}", onto.name()));
                let options = RestoreOptions { backend: onto, ..RestoreOptions::default() };
                hark_snapshot::restore(&saved, &into, &options).unwrap();
                let restored = open(&into, onto);
                prop_assert_eq!(&contents(&restored), &want, "{} -> {}", from.name(), onto.name());
            }
        }
    }
}
