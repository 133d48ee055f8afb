//! The Watch service: one `hark_watch::WatchStream` per gRPC stream. A receive
//! task turns requests into creates, cancels and progress requests; the
//! response stream turns the engine's ordered replies into `WatchFrame`s
//! (fragmenting where the watch asked for it). Invalid requests are answered
//! as etcd answers them, on the stream, which stays open.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::ready;

use hark_proto::etcdserverpb::{
    self as pb, watch_create_request::FilterType, watch_request::RequestUnion,
};
use hark_watch::{ResponseKind, Responses, WatchRequest, WatchStream};
use tokio_stream::Stream;
use tonic::codegen::{Body, BoxFuture, Context, Poll, Service, StdError, http};
use tonic::server::NamedService;
use tonic::{Status, Streaming};
use tonic_prost::ProstDecoder;

use crate::grpc::errors::stopped;
use crate::grpc::oversize::stream_receive_error;
use crate::grpc::watch_body::WatchBody;
use crate::grpc::watch_frame::WatchFrame;
use crate::node::{Node, NodeHandle};

const SERVICE: &str = "etcdserverpb.Watch";
const METHOD_PATH: &str = "/etcdserverpb.Watch/Watch";

/// The Watch service as a gRPC endpoint. Written out rather than generated so
/// that its responses can be [`WatchFrame`]s, whose events are encoded once
/// and shared by every watcher, and written out a chunk at a time as HTTP/2
/// takes them ([`WatchBody`]).
#[derive(Clone)]
pub struct WatchService {
    node: NodeHandle,
    max_decoding_message_size: usize,
}

impl WatchService {
    pub fn new(node: NodeHandle, max_decoding_message_size: usize) -> Self {
        WatchService {
            node,
            max_decoding_message_size,
        }
    }
}

impl NamedService for WatchService {
    const NAME: &'static str = SERVICE;
}

impl<B> Service<http::Request<B>> for WatchService
where
    B: Body + Send + 'static,
    B::Error: Into<StdError> + Send + 'static,
{
    type Response = http::Response<tonic::body::Body>;
    type Error = Infallible;
    type Future = BoxFuture<Self::Response, Infallible>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        if req.uri().path() != METHOD_PATH {
            return Box::pin(async { Ok(Status::unimplemented("").into_http()) });
        }
        let response = watch_call(self.node.clone(), self.max_decoding_message_size, req);
        Box::pin(async move { Ok(response) })
    }
}

/// `Watch(stream WatchRequest) returns (stream WatchResponse)`: requests
/// decoded by tonic, responses written by [`WatchBody`]. A stream that cannot
/// open is answered with its status alone, as tonic answers.
fn watch_call<B>(
    handle: NodeHandle,
    max_decoding_message_size: usize,
    req: http::Request<B>,
) -> http::Response<tonic::body::Body>
where
    B: Body + Send + 'static,
    B::Error: Into<StdError> + Send + 'static,
{
    // Hark accepts no compressed requests (nor does etcd's server by
    // default); tonic's refusal, with the encodings it does accept.
    if let Some(encoding) = req.headers().get("grpc-encoding")
        && encoding != "identity"
    {
        let mut status = Status::unimplemented(format!(
            "Content is compressed with `{}` which isn't supported",
            String::from_utf8_lossy(encoding.as_bytes())
        ));
        status.metadata_mut().insert(
            "grpc-accept-encoding",
            tonic::metadata::MetadataValue::from_static("identity"),
        );
        return status.into_http();
    }
    let metadata = tonic::metadata::MetadataMap::from_headers(req.headers().clone());
    // clientv3's WithRequireLeader (Kubernetes sets it): the stream is
    // refused, or ended, while this member has no leader.
    let require_leader = metadata
        .get(REQUIRE_LEADER_KEY)
        .is_some_and(|v| v == "true");
    // Named for reports (/debug/watch/streams); the JSON gateway's calls
    // come in process, with no address of their own.
    let client = req
        .extensions()
        .get::<crate::transport::conn::ConnInfo>()
        .and_then(|info| info.remote)
        .map_or_else(|| "HTTP gateway".to_owned(), |a| a.to_string());
    let inbound = Streaming::new_request(
        ProstDecoder::<pb::WatchRequest>::default(),
        req.into_body(),
        None,
        Some(max_decoding_message_size),
    );
    match open_stream(handle, metadata, inbound, require_leader, &client) {
        Ok(frames) => {
            let mut response = http::Response::new(tonic::body::Body::new(WatchBody::new(frames)));
            response.headers_mut().insert(
                http::header::CONTENT_TYPE,
                http::HeaderValue::from_static("application/grpc"),
            );
            response
        }
        Err(status) => status.into_http(),
    }
}

