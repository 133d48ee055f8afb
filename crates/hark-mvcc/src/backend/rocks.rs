use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use rocksdb::{
    BlockBasedIndexType, BlockBasedOptions, BottommostLevelCompaction, Cache,
    ColumnFamilyDescriptor, CompactOptions, DB, Direction, Env, IteratorMode, Options, ReadOptions,
    SnapshotWithThreadMode, WriteOptions,
};

use super::exit_wait::OpenDatabase;
use super::{Backend, BackendKind, BackendView, BatchOp, Table, WriteBatch, power_loss_simulated};
use crate::error::{Error, Result};

/// Write rate of RocksDB's flushes and compactions while serving. Measured
/// in the maintenance loadtest (1 GiB store, docs/benchmarks.md): put p99
/// during a defragmentation 29.6 ms unlimited, 12.8 ms at 96 MB/s, 8.1 ms
/// at 48 MB/s (idle ~2.2 ms); the defragmentation takes 4.4, 11.2 and 21 s.
const BACKGROUND_WRITE_BYTES_PER_SEC: i64 = 48 << 20;

/// Most write-ahead log kept before the column family holding the oldest of
/// it is flushed.
const MAX_TOTAL_WAL_BYTES: u64 = 128 << 20;

/// RocksDB's block cache, one for every column family of every database
/// this process opens (the store's and the raft log's), index and filter
/// blocks included. Left unset, each column family makes its own of
/// 32 MiB and keeps its files' index and filter blocks outside it: six of
/// them in a member. Reads that miss it are served from the page cache.
const BLOCK_CACHE_BYTES: usize = 16 << 20;

/// Most memory the store database's memtables hold together before the
/// largest is flushed (left unset, each column family may hold two of
/// 64 MiB).
const STORE_MEMTABLE_BYTES: usize = 32 << 20;

/// The process's block cache (see [`BLOCK_CACHE_BYTES`]).
fn block_cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(|| Cache::new_lru_cache(BLOCK_CACHE_BYTES))
}

/// Options for a column family of any database this process opens: its
/// blocks, and its files' index and filter blocks, in the one block cache,
/// so RocksDB's read memory has one bound however many families there are.
pub fn column_family_options() -> Options {
    let mut table = BlockBasedOptions::default();
    table.set_block_cache(block_cache());
    table.set_cache_index_and_filter_blocks(true);
    // The newest files' index and filter blocks stay cached: every read
    // consults them.
    table.set_pin_l0_filter_and_index_blocks_in_cache(true);
    // Index and filters in partitions of a few KiB under a small pinned
    // top level: a point read loads one partition, not a file's whole
    // index. With whole indexes in the 16 MiB cache, a store past ~1.5 M
    // rows of 2 KiB evicted them on every read (measured: a 1,000-key
    // range's p50 went from 100 ms at 1 M keys to 1,155 ms at 1.7 M).
    table.set_index_type(BlockBasedIndexType::TwoLevelIndexSearch);
    table.set_partition_filters(true);
    table.set_metadata_block_size(4096);
    table.set_pin_top_level_index_and_filter(true);
    table.set_cache_index_and_filter_blocks_with_high_priority(true);
    // Rows are read by revision, one `get` each: a filter spares the
    // levels that do not hold it.
    table.set_bloom_filter(10.0, false);
    let mut opts = Options::default();
    opts.set_block_based_table_factory(&table);
    // A compaction's deletions land all over the revision range, so once
    // they reach the next-to-last level RocksDB rewrites the whole last
    // level with them (28 s at 5 M keys). A heavy writer's new level-0
    // files queue meanwhile: with one compaction thread (RocksDB's default
    // of two background jobs) and its default triggers (slow down at 20
    // files, stop at 36) a fill of 30,000 puts/s fell to ~200/s for 10-20 s
    // after each minute's compaction (the scale loadtest at 3-10 M keys).
    opts.set_level_zero_slowdown_writes_trigger(40);
    opts.set_level_zero_stop_writes_trigger(64);
    opts
}

/// The RocksDB [`Backend`]: one column family per [`Table`].
///
/// RocksDB already groups concurrent synced writers into one WAL sync; the store's
/// committer adds its own batching on top, so one sync covers many requests.
pub struct RocksBackend {
    db: DB,
    path: PathBuf,
    /// Declared after `db`, so it is dropped once the database has closed.
    _open: OpenDatabase,
}

