//! The `hark` binary as a child process: defaults, flags from the
//! environment, clean exit on SIGTERM, systemd's readiness notification and
//! unit, and a kill -9 under write load that loses no acknowledged write,
//! with a watch resumed after the restart seeing every event exactly once.

mod common;

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use etcd_client::{EventType, GetOptions, WatchOptions};
use parking_lot::Mutex;

use common::{free_port, logs, ready, spawn, spawn_exactly, stop_cleanly, wait_exit};

// Multi-threaded throughout: the tests block a thread waiting for the child,
// and the client's connection must stay responsive meanwhile (a server that
// shuts down gracefully waits for its clients to acknowledge the GOAWAY).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flags_from_the_environment_and_a_clean_exit_on_sigterm() {
    let cwd = tempfile::tempdir().unwrap();
    let port = free_port();
    let endpoint = format!("http://127.0.0.1:{port}");
    let env = [
        ("HARK_NAME", "from-env".to_string()),
        ("HARK_LISTEN_CLIENT_URLS", endpoint.clone()),
        ("HARK_LOG_FORMAT", "json".to_string()),
    ];
    let mut child = spawn(cwd.path(), &[], &env);
    let mut c = ready(&endpoint, &mut child).await;
    let members = c.member_list().await.unwrap();
    assert_eq!(members.members()[0].name(), "from-env");
    assert!(
        cwd.path().join("from-env.hark").is_dir(),
        "data dir defaults to <name>.hark"
    );
    c.put("kept", "yes", None).await.unwrap();
    // A watch stream in flight must not hold the shutdown up.
    let mut w = c.watch("kept", None).await.unwrap();
    assert!(w.message().await.unwrap().unwrap().created());
    stop_cleanly(&mut child, cwd.path());
    drop((w, c));

    let args = vec![
        "--name=from-env".to_string(),
        format!("--listen-client-urls={endpoint}"),
    ];
    let mut child = spawn(cwd.path(), &args, &[]);
    let mut c = ready(&endpoint, &mut child).await;
    assert_eq!(c.get("kept", None).await.unwrap().kvs()[0].value(), b"yes");
    stop_cleanly(&mut child, cwd.path());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_no_flags_it_serves_on_2379_from_default_hark() {
    let cwd = tempfile::tempdir().unwrap();
    let mut child = spawn_exactly(cwd.path(), &[], &[]);
    let mut c = ready("http://127.0.0.1:2379", &mut child).await;
    c.put("k", "v", None).await.unwrap();
    assert!(cwd.path().join("default.hark").is_dir());
    // A cluster of one on etcd's default peer URL, with etcd's default ids.
    let members = c.member_list().await.unwrap();
    let header = members.header().unwrap();
    assert_eq!(format!("{:x}", header.member_id()), "8e9e05c52164694d");
    assert_eq!(format!("{:x}", header.cluster_id()), "cdf818194e3a8c32");
    assert_eq!(members.members()[0].peer_urls(), ["http://localhost:2380"]);
    stop_cleanly(&mut child, cwd.path());
}

