//! Parked blocking queries: each one waits on a watcher of a shared,
//! in-process watch stream, woken by the first event that matches it.
//!
//! Queries parked on the same range share one watcher, so one change to a
//! key 10,000 queries wait on is one event in the engine and one response
//! on the stream, not 10,000 of each; a parked request costs an entry in
//! its watcher's list. Requests with the same token (none, without auth)
//! share a stream, opened with that token, so under auth each watcher is
//! checked against its caller's permissions. A stream is opened on first
//! use and closed when its last request leaves; when it ends, every request
//! parked on it is woken (a blocking query may always return without a
//! change). A request learns the revision of the event that woke it, so
//! that what it reads next is at least that new.
//!
//! A request joins a watcher that started at or before the revision it
//! needs, so it may be woken by a change it had already seen; it parks
//! again instead of returning. Wake-ups go out [`WAKE_CHUNK`] at a time with
//! a yield between chunks: waking 10,000 queries at once would queue 10,000
//! tasks ahead of every other request the runtime serves.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use bytes::Bytes;
use hark_proto::etcdserverpb::{
    self as pb, watch_client::WatchClient, watch_request::RequestUnion,
};
use parking_lot::Mutex;
use tokio::sync::{mpsc, oneshot};
use tokio_stream::wrappers::UnboundedReceiverStream;

use super::query::Token;
use crate::GrpcService;

/// What woke a parked request: the revision of the change that matched it,
/// or `None` when its stream ended or its watcher was cancelled.
pub(crate) type Wake = Option<i64>;

/// Requests woken before the waking task yields to the rest of the runtime.
const WAKE_CHUNK: usize = 32;

/// The shared watch stream and who waits on it.
#[derive(Clone)]
pub(crate) struct Parking {
    inner: Arc<Inner>,
}

struct Inner {
    grpc: GrpcService,
    /// The open stream of each token.
    streams: Mutex<HashMap<Token, Arc<Shared>>>,
    /// Watcher and request ids (one sequence: an id names one or the other).
    next_id: AtomicI64,
}

/// One watch stream and the requests parked on it. Each stream has its own
/// waiters, so the end of one never touches the next.
struct Shared {
    /// Requests onto the stream. Unbounded, because the parked requests
    /// bound it: each queues at most one create and one cancel.
    requests: mpsc::UnboundedSender<pb::WatchRequest>,
    waiting: Mutex<Waiting>,
    /// Ends the stream (dropping it cancels it at the server).
    close: tokio::sync::Notify,
}

/// A key range: `(key, range_end)` as a watch create names it.
type Range = (Bytes, Bytes);

/// The watchers of one stream and the requests parked on each.
#[derive(Default)]
struct Waiting {
    /// The watcher a new request on a range may join.
    joinable: HashMap<Range, i64>,
    watchers: HashMap<i64, Watcher>,
}

struct Watcher {
    range: Range,
    /// The first revision it reports.
    start: i64,
    /// Request id → its wake-up.
    parked: HashMap<i64, oneshot::Sender<Wake>>,
}

impl Waiting {
    /// The watcher a request that needs changes from `start` on joins: the
    /// range's joinable one if it started no later, else a new one (which
    /// becomes the joinable one). `true` if it is new (and so must be
    /// created on the stream).
    fn join(&mut self, range: Range, start: i64, new_id: impl FnOnce() -> i64) -> (i64, bool) {
        if let Some(&id) = self.joinable.get(&range)
            && self.watchers.get(&id).is_some_and(|w| w.start <= start)
        {
            return (id, false);
        }
        let id = new_id();
        self.joinable.insert(range.clone(), id);
        self.watchers.insert(
            id,
            Watcher {
                range,
                start,
                parked: HashMap::new(),
            },
        );
        (id, true)
    }

    /// Removes watcher `id` and everyone parked on it.
    fn take(&mut self, id: i64) -> Option<Watcher> {
        let watcher = self.watchers.remove(&id)?;
        if self.joinable.get(&watcher.range) == Some(&id) {
            self.joinable.remove(&watcher.range);
        }
        Some(watcher)
    }

    /// Removes request `request` from watcher `id`; `true` if that left the
    /// watcher with nobody (it is removed too, and must be cancelled).
    fn leave(&mut self, id: i64, request: i64) -> bool {
        let Some(watcher) = self.watchers.get_mut(&id) else {
            return false;
        };
        watcher.parked.remove(&request);
        if watcher.parked.is_empty() {
            self.take(id);
            true
        } else {
            false
        }
    }
}

/// One parked request. Resolves (via [`Parked::woken`]) when an event
/// matched; dropping it leaves its watcher (cancelled once nobody is on it).
pub(crate) struct Parked {
    parking: Parking,
    token: Token,
    range: Range,
    /// The last revision the request has seen: a change at or below it does
    /// not wake it.
    after: i64,
    stream: Arc<Shared>,
    watcher: i64,
    id: i64,
    woken: Option<oneshot::Receiver<Wake>>,
}

