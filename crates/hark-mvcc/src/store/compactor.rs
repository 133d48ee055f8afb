//! The compactor thread: compacts the key index a few chunks at a time,
//! then deletes compacted rows in batches, off the committer's path.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use crossbeam_channel::Receiver;

use super::shared::{COMPACTION_BATCH, JobDone, Shared};
use crate::backend::{Table, WriteBatch};
use crate::error::Result;
use crate::key_index::IndexCompaction;
use crate::layout::{META_FINISHED_COMPACT, encode_counter, parse_rev_key, rev_key, row_key_only};
use crate::request::{CompactResponse, WriteResponse};
use crate::revision::Revision;
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
                match shared.compact_index(c.at) {
                    Some(keep) => shared.delete_compacted(c.at, &keep, Some(paced)),
                    None => Ok(Finished::StoreClosing),
                }
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

impl Shared {
    /// Compacts the key index at `at` [`INDEX_STEP_CHUNKS`] chunks at a
    /// time, handing its lock to waiting writers and readers between
    /// steps; returns the revisions `<= at` it retains. Runs under the
    /// compaction lock, so no install replaces the index meanwhile. `None`:
    /// the store began closing (the compaction resumes on reopen, whole).
    pub(super) fn compact_index(&self, at: i64) -> Option<HashSet<Revision>> {
        let started = std::time::Instant::now();
        let mut progress = IndexCompaction::default();
        loop {
            let mut index = self.index.write();
            if index.compact_step(at, &mut progress, INDEX_STEP_CHUNKS) {
                break;
            }
            parking_lot::RwLockWriteGuard::unlock_fair(index);
            if self.closing.is_raised() {
                return None;
            }
        }
        // etcd's name: its index compaction, too, locks the tree per key.
        metrics::histogram!("etcd_debugging_mvcc_index_compaction_pause_duration_milliseconds")
            .record(started.elapsed().as_secs_f64() * 1000.0);
        Some(progress.keep)
    }

    /// Removes every stored revision `<= at` that is not in `keep`, in
    /// batches (of `compaction_batch_limit` rows looked at, with
    /// `compaction_sleep` between them), then records the compaction as
    /// finished, logging etcd's line. Safe to repeat after a crash.
    /// `paced`: with the pause between batches (the compactor thread, see
    /// [`Paced`]); a compaction finished while the store opens or installs
    /// is not paced, so a long pause never holds a start up.
    pub(super) fn delete_compacted(
        &self,
        at: i64,
        keep: &HashSet<Revision>,
        mut paced: Option<Paced<'_, '_>>,
    ) -> Result<Finished> {
        let started = std::time::Instant::now();
        let limit = self
            .options
            .compaction_batch_limit
            .unwrap_or(COMPACTION_BATCH)
            .max(1);
        let end = rev_key(Revision::new(at + 1, 0), false);
        let mut from = Vec::new();
        let mut compacted = 0usize;
        loop {
            let mut batch = WriteBatch::default();
            let mut next = None;
            let mut freed = 0u64;
            let mut usage = Vec::new();
            let mut looked_at = 0usize;
            self.backend
                .scan(Table::Kv, &from, Some(&end), &mut |k, v| {
                    if looked_at >= limit {
                        next = Some(k.to_vec());
                        return false;
                    }
                    looked_at += 1;
                    if let Some((rev, _)) = parse_rev_key(k)
                        && !keep.contains(&rev)
                    {
                        freed += (k.len() + v.len()) as u64;
                        if let Some(key) = row_key_only(v) {
                            usage.push(UsageChange::compacted(key, k.len() + v.len()));
                        }
                        batch.delete(Table::Kv, k.to_vec());
                    }
                    true
                })?;
            if !batch.is_empty() {
                compacted += batch.len();
                metrics::counter!("etcd_debugging_mvcc_db_compaction_keys_total")
                    .increment(batch.len() as u64);
                let pause = std::time::Instant::now();
                self.backend.write(batch, false)?;
                metrics::histogram!(
                    "etcd_debugging_mvcc_db_compaction_pause_duration_milliseconds"
                )
                .record(pause.elapsed().as_secs_f64() * 1000.0);
                self.reclaimable.fetch_add(freed, Ordering::Relaxed);
                let mut prefixes = self.usage.lock();
                for change in &usage {
                    prefixes.apply(change);
                }
            }
            match next {
                Some(k) => from = k,
                None => break,
            }
            let pause = self.options.compaction_sleep;
            if let Some(paced) = paced.as_mut()
                && !pause.is_zero()
            {
                let closing = parking_lot::MutexGuard::unlocked(paced.compacting, || {
                    self.closing.wait(pause)
                });
                if closing {
                    return Ok(Finished::StoreClosing);
                }
                if self.generation.load(Ordering::Acquire) != paced.generation {
                    return Ok(Finished::Replaced);
                }
            }
        }
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
