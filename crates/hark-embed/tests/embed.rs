//! The facade's promises, through its own API: etcd's semantics for reads,
//! writes, transactions, compaction and watches, blocking and async.

use std::time::Duration;

use hark_embed::*;

const WAIT: Duration = Duration::from_secs(10);

#[test]
fn revisions_reads_at_a_revision_and_compaction() {
    let hark = Hark::in_memory();
    assert_eq!(hark.revision(), 1);
    let r1 = hark.put("a", "1").unwrap();
    let r2 = hark.put("a", "2").unwrap();
    assert_eq!((r1, r2), (2, 3));
    let kv = hark.get("a").unwrap().unwrap();
    assert_eq!((kv.create_revision, kv.mod_revision, kv.version), (2, 3, 2));
    let old = hark
        .range(&RangeRequest {
            revision: r1,
            ..RangeRequest::key("a")
        })
        .unwrap();
    assert_eq!(old.kvs[0].value, "1");
    assert!(hark.delete("a").unwrap());
    assert!(!hark.delete("a").unwrap());
    assert_eq!(hark.revision(), 4, "a delete of nothing takes no revision");
    hark.compact(r2).unwrap();
    assert_eq!(hark.compacted_revision(), r2);
    let err = hark
        .range(&RangeRequest {
            revision: r1,
            ..RangeRequest::key("a")
        })
        .unwrap_err();
    assert_eq!(err, Error::Compacted);
    assert_eq!(
        err.to_string(),
        "mvcc: required revision has been compacted"
    );
}

#[test]
fn bad_requests_get_etcds_errors() {
    let hark = Hark::in_memory();
    assert_eq!(hark.put("", "v").unwrap_err(), Error::EmptyKey);
    let ignore = PutRequest {
        ignore_value: true,
        ..PutRequest::new("missing", "")
    };
    assert_eq!(hark.put_with(ignore).unwrap_err(), Error::KeyNotFound);
    assert_eq!(
        hark.watch(WatchRequest::range("b", "a")).err(),
        Some(WatchError::EmptyRange)
    );
}

