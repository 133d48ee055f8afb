//! History reads for the watch engine: every revision's changes in order,
//! in bounded chunks, or one key's changes through the key index.

use std::collections::HashMap;
use std::sync::atomic::Ordering;

use bytes::Bytes;

use super::Store;
use super::shared::Shared;
use crate::backend::Table;
use crate::error::{Error, Result};
use crate::key_index::KeyRange;
use crate::kv::{CommittedRevision, Event, EventKind, KeyValue};
use crate::layout::{decode_row, rev_key};
use crate::read_plan::{load_kv, missing_value};
use crate::revision::Revision;

/// A piece of history: the changed revisions read, and the first revision not
/// covered by the read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistoryChunk {
    /// The revisions read, in order (revisions with no changes do not appear).
    pub revisions: Vec<CommittedRevision>,
    /// Where to go on from: every revision below it was covered.
    pub next: i64,
}

impl Store {
    /// Reads committed history: the changes of revisions `from..` in order, stopping
    /// at a revision boundary once `max_revisions` revisions or about `max_bytes`
    /// of values were read. Fails with [`Error::Compacted`] when `from` is below the
    /// compacted revision.
    ///
    /// ```
    /// use hark_mvcc::{PutRequest, Store};
    ///
    /// let store = Store::in_memory();
    /// for value in ["1", "2", "3"] {
    ///     store.put(PutRequest::new("k", value)).unwrap();
    /// }
    /// let revisions = store.history(3, 10, 1 << 20).unwrap();
    /// let values: Vec<_> = revisions.iter().map(|r| r.events[0].kv.value.clone()).collect();
    /// assert_eq!(values, ["2", "3"]);
    /// assert_eq!(revisions[0].revision, 3);
    /// ```
    pub fn history(
        &self,
        from: i64,
        max_revisions: usize,
        max_bytes: usize,
    ) -> Result<Vec<CommittedRevision>> {
        Ok(self
            .history_chunk(from, max_revisions, max_bytes)?
            .revisions)
    }

    /// [`Store::history`], also telling where the read stopped: every revision
    /// below `next` was covered (a revision with no changes, like a new store's
    /// first, yields nothing).
    pub fn history_chunk(
        &self,
        from: i64,
        max_revisions: usize,
        max_bytes: usize,
    ) -> Result<HistoryChunk> {
        self.shared()
            .outside_installs(|| self.history_chunk_once(from, max_revisions, max_bytes))
    }

    fn history_chunk_once(
        &self,
        from: i64,
        max_revisions: usize,
        max_bytes: usize,
    ) -> Result<HistoryChunk> {
        let shared = self.shared();
        let current = shared.committed_rev.load(Ordering::Acquire);
        if from < shared.compact_rev.load(Ordering::Acquire) {
            return Err(Error::Compacted);
        }
        let mut out: Vec<CommittedRevision> = Vec::new();
        let mut bytes = 0usize;
        let mut next = current + 1;
        let mut failure = None;
        let start = rev_key(Revision::new(from.max(1), 0), false);
        let end = rev_key(Revision::new(current + 1, 0), false);
        shared
            .backend
            .scan(Table::Kv, &start, Some(&end), &mut |k, v| {
                let Some((rev, tombstone, kv)) = decode_row(k, v) else {
                    failure = Some(Error::Backend(format!(
                        "corrupt key-value entry at key {k:?}"
                    )));
                    return false;
                };
                let new_revision = out.last().is_none_or(|last| last.revision != rev.main);
                if new_revision {
                    if out.len() >= max_revisions || bytes >= max_bytes {
                        next = rev.main;
                        return false;
                    }
                    out.push(CommittedRevision {
                        revision: rev.main,
                        events: Vec::new(),
                        with_prev_kvs: false,
                    });
                }
                bytes += v.len();
                let kind = if tombstone {
                    EventKind::Delete
                } else {
                    EventKind::Put
                };
                out.last_mut()
                    .expect("pushed above")
                    .events
                    .push(Event::new(kind, kv));
                true
            })?;
        if let Some(e) = failure {
            return Err(e);
        }
        // A compaction that started during the scan may have removed rows we needed.
        if from < shared.compact_rev.load(Ordering::Acquire) {
            return Err(Error::Compacted);
        }
        Ok(HistoryChunk {
            revisions: out,
            next,
        })
    }

    /// The changes to keys in `[key, range_end)` (etcd's range forms) with
    /// revisions in `from..=to`, in revision order, found through the key index:
    /// the cost follows that range's own history, not the store's write volume.
    pub fn key_changes(
        &self,
        key: &[u8],
        range_end: &[u8],
        from: i64,
        to: i64,
    ) -> Result<Vec<Event>> {
        self.shared()
            .outside_installs(|| self.key_changes_once(key, range_end, from, to))
    }

    fn key_changes_once(
        &self,
        key: &[u8],
        range_end: &[u8],
        from: i64,
        to: i64,
    ) -> Result<Vec<Event>> {
        let shared = self.shared();
        let mut found: Vec<(Revision, Bytes, bool)> = Vec::new();
        {
            let index = shared.index.read();
            if from < shared.compact_rev.load(Ordering::Acquire) {
                return Err(Error::Compacted);
            }
            let to = to.min(shared.committed_rev.load(Ordering::Acquire));
            index.changes(KeyRange::new(key, range_end), from, to, |k, r, del| {
                found.push((r, Bytes::copy_from_slice(k), del))
            });
        }
        found.sort_unstable_by_key(|(r, _, _)| *r);
        let mut events = Vec::with_capacity(found.len());
        for (rev, key, deleted) in found {
            let kv = if deleted {
                KeyValue {
                    key,
                    mod_revision: rev.main,
                    ..Default::default()
                }
            } else {
                shared.load_committed(rev, from)?
            };
            let kind = if deleted {
                EventKind::Delete
            } else {
                EventKind::Put
            };
            events.push(Event::new(kind, kv));
        }
        Ok(events)
    }
}

impl Shared {
    /// As [`Shared::load_committed`] for several revisions at once (in
    /// their order), the rows' bytes undecoded.
    pub(super) fn load_committed_rows(
        &self,
        revs: &[Revision],
        read_at: i64,
    ) -> Result<Vec<Vec<u8>>> {
        let keys: Vec<Vec<u8>> = revs.iter().map(|&rev| rev_key(rev, false)).collect();
        let rows = self.backend.get_many(Table::Kv, &keys)?;
        rows.into_iter()
            .zip(revs)
            .map(|(row, &rev)| match row {
                Some(row) => Ok(row),
                None if read_at < self.compact_rev.load(Ordering::Acquire) => Err(Error::Compacted),
                None => Err(missing_value(rev)),
            })
            .collect()
    }

    /// The value stored at `rev`, for a read at revision `read_at`: if it is gone,
    /// a compaction past `read_at` removed it after the index was consulted.
    pub(super) fn load_committed(&self, rev: Revision, read_at: i64) -> Result<KeyValue> {
        match load_kv(self.backend.as_ref(), &HashMap::new(), rev)? {
            Some(kv) => Ok(kv),
            None if read_at < self.compact_rev.load(Ordering::Acquire) => Err(Error::Compacted),
            None => Err(missing_value(rev)),
        }
    }
}
