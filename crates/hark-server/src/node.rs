//! What every service shares: the store, the watch engine, the lessor, the
//! member's identity and the limits.

use std::sync::{Arc, Weak};

use hark_auth::AuthStore;
use hark_lease::Lessor;
use hark_mvcc::{Store, WriteRequest, WriteResponse};
use hark_proto::etcdserverpb::ResponseHeader;
use hark_raft::{Replica, ReplicaError};
use hark_watch::WatchHub;
use tokio_util::task::TaskTracker;
use tonic::Status;

use crate::tasks::Stop;

/// One Hark member: its layers and identity. Services hold it in an `Arc`.
/// Its fields are the crate's; users of the crate read it through methods.
pub struct Node {
    pub(crate) store: Store,
    pub(crate) hub: WatchHub,
    pub(crate) lessor: Lessor,
    pub(crate) name: String,
    /// `--data-dir`: scratch files (a snapshot being sent) go here, in a
    /// directory of their own, never in a shared temp dir.
    pub(crate) data_dir: std::path::PathBuf,
    pub(crate) client_urls: Vec<String>,
    pub(crate) max_request_bytes: usize,
    /// `--quota-backend-bytes` (etcd's default when unset; negative: none).
    pub(crate) quota_bytes: i64,
    /// The replicated log every write goes through (a cluster of one when
    /// this member runs alone).
    pub(crate) replica: Arc<Replica>,
    /// Users, roles and tokens (etcd's auth store).
    pub(crate) auth: AuthStore,
    /// Raised at shutdown: long-lived streams end themselves.
    pub(crate) stop: Stop,
    /// Where long-lived streams spawn their tasks, so shutdown can wait for them.
    pub(crate) streams: TaskTracker,
    /// Dropped with the node: tells shutdown when the last request that
    /// held the node has let go of it.
    pub(crate) _dropped: tokio::sync::oneshot::Sender<()>,
}

impl Node {
    /// Closes the layers in shutdown's order (see `tasks.rs`): the lessor,
    /// the auth store, the watch engine, then the store, whose last handle
    /// joins its threads and closes RocksDB. Blocks.
    pub(crate) fn close(self) {
        let Node {
            store,
            hub,
            lessor,
            auth,
            ..
        } = self;
        drop(lessor);
        drop(auth);
        hub.shutdown();
        drop(store);
    }

    /// The member's store.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// A response header as etcd fills it (cluster, member, revision,
    /// term), plus Hark's auth revision while auth is enabled.
    pub fn header(&self, revision: i64) -> Option<ResponseHeader> {
        Some(ResponseHeader {
            cluster_id: self.replica.cluster_id(),
            member_id: self.member_id(),
            revision,
            raft_term: self.raft_term(),
            hark_auth_revision: self.auth.header_revision(),
        })
    }

    /// The header of Cluster responses: etcd's cluster server leaves the
    /// revision out.
    pub fn cluster_header(&self) -> Option<ResponseHeader> {
        self.header(0)
    }

    /// This member's id (etcd's derivation, kept in the raft log).
    pub fn member_id(&self) -> u64 {
        self.replica.member_id()
    }

    /// This member as a snapshot file records it.
    pub fn snapshot_member(&self) -> hark_snapshot::Member {
        hark_snapshot::Member {
            id: self.member_id(),
            name: self.name.clone(),
            peer_urls: Vec::new(),
            client_urls: self.client_urls.clone(),
        }
    }

    pub fn raft_term(&self) -> u64 {
        self.replica.term()
    }

    /// Applies a write through the replicated log: answered once committed
    /// and applied here. Waits without blocking the runtime.
    pub async fn apply(&self, req: WriteRequest) -> Result<WriteResponse, ReplicaError> {
        self.replica.write(req).await
    }

    /// Returns once a linearizable read may be served from this member's
    /// store: every write acknowledged before the call is applied here.
    pub async fn linearizable_barrier(&self) -> Result<(), Status> {
        self.replica
            .read_barrier()
            .await
            .map_err(crate::grpc::errors::replica_status)
    }
}

/// How services and their tasks hold the node: weakly. The server owns it, so
/// a client that never closes its connection cannot keep the store open after
/// shutdown; requests arriving after that get `Unavailable`.
#[derive(Clone)]
pub struct NodeHandle(Weak<Node>);

impl NodeHandle {
    pub fn new(node: &Arc<Node>) -> Self {
        NodeHandle(Arc::downgrade(node))
    }

    pub fn get(&self) -> Result<Arc<Node>, Status> {
        self.0
            .upgrade()
            .ok_or_else(|| Status::unavailable("etcdserver: server stopped"))
    }
}
