//! Reading a snapshot file, Hark's or etcd's: `etcdutl snapshot status` and
//! `etcdutl snapshot restore`, the latter into a Hark data dir.

use std::path::{Path, PathBuf};

use bbolt_rs::{Bolt, BucketApi, DbApi, TxApi};
use hark_mvcc::{Alarm, AlarmKind, RestoredStore, Restorer};
use prost::Message;

use crate::schema::{self, AlarmRecord, LeaseRecord};
use crate::{Error, Result, bolt};

/// `etcdutl snapshot status`: what the file holds, computed as etcd does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SnapshotStatus {
    /// CRC-32C over every bucket's name, then its keys and values, in order.
    pub hash: u32,
    /// The main revision of the `key` bucket's last row.
    pub revision: i64,
    /// Key-value pairs in all buckets.
    pub total_keys: u64,
    /// Bytes of the database (bbolt's `Tx.Size()`).
    pub total_size: u64,
}

/// A temporary readable copy of a snapshot's database, removed on drop.
struct ReadableCopy {
    path: PathBuf,
    /// A directory of our own (random name, made exclusively, mode 0700):
    /// nobody else can have put a file or a symlink where the copy goes,
    /// even in a shared scratch dir such as /tmp. Removed with the copy.
    _dir: tempfile::TempDir,
}

impl ReadableCopy {
    fn new(snapshot: &Path, body_len: u64, scratch_dir: &Path) -> Result<ReadableCopy> {
        let dir = tempfile::Builder::new()
            .prefix(".hark-snapshot-")
            .tempdir_in(scratch_dir)?;
        let path = dir.path().join("copy.db");
        bolt::readable_copy(snapshot, body_len, &path)?;
        Ok(ReadableCopy { path, _dir: dir })
    }

    /// Runs `read` over the database. `bbolt-rs` trusts the pages it reads,
    /// so a damaged file (one that passed, or skipped, the checksum) could
    /// make it panic: that is reported as a damaged file instead.
    fn read<T>(&self, read: impl FnOnce(&dyn ReadBuckets) -> Result<T>) -> Result<T> {
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| -> Result<T> {
            let db = Bolt::open_ro(self.path.clone())?;
            let result = {
                let tx = db.begin()?;
                read(&Buckets(&tx))
            };
            db.close();
            result
        }));
        outcome.unwrap_or_else(|_| {
            Err(Error::NotBolt(
                "the database's pages are damaged (bbolt could not read them)".into(),
            ))
        })
    }
}

impl Drop for ReadableCopy {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Called with each key and value of a bucket.
type EntryVisitor<'a> = dyn FnMut(&[u8], &[u8]) -> Result<()> + 'a;

/// The buckets of an open read transaction, as the readers here need them.
trait ReadBuckets {
    /// Calls `visit` with each bucket's name, in order.
    fn each_bucket(&self, visit: &mut dyn FnMut(&[u8]) -> Result<()>) -> Result<()>;
    /// Calls `visit` with each key and value of `bucket`, in key order;
    /// `false` if there is no such bucket.
    fn each_entry(&self, bucket: &str, visit: &mut EntryVisitor<'_>) -> Result<bool>;
}

struct Buckets<'a, T>(&'a T);

impl<'tx, T: TxApi<'tx>> ReadBuckets for Buckets<'_, T> {
    fn each_bucket(&self, visit: &mut dyn FnMut(&[u8]) -> Result<()>) -> Result<()> {
        for (name, _) in self.0.iter_buckets() {
            visit(name)?;
        }
        Ok(())
    }

    fn each_entry(&self, bucket: &str, visit: &mut EntryVisitor<'_>) -> Result<bool> {
        let Some(b) = self.0.bucket(bucket) else {
            return Ok(false);
        };
        for (k, v) in b.iter_entries() {
            visit(k, v)?;
        }
        Ok(true)
    }
}

fn scratch_dir_for(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// `etcdutl snapshot status FILE`. The checksum is not checked (etcdutl
/// does not either); the file must be a readable bbolt database.
pub fn status(path: &Path) -> Result<SnapshotStatus> {
    let len = std::fs::metadata(path)?.len();
    let body = if crate::has_checksum(len) {
        len - crate::CHECKSUM_LEN
    } else {
        len
    };
    let total_size = bolt::read_meta(&mut std::fs::File::open(path)?)?.size();
    let copy = ReadableCopy::new(path, body, &std::env::temp_dir())?;
    copy.read(|tx| {
        let mut hash = 0u32;
        let mut total_keys = 0u64;
        let mut revision = 0i64;
        let mut names = Vec::new();
        tx.each_bucket(&mut |name| {
            names.push(String::from_utf8_lossy(name).into_owned());
            Ok(())
        })?;
        for name in &names {
            hash = crc32c::crc32c_append(hash, name.as_bytes());
            tx.each_entry(name, &mut |k, v| {
                hash = crc32c::crc32c_append(hash, k);
                hash = crc32c::crc32c_append(hash, v);
                total_keys += 1;
                if name == schema::KEY {
                    revision = main_revision(k).unwrap_or(revision);
                }
                Ok(())
            })?;
        }
        Ok(SnapshotStatus {
            hash,
            revision,
            total_keys,
            total_size,
        })
    })
}

/// How to restore.
#[derive(Debug, Clone, Default)]
pub struct RestoreOptions {
    /// Accept a file without (or with a wrong) trailing sha256, as etcdutl's
    /// `--skip-hash-check`: for a database file copied out of a data dir.
    pub skip_hash_check: bool,
    /// Told how far the restore has got (a command line shows it).
    pub progress: Option<ProgressHook>,
    /// The backend the data dir is built on (the server's `--backend`).
    pub backend: hark_mvcc::BackendKind,
}

/// How far a restore has got: first the file's checksum, then its rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RestoreProgress {
    /// `done` of the database's `total` bytes hashed.
    Checking { done: u64, total: u64 },
    /// `rows` key rows copied into the store so far.
    Loading { rows: u64 },
}

