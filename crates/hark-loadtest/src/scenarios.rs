//! The scenarios. Each returns its figures; watch scenarios also count lost and
//! duplicated events per watcher (an event is lost if a watcher never got it,
//! duplicated if it got it again or out of order).
//!
//! Every scenario writes with a single writer where it checks watchers, so the
//! revisions it writes are contiguous and each watcher's stream can be checked
//! as it arrives, without storing it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use hark_client::{Client, WatchOptions};

use crate::servers::{cpu_seconds, rss_bytes};
use crate::{lean_watch, stream_watchers};

pub const ALL: [&str; 10] = [
    "put",
    "range",
    "watch-latency",
    "fanout",
    "catchup",
    "watchers-mem",
    "overload",
    "maintenance",
    "gateway",
    "parked",
];

#[derive(Debug, Clone)]
pub struct Metric {
    pub name: String,
    pub value: f64,
    pub unit: &'static str,
    /// How rounds of the same run combine into one figure.
    pub combine: Combine,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Combine {
    /// A measurement: its median over the rounds is quoted.
    Median,
    /// A count that must be zero, such as lost events: every round's count is added up.
    Sum,
    /// A count that must be complete, such as watchers created: the worst round is quoted.
    Min,
}

pub(crate) fn metric(name: &str, value: f64, unit: &'static str) -> Metric {
    Metric {
        name: name.to_string(),
        value,
        unit,
        combine: Combine::Median,
    }
}

pub(crate) fn count(name: &str, value: u64, unit: &'static str, combine: Combine) -> Metric {
    Metric {
        combine,
        ..metric(name, value as f64, unit)
    }
}

/// The server's CPU time (user + system) since `start`, when its pid is known:
/// a per-request cost that the machine's noise moves far less than throughput.
pub(crate) struct ServerCpu {
    pid: Option<u32>,
    start: f64,
}

impl ServerCpu {
    pub(crate) fn start(pid: Option<u32>) -> ServerCpu {
        let start = pid.and_then(|p| cpu_seconds(p).ok()).unwrap_or(0.0);
        ServerCpu { pid, start }
    }

    /// Microseconds of server CPU per unit of work, as a metric (none without a pid).
    pub(crate) fn per(&self, name: &str, units: u64) -> Option<Metric> {
        let now = cpu_seconds(self.pid?).ok()?;
        Some(metric(
            name,
            (now - self.start) * 1e6 / units.max(1) as f64,
            "us CPU",
        ))
    }
}

pub struct Options {
    pub scenario: String,
    pub endpoints: Option<Vec<String>>,
    pub compare_etcd: Option<String>,
    /// Members per server with --compare-etcd.
    pub cluster: usize,
    pub hark: Option<String>,
    pub json: bool,
    pub help: bool,
    pub clients: usize,
    pub conns: usize,
    pub total: usize,
    pub value_size: usize,
    pub watchers: Option<usize>,
    pub streams: usize,
    pub rate: u64,
    pub duration: u64,
    pub events: usize,
    pub history: usize,
    pub keys: usize,
    pub fill_mb: u64,
    pub pid: Option<u32>,
    pub rounds: usize,
    /// With --compare-etcd: TLS on the client URLs, auth on.
    pub tls: bool,
    pub user: bool,
    /// Watchers of fanout ask for `prev_kv`.
    pub prev_kv: bool,
    /// Watch scenarios consume with the `etcd-client` crate, one watch
    /// stream per watcher over `conns` connections (`stream_watchers`).
    pub etcd_client: bool,
    /// Start Hark alone (no etcd) on a fresh data dir.
    pub hark_alone: bool,
    /// Fail when Hark's event-after-ack p99 (ms) is over this, or an event
    /// is lost or duplicated: CI's guard on watch delivery.
    pub max_after_ack_p99: Option<f64>,
}

impl Options {
    pub fn parse(args: &[String]) -> Result<Options, String> {
        let mut o = Options {
            scenario: String::new(),
            endpoints: None,
            compare_etcd: None,
            cluster: 1,
            hark: None,
            json: false,
            help: false,
            clients: 16,
            conns: 4,
            total: 20_000,
            value_size: 256,
            watchers: None,
            streams: 10,
            rate: 200,
            duration: 10,
            events: 1000,
            history: 20_000,
            keys: 1000,
            fill_mb: 256,
            pid: None,
            rounds: 1,
            tls: false,
            user: false,
            prev_kv: false,
            etcd_client: false,
            hark_alone: false,
            max_after_ack_p99: None,
        };
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let (flag, inline) = match a.split_once('=') {
                Some((f, v)) if a.starts_with("--") => (f.to_string(), Some(v.to_string())),
                _ => (a.clone(), None),
            };
            let mut value = || {
                inline
                    .clone()
                    .or_else(|| it.next().cloned())
                    .ok_or(format!("{flag} needs a value"))
            };
            let num = |v: String| {
                v.parse::<u64>()
                    .map_err(|_| format!("bad number {v:?} for {flag}"))
            };
            match flag.as_str() {
                "-h" | "--help" | "help" => o.help = true,
                "--json" => o.json = true,
                "--tls" => o.tls = true,
                "--user" => o.user = true,
                "--prev-kv" => o.prev_kv = true,
                "--etcd-client" => o.etcd_client = true,
                "--hark-alone" => o.hark_alone = true,
                "--max-after-ack-p99" => {
                    let v = value()?;
                    o.max_after_ack_p99 = Some(
                        v.parse::<f64>()
                            .map_err(|_| format!("bad number {v:?} for {flag}"))?,
                    )
                }
                "--endpoints" => {
                    o.endpoints = Some(value()?.split(',').map(str::to_string).collect())
                }
                "--compare-etcd" => o.compare_etcd = Some(value()?),
                "--cluster" => o.cluster = (num(value()?)? as usize).max(1),
                "--hark" => o.hark = Some(value()?),
                "--clients" => o.clients = num(value()?)? as usize,
                "--conns" => o.conns = num(value()?)? as usize,
                "--total" => o.total = num(value()?)? as usize,
                "--value-size" => o.value_size = num(value()?)? as usize,
                "--watchers" => o.watchers = Some(num(value()?)? as usize),
                "--streams" => o.streams = num(value()?)? as usize,
                "--rate" => o.rate = num(value()?)?,
                "--duration" => o.duration = num(value()?)?,
                "--events" => o.events = num(value()?)? as usize,
                "--history" => o.history = num(value()?)? as usize,
                "--keys" => o.keys = num(value()?)? as usize,
                "--fill-mb" => o.fill_mb = num(value()?)?,
                "--pid" => o.pid = Some(num(value()?)? as u32),
                "--rounds" => o.rounds = num(value()?)? as usize,
                s if !s.starts_with('-') && o.scenario.is_empty() => o.scenario = s.to_string(),
                other => return Err(format!("unknown argument {other:?}")),
            }
        }
        if !o.help && o.scenario.is_empty() {
            return Err("no scenario given".into());
        }
        if !o.help && o.scenario != "all" && !ALL.contains(&o.scenario.as_str()) {
            return Err(format!("unknown scenario {:?}", o.scenario));
        }
        o.clients = o.clients.max(1);
        o.conns = o.conns.max(1);
        o.streams = o.streams.max(1);
        o.rate = o.rate.max(1);
        o.rounds = o.rounds.max(1);
        Ok(o)
    }

