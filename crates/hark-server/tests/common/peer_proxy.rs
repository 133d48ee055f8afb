//! A TCP proxy between cluster members that a test cuts pair by pair.
//!
//! Each member serves its peers on its own loopback address (127.0.0.N) and
//! advertises the proxy's address instead; its connections to peers leave
//! from its own address (`--peer-local-addr`), so the proxy knows both ends
//! of every connection and can refuse or break the ones crossing a cut,
//! both ways.

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
                let task = tokio::spawn(async move {
                    let mut inbound = inbound;
                    if let Ok(mut outbound) = TcpStream::connect(target).await {
                        let _ = inbound.set_nodelay(true);
                        let _ = outbound.set_nodelay(true);
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
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

    /// Every pair may talk again.
    pub fn heal(&self) {
        self.state.lock().unwrap().cuts.clear();
    }
}
