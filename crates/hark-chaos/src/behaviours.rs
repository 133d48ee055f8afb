//! The consensus behaviours etcd users rely on (issue #58), tried on real
//! processes with each member in its own network namespace, on Hark and on
//! etcd alike (`hark-chaos --behaviours`, `cargo xtask behaviours`):
//!
//! - **pre-vote**: a follower cut off for ten election timeouts and healed
//!   causes no election on the healthy side (its term never moves);
//! - **check-quorum**: a leader cut off from both followers reports no
//!   leader within two election timeouts, and a `WithRequireLeader` request
//!   on it is then refused with etcd's "no leader" at once;
//! - **graceful stop**: SIGTERM on the leader hands the leadership over
//!   first: four writers through the followers (0.5 s deadlines) see no
//!   write acknowledged for at most 0.1 s, and the same through a rolling
//!   restart of all three members.
//!
//! Each finding is a measured figure with its target; Hark must meet every
//! target, etcd's figures are printed beside them.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

use crate::cluster::{Cluster, ELECTION_MS, Flavor, Network, status, wait_for_leader};

/// One behaviour, as measured on one server.
pub struct Finding {
    pub behaviour: &'static str,
    pub measured: String,
    pub target: String,
    pub met: bool,
}

fn election() -> Duration {
    Duration::from_millis(ELECTION_MS)
}

/// Runs every behaviour on a fresh cluster of `flavor` each, under `dir`.
pub async fn run_all(flavor: &Flavor, dir: &Path) -> Result<Vec<Finding>, String> {
    let mut findings = Vec::new();
    findings.push(follower_cut_off_and_healed(flavor, &dir.join("pre-vote")).await?);
    findings.extend(leader_cut_off(flavor, &dir.join("check-quorum")).await?);
    findings.extend(graceful_stops(flavor, &dir.join("sigterm")).await?);
    Ok(findings)
}

fn start(flavor: &Flavor, dir: &Path) -> Result<Cluster, String> {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    Cluster::start(flavor.clone(), dir, 3, 10_000, Network::Netns)
}

