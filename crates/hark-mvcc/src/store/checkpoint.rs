//! The key index's checkpoint: the index, space per prefix and the keys'
//! leases as of one revision, in a file beside the backend, so opening a
//! large store reads that file and the rows written after it instead of
//! every row the store holds (at 10 M keys, ~20 GiB of rows).
//!
//! A checkpoint is taken under the committer's lock (nothing applies
//! meanwhile) and only when no compaction is under way, so its index, space
//! and leases are exactly those of the rows at its revision; it is written
//! out after the backend is synced, to a new file renamed into place. On
//! open it is used only if it still describes the backend: same compaction,
//! the backend at or past its revision, the same rows at that revision (a
//! digest) and a good checksum. Anything else (a compaction finished or
//! interrupted after it, a data dir rolled back, a torn or foreign file)
//! falls back to reading every row, as a store without a checkpoint does.
//!
//! File: `MAGIC`, then little-endian `u64`s `revision`, `compacted`,
//! `row digest`, `usage depth`, then the chunks (count, then first key,
//! keys, entries each), the prefixes' usage (count, then prefix and four
//! figures each), the keys' leases (count, then key and lease each), and a
//! CRC-32C of everything before it. Lengths are `u64`s, refused past
//! [`MAX_PIECE`] before anything is allocated for them.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use bytes::Bytes;
use parking_lot::Mutex;

use super::committer::Committer;
use super::shared::Shared;
use crate::backend::{Backend, Table};
use crate::error::Result;
use crate::key_index::{StoredChunk, TreeIndex};
use crate::layout::{META_FINISHED_COMPACT, decode_counter, rev_key};
use crate::revision::Revision;
use crate::usage::{PrefixUsage, Usage};

/// The checkpoint's name in the store's directory.
pub(super) const CHECKPOINT_FILE: &str = "index.checkpoint";
const TEMPORARY_FILE: &str = "index.checkpoint.tmp";
const MAGIC: &[u8; 8] = b"HARKIDX1";
/// Longest key, chunk or prefix a checkpoint may hold (a chunk is a few
/// KiB; a key at most etcd's request size).
const MAX_PIECE: u64 = 64 << 20;
/// How often the checkpoint thread looks whether one is due (a finished
/// compaction wakes it at once).
const POLL: Duration = Duration::from_secs(5);
/// Least time between two checkpoints taken only because revisions went
/// on (one after a compaction is taken at the next poll): at 10 M keys a
/// checkpoint is a few hundred MB written, and a restart replays at most
/// this much of writes.
const INTERVAL: Duration = Duration::from_secs(60);

/// The in-memory state a checkpoint holds.
pub(super) struct Checkpoint {
    pub(super) revision: i64,
    pub(super) compacted: i64,
    pub(super) digest: u32,
    pub(super) usage_depth: usize,
    pub(super) index: TreeIndex,
    pub(super) usage: PrefixUsage,
    pub(super) key_leases: Vec<(Bytes, i64)>,
}

/// CRC-32C of the stored rows of main revision `revision` (keys and
/// values): a checkpoint names the rows it saw at its revision.
pub(super) fn row_digest(backend: &dyn Backend, revision: i64) -> Result<u32> {
    let from = rev_key(Revision::new(revision, 0), false);
    let to = rev_key(Revision::new(revision + 1, 0), false);
    let mut crc = 0u32;
    backend.scan(Table::Kv, &from, Some(&to), &mut |k, v| {
        crc = crc32c::crc32c_append(crc, k);
        crc = crc32c::crc32c_append(crc, v);
        true
    })?;
    Ok(crc)
}

/// Takes a checkpoint of `shared` as of its newest revision, or `None`
/// while a compaction is under way or the store has failed.
fn take(shared: &Shared, committer: &Mutex<Committer>) -> Result<Option<(Checkpoint, u64)>> {
    let _applying = committer.lock();
    if shared.failed.load(Ordering::Acquire) {
        return Ok(None);
    }
    let scheduled = shared.compact_rev.load(Ordering::Acquire);
    let finished = decode_counter(shared.backend.get(Table::Meta, META_FINISHED_COMPACT)?);
    if scheduled != finished {
        return Ok(None);
    }
    let revision = shared.committed_rev.load(Ordering::Acquire);
    let checkpoint = Checkpoint {
        revision,
        compacted: finished,
        digest: row_digest(shared.backend.as_ref(), revision)?,
        usage_depth: shared.options.usage_depth,
        index: shared.index.read().clone(),
        usage: shared.usage.lock().clone(),
        key_leases: shared.leases.lock().key_leases(),
    };
    Ok(Some((
        checkpoint,
        shared.generation.load(Ordering::Acquire),
    )))
}

