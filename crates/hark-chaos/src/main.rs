//! `hark-chaos` (run by `cargo xtask chaos`): a 3-member cluster of Hark, or
//! of etcd with the same flags, under seeded faults while clients write,
//! read and watch; then the recorded history is checked. A run that finds
//! an anomaly prints its seed and keeps its history and member logs.
//!
//! Layout: `cluster.rs` (member processes), `netns.rs` and `proxy.rs` (peer
//! links that can be cut: network namespaces, or TCP proxies), `faults.rs` (the schedule), `workload.rs` (clients and
//! watchers), `lock.rs` (the lock workload), `backup.rs` (snapshot saves,
//! restored and checked), `limits.rs` (members with
//! different limits, and requests near them), `history.rs` (what was
//! recorded), `check.rs`, `safety.rs` and `linearizable.rs` (the checkers), `report.rs` (what they found).
//! `behaviours.rs` (`--behaviours`) is not a fault run: it measures pre-vote,
//! check-quorum and the leader's hand-over on SIGTERM against their targets.

mod backup;
mod behaviours;
mod check;
mod cluster;
mod faults;
mod history;
mod kubernetes;
mod limits;
mod linearizable;
mod lock;
mod netns;
mod proxy;
mod report;
mod safety;
mod workload;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use clap::Parser;
use etcd_client::GetOptions;
use tokio::time::Instant;

use cluster::{Cluster, Flavor, Network, wait_for_leader};
use faults::Fault;
use history::History;
use workload::{Clock, PREFIX};

#[derive(Parser)]
#[command(
    name = "hark-chaos",
    about = "Fault injection and history checking for Hark (and etcd)"
)]
struct Args {
    /// Seeds the fault schedule and the clients' choices (default: the time).
    #[arg(long)]
    seed: Option<u64>,
    /// Seconds of workload and faults.
    #[arg(long, default_value_t = 30)]
    duration: u64,
    /// Faults to inject, comma separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "kill,kill-leader,kill-catching-up,power-loss,pause,partition,isolate-leader,isolate-leader-long,isolate-follower-long,one-way,member-replace"
    )]
    faults: Vec<Fault>,
    /// Members of the cluster: 3, or 1 (a single member: its kills and power
    /// losses are the whole cluster's).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u8).range(1..=3))]
    members: u8,
    /// How peer links run, and are cut: `netns` puts each member in its own
    /// network namespace and cuts with routes (needs root); `proxy` runs
    /// them through TCP proxies on the loopback. Default: `netns` as root,
    /// else `proxy`.
    #[arg(long, value_enum)]
    network: Option<Network>,
    /// Workloads, comma separated. The watchers always run: every revision
    /// is seen through them. `register`: puts, reads both ways, CAS and CAS
    /// deletes; `lease`: grant, put under a lease, revoke or expire;
    /// `kubernetes`: paginated lists and the compaction loop; `lock`:
    /// clientv3-style mutex sessions, checked for two holders at once;
    /// `near-limits`: txns and puts that one member's limits take and
    /// another's refuse (every member runs with its own limits); `backup`:
    /// `snapshot save` from a random member every 2-4 s (and several times a
    /// second from a member just restarted or healed), each restored and
    /// compared with the log at its revision.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "register,lease,kubernetes,lock,near-limits,backup"
    )]
    workload: Vec<Workload>,
    /// Register clients (puts, linearizable and serializable reads, CAS).
    #[arg(long, default_value_t = 6)]
    clients: usize,
    /// Lease clients (grant, put under the lease, keep alive and revoke, or
    /// let expire).
    #[arg(long, default_value_t = 2)]
    lease_clients: usize,
    /// Lock clients (a session each round: lease, key, wait for the older
    /// keys to go, hold, release).
    #[arg(long, default_value_t = 3)]
    lock_clients: usize,
    /// Kubernetes-style list clients (paginated lists at one revision).
    #[arg(long, default_value_t = 1)]
    list_clients: usize,
    /// Kubernetes' compaction loop every this many seconds (0: none):
    /// compacts to the revision seen one interval earlier.
    #[arg(long, default_value_t = 10)]
    compact_every: u64,
    /// The `hark` binary (default: beside this one).
    #[arg(long)]
    hark: Option<PathBuf>,
    /// Also run etcd (this binary, 3.5.1) with the same seed and flags.
    #[arg(long)]
    compare_etcd: Option<PathBuf>,
    /// Run only etcd (no Hark): to check the checkers against etcd.
    #[arg(long)]
    etcd_only: bool,
    /// `--snapshot-count` of every member: small, so that restarted members
    /// also catch up from snapshots.
    #[arg(long, default_value_t = 300)]
    snapshot_count: u64,
    /// Only check a history a run kept (its `history.json`), then exit.
    #[arg(long)]
    check: Option<PathBuf>,
    /// Where runs keep their data dirs, logs and histories.
    #[arg(long, default_value = "target/chaos")]
    out: PathBuf,
    /// Instead of a fault run: the consensus behaviours etcd users rely on
    /// (pre-vote, check-quorum, leader hand-over on SIGTERM; see
    /// `behaviours.rs`), each member in its own network namespace (needs
    /// root). Fails when Hark misses a target; etcd's figures beside.
    #[arg(long)]
    behaviours: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Workload {
    Register,
    Lease,
    Kubernetes,
    Lock,
    NearLimits,
    Backup,
}

