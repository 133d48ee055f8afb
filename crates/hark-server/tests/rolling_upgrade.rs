//! A rolling upgrade, as docs/operations.md tells operators to run one: a
//! 3-member cluster of the old build under writes and watches has its
//! members replaced by the new build one at a time (SIGTERM, start the new
//! binary on the same data dir and flags, wait until it serves and has
//! caught up, then the next). Nothing acknowledged may be lost, and
//! watchers through all three endpoints (etcdctl 3.5 and Go's clientv3,
//! which reconnect to another member when theirs stops) see every write
//! exactly once, in order.
//!
//! The old build is `HARK_OLD_BIN`: `cargo xtask upgrade` runs this test
//! from two: the commit before the log and peer formats were versioned
//! (the new members rewrite a format-0 log and talk to members that do not
//! know `Envelope.format`), and the last build on openraft 0.9
//! (`HARK_OLD_LOG_FORMAT=1`: its members keep links and know no pre-vote). Without it the test rolls the
//! current build over itself (a rolling restart); `HARK_REQUIRE_UPGRADE=1`
//! makes the old build required.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use etcd_client::{Client, GetOptions};

use common::{
    HARK, assert_saw_every_write, clientv3_watch_events, etcdctl_watch_events, find_on_path,
    free_port, go_clientv3_watcher, logs, ready, spawn_binary, spawn_printing,
};

struct Member {
    client: String,
    args: Vec<String>,
    child: Child,
}

