//! The member's listeners: bound first (a taken port fails the start
//! before anything opens), then served, each behind the same HTTP/2 limits
//! and identity boundary.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use std::path::PathBuf;

use tokio::net::{TcpListener, UnixListener};
use tokio_stream::StreamExt;
use tonic::service::Routes;
use tonic::transport::Server;

use crate::config::{Config, socket_addrs};
use crate::tasks::Stop;
use crate::transport::authority::AuthorityFix;
use crate::transport::pacing::{AcceptPace, Sliced};
use crate::transport::tls::TlsServer;
use crate::transport::traffic::Counted;

/// HTTP/2 flow-control windows. h2 lets a peer keep about half the connection
/// window in small unread DATA frames before it answers ENHANCE_YOUR_CALM, so a
/// large window lets clients pipeline thousands of watch creates or keep-alives.
const CONNECTION_WINDOW: u32 = 64 << 20;
const STREAM_WINDOW: u32 = 16 << 20;
/// Streams a connection may make the server reset for its own errors (chiefly
/// streams past SETTINGS_MAX_CONCURRENT_STREAMS, refused) before it is ended
/// with GOAWAY(ENHANCE_YOUR_CALM). hyper's default; tonic passes "no limit",
/// under which one connection had 90,000 streams refused one by one.
const MAX_LOCAL_ERROR_RESETS: usize = 1024;

/// What a listener serves: the schemes of the URLs that named its address.
/// etcd serves `http://` and `https://` on one port when both name it,
/// telling each connection's kind by its first bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Schemes {
    Plain,
    Tls,
    Both,
}

impl Schemes {
    fn of(url: &str) -> Schemes {
        if crate::config::is_https(url) {
            Schemes::Tls
        } else {
            Schemes::Plain
        }
    }

    pub fn tls(self) -> bool {
        self != Schemes::Plain
    }

    pub fn plain(self) -> bool {
        self != Schemes::Tls
    }

    fn and(self, other: Schemes) -> Schemes {
        if self == other { self } else { Schemes::Both }
    }
}

/// A bound socket: TCP, or a unix socket (`unix://` URLs).
pub enum Socket {
    Tcp(TcpListener),
    Unix(UnixSocket),
}

/// A listening unix socket; its file is removed when it is dropped (as
/// etcd removes it at shutdown), unless another socket has replaced it.
pub struct UnixSocket {
    listener: UnixListener,
    path: PathBuf,
    /// The file's device and inode when bound.
    identity: Option<(u64, u64)>,
}

