//! Migration both ways, with the real tools: a snapshot `etcdctl snapshot
//! save` takes from Hark is read by `etcdutl snapshot status`, restored by
//! `etcdutl snapshot restore` (3.5) and `etcdctl snapshot restore` (3.4), and
//! served by etcd with the same keys, revisions and leases; a snapshot taken
//! from a real etcd 3.5 and 3.4 restores into Hark (`harkctl snapshot
//! restore` and `hark --from-snapshot`) and serves the same data and
//! resumable watches.
//!
//! Needs etcd 3.5.1 as `etcd-3.5` / `etcdctl-3.5` / `etcdutl-3.5` and
//! Debian's 3.4 as `etcd` / `etcdctl` on PATH; with `HARK_REQUIRE_ETCDCTL=1`
//! (CI) a missing one fails the test instead of skipping it.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use etcd_client::{Client, GetOptions, PutOptions, Txn, TxnOp, WatchOptions};

/// The tools, or `None` to skip (a failure when CI requires them).
fn tools(names: &[&str]) -> Option<Vec<PathBuf>> {
    let found: Vec<Option<PathBuf>> = names.iter().map(|n| common::find_on_path(n)).collect();
    if found.iter().all(Option::is_some) {
        return Some(found.into_iter().flatten().collect());
    }
    assert!(
        std::env::var("HARK_REQUIRE_ETCDCTL").as_deref() != Ok("1"),
        "want {names:?} on PATH"
    );
    eprintln!("{names:?} not all on PATH: skipped");
    None
}