#[test]
fn a_taken_port_fails_the_start_before_the_data_dir_is_opened() {
    let cwd = tempfile::tempdir().unwrap();
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", taken.local_addr().unwrap());
    let args = vec![
        "--name=second".to_string(),
        format!("--listen-client-urls={url}"),
    ];
    let mut child = spawn(cwd.path(), &args, &[]);
    let status = wait_exit(&mut child);
    // Exit status 1, not a signal: the process used to crash on its way out
    // with the store's threads still running.
    assert_eq!(status.code(), Some(1), "{status}\n{}", logs(cwd.path()));
    assert!(logs(cwd.path()).contains("cannot listen on"));
    assert!(
        !cwd.path().join("second.hark").exists(),
        "the store was opened although the server could not listen"
    );
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    revision: i64,
    key: String,
    kind: EventType,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn kill_9_under_write_load_loses_no_acknowledged_write() {
    kill_9_under_write_load_on("rocksdb").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn kill_9_under_write_load_loses_no_acknowledged_write_on_fjall() {
    kill_9_under_write_load_on("fjall").await;
}

async fn kill_9_under_write_load_on(backend: &str) {
    let cwd = tempfile::tempdir().unwrap();
    let port = free_port();
    let endpoint = format!("http://127.0.0.1:{port}");
    let args = vec![
        format!("--listen-client-urls={endpoint}"),
        "--data-dir=data".to_string(),
        format!("--backend={backend}"),
    ];
    let mut child = spawn(cwd.path(), &args, &[]);
    let mut c = ready(&endpoint, &mut child).await;

    // A watcher over everything the writers write.
    let mut w = c
        .watch("load/", Some(WatchOptions::new().with_prefix()))
        .await
        .unwrap();
    assert!(w.message().await.unwrap().unwrap().created());
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let watcher = {
        let seen = seen.clone();
        tokio::spawn(async move {
            while let Ok(Some(r)) = w.message().await {
                for e in r.events() {
                    let kv = e.kv().unwrap();
                    seen.lock().push(Seen {
                        revision: kv.mod_revision(),
                        key: kv.key_str().unwrap().to_string(),
                        kind: e.event_type(),
                    });
                }
            }
        })
    };

    // Writers record each acknowledged put until the connection dies.
    let acked: Arc<Mutex<BTreeMap<String, (String, i64)>>> = Arc::default();
    let mut writers = Vec::new();
    for wid in 0..8 {
        let mut c = c.clone();
        let acked = acked.clone();
        writers.push(tokio::spawn(async move {
            for i in 0.. {
                let key = format!("load/{wid}/{i}");
                let value = format!("v{wid}-{i}");
                match c.put(key.clone(), value.clone(), None).await {
                    Ok(r) => {
                        acked
                            .lock()
                            .insert(key, (value, r.header().unwrap().revision()));
                    }
                    Err(_) => return,
                }
            }
        }));
    }
    // Let the load run, then kill -9 mid-write.
    let deadline = Instant::now() + Duration::from_secs(20);
    while acked.lock().len() < 300 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    child.kill().unwrap();
    child.wait().unwrap();
    for w in writers {
        w.await.unwrap();
    }
    watcher.await.unwrap();
    let acked = acked.lock().clone();
    let before_kill = seen.lock().clone();
    assert!(
        acked.len() >= 300,
        "only {} writes acknowledged",
        acked.len()
    );

    let mut child = spawn(cwd.path(), &args, &[]);
    let mut c = ready(&endpoint, &mut child).await;
    let current = c.status().await.unwrap().header().unwrap().revision();
    for (key, (value, rev)) in &acked {
        let r = c.get(key.as_str(), None).await.unwrap();
        let kv = r
            .kvs()
            .first()
            .unwrap_or_else(|| panic!("acknowledged {key} lost"));
        assert_eq!(
            (kv.value_str().unwrap(), kv.mod_revision()),
            (value.as_str(), *rev)
        );
    }

    // Resume the watch from the revision after the last event it saw.
    let resume_from = before_kill.last().map_or(2, |s| s.revision + 1);
    let mut w = c
        .watch(
            "load/",
            Some(
                WatchOptions::new()
                    .with_prefix()
                    .with_start_revision(resume_from),
            ),
        )
        .await
        .unwrap();
    assert!(w.message().await.unwrap().unwrap().created());
    let mut all = before_kill.clone();
    while all.last().map_or(1, |s| s.revision) < current {
        let r = tokio::time::timeout(Duration::from_secs(30), w.message())
            .await
            .expect("resumed events in time")
            .unwrap()
            .unwrap();
        for e in r.events() {
            let kv = e.kv().unwrap();
            all.push(Seen {
                revision: kv.mod_revision(),
                key: kv.key_str().unwrap().to_string(),
                kind: e.event_type(),
            });
        }
    }
    // Every put is one revision: revisions 2..=current, each exactly once, in order.
    let revisions: Vec<i64> = all.iter().map(|s| s.revision).collect();
    let expected: Vec<i64> = (2..=current).collect();
    assert_eq!(
        revisions, expected,
        "events lost, repeated or out of order across the restart"
    );
    assert!(all.iter().all(|s| s.kind == EventType::Put));
    for (key, (_, rev)) in &acked {
        assert_eq!(&all[(*rev - 2) as usize].key, key);
    }
    // The history after the restart agrees with what the watcher saw before it.
    let r = c
        .get(
            "load/",
            Some(GetOptions::new().with_prefix().with_count_only()),
        )
        .await
        .unwrap();
    assert_eq!(r.count() as usize, all.len());
    stop_cleanly(&mut child, cwd.path());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_data_dir_is_opened_only_by_the_backend_that_wrote_it() {
    let cwd = tempfile::tempdir().unwrap();
    let endpoint = format!("http://127.0.0.1:{}", free_port());
    let args = |backend: &str| {
        vec![
            format!("--listen-client-urls={endpoint}"),
            "--data-dir=data".to_string(),
            format!("--backend={backend}"),
        ]
    };
    let mut child = spawn(cwd.path(), &args("fjall"), &[]);
    let mut c = ready(&endpoint, &mut child).await;
    c.put("k", "on fjall", None).await.unwrap();
    stop_cleanly(&mut child, cwd.path());

    // RocksDB would start an empty store beside fjall's files: refused.
    let mut child = spawn(cwd.path(), &args("rocksdb"), &[]);
    let status = wait_exit(&mut child);
    assert!(!status.success());
    let logs = logs(cwd.path());
    assert!(
        logs.contains("holds a fjall store, not a rocksdb one"),
        "{logs}"
    );

    let mut child = spawn(cwd.path(), &args("fjall"), &[]);
    let mut c = ready(&endpoint, &mut child).await;
    let got = c.get("k", None).await.unwrap();
    assert_eq!(got.kvs()[0].value_str().unwrap(), "on fjall");
    stop_cleanly(&mut child, cwd.path());
}

#[test]
fn version_names_the_build_and_the_etcd_api() {
    let out = Command::new(common::HARK)
        .arg("--version")
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with(&format!("hark {}\n", hark_server::HARK_VERSION))
            && text.contains(&format!("\netcd Version: {}\n", hark_server::ETCD_VERSION))
            && text.contains(&format!("Git SHA: {}\n", hark_server::GIT_COMMIT))
            && text.contains(&format!("etcd API version: {}", hark_server::ETCD_VERSION)),
        "{text}"
    );
    assert!(
        hark_server::GIT_COMMIT.len() == 12 || hark_server::GIT_COMMIT == "unknown",
        "{}",
        hark_server::GIT_COMMIT
    );
}

/// systemd's `Type=notify`, as `contrib/systemd/hark.service` asks for it:
/// `READY=1` reaches `NOTIFY_SOCKET` once the member serves, `STOPPING=1`
/// when SIGTERM begins the shutdown.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readiness_and_stopping_are_told_to_systemd_on_notify_socket() {
    use std::os::unix::net::UnixDatagram;
    let cwd = tempfile::tempdir().unwrap();
    let socket_path = cwd.path().join("notify.sock");
    let socket = UnixDatagram::bind(&socket_path).unwrap();
    socket
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let endpoint = format!("http://127.0.0.1:{}", free_port());
    let env = [("NOTIFY_SOCKET", socket_path.display().to_string())];
    let mut child = spawn(
        cwd.path(),
        &[format!("--listen-client-urls={endpoint}")],
        &env,
    );
    let mut message = [0u8; 256];
    let n = socket
        .recv(&mut message)
        .unwrap_or_else(|e| panic!("no notification: {e}\n{}", logs(cwd.path())));
    assert_eq!(&message[..n], b"READY=1\n");
    // Ready means serving: a read is answered at once.
    let mut c = etcd_client::Client::connect([&endpoint], None)
        .await
        .unwrap();
    c.get("any", None).await.unwrap();
    drop(c);
    common::sigterm(&child);
    let n = socket.recv(&mut message).unwrap();
    assert_eq!(&message[..n], b"STOPPING=1\n");
    assert!(wait_exit(&mut child).success(), "{}", logs(cwd.path()));
}

/// The systemd unit shipped in `contrib/` passes `systemd-analyze verify`
/// (with `ExecStart` pointed at this build) and is a `Type=notify` unit
/// reading `/etc/default/hark`, whose example settings `hark` accepts.
#[test]
fn the_systemd_unit_verifies_and_its_environment_file_starts_hark() {
    let contrib = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("contrib");
    let unit = std::fs::read_to_string(contrib.join("systemd/hark.service")).unwrap();
    for line in [
        "Type=notify",
        "EnvironmentFile=-/etc/default/hark",
        "ExecStart=/usr/bin/hark",
        "UMask=0077",
        "NoNewPrivileges=yes",
        "ProtectSystem=strict",
        "ReadWritePaths=/var/lib/hark",
    ] {
        assert!(unit.lines().any(|l| l == line), "{line}");
    }
    let defaults = std::fs::read_to_string(contrib.join("default/hark")).unwrap();
    let settings: Vec<(String, String)> = defaults
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let (k, v) = l.split_once('=').unwrap();
            (k.to_string(), v.to_string())
        })
        .collect();
    assert!(settings.iter().all(|(k, _)| k.starts_with("ETCD_")));
    match common::find_on_path("systemd-analyze") {
        Some(analyze) => {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("hark.service");
            std::fs::write(
                &path,
                unit.replace(
                    "ExecStart=/usr/bin/hark",
                    &format!("ExecStart={}", common::HARK),
                ),
            )
            .unwrap();
            let out = Command::new(analyze)
                .arg("verify")
                .arg(&path)
                .output()
                .unwrap();
            let said = String::from_utf8_lossy(&out.stderr).into_owned()
                + &String::from_utf8_lossy(&out.stdout);
            // Outside a booted systemd it may still note the missing
            // `hark` user and the absent service manager; any complaint
            // about the unit itself fails.
            let about_unit: Vec<&str> = said
                .lines()
                .filter(|l| l.contains("hark.service:"))
                .collect();
            assert!(about_unit.is_empty(), "{said}");
        }
        None => eprintln!("no systemd-analyze on PATH: the unit's syntax is not checked"),
    }
    // hark starts from the example environment (its own ports and data
    // dir in place of the example's): every variable names a flag.
    let cwd = tempfile::tempdir().unwrap();
    let data = cwd.path().join("data");
    let mut env: Vec<(&str, String)> = settings
        .iter()
        .filter(|(k, _)| k != "ETCD_DATA_DIR" && !k.contains("_URLS"))
        .map(|(k, v)| (k.as_str(), v.clone()))
        .collect();
    env.push(("ETCD_DATA_DIR", data.display().to_string()));
    let endpoint = format!("http://127.0.0.1:{}", free_port());
    env.push(("ETCD_LISTEN_CLIENT_URLS", endpoint.clone()));
    let mut child = spawn_exactly(
        cwd.path(),
        &["--listen-peer-urls=http://127.0.0.1:0".to_string()],
        &env,
    );
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let mut c = ready(&endpoint, &mut child).await;
        assert_eq!(
            c.member_list().await.unwrap().members()[0].name(),
            "default"
        );
    });
    stop_cleanly(&mut child, cwd.path());
    assert!(data.is_dir());
    assert!(!logs(cwd.path()).contains("unrecognized environment variable"));
}