/// Pre-vote: member `F` cut off for ten election timeouts; the terms the
/// other two report, sampled every 20 ms until 3 s after the heal.
async fn follower_cut_off_and_healed(flavor: &Flavor, dir: &Path) -> Result<Finding, String> {
    let cluster = start(flavor, dir)?;
    let leader = wait_for_leader(&cluster, Duration::from_secs(30)).await?;
    let follower = (leader + 1) % 3;
    let healthy: Vec<usize> = (0..3).filter(|i| *i != follower).collect();
    let endpoints = cluster.endpoints();
    let sample = |samples: &mut Vec<(u64, u64)>| {
        let (endpoints, healthy) = (endpoints.clone(), healthy.clone());
        let mut taken = std::mem::take(samples);
        async move {
            for i in &healthy {
                if let Some(s) = status(&endpoints[*i]).await {
                    taken.push((s.leader, s.term));
                }
            }
            taken
        }
    };
    let mut samples = sample(&mut Vec::new()).await;
    let first_term = samples.iter().map(|s| s.1).max().unwrap_or(0);
    cluster.links.partition(&[follower], 3);
    let heal_at = Instant::now() + election() * 10;
    while Instant::now() < heal_at {
        samples = sample(&mut samples).await;
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    cluster.links.heal();
    let end = Instant::now() + Duration::from_secs(3);
    while Instant::now() < end {
        samples = sample(&mut samples).await;
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let last_term = samples.iter().map(|s| s.1).max().unwrap_or(0);
    let cut_term = status(&endpoints[follower]).await.map(|s| s.term);
    let elections = last_term.saturating_sub(first_term);
    Ok(Finding {
        behaviour: "follower cut off for 10 election timeouts, healed: elections",
        measured: format!(
            "{elections} (term {first_term} -> {last_term}; the cut-off member at {})",
            cut_term.map_or("?".into(), |t| t.to_string())
        ),
        target: "0".into(),
        met: elections == 0,
    })
}

/// Check-quorum: the leader cut off from both followers. How long until it
/// reports no leader, and how a `WithRequireLeader` put on it then fares.
async fn leader_cut_off(flavor: &Flavor, dir: &Path) -> Result<Vec<Finding>, String> {
    let cluster = start(flavor, dir)?;
    let leader = wait_for_leader(&cluster, Duration::from_secs(30)).await?;
    let endpoint = cluster.endpoints()[leader].clone();
    let cut_at = Instant::now();
    cluster.links.partition(&[leader], 3);
    let mut stepped_down = None;
    while cut_at.elapsed() < election() * 10 {
        if status(&endpoint).await.is_some_and(|s| s.leader == 0) {
            stepped_down = Some(cut_at.elapsed());
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let require_leader = etcd_client::ConnectOptions::new()
        .with_require_leader(true)
        .with_timeout(Duration::from_secs(5));
    let refused =
        match etcd_client::Client::connect([endpoint.as_str()], Some(require_leader)).await {
            Ok(mut c) => {
                let asked = Instant::now();
                let answer = c.put("behaviours/require-leader", "v", None).await;
                Some((asked.elapsed(), answer.err().map(|e| e.to_string())))
            }
            Err(e) => Some((Duration::ZERO, Some(format!("connect: {e}")))),
        };
    // Without WithRequireLeader: refused once the member's request timeout
    // (5 s and two election timeouts, etcd's) runs out, not left hanging.
    let plain = etcd_client::ConnectOptions::new().with_timeout(Duration::from_secs(30));
    let timed_out = match etcd_client::Client::connect([endpoint.as_str()], Some(plain)).await {
        Ok(mut c) => {
            let asked = Instant::now();
            let answer = c.put("behaviours/plain", "v", None).await;
            (asked.elapsed(), answer.err().map(|e| e.to_string()))
        }
        Err(e) => (Duration::ZERO, Some(format!("connect: {e}"))),
    };
    cluster.links.heal();
    let mut findings = vec![Finding {
        behaviour: "leader cut off from both followers: reports no leader after",
        measured: stepped_down.map_or("never (5 s)".into(), |d| format!("{} ms", d.as_millis())),
        target: format!("<= {} ms (2 election timeouts)", 2 * ELECTION_MS),
        met: stepped_down.is_some_and(|d| d <= election() * 2),
    }];
    let (took, error) = refused.unwrap_or((Duration::ZERO, None));
    let no_leader = error.as_deref().is_some_and(|e| e.contains("no leader"));
    findings.push(Finding {
        behaviour: "then a WithRequireLeader put on it",
        measured: format!(
            "{} after {} ms",
            error.unwrap_or_else(|| "succeeded".into()),
            took.as_millis()
        ),
        target: "\"etcdserver: no leader\" within 100 ms".into(),
        met: no_leader && took <= Duration::from_millis(100),
    });
    let request_timeout = Duration::from_secs(5) + election() * 2;
    findings.push(Finding {
        behaviour: "and a put without WithRequireLeader",
        measured: format!(
            "{} after {} ms",
            timed_out.1.clone().unwrap_or_else(|| "succeeded".into()),
            timed_out.0.as_millis()
        ),
        target: format!(
            "an error within the request timeout ({} ms) and a second",
            request_timeout.as_millis()
        ),
        met: timed_out.1.is_some() && timed_out.0 <= request_timeout + Duration::from_secs(1),
    });
    Ok(findings)
}

/// Writers, one per follower endpoint given, each putting with a 0.5 s
/// deadline until `stop`; every acknowledgement's time.
fn writers(
    endpoints: Vec<String>,
    stop: Arc<std::sync::atomic::AtomicBool>,
    acks: Arc<Mutex<Vec<Instant>>>,
) -> Vec<tokio::task::JoinHandle<()>> {
    endpoints
        .into_iter()
        .enumerate()
        .map(|(w, endpoint)| {
            let (stop, acks) = (stop.clone(), acks.clone());
            tokio::spawn(async move {
                let options = etcd_client::ConnectOptions::new()
                    .with_connect_timeout(Duration::from_millis(300))
                    .with_timeout(Duration::from_millis(500));
                let mut client = None;
                let mut i = 0u64;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    if client.is_none() {
                        client = etcd_client::Client::connect(
                            [endpoint.as_str()],
                            Some(options.clone()),
                        )
                        .await
                        .ok();
                        if client.is_none() {
                            tokio::time::sleep(Duration::from_millis(20)).await;
                            continue;
                        }
                    }
                    let c = client.as_mut().expect("connected above");
                    let put = c.put(format!("behaviours/w{w}"), i.to_string(), None);
                    if let Ok(Ok(_)) = tokio::time::timeout(Duration::from_millis(500), put).await {
                        acks.lock().expect("acks").push(Instant::now());
                    }
                    i += 1;
                }
            })
        })
        .collect()
}

/// The longest time between two acknowledgements in `from..to`.
fn longest_gap(acks: &[Instant], from: Instant, to: Instant) -> Duration {
    let mut times: Vec<Instant> = acks
        .iter()
        .copied()
        .filter(|t| *t >= from && *t <= to)
        .collect();
    times.sort();
    let mut edges = vec![from];
    edges.extend(times);
    edges.push(to);
    edges
        .windows(2)
        .map(|w| w[1] - w[0])
        .max()
        .unwrap_or_default()
}

/// Sends SIGTERM to member `i` and waits (up to 30 s) for it to exit.
fn terminate(cluster: &mut Cluster, i: usize) {
    cluster.terminate(i, Duration::from_secs(30));
}

/// SIGTERM on the leader, then a rolling restart of all three, under four
/// writers through the followers of the moment.
async fn graceful_stops(flavor: &Flavor, dir: &Path) -> Result<Vec<Finding>, String> {
    let mut cluster = start(flavor, dir)?;
    let leader = wait_for_leader(&cluster, Duration::from_secs(30)).await?;
    let endpoints = cluster.endpoints();
    let followers: Vec<String> = (0..3)
        .filter(|i| *i != leader)
        .flat_map(|i| [endpoints[i].clone(), endpoints[i].clone()])
        .collect();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let acks = Arc::new(Mutex::new(Vec::new()));
    let tasks = writers(followers, stop.clone(), acks.clone());
    tokio::time::sleep(Duration::from_secs(1)).await;
    let sent = Instant::now();
    terminate(&mut cluster, leader);
    tokio::time::sleep(Duration::from_secs(2)).await;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for t in tasks {
        let _ = t.await;
    }
    let gap = longest_gap(
        &acks.lock().expect("acks"),
        sent - Duration::from_millis(200),
        Instant::now(),
    );
    let acked = acks.lock().expect("acks").len();
    let mut findings = vec![Finding {
        behaviour: "SIGTERM on the leader, 4 writers via the followers: longest time without an ack",
        measured: format!("{} ms ({acked} writes acknowledged)", gap.as_millis()),
        target: "<= 100 ms".into(),
        met: gap <= Duration::from_millis(100) && acked > 0,
    }];
    cluster.restart(leader);
    wait_for_leader(&cluster, Duration::from_secs(30)).await?;

    // A rolling restart: each member in turn stopped with SIGTERM and
    // started again; two writers per running member meanwhile.
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let acks = Arc::new(Mutex::new(Vec::new()));
    let mut worst = Duration::ZERO;
    let started = Instant::now();
    for i in 0..3 {
        let others: Vec<String> = (0..3)
            .filter(|j| *j != i)
            .flat_map(|j| [endpoints[j].clone(), endpoints[j].clone()])
            .collect();
        let tasks = writers(others, stop.clone(), acks.clone());
        tokio::time::sleep(Duration::from_millis(700)).await;
        let sent = Instant::now();
        terminate(&mut cluster, i);
        tokio::time::sleep(Duration::from_millis(1500)).await;
        let gap = longest_gap(
            &acks.lock().expect("acks"),
            sent - Duration::from_millis(200),
            Instant::now(),
        );
        worst = worst.max(gap);
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        for t in tasks {
            let _ = t.await;
        }
        stop.store(false, std::sync::atomic::Ordering::Relaxed);
        cluster.restart(i);
        wait_for_leader(&cluster, Duration::from_secs(30)).await?;
    }
    let acked = acks.lock().expect("acks").len();
    findings.push(Finding {
        behaviour: "rolling restart with SIGTERM: longest time without an ack around each stop",
        measured: format!(
            "{} ms ({acked} writes acknowledged in {:.1} s)",
            worst.as_millis(),
            started.elapsed().as_secs_f64()
        ),
        target: "<= 100 ms".into(),
        met: worst <= Duration::from_millis(100) && acked > 0,
    });
    Ok(findings)
}
