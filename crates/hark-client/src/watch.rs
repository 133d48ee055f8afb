//! Watches multiplexed over one gRPC stream, resumed across disconnects.
//!
//! One task (the *mux*) owns the stream. Creates are sent one at a time and
//! matched to `created` replies in order, as etcd's clientv3 does; events are
//! routed by the server's watch id to each watch's own unbounded buffer, so a
//! slow consumer of one watch does not hold up the others. Each watch
//! remembers the next revision it needs: after its `created` reply, the
//! revision after the header's (for a watch "from now"); after events, the
//! last event's revision + 1; after a progress reply, its revision + 1. When
//! the stream breaks, the mux reconnects with backoff (from about 1 ms,
//! doubling up to [`MAX_BACKOFF`], with jitter) and re-creates every watch
//! from that revision, so its consumer sees no gap and no duplicate.

use std::collections::{HashMap, VecDeque};
use std::hash::BuildHasher;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use hark_proto::etcdserverpb::{
    WatchCancelRequest, WatchCreateRequest, WatchProgressRequest, WatchRequest, WatchResponse,
    watch_client::WatchClient, watch_create_request::FilterType, watch_request::RequestUnion,
};
use hark_proto::mvccpb::Event;
use tokio::sync::mpsc;
use tokio_stream::wrappers::UnboundedReceiverStream;

use crate::endpoints::Endpoints;

/// Longest wait between reconnection attempts.
pub const MAX_BACKOFF: Duration = Duration::from_secs(2);
const FIRST_BACKOFF: Duration = Duration::from_millis(1);

/// What to watch besides the key, as etcd's `WatchCreateRequest`.
#[derive(Debug, Clone, Default)]
pub struct WatchOptions {
    /// Every key starting with the watched key.
    pub prefix: bool,
    /// Every key `>=` the watched key.
    pub from_key: bool,
    /// An explicit end of the range (exclusive); wins over `prefix`/`from_key`.
    pub range_end: Option<Bytes>,
    /// First revision to deliver; 0 means "from now".
    pub start_revision: i64,
    /// Each event also carries the key's previous value (`prev_kv`).
    pub prev_kv: bool,
    /// Ask the server for periodic progress updates (no events, the
    /// current revision) while the watch is idle (etcd sends them every
    /// 10 minutes by default).
    pub progress_notify: bool,
    /// Leave out puts (etcd's `NOPUT` filter).
    pub no_put: bool,
    /// Leave out deletions (etcd's `NODELETE` filter).
    pub no_delete: bool,
    /// Let the server split large responses (the client reassembles them).
    pub fragment: bool,
    /// Deliver an update (with `created` set) when the server has created the
    /// watch, as clientv3's `WithCreatedNotify`; only the first creation, not
    /// re-creations after a reconnect.
    pub created_notify: bool,
}

impl WatchOptions {
    /// Watch every key starting with the watched key.
    pub fn prefix() -> Self {
        WatchOptions {
            prefix: true,
            ..Default::default()
        }
    }

    /// Start at `revision` (see [`WatchOptions::start_revision`]).
    pub fn from_revision(mut self, revision: i64) -> Self {
        self.start_revision = revision;
        self
    }

    fn range_end(&self, key: &[u8]) -> Bytes {
        if let Some(end) = &self.range_end {
            end.clone()
        } else if self.prefix {
            crate::prefix_end(key).into()
        } else if self.from_key {
            Bytes::from_static(b"\0")
        } else {
            Bytes::new()
        }
    }
}

/// One delivery to a watch: events of whole revisions (fragments already
/// joined), or a progress notification (no events).
#[derive(Debug, Clone, PartialEq)]
pub struct WatchUpdate {
    /// The response header's revision.
    pub revision: i64,
    /// The whole response header (cluster, member, revision, term).
    pub header: Option<hark_proto::etcdserverpb::ResponseHeader>,
    /// The changes, in revision order (the events of one revision never
    /// span two updates).
    pub events: Vec<Event>,
    /// The server created the watch (only with `created_notify`).
    pub created: bool,
}

impl WatchUpdate {
    /// No events: everything up to `revision` has been delivered.
    pub fn is_progress(&self) -> bool {
        self.events.is_empty() && !self.created
    }
}

