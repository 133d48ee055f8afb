//! Real partitions: each member in its own Linux network namespace with its
//! own address, joined to the others by a bridge in the host's namespace
//! (where the clients run). A cut from A to B is a blackhole route to B's
//! address inside A's namespace: A's packets to B are dropped by A's kernel,
//! so B's connections to A lose their answers too (a one-way link, as a real
//! broken path is seen from TCP). Both ways is a route on each side. The
//! clients' paths to every member stay up.
//!
//! Needs root (or CAP_NET_ADMIN) and `ip` from iproute2; everything made is
//! deleted when the [`Namespaces`] is dropped.

use std::net::Ipv4Addr;
use std::process::{Command, Stdio};
use std::sync::Mutex;

pub struct Namespaces {
    /// Short and unique to this run: interface names are at most 15 bytes.
    tag: String,
    subnet: u8,
    members: usize,
    cuts: Mutex<Vec<(usize, usize)>>,
}

fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("running ip: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

impl Namespaces {
    /// A namespace per member, each with one veth into the bridge.
    pub fn create(members: usize) -> Result<Namespaces, String> {
        let pid = std::process::id();
        // Unique to each set a process makes too: the kernel tears a deleted
        // namespace's veth pair down only after the call returns, so the
        // next set (`--behaviours` starts one cluster per behaviour) must
        // not reuse the names.
        static MADE: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let nth = MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let made = Namespaces {
            tag: format!("{:x}{:x}", pid & 0xffff, nth & 0xf),
            subnet: claim_subnet(pid)?,
            members,
            cuts: Mutex::new(Vec::new()),
        };
        // Anything left by an earlier run with the same tag goes first.
        made.delete();
        made.build().inspect_err(|_| made.delete())?;
        Ok(made)
    }

    fn bridge(&self) -> String {
        format!("hkb{}", self.tag)
    }

    fn namespace(&self, i: usize) -> String {
        format!("hk{}m{i}", self.tag)
    }

    /// Member `i`'s address (the host's end of the bridge is `.1`).
    pub fn address(&self, i: usize) -> Ipv4Addr {
        Ipv4Addr::new(10, 250, self.subnet, 10 + i as u8)
    }

    fn build(&self) -> Result<(), String> {
        let bridge = self.bridge();
        ip(&["link", "add", &bridge, "type", "bridge"])?;
        let host = format!("10.250.{}.1/24", self.subnet);
        ip(&["addr", "add", &host, "dev", &bridge])?;
        ip(&["link", "set", &bridge, "up"])?;
        for i in 0..self.members {
            let ns = self.namespace(i);
            let (outer, inner) = (format!("hk{}h{i}", self.tag), format!("hk{}n{i}", self.tag));
            ip(&["netns", "add", &ns])?;
            ip(&[
                "link", "add", &outer, "type", "veth", "peer", "name", &inner,
            ])?;
            ip(&["link", "set", &inner, "netns", &ns])?;
            ip(&["link", "set", &outer, "master", &bridge])?;
            ip(&["link", "set", &outer, "up"])?;
            let address = format!("{}/24", self.address(i));
            ip(&["-n", &ns, "addr", "add", &address, "dev", &inner])?;
            ip(&["-n", &ns, "link", "set", &inner, "up"])?;
            ip(&["-n", &ns, "link", "set", "lo", "up"])?;
        }
        Ok(())
    }

    /// `program` to be run inside member `i`'s namespace (`ip netns exec`
    /// execs it in place, so the child's pid is the program's).
    pub fn command(&self, i: usize, program: &std::path::Path) -> Command {
        let mut command = Command::new("ip");
        command
            .args(["netns", "exec", &self.namespace(i)])
            .arg(program);
        command
    }

    /// Member `from`'s packets to member `to` dropped (one way).
    pub fn cut(&self, from: usize, to: usize) {
        let mut cuts = self.cuts.lock().unwrap();
        if cuts.contains(&(from, to)) {
            return;
        }
        let route = format!("{}/32", self.address(to));
        match ip(&[
            "-n",
            &self.namespace(from),
            "route",
            "add",
            "blackhole",
            &route,
        ]) {
            Ok(()) => cuts.push((from, to)),
            Err(e) => eprintln!("  cutting m{from} -> m{to} failed: {e}"),
        }
    }

    /// The members in `side` cut off from the rest, both ways.
    pub fn partition(&self, side: &[usize]) {
        for &a in side {
            for b in (0..self.members).filter(|b| !side.contains(b)) {
                self.cut(a, b);
                self.cut(b, a);
            }
        }
    }

    /// Every cut undone.
    pub fn heal(&self) {
        let mut cuts = self.cuts.lock().unwrap();
        for (from, to) in cuts.drain(..) {
            let route = format!("{}/32", self.address(to));
            if let Err(e) = ip(&[
                "-n",
                &self.namespace(from),
                "route",
                "del",
                "blackhole",
                &route,
            ]) {
                eprintln!("  healing m{from} -> m{to} failed: {e}");
            }
        }
    }

    fn delete(&self) {
        for i in 0..self.members {
            // Deleting a namespace deletes the veth pair with it.
            let _ = ip(&["netns", "del", &self.namespace(i)]);
        }
        let _ = ip(&["link", "del", &self.bridge()]);
    }
}

/// Where a run claims its subnet: runs at the same time must not share
/// one, or the host routes one run's clients to the other's members.
fn subnet_claims() -> std::path::PathBuf {
    std::env::temp_dir().join("hark-chaos-subnets")
}

fn subnet_claim(subnet: u8) -> std::path::PathBuf {
    subnet_claims().join(subnet.to_string())
}

/// A `10.250.x.0/24` no other run uses: no interface has its host address,
/// and this process created its claim file (one left by a process that is
/// gone is taken over).
fn claim_subnet(pid: u32) -> Result<u8, String> {
    let dir = subnet_claims();
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let out = Command::new("ip")
        .args(["-o", "-4", "addr", "show"])
        .output()
        .map_err(|e| format!("running ip: {e}"))?;
    let in_use = String::from_utf8_lossy(&out.stdout).into_owned();
    let first = pid % 200;
    for k in 0..200 {
        let subnet = ((first + k) % 200 + 20) as u8;
        if in_use.contains(&format!(" 10.250.{subnet}.1/")) {
            continue;
        }
        let path = subnet_claim(subnet);
        for _ in 0..2 {
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(mut file) => {
                    use std::io::Write;
                    let _ = write!(file, "{pid}");
                    return Ok(subnet);
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let owner = std::fs::read_to_string(&path).unwrap_or_default();
                    let alive = !owner.is_empty()
                        && std::path::Path::new("/proc").join(owner.trim()).exists();
                    if alive {
                        break;
                    }
                    let _ = std::fs::remove_file(&path);
                }
                Err(e) => return Err(format!("{}: {e}", path.display())),
            }
        }
    }
    Err("no free 10.250.x.0/24 subnet for the members' namespaces".into())
}

