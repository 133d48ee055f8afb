//! The raft log and vote in their own RocksDB, beside the store's.
//!
//! Each append (a batch of proposals: many writes) is written and fsynced in
//! one RocksDB write before openraft is told the entries are durable
//! (openraft's `LogFlushed` contract): one fsync per group of writes on a
//! member. openraft 0.9 awaits each append's flush before the next, so the
//! sync runs on the calling task (`block_in_place`): a hand-off to a sync
//! thread and back only added latency. The store applies committed entries
//! without syncing; a restart re-applies from its recorded log position.

// openraft's traits return its `StorageError` (large); helpers return it too.
#![allow(clippy::result_large_err)]

use std::fmt::Debug;
use std::ops::{Bound, RangeBounds};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use openraft::storage::{LogFlushed, LogState, RaftLogReader, RaftLogStorage};
use openraft::{StorageIOError, Vote};
use rocksdb::{
    ColumnFamilyDescriptor, DB, Direction, IteratorMode, Options, WriteBatch, WriteOptions,
};

use crate::types::{Entry, LogId, StorageError, TypeConfig, decode, encode};

const CF_LOGS: &str = "logs";
const CF_STATE: &str = "state";
const KEY_VOTE: &[u8] = b"vote";
const KEY_COMMITTED: &[u8] = b"committed";
const KEY_PURGED: &[u8] = b"last_purged";
const KEY_IDENTITY: &[u8] = b"identity";

/// The log store handed to openraft; clones share one database.
#[derive(Clone)]
pub struct LogStore {
    inner: Arc<Inner>,
}

struct Inner {
    db: DB,
    /// `false` only for `--unsafe-no-fsync` (tests, benchmarks): nothing is
    /// synced and appends are reported durable at once.
    fsync: bool,
    floor: PurgeFloor,
}

/// How far the log may be purged: the last log id of the snapshot whose meta
/// is on disk (openraft requires the purged log to end at or before the
/// snapshot).
///
/// openraft 0.9 purges the log for an installed snapshot before the state
/// machine has finished installing it: a member killed in between restarted
/// with its log purged past its snapshot, and openraft refused to start
/// (found by the fault suite's kill-catching-up). So a purge beyond the floor
/// stops at it. When openraft reads the log state (at start) and the entries
/// after the last purge up to the floor are not all there (a follower never
/// receives what a snapshot replaced), they are purged then, so the log is
/// contiguous after its last purged id.
#[derive(Clone, Default)]
pub struct PurgeFloor(Arc<parking_lot::Mutex<Option<LogId>>>);

impl PurgeFloor {
    pub fn raise(&self, log_id: LogId) {
        let mut floor = self.0.lock();
        if floor.is_none_or(|f| f.index < log_id.index) {
            *floor = Some(log_id);
        }
    }

    fn get(&self) -> Option<LogId> {
        *self.0.lock()
    }
}

impl LogStore {
    /// Opens (or creates) the log database in `path`; `fsync: false` gives up
    /// durability (etcd's `--unsafe-no-fsync`).
    pub fn open(path: &Path, fsync: bool, floor: PurgeFloor) -> Result<LogStore, String> {
        let mut opts = Options::default();
        opts.create_if_missing(true);
        opts.create_missing_column_families(true);
        opts.set_keep_log_file_num(4);
        let cfs = [CF_LOGS, CF_STATE].map(|n| ColumnFamilyDescriptor::new(n, Options::default()));
        let db = DB::open_cf_descriptors(&opts, path, cfs)
            .map_err(|e| format!("opening the raft log in {}: {e}", path.display()))?;
        let inner = Arc::new(Inner { db, fsync, floor });
        Ok(LogStore { inner })
    }