#[test]
fn a_watch_replays_history_then_goes_live_with_prev_kv_and_filters() {
    let hark = Hark::in_memory();
    let first = hark.put("cfg/a", "1").unwrap();
    hark.put("cfg/a", "2").unwrap();
    hark.put("other", "x").unwrap();
    let all = hark
        .watch(
            WatchRequest::prefix("cfg/")
                .from_revision(first)
                .with_prev_kv(),
        )
        .unwrap();
    let puts_only = hark
        .watch(WatchRequest {
            no_delete: true,
            ..WatchRequest::prefix("cfg/")
        })
        .unwrap();
    assert!(matches!(
        all.recv_timeout(WAIT).unwrap().kind,
        ResponseKind::Created
    ));
    hark.delete("cfg/a").unwrap();
    hark.put("cfg/b", "3").unwrap();
    let events = all.events_timeout(4, WAIT).unwrap();
    let seen: Vec<_> = events
        .iter()
        .map(|e| {
            (
                e.revision(),
                e.kind,
                e.prev_kv().map(|p| p.value.clone()).unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            (2, EventKind::Put, "".into()),
            (3, EventKind::Put, "1".into()),
            (5, EventKind::Delete, "2".into()),
            (6, EventKind::Put, "".into()),
        ]
    );
    let puts: Vec<i64> = puts_only
        .events_timeout(1, WAIT)
        .unwrap()
        .iter()
        .map(|e| e.revision())
        .collect();
    assert_eq!(puts, [6], "no delete, nothing from before the watch");
}

#[test]
fn a_watch_from_compacted_history_is_told_so() {
    let hark = Hark::in_memory();
    hark.put("k", "1").unwrap();
    let now = hark.put("k", "2").unwrap();
    hark.compact(now).unwrap();
    let watch = hark.watch(WatchRequest::key("k").from_revision(2)).unwrap();
    assert_eq!(watch.events_timeout(1, WAIT).unwrap_err(), now);
    // From the compact revision itself it works.
    let watch = hark
        .watch(WatchRequest::key("k").from_revision(now))
        .unwrap();
    assert_eq!(watch.events_timeout(1, WAIT).unwrap()[0].revision(), now);
}

#[test]
fn progress_says_where_the_watch_stands() {
    let hark = Hark::in_memory();
    let watch = hark.watch(WatchRequest::key("quiet")).unwrap();
    assert!(matches!(
        watch.recv_timeout(WAIT).unwrap().kind,
        ResponseKind::Created
    ));
    let now = hark.put("elsewhere", "x").unwrap();
    // Asked until the engine has taken the put (progress comes only
    // while the watch is caught up).
    let progress = std::iter::repeat_with(|| {
        watch.request_progress();
        watch.recv_timeout(WAIT).unwrap()
    })
    .find(|r| r.header_revision >= now)
    .unwrap();
    assert!(matches!(progress.kind, ResponseKind::Progress));
}

#[tokio::test]
async fn the_async_api_writes_and_watches() {
    let hark = Hark::in_memory();
    let watch = hark.watch(WatchRequest::prefix("q/")).unwrap();
    let put = hark.put_async(PutRequest::new("q/1", "a")).await.unwrap();
    let txn = hark
        .txn_async(TxnRequest {
            compare: vec![Compare {
                key: "q/1".into(),
                range_end: Default::default(),
                result: CompareResult::Equal,
                target: CompareTarget::ModRevision(put.header_revision),
            }],
            success: vec![RequestOp::DeleteRange(DeleteRangeRequest::prefix("q/"))],
            failure: vec![],
        })
        .await
        .unwrap();
    assert!(txn.succeeded);
    let mut kinds = Vec::new();
    while kinds.len() < 2 {
        let r = tokio::time::timeout(WAIT, watch.recv())
            .await
            .unwrap()
            .unwrap();
        kinds.extend(r.events().iter().map(|e| (e.revision(), e.kind)));
    }
    assert_eq!(kinds, [(2, EventKind::Put), (3, EventKind::Delete)]);
    // Only now: a compaction past a watch still catching up cancels it, as
    // etcd's does (the test once compacted first and, under load, the
    // watch was cancelled before its events came).
    hark.compact_async(txn.header_revision).await.unwrap();
    let gone = hark
        .delete_range_async(DeleteRangeRequest::prefix("q/"))
        .await
        .unwrap();
    assert_eq!(gone.deleted, 0);
}

#[test]
fn the_last_handle_closes_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let hark = Hark::open(dir.path()).unwrap();
    hark.put("k", "v").unwrap();
    // An open watch holds the store open.
    let watch = hark.watch(WatchRequest::key("k")).unwrap();
    let clone = hark.clone();
    assert!(!hark.close(), "a clone and a watch are left");
    assert!(!clone.close(), "the watch is left");
    // The watch's drop is the last: it closes the store.
    drop(watch);
    let again = Hark::open(dir.path()).unwrap();
    assert_eq!(again.get("k").unwrap().unwrap().value, "v");
    assert!(again.close());
}

#[test]
fn a_watch_is_an_iterator_that_ends_with_its_compaction() {
    let hark = Hark::in_memory();
    hark.put("k", "1").unwrap();
    let first = hark.put("k", "2").unwrap();
    hark.put("k", "3").unwrap();
    let watch = hark
        .watch(WatchRequest::key("k").from_revision(first))
        .unwrap();
    let mut responses = watch;
    let values: Vec<_> = (&mut responses)
        .flat_map(|r| r.events().to_vec())
        .map(|e| e.kv.value.clone())
        .take(2)
        .collect();
    assert_eq!(values, ["2", "3"]);
    // A watch from history compacted away gets one Compacted response,
    // and then the iteration is over instead of waiting.
    hark.compact(hark.revision()).unwrap();
    let old = hark
        .watch(WatchRequest::key("k").from_revision(first))
        .unwrap();
    let kinds: Vec<_> = old.map(|r| r.kind).collect();
    assert!(
        matches!(
            kinds.as_slice(),
            [ResponseKind::Created, ResponseKind::Compacted { .. }]
        ),
        "{kinds:?}"
    );
}

#[tokio::test]
async fn a_watch_is_a_stream() {
    use futures_util::StreamExt;
    let hark = Hark::in_memory();
    let mut watch = hark.watch(WatchRequest::prefix("s/")).unwrap();
    let writer = {
        let hark = hark.clone();
        tokio::spawn(async move {
            for n in 0..50 {
                hark.put_async(PutRequest::new(format!("s/{n:02}"), n.to_string()))
                    .await
                    .unwrap();
            }
        })
    };
    let mut revisions = Vec::new();
    while revisions.len() < 50 {
        let response = tokio::time::timeout(WAIT, StreamExt::next(&mut watch))
            .await
            .unwrap()
            .expect("a live watch does not end");
        revisions.extend(response.events().iter().map(|e| e.revision()));
    }
    writer.await.unwrap();
    assert_eq!(
        revisions,
        (2..52).collect::<Vec<i64>>(),
        "every put once, in order"
    );
}