    pub fn hark_binary(&self) -> Result<String, String> {
        self.hark
            .clone()
            .or_else(|| std::env::var("HARK_BIN").ok())
            .ok_or_else(|| "no hark binary: give --hark or set HARK_BIN".into())
    }
}

pub async fn run(
    scenario: &str,
    o: &Options,
    endpoints: &[String],
    pid: Option<u32>,
) -> Result<Vec<Metric>, String> {
    match scenario {
        "put" => put(o, endpoints, pid).await,
        "range" => range(o, endpoints, pid).await,
        "watch-latency" if o.etcd_client => watch_latency_streams(o, endpoints).await,
        "watch-latency" => watch_latency(o, endpoints).await,
        "fanout" => fanout(o, endpoints, pid).await,
        "catchup" => catchup(o, endpoints, pid).await,
        "watchers-mem" => watchers_mem(o, endpoints, pid).await,
        "overload" => overload(o, endpoints, pid).await,
        "maintenance" => crate::maintenance::run(o, endpoints).await,
        "gateway" => crate::http_load::gateway(o, endpoints, pid).await,
        "parked" => crate::http_load::parked(o, endpoints, pid).await,
        other => Err(format!("unknown scenario {other}")),
    }
}

/// `n` clients, the i-th starting on endpoint i (mod their number), so a
/// cluster's members share the connections.
pub(crate) async fn clients(endpoints: &[String], n: usize) -> Result<Vec<Client>, String> {
    let mut out = Vec::new();
    for i in 0..n {
        let mut rotated = endpoints.to_vec();
        rotated.rotate_left(i % endpoints.len().max(1));
        out.push(
            crate::secure::connect(&rotated)
                .await
                .map_err(|e| e.to_string())?,
        );
    }
    Ok(out)
}

/// The revision the next write will get, asked over a connection of its own.
async fn next_revision(endpoints: &[String]) -> Result<i64, String> {
    let c = crate::secure::connect(endpoints)
        .await
        .map_err(|e| e.to_string())?;
    Ok(current_revision(&c).await? + 1)
}

pub(crate) async fn current_revision(c: &Client) -> Result<i64, String> {
    c.status()
        .await
        .map_err(|e| e.to_string())?
        .header
        .map(|h| h.revision)
        .ok_or_else(|| "status without header".into())
}

/// Percentile of microsecond samples, in milliseconds.
pub(crate) fn pct_ms(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i] as f64 / 1000.0
}

