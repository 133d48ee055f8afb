//! etcd's watch semantics through the public API.

use std::time::Duration;

use bytes::Bytes;
use hark_mvcc::{DeleteRangeRequest, EventKind, PutRequest, RequestOp, Store, TxnRequest};
use hark_watch::*;

const WAIT: Duration = Duration::from_secs(5);

fn setup(config: WatchConfig) -> (Store, WatchHub) {
    let store = Store::in_memory();
    let hub = WatchHub::new(store.clone(), config);
    (store, hub)
}

fn put(s: &Store, k: &str, v: &str) -> i64 {
    s.put(PutRequest::new(k.to_string(), v.to_string()))
        .unwrap()
        .header_revision
}

fn next(rx: &Responses) -> WatchResponse {
    rx.recv_timeout(WAIT).expect("a response within the wait")
}

fn assert_quiet(rx: &Responses) {
    if let Some(r) = rx.recv_timeout(Duration::from_millis(150)) {
        panic!("unexpected response {r:?}");
    }
}

/// (revision, kind, key, value) of every event in a response.
fn evs(r: &WatchResponse) -> Vec<(i64, EventKind, String, String)> {
    r.events()
        .iter()
        .map(|e| {
            (
                e.revision(),
                e.kind,
                String::from_utf8(e.kv.key.to_vec()).unwrap(),
                String::from_utf8(e.kv.value.to_vec()).unwrap(),
            )
        })
        .collect()
}

fn created(r: &WatchResponse) -> i64 {
    assert!(
        matches!(r.kind, ResponseKind::Created),
        "expected created, got {r:?}"
    );
    r.header_revision
}

#[test]
fn created_comes_first_then_live_events() {
    let (store, hub) = setup(WatchConfig::default());
    put(&store, "a", "0");
    let (ws, rx) = hub.new_stream();
    let id = ws.watch(WatchRequest::key("a")).unwrap();
    assert_eq!(id, 0, "auto ids start at 0");
    let r = next(&rx);
    assert_eq!((created(&r), r.watch_id), (2, 0));
    let rev = put(&store, "a", "1");
    put(&store, "b", "x");
    let r = next(&rx);
    assert_eq!((r.watch_id, r.header_revision), (0, rev));
    assert_eq!(evs(&r), [(rev, EventKind::Put, "a".into(), "1".into())]);
    store
        .delete_range(DeleteRangeRequest::new("a", ""))
        .unwrap();
    let r = next(&rx);
    let e = &r.events()[0];
    assert_eq!(
        (e.kind, e.kv.mod_revision, e.kv.version),
        (EventKind::Delete, rev + 2, 0)
    );
    assert_quiet(&rx);
}

#[test]
fn history_replay_then_live_without_gaps_or_duplicates() {
    let (store, hub) = setup(WatchConfig::default());
    for i in 0..5 {
        put(&store, "k", &i.to_string()); // revisions 2..=6
    }
    let (ws, rx) = hub.new_stream();
    ws.watch(WatchRequest::key("k").from_revision(3)).unwrap();
    assert_eq!(created(&next(&rx)), 6);
    let r = next(&rx);
    assert_eq!(
        r.header_revision, 6,
        "catch-up header is the current revision"
    );
    let revs: Vec<i64> = evs(&r).iter().map(|e| e.0).collect();
    assert_eq!(revs, [3, 4, 5, 6]);
    put(&store, "k", "live");
    assert_eq!(evs(&next(&rx))[0].0, 7);
    assert_quiet(&rx);
}

