//! Reverse links: a member sends its calls to a peer over a link that peer
//! opened to it, and dials the peer itself only when no such link is open.
//!
//! etcd sends each raft message on a stream the *receiving* member opened
//! to the sender (falling back to a connection the sender opens only when
//! no stream works). So a member whose listener is cut off cannot send,
//! even though it can still dial out: etcd's e2e tests partition a member
//! that way (a proxy in front of its peer port dropping every byte) and
//! expect it to lose the cluster. And a member whose own connections are
//! refused (its certificate does not match the address it dials from) still
//! takes part, over the links the others opened to it.
//!
//! Each member keeps one `Reverse` call open to every other member
//! ([`keep_links`]): the peer it dials sends its calls down that call's
//! response stream, and this member answers up the request stream.
//! Snapshots (large) and `Members` (asked before a member knows its id)
//! are always dialled, as etcd always sends snapshots on a connection of
//! their own.
//!
//! Both sides send a heartbeat every [`HEARTBEAT`] and drop a link that
//! has been silent for [`SILENCE`] (etcd's stream read timeout), after
//! which calls are dialled. A call that times out on a link that is not yet
//! silent that long does *not* fall back to dialling: that is the very case
//! of a cut-off listener, which etcd's members also take 5 s to give up on.
//!
//! Appends that come over a link are handed to raft in the order they
//! arrive, and answered in that order ([`append_lane`]), so a leader may
//! keep several appends in flight to one follower on its link (see
//! `network.rs`, `Connection::stream_append`). A member says so when it
//! opens a link ([`APPENDS_IN_ORDER_HEADER`]); a member of an older build,
//! which answers each call on a task of its own, is sent one at a time.
//!
//! Trust is the same as for dialled calls (and as etcd's `X-Server-From`):
//! a link names its member in the peer headers, and only a current member
//! of this cluster, as this member's own membership lists it, may open one;
//! peer TLS with client certificates is what proves a member is one.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::sync::Weak;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};
use futures_util::StreamExt;
use hark_proto::harkpeerpb::Envelope;
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tonic::Status;

use crate::admission::Caller;
use crate::network::Method;
use crate::replica::Replica;
use crate::service::PeerService;
use crate::types::{TypeConfig, decode, encode};

/// A link silent this long is gone (etcd's stream read timeout).
pub(crate) const SILENCE: Duration = Duration::from_secs(5);
/// How often each side of a link says it is there.
pub(crate) const HEARTBEAT: Duration = Duration::from_millis(1600);
/// Calls queued on a link before callers wait: appends are up to 2 MiB,
/// so this bounds a stalled link's queue to tens of MiB.
const QUEUED_CALLS: usize = 16;
/// Answers queued on a link before answering waits.
const QUEUED_ANSWERS: usize = 64;
/// The pause between two attempts to open a link (etcd's stream readers
/// redial every 100 ms): a link is up soon after its peer is, before the
/// first client is served, and a refused attempt costs one connection.
const RETRY: Duration = Duration::from_millis(100);
/// How often the links are checked against the membership.
const MEMBERSHIP_CHECK: Duration = Duration::from_millis(100);
/// Appends handed to raft on one link and not yet answered: a leader keeps
/// at most its append window in flight (far fewer), so only a peer that
/// ignores it meets this bound, and its extra appends are refused, not
/// queued.
pub(crate) const LANE_DEPTH: usize = 32;

/// The metadata key with which a member opening a link says that it hands
/// the appends coming over it to raft in order (any value).
pub(crate) const APPENDS_IN_ORDER_HEADER: &str = "hark-link-appends-in-order";

/// What crosses a link.
#[derive(Debug)]
enum Frame {
    /// A call from the member the link was opened to, to be answered
    /// within `timeout_ms` of its arrival (what its caller had left).
    Call {
        id: u64,
        method: Method,
        request: Bytes,
        format: u32,
        timeout_ms: u64,
    },
    /// The answer to call `id`: the response envelope, or a gRPC status.
    Answer {
        id: u64,
        result: Result<(Bytes, u32), (i32, String)>,
    },
    Heartbeat,
}

