//! The Watch service: one `hark_watch::WatchStream` per gRPC stream. A receive
//! task turns requests into creates, cancels and progress requests; a send task
//! turns the engine's ordered replies into `WatchResponse`s (fragmenting where
//! the watch asked for it). Invalid requests are answered as etcd answers them,
//! on the stream, which stays open.

use std::collections::HashSet;
use std::sync::Arc;

use hark_proto::etcdserverpb::{
    self as pb, watch_create_request::FilterType, watch_request::RequestUnion, watch_server::Watch,
};
use hark_proto::mvccpb;
use hark_watch::{ResponseKind, Responses, WatchEvent, WatchRequest, WatchStream};
use parking_lot::Mutex;
use prost::Message;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Code, Request, Response, Status, Streaming};

use crate::grpc_metrics::{self, Call};
use crate::kv::kv_to_pb;
use crate::node::{Node, NodeHandle};

const SERVICE: &str = "etcdserverpb.Watch";
/// Replies queued for the gRPC sender per stream; beyond it the engine's own
/// bounded outbox takes over (and a stalled client's watchers become victims).
const SEND_QUEUE: usize = 16;

pub struct WatchService {
    node: NodeHandle,
}

impl WatchService {
    pub fn new(node: NodeHandle) -> Self {
        WatchService { node }
    }
}

/// Watch ids of one stream whose events may be split (`fragment`).
type Fragmented = Arc<Mutex<HashSet<i64>>>;

#[tonic::async_trait]
impl Watch for WatchService {
    type WatchStream = ReceiverStream<Result<pb::WatchResponse, Status>>;

    async fn watch(
        &self,
        request: Request<Streaming<pb::WatchRequest>>,
    ) -> Result<Response<Self::WatchStream>, Status> {
        let call = grpc_metrics::bidi_stream(SERVICE, "Watch");
        let node = self.node.get()?;
        let (stream, responses) = node.hub.new_stream();
        let fragmented = Fragmented::default();
        let (tx, rx) = mpsc::channel(SEND_QUEUE);
        tokio::spawn(send_loop(
            self.node.clone(),
            responses,
            fragmented.clone(),
            tx,
        ));
        tokio::spawn(recv_loop(
            node.shutdown.clone(),
            request.into_inner(),
            stream,
            fragmented,
            call,
        ));
        Ok(Response::new(ReceiverStream::new(rx)))
    }
}

async fn recv_loop(
    mut shutdown: tokio::sync::watch::Receiver<bool>,
    mut inbound: Streaming<pb::WatchRequest>,
    stream: WatchStream,
    fragmented: Fragmented,
    call: Call,
) {
    let code = loop {
        tokio::select! {
            msg = inbound.message() => match msg {
                Ok(Some(req)) => handle(&stream, &fragmented, req),
                Ok(None) => break Code::Ok,
                Err(status) => break status.code(),
            },
            _ = crate::server::shutting_down(&mut shutdown) => break Code::Unavailable,
        }
    };
    // Closing the engine stream ends `Responses`, which ends the send loop and
    // with it the gRPC stream.
    drop(stream);
    call.handled(code);
}

fn handle(stream: &WatchStream, fragmented: &Fragmented, req: pb::WatchRequest) {
    match req.request_union {
        Some(RequestUnion::CreateRequest(c)) => {
            let filters = |f: FilterType| c.filters.contains(&(f as i32));
            let create = WatchRequest {
                id: c.watch_id,
                key: c.key,
                range_end: c.range_end,
                start_revision: c.start_revision,
                no_put: filters(FilterType::Noput),
                no_delete: filters(FilterType::Nodelete),
                prev_kv: c.prev_kv,
                progress_notify: c.progress_notify,
            };
            // Held across the create so the send loop cannot see the watch's first
            // events before its fragment flag.
            let mut fragmented = fragmented.lock();
            // A refused create is answered by the engine on the stream, in order.
            if let Ok(id) = stream.watch(create)
                && c.fragment
            {
                fragmented.insert(id);
            }
        }
        Some(RequestUnion::CancelRequest(c)) => {
            fragmented.lock().remove(&c.watch_id);
            stream.cancel(c.watch_id);
        }
        Some(RequestUnion::ProgressRequest(_)) => stream.request_progress_all(),
        None => {}
    }
}