impl Drop for UnixSocket {
    fn drop(&mut self) {
        if self.identity.is_some() && socket_identity(&self.path) == self.identity {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

fn socket_identity(path: &std::path::Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(path)
        .ok()
        .map(|m| (m.dev(), m.ino()))
}

/// As etcd: a socket left by an earlier run is replaced; any other file at
/// the path is an error, never deleted.
fn replace_stale_socket(path: &std::path::Path) -> Result<(), String> {
    use std::os::unix::fs::FileTypeExt;
    match std::fs::symlink_metadata(path) {
        Err(_) => Ok(()),
        Ok(m) if m.file_type().is_socket() => std::fs::remove_file(path)
            .map_err(|e| format!("cannot remove the old socket {}: {e}", path.display())),
        Ok(_) => Err(format!("{} exists and is not a socket", path.display())),
    }
}

/// One bound listener, the URLs that named it and what it serves.
pub struct BoundListener {
    pub socket: Socket,
    pub schemes: Schemes,
    pub urls: Vec<String>,
}

impl BoundListener {
    pub fn local_addr(&self) -> String {
        match &self.socket {
            Socket::Tcp(tcp) => tcp
                .local_addr()
                .map_or_else(|_| "?".to_string(), |a| a.to_string()),
            Socket::Unix(unix) => unix.path.display().to_string(),
        }
    }

    /// The TCP address it was bound to (`None` for a unix socket).
    pub fn tcp_addr(&self) -> Option<SocketAddr> {
        match &self.socket {
            Socket::Tcp(tcp) => tcp.local_addr().ok(),
            Socket::Unix(_) => None,
        }
    }
}

/// The listeners of every `--listen-*-urls` flag, bound, in flag order (one
/// per address: see [`Schemes`]).
pub struct Bound {
    pub client: Vec<BoundListener>,
    pub metrics: Vec<BoundListener>,
    pub client_http: Vec<BoundListener>,
    pub peer: Vec<BoundListener>,
}

impl Bound {
    pub async fn bind(config: &Config) -> Result<Bound, String> {
        Ok(Bound {
            client: bind_all(&config.listen_client_urls, Family::Client).await?,
            metrics: bind_all(&config.listen_metrics_urls, Family::Metrics).await?,
            client_http: bind_all(&config.listen_client_http_urls, Family::Client).await?,
            peer: bind_all(&config.listen_peer_urls, Family::Peer).await?,
        })
    }
}

/// The listen URLs that make listeners, in order.
pub fn listen_urls(urls: &[String]) -> impl Iterator<Item = &String> {
    urls.iter().filter(|u| !u.trim().is_empty())
}

/// Which flag a listen URL came from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Family {
    Client,
    Metrics,
    Peer,
}

async fn bind_all(urls: &[String], family: Family) -> Result<Vec<BoundListener>, String> {
    let mut listeners: Vec<(SocketAddr, BoundListener)> = Vec::new();
    let mut unix = Vec::new();
    for url in listen_urls(urls) {
        if let Some(path) = crate::config::unix_socket_path(url, family == Family::Peer)? {
            replace_stale_socket(&path).map_err(|e| format!("cannot listen on {url}: {e}"))?;
            let listener =
                UnixListener::bind(&path).map_err(|e| format!("cannot listen on {url}: {e}"))?;
            let identity = socket_identity(&path);
            unix.push(BoundListener {
                socket: Socket::Unix(UnixSocket {
                    listener,
                    path,
                    identity,
                }),
                schemes: Schemes::Plain,
                urls: vec![url.clone()],
            });
            continue;
        }
        let addr = socket_addrs(url)?[0];
        // A fixed client port named twice (`http://` and `https://`) is one
        // listener serving both, as in etcd; port 0 asks for a fresh port
        // each time. A peer or metrics port is never shared: a plain URL
        // beside a TLS one would let anyone past the TLS (etcd, too, binds
        // those once per URL, and the second bind fails).
        if family == Family::Client
            && addr.port() != 0
            && let Some((_, shared)) = listeners.iter_mut().find(|(a, _)| *a == addr)
        {
            shared.schemes = shared.schemes.and(Schemes::of(url));
            shared.urls.push(url.clone());
            continue;
        }
        let tcp = listen(addr, crate::transport::pacing::LISTEN_BACKLOG)
            .map_err(|e| format!("cannot listen on {url}: {e}"))?;
        listeners.push((
            addr,
            BoundListener {
                socket: Socket::Tcp(tcp),
                schemes: Schemes::of(url),
                urls: vec![url.clone()],
            },
        ));
    }
    Ok(listeners.into_iter().map(|(_, l)| l).chain(unix).collect())
}

/// Binds `addr` (with SO_REUSEADDR, as `TcpListener::bind` does) and
/// listens with a backlog of `backlog`.
fn listen(addr: SocketAddr, backlog: u32) -> std::io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(backlog)
}

/// The TCP addresses the listeners were bound to (unix sockets have none).
pub fn local_addrs(listeners: &[BoundListener]) -> Vec<SocketAddr> {
    listeners
        .iter()
        .filter_map(BoundListener::tcp_addr)
        .collect()
}

/// Whether a listener's bytes count as client traffic (the metrics port's
/// scrapes do not).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Traffic {
    Counted,
    NotCounted,
}

/// What each client connection of a listener is allowed and asked.
#[derive(Clone, Copy)]
pub struct ConnectionRules {
    pub traffic: Traffic,
    /// SETTINGS_MAX_CONCURRENT_STREAMS (`--max-concurrent-streams`).
    pub max_streams: u32,
    /// How often an idle connection is pinged (`--grpc-keepalive-interval`;
    /// `None`: never) and how long the answer may take before the connection
    /// is closed (`--grpc-keepalive-timeout`).
    pub keepalive: Option<(Duration, Duration)>,
}

