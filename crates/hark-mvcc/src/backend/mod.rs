//! Storage behind a small trait, in the spirit of TiKV's `engine_traits`: the store
//! sees only [`Backend`], never RocksDB. Two on disk, each behind a feature:
//! `RocksBackend` (`rocksdb`, the default) and `FjallBackend` (`fjall`,
//! pure Rust); [`MemoryBackend`] keeps the trait honest and makes tests
//! fast. Without `rocksdb` this crate builds with no C++ compiler.

mod exit_wait;
#[cfg(feature = "fjall")]
mod fjall;
mod hooked;
mod memory;
#[cfg(feature = "rocksdb")]
mod rocks;

pub use exit_wait::OpenDatabase;
#[cfg(feature = "fjall")]
pub use fjall::FjallBackend;
pub use hooked::{BackendHooks, Hooked};
pub use memory::MemoryBackend;
#[cfg(feature = "rocksdb")]
pub use rocks::{
    MEMORY_GAUGE, RocksBackend, column_family_options, record_memory, simulate_power_loss,
};

use std::path::Path;

use crate::error::{Error, Result};

/// Which on-disk backend a store uses (the server's `--backend`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BackendKind {
    /// RocksDB (feature `rocksdb`): C++, rate-limited background work.
    RocksDb,
    /// fjall (feature `fjall`): pure Rust.
    Fjall,
}

impl BackendKind {
    /// RocksDB when this build has it, else fjall.
    pub const DEFAULT: BackendKind = if cfg!(feature = "rocksdb") {
        BackendKind::RocksDb
    } else {
        BackendKind::Fjall
    };

    /// Its name, as `--backend` takes it.
    pub fn name(self) -> &'static str {
        match self {
            BackendKind::RocksDb => "rocksdb",
            BackendKind::Fjall => "fjall",
        }
    }

    /// Whether this build can open it.
    pub fn is_built(self) -> bool {
        match self {
            BackendKind::RocksDb => cfg!(feature = "rocksdb"),
            BackendKind::Fjall => cfg!(feature = "fjall"),
        }
    }

    /// The backend that wrote the store in `dir`, if one did: RocksDB
    /// leaves `CURRENT`, fjall `version` (each names its manifest).
    pub fn written_in(dir: &Path) -> Option<BackendKind> {
        if dir.join("CURRENT").is_file() {
            Some(BackendKind::RocksDb)
        } else if dir.join("version").is_file() && dir.join("keyspaces").is_dir() {
            Some(BackendKind::Fjall)
        } else {
            None
        }
    }

    /// Opens (creating if needed) a backend of this kind in `dir`. A
    /// directory another backend wrote is refused, not opened beside it.
    pub fn open(self, dir: &Path) -> Result<Box<dyn Backend>> {
        self.open_with(dir, false)
    }

    /// As [`BackendKind::open`]; `bulk_load` (a restore, which no client
    /// waits on) lifts RocksDB's background write limit.
    pub(crate) fn open_with(self, dir: &Path, bulk_load: bool) -> Result<Box<dyn Backend>> {
        let _ = bulk_load;
        crate::ensure_private_dir(dir)
            .map_err(|e| Error::Backend(format!("cannot create {}: {e}", dir.display())))?;
        match self {
            #[cfg(feature = "rocksdb")]
            BackendKind::RocksDb if bulk_load => {
                Ok(Box::new(RocksBackend::open_for_bulk_load(dir)?))
            }
            #[cfg(feature = "rocksdb")]
            BackendKind::RocksDb => Ok(Box::new(RocksBackend::open(dir)?)),
            #[cfg(feature = "fjall")]
            BackendKind::Fjall => Ok(Box::new(FjallBackend::open(dir)?)),
            #[allow(unreachable_patterns)]
            other => Err(Error::Backend(format!(
                "this build has no {} backend (cargo feature `{}`)",
                other.name(),
                other.name()
            ))),
        }
    }

    /// Fails if another backend wrote `dir`: each would otherwise create
    /// its files beside the other's and find an empty store.
    #[cfg_attr(not(any(feature = "rocksdb", feature = "fjall")), allow(dead_code))]
    fn refuse_other_in(self, dir: &Path) -> Result<()> {
        match BackendKind::written_in(dir) {
            Some(found) if found != self => Err(Error::Backend(format!(
                "{} holds a {} store, not a {} one (see --backend)",
                dir.display(),
                found.name(),
                self.name()
            ))),
            _ => Ok(()),
        }
    }
}

impl Default for BackendKind {
    fn default() -> Self {
        BackendKind::DEFAULT
    }
}

impl std::fmt::Display for BackendKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for BackendKind {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "rocksdb" => Ok(BackendKind::RocksDb),
            "fjall" => Ok(BackendKind::Fjall),
            other => Err(format!(
                "unknown backend {other:?}: expected rocksdb or fjall"
            )),
        }
    }
}

/// The fault suite's power-loss simulation (`HARK_SIMULATE_POWER_LOSS=1`
/// in the member's environment): on-disk backends keep writes not yet
/// synced in a user-space buffer, so a SIGKILL drops them as losing power
/// would drop the page cache. Synced writes are synced as without it.
pub fn power_loss_simulated() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| {
        let on = std::env::var("HARK_SIMULATE_POWER_LOSS").as_deref() == Ok("1");
        if on {
            tracing::warn!(
                "power-loss simulation: writes not yet synced are lost if this process is killed"
            );
        }
        on
    })
}