/// Nothing the member writes can be read by another user: its data dir,
/// `--wal-dir` and backup dir are 0700, every file in them 0600 (both
/// backends, the raft log, its snapshots, the backups), and `harkctl
/// snapshot save` writes 0600, as etcd and etcdctl do. Checked by mode and
/// by reading as uid 65534 (setpriv), from a parent anyone may enter.
#[test]
fn nothing_a_member_writes_is_readable_by_another_user() {
    use std::os::unix::fs::PermissionsExt;
    // Reading as another user takes root.
    if !running_as_root("the file-privacy test") {
        return;
    }
    let setpriv = common::find_on_path("setpriv").expect("setpriv (util-linux) on PATH");
    let rt = tokio::runtime::Runtime::new().unwrap();
    for backend in ["rocksdb", "fjall"] {
        let cwd = tempfile::tempdir().unwrap();
        // The test dir itself is open to all: only hark's own modes protect.
        std::fs::set_permissions(cwd.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let (data, wal) = (cwd.path().join("data"), cwd.path().join("wal"));
        let endpoint = format!("http://127.0.0.1:{}", free_port());
        let args = [
            format!("--backend={backend}"),
            format!("--data-dir={}", data.display()),
            format!("--wal-dir={}", wal.display()),
            format!("--listen-client-urls={endpoint}"),
            "--listen-peer-urls=http://127.0.0.1:0".to_string(),
            // A raft snapshot and a backup are written during the test.
            "--snapshot-count=20".to_string(),
            "--snapshot-schedule=1s".to_string(),
        ];
        let mut child = spawn(cwd.path(), &args, &[]);
        let saved = cwd.path().join("saved.db");
        rt.block_on(async {
            let mut c = ready(&endpoint, &mut child).await;
            for i in 0..50 {
                c.put(format!("k{i}"), "the-secret-value", None)
                    .await
                    .unwrap();
            }
            c.user_add("alice", "the-secret-password", None)
                .await
                .unwrap();
            tokio::time::sleep(Duration::from_millis(1500)).await;
        });
        let harkctl = std::path::PathBuf::from(common::HARK).with_file_name("harkctl");
        let out = Command::new(&harkctl)
            .args([&format!("--endpoints={endpoint}"), "snapshot", "save"])
            .arg(&saved)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        stop_cleanly(&mut child, cwd.path());

        let mut files = 0;
        let mut walk = vec![data.clone(), wal.clone()];
        while let Some(dir) = walk.pop() {
            let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o700, "{} on {backend}", dir.display());
            for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                let meta = std::fs::symlink_metadata(entry.path()).unwrap();
                if meta.is_dir() {
                    walk.push(entry.path());
                } else if meta.is_file() {
                    files += 1;
                    let mode = meta.permissions().mode() & 0o777;
                    assert_eq!(mode, 0o600, "{} on {backend}", entry.path().display());
                }
            }
        }
        assert!(files > 10, "{files} files under the data and wal dirs");
        let backups = data.join("backups");
        assert!(
            std::fs::read_dir(&backups).is_ok_and(|mut e| e.next().is_some()),
            "a backup was taken into {}",
            backups.display()
        );
        let mode = std::fs::metadata(&saved).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "harkctl snapshot save's file");

        // As another user: nothing found, every read refused.
        let nobody = |args: &[&std::ffi::OsStr]| {
            Command::new(&setpriv)
                .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
                .args(args)
                .output()
                .unwrap()
        };
        for secret in ["the-secret-value", "alice"] {
            let found = nobody(&[
                "grep".as_ref(),
                "-rl".as_ref(),
                secret.as_ref(),
                data.as_os_str(),
                wal.as_os_str(),
                saved.as_os_str(),
            ]);
            assert!(
                found.stdout.is_empty(),
                "uid 65534 read {secret} in {}",
                String::from_utf8_lossy(&found.stdout)
            );
            let err = String::from_utf8_lossy(&found.stderr);
            assert!(err.contains("Permission denied"), "{err}");
        }
        // The same search as the owner finds the secret: the check can fail.
        let owner = Command::new("grep")
            .args(["-rlq", "the-secret-value"])
            .arg(&data)
            .arg(&wal)
            .status()
            .unwrap();
        assert!(owner.success(), "the owner finds the value on {backend}");
    }
}

