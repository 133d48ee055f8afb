//! The pure-Rust [`Backend`]: fjall, an LSM tree like RocksDB, built by
//! cargo alone (no C++ compiler, no libclang).
//!
//! Each [`Table`] is a fjall keyspace. One journal serves both, and a fjall
//! batch is atomic across keyspaces: a batch torn by a crash (no end
//! marker) is dropped whole on open. Every read goes through a fjall
//! snapshot, because a keyspace's plain reads can see a batch that is
//! still being applied.

use std::ops::Bound;
use std::path::{Path, PathBuf};

use fjall::{Database, Keyspace, KeyspaceCreateOptions, PersistMode, Readable, Snapshot};

use super::exit_wait::OpenDatabase;
use super::{Backend, BackendKind, BackendView, BatchOp, Table, WriteBatch, power_loss_simulated};
use crate::error::{Error, Result};

/// Journal kept before the keyspace holding its oldest part is flushed
/// (RocksDB's `max_total_wal_size` beside it): every commit writes the
/// small `meta` keyspace, which would otherwise keep every journal alive.
const MAX_JOURNAL_BYTES: u64 = 128 << 20;

/// Block cache shared by both keyspaces.
const CACHE_BYTES: u64 = 64 << 20;

/// The fjall [`Backend`]: one keyspace per [`Table`].
pub struct FjallBackend {
    // Keyspace handles before the database: fields drop in order, and the
    // database's drop (which stops its workers and syncs the journal) runs
    // once nothing else holds it.
    kv: Keyspace,
    meta: Keyspace,
    db: Database,
    path: PathBuf,
    /// Unsynced writes stay in fjall's user-space buffer (see
    /// [`power_loss_simulated`]) instead of reaching the page cache.
    power_loss: bool,
    /// Declared last, so process exit waits for the close above.
    _open: OpenDatabase,
}

fn backend_err(e: fjall::Error) -> Error {
    Error::Backend(format!("fjall: {e}"))
}

impl FjallBackend {
    /// Opens (creating if needed) the database in directory `path`. Fails
    /// on a directory RocksDB wrote, and on one another process has open.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        BackendKind::Fjall.refuse_other_in(&path)?;
        let db = Database::builder(&path)
            .max_journaling_size(MAX_JOURNAL_BYTES)
            .cache_size(CACHE_BYTES)
            .open()
            .map_err(backend_err)?;
        let kv = db
            .keyspace(Table::Kv.name(), KeyspaceCreateOptions::default)
            .map_err(backend_err)?;
        let meta = db
            .keyspace(Table::Meta.name(), KeyspaceCreateOptions::default)
            .map_err(backend_err)?;
        Ok(FjallBackend {
            kv,
            meta,
            db,
            path,
            power_loss: power_loss_simulated(),
            _open: OpenDatabase::count(),
        })
    }

    fn keyspace(&self, table: Table) -> &Keyspace {
        match table {
            Table::Kv => &self.kv,
            Table::Meta => &self.meta,
        }
    }
}

/// fjall's own limits: keys of 1 to 65,535 bytes, values below 4 GiB.
const FJALL_MAX_KEY: usize = u16::MAX as usize;
const FJALL_MAX_VALUE: usize = u32::MAX as usize;

impl Backend for FjallBackend {
    fn get(&self, table: Table, key: &[u8]) -> Result<Option<Vec<u8>>> {
        get_in(&self.db.snapshot(), self.keyspace(table), key)
    }

    fn scan(
        &self,
        table: Table,
        from: &[u8],
        to: Option<&[u8]>,
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        scan_in(&self.db.snapshot(), self.keyspace(table), from, to, visit)
    }

    fn write(&self, batch: WriteBatch, sync: bool) -> Result<()> {
        // fjall panics on a key or value past its limits; the store's checks
        // keep every request within them, and this keeps a slip an error.
        for op in &batch.ops {
            let (key, value) = match op {
                BatchOp::Put { key, value, .. } => (key, value.len()),
                BatchOp::Delete { key, .. } => (key, 0),
            };
            if key.is_empty() || key.len() > FJALL_MAX_KEY || value > FJALL_MAX_VALUE {
                return Err(Error::Backend(format!(
                    "fjall cannot store a key of {} bytes with a value of {value} bytes",
                    key.len()
                )));
            }
        }
        let mut fjall_batch = self.db.batch();
        for op in batch.ops {
            match op {
                BatchOp::Put { table, key, value } => {
                    fjall_batch.insert(self.keyspace(table), key, value)
                }
                BatchOp::Delete { table, key } => fjall_batch.remove(self.keyspace(table), key),
            }
        }
        let empty = fjall_batch.is_empty();
        // SyncData suffices: journals are allocated whole up front, so an
        // append changes no file size (a rotation syncs everything itself).
        let durability = if sync {
            Some(PersistMode::SyncData)
        } else if self.power_loss {
            None
        } else {
            Some(PersistMode::Buffer)
        };
        fjall_batch
            .durability(durability)
            .commit()
            .map_err(backend_err)?;
        // An empty batch writes nothing, so it syncs nothing either; a synced
        // empty write still promises that everything before it is durable.
        if empty && sync {
            self.sync()?;
        }
        Ok(())
    }

