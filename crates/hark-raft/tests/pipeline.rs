//! Several appends in flight per follower, and several batches of writes
//! per member: whatever the window, the batches and the writers, every
//! member ends with exactly the writes that were acknowledged, each at the
//! revision its writer was told (the reference model: one put per key, one
//! revision per put, none missing, none twice).

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::{Cluster, ELECTION, Settings, put};
use hark_mvcc::{RangeRequest, WriteResponse};
use proptest::prelude::*;

fn settings(append_window: usize, batches_in_flight: usize) -> Settings {
    Settings {
        cluster_id: 7,
        token: "pipeline",
        snapshot_count: 10_000,
        fsync: true,
        leader_deadline: ELECTION * 10,
        request_timeout: Duration::from_secs(5),
        strict_reconfig_check: true,
        append_window,
        batches_in_flight,
    }
}

/// Runs `writers` tasks of `each` puts through the members in turn; returns
/// the model: each key with the revision its put was acknowledged at.
async fn run(append_window: usize, batches: usize, writers: usize, each: usize) {
    let cluster = Cluster::start(3, settings(append_window, batches)).await;
    cluster.leader().await;
    let members: Vec<_> = cluster
        .members
        .values()
        .map(|m| m.replica.clone())
        .collect();
    let mut tasks = tokio::task::JoinSet::new();
    for w in 0..writers {
        let replica = members[w % members.len()].clone();
        tasks.spawn(async move {
            let mut acked = Vec::new();
            for i in 0..each {
                let key = format!("w{w}-{i}");
                match replica.write(put(&key, &key)).await.unwrap() {
                    WriteResponse::Put(p) => acked.push((key, p.header_revision)),
                    other => panic!("{other:?}"),
                }
            }
            acked
        });
    }
    let mut model = BTreeMap::new();
    while let Some(acked) = tasks.join_next().await {
        for (key, rev) in acked.unwrap() {
            assert!(model.insert(key, rev).is_none());
        }
    }
    let mut revs: Vec<i64> = model.values().copied().collect();
    revs.sort_unstable();
    let first = revs.first().copied().unwrap_or(1);
    assert_eq!(
        revs,
        (first..first + revs.len() as i64).collect::<Vec<_>>(),
        "one revision per put, none skipped"
    );
    let last = revs.last().copied().unwrap_or(1);
    for m in cluster.members.values() {
        cluster.caught_up(m.id, last).await;
        let all = m.store.range(&RangeRequest::prefix(b"w".to_vec())).unwrap();
        let seen: BTreeMap<String, i64> = all
            .kvs
            .iter()
            .map(|kv| {
                assert_eq!(kv.key, kv.value, "member {:x}", m.id);
                (String::from_utf8(kv.key.to_vec()).unwrap(), kv.mod_revision)
            })
            .collect();
        assert_eq!(seen, model, "member {:x}", m.id);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 8, ..ProptestConfig::default() })]

    #[test]
    fn every_member_applies_exactly_the_acknowledged_writes_at_their_revisions(
        append_window in 1usize..=12,
        batches in 1usize..=8,
        writers in 1usize..=24,
        each in 1usize..=12,
    ) {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(4)
            .enable_all()
            .build()
            .unwrap()
            .block_on(run(append_window, batches, writers, each));
    }
}
