//! Starting Hark or etcd on fresh data dirs and free ports, fsync on.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy)]
pub enum Kind {
    Hark,
    Etcd,
}

/// The same backend quota for both servers, etcd's suggested maximum: the
/// maintenance scenario fills a GiB, and neither server's default (2 GiB)
/// leaves room for an LSM's space amplification while it compacts.
const QUOTA: u64 = 8 << 30;

/// `--tls` / `--user`: the same for Hark and etcd.
#[derive(Debug, Clone, Copy, Default)]
pub struct Secure {
    pub tls: bool,
    pub user: bool,
}

pub struct Server {
    children: Vec<Child>,
    /// Every member's client URL.
    pub endpoints: Vec<String>,
    /// The first member's pid (memory and CPU figures are that member's).
    pub pid: u32,
    /// Every member's pid (a cluster's CPU is theirs together).
    pub pids: Vec<u32>,
    dir: PathBuf,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or(0)
}

impl Server {
    /// Starts `members` servers (1: a single member as each runs by
    /// default; more: a cluster started with etcd's flags, the same for
    /// Hark and etcd) on fresh data dirs, and waits until each serves.
    pub async fn start(
        kind: Kind,
        binary: &str,
        members: usize,
        secure: Secure,
        extra: &[&str],
    ) -> Result<Server, String> {
        let dir = std::env::temp_dir().join(format!(
            "hark-loadtest-{}-{}",
            std::process::id(),
            Instant::now().elapsed().as_nanos() ^ u128::from(free_port())
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let tls = if secure.tls {
            Some(crate::secure::certificates(&dir)?)
        } else {
            None
        };
        let scheme = if tls.is_some() { "https" } else { "http" };
        // With --tls a cluster's members talk mutual TLS to each other too,
        // with the same certificate (no usage restriction: server and client).
        let peer_tls = if let Some((cert, key, ca)) = tls.as_ref().filter(|_| members > 1) {
            let ca_file = dir.join("ca.pem");
            std::fs::write(&ca_file, ca).map_err(|e| e.to_string())?;
            vec![
                format!("--peer-cert-file={cert}"),
                format!("--peer-key-file={key}"),
                format!("--peer-trusted-ca-file={}", ca_file.display()),
                "--peer-client-cert-auth".into(),
            ]
        } else {
            Vec::new()
        };
        let peer_scheme = if peer_tls.is_empty() { "http" } else { "https" };
        let ports: Vec<(u16, u16)> = (0..members).map(|_| (free_port(), free_port())).collect();
        let initial: Vec<String> = ports
            .iter()
            .enumerate()
            .map(|(i, (_, peer))| format!("m{i}={peer_scheme}://127.0.0.1:{peer}"))
            .collect();
        let mut server = Server {
            children: Vec::new(),
            endpoints: Vec::new(),
            pid: 0,
            pids: Vec::new(),
            dir: dir.clone(),
        };
        for (i, (client_port, peer_port)) in ports.iter().enumerate() {
            let endpoint = format!("{scheme}://127.0.0.1:{client_port}");
            let peer = format!("{peer_scheme}://127.0.0.1:{peer_port}");
            let data = dir.join(format!("m{i}")).display().to_string();
            let mut args = vec![
                format!("--data-dir={data}"),
                format!("--listen-client-urls={endpoint}"),
                format!("--quota-backend-bytes={QUOTA}"),
                "--log-level=error".into(),
            ];
            if let Some((cert, key, _)) = &tls {
                args.extend([format!("--cert-file={cert}"), format!("--key-file={key}")]);
            }
            args.extend(peer_tls.iter().cloned());
            args.extend(extra.iter().map(|a| a.to_string()));
            if members == 1 && matches!(kind, Kind::Hark) {
                // Alone, Hark is a cluster of one; not on etcd's default port.
                args.push(format!("--listen-peer-urls={peer}"));
            } else {
                args.extend([
                    format!("--name=m{i}"),
                    format!("--advertise-client-urls={endpoint}"),
                    format!("--listen-peer-urls={peer}"),
                    format!("--initial-advertise-peer-urls={peer}"),
                    format!("--initial-cluster={}", initial.join(",")),
                    "--initial-cluster-state=new".into(),
                ]);
            }
            let child = Command::new(binary)
                .args(&args)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .map_err(|e| format!("starting {binary}: {e}"))?;
            if i == 0 {
                server.pid = child.id();
            }
            server.pids.push(child.id());
            server.children.push(child);
            server.endpoints.push(endpoint);
        }
        let tls_options = tls.map(|(_, _, ca)| hark_client::TlsOptions {
            ca_pem: Some(ca),
            ..Default::default()
        });
        let plain = hark_client::ConnectOptions {
            tls: tls_options.clone(),
            ..Default::default()
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        for endpoint in &server.endpoints {
            let client = hark_client::Client::connect_with([endpoint], plain.clone())
                .await
                .map_err(|e| e.to_string())?;
            while client.status().await.map_or(true, |s| s.leader == 0) {
                if Instant::now() > deadline {
                    return Err(format!("{binary} did not start serving"));
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
        let user = if secure.user {
            crate::secure::enable_auth(&server.endpoints, tls_options.clone()).await?;
            Some((crate::secure::USER.into(), crate::secure::PASSWORD.into()))
        } else {
            None
        };
        crate::secure::set(hark_client::ConnectOptions {
            user,
            tls: tls_options,
            ..Default::default()
        });
        Ok(server)
    }

    pub fn stop(mut self) {
        for child in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Resident memory of a process, in bytes (Linux `/proc`).
pub fn rss_bytes(pid: u32) -> Result<u64, String> {
    status_bytes(pid, "VmRSS")
}

/// A memory figure of `/proc/PID/status` (`VmRSS`, `VmHWM`, …) in bytes.
pub fn status_bytes(pid: u32, field: &str) -> Result<u64, String> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .map_err(|e| format!("reading /proc/{pid}/status: {e}"))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kb| kb * 1024)
        .ok_or_else(|| format!("no {field} for pid {pid}"))
}

/// The whole machine's CPU time, busy and in all, in seconds summed over
/// its cores (Linux `/proc/stat`'s first line; idle and iowait count as not
/// busy).
pub fn machine_cpu_seconds() -> Result<(f64, f64), String> {
    let stat =
        std::fs::read_to_string("/proc/stat").map_err(|e| format!("reading /proc/stat: {e}"))?;
    let ticks: Vec<u64> = stat
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("cpu "))
        .ok_or("malformed /proc/stat")?
        .split_whitespace()
        .map_while(|t| t.parse().ok())
        .collect();
    // user nice system idle iowait irq softirq steal (guest time is in user).
    if ticks.len() < 8 {
        return Err("malformed /proc/stat".into());
    }
    let total: u64 = ticks[..8].iter().sum();
    let idle = ticks[3] + ticks[4];
    Ok(((total - idle) as f64 / 100.0, total as f64 / 100.0))
}

/// CPU time (user + system) a process has used, in seconds (Linux `/proc`,
/// counted in USER_HZ ticks, which are 100 Hz on x86 and ARM).
pub fn cpu_seconds(pid: u32) -> Result<f64, String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map_err(|e| format!("reading /proc/{pid}/stat: {e}"))?;
    // Fields after the command name, which is in parentheses and may hold spaces.
    let rest = stat
        .rsplit_once(')')
        .map(|(_, r)| r)
        .ok_or_else(|| format!("malformed /proc/{pid}/stat"))?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are the 14th and 15th fields; `rest` starts at the 3rd.
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok());
    match (ticks(11), ticks(12)) {
        (Some(user), Some(system)) => Ok((user + system) as f64 / 100.0),
        _ => Err(format!("no CPU times in /proc/{pid}/stat")),
    }
}
