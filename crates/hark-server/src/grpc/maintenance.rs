//! Maintenance (Status, Alarm, Defragment, Hash, HashKV, Snapshot) and Cluster
//! (MemberList, MemberAdd, MemberRemove, MemberUpdate, MemberPromote): what
//! etcd's clients and etcdctl call to look after a member and its cluster.
//! Membership changes go through the replicated log, run by the leader.

use hark_mvcc as mvcc;
use hark_proto::etcdserverpb::{
    self as pb, cluster_server::Cluster, maintenance_server::Maintenance,
};
use hark_raft::{MemberInfo, MembershipChange, Replica};
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};

use crate::grpc::access::{Needs, require};
use crate::grpc::errors::{mvcc_status, replica_status};
use crate::node::NodeHandle;

pub struct MaintenanceService {
    node: NodeHandle,
}

impl MaintenanceService {
    pub fn new(node: NodeHandle) -> Self {
        MaintenanceService { node }
    }
}

/// etcd's downgrade target checks: `target` is a semver (or major.minor)
/// and names the minor version right below the cluster's.
fn check_downgrade_target(target: &str, cluster_version: &str) -> Result<(), Status> {
    let major_minor = |v: &str| -> Option<(u64, u64)> {
        let core = v.split(['-', '+']).next()?;
        let parts: Vec<&str> = core.split('.').collect();
        if !(2..=3).contains(&parts.len()) || parts.iter().any(|p| p.is_empty()) {
            return None;
        }
        let numbers: Option<Vec<u64>> = parts.iter().map(|p| p.parse().ok()).collect();
        let numbers = numbers?;
        Some((numbers[0], numbers[1]))
    };
    let target = major_minor(target).ok_or_else(|| {
        Status::invalid_argument("etcdserver: wrong downgrade target version format")
    })?;
    let (major, minor) = major_minor(cluster_version).ok_or_else(|| {
        Status::failed_precondition("etcdserver: cluster version not found during downgrade")
    })?;
    if minor == 0 || target != (major, minor - 1) {
        return Err(Status::invalid_argument(
            "etcdserver: invalid downgrade target version",
        ));
    }
    Ok(())
}

fn unsupported(what: &str) -> Status {
    Status::unimplemented(format!("hark: {what} is not supported"))
}

/// An alarm as etcd's `AlarmMember.String()` prints it in `Status.errors`
/// (protobuf's compact text form, trailing space included).
pub fn alarm_text(alarm: &mvcc::Alarm) -> String {
    format!("memberID:{} alarm:{} ", alarm.member_id, alarm.kind.name())
}

fn alarm_request(req: &pb::AlarmRequest) -> Result<mvcc::AlarmRequest, Status> {
    let action = match pb::alarm_request::AlarmAction::try_from(req.action) {
        Ok(pb::alarm_request::AlarmAction::Get) => mvcc::AlarmAction::Get,
        Ok(pb::alarm_request::AlarmAction::Activate) => mvcc::AlarmAction::Activate,
        Ok(pb::alarm_request::AlarmAction::Deactivate) => mvcc::AlarmAction::Deactivate,
        Err(_) => {
            return Err(Status::invalid_argument(format!(
                "etcdserver: unknown alarm action {}",
                req.action
            )));
        }
    };
    let kind = match req.alarm {
        0 => None,
        n => Some(mvcc::AlarmKind::from_number(n).ok_or_else(|| {
            Status::invalid_argument(format!("etcdserver: unknown alarm type {n}"))
        })?),
    };
    Ok(mvcc::AlarmRequest {
        action,
        member_id: req.member_id,
        kind,
    })
}

impl MaintenanceService {
    async fn do_alarm(&self, req: pb::AlarmRequest) -> Result<pb::AlarmResponse, Status> {
        let node = self.node.get()?;
        let req = alarm_request(&req)?;
        match node.apply(mvcc::WriteRequest::Alarm(req)).await {
            Ok(mvcc::WriteResponse::Alarm(r)) => Ok(pb::AlarmResponse {
                header: node.header(r.header_revision),
                alarms: r
                    .alarms
                    .iter()
                    .map(|a| pb::AlarmMember {
                        member_id: a.member_id,
                        alarm: a.kind.number(),
                    })
                    .collect(),
            }),
            Ok(other) => Err(Status::internal(format!(
                "hark: the store answered an alarm with {other:?}"
            ))),
            Err(e) => Err(replica_status(e)),
        }
    }

