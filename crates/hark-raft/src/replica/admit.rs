//! Which callers the peer port lets in (see [`crate::admission`]): this
//! member's view of its cluster, and other members' word on callers it does
//! not know.

use tokio::time::Instant;
use tonic::Status;
use tonic::metadata::MetadataMap;

use super::Replica;
use crate::admission::{
    Asks, CHECK_INTERVAL, CHECK_TIMEOUT, CLUSTER_ID_HEADER, Caller, MEMBER_ID_HEADER, NOT_A_MEMBER,
    header_id,
};
use crate::metrics_watch::MetricsWatch;
use crate::network::{Method, call};
use crate::types::MemberInfo;

impl Replica {
    /// This member as a caller of others.
    pub(crate) fn as_caller(&self) -> Caller {
        Caller {
            member_id: self.member_id(),
            cluster_id: self.cluster_id(),
        }
    }

    /// Admits a call with these headers, or says why not (see the module
    /// documentation).
    pub(crate) async fn admit(&self, md: &MetadataMap, asks: Asks) -> Result<(), Status> {
        let local = self.cluster_id();
        let member_id = header_id(md, MEMBER_ID_HEADER)?;
        let cluster_id = header_id(md, CLUSTER_ID_HEADER)?;
        let (Some(member_id), Some(cluster_id)) = (member_id, cluster_id) else {
            return Err(Status::permission_denied(format!(
                "peer: the caller did not name itself as a member of cluster {local:x} \
                 ({MEMBER_ID_HEADER} and {CLUSTER_ID_HEADER} headers)"
            )));
        };
        if cluster_id != local {
            return Err(Status::failed_precondition(format!(
                "cluster ID mismatch: this member is in cluster {local:x}, \
                 the caller says {cluster_id:x}"
            )));
        }
        let mut known = {
            let metrics = self.raft.metrics();
            let metrics = metrics.borrow();
            metrics
                .membership_config
                .membership()
                .get_node(&member_id)
                .is_some()
        };
        let mut empty = false;
        if !known {
            // The metrics follow raft's state (and are blank for a moment
            // at start): raft itself decides.
            let in_force = self
                .raft
                .with_raft_state(move |st| {
                    let membership = st.membership_state.effective();
                    (
                        membership.get_node(&member_id).is_some(),
                        membership.nodes().next().is_none(),
                    )
                })
                .await;
            match in_force {
                Ok(state) => (known, empty) = state,
                Err(_) => return Err(Status::unavailable("peer: this member is stopping")),
            }
        }
        let admitted = known
            || (asks == Asks::Raft
                && member_id != self.member_id()
                && (empty || self.vouched_for(member_id).await));
        if admitted {
            Ok(())
        } else {
            Err(Status::permission_denied(format!(
                "peer: member {member_id:x} {NOT_A_MEMBER} {local:x}"
            )))
        }
    }

    /// Whether one of the members this member knows lists `id` as a member
    /// of this cluster.
    pub(super) async fn vouched_for(&self, id: u64) -> bool {
        if let Some(member) = self.vouches.cached(id) {
            return member;
        }
        // One check at a time; a caller that arrives meanwhile is refused
        // and asks again (raft retries).
        let Ok(mut last) = self.vouches.checking.try_lock() else {
            return false;
        };
        if let Some(member) = self.vouches.cached(id) {
            return member;
        }
        if last.is_some_and(|at| at.elapsed() < CHECK_INTERVAL) {
            return false;
        }
        *last = Some(Instant::now());
        let others: Vec<MemberInfo> = self
            .members()
            .into_iter()
            .filter(|m| m.id != self.member_id())
            .map(|m| m.info)
            .collect();
        if others.is_empty() {
            // No one to ask (or raft's metrics are not out yet at start).
            return false;
        }
        let mut asked = tokio::task::JoinSet::new();
        for info in others {
            let Ok(mut client) = self.channels.client(&info) else {
                continue;
            };
            let me = self.as_caller();
            asked.spawn(async move {
                call::<_, (u64, Vec<(u64, MemberInfo, bool)>), ()>(
                    &mut client,
                    Method::Members,
                    &(),
                    Some(CHECK_TIMEOUT),
                    Some(me),
                )
                .await
            });
        }
        let cluster_id = self.cluster_id();
        let vouched = tokio::time::timeout(CHECK_TIMEOUT, async {
            while let Some(answer) = asked.join_next().await {
                if let Ok(Ok(Ok((cluster, members)))) = answer
                    && cluster == cluster_id
                    && members.iter().any(|(m, _, _)| *m == id)
                {
                    return true;
                }
            }
            false
        })
        .await
        .unwrap_or(false);
        asked.abort_all();
        if vouched {
            tracing::info!(
                member = %format!("{id:x}"),
                "a member this member does not know yet is vouched for by another"
            );
        }
        self.vouches.remember(id, vouched);
        vouched
    }
}
