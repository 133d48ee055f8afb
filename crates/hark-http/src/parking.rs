//! Parked blocking queries: each one is a watcher on one shared, in-process
//! watch stream, woken by the first event that matches it.
//!
//! A parked request costs one watcher in the engine and one map entry here:
//! no thread, no poll loop, no stream of its own. The stream is opened on
//! first use and again after it ends; when it ends, every parked request is
//! woken (a blocking query may always return without a change).

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

/// The shared watch stream and who waits on it.
#[derive(Clone)]
pub(crate) struct Parking {
    inner: Arc<Inner>,
}

struct Inner {
    grpc: GrpcService,
    /// Requests onto the current stream; `None` until one is open. Unbounded:
    /// at most a create and a cancel per parked request are ever queued.
    stream: tokio::sync::Mutex<Option<mpsc::UnboundedSender<pb::WatchRequest>>>,
    waiting: Mutex<HashMap<i64, oneshot::Sender<()>>>,
    next_id: AtomicI64,
}

/// One parked request. Resolves (via [`Parked::woken`]) when an event
/// matched; dropping it cancels its watcher.
pub(crate) struct Parked {
    inner: Arc<Inner>,
    id: i64,
    requests: mpsc::UnboundedSender<pb::WatchRequest>,
    woken: Option<oneshot::Receiver<()>>,
}

impl Parking {
    pub(crate) fn new(grpc: GrpcService) -> Parking {
        Parking {
            inner: Arc::new(Inner {
                grpc,
                stream: tokio::sync::Mutex::new(None),
                waiting: Mutex::new(HashMap::new()),
                next_id: AtomicI64::new(1),
            }),
        }
    }

    /// Parks until a change to `[key, range_end)` at a revision above
    /// `after`. A change already made is found in history at once; one
    /// below the compaction wakes it at once too.
    pub(crate) async fn park(&self, key: Bytes, range_end: Bytes, after: i64) -> Parked {
        let requests = self.stream().await;
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let (wake, woken) = oneshot::channel();
        self.inner.waiting.lock().insert(id, wake);
        let create = pb::WatchCreateRequest {
            key,
            range_end,
            start_revision: after + 1,
            watch_id: id,
            ..Default::default()
        };
        let _ = requests.send(pb::WatchRequest {
            request_union: Some(RequestUnion::CreateRequest(create)),
        });
        Parked {
            inner: self.inner.clone(),
            id,
            requests,
            woken: Some(woken),
        }
    }

    /// The open stream's sender, opening a stream if there is none.
    async fn stream(&self) -> mpsc::UnboundedSender<pb::WatchRequest> {
        let mut stream = self.inner.stream.lock().await;
        if let Some(open) = stream.as_ref().filter(|s| !s.is_closed()) {
            return open.clone();
        }
        let (requests, outbound) = mpsc::unbounded_channel();
        *stream = Some(requests.clone());
        let inner = self.inner.clone();
        tokio::spawn(async move {
            let opened = WatchClient::new(inner.grpc.clone())
                .watch(UnboundedReceiverStream::new(outbound))
                .await;
            match opened {
                Ok(responses) => inner.serve(responses.into_inner()).await,
                Err(status) => {
                    tracing::warn!(%status, "blocking queries: the watch stream did not open");
                }
            }
            // Whatever ended the stream, nobody stays parked on it.
            *inner.stream.lock().await = None;
            let everyone: Vec<_> = inner.waiting.lock().drain().collect();
            for (_, wake) in everyone {
                let _ = wake.send(());
            }
        });
        requests
    }
}

impl Inner {
    /// Wakes each parked request at its first event (or its cancellation,
    /// e.g. a start below the compaction) and cancels its watcher.
    async fn serve(&self, mut responses: tonic::Streaming<pb::WatchResponse>) {
        while let Ok(Some(response)) = responses.message().await {
            if response.created && !response.canceled {
                continue;
            }
            if response.events.is_empty() && !response.canceled {
                continue;
            }
            let woken = self.waiting.lock().remove(&response.watch_id);
            if let Some(wake) = woken {
                let _ = wake.send(());
            }
            if !response.canceled {
                self.cancel(response.watch_id).await;
            }
        }
    }

    async fn cancel(&self, id: i64) {
        if let Some(stream) = self.stream.lock().await.as_ref() {
            let _ = stream.send(cancel_request(id));
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
    /// Resolves when woken (a matching change, or the stream ended).
    pub(crate) async fn woken(&mut self) {
        if let Some(woken) = self.woken.as_mut() {
            let _ = woken.await;
            self.woken = None;
        }
    }
}

impl Drop for Parked {
    fn drop(&mut self) {
        // Still waiting (a timeout, or the client went away): the watcher is
        // no longer wanted.
        if self.inner.waiting.lock().remove(&self.id).is_some() {
            let _ = self.requests.send(cancel_request(self.id));
        }
    }
}