/// gRPC metadata of clientv3's `WithRequireLeader` (etcd's rpctypes).
pub(crate) const REQUIRE_LEADER_KEY: &str = "hasleader";
pub(crate) const NO_LEADER: &str = "etcdserver: no leader";
/// etcd's `maxNoLeaderCnt`.
const MAX_NO_LEADER_CHECKS: u32 = 3;

fn open_stream(
    handle: NodeHandle,
    metadata: tonic::metadata::MetadataMap,
    inbound: Streaming<pb::WatchRequest>,
    require_leader: bool,
    client: &str,
) -> Result<FrameStream, Status> {
    let node = handle.get()?;
    let replica = require_leader.then(|| node.replica.clone());
    if replica.as_ref().is_some_and(|r| !r.has_leader()) {
        return Err(Status::unavailable(NO_LEADER));
    }
    // Under auth, a stream whose metadata names nobody valid can never
    // create a watcher (its credentials are fixed at open): it gets no
    // engine stream, only the answers etcd would give its creates.
    let anonymous = node
        .auth_caller(&metadata)
        .and_then(|caller| caller.authenticated())
        .is_err();
    if anonymous {
        let (refusals, replies) = tokio::sync::mpsc::channel(REFUSALS_QUEUED);
        let ending = Arc::new(parking_lot::Mutex::new(None));
        node.streams.spawn(refuse_loop(
            node.stop.clone(),
            (handle.clone(), metadata),
            inbound,
            refusals,
            ending.clone(),
        ));
        return Ok(FrameStream {
            node: handle,
            replies: Replies::Refusals(replies),
            ready: VecDeque::new(),
            ending,
            timers: SendLoopTimers::new(),
        });
    }
    let (stream, responses) = node.hub.new_stream_for(client);
    let ending = Arc::new(parking_lot::Mutex::new(None));
    node.streams.spawn(recv_loop(
        node.stop.clone(),
        (handle.clone(), metadata),
        inbound,
        stream,
        replica,
        ending.clone(),
    ));
    Ok(FrameStream {
        node: handle,
        replies: Replies::Engine(responses),
        ready: VecDeque::new(),
        ending,
        timers: SendLoopTimers::new(),
    })
}

/// Refusals a stream without a caller may have waiting for the client.
const REFUSALS_QUEUED: usize = 16;

/// The receive side of a stream opened without a valid caller under auth:
/// every create is answered as etcd answers it (created and canceled, with
/// the reason), cancels and progress requests find no watcher, as etcd's
/// find none. If a create would now pass (auth was disabled meanwhile),
/// the stream ends Unavailable so that the client opens a new one.
async fn refuse_loop(
    stop: crate::tasks::Stop,
    (handle, metadata): (NodeHandle, tonic::metadata::MetadataMap),
    mut inbound: Streaming<pb::WatchRequest>,
    refusals: tokio::sync::mpsc::Sender<WatchFrame>,
    ending: Arc<parking_lot::Mutex<Option<Status>>>,
) {
    let mut reading = true;
    let status = loop {
        tokio::select! {
            msg = inbound.message(), if reading => match msg {
                Ok(Some(pb::WatchRequest {
                    request_union: Some(RequestUnion::CreateRequest(c)),
                })) => {
                    let Ok(node) = handle.get() else {
                        break Some(stopped());
                    };
                    let reason = if c.start_revision < 0 {
                        Some(hark_watch::WatchError::NegativeRevision.to_string())
                    } else {
                        node.watch_refusal(&metadata, &c.key, &c.range_end)
                    };
                    let Some(reason) = reason else {
                        break Some(Status::unavailable(
                            "etcdserver: the auth state changed; open the watch stream again",
                        ));
                    };
                    let frame = WatchFrame {
                        head: pb::WatchResponse {
                            header: node.header(node.store.current_revision()),
                            watch_id: hark_watch::NO_WATCH_ID,
                            created: true,
                            canceled: true,
                            cancel_reason: reason,
                            ..Default::default()
                        },
                        ..Default::default()
                    };
                    drop(node);
                    // Waits while the client does not read: flow control
                    // holds back one that only sends.
                    if refusals.send(frame).await.is_err() {
                        break None;
                    }
                }
                Ok(Some(_)) => {}
                Ok(None) => reading = false,
                Err(status) => break stream_receive_error(status),
            },
            _ = refusals.closed() => break None,
            _ = stop.raised() => break Some(stopped()),
        }
    };
    *ending.lock() = status;
}

