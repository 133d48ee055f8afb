//! A backend with hooks in front of another: a disk that fails, stalls or is
//! watched, for tests of the layers above storage.

use std::sync::Arc;

use super::{Backend, BackendView, Table, WriteBatch};
use crate::error::Result;

/// Called before a [`Hooked`] backend's reads and writes; an error is
/// returned in place of the operation's own result.
pub trait BackendHooks: Send + Sync + 'static {
    /// Before `get` and `scan` of `table`.
    fn before_read(&self, _table: Table) -> Result<()> {
        Ok(())
    }

    /// Before `write` (with its `sync` flag).
    fn before_write(&self, _sync: bool) -> Result<()> {
        Ok(())
    }
}

/// Shared hooks, so a test keeps a handle on what its hooks record.
impl<H: BackendHooks> BackendHooks for Arc<H> {
    fn before_read(&self, table: Table) -> Result<()> {
        (**self).before_read(table)
    }

    fn before_write(&self, sync: bool) -> Result<()> {
        (**self).before_write(sync)
    }
}

/// `inner` with `hooks` called before its reads and writes; every other
/// operation passes straight through.
pub struct Hooked<B, H> {
    /// The backend that does the work.
    pub inner: B,
    /// Called before `inner`'s reads and writes.
    pub hooks: H,
}

impl<B: Backend, H: BackendHooks> Backend for Hooked<B, H> {
    fn get(&self, table: Table, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.hooks.before_read(table)?;
        self.inner.get(table, key)
    }

    fn scan(
        &self,
        table: Table,
        from: &[u8],
        to: Option<&[u8]>,
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        self.hooks.before_read(table)?;
        self.inner.scan(table, from, to, visit)
    }

    fn write(&self, batch: WriteBatch, sync: bool) -> Result<()> {
        self.hooks.before_write(sync)?;
        self.inner.write(batch, sync)
    }

    fn sync(&self) -> Result<()> {
        self.inner.sync()
    }

    fn size_bytes(&self) -> u64 {
        self.inner.size_bytes()
    }

    fn size_in_use_bytes(&self) -> u64 {
        self.inner.size_in_use_bytes()
    }

    fn read_snapshot(&self, read: &mut dyn FnMut(&dyn BackendView) -> Result<()>) -> Result<()> {
        self.inner.read_snapshot(read)
    }

    fn reclaim_space(&self) -> Result<()> {
        self.inner.reclaim_space()
    }

    fn record_memory(&self) {
        self.inner.record_memory()
    }
}
