//! `hark-loadtest scale` (`cargo xtask loadtest scale`): one member filled
//! to millions of Kubernetes-shaped keys, measured at each size it passes
//! (docs/benchmarks.md, "Past etcd's ceiling").
//!
//! The fill writes transactions of up to 64 operations from several
//! clients: new keys `/registry/<resource>/<namespace>/<name>` with ~2 KiB
//! values, and a share of updates and deletes of earlier keys, so the store
//! has history; every minute it compacts to the revision of a minute
//! before, as the Kubernetes API server does every five. At each
//! checkpoint (a number of live keys) the fill stops and the member is
//! measured: memory, put latency under a fixed load, point and 1,000-key
//! range reads, a full-prefix count, compaction, defragmentation with the
//! write stall beside it, snapshot throughput, start-up after SIGKILL, and
//! a new member joining and catching up. Then the fill goes on.
//!
//! With `--compare-etcd` etcd runs first, filled the same way until its
//! backend reaches most of its quota (etcd's suggested maximum, 8 GiB, by
//! default); the key count it reached becomes one of Hark's checkpoints, so
//! both are measured at the largest size both hold.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use hark_client::{Client, ConnectOptions, Op, Txn, pb};

use crate::harness::{command_line, current_revision, pct_ms};
use crate::servers::{Kind, rss_bytes, status_bytes};

/// Operations per fill transaction (etcd's `--max-txn-ops` default is 128).
const OPS_PER_TXN: usize = 64;
/// The fill's updates keep this many keys clear of the delete cursor, so no
/// update in one transaction meets a delete of the same key in a concurrent
/// one (the cursor moves at most 64 keys per transaction, and each fill
/// client has one in flight).
const CLEAR_OF_DELETES: u64 = 4096;
/// Kubernetes' resources, one per key in turn.
const RESOURCES: [&str; 8] = [
    "pods",
    "configmaps",
    "secrets",
    "events",
    "leases",
    "services",
    "endpointslices",
    "replicasets",
];
const NAMESPACES: u64 = 1000;

#[derive(clap::Parser, Debug)]
#[command(
    name = "hark-loadtest scale",
    about = "Fill one member to millions of Kubernetes-shaped keys and measure it at each size \
             (memory, start-up after SIGKILL, put/get/range latency, count, compaction, defrag \
             and its write stall, snapshot, a new member's catch-up); with --compare-etcd, etcd \
             first, filled until its quota, then Hark. Progress on stderr; the table on stdout."
)]
struct ScaleOptions {
    /// Live keys to fill to.
    #[arg(long, default_value_t = 10_000_000, value_name = "N")]
    keys: u64,
    /// Live key counts to measure at [default: 10,000 (the near-empty
    /// baseline), then 10%, 20%, 50% and 100% of --keys].
    #[arg(long, value_delimiter = ',', value_name = "N[,N]")]
    checkpoints: Option<Vec<u64>>,
    /// Bytes per value.
    #[arg(long, default_value_t = 2048, value_name = "N")]
    value_size: usize,
    /// Per mille of fill operations that update an earlier key.
    #[arg(long, default_value_t = 100, value_name = "N")]
    updates_per_mille: u64,
    /// Per mille of fill operations that delete an earlier key.
    #[arg(long, default_value_t = 20, value_name = "N")]
    deletes_per_mille: u64,
    /// Clients filling at once, each with its own connection.
    #[arg(long, default_value_t = 8, value_name = "N")]
    fill_clients: usize,
    /// The hark binary [default: $HARK_BIN].
    #[arg(long, value_name = "PATH")]
    hark: Option<String>,
    /// Also fill and measure the etcd binary at PATH, first.
    #[arg(long, value_name = "PATH")]
    compare_etcd: Option<String>,
    /// etcd's --quota-backend-bytes; its fill stops at 85% of it.
    #[arg(long, default_value_t = 8 << 30, value_name = "BYTES")]
    etcd_quota: u64,
    /// Hark's --quota-backend-bytes (room for the largest checkpoint and
    /// the LSM's space while it compacts).
    #[arg(long, default_value_t = 64 << 30, value_name = "BYTES")]
    hark_quota: u64,
    /// Where the members' data dirs go [default: the temp dir]; needs room
    /// for the store twice over (a joining member copies it).
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
    /// Puts per second of the fixed load (put latency, defrag's stall).
    #[arg(long, default_value_t = 200, value_name = "N")]
    rate: u64,
    /// Seconds of the fixed put load.
    #[arg(long, default_value_t = 10, value_name = "S")]
    seconds: u64,
    /// Point gets timed per checkpoint (ranges: a tenth as many).
    #[arg(long, default_value_t = 2000, value_name = "N")]
    reads: usize,
    /// Skip the new member's join (it copies the whole store).
    #[arg(long)]
    no_join: bool,
    /// Time the new member's join only at checkpoints of at most N live
    /// keys: a member catches up from a snapshot in etcd's format, which
    /// holds ~2 KiB values one to a 4 KiB page, and the join holds that
    /// file on both members and the store twice on the new one.
    #[arg(long, value_name = "N")]
    join_up_to: Option<u64>,
    /// Time `snapshot save` only at checkpoints of at most N live keys: the
    /// server writes the snapshot (in etcd's format, about twice the store)
    /// to its disk before sending it.
    #[arg(long, value_name = "N")]
    snapshot_up_to: Option<u64>,
    /// Write each timed put of the fixed load at each size (when it was
    /// due, wall clock, and how long it took) to `DIR/puts-<live keys>.txt`,
    /// to line slow ones up with the member's logs.
    #[arg(long, value_name = "DIR")]
    put_trace: Option<PathBuf>,
    /// The members' --log-level (`info` shows each index checkpoint and
    /// compaction with its timings, to line slow puts up with).
    #[arg(long, default_value = "warn", value_name = "LEVEL")]
    member_log_level: String,
    /// Write the chart (RSS and put p99 against key count) as SVG to FILE.
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
    /// Machine-readable output (one JSON document).
    #[arg(long)]
    json: bool,
    /// Instead of a run: the table (and with --plot the chart) from earlier
    /// runs' progress output (their stderr), as NAME=FILE, NAME `hark` or
    /// `etcd`: NAME's figures at each size FILE measured; a later FILE's
    /// replace an earlier one's at the same size. For a run cut short, or
    /// one size measured again apart.
    #[arg(long, value_name = "NAME=FILE")]
    replot: Vec<String>,
}