/// Resolves once the member has had no leader at more than
/// [`MAX_NO_LEADER_CHECKS`] checks in a row, one per election timeout (etcd's
/// monitorLeader): a leader change (a few election timeouts) does not end
/// the stream; a lost quorum does. Never resolves without a replica.
pub(crate) async fn leader_lost(replica: Option<&Arc<hark_raft::Replica>>) {
    let Some(replica) = replica else {
        return std::future::pending().await;
    };
    let period = replica.election_timeout();
    let mut misses = 0;
    loop {
        tokio::time::sleep(period).await;
        if !replica.has_leader() {
            misses += 1;
            if misses > MAX_NO_LEADER_CHECKS {
                return;
            }
        } else {
            misses = 0;
        }
    }
}

/// Reads the client's requests until the stream ends. As in etcd, a client
/// that closes its side keeps its watches: the stream ends when the client
/// resets it (or goes away), when the member shuts down, or when a
/// `hasleader` stream's member has lost its leader; the last two with a
/// status, left in `ending` for the response stream to send.
async fn recv_loop(
    stop: crate::tasks::Stop,
    caller: (NodeHandle, tonic::metadata::MetadataMap),
    mut inbound: Streaming<pb::WatchRequest>,
    stream: WatchStream,
    replica: Option<Arc<hark_raft::Replica>>,
    ending: Arc<parking_lot::Mutex<Option<Status>>>,
) {
    let mut reading = true;
    // Made once: its count of checks without a leader must survive requests.
    let lost_leader = leader_lost(replica.as_ref());
    tokio::pin!(lost_leader);
    let status = loop {
        tokio::select! {
            // Read the client's next request only once the stream has room
            // for it (see `WatchStream::ready`): flow control holds back a
            // client that sends faster than it reads.
            msg = async {
                stream.ready().await;
                inbound.message().await
            }, if reading => match msg {
                Ok(Some(req)) => handle(&caller, &stream, req),
                Ok(None) => reading = false,
                // The client went away, or sent what cannot be read.
                Err(status) => break stream_receive_error(status),
            },
            _ = stream.closed() => break None,
            _ = stop.raised() => break Some(stopped()),
            _ = &mut lost_leader => break Some(Status::unavailable(NO_LEADER)),
        }
    };
    *ending.lock() = status;
    // Closing the engine stream ends `Responses`, which ends the response
    // stream (with `ending`'s status, if any) and with it the gRPC stream.
    drop(stream);
}

fn handle(
    (node, metadata): &(NodeHandle, tonic::metadata::MetadataMap),
    stream: &WatchStream,
    req: pb::WatchRequest,
) {
    match req.request_union {
        Some(RequestUnion::CreateRequest(c)) => {
            // A negative start revision is refused first (by the engine).
            if c.start_revision >= 0
                && let Ok(node) = node.get()
                && let Some(reason) = node.watch_refusal(metadata, &c.key, &c.range_end)
            {
                stream.reject(reason);
                return;
            }
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
                fragment: c.fragment,
            };
            // A refused create is answered by the engine on the stream, in order.
            let _ = stream.watch(create);
        }
        Some(RequestUnion::CancelRequest(c)) => {
            stream.cancel(c.watch_id);
        }
        Some(RequestUnion::ProgressRequest(_)) => stream.request_progress_all(),
        None => {}
    }
}

/// Where a Watch call's replies come from.
enum Replies {
    /// The engine stream's outbox.
    Engine(Responses),
    /// A stream without a caller: its refused creates (see `refuse_loop`).
    Refusals(tokio::sync::mpsc::Receiver<WatchFrame>),
}

/// The gRPC response stream of one Watch call. It takes the engine's replies
/// straight from the stream's outbox as tonic asks for them (no task or channel
/// in between), so a burst of replies is encoded into one buffer and written
/// together; while the client does not read, replies wait in the outbox, whose
/// bound turns its watchers into victims.
struct FrameStream {
    node: NodeHandle,
    replies: Replies,
    /// Frames of a reply that was split into fragments, not yet handed out.
    ready: VecDeque<WatchFrame>,
    /// The status the stream ends with, if not OK (see `recv_loop`).
    ending: Arc<parking_lot::Mutex<Option<Status>>>,
    timers: SendLoopTimers,
}

