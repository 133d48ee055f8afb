//! A chunk of the index: consecutive keys and their encoded histories in one
//! buffer. Each entry is varints `shared, suffix length`, the suffix (the
//! key's bytes after the `shared` it has in common with the key before it:
//! front coding, which Kubernetes' long common prefixes make worth it), then
//! varint `history length` and the history's encoding.

use bytes::Bytes;

use super::history::{get_varint, newest_of, put_varint};

/// Encoded entries, in key order, with a summary that lets a count pass
/// over the chunk without decoding it.
#[derive(Debug, Clone, Default)]
pub(super) struct Chunk {
    pub(super) data: Bytes,
    pub(super) keys: usize,
    /// Keys live at their newest change: the chunk's count at any
    /// revision from [`Chunk::newest`] on.
    pub(super) live: usize,
    /// The newest main revision of any change the chunk records.
    pub(super) newest: i64,
}

/// Reads a chunk's entries in order.
pub(super) struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
    /// The current entry's key.
    pub(super) key: Vec<u8>,
}

impl<'a> Cursor<'a> {
    pub(super) fn new(data: &'a [u8]) -> Self {
        Cursor {
            data,
            pos: 0,
            key: Vec::new(),
        }
    }

    /// Moves to the next entry (its key is then [`Cursor::key`]) and returns
    /// its history's bytes; `None` at the end.
    ///
    /// # Panics
    /// On bytes a [`ChunkWriter`] did not write: chunks live in this
    /// process's memory only (a loaded checkpoint is checked first).
    #[allow(clippy::should_implement_trait)] // a lending cursor: the key is borrowed from it
    pub(super) fn next(&mut self) -> Option<&'a [u8]> {
        if self.pos >= self.data.len() {
            return None;
        }
        let entry = self.read_entry();
        Some(entry.expect("the index's chunks hold what its writer wrote"))
    }

    /// [`Cursor::next`] for bytes not yet trusted (a checkpoint being
    /// loaded): `Err` where they do not decode.
    pub(super) fn checked_next(&mut self) -> Result<Option<&'a [u8]>, ()> {
        if self.pos >= self.data.len() {
            return Ok(None);
        }
        self.read_entry().map(Some).ok_or(())
    }

    fn read_entry(&mut self) -> Option<&'a [u8]> {
        let shared = usize::try_from(get_varint(self.data, &mut self.pos)?).ok()?;
        let suffix = usize::try_from(get_varint(self.data, &mut self.pos)?).ok()?;
        if shared > self.key.len() {
            return None;
        }
        self.key.truncate(shared);
        self.key
            .extend_from_slice(self.data.get(self.pos..self.pos.checked_add(suffix)?)?);
        self.pos += suffix;
        let len = usize::try_from(get_varint(self.data, &mut self.pos)?).ok()?;
        let history = self.data.get(self.pos..self.pos.checked_add(len)?)?;
        self.pos += len;
        Some(history)
    }
}

/// Writes entries, in key order, into a new chunk.
#[derive(Default)]
pub(super) struct ChunkWriter {
    data: Vec<u8>,
    first: Vec<u8>,
    prev: Vec<u8>,
    pub(super) keys: usize,
    live: usize,
    newest: i64,
}

impl ChunkWriter {
    pub(super) fn with_capacity(bytes: usize) -> Self {
        ChunkWriter {
            data: Vec::with_capacity(bytes),
            ..Default::default()
        }
    }

    /// Appends `key` and its encoded history (one the index wrote, or one a
    /// loaded checkpoint's check decoded).
    pub(super) fn push(&mut self, key: &[u8], history: &[u8]) {
        let (live, newest) = newest_of(history).expect("a history the index encoded");
        self.live += usize::from(live);
        self.newest = self.newest.max(newest);
        debug_assert!(
            self.keys == 0 || key > self.prev.as_slice(),
            "keys in order"
        );
        let shared = if self.keys == 0 {
            self.first.clear();
            self.first.extend_from_slice(key);
            0
        } else {
            self.prev
                .iter()
                .zip(key)
                .take_while(|(a, b)| a == b)
                .count()
        };
        put_varint(&mut self.data, shared as u64);
        put_varint(&mut self.data, (key.len() - shared) as u64);
        self.data.extend_from_slice(&key[shared..]);
        put_varint(&mut self.data, history.len() as u64);
        self.data.extend_from_slice(history);
        self.prev.truncate(shared);
        self.prev.extend_from_slice(&key[shared..]);
        self.keys += 1;
    }

    /// The first key and the chunk written so far, if any; the writer is
    /// then empty again. The chunk's buffer is exactly its size.
    pub(super) fn finish(&mut self) -> Option<(Vec<u8>, Chunk)> {
        if self.keys == 0 {
            return None;
        }
        let data = Bytes::from(std::mem::take(&mut self.data).into_boxed_slice());
        let chunk = Chunk {
            data,
            keys: std::mem::take(&mut self.keys),
            live: std::mem::take(&mut self.live),
            newest: std::mem::take(&mut self.newest),
        };
        self.prev.clear();
        Some((std::mem::take(&mut self.first), chunk))
    }
}
