//! Three members as processes, Hark or etcd, started with etcd's flags and
//! their peer links through [`PeerProxy`] or in network namespaces. Members are killed with SIGKILL,
//! paused with SIGSTOP and restarted with the flags they started with.

use std::fs::File;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::netns::Namespaces;
use crate::proxy::PeerProxy;

/// Which server runs the cluster.
#[derive(Clone, Debug)]
pub enum Flavor {
    Hark(PathBuf),
    Etcd(PathBuf),
}

impl Flavor {
    pub fn name(&self) -> &'static str {
        match self {
            Flavor::Hark(_) => "hark",
            Flavor::Etcd(_) => "etcd",
        }
    }
}

/// Heartbeat and election timeout of every member (ms), as etcd's e2e tests
/// shorten them: faults resolve in about a second.
pub const HEARTBEAT_MS: u64 = 50;
pub const ELECTION_MS: u64 = 500;

pub struct Member {
    pub client_url: String,
    /// The URL its peers reach it at (its proxy).
    pub peer_url: String,
    pub data_dir: PathBuf,
    args: Vec<String>,
    child: Option<Child>,
    paused: bool,
}

pub struct Cluster {
    flavor: Flavor,
    dir: PathBuf,
    pub members: Vec<Member>,
    pub links: Links,
}

fn free_listener(ip: IpAddr) -> TcpListener {
    TcpListener::bind(SocketAddr::new(ip, 0)).expect("a free loopback port")
}

/// How the members' peer traffic runs, and so how links are cut.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Network {
    /// Through a TCP proxy per member on the loopback (see `proxy.rs`).
    Proxy,
    /// Each member in its own network namespace (see `netns.rs`).
    Netns,
}

/// The peer links of a running cluster.
pub enum Links {
    Proxy(PeerProxy),
    Netns(Namespaces),
}

impl Links {
    /// Member `from` can no longer reach member `to` (one way).
    pub fn cut(&self, from: usize, to: usize) {
        match self {
            Links::Proxy(p) => p.cut(from, to),
            Links::Netns(n) => n.cut(from, to),
        }
    }

    /// The members in `side` cut off from the other `members`, both ways.
    pub fn partition(&self, side: &[usize], members: usize) {
        match self {
            Links::Proxy(p) => p.partition(side, members),
            Links::Netns(n) => n.partition(side),
        }
    }

    pub fn heal(&self) {
        match self {
            Links::Proxy(p) => p.heal(),
            Links::Netns(n) => n.heal(),
        }
    }

    /// Member `member` has raft id `id` (the proxy tells etcd's peers by it).
    pub fn know_id(&self, id: u64, member: usize) {
        if let Links::Proxy(p) = self {
            p.know_id(id, member);
        }
    }
}

/// A member's URLs and the flags that go with them.
struct Addresses {
    client: String,
    listen_peer: String,
    advertise_peer: String,
    extra: Vec<String>,
}

/// Members on the loopback, each advertising its proxy as its peer URL.
fn proxied(flavor: &Flavor, size: usize) -> (PeerProxy, Vec<Addresses>) {
    let proxy = PeerProxy::default();
    let localhost = IpAddr::V4(Ipv4Addr::LOCALHOST);
    // Hark members each dial their peers from their own address.
    let own_ip = |i: usize| match flavor {
        Flavor::Hark(_) => IpAddr::V4(Ipv4Addr::new(127, 0, 0, 10 + i as u8)),
        Flavor::Etcd(_) => localhost,
    };
    let mut addresses = Vec::new();
    for i in 0..size {
        let front = free_listener(localhost);
        let front_url = format!("http://{}", front.local_addr().expect("bound address"));
        // The real peer port: taken now and freed just before the member
        // binds it.
        let peer = free_listener(own_ip(i))
            .local_addr()
            .expect("bound address");
        let client = free_listener(localhost)
            .local_addr()
            .expect("bound address");
        let mut extra = Vec::new();
        if let Flavor::Hark(_) = flavor {
            extra.push(format!("--peer-local-addr={}", own_ip(i)));
            proxy.know_ip(own_ip(i), i);
        }
        proxy.forward(front, i, peer);
        addresses.push(Addresses {
            client: format!("http://{client}"),
            listen_peer: format!("http://{peer}"),
            advertise_peer: front_url,
            extra,
        });
    }
    (proxy, addresses)
}

