//! A TCP proxy between cluster members that a test cuts pair by pair.
//!
//! Each member serves its peers on its own loopback address (127.0.0.N) and
//! advertises the proxy's address instead; its connections to peers leave
//! from its own address (`--peer-local-addr`), so the proxy knows both ends
//! of every connection and can refuse or break the ones crossing a cut,
//! both ways. A member's listener can also be blackholed, as etcd's e2e
//! framework does: connections to it stay open, but every byte either way
//! is dropped.

use std::collections::HashSet;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};

use tokio::net::{TcpListener, TcpStream};
use tokio::task::AbortHandle;

#[derive(Clone, Default)]
pub struct PeerProxy {
    state: Arc<Mutex<State>>,
}

#[derive(Default)]
struct State {
    /// Pairs (from, to) that may not talk.
    cuts: HashSet<(IpAddr, IpAddr)>,
    /// Live connections: their ends and the task piping them.
    live: Vec<(IpAddr, IpAddr, AbortHandle)>,
    /// Members whose listener is blackholed.
    blackholed: HashSet<IpAddr>,
}

impl PeerProxy {
    /// Forwards connections made to `listen` to the member serving its peers
    /// on `target`.
    pub async fn forward(&self, listen: SocketAddr, target: SocketAddr) {
        let listener = TcpListener::bind(listen).await.unwrap();
        let proxy = self.clone();
        tokio::spawn(async move {
            while let Ok((inbound, from)) = listener.accept().await {
                let pair = (from.ip(), target.ip());
                // One lock over the check and the record: a cut cannot slip
                // between them and miss this connection.
                let mut state = proxy.state.lock().unwrap();
                if state.cuts.contains(&pair) {
                    continue; // dropped: the connection is closed
                }
                let state_of = proxy.state.clone();
                let task = tokio::spawn(async move {
                    if let Ok(outbound) = TcpStream::connect(target).await {
                        let _ = inbound.set_nodelay(true);
                        let _ = outbound.set_nodelay(true);
                        let silent =
                            move || state_of.lock().unwrap().blackholed.contains(&target.ip());
                        let (mut in_read, mut in_write) = inbound.into_split();
                        let (mut out_read, mut out_write) = outbound.into_split();
                        tokio::select! {
                            _ = pump(&mut in_read, &mut out_write, silent.clone()) => {}
                            _ = pump(&mut out_read, &mut in_write, silent) => {}
                        }
                    }
                });
                state.live.retain(|(_, _, t)| !t.is_finished());
                state.live.push((pair.0, pair.1, task.abort_handle()));
            }
        });
    }

    /// No traffic between `a` and `b` from now on, either way; connections
    /// between them break at once.
    pub fn cut(&self, a: IpAddr, b: IpAddr) {
        let mut state = self.state.lock().unwrap();
        state.cuts.insert((a, b));
        state.cuts.insert((b, a));
        for (from, to, task) in &state.live {
            if state.cuts.contains(&(*from, *to)) {
                task.abort();
            }
        }
    }

    /// Every byte to or from the member serving on `member` is dropped,
    /// on the connections open now and on new ones, which are still
    /// accepted (etcd's `BlackholeTx` and `BlackholeRx` on its proxy).
    pub fn blackhole(&self, member: IpAddr) {
        self.state.lock().unwrap().blackholed.insert(member);
    }

    /// Every pair may talk again, and no listener is blackholed.
    pub fn heal(&self) {
        let mut state = self.state.lock().unwrap();
        state.cuts.clear();
        state.blackholed.clear();
    }
}

/// Copies `from` to `to` until either ends, dropping what arrives while
/// `silent()` holds.
async fn pump(
    from: &mut tokio::net::tcp::OwnedReadHalf,
    to: &mut tokio::net::tcp::OwnedWriteHalf,
    silent: impl Fn() -> bool,
) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match from.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) if !silent() => {
                if to.write_all(&buf[..n]).await.is_err() {
                    return;
                }
            }
            Ok(_) => {}
        }
    }
}