    async fn do_defragment(&self) -> Result<pb::DefragmentResponse, Status> {
        let node = self.node.get()?;
        let store = node.store.clone();
        tokio::task::spawn_blocking(move || store.defragment())
            .await
            .map_err(|e| Status::internal(format!("hark: defragment failed: {e}")))?
            .map_err(mvcc_status)?;
        // etcd answers a defragment with no header at all.
        Ok(pb::DefragmentResponse { header: None })
    }

    async fn do_hash(&self) -> Result<pb::HashResponse, Status> {
        let node = self.node.get()?;
        let store = node.store.clone();
        let (hash, revision) = tokio::task::spawn_blocking(move || store.hash())
            .await
            .map_err(|e| Status::internal(format!("hark: hash failed: {e}")))?
            .map_err(mvcc_status)?;
        Ok(pb::HashResponse {
            header: node.header(revision),
            hash,
        })
    }

    async fn do_hash_kv(&self, req: pb::HashKvRequest) -> Result<pb::HashKvResponse, Status> {
        let node = self.node.get()?;
        if req.revision < 0 {
            // etcd hashes nothing and echoes the negative revision; say why instead.
            return Err(Status::invalid_argument(
                "hark: HashKV revision must be 0 (current) or positive",
            ));
        }
        let store = node.store.clone();
        let h = tokio::task::spawn_blocking(move || store.hash_kv(req.revision))
            .await
            .map_err(|e| Status::internal(format!("hark: hash failed: {e}")))?
            .map_err(mvcc_status)?;
        Ok(pb::HashKvResponse {
            header: node.header(h.current_revision),
            hash: h.hash,
            // etcd's compact revision is -1 until the first compaction.
            compact_revision: if h.compact_revision == 0 {
                -1
            } else {
                h.compact_revision
            },
            hash_revision: h.hash_revision,
        })
    }

    fn do_status(&self) -> Result<pb::StatusResponse, Status> {
        let node = self.node.get()?;
        let revision = node.store.current_revision();
        let raft = node.replica.status();
        // etcd's leader as its member sees one: none for a follower that has
        // not heard from it for an election timeout, nor for a leader that a
        // quorum has not answered for that long (check-quorum).
        let leader = match raft.leader {
            Some(id) if node.replica.has_leader() => id,
            _ => 0,
        };
        let mut errors: Vec<String> = Vec::new();
        if leader == 0 {
            errors.push("etcdserver: no leader".to_string());
        }
        errors.extend(node.store.alarms().iter().map(alarm_text));
        Ok(pb::StatusResponse {
            header: node.header(revision),
            version: crate::ETCD_VERSION.to_string(),
            db_size: node.store.db_size() as i64,
            leader,
            raft_index: raft.last_log_index,
            raft_term: raft.term,
            raft_applied_index: raft.applied_index,
            errors,
            db_size_in_use: node.store.db_size_in_use() as i64,
            is_learner: raft.is_learner,
            storage_version: hark_snapshot::schema::STORAGE_VERSION_VALUE.to_string(),
            db_size_quota: node.quota_bytes,
            downgrade_info: None,
        })
    }
}

/// etcd's chunk size for snapshot streams.
const SNAPSHOT_CHUNK: usize = 32 * 1024;

