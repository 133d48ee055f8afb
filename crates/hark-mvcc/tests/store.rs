//! etcd's store semantics, end to end through the public API.

#![cfg(any(feature = "rocksdb", feature = "fjall"))]

use std::sync::Arc;

use bytes::Bytes;
use hark_mvcc::*;

fn put(s: &Store, k: &str, v: &str) -> i64 {
    s.put(PutRequest::new(k.to_string(), v.to_string()))
        .unwrap()
        .header_revision
}

fn get(s: &Store, k: &str) -> Option<KeyValue> {
    s.range(&RangeRequest::key(k.to_string()))
        .unwrap()
        .kvs
        .pop()
}

fn get_at(s: &Store, k: &str, rev: i64) -> Result<Option<KeyValue>> {
    let mut r = RangeRequest::key(k.to_string());
    r.revision = rev;
    Ok(s.range(&r)?.kvs.pop())
}

fn keys(resp: &RangeResponse) -> Vec<String> {
    resp.kvs
        .iter()
        .map(|kv| String::from_utf8(kv.key.to_vec()).unwrap())
        .collect()
}

fn rocks_store(dir: &std::path::Path) -> Store {
    Store::open(dir, StoreOptions::default()).unwrap()
}

#[test]
fn revisions_versions_and_tombstones() {
    let s = Store::in_memory();
    assert_eq!(s.current_revision(), 1, "a new store is at revision 1");
    assert_eq!(put(&s, "foo", "a"), 2);
    assert_eq!(put(&s, "foo", "b"), 3);
    let kv = get(&s, "foo").unwrap();
    assert_eq!((kv.create_revision, kv.mod_revision, kv.version), (2, 3, 2));
    assert_eq!(kv.value, Bytes::from("b"));

    let d = s.delete_range(DeleteRangeRequest::new("foo", "")).unwrap();
    assert_eq!((d.deleted, d.header_revision), (1, 4));
    assert_eq!(get(&s, "foo"), None);
    let d = s.delete_range(DeleteRangeRequest::new("foo", "")).unwrap();
    assert_eq!(
        (d.deleted, d.header_revision),
        (0, 4),
        "deleting nothing makes no revision"
    );

    assert_eq!(put(&s, "foo", "c"), 5);
    let kv = get(&s, "foo").unwrap();
    assert_eq!(
        (kv.create_revision, kv.mod_revision, kv.version),
        (5, 5, 1),
        "delete resets version"
    );
    assert_eq!(
        get_at(&s, "foo", 3).unwrap().unwrap().value,
        Bytes::from("b")
    );
    assert_eq!(get_at(&s, "foo", 4).unwrap(), None);
    assert_eq!(get_at(&s, "foo", 6), Err(Error::FutureRevision));
    assert_eq!(s.range(&RangeRequest::key("")), Err(Error::EmptyKey));
    assert_eq!(s.put(PutRequest::new("", "x")), Err(Error::EmptyKey));
}

