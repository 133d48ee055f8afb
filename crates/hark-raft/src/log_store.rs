//! The raft log and vote in their own RocksDB, beside the store's.
//!
//! A leader's append of its own proposals (a batch of many writes) is
//! written without sync, and the member's sync thread reports it flushed
//! to openraft once it has synced it: openraft replicates an entry as soon
//! as the append returns and counts the leader toward a commit only once it
//! is flushed, so the leader's fsync overlaps the followers' and a commit
//! is still on a majority's disks. Every other append (a
//! follower's, or a member alone, where there is nothing to overlap) is
//! written and fsynced in one RocksDB write before openraft is told
//! (openraft's `IOFlushed` contract), on the calling task: a hand-off to a
//! sync thread and back only added latency there. The store applies
//! committed entries without syncing; a restart re-applies from its
//! recorded log position.

use std::fmt::Debug;
use std::ops::{Bound, RangeBounds};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Instant;

use openraft::storage::{IOFlushed, LogState, RaftLogReader, RaftLogStorage};
use rocksdb::{
    ColumnFamilyDescriptor, DB, Direction, IteratorMode, Options, WriteBatch, WriteOptions,
};

use crate::durability::LogDurability;
use crate::format::{LOG_FORMAT, decode_entry, encode_entry, upgrade_format_0_entry};
use crate::types::{Entry, LogId, TypeConfig, Vote, decode, encode};

type IoResult<T> = Result<T, std::io::Error>;

/// An error of RocksDB or of decoding, as openraft's storage traits take it.
fn io_err(e: impl std::fmt::Display) -> std::io::Error {
    std::io::Error::other(e.to_string())
}

const CF_LOGS: &str = "logs";
const CF_STATE: &str = "state";
const KEY_VOTE: &[u8] = b"vote";
const KEY_COMMITTED: &[u8] = b"committed";
const KEY_PURGED: &[u8] = b"last_purged";
const KEY_IDENTITY: &[u8] = b"identity";
/// The format of the entries in `logs` (one byte; absent: format 0, a log
/// from before versioning). See [`crate::format`].
const KEY_LOG_FORMAT: &[u8] = b"log_format";

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
    alone: Alone,
    durability: LogDurability,
    /// The vote last saved, and this member's id once known: an append is
    /// the leader's own (synced in the background) when its entries carry
    /// the committed vote of this member.
    vote: parking_lot::Mutex<Option<Vote>>,
    /// openraft's flush callbacks for the leader's own appends, with the
    /// last index each covers: the sync thread calls them once it is synced.
    /// Never more than the appends written and not yet synced, one per
    /// batch the proposer sends at a time; a failed sync empties it (every
    /// callback gets the error and the member stops).
    flush_waiters: parking_lot::Mutex<Vec<(u64, IOFlushed<TypeConfig>)>>,
    member_id: AtomicU64,
    recent: parking_lot::Mutex<RecentEntries>,
    /// The newest committed id openraft reported, not yet written: it rides
    /// along with the next append (or the close) instead of costing a write
    /// of its own per commit. A lagging hint only means a restart applies
    /// less at once; openraft commits the rest again.
    unsaved_committed: parking_lot::Mutex<Option<Option<LogId>>>,
    /// Process exit waits for the database to close (see
    /// `hark_mvcc::backend::OpenDatabase`); after `db`, so it drops after it.
    _open: hark_mvcc::backend::OpenDatabase,
    /// Last, so it drops after `db`: [`LogStore::closed_probe`] turns true
    /// only once RocksDB has released the directory's lock. (An `Arc`'s
    /// strong count reaches zero before its contents are dropped.)
    closed: SetOnDrop,
}

/// Sets its flag when dropped.
struct SetOnDrop(Arc<std::sync::atomic::AtomicBool>);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Release);
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.durability.stop();
        if let Some(committed) = self.unsaved_committed.get_mut().take() {
            let cf = self.db.cf_handle(CF_STATE).expect("created on open");
            let _ = self.db.put_cf(cf, KEY_COMMITTED, encode(&committed));
        }
    }
}

/// Most entries, and roughly most bytes, kept in memory after their append.
const RECENT_ENTRIES: usize = 256;
const RECENT_BYTES: usize = 16 << 20;

/// The newest appended entries, contiguous by index, so the state machine's
/// read right after an append (and the replication to followers that keep
/// up) clone them from memory instead of reading and decoding them back
/// from RocksDB (about 3% of a single member's CPU under put load).
#[derive(Default)]
struct RecentEntries {
    entries: std::collections::VecDeque<(Entry, usize)>,
    bytes: usize,
}