/// Runs `op(client, i)` for `i` in `0..total` from `concurrency` tasks, task
/// `t` using `cs[t % cs.len()]` (a gRPC client, or an HTTP connection of its
/// own); returns the wall time and each op's latency (µs), sorted.
pub(crate) async fn load<C, F, Fut>(
    cs: &[C],
    concurrency: usize,
    total: usize,
    op: F,
) -> Result<(Duration, Vec<u64>), String>
where
    C: Clone + Send + 'static,
    F: Fn(C, usize) -> Fut + Clone + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<(), String>> + Send,
{
    let next = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let mut tasks = Vec::new();
    for t in 0..concurrency {
        let (c, next, op) = (cs[t % cs.len()].clone(), next.clone(), op.clone());
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed) as usize;
                if i >= total {
                    return Ok::<_, String>(lat);
                }
                let t0 = Instant::now();
                op(c.clone(), i).await?;
                lat.push(t0.elapsed().as_micros() as u64);
            }
        }));
    }
    let mut all = Vec::with_capacity(total);
    for t in tasks {
        all.extend(t.await.map_err(|e| e.to_string())??);
    }
    let wall = start.elapsed();
    all.sort_unstable();
    Ok((wall, all))
}

/// `total` puts of `key_of(i)`, as [`load`].
pub(crate) async fn put_load(
    cs: &[Client],
    concurrency: usize,
    total: usize,
    value: Bytes,
    key_of: impl Fn(usize) -> String + Send + Sync + 'static,
) -> Result<(Duration, Vec<u64>), String> {
    let key_of = Arc::new(key_of);
    load(cs, concurrency, total, move |c, i| {
        let (key, value) = (key_of(i), value.clone());
        async move { c.put(key, value).await.map(drop).map_err(|e| e.to_string()) }
    })
    .await
}

async fn put(o: &Options, endpoints: &[String], pid: Option<u32>) -> Result<Vec<Metric>, String> {
    let cs = clients(endpoints, o.conns).await?;
    let value = Bytes::from(vec![b'x'; o.value_size]);
    let cpu = ServerCpu::start(pid);
    let (wall, lat) = put_load(&cs, o.clients, o.total, value, |i| format!("put/{i}")).await?;
    let mut out = vec![
        metric("puts/s", o.total as f64 / wall.as_secs_f64(), "ops/s"),
        metric("put p50", pct_ms(&lat, 0.50), "ms"),
        metric("put p99", pct_ms(&lat, 0.99), "ms"),
    ];
    out.extend(cpu.per("server CPU per put", o.total as u64));
    Ok(out)
}

async fn range(o: &Options, endpoints: &[String], pid: Option<u32>) -> Result<Vec<Metric>, String> {
    let cs = clients(endpoints, o.conns).await?;
    let value = Bytes::from(vec![b'x'; o.value_size]);
    let keys = o.keys.max(1);
    put_load(&cs, o.clients, keys, value, |i| format!("range/{i}")).await?;
    let total = o.total;
    let cpu = ServerCpu::start(pid);
    let (wall, all) = load(&cs, o.clients, total, move |c, i| async move {
        // A spread of keys without a shared RNG.
        let k = (i.wrapping_mul(2_654_435_761)) % keys;
        let r = c
            .get(format!("range/{k}"))
            .await
            .map_err(|e| e.to_string())?;
        if r.kvs.len() == 1 {
            Ok(())
        } else {
            Err(format!("range/{k} missing"))
        }
    })
    .await?;
    let mut out = vec![
        metric("ranges/s", total as f64 / wall.as_secs_f64(), "ops/s"),
        metric("range p50", pct_ms(&all, 0.50), "ms"),
        metric("range p99", pct_ms(&all, 0.99), "ms"),
    ];
    out.extend(cpu.per("server CPU per range", total as u64));
    Ok(out)
}

/// Checks one watcher's revisions as they arrive against the contiguous
/// sequence `first..=last`.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Sequence {
    pub(crate) next: i64,
    pub(crate) lost: u64,
    pub(crate) duplicated: u64,
}

impl Sequence {
    pub(crate) fn starting_at(first: i64) -> Sequence {
        Sequence {
            next: first,
            ..Default::default()
        }
    }

    pub(crate) fn see(&mut self, rev: i64) {
        if rev == self.next {
            self.next += 1;
        } else if rev < self.next {
            self.duplicated += 1;
        } else {
            self.lost += (rev - self.next) as u64;
            self.next = rev + 1;
        }
    }

    /// Counts what never came, up to and including `last`.
    pub(crate) fn finish(&mut self, last: i64) {
        if self.next <= last {
            self.lost += (last + 1 - self.next) as u64;
            self.next = last + 1;
        }
    }
}

/// Creates `n` watchers on `key` (a prefix if `prefix`) from `start` (0: now),
/// spread over `streams` client connections; returns once all are created.
async fn create_watchers(
    endpoints: &[String],
    n: usize,
    streams: usize,
    key: &str,
    prefix: bool,
    start: i64,
) -> Result<Vec<hark_client::Watch>, String> {
    let cs = clients(endpoints, streams.min(n).max(1)).await?;
    let mut watches = Vec::with_capacity(n);
    for i in 0..n {
        let options = WatchOptions {
            prefix,
            start_revision: start,
            created_notify: true,
            ..Default::default()
        };
        watches.push(
            cs[i % cs.len()]
                .watch(key.to_string(), options)
                .await
                .map_err(|e| e.to_string())?,
        );
    }
    for w in &mut watches {
        match tokio::time::timeout(Duration::from_secs(120), w.next()).await {
            Ok(Some(Ok(u))) if u.created => {}
            other => return Err(format!("watch create failed: {other:?}")),
        }
    }
    Ok(watches)
}