/// Takes a checkpoint and writes it into `dir`: its revision, or `None` if
/// none could be taken now (a compaction under way, an install meanwhile,
/// the store closing).
pub(super) fn write_now(
    shared: &Shared,
    committer: &Mutex<Committer>,
    dir: &Path,
) -> Result<Option<i64>> {
    // Before the committer's lock (an install holds that one, then the
    // file's): one writer of the temporary file at a time.
    let _writer = shared.checkpoint_writer.lock();
    let started = Instant::now();
    let Some((checkpoint, generation)) = take(shared, committer)? else {
        return Ok(None);
    };
    let taken = started.elapsed();
    // The rows it describes are durable before a checkpoint names them (a
    // store under a replicated log does not sync each write).
    shared.backend.sync()?;
    let tmp = dir.join(TEMPORARY_FILE);
    let written = write_file(&tmp, &checkpoint, &|| shared.closing.is_raised())
        .map_err(|e| crate::Error::Backend(format!("writing the index checkpoint: {e}")))?;
    let Some(bytes) = written else {
        let _ = fs::remove_file(&tmp);
        return Ok(None);
    };
    // An install replaces the rows under this checkpoint: it deletes the
    // file under this lock after bumping the generation, so a checkpoint
    // of the rows before it never lands after it.
    let _file = shared.checkpoint_file.lock();
    if shared.generation.load(Ordering::Acquire) != generation {
        let _ = fs::remove_file(&tmp);
        return Ok(None);
    }
    fs::rename(&tmp, dir.join(CHECKPOINT_FILE))
        .and_then(|()| File::open(dir)?.sync_all())
        .map_err(|e| crate::Error::Backend(format!("writing the index checkpoint: {e}")))?;
    metrics::histogram!("hark_mvcc_index_checkpoint_seconds")
        .record(started.elapsed().as_secs_f64());
    metrics::gauge!("hark_mvcc_index_checkpoint_bytes").set(bytes as f64);
    tracing::info!(
        revision = checkpoint.revision,
        bytes,
        pause = ?taken,
        took = ?started.elapsed(),
        "index checkpoint written"
    );
    Ok(Some(checkpoint.revision))
}

