use std::path::{Path, PathBuf};

use rocksdb::{
    ColumnFamilyDescriptor, DB, Direction, IteratorMode, Options, ReadOptions, WriteOptions,
};

use super::{Backend, BatchOp, Table, WriteBatch};
use crate::error::{Error, Result};

/// The RocksDB [`Backend`]: one column family per [`Table`].
///
/// RocksDB already groups concurrent synced writers into one WAL sync; the store's
/// committer adds its own batching on top, so one sync covers many requests.
pub struct RocksBackend {
    db: DB,
    path: PathBuf,
}

fn backend_err(e: rocksdb::Error) -> Error {
    Error::Backend(e.into_string())
}

impl RocksBackend {
    /// Opens (creating if needed) the database in directory `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        let mut opts = Options::default();
        opts.create_if_missing(true);
        opts.create_missing_column_families(true);
        let cfs = Table::ALL.map(|t| ColumnFamilyDescriptor::new(t.name(), Options::default()));
        let db = DB::open_cf_descriptors(&opts, &path, cfs).map_err(backend_err)?;
        Ok(RocksBackend { db, path })
    }

    fn cf(&self, table: Table) -> &rocksdb::ColumnFamily {
        self.db
            .cf_handle(table.name())
            .expect("every table's column family is created on open")
    }
}

impl Backend for RocksBackend {
    fn get(&self, table: Table, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.db.get_cf(self.cf(table), key).map_err(backend_err)
    }

    fn scan(
        &self,
        table: Table,
        from: &[u8],
        to: Option<&[u8]>,
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        let mut read_opts = ReadOptions::default();
        if let Some(to) = to {
            read_opts.set_iterate_upper_bound(to.to_vec());
        }
        let iter = self.db.iterator_cf_opt(
            self.cf(table),
            read_opts,
            IteratorMode::From(from, Direction::Forward),
        );
        for item in iter {
            let (k, v) = item.map_err(backend_err)?;
            if !visit(&k, &v) {
                break;
            }
        }
        Ok(())
    }

    fn write(&self, batch: WriteBatch, sync: bool) -> Result<()> {
        let mut rocks_batch = rocksdb::WriteBatch::default();
        for op in batch.ops {
            match op {
                BatchOp::Put { table, key, value } => {
                    rocks_batch.put_cf(self.cf(table), key, value)
                }
                BatchOp::Delete { table, key } => rocks_batch.delete_cf(self.cf(table), key),
            }
        }
        let mut write_opts = WriteOptions::default();
        write_opts.set_sync(sync);
        self.db
            .write_opt(rocks_batch, &write_opts)
            .map_err(backend_err)
    }

    fn size_bytes(&self) -> u64 {
        dir_size(&self.path)
    }
}

fn dir_size(path: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(path) else {
        return 0;
    };
    entries
        .flatten()
        .filter_map(|e| e.metadata().ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum()
}
