//! Blocking queries in the Nomad style: wait until something under a prefix
//! changes after the revision the caller has seen, then fetch only what moved.

use std::collections::HashMap;
use std::time::Duration;

use bytes::Bytes;
use hark_proto::etcdserverpb as pb;
use hark_proto::mvccpb::KeyValue;

use crate::watch::WatchOptions;
use crate::{Client, Error};

/// A key that changed, with the revision of its latest change (a deletion
/// included).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Changed {
    /// The key.
    pub key: Bytes,
    /// The revision of its latest change (for a deletion, the deletion's).
    pub mod_revision: i64,
    /// Whether that change deleted it.
    pub deleted: bool,
}

/// What moved under a prefix since the caller's last view.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Changes {
    /// The revision this view is as of: pass it to the next call.
    pub revision: i64,
    /// New or modified keys, with their values.
    pub updated: Vec<KeyValue>,
    /// Keys in the last view that no longer exist.
    pub deleted: Vec<Bytes>,
}

impl Client {
    /// Blocks until some key under `prefix` changes at a revision after
    /// `after_revision`, or `timeout` passes (then returns no changes). Returns
    /// each changed key once, with its newest change among those delivered.
    /// Fails with a compaction error when `after_revision` is too old.
    ///
    /// ```no_run
    /// # async fn demo(client: hark_client::Client) -> Result<(), hark_client::Error> {
    /// use std::collections::HashMap;
    /// use std::time::Duration;
    ///
    /// // A view of the prefix: key -> mod revision, as of `changes.revision`.
    /// let mut changes = client.changed_since("services/", &HashMap::new()).await?;
    /// let mut view: HashMap<_, _> =
    ///     changes.updated.iter().map(|kv| (kv.key.clone(), kv.mod_revision)).collect();
    /// loop {
    ///     // Park until something under the prefix moves (or 30 s pass)...
    ///     client
    ///         .wait_for_change("services/", changes.revision, Duration::from_secs(30))
    ///         .await?;
    ///     // ...then fetch only what moved.
    ///     changes = client.changed_since("services/", &view).await?;
    ///     for kv in &changes.updated {
    ///         view.insert(kv.key.clone(), kv.mod_revision);
    ///     }
    ///     for key in &changes.deleted {
    ///         view.remove(key);
    ///     }
    /// }
    /// # }
    /// ```
    pub async fn wait_for_change(
        &self,
        prefix: impl Into<Bytes>,
        after_revision: i64,
        timeout: Duration,
    ) -> Result<Vec<Changed>, Error> {
        let mut watch = self
            .watch(
                prefix,
                WatchOptions::prefix().from_revision(after_revision + 1),
            )
            .await?;
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let update = match tokio::time::timeout_at(deadline, watch.next()).await {
                Err(_) => return Ok(Vec::new()),
                Ok(None) => return Err(crate::WatchError::Closed.into()),
                Ok(Some(update)) => update?,
            };
            if update.events.is_empty() {
                continue;
            }
            let mut latest: HashMap<Bytes, Changed> = HashMap::new();
            for e in update.events {
                let deleted = e.r#type() == crate::EventType::Delete;
                let Some(kv) = e.kv else { continue };
                latest.insert(
                    kv.key.clone(),
                    Changed {
                        key: kv.key,
                        mod_revision: kv.mod_revision,
                        deleted,
                    },
                );
            }
            let mut changed: Vec<Changed> = latest.into_values().collect();
            changed.sort_by(|a, b| a.key.cmp(&b.key));
            return Ok(changed);
        }
    }

    /// Compares the caller's view (key → mod revision) with the server's and
    /// fetches the values of only the keys that are new or moved. Both reads
    /// happen at one revision, so the result is a consistent step. See
    /// [`Client::wait_for_change`] for the loop the two make.
    pub async fn changed_since(
        &self,
        prefix: impl Into<Bytes>,
        view: &HashMap<Bytes, i64>,
    ) -> Result<Changes, Error> {
        let prefix: Bytes = prefix.into();
        let range_end: Bytes = crate::prefix_end(&prefix).into();
        let keys = self
            .range(pb::RangeRequest {
                key: prefix.clone(),
                range_end: range_end.clone(),
                keys_only: true,
                ..Default::default()
            })
            .await?;
        let revision = keys.header.map_or(0, |h| h.revision);
        let moved: HashMap<&Bytes, i64> = keys
            .kvs
            .iter()
            .filter(|kv| view.get(&kv.key) != Some(&kv.mod_revision))
            .map(|kv| (&kv.key, kv.mod_revision))
            .collect();
        let mut updated = Vec::new();
        if let Some(&oldest) = moved.values().min() {
            // Everything that moved has mod_revision >= oldest: one read at
            // the same revision, filtered to the moved keys.
            let values = self
                .range(pb::RangeRequest {
                    key: prefix.clone(),
                    range_end,
                    revision,
                    min_mod_revision: oldest,
                    ..Default::default()
                })
                .await?;
            updated = values
                .kvs
                .into_iter()
                .filter(|kv| moved.get(&kv.key) == Some(&kv.mod_revision))
                .collect();
        }
        let present: std::collections::HashSet<&Bytes> =
            keys.kvs.iter().map(|kv| &kv.key).collect();
        let mut deleted: Vec<Bytes> = view
            .keys()
            .filter(|k| !present.contains(k))
            .cloned()
            .collect();
        deleted.sort();
        Ok(Changes {
            revision,
            updated,
            deleted,
        })
    }
}