/// `cargo test --workspace` builds harkctl beside hark.
fn harkctl() -> PathBuf {
    let path = PathBuf::from(env!("CARGO_BIN_EXE_hark")).with_file_name("harkctl");
    assert!(path.is_file(), "no harkctl at {}", path.display());
    path
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.env("ETCDCTL_API", "3").output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Restores `snapshot` with etcd's `tool` (etcdutl 3.5, etcdctl 3.4) into
/// `data`, as member `m` at `peer`.
fn restore_for_etcd(tool: &Path, snapshot: &Path, data: &Path, peer: &str) {
    run(Command::new(tool).args([
        "snapshot",
        "restore",
        snapshot.to_str().unwrap(),
        "--data-dir",
        data.to_str().unwrap(),
        "--name",
        "m",
        "--initial-cluster",
        &format!("m={peer}"),
        "--initial-advertise-peer-urls",
        peer,
    ]));
}

/// A real etcd on loopback, killed on drop.
struct Etcd {
    child: Child,
    endpoint: String,
}

impl Etcd {
    async fn start(bin: &Path, data_dir: &Path, name: &str) -> Etcd {
        let (client, peer) = (free_port(), free_port());
        let peer_url = format!("http://127.0.0.1:{peer}");
        let endpoint = format!("http://127.0.0.1:{client}");
        let child = Command::new(bin)
            .args([
                "--name",
                name,
                "--data-dir",
                data_dir.to_str().unwrap(),
                "--listen-client-urls",
                &endpoint,
                "--advertise-client-urls",
                &endpoint,
                "--listen-peer-urls",
                &peer_url,
                "--initial-advertise-peer-urls",
                &peer_url,
                "--initial-cluster",
                &format!("{name}={peer_url}"),
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let etcd = Etcd { child, endpoint };
        for _ in 0..200 {
            if let Ok(mut c) = Client::connect([&etcd.endpoint], None).await
                && c.status().await.is_ok()
            {
                return etcd;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("{} did not start", bin.display());
    }
}

impl Drop for Etcd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The same history on any server: puts, a txn of two puts, a delete, a
/// lease with a key, and a compaction at 4. Returns the lease id.
async fn write_history(c: &mut Client) -> i64 {
    c.put("foo", "bar", None).await.unwrap(); // 2
    c.put("foo", "bar2", None).await.unwrap(); // 3
    c.put("baz", "qux", None).await.unwrap(); // 4
    c.put("gone", "x", None).await.unwrap(); // 5
    c.delete("gone", None).await.unwrap(); // 6
    let lease = c.lease_grant(600, None).await.unwrap().id();
    c.put("leased", "v", Some(PutOptions::new().with_lease(lease)))
        .await
        .unwrap(); // 7
    let txn = Txn::new().and_then([TxnOp::put("t1", "a", None), TxnOp::put("t2", "b", None)]);
    c.txn(txn).await.unwrap(); // 8
    c.put("foo", "bar3", None).await.unwrap(); // 9
    c.compact(4, None).await.unwrap();
    lease
}

/// A key-value as read: key, value, create, mod, version, lease.
type Kv = (String, String, i64, i64, i64, i64);

/// What a client sees of a store: keys at several revisions, leases with
/// their granted TTL and keys, the compacted edge.
#[derive(Debug, PartialEq)]
struct View {
    revision: i64,
    at: Vec<(i64, Vec<Kv>)>,
    leases: Vec<(i64, i64, Vec<String>)>,
    below_compaction: String,
}

async fn view(c: &mut Client) -> View {
    let revision = c.get("x", None).await.unwrap().header().unwrap().revision();
    let mut at = Vec::new();
    for rev in [0, 4, 5, 6, 8] {
        let r = c
            .get(
                "",
                Some(GetOptions::new().with_all_keys().with_revision(rev)),
            )
            .await
            .unwrap();
        let kvs = r
            .kvs()
            .iter()
            .map(|kv| {
                (
                    kv.key_str().unwrap().to_string(),
                    kv.value_str().unwrap().to_string(),
                    kv.create_revision(),
                    kv.mod_revision(),
                    kv.version(),
                    kv.lease(),
                )
            })
            .collect();
        at.push((rev, kvs));
    }
    let mut leases = Vec::new();
    for l in c.leases().await.unwrap().leases() {
        let ttl = c
            .lease_time_to_live(
                l.id(),
                Some(etcd_client::LeaseTimeToLiveOptions::new().with_keys()),
            )
            .await
            .unwrap();
        let keys = ttl
            .keys()
            .iter()
            .map(|k| String::from_utf8_lossy(k).into_owned())
            .collect();
        leases.push((l.id(), ttl.granted_ttl(), keys));
    }
    let below_compaction = match c.get("foo", Some(GetOptions::new().with_revision(3))).await {
        Ok(_) => "readable".to_string(),
        Err(e) => e.to_string(),
    };
    View {
        revision,
        at,
        leases,
        below_compaction,
    }
}

/// Every event from `from` on, as (revision, kind, key), until `revision`.
async fn events_from(c: &mut Client, from: i64, revision: i64) -> Vec<(i64, i32, String)> {
    let mut stream = c
        .watch(
            "",
            Some(
                WatchOptions::new()
                    .with_all_keys()
                    .with_start_revision(from),
            ),
        )
        .await
        .unwrap();
    let mut seen = Vec::new();
    while seen.last().is_none_or(|(r, _, _)| *r < revision) {
        let resp = tokio::time::timeout(Duration::from_secs(10), stream.message())
            .await
            .expect("events in time")
            .unwrap()
            .unwrap();
        for e in resp.events() {
            let kv = e.kv().unwrap();
            seen.push((
                kv.mod_revision(),
                e.event_type() as i32,
                kv.key_str().unwrap().to_string(),
            ));
        }
    }
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hark_snapshot_restores_into_etcd_35_and_34() {
    let Some(tools35) = tools(&["etcd-3.5", "etcdctl-3.5", "etcdutl-3.5"]) else {
        return;
    };
    let Some(tools34) = tools(&["etcd", "etcdctl"]) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let hark = common::start(&[]).await;
    let mut c = hark.client().await;
    let lease = write_history(&mut c).await;
    let want = view(&mut c).await;
    assert_eq!(want.revision, 9);
    assert_eq!(want.leases, vec![(lease, 600, vec!["leased".to_string()])]);

    for (etcdctl, label) in [(&tools35[1], "35"), (&tools34[1], "34")] {
        let file = dir.path().join(format!("hark-{label}.db"));
        let out = run(Command::new(etcdctl).args([
            &format!("--endpoints={}", hark.endpoint()),
            "snapshot",
            "save",
            file.to_str().unwrap(),
        ]));
        assert_eq!(out, format!("Snapshot saved at {}\n", file.display()));
    }
    let file = dir.path().join("hark-35.db");
    // etcdutl reads what Hark wrote, and reads it as Hark does.
    let status: serde_json::Value = serde_json::from_str(&run(Command::new(&tools35[2]).args([
        "snapshot",
        "status",
        file.to_str().unwrap(),
        "-w",
        "json",
    ])))
    .unwrap();
    let ours = hark_snapshot::status(&file).unwrap();
    assert_eq!(status["revision"], 9);
    assert_eq!(status["hash"], u64::from(ours.hash));
    assert_eq!(status["totalKey"], ours.total_keys);
    assert_eq!(status["totalSize"], ours.total_size);
    // harkctl prints etcdutl's table and json, byte for byte.
    for format in ["table", "json", "simple"] {
        let args = ["snapshot", "status", file.to_str().unwrap(), "-w", format];
        assert_eq!(
            run(Command::new(harkctl()).args(args)),
            run(Command::new(&tools35[2]).args(args)),
            "snapshot status -w {format}"
        );
    }

    // 3.5's etcdutl and 3.4's etcdctl restore what they saved; etcd serves it.
    let peer = format!("http://127.0.0.1:{}", free_port());
    let restore = |tool: &Path, label: &str| {
        let data = dir.path().join(format!("etcd{label}"));
        restore_for_etcd(
            tool,
            &dir.path().join(format!("hark-{label}.db")),
            &data,
            &peer,
        );
        data
    };
    let restored35 = restore(&tools35[2], "35");
    let restored34 = restore(&tools34[1], "34");
    for (bin, data) in [(&tools35[0], &restored35), (&tools34[0], &restored34)] {
        let etcd = Etcd::start(bin, data, "m").await;
        let mut e = Client::connect([&etcd.endpoint], None).await.unwrap();
        assert_eq!(
            view(&mut e).await,
            want,
            "{} serving Hark's snapshot",
            bin.display()
        );
        assert_eq!(
            events_from(&mut e, 5, 9).await,
            events_from(&mut c, 5, 9).await
        );
        // The same rows hash the same: Hark's HashKV is etcd's.
        for rev in [0, 7] {
            assert_eq!(
                e.hash_kv(rev).await.unwrap().hash(),
                c.hash_kv(rev).await.unwrap().hash(),
                "HashKV({rev}) on {}",
                bin.display()
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_etcd_snapshot_restores_into_hark() {
    let Some(tools35) = tools(&["etcd-3.5", "etcdctl-3.5"]) else {
        return;
    };
    let Some(tools34) = tools(&["etcd", "etcdctl"]) else {
        return;
    };
    let harkctl = harkctl();
    for (etcd_bin, etcdctl, label) in [
        (&tools35[0], &tools35[1], "3.5"),
        (&tools34[0], &tools34[1], "3.4"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let etcd = Etcd::start(etcd_bin, &dir.path().join("etcd"), "e").await;
        let mut e = Client::connect([&etcd.endpoint], None).await.unwrap();
        let lease = write_history(&mut e).await;
        let file = dir.path().join("etcd.db");
        run(Command::new(etcdctl).args([
            &format!("--endpoints={}", etcd.endpoint),
            "snapshot",
            "save",
            file.to_str().unwrap(),
        ]));
        let want = view(&mut e).await;
        assert_eq!(want.leases, vec![(lease, 600, vec!["leased".to_string()])]);
        let want_events = events_from(&mut e, 5, 9).await;

        // `hark --from-snapshot` (in process) on an empty data dir.
        let hark = common::start_in(
            &dir.path().join("hark-a"),
            &[&format!("--from-snapshot={}", file.display())],
        )
        .await;
        let mut h = common::client(&hark.endpoints()[0]).await;
        assert_eq!(
            view(&mut h).await,
            want,
            "etcd {label} snapshot via --from-snapshot"
        );
        assert_eq!(events_from(&mut h, 5, 9).await, want_events);
        assert_eq!(
            h.hash_kv(0).await.unwrap().hash(),
            e.hash_kv(0).await.unwrap().hash(),
            "HashKV of etcd {label}'s history"
        );
        // The restored store goes on from the restored revision.
        let next = h.put("after", "1", None).await.unwrap();
        assert_eq!(next.header().unwrap().revision(), 10);
        drop(h);
        hark.shutdown().await;
        // Started again with the same flag, the store is kept, not restored over.
        let hark = common::start_in(
            &dir.path().join("hark-a"),
            &[&format!("--from-snapshot={}", file.display())],
        )
        .await;
        let mut h = common::client(&hark.endpoints()[0]).await;
        assert_eq!(h.get("after", None).await.unwrap().kvs().len(), 1);
        drop(h);
        hark.shutdown().await;

        // `harkctl snapshot restore`, then a plain start.
        {
            let target = dir.path().join("hark-b");
            run(Command::new(&harkctl).args([
                "snapshot",
                "restore",
                file.to_str().unwrap(),
                "--data-dir",
                target.to_str().unwrap(),
            ]));
            let hark = common::start_in(&target, &[]).await;
            let mut h = common::client(&hark.endpoints()[0]).await;
            assert_eq!(
                view(&mut h).await,
                want,
                "etcd {label} snapshot via harkctl"
            );
            hark.shutdown().await;
        }
    }
}

#[tokio::test]
async fn a_damaged_or_truncated_snapshot_is_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let srv = common::start(&[]).await;
    let mut c = srv.client().await;
    for i in 0..100 {
        c.put(format!("k{i}"), vec![b'v'; 300], None).await.unwrap();
    }
    let file = dir.path().join("s.db");
    let member = hark_snapshot::Member {
        id: 1,
        name: "n".into(),
        peer_urls: vec![],
        client_urls: vec![],
    };
    hark_snapshot::save(srv.server.node().store(), &member, &file).unwrap();
    let bytes = std::fs::read(&file).unwrap();
    let target = dir.path().join("restored");
    let opts = hark_snapshot::RestoreOptions::default();

    let truncated = dir.path().join("truncated.db");
    std::fs::write(&truncated, &bytes[..bytes.len() - 1000]).unwrap();
    let err = hark_snapshot::restore(&truncated, &target, &opts).unwrap_err();
    assert_eq!(
        err.to_string(),
        "snapshot missing hash but --skip-hash-check=false"
    );
    assert!(!target.exists());

    let mut flipped = bytes.clone();
    flipped[3 * 4096 + 100] ^= 0xff;
    let damaged = dir.path().join("damaged.db");
    std::fs::write(&damaged, &flipped).unwrap();
    let err = hark_snapshot::restore(&damaged, &target, &opts).unwrap_err();
    assert!(err.to_string().starts_with("expected sha256 "), "{err}");
    assert!(!target.exists());

    let garbage = dir.path().join("garbage.db");
    std::fs::write(&garbage, vec![7u8; 4096 * 4 + 32]).unwrap();
    let skip = hark_snapshot::RestoreOptions {
        skip_hash_check: true,
        ..Default::default()
    };
    let err = hark_snapshot::restore(&garbage, &target, &skip).unwrap_err();
    assert!(err.to_string().starts_with("not a bbolt database"), "{err}");
    assert!(!target.exists());

    // Nothing of the failed restores is left beside the files: no data dir,
    // no readable copy.
    let mut left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["damaged.db", "garbage.db", "s.db", "truncated.db"]);

    // The good file restores; a second restore into the same dir is refused.
    let restored = hark_snapshot::restore(&file, &target, &opts).unwrap();
    assert_eq!(restored.revision, 101);
    let again = hark_snapshot::restore(&file, &target, &opts).unwrap_err();
    assert!(matches!(again, hark_snapshot::Error::DataDirExists(_)));
}

/// The scheduled backups of one member: the names in `dir`, oldest first.
fn scheduled_backups(dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    found.retain(|p| {
        let name = p.file_name().unwrap().to_string_lossy();
        name.starts_with("default-") && name.ends_with(".db")
    });
    found.sort();
    found
}

/// `--snapshot-schedule`: backups every second into `--snapshot-dir`, the
/// oldest removed past `--snapshot-retention`, and the newest is an etcd
/// snapshot that etcdutl restores and etcd 3.5 serves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scheduled_backups_keep_the_retention_and_restore_into_etcd() {
    let Some(tools35) = tools(&["etcd-3.5", "etcdutl-3.5"]) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let backups = dir.path().join("backups");
    let hark = common::start(&[
        "--snapshot-schedule",
        "1s",
        "--snapshot-retention",
        "2",
        "--snapshot-dir",
        backups.to_str().unwrap(),
    ])
    .await;
    let mut c = hark.client().await;
    let mut revision = 0;
    for i in 0..10 {
        revision = c
            .put(format!("k{i}"), format!("v{i}"), None)
            .await
            .unwrap()
            .header()
            .unwrap()
            .revision();
    }
    // Every backup seen, until three were taken and one holds every write.
    let mut seen = std::collections::BTreeSet::new();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let newest = loop {
        let now = scheduled_backups(&backups);
        assert!(
            now.len() <= 3,
            "more than the retention (and one being pruned): {now:?}"
        );
        seen.extend(now.iter().cloned());
        if let Some(newest) = now.last()
            && seen.len() >= 3
            && hark_snapshot::status(newest).is_ok_and(|s| s.revision >= revision)
        {
            break newest.clone();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "backups seen: {seen:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    hark.server.shutdown().await;
    // A backup under way at shutdown finishes on its thread.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let left = scheduled_backups(&backups);
    assert_eq!(left.len(), 2, "{left:?} of {seen:?}");
    assert!(left.contains(&newest) || left[0] > newest, "{left:?}");
    assert!(
        seen.iter().take(seen.len() - 2).all(|old| !old.exists()),
        "older backups left behind: {seen:?}"
    );

    let peer = format!("http://127.0.0.1:{}", free_port());
    let data = dir.path().join("etcd");
    restore_for_etcd(&tools35[1], &newest, &data, &peer);
    let etcd = Etcd::start(&tools35[0], &data, "m").await;
    let mut e = Client::connect([&etcd.endpoint], None).await.unwrap();
    let got = e
        .get("k", Some(GetOptions::new().with_prefix()))
        .await
        .unwrap();
    assert_eq!(got.header().unwrap().revision(), revision);
    let kvs: Vec<(String, String)> = got
        .kvs()
        .iter()
        .map(|kv| {
            (
                kv.key_str().unwrap().to_string(),
                kv.value_str().unwrap().to_string(),
            )
        })
        .collect();
    let want: Vec<(String, String)> = (0..10)
        .map(|i| (format!("k{i}"), format!("v{i}")))
        .collect();
    let mut want = want;
    want.sort();
    assert_eq!(kvs, want);
}

/// `--from-snapshot` into an empty data dir with a separate `--wal-dir`
/// that still holds the old log: refused, as etcdutl refuses it (the old
/// log would be applied again over the restored store), and nothing is
/// restored; with an empty `--wal-dir` the same start restores.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restore_refuses_a_wal_dir_that_holds_a_log() {
    let dir = tempfile::tempdir().unwrap();
    let wal = dir.path().join("wal");
    let wal_flag = format!("--wal-dir={}", wal.display());
    let saved = dir.path().join("saved.db");
    {
        let hark = common::start_in(&dir.path().join("old"), &[&wal_flag]).await;
        let mut c = common::client(&hark.endpoints()[0]).await;
        c.put("k", "a", None).await.unwrap();
        run(Command::new(harkctl()).args([
            &format!("--endpoints={}", hark.endpoints()[0]),
            "snapshot",
            "save",
            saved.to_str().unwrap(),
        ]));
        c.put("k", "b", None).await.unwrap();
        drop(c);
        hark.shutdown().await;
    }
    let fresh = dir.path().join("fresh");
    let args = [
        "hark".to_string(),
        "--listen-client-urls=http://127.0.0.1:0".to_string(),
        "--listen-peer-urls=http://127.0.0.1:0".to_string(),
        format!("--data-dir={}", fresh.display()),
        wal_flag.clone(),
        format!("--from-snapshot={}", saved.display()),
    ];
    let config = <hark_server::Config as clap::Parser>::try_parse_from(&args).unwrap();
    let err = match hark_server::start(&config).await {
        Ok(_) => panic!("a restore over a wal-dir holding a log started"),
        Err(e) => e,
    };
    assert!(
        err.starts_with(&format!(
            "wal-dir {:?} not empty",
            wal.display().to_string()
        )),
        "{err}"
    );
    assert!(
        std::fs::read_dir(&fresh).map_or(true, |mut e| e.next().is_none()),
        "nothing restored"
    );
    // An empty wal dir: the snapshot's revision is what is served.
    std::fs::remove_dir_all(&wal).unwrap();
    std::fs::create_dir(&wal).unwrap();
    let hark = common::start_in(
        &fresh,
        &[&wal_flag, &format!("--from-snapshot={}", saved.display())],
    )
    .await;
    let mut c = common::client(&hark.endpoints()[0]).await;
    let got = c.get("k", None).await.unwrap();
    assert_eq!(got.kvs()[0].value(), b"a");
    drop(c);
    hark.shutdown().await;
}
