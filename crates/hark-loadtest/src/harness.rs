//! What every scenario shares: the flags, the figures a scenario reports,
//! clients and load loops, the per-watcher sequence check, and the writer's
//! own thread.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use hark_client::Client;

use crate::servers::{cpu_seconds, machine_cpu_seconds};

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
/// Beside it, this load generator's own CPU and the whole machine's, which
/// say whether a figure was bound by the machine's cores (with `--cluster`,
/// every member and the load generator share them).
pub(crate) struct ServerCpu {
    pid: Option<u32>,
    start: f64,
    own_start: f64,
    machine_start: Option<(f64, f64)>,
    /// With `--cluster`: every member's pid and its CPU at the start.
    members_start: Vec<(u32, f64)>,
}

/// The members of the cluster started for this round (see [`set_members`]).
static MEMBERS: std::sync::Mutex<Vec<u32>> = std::sync::Mutex::new(Vec::new());

/// Names the pids of the servers started for the next scenario run, so a
/// cluster's CPU is counted over all its members.
pub(crate) fn set_members(pids: &[u32]) {
    *MEMBERS.lock().unwrap_or_else(|e| e.into_inner()) = pids.to_vec();
}

impl ServerCpu {
    pub(crate) fn start(pid: Option<u32>) -> ServerCpu {
        let start = pid.and_then(|p| cpu_seconds(p).ok()).unwrap_or(0.0);
        ServerCpu {
            pid,
            start,
            own_start: cpu_seconds(std::process::id()).unwrap_or(0.0),
            machine_start: machine_cpu_seconds().ok(),
            members_start: MEMBERS
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .iter()
                .filter_map(|&p| Some((p, cpu_seconds(p).ok()?)))
                .collect(),
        }
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

    /// The load generator's CPU and the whole machine's per `unit` (µs
    /// each), and how busy the machine's cores were, since `start`.
    pub(crate) fn machine(&self, unit: &str, units: u64) -> Vec<Metric> {
        let per_unit = |seconds: f64| seconds * 1e6 / units.max(1) as f64;
        let mut out = Vec::new();
        if self.members_start.len() > 1 {
            let used: Option<f64> = self
                .members_start
                .iter()
                .map(|&(pid, start)| cpu_seconds(pid).ok().map(|now| now - start))
                .sum();
            if let Some(used) = used {
                out.push(metric(
                    &format!("all members' CPU per {unit}"),
                    per_unit(used),
                    "us CPU",
                ));
            }
        }
        if let Ok(own) = cpu_seconds(std::process::id()) {
            out.push(metric(
                &format!("load generator CPU per {unit}"),
                per_unit(own - self.own_start),
                "us CPU",
            ));
        }
        if let (Some((busy0, total0)), Ok((busy, total))) =
            (self.machine_start, machine_cpu_seconds())
        {
            out.push(metric(
                &format!("machine CPU per {unit}"),
                per_unit(busy - busy0),
                "us CPU",
            ));
            out.push(metric(
                "machine cores busy",
                // Busy time is part of the total: at most 100% (the float
                // differences of a saturated machine came out a hair over).
                (100.0 * (busy - busy0) / (total - total0).max(0.01)).min(100.0),
                "%",
            ));
        }
        out
    }
}

/// The load generator's flags (`cargo xtask loadtest help`). Defaults
/// finish within a minute.
#[derive(Debug, clap::Parser)]
#[command(
    name = "hark-loadtest",
    about = "Load scenarios against any etcd v3 endpoint, or Hark and a real etcd side by side.",
    override_usage = "cargo xtask loadtest <SCENARIO> [OPTIONS]",
    after_help = "Scenarios: put, range, watch-latency, fanout, catchup, watchers-mem,\n\
                  overload (a full-speed writer for --duration seconds while the watchers\n\
                  read nothing, then the server's peak RSS and whether every event still\n\
                  arrives), maintenance, auto-defrag (half of a filled store deleted and\n\
                  compacted: the time until its space is back and the writer's p99 meanwhile;\n\
                  Hark runs with --auto-defrag-ratio, etcd is defragmented as an operator's\n\
                  job would), large-range (--fill-mb of keys read as one RangeStream,\n\
                  timed to its last byte, in one Range, then in pages of 500: the\n\
                  server's peak RSS growth against the answer's size),\n\
                  gateway (puts and ranges over the JSON gateway),\n\
                  parked (requests waiting over HTTP for their key to change: Hark's\n\
                  blocking GET, etcd's /v3/watch), all.\n\n\
                  Target: one of --endpoints, --compare-etcd, --hark-alone.\n\n\
                  `hark-loadtest attack --help` (`cargo xtask attack`) is the hostile-client battery;\n\
                  `hark-loadtest scale --help` (`cargo xtask loadtest scale`) fills one member to\n\
                  millions of keys and measures it at each size."
)]
pub struct Options {
    /// The scenario to run (see below), or `all`.
    pub scenario: String,
    /// Drive a running etcd v3 endpoint (Hark or etcd).
    #[arg(long, value_delimiter = ',', value_name = "URL[,URL]")]
    pub endpoints: Option<Vec<String>>,
    /// Start Hark and the etcd binary at PATH (fresh data dirs, fsync on for
    /// both) for each scenario, run them one after the other, print both and
    /// the ratio.
    #[arg(long, value_name = "PATH")]
    pub compare_etcd: Option<String>,
    /// With --compare-etcd: N members each, started with etcd's cluster
    /// flags; clients spread over them.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub cluster: usize,
    /// The hark binary for --compare-etcd [default: $HARK_BIN].
    #[arg(long, value_name = "PATH")]
    pub hark: Option<String>,
    /// Machine-readable output (one JSON document).
    #[arg(long)]
    pub json: bool,
    /// Concurrent requests for put/range.
    #[arg(long, default_value_t = 16, value_name = "N")]
    pub clients: usize,
    /// Client connections for put/range (and for --etcd-client's streams).
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub conns: usize,
    /// Requests for put/range.
    #[arg(long, default_value_t = 20_000, value_name = "N")]
    pub total: usize,
    /// Bytes per value.
    #[arg(long, default_value_t = 256, value_name = "N")]
    pub value_size: usize,
    /// Watchers [default: watch-latency 100, fanout 1000, catchup 100,
    /// overload 100, watchers-mem 100000, parked requests 10000].
    #[arg(long, value_name = "N")]
    pub watchers: Option<usize>,
    /// Watch streams for fanout/catchup/mem.
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub streams: usize,
    /// Puts per second for watch-latency.
    #[arg(long, default_value_t = 200, value_name = "N")]
    pub rate: u64,
    /// Seconds of writes for watch-latency and overload.
    #[arg(long, default_value_t = 10, value_name = "S")]
    pub duration: u64,
    /// Puts during fanout; wake-ups timed in parked.
    #[arg(long, default_value_t = 1000, value_name = "N")]
    pub events: usize,
    /// Revisions written before catchup.
    #[arg(long, default_value_t = 20_000, value_name = "N")]
    pub history: usize,
    /// Keys preloaded for range.
    #[arg(long, default_value_t = 1000, value_name = "N")]
    pub keys: usize,
    /// MiB of 4 KiB values written before the maintenance scenario's
    /// snapshot and defrag (and auto-defrag's, and large-range's list).
    #[arg(long, default_value_t = 256, value_name = "N")]
    pub fill_mb: u64,
    /// Server pid for watchers-mem with --endpoints.
    #[arg(long, value_name = "PID")]
    pub pid: Option<u32>,
    /// Run each scenario N times (alternating Hark and etcd with
    /// --compare-etcd) and quote each figure's median over the rounds; lost
    /// and duplicated events are added up over all rounds.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub rounds: usize,
    /// With --compare-etcd: both servers serve TLS on their client URLs (a
    /// CA and certificate made for the run); with --cluster, members talk
    /// mutual TLS to each other.
    #[arg(long)]
    pub tls: bool,
    /// With --compare-etcd: both servers run with auth on; every client
    /// authenticates as root (a token per client).
    #[arg(long)]
    pub user: bool,
    /// Fanout's watchers ask for prev_kv (each put replaces one of 100
    /// values, so every event has one).
    #[arg(long)]
    pub prev_kv: bool,
    /// Watch-latency and fanout consume with the etcd-client crate, one
    /// watch stream per watcher (as etcd-client and python-etcd3 open them)
    /// over --conns connections; watch-latency's writer is then open loop
    /// and it also reports how long after each put's ack its event came.
    #[arg(long)]
    pub etcd_client: bool,
    /// Start Hark alone (no etcd) on a fresh data dir, fsync on.
    #[arg(long)]
    pub hark_alone: bool,
    /// Exit non-zero if Hark's event-after-ack p99 (watch-latency
    /// --etcd-client) is over MS, or any event was lost or duplicated (CI's
    /// guard on watch delivery).
    #[arg(long, value_name = "MS")]
    pub max_after_ack_p99: Option<f64>,
}

