//! Watchers that check what they receive without building it.
//!
//! The fanout and catchup scenarios push millions of events through the load
//! generator, which shares the machine with the server. Through `hark-client`
//! each event is decoded in full and handed to its watcher's task, which cost
//! the generator about twice the server's CPU per event, so those scenarios
//! measured the generator as much as the server. Here each Watch stream has
//! one task, responses decode into just the fields the check needs (prost
//! skips the rest, values included), and every watcher on the stream is
//! checked in place.
//!
//! The streams run on a runtime of their own whose threads have the lowest
//! priority (niceness 19), like the bulk work of a server that keeps writes
//! first: when the CPU is short, the writer whose latency a scenario reports
//! runs before them (the same for Hark and for etcd).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use hark_proto::etcdserverpb::{WatchCreateRequest, WatchRequest, watch_request::RequestUnion};
use tokio::sync::{mpsc, oneshot};
use tokio_stream::wrappers::ReceiverStream;
use tonic::codegen::http::uri::PathAndQuery;

use crate::harness::Sequence;

/// `etcdserverpb.WatchResponse`, only the fields the check reads.
#[derive(Clone, PartialEq, prost::Message)]
struct LeanResponse {
    #[prost(int64, tag = "2")]
    watch_id: i64,
    #[prost(bool, tag = "3")]
    created: bool,
    #[prost(bool, tag = "4")]
    canceled: bool,
    #[prost(message, repeated, tag = "11")]
    events: Vec<LeanEvent>,
}

/// `mvccpb.Event`: only its key-value's revisions, and whether it has a
/// previous key-value.
#[derive(Clone, PartialEq, prost::Message)]
struct LeanEvent {
    #[prost(message, optional, tag = "2")]
    kv: Option<LeanKv>,
    #[prost(message, optional, tag = "3")]
    prev_kv: Option<LeanKv>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct LeanKv {
    #[prost(int64, tag = "2")]
    create_revision: i64,
    #[prost(int64, tag = "3")]
    mod_revision: i64,
}

/// What to watch and which revisions every watcher must see.
#[derive(Clone)]
pub struct Spec {
    pub key: String,
    pub prefix: bool,
    /// 0: from now.
    pub start_revision: i64,
    /// The first revision each watcher must get.
    pub first: i64,
    /// The last one: `u64::MAX` until the writer knows it.
    pub last: Arc<AtomicU64>,
    /// Events received, over all watchers.
    pub delivered: Arc<AtomicU64>,
    /// Ask for `prev_kv`, and count in `prev_missing` the events that
    /// replaced a value yet came without the previous one.
    pub prev_kv: bool,
    pub prev_missing: Arc<AtomicU64>,
    /// While set (after every watcher is created), the streams read
    /// nothing: a consumer that stalled, whose server must hold or drop
    /// what it cannot send.
    pub hold: Arc<AtomicBool>,
}

impl Spec {
    /// Every watcher sees `first..=last` of the keys under `key` (`last`
    /// set later, when the writer knows it).
    pub fn prefix(key: &str, start_revision: i64, first: i64) -> Spec {
        Spec {
            key: key.into(),
            prefix: true,
            start_revision,
            first,
            last: Arc::new(AtomicU64::new(u64::MAX)),
            delivered: Arc::new(AtomicU64::new(0)),
            prev_kv: false,
            prev_missing: Arc::new(AtomicU64::new(0)),
            hold: Arc::new(AtomicBool::new(false)),
        }
    }
}

/// Watch streams being checked.
pub struct Checkers {
    tasks: Vec<tokio::task::JoinHandle<Result<Vec<Sequence>, String>>>,
    created: Vec<oneshot::Receiver<()>>,
}

/// Opens `streams` Watch streams (one connection each) and creates `n`
/// watchers spread over them, their creates pipelined.
pub async fn start(
    endpoints: &[String],
    n: usize,
    streams: usize,
    spec: &Spec,
) -> Result<Checkers, String> {
    let streams = streams.min(n).max(1);
    let mut checkers = Checkers {
        tasks: Vec::new(),
        created: Vec::new(),
    };
    for s in 0..streams {
        let count = n / streams + usize::from(s < n % streams);
        let (endpoint, spec) = (endpoints[s % endpoints.len()].clone(), spec.clone());
        let (created_tx, created_rx) = oneshot::channel();
        checkers.created.push(created_rx);
        checkers.tasks.push(
            bulk_runtime()
                .spawn(async move { open_and_check(endpoint, count, spec, created_tx).await }),
        );
    }
    Ok(checkers)
}

impl Checkers {
    /// Waits until every watcher is created.
    pub async fn created(&mut self) -> Result<(), String> {
        for rx in self.created.drain(..) {
            tokio::time::timeout(Duration::from_secs(120), rx)
                .await
                .map_err(|_| "watch creates timed out")?
                .map_err(|_| "a watch stream failed while creating")?;
        }
        Ok(())
    }