/// Runs `hark` in `cwd` with `args`, calls `once_serving`, then writes 64
/// KiB values until the process exits by itself; its exit status and log.
/// Puts that fail meanwhile are expected (the member is failing). The
/// values are pseudo-random: RocksDB compresses its tables (LZ4), and with
/// memtables flushed early a repeated byte would never fill the disk.
fn write_until_it_exits(
    cwd: &std::path::Path,
    args: &[String],
    once_serving: &dyn Fn(),
) -> (std::process::ExitStatus, String) {
    let endpoint = format!("http://127.0.0.1:{}", free_port());
    let mut args = args.to_vec();
    args.push(format!("--listen-client-urls={endpoint}"));
    args.push("--listen-peer-urls=http://127.0.0.1:0".to_string());
    let mut child = spawn(cwd, &args, &[]);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = rt.block_on(async {
        let mut c = ready(&endpoint, &mut child).await;
        once_serving();
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut i = 0u64;
        loop {
            // xorshift64: incompressible enough, and cheap.
            let value: Vec<u8> = (0..64 * 1024 / 8)
                .flat_map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    state.to_le_bytes()
                })
                .collect();
            if let Some(status) = child.try_wait().unwrap() {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "the member did not exit after its fatal error\n{}",
                logs(cwd)
            );
            let put = c.put(format!("k{}", i % 1000), value, None);
            let _ = tokio::time::timeout(Duration::from_millis(500), put).await;
            i += 1;
        }
    });
    (status, logs(cwd))
}