#[test]
fn range_forms_and_rejections() {
    let (store, hub) = setup(WatchConfig::default());
    let (ws, rx) = hub.new_stream();
    let prefix = ws.watch(WatchRequest::range("p/", "p0")).unwrap();
    let all = ws.watch(WatchRequest::range("q", "\0")).unwrap();
    assert_eq!(
        ws.watch(WatchRequest::range("b", "a")),
        Err(WatchError::EmptyRange)
    );
    assert_eq!(
        ws.watch(WatchRequest::key("x").from_revision(-1)),
        Err(WatchError::NegativeRevision)
    );
    let mut dup = WatchRequest::key("x");
    dup.id = all; // (id 0 would mean "pick one")
    assert_eq!(ws.watch(dup), Err(WatchError::DuplicateId));
    let mut explicit = WatchRequest::key("x");
    explicit.id = 2;
    assert_eq!(ws.watch(explicit), Ok(2));
    assert_eq!(
        ws.watch(WatchRequest::key("y")).unwrap(),
        3,
        "auto ids skip ids in use"
    );

    assert_eq!((created(&next(&rx)), next(&rx).watch_id), (1, all));
    for reason in [
        "mvcc: watcher range is empty",
        "etcdserver: mvcc: required revision has been compacted",
        "mvcc: duplicate watch ID provided on the WatchStream",
    ] {
        let r = next(&rx);
        assert_eq!(r.watch_id, NO_WATCH_ID);
        assert!(
            matches!(&r.kind, ResponseKind::CreateRejected { reason: got } if got == reason),
            "{r:?}"
        );
    }
    assert_eq!(next(&rx).watch_id, 2, "creates are answered in order");
    assert_eq!(next(&rx).watch_id, 3);

    put(&store, "p/1", "v"); // prefix only
    put(&store, "z", "v"); // "q".. only
    put(&store, "p0", "v"); // neither: the prefix end is exclusive
    let got: Vec<(i64, String)> = (0..2)
        .map(|_| {
            let r = next(&rx);
            (r.watch_id, evs(&r)[0].2.clone())
        })
        .collect();
    assert_eq!(got, [(prefix, "p/1".to_string()), (all, "z".into())]);
    assert_quiet(&rx);
}

#[test]
fn future_start_waits_for_its_revision() {
    let (store, hub) = setup(WatchConfig::default());
    let (ws, rx) = hub.new_stream();
    ws.watch(WatchRequest::key("k").from_revision(4)).unwrap();
    assert_eq!(created(&next(&rx)), 1);
    put(&store, "k", "2");
    put(&store, "k", "3");
    ws.request_progress_all();
    assert_quiet(&rx); // not past its start revision yet: no progress either
    put(&store, "k", "4");
    assert_eq!(evs(&next(&rx))[0].0, 4);
}

#[test]
fn compacted_start_is_canceled_and_id_stays_until_cancel() {
    let (store, hub) = setup(WatchConfig::default());
    for i in 0..4 {
        put(&store, "k", &i.to_string());
    }
    store.compact(4, true).unwrap();
    let (ws, rx) = hub.new_stream();
    let mut req = WatchRequest::key("k").from_revision(2);
    req.id = 5;
    let id = ws.watch(req).unwrap();
    created(&next(&rx));
    let r = next(&rx);
    assert_eq!((r.watch_id, r.header_revision), (id, 0));
    assert!(
        matches!(
            r.kind,
            ResponseKind::Compacted {
                compact_revision: 4
            }
        ),
        "{r:?}"
    );
    let mut same = WatchRequest::key("k");
    same.id = id;
    assert_eq!(
        ws.watch(same),
        Err(WatchError::DuplicateId),
        "the id stays in use"
    );
    let _ = next(&rx); // its rejection
    assert!(ws.cancel(id));
    assert!(matches!(next(&rx).kind, ResponseKind::Canceled));
    // Starting exactly at the compacted revision is fine.
    ws.watch(WatchRequest::key("k").from_revision(4)).unwrap();
    created(&next(&rx));
    assert_eq!(
        evs(&next(&rx)).iter().map(|e| e.0).collect::<Vec<_>>(),
        [4, 5]
    );
}