impl Cluster {
    /// Starts `size` members in `dir` (one data dir and log each), their
    /// peer links through `network`. Must run inside a tokio runtime (the
    /// proxies are tasks).
    pub fn start(
        flavor: Flavor,
        dir: &Path,
        size: usize,
        snapshot_count: u64,
        network: Network,
    ) -> Result<Cluster, String> {
        let (links, addresses) = match network {
            Network::Proxy => {
                let (proxy, addresses) = proxied(&flavor, size);
                (Links::Proxy(proxy), addresses)
            }
            Network::Netns => {
                let namespaces = Namespaces::create(size)?;
                // Each member has an address and ports of its own.
                let addresses = (0..size)
                    .map(|i| {
                        let ip = namespaces.address(i);
                        Addresses {
                            client: format!("http://{ip}:2379"),
                            listen_peer: format!("http://{ip}:2380"),
                            advertise_peer: format!("http://{ip}:2380"),
                            extra: Vec::new(),
                        }
                    })
                    .collect();
                (Links::Netns(namespaces), addresses)
            }
        };
        let initial: Vec<String> = addresses
            .iter()
            .enumerate()
            .map(|(i, a)| format!("m{i}={}", a.advertise_peer))
            .collect();
        let mut members = Vec::new();
        for (i, a) in addresses.into_iter().enumerate() {
            let data_dir = dir.join("data").join(format!("m{i}"));
            let mut args: Vec<String> = vec![
                format!("--name=m{i}"),
                format!("--data-dir={}", data_dir.display()),
                format!("--listen-client-urls={}", a.client),
                format!("--advertise-client-urls={}", a.client),
                format!("--listen-peer-urls={}", a.listen_peer),
                format!("--initial-advertise-peer-urls={}", a.advertise_peer),
                format!("--initial-cluster={}", initial.join(",")),
                "--initial-cluster-state=new".into(),
                "--initial-cluster-token=chaos".into(),
                format!("--heartbeat-interval={HEARTBEAT_MS}"),
                format!("--election-timeout={ELECTION_MS}"),
                format!("--snapshot-count={snapshot_count}"),
            ];
            args.extend(a.extra);
            // Each member its own limits, as in a rolling flag change.
            args.extend(crate::limits::MEMBER_LIMITS[i % 3].flags());
            members.push(Member {
                client_url: a.client,
                peer_url: a.advertise_peer,
                data_dir,
                args,
                child: None,
                paused: false,
            });
        }
        let mut cluster = Cluster {
            flavor,
            dir: dir.to_path_buf(),
            members,
            links,
        };
        for i in 0..size {
            cluster.spawn(i);
        }
        Ok(cluster)
    }