/// A frame's head, postcard-encoded; the call's or answer's envelope data
/// follows it as it is (appends are megabytes: encoded once, by the caller).
#[derive(Serialize, Deserialize)]
enum Head {
    Call {
        id: u64,
        method: Method,
        format: u32,
        timeout_ms: u64,
    },
    Answer {
        id: u64,
        /// The answer's envelope format, or its status.
        result: Result<u32, (i32, String)>,
    },
    Heartbeat,
}

/// A frame as an [`Envelope`]'s data: the head's length (4 bytes, little
/// endian), the head, then the payload.
fn frame_envelope(frame: Frame) -> Envelope {
    let (head, payload) = match frame {
        Frame::Call {
            id,
            method,
            request,
            format,
            timeout_ms,
        } => (
            Head::Call {
                id,
                method,
                format,
                timeout_ms,
            },
            request,
        ),
        Frame::Answer { id, result } => match result {
            Ok((data, format)) => (
                Head::Answer {
                    id,
                    result: Ok(format),
                },
                data,
            ),
            Err(status) => (
                Head::Answer {
                    id,
                    result: Err(status),
                },
                Bytes::new(),
            ),
        },
        Frame::Heartbeat => (Head::Heartbeat, Bytes::new()),
    };
    let head = encode(&head);
    let mut data = BytesMut::with_capacity(4 + head.len() + payload.len());
    data.put_u32_le(u32::try_from(head.len()).expect("a frame head is small"));
    data.put_slice(&head);
    data.put_slice(&payload);
    Envelope {
        data: data.freeze(),
        format: crate::format::PEER_FORMAT,
    }
}

fn frame(envelope: &Envelope) -> Result<Frame, Status> {
    crate::format::check_peer_format(envelope.format)
        .map_err(|e| Status::failed_precondition(format!("peer link frame of {e}")))?;
    let bad = |what: &str| Status::invalid_argument(format!("undecodable peer link frame: {what}"));
    let data = &envelope.data;
    let len = data
        .get(..4)
        .map(|l| u32::from_le_bytes([l[0], l[1], l[2], l[3]]) as usize)
        .ok_or_else(|| bad("no head"))?;
    let end = 4usize
        .checked_add(len)
        .filter(|end| *end <= data.len())
        .ok_or_else(|| bad("a head longer than the frame"))?;
    let head: Head = decode(&data[4..end]).map_err(|e| bad(&e.to_string()))?;
    let payload = data.slice(end..);
    Ok(match head {
        Head::Call {
            id,
            method,
            format,
            timeout_ms,
        } => Frame::Call {
            id,
            method,
            request: payload,
            format,
            timeout_ms,
        },
        Head::Answer { id, result } => Frame::Answer {
            id,
            result: result.map(|format| (payload, format)),
        },
        Head::Heartbeat => Frame::Heartbeat,
    })
}

/// Whether `method` may go over a link (see the module docs).
pub(crate) fn over_links(method: Method) -> bool {
    // The two methods added with openraft 0.10 are dialled: a member of the
    // build before them cannot decode them in a link's frame and would end
    // the link (and every call on it); dialled, it answers `Unimplemented`.
    !matches!(
        method,
        Method::InstallSnapshot | Method::Members | Method::PreVote | Method::RaftTransferLeader
    )
}

type Pending = Arc<Mutex<HashMap<u64, oneshot::Sender<Result<Envelope, Status>>>>>;

/// A call waiting on a link to be written, with when its caller gives up.
struct QueuedCall {
    id: u64,
    method: Method,
    request: Envelope,
    deadline: Instant,
}

/// One open link from a peer: where this member's calls to it go.
#[derive(Clone)]
struct Link {
    /// Which opening of the link this is: a newer one replaces it.
    generation: u64,
    calls: mpsc::Sender<QueuedCall>,
    pending: Pending,
    /// The peer hands appends to raft in the order they come (see the
    /// module docs).
    appends_in_order: bool,
}