/// Why a watch ended.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WatchError {
    /// The revisions it needs are compacted; re-list at or after this revision.
    #[error(
        "etcdserver: mvcc: required revision has been compacted (compact revision {compact_revision})"
    )]
    Compacted {
        /// The server's compacted revision.
        compact_revision: i64,
    },
    /// The server refused or cancelled it.
    #[error("watch canceled: {reason}")]
    Canceled {
        /// The server's reason (e.g. a permission denied).
        reason: String,
    },
    /// The client was dropped.
    #[error("watch closed")]
    Closed,
}

type Delivery = Result<WatchUpdate, WatchError>;

/// A watch's stream of updates; cancelled on the server when dropped.
pub struct Watch {
    id: u64,
    rx: mpsc::UnboundedReceiver<Delivery>,
    mux: mpsc::UnboundedSender<Command>,
}

impl Watch {
    /// The next update; `None` after the watch ended (the last item was its error).
    pub async fn next(&mut self) -> Option<Delivery> {
        self.rx.recv().await
    }
}

impl tokio_stream::Stream for Watch {
    type Item = Delivery;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Delivery>> {
        self.rx.poll_recv(cx)
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = self.mux.send(Command::Cancel { id: self.id });
    }
}

pub(crate) enum Command {
    Create {
        id: u64,
        key: Bytes,
        options: WatchOptions,
        tx: mpsc::UnboundedSender<Delivery>,
    },
    Cancel {
        id: u64,
    },
    Progress,
}

/// The handle the client keeps: creates watches on its mux task.
#[derive(Clone)]
pub(crate) struct Mux {
    commands: mpsc::UnboundedSender<Command>,
    next_id: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl Mux {
    pub fn start(endpoints: Endpoints) -> Mux {
        let (commands, rx) = mpsc::unbounded_channel();
        tokio::spawn(MuxTask::new(endpoints, rx).run());
        Mux {
            commands,
            next_id: Default::default(),
        }
    }

    pub fn watch(&self, key: Bytes, options: WatchOptions) -> Watch {
        let id = self
            .next_id
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let (tx, rx) = mpsc::unbounded_channel();
        let _ = self.commands.send(Command::Create {
            id,
            key,
            options,
            tx,
        });
        Watch {
            id,
            rx,
            mux: self.commands.clone(),
        }
    }

    pub fn request_progress(&self) {
        let _ = self.commands.send(Command::Progress);
    }
}

struct WatchState {
    key: Bytes,
    options: WatchOptions,
    /// Next revision to ask for on a (re-)create; 0 until known ("from now").
    next_rev: i64,
    server_id: Option<i64>,
    tx: mpsc::UnboundedSender<Delivery>,
    /// Events of a fragmented response, until its last piece.
    fragments: Vec<Event>,
    /// The server has created it once (re-creations are not announced).
    announced: bool,
}

struct MuxTask {
    endpoints: Endpoints,
    commands: mpsc::UnboundedReceiver<Command>,
    watches: HashMap<u64, WatchState>,
    by_server_id: HashMap<i64, u64>,
    /// Watches waiting for their create to be sent, in order.
    to_create: VecDeque<u64>,
    /// The create sent and not yet answered (creates go one at a time).
    in_flight: Option<u64>,
    backoff: Duration,
    jitter: std::hash::RandomState,
    attempts: u64,
}

/// The request side of the current stream.
type Requests = mpsc::UnboundedSender<WatchRequest>;

impl MuxTask {
    fn new(endpoints: Endpoints, commands: mpsc::UnboundedReceiver<Command>) -> Self {
        MuxTask {
            endpoints,
            commands,
            watches: HashMap::new(),
            by_server_id: HashMap::new(),
            to_create: VecDeque::new(),
            in_flight: None,
            backoff: FIRST_BACKOFF,
            jitter: std::hash::RandomState::new(),
            attempts: 0,
        }
    }

