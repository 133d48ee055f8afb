//! harkctl's cluster commands against three in-process members: `member
//! list`, `endpoint status|health --cluster` and `move-leader`, printed as
//! etcdctl 3.5 prints them for the same cluster (when `etcdctl-3.5` is on
//! PATH; `HARK_REQUIRE_ETCDCTL=1` makes it required).

use std::net::TcpListener;
use std::process::Command;
use std::time::{Duration, Instant};

use clap::Parser;

const HARKCTL: &str = env!("CARGO_BIN_EXE_harkctl");

/// A free port below Linux's ephemeral range (32768 and up). A port the
/// kernel picked with `bind(0)` and then released can be handed to an
/// outgoing connection (a member dialling a peer not up yet) before the
/// server that was meant to take it binds it; these ports never are.
/// Handed out in sequence from a per-process start, so one test's ports
/// differ from each other.
fn free_port() -> u16 {
    use std::sync::atomic::{AtomicU32, Ordering};
    const LOW: u32 = 10_000;
    const SPAN: u32 = 22_000;
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos())
        ^ std::process::id();
    let _ = NEXT.compare_exchange(0, seed % SPAN + 1, Ordering::Relaxed, Ordering::Relaxed);
    loop {
        let port = (LOW + NEXT.fetch_add(1, Ordering::Relaxed) % SPAN) as u16;
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}

/// (exit code, stdout, stderr)
fn run(bin: &str, endpoints: &str, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(bin)
        .arg(format!("--endpoints={endpoints}"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        // etcdctl's client also logs retries as JSON lines: compare the rest.
        String::from_utf8_lossy(&out.stderr)
            .lines()
            .filter(|l| !l.starts_with('{'))
            .collect::<Vec<_>>()
            .join("\n"),
    )
}

fn etcdctl() -> Option<String> {
    let found = std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join("etcdctl-3.5"))
        .find(|p| p.is_file());
    if found.is_none() {
        assert_ne!(
            std::env::var("HARK_REQUIRE_ETCDCTL").as_deref(),
            Ok("1"),
            "etcdctl-3.5 is not on PATH"
        );
        eprintln!("etcdctl-3.5 not on PATH: only harkctl's own checks run");
    }
    found.map(|p| p.to_string_lossy().into_owned())
}