#[test]
fn cancel_and_filters_and_txn_atomicity() {
    let (store, hub) = setup(WatchConfig::default());
    let (ws, rx) = hub.new_stream();
    let mut no_put = WatchRequest::range("a", "z");
    no_put.no_put = true;
    let deletes = ws.watch(no_put).unwrap();
    let everything = ws.watch(WatchRequest::range("a", "z")).unwrap();
    created(&next(&rx));
    created(&next(&rx));
    let rev = store
        .txn(TxnRequest {
            compare: vec![],
            success: vec![
                RequestOp::Put(PutRequest::new("a", "1")),
                RequestOp::Put(PutRequest::new("b", "1")),
                RequestOp::Put(PutRequest::new("c", "1")),
            ],
            failure: vec![],
        })
        .unwrap()
        .header_revision;
    let r = next(&rx);
    assert_eq!(
        r.watch_id, everything,
        "all-put revision is filtered out for NOPUT"
    );
    assert_eq!(evs(&r).len(), 3, "a revision is never split");
    assert!(evs(&r).iter().all(|e| e.0 == rev));
    store
        .delete_range(DeleteRangeRequest::new("a", "c"))
        .unwrap();
    let mut got = [next(&rx), next(&rx)];
    got.sort_by_key(|r| r.watch_id);
    assert_eq!(got[0].watch_id, deletes);
    assert_eq!(evs(&got[0]).len(), 2);
    assert!(!ws.cancel(99), "unknown id: no reply");
    assert!(ws.cancel(everything));
    let r = next(&rx);
    assert!(matches!(r.kind, ResponseKind::Canceled) && r.watch_id == everything);
    put(&store, "b", "2");
    assert_quiet(&rx);
}

#[test]
fn prev_kv_follows_etcd() {
    let (store, hub) = setup(WatchConfig::default());
    let (ws, rx) = hub.new_stream();
    let mut req = WatchRequest::key("k");
    req.prev_kv = true;
    ws.watch(req).unwrap();
    created(&next(&rx));
    put(&store, "k", "1");
    put(&store, "k", "2");
    store
        .delete_range(DeleteRangeRequest::new("k", ""))
        .unwrap();
    put(&store, "k", "3");
    let prevs: Vec<Option<Bytes>> = (0..4)
        .map(|_| next(&rx).events()[0].prev_kv().map(|kv| kv.value.clone()))
        .collect();
    assert_eq!(prevs, [None, Some("1".into()), Some("2".into()), None]);
}

/// etcd reads a `prev_kv` watcher's previous value as it sends: an event
/// whose previous revision is compacted goes without it, even when the
/// value was known before the compaction (here published with the event for
/// an earlier `prev_kv` watcher). The apiserver's storage test
/// `WatchFromZero` depends on it.
#[test]
fn prev_kv_of_a_compacted_revision_is_absent_even_if_known_before() {
    let (store, hub) = setup(WatchConfig::default());
    let (ws, rx) = hub.new_stream();
    let mut early = WatchRequest::key("k");
    early.prev_kv = true;
    let early_id = ws.watch(early).unwrap();
    created(&next(&rx));
    put(&store, "k", "1");
    let second = put(&store, "k", "2");
    let prevs: Vec<Option<Bytes>> = (0..2)
        .map(|_| next(&rx).events()[0].prev_kv().map(|kv| kv.value.clone()))
        .collect();
    assert_eq!(
        prevs,
        [None, Some("1".into())],
        "known before the compaction"
    );
    assert!(ws.cancel(early_id));
    assert!(matches!(next(&rx).kind, ResponseKind::Canceled));
    store.compact(second, true).unwrap();
    let mut late = WatchRequest::key("k").from_revision(second);
    late.prev_kv = true;
    ws.watch(late).unwrap();
    created(&next(&rx));
    let r = next(&rx);
    assert_eq!(evs(&r), [(second, EventKind::Put, "k".into(), "2".into())]);
    assert_eq!(
        r.events()[0].prev_kv(),
        None,
        "revision {} is compacted",
        second - 1
    );
}

#[test]
fn progress_requests() {
    let (store, hub) = setup(WatchConfig::default());
    let (ws, rx) = hub.new_stream();
    ws.request_progress_all();
    assert_quiet(&rx); // no watchers: no reply (etcd)
    ws.watch(WatchRequest::key("k")).unwrap();
    created(&next(&rx));
    let rev = put(&store, "other", "x");
    ws.request_progress_all();
    let r = next(&rx);
    assert!(matches!(r.kind, ResponseKind::Progress));
    assert_eq!((r.watch_id, r.header_revision), (NO_WATCH_ID, rev));
}

