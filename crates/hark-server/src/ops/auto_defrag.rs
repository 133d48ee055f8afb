//! Defragmentation that runs by itself (`--auto-defrag-ratio`,
//! `--auto-defrag-interval`): the loop that looks at the store's sizes and
//! has it defragment when `hark_mvcc::AutoDefrag` says it is due. Hark's
//! defragmentation does not stop reads or writes (etcd's does), which is
//! what makes running it unattended safe.

use std::future::Future;
use std::time::Instant;

use hark_mvcc::AutoDefrag;

use crate::node::NodeHandle;

const RUNS: &str = "hark_auto_defrag_total";

/// The loop `auto` asks for, if any; it runs until dropped (at shutdown)
/// or the node is gone.
pub fn run(node: NodeHandle, auto: Option<AutoDefrag>) -> Option<impl Future<Output = ()>> {
    let auto = auto?;
    metrics::describe_counter!(
        RUNS,
        "Automatic defragmentations by result: done, skipped (another maintenance was under way), failed."
    );
    for result in ["done", "skipped", "failed"] {
        metrics::counter!(RUNS, "result" => result).increment(0);
    }
    tracing::info!(ratio = auto.ratio, every = ?auto.every, "automatic defragmentation on");
    Some(async move {
        let mut last: Option<Instant> = None;
        let mut tick = tokio::time::interval(auto.check_every());
        loop {
            tick.tick().await;
            let Ok(node) = node.get() else {
                return;
            };
            let store = node.store.clone();
            drop(node);
            let (total, reclaimable) = (store.db_size(), store.reclaimable_bytes());
            if !auto.due(total, reclaimable, last.map(|l| l.elapsed())) {
                continue;
            }
            tracing::info!(total, reclaimable, "automatic defragmentation starting");
            let ran = tokio::task::spawn_blocking(move || store.defragment_unless_busy()).await;
            let result = match ran {
                Ok(Ok(true)) => {
                    last = Some(Instant::now());
                    "done"
                }
                Ok(Ok(false)) => "skipped",
                Ok(Err(e)) => {
                    tracing::error!(error = %e, "automatic defragmentation failed");
                    last = Some(Instant::now());
                    "failed"
                }
                Err(e) => {
                    tracing::error!(error = %e, "automatic defragmentation stopped");
                    last = Some(Instant::now());
                    "failed"
                }
            };
            metrics::counter!(RUNS, "result" => result).increment(1);
        }
    })
}