/// Serves `routes` on one listener, each connection under `rules`.
pub async fn serve(
    listener: BoundListener,
    tls: Option<Arc<TlsServer>>,
    routes: Routes,
    stop: Stop,
    rules: ConnectionRules,
) {
    let ConnectionRules {
        traffic,
        max_streams,
        keepalive,
    } = rules;
    // Every connection goes through AuthorityFix (see authority.rs).
    let incoming = connections(listener, tls, Endpoint::Client).map(move |conn| {
        let counted = Counted::new(conn, traffic == Traffic::Counted);
        Ok::<_, std::io::Error>(AuthorityFix::new(Sliced::new(counted)))
    });
    // The frame and header list limits are stated, not left to
    // hyper's defaults: AuthorityFix steps aside at the same figures.
    let result = http2_server()
        .accept_http1(true)
        .max_concurrent_streams(max_streams)
        .http2_keepalive_interval(keepalive.map(|(interval, _)| interval))
        .http2_keepalive_timeout(keepalive.map(|(_, timeout)| timeout))
        // Every route of every listener behind one identity boundary.
        .layer(crate::transport::boundary::IdentityBoundaryLayer)
        .add_routes(routes)
        .serve_with_incoming_shutdown(incoming, stop.raised())
        .await;
    if let Err(e) = result {
        tracing::error!(error = %e, "listener failed");
    }
}

/// The HTTP/2 settings every listener shares: windows sized for pipelined
/// small messages, and the front door's frame, header and reset bounds.
fn http2_server() -> Server {
    Server::builder()
        .initial_connection_window_size(CONNECTION_WINDOW)
        .initial_stream_window_size(STREAM_WINDOW)
        .max_frame_size(crate::transport::authority::MAX_FRAME_SIZE)
        .http2_max_header_list_size(crate::transport::authority::MAX_HEADER_LIST_SIZE)
        .http2_max_local_error_reset_streams(Some(MAX_LOCAL_ERROR_RESETS))
}

/// Which listener family a connection came to, as etcd names it when it
/// refuses one ("rejected connection on client endpoint").
#[derive(Clone, Copy)]
enum Endpoint {
    Client,
    Peer,
}

impl Endpoint {
    fn rejected(self) -> &'static str {
        match self {
            Endpoint::Client => "rejected connection on client endpoint",
            Endpoint::Peer => "rejected connection on peer endpoint",
        }
    }
}

/// A listener's connections: plain, or TLS once their handshake is done.
/// Handshakes run in tasks of their own under [`crate::transport::tls::HANDSHAKE_TIMEOUT`],
/// so a client that stalls one holds up nobody else; at most the handshakes
/// begun within one timeout are in flight. Finished connections wait in a
/// queue of 64 for the server to take them: when it is full, handshake
/// tasks wait, the accept loop does not. A refused handshake is logged as
/// etcd logs it (its message, keys and Go's words for the error), and so
/// is, on peer listeners, a certificate that does not name the address it
/// came from.
fn connections(
    listener: BoundListener,
    tls: Option<Arc<TlsServer>>,
    endpoint: Endpoint,
) -> std::pin::Pin<Box<dyn tokio_stream::Stream<Item = crate::transport::conn::Conn> + Send>> {
    use crate::transport::conn::Conn;
    let schemes = listener.schemes;
    let tcp = match listener.socket {
        Socket::Tcp(tcp) => tcp,
        Socket::Unix(unix) => return Box::pin(accepted_unix(unix).map(Conn::Unix)),
    };
    let tls = match tls {
        Some(tls) if schemes.tls() => tls,
        _ => return Box::pin(accepted(tcp).map(Conn::Plain)),
    };
    let (tx, rx) = tokio::sync::mpsc::channel(64);
    tokio::spawn(async move {
        let mut incoming = std::pin::pin!(accepted(tcp));
        loop {
            let tcp = tokio::select! {
                tcp = incoming.next() => match tcp {
                    Some(tcp) => tcp,
                    None => return,
                },
                // The server stopped serving this listener.
                _ = tx.closed() => return,
            };
            let (tls, tx) = (tls.clone(), tx.clone());
            tokio::spawn(async move {
                if schemes.plain() && !starts_a_tls_handshake(&tcp).await {
                    let _ = tx.send(Conn::Plain(tcp)).await;
                    return;
                }
                if let Some(conn) = handshake(tcp, &tls, endpoint).await {
                    let _ = tx.send(conn).await;
                }
            });
        }
    });
    Box::pin(tokio_stream::wrappers::ReceiverStream::new(rx))
}