async fn watch_latency(o: &Options, endpoints: &[String]) -> Result<Vec<Metric>, String> {
    let n = o.watchers.unwrap_or(100);
    let writer = crate::secure::connect(endpoints)
        .await
        .map_err(|e| e.to_string())?;
    let watches = create_watchers(endpoints, n, o.streams, "lat/key", false, 0).await?;
    let first = current_revision(&writer).await? + 1;
    let epoch = Instant::now();
    let last_rev = Arc::new(AtomicU64::new(u64::MAX));
    let mut tasks = Vec::new();
    for mut w in watches {
        let last_rev = last_rev.clone();
        tasks.push(tokio::spawn(async move {
            let mut seq = Sequence::starting_at(first);
            let mut lat = Vec::new();
            loop {
                let last = last_rev.load(Ordering::Acquire);
                if last != u64::MAX && seq.next > last as i64 {
                    break;
                }
                match tokio::time::timeout(Duration::from_millis(200), w.next()).await {
                    Ok(Some(Ok(u))) => {
                        for e in u.events {
                            let kv = e.kv.unwrap_or_default();
                            let sent: u128 = std::str::from_utf8(&kv.value)
                                .ok()
                                .and_then(|s| s.parse().ok())
                                .unwrap_or(0);
                            lat.push(
                                (epoch.elapsed().as_nanos().saturating_sub(sent) / 1000) as u64,
                            );
                            seq.see(kv.mod_revision);
                        }
                    }
                    Ok(_) => break,
                    // Nothing yet: look at the writer's progress again.
                    Err(_) => {}
                }
            }
            (seq, lat)
        }));
    }
    let interval = Duration::from_nanos(1_000_000_000 / o.rate);
    let mut tick = tokio::time::interval(interval);
    let deadline = Instant::now() + Duration::from_secs(o.duration);
    let mut last = first - 1;
    eprintln!(
        "   writing {} puts/s for {} s to {n} watchers",
        o.rate, o.duration
    );
    while Instant::now() < deadline {
        tick.tick().await;
        let sent = epoch.elapsed().as_nanos().to_string();
        last = writer
            .put("lat/key", sent)
            .await
            .map_err(|e| e.to_string())?
            .header
            .map_or(last, |h| h.revision);
    }
    last_rev.store(last as u64, Ordering::Release);
    let mut lat = Vec::new();
    let (mut lost, mut dup) = (0, 0);
    for t in tasks {
        let (mut seq, l) = tokio::time::timeout(Duration::from_secs(60), t)
            .await
            .map_err(|_| "watchers did not finish".to_string())?
            .map_err(|e| e.to_string())?;
        seq.finish(last);
        lost += seq.lost;
        dup += seq.duplicated;
        lat.extend(l);
    }
    lat.sort_unstable();
    Ok(vec![
        metric("put-to-event p50", pct_ms(&lat, 0.50), "ms"),
        metric("put-to-event p99", pct_ms(&lat, 0.99), "ms"),
        metric("put-to-event max", pct_ms(&lat, 1.0), "ms"),
        count("events lost", lost, "events", Combine::Sum),
        count("events duplicated", dup, "events", Combine::Sum),
    ])
}

/// Runs `work` with its own client on its own thread and single-threaded
/// runtime. The writers whose latency and rate the watch scenarios report run
/// this way, so that what they measure is the server, not their wait for the
/// load generator's main runtime, which is busy decoding the watchers' events.
pub(crate) fn on_own_thread<T, F, Fut>(
    endpoints: &[String],
    work: F,
) -> tokio::sync::oneshot::Receiver<Result<T, String>>
where
    T: Send + 'static,
    F: FnOnce(Client) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = Result<T, String>>,
{
    let endpoints = endpoints.to_vec();
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        let result = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())
            .and_then(|rt| {
                rt.block_on(async move {
                    let client = crate::secure::connect(&endpoints)
                        .await
                        .map_err(|e| e.to_string())?;
                    work(client).await
                })
            });
        let _ = tx.send(result);
    });
    rx
}

pub(crate) async fn joined<T>(
    rx: tokio::sync::oneshot::Receiver<Result<T, String>>,
) -> Result<T, String> {
    rx.await.map_err(|_| "writer thread died".to_string())?
}