    /// Turns true once every clone (openraft hands them to its tasks) is
    /// dropped and the database is closed.
    pub fn closed_probe(&self) -> impl Fn() -> bool + Send + Sync + 'static {
        let weak = Arc::downgrade(&self.inner);
        move || weak.strong_count() == 0
    }

    /// The `(member id, cluster id)` this log belongs to, once recorded.
    pub fn identity(&self) -> Result<Option<(u64, u64)>, String> {
        self.get_state(KEY_IDENTITY).map_err(|e| e.to_string())
    }

    /// Records the ids (synced): a restart keeps them whatever the flags say.
    pub fn save_identity(&self, ids: (u64, u64)) -> Result<(), String> {
        let mut batch = WriteBatch::default();
        batch.put_cf(self.cf(CF_STATE), KEY_IDENTITY, encode(&ids));
        self.write(batch, true).map_err(|e| e.to_string())
    }

    /// How many entries the log holds in `from..=to`.
    fn count_entries(&self, from: u64, to: u64) -> Result<u64, StorageError> {
        let start = index_key(from);
        let it = self.db().iterator_cf(
            self.cf(CF_LOGS),
            IteratorMode::From(&start, Direction::Forward),
        );
        let mut n = 0;
        for item in it {
            let (k, _) = item.map_err(|e| StorageIOError::read_logs(&e))?;
            if k.as_ref() > index_key(to).as_slice() {
                break;
            }
            n += 1;
        }
        Ok(n)
    }

    /// Whether the store has applied entries past the whole log (its last
    /// entry, or its last purge): a snapshot install finished but its meta
    /// was never written.
    pub fn behind(&self, applied: u64) -> Result<bool, String> {
        let purged: Option<LogId> = self.get_state(KEY_PURGED).map_err(|e| e.to_string())?;
        let last = self
            .last_entry_id()
            .map_err(|e| e.to_string())?
            .or(purged)
            .map_or(0, |l| l.index);
        Ok(applied > last)
    }

    /// Deletes the entries up to `upto` and records it as the last purged
    /// (nothing when an equal or later purge is recorded).
    fn purge_upto(&self, upto: LogId) -> Result<(), StorageError> {
        let recorded: Option<LogId> = self.get_state(KEY_PURGED)?;
        if recorded.is_some_and(|r| r.index >= upto.index) {
            return Ok(());
        }
        let mut batch = WriteBatch::default();
        batch.put_cf(self.cf(CF_STATE), KEY_PURGED, encode(&upto));
        batch.delete_range_cf(self.cf(CF_LOGS), index_key(0), index_key(upto.index + 1));
        self.write(batch, false)
            .map_err(|e| StorageIOError::write_logs(&e).into())
    }

    fn db(&self) -> &DB {
        &self.inner.db
    }

    fn cf(&self, name: &str) -> &rocksdb::ColumnFamily {
        self.db()
            .cf_handle(name)
            .expect("column families are created on open")
    }

    fn get_state<T: serde::de::DeserializeOwned>(
        &self,
        key: &[u8],
    ) -> Result<Option<T>, StorageError> {
        let raw = self
            .db()
            .get_cf(self.cf(CF_STATE), key)
            .map_err(|e| StorageIOError::read(&e))?;
        raw.map(|v| decode(&v).map_err(|e| StorageIOError::read(&e).into()))
            .transpose()
    }

    fn write(&self, batch: WriteBatch, sync: bool) -> Result<(), rocksdb::Error> {
        let mut opts = WriteOptions::default();
        opts.set_sync(sync && self.inner.fsync);
        self.db().write_opt(batch, &opts)
    }

    fn last_entry_id(&self) -> Result<Option<LogId>, StorageError> {
        let mut it = self.db().iterator_cf(self.cf(CF_LOGS), IteratorMode::End);
        match it.next() {
            None => Ok(None),
            Some(Err(e)) => Err(StorageIOError::read_logs(&e).into()),
            Some(Ok((_, v))) => {
                let entry: Entry = decode(&v).map_err(|e| StorageIOError::read_logs(&e))?;
                Ok(Some(entry.log_id))
            }
        }
    }
}

fn index_key(index: u64) -> [u8; 8] {
    index.to_be_bytes()
}