    fn spawn(&mut self, i: usize) {
        let bin = match &self.flavor {
            Flavor::Hark(p) | Flavor::Etcd(p) => p.clone(),
        };
        let log = File::options()
            .create(true)
            .append(true)
            .open(self.dir.join(format!("m{i}.log")))
            .expect("a member log file");
        let mut command = match &self.links {
            Links::Netns(n) => n.command(i, &bin),
            Links::Proxy(_) => Command::new(&bin),
        };
        if let Flavor::Hark(_) = self.flavor {
            // Every kill is a power loss: unsynced writes die with the
            // process (etcd has no such switch: its kills keep them).
            command.env("HARK_SIMULATE_POWER_LOSS", "1");
        }
        let member = &mut self.members[i];
        let child = command
            .args(&member.args)
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("a log handle"))
            .stderr(log)
            .spawn()
            .expect("the server starts");
        member.child = Some(child);
        member.paused = false;
    }

    pub fn endpoints(&self) -> Vec<String> {
        self.members.iter().map(|m| m.client_url.clone()).collect()
    }

    pub fn is_running(&self, i: usize) -> bool {
        self.members[i].child.is_some()
    }

    /// SIGKILL: the member stops at once, mid-write.
    pub fn kill(&mut self, i: usize) {
        if let Some(mut child) = self.members[i].child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        self.members[i].paused = false;
    }

    /// SIGTERM, as an operator stops a member: waits up to `within` for it
    /// to exit, then kills it.
    pub fn terminate(&mut self, i: usize, within: Duration) {
        if let Some(mut child) = self.members[i].child.take() {
            // SAFETY: signals the child this struct owns and has not reaped.
            unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
            let deadline = Instant::now() + within;
            while Instant::now() < deadline {
                if let Ok(Some(_)) = child.try_wait() {
                    self.members[i].paused = false;
                    return;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        self.members[i].paused = false;
    }

    pub fn restart(&mut self, i: usize) {
        if self.members[i].child.is_none() {
            self.spawn(i);
        }
    }

    /// Kills member `i` and deletes its data: it comes back only through
    /// MemberAdd, joining the existing cluster (`--initial-cluster-state
    /// existing`) as a new member with the same name and URLs.
    pub fn wipe(&mut self, i: usize) {
        self.kill(i);
        let member = &mut self.members[i];
        let _ = std::fs::remove_dir_all(&member.data_dir);
        for arg in &mut member.args {
            if arg.starts_with("--initial-cluster-state=") {
                *arg = "--initial-cluster-state=existing".into();
            }
        }
    }

    /// SIGSTOP, or SIGCONT when `pause` is false.
    pub fn pause(&mut self, i: usize, pause: bool) {
        let member = &mut self.members[i];
        if let Some(child) = &member.child
            && member.paused != pause
        {
            let signal = if pause { libc::SIGSTOP } else { libc::SIGCONT };
            // SAFETY: signals the child this struct owns and has not reaped.
            unsafe { libc::kill(child.id() as libc::pid_t, signal) };
            member.paused = pause;
        }
    }

    /// Every member resumed and running, every link healed.
    pub fn recover_all(&mut self) {
        self.links.heal();
        for i in 0..self.members.len() {
            self.pause(i, false);
            self.restart(i);
        }
    }

    pub fn stop(&mut self) {
        for i in 0..self.members.len() {
            self.pause(i, false);
            self.kill(i);
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A member's `Status`: its id, its leader's (0 for none) and its raft term.
pub struct MemberStatus {
    pub id: u64,
    pub leader: u64,
    pub term: u64,
}

/// The member's status, if it answers within a second.
pub async fn status(endpoint: &str) -> Option<MemberStatus> {
    let options = etcd_client::ConnectOptions::new()
        .with_connect_timeout(Duration::from_millis(500))
        .with_timeout(Duration::from_secs(1));
    let mut c = etcd_client::Client::connect([endpoint], Some(options))
        .await
        .ok()?;
    let s = tokio::time::timeout(Duration::from_secs(1), c.status())
        .await
        .ok()?
        .ok()?;
    Some(MemberStatus {
        id: s.header()?.member_id(),
        leader: s.leader(),
        term: s.raft_term(),
    })
}

/// Waits until every running member answers and names the same leader; its
/// index. Records each member's raft id with the proxy on the way.
pub async fn wait_for_leader(cluster: &Cluster, within: Duration) -> Result<usize, String> {
    let deadline = Instant::now() + within;
    loop {
        let mut ids = Vec::new();
        let mut leaders = Vec::new();
        for (i, m) in cluster.members.iter().enumerate() {
            if !cluster.is_running(i) {
                ids.push(None);
                continue;
            }
            let s = status(&m.client_url).await;
            if let Some(s) = &s {
                cluster.links.know_id(s.id, i);
                leaders.push(s.leader);
            }
            ids.push(s.map(|s| s.id));
        }
        let running = (0..cluster.members.len())
            .filter(|i| cluster.is_running(*i))
            .count();
        if leaders.len() == running
            && leaders.first().is_some_and(|l| *l != 0)
            && leaders.iter().all(|l| *l == leaders[0])
            && let Some(i) = ids.iter().position(|id| *id == Some(leaders[0]))
        {
            return Ok(i);
        }
        if Instant::now() >= deadline {
            return Err(format!(
                "no leader all members agree on within {within:?} (ids {ids:?}, leaders {leaders:?})"
            ));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