    async fn run(mut self) {
        loop {
            // No stream is needed while there is nothing to watch.
            while self.watches.is_empty() {
                match self.commands.recv().await {
                    Some(cmd) => self.command(cmd, None),
                    None => return,
                }
            }
            // Re-create every watch, oldest first, from the revision it needs.
            // The first create is queued before the stream opens: some servers
            // (etcd) send the response headers only once a request arrived.
            let (requests, rx) = mpsc::unbounded_channel();
            let mut ids: Vec<u64> = self.watches.keys().copied().collect();
            ids.sort_unstable();
            self.to_create = ids.into();
            self.in_flight = None;
            self.by_server_id.clear();
            for w in self.watches.values_mut() {
                w.server_id = None;
                w.fragments.clear();
            }
            self.send_next_create(&requests);
            let (endpoint, channel) = self.endpoints.current();
            let mut client = WatchClient::new(channel).max_decoding_message_size(usize::MAX);
            let mut responses = match client.watch(UnboundedReceiverStream::new(rx)).await {
                Ok(r) => r.into_inner(),
                Err(e) => {
                    tracing::debug!(error = %e, "watch stream failed to open");
                    self.endpoints.failed(endpoint);
                    if !self.wait_backoff().await {
                        return;
                    }
                    continue;
                }
            };
            let mut renew = false;
            loop {
                tokio::select! {
                    cmd = self.commands.recv() => match cmd {
                        Some(cmd) => self.command(cmd, Some(&requests)),
                        None => return,
                    },
                    msg = responses.message() => match msg {
                        Ok(Some(resp)) => {
                            // A healthy stream resets the backoff.
                            self.backoff = FIRST_BACKOFF;
                            if self.response(resp, &requests) {
                                renew = true;
                                break;
                            }
                        }
                        Ok(None) => break,
                        Err(e) => {
                            tracing::debug!(error = %e, "watch stream broke; resuming");
                            if e.code() == tonic::Code::Unavailable {
                                self.endpoints.failed(endpoint);
                            }
                            break;
                        }
                    },
                }
            }
            if renew {
                // The stream's token died: a new token, then a new stream
                // that creates every watch again from where it stopped.
                let channel = self.endpoints.channel(endpoint);
                match self.endpoints.credentials.renew(channel).await {
                    Ok(()) => continue,
                    Err(e) => tracing::debug!(error = %e, "renewing the token failed"),
                }
            }
            if !self.wait_backoff().await {
                return;
            }
        }
    }

    /// Sleeps the backoff (with jitter) while still taking commands; `false`
    /// if the client is gone.
    async fn wait_backoff(&mut self) -> bool {
        self.attempts += 1;
        let jitter = self.jitter.hash_one(self.attempts) % 1000;
        // 50% .. 150% of the backoff.
        let delay = self.backoff.mul_f64(0.5 + jitter as f64 / 1000.0);
        self.backoff = (self.backoff * 2).min(MAX_BACKOFF);
        let sleep = tokio::time::sleep(delay);
        tokio::pin!(sleep);
        loop {
            tokio::select! {
                _ = &mut sleep => return true,
                cmd = self.commands.recv() => match cmd {
                    Some(cmd) => self.command(cmd, None),
                    None => return false,
                },
            }
        }
    }

    fn command(&mut self, cmd: Command, requests: Option<&Requests>) {
        match cmd {
            Command::Create {
                id,
                key,
                options,
                tx,
            } => {
                let next_rev = options.start_revision;
                self.watches.insert(
                    id,
                    WatchState {
                        key,
                        options,
                        next_rev,
                        server_id: None,
                        tx,
                        fragments: Vec::new(),
                        announced: false,
                    },
                );
                self.to_create.push_back(id);
                if let Some(requests) = requests {
                    self.send_next_create(requests);
                }
            }
            Command::Cancel { id } => {
                let Some(state) = self.watches.remove(&id) else {
                    return;
                };
                self.to_create.retain(|&w| w != id);
                if let Some(server_id) = state.server_id {
                    self.by_server_id.remove(&server_id);
                    if let Some(requests) = requests {
                        let _ = requests.send(cancel_request(server_id));
                    }
                }
                // In flight: cancelled when its `created` arrives (see response).
            }
            Command::Progress => {
                if let Some(requests) = requests {
                    let _ = requests.send(WatchRequest {
                        request_union: Some(RequestUnion::ProgressRequest(WatchProgressRequest {})),
                    });
                }
            }
        }
    }