async fn fanout(
    o: &Options,
    endpoints: &[String],
    pid: Option<u32>,
) -> Result<Vec<Metric>, String> {
    let n = o.watchers.unwrap_or(1000);
    let value = Bytes::from(vec![b'x'; o.value_size]);
    // Each put replaces one of `KEYS` values, so `prev_kv` watchers get one.
    const KEYS: usize = 100;
    let (idle_n, events) = (o.events.clamp(KEYS, 500), o.events);
    let (idle_tx, idle_rx) = tokio::sync::oneshot::channel();
    let (go_tx, go_rx) = tokio::sync::oneshot::channel::<i64>();
    let writer = on_own_thread(endpoints, move |writer| async move {
        // The writer's rate with nobody watching, for comparison.
        let t0 = Instant::now();
        for i in 0..idle_n {
            writer
                .put(format!("fan/{}", i % KEYS), value.clone())
                .await
                .map_err(|e| e.to_string())?;
        }
        let _ = idle_tx.send(idle_n as f64 / t0.elapsed().as_secs_f64());
        let mut last_rev = go_rx.await.map_err(|_| "no watchers".to_string())?;
        let start = Instant::now();
        for i in 0..events {
            last_rev = writer
                .put(format!("fan/{}", i % KEYS), value.clone())
                .await
                .map_err(|e| e.to_string())?
                .header
                .map_or(last_rev, |h| h.revision);
        }
        Ok((events as f64 / start.elapsed().as_secs_f64(), last_rev))
    });
    let idle_rate = idle_rx.await.map_err(|_| "writer failed before watching")?;

    let first = next_revision(endpoints).await?;
    let spec = lean_watch::Spec {
        prev_kv: o.prev_kv,
        ..lean_watch::Spec::prefix("fan/", 0, first)
    };
    let consumers = if o.etcd_client {
        // One stream per watcher, counting into the same spec's counters.
        let streams_spec = stream_watchers::Spec {
            key: "fan/".into(),
            prefix: true,
            prev_kv: o.prev_kv,
            first,
            last: spec.last.clone(),
            timed: false,
            epoch: Instant::now(),
            delivered: spec.delivered.clone(),
            prev_missing: spec.prev_missing.clone(),
        };
        Consumers::OneStreamEach(
            stream_watchers::start(endpoints, n, o.conns, &streams_spec).await?,
        )
    } else {
        eprintln!("   creating {n} watchers over {} streams", o.streams);
        let mut checkers = lean_watch::start(endpoints, n, o.streams, &spec).await?;
        checkers.created().await?;
        Consumers::Shared(checkers)
    };
    let cpu = ServerCpu::start(pid);
    let start = Instant::now();
    let _ = go_tx.send(first - 1);
    let (writer_rate, last_rev) = joined(writer).await?;
    spec.last.store(last_rev as u64, Ordering::Release);
    let (lost, dup) = match consumers {
        Consumers::Shared(checkers) => checkers.finish(last_rev).await?,
        Consumers::OneStreamEach(watchers) => {
            stream_watchers::lost_and_duplicated(&watchers.finish(last_rev).await?)
        }
    };
    let took = start.elapsed();
    let delivered = spec.delivered.load(Ordering::Relaxed);
    let mut out = vec![
        metric(
            "events delivered/s",
            delivered as f64 / took.as_secs_f64(),
            "events/s",
        ),
        metric("writer puts/s (watched)", writer_rate, "ops/s"),
        metric("writer puts/s (no watchers)", idle_rate, "ops/s"),
        metric(
            "writer watched / unwatched",
            writer_rate / idle_rate,
            "fraction",
        ),
    ];
    out.extend(cpu.per("server CPU per 1k events", delivered / 1000));
    out.extend([
        count("events lost", lost, "events", Combine::Sum),
        count("events duplicated", dup, "events", Combine::Sum),
    ]);
    if o.prev_kv {
        let missing = spec.prev_missing.load(Ordering::Relaxed);
        out.push(count("prev_kv missing", missing, "events", Combine::Sum));
    }
    Ok(out)
}

/// The fanout's watchers: sharing `--streams` streams, or one stream each.
enum Consumers {
    Shared(lean_watch::Checkers),
    OneStreamEach(stream_watchers::Watchers),
}

