//! TCP proxies on the peer links, cut and healed pair by pair and one way
//! or both.
//!
//! Every member advertises its proxy's address as its peer URL, so all
//! peer traffic to a member passes its proxy. The proxy tells who is
//! calling by the connection's source address (Hark's `--peer-local-addr`
//! gives each member its own loopback address) or, for etcd, whose peer
//! connections all come from 127.0.0.1, by the `X-Server-From` header each
//! raft HTTP request carries. A cut from A to B refuses and breaks the
//! connections A opens to B. For Hark those carry A's requests to B and
//! their answers; etcd's raft streams carry messages from the member dialled
//! to the one dialling, so a one-way cut there silences B towards A as
//! well as A's pipeline requests to B. Cuts both ways mean the same on both.

use std::collections::{HashMap, HashSet};
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::AbortHandle;

#[derive(Clone, Default)]
pub struct PeerProxy {
    state: Arc<Mutex<State>>,
}

#[derive(Default)]
struct State {
    /// Members by the source address of their peer connections.
    by_ip: HashMap<IpAddr, usize>,
    /// Members by raft id (etcd's `X-Server-From`, lower-case hex).
    by_id: HashMap<String, usize>,
    /// (from, to) pairs whose connections are refused.
    cuts: HashSet<(usize, usize)>,
    /// Live connections: (sender, to, the task piping them).
    live: Vec<(Arc<Mutex<Sender>>, usize, AbortHandle)>,
}

/// Who opened a connection: known at once, or by a raft id the proxy may
/// learn only later (etcd's streams open before the ids are asked for).
#[derive(Clone)]
enum Sender {
    Member(usize),
    Id(String),
    Unknown,
}

impl State {
    fn member(&self, sender: &Mutex<Sender>) -> Option<usize> {
        match &*sender.lock().unwrap() {
            Sender::Member(m) => Some(*m),
            Sender::Id(id) => self.by_id.get(id).copied(),
            Sender::Unknown => None,
        }
    }

    fn is_cut(&self, sender: &Mutex<Sender>, to: usize) -> bool {
        self.member(sender)
            .is_some_and(|from| self.cuts.contains(&(from, to)))
    }
}

impl PeerProxy {
    /// Member `member`'s peer connections leave from `ip`.
    pub fn know_ip(&self, ip: IpAddr, member: usize) {
        self.state.lock().unwrap().by_ip.insert(ip, member);
    }

    /// Member `member` has raft id `id`.
    pub fn know_id(&self, id: u64, member: usize) {
        self.state
            .lock()
            .unwrap()
            .by_id
            .insert(format!("{id:x}"), member);
    }

    /// Forwards connections made to `listener` to member `to`, serving its
    /// peers on `target`.
    pub fn forward(&self, listener: std::net::TcpListener, to: usize, target: SocketAddr) {
        listener
            .set_nonblocking(true)
            .expect("a nonblocking listener");
        let listener = TcpListener::from_std(listener).expect("a tokio listener");
        let proxy = self.clone();
        tokio::spawn(async move {
            while let Ok((inbound, source)) = listener.accept().await {
                let proxy = proxy.clone();
                tokio::spawn(async move { proxy.pipe(inbound, source.ip(), to, target).await });
            }
        });
    }

    async fn pipe(&self, inbound: TcpStream, source: IpAddr, to: usize, target: SocketAddr) {
        let known = self.state.lock().unwrap().by_ip.get(&source).copied();
        let sender = Arc::new(Mutex::new(match known {
            Some(from) => Sender::Member(from),
            None => Sender::Unknown,
        }));
        let task = {
            let mut state = self.state.lock().unwrap();
            if state.is_cut(&sender, to) {
                return; // refused: the connection closes
            }
            let proxy = self.clone();
            let relayed = sender.clone();
            let task = tokio::spawn(async move {
                proxy
                    .relay(inbound, target, to, relayed, known.is_none())
                    .await
            });
            state.live.retain(|(_, _, t)| !t.is_finished());
            // Recorded under the same lock as the check: a cut made
            // meanwhile finds it.
            state.live.push((sender, to, task.abort_handle()));
            task
        };
        let _ = task.await;
    }