impl Args {
    /// How many clients of a workload run (none when it is not chosen).
    fn count(&self, workload: Workload, clients: usize) -> usize {
        if self.workload.contains(&workload) {
            clients
        } else {
            0
        }
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    if let Some(path) = &args.check {
        let history: History = match std::fs::read(path)
            .map_err(|e| e.to_string())
            .and_then(|b| serde_json::from_slice(&b).map_err(|e| e.to_string()))
        {
            Ok(h) => h,
            Err(e) => {
                eprintln!("cannot read {}: {e}", path.display());
                return ExitCode::from(EXIT_RUN_FAILED);
            }
        };
        return if report(&history) {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(EXIT_ANOMALY)
        };
    }
    let seed = args.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_millis() as u64)
    });
    let mut flavors = Vec::new();
    if !args.etcd_only {
        let hark = args.hark.clone().unwrap_or_else(|| {
            std::env::current_exe()
                .expect("the running binary's path")
                .with_file_name("hark")
        });
        flavors.push(Flavor::Hark(hark));
    }
    if let Some(etcd) = &args.compare_etcd {
        flavors.push(Flavor::Etcd(etcd.clone()));
    }
    if flavors.is_empty() {
        eprintln!("nothing to run: --etcd-only needs --compare-etcd");
        return ExitCode::from(EXIT_RUN_FAILED);
    }
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    if args.behaviours {
        return runtime.block_on(behaviours(&args, flavors));
    }
    let (mut anomalies, mut run_failed) = (false, false);
    for flavor in flavors {
        let name = flavor.name();
        let dir = args.out.join(format!("{name}-{seed}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("the run's directory");
        eprintln!(
            "== {name}: seed {seed}, {} s, faults {:?}, workloads {:?}",
            args.duration, args.faults, args.workload
        );
        let history = match runtime.block_on(run(&args, flavor, seed, &dir)) {
            Ok(h) => h,
            Err(e) => {
                eprintln!(
                    "{name}: the run failed: {e} (seed {seed}, logs in {})",
                    dir.display()
                );
                run_failed = true;
                continue;
            }
        };
        let path = dir.join("history.json");
        std::fs::write(&path, serde_json::to_vec(&history).expect("JSON"))
            .expect("history written");
        if report(&history) {
            let _ = std::fs::remove_dir_all(dir.join("data"));
            let _ = std::fs::remove_dir_all(dir.join("backups"));
        } else {
            anomalies = true;
            eprintln!(
                "{name}: replay with --seed {seed}; history and logs in {}",
                dir.display()
            );
        }
    }
    if run_failed {
        ExitCode::from(EXIT_RUN_FAILED)
    } else if anomalies {
        ExitCode::from(EXIT_ANOMALY)
    } else {
        ExitCode::SUCCESS
    }
}

/// `--behaviours`: each server's findings, then whether Hark met every
/// target (etcd's are printed, not judged).
async fn behaviours(args: &Args, flavors: Vec<Flavor>) -> ExitCode {
    let mut missed = false;
    for flavor in flavors {
        let name = flavor.name();
        let dir = args.out.join(format!("behaviours-{name}"));
        eprintln!("== {name}: consensus behaviours");
        match behaviours::run_all(&flavor, &dir).await {
            Ok(findings) => {
                for f in &findings {
                    let verdict = match (&flavor, f.met) {
                        (_, true) => "met",
                        (Flavor::Hark(_), false) => "MISSED",
                        (Flavor::Etcd(_), false) => "not met",
                    };
                    eprintln!(
                        "{name}: {}: {} (target {}): {verdict}",
                        f.behaviour, f.measured, f.target
                    );
                    missed |= matches!(flavor, Flavor::Hark(_)) && !f.met;
                }
            }
            Err(e) => {
                eprintln!(
                    "{name}: the behaviours run failed: {e} (logs in {})",
                    dir.display()
                );
                return ExitCode::from(EXIT_RUN_FAILED);
            }
        }
    }
    if missed {
        ExitCode::from(EXIT_ANOMALY)
    } else {
        ExitCode::SUCCESS
    }
}

/// Checks `history` and prints what was checked and found; true when
/// nothing was.
fn report(history: &History) -> bool {
    let name = &history.flavor;
    let report = check::check(history);
    for fact in &report.facts {
        eprintln!("{name}: {fact}");
    }
    for a in &report.anomalies {
        eprintln!("{name}: ANOMALY: {a}");
    }
    let mut kinds = std::collections::BTreeMap::<&str, usize>::new();
    for f in history.faults.iter().filter_map(|f| f.fault.as_deref()) {
        *kinds.entry(f).or_default() += 1;
    }
    let refused = history
        .faults
        .iter()
        .filter(|f| f.what.starts_with("replacing"))
        .count();
    eprintln!(
        "{name}: {} faults injected ({}); {refused} member replacements refused",
        kinds.values().sum::<usize>(),
        kinds
            .iter()
            .map(|(k, n)| format!("{k}: {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if report.anomalies.is_empty() {
        eprintln!("{name}: no anomaly");
    } else {
        eprintln!("{name}: {} anomalies", report.anomalies.len());
    }
    report.anomalies.is_empty()
}

/// Exit codes: anomalies found (a mutation run expects this one), or the
/// run itself failed (a member never came up, no leader after the faults).
pub const EXIT_ANOMALY: u8 = 1;
pub const EXIT_RUN_FAILED: u8 = 2;

async fn run(
    args: &Args,
    flavor: Flavor,
    seed: u64,
    dir: &std::path::Path,
) -> Result<History, String> {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let network = args
        .network
        .unwrap_or(if root { Network::Netns } else { Network::Proxy });
    eprintln!("  peer links: {network:?}");
    let mut cluster = Cluster::start(
        flavor.clone(),
        dir,
        args.members.into(),
        args.snapshot_count,
        network,
    )?;
    wait_for_leader(&cluster, Duration::from_secs(30)).await?;
    let endpoints = cluster.endpoints();
    let clock = Clock(Instant::now());
    let until = clock.0 + Duration::from_secs(args.duration);
    let drain_to = Arc::new(AtomicI64::new(0));

    // A watcher on each member, so each member's sequence of revisions is
    // seen; every other one asks for prev_kv. One more, on the first member,
    // filters deletes out.
    let watchers: Vec<_> = endpoints
        .iter()
        .chain(endpoints.first())
        .enumerate()
        .map(|(i, ep)| {
            tokio::spawn(workload::watcher(
                i,
                ep.clone(),
                i % 2 == 0,
                i == endpoints.len(),
                drain_to.clone(),
                clock,
                until + Duration::from_secs(60),
            ))
        })
        .collect();
    let ops = Arc::new(Mutex::new(Vec::new()));
    let clients: Vec<_> = (0..args.count(Workload::Register, args.clients))
        .map(|c| {
            tokio::spawn(workload::register_client(
                c,
                endpoints.clone(),
                seed,
                clock,
                until,
                ops.clone(),
            ))
        })
        .collect();

    let leases = Arc::new(Mutex::new(Vec::new()));
    let lease_clients: Vec<_> = (0..args.count(Workload::Lease, args.lease_clients))
        .map(|c| {
            tokio::spawn(workload::lease_client(
                c,
                endpoints.clone(),
                seed,
                clock,
                until,
                leases.clone(),
            ))
        })
        .collect();

    let locks = Arc::new(Mutex::new(Vec::new()));
    let lock_clients: Vec<_> = (0..args.count(Workload::Lock, args.lock_clients))
        .map(|c| {
            tokio::spawn(lock::lock_client(
                c,
                endpoints.clone(),
                seed,
                clock,
                until,
                locks.clone(),
                leases.clone(),
            ))
        })
        .collect();

    let limit_records = Arc::new(Mutex::new(Vec::new()));
    let near_limits = args.workload.contains(&Workload::NearLimits).then(|| {
        tokio::spawn(limits::near_limits_client(
            0,
            endpoints.clone(),
            seed,
            until,
            limit_records.clone(),
        ))
    });

    let backups = Arc::new(Mutex::new(Vec::new()));
    let catching_up = faults::CatchingUp::default();
    let backup_client = args.workload.contains(&Workload::Backup).then(|| {
        tokio::spawn(backup::backup_client(
            endpoints.clone(),
            seed,
            clock,
            until,
            dir.join("backups"),
            backups.clone(),
            catching_up.clone(),
        ))
    });

    let lists = Arc::new(Mutex::new(Vec::new()));
    let compactions = Arc::new(Mutex::new(Vec::new()));
    let mut k8s_clients: Vec<_> = (0..args.count(Workload::Kubernetes, args.list_clients))
        .map(|c| {
            tokio::spawn(kubernetes::list_client(
                c,
                endpoints.clone(),
                clock,
                until,
                lists.clone(),
            ))
        })
        .collect();
    if args.compact_every > 0 && args.workload.contains(&Workload::Kubernetes) {
        k8s_clients.push(tokio::spawn(kubernetes::compactor(
            endpoints.clone(),
            Duration::from_secs(args.compact_every),
            clock,
            until,
            compactions.clone(),
        )));
    }

    let faults = faults::run(&mut cluster, &args.faults, seed, clock, until, catching_up).await;
    tokio::time::sleep_until(until).await;
    cluster.recover_all();
    for c in clients
        .into_iter()
        .chain(lease_clients)
        .chain(lock_clients)
        .chain(k8s_clients)
        .chain(near_limits)
        .chain(backup_client)
    {
        c.await.map_err(|e| format!("a client panicked: {e}"))?;
    }
    wait_for_leader(&cluster, Duration::from_secs(30)).await?;
    // Leases left to expire do so within a TTL of the last leader change
    // (a new leader gives every lease its full TTL).
    tokio::time::sleep(Duration::from_secs(workload::LEASE_TTL as u64 + 3)).await;

    // The last revision, read linearizably; every watcher drains to it and
    // every member reaches it.
    let last = final_revision(&endpoints).await?;
    drain_to.store(last.max(1), Ordering::SeqCst);
    let mut watches = Vec::new();
    for w in watchers {
        watches.push(w.await.map_err(|e| format!("a watcher panicked: {e}"))?);
    }
    let mut final_reads = Vec::new();
    for ep in &endpoints {
        final_reads.push(final_state(ep, last).await);
    }
    let mut final_hashes = Vec::new();
    for ep in &endpoints {
        final_hashes.push(limits::final_hash(ep, last).await);
    }
    cluster.stop();
    let limits = std::mem::take(&mut *limit_records.lock().unwrap());
    let backups = std::mem::take(&mut *backups.lock().unwrap());
    let ops = std::mem::take(&mut *ops.lock().unwrap());
    let leases = std::mem::take(&mut *leases.lock().unwrap());
    let lists = std::mem::take(&mut *lists.lock().unwrap());
    let locks = std::mem::take(&mut *locks.lock().unwrap());
    let compactions = std::mem::take(&mut *compactions.lock().unwrap());
    Ok(History {
        flavor: flavor.name().into(),
        seed,
        ops,
        watches,
        faults,
        leases,
        lists,
        locks,
        limits,
        backups,
        final_hashes,
        compactions,
        final_reads,
    })
}

async fn final_revision(endpoints: &[String]) -> Result<i64, String> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        for ep in endpoints {
            if let Some(mut c) = workload::connect(ep).await
                && let Ok(Ok(r)) = tokio::time::timeout(
                    workload::REQUEST_TIMEOUT,
                    c.get(
                        PREFIX,
                        Some(GetOptions::new().with_prefix().with_count_only()),
                    ),
                )
                .await
            {
                return Ok(r.header().map_or(0, |h| h.revision()));
            }
        }
        if Instant::now() >= deadline {
            return Err("no member answered a linearizable read after the run".into());
        }
    }
}

/// A member's whole prefix, served from its own state once it applied
/// `last`. A member that does not get there in time is recorded as it was
/// last seen (revision 0 if it never answered): the checkers report it.
async fn final_state(endpoint: &str, last: i64) -> history::FinalRead {
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut read = history::FinalRead {
        endpoint: endpoint.to_string(),
        ..Default::default()
    };
    loop {
        if let Some(mut c) = workload::connect(endpoint).await {
            let options = GetOptions::new().with_prefix().with_serializable();
            if let Ok(Ok(r)) =
                tokio::time::timeout(workload::REQUEST_TIMEOUT, c.get(PREFIX, Some(options))).await
            {
                read.revision = r.header().map_or(0, |h| h.revision());
                read.kvs = r
                    .kvs()
                    .iter()
                    .map(|kv| {
                        (
                            String::from_utf8_lossy(kv.key()).into_owned(),
                            String::from_utf8_lossy(kv.value()).into_owned(),
                        )
                    })
                    .collect();
            }
        }
        if read.revision >= last || Instant::now() >= deadline {
            return read;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