/// The two key spaces the store uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Table {
    /// Revision bytes → encoded `KeyValue`.
    Kv,
    /// Store metadata (current and compaction revisions).
    Meta,
}

impl Table {
    pub(crate) const ALL: [Table; 2] = [Table::Kv, Table::Meta];

    /// Its name (RocksDB's column family, and what [`crate::Store::hash`] hashes).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Table::Kv => "kv",
            Table::Meta => "meta",
        }
    }
}

/// One change of a [`WriteBatch`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BatchOp {
    /// Sets `key` in `table` to `value`.
    Put {
        /// The table.
        table: Table,
        /// The key.
        key: Vec<u8>,
        /// The new value.
        value: Vec<u8>,
    },
    /// Removes `key` from `table` (nothing happens if it is absent).
    Delete {
        /// The table.
        table: Table,
        /// The key.
        key: Vec<u8>,
    },
}

/// Changes applied atomically by [`Backend::write`]: all or none survive a crash.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct WriteBatch {
    /// The changes, applied in order.
    pub ops: Vec<BatchOp>,
}

impl WriteBatch {
    pub(crate) fn put(&mut self, table: Table, key: Vec<u8>, value: Vec<u8>) {
        self.ops.push(BatchOp::Put { table, key, value });
    }

    pub(crate) fn delete(&mut self, table: Table, key: Vec<u8>) {
        self.ops.push(BatchOp::Delete { table, key });
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    pub(crate) fn len(&self) -> usize {
        self.ops.len()
    }
}

/// What the store needs from durable storage. Implementations are shared between
/// threads: one writer at a time (the store's committer or compactor), many readers.
pub trait Backend: Send + Sync + 'static {
    /// The value of `key` in `table`, if any.
    fn get(&self, table: Table, key: &[u8]) -> Result<Option<Vec<u8>>>;

    /// The values of `keys` in `table`, in their order: [`Backend::get`]
    /// of each, unless the backend can look up several at once for less.
    fn get_many(&self, table: Table, keys: &[Vec<u8>]) -> Result<Vec<Option<Vec<u8>>>> {
        keys.iter().map(|k| self.get(table, k)).collect()
    }

    /// Calls `visit` for each entry with `from <= key < to` (`to = None`: no upper
    /// bound), in key order, until it returns `false`.
    fn scan(
        &self,
        table: Table,
        from: &[u8],
        to: Option<&[u8]>,
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()>;

    /// Applies the batch atomically. With `sync`, returns only once it is on stable
    /// storage; concurrent synced writes may share one sync.
    fn write(&self, batch: WriteBatch, sync: bool) -> Result<()>;

    /// Puts every write made so far (synced or not) on stable storage.
    fn sync(&self) -> Result<()>;

    /// Bytes the backend occupies (on disk, or in memory for the memory backend).
    fn size_bytes(&self) -> u64;

    /// Bytes of live data: [`Backend::size_bytes`] less what deleted and
    /// overwritten entries still hold until [`Backend::reclaim_space`].
    fn size_in_use_bytes(&self) -> u64;

    /// Calls `read` with a consistent view of every table as of one moment: no
    /// write batch is seen in part, and later writes are not seen at all.
    /// Writers are not blocked while `read` runs.
    fn read_snapshot(&self, read: &mut dyn FnMut(&dyn BackendView) -> Result<()>) -> Result<()>;

    /// Rewrites storage so that deleted and overwritten entries stop taking
    /// space (etcd's defragmentation). Reads and writes go on meanwhile.
    fn reclaim_space(&self) -> Result<()>;

    /// Sets the gauges of the memory the backend holds outside the Rust
    /// heap (RocksDB's `hark_rocksdb_memory_bytes`), if it has any.
    fn record_memory(&self);
}

/// A read-only, point-in-time view of a backend (see [`Backend::read_snapshot`]).
pub trait BackendView {
    /// As [`Backend::get`], in the view.
    fn get(&self, table: Table, key: &[u8]) -> Result<Option<Vec<u8>>>;

    /// As [`Backend::scan`], over the view.
    fn scan(
        &self,
        table: Table,
        from: &[u8],
        to: Option<&[u8]>,
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()>;
}

/// A shared backend, so a test can reopen a store over the same in-memory data.
impl<B: Backend> Backend for std::sync::Arc<B> {
    fn get(&self, table: Table, key: &[u8]) -> Result<Option<Vec<u8>>> {
        (**self).get(table, key)
    }

    fn get_many(&self, table: Table, keys: &[Vec<u8>]) -> Result<Vec<Option<Vec<u8>>>> {
        (**self).get_many(table, keys)
    }

    fn scan(
        &self,
        table: Table,
        from: &[u8],
        to: Option<&[u8]>,
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        (**self).scan(table, from, to, visit)
    }

    fn write(&self, batch: WriteBatch, sync: bool) -> Result<()> {
        (**self).write(batch, sync)
    }

    fn sync(&self) -> Result<()> {
        (**self).sync()
    }

    fn size_bytes(&self) -> u64 {
        (**self).size_bytes()
    }

    fn size_in_use_bytes(&self) -> u64 {
        (**self).size_in_use_bytes()
    }

    fn read_snapshot(&self, read: &mut dyn FnMut(&dyn BackendView) -> Result<()>) -> Result<()> {
        (**self).read_snapshot(read)
    }

    fn reclaim_space(&self) -> Result<()> {
        (**self).reclaim_space()
    }

    fn record_memory(&self) {
        (**self).record_memory()
    }
}