/// Whether a connection to a listener serving both schemes opens with a
/// TLS record (a handshake: content type 22), as etcd's cmux tells them
/// apart; anything else (an HTTP/1 request, HTTP/2's preface) is plain. A
/// client that sends nothing within the handshake timeout is plain too,
/// and left to the server's own timeouts.
async fn starts_a_tls_handshake(tcp: &tokio::net::TcpStream) -> bool {
    const TLS_HANDSHAKE_RECORD: u8 = 0x16;
    let mut first = [0u8; 1];
    matches!(
        tokio::time::timeout(crate::transport::tls::HANDSHAKE_TIMEOUT, tcp.peek(&mut first)).await,
        Ok(Ok(1)) if first[0] == TLS_HANDSHAKE_RECORD
    )
}

/// The TLS handshake of one connection, under the handshake timeout; a
/// refusal is logged as etcd logs it (its message, keys and Go's words for
/// the error), and so is, where the listener checks it, a certificate that
/// does not name the address it came from.
async fn handshake(
    tcp: tokio::net::TcpStream,
    tls: &TlsServer,
    endpoint: Endpoint,
) -> Option<crate::transport::conn::Conn> {
    use crate::transport::conn::Conn;
    use crate::transport::tls::{HANDSHAKE_TIMEOUT, Sans, go_words};
    let acceptor = tokio_rustls::TlsAcceptor::from(tls.config());
    let remote = tcp.peer_addr().ok();
    let remote_addr = remote.map_or_else(String::new, |a| a.to_string());
    let stream = match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await {
        Ok(Ok(stream)) => stream,
        // A client certificate in X.509 v1 form reads
        // "UnsupportedCertVersion", see docs/security.md.
        Ok(Err(e)) => {
            let error = go_words(&e);
            // As etcd: a connection closed mid-handshake is only worth a
            // debug line.
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                tracing::debug!("remote-addr" = %remote_addr, error, "{}", endpoint.rejected());
            } else {
                tracing::warn!("remote-addr" = %remote_addr, error, "{}", endpoint.rejected());
            }
            return None;
        }
        Err(_) => {
            tracing::warn!(
                "remote-addr" = %remote_addr,
                error = "tls: handshake timed out",
                "{}",
                endpoint.rejected()
            );
            return None;
        }
    };
    let (_, session) = stream.get_ref();
    let leaf = session.peer_certificates().and_then(|c| c.first());
    if let (true, Some(leaf), Some(remote)) = (tls.checks_caller_san(), leaf, remote) {
        let sans = Sans::of(leaf);
        // Name lookups count against the handshake's time.
        let verdict = tokio::time::timeout(HANDSHAKE_TIMEOUT, sans.admit(remote.ip()))
            .await
            .unwrap_or_else(|_| Err("tls: checking the certificate's names timed out".into()));
        if let Err(error) = verdict {
            let ips: Vec<String> = sans.ips.iter().map(|ip| ip.to_string()).collect();
            tracing::warn!(
                "remote-addr" = %remote_addr,
                "server-name" = session.server_name().unwrap_or(""),
                "ip-addresses" = ?ips,
                "dns-names" = ?sans.dns,
                error,
                "{}",
                endpoint.rejected()
            );
            return None;
        }
    }
    Some(Conn::Tls(Box::new(stream), tls.cert_user()))
}

