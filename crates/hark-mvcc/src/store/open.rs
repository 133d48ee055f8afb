//! Opening a store: the key index, leases, alarms and records rebuilt from
//! the backend, an interrupted compaction finished, the committer and
//! compactor threads started.

use super::committer::Committer;
use super::compactor::{Compaction, run_compactor};
use super::*;

impl Store {
    /// A probe that turns true once every clone of this store is gone and
    /// the backend is closed.
    pub fn backend_closed(&self) -> BackendClosed {
        BackendClosed(Arc::downgrade(&self.inner.shared))
    }

    /// Opens (or creates) a RocksDB-backed store in directory `path`: the
    /// key index, leases, alarms and records are rebuilt from it, and a
    /// compaction a crash interrupted is finished. Fails on a directory
    /// holding an unfinished restore, or that another store has open.
    ///
    /// ```
    /// use hark_mvcc::{PutRequest, RangeRequest, Store, StoreOptions};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let store = Store::open(dir.path(), StoreOptions::default()).unwrap();
    /// store.put(PutRequest::new("k", "v")).unwrap();
    /// let closed = store.backend_closed();
    /// drop(store);
    /// assert!(closed.is_closed());
    ///
    /// // Acknowledged writes survive a reopen.
    /// let store = Store::open(dir.path(), StoreOptions::default()).unwrap();
    /// assert_eq!(store.current_revision(), 2);
    /// assert_eq!(store.range(&RangeRequest::key("k")).unwrap().kvs[0].value, "v");
    /// ```
    pub fn open(path: impl AsRef<Path>, options: StoreOptions) -> Result<Store> {
        Store::with_backend(Box::new(RocksBackend::open(path)?), options)
    }

    /// A store that lives in memory only (over a [`MemoryBackend`], with
    /// default options): for tests and examples.
    ///
    /// ```
    /// use hark_mvcc::Store;
    ///
    /// let store = Store::in_memory();
    /// assert_eq!(store.current_revision(), 1);
    /// assert_eq!(store.compacted_revision(), 0);
    /// assert_eq!(store.key_count(), 0);
    /// ```
    pub fn in_memory() -> Store {
        Store::with_backend(Box::new(MemoryBackend::new()), StoreOptions::default())
            .expect("an empty memory backend always opens")
    }

    /// Opens a store over any backend: rebuilds the key index from it and finishes
    /// a compaction that a crash interrupted.
    pub fn with_backend(backend: Box<dyn Backend>, options: StoreOptions) -> Result<Store> {
        if backend
            .get(Table::Meta, crate::restore::META_RESTORING)?
            .is_some()
        {
            return Err(Error::Backend(
                "this data dir holds a restore that did not finish; delete it and restore again"
                    .into(),
            ));
        }
        let Loaded {
            index,
            leases,
            alarms,
            records,
            current,
            scheduled,
            finished,
        } = load_state(backend.as_ref())?;
        let shared = Arc::new(Shared {
            backend,
            index: RwLock::new(index),
            leases: Mutex::new(leases),
            committed_rev: AtomicI64::new(current),
            compact_rev: AtomicI64::new(scheduled),
            subscribers: Mutex::new(Vec::new()),
            prev_kv_interest: AtomicUsize::new(0),
            queued_jobs: AtomicUsize::new(0),
            failed: AtomicBool::new(false),
            nospace: AtomicBool::new(alarms.any(AlarmKind::NoSpace)),
            corrupt: AtomicBool::new(alarms.any(AlarmKind::Corrupt)),
            alarms: Mutex::new(alarms),
            records: RwLock::new(records),
            records_generation: AtomicU64::new(1),
            sizes: SizeCache::default(),
            proposals: AtomicU64::new(0),
            reclaiming: Mutex::new(()),
            compacting: Mutex::new(()),
            generation: AtomicU64::new(0),
            options,
        });
        if scheduled > 0 {
            let keep = shared.index.write().compact(scheduled);
            if scheduled > finished {
                tracing::info!(revision = scheduled, "finishing interrupted compaction");
                shared.delete_compacted(scheduled, &keep)?;
            }
        }
        shared.record_gauges();

        let (jobs_tx, jobs_rx) = crossbeam_channel::unbounded::<Job>();
        let (compact_tx, compact_rx) = crossbeam_channel::unbounded::<Compaction>();
        let committer = Arc::new(Mutex::new(Committer::new(shared.clone(), compact_tx)));
        let committer_thread = {
            let committer = committer.clone();
            std::thread::Builder::new()
                .name("hark-mvcc-committer".into())
                .spawn(move || Committer::run(committer, jobs_rx))
                .map_err(|e| Error::Backend(format!("cannot start committer: {e}")))?
        };
        let compactor = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("hark-mvcc-compactor".into())
                .spawn(move || run_compactor(shared, compact_rx))
                .map_err(|e| Error::Backend(format!("cannot start compactor: {e}")))?
        };
        Ok(Store {
            inner: Arc::new(StoreInner {
                shared,
                jobs: Some(jobs_tx),
                committer: Some(committer),
                threads: vec![committer_thread, compactor],
            }),
        })
    }
}