    fn send_next_create(&mut self, requests: &Requests) {
        if self.in_flight.is_some() {
            return;
        }
        while let Some(id) = self.to_create.pop_front() {
            let Some(w) = self.watches.get(&id) else {
                continue;
            };
            let o = &w.options;
            let mut filters = Vec::new();
            if o.no_put {
                filters.push(FilterType::Noput as i32);
            }
            if o.no_delete {
                filters.push(FilterType::Nodelete as i32);
            }
            let create = WatchCreateRequest {
                key: w.key.clone(),
                range_end: o.range_end(&w.key),
                start_revision: w.next_rev,
                progress_notify: o.progress_notify,
                filters,
                prev_kv: o.prev_kv,
                watch_id: 0,
                fragment: o.fragment,
            };
            let _ = requests.send(WatchRequest {
                request_union: Some(RequestUnion::CreateRequest(create)),
            });
            self.in_flight = Some(id);
            return;
        }
    }

    /// Handles one response; `true` when the stream must be opened again
    /// with a renewed token.
    fn response(&mut self, resp: WatchResponse, requests: &Requests) -> bool {
        let header = resp.header;
        let header_rev = header.map_or(0, |h| h.revision);
        if resp.created {
            let Some(id) = self.in_flight.take() else {
                return false;
            };
            self.send_next_create(requests);
            match self.watches.get_mut(&id) {
                // Dropped while its create was in flight.
                None if !resp.canceled => {
                    let _ = requests.send(cancel_request(resp.watch_id));
                }
                None => {}
                Some(_)
                    if resp.canceled
                        && self
                            .endpoints
                            .credentials
                            .renewable_reason(&resp.cancel_reason) =>
                {
                    return true;
                }
                Some(_) if resp.canceled => {
                    let state = self.watches.remove(&id).expect("present");
                    let _ = state.tx.send(Err(WatchError::Canceled {
                        reason: resp.cancel_reason,
                    }));
                }
                Some(w) => {
                    w.server_id = Some(resp.watch_id);
                    if w.next_rev == 0 {
                        w.next_rev = header_rev + 1;
                    }
                    if w.options.created_notify && !w.announced {
                        let _ = w.tx.send(Ok(WatchUpdate {
                            revision: header_rev,
                            header,
                            events: Vec::new(),
                            created: true,
                        }));
                    }
                    w.announced = true;
                    self.by_server_id.insert(resp.watch_id, id);
                }
            }
            return false;
        }
        if resp.watch_id == -1 && !resp.canceled {
            // A progress reply for the whole stream: every watch is current.
            for w in self.watches.values_mut() {
                if w.server_id.is_some() {
                    w.next_rev = w.next_rev.max(header_rev + 1);
                    let _ = w.tx.send(Ok(WatchUpdate {
                        revision: header_rev,
                        header,
                        events: Vec::new(),
                        created: false,
                    }));
                }
            }
            return false;
        }
        let Some(&id) = self.by_server_id.get(&resp.watch_id) else {
            return false;
        };
        if resp.canceled {
            self.by_server_id.remove(&resp.watch_id);
            if let Some(state) = self.watches.remove(&id) {
                let err = if resp.compact_revision > 0 {
                    WatchError::Compacted {
                        compact_revision: resp.compact_revision,
                    }
                } else {
                    WatchError::Canceled {
                        reason: resp.cancel_reason,
                    }
                };
                let _ = state.tx.send(Err(err));
            }
            return false;
        }
        let Some(w) = self.watches.get_mut(&id) else {
            return false;
        };
        w.fragments.extend(resp.events);
        if resp.fragment {
            return false;
        }
        let events = std::mem::take(&mut w.fragments);
        match events.last().and_then(|e| e.kv.as_ref()) {
            Some(kv) => w.next_rev = kv.mod_revision + 1,
            None => w.next_rev = w.next_rev.max(header_rev + 1),
        }
        let _ = w.tx.send(Ok(WatchUpdate {
            revision: header_rev,
            header,
            events,
            created: false,
        }));
        false
    }
}

fn cancel_request(watch_id: i64) -> WatchRequest {
    WatchRequest {
        request_union: Some(RequestUnion::CancelRequest(WatchCancelRequest { watch_id })),
    }
}