/// watch-latency with `--etcd-client`: each watcher on its own stream (the
/// `etcd-client` crate, over `--conns` connections) and an open-loop writer
/// that sends each put on schedule, answered or not, as independent clients
/// do. Besides put-to-event (the value is the put's send time), it reports
/// how long after the put's reply reached the writer its event reached each
/// watcher (0 when the event came first): a server that acknowledges
/// promptly but delivers late shows there, not in put latency.
async fn watch_latency_streams(o: &Options, endpoints: &[String]) -> Result<Vec<Metric>, String> {
    const KEY: &str = "lat/key";
    let n = o.watchers.unwrap_or(100);
    let first = next_revision(endpoints).await?;
    let epoch = Instant::now();
    let spec = stream_watchers::Spec {
        key: KEY.into(),
        prefix: false,
        prev_kv: false,
        first,
        last: Arc::new(AtomicU64::new(u64::MAX)),
        timed: true,
        epoch,
        delivered: Default::default(),
        prev_missing: Default::default(),
    };
    let watchers = stream_watchers::start(endpoints, n, o.conns, &spec).await?;
    let (rate, total) = (o.rate, (o.rate * o.duration).max(1) as usize);
    eprintln!("   writing {rate} puts/s, open loop, for {} s", o.duration);
    let writer = on_own_thread(endpoints, move |writer| async move {
        let mut tick = tokio::time::interval(Duration::from_nanos(1_000_000_000 / rate));
        let mut puts = tokio::task::JoinSet::new();
        for _ in 0..total {
            tick.tick().await;
            let writer = writer.clone();
            puts.spawn(async move {
                let sent = epoch.elapsed().as_nanos() as u64;
                let reply = writer
                    .put(KEY, sent.to_string())
                    .await
                    .map_err(|e| e.to_string())?;
                let acked = epoch.elapsed().as_nanos() as u64;
                Ok::<_, String>((reply.header.map_or(0, |h| h.revision), sent, acked))
            });
        }
        let mut done = Vec::with_capacity(total);
        while let Some(put) = puts.join_next().await {
            done.push(put.map_err(|e| e.to_string())??);
        }
        Ok(done)
    });
    let puts = joined(writer).await?;
    let last = puts.iter().map(|p| p.0).max().unwrap_or(first - 1);
    spec.last.store(last as u64, Ordering::Release);
    let seen = watchers.finish(last).await?;

    // When each revision's put was acknowledged (one writer: contiguous).
    let mut acked_at = vec![None; usize::try_from(last + 1 - first).unwrap_or(0)];
    for &(revision, _, acked) in &puts {
        if let Some(slot) = usize::try_from(revision - first)
            .ok()
            .and_then(|i| acked_at.get_mut(i))
        {
            *slot = Some(acked);
        }
    }
    let mut put_latency: Vec<u64> = puts.iter().map(|&(_, s, a)| (a - s) / 1000).collect();
    let (mut to_event, mut after_ack) = (Vec::new(), Vec::new());
    let (lost, dup) = stream_watchers::lost_and_duplicated(&seen);
    let mut before_ack = 0u64;
    for watcher in &seen {
        for a in &watcher.arrivals {
            if let Some(sent) = a.sent_ns {
                to_event.push(a.at_ns.saturating_sub(sent) / 1000);
            }
            let acked = usize::try_from(a.revision - first)
                .ok()
                .and_then(|i| acked_at.get(i).copied().flatten());
            if let Some(acked) = acked {
                if a.at_ns < acked {
                    before_ack += 1;
                }
                after_ack.push(a.at_ns.saturating_sub(acked) / 1000);
            }
        }
    }
    put_latency.sort_unstable();
    to_event.sort_unstable();
    after_ack.sort_unstable();
    let share_before = 100.0 * before_ack as f64 / after_ack.len().max(1) as f64;
    Ok(vec![
        metric("put-to-event p50", pct_ms(&to_event, 0.50), "ms"),
        metric("put-to-event p99", pct_ms(&to_event, 0.99), "ms"),
        metric("put-to-event max", pct_ms(&to_event, 1.0), "ms"),
        metric(AFTER_ACK_P50, pct_ms(&after_ack, 0.50), "ms"),
        metric(AFTER_ACK_P99, pct_ms(&after_ack, 0.99), "ms"),
        metric("events before their ack", share_before, "%"),
        metric("put p50", pct_ms(&put_latency, 0.50), "ms"),
        metric("put p99", pct_ms(&put_latency, 0.99), "ms"),
        count("events lost", lost, "events", Combine::Sum),
        count("events duplicated", dup, "events", Combine::Sum),
    ])
}

/// The figures `--max-after-ack-p99` judges.
pub const AFTER_ACK_P50: &str = "event after ack p50";
pub const AFTER_ACK_P99: &str = "event after ack p99";

/// Phases of the catchup scenario's writer.
const IDLE: u64 = 0;
const CATCHING_UP: u64 = 1;
const STOP: u64 = 2;