#[test]
fn periodic_progress_notify_only_when_idle() {
    let config = WatchConfig {
        progress_notify_interval: Some(Duration::from_millis(200)),
        tick: Duration::from_millis(20),
        ..WatchConfig::default()
    };
    let (store, hub) = setup(config);
    let (ws, rx) = hub.new_stream();
    let mut req = WatchRequest::key("k");
    req.progress_notify = true;
    let id = ws.watch(req).unwrap();
    ws.watch(WatchRequest::key("quiet")).unwrap(); // no progress_notify: never notified
    created(&next(&rx));
    created(&next(&rx));
    let rev = put(&store, "x", "1");
    let r = next(&rx);
    assert!(matches!(r.kind, ResponseKind::Progress));
    assert_eq!((r.watch_id, r.header_revision), (id, rev));
}

#[test]
fn stalled_consumer_becomes_victim_and_loses_nothing() {
    let config = WatchConfig {
        stream_capacity: 2,
        ..WatchConfig::default()
    };
    let (store, hub) = setup(config);
    let (ws, rx) = hub.new_stream();
    ws.watch(WatchRequest::range("k", "l")).unwrap();
    let (other, other_rx) = hub.new_stream();
    other.watch(WatchRequest::range("k", "l")).unwrap();
    created(&next(&rx));
    created(&next(&other_rx));
    let mut revs = Vec::new();
    for i in 0..200 {
        revs.push(put(&store, &format!("k{}", i % 7), &i.to_string()));
        // The other stream keeps reading: one stalled stream must not hold it back.
        while let Some(r) = other_rx.try_recv() {
            assert!(!r.events().is_empty());
        }
    }
    ws.request_progress_all();
    // Now read everything: exactly once, in order.
    let mut got = Vec::new();
    let mut progress_at = None;
    while got.len() < revs.len() {
        let r = next(&rx);
        match r.kind {
            ResponseKind::Progress => progress_at = Some((r.header_revision, got.len())),
            _ => got.extend(evs(&r).iter().map(|e| e.0)),
        }
    }
    assert_eq!(got, revs);
    if let Some((rev, seen)) = progress_at {
        assert!(got[..seen].iter().all(|&r| r <= rev) && got[seen..].iter().all(|&r| r > rev));
    }
    assert_quiet(&rx);
}

#[test]
fn catch_up_responses_are_cut_by_size_at_revision_boundaries() {
    let config = WatchConfig {
        max_response_bytes: 4096,
        ..WatchConfig::default()
    };
    let (store, hub) = setup(config);
    let big = "v".repeat(1000);
    for i in 0..30 {
        store
            .txn(TxnRequest {
                compare: vec![],
                success: vec![
                    RequestOp::Put(PutRequest::new(format!("a{i}"), big.clone())),
                    RequestOp::Put(PutRequest::new(format!("b{i}"), big.clone())),
                ],
                failure: vec![],
            })
            .unwrap();
    }
    let (ws, rx) = hub.new_stream();
    ws.watch(WatchRequest::range("a", "c").from_revision(2))
        .unwrap();
    created(&next(&rx));
    let mut total = 0;
    let mut responses = 0;
    while total < 60 {
        let r = next(&rx);
        let bytes: usize = r.events().iter().map(|e| e.encoded(false).len()).sum();
        assert!(bytes <= 4096 + 2100, "response of {bytes} bytes");
        let e = evs(&r);
        assert!(
            e.len().is_multiple_of(2) && e.chunks(2).all(|p| p[0].0 == p[1].0),
            "revision split"
        );
        total += e.len();
        responses += 1;
    }
    assert!(responses >= 10, "{responses} responses");
}

