//! What Hark needs of bbolt's file format beyond what `bbolt-rs` offers.
//!
//! `bbolt-rs` writes files Go's bbolt reads (with its `compat` feature), but it
//! cannot open a file whose meta page says "no freelist stored", which is every
//! file etcd writes (etcd runs bbolt with `NoFreelistSync`). So a file is read
//! through a copy whose meta pages point at an empty freelist page appended at
//! the end: pages that were free just look unused, which a reader never visits.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

use crate::Error;

/// Go bbolt's magic number (`bbolt-rs` writes it with `compat`).
const MAGIC: u32 = 0xED0C_DAED;
const VERSION: u32 = 2;
/// "No freelist stored" in a meta page's freelist field.
const NO_FREELIST: u64 = u64::MAX;
const FREELIST_PAGE_FLAG: u16 = 0x10;
/// A page header (id, flags, count, overflow) precedes the meta fields.
const META_OFFSET: usize = 16;
/// Bytes of a meta page read: header, meta fields and checksum.
const META_BYTES: usize = 80;

/// The fields of a bbolt meta page Hark uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Meta {
    pub page_size: u64,
    pub freelist: u64,
    /// The high-water mark: pages `0..pgid` hold the database.
    pub pgid: u64,
    pub txid: u64,
}

impl Meta {
    /// Bytes of the database proper (Go's `Tx.Size()`), what a snapshot sends.
    pub fn size(&self) -> u64 {
        self.page_size * self.pgid
    }
}

fn fnv64a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn u32_at(page: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(page[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(page: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(page[at..at + 8].try_into().expect("8 bytes"))
}

/// Decodes one meta page; `None` unless its magic, version and checksum hold.
fn decode_meta(page: &[u8]) -> Option<Meta> {
    let m = META_OFFSET;
    if page.len() < META_BYTES || u32_at(page, m) != MAGIC || u32_at(page, m + 4) != VERSION {
        return None;
    }
    if fnv64a(&page[m..m + 56]) != u64_at(page, m + 56) {
        return None;
    }
    let meta = Meta {
        page_size: u64::from(u32_at(page, m + 8)),
        freelist: u64_at(page, m + 32),
        pgid: u64_at(page, m + 40),
        txid: u64_at(page, m + 48),
    };
    (meta.page_size >= 512 && meta.page_size.is_power_of_two() && meta.pgid >= 2).then_some(meta)
}

/// Reads the file's current meta (the valid one of the two with the higher
/// transaction id), as bbolt does on open.
pub fn read_meta(file: &mut File) -> Result<Meta, Error> {
    let mut first = [0u8; META_BYTES];
    file.seek(SeekFrom::Start(0))?;
    file.read_exact(&mut first)
        .map_err(|_| Error::NotBolt("shorter than a bbolt meta page".into()))?;
    // The second meta page sits one page in; its size comes from the first
    // (or, if the first is damaged, from the usual 4096).
    let page_size = decode_meta(&first).map_or(4096, |m| m.page_size);
    let mut second = [0u8; META_BYTES];
    file.seek(SeekFrom::Start(page_size))?;
    let second = file
        .read_exact(&mut second)
        .ok()
        .and_then(|()| decode_meta(&second));
    match (decode_meta(&first), second) {
        (Some(a), Some(b)) => Ok(if b.txid > a.txid { b } else { a }),
        (Some(m), None) | (None, Some(m)) => Ok(m),
        (None, None) => Err(Error::NotBolt(
            "no valid bbolt meta page (wrong magic, version or checksum)".into(),
        )),
    }
}

/// Copies the first `len` bytes of `src` (a snapshot without its trailer) to
/// `dst` so that `bbolt-rs` can open the copy: cut at the database's size,
/// and, for a file without a stored freelist, given an empty one.
pub fn readable_copy(src: &Path, len: u64, dst: &Path) -> Result<Meta, Error> {
    let mut input = File::open(src)?;
    let meta = read_meta(&mut input)?;
    if meta.size() > len {
        return Err(Error::NotBolt(format!(
            "the database claims {} bytes but the file holds {len}",
            meta.size()
        )));
    }
    let mut out = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(dst)?;
    input.seek(SeekFrom::Start(0))?;
    std::io::copy(&mut (&mut input).take(meta.size()), &mut out)?;
    if meta.freelist != NO_FREELIST {
        return Ok(meta);
    }
    let freelist_page = meta.pgid;
    let mut page = vec![0u8; meta.page_size as usize];
    page[..8].copy_from_slice(&freelist_page.to_le_bytes());
    page[8..10].copy_from_slice(&FREELIST_PAGE_FLAG.to_le_bytes());
    out.write_all(&page)?;
    for index in 0..2u64 {
        let mut header = [0u8; META_BYTES];
        out.seek(SeekFrom::Start(index * meta.page_size))?;
        out.read_exact(&mut header)?;
        if decode_meta(&header).is_none() {
            continue; // a damaged meta stays damaged, so bbolt keeps ignoring it
        }
        let m = META_OFFSET;
        header[m + 32..m + 40].copy_from_slice(&freelist_page.to_le_bytes());
        header[m + 40..m + 48].copy_from_slice(&(meta.pgid + 1).to_le_bytes());
        let sum = fnv64a(&header[m..m + 56]);
        header[m + 56..m + 64].copy_from_slice(&sum.to_le_bytes());
        out.seek(SeekFrom::Start(index * meta.page_size))?;
        out.write_all(&header)?;
    }
    out.sync_all()?;
    Ok(Meta {
        freelist: freelist_page,
        pgid: meta.pgid + 1,
        ..meta
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta_page(page_size: u32, freelist: u64, pgid: u64, txid: u64) -> Vec<u8> {
        let mut p = vec![0u8; page_size as usize];
        let m = META_OFFSET;
        p[m..m + 4].copy_from_slice(&MAGIC.to_le_bytes());
        p[m + 4..m + 8].copy_from_slice(&VERSION.to_le_bytes());
        p[m + 8..m + 12].copy_from_slice(&page_size.to_le_bytes());
        p[m + 32..m + 40].copy_from_slice(&freelist.to_le_bytes());
        p[m + 40..m + 48].copy_from_slice(&pgid.to_le_bytes());
        p[m + 48..m + 56].copy_from_slice(&txid.to_le_bytes());
        let sum = fnv64a(&p[m..m + 56]);
        p[m + 56..m + 64].copy_from_slice(&sum.to_le_bytes());
        p
    }

    #[test]
    fn picks_the_newest_valid_meta_and_rejects_damage() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        let mut bytes = meta_page(4096, NO_FREELIST, 5, 11);
        bytes.extend(meta_page(4096, NO_FREELIST, 6, 12));
        std::fs::write(&path, &bytes).unwrap();
        let m = read_meta(&mut File::open(&path).unwrap()).unwrap();
        assert_eq!((m.pgid, m.txid, m.size()), (6, 12, 6 * 4096));

        bytes[4096 + 60] ^= 1; // damage the newer meta: the older one is used
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(read_meta(&mut File::open(&path).unwrap()).unwrap().txid, 11);

        std::fs::write(&path, b"definitely not a database").unwrap();
        assert!(matches!(
            read_meta(&mut File::open(&path).unwrap()),
            Err(Error::NotBolt(_))
        ));
    }
}