    /// Waits until every watcher has seen the spec's last revision (or made no
    /// progress for a minute); returns the lost and duplicated totals.
    pub async fn finish(self, last: i64) -> Result<(u64, u64), String> {
        let (mut lost, mut duplicated) = (0, 0);
        for t in self.tasks {
            for mut seq in t.await.map_err(|e| e.to_string())?? {
                seq.finish(last);
                lost += seq.lost;
                duplicated += seq.duplicated;
            }
        }
        Ok((lost, duplicated))
    }
}

/// One Watch stream with `count` watchers: opens it, creates them (pipelined),
/// then checks every event it receives.
async fn open_and_check(
    endpoint: String,
    count: usize,
    spec: Spec,
    created: oneshot::Sender<()>,
) -> Result<Vec<Sequence>, String> {
    // Flow-control windows sized from the measured bandwidth-delay product,
    // as grpc-go (etcd's own client library) does by default; with h2's fixed
    // defaults the server waited on window updates (measured: Hark's catch-up
    // 0.8-1.0 s with them, 0.6-0.7 s adaptive).
    let channel = tonic::transport::Endpoint::from_shared(endpoint)
        .map_err(|e| e.to_string())?
        .http2_adaptive_window(true)
        .connect()
        .await
        .map_err(|e| e.to_string())?;
    let (tx, rx) = mpsc::channel(1024);
    // Fed before the call is awaited: etcd sends the stream's headers only
    // once a request has arrived.
    let feeder = tx.clone();
    let create = WatchCreateRequest {
        key: spec.key.clone().into(),
        range_end: if spec.prefix {
            hark_client::prefix_end(spec.key.as_bytes()).into()
        } else {
            Default::default()
        },
        start_revision: spec.start_revision,
        prev_kv: spec.prev_kv,
        ..Default::default()
    };
    tokio::spawn(async move {
        for _ in 0..count {
            let req = WatchRequest {
                request_union: Some(RequestUnion::CreateRequest(create.clone())),
            };
            if feeder.send(req).await.is_err() {
                return;
            }
        }
    });
    let mut grpc = tonic::client::Grpc::new(channel).max_decoding_message_size(usize::MAX);
    grpc.ready().await.map_err(|e| e.to_string())?;
    let codec = tonic_prost::ProstCodec::<WatchRequest, LeanResponse>::default();
    let inbound = grpc
        .streaming(
            tonic::Request::new(ReceiverStream::new(rx)),
            PathAndQuery::from_static("/etcdserverpb.Watch/Watch"),
            codec,
        )
        .await
        .map_err(|e| e.to_string())?
        .into_inner();
    check_stream(inbound, tx, count, spec, created).await
}

/// The runtime the watch streams run on: two threads at niceness 19.
fn bulk_runtime() -> &'static tokio::runtime::Runtime {
    static BULK: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    BULK.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("lean-watch")
            .enable_all()
            .on_thread_start(lowest_priority)
            .build()
            .expect("start the watch streams' runtime")
    })
}

/// Puts the calling thread at niceness 19 (Linux keeps niceness per thread;
/// elsewhere the streams run at the default priority).
fn lowest_priority() {
    // SAFETY: a syscall on the calling thread; raising niceness needs no
    // privilege.
    #[cfg(target_os = "linux")]
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t, 19);
    }
}

async fn check_stream(
    mut inbound: tonic::Streaming<LeanResponse>,
    // Held until done: closing the sending side would end the stream.
    _requests: mpsc::Sender<WatchRequest>,
    count: usize,
    spec: Spec,
    created: oneshot::Sender<()>,
) -> Result<Vec<Sequence>, String> {
    let mut watchers: HashMap<i64, Sequence> = HashMap::with_capacity(count);
    let mut created = Some(created);
    let mut last_progress = Instant::now();
    loop {
        if watchers.len() == count {
            while spec.hold.load(Ordering::Acquire) {
                tokio::time::sleep(Duration::from_millis(20)).await;
                last_progress = Instant::now();
            }
        }
        let last = spec.last.load(Ordering::Acquire);
        if watchers.len() == count
            && last != u64::MAX
            && watchers.values().all(|s| s.next > last as i64)
        {
            return Ok(watchers.into_values().collect());
        }
        // Short waits: the last event can come before `last` is known.
        let msg = match tokio::time::timeout(Duration::from_millis(100), inbound.message()).await {
            Ok(msg) => msg.map_err(|e| e.to_string())?,
            Err(_) if last_progress.elapsed() < Duration::from_secs(60) => continue,
            Err(_) => return Ok(watchers.into_values().collect()),
        };
        let Some(r) = msg else {
            return Err("the server ended a watch stream".into());
        };
        last_progress = Instant::now();
        if r.canceled {
            return Err(format!("watch {} canceled by the server", r.watch_id));
        }
        if r.created {
            watchers.insert(r.watch_id, Sequence::starting_at(spec.first));
            if watchers.len() == count
                && let Some(tx) = created.take()
            {
                let _ = tx.send(());
            }
        }
        if r.events.is_empty() {
            continue;
        }
        spec.delivered
            .fetch_add(r.events.len() as u64, Ordering::Relaxed);
        let seq = watchers
            .get_mut(&r.watch_id)
            .ok_or_else(|| format!("events for unknown watch {}", r.watch_id))?;
        for e in &r.events {
            let kv = e.kv.clone().unwrap_or_default();
            seq.see(kv.mod_revision);
            if spec.prev_kv && kv.create_revision != kv.mod_revision && e.prev_kv.is_none() {
                spec.prev_missing.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}