/// Streams a consistent snapshot of `store` as etcd does: the bbolt database
/// in 32 KiB chunks with the bytes still to come, then one message holding
/// the sha256 of everything sent. The database is written to a temporary
/// file first (writers are not blocked meanwhile) and removed afterwards.
fn send_snapshot(
    store: &mvcc::Store,
    member: &hark_snapshot::Member,
    data_dir: &std::path::Path,
    tx: &tokio::sync::mpsc::Sender<Result<pb::SnapshotResponse, Status>>,
) -> Result<(), Status> {
    use sha2::{Digest, Sha256};
    use std::io::Read;

    let failed = |what: &str, e: &dyn std::fmt::Display| {
        tracing::error!(error = %e, "snapshot: {what}");
        Status::internal(format!("etcdserver: snapshot: {what}: {e}"))
    };
    // A directory made exclusively under a random name, mode 0700, in the
    // data dir: no one else can have placed a file or a symlink where the
    // database is written. Removed (with the database) when this returns.
    let scratch = tempfile::Builder::new()
        .prefix(".snapshot-")
        .tempdir_in(data_dir)
        .map_err(|e| failed("making its scratch dir", &e))?;
    let temp = scratch.path().join("db");
    let started = std::time::Instant::now();
    let written = hark_snapshot::write_database(store, member, &temp)
        .map_err(|e| failed("writing the database", &e))?;
    let mut file = std::fs::File::open(&temp).map_err(|e| failed("reading it back", &e))?;
    let mut hasher = Sha256::new();
    let mut remaining = written.size;
    while remaining > 0 {
        let mut chunk = vec![0u8; SNAPSHOT_CHUNK.min(remaining as usize)];
        file.read_exact(&mut chunk)
            .map_err(|e| failed("reading it back", &e))?;
        hasher.update(&chunk);
        remaining -= chunk.len() as u64;
        let msg = pb::SnapshotResponse {
            header: None,
            remaining_bytes: remaining,
            blob: chunk.into(),
            version: String::new(),
        };
        if tx.blocking_send(Ok(msg)).is_err() {
            return Err(Status::cancelled(
                "etcdserver: snapshot: the client went away",
            ));
        }
    }
    let checksum = pb::SnapshotResponse {
        header: None,
        remaining_bytes: 0,
        blob: hasher.finalize().to_vec().into(),
        version: String::new(),
    };
    if tx.blocking_send(Ok(checksum)).is_err() {
        return Err(Status::cancelled(
            "etcdserver: snapshot: the client went away",
        ));
    }
    tracing::info!(
        revision = written.revision,
        bytes = written.size,
        took = ?started.elapsed(),
        "sent database snapshot"
    );
    Ok(())
}

#[tonic::async_trait]
impl Maintenance for MaintenanceService {
    async fn alarm(
        &self,
        request: Request<pb::AlarmRequest>,
    ) -> Result<Response<pb::AlarmResponse>, Status> {
        let needs = match pb::alarm_request::AlarmAction::try_from(request.get_ref().action) {
            Ok(pb::alarm_request::AlarmAction::Get) => Needs::Authenticated,
            _ => Needs::Admin,
        };
        require(&self.node, request.metadata(), needs)?;
        self.do_alarm(request.into_inner()).await.map(Response::new)
    }

    async fn status(
        &self,
        request: Request<pb::StatusRequest>,
    ) -> Result<Response<pb::StatusResponse>, Status> {
        require(&self.node, request.metadata(), Needs::Authenticated)?;
        self.do_status().map(Response::new)
    }

    async fn defragment(
        &self,
        request: Request<pb::DefragmentRequest>,
    ) -> Result<Response<pb::DefragmentResponse>, Status> {
        require(&self.node, request.metadata(), Needs::Admin)?;
        self.do_defragment().await.map(Response::new)
    }

    async fn hash(
        &self,
        request: Request<pb::HashRequest>,
    ) -> Result<Response<pb::HashResponse>, Status> {
        require(&self.node, request.metadata(), Needs::Admin)?;
        self.do_hash().await.map(Response::new)
    }

    async fn hash_kv(
        &self,
        request: Request<pb::HashKvRequest>,
    ) -> Result<Response<pb::HashKvResponse>, Status> {
        require(&self.node, request.metadata(), Needs::Admin)?;
        self.do_hash_kv(request.into_inner())
            .await
            .map(Response::new)
    }

    type SnapshotStream = ReceiverStream<Result<pb::SnapshotResponse, Status>>;

