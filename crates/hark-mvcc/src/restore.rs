//! Building a data dir from a snapshot image: the inverse of
//! [`crate::StoreImage`]. The rows come in etcd's encoding (the `kv` table
//! already is etcd's `key` bucket), so a snapshot etcd saved loads as it is.

use std::path::Path;

use crate::alarm::Alarm;
use crate::backend::{Backend, BackendKind, Table, WriteBatch};
use crate::error::{Error, Result};
use crate::layout::{
    self, META_CURRENT_REV, META_FINISHED_COMPACT, META_RESTORING, META_SCHEDULED_COMPACT,
    decode_row, encode_counter, tombstone_row_value,
};

/// Rows, and bytes, per backend write while restoring (bytes bound the
/// memory a batch of large values holds).
const RESTORE_BATCH: usize = 4096;
const RESTORE_BATCH_BYTES: usize = 16 << 20;

/// Writes a new store into an empty directory. Nothing is synced until
/// [`Restorer::finish`]; a restore that fails midway leaves a directory to
/// delete, never a store that opens with part of the data.
pub struct Restorer {
    backend: Box<dyn Backend>,
    batch: WriteBatch,
    batch_bytes: usize,
    newest: i64,
    rows: u64,
}

/// What a finished restore holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RestoredStore {
    /// The store's current revision.
    pub revision: i64,
    /// The compacted revision (0: never compacted).
    pub compact_revision: i64,
    /// Key-value rows written.
    pub rows: u64,
}

impl Restorer {
    /// Creates the store in `dir`, which must not exist or be empty, on the
    /// default backend ([`BackendKind::DEFAULT`]).
    pub fn create(dir: impl AsRef<Path>) -> Result<Restorer> {
        Restorer::create_on(dir, BackendKind::DEFAULT)
    }

    /// [`Restorer::create`] on the backend `kind`.
    pub fn create_on(dir: impl AsRef<Path>, kind: BackendKind) -> Result<Restorer> {
        let dir = dir.as_ref();
        if let Ok(mut entries) = std::fs::read_dir(dir)
            && entries.next().is_some()
        {
            return Err(Error::Backend(format!(
                "data dir {} already exists and is not empty",
                dir.display()
            )));
        }
        let backend = kind.open_with(dir, true)?;
        let mut batch = WriteBatch::default();
        batch.put(Table::Meta, META_RESTORING.to_vec(), Vec::new());
        backend.write(batch, false)?;
        Ok(Restorer {
            backend,
            batch: WriteBatch::default(),
            batch_bytes: 0,
            newest: 1,
            rows: 0,
        })
    }

    /// Adds one `kv` row: an etcd revision key (17 bytes, `t` suffix for a
    /// tombstone) and an encoded `mvccpb.KeyValue`. Rows may come in any order.
    pub fn row(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        let Some((rev, tombstone, kv)) = decode_row(key, value) else {
            return Err(Error::Backend(format!(
                "not a key-value revision row: key {key:?}"
            )));
        };
        if kv.key.is_empty() || rev.main < 1 {
            return Err(Error::Backend(format!(
                "invalid key-value row at revision {}_{}",
                rev.main, rev.sub
            )));
        }
        self.newest = self.newest.max(rev.main);
        let value = if tombstone {
            tombstone_row_value(kv.key)
        } else {
            value.to_vec()
        };
        self.batch_bytes += key.len() + value.len();
        self.batch.put(Table::Kv, key.to_vec(), value);
        self.rows += 1;
        self.flush_if_full()
    }

    /// Records a lease with its granted TTL (the lessor gives it a full TTL on start).
    pub fn lease(&mut self, id: i64, ttl: i64) -> Result<()> {
        self.batch
            .put(Table::Meta, layout::lease_key(id), layout::lease_value(ttl));
        self.flush_if_full()
    }

    /// Records a raised alarm.
    pub fn alarm(&mut self, raised: Alarm) -> Result<()> {
        self.batch
            .put(Table::Meta, layout::alarm_key(raised), Vec::new());
        self.flush_if_full()
    }

    /// Adds one record (see [`crate::records`]).
    pub fn record(&mut self, bucket: &str, key: &[u8], value: &[u8]) -> Result<()> {
        if !crate::records::valid_bucket(bucket) {
            return Err(Error::InvalidBucket);
        }
        self.batch_bytes += key.len() + value.len();
        self.batch
            .put(Table::Meta, layout::record_key(bucket, key), value.to_vec());
        self.flush_if_full()
    }

    fn flush_if_full(&mut self) -> Result<()> {
        if self.batch.len() >= RESTORE_BATCH || self.batch_bytes >= RESTORE_BATCH_BYTES {
            self.backend.write(std::mem::take(&mut self.batch), false)?;
            self.batch_bytes = 0;
        }
        Ok(())
    }

    /// Records the revisions and makes everything durable. `revision` is the
    /// store's current revision when higher than any row's (etcd raises its
    /// current revision to the compacted one); `scheduled_compact` and
    /// `finished_compact` as etcd's meta bucket has them: a compaction left
    /// unfinished is finished when the store opens.
    pub fn finish(
        mut self,
        revision: i64,
        scheduled_compact: i64,
        finished_compact: i64,
    ) -> Result<RestoredStore> {
        let revision = self.newest.max(revision).max(scheduled_compact);
        self.batch.put(
            Table::Meta,
            META_CURRENT_REV.to_vec(),
            encode_counter(revision),
        );
        if scheduled_compact > 0 {
            self.batch.put(
                Table::Meta,
                META_SCHEDULED_COMPACT.to_vec(),
                encode_counter(scheduled_compact),
            );
            self.batch.put(
                Table::Meta,
                META_FINISHED_COMPACT.to_vec(),
                encode_counter(finished_compact.min(scheduled_compact)),
            );
        }
        self.backend.write(std::mem::take(&mut self.batch), true)?;
        // Only once all else is durable does the dir become a store.
        let mut done = WriteBatch::default();
        done.delete(Table::Meta, META_RESTORING.to_vec());
        self.backend.write(done, true)?;
        Ok(RestoredStore {
            revision,
            compact_revision: scheduled_compact,
            rows: self.rows,
        })
    }
}