/// A callback for [`RestoreProgress`], called from the restoring thread at
/// most once a MiB hashed or once per 10,000 rows.
#[derive(Clone)]
pub struct ProgressHook(pub std::sync::Arc<dyn Fn(RestoreProgress) + Send + Sync>);

impl std::fmt::Debug for ProgressHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProgressHook")
    }
}

impl ProgressHook {
    fn tell(hook: &Option<ProgressHook>, progress: RestoreProgress) {
        if let Some(hook) = hook {
            (hook.0)(progress);
        }
    }
}

/// Builds a Hark data dir at `data_dir` (which must not exist or be empty)
/// from a snapshot file: every revision, the compaction, leases (each gets
/// its full TTL when the server starts) and raised alarms. The file is
/// checked first; on a failure nothing is left at `data_dir`, and after a
/// crash midway the dir is refused when opened.
pub fn restore(
    snapshot: &Path,
    data_dir: &Path,
    options: &RestoreOptions,
) -> Result<RestoredStore> {
    if std::fs::read_dir(data_dir).is_ok_and(|mut entries| entries.next().is_some()) {
        return Err(Error::DataDirExists(data_dir.to_path_buf()));
    }
    let body = crate::verify_with(snapshot, options.skip_hash_check, &mut |done, total| {
        ProgressHook::tell(&options.progress, RestoreProgress::Checking { done, total })
    })?;
    let scratch = scratch_dir_for(data_dir);
    std::fs::create_dir_all(&scratch)?;
    let copy = ReadableCopy::new(snapshot, body, &scratch)?;
    // Built in place (the data dir may be a mount point, which a rename
    // cannot replace). A restore cut short by a crash leaves a store marked
    // unfinished, which Hark refuses to open; one that fails is removed.
    let existed = data_dir.exists();
    let restored = copy.read(|tx| load(tx, data_dir, options));
    let restored = match restored {
        Ok(r) => r,
        Err(e) => {
            remove_contents(data_dir, existed);
            return Err(e);
        }
    };
    // The new files' directory entries are durable before anyone writes.
    std::fs::File::open(data_dir)?.sync_all()?;
    if let Ok(parent) = std::fs::File::open(&scratch) {
        let _ = parent.sync_all();
    }
    tracing::info!(
        snapshot = %snapshot.display(),
        data_dir = %data_dir.display(),
        revision = restored.revision,
        rows = restored.rows,
        "restored snapshot"
    );
    Ok(restored)
}

/// Undoes a failed restore: the dir it created, or what it put in one that
/// was there (and empty) before.
fn remove_contents(dir: &Path, existed: bool) {
    if !existed {
        let _ = std::fs::remove_dir_all(dir);
        return;
    }
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            let _ = if path.is_dir() {
                std::fs::remove_dir_all(&path)
            } else {
                std::fs::remove_file(&path)
            };
        }
    }
}

fn load(tx: &dyn ReadBuckets, dir: &Path, options: &RestoreOptions) -> Result<RestoredStore> {
    let progress = &options.progress;
    let mut restorer = Restorer::create_on(dir, options.backend)?;
    let mut rows = 0u64;
    let had_keys = tx.each_entry(schema::KEY, &mut |k, v| {
        restorer.row(k, v)?;
        rows += 1;
        if rows.is_multiple_of(10_000) {
            ProgressHook::tell(progress, RestoreProgress::Loading { rows });
        }
        Ok(())
    })?;
    ProgressHook::tell(progress, RestoreProgress::Loading { rows });
    if !had_keys {
        return Err(Error::NotEtcd("it has no key bucket".into()));
    }
    tx.each_entry(schema::LEASE, &mut |k, v| {
        let record = LeaseRecord::decode(v)
            .map_err(|e| Error::NotEtcd(format!("lease {k:?} does not decode: {e}")))?;
        Ok(restorer.lease(record.id, record.ttl)?)
    })?;
    tx.each_entry(schema::ALARM, &mut |k, _| {
        let record = AlarmRecord::decode(k)
            .map_err(|e| Error::NotEtcd(format!("alarm {k:?} does not decode: {e}")))?;
        // An alarm kind Hark does not know is not carried over.
        if let Some(kind) = AlarmKind::from_number(record.alarm) {
            restorer.alarm(Alarm {
                member_id: record.member_id,
                kind,
            })?;
        }
        Ok(())
    })?;
    for bucket in schema::RECORD_BUCKETS {
        tx.each_entry(bucket, &mut |k, v| Ok(restorer.record(bucket, k, v)?))?;
    }
    let (mut scheduled, mut finished) = (0, 0);
    tx.each_entry(schema::META, &mut |k, v| {
        let revision = || {
            main_revision(v).ok_or_else(|| {
                Error::NotEtcd(format!(
                    "meta {} is not a revision",
                    String::from_utf8_lossy(k)
                ))
            })
        };
        match k {
            b"scheduledCompactRev" => scheduled = revision()?,
            b"finishedCompactRev" => finished = revision()?,
            _ => {}
        }
        Ok(())
    })?;
    Ok(restorer.finish(0, scheduled, finished)?)
}

/// The main revision of a revision key or of a compaction revision in
/// `meta` (etcd writes both as a revision key).
fn main_revision(bytes: &[u8]) -> Option<i64> {
    hark_mvcc::layout::parse_revision_key(bytes).map(|(main, _, _)| main)
}
