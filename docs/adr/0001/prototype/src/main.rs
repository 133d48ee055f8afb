//! Throwaway prototype: does openraft 0.10.0-alpha.37 give Hark pipelined
//! replication, pre-vote and a leader that stops taking writes without a
//! quorum? Three members in one process, each log an fsynced file with a
//! group-commit sync thread, messages passed in-process.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs::File;
use std::io::{self, Write};
use std::ops::RangeBounds;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::{Stream, StreamExt, TryStreamExt};
use openraft::alias::{LogIdOf, SnapshotMetaOf, SnapshotOf, StoredMembershipOf, VoteOf};
use openraft::async_runtime::WatchReceiver;
use openraft::entry::RaftEntry;
use openraft::error::{RPCError, Unreachable};
use openraft::network::{RPCOption, RaftNetworkFactory, stream_append_sequential};
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, SnapshotResponse, StreamAppendResult, VoteRequest,
    VoteResponse,
};
use openraft::storage::{EntryResponder, IOFlushed, LogState, RaftLogStorage, RaftStateMachine};
use openraft::{Config, Raft, RaftLogReader, RaftNetworkV2, RaftSnapshotBuilder, ServerState};

openraft::declare_raft_types!(pub TC: D = u64, R = u64, Node = ());

type Entry = openraft::alias::EntryOf<TC>;
type BoxFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;
type BoxStream<'a, T> = std::pin::Pin<Box<dyn Stream<Item = T> + Send + 'a>>;

// ---------------------------------------------------------------- the log

struct LogInner {
    vote: Option<VoteOf<TC>>,
    entries: BTreeMap<u64, Entry>,
    purged: Option<LogIdOf<TC>>,
    committed: Option<LogIdOf<TC>>,
    file: File,
}

#[derive(Clone)]
struct LogStore {
    inner: Arc<Mutex<LogInner>>,
    sync_tx: std::sync::mpsc::Sender<IOFlushed<TC>>,
}

impl LogStore {
    fn new(path: &str) -> Self {
        let file = File::create(path).unwrap();
        let sync_file = file.try_clone().unwrap();
        let (sync_tx, sync_rx) = std::sync::mpsc::channel::<IOFlushed<TC>>();
        // Group commit: one fdatasync for every append queued meanwhile.
        std::thread::spawn(move || {
            while let Ok(first) = sync_rx.recv() {
                let mut done = vec![first];
                done.extend(sync_rx.try_iter());
                sync_file.sync_data().unwrap();
                for callback in done {
                    callback.io_completed(Ok(()));
                }
            }
        });
        LogStore {
            inner: Arc::new(Mutex::new(LogInner {
                vote: None,
                entries: BTreeMap::new(),
                purged: None,
                committed: None,
                file,
            })),
            sync_tx,
        }
    }
}

impl RaftLogReader<TC> for LogStore {
    async fn try_get_log_entries<RB: RangeBounds<u64> + Clone + std::fmt::Debug + Send>(
        &mut self,
        range: RB,
    ) -> Result<Vec<Entry>, io::Error> {
        let inner = self.inner.lock().unwrap();
        Ok(inner.entries.range(range).map(|(_, e)| e.clone()).collect())
    }

    async fn read_vote(&mut self) -> Result<Option<VoteOf<TC>>, io::Error> {
        Ok(self.inner.lock().unwrap().vote)
    }
}

impl RaftLogStorage<TC> for LogStore {
    type LogReader = LogStore;

    async fn get_log_state(&mut self) -> Result<LogState<TC>, io::Error> {
        let inner = self.inner.lock().unwrap();
        let last = inner
            .entries
            .values()
            .next_back()
            .map(|e| e.log_id())
            .or(inner.purged);
        Ok(LogState {
            last_purged_log_id: inner.purged,
            last_log_id: last,
        })
    }

    async fn get_log_reader(&mut self) -> Self::LogReader {
        self.clone()
    }

