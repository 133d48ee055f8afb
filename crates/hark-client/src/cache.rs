//! A list-and-watch cache of one prefix (the informer pattern): list at a
//! revision, watch from the next one, keep a local map current; re-list after
//! a compaction. Callers can wait until the cache has reached a revision
//! (Kubernetes' consistent reads from cache) and subscribe to its changes.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use hark_proto::etcdserverpb as pb;
use hark_proto::mvccpb::{KeyValue, event::EventType};
use parking_lot::RwLock;
use tokio::sync::{broadcast, watch};

use crate::watch::{WatchError, WatchOptions};
use crate::{Client, Error};

/// A change the cache applied.
#[derive(Debug, Clone, PartialEq)]
pub enum CacheEvent {
    /// A key was created or changed: its new key-value.
    Put(KeyValue),
    /// The key and the revision of its deletion.
    Delete {
        /// The deleted key.
        key: Bytes,
        /// The revision of the deletion.
        revision: i64,
    },
    /// The cache re-listed (first fill, or after a compaction): its whole
    /// content is as of this revision.
    Relisted {
        /// The revision of the listing.
        revision: i64,
    },
}

#[derive(Default)]
struct State {
    items: BTreeMap<Bytes, KeyValue>,
}

/// The cache; dropping it stops its task.
///
/// It lists the prefix, then watches it from the revision after the
/// listing, so it sees every change in revision order and never one twice;
/// if that history is compacted away it lists again (a
/// [`CacheEvent::Relisted`]). Reads are local and never block on the server.
///
/// ```no_run
/// # async fn demo(client: hark_client::Client) -> Result<(), hark_client::Error> {
/// use std::time::Duration;
/// use hark_client::{Cache, CacheEvent};
///
/// let cache = Cache::start(client.clone(), "jobs/").await?;
/// let mut changes = cache.subscribe();
/// let put = client.put("jobs/build", "queued").await?;
///
/// // Read your own write from the cache: wait until it has caught up
/// // (see `wait_for_revision` for etcd versions where this can fall short).
/// let revision = put.header.unwrap().revision;
/// cache.wait_for_revision(revision, Duration::from_secs(5)).await?;
/// assert_eq!(cache.get(b"jobs/build").unwrap().value, "queued");
///
/// if let Ok(CacheEvent::Put(kv)) = changes.recv().await {
///     println!("{:?} is now {:?}", kv.key, kv.value);
/// }
/// # Ok(()) }
/// ```
pub struct Cache {
    client: Client,
    prefix: Bytes,
    state: Arc<RwLock<State>>,
    revision: watch::Receiver<i64>,
    changes: broadcast::Sender<CacheEvent>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Cache {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Cache {
    /// Lists `prefix` and starts following it; returns once the first list is in.
    pub async fn start(client: Client, prefix: impl Into<Bytes>) -> Result<Cache, Error> {
        let prefix: Bytes = prefix.into();
        let first = list(&client, &prefix).await?;
        Ok(Cache::resume(client, prefix, first.revision, first.kvs))
    }

    /// Starts from a listing the caller already has (e.g. a saved snapshot) as
    /// of `revision`, and follows the prefix from the next revision; re-lists
    /// if that revision is compacted.
    pub fn resume(
        client: Client,
        prefix: impl Into<Bytes>,
        revision: i64,
        kvs: Vec<KeyValue>,
    ) -> Cache {
        let prefix: Bytes = prefix.into();
        let state = Arc::new(RwLock::new(State::default()));
        let (changes, _) = broadcast::channel(1024);
        let first = Listing { revision, kvs };
        let (rev_tx, revision) = watch::channel(0);
        install(&state, &rev_tx, &changes, first);
        let task = tokio::spawn(follow(
            client.clone(),
            prefix.clone(),
            state.clone(),
            rev_tx,
            changes.clone(),
        ));
        Cache {
            client,
            prefix,
            state,
            revision,
            changes,
            task,
        }
    }

    /// The revision the cache reflects: every change up to it is applied.
    pub fn revision(&self) -> i64 {
        *self.revision.borrow()
    }

    /// The cached key-value of `key`, as of [`Cache::revision`].
    pub fn get(&self, key: &[u8]) -> Option<KeyValue> {
        self.state.read().items.get(key).cloned()
    }

    /// Every cached key-value, by key, with the revision they are as of.
    pub fn snapshot(&self) -> (i64, Vec<KeyValue>) {
        let state = self.state.read();
        (self.revision(), state.items.values().cloned().collect())
    }

    /// How many keys the cache holds.
    pub fn len(&self) -> usize {
        self.state.read().items.len()
    }

    /// Whether the cache holds no key.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Changes from now on (a slow subscriber that lags gets `Lagged`).
    pub fn subscribe(&self) -> broadcast::Receiver<CacheEvent> {
        self.changes.subscribe()
    }

    /// Waits until the cache has reached `revision`. Asks the server for watch
    /// progress meanwhile, since writes outside the prefix do not move it.
    ///
    /// This relies on the server sending a requested progress notification
    /// only after the events it covers, as Hark does. etcd releases without
    /// the fix for etcd#15220 (3.5.1 among them) can send it ahead of them:
    /// there the wait may return before the cache holds changes up to
    /// `revision`.
    pub async fn wait_for_revision(&self, revision: i64, timeout: Duration) -> Result<(), Error> {
        let mut rx = self.revision.clone();
        let wait = async {
            loop {
                if *rx.borrow_and_update() >= revision {
                    return;
                }
                self.client.request_progress();
                let _ = tokio::time::timeout(Duration::from_millis(100), rx.changed()).await;
            }
        };
        tokio::time::timeout(timeout, wait)
            .await
            .map_err(|_| Error::Timeout)
    }

    /// A snapshot at least as new as the server's current revision (a
    /// consistent read served from the cache).
    pub async fn consistent_snapshot(
        &self,
        timeout: Duration,
    ) -> Result<(i64, Vec<KeyValue>), Error> {
        let current = self
            .client
            .range(pb::RangeRequest {
                key: self.prefix.clone(),
                range_end: crate::prefix_end(&self.prefix).into(),
                count_only: true,
                ..Default::default()
            })
            .await?
            .header
            .map_or(0, |h| h.revision);
        self.wait_for_revision(current, timeout).await?;
        Ok(self.snapshot())
    }
}

struct Listing {
    revision: i64,
    kvs: Vec<KeyValue>,
}

async fn list(client: &Client, prefix: &Bytes) -> Result<Listing, Error> {
    let resp = client.get_prefix(prefix.clone()).await?;
    Ok(Listing {
        revision: resp.header.map_or(0, |h| h.revision),
        kvs: resp.kvs,
    })
}

fn install(
    state: &RwLock<State>,
    rev: &watch::Sender<i64>,
    changes: &broadcast::Sender<CacheEvent>,
    listing: Listing,
) {
    let mut s = state.write();
    s.items = listing
        .kvs
        .into_iter()
        .map(|kv| (kv.key.clone(), kv))
        .collect();
    rev.send_replace(listing.revision);
    let _ = changes.send(CacheEvent::Relisted {
        revision: listing.revision,
    });
}

async fn follow(
    client: Client,
    prefix: Bytes,
    state: Arc<RwLock<State>>,
    rev: watch::Sender<i64>,
    changes: broadcast::Sender<CacheEvent>,
) {
    loop {
        let from = *rev.borrow() + 1;
        let options = WatchOptions {
            prefix: true,
            start_revision: from,
            progress_notify: true,
            ..Default::default()
        };
        let Ok(mut watch) = client.watch(prefix.clone(), options).await else {
            return;
        };
        while let Some(update) = watch.next().await {
            match update {
                Ok(u) if u.events.is_empty() => {
                    if u.revision > *rev.borrow() {
                        rev.send_replace(u.revision);
                    }
                }
                Ok(u) => {
                    let mut s = state.write();
                    let mut last = *rev.borrow();
                    for e in u.events {
                        let deleted = e.r#type() == EventType::Delete;
                        let Some(kv) = e.kv else { continue };
                        last = last.max(kv.mod_revision);
                        let event = if deleted {
                            s.items.remove(&kv.key);
                            CacheEvent::Delete {
                                key: kv.key,
                                revision: kv.mod_revision,
                            }
                        } else {
                            s.items.insert(kv.key.clone(), kv.clone());
                            CacheEvent::Put(kv)
                        };
                        let _ = changes.send(event);
                    }
                    // Under the lock: `snapshot` pairs items and revision.
                    rev.send_replace(last);
                    drop(s);
                }
                Err(WatchError::Compacted { .. }) => break,
                Err(e) => {
                    tracing::warn!(error = %e, "cache watch ended; re-listing");
                    break;
                }
            }
        }
        // Re-list (after a compaction, or if the watch ended), retrying on errors.
        loop {
            match list(&client, &prefix).await {
                Ok(listing) => {
                    install(&state, &rev, &changes, listing);
                    break;
                }
                Err(e) => {
                    tracing::debug!(error = %e, "re-list failed");
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
            }
        }
    }
}
