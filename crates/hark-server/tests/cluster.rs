//! Three `hark` processes started with etcd's cluster flags: membership as
//! etcdctl shows it, writes on any member, and the leader killed with SIGKILL
//! under writes spread over every member: a new leader soon, nothing
//! acknowledged lost, the killed member back and caught up; and etcd's
//! corruption checks finding a member whose data was altered.

mod common;

use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

use etcd_client::{Client, GetOptions};

use common::{
    assert_saw_every_write, clientv3_watch_events, etcdctl_watch_events, find_on_path, free_port,
    go_clientv3_watcher, logs, ready, spawn, spawn_printing, stop_cleanly,
};

const ELECTION_MS: u64 = 500;

/// One cluster at a time: three or four processes per test on a two-core
/// machine, and some assertions are about time (a new leader within 3x the
/// election timeout).
static ONE_CLUSTER_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

struct Member {
    name: String,
    client: String,
    args: Vec<String>,
    child: Child,
}

/// A failed assertion must not leave its cluster running (found: a
/// failed run's members still serving, and using the CPU, an hour later).
impl Drop for Member {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Three members started with default flags, each serving clients.
async fn start_cluster(cwd: &Path) -> Vec<Member> {
    let mut members = start_cluster_with(cwd, |_| Vec::new());
    for m in &mut members {
        ready(&m.client, &mut m.child).await;
    }
    members
}

/// Three members with etcd's flags, plus `env(i)` (HARK_* settings) for
/// member `i`.
fn start_cluster_with(
    cwd: &Path,
    env: impl Fn(usize) -> Vec<(&'static str, String)>,
) -> Vec<Member> {
    let ports: Vec<(u16, u16)> = (0..3).map(|_| (free_port(), free_port())).collect();
    let initial: Vec<String> = ports
        .iter()
        .enumerate()
        .map(|(i, (_, peer))| format!("m{i}=http://127.0.0.1:{peer}"))
        .collect();
    ports
        .iter()
        .enumerate()
        .map(|(i, (client, peer))| {
            start_member(
                cwd,
                &format!("m{i}"),
                *client,
                *peer,
                &initial.join(","),
                "new",
                &env(i),
            )
        })
        .collect()
}

/// Starts one member with etcd's cluster flags.
fn start_member(
    cwd: &Path,
    name: &str,
    client: u16,
    peer: u16,
    initial: &str,
    state: &str,
    env: &[(&str, String)],
) -> Member {
    let name = name.to_string();
    let args: Vec<String> = [
        "--name",
        &name,
        "--data-dir",
        &format!("{name}.hark"),
        "--listen-client-urls",
        &format!("http://127.0.0.1:{client}"),
        "--listen-peer-urls",
        &format!("http://127.0.0.1:{peer}"),
        "--initial-advertise-peer-urls",
        &format!("http://127.0.0.1:{peer}"),
        "--initial-cluster",
        initial,
        "--initial-cluster-state",
        state,
        "--initial-cluster-token",
        "process-test",
        "--heartbeat-interval",
        "50",
        "--election-timeout",
        &ELECTION_MS.to_string(),
    ]
    .map(String::from)
    .to_vec();
    Member {
        child: spawn(cwd, &args, env),
        name,
        client: format!("http://127.0.0.1:{client}"),
        args,
    }
}

/// The settings of a member whose kill is a power loss: its unsynced
/// writes die with it.
fn power_loss() -> Vec<(&'static str, String)> {
    vec![("HARK_SIMULATE_POWER_LOSS", "1".to_string())]
}

/// Three members, each run with [`power_loss`], serving clients.
async fn start_cluster_losing_power(cwd: &Path) -> Vec<Member> {
    let mut members = start_cluster_with(cwd, |_| power_loss());
    for m in &mut members {
        ready(&m.client, &mut m.child).await;
    }
    members
}

/// Runs etcdctl 3.5 against `endpoints`: (success, stdout + stderr).
fn etcdctl(etcdctl: &Path, endpoints: &str, args: &[&str]) -> (bool, String) {
    let out = std::process::Command::new(etcdctl)
        .arg("--endpoints")
        .arg(endpoints)
        .args(args)
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

/// etcdctl's member list line of member `name`, waiting (up to 20 s) until `want` holds.
fn member_line(
    etcdctl_bin: &Path,
    endpoints: &str,
    name_field: &str,
    want: impl Fn(&str) -> bool,
) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (ok, text) = etcdctl(etcdctl_bin, endpoints, &["member", "list"]);
        if ok
            && let Some(line) = text.lines().find(|l| l.contains(name_field))
            && want(line)
        {
            return line.to_string();
        }
        assert!(
            Instant::now() < deadline,
            "member list never matched:\n{text}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The leader's member id as `m`'s Status reports it (0: none).
async fn leader_seen_by(endpoint: &str) -> u64 {
    match Client::connect([endpoint], None).await {
        Ok(mut c) => c.status().await.map_or(0, |s| s.leader()),
        Err(_) => 0,
    }
}

async fn member_id_of(endpoint: &str) -> u64 {
    let mut c = Client::connect([endpoint], None).await.unwrap();
    c.status().await.unwrap().header().unwrap().member_id()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn three_processes_with_etcds_flags_survive_the_leaders_sigkill() {
    let _one = ONE_CLUSTER_AT_A_TIME.lock().await;
    sigkill_the_leader_under_writes(&[]).await;
}

/// The same with a snapshot count of 10, so snapshots are built and the log
/// purged all through the run. Whether the killed member then needs a
/// snapshot depends on timing: openraft 0.9 postpones purging entries that a
/// replication stream to the dead member still holds in flight. The snapshot
/// install itself is checked deterministically in hark-raft's
/// `a_member_behind_the_purged_log_gets_a_snapshot_and_continues_from_it`.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_killed_member_catches_up_with_a_small_snapshot_count() {
    let _one = ONE_CLUSTER_AT_A_TIME.lock().await;
    let logs = sigkill_the_leader_under_writes(&[("HARK_SNAPSHOT_COUNT", "10".to_string())]).await;
    assert!(logs.contains("built a snapshot"), "no snapshot was built");
    eprintln!(
        "the killed member caught up {}",
        if logs.contains("installed a snapshot from the leader") {
            "by snapshot"
        } else {
            "from the log"
        }
    );
}

/// Eight writers over all members, a watch on a follower, the leader killed
/// and restarted; returns the members' logs.
async fn sigkill_the_leader_under_writes(env: &[(&'static str, String)]) -> String {
    let cwd = tempfile::tempdir().unwrap();
    let mut members = start_cluster_with(cwd.path(), |_| env.to_vec());
    for m in &mut members {
        ready(&m.client, &mut m.child).await;
    }
    let endpoints: Vec<String> = members.iter().map(|m| m.client.clone()).collect();

    // Every member lists all three, with names and client URLs once published.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let mut c = Client::connect([&endpoints[0]], None).await.unwrap();
        let list = c.member_list().await.unwrap();
        let published = list
            .members()
            .iter()
            .filter(|m| !m.name().is_empty() && !m.client_urls().is_empty())
            .count();
        if list.members().len() == 3 && published == 3 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "members not published: {list:?}\n{}",
            logs(cwd.path())
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    if let Some(etcdctl) = find_on_path("etcdctl-3.5") {
        let out = std::process::Command::new(etcdctl)
            .args(["--endpoints", &endpoints.join(","), "member", "list"])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{text}");
        for m in &members {
            let line = text
                .lines()
                .find(|l| l.contains(&format!(", {}, ", m.name)))
                .unwrap_or_else(|| panic!("{} missing from:\n{text}", m.name));
            assert!(
                line.contains("started") && line.contains(&m.client) && line.ends_with("false"),
                "{line}"
            );
        }
    }

    // Eight writers spread over every member; the leader is killed midway.
    let mut leader = 0;
    for e in &endpoints {
        leader = leader_seen_by(e).await;
        if leader != 0 {
            break;
        }
    }
    assert_ne!(leader, 0, "no leader\n{}", logs(cwd.path()));
    let mut leader_index = None;
    for (i, e) in endpoints.iter().enumerate() {
        if member_id_of(e).await == leader {
            leader_index = Some(i);
        }
    }
    let leader_index = leader_index.unwrap();
    // A watch on a follower for the whole run, from before the first write.
    let watched = endpoints[(leader_index + 1) % 3].clone();
    let mut watch_client = Client::connect([&watched], None).await.unwrap();
    let mut stream = watch_client
        .watch("w", Some(etcd_client::WatchOptions::new().with_prefix()))
        .await
        .unwrap();
    // etcdctl (Go clientv3) watching through all three endpoints: when its
    // endpoint dies it reconnects to another and resumes.
    let etcdctl_bin = find_on_path("etcdctl-3.5");
    let etcdctl_watch = etcdctl_bin.clone().map(|bin| {
        spawn_printing(
            std::process::Command::new(bin)
                .args([
                    "--endpoints",
                    &endpoints.join(","),
                    "watch",
                    "--prefix",
                    "w",
                    "--rev",
                    "1",
                    "-w",
                    "json",
                ])
                .stderr(std::process::Stdio::null()),
        )
    });
    // The same through Go's clientv3 itself (a program of ours built with it).
    // The leader's endpoint first, which its first connection likely takes.
    let mut leader_first = endpoints.clone();
    leader_first.swap(0, leader_index);
    let go_watch = go_clientv3_watcher().map(|bin| {
        spawn_printing(
            std::process::Command::new(bin)
                .args([
                    "-endpoints",
                    &leader_first.join(","),
                    "-prefix",
                    "w",
                    "-rev",
                    "1",
                ])
                .stderr(std::process::Stdio::inherit()),
        )
    });
    let stop_at = Instant::now() + Duration::from_secs(6);
    let mut writers = Vec::new();
    for w in 0..8 {
        let endpoint = endpoints[w % 3].clone();
        writers.push(tokio::spawn(async move {
            let mut acked = Vec::new();
            let mut n = 0;
            while Instant::now() < stop_at {
                let key = format!("w{w}-{n}");
                if let Ok(Ok(mut c)) =
                    tokio::time::timeout(Duration::from_secs(2), Client::connect([&endpoint], None))
                        .await
                {
                    while Instant::now() < stop_at {
                        let key = format!("w{w}-{n}");
                        match c.put(key.clone(), "v", None).await {
                            Ok(r) => acked.push((key, r.header().unwrap().revision())),
                            Err(_) => break,
                        }
                        n += 1;
                    }
                }
                let _ = key;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            acked
        }));
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    members[leader_index].child.kill().unwrap();
    members[leader_index].child.wait().unwrap();
    let killed_at = Instant::now();
    let survivors: Vec<usize> = (0..3).filter(|i| *i != leader_index).collect();
    let new_leader = loop {
        let seen = leader_seen_by(&endpoints[survivors[0]]).await;
        if seen != 0 && seen != leader {
            break seen;
        }
        assert!(
            killed_at.elapsed() < Duration::from_secs(10),
            "no new leader\n{}",
            logs(cwd.path())
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let took = killed_at.elapsed();
    eprintln!("new leader after {took:?}");
    // Usually 2.3-2.5 election timeouts (see the README); a split vote adds
    // a round now and then, so the hard bound here is 5. Not with a tiny
    // snapshot count: every member rebuilds a snapshot every ten entries on
    // the same two cores, and elections wait for the CPU.
    assert!(
        !env.is_empty() || took <= Duration::from_millis(5 * ELECTION_MS),
        "new leader {new_leader:x} after {took:?} (election timeout {ELECTION_MS} ms)"
    );
    let mut acked = Vec::new();
    for w in writers {
        acked.extend(w.await.unwrap());
    }
    assert!(
        acked.len() > 100,
        "too few writes acknowledged: {}",
        acked.len()
    );

    // The killed member comes back with the same flags and catches up.
    let args = members[leader_index].args.clone();
    members[leader_index].child = spawn(cwd.path(), &args, &[]);
    ready(&endpoints[leader_index], &mut members[leader_index].child).await;
    let newest = acked.iter().map(|(_, r)| *r).max().unwrap();
    for e in &endpoints {
        let mut c = Client::connect([e], None).await.unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        // Serializable: this member's own state, to see it caught up.
        let serializable = || GetOptions::new().with_prefix().with_serializable();
        loop {
            let r = c
                .get("w", Some(serializable().with_count_only()))
                .await
                .unwrap();
            if r.header().unwrap().revision() >= newest {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "{e} did not catch up\n{}",
                logs(cwd.path())
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let kvs = c.get("w", Some(serializable())).await.unwrap();
        let stored: std::collections::HashMap<String, i64> = kvs
            .kvs()
            .iter()
            .map(|kv| (kv.key_str().unwrap().to_string(), kv.mod_revision()))
            .collect();
        for (key, rev) in &acked {
            assert_eq!(
                stored.get(key),
                Some(rev),
                "{e}: acknowledged {key}@{rev} lost"
            );
        }
    }
    // The follower's watch saw every acknowledged write once, in order.
    let mut seen: Vec<(i64, String)> = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while seen.last().map_or(0, |s| s.0) < newest {
        let remaining = deadline.saturating_duration_since(Instant::now());
        let msg = tokio::time::timeout(remaining, stream.message()).await;
        let Ok(Ok(Some(resp))) = msg else {
            panic!(
                "the watch ended or stalled at {:?}\n{}",
                seen.last(),
                logs(cwd.path())
            );
        };
        for e in resp.events() {
            let kv = e.kv().unwrap();
            seen.push((kv.mod_revision(), kv.key_str().unwrap().to_string()));
        }
    }
    assert_saw_every_write("the follower's watch", &seen, &acked);
    if let Some((mut child, reader)) = etcdctl_watch {
        // Let it drain (up to the last acknowledged write), then read what it printed.
        let last = acked.iter().map(|(_, rev)| *rev).max().unwrap_or(0);
        reader
            .wait_until(Duration::from_secs(30), |p| {
                common::etcdctl_printed_revision(p, last)
            })
            .await;
        let _ = child.kill();
        let _ = child.wait();
        let events = etcdctl_watch_events(&reader.join());
        assert_saw_every_write("etcdctl's watch", &events, &acked);
    } else if etcdctl_bin.is_none() {
        assert_ne!(
            std::env::var("HARK_REQUIRE_ETCDCTL").as_deref(),
            Ok("1"),
            "etcdctl-3.5 is not on PATH"
        );
    }
    if let Some((mut child, reader)) = go_watch {
        tokio::time::sleep(Duration::from_secs(1)).await;
        // Still watching: it never gave up on the cluster.
        assert!(
            child.try_wait().unwrap().is_none(),
            "the clientv3 watcher exited"
        );
        let _ = child.kill();
        let _ = child.wait();
        let events = clientv3_watch_events(&reader.join());
        assert_saw_every_write("clientv3's watch", &events, &acked);
    }
    let all_logs = logs(cwd.path());
    for m in &mut members {
        let _ = m.child.kill();
        let _ = m.child.wait();
    }
    all_logs
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn etcdctl_member_add_promote_update_remove() {
    let _one = ONE_CLUSTER_AT_A_TIME.lock().await;
    let Some(bin) = find_on_path("etcdctl-3.5") else {
        assert_ne!(
            std::env::var("HARK_REQUIRE_ETCDCTL").as_deref(),
            Ok("1"),
            "etcdctl-3.5 is not on PATH"
        );
        eprintln!("no etcdctl-3.5 on PATH: skipped");
        return;
    };
    let cwd = tempfile::tempdir().unwrap();
    let mut members = start_cluster(cwd.path()).await;
    let endpoints = members
        .iter()
        .map(|m| m.client.clone())
        .collect::<Vec<_>>()
        .join(",");
    for m in &members {
        member_line(&bin, &endpoints, &format!(", {}, ", m.name), |l| {
            l.contains("started")
        });
    }
    let (client, peer) = (free_port(), free_port());
    let peer_url = format!("http://127.0.0.1:{peer}");
    // As etcd's, the leader takes a member (a learner too) only once it has
    // been connected to a quorum for its health interval (5 s): until
    // then the answer is "unhealthy cluster", and it is asked again.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let (ok, out) = loop {
        let (ok, out) = etcdctl(
            &bin,
            &endpoints,
            &["member", "add", "m3", "--peer-urls", &peer_url, "--learner"],
        );
        if ok || !out.contains("unhealthy cluster") || std::time::Instant::now() > deadline {
            break (ok, out);
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    assert!(ok, "{out}");
    assert!(
        out.contains("ETCD_INITIAL_CLUSTER_STATE=\"existing\""),
        "{out}"
    );
    let initial = out
        .lines()
        .find_map(|l| l.strip_prefix("ETCD_INITIAL_CLUSTER=\""))
        .unwrap()
        .trim_end_matches('"')
        .to_string();
    // Before it starts: unstarted, a learner, no name.
    let line = member_line(&bin, &endpoints, &peer_url, |l| l.contains("unstarted"));
    assert!(line.ends_with("true"), "{line}");
    let id = line.split(", ").next().unwrap().to_string();
    // A second member on the same peer URL, and a second learner, are refused.
    let (ok, out) = etcdctl(
        &bin,
        &endpoints,
        &["member", "add", "x", "--peer-urls", &peer_url],
    );
    assert!(
        !ok && out.contains("etcdserver: Peer URLs already exists"),
        "{out}"
    );
    let other = format!("http://127.0.0.1:{}", free_port());
    let (ok, out) = etcdctl(
        &bin,
        &endpoints,
        &["member", "add", "y", "--peer-urls", &other, "--learner"],
    );
    assert!(
        !ok && out.contains("etcdserver: too many learner members in cluster"),
        "{out}"
    );

    let mut added = start_member(cwd.path(), "m3", client, peer, &initial, "existing", &[]);
    ready(&added.client, &mut added.child).await;
    let line = member_line(&bin, &endpoints, &peer_url, |l| l.contains("started, m3,"));
    assert!(
        line.contains(&added.client) && line.ends_with("true"),
        "{line}"
    );
    let (ok, out) = etcdctl(&bin, &endpoints, &["member", "promote", &id]);
    assert!(ok && out.contains("promoted"), "{out}");
    member_line(&bin, &endpoints, &peer_url, |l| l.ends_with("false"));
    let (ok, out) = etcdctl(&bin, &endpoints, &["member", "promote", &id]);
    assert!(
        !ok && out.contains("etcdserver: can only promote a learner member"),
        "{out}"
    );
    let second = format!("http://localhost:{peer}");
    let (ok, out) = etcdctl(
        &bin,
        &endpoints,
        &[
            "member",
            "update",
            &id,
            "--peer-urls",
            &format!("{peer_url},{second}"),
        ],
    );
    assert!(ok && out.contains("updated"), "{out}");
    member_line(&bin, &endpoints, &second, |_| true);
    let (ok, out) = etcdctl(&bin, &endpoints, &["endpoint", "status", "--cluster"]);
    assert!(ok && out.lines().count() == 4, "{out}");
    // Refused as etcd refuses it ("unhealthy cluster") until the leader has
    // reached the voters without a break for 5 s; then removed.
    let deadline = Instant::now() + Duration::from_secs(20);
    let out = loop {
        let (ok, out) = etcdctl(&bin, &endpoints, &["member", "remove", &id]);
        if ok || !out.contains("etcdserver: unhealthy cluster") || Instant::now() > deadline {
            assert!(ok && out.contains("removed"), "{out}");
            break out;
        }
        std::thread::sleep(Duration::from_millis(300));
    };
    assert!(out.contains(&id), "{out}");
    let (ok, out) = etcdctl(&bin, &endpoints, &["member", "remove", &id]);
    assert!(!ok && out.contains("etcdserver: member not found"), "{out}");
    let (ok, out) = etcdctl(&bin, &endpoints, &["member", "list"]);
    assert!(
        ok && out.lines().count() == 3 && !out.contains(&peer_url),
        "{out}"
    );
    let (ok, out) = etcdctl(&bin, &endpoints, &["put", "after-remove", "1"]);
    assert!(ok, "{out}");
    // The removed member stops by itself, as etcd's does, and successfully:
    // a supervisor must not restart it into a cluster that refuses it.
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = added.child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "the removed member still runs");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(status.success(), "{status}");
    assert!(
        logs(cwd.path()).contains("the member has been permanently removed from the cluster"),
        "no removal line in the logs"
    );
    for m in members.iter_mut().chain([&mut added]) {
        let _ = m.child.kill();
        let _ = m.child.wait();
    }
}

/// Index in `members` of the member that leads now.
async fn leader_index(members: &[Member]) -> usize {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        for (i, m) in members.iter().enumerate() {
            if let Ok(mut c) = Client::connect([&m.client], None).await
                && let Ok(s) = c.status().await
                && s.leader() != 0
                && s.leader() == s.header().unwrap().member_id()
            {
                return i;
            }
        }
        assert!(Instant::now() < deadline, "no leader");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn leases_live_on_the_leader_and_survive_its_loss() {
    let _one = ONE_CLUSTER_AT_A_TIME.lock().await;
    let cwd = tempfile::tempdir().unwrap();
    let mut members = start_cluster(cwd.path()).await;
    let leader = leader_index(&members).await;
    let followers: Vec<usize> = (0..3).filter(|i| *i != leader).collect();
    let clients: Vec<String> = members.iter().map(|m| m.client.clone()).collect();
    let on = |i: usize| Client::connect([clients[i].clone()], None);
    // Granted through a follower, used through the other.
    let mut a = on(followers[0]).await.unwrap();
    let mut b = on(followers[1]).await.unwrap();
    let lease = a.lease_grant(3, None).await.unwrap().id();
    b.put(
        "leased",
        "v",
        Some(etcd_client::PutOptions::new().with_lease(lease)),
    )
    .await
    .unwrap();
    // Every member answers from the leader's lessor.
    for i in 0..3 {
        let ttl = on(i)
            .await
            .unwrap()
            .lease_time_to_live(lease, None)
            .await
            .unwrap();
        assert_eq!(ttl.granted_ttl(), 3);
        assert!(
            (1..=3).contains(&ttl.ttl()),
            "member {i}: ttl {}",
            ttl.ttl()
        );
    }
    // Kept alive through a follower across the leader's SIGKILL: the new
    // leader gives it its full TTL again, so it never expires.
    let (mut keeper, mut answers) = b.lease_keep_alive(lease).await.unwrap();
    members[leader].child.kill().unwrap();
    members[leader].child.wait().unwrap();
    let until = Instant::now() + Duration::from_secs(5);
    while Instant::now() < until {
        if keeper.keep_alive().await.is_ok() {
            let _ = tokio::time::timeout(Duration::from_secs(1), answers.message()).await;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let mut c = on(followers[0]).await.unwrap();
    let got = c
        .get("leased", Some(GetOptions::new().with_serializable()))
        .await
        .unwrap();
    assert_eq!(
        got.kvs().len(),
        1,
        "the key outlived the old leader while kept alive"
    );
    // Once no one keeps it alive, the new leader expires it, and both members
    // delete the key at the same revision.
    drop(keeper);
    let deadline = Instant::now() + Duration::from_secs(15);
    let revision = loop {
        let got = c
            .get("leased", Some(GetOptions::new().with_serializable()))
            .await
            .unwrap();
        if got.kvs().is_empty() {
            break got.header().unwrap().revision();
        }
        assert!(
            Instant::now() < deadline,
            "lease never expired\n{}",
            logs(cwd.path())
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let mut other = on(followers[1]).await.unwrap();
    let got = other
        .get(
            "leased",
            Some(
                GetOptions::new()
                    .with_serializable()
                    .with_revision(revision),
            ),
        )
        .await
        .unwrap();
    assert!(got.kvs().is_empty());
    let before = other
        .get(
            "leased",
            Some(
                GetOptions::new()
                    .with_serializable()
                    .with_revision(revision - 1),
            ),
        )
        .await
        .unwrap();
    assert_eq!(
        before.kvs().len(),
        1,
        "deleted at the same revision on both members"
    );
    for m in &mut members {
        let _ = m.child.kill();
        let _ = m.child.wait();
    }
}

/// clientv3's WithRequireLeader (metadata `hasleader=true`): a watch stream on
/// a member that lost its leader ends with `etcdserver: no leader`, and a new
/// one is refused, as etcd does.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_watch_requiring_a_leader_ends_when_the_member_loses_it() {
    let _one = ONE_CLUSTER_AT_A_TIME.lock().await;
    let cwd = tempfile::tempdir().unwrap();
    let mut members = start_cluster(cwd.path()).await;
    // A leader first: until one is elected such a watch is refused too.
    leader_index(&members).await;
    let options = etcd_client::ConnectOptions::new().with_require_leader(true);
    let mut client = Client::connect([&members[0].client], Some(options.clone()))
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut stream = loop {
        // Member 0 may learn of the leader a heartbeat later than the others.
        match client.watch("x", None).await {
            Ok(stream) => break stream,
            Err(e) if Instant::now() < deadline => {
                eprintln!("watch refused while electing: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(e) => panic!("{e}"),
        }
    };
    client.put("x", "1", None).await.unwrap();
    let first = stream.message().await.unwrap().unwrap();
    assert!(first.created() || !first.events().is_empty());
    for m in &mut members[1..] {
        m.child.kill().unwrap();
        m.child.wait().unwrap();
    }
    let ended = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            match stream.message().await {
                Ok(Some(_)) => continue,
                other => return other,
            }
        }
    })
    .await
    .expect("the stream did not end");
    let status = match ended {
        Err(etcd_client::Error::GRpcStatus(s)) => s,
        other => panic!("expected a gRPC error, got {other:?}"),
    };
    assert_eq!(status.code(), tonic::Code::Unavailable);
    assert_eq!(status.message(), "etcdserver: no leader");
    let refused = client.watch("x", None).await;
    assert!(
        matches!(&refused, Err(etcd_client::Error::GRpcStatus(s)) if s.message() == "etcdserver: no leader"),
        "{refused:?}"
    );
    let _ = members[0].child.kill();
    let _ = members[0].child.wait();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn etcdctl_move_leader_hands_the_leadership_to_a_follower() {
    let _one = ONE_CLUSTER_AT_A_TIME.lock().await;
    let Some(bin) = find_on_path("etcdctl-3.5") else {
        assert_ne!(
            std::env::var("HARK_REQUIRE_ETCDCTL").as_deref(),
            Ok("1"),
            "etcdctl-3.5 is not on PATH"
        );
        eprintln!("no etcdctl-3.5 on PATH: skipped");
        return;
    };
    let cwd = tempfile::tempdir().unwrap();
    let mut members = start_cluster(cwd.path()).await;
    let endpoints: Vec<String> = members.iter().map(|m| m.client.clone()).collect();
    let all = endpoints.join(",");
    let from = leader_index(&members).await;
    let to = (from + 1) % 3;
    let (from_id, to_id) = (
        member_id_of(&members[from].client).await,
        member_id_of(&members[to].client).await,
    );

    let mut client = Client::connect(&endpoints, None).await.unwrap();
    client.put("before", "1", None).await.unwrap();

    let started = Instant::now();
    let (ok, out) = etcdctl(&bin, &all, &["move-leader", &format!("{to_id:x}")]);
    assert!(ok, "{out}\n{}", logs(cwd.path()));
    assert_eq!(
        out,
        format!("Leadership transferred from {from_id:x} to {to_id:x}\n")
    );
    eprintln!("move-leader took {:?}", started.elapsed());
    for m in &members {
        assert_eq!(
            leader_seen_by(&m.client).await,
            to_id,
            "as {} sees it",
            m.name
        );
    }
    // Writes and linearizable reads go on under the new leader, on every member.
    for (i, m) in members.iter().enumerate() {
        let mut c = Client::connect([&m.client], None).await.unwrap();
        c.put(format!("after{i}"), "1", None).await.unwrap();
        let got = c
            .get("after", Some(GetOptions::new().with_prefix()))
            .await
            .unwrap();
        assert_eq!(got.kvs().len(), i + 1);
    }

    // etcd's refusals: a follower is not the one to ask, and the target
    // must be a voting member.
    let mut follower = Client::connect([&members[from].client], None)
        .await
        .unwrap();
    assert_eq!(
        common::status(follower.move_leader(from_id).await.unwrap_err()),
        (
            tonic::Code::FailedPrecondition,
            "etcdserver: not leader".to_string()
        )
    );
    let mut leader = Client::connect([&members[to].client], None).await.unwrap();
    assert_eq!(
        common::status(leader.move_leader(0x1234).await.unwrap_err()),
        (
            tonic::Code::FailedPrecondition,
            "etcdserver: bad leader transferee".to_string()
        )
    );
    // To itself: nothing to do.
    leader.move_leader(to_id).await.unwrap();
    assert_eq!(leader_seen_by(&members[to].client).await, to_id);

    // Every member, found through the member list, is healthy.
    let (ok, out) = etcdctl(&bin, &all, &["endpoint", "health", "--cluster"]);
    assert!(ok, "{out}");
    assert_eq!(
        out.lines().filter(|l| l.contains("is healthy")).count(),
        3,
        "{out}"
    );

    // A target that is down: refused soon, and writes go on meanwhile.
    members[from].child.kill().unwrap();
    members[from].child.wait().unwrap();
    let started = Instant::now();
    assert_eq!(
        common::status(leader.move_leader(from_id).await.unwrap_err()),
        (
            tonic::Code::Unavailable,
            "etcdserver: request timed out, leader transfer took too long".to_string()
        )
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    leader.put("after-failed-move", "1", None).await.unwrap();
    assert_eq!(leader_seen_by(&members[to].client).await, to_id);

    for m in &mut members {
        let _ = m.child.kill();
        let _ = m.child.wait();
    }
}

/// A rolling change of `--max-txn-ops` (256 on one member, 128 on the
/// others): a txn the first member accepts is applied on every member, not
/// refused by the ones whose limit is lower (seen: the first member held 201
/// keys at revision 3, the others 1 key at revision 2, told the client OK).
/// etcd checks the limit on the member that takes the request only.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn members_with_different_max_txn_ops_apply_the_same_log() {
    let _one = ONE_CLUSTER_AT_A_TIME.lock().await;
    let cwd = tempfile::tempdir().unwrap();
    let mut members = start_cluster_with(cwd.path(), |i| {
        let limit = if i == 0 { "256" } else { "128" };
        vec![("HARK_MAX_TXN_OPS", limit.to_string())]
    });
    for m in &mut members {
        ready(&m.client, &mut m.child).await;
    }
    leader_index(&members).await;
    let mut first = Client::connect([&members[0].client], None).await.unwrap();
    first.put("before", "x", None).await.unwrap();
    let txn = || {
        let puts: Vec<etcd_client::TxnOp> = (0..200)
            .map(|i| etcd_client::TxnOp::put(format!("k{i:03}"), "v", None))
            .collect();
        etcd_client::Txn::new().and_then(puts)
    };
    let applied = first
        .txn(txn())
        .await
        .expect("within m0's limit")
        .header()
        .unwrap()
        .revision();
    // The members with the lower limit refuse it when they take it themselves.
    let mut second = Client::connect([&members[1].client], None).await.unwrap();
    let refused = second.txn(txn()).await.expect_err("over m1's limit");
    assert!(
        refused
            .to_string()
            .contains("too many operations in txn request"),
        "{refused}"
    );
    // Every member reaches the txn's revision with the same keys and hash.
    let mut hashes = Vec::new();
    for m in &members {
        let mut c = Client::connect([&m.client], None).await.unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        let count = loop {
            let got = c
                .get(
                    "",
                    Some(
                        GetOptions::new()
                            .with_all_keys()
                            .with_count_only()
                            .with_serializable(),
                    ),
                )
                .await
                .unwrap();
            if got.header().unwrap().revision() >= applied || Instant::now() > deadline {
                break got.count();
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        assert_eq!(count, 201, "{}: keys at the txn's revision", m.name);
        let hash = c.maintenance_client().hash_kv(applied).await;
        hashes.push(
            hash.map(|h| h.hash())
                .unwrap_or_else(|e| panic!("{}: {e}", m.name)),
        );
    }
    assert!(
        hashes.iter().all(|h| *h == hashes[0]),
        "HashKV differs: {hashes:?}"
    );
}

/// One series' value in `/metrics` of the member at `client`.
fn metric(client: &str, name: &str) -> f64 {
    let addr = client.trim_start_matches("http://").parse().unwrap();
    let (code, body) = common::http_get(addr, "/metrics");
    assert_eq!(code, 200);
    body.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
        .unwrap_or_else(|| panic!("no {name} in /metrics"))
        .trim()
        .parse()
        .unwrap()
}

/// The leadership series follow the log: `etcd_server_is_leader` is 1 on the
/// leader only, and a leader cut off from its quorum reports neither a
/// leader nor leading within a few election timeouts, so etcd's
/// `etcdNoLeader` alert fires (seen: every member reported 1 and 1 for good).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn leadership_metrics_follow_the_log() {
    let _one = ONE_CLUSTER_AT_A_TIME.lock().await;
    let cwd = tempfile::tempdir().unwrap();
    let mut members = start_cluster(cwd.path()).await;
    let leader = leader_index(&members).await;
    for (i, m) in members.iter().enumerate() {
        let leads = f64::from(u8::from(i == leader));
        assert_eq!(
            metric(&m.client, "etcd_server_is_leader"),
            leads,
            "{}",
            m.name
        );
        assert_eq!(
            metric(&m.client, "etcd_server_has_leader"),
            1.0,
            "{}",
            m.name
        );
        assert!(metric(&m.client, "etcd_server_leader_changes_seen_total") >= 1.0);
    }
    // etcd's proposal gauges are log indexes: each member's applied gauge
    // reaches the index its Status reports once writes stop.
    let mut c = Client::connect([&members[leader].client], None)
        .await
        .unwrap();
    for i in 0..20 {
        c.put(format!("p{i}"), "v", None).await.unwrap();
    }
    for m in &members {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let mut c = Client::connect([&m.client], None).await.unwrap();
            let applied_index = c.status().await.unwrap().raft_applied_index();
            let applied = metric(&m.client, "etcd_server_proposals_applied_total");
            let committed = metric(&m.client, "etcd_server_proposals_committed_total");
            if applied == applied_index as f64 && committed >= applied {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "{}: applied {applied}, committed {committed}, Status {applied_index}",
                m.name
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    let followers: Vec<usize> = (0..3).filter(|i| *i != leader).collect();
    // One follower gone: the leader still hears from a quorum.
    members[followers[0]].child.kill().unwrap();
    members[followers[0]].child.wait().unwrap();
    tokio::time::sleep(Duration::from_millis(3 * ELECTION_MS)).await;
    let client = members[leader].client.clone();
    assert_eq!(metric(&client, "etcd_server_has_leader"), 1.0);
    assert_eq!(metric(&client, "etcd_server_is_leader"), 1.0);
    // Both gone: no quorum, no leader.
    members[followers[1]].child.kill().unwrap();
    members[followers[1]].child.wait().unwrap();
    let lost = Instant::now();
    while metric(&client, "etcd_server_has_leader") != 0.0 {
        assert!(
            lost.elapsed() < Duration::from_millis(6 * ELECTION_MS),
            "the cut-off leader still reports a leader after {:?}",
            lost.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(metric(&client, "etcd_server_is_leader"), 0.0);
}

/// Power loss: every member killed at once with the power-loss simulation
/// on (`HARK_SIMULATE_POWER_LOSS=1`: writes not yet synced die with the
/// process, as the page cache does when power goes), then restarted. No
/// linearizable read after the restart is older than a write acknowledged
/// before it.
///
/// openraft 0.9 restores a member whose saved vote is a committed one for
/// itself as leader of the same term, with no new blank entry; its read
/// index was then its lazily saved commit index, older than the last
/// acknowledged write, and after a power loss its store had not yet
/// applied that write again. The restored leader is started first with a
/// read already waiting on it, then the others. Found by the fault suite's
/// power-loss fault; failed before the fix (a read at the revision before
/// the last acknowledged one; mutation `read-index-after-restore` brings
/// the old behaviour back).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn after_every_member_loses_power_no_read_is_older_than_an_acknowledged_write() {
    let _one = ONE_CLUSTER_AT_A_TIME.lock().await;
    let cwd = tempfile::tempdir().unwrap();
    let mut members = start_cluster_losing_power(cwd.path()).await;
    let old_leader = leader_index(&members).await;
    let mut c = Client::connect([&members[old_leader].client], None)
        .await
        .unwrap();
    let mut acked = 0;
    for n in 0..30 {
        let r = c.put(format!("k{n}"), format!("v{n}"), None).await.unwrap();
        acked = r.header().unwrap().revision();
    }
    // Power goes: every member at once.
    for m in &mut members {
        let _ = m.child.kill();
        let _ = m.child.wait();
    }
    // Power comes back on the old leader first; a read waits on it while
    // the others start.
    let restart = |m: &mut Member| m.child = spawn(cwd.path(), &m.args, &power_loss());
    restart(&mut members[old_leader]);
    let endpoint = members[old_leader].client.clone();
    let read = tokio::spawn(async move {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(mut c) = Client::connect([&endpoint], None).await
                && let Ok(Ok(r)) =
                    tokio::time::timeout(Duration::from_secs(5), c.get("k29", None)).await
            {
                let value = r.kvs().first().map(|kv| kv.value().to_vec());
                return (r.header().unwrap().revision(), value);
            }
            assert!(Instant::now() < deadline, "no read answered after restart");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    for i in (0..3).filter(|&i| i != old_leader) {
        restart(&mut members[i]);
    }
    let (revision, value) = read.await.unwrap();
    drop(members);
    assert!(
        revision >= acked && value.as_deref() == Some(b"v29".as_slice()),
        "after the power loss a linearizable read answered at revision {revision} \
         (k29 = {value:?}), but revision {acked} (k29 = v29) was acknowledged before\n{}",
        logs(cwd.path())
    );
}

/// The leader syncs its own log entries while it replicates them
/// (docs/ARCHITECTURE.md, "When an entry is durable where"), so a leader
/// that loses power loses its last entries. Here it loses power while one
/// follower is stopped and the other, the only one with those entries, is
/// killed too: the leader and the stopped follower then make the majority
/// that goes on. Nothing the leader acknowledged may be missing from what
/// they serve, and no event a follower sent a watcher may be either (the
/// mutations `apply-before-leader-durable` and `commit-before-leader-durable`
/// break one each). Whether a round loses an entry is a matter of timing
/// (with several appends in flight, one round caught the mutations 4 and 8
/// times in 10), so the test runs [`POWER_LOSS_ROUNDS`] rounds, each on a
/// new cluster.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_leader_losing_power_with_one_follower_down_loses_nothing_acknowledged_or_watched() {
    let _one = ONE_CLUSTER_AT_A_TIME.lock().await;
    for round in 1..=POWER_LOSS_ROUNDS {
        eprintln!("power loss, round {round} of {POWER_LOSS_ROUNDS}");
        leader_power_loss_round().await;
    }
}

/// Rounds of the leader's power loss; about 3 s each.
const POWER_LOSS_ROUNDS: usize = 4;

/// One round of the test above, on a new cluster.
async fn leader_power_loss_round() {
    let cwd = tempfile::tempdir().unwrap();
    let mut members = start_cluster_losing_power(cwd.path()).await;
    let leader = leader_index(&members).await;
    let watched = (leader + 1) % 3;
    let stopped = (leader + 2) % 3;
    let signal = |m: &Member, sig| {
        // SAFETY: a plain kill(2) on a child this test started and still owns.
        assert_eq!(unsafe { libc::kill(m.child.id() as libc::pid_t, sig) }, 0);
    };
    signal(&members[stopped], libc::SIGSTOP);

    let mut watch_client = Client::connect([&members[watched].client], None)
        .await
        .unwrap();
    let mut stream = watch_client
        .watch("k", Some(etcd_client::WatchOptions::new().with_prefix()))
        .await
        .unwrap();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::<(i64, String)>::new()));
    let watching = {
        let seen = seen.clone();
        tokio::spawn(async move {
            while let Ok(Some(resp)) = stream.message().await {
                for e in resp.events() {
                    if let Some(kv) = e.kv() {
                        let key = String::from_utf8_lossy(kv.key()).into_owned();
                        seen.lock().unwrap().push((kv.mod_revision(), key));
                    }
                }
            }
        })
    };
    let mut writer = Client::connect([&members[leader].client], None)
        .await
        .unwrap();
    let acked = std::sync::Arc::new(std::sync::Mutex::new(Vec::<(String, i64)>::new()));
    let writing = {
        let acked = acked.clone();
        tokio::spawn(async move {
            for n in 0.. {
                let key = format!("k{n:05}");
                match writer.put(key.clone(), "v", None).await {
                    Ok(r) => acked
                        .lock()
                        .unwrap()
                        .push((key, r.header().unwrap().revision())),
                    Err(_) => return,
                }
            }
        })
    };
    // Writes flow for a while (600 ms, and until 20 are acknowledged: a
    // loaded machine acknowledges fewer in that time); then the leader
    // loses power mid-stream and the follower that has its last entries
    // goes down with it.
    tokio::time::sleep(Duration::from_millis(600)).await;
    let flowing = Instant::now() + Duration::from_secs(10);
    while acked.lock().unwrap().len() < 20 && Instant::now() < flowing {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for i in [leader, watched] {
        let _ = members[i].child.kill();
        let _ = members[i].child.wait();
    }
    let _ = writing.await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    watching.abort();
    signal(&members[stopped], libc::SIGCONT);
    let restarted = &mut members[leader];
    restarted.child = spawn(cwd.path(), &restarted.args, &power_loss());
    ready(&restarted.client, &mut restarted.child).await;

    // What the surviving majority serves: each key was written once, so its
    // revision is the one its write and its event had.
    let mut c = Client::connect([&members[leader].client], None)
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let served = loop {
        match c.get("k", Some(GetOptions::new().with_prefix())).await {
            Ok(r) => break r,
            Err(e) => assert!(Instant::now() < deadline, "no read after restart: {e}"),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let served: std::collections::BTreeMap<String, i64> = served
        .kvs()
        .iter()
        .map(|kv| {
            (
                String::from_utf8_lossy(kv.key()).into_owned(),
                kv.mod_revision(),
            )
        })
        .collect();
    let acked = acked.lock().unwrap().clone();
    let seen = seen.lock().unwrap().clone();
    drop(members);
    eprintln!(
        "{} writes acknowledged, {} events seen on a follower, {} keys served after the power loss",
        acked.len(),
        seen.len(),
        served.len()
    );
    assert!(
        acked.len() > 10,
        "too few writes before the power loss: {acked:?}"
    );
    let lost_acked: Vec<_> = acked
        .iter()
        .filter(|(k, rev)| served.get(k) != Some(rev))
        .collect();
    let lost_seen: Vec<_> = seen
        .iter()
        .filter(|(rev, k)| served.get(k) != Some(rev))
        .collect();
    assert!(
        lost_acked.is_empty() && lost_seen.is_empty(),
        "after the leader lost power, the majority that went on serves {} keys, up to \
         revision {:?}; acknowledged but missing: {lost_acked:?}; sent to a watcher on a \
         follower but missing: {lost_seen:?}\n{}",
        served.len(),
        served.values().max(),
        logs(cwd.path())
    );
}

/// Changes the value of the row at `revision` in the store of a stopped
/// member, as a bad disk or a bug below the log would: same revisions,
/// different data.
fn alter_row(data_dir: &Path, revision: i64) {
    use hark_mvcc::backend::{BatchOp, Table, WriteBatch};
    use hark_mvcc::{Backend, RocksBackend};
    use prost::Message;
    let backend = RocksBackend::open(data_dir).unwrap();
    let key = hark_mvcc::layout::revision_key(revision, 0, false);
    let row = backend.get(Table::Kv, &key).unwrap().expect("the row");
    let mut kv = hark_proto::mvccpb::KeyValue::decode(row.as_slice()).unwrap();
    kv.value = bytes::Bytes::from_static(b"altered");
    backend
        .write(
            WriteBatch {
                ops: vec![BatchOp::Put {
                    table: Table::Kv,
                    key,
                    value: kv.encode_to_vec(),
                }],
            },
            true,
        )
        .unwrap();
}

/// etcd's corruption checks against a member whose store was altered while
/// it was down: started with `--experimental-initial-corrupt-check` it
/// refuses to serve (the others serve on); started without, it serves, and
/// the leader's periodic check (`--experimental-corrupt-check-time`) raises
/// the CORRUPT alarm, after which writes fail with etcd's error. While the
/// members agree, the periodic check raises nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corruption_checks_refuse_an_altered_member_and_raise_the_alarm() {
    let _one = ONE_CLUSTER_AT_A_TIME.lock().await;
    let cwd = tempfile::tempdir().unwrap();
    // ETCD_* as etcd's own name for it (the victim restarts without it).
    let mut members = start_cluster_with(cwd.path(), |_| {
        vec![("ETCD_EXPERIMENTAL_CORRUPT_CHECK_TIME", "300ms".to_string())]
    });
    for m in &mut members {
        ready(&m.client, &mut m.child).await;
    }
    let leader = leader_index(&members).await;
    let mut c = Client::connect([&members[leader].client], None)
        .await
        .unwrap();
    let mut altered_revision = 0;
    for i in 0..10 {
        let put = c.put(format!("k{i}"), "v", None).await.unwrap();
        if i == 3 {
            altered_revision = put.header().unwrap().revision();
        }
    }
    let last = c
        .get("k9", None)
        .await
        .unwrap()
        .header()
        .unwrap()
        .revision();
    for m in &members {
        let mut mc = Client::connect([&m.client], None).await.unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while mc
            .get("k9", Some(GetOptions::new().with_serializable()))
            .await
            .unwrap()
            .header()
            .unwrap()
            .revision()
            < last
        {
            assert!(Instant::now() < deadline, "{} did not catch up", m.name);
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    // Several periodic checks pass over agreeing members.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let alarms = c.alarm(
        etcd_client::AlarmAction::Get,
        etcd_client::AlarmType::None,
        None,
    );
    assert!(alarms.await.unwrap().alarms().is_empty());

    let victim = (leader + 1) % 3;
    common::stop_cleanly(&mut members[victim].child, cwd.path());
    alter_row(
        &cwd.path().join(format!("m{victim}.hark")),
        altered_revision,
    );

    let mut checked = members[victim].args.clone();
    checked.push("--experimental-initial-corrupt-check".into());
    let mut refused = spawn(cwd.path(), &checked, &[]);
    let status = common::wait_exit(&mut refused);
    assert!(!status.success(), "{}", logs(cwd.path()));
    let log = logs(cwd.path());
    assert!(
        log.contains("found data inconsistency with peers")
            && log.contains("found different hash values from remote peer"),
        "{log}"
    );
    // The others served throughout.
    c.put("during", "the refused start", None).await.unwrap();

    // Without the initial check it serves, and the leader finds it out.
    let m = &mut members[victim];
    m.child = spawn(cwd.path(), &m.args, &[]);
    ready(&m.client, &mut m.child).await;
    let deadline = Instant::now() + Duration::from_secs(20);
    let alarms = loop {
        let got = c
            .alarm(
                etcd_client::AlarmAction::Get,
                etcd_client::AlarmType::None,
                None,
            )
            .await
            .unwrap();
        if !got.alarms().is_empty() {
            break got;
        }
        assert!(Instant::now() < deadline, "no alarm\n{}", logs(cwd.path()));
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let alarm = &alarms.alarms()[0];
    assert_eq!(alarm.alarm(), etcd_client::AlarmType::Corrupt);
    assert_eq!(alarm.member_id(), 0, "etcd 3.5 names no member");
    let err = c.put("after", "the alarm", None).await.unwrap_err();
    assert!(
        err.to_string().contains("etcdserver: corrupt cluster"),
        "{err}"
    );
}

/// etcd's disaster recovery: two members of three are lost for good; the
/// survivor, restarted with `--force-new-cluster`, serves its data as a
/// cluster of one under its own member id and takes writes, and then
/// restarts without the flag as that cluster.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn force_new_cluster_makes_a_survivor_a_cluster_of_one() {
    let _one = ONE_CLUSTER_AT_A_TIME.lock().await;
    let cwd = tempfile::tempdir().unwrap();
    let mut members = start_cluster(cwd.path()).await;
    let leader = leader_index(&members).await;
    let mut c = Client::connect([&members[leader].client], None)
        .await
        .unwrap();
    for i in 0..20 {
        c.put(format!("k{i:02}"), "v", None).await.unwrap();
    }
    let survivor = (leader + 1) % 3;
    let mut s = Client::connect([&members[survivor].client], None)
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while s
        .get("k19", Some(GetOptions::new().with_serializable()))
        .await
        .unwrap()
        .kvs()
        .is_empty()
    {
        assert!(Instant::now() < deadline, "the survivor did not catch up");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let id = member_id_of(&members[survivor].client).await;
    drop((c, s));
    for m in &mut members {
        let _ = m.child.kill();
        let _ = m.child.wait();
    }

    let m = &mut members[survivor];
    let mut forced = m.args.clone();
    forced.push("--force-new-cluster".into());
    m.child = spawn(cwd.path(), &forced, &[]);
    let mut c = ready(&m.client, &mut m.child).await;
    let check = |c: &mut Client| {
        let mut c = c.clone();
        let name = m.name.clone();
        async move {
            let list = c.member_list().await.unwrap();
            assert_eq!(list.members().len(), 1, "{:?}", list.members());
            assert_eq!(list.members()[0].id(), id, "the member id is kept");
            assert_eq!(list.members()[0].name(), name);
            let all = c
                .get("k", Some(GetOptions::new().with_prefix().with_count_only()))
                .await
                .unwrap();
            assert_eq!(all.count(), 20, "every acknowledged write is there");
        }
    };
    check(&mut c).await;
    c.put("after", "forcing", None).await.unwrap();
    let log = logs(cwd.path());
    assert!(
        log.contains("forcing a new cluster of this member alone"),
        "{log}"
    );
    drop(c);

    common::stop_cleanly(&mut m.child, cwd.path());
    m.child = spawn(cwd.path(), &m.args, &[]);
    let mut c = ready(&m.client, &mut m.child).await;
    check(&mut c).await;
    assert_eq!(
        c.get("after", None).await.unwrap().kvs()[0].value(),
        b"forcing"
    );
    c.put("and", "on", None).await.unwrap();
}

/// A cluster of one grows to two, as etcd lets it (how a cluster restored
/// from a snapshot is rebuilt). Then a member that has just joined cannot
/// be removed while `--strict-reconfig-check` (the default) wants it
/// connected for 5 s first, and can at once when the check is off.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_of_one_grows_and_strict_reconfig_check_can_be_turned_off() {
    let _one = ONE_CLUSTER_AT_A_TIME.lock().await;
    for strict in [true, false] {
        let cwd = tempfile::tempdir().unwrap();
        let ports: Vec<(u16, u16)> = (0..2).map(|_| (free_port(), free_port())).collect();
        let url = |i: usize| format!("http://127.0.0.1:{}", ports[i].1);
        let env = vec![("HARK_STRICT_RECONFIG_CHECK", strict.to_string())];
        let mut first = start_member(
            cwd.path(),
            "a",
            ports[0].0,
            ports[0].1,
            &format!("a={}", url(0)),
            "new",
            &env,
        );
        let mut c = ready(&first.client, &mut first.child).await;
        let added = c.member_add([url(1)], None).await;
        let added = added.unwrap_or_else(|e| panic!("strict {strict}: {e}\n{}", logs(cwd.path())));
        let id = added.member().unwrap().id();
        if strict {
            // As etcd: with the second voter not started, a third would
            // leave too few started voters for a quorum.
            let third = format!("http://127.0.0.1:{}", free_port());
            let (code, message) = common::status(c.member_add([third], None).await.unwrap_err());
            assert_eq!(
                (code, message.as_str()),
                (
                    tonic::Code::FailedPrecondition,
                    "etcdserver: re-configuration failed due to not enough started members"
                )
            );
        }
        let mut second = start_member(
            cwd.path(),
            "b",
            ports[1].0,
            ports[1].1,
            &format!("a={},b={}", url(0), url(1)),
            "existing",
            &env,
        );
        let mut b = ready(&second.client, &mut second.child).await;
        b.put("grown", "yes", None).await.unwrap();
        // Added as a voter: it votes once it has caught up.
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let members = c.member_list().await.unwrap();
            let listed = members.members().iter().find(|m| m.id() == id);
            if listed.is_some_and(|m| !m.is_learner()) {
                break;
            }
            assert!(Instant::now() < deadline, "never promoted: {members:?}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let removed = c.member_remove(id).await;
        if strict {
            let (code, message) = common::status(removed.unwrap_err());
            assert_eq!(
                (code, message.as_str()),
                (tonic::Code::Unavailable, "etcdserver: unhealthy cluster")
            );
        } else {
            removed.unwrap_or_else(|e| panic!("removed at once without the check: {e}"));
        }
        // Both members are killed as they go out of scope.
        drop((b, c));
    }
}

/// A simple token issued by one member is taken by every member: etcd
/// replicates its simple tokens through raft, and clients with several
/// endpoints (etcdctl, clientv3, Kubernetes) send the one token to
/// whichever member they pick.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_simple_token_from_one_member_is_taken_by_every_member() {
    use hark_proto::etcdserverpb::{self as pb, auth_client::AuthClient, kv_client::KvClient};
    let _one = ONE_CLUSTER_AT_A_TIME.lock().await;
    let cwd = tempfile::tempdir().unwrap();
    let members = start_cluster(cwd.path()).await;
    let mut setup = Client::connect([members[0].client.as_str()], None)
        .await
        .unwrap();
    setup.user_add("root", "rootpw", None).await.unwrap();
    setup.user_grant_role("root", "root").await.unwrap();
    setup.auth_enable().await.unwrap();

    // Used at once on the others: a follower that has not applied the
    // token's entry yet catches up before judging it (as etcd waits for
    // the index its token names).
    for issuer in (0..members.len()).cycle().take(4 * members.len()) {
        let token = AuthClient::connect(members[issuer].client.clone())
            .await
            .unwrap()
            .authenticate(pb::AuthenticateRequest {
                name: "root".into(),
                password: "rootpw".into(),
            })
            .await
            .unwrap()
            .into_inner()
            .token;
        for (i, m) in members.iter().enumerate() {
            let mut put = tonic::Request::new(pb::PutRequest {
                key: format!("from-{issuer}-on-{i}").into_bytes().into(),
                value: bytes::Bytes::from_static(b"v"),
                ..Default::default()
            });
            put.metadata_mut().insert("token", token.parse().unwrap());
            KvClient::connect(m.client.clone())
                .await
                .unwrap()
                .put(put)
                .await
                .unwrap_or_else(|e| panic!("a token of m{issuer} on m{i}: {e}"));
        }
    }
    // etcdctl as users run it: one login, its requests spread over all.
    if let Some(etcdctl_bin) = common::etcd::tool("etcdctl-3.7") {
        let all: Vec<&str> = members.iter().map(|m| m.client.as_str()).collect();
        for round in 0..6 {
            let key = format!("etcdctl-{round}");
            let (ok, text) = etcdctl(
                &etcdctl_bin,
                &all.join(","),
                &["--user", "root:rootpw", "put", &key, "v"],
            );
            assert!(ok, "{text}");
        }
        let (ok, text) = etcdctl(
            &etcdctl_bin,
            &all.join(","),
            &["--user", "root:rootpw", "endpoint", "health", "--cluster"],
        );
        assert!(ok, "{text}");
    }
    // A wrong token is refused everywhere.
    let mut put = tonic::Request::new(pb::PutRequest {
        key: bytes::Bytes::from_static(b"k"),
        ..Default::default()
    });
    put.metadata_mut()
        .insert("token", "AAAAAAAAAAAAAAAA.1".parse().unwrap());
    let refused = KvClient::connect(members[2].client.clone())
        .await
        .unwrap()
        .put(put)
        .await
        .unwrap_err();
    assert_eq!(refused.message(), "etcdserver: invalid auth token");
}

/// Members that talk over unix sockets, as etcd's `unix://` URLs ask: a
/// peer URL's host is the socket file (relative to the working directory),
/// a client URL's host and path; etcdctl reaches the member over its
/// socket, the write is replicated over the peers' sockets, and the files
/// are gone once the member has stopped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn members_talk_and_serve_over_unix_sockets() {
    let Some(bin) = common::etcd::tool("etcdctl-3.7") else {
        return;
    };
    let cwd = tempfile::tempdir().unwrap();
    let client_sock = cwd.path().join("m1-client.sock");
    let cluster = "m1=unix://m1.peer:1,m2=unix://m2.peer:2";
    let http: Vec<String> = (0..2)
        .map(|_| format!("http://127.0.0.1:{}", free_port()))
        .collect();
    let member = |name: &str, peer: &str, clients: &str| -> Vec<String> {
        vec![
            format!("--name={name}"),
            format!("--data-dir={name}.hark"),
            format!("--listen-peer-urls={peer}"),
            format!("--initial-advertise-peer-urls={peer}"),
            format!("--initial-cluster={cluster}"),
            format!("--listen-client-urls={clients}"),
            format!("--advertise-client-urls={clients}"),
        ]
    };
    let unix_client = format!("unix://{}", client_sock.display());
    let mut m1 = spawn(
        cwd.path(),
        &member(
            "m1",
            "unix://m1.peer:1",
            &format!("{},{unix_client}", http[0]),
        ),
        &[],
    );
    let mut m2 = spawn(cwd.path(), &member("m2", "unix://m2.peer:2", &http[1]), &[]);
    let (_c1, mut c2) = tokio::join!(ready(&http[0], &mut m1), ready(&http[1], &mut m2));
    assert!(cwd.path().join("m1.peer:1").exists(), "peer socket");
    assert!(client_sock.exists(), "client socket");

    let (ok, out) = etcdctl(&bin, &unix_client, &["put", "over", "unix"]);
    assert!(ok && out.contains("OK"), "{out}");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let got = c2.get("over", None).await.unwrap();
        if let Some(kv) = got.kvs().first() {
            assert_eq!(kv.value(), b"unix");
            break;
        }
        assert!(Instant::now() < deadline, "the write did not reach m2");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (ok, out) = etcdctl(&bin, &unix_client, &["member", "list"]);
    assert!(
        ok && out.contains("unix://m1.peer:1") && out.contains(&unix_client),
        "{out}"
    );

    stop_cleanly(&mut m1, cwd.path());
    assert!(
        !client_sock.exists(),
        "the client socket outlived the member"
    );
    assert!(
        !cwd.path().join("m1.peer:1").exists(),
        "the peer socket outlived the member"
    );
    stop_cleanly(&mut m2, cwd.path());
}

/// A leader paused with writes in its hands: one a follower forwarded to
/// it, one sent to it by a client. Each is answered, once the next leader
/// is known, by proposing it again to that leader, not with a timeout after
/// the request timeout (the Kubernetes API server answers 500 to that); and
/// each is applied exactly once, also after the old leader resumes and
/// finds its own copy of the client's write in its log.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn writes_a_paused_leader_held_are_proposed_again_to_the_next_leader() {
    let _one = ONE_CLUSTER_AT_A_TIME.lock().await;
    let cwd = tempfile::tempdir().unwrap();
    let members = start_cluster(cwd.path()).await;
    let leader = leader_index(&members).await;
    let follower = (leader + 1) % 3;
    let connect = |i: usize| {
        let options = etcd_client::ConnectOptions::new().with_timeout(Duration::from_secs(30));
        Client::connect([members[i].client.clone()], Some(options))
    };
    let mut through_follower = connect(follower).await.unwrap();
    let mut to_leader = connect(leader).await.unwrap();
    // Both connections (and the follower's to the leader) are up.
    through_follower.put("warm", "1", None).await.unwrap();
    to_leader.put("warm", "2", None).await.unwrap();

    let signal = |sig| {
        // SAFETY: a plain kill(2) on a child this test started and still owns.
        assert_eq!(
            unsafe { libc::kill(members[leader].child.id() as libc::pid_t, sig) },
            0
        );
    };
    signal(libc::SIGSTOP);
    let forwarded = tokio::spawn(async move { through_follower.put("forwarded", "f", None).await });
    let held = tokio::spawn(async move { to_leader.put("held", "h", None).await });

    // Each write is answered, and answered with success.
    let dir = cwd.path();
    let succeeds = |put: tokio::task::JoinHandle<Result<_, etcd_client::Error>>, what| async move {
        let answer = tokio::time::timeout(Duration::from_secs(20), put)
            .await
            .unwrap_or_else(|_| panic!("{what} got no answer"))
            .unwrap();
        assert!(answer.is_ok(), "{what}: {answer:?}\n{}", logs(dir));
    };
    // The other two elect a leader, and the forwarded write is answered
    // while the old leader is still paused.
    succeeds(
        forwarded,
        "the write a follower forwarded to the paused leader",
    )
    .await;
    assert!(!held.is_finished(), "a paused member answered a write");
    signal(libc::SIGCONT);
    succeeds(held, "the write the paused leader held").await;

    // Applied once each, on every member: one version, one event.
    let mut reader = connect(follower).await.unwrap();
    let final_revision = reader
        .put("last", "l", None)
        .await
        .unwrap()
        .header()
        .unwrap()
        .revision();
    for (i, m) in members.iter().enumerate() {
        let mut c = Client::connect([m.client.clone()], None).await.unwrap();
        for key in ["forwarded", "held"] {
            let deadline = Instant::now() + Duration::from_secs(10);
            let kv = loop {
                let got = c
                    .get(key, Some(GetOptions::new().with_serializable()))
                    .await
                    .unwrap();
                if got.header().unwrap().revision() >= final_revision {
                    break got.kvs().first().cloned();
                }
                assert!(Instant::now() < deadline, "member {i} did not catch up");
                tokio::time::sleep(Duration::from_millis(50)).await;
            };
            let kv = kv.unwrap_or_else(|| panic!("{key} is missing on member {i}"));
            assert_eq!(
                (kv.version(), kv.create_revision()),
                (1, kv.mod_revision()),
                "{key} on member {i} was applied more than once"
            );
        }
    }
    let history = reader
        .get(
            "",
            Some(
                GetOptions::new()
                    .with_all_keys()
                    .with_revision(final_revision),
            ),
        )
        .await
        .unwrap();
    let puts: Vec<_> = history
        .kvs()
        .iter()
        .map(|kv| (String::from_utf8_lossy(kv.key()).into_owned(), kv.version()))
        .collect();
    assert_eq!(
        puts,
        [
            ("forwarded".to_string(), 1),
            ("held".to_string(), 1),
            ("last".to_string(), 1),
            ("warm".to_string(), 2)
        ],
        "every write once, and nothing else"
    );
    assert_eq!(
        final_revision, 6,
        "revisions: 2 warm-ups, the two held writes, the last (from 1)"
    );
}