#[test]
fn range_options_match_etcd() {
    let s = Store::in_memory();
    for (k, v) in [("a", "3"), ("b", "1"), ("c", "2"), ("d", "0")] {
        put(&s, k, v);
    }
    put(&s, "b", "9"); // b: create 3, mod 6, version 2
    let all = |f: &dyn Fn(&mut RangeRequest)| {
        let mut r = RangeRequest::range("a", "\0");
        f(&mut r);
        s.range(&r).unwrap()
    };
    let r = all(&|_| {});
    assert_eq!(
        (keys(&r), r.count, r.more, r.header_revision),
        (
            vec!["a", "b", "c", "d"]
                .into_iter()
                .map(String::from)
                .collect(),
            4,
            false,
            6
        )
    );
    let r = all(&|r| r.limit = 2);
    assert_eq!(
        (keys(&r), r.count, r.more),
        (vec!["a".to_string(), "b".into()], 4, true)
    );
    let r = all(&|r| r.limit = 4);
    assert!(!r.more);
    let r = all(&|r| r.count_only = true);
    assert_eq!((r.kvs.len(), r.count), (0, 4));
    let r = all(&|r| r.keys_only = true);
    assert!(
        r.kvs
            .iter()
            .all(|kv| kv.value.is_empty() && kv.mod_revision > 0)
    );
    let r = all(&|r| {
        r.sort_target = SortTarget::Value;
        r.sort_order = SortOrder::Descend;
    });
    assert_eq!(keys(&r), ["b", "a", "c", "d"]);
    let r = all(&|r| r.sort_target = SortTarget::Mod);
    assert_eq!(
        keys(&r),
        ["a", "c", "d", "b"],
        "non-key target without order sorts ascending"
    );
    let r = all(&|r| r.sort_order = SortOrder::Descend);
    assert_eq!(keys(&r), ["d", "c", "b", "a"]);
    let r = all(&|r| {
        r.sort_target = SortTarget::Version;
        r.sort_order = SortOrder::Descend;
        r.limit = 1;
    });
    assert_eq!((keys(&r), r.more), (vec!["b".to_string()], true));
    let r = all(&|r| r.min_mod_revision = 4);
    assert_eq!(
        (keys(&r), r.count),
        (vec!["b".to_string(), "c".into(), "d".into()], 4),
        "count ignores filters"
    );
    let r = all(&|r| r.max_create_revision = 3);
    assert_eq!(keys(&r), ["a", "b"]);
    let r = all(&|r| {
        r.min_create_revision = 3;
        r.max_mod_revision = 5;
    });
    assert_eq!(keys(&r), ["c", "d"]);
    // range_end forms
    assert_eq!(
        keys(&s.range(&RangeRequest::range("b", "d")).unwrap()),
        ["b", "c"]
    );
    assert!(
        s.range(&RangeRequest::range("d", "b"))
            .unwrap()
            .kvs
            .is_empty()
    );
    assert_eq!(
        keys(&s.range(&RangeRequest::range("\0", "\0")).unwrap()).len(),
        4
    );
    // at an older revision
    let mut r = RangeRequest::range("a", "\0");
    r.revision = 3;
    let r = s.range(&r).unwrap();
    assert_eq!(
        (keys(&r), r.count, r.header_revision),
        (vec!["a".to_string(), "b".into()], 2, 6)
    );
}

#[test]
fn put_options() {
    let s = Store::in_memory();
    s.lease_grant(42, 60).unwrap();
    s.lease_grant(7, 60).unwrap();
    let mut p = PutRequest::new("k", "v1");
    p.lease = 42;
    s.put(p).unwrap();
    let mut p = PutRequest::new("k", "v2");
    p.prev_kv = true;
    p.ignore_lease = true;
    let r = s.put(p).unwrap();
    assert_eq!(r.prev_kv.unwrap().value, Bytes::from("v1"));
    let kv = get(&s, "k").unwrap();
    assert_eq!((kv.value.as_ref(), kv.lease), (&b"v2"[..], 42));

    let mut p = PutRequest::new("k", "");
    p.ignore_value = true;
    p.lease = 7;
    s.put(p).unwrap();
    let kv = get(&s, "k").unwrap();
    assert_eq!(
        (kv.value.as_ref(), kv.lease, kv.version),
        (&b"v2"[..], 7, 3)
    );

    let mut p = PutRequest::new("missing", "");
    p.ignore_value = true;
    assert_eq!(s.put(p), Err(Error::KeyNotFound));
    let rev = s.current_revision();
    let mut p = PutRequest::new("k", "x");
    p.ignore_value = true;
    assert_eq!(s.put(p), Err(Error::ValueProvided));
    assert_eq!(s.current_revision(), rev, "a rejected put changes nothing");

    let mut d = DeleteRangeRequest::new("a", "z");
    d.prev_kv = true;
    let r = s.delete_range(d).unwrap();
    assert_eq!(
        (r.deleted, r.prev_kvs.len(), r.prev_kvs[0].lease),
        (1, 1, 7)
    );
}

fn cmp(key: &str, result: CompareResult, target: CompareTarget) -> Compare {
    Compare {
        key: Bytes::from(key.to_string()),
        range_end: Bytes::new(),
        result,
        target,
    }
}

