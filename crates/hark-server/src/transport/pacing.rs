//! Fair turns for connections: how fast a listener takes new ones, and how
//! much one connection's input is read before the others get a turn.
//!
//! Every new connection, and every new HTTP/2 stream, costs a task and a
//! request parse before it can wait quietly. A client that opens a thousand
//! connections at once, or sends a thousand stream openings in one burst of
//! bytes, puts a thousand tasks in the run queue ahead of every request of
//! the connections already open. Measured with `cargo xtask attack`: 10,000
//! blocking queries opened in bursts of 1,000 took the good client's put
//! p99 from 2 ms to 20-30 ms while the machine stayed 90% idle, all of it
//! queueing behind the bursts. So a listener takes at most [`ACCEPT_BURST`]
//! connections at once and [`ACCEPTS_PER_SECOND`] after that (a burst waits
//! in the kernel's backlog of [`LISTEN_BACKLOG`] and is served a little
//! later), and a connection yields its turn after each [`READ_SLICE`] bytes
//! read. Steady traffic never meets the pace: etcd clients keep their
//! connections, and 5,000 new ones a second is far above what a store
//! serving 10,000 puts a second sees.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Instant;
use tonic::transport::server::Connected;

/// Connections taken at once, before the pace applies.
pub const ACCEPT_BURST: u32 = 64;
/// New connections taken per second once the burst is spent.
pub const ACCEPTS_PER_SECOND: u32 = 5_000;
/// The kernel's queue of connections not yet taken (tokio's default is
/// 1,024; Linux caps it at `net.core.somaxconn`, 4,096 by default).
pub const LISTEN_BACKLOG: u32 = 4_096;
/// Bytes of one connection read before it yields to other tasks.
pub const READ_SLICE: usize = 16 * 1024;

/// A "generic cell rate" pace: each accept moves a theoretical arrival time
/// on by one interval; an accept that would put it more than a burst ahead
/// of now waits.
pub struct AcceptPace {
    interval: Duration,
    burst: Duration,
    due: Instant,
}

impl AcceptPace {
    pub fn new(per_second: u32, burst: u32) -> AcceptPace {
        let interval = Duration::from_secs(1) / per_second.max(1);
        AcceptPace {
            interval,
            burst: interval * burst.max(1),
            due: Instant::now(),
        }
    }

    /// Waits until one more connection may be taken, and counts it.
    pub async fn admit(&mut self) {
        let now = Instant::now();
        let due = self.due.max(now);
        // A connection may be taken while `due` is less than a burst ahead.
        if let Some(early) = (due - now).checked_sub(self.burst - self.interval)
            && !early.is_zero()
        {
            tokio::time::sleep(early).await;
        }
        self.due = due + self.interval;
    }
}

impl Default for AcceptPace {
    fn default() -> AcceptPace {
        AcceptPace::new(ACCEPTS_PER_SECOND, ACCEPT_BURST)
    }
}

/// A connection that yields its turn after each [`READ_SLICE`] bytes read,
/// so that what one read brings in (a thousand stream openings) is handed
/// to the server a slice at a time, with other tasks run in between.
pub struct Sliced<IO> {
    io: IO,
    read_in_turn: usize,
}

impl<IO> Sliced<IO> {
    pub fn new(io: IO) -> Sliced<IO> {
        Sliced {
            io,
            read_in_turn: 0,
        }
    }
}

impl<IO: AsyncRead + Unpin> AsyncRead for Sliced<IO> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.read_in_turn >= READ_SLICE {
            this.read_in_turn = 0;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.io).poll_read(cx, buf);
        match polled {
            Poll::Ready(Ok(())) => this.read_in_turn += buf.filled().len() - before,
            // Nothing to read: the turn ends anyway.
            Poll::Pending => this.read_in_turn = 0,
            Poll::Ready(Err(_)) => {}
        }
        polled
    }
}

impl<IO: AsyncWrite + Unpin> AsyncWrite for Sliced<IO> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write_vectored(cx, bufs)
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

impl<IO: Connected> Connected for Sliced<IO> {
    type ConnectInfo = IO::ConnectInfo;

    fn connect_info(&self) -> Self::ConnectInfo {
        self.io.connect_info()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Real time: sleeps never end early, so the lower bounds are exact; the
    // upper bounds only say the pace let connections through at all.

    #[tokio::test]
    async fn a_burst_is_taken_at_once_and_the_rest_at_the_pace() {
        let mut pace = AcceptPace::new(1_000, 10);
        let start = Instant::now();
        for _ in 0..10 {
            pace.admit().await;
        }
        let burst = start.elapsed();
        for _ in 0..100 {
            pace.admit().await;
        }
        let took = start.elapsed();
        assert!(
            burst < Duration::from_millis(50),
            "the burst waited {burst:?}"
        );
        // 100 more at 1 ms each.
        assert!(
            took >= Duration::from_millis(99) && took < Duration::from_secs(5),
            "{took:?}"
        );
    }

    #[tokio::test]
    async fn a_quiet_spell_earns_back_the_burst_and_no_more() {
        let mut pace = AcceptPace::new(100, 10);
        for _ in 0..10 {
            pace.admit().await;
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        let start = Instant::now();
        for _ in 0..10 {
            pace.admit().await;
        }
        let burst = start.elapsed();
        pace.admit().await;
        let one_more = start.elapsed();
        assert!(
            burst < Duration::from_millis(9),
            "the burst waited {burst:?}"
        );
        assert!(one_more >= Duration::from_millis(10), "{one_more:?}");
    }

    #[tokio::test]
    async fn a_connection_yields_after_each_slice_and_loses_no_byte() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let (mut client, server) = tokio::io::duplex(1 << 20);
        let sent: Vec<u8> = (0..READ_SLICE * 5 + 7).map(|i| i as u8).collect();
        client.write_all(&sent).await.unwrap();
        drop(client);
        let mut sliced = Sliced::new(server);
        let mut got = Vec::new();
        let mut pendings = 0;
        // Reads smaller than a slice, as h2's are: a turn spans several.
        let mut buf = vec![0u8; 4 * 1024];
        loop {
            let mut read = ReadBuf::new(&mut buf);
            let polled = std::future::poll_fn(|cx| {
                Poll::Ready(Pin::new(&mut sliced).poll_read(cx, &mut read))
            })
            .await;
            match polled {
                Poll::Pending => pendings += 1,
                Poll::Ready(result) => {
                    result.unwrap();
                    if read.filled().is_empty() {
                        break;
                    }
                    got.extend_from_slice(read.filled());
                }
            }
        }
        assert_eq!(got, sent);
        assert!(pendings >= 4, "yielded {pendings} times over 5 slices");
        // And through the usual reader.
        let (mut client, server) = tokio::io::duplex(1 << 20);
        client.write_all(&sent).await.unwrap();
        drop(client);
        let mut all = Vec::new();
        Sliced::new(server).read_to_end(&mut all).await.unwrap();
        assert_eq!(all, sent);
    }
}