    /// Pipes both ways. With `sniff`, every chunk to the member is searched
    /// for the sender's `X-Server-From` first: etcd reuses a keep-alive
    /// connection opened for `/version` (no header) for raft requests, so a
    /// connection's sender may show up only later, and is then held to the
    /// cuts.
    async fn relay(
        &self,
        inbound: TcpStream,
        target: SocketAddr,
        to: usize,
        sender: Arc<Mutex<Sender>>,
        sniff: bool,
    ) {
        let Ok(outbound) = TcpStream::connect(target).await else {
            return;
        };
        let _ = inbound.set_nodelay(true);
        let _ = outbound.set_nodelay(true);
        let (mut from_peer, mut to_peer) = inbound.into_split();
        let (mut from_member, mut to_member) = outbound.into_split();
        let up = async {
            let mut buf = vec![0u8; 16 << 10];
            // The end of the previous chunk: a header may straddle two reads.
            let mut tail: Vec<u8> = Vec::new();
            let mut sniffing = sniff;
            loop {
                let n = match from_peer.read(&mut buf).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => n,
                };
                // One connection has one sender: searched for until found,
                // then held to the cuts (later cuts abort the task).
                if sniffing {
                    let mut window = std::mem::take(&mut tail);
                    window.extend_from_slice(&buf[..n]);
                    if let found @ Sender::Id(_) = sender_in(&window) {
                        *sender.lock().unwrap() = found;
                        sniffing = false;
                        if self.state.lock().unwrap().is_cut(&sender, to) {
                            return;
                        }
                    } else {
                        tail = window[window.len().saturating_sub(256)..].to_vec();
                    }
                }
                if to_member.write_all(&buf[..n]).await.is_err() {
                    return;
                }
            }
        };
        let down = async {
            let _ = tokio::io::copy(&mut from_member, &mut to_peer).await;
        };
        tokio::select! {
            _ = up => {}
            _ = down => {}
        }
    }

    /// Refuses `from`'s connections to `to` from now on; those open break.
    pub fn cut(&self, from: usize, to: usize) {
        let mut state = self.state.lock().unwrap();
        state.cuts.insert((from, to));
        for (sender, t, task) in &state.live {
            if *t == to && state.member(sender) == Some(from) {
                task.abort();
            }
        }
    }

    /// Splits the members into `side` and the rest, cut both ways.
    pub fn partition(&self, side: &[usize], members: usize) {
        for a in side {
            for b in (0..members).filter(|b| !side.contains(b)) {
                self.cut(*a, b);
                self.cut(b, *a);
            }
        }
    }

    /// Every pair may talk again.
    pub fn heal(&self) {
        self.state.lock().unwrap().cuts.clear();
    }
}

/// The `X-Server-From` header of an HTTP/1 request head.
fn sender_in(head: &[u8]) -> Sender {
    let text = String::from_utf8_lossy(head);
    text.lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("x-server-from")
                .then(|| Sender::Id(value.trim().to_ascii_lowercase()))
        })
        .unwrap_or(Sender::Unknown)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn a_cut_refuses_one_direction_and_heal_restores_it() {
        // An echo server stands for member 1's peer port.
        let echo = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let target = echo.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = echo.accept().await {
                tokio::spawn(async move {
                    let (mut r, mut w) = s.split();
                    let _ = tokio::io::copy(&mut r, &mut w).await;
                });
            }
        });
        let proxy = PeerProxy::default();
        proxy.know_ip("127.0.0.12".parse().unwrap(), 2);
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let front = listener.local_addr().unwrap();
        proxy.forward(listener, 1, target);

        // Member 0, known by its header, talks through until cut.
        let request = b"GET /raft/stream/msgappv2/1 HTTP/1.1\r\nX-Server-From: abc\r\n\r\n";
        let echoed = |req: &'static [u8]| async move {
            let mut s = TcpStream::connect(front).await.unwrap();
            s.write_all(req).await.unwrap();
            let mut back = vec![0u8; req.len()];
            tokio::time::timeout(Duration::from_secs(2), s.read_exact(&mut back))
                .await
                .ok()
                .and_then(|r| r.ok())
                .map(|_| back)
        };
        assert_eq!(echoed(request).await.as_deref(), Some(&request[..]));
        let open = {
            let mut s = TcpStream::connect(front).await.unwrap();
            s.write_all(request).await.unwrap();
            let mut back = vec![0u8; request.len()];
            s.read_exact(&mut back).await.unwrap();
            s
        };
        // The id is learnt after the connection opened, as with etcd.
        proxy.know_id(0xabc, 0);
        proxy.cut(0, 1);
        assert_eq!(echoed(request).await, None, "refused after the cut");
        // The connection open before the cut is broken too.
        let mut open = open;
        let _ = open.write_all(b"more").await;
        let mut buf = [0u8; 4];
        let read = tokio::time::timeout(Duration::from_secs(2), open.read(&mut buf)).await;
        assert!(matches!(read, Ok(Ok(0)) | Ok(Err(_))), "{read:?}");
        // Another sender is not affected; an unknown one is let through.
        proxy.cut(2, 0);
        let other = b"GET / HTTP/1.1\r\nX-Server-From: def\r\n\r\n";
        assert_eq!(echoed(other).await.as_deref(), Some(&other[..]));
        proxy.heal();
        assert_eq!(echoed(request).await.as_deref(), Some(&request[..]));
    }
}
