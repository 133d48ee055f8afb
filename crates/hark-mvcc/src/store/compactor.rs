//! The compactor thread: compacts the key index a few chunks at a time and
//! deletes the rows of the revisions it drops in batches, off the
//! committer's path.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use crossbeam_channel::Receiver;

use super::shared::{COMPACTION_BATCH, JobDone, Shared};
use crate::backend::{Table, WriteBatch};
use crate::error::Result;
use crate::key_index::{Dropped, IndexCompaction};
use crate::layout::{META_FINISHED_COMPACT, encode_counter, rev_key, row_key_only};
use crate::request::{CompactResponse, WriteResponse};
use crate::usage::UsageChange;

/// A compaction accepted by the committer (its revision is the bar reads
/// meet), waiting for its index and physical parts.
pub(super) struct Compaction {
    /// The store's generation when planned ([`Store::install`] voids it).
    pub(super) generation: u64,
    pub(super) at: i64,
    /// Set for `physical` requests: answered once the rows are gone.
    pub(super) done: Option<(JobDone, CompactResponse)>,
}

pub(super) fn run_compactor(shared: Arc<Shared>, rx: Receiver<Compaction>) {
    for c in rx {
        let outcome = {
            let mut compacting = shared.compacting.lock();
            if shared.generation.load(Ordering::Acquire) == c.generation {
                let paced = Paced {
                    compacting: &mut compacting,
                    generation: c.generation,
                };
                shared.compact_in_steps(c.at, paced)
            } else {
                Ok(Finished::Yes) // the store was replaced since
            }
        };
        let outcome = match outcome {
            Ok(Finished::Yes | Finished::Replaced) => Ok(()),
            Ok(Finished::StoreClosing) => {
                tracing::info!(
                    revision = c.at,
                    "compaction stopped by the store's closing; it resumes on reopen"
                );
                Err(crate::error::Error::Closed)
            }
            Err(e) => {
                tracing::error!(revision = c.at, error = %e, "physical compaction failed; it resumes on reopen");
                Err(e)
            }
        };
        if let Some((done, resp)) = c.done {
            done(Some(outcome.map(|()| WriteResponse::Compact(resp))));
        }
    }
}

/// How a physical compaction ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Finished {
    /// Every row is gone and the compaction is recorded as finished.
    Yes,
    /// The store closed during a pause between batches: the compaction is
    /// finished on the next open.
    StoreClosing,
    /// A snapshot was installed during a pause: the store it compacted is
    /// gone.
    Replaced,
}

/// A compaction on the compactor thread, which pauses between batches
/// (`compaction_sleep`). The pause lets go of the compaction lock, so an
/// install does not wait it out; one that happened meanwhile (the
/// generation moved) ends the compaction.
pub(super) struct Paced<'a, 'g> {
    pub(super) compacting: &'a mut parking_lot::MutexGuard<'g, ()>,
    pub(super) generation: u64,
}

/// Chunks of the key index compacted per hold of its write lock: about
/// 1,500 keys, under a millisecond, so a write or read waits at most that
/// long for a compaction (the whole index at 10 M keys took 4.8 s).
const INDEX_STEP_CHUNKS: usize = 64;

/// A compaction's deletions so far.
#[derive(Default)]
struct Deleted {
    /// Rows, for the finished compaction's log line.
    rows: usize,
    /// Backend writes: every one after the first is paced.
    batches: usize,
}

impl Shared {
    /// A compaction on the compactor thread: the key index is compacted at
    /// `at` [`INDEX_STEP_CHUNKS`] chunks at a time, its lock handed to
    /// waiting writers and readers between steps, and the rows of the
    /// revisions the steps drop are deleted a batch at a time as they come.
    /// No row is looked at but those: a compaction's cost follows what it
    /// removes, not the store's size (it scanned every row up to `at`
    /// before: 24.9 s at 10 M keys). Deleting a dropped row before the rest
    /// of the index is compacted is safe: reads below `at` are refused
    /// already. Runs under the compaction lock, so no install replaces the
    /// index meanwhile. After a crash the compaction is done again whole
    /// from an index rebuilt from the rows left.
    pub(super) fn compact_in_steps(&self, at: i64, mut paced: Paced<'_, '_>) -> Result<Finished> {
        let started = std::time::Instant::now();
        let mut index_time = std::time::Duration::ZERO;
        let mut progress = IndexCompaction::default();
        let mut deleted = Deleted::default();
        loop {
            let step = std::time::Instant::now();
            let mut index = self.index.write();
            let done = index.compact_step(at, &mut progress, INDEX_STEP_CHUNKS);
            parking_lot::RwLockWriteGuard::unlock_fair(index);
            index_time += step.elapsed();
            if done || progress.dropped.len() >= self.batch_limit() {
                let dropped = std::mem::take(&mut progress.dropped);
                let outcome = self.delete_rows(dropped, &mut deleted, Some(&mut paced))?;
                if outcome != Finished::Yes {
                    return Ok(outcome);
                }
            }
            if done {
                break;
            }
            if self.closing.is_raised() {
                return Ok(Finished::StoreClosing);
            }
        }
        // etcd's name: its index compaction, too, locks the tree per key.
        metrics::histogram!("etcd_debugging_mvcc_index_compaction_pause_duration_milliseconds")
            .record(index_time.as_secs_f64() * 1000.0);
        self.finish_compaction(at, started, &deleted)
    }

