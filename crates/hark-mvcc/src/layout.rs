//! The on-disk format, whole: what each backend table holds and how it is
//! encoded. It is a contract twice over: with data dirs written by earlier
//! Hark versions, and with etcd's bbolt snapshots, whose `key` bucket holds
//! the `kv` table's rows byte for byte (`hark-snapshot` converts the rest).
//!
//! * **`kv` table**: one row per change. Key: the revision as etcd writes
//!   it, 8 bytes big-endian main, `_`, 8 bytes big-endian sub, then `t` for
//!   a tombstone (a delete). Value: the `mvccpb.KeyValue`, protobuf-encoded;
//!   a tombstone's holds its key alone.
//! * **`meta` table**: the counters below (big-endian `i64`), the replicated
//!   log's position (opaque bytes), the restore-in-progress mark, and three
//!   record ranges: leases (`lease/` + id → granted TTL), raised alarms
//!   (`alarm/` + member + kind → empty) and the layers' records (`rec/` +
//!   bucket + NUL + key → value).

use bytes::Bytes;
use prost::Message;

use crate::alarm::{Alarm, AlarmKind};
use crate::error::{Error, Result};
use crate::kv::KeyValue;
use crate::revision::Revision;

/// Length of an encoded revision: 8 bytes main, `_`, 8 bytes sub (etcd's
/// layout); a tombstone's key has one byte more.
pub const REVISION_KEY_LEN: usize = 17;
/// Suffix of a tombstone's revision key.
const TOMBSTONE_MARK: u8 = b't';

/// The `kv` key of revision `main`.`sub` (a tombstone's with `tombstone`).
/// Big-endian, so byte order is revision order.
pub fn revision_key(main: i64, sub: i64, tombstone: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(REVISION_KEY_LEN + 1);
    out.extend_from_slice(&(main as u64).to_be_bytes());
    out.push(b'_');
    out.extend_from_slice(&(sub as u64).to_be_bytes());
    if tombstone {
        out.push(TOMBSTONE_MARK);
    }
    out
}

/// `(main, sub, tombstone)` of a `kv` key; `None` for anything else.
pub fn parse_revision_key(key: &[u8]) -> Option<(i64, i64, bool)> {
    if key.len() < REVISION_KEY_LEN || key[8] != b'_' {
        return None;
    }
    let main = u64::from_be_bytes(key[0..8].try_into().ok()?) as i64;
    let sub = u64::from_be_bytes(key[9..17].try_into().ok()?) as i64;
    let tombstone = match &key[REVISION_KEY_LEN..] {
        [] => false,
        [TOMBSTONE_MARK] => true,
        _ => return None,
    };
    Some((main, sub, tombstone))
}

/// [`revision_key`] of a [`Revision`].
pub(crate) fn rev_key(rev: Revision, tombstone: bool) -> Vec<u8> {
    revision_key(rev.main, rev.sub, tombstone)
}

/// [`parse_revision_key`] as a [`Revision`] and whether it is a tombstone.
pub(crate) fn parse_rev_key(key: &[u8]) -> Option<(Revision, bool)> {
    let (main, sub, tombstone) = parse_revision_key(key)?;
    Some((Revision::new(main, sub), tombstone))
}

/// A `kv` row's value.
pub(crate) fn decode_kv(bytes: &[u8]) -> Result<KeyValue> {
    KeyValue::decode(bytes).map_err(|e| Error::Backend(format!("corrupt stored key-value: {e}")))
}

/// Decodes a `kv` row: its revision, whether it is a tombstone, and the
/// key-value. A tombstone stores only its key (as etcd's do); its
/// `mod_revision` is the row's revision.
pub(crate) fn decode_row(key: &[u8], value: &[u8]) -> Option<(Revision, bool, KeyValue)> {
    let (rev, tombstone) = parse_rev_key(key)?;
    let mut kv = decode_kv(value).ok()?;
    if tombstone {
        kv.mod_revision = rev.main;
    }
    Some((rev, tombstone, kv))
}

/// Only the key of a `kv` row's value (other fields are skipped unread),
/// for the compactor's bookkeeping of rows it deletes.
pub(crate) fn row_key_only(value: &[u8]) -> Option<Bytes> {
    #[derive(Clone, PartialEq, prost::Message)]
    struct KeyOnly {
        #[prost(bytes = "bytes", tag = "1")]
        key: Bytes,
    }
    KeyOnly::decode(value).ok().map(|k| k.key)
}

