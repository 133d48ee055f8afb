//! A store's consistent image written as etcd's backend: a fresh bbolt file,
//! filled insert-only and in order, a bounded number of rows per bbolt
//! transaction (one transaction for everything would hold the whole tree in
//! memory).

use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;

use bbolt_rs::{Bolt, BoltOptions, BucketRwApi, DbApi, DbRwAPI, TxRwApi, TxRwRefApi};
use hark_mvcc::{Store, StoreImage};
use prost::Message;

use crate::schema::{self, ConfState, LeaseRecord, MemberRecord};
use crate::{Error, Result, bolt};

/// bbolt's page size for the files Hark writes: the usual OS page, and a
/// multiple of 512 as etcd's checksum rule needs.
const PAGE_SIZE: usize = 4096;
/// Rows, and bytes, per bbolt transaction while copying the `key` bucket
/// (bytes bound the memory a transaction of large values holds).
const ROWS_PER_TX: usize = 10_000;
const BYTES_PER_TX: usize = 32 << 20;
/// etcd fills pages to 90% for its append-mostly `key` bucket.
const FILL_PERCENT: f64 = 0.9;

/// The member a snapshot names in its `members` bucket (etcd's restore
/// replaces it with the new cluster's members).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    pub id: u64,
    pub name: String,
    pub peer_urls: Vec<String>,
    pub client_urls: Vec<String>,
}

/// What [`write_database`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// The replicated log position the image's newest changes were recorded
    /// with (`None` outside a cluster): a raft snapshot's last log id.
    pub log_position: Option<Vec<u8>>,
    /// The store's revision the image holds.
    pub revision: i64,
    /// Bytes of the database (a multiple of the page size).
    pub size: u64,
    /// `key` bucket rows (revisions, tombstones included).
    pub rows: u64,
}

/// Creates `path` empty, readable by its owner alone (0600, as etcd writes
/// its snapshots), and only if nothing is there: not even a symlink, which
/// would otherwise be followed to wherever it points.
fn create_private_file(path: &Path) -> Result<()> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    match options.open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            Err(Error::Io(std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                format!("{} already exists", path.display()),
            )))
        }
        Err(e) => Err(Error::Io(e)),
    }
}

fn store_err(e: impl std::fmt::Display) -> hark_mvcc::Error {
    hark_mvcc::Error::Backend(e.to_string())
}

/// Writes a consistent image of `store` to a new file at `path` (which must
/// not exist) as etcd's bbolt backend, without the checksum. Writers to the
/// store are not blocked.
pub fn write_database(store: &Store, member: &Member, path: &Path) -> Result<Written> {
    create_private_file(path)?;
    let mut db = BoltOptions::builder()
        .page_size(PAGE_SIZE)
        .build()
        .open(path)?;
    let mut written = Written {
        revision: 0,
        size: 0,
        rows: 0,
        log_position: None,
    };
    // Errors inside the image reader travel as store errors; the bbolt ones
    // keep their text.
    store.read_image(&mut |image| {
        let revision = image.revision()?;
        write_small_buckets(&mut db, member, image).map_err(store_err)?;
        let mut batch: Vec<(Vec<u8>, Vec<u8>)> = Vec::with_capacity(ROWS_PER_TX);
        let mut batch_bytes = 0;
        let mut failure = None;
        image.for_each_row(&mut |k, v| {
            batch.push((k.to_vec(), v.to_vec()));
            batch_bytes += k.len() + v.len();
            written.rows += 1;
            if batch.len() >= ROWS_PER_TX || batch_bytes >= BYTES_PER_TX {
                batch_bytes = 0;
                if let Err(e) = put_rows(&mut db, &mut batch) {
                    failure = Some(e);
                    return false;
                }
            }
            true
        })?;
        if let Some(e) = failure {
            return Err(store_err(e));
        }
        put_rows(&mut db, &mut batch).map_err(store_err)?;
        written.revision = revision;
        written.log_position = image.log_position()?;
        Ok(())
    })?;
    db.close();
    // bbolt grows its file ahead of use; the database is its first pages.
    let mut file = OpenOptions::new().read(true).write(true).open(path)?;
    let meta = bolt::read_meta(&mut file)?;
    file.set_len(meta.size())?;
    file.sync_all()?;
    written.size = meta.size();
    Ok(written)
}