    /// Deletes the rows of the revisions an index compaction at `at`
    /// dropped, then records the compaction as finished, logging etcd's
    /// line. Without the compactor thread's pauses: for a compaction
    /// finished while the store opens or installs, so a long pause never
    /// holds a start up. Safe to repeat after a crash.
    pub(super) fn delete_compacted(&self, at: i64, dropped: Vec<Dropped>) -> Result<Finished> {
        let started = std::time::Instant::now();
        let mut deleted = Deleted::default();
        self.delete_rows(dropped, &mut deleted, None)?;
        self.finish_compaction(at, started, &deleted)
    }

    /// Rows per backend write (etcd's `--compaction-batch-limit`).
    fn batch_limit(&self) -> usize {
        self.options
            .compaction_batch_limit
            .unwrap_or(COMPACTION_BATCH)
            .max(1)
    }

    /// Deletes the rows of `dropped` in batches of [`Self::batch_limit`],
    /// in revision order, pausing `compaction_sleep` between batches when
    /// `paced`. Each row is read first, for the space it frees (per prefix
    /// too); one already gone (deleted before a crash) is skipped.
    fn delete_rows(
        &self,
        mut dropped: Vec<Dropped>,
        deleted: &mut Deleted,
        mut paced: Option<&mut Paced<'_, '_>>,
    ) -> Result<Finished> {
        dropped.sort_unstable();
        let limit = self.batch_limit();
        for batch_of in dropped.chunks(limit) {
            if deleted.batches > 0
                && let Some(paced) = paced.as_deref_mut()
            {
                let outcome = self.pause(paced);
                if outcome != Finished::Yes {
                    return Ok(outcome);
                }
            }
            let mut batch = WriteBatch::default();
            let mut freed = 0u64;
            let mut usage = Vec::new();
            let keys: Vec<Vec<u8>> = batch_of
                .iter()
                .map(|d| rev_key(d.rev, d.tombstone))
                .collect();
            let rows = self.backend.get_many(Table::Kv, &keys)?;
            for (k, row) in keys.into_iter().zip(rows) {
                let Some(v) = row else {
                    continue;
                };
                freed += (k.len() + v.len()) as u64;
                if let Some(key) = row_key_only(&v) {
                    usage.push(UsageChange::compacted(key, k.len() + v.len()));
                }
                batch.delete(Table::Kv, k);
            }
            if batch.is_empty() {
                continue;
            }
            deleted.rows += batch.len();
            deleted.batches += 1;
            metrics::counter!("etcd_debugging_mvcc_db_compaction_keys_total")
                .increment(batch.len() as u64);
            let pause = std::time::Instant::now();
            self.backend.write(batch, false)?;
            metrics::histogram!("etcd_debugging_mvcc_db_compaction_pause_duration_milliseconds")
                .record(pause.elapsed().as_secs_f64() * 1000.0);
            self.reclaimable.fetch_add(freed, Ordering::Relaxed);
            let mut prefixes = self.usage.lock();
            for change in &usage {
                prefixes.apply(change);
            }
        }
        Ok(Finished::Yes)
    }

    /// The pause between batches, with the compaction lock let go: `Yes`
    /// to go on, or how the compaction ends.
    fn pause(&self, paced: &mut Paced<'_, '_>) -> Finished {
        let pause = self.options.compaction_sleep;
        if pause.is_zero() {
            return Finished::Yes;
        }
        let closing =
            parking_lot::MutexGuard::unlocked(paced.compacting, || self.closing.wait(pause));
        if closing {
            return Finished::StoreClosing;
        }
        if self.generation.load(Ordering::Acquire) != paced.generation {
            return Finished::Replaced;
        }
        Finished::Yes
    }

    /// Records the compaction at `at` as finished (durably), logging etcd's line.
    fn finish_compaction(
        &self,
        at: i64,
        started: std::time::Instant,
        deleted: &Deleted,
    ) -> Result<Finished> {
        let compacted = deleted.rows;
        let mut done = WriteBatch::default();
        done.put(
            Table::Meta,
            META_FINISHED_COMPACT.to_vec(),
            encode_counter(at),
        );
        self.backend.write(done, true)?;
        self.checkpoint_due.nudge();
        self.compaction_finished(at);
        metrics::histogram!("etcd_debugging_mvcc_db_compaction_total_duration_milliseconds")
            .record(started.elapsed().as_secs_f64() * 1000.0);
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        metrics::gauge!("etcd_debugging_mvcc_db_compaction_last").set(now.as_secs_f64());
        self.measure_sizes(true);
        let size = self.sizes.total.load(Ordering::Relaxed);
        let in_use = self.sizes.in_use.load(Ordering::Relaxed);
        tracing::info!(
            "compact-revision" = at,
            took = ?started.elapsed(),
            "number-of-keys-compacted" = compacted,
            "current-db-size-bytes" = size,
            "current-db-size-in-use-bytes" = in_use,
            "finished scheduled compaction"
        );
        Ok(Finished::Yes)
    }
}