/// The in-memory state rebuilt from a backend's rows and records.
pub(super) struct Loaded {
    pub(super) index: TreeIndex,
    pub(super) leases: LeaseTable,
    pub(super) alarms: AlarmSet,
    pub(super) records: RecordTable,
    pub(super) current: i64,
    pub(super) scheduled: i64,
    pub(super) finished: i64,
}

/// Rebuilds the key index, the lease table and the alarms from `backend`
/// (on open, and after a snapshot is installed in place).
pub(super) fn load_state(backend: &dyn Backend) -> Result<Loaded> {
    let meta = |key: &[u8]| -> Result<i64> {
        Ok(backend
            .get(Table::Meta, key)?
            .and_then(|v| v.try_into().ok().map(i64::from_be_bytes))
            .unwrap_or(0))
    };
    let scheduled = meta(META_SCHEDULED_COMPACT)?;
    let finished = meta(META_FINISHED_COMPACT)?;
    let mut current = meta(META_CURRENT_REV)?.max(1);
    let mut index = TreeIndex::default();
    let mut key_lease: HashMap<Bytes, i64> = HashMap::new();
    let mut bad = None;
    backend.scan(Table::Kv, &[], None, &mut |k, v| {
        let Some((rev, tombstone, kv)) = decode_row(k, v) else {
            bad = Some(k.to_vec());
            return false;
        };
        current = current.max(rev.main);
        // Rows come in revision order, so the last one of a key is its current state.
        if tombstone || kv.lease == 0 {
            key_lease.remove(&kv.key);
        } else {
            key_lease.insert(kv.key.clone(), kv.lease);
        }
        if tombstone {
            index.tombstone(kv.key, rev);
        } else {
            index.put(kv.key, rev, kv.create_revision, kv.version);
        }
        true
    })?;
    if let Some(k) = bad {
        return Err(Error::Backend(format!(
            "corrupt key-value entry at key {k:?}"
        )));
    }
    let mut leases = LeaseTable::default();
    let (from, to) = lease_table::record_range();
    backend.scan(Table::Meta, &from, Some(&to), &mut |k, v| {
        match lease_table::decode_record(k, v) {
            Some((id, ttl)) => leases.grant(id, ttl),
            None => bad = Some(k.to_vec()),
        }
        bad.is_none()
    })?;
    if let Some(k) = bad {
        return Err(Error::Backend(format!("corrupt lease record at key {k:?}")));
    }
    let mut alarms = AlarmSet::default();
    let (from, to) = alarm::record_range();
    backend.scan(Table::Meta, &from, Some(&to), &mut |k, _| {
        match alarm::decode_record(k) {
            Some(a) => {
                alarms.insert(a);
            }
            None => bad = Some(k.to_vec()),
        }
        bad.is_none()
    })?;
    if let Some(k) = bad {
        return Err(Error::Backend(format!("corrupt alarm record at key {k:?}")));
    }
    let mut records = RecordTable::default();
    let (from, to) = records::record_range();
    backend.scan(Table::Meta, &from, Some(&to), &mut |k, v| {
        match records::decode_record_key(k) {
            Some((bucket, key)) => records.put(bucket, key, Bytes::copy_from_slice(v)),
            None => bad = Some(k.to_vec()),
        }
        bad.is_none()
    })?;
    if let Some(k) = bad {
        return Err(Error::Backend(format!("corrupt record at key {k:?}")));
    }
    for (key, lease) in &key_lease {
        leases.attach(key, *lease);
    }
    Ok(Loaded {
        index,
        leases,
        alarms,
        records,
        current,
        scheduled,
        finished,
    })
}
