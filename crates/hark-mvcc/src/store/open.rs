//! Opening a store: the key index, leases, alarms and records rebuilt from
//! the backend, an interrupted compaction finished, the committer and
//! compactor threads started.

#[cfg(any(feature = "rocksdb", feature = "fjall"))]
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize};

use parking_lot::{Mutex, RwLock};

use super::checkpoint;
use super::committer::Committer;
use super::compactor::{Compaction, run_compactor};
use super::load::{Loaded, load_state, load_state_in};
use super::shared::{Job, Shared, SizeCache, StoreOptions};
use super::{BackendClosed, Store, StoreInner};
use crate::alarm::AlarmKind;
use crate::backend::{Backend, MemoryBackend, Table};
use crate::error::{Error, Result};
use crate::layout::META_RESTORING;

impl Store {
    /// A probe that turns true once every clone of this store is gone and
    /// the backend is closed.
    pub fn backend_closed(&self) -> BackendClosed {
        BackendClosed(self.inner.shared.closed.0.clone())
    }

    /// Opens (or creates) a store in directory `path` on
    /// [`StoreOptions::backend`] (RocksDB or fjall): the
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
    #[cfg(any(feature = "rocksdb", feature = "fjall"))]
    pub fn open(path: impl AsRef<Path>, options: StoreOptions) -> Result<Store> {
        let path = path.as_ref();
        Store::open_over(
            options.backend.open(path)?,
            options,
            Some(path.to_path_buf()),
        )
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
        Store::open_over(backend, options, None)
    }

    /// [`Store::with_backend`], with the key index's checkpoint kept in
    /// `checkpoint_dir` (the store's directory) when given.
    fn open_over(
        backend: Box<dyn Backend>,
        options: StoreOptions,
        checkpoint_dir: Option<PathBuf>,
    ) -> Result<Store> {
        if backend.get(Table::Meta, META_RESTORING)?.is_some() {
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
            usage,
            current,
            scheduled,
            finished,
            checkpoint,
        } = match &checkpoint_dir {
            Some(dir) => load_state_in(backend.as_ref(), options.usage_depth, dir)?,
            None => load_state(backend.as_ref(), options.usage_depth)?,
        };
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
            usage: Mutex::new(usage),
            records_generation: AtomicU64::new(1),
            listeners: Default::default(),
            sizes: SizeCache::default(),
            reclaiming: Mutex::new(()),
            images_reading: AtomicUsize::new(0),
            reclaimable: AtomicU64::new(0),
            compacting: Mutex::new(()),
            generation: AtomicU64::new(0),
            options,
            checkpoint_dir: checkpoint_dir.clone(),
            finished_compaction: Mutex::new((finished, Vec::new())),
            checkpoint_writer: Mutex::new(()),
            checkpoint_file: Mutex::new(()),
            checkpoint_due: Default::default(),
            opened_from_checkpoint: checkpoint.map(|(revision, _)| revision),
            closing: Default::default(),
            closed: Default::default(),
        });
        // A checkpoint's index is compacted at `scheduled` already (it is
        // used only when no compaction was under way).
        if scheduled > 0 && checkpoint.is_none() {
            let dropped = shared.index.write().compact(scheduled);
            if scheduled > finished {
                // etcd's line for a compaction a stop interrupted.
                tracing::info!(
                    "scheduled-compact-revision" = scheduled,
                    "resume scheduled compaction"
                );
                shared.delete_compacted(scheduled, dropped)?;
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
        let mut threads = vec![committer_thread, compactor];
        if let Some(dir) = checkpoint_dir {
            let shared = shared.clone();
            let committer = Arc::downgrade(&committer);
            threads.push(
                std::thread::Builder::new()
                    .name("hark-mvcc-checkpoint".into())
                    .spawn(move || checkpoint::run(shared, committer, dir, checkpoint))
                    .map_err(|e| Error::Backend(format!("cannot start the checkpointer: {e}")))?,
            );
        }
        Ok(Store {
            inner: Arc::new(StoreInner {
                shared,
                jobs: Some(jobs_tx),
                committer: Some(committer),
                threads,
            }),
        })
    }
}