/// Deletes `dir`'s checkpoint (an install replaced the rows it describes).
pub(super) fn remove(shared: &Shared, dir: &Path) -> io::Result<()> {
    let _file = shared.checkpoint_file.lock();
    match fs::remove_file(dir.join(CHECKPOINT_FILE)) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// The checkpoint thread: one at most every [`INTERVAL`] while revisions
/// go on, and one soon after each compaction finishes (a checkpoint from
/// before a finished compaction is not used), until the store closes.
/// `loaded`: the revision and compaction of the checkpoint the store was
/// opened from; a store that had to read every row writes one at once.
pub(super) fn run(
    shared: Arc<Shared>,
    committer: Weak<Mutex<Committer>>,
    dir: PathBuf,
    loaded: Option<(i64, i64)>,
) {
    let mut last = loaded.map(|(revision, compacted)| (revision, compacted, Instant::now()));
    loop {
        shared.checkpoint_due.wait(POLL);
        if shared.closing.is_raised() {
            return;
        }
        let revision = shared.committed_rev.load(Ordering::Acquire);
        let compacted = shared.compact_rev.load(Ordering::Acquire);
        let due = match last {
            None => true,
            Some((rev, comp, at)) => {
                comp != compacted || (rev != revision && at.elapsed() >= INTERVAL)
            }
        };
        if !due {
            continue;
        }
        let Some(committer) = committer.upgrade() else {
            return;
        };
        match write_now(&shared, &committer, &dir) {
            Ok(Some(rev)) => last = Some((rev, compacted, Instant::now())),
            Ok(None) => {}
            Err(e) => {
                tracing::warn!(error = %e, "index checkpoint not written; the next start reads every row");
                // Not again at every poll: as if one had been written now.
                last = Some((revision, compacted, Instant::now()));
            }
        }
    }
}

/// A writer that checksums what passes through it.
struct Summed<W> {
    inner: W,
    crc: u32,
    bytes: u64,
}

impl<W: Write> Write for Summed<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.crc = crc32c::crc32c_append(self.crc, &buf[..n]);
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

fn put_u64(w: &mut impl Write, v: u64) -> io::Result<()> {
    w.write_all(&v.to_le_bytes())
}

fn put_piece(w: &mut impl Write, piece: &[u8]) -> io::Result<()> {
    put_u64(w, piece.len() as u64)?;
    w.write_all(piece)
}

/// Writes `c` to a new private file at `path`, synced; its size, or `None`
/// if `stop` turned true meanwhile.
fn write_file(path: &Path, c: &Checkpoint, stop: &dyn Fn() -> bool) -> io::Result<Option<u64>> {
    let file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    let mut w = Summed {
        inner: BufWriter::with_capacity(1 << 20, SteadyFile::new(file)),
        crc: 0,
        bytes: 0,
    };
    w.write_all(MAGIC)?;
    put_u64(&mut w, c.revision as u64)?;
    put_u64(&mut w, c.compacted as u64)?;
    put_u64(&mut w, u64::from(c.digest))?;
    put_u64(&mut w, c.usage_depth as u64)?;
    put_u64(&mut w, c.index.chunk_count() as u64)?;
    let mut written = 0usize;
    let chunks = c.index.try_for_each_chunk(|first, keys, data| {
        written += 1;
        if written.is_multiple_of(4096) && stop() {
            return Err(None);
        }
        put_piece(&mut w, first).map_err(Some)?;
        put_u64(&mut w, keys as u64).map_err(Some)?;
        put_piece(&mut w, data).map_err(Some)
    });
    match chunks {
        Ok(()) => {}
        Err(None) => return Ok(None),
        Err(Some(e)) => return Err(e),
    }
    put_u64(&mut w, c.usage.entries().len() as u64)?;
    for (prefix, u) in c.usage.entries() {
        put_piece(&mut w, prefix)?;
        for figure in [u.keys, u.bytes, u.revisions, u.history_bytes] {
            put_u64(&mut w, figure as u64)?;
        }
    }
    put_u64(&mut w, c.key_leases.len() as u64)?;
    for (key, lease) in &c.key_leases {
        put_piece(&mut w, key)?;
        put_u64(&mut w, *lease as u64)?;
    }
    let crc = w.crc;
    w.write_all(&crc.to_le_bytes())?;
    let bytes = w.bytes;
    let file = w
        .inner
        .into_inner()
        .map_err(io::IntoInnerError::into_error)?;
    file.file.sync_all()?;
    Ok(Some(bytes))
}

/// Bytes of the checkpoint file written between two syncs of it.
const SYNC_EVERY: usize = 1 << 20;
/// Fastest the checkpoint file is written: RocksDB's own background
/// writes are held to the same rate (`BACKGROUND_WRITE_BYTES_PER_SEC`).
const WRITE_BYTES_PER_SEC: f64 = (48 << 20) as f64;

/// The checkpoint file as it is written: synced every [`SYNC_EVERY`] bytes
/// and written no faster than [`WRITE_BYTES_PER_SEC`]. Written at once and
/// synced at the end, a checkpoint (166 MB at 5 M keys, 330 MB at 10 M)
/// put all of itself in the disk's queue in one fsync, in front of the
/// fsyncs of the writes clients wait for.
struct SteadyFile {
    file: File,
    started: Instant,
    written: u64,
    since_sync: usize,
}

impl SteadyFile {
    fn new(file: File) -> SteadyFile {
        SteadyFile {
            file,
            started: Instant::now(),
            written: 0,
            since_sync: 0,
        }
    }
}

impl Write for SteadyFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.file.write(buf)?;
        self.written += n as u64;
        self.since_sync += n;
        if self.since_sync >= SYNC_EVERY {
            self.file.sync_data()?;
            self.since_sync = 0;
            let due = Duration::from_secs_f64(self.written as f64 / WRITE_BYTES_PER_SEC);
            if let Some(early) = due.checked_sub(self.started.elapsed()) {
                std::thread::sleep(early);
            }
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

/// A reader that checksums what passes through it.
struct Checked<R> {
    inner: R,
    crc: u32,
}

impl<R: Read> Checked<R> {
    fn exact(&mut self, buf: &mut [u8]) -> io::Result<()> {
        self.inner.read_exact(buf)?;
        self.crc = crc32c::crc32c_append(self.crc, buf);
        Ok(())
    }

    fn u64(&mut self) -> io::Result<u64> {
        let mut b = [0u8; 8];
        self.exact(&mut b)?;
        Ok(u64::from_le_bytes(b))
    }

    fn i64(&mut self) -> io::Result<i64> {
        Ok(self.u64()? as i64)
    }

    /// A count of items each at least `min_bytes` long in a file of `size`.
    fn count(&mut self, size: u64, min_bytes: u64) -> io::Result<usize> {
        let n = self.u64()?;
        if n > size / min_bytes {
            return Err(bad("a count past the file's end"));
        }
        usize::try_from(n).map_err(|_| bad("a count past the file's end"))
    }

    fn piece(&mut self) -> io::Result<Vec<u8>> {
        let len = self.u64()?;
        if len > MAX_PIECE {
            return Err(bad("a piece longer than any it writes"));
        }
        let mut v = vec![0u8; len as usize];
        self.exact(&mut v)?;
        Ok(v)
    }
}

fn bad(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_string())
}

/// Reads `dir`'s checkpoint: `Ok(None)` if there is none; an error if it
/// is torn, foreign or does not decode.
pub(super) fn read(dir: &Path) -> io::Result<Option<Checkpoint>> {
    let file = match File::open(dir.join(CHECKPOINT_FILE)) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let size = file.metadata()?.len();
    let mut r = Checked {
        inner: BufReader::with_capacity(1 << 20, file),
        crc: 0,
    };
    let mut magic = [0u8; 8];
    r.exact(&mut magic)?;
    if &magic != MAGIC {
        return Err(bad("not an index checkpoint of this version"));
    }
    let revision = r.i64()?;
    let compacted = r.i64()?;
    let digest = u32::try_from(r.u64()?).map_err(|_| bad("a digest out of range"))?;
    let usage_depth = usize::try_from(r.u64()?).map_err(|_| bad("a depth out of range"))?;
    let n = r.count(size, 24)?;
    let mut chunks = Vec::with_capacity(n);
    for _ in 0..n {
        let first = Bytes::from(r.piece()?);
        let keys = usize::try_from(r.u64()?).map_err(|_| bad("a count out of range"))?;
        let data = Bytes::from(r.piece()?);
        chunks.push(StoredChunk { first, keys, data });
    }
    let n = r.count(size, 40)?;
    let mut entries = Vec::with_capacity(n);
    for _ in 0..n {
        let prefix = r.piece()?.into_boxed_slice();
        let usage = Usage {
            keys: r.i64()?,
            bytes: r.i64()?,
            revisions: r.i64()?,
            history_bytes: r.i64()?,
        };
        entries.push((prefix, usage));
    }
    let n = r.count(size, 16)?;
    let mut key_leases = Vec::with_capacity(n);
    for _ in 0..n {
        let key = Bytes::from(r.piece()?);
        key_leases.push((key, r.i64()?));
    }
    let crc = r.crc;
    let mut stored = [0u8; 4];
    r.inner.read_exact(&mut stored)?;
    if u32::from_le_bytes(stored) != crc || r.inner.read(&mut [0u8; 1])? != 0 {
        return Err(bad("checksum mismatch"));
    }
    let index =
        TreeIndex::from_chunks(chunks).ok_or_else(|| bad("an index that does not decode"))?;
    let usage = PrefixUsage::from_entries(usage_depth, entries)
        .ok_or_else(|| bad("space per prefix that does not decode"))?;
    Ok(Some(Checkpoint {
        revision,
        compacted,
        digest,
        usage_depth,
        index,
        usage,
        key_leases,
    }))
}