    async fn save_vote(&mut self, vote: &VoteOf<TC>) -> Result<(), io::Error> {
        let mut inner = self.inner.lock().unwrap();
        inner.vote = Some(*vote);
        inner.file.write_all(&[1u8; 32])?;
        inner.file.sync_data()
    }

    async fn save_committed(&mut self, committed: Option<LogIdOf<TC>>) -> Result<(), io::Error> {
        self.inner.lock().unwrap().committed = committed;
        Ok(())
    }

    async fn read_committed(&mut self) -> Result<Option<LogIdOf<TC>>, io::Error> {
        Ok(self.inner.lock().unwrap().committed)
    }

    async fn append<I>(&mut self, entries: I, callback: IOFlushed<TC>) -> Result<(), io::Error>
    where
        I: IntoIterator<Item = Entry> + Send,
        I::IntoIter: Send,
    {
        {
            let mut inner = self.inner.lock().unwrap();
            for entry in entries {
                // ~100 bytes per entry, the size of a small put.
                inner.file.write_all(&[0u8; 100])?;
                inner.entries.insert(entry.index(), entry);
            }
        }
        self.sync_tx.send(callback).unwrap();
        Ok(())
    }

    async fn truncate_after(&mut self, last: Option<LogIdOf<TC>>) -> Result<(), io::Error> {
        let mut inner = self.inner.lock().unwrap();
        let from = last.map(|l| l.index() + 1).unwrap_or(0);
        inner.entries.split_off(&from);
        inner.file.sync_data()
    }

    async fn purge(&mut self, log_id: LogIdOf<TC>) -> Result<(), io::Error> {
        let mut inner = self.inner.lock().unwrap();
        inner.entries = inner.entries.split_off(&(log_id.index() + 1));
        inner.purged = Some(log_id);
        Ok(())
    }
}

// ------------------------------------------------------ the state machine

#[derive(Default)]
struct StateMachine {
    applied: Option<LogIdOf<TC>>,
    membership: StoredMembershipOf<TC>,
    sum: u64,
}

struct Builder;

impl RaftSnapshotBuilder<TC> for Builder {
    type SnapshotData = ();
    async fn build_snapshot(&mut self) -> Result<SnapshotOf<TC, ()>, io::Error> {
        Err(io::Error::other("the prototype takes no snapshots"))
    }
}

impl RaftStateMachine<TC> for StateMachine {
    type SnapshotData = ();
    type SnapshotBuilder = Builder;

    async fn applied_state(
        &mut self,
    ) -> Result<(Option<LogIdOf<TC>>, StoredMembershipOf<TC>), io::Error> {
        Ok((self.applied, self.membership.clone()))
    }

    async fn apply<S>(&mut self, mut entries: S) -> Result<(), io::Error>
    where
        S: Stream<Item = Result<EntryResponder<TC>, io::Error>> + Unpin + Send,
    {
        while let Some((entry, responder)) = entries.try_next().await? {
            self.applied = Some(entry.log_id());
            if let Some(m) = entry.get_membership() {
                self.membership = openraft::StoredMembership::new(Some(entry.log_id()), m);
            }
            if let openraft::EntryPayload::Normal(v) = entry.payload {
                self.sum += v;
            }
            if let Some(r) = responder {
                r.send(self.sum);
            }
        }
        Ok(())
    }

    async fn get_snapshot_builder(&mut self) -> Self::SnapshotBuilder {
        Builder
    }

    async fn install_snapshot(&mut self, _: &SnapshotMetaOf<TC>, _: ()) -> Result<(), io::Error> {
        Err(io::Error::other("the prototype takes no snapshots"))
    }

    async fn get_current_snapshot(&mut self) -> Result<Option<SnapshotOf<TC, ()>>, io::Error> {
        Ok(None)
    }
}

// ------------------------------------------------------------ the network

#[derive(Default)]
struct Router {
    members: Mutex<HashMap<u64, Raft<TC, StateMachine>>>,
    cut: Mutex<HashSet<u64>>,
    addrs: Mutex<HashMap<u64, std::net::SocketAddr>>,
}

