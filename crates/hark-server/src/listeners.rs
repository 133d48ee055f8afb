//! The member's listeners: bound first (a taken port fails the start
//! before anything opens), then served, each behind the same HTTP/2 limits
//! and identity boundary.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
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

/// The listeners of every `--listen-*-urls` flag, bound, in flag order.
pub struct Bound {
    pub client: Vec<TcpListener>,
    pub metrics: Vec<TcpListener>,
    pub client_http: Vec<TcpListener>,
    pub peer: Vec<TcpListener>,
}

impl Bound {
    pub async fn bind(config: &Config) -> Result<Bound, String> {
        Ok(Bound {
            client: bind_all(&config.listen_client_urls).await?,
            metrics: bind_all(&config.listen_metrics_urls).await?,
            client_http: bind_all(&config.listen_client_http_urls).await?,
            peer: bind_all(&config.listen_peer_urls).await?,
        })
    }
}

/// The listen URLs that make listeners, in order.
pub fn listen_urls(urls: &[String]) -> impl Iterator<Item = &String> {
    urls.iter().filter(|u| !u.trim().is_empty())
}

async fn bind_all(urls: &[String]) -> Result<Vec<TcpListener>, String> {
    let mut listeners = Vec::new();
    for url in listen_urls(urls) {
        let addr = socket_addrs(url)?[0];
        let listener = listen(addr, crate::transport::pacing::LISTEN_BACKLOG)
            .map_err(|e| format!("cannot listen on {url}: {e}"))?;
        listeners.push(listener);
    }
    Ok(listeners)
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

pub fn local_addrs(listeners: &[TcpListener]) -> Result<Vec<SocketAddr>, String> {
    listeners
        .iter()
        .map(|l| l.local_addr().map_err(|e| e.to_string()))
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
    listener: TcpListener,
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
    let incoming = connections(listener, tls).map(move |conn| {
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

/// A listener's connections: plain, or TLS once their handshake is done.
/// Handshakes run in tasks of their own under [`crate::transport::tls::HANDSHAKE_TIMEOUT`],
/// so a client that stalls one holds up nobody else; at most the handshakes
/// begun within one timeout are in flight. Finished connections wait in a
/// queue of 64 for the server to take them: when it is full, handshake
/// tasks wait, the accept loop does not.
fn connections(
    listener: TcpListener,
    tls: Option<Arc<TlsServer>>,
) -> std::pin::Pin<Box<dyn tokio_stream::Stream<Item = crate::transport::conn::Conn> + Send>> {
    use crate::transport::conn::Conn;
    use crate::transport::tls::HANDSHAKE_TIMEOUT;
    let Some(tls) = tls else {
        return Box::pin(accepted(listener).map(Conn::Plain));
    };
    let (tx, rx) = tokio::sync::mpsc::channel(64);
    tokio::spawn(async move {
        let mut incoming = std::pin::pin!(accepted(listener));
        loop {
            let tcp = tokio::select! {
                tcp = incoming.next() => match tcp {
                    Some(tcp) => tcp,
                    None => return,
                },
                // The server stopped serving this listener.
                _ = tx.closed() => return,
            };
            let acceptor = tokio_rustls::TlsAcceptor::from(tls.config());
            let cert_user = tls.cert_user();
            let tx = tx.clone();
            tokio::spawn(async move {
                let remote = tcp.peer_addr().ok();
                // As etcd logs "rejected connection": who, and why (a client
                // certificate in X.509 v1 form reads "UnsupportedCertVersion",
                // see docs/security.md).
                match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await {
                    Ok(Ok(stream)) => {
                        let _ = tx.send(Conn::Tls(Box::new(stream), cert_user)).await;
                    }
                    Ok(Err(e)) => tracing::warn!(
                        remote = ?remote,
                        error = %e,
                        "rejected connection: TLS handshake failed"
                    ),
                    Err(_) => tracing::warn!(
                        remote = ?remote,
                        "rejected connection: TLS handshake timed out"
                    ),
                }
            });
        }
    });
    Box::pin(tokio_stream::wrappers::ReceiverStream::new(rx))
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

/// Concurrent HTTP/2 streams per peer connection. A member's own traffic
/// needs a few (appends, votes, a snapshot) plus one per request it
/// forwards to the leader; past the cap a peer's client queues its next
/// request rather than failing it, while a stranger on the peer port cannot
/// open streams without bound (as etcd's Go server caps them too).
pub const PEER_MAX_STREAMS: u32 = 1024;

/// Serves the peer protocol on one `--listen-peer-urls` listener.
pub async fn serve_peers(
    listener: TcpListener,
    tls: Option<Arc<TlsServer>>,
    peers: Routes,
    stop: Stop,
) {
    let incoming = connections(listener, tls).map(Ok::<_, std::io::Error>);
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
