//! Maintenance: the backend's sizes, defragmentation, etcd's two hashes and
//! whole-store images for snapshots.

use std::sync::atomic::Ordering;
use std::time::Instant;

use super::Store;
use super::image::StoreImage;
use crate::backend::Table;
use crate::error::{Error, Result};
use crate::layout::{META_LOG_POSITION, hash_row_value, parse_rev_key, rev_key};
use crate::revision::Revision;

/// etcd's `HashKV` answer: a CRC-32C over the key-value history up to
/// `revision`, comparable between members holding the same history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KvHash {
    /// The CRC-32C.
    pub hash: u32,
    /// The store's current revision when the hash was taken (etcd's `header.revision`).
    pub current_revision: i64,
    /// The revision hashed up to (etcd's `hash_revision`).
    pub hash_revision: i64,
    /// The compacted revision the hash was taken under.
    pub compact_revision: i64,
}

impl Store {
    /// Bytes the backend occupies (etcd's `dbSize`), measured at most
    /// 100 ms ago (measuring lists the data dir).
    pub fn db_size(&self) -> u64 {
        self.shared().measure_sizes(false);
        self.shared().sizes.total.load(Ordering::Relaxed)
    }

    /// Bytes of live data in the backend (etcd's `dbSizeInUse`): what
    /// [`Store::defragment`] would shrink [`Store::db_size`] towards.
    pub fn db_size_in_use(&self) -> u64 {
        self.shared().measure_sizes(false);
        self.shared().sizes.in_use.load(Ordering::Relaxed)
    }

    /// Reclaims the space that deleted and compacted revisions still hold
    /// (etcd's defragmentation). Blocks the caller until done; reads, writes
    /// and watches go on meanwhile. Concurrent calls run one after the other.
    pub fn defragment(&self) -> Result<()> {
        let one = self.shared().reclaiming.lock();
        self.defragment_holding(one)
    }

    /// [`Store::defragment`] unless another maintenance is under way (a
    /// defragmentation, or a snapshot reading the store): `Ok(false)` when
    /// it stood aside. For defragmentation that runs by itself.
    pub fn defragment_unless_busy(&self) -> Result<bool> {
        let shared = self.shared();
        if shared.images_reading.load(Ordering::Acquire) > 0 {
            return Ok(false);
        }
        let Some(one) = shared.reclaiming.try_lock() else {
            return Ok(false);
        };
        self.defragment_holding(one).map(|()| true)
    }

    /// Bytes of rows compaction deleted since the last defragmentation in
    /// this process: about what the next one gives back.
    pub fn reclaimable_bytes(&self) -> u64 {
        self.shared().reclaimable.load(Ordering::Relaxed)
    }

    fn defragment_holding(&self, _one: parking_lot::MutexGuard<'_, ()>) -> Result<()> {
        let shared = self.shared();
        // Rows deleted from here on may outlive this reclamation: they count
        // toward the next. A failed one gives its count back.
        let pending = shared.reclaimable.swap(0, Ordering::Relaxed);
        let started = Instant::now();
        let before = shared.backend.size_bytes();
        metrics::gauge!("etcd_disk_defrag_inflight").set(1.0);
        let reclaimed = shared.backend.reclaim_space();
        metrics::gauge!("etcd_disk_defrag_inflight").set(0.0);
        metrics::histogram!("etcd_disk_backend_defrag_duration_seconds")
            .record(started.elapsed().as_secs_f64());
        if let Err(e) = reclaimed {
            shared.reclaimable.fetch_add(pending, Ordering::Relaxed);
            return Err(e);
        }
        shared.measure_sizes(true);
        tracing::info!(
            before,
            after = shared.sizes.total.load(Ordering::Relaxed),
            took = ?started.elapsed(),
            "defragmented"
        );
        Ok(())
    }