impl Router {
    fn reach(&self, from: u64, to: u64) -> Result<Raft<TC, StateMachine>, RPCError<TC>> {
        let cut = self.cut.lock().unwrap();
        if cut.contains(&from) || cut.contains(&to) {
            return Err(RPCError::Unreachable(Unreachable::from_string("cut")));
        }
        drop(cut);
        self.members
            .lock()
            .unwrap()
            .get(&to)
            .cloned()
            .ok_or_else(|| RPCError::Unreachable(Unreachable::from_string("down")))
    }
    fn is_cut(&self, a: u64, b: u64) -> bool {
        let cut = self.cut.lock().unwrap();
        cut.contains(&a) || cut.contains(&b)
    }
}

#[derive(Clone)]
struct Net {
    from: u64,
    router: Arc<Router>,
    pipelined: bool,
}

struct Conn {
    from: u64,
    to: u64,
    router: Arc<Router>,
    pipelined: bool,
    unary: Option<tokio::net::TcpStream>,
}

impl RaftNetworkFactory<TC> for Net {
    type Network = Conn;
    async fn new_client(&mut self, target: u64, _: &()) -> Conn {
        Conn {
            from: self.from,
            to: target,
            router: self.router.clone(),
            pipelined: self.pipelined,
            unary: None,
        }
    }
}

fn unreachable(e: impl std::fmt::Display) -> RPCError<TC> {
    RPCError::Unreachable(Unreachable::from_string(e.to_string()))
}

impl RaftNetworkV2<TC> for Conn {
    type SnapshotData = ();

    async fn append_entries(
        &mut self,
        rpc: AppendEntriesRequest<TC>,
        _: RPCOption,
    ) -> Result<AppendEntriesResponse<TC>, RPCError<TC>> {
        self.router.reach(self.from, self.to)?;
        if self.unary.is_none() {
            let addr = self.router.addrs.lock().unwrap()[&self.to];
            self.unary = Some(tcp::connect(addr, 2).await.map_err(unreachable)?);
        }
        let sock = self.unary.as_mut().unwrap();
        let sent = tcp::write_frame(sock, &rpc).await;
        let got: io::Result<Result<AppendEntriesResponse<TC>, String>> = match sent {
            Ok(()) => tcp::read_frame(sock).await,
            Err(e) => Err(e),
        };
        match got {
            Ok(r) => r.map_err(unreachable),
            Err(e) => {
                self.unary = None;
                Err(unreachable(e))
            }
        }
    }

    fn stream_append<'s, S>(
        &'s mut self,
        input: S,
        option: RPCOption,
    ) -> BoxFuture<
        's,
        Result<BoxStream<'s, Result<StreamAppendResult<TC>, RPCError<TC>>>, RPCError<TC>>,
    >
    where
        S: Stream<Item = AppendEntriesRequest<TC>> + Send + Unpin + 'static,
    {
        if !self.pipelined {
            return stream_append_sequential(self, input, option);
        }
        Box::pin(async move {
            self.router.reach(self.from, self.to)?;
            let (router, from, to) = (self.router.clone(), self.from, self.to);
            let addr = router.addrs.lock().unwrap()[&to];
            let sock = tcp::connect(addr, 1).await.map_err(unreachable)?;
            let (r, mut w) = sock.into_split();
            // A cut ends the stream both ways, as a dropped connection would.
            let router_in = router.clone();
            tokio::spawn(async move {
                let mut input = input;
                while let Some(req) = input.next().await {
                    if router_in.is_cut(from, to) || tcp::write_frame(&mut w, &req).await.is_err() {
                        return;
                    }
                }
            });
            let out = futures::stream::unfold(tokio::io::BufReader::new(r), move |mut r| {
                let router = router.clone();
                async move {
                    let got: io::Result<Result<StreamAppendResult<TC>, String>> =
                        tcp::read_frame(&mut r).await;
                    if router.is_cut(from, to) {
                        return None;
                    }
                    match got {
                        Ok(item) => Some((item.map_err(unreachable), r)),
                        Err(_) => None,
                    }
                }
            });
            Ok(Box::pin(out) as BoxStream<'s, _>)
        })
    }

    async fn vote(
        &mut self,
        rpc: VoteRequest<TC>,
        _: RPCOption,
    ) -> Result<VoteResponse<TC>, RPCError<TC>> {
        let raft = self.router.reach(self.from, self.to)?;
        raft.vote(rpc).await.map_err(unreachable)
    }

    async fn pre_vote(
        &mut self,
        rpc: VoteRequest<TC>,
        _: RPCOption,
    ) -> Result<VoteResponse<TC>, RPCError<TC>> {
        let raft = self.router.reach(self.from, self.to)?;
        raft.pre_vote(rpc).await.map_err(unreachable)
    }

    async fn full_snapshot(
        &mut self,
        _: VoteOf<TC>,
        _: SnapshotOf<TC, ()>,
        _: impl std::future::Future<Output = openraft::error::ReplicationClosed> + Send + 'static,
        _: RPCOption,
    ) -> Result<SnapshotResponse<TC>, openraft::error::StreamingError<TC>> {
        Err(openraft::error::StreamingError::Unreachable(
            Unreachable::from_string("no snapshots"),
        ))
    }

    async fn transfer_leader(
        &mut self,
        req: openraft::raft::TransferLeaderRequest<TC>,
        _: RPCOption,
    ) -> Result<openraft::raft::TransferLeaderResponse<TC>, RPCError<TC>> {
        let raft = self.router.reach(self.from, self.to)?;
        raft.handle_transfer_leader(req).await.map_err(unreachable)
    }
}