pub fn main(args: &[String]) -> ExitCode {
    let o = match <ScaleOptions as clap::Parser>::try_parse_from(command_line("scale", args)) {
        Ok(o) => o,
        Err(e) => e.exit(),
    };
    let runtime = tokio::runtime::Runtime::new().expect("start the tokio runtime");
    match runtime.block_on(run(o)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("scale: {e}");
            ExitCode::FAILURE
        }
    }
}

/// One server's figures at each checkpoint, by live key count.
struct Report {
    name: &'static str,
    at: BTreeMap<u64, Vec<(&'static str, f64, &'static str)>>,
    /// Where the fill ended, when it ended short of the last checkpoint
    /// (etcd at its quota).
    stopped_at: Option<u64>,
}

impl Report {
    fn value(&self, keys: u64, name: &str) -> Option<f64> {
        self.at
            .get(&keys)?
            .iter()
            .find(|(n, _, _)| *n == name)
            .map(|(_, v, _)| *v)
    }
}

async fn run(o: ScaleOptions) -> Result<(), String> {
    if !o.replot.is_empty() {
        let reports = replot(&o.replot)?;
        print_reports(&reports, o.json);
        if let Some(path) = &o.plot {
            crate::scale_plot::write(path, &reports_for_plot(&reports))?;
            eprintln!("scale: chart written to {}", path.display());
        }
        return Ok(());
    }
    let hark = o
        .hark
        .clone()
        .or_else(|| std::env::var("HARK_BIN").ok())
        .ok_or("no hark binary: give --hark or set HARK_BIN")?;
    let mut checkpoints = o.checkpoints.clone().unwrap_or_else(|| {
        let k = o.keys;
        vec![10_000.min(k), k / 10, k / 5, k / 2, k]
    });
    checkpoints.retain(|&c| c > 0 && c <= o.keys);
    checkpoints.sort_unstable();
    checkpoints.dedup();
    if checkpoints.is_empty() {
        return Err("no checkpoint between 1 and --keys".into());
    }
    let parent = o.dir.clone().unwrap_or_else(std::env::temp_dir);
    let root = parent.join(format!("hark-scale-{}", std::process::id()));
    // The members' logs outlive the run (their data dirs do not): a member
    // that exits mid-run leaves its reason there.
    let logs = parent.join(format!("hark-scale-{}-logs", std::process::id()));
    private_dir(&logs)?;
    eprintln!("scale: member logs in {}", logs.display());
    let mut reports = Vec::new();
    if let Some(etcd) = &o.compare_etcd {
        let report = fill_and_measure(Kind::Etcd, etcd, &checkpoints, &o, &root, &logs).await;
        let _ = std::fs::remove_dir_all(&root);
        let report = report?;
        // The largest size both reach: etcd's last, measured at its quota.
        if let Some(&largest) = report.at.keys().next_back()
            && !checkpoints.contains(&largest)
        {
            checkpoints.push(largest);
            checkpoints.sort_unstable();
        }
        reports.push(report);
    }
    let report = fill_and_measure(Kind::Hark, &hark, &checkpoints, &o, &root, &logs).await;
    let _ = std::fs::remove_dir_all(&root);
    reports.insert(0, report?);
    print_reports(&reports, o.json);
    if let Some(path) = &o.plot {
        crate::scale_plot::write(path, &reports_for_plot(&reports))?;
        eprintln!("scale: chart written to {}", path.display());
    }
    Ok(())
}

/// One member started with etcd's flags, restartable on its data dir.
struct Member {
    kind: Kind,
    binary: String,
    name: String,
    data: PathBuf,
    /// Where its stderr goes, appended across restarts.
    log: PathBuf,
    client_url: String,
    peer_url: String,
    initial_cluster: String,
    existing: bool,
    quota: u64,
    log_level: String,
    child: Option<Child>,
}

impl Member {
    fn new(kind: Kind, binary: &str, name: &str, dir: &Path, logs: &Path, quota: u64) -> Member {
        let client_url = format!("http://127.0.0.1:{}", free_port());
        let peer_url = format!("http://127.0.0.1:{}", free_port());
        Member {
            kind,
            binary: binary.to_string(),
            name: name.to_string(),
            data: dir.join(name),
            log: logs.join(format!("{kind:?}-{name}.log").to_lowercase()),
            initial_cluster: format!("{name}={peer_url}"),
            client_url,
            peer_url,
            existing: false,
            quota,
            log_level: "warn".into(),
            child: None,
        }
    }