impl RecentEntries {
    fn push(&mut self, entry: Entry, bytes: usize) {
        let follows = self
            .entries
            .back()
            .is_none_or(|(last, _)| last.log_id.index + 1 == entry.log_id.index);
        if !follows {
            self.clear();
        }
        self.bytes += bytes;
        self.entries.push_back((entry, bytes));
        while self.entries.len() > RECENT_ENTRIES || self.bytes > RECENT_BYTES {
            self.pop_front();
        }
    }

    fn pop_front(&mut self) {
        if let Some((_, bytes)) = self.entries.pop_front() {
            self.bytes -= bytes;
        }
    }

    fn pop_back(&mut self) {
        if let Some((_, bytes)) = self.entries.pop_back() {
            self.bytes -= bytes;
        }
    }

    fn clear(&mut self) {
        self.entries.clear();
        self.bytes = 0;
    }

    /// Forgets entries at `index` and after (a truncation).
    fn truncate(&mut self, index: u64) {
        while self
            .entries
            .back()
            .is_some_and(|(e, _)| e.log_id.index >= index)
        {
            self.pop_back();
        }
    }

    /// Forgets entries up to `index` (a purge).
    fn purge(&mut self, index: u64) {
        while self
            .entries
            .front()
            .is_some_and(|(e, _)| e.log_id.index <= index)
        {
            self.pop_front();
        }
    }

    /// Clones of the entries in `start..=end`, if all of them are here.
    fn get(&self, start: u64, end: u64) -> Option<Vec<Entry>> {
        let first = self.entries.front()?.0.log_id.index;
        let last = self.entries.back()?.0.log_id.index;
        if start < first || end > last || start > end {
            return None;
        }
        let from = (start - first) as usize;
        let to = (end - first) as usize;
        Some(
            self.entries
                .range(from..=to)
                .map(|(e, _)| e.clone())
                .collect(),
        )
    }
}

/// Whether this member is the only voter and has no learners, kept current
/// by the replica. Alone, openraft has nothing else to do while the log
/// syncs (no heartbeats, no replication), so the append syncs inline: handing
/// the worker's other tasks to another thread (`block_in_place`) cost more
/// than the fsync it covered on a cluster of one (measured). In a cluster the
/// hand-off keeps heartbeats and replication to the others moving.
#[derive(Clone, Default)]
pub struct Alone(Arc<std::sync::atomic::AtomicBool>);

impl Alone {
    pub fn set(&self, alone: bool) {
        self.0.store(alone, std::sync::atomic::Ordering::Relaxed);
    }

    pub(crate) fn get(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }
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

/// Most memory the log database's memtables hold together before the
/// largest is flushed. Entries are read back soon after they are written
/// (replication, apply) and purged after a snapshot: the memtable only
/// needs to hold the recent ones (left unset, each column family may hold
/// two of 64 MiB).
const LOG_MEMTABLE_BYTES: usize = 16 << 20;

impl LogStore {
    /// Opens (or creates) the log database in `path`; `fsync: false` gives up
    /// durability (etcd's `--unsafe-no-fsync`).
    pub fn open(
        path: &Path,
        fsync: bool,
        floor: PurgeFloor,
        alone: Alone,
    ) -> Result<LogStore, String> {
        hark_mvcc::ensure_private_dir(path)
            .map_err(|e| format!("creating the raft log dir {}: {e}", path.display()))?;
        let mut opts = Options::default();
        opts.create_if_missing(true);
        opts.create_missing_column_families(true);
        opts.set_keep_log_file_num(4);
        opts.set_db_write_buffer_size(LOG_MEMTABLE_BYTES);
        hark_mvcc::backend::simulate_power_loss(&mut opts);
        let cfs = [CF_LOGS, CF_STATE]
            .map(|n| ColumnFamilyDescriptor::new(n, hark_mvcc::backend::column_family_options()));
        let db = DB::open_cf_descriptors(&opts, path, cfs)
            .map_err(|e| format!("opening the raft log in {}: {e}", path.display()))?;
        let inner = Arc::new(Inner {
            db,
            fsync,
            floor,
            alone,
            durability: LogDurability::default(),
            vote: Default::default(),
            flush_waiters: Default::default(),
            member_id: AtomicU64::new(0),
            recent: Default::default(),
            unsaved_committed: Default::default(),
            _open: hark_mvcc::backend::OpenDatabase::count(),
            closed: SetOnDrop(Arc::default()),
        });
        let log = LogStore { inner };
        let in_path = |e: String| format!("the raft log in {}: {e}", path.display());
        log.bring_to_current_format().map_err(in_path)?;
        // What a killed process left written but unsynced is on disk from here.
        if fsync {
            log.db()
                .flush_wal(true)
                .map_err(|e| in_path(e.to_string()))?;
        }
        let last = log.last_entry_id().map_err(|e| in_path(e.to_string()))?;
        log.inner.durability.synced_through(last);
        *log.inner.vote.lock() = log
            .get_state(KEY_VOTE)
            .map_err(|e| in_path(e.to_string()))?;
        if let Some((member_id, _)) = log.identity().map_err(in_path)? {
            log.inner.member_id.store(member_id, Ordering::Relaxed);
        }
        if fsync {
            spawn_sync_thread(Arc::downgrade(&log.inner), log.inner.durability.clone())
                .map_err(|e| in_path(format!("starting its sync thread: {e}")))?;
        }
        Ok(log)
    }