impl Options {
    /// The options of `args` (without the program name), or clap's error
    /// (which also carries `--help`'s text). Counts of zero are taken as one.
    pub fn parse(args: &[String]) -> Result<Options, clap::Error> {
        let mut o = <Options as clap::Parser>::try_parse_from(command_line("hark-loadtest", args))?;
        o.cluster = o.cluster.max(1);
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

/// `args` (without the program name) as clap takes them: the program first,
/// and a leading `help` word (`cargo xtask loadtest help`, as the other
/// xtask commands take it) as `--help`.
pub(crate) fn command_line<'a>(
    program: &'a str,
    args: &'a [String],
) -> impl Iterator<Item = &'a str> {
    let help = args.first().is_some_and(|a| a == "help");
    let rest = args.iter().skip(usize::from(help)).map(String::as_str);
    std::iter::once(program)
        .chain(help.then_some("--help"))
        .chain(rest)
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
pub(crate) async fn next_revision(endpoints: &[String]) -> Result<i64, String> {
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
/// The disk's own latency for what a replicated write waits on: `n`
/// 256-byte writes to one place in a file under `dir`, each followed by
/// `fdatasync`, timed one by one (µs, sorted). Measured in the run it sits
/// beside, on the filesystem of the servers' data dirs (the temp dir), so a
/// put's latency can be read as a multiple of one fsync.
pub(crate) fn fsync_latencies(dir: &std::path::Path, n: usize) -> Result<Vec<u64>, String> {
    use std::io::{Seek, SeekFrom, Write};
    let path = dir.join(format!("hark-loadtest-fsync-{}", std::process::id()));
    let mut file = std::fs::File::create(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let block = [0x5au8; 256];
    let mut lat = Vec::with_capacity(n);
    let result = (|| {
        for _ in 0..n {
            let started = Instant::now();
            file.seek(SeekFrom::Start(0))?;
            file.write_all(&block)?;
            file.sync_data()?;
            lat.push(started.elapsed().as_micros() as u64);
        }
        Ok::<_, std::io::Error>(())
    })();
    let _ = std::fs::remove_file(&path);
    result.map_err(|e| format!("timing fsync in {}: {e}", dir.display()))?;
    lat.sort_unstable();
    Ok(lat)
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fsync_timings_are_one_per_write_sorted_and_leave_no_file() {
        let dir = std::env::temp_dir().join(format!("fsync-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let lat = fsync_latencies(&dir, 20).unwrap();
        assert_eq!(lat.len(), 20);
        assert!(lat.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
        std::fs::remove_dir(&dir).unwrap();
        assert!(fsync_latencies(&dir.join("missing"), 1).is_err());
    }

    #[test]
    fn machine_figures_count_the_load_generators_own_work() {
        let cpu = ServerCpu::start(None);
        // Busy for a while on this thread: at least 50 ms of CPU.
        let started = Instant::now();
        let mut x = 1u64;
        while started.elapsed() < Duration::from_millis(300) {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
        let figures = cpu.machine("unit", 1);
        let value = |name: &str| figures.iter().find(|m| m.name == name).map(|m| m.value);
        let own = value("load generator CPU per unit").unwrap();
        let machine = value("machine CPU per unit").unwrap();
        let busy = value("machine cores busy").unwrap();
        assert!(own >= 50_000.0, "{figures:?}");
        assert!(machine >= own * 0.5, "{figures:?}");
        assert!(busy > 0.0 && busy <= 100.0, "{figures:?}");
        assert!(cpu.per("server", 1).is_none());
    }

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
            "--conns=0",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let o = Options::parse(&args).unwrap();
        assert_eq!(
            (o.scenario.as_str(), o.watchers, o.streams, o.conns),
            ("fanout", Some(50), 5, 1)
        );
        assert_eq!(o.endpoints.unwrap(), ["a", "b"]);
        assert!(Options::parse(&["fanout".to_string(), "--nope".to_string()]).is_err());
        assert!(Options::parse(&[]).is_err());
    }
}