    fn spawn(&mut self) -> Result<(), String> {
        use std::os::unix::fs::OpenOptionsExt;
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(&self.log)
            .map_err(|e| format!("opening {}: {e}", self.log.display()))?;
        let child = Command::new(&self.binary)
            .arg(format!("--name={}", self.name))
            .arg(format!("--data-dir={}", self.data.display()))
            .arg(format!("--listen-client-urls={}", self.client_url))
            .arg(format!("--advertise-client-urls={}", self.client_url))
            .arg(format!("--listen-peer-urls={}", self.peer_url))
            .arg(format!("--initial-advertise-peer-urls={}", self.peer_url))
            .arg(format!("--initial-cluster={}", self.initial_cluster))
            .arg(format!(
                "--initial-cluster-state={}",
                if self.existing { "existing" } else { "new" }
            ))
            .arg(format!("--quota-backend-bytes={}", self.quota))
            .arg(format!("--log-level={}", self.log_level))
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|e| format!("starting {}: {e}", self.binary))?;
        self.child = Some(child);
        Ok(())
    }

    /// How it ended, if it has: for an error that may be its exit.
    fn exited(&mut self) -> Option<String> {
        let status = self.child.as_mut()?.try_wait().ok()??;
        Some(format!(
            "{} exited ({status}); its log: {}",
            self.name,
            self.log.display()
        ))
    }

    fn pid(&self) -> Result<u32, String> {
        self.child
            .as_ref()
            .map(Child::id)
            .ok_or_else(|| format!("{} is not running", self.name))
    }

    /// SIGKILL, as power loss would stop it, and reaped.
    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Waits until the member answers a serializable read, then a
    /// linearizable one; returns the time from `since` to each.
    async fn wait_serving(&self, since: Instant, limit: Duration) -> Result<(f64, f64), String> {
        wait_for_read(&self.client_url, true, since + limit).await?;
        let serving = since.elapsed().as_secs_f64();
        wait_for_read(&self.client_url, false, since + limit).await?;
        Ok((serving, since.elapsed().as_secs_f64()))
    }
}

