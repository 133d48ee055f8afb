//! What every service shares: the store, the watch engine, the lessor, the
//! member's identity and the limits.

use std::sync::{Arc, Weak};

use hark_lease::Lessor;
use hark_mvcc::{Store, WriteRequest, WriteResponse};
use hark_proto::etcdserverpb::ResponseHeader;
use hark_watch::WatchHub;
use tokio::sync::watch;
use tonic::Status;

/// The single member's raft term: constant until Hark replicates.
pub const RAFT_TERM: u64 = 1;

/// One Hark member: its layers and identity. Services hold it in an `Arc`.
pub struct Node {
    pub store: Store,
    pub hub: WatchHub,
    pub lessor: Lessor,
    pub name: String,
    pub member_id: u64,
    pub cluster_id: u64,
    pub client_urls: Vec<String>,
    pub max_request_bytes: usize,
    /// `--quota-backend-bytes` (etcd's default when unset; negative: none).
    pub quota_bytes: i64,
    /// Flips to `true` at shutdown: long-lived streams end themselves.
    pub shutdown: watch::Receiver<bool>,
}

impl Node {
    /// A response header as etcd fills it: cluster, member, revision, term.
    pub fn header(&self, revision: i64) -> Option<ResponseHeader> {
        Some(ResponseHeader {
            cluster_id: self.cluster_id,
            member_id: self.member_id,
            revision,
            raft_term: RAFT_TERM,
        })
    }

    /// Submits a write to the store's apply path and waits for it without
    /// blocking the runtime.
    pub async fn apply(&self, req: WriteRequest) -> hark_mvcc::Result<WriteResponse> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.store.apply(
            req,
            Box::new(move |r| {
                let _ = tx.send(r);
            }),
        );
        rx.await.unwrap_or(Err(hark_mvcc::Error::Closed))
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

/// A stable 64-bit id from text (FNV-1a): the same name and URLs give the same
/// member id across restarts, as etcd derives its ids from its configuration.
pub fn stable_id(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for b in p.bytes().chain([0]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h.max(1)
}