/// A member whose replicated log stops on a fatal error ends its process
/// with a failure (as etcd exits), so that systemd's Restart=on-failure
/// restarts it: here its disk fills up (a 128 MiB tmpfs data dir), and
/// the apply or the log append fails with ENOSPC. Before, the listeners
/// stayed up answering nothing.
#[test]
fn a_full_disk_ends_the_process_with_a_failure() {
    // Mounting a tmpfs takes root.
    if !running_as_root("the full-disk test") {
        return;
    }
    let cwd = tempfile::tempdir().unwrap();
    let data = cwd.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=128m", "tmpfs"])
        .arg(&data)
        .status()
        .unwrap();
    assert!(mounted.success(), "mount a tmpfs");
    let outcome = std::panic::catch_unwind(|| {
        write_until_it_exits(
            cwd.path(),
            &[format!("--data-dir={}", data.display())],
            &|| {},
        )
    });
    let _ = Command::new("umount").arg("-l").arg(&data).status();
    let (status, log) = outcome.unwrap();
    assert_eq!(status.code(), Some(1), "{status}\n{log}");
    assert!(
        log.contains("the replicated log stopped on a fatal error"),
        "{log}"
    );
    assert!(log.contains("hark stopped"), "shut down in order: {log}");
}

/// The same when a raft snapshot cannot be built: once the member serves,
/// its snapshot directory is replaced by a file, and the next snapshot, due
/// after 10 entries, fails.
#[test]
fn a_snapshot_that_cannot_be_built_ends_the_process_with_a_failure() {
    let cwd = tempfile::tempdir().unwrap();
    let data = cwd.path().join("data");
    let snapshots = data.join("raft").join("snapshots");
    let break_snapshots = || {
        std::fs::remove_dir_all(&snapshots).unwrap();
        std::fs::write(&snapshots, b"not a directory").unwrap();
    };
    let (status, log) = write_until_it_exits(
        cwd.path(),
        &[
            format!("--data-dir={}", data.display()),
            "--snapshot-count=10".to_string(),
        ],
        &break_snapshots,
    );
    assert_eq!(status.code(), Some(1), "{status}\n{log}");
    assert!(
        log.contains("the replicated log stopped on a fatal error"),
        "{log}"
    );
}

