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
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct RecordsResponse {
    /// The current revision (records change no key).
    pub header_revision: i64,
    /// False when a guard did not hold (nothing changed).
    pub applied: bool,
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
    fn a_bucket_name_is_not_empty_and_holds_no_nul() {
        assert!(valid_bucket("authUsers"));
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
