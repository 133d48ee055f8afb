//! What a client asks of a watch stream, and why a create can be refused.

use bytes::Bytes;

use crate::response::WatchId;

/// etcd's `WatchCreateRequest`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WatchRequest {
    /// 0: the stream picks the next free id (from 0 up, skipping ids in use).
    pub id: WatchId,
    /// Empty means `"\0"`.
    pub key: Bytes,
    /// Empty: one key; `"\0"`: every key `>= key`; else `[key, range_end)`.
    pub range_end: Bytes,
    /// 0: from the next revision on; `<= current`: replay history from it;
    /// in the future: wait for it; negative: rejected.
    pub start_revision: i64,
    /// Leave out puts (etcd's `NOPUT` filter).
    pub no_put: bool,
    /// Leave out deletes (etcd's `NODELETE` filter).
    pub no_delete: bool,
    /// Each event also carries the key's previous value.
    pub prev_kv: bool,
    /// Send a progress reply when the watch has been idle for the engine's
    /// progress interval.
    pub progress_notify: bool,
    /// Event responses too large for one message may be split; the server
    /// that sends them does the splitting, and learns of it from each
    /// response ([`crate::ResponseKind::Events`]).
    pub fragment: bool,
}

impl WatchRequest {
    /// A watch on one key, from the next revision.
    ///
    /// ```
    /// use hark_watch::WatchRequest;
    ///
    /// let req = WatchRequest::key("config/color");
    /// assert_eq!(req.key, "config/color");
    /// assert!(req.range_end.is_empty(), "one key");
    /// assert_eq!((req.id, req.start_revision), (0, 0), "next free id, from now");
    /// ```
    pub fn key(key: impl Into<Bytes>) -> Self {
        WatchRequest {
            key: key.into(),
            ..Default::default()
        }
    }

    /// A watch on every key starting with `prefix`, from the next revision.
    ///
    /// ```
    /// use hark_watch::WatchRequest;
    ///
    /// let req = WatchRequest::prefix("config/");
    /// assert_eq!((req.key, req.range_end), ("config/".into(), "config0".into()));
    /// // The empty prefix watches every key (etcd's `"\0"` range end).
    /// assert_eq!(WatchRequest::prefix("").range_end, "\0");
    /// ```
    pub fn prefix(prefix: impl Into<Bytes>) -> Self {
        let prefix = prefix.into();
        let end = hark_mvcc::prefix_end(&prefix);
        WatchRequest::range(prefix, end)
    }

    /// A watch on `[key, range_end)` (see the fields for the special ends),
    /// from the next revision.
    ///
    /// ```
    /// use hark_watch::WatchRequest;
    ///
    /// let req = WatchRequest::range("a", "m");
    /// assert_eq!((req.key, req.range_end), ("a".into(), "m".into()));
    /// // Every key from "m" on.
    /// assert_eq!(WatchRequest::range("m", "\0").range_end, "\0");
    /// ```
    pub fn range(key: impl Into<Bytes>, range_end: impl Into<Bytes>) -> Self {
        WatchRequest {
            key: key.into(),
            range_end: range_end.into(),
            ..Default::default()
        }
    }

    /// Replays history from `start_revision` (see the field).
    ///
    /// ```
    /// use hark_watch::WatchRequest;
    ///
    /// let req = WatchRequest::prefix("jobs/").from_revision(42).with_prev_kv();
    /// assert_eq!(req.start_revision, 42);
    /// assert!(req.prev_kv);
    /// assert!(!req.no_put && !req.no_delete, "no filters unless set");
    /// ```
    pub fn from_revision(mut self, start_revision: i64) -> Self {
        self.start_revision = start_revision;
        self
    }

    /// Each event also carries the key's previous value (see
    /// [`WatchStream::watch`](crate::WatchStream::watch) for one in use).
    ///
    /// ```
    /// use hark_watch::WatchRequest;
    ///
    /// assert!(WatchRequest::key("k").with_prev_kv().prev_kv);
    /// assert!(!WatchRequest::key("k").prev_kv);
    /// ```
    pub fn with_prev_kv(mut self) -> Self {
        self.prev_kv = true;
        self
    }
}

/// Why a create was refused. `Display` is etcd's `cancel_reason`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WatchError {
    /// `range_end` is not after `key`.
    #[error("mvcc: watcher range is empty")]
    EmptyRange,
    /// The id asked for is in use on this stream.
    #[error("mvcc: duplicate watch ID provided on the WatchStream")]
    DuplicateId,
    /// etcd (since 3.5.24) reports a negative start revision as compacted.
    #[error("etcdserver: mvcc: required revision has been compacted")]
    NegativeRevision,
    /// The stream is closed.
    #[error("mvcc: watch stream is closed")]
    Closed,
    /// The stream holds [`crate::WatchConfig::max_watchers_per_stream`]
    /// watchers already (Hark's own bound; etcd has none).
    #[error("etcdserver: too many watchers on this stream")]
    TooManyWatchers,
}