impl Drop for Member {
    fn drop(&mut self) {
        self.kill();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or(0)
}

/// A client that tries once and fails fast: start-up is timed by polling.
async fn quick_client(url: &str) -> Result<Client, String> {
    Client::connect_with(
        [url],
        ConnectOptions {
            dial_timeout: Some(Duration::from_millis(500)),
            retry_for: Some(Duration::ZERO),
            ..Default::default()
        },
    )
    .await
    .map_err(|e| e.to_string())
}

async fn wait_for_read(url: &str, serializable: bool, deadline: Instant) -> Result<(), String> {
    loop {
        let attempt = async {
            let c = quick_client(url).await?;
            c.range(pb::RangeRequest {
                key: "/registry/".into(),
                limit: 1,
                serializable,
                ..Default::default()
            })
            .await
            .map(drop)
            .map_err(|e| e.to_string())
        };
        let last = match tokio::time::timeout(Duration::from_secs(2), attempt).await {
            Ok(Ok(())) => return Ok(()),
            Ok(Err(e)) => e,
            Err(_) => "timed out".to_string(),
        };
        if Instant::now() > deadline {
            return Err(format!("{url} did not serve a read: {last}"));
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The fill's key space: key `i` is put once, maybe updated, and deleted
/// once the delete cursor passes it.
struct Keys {
    /// Keys `0..created` were put.
    created: u64,
    /// Keys `0..deleted` were deleted.
    deleted: u64,
    rng: u64,
    updates_per_mille: u64,
    deletes_per_mille: u64,
}

fn mix(mut x: u64) -> u64 {
    // splitmix64: a fixed, well-spread sequence with no state to share.
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Key `i`, shaped as the Kubernetes API server stores objects; names are
/// spread so keys arrive in no particular order.
fn key_of(i: u64) -> String {
    let h = mix(i);
    let resource = RESOURCES[(i % RESOURCES.len() as u64) as usize];
    let namespace = (h >> 44) % NAMESPACES;
    format!("/registry/{resource}/ns-{namespace:03}/{resource}-{h:016x}")
}

fn resource_prefix_end(key: &str) -> Vec<u8> {
    // "/registry/<resource>/" and its prefix end.
    let cut = key[10..].find('/').map_or(key.len(), |i| 10 + i + 1);
    hark_client::prefix_end(&key.as_bytes()[..cut])
}

impl Keys {
    fn live(&self) -> u64 {
        self.created - self.deleted
    }

    fn random(&mut self) -> u64 {
        self.rng = mix(self.rng);
        self.rng
    }

    /// A live key at least `clear` keys past the delete cursor (clear of
    /// any delete in flight), if there is one.
    fn random_live(&mut self, clear: u64) -> Option<u64> {
        let low = self.deleted + clear;
        (self.created > low).then(|| low + self.random() % (self.created - low))
    }

    /// The next transaction's operations, stopping once `target` keys live.
    fn next_batch(&mut self, target: u64) -> Vec<(u64, bool)> {
        let mut ops = Vec::with_capacity(OPS_PER_TXN);
        while ops.len() < OPS_PER_TXN && self.live() < target {
            let r = self.random() % 1000;
            if r < self.deletes_per_mille && self.created > self.deleted + 2 * CLEAR_OF_DELETES {
                ops.push((self.deleted, true));
                self.deleted += 1;
            } else if r < self.deletes_per_mille + self.updates_per_mille
                && let Some(k) = self.random_live(CLEAR_OF_DELETES)
                && !ops.iter().any(|&(o, _)| o == k)
            {
                ops.push((k, false));
            } else {
                ops.push((self.created, false));
                self.created += 1;
            }
        }
        ops
    }
}

fn value_of(size: usize, i: u64) -> Bytes {
    // Not all one byte: a value compresses about as an object's would.
    let mut v = Vec::with_capacity(size);
    let mut x = i;
    while v.len() < size {
        x = mix(x);
        v.extend_from_slice(format!("{:016x}", x % 4096).as_bytes());
    }
    v.truncate(size);
    Bytes::from(v)
}

async fn fill_and_measure(
    kind: Kind,
    binary: &str,
    checkpoints: &[u64],
    o: &ScaleOptions,
    root: &Path,
    logs: &Path,
) -> Result<Report, String> {
    let name = match kind {
        Kind::Hark => "hark",
        Kind::Etcd => "etcd",
    };
    let dir = root.join(name);
    let _ = std::fs::remove_dir_all(&dir);
    private_dir(&dir)?;
    let quota = match kind {
        Kind::Hark => o.hark_quota,
        Kind::Etcd => o.etcd_quota,
    };
    let mut member = Member::new(kind, binary, "m0", &dir, logs, quota);
    member.log_level = o.member_log_level.clone();
    member.spawn()?;
    member
        .wait_serving(Instant::now(), Duration::from_secs(60))
        .await?;
    let rss_empty = rss_bytes(member.pid()?)? as f64;
    let keys = Arc::new(Mutex::new(Keys {
        created: 0,
        deleted: 0,
        rng: 0x5ca1e,
        updates_per_mille: o.updates_per_mille,
        deletes_per_mille: o.deletes_per_mille,
    }));
    let mut report = Report {
        name,
        at: BTreeMap::new(),
        stopped_at: None,
    };
    let stop_bytes = match kind {
        Kind::Etcd => Some(o.etcd_quota / 100 * 85),
        Kind::Hark => None,
    };
    for &target in checkpoints {
        eprintln!("== {name}: filling to {target} live keys");
        let reached = fill(&member.client_url, &keys, target, o, stop_bytes)
            .await
            .map_err(|e| with_exit(&mut member, e))?;
        if reached < target {
            eprintln!("== {name}: stopped at {reached} live keys, 85% of its quota");
            report.stopped_at = Some(reached);
        }
        eprintln!("== {name}: measuring at {reached} live keys");
        let figures = match measure(&mut member, &keys, reached, o, rss_empty).await {
            Ok(figures) => figures,
            Err(e) => return Err(with_exit(&mut member, e)),
        };
        for (n, v, u) in &figures {
            eprintln!("   {n} {v:.2} {u}");
        }
        report.at.insert(reached, figures);
        if reached < target {
            break;
        }
    }
    member.kill();
    Ok(report)
}

/// An error, with the member's exit when it has exited (the likelier cause).
fn with_exit(member: &mut Member, e: String) -> String {
    match member.exited() {
        Some(exit) => format!("{e} ({exit})"),
        None => e,
    }
}

fn private_dir(dir: &Path) -> Result<(), String> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| format!("creating {}: {e}", dir.display()))
}

/// Fills until `target` keys live (or, with `stop_bytes`, until the
/// backend is that large); returns the live keys reached.
async fn fill(
    url: &str,
    keys: &Arc<Mutex<Keys>>,
    target: u64,
    o: &ScaleOptions,
    stop_bytes: Option<u64>,
) -> Result<u64, String> {
    let stop = Arc::new(AtomicBool::new(false));
    let ops_done = Arc::new(AtomicU64::new(0));
    let mut workers = Vec::new();
    for _ in 0..o.fill_clients.max(1) {
        let c = Client::connect([url]).await.map_err(|e| e.to_string())?;
        let (keys, stop, ops_done) = (keys.clone(), stop.clone(), ops_done.clone());
        let size = o.value_size;
        workers.push(tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let ops = keys.lock().expect("key space").next_batch(target);
                if ops.is_empty() {
                    return Ok(());
                }
                let n = ops.len() as u64;
                let txn = Txn::new().and_then(ops.into_iter().map(|(k, delete)| {
                    if delete {
                        Op::delete(key_of(k))
                    } else {
                        Op::put(key_of(k), value_of(size, k))
                    }
                }));
                c.txn(txn).await.map_err(|e| format!("fill: {e}"))?;
                ops_done.fetch_add(n, Ordering::Relaxed);
            }
            Ok::<(), String>(())
        }));
    }
    // Progress, the minute-old compaction and the quota watch.
    let watcher = Client::connect([url]).await.map_err(|e| e.to_string())?;
    let started = Instant::now();
    let mut last_report = Instant::now();
    let mut last_ops = 0;
    let mut minute_ago: Option<(Instant, i64)> = None;
    while !workers.iter().all(|w| w.is_finished()) {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let status = watcher.status().await.map_err(|e| e.to_string())?;
        let revision = status.header.map_or(0, |h| h.revision);
        if let Some(limit) = stop_bytes
            && status.db_size as u64 >= limit
        {
            stop.store(true, Ordering::Relaxed);
        }
        match minute_ago {
            Some((at, rev)) if at.elapsed() >= Duration::from_secs(60) => {
                watcher
                    .compact(rev, false)
                    .await
                    .map_err(|e| format!("compacting: {e}"))?;
                minute_ago = Some((Instant::now(), revision));
            }
            None => minute_ago = Some((Instant::now(), revision)),
            _ => {}
        }
        if last_report.elapsed() >= Duration::from_secs(10) {
            let ops = ops_done.load(Ordering::Relaxed);
            let live = keys.lock().expect("key space").live();
            eprintln!(
                "   {:>6.0} s: {live} live keys, {:.0} ops/s, backend {:.2} GiB, revision {revision}",
                started.elapsed().as_secs_f64(),
                (ops - last_ops) as f64 / last_report.elapsed().as_secs_f64(),
                status.db_size as f64 / (1u64 << 30) as f64,
            );
            last_report = Instant::now();
            last_ops = ops;
        }
    }
    for w in workers {
        w.await.map_err(|e| e.to_string())??;
    }
    let live = keys.lock().expect("key space").live();
    Ok(live)
}

