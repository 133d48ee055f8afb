//! `StoreImage`: a consistent view of the whole store, for snapshots.

use bytes::Bytes;

use crate::alarm::Alarm;
use crate::backend::{BackendView, Table};
use crate::error::{Error, Result};
use crate::layout::{
    self, META_CURRENT_REV, META_FINISHED_COMPACT, META_LOG_POSITION, META_SCHEDULED_COMPACT,
    decode_counter, decode_row, tombstone_row_value,
};

/// A consistent image of a whole store, for snapshots: the raw `kv` rows (in
/// etcd's encoding: revision bytes → `mvccpb.KeyValue`), the leases, the
/// alarms, and the revisions that frame them.
pub struct StoreImage<'a> {
    pub(super) view: &'a dyn BackendView,
}

impl StoreImage<'_> {
    fn meta_i64(&self, key: &[u8]) -> Result<i64> {
        Ok(decode_counter(self.view.get(Table::Meta, key)?))
    }

    /// The replicated log's position recorded with the image's newest changes.
    pub fn log_position(&self) -> Result<Option<Vec<u8>>> {
        self.view.get(Table::Meta, META_LOG_POSITION)
    }

    /// The newest revision the image holds (written with every commit group,
    /// so it is the image's own).
    pub fn revision(&self) -> Result<i64> {
        Ok(self.meta_i64(META_CURRENT_REV)?.max(1))
    }

    /// Compaction requested up to this revision (rows below it may remain
    /// until the compaction finishes).
    pub fn scheduled_compact_revision(&self) -> Result<i64> {
        self.meta_i64(META_SCHEDULED_COMPACT)
    }

    /// Compaction physically finished up to this revision.
    pub fn finished_compact_revision(&self) -> Result<i64> {
        self.meta_i64(META_FINISHED_COMPACT)
    }

    /// Each `kv` row in revision order: backend key (etcd's 17-byte revision,
    /// plus `t` for a tombstone) and the encoded `mvccpb.KeyValue`. Tombstones
    /// are given as etcd writes them (the key only), whatever the version of
    /// Hark that stored them. `visit` returns `false` to stop.
    pub fn for_each_row(&self, visit: &mut dyn FnMut(&[u8], &[u8]) -> bool) -> Result<()> {
        let mut failure = None;
        self.view.scan(Table::Kv, &[], None, &mut |k, v| {
            let Some((_, tombstone, kv)) = decode_row(k, v) else {
                failure = Some(Error::Backend(format!(
                    "corrupt key-value entry at key {k:?}"
                )));
                return false;
            };
            if tombstone {
                // Older Hark tombstones also held their mod_revision.
                return visit(k, &tombstone_row_value(kv.key));
            }
            visit(k, v)
        })?;
        failure.map_or(Ok(()), Err)
    }

    /// Every lease as `(id, granted TTL)`, by id.
    pub fn leases(&self) -> Result<Vec<(i64, i64)>> {
        let mut out = Vec::new();
        let (from, to) = layout::lease_range();
        self.view.scan(Table::Meta, &from, Some(&to), &mut |k, v| {
            out.extend(layout::decode_lease(k, v));
            true
        })?;
        out.sort_unstable();
        Ok(out)
    }

    /// Every record as `(bucket, key, value)`, by bucket then key.
    pub fn records(&self) -> Result<Vec<(String, Bytes, Bytes)>> {
        let mut out = Vec::new();
        let (from, to) = layout::record_range();
        self.view.scan(Table::Meta, &from, Some(&to), &mut |k, v| {
            if let Some((bucket, key)) = layout::decode_record_key(k) {
                out.push((bucket, key, Bytes::copy_from_slice(v)));
            }
            true
        })?;
        Ok(out)
    }

    /// The raised alarms.
    pub fn alarms(&self) -> Result<Vec<Alarm>> {
        let mut out = Vec::new();
        let (from, to) = layout::alarm_range();
        self.view.scan(Table::Meta, &from, Some(&to), &mut |k, _| {
            out.extend(layout::decode_alarm(k));
            true
        })?;
        Ok(out)
    }
}
