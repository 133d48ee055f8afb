//! What the Kubernetes API server does to etcd, beside the register
//! clients' optimistic updates and deletes: paginated lists at one revision,
//! and the compaction loop on `compact_rev_key` (every member's watchers
//! then resume from the compacted revision when they fall behind it).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use etcd_client::{Compare, CompareOp, GetOptions, Txn, TxnOp, TxnOpResponse};
use tokio::time::Instant;

use crate::history::ListRecord;
use crate::workload::{Clock, PREFIX, REQUEST_TIMEOUT, connect, connect_or_move_on};

/// The register keys, listed as Kubernetes lists a resource.
pub const LIST_PREFIX: &str = "/chaos/r";
/// The range end of [`LIST_PREFIX`]: its last byte raised by one.
const LIST_END: &str = "/chaos/s";
const PAGE: i64 = 10;

/// The key Kubernetes' compactors agree through (under the prefix, so the
/// watchers see its revisions too).
pub fn compact_rev_key() -> String {
    format!("{PREFIX}compact_rev_key")
}

/// Lists [`LIST_PREFIX`] page by page until `until`, one list at a time.
pub async fn list_client(
    client: usize,
    endpoints: Vec<String>,
    clock: Clock,
    until: Instant,
    lists: Arc<Mutex<Vec<ListRecord>>>,
) {
    let mut at = client % endpoints.len();
    while Instant::now() < until {
        let Some(mut c) = connect_or_move_on(&endpoints, &mut at).await else {
            continue;
        };
        let invoked_us = clock.now_us();
        match tokio::time::timeout(REQUEST_TIMEOUT * 2, list(&mut c)).await {
            Ok(Ok((revision, pages, kvs))) => lists.lock().unwrap().push(ListRecord {
                client,
                prefix: LIST_PREFIX.into(),
                invoked_us,
                returned_us: clock.now_us(),
                revision,
                pages,
                kvs,
            }),
            // A failed page (compacted, no leader, timeout): Kubernetes
            // lists again, from another member if need be.
            _ => at = (at + 1) % endpoints.len(),
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

type Listed = (i64, usize, Vec<(String, String, i64)>);

async fn list(c: &mut etcd_client::Client) -> Result<Listed, etcd_client::Error> {
    let end = LIST_END.as_bytes().to_vec();
    let mut kvs = Vec::new();
    let mut revision = 0;
    let mut pages = 0;
    let mut from = LIST_PREFIX.as_bytes().to_vec();
    loop {
        let mut options = GetOptions::new().with_range(end.clone()).with_limit(PAGE);
        if revision > 0 {
            options = options.with_revision(revision);
        }
        let r = c.get(from.clone(), Some(options)).await?;
        if revision == 0 {
            revision = r.header().map_or(0, |h| h.revision());
        }
        pages += 1;
        for kv in r.kvs() {
            kvs.push((
                String::from_utf8_lossy(kv.key()).into_owned(),
                String::from_utf8_lossy(kv.value()).into_owned(),
                kv.mod_revision(),
            ));
        }
        match r.kvs().last() {
            Some(last) if r.more() => {
                // The next page starts just after the last key.
                from = last.key().to_vec();
                from.push(0);
            }
            _ => return Ok((revision, pages, kvs)),
        }
    }
}

/// Kubernetes' compaction loop: every `every`, claim the interval by
/// bumping `compact_rev_key`'s version (a Txn on it), and if the claim
/// holds, compact to the revision seen one interval earlier.
pub async fn compactor(
    endpoints: Vec<String>,
    every: Duration,
    clock: Clock,
    until: Instant,
    compactions: Arc<Mutex<Vec<(u64, i64)>>>,
) {
    let key = compact_rev_key();
    let mut version = 0i64;
    let mut previous = 0i64;
    let mut at = 0;
    while Instant::now() < until {
        tokio::time::sleep(every).await;
        let Some(mut c) = connect(&endpoints[at]).await else {
            at = (at + 1) % endpoints.len();
            continue;
        };
        let round = async {
            let current = c
                .get(
                    PREFIX,
                    Some(GetOptions::new().with_prefix().with_count_only()),
                )
                .await?
                .header()
                .map_or(0, |h| h.revision());
            let txn = Txn::new()
                .when([Compare::version(key.as_str(), CompareOp::Equal, version)])
                .and_then([TxnOp::put(key.as_str(), current.to_string(), None)])
                .or_else([TxnOp::get(key.as_str(), None)]);
            let r = c.txn(txn).await?;
            if !r.succeeded() {
                // Another compactor (or an unanswered attempt of ours) took
                // this interval: follow its version.
                if let Some(TxnOpResponse::Get(g)) = r.op_responses().first() {
                    version = g.kvs().first().map_or(0, |kv| kv.version());
                }
                return Ok::<_, etcd_client::Error>(None);
            }
            version += 1;
            let target = std::mem::replace(&mut previous, current);
            if target > 0 {
                // When it was asked for: no member applies it before.
                let asked = clock.now_us();
                c.compact(target, None).await?;
                return Ok(Some((asked, target)));
            }
            Ok(None)
        };
        match tokio::time::timeout(REQUEST_TIMEOUT * 2, round).await {
            Ok(Ok(Some(compaction))) => compactions.lock().unwrap().push(compaction),
            Ok(Ok(None)) => {}
            _ => at = (at + 1) % endpoints.len(),
        }
    }
}
