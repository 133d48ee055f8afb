//! The compactor thread: deletes compacted rows in batches, off the
//! committer's path.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use crossbeam_channel::Receiver;

use super::shared::{COMPACTION_BATCH, JobDone, Shared};
use crate::backend::{Table, WriteBatch};
use crate::error::Result;
use crate::layout::{META_FINISHED_COMPACT, encode_counter, parse_rev_key, rev_key, row_key_only};
use crate::request::{CompactResponse, WriteResponse};
use crate::revision::Revision;
use crate::usage::UsageChange;

/// A compaction whose index part is done, waiting for its physical part.
pub(super) struct Compaction {
    /// The store's generation when planned ([`Store::install`] voids it).
    pub(super) generation: u64,
    pub(super) at: i64,
    pub(super) keep: std::collections::HashSet<Revision>,
    /// Set for `physical` requests: answered once the rows are gone.
    pub(super) done: Option<(JobDone, CompactResponse)>,
}

pub(super) fn run_compactor(shared: Arc<Shared>, rx: Receiver<Compaction>) {
    for c in rx {
        let outcome = {
            let _compacting = shared.compacting.lock();
            if shared.generation.load(Ordering::Acquire) == c.generation {
                shared.delete_compacted(c.at, &c.keep)
            } else {
                Ok(()) // the store was replaced since
            }
        };
        if let Err(e) = &outcome {
            tracing::error!(revision = c.at, error = %e, "physical compaction failed; it resumes on reopen");
        }
        if let Some((done, resp)) = c.done {
            done(Some(outcome.map(|()| WriteResponse::Compact(resp))));
        }
    }
}

impl Shared {
    /// Removes every stored revision `<= at` that is not in `keep`, in batches, then
    /// records the compaction as finished. Safe to repeat after a crash.
    pub(super) fn delete_compacted(
        &self,
        at: i64,
        keep: &std::collections::HashSet<Revision>,
    ) -> Result<()> {
        let end = rev_key(Revision::new(at + 1, 0), false);
        let mut from = Vec::new();
        loop {
            let mut batch = WriteBatch::default();
            let mut next = None;
            let mut freed = 0u64;
            let mut usage = Vec::new();
            self.backend
                .scan(Table::Kv, &from, Some(&end), &mut |k, v| {
                    if batch.len() >= COMPACTION_BATCH {
                        next = Some(k.to_vec());
                        return false;
                    }
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
                self.backend.write(batch, false)?;
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
        }
        let mut done = WriteBatch::default();
        done.put(
            Table::Meta,
            META_FINISHED_COMPACT.to_vec(),
            encode_counter(at),
        );
        self.backend.write(done, true)?;
        self.measure_sizes(true);
        Ok(())
    }
}
