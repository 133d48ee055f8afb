use std::collections::BTreeMap;
use std::ops::Bound;

use parking_lot::RwLock;

use super::{Backend, BatchOp, Table, WriteBatch};
use crate::error::Result;

/// An in-memory [`Backend`] for tests and benchmarks of the layers above storage.
#[derive(Default)]
pub struct MemoryBackend {
    tables: RwLock<[BTreeMap<Vec<u8>, Vec<u8>>; 2]>,
}

impl MemoryBackend {
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
        let tables = self.tables.read();
        let upper = to.map_or(Bound::Unbounded, Bound::Excluded);
        for (k, v) in tables[slot(table)].range::<[u8], _>((Bound::Included(from), upper)) {
            if !visit(k, v) {
                break;
            }
        }
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
}