impl RaftLogReader<TypeConfig> for LogStore {
    async fn try_get_log_entries<RB: RangeBounds<u64> + Clone + Debug + Send>(
        &mut self,
        range: RB,
    ) -> Result<Vec<Entry>, StorageError> {
        let start = match range.start_bound() {
            Bound::Included(&i) => i,
            Bound::Excluded(&i) => i + 1,
            Bound::Unbounded => 0,
        };
        let mut entries = Vec::new();
        let from = index_key(start);
        let it = self.db().iterator_cf(
            self.cf(CF_LOGS),
            IteratorMode::From(&from, Direction::Forward),
        );
        for item in it {
            let (k, v) = item.map_err(|e| StorageIOError::read_logs(&e))?;
            let index = u64::from_be_bytes(k.as_ref().try_into().map_err(|_| {
                StorageIOError::read_logs(&std::io::Error::other("malformed log key"))
            })?);
            if !range.contains(&index) {
                break;
            }
            entries.push(decode(&v).map_err(|e| StorageIOError::read_logs(&e))?);
        }
        Ok(entries)
    }
}

impl RaftLogStorage<TypeConfig> for LogStore {
    type LogReader = LogStore;

    async fn get_log_state(&mut self) -> Result<LogState<TypeConfig>, StorageError> {
        // A gap below the floor (left by a snapshot install and a purge cut
        // short by a crash) would stop openraft reading the log: purge it.
        if let Some(floor) = self.inner.floor.get() {
            let purged: Option<LogId> = self.get_state(KEY_PURGED)?;
            let from = purged.map_or(0, |p| p.index + 1);
            if from <= floor.index
                && self.count_entries(from, floor.index)? < floor.index + 1 - from
            {
                self.purge_upto(floor)?;
            }
        }
        let last_purged_log_id: Option<LogId> = self.get_state(KEY_PURGED)?;
        let last_log_id = self.last_entry_id()?.or(last_purged_log_id);
        Ok(LogState {
            last_purged_log_id,
            last_log_id,
        })
    }

    async fn get_log_reader(&mut self) -> Self::LogReader {
        self.clone()
    }

    async fn save_vote(&mut self, vote: &Vote<u64>) -> Result<(), StorageError> {
        let mut batch = WriteBatch::default();
        batch.put_cf(self.cf(CF_STATE), KEY_VOTE, encode(vote));
        // A vote must survive a crash before it is sent: synced here.
        self.write(batch, true)
            .map_err(|e| StorageIOError::write_vote(&e).into())
    }

    async fn read_vote(&mut self) -> Result<Option<Vote<u64>>, StorageError> {
        self.get_state(KEY_VOTE)
    }

    async fn save_committed(&mut self, committed: Option<LogId>) -> Result<(), StorageError> {
        // A hint for restarts (apply up to it at once); losing it is harmless.
        let mut batch = WriteBatch::default();
        batch.put_cf(self.cf(CF_STATE), KEY_COMMITTED, encode(&committed));
        self.write(batch, false)
            .map_err(|e| StorageIOError::write(&e).into())
    }

    async fn read_committed(&mut self) -> Result<Option<LogId>, StorageError> {
        Ok(self.get_state::<Option<LogId>>(KEY_COMMITTED)?.flatten())
    }

    async fn append<I>(
        &mut self,
        entries: I,
        callback: LogFlushed<TypeConfig>,
    ) -> Result<(), StorageError>
    where
        I: IntoIterator<Item = Entry> + Send,
        I::IntoIter: Send,
    {
        let mut batch = WriteBatch::default();
        let cf = self.cf(CF_LOGS);
        for entry in entries {
            batch.put_cf(cf, index_key(entry.log_id.index), encode(&entry));
        }
        let started = Instant::now();
        // The fsync blocks this thread; a multi-threaded runtime moves its
        // other tasks elsewhere meanwhile (tests run single-threaded ones).
        let multi_threaded = tokio::runtime::Handle::current().runtime_flavor()
            == tokio::runtime::RuntimeFlavor::MultiThread;
        let written = if multi_threaded && self.inner.fsync {
            tokio::task::block_in_place(|| self.write(batch, true))
        } else {
            self.write(batch, true)
        };
        if self.inner.fsync {
            metrics::histogram!("etcd_disk_wal_fsync_duration_seconds")
                .record(started.elapsed().as_secs_f64());
        }
        written.map_err(|e| StorageIOError::write_logs(&e))?;
        callback.log_io_completed(Ok(()));
        Ok(())
    }

