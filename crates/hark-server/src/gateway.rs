//! `hark gateway start` (etcd's `etcd gateway start`): a plain TCP proxy in
//! front of a cluster's client endpoints, for clients that take one address.
//! It does not speak gRPC: each accepted connection is joined byte for byte
//! to the next endpoint in turn that answers. An endpoint that cannot be
//! dialled is set aside for `--retry-delay`, then tried again. As etcd's,
//! it refuses endpoints that resolve to its own listen address (it would
//! proxy to itself), and has no TLS of its own: TLS passes through it.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use clap::Parser;
use parking_lot::Mutex;
use tokio::net::{TcpListener, TcpStream};

/// etcd's `gateway start` flags.
#[derive(Parser, Debug)]
#[command(name = "hark gateway start", no_binary_name = true)]
pub struct GatewayArgs {
    /// Address the gateway listens on.
    #[arg(long, default_value = "127.0.0.1:23790")]
    listen_addr: String,
    /// The cluster's client endpoints, comma separated (a scheme is dropped).
    #[arg(long, value_delimiter = ',', default_value = "127.0.0.1:2379")]
    endpoints: Vec<String>,
    /// How long an endpoint that could not be dialled is left out.
    #[arg(long, default_value = "1m", value_parser = crate::config::parse_go_duration)]
    retry_delay: Duration,
    /// DNS SRV discovery (not in Hark: give --endpoints).
    #[arg(long, default_value = "")]
    discovery_srv: String,
    #[arg(long, default_value = "")]
    discovery_srv_name: String,
    #[arg(long, num_args = 0..=1, default_missing_value = "true", action = clap::ArgAction::Set, default_value_t = false)]
    insecure_discovery: bool,
    #[arg(long, default_value = "")]
    trusted_ca_file: String,
}

/// What `hark gateway ...` was asked: `start` with its flags, which etcd
/// takes before or after the word.
pub fn parse(args: &[String]) -> Result<GatewayArgs, String> {
    let mut flags = Vec::new();
    let mut started = false;
    for arg in args {
        if arg == "start" && !started {
            started = true;
        } else {
            flags.push(arg.clone());
        }
    }
    if !started {
        return Err("usage: hark gateway start [--listen-addr=ADDR] [--endpoints=A,B,...] [--retry-delay=1m]\n\n\
             gateway starts a TCP proxy in front of a cluster's client endpoints"
            .into());
    }
    GatewayArgs::try_parse_from(flags).map_err(|e| e.to_string())
}

/// One endpoint and when it may be tried again after a failed dial.
struct Endpoint {
    address: String,
    set_aside_until: Mutex<Option<Instant>>,
}

/// The endpoints, taken in turn.
struct Endpoints {
    all: Vec<Endpoint>,
    next: AtomicUsize,
    retry_delay: Duration,
}

impl Endpoints {
    /// `addresses`, taken in turn from the first; one that cannot be
    /// dialled is set aside for `retry_delay`.
    fn new(addresses: Vec<String>, retry_delay: Duration) -> Endpoints {
        Endpoints {
            all: addresses
                .into_iter()
                .map(|address| Endpoint {
                    address,
                    set_aside_until: Mutex::new(None),
                })
                .collect(),
            next: AtomicUsize::new(0),
            retry_delay,
        }
    }

    /// A connection to the next endpoint in turn that answers, if any does.
    async fn dial(&self) -> Option<TcpStream> {
        for _ in 0..self.all.len() {
            let endpoint = &self.all[self.next.fetch_add(1, Ordering::Relaxed) % self.all.len()];
            {
                let mut aside = endpoint.set_aside_until.lock();
                match *aside {
                    Some(until) if Instant::now() < until => continue,
                    Some(_) => {
                        *aside = None;
                        tracing::info!(address = %endpoint.address, "activated");
                    }
                    None => {}
                }
            }
            match TcpStream::connect(&endpoint.address).await {
                Ok(tcp) => {
                    let _ = tcp.set_nodelay(true);
                    return Some(tcp);
                }
                Err(e) => {
                    tracing::warn!(
                        address = %endpoint.address,
                        interval = ?self.retry_delay,
                        error = %e,
                        "deactivated endpoint"
                    );
                    *endpoint.set_aside_until.lock() = Some(Instant::now() + self.retry_delay);
                }
            }
        }
        None
    }
}