/// The stored value of a tombstone, as etcd writes it: a `KeyValue` holding
/// only the key.
pub(crate) fn tombstone_row_value(key: Bytes) -> Vec<u8> {
    KeyValue {
        key,
        ..Default::default()
    }
    .encode_to_vec()
}

/// Adds a `kv` row's value to a hash in etcd's form: a tombstone an older
/// Hark stored with its mod_revision counts as the key alone, as etcd's do.
pub(crate) fn hash_row_value(hash: u32, tombstone: bool, value: &[u8]) -> u32 {
    if tombstone && let Ok(kv) = decode_kv(value) {
        return crc32c::crc32c_append(hash, &tombstone_row_value(kv.key));
    }
    crc32c::crc32c_append(hash, value)
}

/// Meta key of the newest revision, written with every commit group.
pub(crate) const META_CURRENT_REV: &[u8] = b"current_rev";
/// Meta key of the revision compaction was asked up to.
pub(crate) const META_SCHEDULED_COMPACT: &[u8] = b"scheduled_compact_rev";
/// Meta key of the revision compaction has deleted rows up to.
pub(crate) const META_FINISHED_COMPACT: &[u8] = b"finished_compact_rev";
/// Meta key of the replicated log's position applied last (opaque to the store).
pub(crate) const META_LOG_POSITION: &[u8] = b"log_position";
/// Set while a restore has not finished: such a data dir does not open.
pub(crate) const META_RESTORING: &[u8] = b"restoring";

/// A meta counter's value.
pub(crate) fn encode_counter(value: i64) -> Vec<u8> {
    value.to_be_bytes().to_vec()
}

/// A meta counter read back; 0 when absent or malformed.
pub(crate) fn decode_counter(value: Option<Vec<u8>>) -> i64 {
    value
        .and_then(|v| v.try_into().ok().map(i64::from_be_bytes))
        .unwrap_or(0)
}

/// Meta-table prefix of lease records: `lease/` + id (big-endian) → granted TTL.
const LEASE_PREFIX: &[u8] = b"lease/";
/// Meta-table prefix of raised alarms: `alarm/` + member (8 bytes,
/// big-endian) + kind (4 bytes, big-endian) → empty.
const ALARM_PREFIX: &[u8] = b"alarm/";
/// Meta-table prefix of the layers' records: `rec/` + bucket + NUL + key.
const RECORD_PREFIX: &[u8] = b"rec/";

/// The key range `[prefix, prefix with its last byte raised)`.
fn prefix_range(prefix: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let mut end = prefix.to_vec();
    *end.last_mut().expect("prefix is not empty") += 1;
    (prefix.to_vec(), end)
}

/// The meta key of lease `id`.
pub(crate) fn lease_key(id: i64) -> Vec<u8> {
    let mut k = LEASE_PREFIX.to_vec();
    k.extend_from_slice(&id.to_be_bytes());
    k
}

/// A lease record's value: its granted TTL.
pub(crate) fn lease_value(ttl: i64) -> Vec<u8> {
    ttl.to_be_bytes().to_vec()
}

/// The meta-table key range holding every lease record.
pub(crate) fn lease_range() -> (Vec<u8>, Vec<u8>) {
    prefix_range(LEASE_PREFIX)
}

/// `(id, granted TTL)` of a lease record.
pub(crate) fn decode_lease(key: &[u8], value: &[u8]) -> Option<(i64, i64)> {
    let id = key.strip_prefix(LEASE_PREFIX)?.try_into().ok()?;
    let ttl = value.try_into().ok()?;
    Some((i64::from_be_bytes(id), i64::from_be_bytes(ttl)))
}

/// The meta key of a raised alarm.
pub(crate) fn alarm_key(alarm: Alarm) -> Vec<u8> {
    let mut k = ALARM_PREFIX.to_vec();
    k.extend_from_slice(&alarm.member_id.to_be_bytes());
    k.extend_from_slice(&alarm.kind.number().to_be_bytes());
    k
}

/// The meta-table key range holding every raised alarm.
pub(crate) fn alarm_range() -> (Vec<u8>, Vec<u8>) {
    prefix_range(ALARM_PREFIX)
}

/// The alarm an alarm key names.
pub(crate) fn decode_alarm(key: &[u8]) -> Option<Alarm> {
    let rest = key.strip_prefix(ALARM_PREFIX)?;
    let (member, kind) = rest.split_first_chunk::<8>()?;
    let kind: [u8; 4] = kind.try_into().ok()?;
    Some(Alarm {
        member_id: u64::from_be_bytes(*member),
        kind: AlarmKind::from_number(i32::from_be_bytes(kind))?,
    })
}