/// The fault suite's power-loss simulation ([`power_loss_simulated`]) for a
/// RocksDB database: RocksDB keeps unsynced write-ahead-log writes in its
/// own buffer (`manual_wal_flush`) until a synced write or
/// [`Backend::sync`] pushes them out, so a SIGKILL drops every write not
/// yet synced, as losing power would drop the page cache. Synced writes are
/// synced exactly as without it. (A buffer that fills, at 1 MiB by default,
/// is written out early: those writes survive, as a disk may keep some
/// unsynced writes.) Used for the store's database and the raft log's.
pub fn simulate_power_loss(opts: &mut Options) {
    if power_loss_simulated() {
        opts.set_manual_wal_flush(true);
    }
}

/// The gauge of RocksDB's own memory (not the Rust heap's), labelled by
/// database and kind: `memtables` and `table_readers` (what its open files
/// hold outside the cache) of `store` and `log`, and the `block_cache`
/// they share (database `shared`).
pub const MEMORY_GAUGE: &str = "hark_rocksdb_memory_bytes";

/// Sets [`MEMORY_GAUGE`] for database `name` from RocksDB's own accounts,
/// and for the shared block cache.
pub fn record_memory(name: &'static str, db: &DB) {
    match rocksdb::perf::get_memory_usage_stats(Some(&[db]), None) {
        Ok(stats) => {
            for (kind, bytes) in [
                ("memtables", stats.mem_table_total),
                ("table_readers", stats.mem_table_readers_total),
            ] {
                metrics::gauge!(MEMORY_GAUGE, "db" => name, "kind" => kind).set(bytes as f64);
            }
        }
        Err(e) => tracing::warn!(db = name, "reading RocksDB's memory use: {e}"),
    }
    metrics::gauge!(MEMORY_GAUGE, "db" => "shared", "kind" => "block_cache")
        .set(block_cache().get_usage() as f64);
}

fn backend_err(e: rocksdb::Error) -> Error {
    Error::Backend(e.into_string())
}