#[test]
fn txn_compares_branches_and_one_revision() {
    let s = Store::in_memory();
    put(&s, "a", "1"); // rev 2
    put(&s, "b", "2"); // rev 3
    let holds = |c: Compare| {
        s.txn(TxnRequest {
            compare: vec![c],
            success: vec![],
            failure: vec![],
        })
        .unwrap()
        .succeeded
    };
    use CompareResult::*;
    use CompareTarget::*;
    assert!(holds(cmp("a", Equal, Value("1".into()))));
    assert!(holds(cmp("a", Less, Value("2".into()))));
    assert!(!holds(cmp("a", Greater, Value("1".into()))));
    assert!(holds(cmp("a", Equal, Version(1))));
    assert!(holds(cmp("a", Equal, CreateRevision(2))));
    assert!(holds(cmp("b", Greater, ModRevision(2))));
    assert!(holds(cmp("a", Equal, Lease(0))));
    assert!(holds(cmp("a", NotEqual, Lease(5))));
    assert!(
        holds(cmp("zz", Equal, Version(0))),
        "a missing key has version 0"
    );
    assert!(holds(cmp("zz", Equal, CreateRevision(0))));
    assert!(
        !holds(cmp("zz", Equal, Value("".into()))),
        "a missing key matches no value"
    );
    let mut ranged = cmp("a", Greater, ModRevision(1));
    ranged.range_end = "c".into();
    assert!(holds(ranged.clone()));
    ranged.target = ModRevision(2);
    assert!(!holds(ranged), "every key in the range must hold");
    assert_eq!(s.current_revision(), 3, "read-only txns make no revision");

    let r = s
        .txn(TxnRequest {
            compare: vec![cmp("a", Equal, Value("1".into()))],
            success: vec![
                RequestOp::Put(PutRequest::new("x", "1")),
                RequestOp::Range(RangeRequest::key("x")),
                RequestOp::DeleteRange(DeleteRangeRequest::new("b", "")),
                RequestOp::Txn(TxnRequest {
                    compare: vec![cmp("x", Equal, Version(0))],
                    success: vec![RequestOp::Put(PutRequest::new("y", "fresh"))],
                    failure: vec![RequestOp::Put(PutRequest::new("y", "seen"))],
                }),
            ],
            failure: vec![RequestOp::Put(PutRequest::new("f", "1"))],
        })
        .unwrap();
    assert!(r.succeeded);
    assert_eq!(
        r.header_revision, 4,
        "all changes of one txn share one revision"
    );
    let ResponseOp::Range(inner) = &r.responses[1] else {
        panic!()
    };
    assert_eq!(
        inner.kvs[0].mod_revision, 4,
        "a range inside a txn sees earlier ops"
    );
    let ResponseOp::Txn(nested) = &r.responses[3] else {
        panic!()
    };
    assert!(
        nested.succeeded,
        "nested compares see the state before the txn (etcd)"
    );
    assert_eq!(get(&s, "y").unwrap().value, Bytes::from("fresh"));
    assert_eq!(get(&s, "b"), None);
    assert_eq!(get(&s, "f"), None);
    let events = s.history(4, 10, usize::MAX).unwrap();
    assert_eq!(events.len(), 1);
    let subs: Vec<i64> = events[0].events.iter().map(|e| e.kv.mod_revision).collect();
    assert_eq!(subs, [4, 4, 4]);

    // Errors leave no trace.
    let before = s.current_revision();
    let mut bad = PutRequest::new("nope", "");
    bad.ignore_value = true;
    let r = s.txn(TxnRequest {
        compare: vec![],
        success: vec![
            RequestOp::Put(PutRequest::new("ok", "1")),
            RequestOp::Put(bad),
        ],
        failure: vec![],
    });
    assert_eq!(r, Err(Error::KeyNotFound));
    assert_eq!(s.current_revision(), before);
    assert_eq!(get(&s, "ok"), None);
    let mut future = RangeRequest::key("a");
    future.revision = before + 1;
    let r = s.txn(TxnRequest {
        compare: vec![],
        success: vec![
            RequestOp::Put(PutRequest::new("ok", "1")),
            RequestOp::Range(future),
        ],
        failure: vec![],
    });
    assert_eq!(r, Err(Error::FutureRevision));
    assert_eq!(get(&s, "ok"), None);
    let dup = s.txn(TxnRequest {
        compare: vec![],
        success: vec![
            RequestOp::Put(PutRequest::new("d", "1")),
            RequestOp::Put(PutRequest::new("d", "2")),
        ],
        failure: vec![],
    });
    assert_eq!(dup, Err(Error::DuplicateKey));
}

