//! Storage behind a small trait, in the spirit of TiKV's `engine_traits`: the store
//! sees only [`Backend`], never RocksDB. `RocksBackend` (the default
//! `rocksdb` feature) is the real one; [`MemoryBackend`] keeps the trait
//! honest and makes tests fast. Without the feature this crate, and every
//! crate that needs only the trait, builds with no C++ compiler.

mod hooked;
mod memory;
#[cfg(feature = "rocksdb")]
mod rocks;

pub use hooked::{BackendHooks, Hooked};
pub use memory::MemoryBackend;
#[cfg(feature = "rocksdb")]
pub use rocks::{OpenDatabase, RocksBackend, simulate_power_loss};

use crate::error::Result;

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
}
