//! A real etcd: the `etcd-3.7` binary on PATH, which CI installs. Without it
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

/// How many times [`start`] picks new ports when etcd could not bind its own.
const START_TRIES: usize = 5;

/// Starts etcd and waits until it listens on its client port; `None` when
/// the binary is missing and not required.
///
/// Ports are picked free and then let go, so another test's server (tests
/// run in parallel) can take one before etcd binds it. etcd then exits at
/// once ("address already in use"); waiting for it to answer would wait out
/// the whole deadline. So an etcd that exits is started again on new ports,
/// and one that fails for another reason fails the test with its log.
pub fn start() -> Option<Etcd> {
    let Some(bin) = binary() else {
        assert_ne!(
            std::env::var("HARK_REQUIRE_ETCDCTL").as_deref(),
            Ok("1"),
            "etcd-3.7 is not on PATH"
        );
        eprintln!("etcd-3.7 not on PATH: skipped");
        return None;
    };
    for _ in 0..START_TRIES {
        let (client, peer) = (free_port(), free_port());
        if client == peer {
            continue;
        }
        match launch(&bin, client, peer) {
            Ok(etcd) => return Some(etcd),
            Err(log) => {
                assert!(log.contains("address already in use"), "etcd exited: {log}");
                eprintln!("etcd lost a port to another test; starting it on new ones");
            }
        }
    }
    panic!("etcd could not bind free ports in {START_TRIES} tries");
}

/// Starts etcd on `client` and `peer` and waits until it listens; its log
/// when it exited instead.
pub fn launch(bin: &std::path::Path, client: u16, peer: u16) -> Result<Etcd, String> {
    let dir = tempfile::tempdir().unwrap();
    let endpoint = format!("http://127.0.0.1:{client}");
    let peer_url = format!("http://127.0.0.1:{peer}");
    let log = dir.path().join("etcd.log");
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
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let mut etcd = Etcd {
        child,
        endpoint,
        _dir: dir,
    };
    match listening(&mut etcd, client) {
        Ok(()) => Ok(etcd),
        Err(()) => Err(std::fs::read_to_string(&log).unwrap_or_default()),
    }
}

/// Waits (at most a minute) until `etcd` accepts connections on `port` and
/// is still running a moment later (what answered could be another test's
/// server on a port etcd failed to bind); `Err` when it exited.
fn listening(etcd: &mut Etcd, port: u16) -> Result<(), ()> {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut answered = 0;
    loop {
        if etcd.child.try_wait().unwrap().is_some() {
            return Err(());
        }
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            answered += 1;
            // etcd binds both ports within its first moments; one that
            // failed to has exited by the third answer, 0.5 s on.
            if answered == 3 {
                return Ok(());
            }
        }
        assert!(Instant::now() < deadline, "etcd did not listen in a minute");
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// The etcd binary, if on PATH.
pub fn binary() -> Option<PathBuf> {
    find_on_path("etcd-3.7")
}

/// Waits (at most a minute) until the server behind `c` answers.
pub async fn ready(c: &Client) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while c.status().await.is_err() {
        assert!(Instant::now() < deadline, "server did not come up");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