    async fn snapshot(
        &self,
        request: Request<pb::SnapshotRequest>,
    ) -> Result<Response<Self::SnapshotStream>, Status> {
        require(&self.node, request.metadata(), Needs::Admin)?;
        let node = self.node.get()?;
        let member = node.snapshot_member();
        let store = node.store.clone();
        let data_dir = node.data_dir.clone();
        drop(node);
        // At most four chunks (128 KiB) wait for the client; when they do,
        // the sending thread waits too, so a slow client slows only itself.
        let (tx, rx) = tokio::sync::mpsc::channel(4);
        tokio::task::spawn_blocking(move || {
            if let Err(status) = send_snapshot(&store, &member, &data_dir, &tx) {
                let _ = tx.blocking_send(Err(status));
            }
        });
        Ok(Response::new(ReceiverStream::new(rx)))
    }

    /// etcd's MoveLeader: sent to the leader, answered once `target_id` leads.
    async fn move_leader(
        &self,
        request: Request<pb::MoveLeaderRequest>,
    ) -> Result<Response<pb::MoveLeaderResponse>, Status> {
        require(&self.node, request.metadata(), Needs::Admin)?;
        let node = self.node.get()?;
        let target = request.get_ref().target_id;
        let moved = node.replica.move_leader(target).await;
        moved
            .map(|()| {
                Response::new(pb::MoveLeaderResponse {
                    header: node.header(node.store.current_revision()),
                })
            })
            .map_err(replica_status)
    }

    async fn downgrade(
        &self,
        request: Request<pb::DowngradeRequest>,
    ) -> Result<Response<pb::DowngradeResponse>, Status> {
        use pb::downgrade_request::DowngradeAction;
        require(&self.node, request.metadata(), Needs::Admin)?;
        let req = request.into_inner();
        // etcd's checks, in its order; a downgrade itself Hark cannot run
        // (no older Hark reads a newer one's data), so a valid one is
        // answered as unsupported, and there is never one to cancel.
        match DowngradeAction::try_from(req.action) {
            Ok(DowngradeAction::Validate | DowngradeAction::Enable) => {
                check_downgrade_target(&req.version, crate::ETCD_CLUSTER_VERSION)?;
                Err(unsupported("Downgrade"))
            }
            Ok(DowngradeAction::Cancel) => Err(Status::failed_precondition(
                "etcdserver: no inflight downgrade job",
            )),
            Err(_) => Err(Status::unimplemented("etcdserver: unknown method")),
        }
    }
}

fn member_to_pb(m: hark_raft::Member) -> pb::Member {
    pb::Member {
        id: m.id,
        name: m.info.name,
        peer_ur_ls: m.info.peer_urls,
        client_ur_ls: m.info.client_urls,
        is_learner: m.is_learner,
    }
}

pub struct ClusterService {
    node: NodeHandle,
}

impl ClusterService {
    pub fn new(node: NodeHandle) -> Self {
        ClusterService { node }
    }

    /// Runs `change` and answers with the header and the members after it.
    async fn change(
        &self,
        change: MembershipChange,
    ) -> Result<(Option<pb::ResponseHeader>, Vec<pb::Member>), Status> {
        let node = self.node.get()?;
        let replica = &node.replica;
        replica
            .change_membership(change)
            .await
            .map_err(replica_status)?;
        Ok((node.cluster_header(), members_pb(replica)))
    }
}

fn members_pb(replica: &Replica) -> Vec<pb::Member> {
    replica.members().into_iter().map(member_to_pb).collect()
}

/// etcd's `ErrGRPCMemberBadURLs`.
fn bad_urls() -> Status {
    Status::invalid_argument("etcdserver: given member URLs are invalid")
}