/// A call queued on a link, whose answer is still to come. Dropped before
/// it comes, the call is withdrawn (if not yet written, it never is).
pub(crate) struct LinkAnswer {
    id: u64,
    rx: oneshot::Receiver<Result<Envelope, Status>>,
    deadline: Instant,
    pending: Pending,
}

impl LinkAnswer {
    /// The peer's answer, or why there is none by the call's deadline.
    pub(crate) async fn answer(&mut self) -> Result<Envelope, Status> {
        match tokio::time::timeout_at(self.deadline, &mut self.rx).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(_)) => Err(Status::unavailable(
                "the peer's link closed before it answered",
            )),
            Err(_) => Err(Status::deadline_exceeded(
                "no answer from the peer in time (over its link)",
            )),
        }
    }
}

impl Drop for LinkAnswer {
    fn drop(&mut self) {
        self.pending.lock().remove(&self.id);
    }
}

/// The links peers opened to this member, by peer id.
#[derive(Clone, Default)]
pub(crate) struct ReverseLinks {
    links: Arc<Mutex<HashMap<u64, Link>>>,
    next: Arc<AtomicU64>,
    /// Raised once when the member stops (see [`ReverseLinks::close`]).
    closed: CancellationToken,
}

impl ReverseLinks {
    /// Ends every link, both those peers opened to this member and those
    /// it opened, and takes no more: a stopping member's listeners then
    /// drain (a link is a call that would otherwise never finish), and its
    /// calls go by dialling meanwhile.
    pub(crate) fn close(&self) {
        let mut links = self.links.lock();
        self.closed.cancel();
        links.clear();
        count_links(&links);
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.closed.is_cancelled()
    }

    /// Calls `method` on `peer` over the link it opened, if one is open:
    /// `None` when none is, or it closed before the call could be queued
    /// (never sent: the caller dials instead).
    pub(crate) async fn call(
        &self,
        peer: u64,
        method: Method,
        request: Envelope,
        timeout: Duration,
    ) -> Option<Result<Envelope, Status>> {
        Some(match self.queue(peer, method, request, timeout).await? {
            Ok(mut answer) => answer.answer().await,
            Err(status) => Err(status),
        })
    }

    /// Queues a call of `method` to `peer` on the link it opened, behind
    /// every call queued before it: its answer is to come. `None` when no
    /// link is open, or it closed before the call could be queued.
    pub(crate) async fn queue(
        &self,
        peer: u64,
        method: Method,
        request: Envelope,
        timeout: Duration,
    ) -> Option<Result<LinkAnswer, Status>> {
        let link = self.links.lock().get(&peer).cloned()?;
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        link.pending.lock().insert(id, tx);
        let deadline = Instant::now() + timeout;
        let answer = LinkAnswer {
            id,
            rx,
            deadline,
            pending: link.pending.clone(),
        };
        let queued = QueuedCall {
            id,
            method,
            request,
            deadline,
        };
        match tokio::time::timeout_at(deadline, link.calls.send(queued)).await {
            Ok(Err(_)) => None,
            Err(_) => Some(Err(Status::deadline_exceeded(
                "the peer's link is too busy to take the call in time",
            ))),
            Ok(Ok(())) => Some(Ok(answer)),
        }
    }

    /// Whether `peer` has a link open to this member over which it hands
    /// appends to raft in order.
    pub(crate) fn appends_in_order(&self, peer: u64) -> bool {
        self.links
            .lock()
            .get(&peer)
            .is_some_and(|link| link.appends_in_order)
    }