impl Stream for FrameStream {
    type Item = Result<WatchFrame, Status>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            if let Some(frame) = this.ready.pop_front() {
                return Poll::Ready(Some(Ok(frame)));
            }
            let responses = match &mut this.replies {
                Replies::Engine(responses) => responses,
                Replies::Refusals(refusals) => {
                    return match ready!(refusals.poll_recv(cx)) {
                        Some(frame) => Poll::Ready(Some(Ok(frame))),
                        None => Poll::Ready(this.ending.lock().take().map(Err)),
                    };
                }
            };
            let Some(reply) = ready!(responses.poll_recv(cx)) else {
                return Poll::Ready(this.ending.lock().take().map(Err));
            };
            // The node is held only while converting, never while the client is slow.
            let Ok(node) = this.node.get() else {
                let status = this.ending.lock().take().unwrap_or_else(stopped);
                return Poll::Ready(Some(Err(status)));
            };
            let started = std::time::Instant::now();
            let (timer, events) = this.timers.of(&reply.kind);
            to_wire(&node, reply, &mut this.ready);
            this.timers.record(timer, events, started.elapsed());
        }
    }
}

/// etcd's watch send-loop histograms, looked up once per Watch call (the
/// delivery path records into them for every reply). etcd times its send
/// loop per response; Hark's equivalent is the turn of an engine reply into
/// wire frames (the send itself is tonic's).
struct SendLoopTimers {
    watch: metrics::Histogram,
    per_event: metrics::Histogram,
    control: metrics::Histogram,
    progress: metrics::Histogram,
}

/// Which of [`SendLoopTimers`] a reply is timed into.
#[derive(Clone, Copy)]
enum SendLoopTimer {
    Watch,
    Control,
    Progress,
}

impl SendLoopTimers {
    fn new() -> SendLoopTimers {
        SendLoopTimers {
            watch: metrics::histogram!(
                "etcd_debugging_server_watch_send_loop_watch_stream_duration_seconds"
            ),
            per_event: metrics::histogram!(
                "etcd_debugging_server_watch_send_loop_watch_stream_duration_per_event_seconds"
            ),
            control: metrics::histogram!(
                "etcd_debugging_server_watch_send_loop_control_stream_duration_seconds"
            ),
            progress: metrics::histogram!(
                "etcd_debugging_server_watch_send_loop_progress_duration_seconds"
            ),
        }
    }

    /// The timer of a reply of this kind, with its number of events.
    fn of(&self, kind: &ResponseKind) -> (SendLoopTimer, usize) {
        match kind {
            ResponseKind::Events { events, .. } => (SendLoopTimer::Watch, events.len()),
            ResponseKind::Progress => (SendLoopTimer::Progress, 0),
            _ => (SendLoopTimer::Control, 0),
        }
    }

    fn record(&self, timer: SendLoopTimer, events: usize, took: std::time::Duration) {
        let took = took.as_secs_f64();
        match timer {
            SendLoopTimer::Watch => self.watch.record(took),
            SendLoopTimer::Control => self.control.record(took),
            SendLoopTimer::Progress => self.progress.record(took),
        }
        if events > 0 {
            self.per_event.record(took / events as f64);
        }
    }
}

/// Appends the frames of one engine reply to `out` (more than one only when
/// it is fragmented).
fn to_wire(node: &Node, reply: hark_watch::WatchResponse, out: &mut VecDeque<WatchFrame>) {
    let mut w = WatchFrame {
        head: pb::WatchResponse {
            header: node.header(reply.header_revision),
            watch_id: reply.watch_id,
            ..Default::default()
        },
        ..Default::default()
    };
    match reply.kind {
        ResponseKind::Created => w.head.created = true,
        ResponseKind::CreateRejected { reason } => {
            w.head.created = true;
            w.head.canceled = true;
            w.head.cancel_reason = reason;
        }
        ResponseKind::Events {
            events,
            prev_kv,
            fragment,
        } => {
            w.events = events;
            w.prev_kv = prev_kv;
            if fragment {
                out.extend(w.fragment(node.max_request_bytes));
                return;
            }
        }
        ResponseKind::Progress => {}
        ResponseKind::Canceled => w.head.canceled = true,
        ResponseKind::Compacted { compact_revision } => {
            w.head.canceled = true;
            w.head.compact_revision = compact_revision;
        }
    }
    out.push_back(w);
}