async fn catchup(
    o: &Options,
    endpoints: &[String],
    pid: Option<u32>,
) -> Result<Vec<Metric>, String> {
    let n = o.watchers.unwrap_or(100);
    let cs = clients(endpoints, o.conns).await?;
    let writer = cs[0].clone();
    let value = Bytes::from(vec![b'x'; o.value_size]);
    let first = current_revision(&writer).await? + 1;
    eprintln!("   writing {} revisions of history", o.history);
    put_load(&cs, o.clients, o.history, value.clone(), |i| {
        format!("cu/{i}")
    })
    .await?;
    let last = first + o.history as i64 - 1;
    // One put every 2 ms, the same before (idle) and during the catch-up: a
    // few hundred samples each, so that a p99 is not just the worst put.
    const IDLE_PUTS: usize = 500;
    let phase = Arc::new(AtomicU64::new(IDLE));
    let idle_done = Arc::new(tokio::sync::Notify::new());
    let live_writer = {
        let (phase, idle_done) = (phase.clone(), idle_done.clone());
        on_own_thread(endpoints, move |writer| async move {
            let (mut idle, mut during) = (Vec::new(), Vec::new());
            for i in 0.. {
                let now = phase.load(Ordering::Acquire);
                if now == STOP {
                    break;
                }
                let t0 = Instant::now();
                writer
                    .put(format!("cu-live/{i}"), value.clone())
                    .await
                    .map_err(|e| e.to_string())?;
                let took = t0.elapsed().as_micros() as u64;
                if now == IDLE {
                    idle.push(took);
                    if idle.len() == IDLE_PUTS {
                        idle_done.notify_one();
                    }
                } else {
                    during.push(took);
                }
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            Ok((idle, during))
        })
    };
    idle_done.notified().await;
    phase.store(CATCHING_UP, Ordering::Release);
    eprintln!("   {n} watchers catching up on {} revisions", o.history);
    let cpu = ServerCpu::start(pid);
    let start = Instant::now();
    let spec = lean_watch::Spec::prefix("cu/", first, first);
    spec.last.store(last as u64, Ordering::Release);
    let rss = RssPeak::start(pid);
    let checkers = lean_watch::start(endpoints, n, o.streams, &spec).await?;
    let (lost, dup) = checkers.finish(last).await?;
    let took = start.elapsed();
    let peak = rss.stop().await;
    let cpu = cpu.per(
        "server CPU per 1k events",
        (n as u64 * o.history as u64) / 1000,
    );
    phase.store(STOP, Ordering::Release);
    let (mut idle, mut during) = joined(live_writer).await?;
    idle.sort_unstable();
    during.sort_unstable();
    let during_p99 = pct_ms(&during, 0.99);
    let idle_p99 = pct_ms(&idle, 0.99);
    let mut out = vec![
        metric("catch-up time", took.as_secs_f64(), "s"),
        metric("put p99 during catch-up", during_p99, "ms"),
        metric("put p99 idle", idle_p99, "ms"),
        metric("put p99 during / idle", during_p99 / idle_p99, "ratio"),
    ];
    out.extend(peak.map(|b| metric("peak server RSS", b as f64 / MIB, "MiB")));
    out.extend(cpu);
    out.extend([
        count("events lost", lost, "events", Combine::Sum),
        count("events duplicated", dup, "events", Combine::Sum),
    ]);
    Ok(out)
}

const MIB: f64 = (1 << 20) as f64;

/// The highest resident memory of the server while it runs, sampled every
/// 20 ms (none without a pid).
struct RssPeak {
    stop: Arc<AtomicBool>,
    sampler: Option<tokio::task::JoinHandle<u64>>,
}

impl RssPeak {
    fn start(pid: Option<u32>) -> RssPeak {
        let stop = Arc::new(AtomicBool::new(false));
        let sampler = pid.map(|pid| {
            let stop = stop.clone();
            tokio::spawn(async move {
                let mut peak = 0;
                while !stop.load(Ordering::Acquire) {
                    peak = peak.max(rss_bytes(pid).unwrap_or(0));
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                peak
            })
        });
        RssPeak { stop, sampler }
    }

    async fn stop(self) -> Option<u64> {
        self.stop.store(true, Ordering::Release);
        self.sampler?.await.ok()
    }
}

/// A writer at full speed for `--duration` seconds while `--watchers`
/// watchers (over `--streams` streams) read nothing, then read everything:
/// the server must bound what it holds for them (the peak RSS says how)
/// and still deliver every event once, in order.
async fn overload(
    o: &Options,
    endpoints: &[String],
    pid: Option<u32>,
) -> Result<Vec<Metric>, String> {
    let n = o.watchers.unwrap_or(100);
    let cs = clients(endpoints, o.conns).await?;
    let value = Bytes::from(vec![b'x'; o.value_size]);
    let first = current_revision(&cs[0]).await? + 1;
    let spec = lean_watch::Spec::prefix("ov/", 0, first);
    spec.hold.store(true, Ordering::Release);
    eprintln!(
        "   creating {n} stalled watchers over {} streams",
        o.streams
    );
    let mut checkers = lean_watch::start(endpoints, n, o.streams, &spec).await?;
    checkers.created().await?;
    let before = pid.map(rss_bytes).transpose()?;
    let rss = RssPeak::start(pid);
    let deadline = Instant::now() + Duration::from_secs(o.duration);
    let (puts, last_rev) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicI64::new(0)));
    let mut writers = Vec::new();
    let stride = o.clients;
    for t in 0..o.clients {
        let (c, value) = (cs[t % cs.len()].clone(), value.clone());
        let (puts, last_rev) = (puts.clone(), last_rev.clone());
        writers.push(tokio::spawn(async move {
            let mut i = t;
            while Instant::now() < deadline {
                let r = c
                    .put(format!("ov/{}", i % 1000), value.clone())
                    .await
                    .map_err(|e| e.to_string())?;
                i += stride;
                puts.fetch_add(1, Ordering::Relaxed);
                if let Some(h) = r.header {
                    last_rev.fetch_max(h.revision, Ordering::Relaxed);
                }
            }
            Ok::<_, String>(())
        }));
    }
    let started = Instant::now();
    for w in writers {
        w.await.map_err(|e| e.to_string())??;
    }
    let wrote = started.elapsed();
    let peak_writing = rss.stop().await;
    let last = last_rev.load(Ordering::Relaxed);
    spec.last.store(last as u64, Ordering::Release);
    eprintln!(
        "   {} puts written; the watchers read now",
        puts.load(Ordering::Relaxed)
    );
    let rss = RssPeak::start(pid);
    let drain = Instant::now();
    spec.hold.store(false, Ordering::Release);
    let (lost, dup) = checkers.finish(last).await?;
    let drained = drain.elapsed();
    let peak_draining = rss.stop().await;
    let puts = puts.load(Ordering::Relaxed);
    let mut out = vec![metric(
        "puts/s (watchers stalled)",
        puts as f64 / wrote.as_secs_f64(),
        "ops/s",
    )];
    if let (Some(before), Some(writing), Some(draining)) = (before, peak_writing, peak_draining) {
        out.extend([
            metric("server RSS before", before as f64 / MIB, "MiB"),
            metric("peak RSS while stalled", writing as f64 / MIB, "MiB"),
            metric("peak RSS while draining", draining as f64 / MIB, "MiB"),
        ]);
    }
    out.extend([
        metric("drain time", drained.as_secs_f64(), "s"),
        metric(
            "events delivered",
            spec.delivered.load(Ordering::Relaxed) as f64,
            "events",
        ),
        count("events lost", lost, "events", Combine::Sum),
        count("events duplicated", dup, "events", Combine::Sum),
    ]);
    Ok(out)
}