    /// Takes a link `peer` opened: registers it (replacing an older one)
    /// and serves it until it closes, falls silent, or this member stops.
    /// Returns the stream of frames for the peer; `Unavailable` once this
    /// member is stopping.
    pub(crate) fn serve(
        &self,
        peer: u64,
        appends_in_order: bool,
        inbound: tonic::Streaming<Envelope>,
    ) -> Result<tokio_stream::wrappers::ReceiverStream<Result<Envelope, Status>>, Status> {
        let (calls, mut queued) = mpsc::channel::<QueuedCall>(QUEUED_CALLS);
        let (to_peer, stream) = mpsc::channel::<Result<Envelope, Status>>(QUEUED_CALLS);
        let generation = self.next.fetch_add(1, Ordering::Relaxed);
        let pending: Pending = Arc::default();
        {
            // Checked under the lock `close` takes: no link is registered
            // after it.
            let mut links = self.links.lock();
            if self.is_closed() {
                return Err(Status::unavailable("member stopping"));
            }
            links.insert(
                peer,
                Link {
                    generation,
                    calls,
                    pending: pending.clone(),
                    appends_in_order,
                },
            );
            count_links(&links);
        }
        let ended = self.closed.child_token();
        // The writer: queued calls (those whose caller still waits, with
        // what it has left) and heartbeats, down the response stream.
        let writer = tokio::spawn({
            let (ended, pending) = (ended.clone(), pending.clone());
            async move {
                let mut beat = tokio::time::interval(HEARTBEAT);
                beat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                loop {
                    let frame = tokio::select! {
                        _ = ended.cancelled() => return,
                        call = queued.recv() => {
                            let Some(call) = call else { return };
                            let left = call.deadline.saturating_duration_since(Instant::now());
                            if left.is_zero() || !pending.lock().contains_key(&call.id) {
                                continue; // its caller gave up
                            }
                            frame_envelope(Frame::Call {
                                id: call.id,
                                method: call.method,
                                request: call.request.data,
                                format: call.request.format,
                                timeout_ms: u64::try_from(left.as_millis()).unwrap_or(u64::MAX),
                            })
                        }
                        _ = beat.tick() => frame_envelope(Frame::Heartbeat),
                    };
                    tokio::select! {
                        _ = ended.cancelled() => return,
                        sent = to_peer.send(Ok(frame)) => if sent.is_err() { return },
                    }
                }
            }
        });
        let links = self.links.clone();
        // The reader: the peer's answers and heartbeats.
        tokio::spawn(async move {
            let mut heard = Heard::new(inbound, ended.clone());
            loop {
                match heard.next().await {
                    Some(Frame::Answer { id, result }) => {
                        if let Some(waiting) = pending.lock().remove(&id) {
                            let _ = waiting.send(answer_of(result));
                        }
                    }
                    Some(Frame::Heartbeat) => {}
                    Some(Frame::Call { .. }) | None => break,
                }
            }
            {
                let mut links = links.lock();
                if links.get(&peer).is_some_and(|l| l.generation == generation) {
                    links.remove(&peer);
                }
                count_links(&links);
            }
            // The writer ends first (and with it the queue): a call queued
            // from here on is refused, one queued before gets "closed".
            ended.cancel();
            let _ = writer.await;
            pending.lock().clear();
        });
        Ok(tokio_stream::wrappers::ReceiverStream::new(stream))
    }

    /// Whether each of `peers` has a link open to this member.
    pub(crate) fn open_from_all(&self, peers: &[u64]) -> bool {
        let links = self.links.lock();
        peers.iter().all(|peer| links.contains_key(peer))
    }

    /// Drops the links of members no longer in the membership.
    fn retain(&self, members: &[u64]) {
        let mut links = self.links.lock();
        links.retain(|id, _| members.contains(id));
        count_links(&links);
    }
}

/// `hark_network_peer_links`: how many members have a link open to this
/// one (its calls to the others are dialled).
fn count_links(links: &HashMap<u64, Link>) {
    metrics::gauge!(PEER_LINKS).set(links.len() as f64);
}

/// The gauge of links other members hold open to this one.
pub const PEER_LINKS: &str = "hark_network_peer_links";

fn answer_of(result: Result<(Bytes, u32), (i32, String)>) -> Result<Envelope, Status> {
    match result {
        Ok((data, format)) => Ok(Envelope { data, format }),
        Err((code, message)) => Err(Status::new(tonic::Code::from(code), message)),
    }
}

