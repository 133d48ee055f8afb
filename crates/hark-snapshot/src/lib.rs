//! `hark-snapshot`: etcd's snapshot file, written from and restored into a
//! Hark store, so data moves between Hark and etcd in both directions.
//!
//! A snapshot file is what `etcdctl snapshot save` keeps: a bbolt database
//! with etcd's buckets (`key` rows keyed by revision holding
//! `mvccpb.KeyValue`, `meta` with the compaction revisions, `lease`,
//! `members`, `alarm`, the auth buckets; see [`schema`]), followed by the
//! sha256 of those bytes. Hark's `kv` rows are etcd's `key` rows byte for
//! byte, so both directions copy rows without re-encoding them.
//!
//! * [`write_database`] writes a store's consistent image as the bbolt part
//!   (the server streams it and appends the checksum; [`save`] does both to
//!   a local file).
//! * [`status`] is `etcdutl snapshot status`; [`restore`] builds a Hark data
//!   dir from a snapshot either Hark or etcd saved.
//! * [`schedule`]: backups on a schedule into a directory, each checked after
//!   writing, the oldest beyond a retention removed.
//!
//! The bbolt file is written and read with the `bbolt-rs` crate; [`bolt`]
//! holds the little of bbolt's format Hark reads itself (meta pages).

pub mod bolt;
mod read;
pub mod schedule;
pub mod schema;
mod sizes;
mod write;

use std::path::{Path, PathBuf};

/// The backend a restore builds its data dir on.
pub use hark_mvcc::BackendKind;
pub use read::{ProgressHook, RestoreOptions, RestoreProgress, SnapshotStatus, restore, status};
pub use sizes::si_bytes;
pub use write::{Member, Written, save, write_database};

/// Bytes of the sha256 that ends a snapshot file.
pub const CHECKSUM_LEN: u64 = 32;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// etcdutl's words when the trailing sha256 is absent.
    #[error("snapshot missing hash but --skip-hash-check=false")]
    MissingHash,
    /// etcdutl's words when the trailing sha256 does not match the data.
    #[error("expected sha256 {expected:?}, got {got:?}")]
    HashMismatch { expected: Vec<u8>, got: Vec<u8> },
    #[error("not a bbolt database: {0}")]
    NotBolt(String),
    #[error("not an etcd snapshot: {0}")]
    NotEtcd(String),
    #[error("bbolt: {0}")]
    Bolt(String),
    #[error("store: {0}")]
    Store(#[from] hark_mvcc::Error),
    #[error("data dir {0} already exists and is not empty")]
    DataDirExists(PathBuf),
}

impl From<bbolt_rs::Error> for Error {
    fn from(e: bbolt_rs::Error) -> Self {
        Error::Bolt(e.to_string())
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Whether a file of `len` bytes ends with a checksum, by etcd's rule: a
/// bbolt database is whole pages (a multiple of 512 bytes), so 32 bytes
/// over a multiple of 512 are the sha256.
pub fn has_checksum(len: u64) -> bool {
    len % 512 == CHECKSUM_LEN
}

/// Checks a snapshot file's trailing sha256 (unless `skip_hash_check`, when
/// a file without one is accepted too); returns the length of the database
/// part.
pub fn verify(path: &Path, skip_hash_check: bool) -> Result<u64> {
    verify_with(path, skip_hash_check, &mut |_, _| {})
}

/// [`verify`], telling `hashed(done, total)` after each MiB it hashes.
pub(crate) fn verify_with(
    path: &Path,
    skip_hash_check: bool,
    hashed: &mut dyn FnMut(u64, u64),
) -> Result<u64> {
    use std::io::{Read, Seek, SeekFrom};

    let mut file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    if !has_checksum(len) {
        return if skip_hash_check {
            Ok(len)
        } else {
            Err(Error::MissingHash)
        };
    }
    let body = len - CHECKSUM_LEN;
    if skip_hash_check {
        return Ok(body);
    }
    let mut expected = vec![0u8; CHECKSUM_LEN as usize];
    file.seek(SeekFrom::Start(body))?;
    file.read_exact(&mut expected)?;
    file.seek(SeekFrom::Start(0))?;
    let mut counted = Counted {
        inner: (&mut file).take(body),
        done: 0,
        total: body,
        hashed,
    };
    let got = sha256_of(&mut counted)?;
    if got != expected {
        return Err(Error::HashMismatch { expected, got });
    }
    Ok(body)
}

/// A reader that reports how many bytes it has yielded.
struct Counted<'a, R> {
    inner: R,
    done: u64,
    total: u64,
    hashed: &'a mut dyn FnMut(u64, u64),
}

impl<R: std::io::Read> std::io::Read for Counted<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.done += n as u64;
        (self.hashed)(self.done, self.total);
        Ok(n)
    }
}

/// The sha256 of everything `data` yields, read a MiB at a time.
pub(crate) fn sha256_of(data: &mut impl std::io::Read) -> Result<Vec<u8>> {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = data.read(&mut buf)?;
        if n == 0 {
            return Ok(hasher.finalize().to_vec());
        }
        hasher.update(&buf[..n]);
    }
}