async fn watchers_mem(
    o: &Options,
    endpoints: &[String],
    pid: Option<u32>,
) -> Result<Vec<Metric>, String> {
    use hark_proto::etcdserverpb::{
        WatchCreateRequest, WatchRequest, watch_client::WatchClient, watch_request::RequestUnion,
    };
    let pid = pid.ok_or("watchers-mem needs the server's pid (--pid, or --compare-etcd)")?;
    let n = o.watchers.unwrap_or(100_000);
    let streams = o.streams.min(n).max(1);
    let before = rss_bytes(pid)?;
    eprintln!("   creating {n} watchers over {streams} streams (pipelined)");
    let mut held = Vec::new();
    let mut waits = Vec::new();
    for s in 0..streams {
        let endpoint = endpoints[s % endpoints.len()].clone();
        let mut client = WatchClient::connect(endpoint)
            .await
            .map_err(|e| e.to_string())?;
        let (tx, rx) = tokio::sync::mpsc::channel(1024);
        let count = n / streams + usize::from(s < n % streams);
        // Fed before the call returns: etcd sends the stream's headers only
        // once a request has arrived.
        let feeder = tx.clone();
        tokio::spawn(async move {
            for i in 0..count {
                let create = WatchRequest {
                    request_union: Some(RequestUnion::CreateRequest(WatchCreateRequest {
                        key: format!("mem/{s}/{i}").into(),
                        ..Default::default()
                    })),
                };
                if feeder.send(create).await.is_err() {
                    return;
                }
            }
        });
        let mut replies = client
            .watch(tokio_stream::wrappers::ReceiverStream::new(rx))
            .await
            .map_err(|e| e.to_string())?
            .into_inner();
        held.push(tx);
        waits.push(tokio::spawn(async move {
            let mut created = 0;
            while created < count {
                match replies.message().await {
                    Ok(Some(r)) if r.created && !r.canceled => created += 1,
                    Ok(Some(_)) => {}
                    _ => break,
                }
            }
            (created, replies)
        }));
    }
    let mut created = 0;
    let mut open = Vec::new();
    for w in waits {
        let (c, replies) = w.await.map_err(|e| e.to_string())?;
        created += c;
        open.push(replies);
    }
    // Let the server settle before reading its memory.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let after = rss_bytes(pid)?;
    drop((held, open));
    Ok(vec![
        count("watchers created", created as u64, "watchers", Combine::Min),
        metric(
            "RSS per watcher",
            (after.saturating_sub(before)) as f64 / n as f64,
            "bytes",
        ),
        metric("RSS with watchers", after as f64 / 1e6, "MB"),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sequence_check_counts_lost_and_duplicated_events() {
        let mut s = Sequence::starting_at(5);
        for rev in [5, 6, 6, 8, 7, 9] {
            s.see(rev);
        }
        s.finish(11);
        // 6 again and 7 after 8: two duplicates; 7 skipped at first, 10 and 11 never came.
        assert_eq!((s.lost, s.duplicated), (3, 2));
        let mut clean = Sequence::starting_at(1);
        (1..=100).for_each(|r| clean.see(r));
        clean.finish(100);
        assert_eq!((clean.lost, clean.duplicated), (0, 0));
    }

    #[test]
    fn options_parse() {
        let args: Vec<String> = [
            "fanout",
            "--watchers=50",
            "--streams",
            "5",
            "--endpoints",
            "a,b",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let o = Options::parse(&args).unwrap();
        assert_eq!(
            (o.scenario.as_str(), o.watchers, o.streams),
            ("fanout", Some(50), 5)
        );
        assert_eq!(o.endpoints.unwrap(), ["a", "b"]);
        assert!(Options::parse(&["nope".to_string()]).is_err());
    }
}
