//! Rebuilding the in-memory state from the backend: the key index, the
//! lease table, the alarms and the records, with the revisions that frame
//! them (on open, and after a snapshot is installed in place).

use std::collections::HashMap;
use std::path::Path;
use std::time::Instant;

use bytes::Bytes;

use super::checkpoint;
use crate::alarm::AlarmSet;
use crate::backend::{Backend, Table};
use crate::error::{Error, Result};
use crate::key_index::{IndexBuilder, TreeIndex};
use crate::layout::{
    self, META_CURRENT_REV, META_FINISHED_COMPACT, META_SCHEDULED_COMPACT, decode_counter,
    decode_row,
};
use crate::lease_table::LeaseTable;
use crate::records::RecordTable;
use crate::revision::Revision;
use crate::usage::{PrefixUsage, Usage, UsageChange, live_size};

/// The in-memory state rebuilt from a backend's rows and records.
pub(super) struct Loaded {
    pub(super) index: TreeIndex,
    pub(super) leases: LeaseTable,
    pub(super) alarms: AlarmSet,
    pub(super) records: RecordTable,
    /// Space per prefix of the rows loaded (compaction not yet subtracted).
    pub(super) usage: PrefixUsage,
    pub(super) current: i64,
    pub(super) scheduled: i64,
    pub(super) finished: i64,
    /// Loaded from the index checkpoint of this revision and compaction
    /// (the index is compacted at it already), not from every row.
    pub(super) checkpoint: Option<(i64, i64)>,
}

/// The key index and what goes with it, from the `kv` rows.
struct Rows {
    index: TreeIndex,
    usage: PrefixUsage,
    key_lease: HashMap<Bytes, i64>,
    current: i64,
}

/// Rebuilds the key index, the lease table, the alarms and space per prefix
/// (to `usage_depth`) from `backend` (on open, and after a snapshot is
/// installed in place), reading every row.
pub(super) fn load_state(backend: &dyn Backend, usage_depth: usize) -> Result<Loaded> {
    let (scheduled, finished, current) = counters(backend)?;
    let rows = load_rows(backend, usage_depth, current)?;
    load_meta(backend, rows, scheduled, finished, None)
}

/// [`load_state`] for a store in `dir`: from the key index's checkpoint
/// there and the rows written after it when it still describes the
/// backend (see [`super::checkpoint`]), else from every row.
pub(super) fn load_state_in(
    backend: &dyn Backend,
    usage_depth: usize,
    dir: &Path,
) -> Result<Loaded> {
    let started = Instant::now();
    let (scheduled, finished, current) = counters(backend)?;
    let Some(c) = usable_checkpoint(backend, dir, usage_depth, scheduled, finished, current)?
    else {
        let rows = load_rows(backend, usage_depth, current)?;
        return load_meta(backend, rows, scheduled, finished, None);
    };
    let (revision, compacted) = (c.revision, c.compacted);
    let mut rows = Rows {
        index: c.index,
        usage: c.usage,
        key_lease: c.key_leases.into_iter().collect(),
        current,
    };
    let replayed = replay_after(backend, revision, &mut rows)?;
    tracing::info!(
        revision,
        replayed,
        keys = rows.index.live_len(),
        took = ?started.elapsed(),
        "key index loaded from its checkpoint and the rows after it"
    );
    load_meta(
        backend,
        rows,
        scheduled,
        finished,
        Some((revision, compacted)),
    )
}

/// `dir`'s checkpoint if there is one and it still describes `backend`
/// (see [`super::checkpoint`]); why not is logged.
fn usable_checkpoint(
    backend: &dyn Backend,
    dir: &Path,
    usage_depth: usize,
    scheduled: i64,
    finished: i64,
    current: i64,
) -> Result<Option<checkpoint::Checkpoint>> {
    let c = match checkpoint::read(dir) {
        Ok(Some(c)) => c,
        Ok(None) => return Ok(None),
        Err(e) => {
            tracing::warn!(error = %e, "index checkpoint unreadable; reading every row");
            return Ok(None);
        }
    };
    let stale = if c.usage_depth != usage_depth {
        Some("it tracks space to another depth")
    } else if c.compacted != finished || scheduled != finished {
        Some("a compaction ran after it")
    } else if current < c.revision {
        Some("the backend is behind it")
    } else if checkpoint::row_digest(backend, c.revision)? != c.digest {
        Some("the rows at its revision differ")
    } else {
        None
    };
    if let Some(why) = stale {
        tracing::info!(
            revision = c.revision,
            why,
            "index checkpoint not used; reading every row"
        );
        return Ok(None);
    }
    Ok(Some(c))
}

/// The scheduled and finished compaction revisions and the current revision.
fn counters(backend: &dyn Backend) -> Result<(i64, i64, i64)> {
    let meta = |key: &[u8]| -> Result<i64> { Ok(decode_counter(backend.get(Table::Meta, key)?)) };
    Ok((
        meta(META_SCHEDULED_COMPACT)?,
        meta(META_FINISHED_COMPACT)?,
        meta(META_CURRENT_REV)?.max(1),
    ))
}

fn corrupt_row(k: &[u8]) -> Error {
    Error::Backend(format!("corrupt key-value entry at key {k:?}"))
}