#[test]
fn from_now_means_the_moment_of_the_call() {
    // The puts follow watch() at once, before the engine has seen the creates;
    // a stalled neighbour stream must not matter either.
    let config = WatchConfig {
        stream_capacity: 1,
        tick: Duration::from_millis(5),
        ..WatchConfig::default()
    };
    let (store, hub) = setup(config);
    let (reader, reader_rx) = hub.new_stream();
    let (stalled, _stalled_rx) = hub.new_stream();
    for i in 0..3 {
        reader.watch(WatchRequest::key(format!("k{i}"))).unwrap();
    }
    stalled.watch(WatchRequest::range("k", "l")).unwrap();
    let mut want: Vec<(WatchId, i64)> = (0..10)
        .map(|i| (i % 3, put(&store, &format!("k{}", i % 3), "v")))
        .collect();
    let mut got = Vec::new();
    let mut headers = Vec::new();
    while got.len() < want.len() {
        let r = next(&reader_rx);
        if matches!(r.kind, ResponseKind::Created) {
            headers.push(r.header_revision);
        }
        got.extend(r.events().iter().map(|e| (r.watch_id, e.revision())));
    }
    assert_eq!(headers, [1, 1, 1], "created at the revision of the call");
    got.sort_by_key(|&(_, rev)| rev);
    want.sort_by_key(|&(_, rev)| rev);
    assert_eq!(got, want);
}

#[test]
fn shutdown_waits_for_the_engine_so_the_store_can_close() {
    let store = Store::in_memory();
    let closed = store.backend_closed();
    let hub = WatchHub::new(store.clone(), WatchConfig::default());
    let (stream, rx) = hub.new_stream();
    stream.watch(WatchRequest::key("k")).unwrap();
    assert!(matches!(next(&rx).kind, ResponseKind::Created));
    drop(stream);
    hub.shutdown();
    // Our handle is now the last: dropping it closes the backend (a RocksDB
    // one unlocks its directory then, so the store can be opened again).
    assert!(!closed.is_closed());
    drop(store);
    assert!(closed.is_closed(), "the engine still holds the store");
}

/// A replicated member installing a snapshot replaces its store's contents
/// in place: a watcher caught up to the old revision receives what the
/// snapshot's history holds after it, and one that needs compacted
/// revisions is cancelled as compacted.
#[test]
fn a_store_replaced_by_a_snapshot_catches_its_watchers_up_from_the_new_history() {
    let (store, hub) = setup(WatchConfig::default());
    // The leader's history: this member has its first three revisions.
    let leader = Store::in_memory();
    for (i, k) in ["a", "b", "a"].iter().enumerate() {
        put(&store, k, &i.to_string());
        put(&leader, k, &i.to_string());
    }
    let (ws, rx) = hub.new_stream();
    ws.watch(WatchRequest::key("a")).unwrap();
    ws.watch(WatchRequest::key("b").from_revision(2)).unwrap();
    assert_eq!(created(&next(&rx)), 4);
    assert_eq!(created(&next(&rx)), 4);
    assert_eq!(
        evs(&next(&rx)),
        [(3, EventKind::Put, "b".into(), "1".into())]
    );
    // The leader moves on: "a" twice more, "b" once, and compacts at 6.
    put(&leader, "a", "3");
    put(&leader, "b", "4");
    let a7 = put(&leader, "a", "5");
    leader.compact(6, true).unwrap();
    let (tx, done) = std::sync::mpsc::channel();
    store.install(leader.clone(), b"position".to_vec(), move |r| {
        tx.send(r).unwrap()
    });
    done.recv_timeout(WAIT).unwrap().unwrap();
    assert_eq!(store.current_revision(), 7);
    assert_eq!(
        store.log_position().unwrap().as_deref(),
        Some(&b"position"[..])
    );
    // The "a" watcher had seen up to 4: it needs 5, which is compacted away.
    // The "b" watcher too (its next revision is 5): both are cancelled.
    let mut compacted = 0;
    let mut seen = Vec::new();
    for _ in 0..2 {
        let r = next(&rx);
        match r.kind {
            ResponseKind::Compacted { compact_revision } => {
                assert_eq!(compact_revision, 6);
                compacted += 1;
            }
            _ => seen.extend(evs(&r)),
        }
    }
    assert_eq!((compacted, seen.len()), (2, 0), "{seen:?}");
    // A new watcher from the compaction on sees the new history, then live writes.
    ws.watch(WatchRequest::key("a").from_revision(6)).unwrap();
    assert_eq!(created(&next(&rx)), 7);
    assert_eq!(
        evs(&next(&rx)),
        [(a7, EventKind::Put, "a".into(), "5".into())]
    );
    let a8 = put(&store, "a", "6");
    assert_eq!(
        evs(&next(&rx)),
        [(a8, EventKind::Put, "a".into(), "6".into())]
    );
    assert_quiet(&rx);
}