impl Drop for Member {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn old_build() -> Option<PathBuf> {
    match std::env::var_os("HARK_OLD_BIN") {
        Some(path) => Some(PathBuf::from(path)),
        None => {
            assert_ne!(
                std::env::var("HARK_REQUIRE_UPGRADE").as_deref(),
                Ok("1"),
                "HARK_OLD_BIN is not set (cargo xtask upgrade sets it)"
            );
            None
        }
    }
}

/// Waits until the member at `endpoint` has applied `revision`.
async fn caught_up(endpoint: &str, revision: i64, cwd: &Path) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(mut c) = Client::connect([endpoint], None).await
            && let Ok(r) = c
                .get(
                    "w",
                    Some(GetOptions::new().with_serializable().with_count_only()),
                )
                .await
            && r.header().unwrap().revision() >= revision
        {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{endpoint} did not reach {revision}\n{}",
            logs(cwd)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn members_replaced_one_at_a_time_by_the_new_build_lose_nothing() {
    let old = old_build();
    let new = PathBuf::from(HARK);
    let from = old.clone().unwrap_or_else(|| new.clone());
    let cwd = tempfile::tempdir().unwrap();
    let ports: Vec<(u16, u16)> = (0..3).map(|_| (free_port(), free_port())).collect();
    let initial: Vec<String> = ports
        .iter()
        .enumerate()
        .map(|(i, (_, peer))| format!("m{i}=http://127.0.0.1:{peer}"))
        .collect();
    let mut members: Vec<Member> = ports
        .iter()
        .enumerate()
        .map(|(i, (client, peer))| {
            let args: Vec<String> = vec![
                format!("--name=m{i}"),
                format!("--data-dir=m{i}.hark"),
                format!("--listen-client-urls=http://127.0.0.1:{client}"),
                format!("--advertise-client-urls=http://127.0.0.1:{client}"),
                format!("--listen-peer-urls=http://127.0.0.1:{peer}"),
                format!("--initial-advertise-peer-urls=http://127.0.0.1:{peer}"),
                format!("--initial-cluster={}", initial.join(",")),
                "--initial-cluster-token=rolling-upgrade".into(),
                "--heartbeat-interval=50".into(),
                "--election-timeout=500".into(),
            ];
            Member {
                client: format!("http://127.0.0.1:{client}"),
                child: spawn_binary(&from, cwd.path(), &args, &[]),
                args,
            }
        })
        .collect();
    for m in &mut members {
        ready(&m.client, &mut m.child).await;
    }
    let endpoints: Vec<String> = members.iter().map(|m| m.client.clone()).collect();
    // etcdctl's watch asks for a leader (WithRequireLeader) and ends for
    // good on "no leader", as against etcd: each member must know one first.
    for endpoint in &endpoints {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let mut c = etcd_client::Client::connect([endpoint.as_str()], None)
                .await
                .unwrap();
            if c.status().await.is_ok_and(|s| s.leader() != 0) {
                break;
            }
            assert!(Instant::now() < deadline, "{endpoint} knows no leader");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    // Watchers through every endpoint, from before the first write.
    let etcdctl = find_on_path("etcdctl-3.5");
    if etcdctl.is_none() {
        assert_ne!(
            std::env::var("HARK_REQUIRE_ETCDCTL").as_deref(),
            Ok("1"),
            "etcdctl-3.5 is not on PATH"
        );
    }
    let etcdctl_watch = etcdctl.map(|bin| {
        spawn_printing(
            Command::new(bin)
                .args([
                    "--endpoints",
                    &endpoints.join(","),
                    "watch",
                    "--prefix",
                    "w",
                ])
                .args(["--rev", "1", "-w", "json"])
                .stderr(Stdio::null()),
        )
    });
    let go_watch = go_clientv3_watcher().map(|bin| {
        spawn_printing(
            Command::new(bin)
                .args([
                    "-endpoints",
                    &endpoints.join(","),
                    "-prefix",
                    "w",
                    "-rev",
                    "1",
                ])
                .stderr(Stdio::inherit()),
        )
    });

    // Writers on every member until the roll is over.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut writers = Vec::new();
    for w in 0..6 {
        let endpoint = endpoints[w % 3].clone();
        let stop = stop.clone();
        writers.push(tokio::spawn(async move {
            use std::sync::atomic::Ordering::Relaxed;
            let mut acked = Vec::new();
            let mut n = 0;
            while !stop.load(Relaxed) {
                if let Ok(Ok(mut c)) =
                    tokio::time::timeout(Duration::from_secs(2), Client::connect([&endpoint], None))
                        .await
                {
                    while !stop.load(Relaxed) {
                        let key = format!("w{w}-{n}");
                        n += 1;
                        match c.put(key.clone(), "v", None).await {
                            Ok(r) => acked.push((key, r.header().unwrap().revision())),
                            Err(_) => break,
                        }
                    }
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            acked
        }));
    }
    tokio::time::sleep(Duration::from_secs(2)).await;

    // The roll: each member stopped as systemd stops it, then the new build
    // on its data dir, serving and caught up before the next one goes.
    for i in 0..3 {
        let mut c = Client::connect([&endpoints[(i + 1) % 3]], None)
            .await
            .unwrap();
        common::sigterm(&members[i].child);
        let status = common::wait_exit(&mut members[i].child);
        assert!(
            status.success(),
            "m{i} exited {status}\n{}",
            logs(cwd.path())
        );
        let args = members[i].args.clone();
        members[i].child = spawn_binary(&new, cwd.path(), &args, &[]);
        ready(&endpoints[i], &mut members[i].child).await;
        let revision = c.put("w-roll", format!("m{i}"), None).await.unwrap();
        caught_up(
            &endpoints[i],
            revision.header().unwrap().revision(),
            cwd.path(),
        )
        .await;
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut acked = Vec::new();
    for w in writers {
        acked.extend(w.await.unwrap());
    }
    assert!(
        acked.len() > 100,
        "only {} writes acknowledged",
        acked.len()
    );
    let newest = acked.iter().map(|(_, r)| *r).max().unwrap();

    // Every member, now the new build, holds every acknowledged write.
    for e in &endpoints {
        caught_up(e, newest, cwd.path()).await;
        let mut c = Client::connect([e], None).await.unwrap();
        let kvs = c
            .get(
                "w",
                Some(GetOptions::new().with_prefix().with_serializable()),
            )
            .await
            .unwrap();
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

    tokio::time::sleep(Duration::from_secs(2)).await;
    if let Some((mut child, reader)) = etcdctl_watch {
        // etcdctl may be reconnecting after its member was replaced: it is
        // given until it prints the last acknowledged write (or 30 s).
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
    }
    if let Some((mut child, reader)) = go_watch {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the clientv3 watcher exited"
        );
        let _ = child.kill();
        let _ = child.wait();
        let events = clientv3_watch_events(&reader.join());
        assert_saw_every_write("clientv3's watch", &events, &acked);
    }

    // Across the format change, each new member rewrote its old log once.
    let all = logs(cwd.path());
    let rewrites = all
        .matches("rewrote the raft log's entries in the current format")
        .count();
    let old_log_format = std::env::var("HARK_OLD_LOG_FORMAT").unwrap_or_else(|_| "0".into());
    let expected = if old.is_some() && old_log_format == "0" {
        3
    } else {
        0
    };
    assert_eq!(rewrites, expected, "log rewrites\n{all}");
    for m in &mut members {
        common::stop_cleanly(&mut m.child, cwd.path());
    }
}
