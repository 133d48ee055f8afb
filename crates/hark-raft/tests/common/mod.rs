//! The harness the integration tests share: in-process clusters of real
//! members, each with its own RocksDB store and log, serving the peer gRPC
//! service over loopback.

// Each test binary compiles this module and uses part of it.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use hark_mvcc::{PutRequest, Store, StoreOptions, WriteRequest, WriteResponse};
use hark_raft::{
    MemberInfo, MembershipChange, MembershipError, Replica, ReplicaConfig, ReplicaDirs,
    ReplicaError, ids,
};
use tokio::net::TcpListener;
use tokio::sync::oneshot;

pub const ELECTION: Duration = Duration::from_millis(300);

/// What differs between the clusters the tests start.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    pub cluster_id: u64,
    pub token: &'static str,
    pub snapshot_count: u64,
    pub fsync: bool,
    /// How long [`Cluster::leader`] waits for the members to agree on one.
    pub leader_deadline: Duration,
    /// How long a write or a linearizable read may wait (5 s unless a
    /// test needs read barriers to give up sooner).
    pub request_timeout: Duration,
    /// etcd's `--strict-reconfig-check`.
    pub strict_reconfig_check: bool,
    /// Most appends in flight to one follower.
    pub append_window: usize,
    /// Most batches of proposals a member has on their way at once.
    pub batches_in_flight: usize,
}

impl Settings {
    /// Member `id`'s configuration, starting with `initial` as its cluster
    /// (empty: joining an existing one).
    pub fn config(&self, id: u64, initial: BTreeMap<u64, MemberInfo>) -> ReplicaConfig {
        ReplicaConfig {
            member_id: id,
            cluster_id: self.cluster_id,
            join: None,
            cluster_token: self.token.to_string(),
            initial_members: initial,
            heartbeat_interval: Duration::from_millis(50),
            election_timeout: ELECTION,
            snapshot_count: self.snapshot_count,
            snapshot_catchup_entries: self.snapshot_count.min(5000),
            request_timeout: self.request_timeout,
            fsync: self.fsync,
            peer_source: None,
            peer_tls: None,
            initial_corruption_check: false,
            force_new_cluster: false,
            strict_reconfig_check: self.strict_reconfig_check,
            pre_vote: true,
            append_window: self.append_window,
            batches_in_flight: self.batches_in_flight,
        }
    }
}

pub struct Member {
    pub id: u64,
    pub dir: PathBuf,
    /// Its peer URL.
    pub url: String,
    pub replica: Arc<Replica>,
    pub store: Store,
    stop: Option<oneshot::Sender<()>>,
    server: tokio::task::JoinHandle<()>,
}

pub struct Cluster {
    root: tempfile::TempDir,
    pub settings: Settings,
    initial: BTreeMap<u64, MemberInfo>,
    listeners: BTreeMap<u64, std::net::SocketAddr>,
    pub members: BTreeMap<u64, Member>,
}

impl Cluster {
    /// Starts `n` members that form a cluster.
    pub async fn start(n: usize, settings: Settings) -> Cluster {
        let mut cluster = Cluster {
            root: tempfile::tempdir().unwrap(),
            settings,
            initial: BTreeMap::new(),
            listeners: BTreeMap::new(),
            members: BTreeMap::new(),
        };
        let mut bound = Vec::new();
        for i in 0..n {
            let (id, mut info, l) = cluster.bind_new().await;
            info.name = format!("m{i}");
            // Published: counts as started for reconfiguration checks.
            info.client_urls = vec![format!("http://client-{i}")];
            cluster.initial.insert(id, info);
            bound.push((id, l));
        }
        for (id, l) in bound {
            cluster.launch(id, l).await;
        }
        cluster
    }

    /// Binds a listener for a member that is not in the initial cluster.
    pub async fn bind_new(&mut self) -> (u64, MemberInfo, TcpListener) {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap();
        let url = format!("http://{addr}");
        let id = ids::member_id(std::slice::from_ref(&url), self.settings.token);
        self.listeners.insert(id, addr);
        let info = MemberInfo {
            name: String::new(),
            peer_urls: vec![url],
            client_urls: vec![],
        };
        (id, info, l)
    }

    /// Starts member `id` serving on `listener`.
    pub async fn launch(&mut self, id: u64, listener: TcpListener) {
        let dir = self.root.path().join(format!("{id:x}"));
        std::fs::create_dir_all(&dir).unwrap();
        let options = StoreOptions {
            sync: false,
            ..Default::default()
        };
        let store = Store::open(dir.join("store"), options).unwrap();
        let initial = if self.initial.contains_key(&id) {
            self.initial.clone()
        } else {
            BTreeMap::new() // joining an existing cluster
        };
        let replica = Replica::start(
            self.settings.config(id, initial),
            store.clone(),
            &ReplicaDirs::under(&dir.join("raft")),
        )
        .await
        .unwrap();
        let (stop, stopped) = oneshot::channel::<()>();
        let service = replica.peer_service();
        let server = tokio::spawn(async move {
            tonic::transport::Server::builder()
                .add_service(service)
                .serve_with_incoming_shutdown(
                    tokio_stream::wrappers::TcpListenerStream::new(listener),
                    async {
                        let _ = stopped.await;
                    },
                )
                .await
                .unwrap();
        });
        let url = format!("http://{}", self.listeners[&id]);
        self.members.insert(
            id,
            Member {
                id,
                dir,
                url,
                replica,
                store,
                stop: Some(stop),
                server,
            },
        );
    }