/// Keeps a link open to every other member (see the module docs); ends
/// with the replica, or when it stops.
pub(crate) async fn keep_links(replica: Weak<Replica>) {
    let mut open: HashMap<u64, tokio::task::JoinHandle<()>> = HashMap::new();
    let mut every = tokio::time::interval(MEMBERSHIP_CHECK);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        every.tick().await;
        let Some(me) = replica.upgrade() else {
            break;
        };
        if me.is_shut_down() || me.channels.links.is_closed() {
            break;
        }
        let own = me.member_id();
        let members: Vec<u64> = me.members().into_iter().map(|m| m.id).collect();
        // A membership not yet known (at start, or while a joining member
        // waits for its snapshot) says nothing about who left.
        if !members.contains(&own) {
            continue;
        }
        me.channels.links.retain(&members);
        drop(me);
        open.retain(|id, task| {
            let keep = members.contains(id) && !task.is_finished();
            if !keep {
                task.abort();
            }
            keep
        });
        for id in members {
            if id != own && !open.contains_key(&id) {
                open.insert(id, tokio::spawn(link_to(replica.clone(), id)));
            }
        }
    }
    for (_, task) in open {
        task.abort();
    }
}

/// Opens a link to `peer` and answers its calls over it, opening it again
/// [`RETRY`] after it closes or fails to open.
async fn link_to(replica: Weak<Replica>, peer: u64) {
    loop {
        open_link(&replica, peer).await;
        tokio::time::sleep(RETRY).await;
        match replica.upgrade() {
            Some(me) if !me.channels.links.is_closed() => {}
            _ => return,
        }
    }
}

/// One opening of the link to `peer`, served until it ends.
async fn open_link(replica: &Weak<Replica>, peer: u64) {
    let (caller, cluster_id, mut client, closed) = {
        let Some(me) = replica.upgrade() else {
            return;
        };
        let Some(node) = me.node(peer) else {
            return;
        };
        let Ok(client) = me.channels.client(&node) else {
            return;
        };
        let closed = me.channels.links.closed.clone();
        (me.as_caller(), me.cluster_id(), client, closed)
    };
    // Ended when this opening ends (or the member stops), whatever answers
    // are still being worked out: the peer then sees the link close.
    let ended = closed.child_token();
    let _end_on_return = ended.clone().drop_guard();
    let (frames, outgoing) = mpsc::channel::<Envelope>(QUEUED_ANSWERS);
    let outgoing = tokio_stream::wrappers::ReceiverStream::new(outgoing)
        .take_until(ended.clone().cancelled_owned());
    let mut request = tonic::Request::new(outgoing);
    caller.stamp(&mut request);
    request.metadata_mut().insert(
        APPENDS_IN_ORDER_HEADER,
        tonic::metadata::MetadataValue::from_static("1"),
    );
    let opening = tokio::select! {
        _ = ended.cancelled() => return,
        opening = tokio::time::timeout(SILENCE, client.reverse(request)) => opening,
    };
    let Ok(Ok(response)) = opening else {
        return;
    };
    let inbound = response.into_inner();
    // Heartbeats never wait: a full queue is traffic the peer will see.
    let beating = {
        let (frames, ended) = (frames.clone(), ended.clone());
        async move {
            let mut beat = tokio::time::interval(HEARTBEAT);
            beat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    _ = ended.cancelled() => return,
                    _ = beat.tick() => {
                        let _ = frames.try_send(frame_envelope(Frame::Heartbeat));
                    }
                }
            }
        }
    };
    tokio::spawn(beating);
    let from = Caller {
        member_id: peer,
        cluster_id,
    };
    let (appends, queued_appends) = mpsc::channel(LANE_DEPTH);
    tokio::spawn(append_lane(
        replica.clone(),
        from,
        queued_appends,
        frames.clone(),
        ended.clone(),
    ));
    let mut heard = Heard::new(inbound, ended.clone());
    loop {
        match heard.next().await {
            Some(Frame::Call {
                id,
                method: Method::AppendEntries,
                request,
                format,
                ..
            }) => {
                let call = Envelope {
                    data: request,
                    format,
                };
                if let Err(full) = appends.try_send((id, call)) {
                    let (id, _) = full.into_inner();
                    let refused = Err((
                        tonic::Code::ResourceExhausted as i32,
                        format!("more than {LANE_DEPTH} appends in flight on one link"),
                    ));
                    send_answer(&frames, &ended, id, refused).await;
                }
            }
            Some(Frame::Call {
                id,
                method,
                request,
                format,
                timeout_ms,
            }) => {
                let (replica, frames, ended) = (replica.clone(), frames.clone(), ended.clone());
                tokio::spawn(async move {
                    let call = Envelope {
                        data: request,
                        format,
                    };
                    let timeout = Duration::from_millis(timeout_ms);
                    let answering = answer(&replica, from, method, call, timeout);
                    let result = tokio::select! {
                        _ = ended.cancelled() => return,
                        result = answering => result,
                    };
                    let answer = frame_envelope(Frame::Answer { id, result });
                    tokio::select! {
                        _ = ended.cancelled() => {}
                        _ = frames.send(answer) => {}
                    }
                });
            }
            Some(Frame::Heartbeat) => {}
            Some(Frame::Answer { .. }) | None => break,
        }
    }
}