#[test]
fn compaction_rules_and_errors() {
    let s = Store::in_memory();
    put(&s, "k", "1"); // 2
    put(&s, "k", "2"); // 3
    s.delete_range(DeleteRangeRequest::new("k", "")).unwrap(); // 4
    put(&s, "other", "x"); // 5
    assert_eq!(s.compact(6, false), Err(Error::FutureRevision));
    s.compact(4, true).unwrap();
    assert_eq!(s.compacted_revision(), 4);
    assert_eq!(s.compact(4, false), Err(Error::Compacted));
    assert_eq!(s.compact(3, false), Err(Error::Compacted));
    assert_eq!(get_at(&s, "k", 3), Err(Error::Compacted));
    assert_eq!(get_at(&s, "k", 4).unwrap(), None);
    assert_eq!(
        get_at(&s, "other", 5).unwrap().unwrap().value,
        Bytes::from("x")
    );
    // The delete exactly at the compaction revision is still in history (etcd #18089).
    let h = s.history(4, 10, usize::MAX).unwrap();
    assert_eq!(h[0].revision, 4);
    assert_eq!(h[0].events[0].kind, EventKind::Delete);
    assert_eq!(s.history(3, 10, usize::MAX), Err(Error::Compacted));
    s.compact(5, true).unwrap();
    assert_eq!(
        s.key_count(),
        1,
        "the deleted key is gone once compacted past its tombstone"
    );
    assert_eq!(s.history(5, 10, usize::MAX).unwrap()[0].revision, 5);
}

#[test]
fn subscribers_get_every_revision_in_order() {
    let s = Store::in_memory();
    put(&s, "before", "x");
    let (start, rx) = s.subscribe();
    assert_eq!(start, 2);
    put(&s, "a", "1");
    s.delete_range(DeleteRangeRequest::new("a", "")).unwrap();
    s.delete_range(DeleteRangeRequest::new("a", "")).unwrap(); // no-op: not published
    s.txn(TxnRequest {
        compare: vec![],
        success: vec![
            RequestOp::Put(PutRequest::new("b", "1")),
            RequestOp::Put(PutRequest::new("c", "1")),
        ],
        failure: vec![],
    })
    .unwrap();
    let got: Vec<(i64, Vec<(EventKind, String)>)> = rx
        .try_iter()
        .map(|c| {
            (
                c.revision,
                c.events
                    .iter()
                    .map(|e| (e.kind, String::from_utf8(e.kv.key.to_vec()).unwrap()))
                    .collect(),
            )
        })
        .collect();
    use EventKind::*;
    assert_eq!(
        got,
        vec![
            (3, vec![(Put, "a".to_string())]),
            (4, vec![(Delete, "a".to_string())]),
            (5, vec![(Put, "b".to_string()), (Put, "c".to_string())]),
        ]
    );
    // What was published equals what history reads back.
    let h = s.history(3, 100, usize::MAX).unwrap();
    assert_eq!(h.iter().map(|c| c.revision).collect::<Vec<_>>(), [3, 4, 5]);
    assert_eq!(h[1].events[0].kv.mod_revision, 4);
    assert!(h[1].events[0].kv.value.is_empty());
    // The same changes through the key index, for one key and for a range.
    let a: Vec<(i64, EventKind)> = s
        .key_changes(b"a", b"", 1, 100)
        .unwrap()
        .iter()
        .map(|e| (e.kv.mod_revision, e.kind))
        .collect();
    assert_eq!(a, [(3, Put), (4, Delete)]);
    let all: Vec<i64> = s
        .key_changes(b"a", b"\0", 4, 5)
        .unwrap()
        .iter()
        .map(|e| e.kv.mod_revision)
        .collect();
    assert_eq!(all, [4, 5, 5]);
    assert_eq!(
        s.key_changes(b"c", b"", 5, 5).unwrap()[0].kv.value,
        Bytes::from("1")
    );
    // History stops at revision boundaries and says where.
    assert_eq!(s.history_chunk(3, 2, usize::MAX).unwrap().next, 5);
    assert_eq!(s.history_chunk(3, 100, usize::MAX).unwrap().next, 6);
    let fresh = Store::in_memory();
    let chunk = fresh.history_chunk(1, 10, usize::MAX).unwrap();
    assert_eq!(
        (chunk.revisions.len(), chunk.next),
        (0, 2),
        "revision 1 has no changes but is covered"
    );
    assert_eq!(s.history(3, 2, usize::MAX).unwrap().len(), 2);
    assert_eq!(s.history(3, 100, 1).unwrap().len(), 1);
}