    /// Stops member `id` (its raft, peer server and store), keeping its data.
    pub async fn stop(&mut self, id: u64) -> PathBuf {
        let Member {
            dir,
            replica,
            store,
            stop,
            server,
            ..
        } = self.members.remove(&id).unwrap();
        replica.shutdown().await;
        let _ = stop.unwrap().send(());
        let _ = server.await;
        drop((replica, store));
        dir
    }

    /// Starts stopped member `id` again on its data and its address.
    pub async fn restart(&mut self, id: u64) {
        let addr = self.listeners[&id];
        let listener = loop {
            match TcpListener::bind(addr).await {
                Ok(l) => break l,
                Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
            }
        };
        self.launch(id, listener).await;
    }

    /// The leader every running member agrees on.
    pub async fn leader(&self) -> u64 {
        let any = self.members.values().next().unwrap();
        let deadline = tokio::time::Instant::now() + self.settings.leader_deadline;
        loop {
            let leaders: Vec<Option<u64>> = self
                .members
                .values()
                .map(|m| m.replica.status().leader)
                .collect();
            if let Some(Some(l)) = leaders.first()
                && leaders.iter().all(|x| *x == Some(*l))
                && self.members.contains_key(l)
            {
                return *l;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "no agreed leader: {leaders:?}"
            );
            any.replica.wait_leader(ELECTION).await;
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Moves the leadership to `target` (until it holds it).
    pub async fn lead(&self, target: u64) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        loop {
            let leader = self.leader().await;
            if leader == target {
                return;
            }
            let _ = self.member(leader).replica.move_leader(target).await;
            assert!(
                tokio::time::Instant::now() < deadline,
                "leadership never moved to {target:x}"
            );
        }
    }

    /// Removes member `id` through member `via`, asking again for up to
    /// `within` while that is refused as unhealthy (as etcd: until the
    /// leader has reached the voters without a break for 5 s).
    pub async fn remove(&self, via: u64, id: u64, within: Duration) {
        self.change_membership_retrying(
            via,
            MembershipChange::Remove { id },
            MembershipError::Unhealthy,
            within,
        )
        .await
    }

    /// `change` through member `via`, asked again every 20 ms for up to
    /// `within` while it is refused with `refusal`.
    pub async fn change_membership_retrying(
        &self,
        via: u64,
        change: MembershipChange,
        refusal: MembershipError,
        within: Duration,
    ) {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            match self
                .member(via)
                .replica
                .change_membership(change.clone())
                .await
            {
                Ok(_) => break,
                Err(ReplicaError::Membership(e))
                    if e == refusal && tokio::time::Instant::now() < deadline =>
                {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                other => panic!("{change:?}: {other:?}"),
            }
        }
    }

    pub fn member(&self, id: u64) -> &Member {
        &self.members[&id]
    }

    /// A running member other than `leader`.
    pub fn follower(&self, leader: u64) -> u64 {
        self.other_than(&[leader])
    }

    /// The first running member that is none of `these`.
    pub fn other_than(&self, these: &[u64]) -> u64 {
        *self.members.keys().find(|id| !these.contains(id)).unwrap()
    }

    /// Waits until member `id` has applied revision `rev`.
    pub async fn caught_up(&self, id: u64, rev: i64) {
        self.caught_up_within(id, rev, Duration::from_secs(20))
            .await;
    }

    /// Waits until member `id` has purged its log past `index`, failing
    /// after 20 s. openraft purges only while no append to a stopped
    /// follower is in flight (it retries after a back-off), so a test that
    /// needs a follower behind the purged log waits for the purge.
    pub async fn purged_past(&self, id: u64, index: u64) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        while self.member(id).replica.status().purged_index <= index {
            assert!(
                tokio::time::Instant::now() < deadline,
                "member {id:x} never purged its log past {index}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Waits until member `id` has applied revision `rev`, failing after
    /// `within`: a bound on liveness, not a speed target.
    pub async fn caught_up_within(&self, id: u64, rev: i64, within: Duration) {
        let deadline = tokio::time::Instant::now() + within;
        while self.member(id).store.current_revision() < rev {
            assert!(
                tokio::time::Instant::now() < deadline,
                "member {id:x} never caught up to revision {rev} (at {})",
                self.member(id).store.current_revision()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

pub fn put(key: &str, value: &str) -> WriteRequest {
    WriteRequest::Put(PutRequest {
        key: Bytes::copy_from_slice(key.as_bytes()),
        value: Bytes::copy_from_slice(value.as_bytes()),
        ..Default::default()
    })
}

/// Writes `key` through member `m`, returning the revision it got.
pub async fn put_via(m: &Member, key: &str, value: &str) -> i64 {
    match m.replica.write(put(key, value)).await.unwrap() {
        WriteResponse::Put(p) => p.header_revision,
        other => panic!("not a put response: {other:?}"),
    }
}