    /// etcd's `HashKV`: a CRC-32C (Castagnoli) over the name `key`, then the
    /// backend key and value of each stored revision up to `revision` (0: the
    /// current one). Rows at or below the compacted revision count only if
    /// they are what `kvindex.Keep(revision)` names, so a store whose
    /// compaction has not yet removed them hashes the same as one where it
    /// has. Rows are etcd's own encoding, so the hash equals etcd 3.5.16+'s
    /// for the same history (etcd's cache of hashes taken at compactions is
    /// not kept: hashing below the compacted revision fails).
    pub fn hash_kv(&self, revision: i64) -> Result<KvHash> {
        let started = Instant::now();
        let hashed = self.hash_kv_timed(revision);
        metrics::histogram!("etcd_mvcc_hash_rev_duration_seconds")
            .record(started.elapsed().as_secs_f64());
        hashed
    }

    fn hash_kv_timed(&self, revision: i64) -> Result<KvHash> {
        let shared = self.shared();
        // The index lock is held until the backend view exists: a compaction
        // accepted meanwhile deletes rows only after it has the index, so the
        // view still holds every row the compaction revision read here names.
        let mut index = Some(shared.index.read());
        let current = shared.committed_rev.load(Ordering::Acquire);
        let compacted = shared.compact_rev.load(Ordering::Acquire);
        // etcd allows hashing at exactly the compacted revision.
        if revision > 0 && revision < compacted {
            return Err(Error::Compacted);
        }
        if revision > current {
            return Err(Error::FutureRevision);
        }
        let at = if revision > 0 { revision } else { current };
        // Only rows at or below the compaction are filtered by it.
        let keep = match &index {
            Some(index) if compacted > 0 => index.keep(at),
            _ => Default::default(),
        };
        let upper = rev_key(Revision::new(at + 1, 0), false);
        let lower = Revision::new(compacted + 1, 0);
        let mut hash = crc32c::crc32c(b"key");
        shared.backend.read_snapshot(&mut |view| {
            index.take();
            view.scan(Table::Kv, &[], Some(&upper), &mut |k, v| {
                let Some((rev, tombstone)) = parse_rev_key(k) else {
                    return true;
                };
                let compacted_away = rev < lower && !keep.is_empty() && !keep.contains(&rev);
                // etcd 3.5.16+: a tombstone at the compacted revision is not
                // counted (some members keep it, some do not).
                let edge_tombstone = tombstone && rev.main == compacted && compacted > 0;
                if compacted_away || edge_tombstone {
                    return true;
                }
                hash = crc32c::crc32c_append(hash, k);
                hash = hash_row_value(hash, tombstone, v);
                true
            })
        })?;
        Ok(KvHash {
            hash,
            current_revision: current,
            hash_revision: at,
            compact_revision: compacted,
        })
    }

    /// etcd's `Hash`: a CRC-32C over every table's name and rows, read from
    /// one consistent view, with the revision that view holds. Stable across
    /// restarts: opening a store writes nothing, and the raft log position is
    /// left out (etcd ignores its consistent index and term the same way: a
    /// restarted member's new term appends entries that change no key).
    pub fn hash(&self) -> Result<(u32, i64)> {
        let started = Instant::now();
        let mut hash = 0u32;
        let mut revision = 0;
        self.shared().whole_view(&mut |view| {
            hash = 0;
            revision = StoreImage { view }.revision()?;
            for table in Table::ALL {
                hash = crc32c::crc32c_append(hash, table.name().as_bytes());
                view.scan(table, &[], None, &mut |k, v| {
                    if table == Table::Meta && k == META_LOG_POSITION {
                        return true;
                    }
                    hash = crc32c::crc32c_append(hash, k);
                    let tombstone = table == Table::Kv
                        && parse_rev_key(k).is_some_and(|(_, tombstone)| tombstone);
                    hash = hash_row_value(hash, tombstone, v);
                    true
                })?;
            }
            Ok(())
        })?;
        metrics::histogram!("etcd_mvcc_hash_duration_seconds")
            .record(started.elapsed().as_secs_f64());
        Ok((hash, revision))
    }

    /// Calls `read` with a consistent image of the whole store (see
    /// [`StoreImage`]), taken without blocking writers: never one that a
    /// snapshot install has half-filled.
    pub fn read_image(&self, read: &mut dyn FnMut(&StoreImage<'_>) -> Result<()>) -> Result<()> {
        let shared = self.shared();
        let _reading = Reading::start(&shared.images_reading);
        let started = Instant::now();
        let read = shared.whole_view(&mut |view| read(&StoreImage { view }));
        metrics::histogram!("etcd_disk_backend_snapshot_duration_seconds")
            .record(started.elapsed().as_secs_f64());
        read
    }
}

/// Counts an image being read for as long as it lives.
struct Reading<'a>(&'a std::sync::atomic::AtomicUsize);

