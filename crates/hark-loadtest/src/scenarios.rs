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
use hark_client::WatchOptions;

use crate::harness::{
    Combine, Metric, Options, Sequence, ServerCpu, clients, count, current_revision,
    fsync_latencies, joined, load, metric, next_revision, on_own_thread, pct_ms, put_load,
};
use crate::servers::rss_bytes;
use crate::{lean_watch, stream_watchers};

pub const ALL: [&str; 12] = [
    "put",
    "range",
    "watch-latency",
    "fanout",
    "catchup",
    "watchers-mem",
    "overload",
    "maintenance",
    "auto-defrag",
    "large-range",
    "gateway",
    "parked",
];

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
        "auto-defrag" => crate::maintenance::auto_defrag(o, endpoints).await,
        "large-range" => crate::large_range::run(o, endpoints, pid).await,
        "gateway" => crate::http_load::gateway(o, endpoints, pid).await,
        "parked" => crate::http_load::parked(o, endpoints, pid).await,
        other => Err(format!("unknown scenario {other}")),
    }
}

async fn put(o: &Options, endpoints: &[String], pid: Option<u32>) -> Result<Vec<Metric>, String> {
    let cs = clients(endpoints, o.conns).await?;
    let value = Bytes::from(vec![b'x'; o.value_size]);
    // The physical floor of a durable put, timed in this run on the data
    // dirs' filesystem before the load (not during it: the servers' own
    // fsyncs would queue behind these).
    let fsync = fsync_latencies(&std::env::temp_dir(), 300)?;
    let stages_before = crate::write_stages::read(endpoints).await;
    let cpu = ServerCpu::start(pid);
    let (wall, lat) = put_load(&cs, o.clients, o.total, value, |i| format!("put/{i}")).await?;
    let machine = cpu.machine("put", o.total as u64);
    let cpu = cpu.per("server CPU per put", o.total as u64);
    let stages_after = crate::write_stages::read(endpoints).await;
    let fsync_p50 = pct_ms(&fsync, 0.50);
    let mut out = vec![
        metric("puts/s", o.total as f64 / wall.as_secs_f64(), "ops/s"),
        metric("put p50", pct_ms(&lat, 0.50), "ms"),
        metric("put p99", pct_ms(&lat, 0.99), "ms"),
        metric("disk fsync p50", fsync_p50, "ms"),
        metric("disk fsync p99", pct_ms(&fsync, 0.99), "ms"),
        metric(
            "put p50 in fsyncs",
            pct_ms(&lat, 0.50) / fsync_p50.max(0.001),
            "x",
        ),
    ];
    out.extend(cpu);
    out.extend(machine);
    out.extend(crate::write_stages::breakdown(
        &stages_before,
        &stages_after,
    ));
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
    out.extend(cpu.machine("1k events", delivered / 1000));
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