/// Writes the answer to call `id` up the link, unless it has ended.
async fn send_answer(
    frames: &mpsc::Sender<Envelope>,
    ended: &CancellationToken,
    id: u64,
    result: Result<(Bytes, u32), (i32, String)>,
) {
    let answer = frame_envelope(Frame::Answer { id, result });
    tokio::select! {
        _ = ended.cancelled() => {}
        _ = frames.send(answer) => {}
    }
}

/// Hands the appends that come over one link to raft in the order they
/// came, without waiting for one to be on disk before handing over the
/// next, and answers each as raft does, in the same order.
///
/// One `Raft::stream_append` carries them until an append fails (a
/// conflict, a higher vote, or raft stopping): raft ends the stream there,
/// the appends behind it are answered `Unavailable` (the leader sends again
/// from what was acknowledged), and a new stream takes the next ones.
async fn append_lane(
    replica: Weak<Replica>,
    from: Caller,
    mut queued: mpsc::Receiver<(u64, Envelope)>,
    frames: mpsc::Sender<Envelope>,
    ended: CancellationToken,
) {
    use openraft::raft::AppendEntriesResponse;
    loop {
        let Some(raft) = replica.upgrade().map(|r| r.raft.clone()) else {
            return;
        };
        let (handed, requests) = mpsc::channel(LANE_DEPTH);
        let mut results = std::pin::pin!(
            raft.stream_append(tokio_stream::wrappers::ReceiverStream::new(requests))
        );
        drop(raft);
        // The calls handed to raft, in order: raft answers them in order.
        let mut waiting: VecDeque<u64> = VecDeque::new();
        loop {
            tokio::select! {
                _ = ended.cancelled() => return,
                call = queued.recv(), if waiting.len() < LANE_DEPTH => {
                    let Some((id, call)) = call else { return };
                    let Some(me) = replica.upgrade() else { return };
                    let mut request = tonic::Request::new(call);
                    from.stamp(&mut request);
                    let accepted = PeerService { replica: me }
                        .accept_append(request)
                        .await
                        // Never full (it holds no more than `waiting`):
                        // closed only once raft has stopped.
                        .and_then(|rpc| handed.try_send(rpc)
                            .map_err(|_| tonic::Status::unavailable("member stopping")));
                    match accepted {
                        Ok(()) => waiting.push_back(id),
                        Err(status) => {
                            let result = Err((status.code() as i32, status.message().to_string()));
                            send_answer(&frames, &ended, id, result).await;
                        }
                    }
                }
                result = results.next(), if !waiting.is_empty() => {
                    let id = waiting.pop_front().expect("an append is waiting");
                    let answer: Result<AppendEntriesResponse<TypeConfig>,
                        openraft::error::RaftError<TypeConfig>> = match result {
                        Some(Ok(appended)) => Ok(appended.into()),
                        Some(Err(fatal)) => Err(openraft::error::RaftError::Fatal(fatal)),
                        None => Err(openraft::error::RaftError::Fatal(
                            openraft::error::Fatal::Stopped)),
                    };
                    let goes_on = matches!(answer, Ok(AppendEntriesResponse::Success));
                    // As for a dialled append: heard from the leader it
                    // follows (or now follows), unless its own vote is higher.
                    if matches!(&answer, Ok(r) if !matches!(r, AppendEntriesResponse::HigherVote(_)))
                        && let Some(me) = replica.upgrade()
                    {
                        me.heard_from_leader();
                    }
                    let result = Ok((Bytes::from(encode(&answer)), crate::format::PEER_FORMAT));
                    send_answer(&frames, &ended, id, result).await;
                    if !goes_on {
                        for id in waiting.drain(..) {
                            let result = Err((tonic::Code::Unavailable as i32,
                                "an earlier append on this link failed".to_string()));
                            send_answer(&frames, &ended, id, result).await;
                        }
                        break;
                    }
                }
            }
        }
    }
}

