//! `lock` and `elect` as people run them: real processes holding a lock or
//! a leadership until SIGINT, others queued behind, an observer printing
//! each leader. One scenario, run by harkctl and by every etcdctl on PATH
//! (`etcdctl`, `etcdctl-3.5`, `etcdctl-3.7`) against Hark, and by harkctl
//! against etcd 3.7 (`etcd-3.7`): harkctl uses the lock and election services, etcdctl
//! builds the same on KV, Lease and Watch, and a harkctl waits behind an
//! etcdctl holding the lock (and the other way round). `HARK_REQUIRE_ETCDCTL=1` (CI) makes a missing tool a
//! failure.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use clap::Parser;

const HARKCTL: &str = env!("CARGO_BIN_EXE_harkctl");

/// Long enough for a process to start and be served on a loaded machine;
/// only a hang reaches it.
const PATIENCE: Duration = Duration::from_secs(20);

/// How long a queued process must stay silent to count as waiting.
const QUIET: Duration = Duration::from_secs(1);

fn on_path(name: &str) -> Option<PathBuf> {
    let found = std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file());
    if found.is_none() {
        assert!(
            std::env::var("HARK_REQUIRE_ETCDCTL").as_deref() != Ok("1"),
            "want {name} on PATH"
        );
        eprintln!("{name} not on PATH: skipped");
    }
    found
}

/// A running ctl command whose stdout is read line by line.
struct Running {
    child: Child,
    lines: mpsc::Receiver<String>,
}

impl Running {
    fn start(ctl: &str, endpoint: &str, args: &[&str]) -> Running {
        let mut child = Command::new(ctl)
            .env("ETCDCTL_API", "3")
            .arg(format!("--endpoints={endpoint}"))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let (tx, lines) = mpsc::channel();
        let stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                if tx.send(line.unwrap()).is_err() {
                    return;
                }
            }
        });
        Running { child, lines }
    }

    /// The next `n` lines.
    fn lines(&self, n: usize, what: &str) -> Vec<String> {
        (0..n)
            .map(|_| {
                self.lines
                    .recv_timeout(PATIENCE)
                    .unwrap_or_else(|_| panic!("{what}: no output"))
            })
            .collect()
    }

    fn silent(&self, what: &str) {
        if let Ok(line) = self.lines.recv_timeout(QUIET) {
            panic!("{what} should be waiting, printed {line:?}");
        }
    }

    /// SIGINT, then its exit code.
    fn interrupt(mut self) -> i32 {
        let pid = self.child.id().to_string();
        assert!(
            Command::new("kill")
                .args(["-INT", &pid])
                .status()
                .unwrap()
                .success()
        );
        self.child.wait().unwrap().code().unwrap_or(-1)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn run(ctl: &str, endpoint: &str, args: &[&str]) -> (String, i32) {
    // No ETCDCTL_API: v3 is every etcdctl's default since 3.4, and 3.7
    // warns about the variable on stderr.
    let out = Command::new(ctl)
        .arg(format!("--endpoints={endpoint}"))
        .args(args)
        .output()
        .unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
        out.status.code().unwrap_or(-1),
    )
}

/// `name/` and a lease ID in hex.
fn assert_holder_key(key: &str, name: &str) {
    let hex = key
        .strip_prefix(&format!("{name}/"))
        .unwrap_or_else(|| panic!("{key:?} is not under {name}/"));
    assert!(
        !hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit()),
        "{key:?}"
    );
}

/// The scenario, for one ctl against one server.
fn queue_and_elect(ctl: &str, endpoint: &str) {
    let who = format!("{ctl} against {endpoint}");
    // A lock: the first holds it, the second waits until the first lets go.
    let first = Running::start(ctl, endpoint, &["lock", "jobs"]);
    let held = first.lines(2, &format!("{who}: first lock"));
    assert_holder_key(&held[0], "jobs");
    assert_eq!(held[1], "", "a lock key's value is empty");
    let second = Running::start(ctl, endpoint, &["lock", "jobs"]);
    second.silent(&format!("{who}: second lock"));
    assert_eq!(first.interrupt(), 0, "{who}: unlocking");
    let next = second.lines(2, &format!("{who}: second lock after the first"));
    assert_holder_key(&next[0], "jobs");
    assert_ne!(next[0], held[0]);
    assert_eq!(second.interrupt(), 0);

    // A lock around a command (after `--`, as etcdctl's flag parser needs):
    // it sees the key and revision, and its exit status is the command's.
    let (out, code) = run(
        ctl,
        endpoint,
        &[
            "lock",
            "jobs",
            "--",
            "sh",
            "-c",
            "echo \"$ETCD_LOCK_KEY $ETCD_LOCK_REV\"",
        ],
    );
    assert_eq!(code, 0, "{who}: {out}");
    let (key, rev) = out.trim().split_once(' ').unwrap();
    assert_holder_key(key, "jobs");
    assert!(rev.parse::<i64>().unwrap() > 0, "{out}");
    let (_, code) = run(ctl, endpoint, &["lock", "jobs", "--", "sh", "-c", "exit 3"]);
    // etcdctl 3.4 (Debian's `etcdctl`) exits 1 for any failed command;
    // 3.5 and harkctl pass the command's status on.
    let want = if ctl.ends_with("/etcdctl") { 1 } else { 3 };
    assert_eq!(code, want, "{who}");

    // An election: an observer sees each leader's key and value in turn.
    let observer = Running::start(ctl, endpoint, &["elect", "-l", "pick"]);
    let leader = Running::start(ctl, endpoint, &["elect", "pick", "one"]);
    let led = leader.lines(2, &format!("{who}: first candidate"));
    assert_holder_key(&led[0], "pick");
    assert_eq!(led[1], "one");
    assert_eq!(observer.lines(2, &format!("{who}: observer")), led);
    let runner_up = Running::start(ctl, endpoint, &["elect", "pick", "two"]);
    runner_up.silent(&format!("{who}: second candidate"));
    assert_eq!(leader.interrupt(), 0, "{who}: resigning");
    let next = runner_up.lines(2, &format!("{who}: second candidate after the first"));
    assert_holder_key(&next[0], "pick");
    assert_eq!(next[1], "two");
    assert_eq!(observer.lines(2, &format!("{who}: observer, second")), next);
    assert_eq!(runner_up.interrupt(), 0);
    assert_eq!(observer.interrupt(), 0);

    // etcdctl's argument errors.
    let (out, code) = run(ctl, endpoint, &["elect", "pick"]);
    assert_eq!(code, 128, "{who}: {out}");
    assert!(out.contains("no proposal argument but -l not set"), "{out}");
    let (out, code) = run(ctl, endpoint, &["lock"]);
    assert_eq!(code, 128, "{who}: {out}");
}

