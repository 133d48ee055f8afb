//! Shared by the server's integration tests: an in-process server on a free
//! port over a temporary data dir, a client, and raw HTTP/1.1 requests.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;
use std::time::Instant;

pub mod etcd;
pub mod peer_proxy;

use clap::Parser;
use hark_server::{Config, RunningServer};

pub struct TestServer {
    pub server: RunningServer,
    pub dir: tempfile::TempDir,
}

impl TestServer {
    pub fn endpoint(&self) -> String {
        self.server.endpoints()[0].clone()
    }

    pub async fn client(&self) -> etcd_client::Client {
        client(&self.endpoint()).await
    }
}

/// Starts a server on 127.0.0.1 (a free port) with extra flags.
pub async fn start(extra: &[&str]) -> TestServer {
    let dir = tempfile::tempdir().unwrap();
    let server = start_in(dir.path(), extra).await;
    TestServer { server, dir }
}

pub async fn start_in(data_dir: &Path, extra: &[&str]) -> RunningServer {
    let mut args = vec![
        "hark".to_string(),
        "--listen-client-urls=http://127.0.0.1:0".to_string(),
        "--listen-peer-urls=http://127.0.0.1:0".to_string(),
        format!("--data-dir={}", data_dir.display()),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let config = Config::try_parse_from(args).unwrap();
    hark_server::start(&config).await.unwrap()
}

pub async fn client(endpoint: &str) -> etcd_client::Client {
    etcd_client::Client::connect([endpoint], None)
        .await
        .unwrap()
}

/// A program on PATH (etcd's tools, for the compatibility tests).
pub fn find_on_path(name: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// The gRPC status of a failed call.
pub fn status(e: etcd_client::Error) -> (tonic::Code, String) {
    match e {
        etcd_client::Error::GRpcStatus(s) => (s.code(), s.message().to_string()),
        other => panic!("expected a gRPC status, got {other:?}"),
    }
}

/// A plain HTTP/1.1 GET; returns the status code and body.
pub fn http_get(addr: SocketAddr, path: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(s, "GET {path} HTTP/1.1\r\nHost: {addr}\r\n\r\n").unwrap();
    let mut raw = Vec::new();
    let mut buf = [0u8; 64 * 1024];
    loop {
        let n = s.read(&mut buf).unwrap();
        assert!(n > 0, "connection closed before a full response");
        raw.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&raw);
        let Some((head, body)) = text.split_once("\r\n\r\n") else {
            continue;
        };
        let length = head
            .lines()
            .find_map(|l| {
                l.to_ascii_lowercase()
                    .strip_prefix("content-length:")
                    .map(|v| v.trim().parse::<usize>().unwrap())
            })
            .expect("a content-length header");
        if body.len() >= length {
            let code = head.split_whitespace().nth(1).unwrap().parse().unwrap();
            return (code, body[..length].to_string());
        }
    }
}

// The `hark` binary as a child process.

pub const HARK: &str = env!("CARGO_BIN_EXE_hark");

/// A free port below Linux's ephemeral range (32768 and up). A port the
/// kernel picked with `bind(0)` and then released can be handed to an
/// outgoing connection (a member dialling a peer not up yet) before the
/// server that was meant to take it binds it; these ports never are.
/// Handed out in sequence from a per-process start, so one test's ports
/// differ from each other.
pub fn free_port() -> u16 {
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

/// Starts `hark` in `cwd` with `args` and `env`, logging to `<cwd>/hark-<n>.log`.
/// Starts the `hark` binary in `cwd`. Unless the test chose its peer URLs,
/// the member serves its peers on a free port: etcd's default (2380) would
/// collide between tests running at once.
pub fn spawn(cwd: &Path, args: &[String], env: &[(&str, String)]) -> Child {
    let chosen = args.iter().any(|a| a.starts_with("--listen-peer-urls"))
        || env.iter().any(|(k, _)| *k == "HARK_LISTEN_PEER_URLS");
    let mut args = args.to_vec();
    if !chosen {
        args.push("--listen-peer-urls=http://127.0.0.1:0".into());
    }
    spawn_exactly(cwd, &args, env)
}

/// Starts the `hark` binary in `cwd` with exactly these flags.
pub fn spawn_exactly(cwd: &Path, args: &[String], env: &[(&str, String)]) -> Child {
    spawn_binary(Path::new(HARK), cwd, args, env)
}

/// [`spawn_exactly`] with another build of `hark` (an older one, say).
pub fn spawn_binary(bin: &Path, cwd: &Path, args: &[String], env: &[(&str, String)]) -> Child {
    let n = std::fs::read_dir(cwd).map(|d| d.count()).unwrap_or(0);
    let log = std::fs::File::create(cwd.join(format!("hark-{n}.log"))).unwrap();
    let mut cmd = Command::new(bin);
    cmd.current_dir(cwd)
        .args(args)
        .stdout(Stdio::null())
        .stderr(log);
    // The test's own HARK_* and ETCD_* settings do not leak into the member,
    // except the mutation switch, which exists to run the tests against a
    // deliberate bug.
    for (k, _) in std::env::vars()
        .filter(|(k, _)| (k.starts_with("HARK_") || k.starts_with("ETCD_")) && k != "HARK_MUTATION")
    {
        cmd.env_remove(k);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let child = cmd.spawn().unwrap();
    LOG_OF_CHILD
        .lock()
        .unwrap()
        .insert(child.id(), cwd.join(format!("hark-{n}.log")));
    child
}

/// Each spawned child's log file, by pid: `ready` shows it when the child
/// exits early, so a failure says why.
static LOG_OF_CHILD: std::sync::Mutex<std::collections::BTreeMap<u32, std::path::PathBuf>> =
    std::sync::Mutex::new(std::collections::BTreeMap::new());

/// Waits until the endpoint answers Status; panics with the log after a minute.
pub async fn ready(endpoint: &str, child: &mut Child) -> etcd_client::Client {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let log = LOG_OF_CHILD.lock().unwrap().get(&child.id()).cloned();
            let log = log
                .and_then(|path| std::fs::read_to_string(path).ok())
                .unwrap_or_default();
            panic!("hark exited early: {status}; its log:\n{log}");
        }
        if let Ok(Ok(mut c)) = tokio::time::timeout(
            Duration::from_secs(2),
            etcd_client::Client::connect([endpoint], None),
        )
        .await
            && c.status().await.is_ok()
        {
            return c;
        }
        assert!(
            Instant::now() < deadline,
            "hark did not start serving {endpoint}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Every log the children wrote in `cwd`, for failure messages.
pub fn logs(cwd: &Path) -> String {
    let mut all = String::new();
    for entry in std::fs::read_dir(cwd).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        if name.starts_with("hark-") && name.ends_with(".log") {
            all += &format!(
                "--- {name}\n{}\n",
                std::fs::read_to_string(entry.path()).unwrap_or_default()
            );
        }
    }
    all
}

/// Builds the Go clientv3 watcher (`tests/clientv3/`, a Go module pinned by
/// its committed `go.mod`/`go.sum`), fetching etcd's client from the Go
/// module proxy the first time. `None` when Go is not installed, which fails
/// the test where HARK_REQUIRE_GO=1 (CI).
pub fn go_clientv3_watcher() -> Option<std::path::PathBuf> {
    let go = go_or_skip()?;
    let module = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clientv3");
    let binary = Path::new(env!("CARGO_TARGET_TMPDIR")).join("clientv3-watch");
    let out = Command::new(go)
        .args(["build", "-mod=readonly", "-o"])
        .arg(&binary)
        .arg(".")
        .current_dir(&module)
        .env("CGO_ENABLED", "0")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "go build in {}: {}",
        module.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    Some(binary)
}

/// The directory of one Go module version (`go mod download`), for files
/// etcd publishes only in its source (its sample configuration). `None`
/// when Go is not installed, which fails the test where HARK_REQUIRE_GO=1.
pub fn go_module_dir(module_at_version: &str) -> Option<std::path::PathBuf> {
    let go = go_or_skip()?;
    let out = Command::new(go)
        .args(["mod", "download", "-json", module_at_version])
        .current_dir(env!("CARGO_TARGET_TMPDIR"))
        .output()
        .unwrap();
    let info: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    match info["Dir"].as_str() {
        Some(dir) if out.status.success() => Some(dir.into()),
        _ => panic!(
            "go mod download {module_at_version}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    }
}

fn go_or_skip() -> Option<std::path::PathBuf> {
    let go = find_on_path("go");
    if go.is_none() {
        assert_ne!(
            std::env::var("HARK_REQUIRE_GO").as_deref(),
            Ok("1"),
            "go is not on PATH"
        );
        eprintln!("no go on PATH: the Go check is skipped");
    }
    go
}

/// SIGTERM, then the child must exit with status 0 (its logs if not).
pub fn stop_cleanly(child: &mut Child, cwd: &Path) {
    sigterm(child);
    let status = wait_exit(child);
    assert!(status.success(), "exit status {status}\n{}", logs(cwd));
}

pub fn sigterm(child: &Child) {
    let ok = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok);
}

pub fn wait_exit(child: &mut Child) -> std::process::ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(Instant::now() < deadline, "hark did not exit");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Starts `command` with its stdout read as it prints (a full pipe would
/// stall a watcher): the child, and what it printed once it ends.
pub fn spawn_printing(command: &mut std::process::Command) -> (Child, Printed) {
    let mut child = command
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let text = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let shared = text.clone();
    let thread = std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            let mut text = shared.lock().unwrap();
            text.push_str(&line);
            text.push('\n');
        }
    });
    (child, Printed { text, thread })
}

/// What a process started by [`spawn_printing`] printed, a line at a time.
pub struct Printed {
    text: std::sync::Arc<std::sync::Mutex<String>>,
    thread: std::thread::JoinHandle<()>,
}

impl Printed {
    /// Waits up to `limit` until what was printed so far satisfies `done`
    /// (a watcher printing events can be seconds behind the last write on
    /// a loaded machine, more if it had to reconnect).
    pub async fn wait_until(&self, limit: std::time::Duration, done: impl Fn(&str) -> bool) {
        let deadline = std::time::Instant::now() + limit;
        while !done(&self.text.lock().unwrap()) && std::time::Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }

    /// Everything printed, once the process has ended.
    pub fn join(self) -> String {
        self.thread.join().unwrap();
        std::mem::take(&mut *self.text.lock().unwrap())
    }
}

/// Whether etcdctl's JSON watch output holds an event at `revision`.
pub fn etcdctl_printed_revision(printed: &str, revision: i64) -> bool {
    etcdctl_watch_events(printed)
        .iter()
        .any(|(rev, _)| *rev == revision)
}

/// `who` saw events (revision, key) in strictly increasing revisions, and
/// every acknowledged write among them at its revision.
pub fn assert_saw_every_write(who: &str, seen: &[(i64, String)], acked: &[(String, i64)]) {
    assert!(
        seen.windows(2).all(|w| w[0].0 < w[1].0),
        "{who} saw revisions out of order or twice"
    );
    let keys: std::collections::HashMap<&str, i64> =
        seen.iter().map(|(rev, key)| (key.as_str(), *rev)).collect();
    for (key, rev) in acked {
        assert_eq!(
            keys.get(key.as_str()),
            Some(rev),
            "{who} missed {key}@{rev}; it saw {:?}",
            seen.iter()
                .filter(|(r, _)| (r - rev).abs() < 6)
                .collect::<Vec<_>>()
        );
    }
}

/// The (revision, key) of each event `etcdctl watch -w json` printed.
pub fn etcdctl_watch_events(printed: &str) -> Vec<(i64, String)> {
    use base64::Engine;
    let mut events = Vec::new();
    for line in printed.lines() {
        let resp: serde_json::Value = serde_json::from_str(line).unwrap();
        for e in resp["Events"].as_array().into_iter().flatten() {
            let rev = e["kv"]["mod_revision"].as_i64().unwrap();
            let key = base64::engine::general_purpose::STANDARD
                .decode(e["kv"]["key"].as_str().unwrap())
                .unwrap();
            events.push((rev, String::from_utf8(key).unwrap()));
        }
    }
    events
}

/// The (revision, key) of each event the clientv3 watcher
/// (`tests/clientv3/watch.go`) printed after its `READY` line.
pub fn clientv3_watch_events(printed: &str) -> Vec<(i64, String)> {
    let mut lines = printed.lines();
    assert_eq!(lines.next(), Some("READY"), "{printed}");
    lines
        .map(|l| {
            let (rev, key) = l.split_once(' ').unwrap();
            (rev.parse().unwrap(), key.to_string())
        })
        .collect()
}