#[test]
fn concurrent_writers_share_commits_and_get_distinct_revisions() {
    let dir = tempfile::tempdir().unwrap();
    let s = rocks_store(dir.path());
    let threads: Vec<_> = (0..16)
        .map(|t| {
            let s = s.clone();
            std::thread::spawn(move || {
                (0..50)
                    .map(|i| put(&s, &format!("t{t}/{i}"), "v"))
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut revs: Vec<i64> = threads
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    revs.sort();
    assert_eq!(revs, (2..2 + 800).collect::<Vec<_>>());
    assert_eq!(s.range(&RangeRequest::range("t", "u")).unwrap().count, 800);
}

#[test]
fn reopen_recovers_state_and_continues_revisions() {
    let dir = tempfile::tempdir().unwrap();
    {
        let s = rocks_store(dir.path());
        put(&s, "a", "1");
        put(&s, "a", "2");
        put(&s, "b", "1");
        s.delete_range(DeleteRangeRequest::new("b", "")).unwrap();
        put(&s, "b", "2"); // rev 6
        s.compact(3, true).unwrap();
        assert!(s.db_size() > 0);
    }
    let s = rocks_store(dir.path());
    assert_eq!((s.current_revision(), s.compacted_revision()), (6, 3));
    let a = get(&s, "a").unwrap();
    assert_eq!((a.create_revision, a.mod_revision, a.version), (2, 3, 2));
    let b = get(&s, "b").unwrap();
    assert_eq!((b.create_revision, b.version), (6, 1));
    assert_eq!(get_at(&s, "b", 5).unwrap(), None);
    assert_eq!(get_at(&s, "a", 2), Err(Error::Compacted));
    assert_eq!(put(&s, "a", "3"), 7);
    assert_eq!(get(&s, "a").unwrap().version, 3);
}

#[test]
fn memory_backend_reopens_like_rocks() {
    let backend = Arc::new(MemoryBackend::new());
    {
        let s = Store::with_backend(Box::new(backend.clone()), StoreOptions::default()).unwrap();
        put(&s, "a", "1");
        put(&s, "a", "2");
    }
    let s = Store::with_backend(Box::new(backend), StoreOptions::default()).unwrap();
    assert_eq!(s.current_revision(), 3);
    assert_eq!(get(&s, "a").unwrap().version, 2);
}

/// Synced writes that take 2 ms (like an fsync) and are counted.
#[derive(Default)]
struct SlowSyncs {
    synced_writes: std::sync::atomic::AtomicUsize,
}

impl hark_mvcc::backend::BackendHooks for SlowSyncs {
    fn before_write(&self, sync: bool) -> Result<()> {
        if sync {
            std::thread::sleep(std::time::Duration::from_millis(2));
            self.synced_writes
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        Ok(())
    }
}

#[test]
fn group_commit_shares_one_sync_among_concurrent_writers() {
    let hooks = Arc::new(SlowSyncs::default());
    let backend = hark_mvcc::backend::Hooked {
        inner: MemoryBackend::new(),
        hooks: hooks.clone(),
    };
    let s = Store::with_backend(Box::new(backend), StoreOptions::default()).unwrap();
    let threads: Vec<_> = (0..16)
        .map(|t| {
            let s = s.clone();
            std::thread::spawn(move || {
                for i in 0..20 {
                    put(&s, &format!("g{t}/{i}"), "v");
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let syncs = hooks
        .synced_writes
        .load(std::sync::atomic::Ordering::Relaxed);
    assert_eq!(s.current_revision(), 1 + 320);
    // One sync per put would be 320; sharing brings it near 320 / 16.
    assert!(syncs <= 160, "{syncs} syncs for 320 concurrent puts");
    eprintln!("group commit: 320 puts from 16 writers took {syncs} syncs");
}

#[test]
fn kept_bytes_do_not_alias_the_request_buffer() {
    // A transport decodes a request's key and value as slices of one large
    // receive buffer; the store keeps them (key index, watch events) far
    // longer than the request, so it must not hold on to that buffer.
    let s = Store::in_memory();
    let (_, rx) = s.subscribe();
    let buffer = Bytes::from(vec![b'k'; 64 * 1024]);
    let within = |b: &Bytes| {
        let (start, p) = (buffer.as_ptr() as usize, b.as_ptr() as usize);
        (start..start + buffer.len()).contains(&p)
    };
    s.put(PutRequest::new(buffer.slice(0..8), buffer.slice(8..264)))
        .unwrap();
    let event = rx.recv().unwrap();
    let kv = &event.events[0].kv;
    assert_eq!((kv.key.len(), kv.value.len()), (8, 256));
    assert!(
        !within(&kv.key),
        "the event's key points into the request buffer"
    );
    assert!(
        !within(&kv.value),
        "the event's value points into the request buffer"
    );
}

/// `apply_logged` as a replicated log uses it: each entry's position lands in
/// the same write as its changes, including entries that change nothing.
#[test]
fn logged_positions_are_recorded_with_their_changes_and_survive_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let outcomes = Arc::new(std::sync::Mutex::new(Vec::new()));
    {
        let s = rocks_store(dir.path());
        assert_eq!(s.log_position().unwrap(), None);
        let record = |o: &Arc<std::sync::Mutex<Vec<String>>>| -> LoggedDone {
            let o = o.clone();
            Box::new(move |r: Option<Result<WriteResponse>>| {
                o.lock().unwrap().push(match r {
                    None => "nothing".to_string(),
                    Some(Ok(WriteResponse::Put(p))) => format!("put@{}", p.header_revision),
                    Some(Ok(other)) => format!("{other:?}"),
                    Some(Err(e)) => format!("error: {e}"),
                })
            })
        };
        let put = |k: &str| {
            Some(WriteRequest::Put(PutRequest {
                key: Bytes::copy_from_slice(k.as_bytes()),
                value: Bytes::from_static(b"v"),
                ..Default::default()
            }))
        };
        let wait = |s: &Store| {
            let (tx, rx) = std::sync::mpsc::channel();
            s.barrier(move || tx.send(()).unwrap());
            rx.recv().unwrap();
        };
        s.apply_logged(vec![(put("a"), record(&outcomes))], b"p1".to_vec());
        s.apply_logged(vec![(None, record(&outcomes))], b"p2".to_vec());
        // Refused by validation (empty key): still a log entry, still recorded.
        s.apply_logged(vec![(put(""), record(&outcomes))], b"p3".to_vec());
        wait(&s);
        assert_eq!(
            *outcomes.lock().unwrap(),
            ["put@2", "nothing", "error: etcdserver: key is not provided"]
        );
        assert_eq!(s.log_position().unwrap().as_deref(), Some(&b"p3"[..]));
        // Several requests in one entry: applied in order, at one position.
        s.apply_logged(
            vec![(put("b"), record(&outcomes)), (put("c"), record(&outcomes))],
            b"p4".to_vec(),
        );
        wait(&s);
        assert_eq!(outcomes.lock().unwrap()[3..], ["put@3", "put@4"]);
    }
    let s = rocks_store(dir.path());
    assert_eq!(s.log_position().unwrap().as_deref(), Some(&b"p4"[..]));
    assert_eq!(s.current_revision(), 4);
    assert_eq!(get(&s, "c").unwrap().mod_revision, 4);
}

#[test]
fn consul_flags_go_with_the_value_and_survive_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    {
        let s = rocks_store(dir.path());
        let mut p = PutRequest::new("k", "v1");
        p.flags = 42;
        s.put(p).unwrap();
        assert_eq!(get(&s, "k").unwrap().flags, 42);
        // Keeping the value keeps its flags.
        let mut p = PutRequest::new("k", "");
        p.ignore_value = true;
        p.lease = 0;
        s.put(p).unwrap();
        assert_eq!(get(&s, "k").unwrap().flags, 42);
        put(&s, "other", "x");
    }
    let s = rocks_store(dir.path());
    let kv = get(&s, "k").unwrap();
    assert_eq!((kv.value.as_ref(), kv.flags), (&b"v1"[..], 42));
    // A put without flags, as every etcd client sends, clears them.
    put(&s, "k", "v2");
    assert_eq!(get(&s, "k").unwrap().flags, 0);
    assert_eq!(get(&s, "other").unwrap().flags, 0);
}

/// The txn op limit is a member's own flag: a logged entry is applied
/// whatever this member's limit, so members with different limits apply the
/// same log; a request this member takes itself is still held to it.
#[test]
fn the_txn_op_limit_binds_requests_taken_here_not_logged_entries() {
    let options = StoreOptions {
        max_txn_ops: 2,
        ..StoreOptions::default()
    };
    let s = Store::with_backend(Box::new(MemoryBackend::new()), options).unwrap();
    let three_puts = || {
        WriteRequest::Txn(TxnRequest {
            success: ["a", "b", "c"]
                .map(|k| RequestOp::Put(PutRequest::new(k, "v")))
                .to_vec(),
            ..Default::default()
        })
    };
    let refused = s.apply_blocking(three_puts());
    assert!(matches!(refused, Err(Error::TooManyOps)), "{refused:?}");
    let (tx, rx) = std::sync::mpsc::channel();
    let done: LoggedDone = Box::new(move |r| tx.send(r).unwrap());
    s.apply_logged(vec![(Some(three_puts()), done)], b"p1".to_vec());
    let answer = rx.recv().unwrap().expect("a request");
    assert!(matches!(answer, Ok(WriteResponse::Txn(_))), "{answer:?}");
    assert_eq!(s.current_revision(), 2);
    assert_eq!(s.key_count(), 3);
    // What the entry itself gets wrong is still refused, on every member alike.
    let (tx, rx) = std::sync::mpsc::channel();
    let done: LoggedDone = Box::new(move |r| tx.send(r).unwrap());
    let empty_key = WriteRequest::Put(PutRequest::new("", "v"));
    s.apply_logged(vec![(Some(empty_key), done)], b"p2".to_vec());
    let refused = rx.recv().unwrap().expect("a request");
    assert!(matches!(refused, Err(Error::EmptyKey)), "{refused:?}");
}

/// etcd's `--compaction-batch-limit` and `--compaction-sleep-interval`: a
/// compaction looks at that many rows per batch and pauses between
/// batches; a store closed during a pause closes at once, and the
/// compaction is finished when the store next opens.
#[test]
fn a_paced_compaction_pauses_between_batches_and_finishes_on_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let slow = StoreOptions {
        compaction_batch_limit: Some(1),
        compaction_sleep: std::time::Duration::from_secs(3600),
        ..StoreOptions::default()
    };
    let s = Store::open(dir.path(), slow).unwrap();
    for i in 0..10 {
        put(&s, "key", &i.to_string()); // revisions 2 to 11
    }
    s.compact(5, false).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while s.reclaimable_bytes() == 0 {
        assert!(std::time::Instant::now() < deadline, "no first batch");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    // One row per batch, then the pause: nothing more is deleted.
    let first = s.reclaimable_bytes();
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert_eq!(s.reclaimable_bytes(), first, "deleted past the first batch");

    let closing = std::time::Instant::now();
    drop(s);
    assert!(
        closing.elapsed() < std::time::Duration::from_secs(10),
        "closing waited for the pause"
    );

    // Reopened without the pace, the compaction is finished at once: the
    // two rows the first batch left (revisions 3 and 4) are deleted.
    let s = Store::open(dir.path(), StoreOptions::default()).unwrap();
    assert!(s.reclaimable_bytes() > 0, "the compaction was not resumed");
    assert_eq!(s.compacted_revision(), 5);
    assert_eq!(get_at(&s, "key", 4), Err(Error::Compacted));
    assert_eq!(
        get_at(&s, "key", 5).unwrap().unwrap().value,
        Bytes::from("3")
    );
}

/// The last handle can go in a write's callback, on the committer thread:
/// the store then closes without waiting on that thread, or on the
/// compactor that waits for it (it did wait: for ever).
#[test]
fn the_last_handle_dropped_in_a_writes_callback_closes_the_store() {
    let (closed_tx, closed_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(dir.path(), StoreOptions::default()).unwrap();
        let closed = s.backend_closed();
        let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
        let held = s.clone();
        s.apply(
            WriteRequest::Put(PutRequest::new("k", "v")),
            Box::new(move |_| {
                // Once the caller's handle is gone, this is the last one.
                go_rx.recv().unwrap();
                drop(held);
            }),
        );
        drop(s);
        go_tx.send(()).unwrap();
        while !closed.is_closed() {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        closed_tx.send(()).unwrap();
    });
    closed_rx
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("the store did not close");
}