impl<'a> Reading<'a> {
    fn start(count: &'a std::sync::atomic::AtomicUsize) -> Self {
        count.fetch_add(1, Ordering::AcqRel);
        Reading(count)
    }
}

impl Drop for Reading<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// When defragmentation runs by itself (`--auto-defrag-ratio`): once the
/// space compacted and deleted revisions still hold is more than `ratio`
/// of the backend's size, at most once per `every`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AutoDefrag {
    /// The fraction of the backend's size that may be free before it runs.
    pub ratio: f64,
    /// The least time between two runs.
    pub every: std::time::Duration,
}

impl AutoDefrag {
    /// Whether a backend of `total` bytes, `reclaimable` of them held by
    /// deleted rows ([`Store::reclaimable_bytes`]), is due, when the last
    /// automatic run was `since_last` ago (`None`: never).
    pub fn due(
        &self,
        total: u64,
        reclaimable: u64,
        since_last: Option<std::time::Duration>,
    ) -> bool {
        let free = reclaimable.min(total) as f64;
        since_last.is_none_or(|d| d >= self.every) && total > 0 && free > self.ratio * total as f64
    }

    /// How often to look: often enough to keep to `every`, at most once a
    /// second and at least once a minute.
    pub fn check_every(&self) -> std::time::Duration {
        self.every.clamp(
            std::time::Duration::from_secs(1),
            std::time::Duration::from_secs(60),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{PutRequest, StoreOptions};
    use std::time::Duration;

    #[test]
    fn auto_defrag_is_due_past_the_ratio_once_per_interval() {
        let auto = AutoDefrag {
            ratio: 0.5,
            every: Duration::from_secs(3600),
        };
        assert!(auto.due(100, 60, None));
        assert!(
            !auto.due(100, 50, None),
            "exactly half free is not more than half"
        );
        assert!(!auto.due(100, 10, None));
        assert!(!auto.due(0, 0, None));
        assert!(!auto.due(100, 90, Some(Duration::from_secs(3599))));
        assert!(auto.due(100, 90, Some(Duration::from_secs(3600))));
        // Deleted rows counted above the total (measured before they were
        // written): at most all of it is free.
        assert!(auto.due(100, 120, None));
        assert_eq!(auto.check_every(), Duration::from_secs(60));
        let fast = AutoDefrag {
            every: Duration::from_millis(10),
            ..auto
        };
        assert_eq!(fast.check_every(), Duration::from_secs(1));
    }

    #[test]
    fn defragmentation_by_itself_stands_aside_for_other_maintenance() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), StoreOptions::default()).unwrap();
        store
            .put(PutRequest {
                key: "k".into(),
                value: "v".into(),
                ..Default::default()
            })
            .unwrap();
        // A snapshot reading the store.
        let mut inside = None;
        store
            .read_image(&mut |_| {
                inside = Some(store.defragment_unless_busy());
                Ok(())
            })
            .unwrap();
        assert!(matches!(inside, Some(Ok(false))));
        // Another defragmentation.
        let held = store.shared().reclaiming.lock();
        assert!(matches!(store.defragment_unless_busy(), Ok(false)));
        drop(held);
        // Neither: it runs.
        assert!(matches!(store.defragment_unless_busy(), Ok(true)));
    }

    #[test]
    fn compaction_counts_what_defragmentation_gives_back() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), StoreOptions::default()).unwrap();
        let mut last = 0;
        for v in 0..10u8 {
            last = store
                .put(PutRequest {
                    key: "k".into(),
                    value: vec![v; 1000].into(),
                    ..Default::default()
                })
                .unwrap()
                .header_revision;
        }
        assert_eq!(store.reclaimable_bytes(), 0);
        store.compact(last, true).unwrap();
        // Nine revisions of about 1 KB each are gone.
        let freed = store.reclaimable_bytes();
        assert!((9000..10_000).contains(&freed), "{freed}");
        store.defragment().unwrap();
        assert_eq!(store.reclaimable_bytes(), 0);
    }
}