/// `http://host:port` -> `host:port`, as the gateway proxies TCP.
fn strip_scheme(endpoint: &str) -> &str {
    endpoint
        .split_once("://")
        .map_or(endpoint, |(_, rest)| rest.trim_end_matches('/'))
}

async fn resolve(host_port: &str) -> Result<Vec<SocketAddr>, String> {
    tokio::net::lookup_host(host_port)
        .await
        .map(Iterator::collect)
        .map_err(|e| format!("failed to resolve {host_port}: {e}"))
}

/// Runs the gateway until SIGTERM or SIGINT.
pub async fn run(args: GatewayArgs) -> Result<(), String> {
    tracing::info!(args = ?std::env::args().collect::<Vec<_>>(), "Running: ");
    if !args.discovery_srv.is_empty() {
        return Err(
            "Hark's gateway has no DNS SRV discovery (--discovery-srv); list the endpoints in --endpoints"
                .into(),
        );
    }
    let endpoints: Vec<String> = args
        .endpoints
        .iter()
        .map(|e| strip_scheme(e.trim()).to_string())
        .filter(|e| !e.is_empty())
        .collect();
    if endpoints.is_empty() {
        return Err("no endpoints found".into());
    }
    let listen: Vec<SocketAddr> = resolve(&args.listen_addr).await?;
    let listen_port = listen.first().map(SocketAddr::port);
    let listen_ips: Vec<IpAddr> = listen.iter().map(SocketAddr::ip).collect();
    for endpoint in &endpoints {
        for addr in resolve(endpoint).await? {
            if Some(addr.port()) == listen_port && listen_ips.contains(&addr.ip()) {
                return Err(format!(
                    "SRV or endpoint ({endpoint}->{addr}) should not resolve to the gateway listen addr ({})",
                    args.listen_addr
                ));
            }
        }
    }
    let listener = TcpListener::bind(listen.as_slice())
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", args.listen_addr))?;
    tracing::info!(endpoints = ?endpoints, "ready to proxy client requests");
    let endpoints = Arc::new(Endpoints::new(endpoints, args.retry_delay));
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .map_err(|e| e.to_string())?;
    loop {
        let (mut client, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    tracing::warn!(error = %e, "accepting a connection failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = term.recv() => return Ok(()),
            _ = tokio::signal::ctrl_c() => return Ok(()),
        };
        let _ = client.set_nodelay(true);
        let endpoints = endpoints.clone();
        tokio::spawn(async move {
            let Some(mut remote) = endpoints.dial().await else {
                tracing::warn!("no active endpoint to proxy a connection to");
                return;
            };
            let _ = tokio::io::copy_bidirectional(&mut client, &mut remote).await;
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_and_its_flags_come_in_either_order() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let before = parse(&args(&["--endpoints=http://a:1,http://b:2", "start"])).unwrap();
        let after = parse(&args(&["start", "--endpoints", "http://a:1,http://b:2"])).unwrap();
        assert_eq!(before.endpoints, after.endpoints);
        assert_eq!(before.listen_addr, "127.0.0.1:23790");
        assert_eq!(before.retry_delay, Duration::from_secs(60));
        assert!(parse(&args(&["--endpoints=a:1"])).is_err());
        assert_eq!(strip_scheme("http://localhost:20000"), "localhost:20000");
        assert_eq!(strip_scheme("localhost:20000"), "localhost:20000");
    }

    #[tokio::test]
    async fn connections_go_to_the_endpoints_in_turn_and_a_dead_one_is_set_aside() {
        let live = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let live_addr = live.local_addr().unwrap().to_string();
        // A port nobody listens on: bound, then dropped.
        let dead_addr = {
            let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
            l.local_addr().unwrap().to_string()
        };
        let endpoints = Endpoints::new(vec![dead_addr, live_addr.clone()], Duration::from_secs(60));
        for _ in 0..3 {
            let tcp = endpoints.dial().await.expect("the live endpoint answers");
            assert_eq!(tcp.peer_addr().unwrap().to_string(), live_addr);
            let _ = live.accept().await.unwrap();
        }
        assert!(endpoints.all[0].set_aside_until.lock().is_some());
        assert!(endpoints.all[1].set_aside_until.lock().is_none());
    }
}