// ------------------------------------------------------- a TCP transport

mod tcp {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
    use tokio::net::{TcpListener, TcpStream};

    pub async fn write_frame<W: AsyncWriteExt + Unpin, T: serde::Serialize>(
        w: &mut W,
        v: &T,
    ) -> io::Result<()> {
        let body = postcard::to_stdvec(v).map_err(io::Error::other)?;
        let mut frame = (body.len() as u32).to_le_bytes().to_vec();
        frame.extend(body);
        w.write_all(&frame).await
    }

    pub async fn read_frame<R: AsyncReadExt + Unpin, T: serde::de::DeserializeOwned>(
        r: &mut R,
    ) -> io::Result<T> {
        let mut len = [0u8; 4];
        r.read_exact(&mut len).await?;
        let mut body = vec![0u8; u32::from_le_bytes(len) as usize];
        r.read_exact(&mut body).await?;
        postcard::from_bytes(&body).map_err(io::Error::other)
    }

    /// Serves one member's appends: kind 1 a stream, kind 2 one call at a time.
    pub async fn serve(raft: Raft<TC, StateMachine>) -> std::net::SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((sock, _)) = listener.accept().await {
                sock.set_nodelay(true).unwrap();
                let raft = raft.clone();
                tokio::spawn(async move {
                    let (r, mut w) = sock.into_split();
                    let mut r = BufReader::new(r);
                    let mut kind = [0u8];
                    if r.read_exact(&mut kind).await.is_err() {
                        return;
                    }
                    if kind[0] == 2 {
                        while let Ok(req) = read_frame::<_, AppendEntriesRequest<TC>>(&mut r).await
                        {
                            let resp = raft.append_entries(req).await.map_err(|e| e.to_string());
                            if write_frame(&mut w, &resp).await.is_err() {
                                return;
                            }
                        }
                        return;
                    }
                    let input = futures::stream::unfold(r, |mut r| async move {
                        read_frame::<_, AppendEntriesRequest<TC>>(&mut r)
                            .await
                            .ok()
                            .map(|req| (req, r))
                    });
                    let out = raft.stream_append(Box::pin(input));
                    futures::pin_mut!(out);
                    while let Some(item) = out.next().await {
                        let item = item.map_err(|e| e.to_string());
                        if write_frame(&mut w, &item).await.is_err() {
                            return;
                        }
                    }
                });
            }
        });
        addr
    }

    pub async fn connect(addr: std::net::SocketAddr, kind: u8) -> io::Result<TcpStream> {
        let mut sock = TcpStream::connect(addr).await?;
        sock.set_nodelay(true)?;
        sock.write_all(&[kind]).await?;
        Ok(sock)
    }
}