impl Drop for Namespaces {
    fn drop(&mut self) {
        self.delete();
        let _ = std::fs::remove_file(subnet_claim(self.subnet));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{SocketAddr, TcpStream};
    use std::time::Duration;

    /// Whether member `from`'s namespace can open a TCP connection to `to`
    /// (a listener in `to`'s namespace, reached with bash's /dev/tcp).
    fn reaches(ns: &Namespaces, from: usize, to: SocketAddr) -> bool {
        let script = format!("exec 3<>/dev/tcp/{}/{} && echo ok", to.ip(), to.port());
        let out = Command::new("ip")
            .args([
                "netns",
                "exec",
                &ns.namespace(from),
                "timeout",
                "2",
                "bash",
                "-c",
            ])
            .arg(script)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).contains("ok")
    }

    /// Whether `from` reaches `to`, trying up to three times: on a loaded
    /// machine one try can run out of time where the link is up.
    fn reaches_in_time(ns: &Namespaces, from: usize, to: SocketAddr) -> bool {
        (0..3).any(|_| reaches(ns, from, to))
    }

    /// A listener inside a member's namespace, killed when dropped (a
    /// failed assertion must not leave it running).
    struct Listener(std::process::Child);

    impl Drop for Listener {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    /// A listener inside member `i`'s namespace (Python's: bash can dial
    /// but not listen), once it accepts: the host reaches every member.
    fn listen_in(ns: &Namespaces, i: usize, port: u16) -> Listener {
        let script = format!(
            "import socket\ns=socket.socket()\ns.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\ns.bind(('{}',{port}))\ns.listen(16)\nwhile True:\n  c,_=s.accept()\n  c.close()",
            ns.address(i)
        );
        let listener = Listener(
            Command::new("ip")
                .args(["netns", "exec", &ns.namespace(i), "python3", "-c"])
                .arg(script)
                .spawn()
                .unwrap(),
        );
        let at = SocketAddr::new(ns.address(i).into(), port);
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while TcpStream::connect_timeout(&at, Duration::from_secs(1)).is_err() {
            assert!(
                std::time::Instant::now() < deadline,
                "no listener at {at} after 20 s"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        listener
    }

    /// Cuts in the namespaces really stop traffic, one way or both, and
    /// heal restores it; the host (the clients) reaches every member
    /// throughout. Needs root: skipped, saying so, where namespaces cannot
    /// be made.
    #[test]
    fn routes_cut_and_heal_links_between_namespaces() {
        let ns = match Namespaces::create(3) {
            Ok(ns) => ns,
            Err(e) => {
                eprintln!("skipped: no network namespaces here ({e})");
                assert!(
                    std::env::var("HARK_REQUIRE_NETNS").as_deref() != Ok("1"),
                    "network namespaces are required here: {e}"
                );
                return;
            }
        };
        let port = 23_79;
        let _listeners: Vec<_> = (0..3).map(|i| listen_in(&ns, i, port)).collect();
        let at = |i: usize| SocketAddr::new(ns.address(i).into(), port);
        assert!(reaches_in_time(&ns, 0, at(1)) && reaches_in_time(&ns, 1, at(0)));
        ns.cut(0, 1);
        assert!(
            !reaches(&ns, 0, at(1)),
            "cut 0 -> 1 stops 0's connections to 1"
        );
        assert!(
            !reaches(&ns, 1, at(0)),
            "1's connections to 0 get no answer either"
        );
        assert!(reaches_in_time(&ns, 0, at(2)) && reaches_in_time(&ns, 2, at(1)));
        ns.heal();
        assert!(reaches_in_time(&ns, 0, at(1)) && reaches_in_time(&ns, 1, at(0)));
        ns.partition(&[2]);
        assert!(!reaches(&ns, 2, at(0)) && !reaches(&ns, 1, at(2)));
        assert!(reaches_in_time(&ns, 0, at(1)));
        // The host still reaches the partitioned member.
        assert!(TcpStream::connect_timeout(&at(2), Duration::from_secs(2)).is_ok());
        ns.heal();
        assert!(reaches_in_time(&ns, 2, at(0)));
    }
}
