//! Scheduled backups (`--snapshot-schedule`, `--snapshot-retention`,
//! `--snapshot-dir`): the loop that waits for each due time and has
//! `hark_snapshot::schedule::Backups` take, check and prune one, on a
//! blocking thread (writers are not held up meanwhile). Each run is
//! logged and counted.

use std::future::Future;

use chrono::Utc;

use crate::config::BackupPlan;
use crate::node::NodeHandle;

const TAKEN: &str = "hark_snapshot_scheduled_total";
const LAST_SUCCESS: &str = "hark_snapshot_scheduled_last_success_timestamp_seconds";
const LAST_BYTES: &str = "hark_snapshot_scheduled_last_bytes";
const LAST_REVISION: &str = "hark_snapshot_scheduled_last_revision";
const LAST_SECONDS: &str = "hark_snapshot_scheduled_last_duration_seconds";

/// The backup loop `plan` asks for, if any; it runs until dropped (at
/// shutdown) or the node is gone.
pub fn run(node: NodeHandle, plan: Option<BackupPlan>) -> Option<impl Future<Output = ()>> {
    let plan = plan?;
    describe();
    tracing::info!(
        dir = %plan.backups.dir.display(),
        keep = plan.backups.keep,
        schedule = %plan.schedule,
        "scheduled backups on"
    );
    Some(async move {
        loop {
            let Some(due) = plan.schedule.next_after(Utc::now()) else {
                tracing::warn!("the backup schedule has no future time; no more backups");
                return;
            };
            let wait = (due - Utc::now()).to_std().unwrap_or_default();
            tokio::time::sleep(wait).await;
            let Ok(node) = node.get() else {
                return;
            };
            let member = node.snapshot_member();
            let store = node.store.clone();
            drop(node);
            let backups = plan.backups.clone();
            let started = std::time::Instant::now();
            let taken =
                tokio::task::spawn_blocking(move || backups.take(&store, &member, Utc::now()))
                    .await;
            let took = started.elapsed();
            match taken {
                Ok(Ok(t)) => {
                    metrics::counter!(TAKEN, "result" => "ok").increment(1);
                    metrics::gauge!(LAST_SUCCESS).set(Utc::now().timestamp() as f64);
                    metrics::gauge!(LAST_BYTES).set(t.bytes as f64);
                    metrics::gauge!(LAST_REVISION).set(t.revision as f64);
                    metrics::gauge!(LAST_SECONDS).set(took.as_secs_f64());
                    tracing::info!(
                        path = %t.path.display(),
                        revision = t.revision,
                        bytes = t.bytes,
                        took = ?took,
                        removed = t.removed.len(),
                        "scheduled backup taken and checked"
                    );
                }
                Ok(Err(e)) => {
                    metrics::counter!(TAKEN, "result" => "failed").increment(1);
                    tracing::error!(error = %e, dir = %plan.backups.dir.display(), "scheduled backup failed");
                }
                Err(e) => {
                    metrics::counter!(TAKEN, "result" => "failed").increment(1);
                    tracing::error!(error = %e, "scheduled backup stopped");
                }
            }
        }
    })
}

fn describe() {
    metrics::describe_counter!(
        TAKEN,
        "Scheduled backups attempted, by result (ok, failed)."
    );
    metrics::describe_gauge!(
        LAST_SUCCESS,
        "Unix time the last scheduled backup was taken and checked."
    );
    metrics::describe_gauge!(LAST_BYTES, "Size of the last scheduled backup file.");
    metrics::describe_gauge!(LAST_REVISION, "Revision the last scheduled backup holds.");
    metrics::describe_gauge!(
        LAST_SECONDS,
        "Seconds the last scheduled backup took to write and check."
    );
    // Both results show from the start, so an alert on failures has a series.
    for result in ["ok", "failed"] {
        metrics::counter!(TAKEN, "result" => result).increment(0);
    }
}