// ------------------------------------------------------------ the cluster

struct Options {
    pipelined: bool,
    broadcast_submitted: bool,
    pre_vote: bool,
    heartbeat_ms: u64,
    election_ms: (u64, u64),
}

async fn cluster(dir: &str, o: &Options) -> (Arc<Router>, Vec<Raft<TC, StateMachine>>) {
    let router = Arc::new(Router::default());
    let config = Arc::new(
        Config {
            heartbeat_interval: o.heartbeat_ms,
            election_timeout_min: o.election_ms.0,
            election_timeout_max: o.election_ms.1,
            enable_pre_vote: Some(o.pre_vote),
            broadcast_submitted_on_append: Some(o.broadcast_submitted),
            snapshot_policy: openraft::SnapshotPolicy::Never,
            ..Default::default()
        }
        .validate()
        .unwrap(),
    );
    std::fs::create_dir_all(dir).unwrap();
    let mut rafts = Vec::new();
    for id in 1..=3u64 {
        let net = Net {
            from: id,
            router: router.clone(),
            pipelined: o.pipelined,
        };
        let log = LogStore::new(&format!("{dir}/log-{id}"));
        let raft = Raft::new(id, config.clone(), net, log, StateMachine::default())
            .await
            .unwrap();
        router.members.lock().unwrap().insert(id, raft.clone());
        let addr = tcp::serve(raft.clone()).await;
        router.addrs.lock().unwrap().insert(id, addr);
        rafts.push(raft);
    }
    rafts[0]
        .initialize(BTreeMap::from([(1u64, ()), (2, ()), (3, ())]))
        .await
        .unwrap();
    rafts[0]
        .wait(Some(Duration::from_secs(10)))
        .state(ServerState::Leader, "leader")
        .await
        .unwrap();
    for r in &rafts {
        r.wait(Some(Duration::from_secs(10)))
            .applied_index(Some(1), "membership applied")
            .await
            .unwrap();
    }
    (router, rafts)
}

async fn shutdown(rafts: Vec<Raft<TC, StateMachine>>) {
    for r in rafts {
        let _ = r.shutdown().await;
    }
}