/// A listener's connections, Nagle off, taken at the [`AcceptPace`]. A failed
/// accept (out of file descriptors and the like) is logged and skipped: the
/// others keep being served.
fn accepted(listener: TcpListener) -> impl tokio_stream::Stream<Item = tokio::net::TcpStream> {
    futures_util::stream::unfold(
        (listener, AcceptPace::default()),
        |(listener, mut pace)| async move {
            loop {
                pace.admit().await;
                match listener.accept().await {
                    Ok((tcp, _)) => {
                        let _ = tcp.set_nodelay(true);
                        return Some((tcp, (listener, pace)));
                    }
                    Err(e) => tracing::warn!(error = %e, "accepting a connection failed"),
                }
            }
        },
    )
}

/// A unix socket's connections, taken at the [`AcceptPace`]; the socket is
/// kept (and its file) while they are.
fn accepted_unix(unix: UnixSocket) -> impl tokio_stream::Stream<Item = tokio::net::UnixStream> {
    futures_util::stream::unfold(
        (unix, AcceptPace::default()),
        |(unix, mut pace)| async move {
            loop {
                pace.admit().await;
                match unix.listener.accept().await {
                    Ok((stream, _)) => return Some((stream, (unix, pace))),
                    Err(e) => tracing::warn!(error = %e, "accepting a connection failed"),
                }
            }
        },
    )
}

/// Concurrent HTTP/2 streams per peer connection. A member's own traffic
/// needs a few (appends, votes, a snapshot) plus one per request it
/// forwards to the leader; past the cap a peer's client queues its next
/// request rather than failing it, while a stranger on the peer port cannot
/// open streams without bound (as etcd's Go server caps them too).
pub const PEER_MAX_STREAMS: u32 = 1024;

/// Serves the peer protocol on one `--listen-peer-urls` listener.
pub async fn serve_peers(
    listener: BoundListener,
    tls: Option<Arc<TlsServer>>,
    peers: Routes,
    stop: Stop,
) {
    let incoming = connections(listener, tls, Endpoint::Peer).map(Ok::<_, std::io::Error>);
    let result = http2_server()
        .max_concurrent_streams(PEER_MAX_STREAMS)
        .layer(crate::transport::boundary::IdentityBoundaryLayer)
        .add_routes(peers)
        .serve_with_incoming_shutdown(incoming, stop.raised())
        .await;
    if let Err(e) = result {
        tracing::error!(error = %e, "peer listener failed");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn free_port() -> u16 {
        std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    }

    #[tokio::test]
    async fn only_a_client_port_is_shared_by_http_and_https() {
        let port = free_port();
        let urls = vec![
            format!("http://127.0.0.1:{port}"),
            format!("https://127.0.0.1:{port}"),
        ];
        let client = bind_all(&urls, Family::Client).await.unwrap();
        assert_eq!(client.len(), 1);
        assert_eq!(client[0].schemes, Schemes::Both);
        drop(client);
        // A plain peer or metrics URL beside a TLS one on the same port
        // would let anyone past the TLS: the second bind fails.
        for family in [Family::Peer, Family::Metrics] {
            let err = bind_all(&urls, family).await.err().expect("refused");
            assert!(err.contains("cannot listen on https://"), "{err}");
        }
    }

    #[tokio::test]
    async fn a_unix_socket_replaces_an_old_socket_but_never_another_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.sock");
        let url = format!("unix://{}", path.display());
        let first = bind_all(std::slice::from_ref(&url), Family::Client)
            .await
            .unwrap();
        // A socket left behind (the first listener still holds it) is
        // replaced; the first one's drop then leaves the new file alone.
        let second = bind_all(std::slice::from_ref(&url), Family::Client)
            .await
            .unwrap();
        drop(first);
        assert!(path.exists(), "the old listener removed the new socket");
        drop(second);
        assert!(!path.exists(), "the socket outlived its listener");
        std::fs::write(&path, b"data").unwrap();
        let err = bind_all(std::slice::from_ref(&url), Family::Client)
            .await
            .err()
            .expect("refused");
        assert!(err.contains("is not a socket"), "{err}");
        assert_eq!(std::fs::read(&path).unwrap(), b"data");
    }
}