async fn send_loop(
    node: NodeHandle,
    responses: Responses,
    fragmented: Fragmented,
    tx: mpsc::Sender<Result<pb::WatchResponse, Status>>,
) {
    while let Some(reply) = responses.recv().await {
        // The node is not held while waiting on a slow client.
        let Ok(messages) = node.get().map(|node| to_wire(&node, reply, &fragmented)) else {
            return;
        };
        for msg in messages {
            if tx.send(Ok(msg)).await.is_err() {
                return;
            }
        }
    }
}

fn to_wire(
    node: &Node,
    reply: hark_watch::WatchResponse,
    fragmented: &Fragmented,
) -> Vec<pb::WatchResponse> {
    let mut w = pb::WatchResponse {
        header: node.header(reply.header_revision),
        watch_id: reply.watch_id,
        ..Default::default()
    };
    match reply.kind {
        ResponseKind::Created => w.created = true,
        ResponseKind::CreateRejected { reason } => {
            w.created = true;
            w.canceled = true;
            w.cancel_reason = reason;
        }
        ResponseKind::Events { events, prev_kv } => {
            w.events = events.iter().map(|e| event_to_pb(e, prev_kv)).collect();
            if fragmented.lock().contains(&reply.watch_id) {
                return fragment(w, node.max_request_bytes);
            }
        }
        ResponseKind::Progress => {}
        ResponseKind::Canceled => w.canceled = true,
        ResponseKind::Compacted { compact_revision } => {
            w.canceled = true;
            w.compact_revision = compact_revision;
        }
    }
    vec![w]
}

fn event_to_pb(e: &WatchEvent, with_prev_kv: bool) -> mvccpb::Event {
    mvccpb::Event {
        r#type: match e.kind {
            hark_mvcc::EventKind::Put => mvccpb::event::EventType::Put as i32,
            hark_mvcc::EventKind::Delete => mvccpb::event::EventType::Delete as i32,
        },
        kv: Some(kv_to_pb(e.kv.clone())),
        prev_kv: if with_prev_kv {
            e.prev_kv().cloned().map(kv_to_pb)
        } else {
            None
        },
    }
}

/// etcd's `sendFragments`: a response of at least `max_bytes` with two or more
/// events is split into pieces under `max_bytes` (a single larger event goes
/// alone); every piece but the last has `fragment` set.
fn fragment(w: pb::WatchResponse, max_bytes: usize) -> Vec<pb::WatchResponse> {
    if w.encoded_len() < max_bytes || w.events.len() < 2 {
        return vec![w];
    }
    let mut shell = w.clone();
    shell.events = Vec::new();
    shell.fragment = true;
    let base = shell.encoded_len();
    let mut pieces = Vec::new();
    let mut cur = shell.clone();
    let mut size = base;
    for ev in w.events {
        let len = ev.encoded_len();
        let added = 1 + prost::encoding::encoded_len_varint(len as u64) + len;
        if !cur.events.is_empty() && size + added >= max_bytes {
            pieces.push(std::mem::replace(&mut cur, shell.clone()));
            size = base;
        }
        size += added;
        cur.events.push(ev);
    }
    cur.fragment = false;
    pieces.push(cur);
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(value_len: usize) -> mvccpb::Event {
        mvccpb::Event {
            r#type: 0,
            kv: Some(mvccpb::KeyValue {
                key: "k".into(),
                value: vec![b'v'; value_len].into(),
                ..Default::default()
            }),
            prev_kv: None,
        }
    }

    #[test]
    fn fragments_keep_every_event_in_order_under_the_limit() {
        let w = pb::WatchResponse {
            watch_id: 3,
            events: (0..10).map(|i| event(100 + i)).collect(),
            ..Default::default()
        };
        let pieces = fragment(w.clone(), 350);
        assert!(pieces.len() > 1);
        let (last, rest) = pieces.split_last().unwrap();
        assert!(rest.iter().all(|p| p.fragment) && !last.fragment);
        for p in &pieces {
            assert!(
                p.encoded_len() < 350 || p.events.len() == 1,
                "{}",
                p.encoded_len()
            );
            assert_eq!(p.watch_id, 3);
        }
        let rejoined: Vec<_> = pieces.into_iter().flat_map(|p| p.events).collect();
        assert_eq!(rejoined, w.events);
    }

    #[test]
    fn small_or_single_event_responses_are_not_fragmented() {
        let one = pb::WatchResponse {
            events: vec![event(10_000)],
            ..Default::default()
        };
        assert_eq!(fragment(one.clone(), 100), vec![one]);
        let small = pb::WatchResponse {
            events: vec![event(1), event(1)],
            ..Default::default()
        };
        assert_eq!(fragment(small.clone(), 1000), vec![small]);
    }
}