    /// When entries are durable here (shared with the state machine and the
    /// peer transport).
    pub(crate) fn durability(&self) -> LogDurability {
        self.inner.durability.clone()
    }

    /// Whether `first` (an append's first entry) is this member's own as the
    /// leader of the vote it saved last.
    fn leads(&self, first: &LogId) -> bool {
        let member_id = self.inner.member_id.load(Ordering::Relaxed);
        self.inner.vote.lock().is_some_and(|v| {
            v.committed && v.leader_id.node_id == member_id && v.leader_id == first.leader_id
        })
    }

    /// Makes the log's format this build's: a log from before versioning has
    /// every entry rewritten behind a version byte, with the format record,
    /// in one synced write (a crash leaves the old log whole); a log of a
    /// newer format is refused.
    fn bring_to_current_format(&self) -> Result<(), String> {
        let state = self.cf(CF_STATE);
        let recorded = self
            .db()
            .get_cf(state, KEY_LOG_FORMAT)
            .map_err(|e| e.to_string())?;
        match recorded.as_deref() {
            Some([LOG_FORMAT]) => return Ok(()),
            Some([newer]) if *newer > LOG_FORMAT => {
                return Err(format!(
                    "it is in format {newer}, newer than this build's {LOG_FORMAT}: run a newer hark"
                ));
            }
            Some(other) => return Err(format!("unknown log format record {other:?}")),
            None => {}
        }
        let mut batch = WriteBatch::default();
        let mut upgraded = 0u64;
        for item in self.db().iterator_cf(self.cf(CF_LOGS), IteratorMode::Start) {
            let (key, value) = item.map_err(|e| e.to_string())?;
            let current = upgrade_format_0_entry(&value)
                .map_err(|e| format!("entry {key:?} of format 0: {e}"))?;
            batch.put_cf(self.cf(CF_LOGS), key, current);
            upgraded += 1;
        }
        batch.put_cf(state, KEY_LOG_FORMAT, [LOG_FORMAT]);
        self.write(batch, true).map_err(|e| e.to_string())?;
        if upgraded > 0 {
            tracing::info!(
                entries = upgraded,
                format = LOG_FORMAT,
                "rewrote the raft log's entries in the current format"
            );
        }
        Ok(())
    }

    /// Turns true once every clone (openraft hands them to its tasks) is
    /// dropped and the database is closed.
    pub fn closed_probe(&self) -> impl Fn() -> bool + Send + Sync + 'static {
        let closed = self.inner.closed.0.clone();
        move || closed.load(Ordering::Acquire)
    }

