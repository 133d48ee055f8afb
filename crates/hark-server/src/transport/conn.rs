//! A client connection, plain or TLS, and what it says of its caller (the
//! peer address and, under client certificates, the common name), as
//! request extensions the services read.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tonic::transport::server::Connected;

/// A client connection: plain or TLS over TCP, or plain over a unix socket
/// (a `unix://` listen URL).
pub enum Conn {
    Plain(TcpStream),
    Tls(Box<tokio_rustls::server::TlsStream<TcpStream>>, CertUser),
    Unix(tokio::net::UnixStream),
}

/// Whether a TLS connection's client certificate names the request's user:
/// only under `--client-cert-auth` (etcd's ClientCertAuthEnabled), not
/// when a trusted CA merely requires a certificate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CertUser {
    Named,
    Ignored,
}

/// What a request learns of its connection.
#[derive(Debug, Clone)]
pub struct ConnInfo {
    /// The verified client certificate's common name, under
    /// `--client-cert-auth` (the user when a request has no token).
    pub common_name: Option<String>,
    /// The client's address, to name its watch stream in reports.
    pub remote: Option<std::net::SocketAddr>,
}

/// The subject common name of a DER certificate.
pub fn common_name(der: &[u8]) -> Option<String> {
    let (_, cert) = x509_parser::parse_x509_certificate(der).ok()?;
    // Go's pkix.Name (what etcd compares) keeps the last one.
    let cn = cert.subject().iter_common_name().last()?;
    cn.as_str().ok().map(str::to_owned)
}

impl Connected for Conn {
    type ConnectInfo = ConnInfo;

    fn connect_info(&self) -> ConnInfo {
        let common_name = match self {
            Conn::Plain(_) | Conn::Unix(_) => None,
            Conn::Tls(_, CertUser::Ignored) => None,
            Conn::Tls(t, CertUser::Named) => t
                .get_ref()
                .1
                .peer_certificates()
                .and_then(|chain| chain.first())
                .and_then(|c| common_name(c)),
        };
        let remote = match self {
            Conn::Plain(tcp) => tcp.peer_addr().ok(),
            Conn::Tls(t, _) => t.get_ref().0.peer_addr().ok(),
            Conn::Unix(_) => None,
        };
        ConnInfo {
            common_name,
            remote,
        }
    }
}

impl AsyncRead for Conn {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Conn::Plain(t) => Pin::new(t).poll_read(cx, buf),
            Conn::Tls(t, _) => Pin::new(t.as_mut()).poll_read(cx, buf),
            Conn::Unix(u) => Pin::new(u).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Conn {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Conn::Plain(t) => Pin::new(t).poll_write(cx, buf),
            Conn::Tls(t, _) => Pin::new(t.as_mut()).poll_write(cx, buf),
            Conn::Unix(u) => Pin::new(u).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Conn::Plain(t) => Pin::new(t).poll_write_vectored(cx, bufs),
            Conn::Tls(t, _) => Pin::new(t.as_mut()).poll_write_vectored(cx, bufs),
            Conn::Unix(u) => Pin::new(u).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Conn::Plain(t) => t.is_write_vectored(),
            Conn::Tls(t, _) => t.is_write_vectored(),
            Conn::Unix(u) => u.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Conn::Plain(t) => Pin::new(t).poll_flush(cx),
            Conn::Tls(t, _) => Pin::new(t.as_mut()).poll_flush(cx),
            Conn::Unix(u) => Pin::new(u).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Conn::Plain(t) => Pin::new(t).poll_shutdown(cx),
            Conn::Tls(t, _) => Pin::new(t.as_mut()).poll_shutdown(cx),
            Conn::Unix(u) => Pin::new(u).poll_shutdown(cx),
        }
    }
}
