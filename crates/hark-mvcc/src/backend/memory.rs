use std::collections::BTreeMap;
use std::ops::Bound;

use parking_lot::RwLock;

use super::{Backend, BackendView, BatchOp, Table, WriteBatch};
use crate::error::Result;

/// The `kv` and `meta` tables, by [`slot`].
type Tables = [BTreeMap<Vec<u8>, Vec<u8>>; 2];

/// An in-memory [`Backend`] for tests and benchmarks of the layers above
/// storage: nothing survives the process, and syncs do nothing.
#[derive(Default)]
pub struct MemoryBackend {
    tables: RwLock<Tables>,
}

impl MemoryBackend {
    /// An empty backend.
    pub fn new() -> Self {
        Self::default()
    }
}

fn slot(table: Table) -> usize {
    match table {
        Table::Kv => 0,
        Table::Meta => 1,
    }
}

impl Backend for MemoryBackend {
    fn get(&self, table: Table, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(self.tables.read()[slot(table)].get(key).cloned())
    }

    fn scan(
        &self,
        table: Table,
        from: &[u8],
        to: Option<&[u8]>,
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        scan_tables(&self.tables.read(), table, from, to, visit);
        Ok(())
    }

    fn sync(&self) -> Result<()> {
        Ok(())
    }

    fn write(&self, batch: WriteBatch, _sync: bool) -> Result<()> {
        let mut tables = self.tables.write();
        for op in batch.ops {
            match op {
                BatchOp::Put { table, key, value } => {
                    tables[slot(table)].insert(key, value);
                }
                BatchOp::Delete { table, key } => {
                    tables[slot(table)].remove(&key);
                }
            }
        }
        Ok(())
    }

    fn size_bytes(&self) -> u64 {
        let tables = self.tables.read();
        tables
            .iter()
            .flat_map(|t| t.iter())
            .map(|(k, v)| (k.len() + v.len()) as u64)
            .sum()
    }

    /// Nothing lingers after a delete in memory.
    fn size_in_use_bytes(&self) -> u64 {
        self.size_bytes()
    }

    fn read_snapshot(&self, read: &mut dyn FnMut(&dyn BackendView) -> Result<()>) -> Result<()> {
        // A copy, so writers go on while the reader walks it.
        let copy = MemoryView(self.tables.read().clone());
        read(&copy)
    }

    fn reclaim_space(&self) -> Result<()> {
        Ok(())
    }

    /// Its tables are on the Rust heap.
    fn record_memory(&self) {}
}

struct MemoryView(Tables);

impl BackendView for MemoryView {
    fn get(&self, table: Table, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(self.0[slot(table)].get(key).cloned())
    }

    fn scan(
        &self,
        table: Table,
        from: &[u8],
        to: Option<&[u8]>,
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        scan_tables(&self.0, table, from, to, visit);
        Ok(())
    }
}

fn scan_tables(
    tables: &Tables,
    table: Table,
    from: &[u8],
    to: Option<&[u8]>,
    visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
) {
    let upper = to.map_or(Bound::Unbounded, Bound::Excluded);
    for (k, v) in tables[slot(table)].range::<[u8], _>((Bound::Included(from), upper)) {
        if !visit(k, v) {
            break;
        }
    }
}