fn put_rows(db: &mut Bolt, rows: &mut Vec<(Vec<u8>, Vec<u8>)>) -> Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    let mut tx = db.begin_rw()?;
    {
        let mut bucket = tx
            .bucket_mut(schema::KEY)
            .ok_or_else(|| Error::Bolt("the key bucket is missing".into()))?;
        bucket.set_fill_percent(FILL_PERCENT);
        for (k, v) in rows.drain(..) {
            bucket.put(k, v)?;
        }
    }
    tx.commit()?;
    Ok(())
}

/// Every bucket but `key`'s rows, in one transaction.
fn write_small_buckets(db: &mut Bolt, member: &Member, image: &StoreImage<'_>) -> Result<()> {
    let revision = image.revision()?;
    let scheduled = image.scheduled_compact_revision()?;
    let finished = image.finished_compact_revision()?;
    let records = image.records()?;
    let mut tx = db.begin_rw()?;
    for name in schema::BUCKETS {
        tx.create_bucket_if_not_exists(name)?;
    }
    for (bucket, _, _) in &records {
        tx.create_bucket_if_not_exists(bucket.as_str())?;
    }
    let mut put = |bucket: &str, k: &[u8], v: &[u8]| -> Result<()> {
        tx.bucket_mut(bucket)
            .ok_or_else(|| Error::Bolt(format!("the {bucket} bucket is missing")))?
            .put(k, v)?;
        Ok(())
    };
    // Without raft, each revision stands for one applied entry (as Status says).
    put(
        schema::META,
        schema::CONSISTENT_INDEX.as_bytes(),
        &(revision as u64).to_be_bytes(),
    )?;
    put(schema::META, schema::TERM.as_bytes(), &1u64.to_be_bytes())?;
    put(
        schema::META,
        schema::STORAGE_VERSION.as_bytes(),
        schema::STORAGE_VERSION_VALUE.as_bytes(),
    )?;
    let conf = ConfState {
        voters: vec![member.id],
        auto_leave: false,
    };
    put(
        schema::META,
        schema::CONF_STATE.as_bytes(),
        &serde_json::to_vec(&conf).expect("plain data serializes"),
    )?;
    if scheduled > 0 {
        put(
            schema::META,
            schema::SCHEDULED_COMPACT.as_bytes(),
            &hark_mvcc::layout::revision_key(scheduled, 0, false),
        )?;
        put(
            schema::META,
            schema::FINISHED_COMPACT.as_bytes(),
            &hark_mvcc::layout::revision_key(finished.min(scheduled), 0, false),
        )?;
    }
    for (id, ttl) in image.leases()? {
        let record = LeaseRecord {
            id,
            ttl,
            remaining_ttl: 0,
        };
        put(schema::LEASE, &id.to_be_bytes(), &record.encode_to_vec())?;
    }
    for alarm in image.alarms()? {
        let record = schema::AlarmRecord {
            member_id: alarm.member_id,
            alarm: alarm.kind.number(),
        };
        put(schema::ALARM, &record.encode_to_vec(), &[])?;
    }
    // etcd's default auth revision, unless the records carry the real one.
    put(
        schema::AUTH,
        schema::AUTH_REVISION.as_bytes(),
        &1u64.to_be_bytes(),
    )?;
    for (bucket, k, v) in &records {
        put(bucket, k, v)?;
    }
    put(
        schema::CLUSTER,
        schema::CLUSTER_VERSION.as_bytes(),
        schema::CLUSTER_VERSION_VALUE.as_bytes(),
    )?;
    let record = MemberRecord {
        id: member.id,
        peer_urls: member.peer_urls.clone(),
        name: member.name.clone(),
        client_urls: member.client_urls.clone(),
    };
    put(
        schema::MEMBERS,
        format!("{:x}", member.id).as_bytes(),
        &serde_json::to_vec(&record).expect("plain data serializes"),
    )?;
    tx.commit()?;
    Ok(())
}

/// Writes `store` to `path` as a complete snapshot file: the database, then
/// its sha256, as `etcdctl snapshot save` leaves it. The file appears whole
/// or not at all (written beside it, then renamed).
pub fn save(store: &Store, member: &Member, path: &Path) -> Result<Written> {
    // `<path>.part`, as etcdctl names it; a stale one is replaced.
    let part = std::path::PathBuf::from(format!("{}.part", path.display()));
    let _ = std::fs::remove_file(&part);
    let saved = (|| {
        let written = write_database(store, member, &part)?;
        let mut file = OpenOptions::new().read(true).append(true).open(&part)?;
        let checksum = crate::sha256_of(&mut file)?;
        file.write_all(&checksum)?;
        file.sync_all()?;
        std::fs::rename(&part, path)?;
        Ok(written)
    })();
    if saved.is_err() {
        let _ = std::fs::remove_file(&part);
    }
    saved
}