#[test]
fn after_a_snapshot_install_without_compaction_synced_watchers_get_every_missed_event() {
    let (store, hub) = setup(WatchConfig::default());
    let leader = Store::in_memory();
    put(&store, "k", "0");
    put(&leader, "k", "0");
    let (ws, rx) = hub.new_stream();
    ws.watch(WatchRequest::range("k", "l")).unwrap();
    assert_eq!(created(&next(&rx)), 2);
    let revs: Vec<i64> = (1..=5).map(|i| put(&leader, "k", &i.to_string())).collect();
    let (tx, done) = std::sync::mpsc::channel();
    store.install(leader, b"p".to_vec(), move |r| tx.send(r).unwrap());
    done.recv_timeout(WAIT).unwrap().unwrap();
    let mut got = Vec::new();
    while got.len() < 5 {
        got.extend(evs(&next(&rx)).into_iter().map(|e| e.0));
    }
    assert_eq!(got, revs, "every revision once, in order");
    let after = put(&store, "k", "6");
    assert_eq!(evs(&next(&rx))[0].0, after);
    assert_quiet(&rx);
}

#[test]
fn a_snapshot_install_one_revision_ahead_still_delivers_that_revision() {
    let (store, hub) = setup(WatchConfig::default());
    let leader = Store::in_memory();
    put(&store, "k", "0");
    put(&leader, "k", "0");
    let (ws, rx) = hub.new_stream();
    ws.watch(WatchRequest::range("k", "l")).unwrap();
    assert_eq!(created(&next(&rx)), 2);
    let missed = put(&leader, "k", "1");
    assert_eq!(missed, store.current_revision() + 1, "exactly one ahead");
    let (tx, done) = std::sync::mpsc::channel();
    store.install(leader, b"p".to_vec(), move |r| tx.send(r).unwrap());
    done.recv_timeout(WAIT).unwrap().unwrap();
    assert_eq!(
        evs(&next(&rx)),
        [(missed, EventKind::Put, "k".into(), "1".into())]
    );
    assert_quiet(&rx);
}

#[test]
fn two_hubs_in_one_process_count_their_events_apart() {
    let (store_a, hub_a) = setup(WatchConfig::default());
    let (store_b, hub_b) = setup(WatchConfig::default());
    let (ws, rx) = hub_a.new_stream();
    ws.watch(WatchRequest::key("a")).unwrap();
    created(&next(&rx));
    for i in 0..3 {
        put(&store_a, "a", &i.to_string());
        assert_eq!(evs(&next(&rx)).len(), 1);
    }
    // A write on the other store, which nobody watches.
    put(&store_b, "a", "x");
    assert_eq!(hub_a.event_counts(), (3, 0));
    assert_eq!(hub_b.event_counts(), (0, 0));
}

/// `closed` waits while the consumer reads, and resolves once its
/// `Responses` is dropped: a server whose client stopped sending learns
/// from it when to let go of the stream.
#[test]
fn closed_resolves_when_the_consumer_goes_away() {
    let (store, hub) = setup(WatchConfig::default());
    let (ws, rx) = hub.new_stream();
    ws.watch(WatchRequest::key("a")).unwrap();
    created(&next(&rx));
    use std::future::Future;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    struct Woken(AtomicBool);
    impl std::task::Wake for Woken {
        fn wake(self: Arc<Self>) {
            self.0.store(true, Ordering::SeqCst);
        }
    }
    let woken = Arc::new(Woken(AtomicBool::new(false)));
    let waker = std::task::Waker::from(woken.clone());
    let mut cx = std::task::Context::from_waker(&waker);
    let mut closed = Box::pin(ws.closed());
    assert!(closed.as_mut().poll(&mut cx).is_pending());
    put(&store, "a", "1");
    assert_eq!(evs(&next(&rx)).len(), 1);
    assert!(closed.as_mut().poll(&mut cx).is_pending());
    drop(rx);
    assert!(woken.0.load(Ordering::SeqCst), "the waiting task is woken");
    assert!(closed.as_mut().poll(&mut cx).is_ready());
}

