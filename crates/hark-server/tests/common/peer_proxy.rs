//! A TCP proxy between cluster members that a test cuts pair by pair.
//!
//! Each member serves its peers on its own loopback address (127.0.0.N) and
//! advertises the proxy's address instead; a member's connections to peers
//! leave from its own address, so the proxy knows both ends of every
//! connection and can refuse or break the ones crossing a cut, both ways.

use std::collections::HashSet;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};

use tokio::net::{TcpListener, TcpStream};
use tokio::task::AbortHandle;

#[derive(Clone, Default)]
pub struct PeerProxy {
    /// Pairs (from, to) that may not talk.
    cuts: Arc<Mutex<HashSet<(IpAddr, IpAddr)>>>,
    /// Live connections: their ends and the task piping them.
    live: Arc<Mutex<Vec<(IpAddr, IpAddr, AbortHandle)>>>,
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
                if proxy.cuts.lock().unwrap().contains(&pair) {
                    continue; // dropped: the connection is reset
                }
                let task = tokio::spawn(async move {
                    let mut inbound = inbound;
                    if let Ok(mut outbound) = TcpStream::connect(target).await {
                        let _ = inbound.set_nodelay(true);
                        let _ = outbound.set_nodelay(true);
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
                let mut live = proxy.live.lock().unwrap();
                live.retain(|(_, _, t)| !t.is_finished());
                live.push((pair.0, pair.1, task.abort_handle()));
            }
        });
    }

    /// No traffic between `a` and `b` from now on, either way; connections
    /// between them break at once.
    pub fn cut(&self, a: IpAddr, b: IpAddr) {
        let mut cuts = self.cuts.lock().unwrap();
        cuts.insert((a, b));
        cuts.insert((b, a));
        let live = self.live.lock().unwrap();
        for (from, to, task) in live.iter() {
            if cuts.contains(&(*from, *to)) {
                task.abort();
            }
        }
    }

    /// Every pair may talk again.
    pub fn heal(&self) {
        self.cuts.lock().unwrap().clear();
    }
}