/// The meta key of record `key` in `bucket`.
pub(crate) fn record_key(bucket: &str, key: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(RECORD_PREFIX.len() + bucket.len() + 1 + key.len());
    k.extend_from_slice(RECORD_PREFIX);
    k.extend_from_slice(bucket.as_bytes());
    k.push(0);
    k.extend_from_slice(key);
    k
}

/// The meta-table key range holding every record.
pub(crate) fn record_range() -> (Vec<u8>, Vec<u8>) {
    prefix_range(RECORD_PREFIX)
}

/// `(bucket, key)` of a meta key in the record range.
pub(crate) fn decode_record_key(key: &[u8]) -> Option<(String, Bytes)> {
    let rest = key.strip_prefix(RECORD_PREFIX)?;
    let split = rest.iter().position(|&b| b == 0)?;
    let bucket = std::str::from_utf8(&rest[..split]).ok()?;
    Some((
        bucket.to_owned(),
        Bytes::copy_from_slice(&rest[split + 1..]),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revision_keys_round_trip_and_sort_like_revisions() {
        let a = Revision::new(2, 0);
        let b = Revision::new(2, 1);
        let c = Revision::new(256, 0);
        assert_eq!(parse_rev_key(&rev_key(a, false)), Some((a, false)));
        assert_eq!(parse_rev_key(&rev_key(c, true)), Some((c, true)));
        assert!(rev_key(a, false) < rev_key(b, false));
        assert!(rev_key(b, true) < rev_key(c, false));
        assert_eq!(parse_rev_key(b"short"), None);
        let mut bad = rev_key(a, false);
        bad.push(b'x');
        assert_eq!(parse_rev_key(&bad), None);
        // etcd's bytes for revision 3.0, as a snapshot etcd 3.5.1 saved holds them.
        assert_eq!(
            revision_key(3, 0, false),
            [0, 0, 0, 0, 0, 0, 0, 3, b'_', 0, 0, 0, 0, 0, 0, 0, 0]
        );
    }

    #[test]
    fn a_tombstone_row_is_its_key_alone() {
        let value = tombstone_row_value(Bytes::from_static(b"k"));
        let (rev, tombstone, kv) = decode_row(&rev_key(Revision::new(7, 1), true), &value).unwrap();
        assert_eq!((rev, tombstone), (Revision::new(7, 1), true));
        assert_eq!((kv.key.as_ref(), kv.mod_revision), (&b"k"[..], 7));
        assert_eq!(decode_row(b"not a revision", &value), None);
    }

    #[test]
    fn counters_round_trip_and_read_zero_when_absent() {
        assert_eq!(decode_counter(Some(encode_counter(-5))), -5);
        assert_eq!(decode_counter(None), 0);
        assert_eq!(decode_counter(Some(vec![1, 2])), 0);
    }

    #[test]
    fn lease_records_round_trip_and_stay_in_range() {
        let (from, to) = lease_range();
        for id in [1, -1, i64::MAX, i64::MIN, 0x7766] {
            let k = lease_key(id);
            assert!(k >= from && k < to);
            assert_eq!(decode_lease(&k, &lease_value(30)), Some((id, 30)));
        }
    }

    #[test]
    fn alarm_records_round_trip_and_stay_in_range() {
        let (from, to) = alarm_range();
        for alarm in [
            Alarm {
                member_id: 1,
                kind: AlarmKind::NoSpace,
            },
            Alarm {
                member_id: u64::MAX,
                kind: AlarmKind::Corrupt,
            },
        ] {
            let k = alarm_key(alarm);
            assert!(k >= from && k < to);
            assert_eq!(decode_alarm(&k), Some(alarm));
        }
        assert_eq!(decode_alarm(b"alarm/short"), None);
    }

    #[test]
    fn record_keys_round_trip_and_stay_in_range() {
        let (from, to) = record_range();
        for (bucket, key) in [("authUsers", &b"root"[..]), ("auth", b""), ("x", b"a\0b")] {
            let k = record_key(bucket, key);
            assert!(k >= from && k < to);
            assert_eq!(
                decode_record_key(&k),
                Some((bucket.to_owned(), Bytes::copy_from_slice(key)))
            );
        }
        assert_eq!(decode_record_key(b"rec/nobucketend"), None);
        // The three record ranges do not overlap.
        assert!(alarm_range().1 <= lease_range().0 && lease_range().1 <= record_range().0);
    }
}