/// Applies the rows after `revision` to `rows` as the committer applied
/// them: the index, the space they take and the keys' leases. Returns how
/// many there were.
fn replay_after(backend: &dyn Backend, revision: i64, rows: &mut Rows) -> Result<usize> {
    let from = layout::rev_key(Revision::new(revision + 1, 0), false);
    let mut replayed = 0;
    let mut bad = None;
    backend.scan(Table::Kv, &from, None, &mut |k, v| {
        let Some((rev, tombstone, kv)) = decode_row(k, v) else {
            bad = Some(k.to_vec());
            return false;
        };
        replayed += 1;
        rows.current = rows.current.max(rev.main);
        let (before, after) = if tombstone {
            (rows.index.tombstone(&kv.key, rev), None)
        } else {
            let size = live_size(&kv.key, &kv.value);
            let (_, before) = rows
                .index
                .put(&kv.key, rev, kv.create_revision, kv.version, size);
            (before, Some(size))
        };
        if tombstone || kv.lease == 0 {
            rows.key_lease.remove(&kv.key);
        } else {
            rows.key_lease.insert(kv.key.clone(), kv.lease);
        }
        rows.usage.apply(&UsageChange::revision(
            kv.key,
            k.len() + v.len(),
            before,
            after,
        ));
        true
    })?;
    match bad {
        Some(k) => Err(corrupt_row(&k)),
        None => Ok(replayed),
    }
}

/// The key index, space per prefix and the keys' leases from every `kv` row.
fn load_rows(backend: &dyn Backend, usage_depth: usize, mut current: i64) -> Result<Rows> {
    let mut index = IndexBuilder::default();
    let mut usage = PrefixUsage::new(usage_depth);
    let mut key_lease: HashMap<Bytes, i64> = HashMap::new();
    let mut bad = None;
    backend.scan(Table::Kv, &[], None, &mut |k, v| {
        let Some((rev, tombstone, kv)) = decode_row(k, v) else {
            bad = Some(k.to_vec());
            return false;
        };
        current = current.max(rev.main);
        // Rows come in revision order, so the last one of a key is its current state.
        if tombstone || kv.lease == 0 {
            key_lease.remove(&kv.key);
        } else {
            key_lease.insert(kv.key.clone(), kv.lease);
        }
        if tombstone {
            index.tombstone(&kv.key, rev);
        } else {
            let size = live_size(&kv.key, &kv.value);
            index.put(&kv.key, rev, kv.create_revision, kv.version, size);
        }
        // The row's share here; the live keys' once the index is built.
        usage.add(
            &kv.key,
            &Usage {
                revisions: 1,
                history_bytes: (k.len() + v.len()) as i64,
                ..Usage::default()
            },
        );
        true
    })?;
    if let Some(k) = bad {
        return Err(corrupt_row(&k));
    }
    let index = index.finish();
    index.visit_live_sizes(|key, size| {
        usage.add(
            key,
            &Usage {
                keys: 1,
                bytes: i64::from(size),
                ..Usage::default()
            },
        )
    });
    Ok(Rows {
        index,
        usage,
        key_lease,
        current,
    })
}

/// The leases, alarms and records from the `meta` rows, joined to `rows`.
fn load_meta(
    backend: &dyn Backend,
    rows: Rows,
    scheduled: i64,
    finished: i64,
    checkpoint: Option<(i64, i64)>,
) -> Result<Loaded> {
    let Rows {
        index,
        usage,
        key_lease,
        current,
    } = rows;
    let mut bad = None;
    let mut leases = LeaseTable::default();
    let (from, to) = layout::lease_range();
    backend.scan(Table::Meta, &from, Some(&to), &mut |k, v| {
        match layout::decode_lease(k, v) {
            Some((id, ttl)) => leases.grant(id, ttl),
            None => bad = Some(k.to_vec()),
        }
        bad.is_none()
    })?;
    if let Some(k) = bad {
        return Err(Error::Backend(format!("corrupt lease record at key {k:?}")));
    }
    let mut alarms = AlarmSet::default();
    let (from, to) = layout::alarm_range();
    backend.scan(Table::Meta, &from, Some(&to), &mut |k, _| {
        match layout::decode_alarm(k) {
            Some(a) => {
                alarms.insert(a);
            }
            None => bad = Some(k.to_vec()),
        }
        bad.is_none()
    })?;
    if let Some(k) = bad {
        return Err(Error::Backend(format!("corrupt alarm record at key {k:?}")));
    }
    let mut records = RecordTable::default();
    let (from, to) = layout::record_range();
    backend.scan(Table::Meta, &from, Some(&to), &mut |k, v| {
        match layout::decode_record_key(k) {
            Some((bucket, key)) => records.put(bucket, key, Bytes::copy_from_slice(v)),
            None => bad = Some(k.to_vec()),
        }
        bad.is_none()
    })?;
    if let Some(k) = bad {
        return Err(Error::Backend(format!("corrupt record at key {k:?}")));
    }
    for (key, lease) in &key_lease {
        leases.attach(key, *lease);
    }
    Ok(Loaded {
        index,
        leases,
        alarms,
        records,
        usage,
        current,
        scheduled,
        finished,
        checkpoint,
    })
}