/// `READY=1` waits for the member to serve: one member of a three-member
/// `--initial-cluster` started alone (no quorum, no leader) tells systemd
/// nothing; once a second member starts, a leader is elected, the first
/// publishes itself and only then notifies, and a read is answered at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ready_is_told_only_once_the_member_has_joined_a_quorum() {
    use std::os::unix::net::UnixDatagram;
    let cwd = tempfile::tempdir().unwrap();
    let socket_path = cwd.path().join("notify.sock");
    let socket = UnixDatagram::bind(&socket_path).unwrap();
    let ports: Vec<(u16, u16)> = (0..3).map(|_| (free_port(), free_port())).collect();
    let initial: Vec<String> = ports
        .iter()
        .enumerate()
        .map(|(i, (_, peer))| format!("m{i}=http://127.0.0.1:{peer}"))
        .collect();
    let member = |i: usize| -> Vec<String> {
        let (client, peer) = ports[i];
        vec![
            format!("--name=m{i}"),
            format!("--data-dir=m{i}.hark"),
            format!("--listen-client-urls=http://127.0.0.1:{client}"),
            format!("--listen-peer-urls=http://127.0.0.1:{peer}"),
            format!("--initial-advertise-peer-urls=http://127.0.0.1:{peer}"),
            format!("--initial-cluster={}", initial.join(",")),
            "--initial-cluster-state=new".to_string(),
            "--heartbeat-interval=50".to_string(),
            "--election-timeout=500".to_string(),
        ]
    };
    let env = [("NOTIFY_SOCKET", socket_path.display().to_string())];
    let mut first = spawn(cwd.path(), &member(0), &env);
    // Ten election timeouts alone: nothing may be told.
    socket
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut message = [0u8; 256];
    match socket.recv(&mut message) {
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
        other => panic!(
            "told systemd without a quorum: {:?}\n{}",
            other.map(|n| String::from_utf8_lossy(&message[..n]).into_owned()),
            logs(cwd.path())
        ),
    }
    assert!(first.try_wait().unwrap().is_none(), "m0 still runs");
    let mut second = spawn(cwd.path(), &member(1), &[]);
    socket
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let n = socket
        .recv(&mut message)
        .unwrap_or_else(|e| panic!("no READY once a quorum formed: {e}\n{}", logs(cwd.path())));
    assert_eq!(&message[..n], b"READY=1\n");
    let endpoint = format!("http://127.0.0.1:{}", ports[0].0);
    let mut c = tokio::time::timeout(
        Duration::from_secs(5),
        etcd_client::Client::connect([&endpoint], None),
    )
    .await
    .expect("connects at once")
    .unwrap();
    let members = c.member_list().await.unwrap();
    let me = members.members().iter().find(|m| m.name() == "m0").unwrap();
    assert_eq!(me.client_urls(), [endpoint], "published before READY");
    drop(c);
    // etcd's /health: a linearizable read (with a leader) unless
    // `?serializable=true` asks about this member alone.
    let addr: std::net::SocketAddr = format!("127.0.0.1:{}", ports[0].0).parse().unwrap();
    let health =
        move |path: &'static str| tokio::task::spawn_blocking(move || common::http_get(addr, path));
    assert_eq!(health("/health").await.unwrap().0, 200);
    stop_cleanly(&mut second, cwd.path());
    // Alone again: no quorum confirms a read, so the cluster is unhealthy
    // from here, while the member itself still answers.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let (code, body) = health("/health").await.unwrap();
        if code == 503 {
            assert!(
                body.contains("RAFT NO LEADER") || body.contains("RANGE ERROR"),
                "{body}"
            );
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "healthy without a quorum: {code} {body}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let (code, body) = health("/health?serializable=true").await.unwrap();
    assert_eq!(code, 200, "{body}");
    common::sigterm(&first);
    let _ = wait_exit(&mut first);
}

