//! Maintenance (Status, Alarm) and Cluster (MemberList): what etcd's clients and
//! etcdctl call to learn about the member. Operations that only make sense for
//! a multi-member cluster or etcd's bbolt backend are refused as unimplemented.

use hark_proto::etcdserverpb::{
    self as pb, cluster_server::Cluster, maintenance_server::Maintenance,
};
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};

use crate::grpc_metrics;
use crate::node::{NodeHandle, RAFT_TERM};

const MAINTENANCE: &str = "etcdserverpb.Maintenance";
const CLUSTER: &str = "etcdserverpb.Cluster";
/// etcd's default backend quota (`--quota-backend-bytes`), reported in Status.
const DB_SIZE_QUOTA: i64 = 2 << 30;

pub struct MaintenanceService {
    node: NodeHandle,
}

impl MaintenanceService {
    pub fn new(node: NodeHandle) -> Self {
        MaintenanceService { node }
    }
}

fn unsupported(what: &str) -> Status {
    Status::unimplemented(format!("hark: {what} is not supported"))
}

#[tonic::async_trait]
impl Maintenance for MaintenanceService {
    async fn alarm(
        &self,
        _request: Request<pb::AlarmRequest>,
    ) -> Result<Response<pb::AlarmResponse>, Status> {
        let call = grpc_metrics::unary(MAINTENANCE, "Alarm");
        // Hark raises no alarms (no space quota, no corruption checks yet).
        call.finish(self.node.get().map(|node| {
            Response::new(pb::AlarmResponse {
                header: node.header(node.store.current_revision()),
                alarms: Vec::new(),
            })
        }))
    }

    async fn status(
        &self,
        _request: Request<pb::StatusRequest>,
    ) -> Result<Response<pb::StatusResponse>, Status> {
        let call = grpc_metrics::unary(MAINTENANCE, "Status");
        let node = match self.node.get() {
            Ok(node) => node,
            Err(e) => return call.finish(Err(e)),
        };
        let revision = node.store.current_revision();
        let db_size = node.store.db_size() as i64;
        // Without raft, each applied revision stands for one log entry.
        let raft_index = revision as u64;
        call.finish(Ok(Response::new(pb::StatusResponse {
            header: node.header(revision),
            version: crate::ETCD_VERSION.to_string(),
            db_size,
            leader: node.member_id,
            raft_index,
            raft_term: RAFT_TERM,
            raft_applied_index: raft_index,
            errors: Vec::new(),
            db_size_in_use: db_size,
            is_learner: false,
            storage_version: String::new(),
            db_size_quota: DB_SIZE_QUOTA,
            downgrade_info: None,
        })))
    }

    async fn defragment(
        &self,
        _request: Request<pb::DefragmentRequest>,
    ) -> Result<Response<pb::DefragmentResponse>, Status> {
        grpc_metrics::unary(MAINTENANCE, "Defragment").finish(Err(unsupported("Defragment")))
    }

    async fn hash(
        &self,
        _request: Request<pb::HashRequest>,
    ) -> Result<Response<pb::HashResponse>, Status> {
        grpc_metrics::unary(MAINTENANCE, "Hash").finish(Err(unsupported("Hash")))
    }

    async fn hash_kv(
        &self,
        _request: Request<pb::HashKvRequest>,
    ) -> Result<Response<pb::HashKvResponse>, Status> {
        grpc_metrics::unary(MAINTENANCE, "HashKV").finish(Err(unsupported("HashKV")))
    }

    type SnapshotStream = ReceiverStream<Result<pb::SnapshotResponse, Status>>;

    async fn snapshot(
        &self,
        _request: Request<pb::SnapshotRequest>,
    ) -> Result<Response<Self::SnapshotStream>, Status> {
        grpc_metrics::unary(MAINTENANCE, "Snapshot").finish(Err(unsupported("Snapshot")))
    }

    async fn move_leader(
        &self,
        _request: Request<pb::MoveLeaderRequest>,
    ) -> Result<Response<pb::MoveLeaderResponse>, Status> {
        grpc_metrics::unary(MAINTENANCE, "MoveLeader").finish(Err(unsupported("MoveLeader")))
    }

    async fn downgrade(
        &self,
        _request: Request<pb::DowngradeRequest>,
    ) -> Result<Response<pb::DowngradeResponse>, Status> {
        grpc_metrics::unary(MAINTENANCE, "Downgrade").finish(Err(unsupported("Downgrade")))
    }
}

pub struct ClusterService {
    node: NodeHandle,
}

impl ClusterService {
    pub fn new(node: NodeHandle) -> Self {
        ClusterService { node }
    }
}

#[tonic::async_trait]
impl Cluster for ClusterService {
    async fn member_add(
        &self,
        _request: Request<pb::MemberAddRequest>,
    ) -> Result<Response<pb::MemberAddResponse>, Status> {
        grpc_metrics::unary(CLUSTER, "MemberAdd").finish(Err(unsupported("MemberAdd")))
    }

    async fn member_remove(
        &self,
        _request: Request<pb::MemberRemoveRequest>,
    ) -> Result<Response<pb::MemberRemoveResponse>, Status> {
        grpc_metrics::unary(CLUSTER, "MemberRemove").finish(Err(unsupported("MemberRemove")))
    }

    async fn member_update(
        &self,
        _request: Request<pb::MemberUpdateRequest>,
    ) -> Result<Response<pb::MemberUpdateResponse>, Status> {
        grpc_metrics::unary(CLUSTER, "MemberUpdate").finish(Err(unsupported("MemberUpdate")))
    }

    async fn member_list(
        &self,
        _request: Request<pb::MemberListRequest>,
    ) -> Result<Response<pb::MemberListResponse>, Status> {
        let call = grpc_metrics::unary(CLUSTER, "MemberList");
        let node = match self.node.get() {
            Ok(node) => node,
            Err(e) => return call.finish(Err(e)),
        };
        call.finish(Ok(Response::new(pb::MemberListResponse {
            header: node.header(node.store.current_revision()),
            members: vec![pb::Member {
                id: node.member_id,
                name: node.name.clone(),
                peer_ur_ls: Vec::new(),
                client_ur_ls: node.client_urls.clone(),
                is_learner: false,
            }],
        })))
    }

    async fn member_promote(
        &self,
        _request: Request<pb::MemberPromoteRequest>,
    ) -> Result<Response<pb::MemberPromoteResponse>, Status> {
        grpc_metrics::unary(CLUSTER, "MemberPromote").finish(Err(unsupported("MemberPromote")))
    }
}