/// `clients` writers on the leader for `secs`: writes/s and p50/p99 in ms.
async fn load(leader: &Raft<TC, StateMachine>, clients: usize, secs: f64) -> (f64, f64, f64) {
    let end = Instant::now() + Duration::from_secs_f64(secs);
    let mut tasks = Vec::new();
    for _ in 0..clients {
        let raft = leader.clone();
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::new();
            while Instant::now() < end {
                let t = Instant::now();
                raft.client_write(1).await.unwrap();
                lat.push(t.elapsed().as_secs_f64() * 1e3);
            }
            lat
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    all.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let q = |p: f64| all[((all.len() as f64 * p) as usize).min(all.len() - 1)];
    (all.len() as f64 / secs, q(0.5), q(0.99))
}

async fn throughput(base: &str) {
    let secs = 5.0;
    println!("mode,broadcast_submitted,clients,writes_per_s,p50_ms,p99_ms");
    for round in 0..3 {
        for (pipelined, broadcast) in [(false, false), (true, false), (true, true)] {
            for clients in [1usize, 16, 256] {
                let o = Options {
                    pipelined,
                    broadcast_submitted: broadcast,
                    pre_vote: true,
                    heartbeat_ms: 100,
                    election_ms: (1000, 2000),
                };
                let dir = format!("{base}/t{round}-{pipelined}-{broadcast}-{clients}");
                let (_router, rafts) = cluster(&dir, &o).await;
                let (rate, p50, p99) = load(&rafts[0], clients, secs).await;
                println!(
                    "{},{broadcast},{clients},{rate:.0},{p50:.3},{p99:.3}",
                    if pipelined { "stream" } else { "one-at-a-time" }
                );
                shutdown(rafts).await;
                let _ = std::fs::remove_dir_all(&dir);
            }
        }
    }
}

fn term_of(r: &Raft<TC, StateMachine>) -> u64 {
    r.metrics().borrow_watched().current_term
}

/// Cuts member 3 for ten election timeouts, heals, and counts the terms
/// members 1 and 2 went through.
async fn partitioned_follower(base: &str, pre_vote: bool) {
    let o = Options {
        pipelined: true,
        broadcast_submitted: true,
        pre_vote,
        heartbeat_ms: 50,
        election_ms: (300, 600),
    };
    let (router, rafts) = cluster(&format!("{base}/pv-{pre_vote}"), &o).await;
    let before = term_of(&rafts[0]);
    router.cut.lock().unwrap().insert(3);
    for _ in 0..6 {
        tokio::time::sleep(Duration::from_millis(1000)).await;
        println!(
            "  member 3 while cut: {}",
            *rafts[2].metrics().borrow_watched()
        );
    }
    let term_3_cut = term_of(&rafts[2]);
    router.cut.lock().unwrap().clear();
    tokio::time::sleep(Duration::from_millis(3000)).await;
    let after = term_of(&rafts[0]);
    let leader = rafts[0].metrics().borrow_watched().current_leader;
    println!(
        "pre_vote={pre_vote}: leader term {before} -> {after} (elections on the healthy side: {}), member 3's term while cut {term_3_cut}, leader now {leader:?}",
        after - before
    );
    shutdown(rafts).await;
}

/// Cuts the leader off from both followers: how long until it refuses a write?
async fn isolated_leader(base: &str) {
    let o = Options {
        pipelined: true,
        broadcast_submitted: true,
        pre_vote: true,
        heartbeat_ms: 50,
        election_ms: (300, 600),
    };
    let (router, rafts) = cluster(&format!("{base}/iso"), &o).await;
    for _ in 0..5 {
        println!("leader metrics: {}", *rafts[0].metrics().borrow_watched());
        match rafts[0].client_write(1).await {
            Ok(_) => break,
            Err(e) => println!("write right after election: {e}"),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let cut_at = Instant::now();
    router.cut.lock().unwrap().insert(1);
    let mut refused_after = None;
    while cut_at.elapsed() < Duration::from_secs(5) {
        let w = tokio::time::timeout(Duration::from_millis(50), rafts[0].client_write(1)).await;
        if let Ok(Err(e)) = w {
            refused_after = Some((cut_at.elapsed(), e.to_string()));
            break;
        }
    }
    let state = rafts[0].metrics().borrow_watched().state;
    println!("isolated leader: first refusal {refused_after:?}; its state then {state:?}");
    tokio::time::sleep(Duration::from_secs(3)).await;
    let others: Vec<_> = rafts[1..]
        .iter()
        .map(|r| r.metrics().borrow_watched().current_leader)
        .collect();
    println!(
        "3 s after the cut: member 1 state {:?}, the others' leader {others:?}",
        rafts[0].metrics().borrow_watched().state
    );
    router.cut.lock().unwrap().clear();
    tokio::time::sleep(Duration::from_secs(2)).await;
    println!(
        "after heal: member 1 state {:?}, leader {:?}",
        rafts[0].metrics().borrow_watched().state,
        rafts[0].metrics().borrow_watched().current_leader
    );
    shutdown(rafts).await;
}

/// Leader transfer under writes: the longest gap between acknowledged writes.
async fn transfer(base: &str) {
    let o = Options {
        pipelined: true,
        broadcast_submitted: true,
        pre_vote: true,
        heartbeat_ms: 100,
        election_ms: (1000, 2000),
    };
    let (_router, rafts) = cluster(&format!("{base}/tr"), &o).await;
    let rafts = Arc::new(rafts);
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let acks = Arc::new(Mutex::new(Vec::<Instant>::new()));
    let mut tasks = Vec::new();
    for _ in 0..4 {
        let (rafts, stop, acks) = (rafts.clone(), stop.clone(), acks.clone());
        tasks.push(tokio::spawn(async move {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let leader = rafts
                    .iter()
                    .find(|r| r.metrics().borrow_watched().state == ServerState::Leader)
                    .cloned();
                let Some(leader) = leader else {
                    tokio::task::yield_now().await;
                    continue;
                };
                if let Ok(Ok(_)) =
                    tokio::time::timeout(Duration::from_millis(500), leader.client_write(1)).await
                {
                    acks.lock().unwrap().push(Instant::now());
                }
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let t = Instant::now();
    rafts[0].trigger().transfer_leader(2).await.unwrap();
    rafts[1]
        .wait(Some(Duration::from_secs(10)))
        .state(ServerState::Leader, "2 leads")
        .await
        .unwrap();
    let elected = t.elapsed();
    tokio::time::sleep(Duration::from_millis(500)).await;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for task in tasks {
        task.await.unwrap();
    }
    let acks = acks.lock().unwrap();
    let gap = acks.windows(2).map(|w| w[1] - w[0]).max().unwrap();
    println!(
        "transfer_leader: member 2 leads {elected:?} after the call; longest gap between acknowledged writes {gap:?} ({} writes)",
        acks.len()
    );
    drop(acks);
    if let Ok(rafts) = Arc::try_unwrap(rafts) {
        shutdown(rafts).await;
    }
}

mod compat {
    use super::*;
    use openraft::alias::{EntryOf, StoredMembershipOf};

    #[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
    pub struct Member {
        pub name: String,
        pub urls: Vec<String>,
    }

    #[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
    #[serde(transparent)]
    pub struct Bytes(pub Vec<u8>);

    impl std::fmt::Display for Bytes {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "{} bytes", self.0.len())
        }
    }

    impl std::fmt::Display for Member {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "{}", self.name)
        }
    }

    openraft::declare_raft_types!(pub TC2: D = Bytes, R = (), Node = Member);

    fn same<T: serde::Serialize + serde::de::DeserializeOwned + std::fmt::Debug>(
        name: &str,
        hex: &str,
    ) {
        let bytes: Vec<u8> = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect();
        match postcard::from_bytes::<T>(&bytes) {
            Ok(v) => {
                let again = postcard::to_stdvec(&v).unwrap();
                println!(
                    "{name}: decodes; re-encodes {}",
                    if again == bytes {
                        "byte for byte"
                    } else {
                        "DIFFERENTLY"
                    }
                );
            }
            Err(e) => println!("{name}: DOES NOT DECODE: {e}"),
        }
    }

    pub fn run(path: &str) {
        for line in std::fs::read_to_string(path).unwrap().lines() {
            let (name, hex) = line.split_once(' ').unwrap();
            match name {
                "entry-blank" | "entry-normal" | "entry-membership" => {
                    same::<EntryOf<TC2>>(name, hex)
                }
                "vote" | "vote-committed" => same::<VoteOf<TC2>>(name, hex),
                "vote-request" => same::<VoteRequest<TC2>>(name, hex),
                "vote-response" => same::<VoteResponse<TC2>>(name, hex),
                "append-entries" => same::<AppendEntriesRequest<TC2>>(name, hex),
                n if n.starts_with("append-") => same::<AppendEntriesResponse<TC2>>(name, hex),
                "stored-membership" => same::<StoredMembershipOf<TC2>>(name, hex),
                "snapshot-meta" => same::<SnapshotMetaOf<TC2>>(name, hex),
                _ => println!("{name}: not checked here"),
            }
        }
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let base = std::env::args()
        .nth(2)
        .unwrap_or_else(|| "/var/tmp/proto-or10-data".into());
    match std::env::args().nth(1).as_deref() {
        Some("throughput") => throughput(&base).await,
        Some("compat") => compat::run(&base),
        Some("behaviour") => {
            partitioned_follower(&base, false).await;
            partitioned_follower(&base, true).await;
            isolated_leader(&base).await;
            transfer(&base).await;
        }
        _ => eprintln!("usage: proto-or10 throughput|behaviour [dir]"),
    }
}