/// `--force-new-cluster` left set on a member already alone drops nothing
/// acknowledged, however often it is given: each cycle writes, loses power
/// mid-write (`HARK_SIMULATE_POWER_LOSS=1`: what was not synced dies with
/// the SIGKILL) and restarts with the flag. Before, the commit hint and the
/// store's position, saved lazily, lagged the durable log, and the forced
/// start cut the log back to them, acknowledged entries included.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn force_new_cluster_left_set_drops_no_acknowledged_write_after_power_loss() {
    let cwd = tempfile::tempdir().unwrap();
    let endpoint = format!("http://127.0.0.1:{}", free_port());
    let args = [
        format!("--listen-client-urls={endpoint}"),
        "--data-dir=forced.hark".to_string(),
        "--force-new-cluster".to_string(),
    ];
    let env = [("HARK_SIMULATE_POWER_LOSS", "1".to_string())];
    let mut acked: Vec<String> = Vec::new();
    for cycle in 0..6 {
        let mut child = spawn(cwd.path(), &args, &env);
        let c = ready(&endpoint, &mut child).await;
        // Everything acknowledged before, in every earlier cycle.
        let got = c
            .clone()
            .get("k", Some(GetOptions::new().with_prefix().with_keys_only()))
            .await
            .unwrap();
        let have: std::collections::BTreeSet<String> = got
            .kvs()
            .iter()
            .map(|kv| kv.key_str().unwrap().to_string())
            .collect();
        let lost: Vec<&String> = acked.iter().filter(|k| !have.contains(*k)).collect();
        assert!(
            lost.is_empty(),
            "cycle {cycle}: lost {lost:?}\n{}",
            logs(cwd.path())
        );
        if cycle == 5 {
            drop(c);
            stop_cleanly(&mut child, cwd.path());
            break;
        }
        // Writers run while the power goes.
        let done = Arc::new(Mutex::new(Vec::new()));
        let writers: Vec<_> = (0..4)
            .map(|w| {
                let (mut c, done) = (c.clone(), done.clone());
                tokio::spawn(async move {
                    for i in 0.. {
                        let key = format!("k{cycle}-{w}-{i}");
                        if c.put(key.as_str(), "v", None).await.is_err() {
                            return;
                        }
                        done.lock().push(key);
                    }
                })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(700)).await;
        child.kill().unwrap();
        child.wait().unwrap();
        for w in writers {
            let _ = w.await;
        }
        acked.extend(done.lock().drain(..));
    }
    assert!(acked.len() > 50, "{} writes acknowledged", acked.len());
}

/// Whether the test runs as root; if not, says which test is skipped, and
/// fails where CI requires root (HARK_REQUIRE_NETNS=1, set by `.ci/run`).
fn running_as_root(test: &str) -> bool {
    if unsafe { libc::geteuid() } == 0 {
        return true;
    }
    assert_ne!(
        std::env::var("HARK_REQUIRE_NETNS").as_deref(),
        Ok("1"),
        "CI runs {test} as root"
    );
    eprintln!("not root: {test} is skipped");
    false
}

/// Waits, as etcd's e2e framework does, until `log` holds a line containing
/// `text`; panics after a minute with every member's log.
fn wait_for_line(log: &std::path::Path, text: &str, all: &std::path::Path) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let content = std::fs::read_to_string(log).unwrap_or_default();
        if let Some(line) = content.lines().find(|l| l.contains(text)) {
            return line.to_string();
        }
        assert!(
            Instant::now() < deadline,
            "no {text:?} in {}:\n{}",
            log.display(),
            logs_below(all)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Every member's log under `dir` (one subdirectory per member).
fn logs_below(dir: &std::path::Path) -> String {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| logs(&e.path()))
        .collect()
}