#[tonic::async_trait]
impl Cluster for ClusterService {
    async fn member_add(
        &self,
        request: Request<pb::MemberAddRequest>,
    ) -> Result<Response<pb::MemberAddResponse>, Status> {
        require(&self.node, request.metadata(), Needs::Admin)?;
        let req = request.into_inner();
        let result = async {
            let node = self.node.get()?;
            let replica = &node.replica;
            if req.peer_ur_ls.is_empty()
                || !req.peer_ur_ls.iter().all(|u| crate::config::is_peer_url(u))
            {
                return Err(bad_urls());
            }
            let id = replica.new_member_id(&req.peer_ur_ls);
            let info = MemberInfo {
                name: String::new(),
                peer_urls: req.peer_ur_ls.clone(),
                client_urls: Vec::new(),
            };
            let change = MembershipChange::Add {
                id,
                member: info.clone(),
                learner: req.is_learner,
            };
            replica
                .change_membership(change)
                .await
                .map_err(replica_status)?;
            Ok(pb::MemberAddResponse {
                header: node.cluster_header(),
                member: Some(member_to_pb(hark_raft::Member {
                    id,
                    info,
                    is_learner: req.is_learner,
                })),
                members: members_pb(replica),
            })
        }
        .await;
        result.map(Response::new)
    }

    async fn member_remove(
        &self,
        request: Request<pb::MemberRemoveRequest>,
    ) -> Result<Response<pb::MemberRemoveResponse>, Status> {
        require(&self.node, request.metadata(), Needs::Admin)?;
        let id = request.into_inner().id;
        let result = self
            .change(MembershipChange::Remove { id })
            .await
            .map(|(header, members)| pb::MemberRemoveResponse { header, members });
        result.map(Response::new)
    }

    async fn member_update(
        &self,
        request: Request<pb::MemberUpdateRequest>,
    ) -> Result<Response<pb::MemberUpdateResponse>, Status> {
        require(&self.node, request.metadata(), Needs::Admin)?;
        let req = request.into_inner();
        let valid = !req.peer_ur_ls.is_empty()
            && req.peer_ur_ls.iter().all(|u| crate::config::is_peer_url(u));
        let result = if valid {
            self.change(MembershipChange::UpdatePeerUrls {
                id: req.id,
                peer_urls: req.peer_ur_ls,
            })
            .await
            .map(|(header, members)| pb::MemberUpdateResponse { header, members })
        } else {
            Err(bad_urls())
        };
        result.map(Response::new)
    }

    async fn member_list(
        &self,
        request: Request<pb::MemberListRequest>,
    ) -> Result<Response<pb::MemberListResponse>, Status> {
        require(&self.node, request.metadata(), Needs::Authenticated)?;
        let node = self.node.get()?;
        if request.get_ref().linearizable
            && let Err(e) = node.linearizable_barrier().await
        {
            return Err(e);
        }
        let members = members_pb(&node.replica);
        Ok(Response::new(pb::MemberListResponse {
            header: node.cluster_header(),
            members,
        }))
    }

    async fn member_promote(
        &self,
        request: Request<pb::MemberPromoteRequest>,
    ) -> Result<Response<pb::MemberPromoteResponse>, Status> {
        require(&self.node, request.metadata(), Needs::Admin)?;
        let id = request.into_inner().id;
        let result = self
            .change(MembershipChange::Promote { id })
            .await
            .map(|(header, members)| pb::MemberPromoteResponse { header, members });
        result.map(Response::new)
    }
}

#[cfg(test)]
mod tests {
    use super::check_downgrade_target;

    #[test]
    fn downgrade_targets_are_checked_as_etcd_checks_them() {
        let message = |t: &str| {
            check_downgrade_target(t, "3.7.0")
                .err()
                .map(|s| s.message().to_string())
        };
        assert_eq!(message("3.6"), None);
        assert_eq!(message("3.6.0"), None);
        assert_eq!(message("3.6.9-rc.1"), None);
        for wrong in ["3.0", "3.5", "3.7", "3.8.0", "4.6"] {
            assert_eq!(
                message(wrong).as_deref(),
                Some("etcdserver: invalid downgrade target version"),
                "{wrong}"
            );
        }
        for bad in ["", "3", "v3.6", "3.x", "3..6", "3.6.0.1"] {
            assert_eq!(
                message(bad).as_deref(),
                Some("etcdserver: wrong downgrade target version format"),
                "{bad}"
            );
        }
    }
}
