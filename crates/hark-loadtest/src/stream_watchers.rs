//! Watchers as most etcd clients make them: one watch stream per watcher.
//!
//! `etcd-client` (like python-etcd3 and most other clients) opens a new
//! gRPC Watch stream for every `watch` call, so a hundred watchers are a
//! hundred streams, each its own queue and wake-up in the server. The
//! scenarios' other watchers share a few streams (`hark-client`'s
//! multiplexing, `lean_watch`), which leaves that per-stream path barely
//! exercised; with `--etcd-client` the watch scenarios consume through this
//! module instead, with the third-party crate, the same for Hark and etcd.
//!
//! Each watcher notes, per event, its revision and when it arrived (and, for
//! watch-latency, the put's send time the writer put in the value), and its
//! revisions are checked for loss and duplication as they arrive.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use etcd_client::{ConnectOptions, WatchOptions};
use tokio::task::JoinHandle;

use crate::harness::Sequence;

/// How long a watcher waits for the last revision once the writer is done.
const GRACE: Duration = Duration::from_secs(30);

/// What every watcher watches and must see.
#[derive(Clone)]
pub struct Spec {
    pub key: String,
    pub prefix: bool,
    pub prev_kv: bool,
    /// The first revision each watcher must get.
    pub first: i64,
    /// The last one: `u64::MAX` until the writer knows it.
    pub last: Arc<AtomicU64>,
    /// Note each event's arrival (watch-latency); fanout only counts.
    pub timed: bool,
    /// Arrival times are nanoseconds since this instant.
    pub epoch: Instant,
    /// Events received, over all watchers.
    pub delivered: Arc<AtomicU64>,
    /// Events that replaced a value yet came without `prev_kv` (with `prev_kv`).
    pub prev_missing: Arc<AtomicU64>,
}

/// One event as a watcher saw it.
#[derive(Debug, Clone, Copy)]
pub struct Arrival {
    pub revision: i64,
    /// When the event reached the watcher, ns since the epoch.
    pub at_ns: u64,
    /// The value, read as the writer's send time (ns since the epoch), if it is one.
    pub sent_ns: Option<u64>,
}

/// What one watcher saw.
pub struct Seen {
    pub sequence: Sequence,
    pub arrivals: Vec<Arrival>,
}

pub struct Watchers {
    tasks: Vec<JoinHandle<Result<Seen, String>>>,
}

/// The options every connection is made with, as the other scenarios'
/// clients (`--user`: root's password; `--tls` is refused, as the
/// workspace builds `etcd-client` without TLS).
fn connect_options() -> Result<ConnectOptions, String> {
    let hark = crate::secure::options();
    if hark.tls.is_some() {
        return Err("--etcd-client does not support --tls".into());
    }
    let mut options = ConnectOptions::new().with_connect_timeout(Duration::from_secs(10));
    if let Some((user, password)) = hark.user {
        options = options.with_user(user, password);
    }
    Ok(options)
}

/// Opens `n` watchers, each on its own Watch stream, spread over `conns`
/// connections (the i-th on endpoint i mod their number), and returns once
/// every one is created.
pub async fn start(
    endpoints: &[String],
    n: usize,
    conns: usize,
    spec: &Spec,
) -> Result<Watchers, String> {
    let options = connect_options()?;
    eprintln!("   creating {n} etcd-client watchers, one stream each, over {conns} connections");
    let mut clients = Vec::new();
    for i in 0..conns.min(n).max(1) {
        let endpoint = &endpoints[i % endpoints.len()];
        let client = etcd_client::Client::connect([endpoint.as_str()], Some(options.clone()))
            .await
            .map_err(|e| format!("etcd-client connect {endpoint}: {e}"))?;
        clients.push(client);
    }
    let mut streams = Vec::with_capacity(n);
    for i in 0..n {
        let mut client = clients[i % clients.len()].clone();
        let mut options = WatchOptions::new();
        if spec.prefix {
            options = options.with_prefix();
        }
        if spec.prev_kv {
            options = options.with_prev_key();
        }
        let mut stream = client
            .watch(spec.key.as_str(), Some(options))
            .await
            .map_err(|e| format!("watch {i}: {e}"))?;
        match tokio::time::timeout(Duration::from_secs(120), stream.message()).await {
            Ok(Ok(Some(r))) if r.created() => {}
            other => return Err(format!("watch {i} not created: {other:?}")),
        }
        streams.push(stream);
    }
    let tasks = streams
        .into_iter()
        .map(|mut stream| {
            let spec = spec.clone();
            tokio::spawn(async move {
                let mut seen = Seen {
                    sequence: Sequence::starting_at(spec.first),
                    arrivals: Vec::new(),
                };
                // Once the last revision is known, a watcher waits for it at
                // most this long; what has not come by then counts as lost.
                let mut give_up: Option<Instant> = None;
                loop {
                    let last = spec.last.load(Ordering::Acquire);
                    if last != u64::MAX {
                        if seen.sequence.next > last as i64 {
                            return Ok(seen);
                        }
                        let at = *give_up.get_or_insert_with(|| Instant::now() + GRACE);
                        if Instant::now() > at {
                            return Ok(seen);
                        }
                    }
                    let message =
                        tokio::time::timeout(Duration::from_millis(200), stream.message()).await;
                    let response = match message {
                        // Nothing yet: look at the writer's progress again.
                        Err(_) => continue,
                        Ok(Err(e)) => return Err(format!("watch stream failed: {e}")),
                        Ok(Ok(None)) => return Err("watch stream ended".into()),
                        Ok(Ok(Some(r))) => r,
                    };
                    if response.canceled() {
                        return Err(format!("watch canceled: {}", response.cancel_reason()));
                    }
                    let at_ns = spec.epoch.elapsed().as_nanos() as u64;
                    for event in response.events() {
                        let Some(kv) = event.kv() else { continue };
                        seen.sequence.see(kv.mod_revision());
                        if spec.prev_kv
                            && kv.create_revision() != kv.mod_revision()
                            && event.prev_kv().is_none()
                        {
                            spec.prev_missing.fetch_add(1, Ordering::Relaxed);
                        }
                        if spec.timed {
                            seen.arrivals.push(Arrival {
                                revision: kv.mod_revision(),
                                at_ns,
                                sent_ns: std::str::from_utf8(kv.value())
                                    .ok()
                                    .and_then(|s| s.parse().ok()),
                            });
                        }
                    }
                    spec.delivered
                        .fetch_add(response.events().len() as u64, Ordering::Relaxed);
                }
            })
        })
        .collect();
    Ok(Watchers { tasks })
}

impl Watchers {
    /// Waits for every watcher to reach `last` (set in the spec before
    /// this; a watcher waits at most 30 s for it); what each saw, its losses
    /// counted up to `last`.
    pub async fn finish(self, last: i64) -> Result<Vec<Seen>, String> {
        let deadline = tokio::time::Instant::now() + GRACE + Duration::from_secs(30);
        let mut out = Vec::with_capacity(self.tasks.len());
        for task in self.tasks {
            let mut seen = tokio::time::timeout_at(deadline, task)
                .await
                .map_err(|_| format!("watchers did not reach revision {last}"))?
                .map_err(|e| e.to_string())??;
            seen.sequence.finish(last);
            out.push(seen);
        }
        Ok(out)
    }
}

/// Lost and duplicated events over all watchers.
pub fn lost_and_duplicated(seen: &[Seen]) -> (u64, u64) {
    seen.iter().fold((0, 0), |(lost, dup), w| {
        (lost + w.sequence.lost, dup + w.sequence.duplicated)
    })
}