#[test]
fn a_stream_holds_at_most_its_watcher_bound() {
    let (store, hub) = setup(WatchConfig {
        max_watchers_per_stream: 3,
        ..WatchConfig::default()
    });
    let (ws, rx) = hub.new_stream();
    let ids: Vec<WatchId> = (0..3)
        .map(|i| ws.watch(WatchRequest::key(format!("k{i}"))).unwrap())
        .collect();
    assert_eq!(
        ws.watch(WatchRequest::key("k3")),
        Err(WatchError::TooManyWatchers)
    );
    // A cancel frees a place; a refused create took none.
    assert!(ws.cancel(ids[0]));
    let again = ws.watch(WatchRequest::key("k3")).unwrap();
    assert_eq!(
        ws.watch(WatchRequest::key("k4")),
        Err(WatchError::TooManyWatchers)
    );
    // Another stream has its own bound.
    let (other, other_rx) = hub.new_stream();
    other.watch(WatchRequest::key("k0")).unwrap();

    let mut reasons = Vec::new();
    let mut created_ids = Vec::new();
    for _ in 0..7 {
        let r = next(&rx);
        match r.kind {
            ResponseKind::Created => created_ids.push(r.watch_id),
            ResponseKind::CreateRejected { reason } => reasons.push(reason),
            ResponseKind::Canceled => {}
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(created_ids, [ids[0], ids[1], ids[2], again]);
    assert_eq!(reasons, ["etcdserver: too many watchers on this stream"; 2]);
    created(&next(&other_rx));
    put(&store, "k3", "v");
    assert_eq!(evs(&next(&rx))[0].2, "k3");
    drop((ws, rx, other, other_rx));
    hub.shutdown();
}

/// The window counts what its events hold once sent: the encoded form a
/// stream keeps in each counts against its budget when it is made (once),
/// and past the budget the oldest revisions leave with what they gained.
/// Counting only what events held as they entered, 60 revisions of 1 KiB
/// values fit a 64 KiB window; encoded, each holds about twice that.
#[test]
fn the_window_counts_the_encoded_forms_its_events_keep() {
    let budget = 64 << 10;
    let (store, hub) = setup(WatchConfig {
        window_bytes: budget,
        ..WatchConfig::default()
    });
    let (ws, rx) = hub.new_stream();
    ws.watch(WatchRequest::prefix("k")).unwrap();
    created(&next(&rx));
    let value = "v".repeat(1000);
    let receive = |n: usize| {
        let mut events = Vec::new();
        while events.len() < n {
            events.extend(next(&rx).events().iter().cloned());
        }
        events
    };
    for i in 0..20 {
        put(&store, &format!("k{i:02}"), &value);
    }
    let first = receive(20);
    let before = hub.window_usage(WAIT).unwrap();
    assert_eq!(before.revisions, 20);
    let encoded: usize = first.iter().map(|e| e.encoded(false).len()).sum();
    let after = hub.window_usage(WAIT).unwrap();
    assert_eq!(
        after.bytes,
        before.bytes + encoded,
        "each encoding counts when it is made"
    );
    let again: usize = first.iter().map(|e| e.encoded(false).len()).sum();
    assert_eq!(again, encoded);
    assert_eq!(
        hub.window_usage(WAIT).unwrap(),
        after,
        "an encoding reused counts nothing more"
    );

    for i in 20..60 {
        put(&store, &format!("k{i:02}"), &value);
    }
    for e in receive(40) {
        e.encoded(false);
    }
    // One more revision: the window is trimmed to its budget as it enters.
    put(&store, "k60", &value);
    receive(1);
    let trimmed = hub.window_usage(WAIT).unwrap();
    assert!(
        trimmed.bytes <= budget,
        "{trimmed:?} past a budget of {budget}"
    );
    let per_revision = before.bytes / 20 + encoded / 20;
    assert!(
        trimmed.revisions <= budget / per_revision + 2,
        "{trimmed:?}: more revisions than fit once encoded ({per_revision} bytes each)"
    );
    drop((ws, rx));
    hub.shutdown();
}