/// Where a request was parked.
struct Place {
    stream: Arc<Shared>,
    watcher: i64,
    id: i64,
    woken: oneshot::Receiver<Wake>,
}

impl Parking {
    pub(crate) fn new(grpc: GrpcService) -> Parking {
        Parking {
            inner: Arc::new(Inner {
                grpc,
                streams: Mutex::new(HashMap::new()),
                next_id: AtomicI64::new(1),
            }),
        }
    }

    /// Parks until a change to `[key, range_end)` at a revision above
    /// `after`. A change already made is found in history at once; one
    /// below the compaction wakes it at once too.
    pub(crate) async fn park(
        &self,
        key: Bytes,
        range_end: Bytes,
        after: i64,
        token: Token,
    ) -> Parked {
        let range = (key, range_end);
        let place = self.place(&range, after, &token);
        Parked {
            parking: self.clone(),
            token,
            range,
            after,
            stream: place.stream,
            watcher: place.watcher,
            id: place.id,
            woken: Some(place.woken),
        }
    }

    fn next_id(&self) -> i64 {
        self.inner.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Puts a request on a watcher of `token`'s stream (opening the stream,
    /// creating the watcher, as needed).
    fn place(&self, range: &Range, after: i64, token: &Token) -> Place {
        let id = self.next_id();
        let (wake, woken) = oneshot::channel();
        let start = after.saturating_add(1);
        // Placed under the lock that ends and closes streams: a request is
        // either on a live stream or woken with everyone else when it ends.
        let (stream, watcher, is_new) = {
            let mut streams = self.inner.streams.lock();
            let stream = match streams.get(token) {
                Some(open) if !open.requests.is_closed() => open.clone(),
                _ => {
                    let opened = self.open(token.clone());
                    streams.insert(token.clone(), opened.clone());
                    opened
                }
            };
            let mut waiting = stream.waiting.lock();
            let (watcher, is_new) = waiting.join(range.clone(), start, || self.next_id());
            if let Some(w) = waiting.watchers.get_mut(&watcher) {
                w.parked.insert(id, wake);
            }
            drop(waiting);
            (stream, watcher, is_new)
        };
        if is_new {
            let _ = stream.requests.send(pb::WatchRequest {
                request_union: Some(RequestUnion::CreateRequest(pb::WatchCreateRequest {
                    key: range.0.clone(),
                    range_end: range.1.clone(),
                    start_revision: start,
                    watch_id: watcher,
                    ..Default::default()
                })),
            });
        }
        Place {
            stream,
            watcher,
            id,
            woken,
        }
    }

    /// Opens a watch stream with `token` and the task that serves it.
    fn open(&self, token: Token) -> Arc<Shared> {
        let (requests, outbound) = mpsc::unbounded_channel();
        let stream = Arc::new(Shared {
            requests,
            waiting: Mutex::new(Waiting::default()),
            close: tokio::sync::Notify::new(),
        });
        let inner = self.inner.clone();
        let shared = stream.clone();
        tokio::spawn(async move {
            // etcd's gateway takes responses of any size; so does this one.
            let opened = WatchClient::new(inner.grpc.clone())
                .max_decoding_message_size(usize::MAX)
                .watch(token.request(UnboundedReceiverStream::new(outbound)))
                .await;
            match opened {
                Ok(responses) => shared.serve(responses.into_inner()).await,
                Err(status) => {
                    tracing::warn!(%status, "blocking queries: the watch stream did not open");
                }
            }
            {
                let mut streams = inner.streams.lock();
                if streams.get(&token).is_some_and(|c| Arc::ptr_eq(c, &shared)) {
                    streams.remove(&token);
                }
            }
            // Whatever ended the stream, nobody stays parked on it.
            let everyone: Vec<Watcher> = {
                let mut waiting = shared.waiting.lock();
                waiting.joinable.clear();
                waiting.watchers.drain().map(|(_, w)| w).collect()
            };
            for watcher in everyone {
                wake_all(watcher, None).await;
            }
        });
        stream
    }

    /// Closes `token`'s stream if nobody waits on it any more (so streams
    /// of tokens no longer used do not pile up).
    fn close_if_idle(&self, token: &Token, stream: &Arc<Shared>) {
        let mut streams = self.inner.streams.lock();
        if stream.waiting.lock().watchers.is_empty()
            && streams.get(token).is_some_and(|c| Arc::ptr_eq(c, stream))
        {
            streams.remove(token);
            stream.close.notify_one();
        }
    }
}

/// Wakes everyone parked on `watcher`, [`WAKE_CHUNK`] at a time.
async fn wake_all(watcher: Watcher, wake: Wake) {
    for (n, (_, parked)) in watcher.parked.into_iter().enumerate() {
        let _ = parked.send(wake);
        if (n + 1) % WAKE_CHUNK == 0 {
            tokio::task::yield_now().await;
        }
    }
}

impl Shared {
    /// Wakes the requests on a watcher at its first event (or its
    /// cancellation, e.g. a start below the compaction) and cancels it.
    async fn serve(&self, mut responses: tonic::Streaming<pb::WatchResponse>) {
        loop {
            let message = tokio::select! {
                message = responses.message() => message,
                _ = self.close.notified() => return,
            };
            let response = match message {
                Ok(Some(response)) => response,
                Ok(None) => return,
                Err(status) => {
                    tracing::warn!(%status, "blocking queries: the watch stream ended");
                    return;
                }
            };
            if response.events.is_empty() && !response.canceled {
                continue;
            }
            // Gone already if everyone on it left, and they cancelled it.
            let Some(watcher) = self.waiting.lock().take(response.watch_id) else {
                continue;
            };
            // Also after a cancellation: a watcher the engine cancelled for
            // compaction keeps its id until the client cancels it.
            let _ = self.requests.send(cancel_request(response.watch_id));
            let changed_at = response
                .events
                .iter()
                .filter_map(|event| event.kv.as_ref())
                .map(|kv| kv.mod_revision)
                .max();
            wake_all(watcher, changed_at).await;
        }
    }
}

fn cancel_request(id: i64) -> pb::WatchRequest {
    pb::WatchRequest {
        request_union: Some(RequestUnion::CancelRequest(pb::WatchCancelRequest {
            watch_id: id,
        })),
    }
}

impl Parked {
    /// Resolves when woken (a change after the request's revision, or the
    /// stream ended), with the revision of the change; `None` after the
    /// first wake-up too.
    pub(crate) async fn woken(&mut self) -> Wake {
        loop {
            let woken = self.woken.as_mut()?;
            let wake = woken.await.ok().flatten();
            self.woken = None;
            match wake {
                // A change it had seen, from a watcher that started earlier
                // than it needed: it parks again.
                Some(revision) if revision <= self.after => self.park_again(),
                _ => return wake,
            }
        }
    }

