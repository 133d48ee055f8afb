//! A real etcd 3.5.1 beside Hark, for tests that compare the two.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// etcd 3.5.1 on free ports in its own temporary dir, killed on drop.
pub struct Etcd {
    child: Child,
    pub endpoint: String,
    _dir: tempfile::TempDir,
}

impl Etcd {
    pub fn start(binary: &Path) -> Etcd {
        Etcd::start_with(binary, &[])
    }

    /// etcd with `extra` flags too.
    pub fn start_with(binary: &Path, extra: &[String]) -> Etcd {
        let dir = tempfile::tempdir().unwrap();
        let client = format!("http://127.0.0.1:{}", super::free_port());
        let peer = format!("http://127.0.0.1:{}", super::free_port());
        let child = Command::new(binary)
            .current_dir(dir.path())
            .args([
                "--data-dir=data",
                &format!("--listen-client-urls={client}"),
                &format!("--advertise-client-urls={client}"),
                &format!("--listen-peer-urls={peer}"),
                &format!("--initial-advertise-peer-urls={peer}"),
                &format!("--initial-cluster=default={peer}"),
            ])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let etcd = Etcd {
            child,
            endpoint: client,
            _dir: dir,
        };
        let addr: std::net::SocketAddr =
            etcd.endpoint.trim_start_matches("http://").parse().unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
            assert!(Instant::now() < deadline, "etcd did not start");
            std::thread::sleep(Duration::from_millis(100));
        }
        // Listening; requests wait until etcd is ready.
        assert_eq!(super::http_get(addr, "/version").0, 200);
        etcd
    }
}

impl Drop for Etcd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A tool on PATH; `None` (skip) if missing, except where
/// HARK_REQUIRE_ETCDCTL=1 (CI), where a missing tool fails the test.
pub fn tool(name: &str) -> Option<PathBuf> {
    let found = super::find_on_path(name);
    if found.is_none() {
        assert!(
            std::env::var("HARK_REQUIRE_ETCDCTL").as_deref() != Ok("1"),
            "want {name} on PATH"
        );
        eprintln!("{name} not on PATH: skipped");
    }
    found
}
