//! Records: small named tables that a layer above the store keeps beside the
//! revisions (auth's users, roles and switches, in etcd's `auth*` buckets).
//! They change only through the apply path, so they are durable, replicated
//! and in snapshots like the key-value rows, but they have no revisions and
//! no watchers. Each applied change bumps a generation, which lets a reader
//! cache what it derives from them.
//!
//! A change can be guarded: it applies only when some records hold given
//! values at apply time. That makes read-modify-write of records safe under a
//! replicated log (the check runs where the write lands, on every member
//! alike), and lets any write be refused when the records it was checked
//! against have moved on ([`crate::WriteRequest::Guarded`]).

use std::collections::BTreeMap;

use bytes::Bytes;

/// Meta-table prefix: `rec/` + bucket + `\0` + key → value.
const RECORD_PREFIX: &[u8] = b"rec/";

/// Expects the record `bucket`/`key` to hold `expected` (`None`: absent).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct RecordGuard {
    /// The bucket (not empty, no NUL).
    pub bucket: String,
    /// The record's key in the bucket.
    pub key: Bytes,
    /// The value it must hold; `None` if it must be absent.
    pub expected: Option<Bytes>,
}

/// One change of a [`RecordsRequest`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum RecordChange {
    /// Sets `bucket`/`key` to `value`.
    Put {
        /// The bucket (not empty, no NUL).
        bucket: String,
        /// The key in the bucket.
        key: Bytes,
        /// The new value.
        value: Bytes,
    },
    /// Removes `bucket`/`key` (nothing happens if it is absent).
    Delete {
        /// The bucket.
        bucket: String,
        /// The key in the bucket.
        key: Bytes,
    },
}

/// Changes records atomically, if every guard holds.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct RecordsRequest {
    /// Checked at apply time; if any fails, nothing changes.
    pub guards: Vec<RecordGuard>,
    /// Applied in order.
    pub changes: Vec<RecordChange>,
}

/// The answer to a [`RecordsRequest`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RecordsResponse {
    /// The current revision (records change no key).
    pub header_revision: i64,
    /// False when a guard did not hold (nothing changed).
    pub applied: bool,
}

pub(crate) fn record_key(bucket: &str, key: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(RECORD_PREFIX.len() + bucket.len() + 1 + key.len());
    k.extend_from_slice(RECORD_PREFIX);
    k.extend_from_slice(bucket.as_bytes());
    k.push(0);
    k.extend_from_slice(key);
    k
}

pub(crate) fn record_range() -> (Vec<u8>, Vec<u8>) {
    let mut end = RECORD_PREFIX.to_vec();
    *end.last_mut().expect("prefix is not empty") += 1;
    (RECORD_PREFIX.to_vec(), end)
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

/// Whether a bucket name can be stored (it ends at the first NUL).
pub(crate) fn valid_bucket(bucket: &str) -> bool {
    !bucket.is_empty() && !bucket.as_bytes().contains(&0)
}

/// Every record, in memory, kept in step with the meta table by the committer.
#[derive(Debug, Default, Clone)]
pub(crate) struct RecordTable {
    buckets: BTreeMap<String, BTreeMap<Bytes, Bytes>>,
}

impl RecordTable {
    pub fn get(&self, bucket: &str, key: &[u8]) -> Option<&Bytes> {
        self.buckets.get(bucket)?.get(key)
    }

    pub fn holds(&self, guard: &RecordGuard) -> bool {
        self.get(&guard.bucket, &guard.key) == guard.expected.as_ref()
    }

    pub fn bucket(&self, bucket: &str) -> Vec<(Bytes, Bytes)> {
        self.buckets
            .get(bucket)
            .map(|b| b.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default()
    }

    pub fn put(&mut self, bucket: String, key: Bytes, value: Bytes) {
        self.buckets.entry(bucket).or_default().insert(key, value);
    }

    pub fn delete(&mut self, bucket: &str, key: &[u8]) {
        if let Some(b) = self.buckets.get_mut(bucket) {
            b.remove(key);
            if b.is_empty() {
                self.buckets.remove(bucket);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_trip_and_stay_in_range() {
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
        assert!(!valid_bucket("a\0b"));
        assert!(!valid_bucket(""));
    }

    #[test]
    fn guards_compare_presence_and_value() {
        let mut t = RecordTable::default();
        let guard = |expected: Option<&'static [u8]>| RecordGuard {
            bucket: "auth".into(),
            key: Bytes::from_static(b"rev"),
            expected: expected.map(Bytes::from_static),
        };
        assert!(t.holds(&guard(None)));
        t.put(
            "auth".into(),
            Bytes::from_static(b"rev"),
            Bytes::from_static(b"1"),
        );
        assert!(t.holds(&guard(Some(b"1"))));
        assert!(!t.holds(&guard(Some(b"2"))));
        assert!(!t.holds(&guard(None)));
        t.delete("auth", b"rev");
        assert!(t.holds(&guard(None)));
        assert!(t.bucket("auth").is_empty());
    }
}