/// The frames coming in on one side of a link, until it ends: closed,
/// undecodable, silent for [`SILENCE`], or `ended`.
struct Heard {
    inbound: tonic::Streaming<Envelope>,
    silence: std::pin::Pin<Box<tokio::time::Sleep>>,
    ended: CancellationToken,
}

impl Heard {
    fn new(inbound: tonic::Streaming<Envelope>, ended: CancellationToken) -> Heard {
        Heard {
            inbound,
            silence: Box::pin(tokio::time::sleep(SILENCE)),
            ended,
        }
    }

    async fn next(&mut self) -> Option<Frame> {
        tokio::select! {
            _ = self.ended.cancelled() => None,
            _ = &mut self.silence => None,
            next = self.inbound.message() => {
                let envelope = next.ok()??;
                self.silence.as_mut().reset(Instant::now() + SILENCE);
                frame(&envelope).ok()
            }
        }
    }
}

/// Runs a call that came over a link as if `from` had dialled this member.
async fn answer(
    replica: &Weak<Replica>,
    from: Caller,
    method: Method,
    call: Envelope,
    timeout: Duration,
) -> Result<(Bytes, u32), (i32, String)> {
    let Some(replica) = replica.upgrade() else {
        return Err((tonic::Code::Unavailable as i32, "member stopping".into()));
    };
    let mut request = tonic::Request::new(call);
    from.stamp(&mut request);
    let service = PeerService { replica };
    match tokio::time::timeout(timeout, service.dispatch(method, request)).await {
        Ok(Ok(response)) => {
            let e = response.into_inner();
            Ok((e.data, e.format))
        }
        Ok(Err(status)) => Err((status.code() as i32, status.message().to_string())),
        Err(_) => Err((
            tonic::Code::DeadlineExceeded as i32,
            "timed out answering a call over a link".into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_carry_their_payload_as_it_is_and_bad_frames_are_refused() {
        let request = Bytes::from(vec![7u8; 3 << 20]);
        let call = frame_envelope(Frame::Call {
            id: 9,
            method: Method::AppendEntries,
            request: request.clone(),
            format: 2,
            timeout_ms: 150,
        });
        match frame(&call).unwrap() {
            Frame::Call {
                id,
                method,
                request: got,
                format,
                timeout_ms,
            } => {
                assert_eq!((id, format, timeout_ms), (9, 2, 150));
                assert!(matches!(method, Method::AppendEntries));
                assert_eq!(got, request);
            }
            other => panic!("{other:?}"),
        }
        let refused = frame_envelope(Frame::Answer {
            id: 3,
            result: Err((7, "not a member".into())),
        });
        assert!(matches!(
            frame(&refused).unwrap(),
            Frame::Answer { id: 3, result: Err((7, m)) } if m == "not a member"
        ));
        for hostile in [
            &b""[..],
            &[1, 0],
            &[255, 255, 255, 255, 0],
            &[1, 0, 0, 0, 99],
        ] {
            let envelope = Envelope {
                data: Bytes::copy_from_slice(hostile),
                format: crate::format::PEER_FORMAT,
            };
            assert!(frame(&envelope).is_err(), "{hostile:?}");
        }
    }
}