type Figures = Vec<(&'static str, f64, &'static str)>;

async fn measure(
    member: &mut Member,
    keys: &Arc<Mutex<Keys>>,
    live: u64,
    o: &ScaleOptions,
    rss_empty: f64,
) -> Result<Figures, String> {
    let url = member.client_url.clone();
    let c = Client::connect([&url]).await.map_err(|e| e.to_string())?;
    let mut out: Figures = vec![("live keys", live as f64, "keys")];
    let status = c.status().await.map_err(|e| e.to_string())?;
    out.push(("backend size", status.db_size as f64 / MIB, "MiB"));
    out.push((
        "data dir on disk",
        dir_bytes(&member.data) as f64 / MIB,
        "MiB",
    ));

    let (puts, _, trace) = paced_puts(&url, keys, o, o.seconds).await?;
    if let Some(dir) = &o.put_trace {
        let path = dir.join(format!("puts-{live}.txt"));
        std::fs::write(&path, trace.lines())
            .map_err(|e| format!("writing {}: {e}", path.display()))?;
    }
    out.push(("put p50", pct_ms(&puts, 0.50), "ms"));
    out.push(("put p99", pct_ms(&puts, 0.99), "ms"));

    let gets = reads(&url, keys, o.reads, false).await?;
    out.push(("get p50", pct_ms(&gets, 0.50), "ms"));
    out.push(("get p99", pct_ms(&gets, 0.99), "ms"));
    let ranges = reads(&url, keys, (o.reads / 10).max(1), true).await?;
    out.push(("range 1000 p50", pct_ms(&ranges, 0.50), "ms"));
    out.push(("range 1000 p99", pct_ms(&ranges, 0.99), "ms"));

    let t = Instant::now();
    let counted = c
        .range(pb::RangeRequest {
            key: "/registry/".into(),
            range_end: hark_client::prefix_end(b"/registry/").into(),
            count_only: true,
            ..Default::default()
        })
        .await
        .map_err(|e| e.to_string())?
        .count;
    out.push(("count all keys", t.elapsed().as_secs_f64() * 1e3, "ms"));
    if counted as u64 != live {
        return Err(format!("counted {counted} keys, {live} live"));
    }
    let pid = member.pid()?;
    out.push(("RSS", rss_bytes(pid)? as f64 / MIB, "MiB"));
    out.push(("peak RSS", status_bytes(pid, "VmHWM")? as f64 / MIB, "MiB"));

    let revision = current_revision(&c).await?;
    let t = Instant::now();
    c.compact(revision, true)
        .await
        .map_err(|e| format!("compacting: {e}"))?;
    out.push(("compaction", t.elapsed().as_secs_f64(), "s"));

    // Defragmentation beside the fixed load: the longest a put waited.
    let defrag_client = c.clone();
    let defrag = tokio::spawn(async move {
        let t = Instant::now();
        defrag_client
            .defragment()
            .await
            .map_err(|e| format!("defragmenting: {e}"))?;
        Ok::<f64, String>(t.elapsed().as_secs_f64())
    });
    let (during, _, _) = paced_puts_until(&url, keys, o, || defrag.is_finished()).await?;
    let defrag_s = defrag.await.map_err(|e| e.to_string())??;
    out.push(("defrag", defrag_s, "s"));
    out.push((
        "defrag write stall",
        during.last().copied().unwrap_or(0) as f64 / 1e3,
        "ms",
    ));

    if o.snapshot_up_to.is_none_or(|most| live <= most) {
        let t = Instant::now();
        let mut stream = c.snapshot().await.map_err(|e| e.to_string())?;
        let mut bytes = 0u64;
        while let Some(chunk) = stream.message().await.map_err(|e| e.to_string())? {
            bytes += chunk.blob.len() as u64;
        }
        let secs = t.elapsed().as_secs_f64();
        out.push(("snapshot size", bytes as f64 / MIB, "MiB"));
        out.push(("snapshot", bytes as f64 / MIB / secs.max(1e-9), "MiB/s"));
    }
    drop(c);

    member.kill();
    let t = Instant::now();
    member.spawn()?;
    let (serving, linearizable) = member.wait_serving(t, Duration::from_secs(600)).await?;
    out.push(("start-up to serving", serving, "s"));
    out.push(("start-up to linearizable read", linearizable, "s"));
    let rss = rss_bytes(member.pid()?)? as f64;
    out.push(("RSS after start", rss / MIB, "MiB"));
    out.push((
        "RSS per key after start",
        ((rss - rss_empty) / live as f64).max(0.0),
        "bytes",
    ));

    if !o.no_join && o.join_up_to.is_none_or(|most| live <= most) {
        out.push(("new member catch-up", join(member).await?, "s"));
    }
    Ok(out)
}

const MIB: f64 = (1u64 << 20) as f64;

