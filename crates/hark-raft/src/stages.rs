//! Where a write's time goes on a member: `hark_raft_write_stage_seconds`,
//! one histogram per stage of the write path, so a load test can read the
//! breakdown off `/metrics` (docs/benchmarks.md, "Where a put waits").
//!
//! - `queue`: a proposal waiting for the proposer to take it into a batch;
//! - `batch`: the proposer's batch, from handing it over (to this member's
//!   raft, or forwarded to the leader's queue) until raft answers (on the
//!   leader: appended, committed and applied there);
//! - `log_write`: an append's RocksDB write (a leader's own: unsynced; any
//!   other: synced);
//! - `replicate`: an AppendEntries round trip that carried entries (the
//!   follower's write and fsync included);
//! - `durable_wait`: the state machine waiting for the leader's own sync;
//! - `apply`: the store applying a committed batch;
//! - `write`: one write, from its proposal until its answer.
//!
//! The leader's own log fsync is etcd's `etcd_disk_wal_fsync_duration_seconds`.

use std::time::Instant;

/// The histogram's name (hark-server describes it and sets its buckets).
pub const WRITE_STAGE_SECONDS: &str = "hark_raft_write_stage_seconds";

pub(crate) fn record(stage: &'static str, started: Instant) {
    metrics::histogram!(WRITE_STAGE_SECONDS, "stage" => stage)
        .record(started.elapsed().as_secs_f64());
}