    async fn truncate(&mut self, log_id: LogId) -> Result<(), StorageError> {
        let mut batch = WriteBatch::default();
        batch.delete_range_cf(
            self.cf(CF_LOGS),
            index_key(log_id.index),
            index_key(u64::MAX),
        );
        // Entries a new leader overwrote must not come back after a crash.
        self.write(batch, true)
            .map_err(|e| StorageIOError::write_logs(&e).into())
    }

    async fn purge(&mut self, log_id: LogId) -> Result<(), StorageError> {
        let upto = match self.inner.floor.get() {
            Some(floor) if floor.index < log_id.index => floor,
            Some(_) => log_id,
            // The state machine holds nothing durably yet.
            None => return Ok(()),
        };
        self.purge_upto(upto)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use openraft::{CommittedLeaderId, EntryPayload};

    fn log_id(index: u64) -> LogId {
        LogId::new(CommittedLeaderId::new(2, 1), index)
    }

    fn store_with_entries(dir: &std::path::Path, floor: &PurgeFloor, indexes: &[u64]) -> LogStore {
        let log = LogStore::open(dir, false, floor.clone()).unwrap();
        for &index in indexes {
            let entry = Entry {
                log_id: log_id(index),
                payload: EntryPayload::Blank,
            };
            log.db()
                .put_cf(log.cf(CF_LOGS), index_key(index), encode(&entry))
                .unwrap();
        }
        log
    }

    #[tokio::test]
    async fn a_purge_past_what_the_state_machine_holds_stops_there() {
        let dir = tempfile::tempdir().unwrap();
        let floor = PurgeFloor::default();
        let mut log = store_with_entries(dir.path(), &floor, &(1..=10).collect::<Vec<_>>());
        // Nothing held durably yet: nothing purged.
        log.purge(log_id(8)).await.unwrap();
        assert_eq!(log.try_get_log_entries(0..=10).await.unwrap().len(), 10);
        // A snapshot up to 4 is on disk; openraft asks for 8 (an install it has not
        // finished): only 1..=4 go.
        floor.raise(log_id(4));
        log.purge(log_id(8)).await.unwrap();
        let state = log.get_log_state().await.unwrap();
        assert_eq!(state.last_purged_log_id, Some(log_id(4)));
        let left = log.try_get_log_entries(0..=10).await.unwrap();
        assert_eq!(left.first().map(|e| e.log_id.index), Some(5));
    }

    #[tokio::test]
    async fn the_log_state_read_at_start_purges_up_to_the_floor() {
        // A follower that received a snapshot up to 6 never had 4..=6; it
        // was killed before the purge: 1..=3 and 7..=10 are in its log.
        let dir = tempfile::tempdir().unwrap();
        let floor = PurgeFloor::default();
        let mut log = store_with_entries(dir.path(), &floor, &[0, 1, 2, 3, 7, 8, 9, 10]);
        floor.raise(log_id(6));
        let state = log.get_log_state().await.unwrap();
        assert_eq!(state.last_purged_log_id, Some(log_id(6)));
        assert_eq!(state.last_log_id, Some(log_id(10)));
        let left: Vec<u64> = log
            .try_get_log_entries(0..=10)
            .await
            .unwrap()
            .iter()
            .map(|e| e.log_id.index)
            .collect();
        assert_eq!(left, vec![7, 8, 9, 10], "contiguous after the last purged");
    }

    #[tokio::test]
    async fn a_contiguous_log_keeps_its_entries_below_the_floor_at_start() {
        // The entries a lagging follower may still need stay in the log.
        let dir = tempfile::tempdir().unwrap();
        let floor = PurgeFloor::default();
        let mut log = store_with_entries(dir.path(), &floor, &(0..=10).collect::<Vec<_>>());
        floor.raise(log_id(6));
        let state = log.get_log_state().await.unwrap();
        assert_eq!(state.last_purged_log_id, None);
        assert_eq!(log.try_get_log_entries(0..=10).await.unwrap().len(), 11);
    }
}