/// The lines etcd's log has and tools wait for come at etcd's moments, with
/// etcd's keys: a cluster of three is started and waited for as etcd's e2e
/// framework waits (for `ready to serve client requests` in each member's
/// log), and each member then serves, published; then a member is added
/// and removed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn etcds_log_lines_come_at_etcds_moments() {
    let cwd = tempfile::tempdir().unwrap();
    let ports: Vec<(u16, u16)> = (0..3).map(|_| (free_port(), free_port())).collect();
    let initial: Vec<String> = ports
        .iter()
        .enumerate()
        .map(|(i, (_, peer))| format!("m{i}=http://127.0.0.1:{peer}"))
        .collect();
    let mut children = Vec::new();
    for (i, (client, peer)) in ports.iter().enumerate() {
        let dir = cwd.path().join(format!("m{i}"));
        std::fs::create_dir(&dir).unwrap();
        let args = [
            format!("--name=m{i}"),
            format!("--listen-client-urls=http://127.0.0.1:{client}"),
            format!("--advertise-client-urls=http://127.0.0.1:{client}"),
            format!("--listen-peer-urls=http://127.0.0.1:{peer}"),
            format!("--initial-advertise-peer-urls=http://127.0.0.1:{peer}"),
            format!("--initial-cluster={}", initial.join(",")),
            "--initial-cluster-state=new".to_string(),
            "--log-format=json".to_string(),
        ];
        children.push(spawn(&dir, &args, &[]));
    }
    let log_of = |i: usize| cwd.path().join(format!("m{i}")).join("hark-0.log");
    let mut leaders = 0;
    for (i, (client, _)) in ports.iter().enumerate() {
        let log = log_of(i);
        let ready = wait_for_line(&log, "ready to serve client requests", cwd.path());
        let line: serde_json::Value = serde_json::from_str(&ready).unwrap();
        assert_eq!(line["level"], "info", "{ready}");
        // Once the line is out, the member serves, and the membership it
        // answers with holds its client URLs (the framework indexes them).
        let endpoint = format!("http://127.0.0.1:{client}");
        let mut c = tokio::time::timeout(
            Duration::from_secs(5),
            etcd_client::Client::connect([&endpoint], None),
        )
        .await
        .expect("serves once ready")
        .unwrap();
        let members = c.member_list().await.unwrap();
        let me = members
            .members()
            .iter()
            .find(|m| m.name() == format!("m{i}"));
        assert_eq!(me.unwrap().client_urls(), std::slice::from_ref(&endpoint));
        let content = std::fs::read_to_string(&log).unwrap();
        let at = |text: &str| {
            content
                .find(text)
                .unwrap_or_else(|| panic!("no {text:?} in m{i}'s log:\n{content}"))
        };
        assert!(
            at("starting an etcd server") < at("published local member to cluster through raft")
        );
        assert!(
            at("published local member to cluster through raft")
                < at("ready to serve client requests")
        );
        let published = wait_for_line(
            &log,
            "published local member to cluster through raft",
            cwd.path(),
        );
        assert!(
            published.contains(&format!("ClientURLs:[{endpoint}]"))
                && published.contains("\"local-member-id\""),
            "{published}"
        );
        let serving = wait_for_line(&log, "serving client traffic insecurely", cwd.path());
        assert!(
            serving.contains(&format!("\"address\":\"127.0.0.1:{client}\"")),
            "{serving}"
        );
        assert!(serving.contains("\"traffic\":\"grpc+http\""), "{serving}");
        wait_for_line(&log, "elected leader", cwd.path());
        wait_for_line(&log, "set initial cluster version", cwd.path());
        wait_for_line(&log, "enabled capabilities for version", cwd.path());
        leaders += content.matches("became leader at term").count();
    }
    // At least one: under load the first election can split and a later
    // term elect again (seen in a full test run), as it can in etcd.
    assert!(
        leaders >= 1,
        "no member became leader:\n{}",
        logs_below(cwd.path())
    );

    // A member added and removed: every member logs both.
    let mut c = etcd_client::Client::connect([format!("http://127.0.0.1:{}", ports[0].0)], None)
        .await
        .unwrap();
    // As etcd's, the leader takes a member (a learner too) only once it has
    // been connected to a quorum for its health interval (5 s).
    let deadline = Instant::now() + Duration::from_secs(20);
    let added = loop {
        match c
            .member_add(
                ["http://127.0.0.1:1".to_string()],
                Some(etcd_client::MemberAddOptions::new().with_is_learner()),
            )
            .await
        {
            Err(e) if e.to_string().contains("unhealthy cluster") && Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            other => break other.unwrap(),
        }
    };
    let id = added.member().unwrap().id();
    c.member_remove(id).await.unwrap();
    for i in 0..3 {
        let log = log_of(i);
        let line = wait_for_line(&log, &format!("\"added-peer-id\":\"{id:x}\""), cwd.path());
        assert!(line.contains("\"msg\":\"added member\""), "{line}");
        assert!(line.contains("\"added-peer-is-learner\":true"), "{line}");
        let line = wait_for_line(
            &log,
            &format!("\"removed-remote-peer-id\":\"{id:x}\""),
            cwd.path(),
        );
        assert!(line.contains("\"msg\":\"removed member\""), "{line}");
    }
    drop(c);
    for (i, child) in children.iter_mut().enumerate() {
        stop_cleanly(child, &cwd.path().join(format!("m{i}")));
        let content = std::fs::read_to_string(log_of(i)).unwrap();
        assert!(content.contains("closing etcd server") && content.contains("closed etcd server"));
    }
}