impl RocksBackend {
    /// Opens (creating if needed) the database in directory `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        Self::open_with(path.as_ref(), true)
    }

    /// Opens a database for a bulk load (a restore): its flushes and
    /// compactions are not rate-limited, since no client waits on its fsyncs.
    pub(crate) fn open_for_bulk_load(path: impl AsRef<Path>) -> Result<Self> {
        Self::open_with(path.as_ref(), false)
    }

    fn open_with(path: &Path, serving: bool) -> Result<Self> {
        BackendKind::RocksDb.refuse_other_in(path)?;
        let path = path.to_path_buf();
        let mut opts = Options::default();
        opts.create_if_missing(true);
        opts.create_missing_column_families(true);
        // RocksDB's own text logs are not data: keep few, so they neither fill
        // the disk nor count much against the backend quota.
        opts.set_keep_log_file_num(4);
        // Compactions (background, and a defragmentation's full one) run in
        // RocksDB's low-priority pool: at low CPU and I/O priority they give
        // way to the committer's synced writes instead of queueing them.
        let mut env = Env::new().map_err(backend_err)?;
        env.lower_thread_pool_cpu_priority();
        env.lower_thread_pool_io_priority();
        opts.set_env(&env);
        // Flushes and compactions write at most this fast and sync their
        // files a megabyte at a time, so a full compaction (defragmentation)
        // cannot fill the device's queue in front of the WAL's fsync.
        if serving {
            opts.set_ratelimiter(BACKGROUND_WRITE_BYTES_PER_SEC, 100_000, 10);
        }
        opts.set_bytes_per_sync(1 << 20);
        // One flush and three compactions at a time, so level 0 keeps
        // draining while a long compaction of the last level runs (see
        // `column_family_options`). All are held to the one write rate
        // above.
        opts.set_max_background_jobs(4);
        // Every commit group writes the small `meta` table, whose memtable
        // would otherwise keep every WAL file alive until it filled: flush it
        // once the log passes this size, so the WAL stays small (measured:
        // the store was 2.1 GB after a 1 GiB fill without it, 1.15 GB with it).
        opts.set_max_total_wal_size(MAX_TOTAL_WAL_BYTES);
        opts.set_db_write_buffer_size(STORE_MEMTABLE_BYTES);
        simulate_power_loss(&mut opts);
        let cfs =
            Table::ALL.map(|t| ColumnFamilyDescriptor::new(t.name(), column_family_options()));
        let db = DB::open_cf_descriptors(&opts, &path, cfs).map_err(backend_err)?;
        Ok(RocksBackend {
            db,
            path,
            _open: OpenDatabase::count(),
        })
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

    /// RocksDB's batched MultiGet: the keys are sorted and looked up file by
    /// file, each index and filter block consulted once for all the keys
    /// it covers, instead of once per key.
    fn get_many(&self, table: Table, keys: &[Vec<u8>]) -> Result<Vec<Option<Vec<u8>>>> {
        self.db
            .batched_multi_get_cf(self.cf(table), keys, false)
            .into_iter()
            .map(|r| {
                r.map(|v| v.map(|slice| slice.to_vec()))
                    .map_err(backend_err)
            })
            .collect()
    }

    fn scan(
        &self,
        table: Table,
        from: &[u8],
        to: Option<&[u8]>,
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        self.scan_at(None, table, from, to, visit)
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

    fn sync(&self) -> Result<()> {
        self.db.flush_wal(true).map_err(backend_err)
    }

    /// The database's files: the live table files (those of the current
    /// version; a compaction's inputs and outputs are not counted twice while
    /// it runs), plus the write-ahead log and manifest.
    fn size_bytes(&self) -> u64 {
        self.property_sum(&["rocksdb.live-sst-files-size"]) + dir_size_except_tables(&self.path)
    }

    /// RocksDB's estimate of live data in its files, plus what the memtables hold.
    fn size_in_use_bytes(&self) -> u64 {
        self.property_sum(&[
            "rocksdb.estimate-live-data-size",
            "rocksdb.cur-size-all-mem-tables",
        ])
    }

    fn read_snapshot(&self, read: &mut dyn FnMut(&dyn BackendView) -> Result<()>) -> Result<()> {
        let snapshot = self.db.snapshot();
        read(&RocksView {
            backend: self,
            snapshot,
        })
    }

    /// A full manual compaction of every column family. It runs beside
    /// RocksDB's background work (not exclusive), so writes and reads go on.
    fn record_memory(&self) {
        record_memory("store", &self.db);
    }

    fn reclaim_space(&self) -> Result<()> {
        let mut opts = CompactOptions::default();
        opts.set_exclusive_manual_compaction(false);
        // Rewrite the last level too: that is where deleted rows' space is freed.
        opts.set_bottommost_level_compaction(BottommostLevelCompaction::Force);
        for table in Table::ALL {
            let cf = self.cf(table);
            self.db.flush_cf(cf).map_err(backend_err)?;
            self.db
                .compact_range_cf_opt(cf, None::<&[u8]>, None::<&[u8]>, &opts);
        }
        Ok(())
    }
}

impl RocksBackend {
    /// The sum of integer properties over every column family.
    fn property_sum(&self, names: &[&str]) -> u64 {
        Table::ALL
            .iter()
            .flat_map(|t| names.iter().map(move |name| (*t, *name)))
            .map(|(t, name)| {
                self.db
                    .property_int_value_cf(self.cf(t), name)
                    .ok()
                    .flatten()
                    .unwrap_or(0)
            })
            .sum()
    }

    fn scan_at(
        &self,
        snapshot: Option<&SnapshotWithThreadMode<'_, DB>>,
        table: Table,
        from: &[u8],
        to: Option<&[u8]>,
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        let mut read_opts = ReadOptions::default();
        if let Some(to) = to {
            read_opts.set_iterate_upper_bound(to.to_vec());
        }
        if let Some(snapshot) = snapshot {
            read_opts.set_snapshot(snapshot);
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
}

/// A RocksDB snapshot: reads see the database as it was when it was taken.
struct RocksView<'a> {
    backend: &'a RocksBackend,
    snapshot: SnapshotWithThreadMode<'a, DB>,
}

impl BackendView for RocksView<'_> {
    fn get(&self, table: Table, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.snapshot
            .get_cf(self.backend.cf(table), key)
            .map_err(backend_err)
    }

    fn scan(
        &self,
        table: Table,
        from: &[u8],
        to: Option<&[u8]>,
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        self.backend
            .scan_at(Some(&self.snapshot), table, from, to, visit)
    }
}

/// Bytes of the database's files other than its tables (`*.sst`): the
/// write-ahead log, manifest and options. RocksDB's text logs (`LOG*`) are
/// left out: they are diagnostics, not data.
fn dir_size_except_tables(path: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(path) else {
        return 0;
    };
    entries
        .flatten()
        .filter(|e| {
            let name = e.file_name();
            let name = name.as_encoded_bytes();
            !name.starts_with(b"LOG") && !name.ends_with(b".sst")
        })
        .filter_map(|e| e.metadata().ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum()
}