fn dir_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => dir_bytes(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

/// Puts (updates of live keys) at `--rate` for `seconds`; their latencies
/// (µs, sorted).
async fn paced_puts(
    url: &str,
    keys: &Arc<Mutex<Keys>>,
    o: &ScaleOptions,
    seconds: u64,
) -> Result<(Vec<u64>, Duration, PutTrace), String> {
    let until = Instant::now() + Duration::from_secs(seconds);
    paced_puts_until(url, keys, o, move || Instant::now() >= until).await
}

/// Puts at `--rate` until `done()`; each put's latency from when it was due
/// (so a stalled server shows as a stall, not as fewer puts), sorted.
/// Longest one put of the fixed load is sent again after the server timed
/// it out or refused it as too many requests (etcd, while it
/// defragments): longer is a failure.
const MAX_PUT_STALL: Duration = Duration::from_secs(600);

async fn paced_puts_until(
    url: &str,
    keys: &Arc<Mutex<Keys>>,
    o: &ScaleOptions,
    done: impl Fn() -> bool,
) -> Result<(Vec<u64>, Duration, PutTrace), String> {
    let c = Client::connect([url]).await.map_err(|e| e.to_string())?;
    let interval = Duration::from_secs_f64(1.0 / o.rate.max(1) as f64);
    let start = Instant::now();
    let mut trace = PutTrace {
        started: std::time::SystemTime::now(),
        interval,
        puts: Vec::new(),
    };
    let mut tasks = tokio::task::JoinSet::new();
    let mut n = 0u32;
    while !done() {
        let due = start + interval * n;
        tokio::time::sleep_until(due.into()).await;
        n += 1;
        let Some(k) = keys.lock().expect("key space").random_live(0) else {
            return Err("no live key to update".into());
        };
        let (c, value) = (c.clone(), value_of(o.value_size, k ^ u64::from(n)));
        tasks.spawn(async move {
            // A put the server times out (etcd blocks writes while it
            // defragments) is sent again, as a client would: the wait until
            // one lands is the stall the client sees.
            while let Err(e) = c.put(key_of(k), value.clone()).await {
                let e = e.to_string();
                let transient = e.contains("timed out") || e.contains("too many requests");
                if !transient || due.elapsed() > MAX_PUT_STALL {
                    return Err(format!("put: {e}"));
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Ok::<(u32, u64), String>((n - 1, due.elapsed().as_micros() as u64))
        });
    }
    let mut lat = Vec::with_capacity(n as usize);
    while let Some(r) = tasks.join_next().await {
        let (i, took) = r.map_err(|e| e.to_string())??;
        lat.push(took);
        trace.puts.push((i, took));
    }
    lat.sort_unstable();
    trace.puts.sort_unstable();
    Ok((lat, start.elapsed(), trace))
}

/// The fixed load's puts one by one (`--put-trace`).
struct PutTrace {
    started: std::time::SystemTime,
    interval: Duration,
    /// Each put's number in the load and its latency (µs), in order.
    puts: Vec<(u32, u64)>,
}

impl PutTrace {
    /// One line per put: when it was due (seconds since the epoch) and
    /// its latency in ms.
    fn lines(&self) -> String {
        let start = self
            .started
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        self.puts
            .iter()
            .map(|&(i, took)| {
                let due = start + self.interval * i;
                format!("{:.6} {:.3}\n", due.as_secs_f64(), took as f64 / 1000.0)
            })
            .collect()
    }
}

/// Starts tried per timed range, on average, before [`reads`] gives up.
const RANGE_TRIES: usize = 50;

/// `n` linearizable reads from 8 tasks: point gets of live keys, or
/// (`ranges`) 1,000 keys from a live key on in its resource's prefix. Only
/// ranges that found 1,000 keys are timed: in a small store a random start
/// often has fewer after it, and a shorter answer is not the same read
/// (another start is picked, up to [`RANGE_TRIES`] per range timed).
async fn reads(
    url: &str,
    keys: &Arc<Mutex<Keys>>,
    n: usize,
    ranges: bool,
) -> Result<Vec<u64>, String> {
    let c = Client::connect([url]).await.map_err(|e| e.to_string())?;
    let next = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let (c, keys, next) = (c.clone(), keys.clone(), next.clone());
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::new();
            let mut short = 0;
            while next.fetch_add(1, Ordering::Relaxed) < n as u64 {
                let k = keys
                    .lock()
                    .expect("key space")
                    .random_live(0)
                    .ok_or("no live key to read")?;
                let key = key_of(k);
                let req = if ranges {
                    pb::RangeRequest {
                        range_end: resource_prefix_end(&key).into(),
                        key: key.clone().into(),
                        limit: 1000,
                        ..Default::default()
                    }
                } else {
                    pb::RangeRequest {
                        key: key.clone().into(),
                        ..Default::default()
                    }
                };
                let t = Instant::now();
                let r = c.range(req).await.map_err(|e| format!("read: {e}"))?;
                let took = t.elapsed().as_micros() as u64;
                if ranges && !r.more && !r.kvs.is_empty() && r.kvs.len() < 1000 {
                    // Fewer than 1,000 keys after this start: another one.
                    short += 1;
                    if short > RANGE_TRIES * n {
                        return Err("too few ranges of 1,000 keys in this store".into());
                    }
                    next.fetch_sub(1, Ordering::Relaxed);
                    continue;
                }
                lat.push(took);
                let complete = if ranges {
                    r.kvs.len() == 1000
                } else {
                    r.kvs.len() == 1
                };
                if !complete {
                    return Err(format!("{key}: {} keys read", r.kvs.len()));
                }
            }
            Ok::<Vec<u64>, String>(lat)
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.map_err(|e| e.to_string())??);
    }
    all.sort_unstable();
    Ok(all)
}

/// A new member added to `member`'s cluster and started on an empty data
/// dir: seconds from the add until it has applied the revision the
/// cluster was at. It is then removed and its data dir deleted.
async fn join(member: &Member) -> Result<f64, String> {
    let c = Client::connect([&member.client_url])
        .await
        .map_err(|e| e.to_string())?;
    let root = member.data.parent().ok_or("data dir without a parent")?;
    let logs = member.log.parent().ok_or("log without a directory")?;
    let mut joiner = Member::new(member.kind, &member.binary, "j1", root, logs, member.quota);
    joiner.log_level = member.log_level.clone();
    let _ = std::fs::remove_dir_all(&joiner.data);
    let revision = current_revision(&c).await?;
    let t = Instant::now();
    let added = c
        .member_add(vec![joiner.peer_url.clone()], false)
        .await
        .map_err(|e| format!("member add: {e}"))?;
    let id = added.member.map_or(0, |m| m.id);
    joiner.initial_cluster = added
        .members
        .iter()
        .map(|m| {
            let name = if m.id == id { "j1" } else { m.name.as_str() };
            format!(
                "{name}={}",
                m.peer_ur_ls.first().cloned().unwrap_or_default()
            )
        })
        .collect::<Vec<_>>()
        .join(",");
    joiner.existing = true;
    joiner.spawn()?;
    let deadline = Instant::now() + Duration::from_secs(3600);
    let caught_up = loop {
        let applied = async {
            let jc = quick_client(&joiner.client_url).await?;
            jc.status()
                .await
                .map_err(|e| e.to_string())
                .map(|s| s.header.map_or(0, |h| h.revision))
        };
        if let Ok(Ok(r)) = tokio::time::timeout(Duration::from_secs(2), applied).await
            && r >= revision
        {
            break t.elapsed().as_secs_f64();
        }
        if Instant::now() > deadline {
            return Err("the new member did not catch up within an hour".into());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    // etcd refuses to remove a member until the cluster has been healthy
    // for a few seconds ("unhealthy cluster"); an operator retries.
    let mut tries = 0;
    while let Err(e) = c.member_remove(id).await {
        tries += 1;
        if tries > 60 {
            return Err(format!("member remove: {e}"));
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    joiner.kill();
    let _ = std::fs::remove_dir_all(&joiner.data);
    Ok(caught_up)
}

fn print_reports(reports: &[Report], json: bool) {
    if json {
        let doc: serde_json::Map<String, serde_json::Value> = reports
            .iter()
            .map(|r| {
                let at: serde_json::Map<String, serde_json::Value> =
                    r.at.iter()
                        .map(|(keys, figures)| {
                            let f: serde_json::Map<String, serde_json::Value> = figures
                                .iter()
                                .map(|(n, v, u)| {
                                    (n.to_string(), serde_json::json!({"value": v, "unit": u}))
                                })
                                .collect();
                            (keys.to_string(), f.into())
                        })
                        .collect();
                (r.name.to_string(), at.into())
            })
            .collect();
        println!("{}", serde_json::Value::Object(doc));
        return;
    }
    for r in reports {
        println!("\n{} (live keys across)", r.name);
        let sizes: Vec<u64> = r.at.keys().copied().collect();
        print!("  {:<32}", "metric");
        for s in &sizes {
            print!(" {s:>12}");
        }
        println!();
        let Some(first) = r.at.values().next() else {
            continue;
        };
        for (name, _, unit) in first {
            print!("  {:<32}", format!("{name} ({unit})"));
            for s in &sizes {
                match r.value(*s, name) {
                    Some(v) => print!(" {v:>12.2}"),
                    None => print!(" {:>12}", "-"),
                }
            }
            println!();
        }
        if let Some(at) = r.stopped_at {
            println!("  (fill stopped at {at} live keys: 85% of the quota)");
        }
    }
    // Both at the largest key count both reached.
    if let [hark, etcd] = reports {
        let common = hark.at.keys().rfind(|k| etcd.at.contains_key(k));
        if let (Some(&k), Some(first)) = (common, hark.at.values().next()) {
            println!("\nat {k} live keys, the largest both hold");
            println!(
                "  {:<32} {:>12} {:>12} {:>8}",
                "metric", "hark", "etcd", "ratio"
            );
            for (name, _, unit) in first {
                if let (Some(h), Some(e)) = (hark.value(k, name), etcd.value(k, name)) {
                    let ratio = if e != 0.0 {
                        format!("{:.2}x", h / e)
                    } else {
                        "-".into()
                    };
                    println!(
                        "  {:<32} {h:>12.2} {e:>12.2} {ratio:>8}",
                        format!("{name} ({unit})")
                    );
                }
            }
        }
    }
}

/// The reports `--replot` rebuilds from progress output: Hark's, then
/// etcd's if any.
fn replot(sources: &[String]) -> Result<Vec<Report>, String> {
    let mut reports = vec![
        Report {
            name: "hark",
            at: BTreeMap::new(),
            stopped_at: None,
        },
        Report {
            name: "etcd",
            at: BTreeMap::new(),
            stopped_at: None,
        },
    ];
    for source in sources {
        let (name, file) = source
            .split_once('=')
            .ok_or_else(|| format!("--replot {source}: not NAME=FILE"))?;
        let report = reports
            .iter_mut()
            .find(|r| r.name == name)
            .ok_or_else(|| format!("--replot {source}: NAME is hark or etcd"))?;
        let text = std::fs::read_to_string(file).map_err(|e| format!("reading {file}: {e}"))?;
        parse_progress(&text, report);
    }
    reports.retain(|r| !r.at.is_empty());
    if reports.first().is_none_or(|r| r.name != "hark") {
        return Err("--replot: no figures of hark's".into());
    }
    Ok(reports)
}

/// Adds to `report` the figures its server's lines in `text` (progress
/// output) give: `== NAME: measuring at N live keys`, then one
/// `   figure VALUE UNIT` line each.
fn parse_progress(text: &str, report: &mut Report) {
    let leak = |s: &str| -> &'static str { Box::leak(s.to_string().into_boxed_str()) };
    let heading = format!("== {}: ", report.name);
    let mut at: Option<u64> = None;
    for line in text.lines() {
        if line.starts_with("== ") {
            at = None;
            let Some(rest) = line.strip_prefix(heading.as_str()) else {
                continue;
            };
            let keys = |s: &str| {
                s.split_whitespace()
                    .next()
                    .and_then(|n| n.parse::<u64>().ok())
            };
            if let Some(n) = rest.strip_prefix("measuring at ").and_then(keys) {
                report.at.insert(n, Vec::new());
                at = Some(n);
            } else if let Some(n) = rest.strip_prefix("stopped at ").and_then(keys) {
                report.stopped_at = Some(n);
            }
            continue;
        }
        let (Some(n), Some(figure)) = (at, line.strip_prefix("   ")) else {
            continue;
        };
        if figure.starts_with(' ') {
            continue; // fill progress
        }
        let mut words: Vec<&str> = figure.split_whitespace().collect();
        let (Some(unit), Some(value)) = (words.pop(), words.pop()) else {
            continue;
        };
        let Ok(value) = value.parse::<f64>() else {
            continue;
        };
        if let Some(figures) = report.at.get_mut(&n) {
            figures.push((leak(&words.join(" ")), value, leak(unit)));
        }
    }
}

fn reports_for_plot(reports: &[Report]) -> Vec<crate::scale_plot::Series> {
    let mut out = Vec::new();
    for r in reports {
        for (metric, panel) in [("RSS", 0), ("put p99", 1)] {
            out.push(crate::scale_plot::Series {
                label: format!("{} {metric}", r.name),
                panel,
                points: r
                    .at
                    .keys()
                    .filter_map(|&k| Some((k as f64, r.value(k, metric)?)))
                    .collect(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replot_reads_each_servers_figures_from_progress_output() {
        let text = "== etcd: measuring at 10 live keys\n   put p99 4.20 ms\n\
                    == hark: measuring at 10 live keys\n   put p99 2.50 ms\n   RSS per key after start 48.96 bytes\n\
                    == hark: filling to 20 live keys\n       10 s: 15 live keys, 3 ops/s\n\
                    == hark: measuring at 20 live keys\n   put p99 3.00 ms\n";
        let mut hark = Report {
            name: "hark",
            at: BTreeMap::new(),
            stopped_at: None,
        };
        parse_progress(text, &mut hark);
        assert_eq!(hark.at.keys().copied().collect::<Vec<_>>(), vec![10, 20]);
        assert_eq!(hark.value(10, "put p99"), Some(2.5));
        assert_eq!(hark.value(10, "RSS per key after start"), Some(48.96));
        assert_eq!(hark.value(20, "put p99"), Some(3.0));
        assert_eq!(hark.at[&20].len(), 1);
        let mut etcd = Report {
            name: "etcd",
            at: BTreeMap::new(),
            stopped_at: None,
        };
        parse_progress(text, &mut etcd);
        assert_eq!(etcd.value(10, "put p99"), Some(4.2));
        assert_eq!(etcd.at.len(), 1);
    }

    #[test]
    fn keys_look_like_kubernetes_objects_and_ranges_stay_in_their_resource() {
        let k = key_of(12345);
        let parts: Vec<&str> = k.split('/').collect();
        assert_eq!(parts.len(), 5, "{k}");
        assert_eq!(parts[1], "registry");
        assert!(RESOURCES.contains(&parts[2]), "{k}");
        assert!(parts[3].starts_with("ns-"), "{k}");
        let end = resource_prefix_end(&k);
        assert_eq!(
            end,
            hark_client::prefix_end(format!("/registry/{}/", parts[2]).as_bytes())
        );
        assert_ne!(key_of(1), key_of(2));
    }

    #[test]
    fn a_fill_reaches_its_target_with_updates_and_deletes_and_never_writes_a_key_twice() {
        let mut keys = Keys {
            created: 0,
            deleted: 0,
            rng: 7,
            updates_per_mille: 100,
            deletes_per_mille: 20,
        };
        let target = 4 * CLEAR_OF_DELETES;
        let (mut updates, mut deletes) = (0, 0);
        loop {
            let created_before = keys.created;
            let ops = keys.next_batch(target);
            if ops.is_empty() {
                break;
            }
            assert!(ops.len() <= OPS_PER_TXN);
            let mut seen: Vec<u64> = ops.iter().map(|&(k, _)| k).collect();
            seen.sort_unstable();
            seen.dedup();
            assert_eq!(seen.len(), ops.len(), "a key twice in one txn: {ops:?}");
            for &(k, delete) in &ops {
                if delete {
                    deletes += 1;
                } else if k < created_before {
                    assert!(k >= keys.deleted, "an update of deleted key {k}");
                    updates += 1;
                }
            }
        }
        assert_eq!(keys.live(), target);
        assert!(
            deletes > 0 && updates > 0,
            "{deletes} deletes, {updates} updates"
        );
    }
}