/// Every member's view of the leader, once all three agree on one.
async fn agreed_leader(clients: &[String]) -> u64 {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let mut seen = Vec::new();
        for ep in clients {
            if let Ok(c) = hark_client::Client::connect([ep]).await
                && let Ok(s) = c.status().await
            {
                seen.push(s.leader);
            }
        }
        if seen.len() == clients.len() && seen[0] != 0 && seen.iter().all(|l| *l == seen[0]) {
            return seen[0];
        }
        assert!(Instant::now() < deadline, "no agreed leader: {seen:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn member_id(endpoint: &str) -> u64 {
    let c = hark_client::Client::connect([endpoint]).await.unwrap();
    c.status().await.unwrap().header.unwrap().member_id
}

#[test]
fn member_list_endpoints_of_the_cluster_and_move_leader() {
    let etcdctl = etcdctl();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let clients: Vec<String> = (0..3)
        .map(|_| format!("http://127.0.0.1:{}", free_port()))
        .collect();
    let peers: Vec<String> = (0..3)
        .map(|_| format!("http://127.0.0.1:{}", free_port()))
        .collect();
    let initial = (0..3)
        .map(|i| format!("m{i}={}", peers[i]))
        .collect::<Vec<_>>()
        .join(",");
    let servers: Vec<_> = (0..3)
        .map(|i| {
            let config = hark_server::Config::try_parse_from([
                "hark".to_string(),
                format!("--name=m{i}"),
                format!("--data-dir={}", dir.path().join(format!("m{i}")).display()),
                format!("--listen-client-urls={}", clients[i]),
                format!("--advertise-client-urls={}", clients[i]),
                format!("--listen-peer-urls={}", peers[i]),
                format!("--initial-advertise-peer-urls={}", peers[i]),
                format!("--initial-cluster={initial}"),
                "--initial-cluster-token=harkctl-test".into(),
                "--heartbeat-interval=50".into(),
                "--election-timeout=500".into(),
                "--unsafe-no-fsync".into(),
            ])
            .unwrap();
            rt.block_on(hark_server::start(&config)).unwrap()
        })
        .collect();
    let all = clients.join(",");
    let leader = rt.block_on(agreed_leader(&clients));
    let ids: Vec<u64> = clients.iter().map(|c| rt.block_on(member_id(c))).collect();

    // The member list: one line per member, as etcdctl prints it.
    let (code, listed, _) = run(HARKCTL, &all, &["member", "list"]);
    assert_eq!(code, 0);
    let mut want: Vec<String> = (0..3)
        .map(|i| {
            format!(
                "{:x}, started, m{i}, {}, {}, false",
                ids[i], peers[i], clients[i]
            )
        })
        .collect();
    let mut got: Vec<String> = listed.lines().map(String::from).collect();
    want.sort();
    got.sort();
    assert_eq!(got, want);
    if let Some(etcdctl) = &etcdctl {
        for format in ["simple", "table"] {
            let args = ["member", "list", "-w", format];
            assert_eq!(run(HARKCTL, &all, &args), run(etcdctl, &all, &args));
        }
    }

    // --cluster: the endpoints come from the member list, whichever was given.
    let (code, status, _) = run(HARKCTL, &clients[0], &["endpoint", "status", "--cluster"]);
    assert_eq!(code, 0, "{status}");
    let mut listed: Vec<&str> = status
        .lines()
        .map(|l| l.split(", ").next().unwrap())
        .collect();
    listed.sort();
    let mut sorted = clients.clone();
    sorted.sort();
    assert_eq!(listed, sorted);
    let leaders = status
        .lines()
        .filter(|l| l.contains(&format!(", {leader:x}, ")) && l.contains(", true, false, "))
        .count();
    assert_eq!(
        leaders, 1,
        "exactly one line says it is the leader:\n{status}"
    );
    let (code, health, _) = run(HARKCTL, &clients[1], &["endpoint", "health", "--cluster"]);
    assert_eq!(code, 0);
    assert_eq!(
        health
            .matches("is healthy: successfully committed proposal")
            .count(),
        3
    );

    // defrag --cluster: every member from the list, one endpoint given; its
    // lines are etcdctl's, and the log lines (stderr is no terminal) zap's.
    let out = Command::new(HARKCTL)
        .args([
            &format!("--endpoints={}", clients[2]),
            "defrag",
            "--cluster",
        ])
        .output()
        .unwrap();
    let (defragged, log) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{defragged}{log}");
    let mut members: Vec<String> = defragged.lines().map(String::from).collect();
    members.sort();
    let mut want: Vec<String> = clients
        .iter()
        .map(|c| format!("Finished defragmenting etcd member[{c}]"))
        .collect();
    want.sort();
    assert_eq!(members, want);
    let finished = log
        .lines()
        .filter(|l| l.starts_with('{') && l.contains(r#""msg":"finished defragmenting""#))
        .count();
    assert_eq!(finished, 3, "{log}");

    // move-leader: harkctl finds the leader among the endpoints and hands over.
    let target = *ids.iter().find(|id| **id != leader).unwrap();
    let (code, out, err) = run(HARKCTL, &all, &["move-leader", &format!("{target:x}")]);
    assert_eq!((code, err.as_str()), (0, ""), "{out}");
    assert_eq!(
        out,
        format!("Leadership transferred from {leader:x} to {target:x}\n")
    );
    assert_eq!(rt.block_on(agreed_leader(&clients)), target);

    // Only followers given: no leader among them.
    let followers: Vec<&str> = clients
        .iter()
        .zip(&ids)
        .filter(|(_, id)| **id != target)
        .map(|(c, _)| c.as_str())
        .collect();
    let followers = followers.join(",");
    let (code, out, err) = run(
        HARKCTL,
        &followers,
        &["move-leader", &format!("{leader:x}")],
    );
    assert_eq!(code, 128, "{out}");
    assert_eq!(
        err,
        format!(
            "Error: no leader endpoint given at [{}]",
            followers.replace(',', " ")
        )
    );
    if let Some(etcdctl) = &etcdctl {
        let args = ["move-leader", &format!("{leader:x}")];
        assert_eq!(run(etcdctl, &followers, &args), (code, out, err));
        // And back, by etcdctl, printed the same way.
        let (code, out, _) = run(etcdctl, &all, &args);
        assert_eq!(code, 0);
        assert_eq!(
            out,
            format!("Leadership transferred from {target:x} to {leader:x}\n")
        );
        assert_eq!(rt.block_on(agreed_leader(&clients)), leader);
    }
    for s in servers {
        rt.block_on(s.shutdown());
    }
}
