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