    fn sync(&self) -> Result<()> {
        self.db.persist(PersistMode::SyncData).map_err(backend_err)
    }

    /// Bytes fjall's files occupy on disk (its journals, `keyspaces/` and
    /// its small marker files; not what else shares the directory, such as
    /// the server's raft log and backups): allocated blocks, not lengths,
    /// since fjall sizes each journal at its most up front and fills it as
    /// it goes.
    fn size_bytes(&self) -> u64 {
        let Ok(entries) = std::fs::read_dir(&self.path) else {
            return 0;
        };
        entries
            .flatten()
            .filter(|entry| {
                let name = entry.file_name();
                let name = name.as_encoded_bytes();
                name.ends_with(b".jnl") || matches!(name, b"keyspaces" | b"version" | b"lock")
            })
            .map(|entry| allocated_bytes(&entry.path()))
            .sum()
    }

    /// The keyspaces' table files plus what the memtables hold. fjall keeps
    /// no estimate of live data inside its tables, so overwritten rows count
    /// until a compaction drops them.
    fn size_in_use_bytes(&self) -> u64 {
        self.kv.disk_space() + self.meta.disk_space() + self.db.write_buffer_size()
    }

    fn read_snapshot(&self, read: &mut dyn FnMut(&dyn BackendView) -> Result<()>) -> Result<()> {
        read(&FjallView {
            backend: self,
            snapshot: self.db.snapshot(),
        })
    }

    /// Flushes each keyspace's memtable, then merges all its tables into
    /// one level, dropping what no open snapshot still needs. Reads and
    /// writes go on; a write can wait while the merge holds the keyspace's
    /// compaction lock if its memtables fill meanwhile.
    fn reclaim_space(&self) -> Result<()> {
        for keyspace in [&self.kv, &self.meta] {
            keyspace.rotate_memtable_and_wait().map_err(backend_err)?;
            keyspace.major_compact().map_err(backend_err)?;
        }
        Ok(())
    }

    /// fjall is Rust: its memtables and caches are on the process's heap,
    /// which the allocator's own figures already count.
    fn record_memory(&self) {}
}

/// A fjall snapshot: reads see both keyspaces as of one batch boundary.
struct FjallView<'a> {
    backend: &'a FjallBackend,
    snapshot: Snapshot,
}

impl BackendView for FjallView<'_> {
    fn get(&self, table: Table, key: &[u8]) -> Result<Option<Vec<u8>>> {
        get_in(&self.snapshot, self.backend.keyspace(table), key)
    }

    fn scan(
        &self,
        table: Table,
        from: &[u8],
        to: Option<&[u8]>,
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        scan_in(
            &self.snapshot,
            self.backend.keyspace(table),
            from,
            to,
            visit,
        )
    }
}

fn get_in(snapshot: &Snapshot, keyspace: &Keyspace, key: &[u8]) -> Result<Option<Vec<u8>>> {
    snapshot
        .get(keyspace, key)
        .map(|value| value.map(|v| v.to_vec()))
        .map_err(backend_err)
}

fn scan_in(
    snapshot: &Snapshot,
    keyspace: &Keyspace,
    from: &[u8],
    to: Option<&[u8]>,
    visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
) -> Result<()> {
    if to.is_some_and(|to| to <= from) {
        return Ok(());
    }
    let upper = to.map_or(Bound::Unbounded, Bound::Excluded);
    for entry in snapshot.range::<&[u8], _>(keyspace, (Bound::Included(from), upper)) {
        let (key, value) = entry.into_inner().map_err(backend_err)?;
        if !visit(&key, &value) {
            break;
        }
    }
    Ok(())
}

/// The disk blocks `path` occupies: a file's, or every file's under a
/// directory.
fn allocated_bytes(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return 0;
    };
    if !meta.is_dir() {
        return meta.blocks() * 512;
    }
    std::fs::read_dir(path)
        .map(|entries| {
            entries
                .flatten()
                .map(|entry| allocated_bytes(&entry.path()))
                .sum()
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_size_counts_fjalls_files_not_what_shares_the_directory() {
        let dir = tempfile::tempdir().unwrap();
        let backend = FjallBackend::open(dir.path()).unwrap();
        // Bytes that do not compress (the journal is compressed).
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let value = (0..64 << 10)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                seed as u8
            })
            .collect();
        let mut batch = WriteBatch::default();
        batch.put(Table::Kv, b"k".to_vec(), value);
        backend.write(batch, true).unwrap();
        let own = backend.size_bytes();
        assert!(own >= 64 << 10, "the journal holds the write: {own}");
        // The server keeps its raft log and backups beside the store.
        std::fs::create_dir_all(dir.path().join("raft/log")).unwrap();
        std::fs::write(dir.path().join("raft/log/000001.log"), vec![1; 8 << 20]).unwrap();
        std::fs::write(dir.path().join("other"), vec![1; 1 << 20]).unwrap();
        let after = backend.size_bytes();
        assert!(after < own + (1 << 20), "{own} -> {after}");
    }
}