/// One ctl holds a lock and another waits for it: harkctl's lock service
/// and etcdctl's client-side recipe queue on the same keys.
fn mixed_queue(holder: &str, waiter: &str, endpoint: &str) {
    let who = format!("{waiter} behind {holder}");
    let first = Running::start(holder, endpoint, &["lock", "mixed"]);
    let held = first.lines(2, &format!("{who}: holder"));
    assert_holder_key(&held[0], "mixed");
    let second = Running::start(waiter, endpoint, &["lock", "mixed"]);
    second.silent(&who);
    assert_eq!(first.interrupt(), 0, "{who}: unlocking");
    let next = second.lines(2, &format!("{who}: after the holder"));
    assert_holder_key(&next[0], "mixed");
    assert_ne!(next[0], held[0]);
    assert_eq!(second.interrupt(), 0);
}

struct Hark {
    running: hark_server::RunningServer,
    _dir: tempfile::TempDir,
}

async fn hark() -> Hark {
    let dir = tempfile::tempdir().unwrap();
    let config = hark_server::Config::try_parse_from([
        "hark".to_string(),
        "--listen-client-urls=http://127.0.0.1:0".into(),
        "--listen-peer-urls=http://127.0.0.1:0".into(),
        format!("--data-dir={}", dir.path().display()),
        "--unsafe-no-fsync".into(),
    ])
    .unwrap();
    Hark {
        running: hark_server::start(&config).await.unwrap(),
        _dir: dir,
    }
}

/// etcd 3.7 on free ports in a temporary dir, killed on drop.
struct Etcd {
    child: Child,
    endpoint: String,
    _dir: tempfile::TempDir,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Etcd {
    fn start(binary: &std::path::Path) -> Etcd {
        let dir = tempfile::tempdir().unwrap();
        let client = format!("http://127.0.0.1:{}", free_port());
        let peer = format!("http://127.0.0.1:{}", free_port());
        let child = Command::new(binary)
            .current_dir(dir.path())
            .args([
                "--data-dir=data".to_string(),
                format!("--listen-client-urls={client}"),
                format!("--advertise-client-urls={client}"),
                format!("--listen-peer-urls={peer}"),
                format!("--initial-advertise-peer-urls={peer}"),
                format!("--initial-cluster=default={peer}"),
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let etcd = Etcd {
            child,
            endpoint: client,
            _dir: dir,
        };
        // Ready once it answers a read.
        let deadline = std::time::Instant::now() + PATIENCE;
        while run(HARKCTL, &etcd.endpoint, &["get", "ready"]).1 != 0 {
            assert!(std::time::Instant::now() < deadline, "etcd did not start");
            std::thread::sleep(Duration::from_millis(200));
        }
        etcd
    }
}

impl Drop for Etcd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn harkctl_and_etcdctl_lock_and_elect_against_hark() {
    let mut ctls = vec![HARKCTL.to_string()];
    for name in ["etcdctl-3.5", "etcdctl-3.7", "etcdctl"] {
        if let Some(path) = on_path(name) {
            ctls.push(path.display().to_string());
        }
    }
    for ctl in ctls.clone() {
        let server = hark().await;
        let endpoint = server.running.endpoints()[0].clone();
        tokio::task::spawn_blocking(move || queue_and_elect(&ctl, &endpoint))
            .await
            .unwrap();
        drop(server);
    }
    let server = hark().await;
    let endpoint = server.running.endpoints()[0].clone();
    tokio::task::spawn_blocking(move || {
        for etcdctl in &ctls[1..] {
            mixed_queue(etcdctl, HARKCTL, &endpoint);
            mixed_queue(HARKCTL, etcdctl, &endpoint);
        }
    })
    .await
    .unwrap();
}

#[test]
fn harkctl_locks_and_elects_against_etcd() {
    let Some(binary) = on_path("etcd-3.7") else {
        return;
    };
    let etcd = Etcd::start(&binary);
    queue_and_elect(HARKCTL, &etcd.endpoint);
}