fn quick_leases() -> LessorConfig {
    LessorConfig {
        min_ttl: 1,
        check_interval: Duration::from_millis(20),
        ..LessorConfig::default()
    }
}

#[test]
fn an_expired_lease_deletes_its_keys_as_watchers_see() {
    let hark = Hark::in_memory_with(Options::default().with_lease(quick_leases()));
    let kept = hark.grant_lease(0, 1).unwrap();
    let lapsing = hark.grant_lease(0, 1).unwrap();
    assert_ne!(kept.id, lapsing.id);
    for (key, lease) in [("s/kept", kept.id), ("s/lapsing", lapsing.id)] {
        let mut put = PutRequest::new(key, "on");
        put.lease = lease;
        hark.put_with(put).unwrap();
    }
    let watch = hark.watch(WatchRequest::prefix("s/")).unwrap();
    // Keep one lease alive past two TTLs; the other lapses meanwhile.
    let started = std::time::Instant::now();
    while started.elapsed() < Duration::from_millis(2200) {
        assert_eq!(hark.keep_alive(kept.id), Ok(1));
        std::thread::sleep(Duration::from_millis(200));
    }
    let events = watch.events_timeout(1, WAIT).unwrap();
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(
        (events[0].kind, &events[0].kv.key[..]),
        (EventKind::Delete, &b"s/lapsing"[..])
    );
    assert_eq!(hark.keep_alive(lapsing.id), Err(LeaseError::NotFound));
    assert_eq!(hark.leases(), [kept.id]);
    let ttl = hark.lease_time_to_live(kept.id, true).unwrap();
    assert_eq!((ttl.granted_ttl, ttl.keys.len()), (1, 1));
    // Revoking deletes the rest in one revision.
    let revoked_at = hark.revoke_lease(kept.id).unwrap();
    assert_eq!(revoked_at, hark.revision());
    assert!(hark.get("s/kept").unwrap().is_none());
    // A put naming a lease that is gone is refused.
    let mut put = PutRequest::new("s/late", "x");
    put.lease = lapsing.id;
    assert!(matches!(hark.put_with(put), Err(Error::LeaseNotFound)));
}

#[test]
fn the_pure_rust_backend_keeps_data_leases_and_history_across_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let options = || {
        Options::default()
            .with_backend(BackendKind::Fjall)
            .with_lease(quick_leases())
    };
    let hark = Hark::open_with(dir.path(), options()).unwrap();
    for n in 0..2500 {
        hark.put(format!("a/{n:04}"), n.to_string()).unwrap();
    }
    // Last, so the lease is still granted when the store closes.
    let lease = hark.grant_lease(0, 1).unwrap();
    let mut put = PutRequest::new("a/leased", "v");
    put.lease = lease.id;
    let first = hark.put_with(put).unwrap().header_revision;
    let at = hark.revision();
    assert!(hark.close());

    // RocksDB is not given fjall's directory.
    if BackendKind::RocksDb.is_built() {
        let wrong = Options::default().with_backend(BackendKind::RocksDb);
        let refused = Hark::open_with(dir.path(), wrong).unwrap_err();
        assert!(refused.to_string().contains("fjall"), "{refused}");
    }

    let watch_from = |hark: &Hark| {
        hark.watch(WatchRequest::key("a/leased").from_revision(first))
            .unwrap()
    };
    let hark = Hark::open_with(dir.path(), options()).unwrap();
    assert_eq!(hark.revision(), at);
    let listed = hark.range_iter(&RangeRequest::prefix("a/")).unwrap();
    assert_eq!(listed.revision(), at);
    let keys: Vec<_> = listed.map(|kv| kv.unwrap().key).collect();
    assert_eq!(keys.len(), 2501);
    assert!(
        keys.windows(2).all(|w| w[0] < w[1]),
        "in key order, once each"
    );
    // The lease survived the reopen with a fresh TTL, and then expires.
    assert_eq!(hark.leases(), [lease.id]);
    let events = watch_from(&hark).events_timeout(2, WAIT).unwrap();
    let kinds: Vec<_> = events.iter().map(|e| e.kind).collect();
    assert_eq!(kinds, [EventKind::Put, EventKind::Delete]);
    assert!(hark.get("a/leased").unwrap().is_none());
    assert!(hark.close());
}
