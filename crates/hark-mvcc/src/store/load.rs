//! Rebuilding the in-memory state from the backend: the key index, the
//! lease table, the alarms and the records, with the revisions that frame
//! them (on open, and after a snapshot is installed in place).

use std::collections::HashMap;

use bytes::Bytes;

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
use crate::usage::{PrefixUsage, Usage, live_size};

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
}

/// Rebuilds the key index, the lease table, the alarms and space per prefix
/// (to `usage_depth`) from `backend` (on open, and after a snapshot is
/// installed in place).
pub(super) fn load_state(backend: &dyn Backend, usage_depth: usize) -> Result<Loaded> {
    let meta = |key: &[u8]| -> Result<i64> { Ok(decode_counter(backend.get(Table::Meta, key)?)) };
    let scheduled = meta(META_SCHEDULED_COMPACT)?;
    let finished = meta(META_FINISHED_COMPACT)?;
    let mut current = meta(META_CURRENT_REV)?.max(1);
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
    if let Some(k) = bad {
        return Err(Error::Backend(format!(
            "corrupt key-value entry at key {k:?}"
        )));
    }
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
    })
}
