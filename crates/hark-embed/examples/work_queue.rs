//! A work queue on the embedded store, with the async API: producers put
//! items under `queue/`; workers watch that prefix for new items and claim
//! each with a transaction that succeeds only if nobody claimed it first.
//! Every item is done exactly once, however many workers race for it.
//!
//! It runs on the pure-Rust backend (fjall), and each worker takes its
//! watch as a `futures::Stream`.
//!
//! Run: `cargo run -p hark-embed --example work_queue`. It starts three
//! workers and a producer of 30 items, checks that each item was done once,
//! and exits.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use hark_embed::{
    BackendKind, Compare, CompareResult, CompareTarget, DeleteRangeRequest, EventKind, Hark,
    Options, PutRequest, RangeRequest, RequestOp, ResponseKind, TxnRequest, WatchRequest,
};

const ITEMS: usize = 30;
const WORKERS: usize = 3;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let dir = tempfile::tempdir()?;
    let options = Options::default().with_backend(BackendKind::Fjall);
    let hark = Hark::open_with(dir.path(), options)?;
    let done: Arc<Mutex<BTreeMap<String, Vec<usize>>>> = Arc::default();
    let start = hark.revision() + 1;

    let mut workers = Vec::new();
    for worker in 0..WORKERS {
        let (hark, done) = (hark.clone(), done.clone());
        workers.push(tokio::spawn(async move {
            work(worker, hark, start, done).await
        }));
    }
    for n in 0..ITEMS {
        let item = PutRequest::new(format!("queue/{n:03}"), format!("job {n}"));
        hark.put_async(item).await?;
    }
    for worker in workers {
        worker.await??;
    }

    let done = done.lock().unwrap();
    assert_eq!(done.len(), ITEMS, "every item was done");
    assert!(
        done.values().all(|by| by.len() == 1),
        "none twice: {done:?}"
    );
    let left = hark.range(&RangeRequest::prefix("queue/"))?;
    assert!(left.kvs.is_empty(), "the queue is empty");
    for worker in 0..WORKERS {
        let n = done.values().filter(|by| by[0] == worker).count();
        println!("worker {worker} did {n} items");
    }
    Ok(())
}

/// Watches `queue/` from `start` and claims what it can until every item
/// was claimed by someone (the claims live under `claimed/`).
async fn work(
    worker: usize,
    hark: Hark,
    start: i64,
    done: Arc<Mutex<BTreeMap<String, Vec<usize>>>>,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let mut watch = hark.watch(WatchRequest::prefix("queue/").from_revision(start))?;
    loop {
        let claimed = hark.range(&RangeRequest {
            count_only: true,
            ..RangeRequest::prefix("claimed/")
        })?;
        if claimed.count as usize == ITEMS {
            return Ok(());
        }
        let response = tokio::time::timeout(Duration::from_secs(10), StreamExt::next(&mut watch))
            .await?
            .ok_or("the watch ended")?;
        if !matches!(response.kind, ResponseKind::Events { .. }) {
            continue;
        }
        for event in response.events() {
            if event.kind != EventKind::Put {
                continue;
            }
            let key = event.kv.key.clone();
            let name = String::from_utf8_lossy(&key["queue/".len()..]).into_owned();
            let claim = format!("claimed/{name}");
            // Claim it only if it is still queued and nobody claimed it.
            let txn = TxnRequest {
                compare: vec![
                    Compare {
                        key: claim.clone().into(),
                        range_end: Default::default(),
                        result: CompareResult::Equal,
                        target: CompareTarget::CreateRevision(0),
                    },
                    Compare {
                        key: key.clone(),
                        range_end: Default::default(),
                        result: CompareResult::Equal,
                        target: CompareTarget::ModRevision(event.kv.mod_revision),
                    },
                ],
                success: vec![
                    RequestOp::Put(PutRequest::new(claim, worker.to_string())),
                    RequestOp::DeleteRange(DeleteRangeRequest::new(key, Vec::new())),
                ],
                failure: vec![],
            };
            if hark.txn_async(txn).await?.succeeded {
                done.lock().unwrap().entry(name).or_default().push(worker);
            }
        }
    }
}
