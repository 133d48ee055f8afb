//! A real etcd: the `etcd-3.5` binary on PATH, which CI installs. Without it
//! the tests that need it are skipped, unless HARK_REQUIRE_ETCDCTL=1.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use hark_client::Client;

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn find_on_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// A running etcd on free ports over a temporary data dir; killed on drop.
pub struct Etcd {
    child: Child,
    pub endpoint: String,
    _dir: tempfile::TempDir,
}

impl Drop for Etcd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts etcd (not yet serving: see [`ready`]); `None` when the binary is
/// missing and not required.
pub fn start() -> Option<Etcd> {
    let Some(bin) = find_on_path("etcd-3.5") else {
        assert_ne!(
            std::env::var("HARK_REQUIRE_ETCDCTL").as_deref(),
            Ok("1"),
            "etcd-3.5 is not on PATH"
        );
        eprintln!("etcd-3.5 not on PATH: skipped");
        return None;
    };
    let dir = tempfile::tempdir().unwrap();
    let (client, peer) = (free_port(), free_port());
    let endpoint = format!("http://127.0.0.1:{client}");
    let peer_url = format!("http://127.0.0.1:{peer}");
    let child = Command::new(bin)
        .args([
            format!("--data-dir={}", dir.path().join("etcd").display()),
            format!("--listen-client-urls={endpoint}"),
            format!("--advertise-client-urls={endpoint}"),
            format!("--listen-peer-urls={peer_url}"),
            format!("--initial-advertise-peer-urls={peer_url}"),
            format!("--initial-cluster=default={peer_url}"),
            "--log-level=error".into(),
            "--unsafe-no-fsync".into(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    Some(Etcd {
        child,
        endpoint,
        _dir: dir,
    })
}

/// Waits (at most a minute) until the server behind `c` answers.
pub async fn ready(c: &Client) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while c.status().await.is_err() {
        assert!(Instant::now() < deadline, "server did not come up");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