    /// Sets the gauge of RocksDB's memory for the log's database while it
    /// is open; holds no clone, so it does not keep the database open.
    pub fn memory_probe(&self) -> impl Fn() + Send + Sync + 'static {
        let inner = Arc::downgrade(&self.inner);
        move || {
            if let Some(inner) = inner.upgrade() {
                hark_mvcc::backend::record_memory("log", &inner.db);
            }
        }
    }

    /// The `(member id, cluster id)` this log belongs to, once recorded.
    pub fn identity(&self) -> Result<Option<(u64, u64)>, String> {
        self.get_state(KEY_IDENTITY).map_err(|e| e.to_string())
    }

    /// Appends `entry` (synced) outside openraft, which is not running:
    /// `--force-new-cluster`'s membership entry.
    pub(crate) fn append_before_start(&self, entry: Entry) -> Result<(), String> {
        let encoded = encode_entry(&entry);
        let mut batch = WriteBatch::default();
        batch.put_cf(self.cf(CF_LOGS), index_key(entry.log_id.index), &encoded);
        self.write(batch, true).map_err(|e| e.to_string())?;
        self.inner.durability.synced_through(Some(entry.log_id));
        self.inner.recent.lock().push(entry, encoded.len());
        Ok(())
    }

    /// Records the ids (synced): a restart keeps them whatever the flags say.
    pub fn save_identity(&self, ids: (u64, u64)) -> Result<(), String> {
        let mut batch = WriteBatch::default();
        batch.put_cf(self.cf(CF_STATE), KEY_IDENTITY, encode(&ids));
        self.write(batch, true).map_err(|e| e.to_string())?;
        self.inner.member_id.store(ids.0, Ordering::Relaxed);
        Ok(())
    }

    /// How many entries the log holds in `from..=to`.
    fn count_entries(&self, from: u64, to: u64) -> IoResult<u64> {
        let start = index_key(from);
        let it = self.db().iterator_cf(
            self.cf(CF_LOGS),
            IteratorMode::From(&start, Direction::Forward),
        );
        let mut n = 0;
        for item in it {
            let (k, _) = item.map_err(io_err)?;
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
    fn purge_upto(&self, upto: LogId) -> IoResult<()> {
        let recorded: Option<LogId> = self.get_state(KEY_PURGED)?;
        if recorded.is_some_and(|r| r.index >= upto.index) {
            return Ok(());
        }
        self.inner.recent.lock().purge(upto.index);
        let mut batch = WriteBatch::default();
        batch.put_cf(self.cf(CF_STATE), KEY_PURGED, encode(&upto));
        batch.delete_range_cf(self.cf(CF_LOGS), index_key(0), index_key(upto.index + 1));
        self.write(batch, false).map_err(io_err)
    }

    /// Writes `entries` at the end of the log (see the module doc for when
    /// that syncs).
    fn write_entries(&self, entries: impl IntoIterator<Item = Entry>) -> IoResult<Appended> {
        let mut batch = WriteBatch::default();
        let cf = self.cf(CF_LOGS);
        let mut appended = Vec::new();
        for entry in entries {
            let encoded = encode_entry(&entry);
            batch.put_cf(cf, index_key(entry.log_id.index), &encoded);
            appended.push((entry, encoded.len()));
        }
        let (Some((first, _)), Some((last, _))) = (appended.first(), appended.last()) else {
            return Ok(Appended::Synced);
        };
        let (first, last) = (first.log_id, last.log_id);
        if let Some(committed) = self.inner.unsaved_committed.lock().take() {
            batch.put_cf(self.cf(CF_STATE), KEY_COMMITTED, encode(&committed));
        }
        // A leader's own entries in a cluster: written now, synced by the
        // sync thread while openraft replicates them (see the module doc).
        let in_cluster = self.inner.fsync && !self.inner.alone.get();
        let in_background = in_cluster && self.leads(&first);
        let sync = !in_background && !hark_mvcc::chaos::mutation("log-append-unsynced");
        let started = Instant::now();
        // The fsync blocks this thread; in a cluster a multi-threaded runtime
        // moves its other tasks elsewhere meanwhile (tests run single-threaded
        // ones). See `Alone` for a cluster of one.
        let written = if sync
            && in_cluster
            && tokio::runtime::Handle::current().runtime_flavor()
                == tokio::runtime::RuntimeFlavor::MultiThread
        {
            tokio::task::block_in_place(|| self.write(batch, sync))
        } else {
            self.write(batch, sync)
        };
        let took = started.elapsed().as_secs_f64();
        if sync && self.inner.fsync {
            metrics::histogram!("etcd_disk_wal_fsync_duration_seconds").record(took);
        }
        // etcd's WAL write series: here the log's batch write (its fsync
        // included when the append syncs), and the bytes of the entries.
        metrics::histogram!("etcd_disk_wal_write_duration_seconds").record(took);
        let bytes: usize = appended.iter().map(|(_, len)| len).sum();
        metrics::gauge!("etcd_disk_wal_write_bytes_total").increment(bytes as f64);
        crate::stages::record("log_write", started);
        written.map_err(io_err)?;
        {
            let mut recent = self.inner.recent.lock();
            for (entry, bytes) in appended {
                recent.push(entry, bytes);
            }
        }
        Ok(if in_background {
            self.inner.durability.written_unsynced(last);
            Appended::SyncingInBackground(last.index)
        } else {
            self.inner.durability.synced_through(Some(last));
            Appended::Synced
        })
    }

    fn db(&self) -> &DB {
        &self.inner.db
    }

    fn cf(&self, name: &str) -> &rocksdb::ColumnFamily {
        self.db()
            .cf_handle(name)
            .expect("column families are created on open")
    }

    fn get_state<T: serde::de::DeserializeOwned>(&self, key: &[u8]) -> IoResult<Option<T>> {
        let raw = self.db().get_cf(self.cf(CF_STATE), key).map_err(io_err)?;
        raw.map(|v| decode(&v).map_err(io_err)).transpose()
    }

    fn write(&self, batch: WriteBatch, sync: bool) -> Result<(), rocksdb::Error> {
        let mut opts = WriteOptions::default();
        opts.set_sync(sync && self.inner.fsync);
        self.db().write_opt(batch, &opts)
    }

    fn last_entry_id(&self) -> IoResult<Option<LogId>> {
        let mut it = self.db().iterator_cf(self.cf(CF_LOGS), IteratorMode::End);
        match it.next() {
            None => Ok(None),
            Some(Err(e)) => Err(io_err(e)),
            Some(Ok((_, v))) => {
                let entry = decode_entry(&v).map_err(io_err)?;
                Ok(Some(entry.log_id))
            }
        }
    }
}

/// The member's sync thread: syncs what leader appends wrote, one fsync for
/// all written since the last. It holds the log only while syncing, so the
/// log still closes when openraft drops it (the thread then ends).
fn spawn_sync_thread(log: Weak<Inner>, durability: LogDurability) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("hark-log-sync".into())
        .spawn(move || {
            while let Some(job) = durability.next_job() {
                let Some(inner) = log.upgrade() else { return };
                let started = Instant::now();
                // The two mutations that break the durability rules run on
                // a slow disk, where breaking them has a window to show.
                if hark_mvcc::chaos::mutation("apply-before-leader-durable")
                    || hark_mvcc::chaos::mutation("commit-before-leader-durable")
                {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                let synced = inner.db.flush_wal(true).map_err(|e| e.to_string());
                metrics::histogram!("etcd_disk_wal_fsync_duration_seconds")
                    .record(started.elapsed().as_secs_f64());
                if let Err(e) = &synced {
                    tracing::error!(error = %e, "syncing the raft log failed");
                }
                durability.job_done(job, synced.clone());
                call_flush_waiters(&inner, synced);
                drop(inner);
            }
        })
        .map(drop)
}

/// Tells openraft the leader's appends are flushed once they are synced:
/// those the last sync covered, or all of them when a sync failed (the
/// member then stops).
fn call_flush_waiters(inner: &Inner, synced: Result<(), String>) {
    let durable = inner.durability.durable_index();
    let ready: Vec<_> = {
        let mut waiters = inner.flush_waiters.lock();
        if synced.is_err() {
            std::mem::take(&mut *waiters)
        } else {
            let (ready, waiting) = std::mem::take(&mut *waiters)
                .into_iter()
                .partition(|(last, _)| *last <= durable);
            *waiters = waiting;
            ready
        }
    };
    for (_, callback) in ready {
        callback.io_completed(synced.clone().map_err(io_err));
    }
}

/// How an append reached the disk.
#[derive(Debug, PartialEq, Eq)]
enum Appended {
    /// Synced before the append returned (or fsync is off).
    Synced,
    /// Written up to this index; the sync thread syncs it (a leader's own
    /// entries) and then reports it flushed.
    SyncingInBackground(u64),
}

fn index_key(index: u64) -> [u8; 8] {
    index.to_be_bytes()
}

impl RaftLogReader<TypeConfig> for LogStore {
    async fn try_get_log_entries<RB: RangeBounds<u64> + Clone + Debug + Send>(
        &mut self,
        range: RB,
    ) -> IoResult<Vec<Entry>> {
        let start = match range.start_bound() {
            Bound::Included(&i) => i,
            Bound::Excluded(&i) => i + 1,
            Bound::Unbounded => 0,
        };
        let end = match range.end_bound() {
            Bound::Included(&i) => Some(i),
            Bound::Excluded(&0) => return Ok(Vec::new()),
            Bound::Excluded(&i) => Some(i - 1),
            Bound::Unbounded => None,
        };
        self.read_entries(start, end, usize::MAX)
    }

    /// At least one entry, and then no more than one append can carry
    /// ([`crate::network::APPEND_BYTES`]): a follower far behind is sent
    /// that much at a time, and reading openraft's 64 entries of a bulk
    /// load (megabytes each time) to send a few of them took most of a
    /// leader's time while a new member caught up.
    async fn limited_get_log_entries(&mut self, start: u64, end: u64) -> IoResult<Vec<Entry>> {
        if start >= end {
            return Ok(Vec::new());
        }
        self.read_entries(start, Some(end - 1), crate::network::APPEND_BYTES)
    }

    async fn read_vote(&mut self) -> IoResult<Option<Vote>> {
        self.get_state(KEY_VOTE)
    }
}

impl LogStore {
    /// The entries from `start` up to `end` (inclusive; `None`: the last),
    /// as many as fit in `max_bytes` encoded ([`entries_within`]).
    fn read_entries(&self, start: u64, end: Option<u64>, max_bytes: usize) -> IoResult<Vec<Entry>> {
        if let Some(end) = end
            && let Some(mut entries) = self.inner.recent.lock().get(start, end)
        {
            if max_bytes < usize::MAX {
                entries.truncate(entries_within(&entries, max_bytes).0);
            }
            return Ok(entries);
        }
        let mut entries = Vec::new();
        let mut bytes = 0usize;
        let from = index_key(start);
        let it = self.db().iterator_cf(
            self.cf(CF_LOGS),
            IteratorMode::From(&from, Direction::Forward),
        );
        for item in it {
            let (k, v) = item.map_err(io_err)?;
            let index = u64::from_be_bytes(
                k.as_ref()
                    .try_into()
                    .map_err(|_| io_err("malformed log key"))?,
            );
            if end.is_some_and(|end| index > end) {
                break;
            }
            let entry = decode_entry(&v).map_err(io_err)?;
            bytes = bytes.saturating_add(encoded_size(&entry));
            if bytes > max_bytes && !entries.is_empty() {
                break;
            }
            entries.push(entry);
        }
        Ok(entries)
    }
}

/// An entry's size in an append (as [`crate::network`] cuts appends).
fn encoded_size(entry: &Entry) -> usize {
    postcard::experimental::serialized_size(entry).unwrap_or(usize::MAX)
}

/// How many of `entries`, from the first, fit in `max_bytes` encoded (at
/// least one, if there is any), and the bytes those take: an append's cut
/// and a limited read of the log make the same one.
pub(crate) fn entries_within(entries: &[Entry], max_bytes: usize) -> (usize, usize) {
    let mut bytes = 0usize;
    let mut keep = 0;
    for e in entries {
        let next = bytes.saturating_add(encoded_size(e));
        if next > max_bytes && keep > 0 {
            break;
        }
        bytes = next;
        keep += 1;
    }
    (keep, bytes)
}

impl RaftLogStorage<TypeConfig> for LogStore {
    type LogReader = LogStore;

    async fn get_log_state(&mut self) -> IoResult<LogState<TypeConfig>> {
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

    async fn save_vote(&mut self, vote: &Vote) -> IoResult<()> {
        let mut batch = WriteBatch::default();
        batch.put_cf(self.cf(CF_STATE), KEY_VOTE, encode(vote));
        // A vote must survive a crash before it is sent: synced here.
        self.write(batch, true).map_err(io_err)?;
        *self.inner.vote.lock() = Some(*vote);
        Ok(())
    }

    async fn save_committed(&mut self, committed: Option<LogId>) -> IoResult<()> {
        // A hint for restarts (apply up to it at once); losing it is harmless.
        *self.inner.unsaved_committed.lock() = Some(committed);
        if let Some(id) = committed {
            metrics::gauge!("etcd_server_proposals_committed_total").set(id.index as f64);
        }
        Ok(())
    }

    async fn read_committed(&mut self) -> IoResult<Option<LogId>> {
        if let Some(committed) = *self.inner.unsaved_committed.lock() {
            return Ok(committed);
        }
        Ok(self.get_state::<Option<LogId>>(KEY_COMMITTED)?.flatten())
    }

    async fn append<I>(&mut self, entries: I, callback: IOFlushed<TypeConfig>) -> IoResult<()>
    where
        I: IntoIterator<Item = Entry> + Send,
        I::IntoIter: Send,
    {
        match self.write_entries(entries)? {
            Appended::Synced => callback.io_completed(Ok(())),
            // The two mutations that break the durability rules report
            // the leader's appends flushed at once, as openraft 0.9 was
            // told: openraft then counts the leader toward a commit before
            // its sync, and only the rules stand between that and an
            // acknowledged (or followed) write off the leader's disk.
            Appended::SyncingInBackground(_)
                if hark_mvcc::chaos::mutation("apply-before-leader-durable")
                    || hark_mvcc::chaos::mutation("commit-before-leader-durable") =>
            {
                callback.io_completed(Ok(()))
            }
            Appended::SyncingInBackground(last) => {
                self.inner.flush_waiters.lock().push((last, callback));
                // The sync thread may have synced past it meanwhile.
                call_flush_waiters(&self.inner, Ok(()));
            }
        }
        Ok(())
    }

    async fn truncate_after(&mut self, last: Option<LogId>) -> IoResult<()> {
        let from = last.map_or(0, |l| l.index + 1);
        self.inner.recent.lock().truncate(from);
        let mut batch = WriteBatch::default();
        batch.delete_range_cf(self.cf(CF_LOGS), index_key(from), index_key(u64::MAX));
        // Entries a new leader overwrote must not come back after a crash.
        self.write(batch, true).map_err(io_err)?;
        let last = self.last_entry_id()?;
        self.inner.durability.truncated(last);
        Ok(())
    }

    async fn purge(&mut self, log_id: LogId) -> IoResult<()> {
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
    use openraft::EntryPayload;

    fn log_id(index: u64) -> LogId {
        crate::types::log_id(2, 1, index)
    }

    fn blank_of(leader: (u64, u64), index: u64) -> Entry {
        Entry {
            log_id: crate::types::log_id(leader.0, leader.1, index),
            payload: EntryPayload::Blank,
        }
    }

    /// Member 1's synced log (fsync on), in a cluster, with `vote` saved.
    async fn member_1_log(dir: &std::path::Path, vote: Vote) -> LogStore {
        let mut log = LogStore::open(dir, true, PurgeFloor::default(), Alone::default()).unwrap();
        log.save_identity((1, 7)).unwrap();
        log.save_vote(&vote).await.unwrap();
        log
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_leaders_own_entries_are_synced_in_the_background_and_then_durable() {
        let dir = tempfile::tempdir().unwrap();
        let log = member_1_log(dir.path(), Vote::new_committed(3, 1)).await;
        let durability = log.durability();
        let appended = log
            .write_entries([blank_of((3, 1), 1), blank_of((3, 1), 2)])
            .unwrap();
        assert_eq!(appended, Appended::SyncingInBackground(2));
        // The sync thread makes them durable without another append.
        tokio::time::timeout(std::time::Duration::from_secs(10), durability.wait(2))
            .await
            .expect("the sync thread synced the append")
            .unwrap();
        assert_eq!(durability.durable_index(), 2);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn every_other_append_is_synced_before_it_returns() {
        // A follower of member 2, term 3.
        let dir = tempfile::tempdir().unwrap();
        let log = member_1_log(dir.path(), Vote::new_committed(3, 2)).await;
        let appended = log.write_entries([blank_of((3, 2), 1)]).unwrap();
        assert_eq!(appended, Appended::Synced);
        assert_eq!(log.durability().durable_index(), 1);
        // Its own entries of an earlier term, sent back by a later leader.
        let appended = log.write_entries([blank_of((2, 1), 2)]).unwrap();
        assert_eq!(appended, Appended::Synced);
        drop(log);

        // A candidate (vote not committed) and a member alone.
        let dir = tempfile::tempdir().unwrap();
        let log = member_1_log(dir.path(), Vote::new(4, 1)).await;
        assert_eq!(
            log.write_entries([blank_of((4, 1), 1)]).unwrap(),
            Appended::Synced
        );
        drop(log);
        let dir = tempfile::tempdir().unwrap();
        let log = member_1_log(dir.path(), Vote::new_committed(4, 1)).await;
        log.inner.alone.set(true);
        assert_eq!(
            log.write_entries([blank_of((4, 1), 1)]).unwrap(),
            Appended::Synced
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_reopened_log_is_durable_to_its_end_and_knows_its_leadership() {
        let dir = tempfile::tempdir().unwrap();
        let log = member_1_log(dir.path(), Vote::new_committed(3, 1)).await;
        log.write_entries([blank_of((3, 1), 1), blank_of((3, 1), 2)])
            .unwrap();
        // The sync thread may hold the log a moment longer, mid-sync.
        let closed = log.closed_probe();
        drop(log);
        while !closed() {
            tokio::time::sleep(std::time::Duration::from_millis(1)).await;
        }
        let log =
            LogStore::open(dir.path(), true, PurgeFloor::default(), Alone::default()).unwrap();
        assert_eq!(log.durability().durable_index(), 2);
        assert_eq!(
            log.write_entries([blank_of((3, 1), 3)]).unwrap(),
            Appended::SyncingInBackground(3)
        );
    }

    fn store_with_entries(dir: &std::path::Path, floor: &PurgeFloor, indexes: &[u64]) -> LogStore {
        let log = LogStore::open(dir, false, floor.clone(), Alone::default()).unwrap();
        for &index in indexes {
            let entry = Entry {
                log_id: log_id(index),
                payload: EntryPayload::Blank,
            };
            log.db()
                .put_cf(log.cf(CF_LOGS), index_key(index), encode_entry(&entry))
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

    fn blank(index: u64) -> Entry {
        Entry {
            log_id: log_id(index),
            payload: EntryPayload::Blank,
        }
    }

    fn indexes(entries: &[Entry]) -> Vec<u64> {
        entries.iter().map(|e| e.log_id.index).collect()
    }

    /// A log written before versioning (bare entries, no format record) is
    /// rewritten on open and reads back whole; one of a newer format is
    /// refused at open.
    #[tokio::test]
    async fn a_format_0_log_is_upgraded_and_a_newer_one_refused() {
        let dir = tempfile::tempdir().unwrap();
        let golden = crate::format_golden::entries();
        {
            let log =
                LogStore::open(dir.path(), false, PurgeFloor::default(), Alone::default()).unwrap();
            log.db()
                .delete_cf(log.cf(CF_STATE), KEY_LOG_FORMAT)
                .unwrap();
            for (index, (name, entry)) in golden.iter().enumerate() {
                // The golden files are format 0, as Hark wrote entries then.
                let format_0 = crate::format_golden::golden(name, &encode(entry));
                log.db()
                    .put_cf(log.cf(CF_LOGS), index_key(index as u64 + 1), format_0)
                    .unwrap();
            }
        }
        let mut log =
            LogStore::open(dir.path(), false, PurgeFloor::default(), Alone::default()).unwrap();
        let read = log.try_get_log_entries(1..=3).await.unwrap();
        assert_eq!(read.len(), 3);
        for (got, (name, want)) in read.iter().zip(&golden) {
            assert_eq!(format!("{got:?}"), format!("{want:?}"), "{name}");
        }
        let recorded = log.db().get_cf(log.cf(CF_STATE), KEY_LOG_FORMAT).unwrap();
        assert_eq!(recorded.as_deref(), Some(&[LOG_FORMAT][..]));
        log.db()
            .put_cf(log.cf(CF_STATE), KEY_LOG_FORMAT, [LOG_FORMAT + 1])
            .unwrap();
        drop(log);
        let refused = LogStore::open(dir.path(), false, PurgeFloor::default(), Alone::default())
            .err()
            .unwrap();
        assert!(
            refused.ends_with("it is in format 2, newer than this build's 1: run a newer hark"),
            "{refused}"
        );
    }

    #[test]
    fn recent_entries_answer_only_whole_ranges_they_hold() {
        let mut recent = RecentEntries::default();
        for index in 5..=9 {
            recent.push(blank(index), 10);
        }
        assert_eq!(recent.get(6, 8).map(|e| indexes(&e)), Some(vec![6, 7, 8]));
        assert_eq!(
            recent.get(5, 9).map(|e| indexes(&e)),
            Some(vec![5, 6, 7, 8, 9])
        );
        assert!(recent.get(4, 6).is_none(), "4 is not held");
        assert!(recent.get(9, 10).is_none(), "10 is not held");
        // A truncation forgets 8 and 9; the next append at 8 continues the run.
        recent.truncate(8);
        assert!(recent.get(7, 8).is_none());
        recent.push(blank(8), 10);
        assert_eq!(recent.get(7, 8).map(|e| indexes(&e)), Some(vec![7, 8]));
        // A purge forgets up to 6.
        recent.purge(6);
        assert!(recent.get(6, 7).is_none());
        assert_eq!(recent.get(7, 7).map(|e| indexes(&e)), Some(vec![7]));
        // An entry that does not follow the last one starts a new run.
        recent.push(blank(20), 10);
        assert!(recent.get(7, 8).is_none());
        assert_eq!(recent.get(20, 20).map(|e| indexes(&e)), Some(vec![20]));
        assert_eq!(recent.bytes, 10);
    }

    #[test]
    fn recent_entries_keep_at_most_their_limits() {
        let mut recent = RecentEntries::default();
        for index in 0..(RECENT_ENTRIES as u64 + 10) {
            recent.push(blank(index), 1);
        }
        assert_eq!(recent.entries.len(), RECENT_ENTRIES);
        assert!(recent.get(9, 9).is_none(), "the oldest went first");
        assert!(recent.get(10, 10).is_some());
        for index in 1000..1003 {
            recent.push(blank(index), RECENT_BYTES / 2);
        }
        assert_eq!(indexes(&recent.get(1001, 1002).unwrap()), vec![1001, 1002]);
        assert!(recent.get(1000, 1000).is_none(), "over the byte limit");
    }

    #[tokio::test]
    async fn reads_after_a_truncation_never_see_the_overwritten_entries() {
        let dir = tempfile::tempdir().unwrap();
        let mut log =
            LogStore::open(dir.path(), false, PurgeFloor::default(), Alone::default()).unwrap();
        {
            let mut recent = log.inner.recent.lock();
            for index in 1..=5 {
                recent.push(blank(index), 10);
            }
        }
        for index in 1..=5 {
            log.db()
                .put_cf(
                    log.cf(CF_LOGS),
                    index_key(index),
                    encode_entry(&blank(index)),
                )
                .unwrap();
        }
        log.truncate_after(Some(log_id(2))).await.unwrap();
        let left = log.try_get_log_entries(1..=5).await.unwrap();
        assert_eq!(indexes(&left), vec![1, 2]);
        log.purge_upto(log_id(1)).unwrap();
        let left = log.try_get_log_entries(1..3).await.unwrap();
        assert_eq!(indexes(&left), vec![2]);
    }

    #[tokio::test]
    async fn the_committed_hint_is_kept_in_memory_and_written_at_the_next_append_or_close() {
        let dir = tempfile::tempdir().unwrap();
        let mut log =
            LogStore::open(dir.path(), false, PurgeFloor::default(), Alone::default()).unwrap();
        log.save_committed(Some(log_id(7))).await.unwrap();
        assert_eq!(log.read_committed().await.unwrap(), Some(log_id(7)));
        assert_eq!(
            log.get_state::<Option<LogId>>(KEY_COMMITTED).unwrap(),
            None,
            "no write of its own"
        );
        drop(log);
        let mut log =
            LogStore::open(dir.path(), false, PurgeFloor::default(), Alone::default()).unwrap();
        assert_eq!(
            log.read_committed().await.unwrap(),
            Some(log_id(7)),
            "written at close"
        );
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
