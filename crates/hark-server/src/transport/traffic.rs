//! Client traffic in bytes (`etcd_network_client_grpc_received_bytes_total`
//! and `..._sent_bytes_total`), counted on each client connection's socket:
//! what the operator's network sees, HTTP/2 framing included.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tonic::transport::server::Connected;

pub const RECEIVED: &str = "etcd_network_client_grpc_received_bytes_total";
pub const SENT: &str = "etcd_network_client_grpc_sent_bytes_total";

/// A connection that counts the bytes it carries.
pub struct Counted<IO> {
    io: IO,
    received: metrics::Counter,
    sent: metrics::Counter,
}

impl<IO> Counted<IO> {
    /// Counts into the client traffic series when `counted`, else nowhere.
    pub fn new(io: IO, counted: bool) -> Self {
        let (received, sent) = if counted {
            (metrics::counter!(RECEIVED), metrics::counter!(SENT))
        } else {
            (metrics::Counter::noop(), metrics::Counter::noop())
        };
        Counted { io, received, sent }
    }
}

impl<IO: AsyncRead + Unpin> AsyncRead for Counted<IO> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.io).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            this.received
                .increment((buf.filled().len() - before) as u64);
        }
        polled
    }
}

impl<IO: AsyncWrite + Unpin> AsyncWrite for Counted<IO> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.io).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = polled {
            this.sent.increment(n as u64);
        }
        polled
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.io).poll_write_vectored(cx, bufs);
        if let Poll::Ready(Ok(n)) = polled {
            this.sent.increment(n as u64);
        }
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}

impl<IO: Connected> Connected for Counted<IO> {
    type ConnectInfo = IO::ConnectInfo;

    fn connect_info(&self) -> Self::ConnectInfo {
        self.io.connect_info()
    }
}
