//! Parked blocking queries: each one is a watcher on a shared, in-process
//! watch stream, woken by the first event that matches it.
//!
//! A parked request costs one watcher in the engine and one map entry here:
//! no thread, no poll loop, no stream of its own. Requests with the same
//! token (none, without auth) share a stream, opened with that token, so
//! under auth each watcher is checked against its caller's permissions. A
//! stream is opened on first use and closed when its last request leaves;
//! when it ends, every request parked on it is woken (a blocking query may
//! always return without a change). A request learns the revision of the
//! event that woke it, so that what it reads next is at least that new.

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

use crate::GrpcService;
use crate::consul::Token;

/// What woke a parked request: the revision of the change that matched it,
/// or `None` when its stream ended or its watcher was cancelled.
pub(crate) type Wake = Option<i64>;

/// The shared watch stream and who waits on it.
#[derive(Clone)]
pub(crate) struct Parking {
    inner: Arc<Inner>,
}

struct Inner {
    grpc: GrpcService,
    /// The open stream of each token.
    streams: Mutex<HashMap<Token, Arc<Shared>>>,
    next_id: AtomicI64,
}

/// One watch stream and the requests parked on it. Each stream has its own
/// waiters, so the end of one never touches the next.
struct Shared {
    /// Requests onto the stream. Unbounded, because the number of parked
    /// requests bounds it: each queues a create and at most two cancels
    /// (after its wake-up, and when it is dropped).
    requests: mpsc::UnboundedSender<pb::WatchRequest>,
    waiting: Mutex<HashMap<i64, oneshot::Sender<Wake>>>,
    /// Ends the stream (dropping it cancels it at the server).
    close: tokio::sync::Notify,
}

/// One parked request. Resolves (via [`Parked::woken`]) when an event
/// matched; dropping it cancels its watcher.
pub(crate) struct Parked {
    parking: Parking,
    token: Token,
    stream: Arc<Shared>,
    id: i64,
    woken: Option<oneshot::Receiver<Wake>>,
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
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let (wake, woken) = oneshot::channel();
        let create = pb::WatchCreateRequest {
            key,
            range_end,
            start_revision: after.saturating_add(1),
            watch_id: id,
            ..Default::default()
        };
        // Registered under the lock that ends and closes streams: a request
        // is either on a live stream or woken with everyone else when it ends.
        let stream = {
            let mut streams = self.inner.streams.lock();
            let stream = match streams.get(&token) {
                Some(open) if !open.requests.is_closed() => open.clone(),
                _ => {
                    let opened = self.open(token.clone());
                    streams.insert(token.clone(), opened.clone());
                    opened
                }
            };
            stream.waiting.lock().insert(id, wake);
            stream
        };
        let _ = stream.requests.send(pb::WatchRequest {
            request_union: Some(RequestUnion::CreateRequest(create)),
        });
        Parked {
            parking: self.clone(),
            token,
            stream,
            id,
            woken: Some(woken),
        }
    }

    /// Opens a watch stream with `token` and the task that serves it.
    fn open(&self, token: Token) -> Arc<Shared> {
        let (requests, outbound) = mpsc::unbounded_channel();
        let stream = Arc::new(Shared {
            requests,
            waiting: Mutex::new(HashMap::new()),
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
            let everyone: Vec<_> = shared.waiting.lock().drain().collect();
            for (_, wake) in everyone {
                let _ = wake.send(None);
            }
        });
        stream
    }

    /// Closes `token`'s stream if nobody waits on it any more (so streams
    /// of tokens no longer used do not pile up).
    fn close_if_idle(&self, token: &Token, stream: &Arc<Shared>) {
        let mut streams = self.inner.streams.lock();
        if stream.waiting.lock().is_empty()
            && streams.get(token).is_some_and(|c| Arc::ptr_eq(c, stream))
        {
            streams.remove(token);
            stream.close.notify_one();
        }
    }
}

impl Shared {
    /// Wakes each parked request at its first event (or its cancellation,
    /// e.g. a start below the compaction) and cancels its watcher.
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
            let woken = self.waiting.lock().remove(&response.watch_id);
            if let Some(wake) = woken {
                let changed_at = response
                    .events
                    .iter()
                    .filter_map(|event| event.kv.as_ref())
                    .map(|kv| kv.mod_revision)
                    .max();
                let _ = wake.send(changed_at);
            }
            // Also after a cancellation: a watcher the engine cancelled for
            // compaction keeps its id until the client cancels it.
            let _ = self.requests.send(cancel_request(response.watch_id));
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
    /// Resolves when woken (a matching change, or the stream ended), with
    /// the revision of the change; `None` after the first wake-up too.
    pub(crate) async fn woken(&mut self) -> Wake {
        let woken = self.woken.as_mut()?;
        let wake = woken.await.ok().flatten();
        self.woken = None;
        wake
    }
}

impl Drop for Parked {
    fn drop(&mut self) {
        // Still waiting (a timeout, or the client went away): the watcher is
        // no longer wanted.
        if self.stream.waiting.lock().remove(&self.id).is_some() {
            let _ = self.stream.requests.send(cancel_request(self.id));
        }
        self.parking.close_if_idle(&self.token, &self.stream);
    }
}