    fn park_again(&mut self) {
        let place = self.parking.place(&self.range, self.after, &self.token);
        let previous = std::mem::replace(&mut self.stream, place.stream);
        self.watcher = place.watcher;
        self.id = place.id;
        self.woken = Some(place.woken);
        if !Arc::ptr_eq(&previous, &self.stream) {
            self.parking.close_if_idle(&self.token, &previous);
        }
    }
}

impl Drop for Parked {
    fn drop(&mut self) {
        // Still waiting (a timeout, or the client went away): it leaves its
        // watcher, which nobody else may want any more.
        let abandoned = self.stream.waiting.lock().leave(self.watcher, self.id);
        if abandoned {
            let _ = self.stream.requests.send(cancel_request(self.watcher));
        }
        self.parking.close_if_idle(&self.token, &self.stream);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(key: &str) -> Range {
        (Bytes::from(key.to_owned()), Bytes::new())
    }

    fn counter() -> impl FnMut() -> i64 {
        let mut next = 100;
        move || {
            next += 1;
            next
        }
    }

    #[test]
    fn a_request_joins_a_watcher_that_started_no_later_than_it_needs() {
        let mut ids = counter();
        let mut waiting = Waiting::default();
        let (first, new) = waiting.join(range("k"), 10, &mut ids);
        assert!(new);
        // Needs changes from 12 on: the watcher from 10 reports them all.
        assert_eq!(waiting.join(range("k"), 12, &mut ids), (first, false));
        assert_eq!(waiting.join(range("k"), 10, &mut ids), (first, false));
        // Needs changes from 5 on: the watcher from 10 would miss 5..10.
        let (older, new) = waiting.join(range("k"), 5, &mut ids);
        assert!(new && older != first);
        // The older one is now the one to join; the first stays for its own.
        assert_eq!(waiting.join(range("k"), 12, &mut ids), (older, false));
        assert_eq!(waiting.watchers.len(), 2);
        // Another range never shares.
        let (other, new) = waiting.join(range("j"), 12, &mut ids);
        assert!(new && other != older);
    }

    #[test]
    fn a_watcher_goes_when_its_last_request_leaves_or_it_fires() {
        let mut ids = counter();
        let mut waiting = Waiting::default();
        let (w, _) = waiting.join(range("k"), 1, &mut ids);
        for request in [1, 2] {
            let (wake, _) = oneshot::channel();
            waiting
                .watchers
                .get_mut(&w)
                .unwrap()
                .parked
                .insert(request, wake);
        }
        assert!(!waiting.leave(w, 1), "one request is still on it");
        assert!(waiting.leave(w, 2), "the last one left: cancel it");
        assert!(waiting.watchers.is_empty() && waiting.joinable.is_empty());
        assert!(!waiting.leave(w, 2), "gone already");

        let (w, _) = waiting.join(range("k"), 1, &mut ids);
        let (v, _) = waiting.join(range("k"), 0, &mut ids);
        assert!(waiting.take(w).is_some());
        // The joinable one was not the one that fired: it stays joinable.
        assert_eq!(waiting.joinable.get(&range("k")), Some(&v));
        assert!(waiting.take(v).is_some());
        assert!(waiting.joinable.is_empty());
    }
}
