//! Linearizable reads: the leader's read index, reached (from a follower,
//! through a peer call) and then applied here before the read runs.

use std::time::Duration;

use openraft::error::{LinearizableReadError, RaftError};
use tokio::time::Instant;

use super::{Replica, ReplicaError};
use crate::network::Method;
use crate::types::TypeConfig;

impl Replica {
    /// The leader's read index, once a quorum confirmed its leadership (for
    /// its own reads and those its followers ask for).
    ///
    /// openraft (0.9 and 0.10) restarts a member whose saved vote is a committed one
    /// for itself as leader of the same term, without a new blank entry; its
    /// read index is then the larger of that term's first entry and the
    /// commit index it saved, which is saved lazily and can be older than
    /// writes acknowledged before the restart. Found by the fault suite's
    /// power loss (every member down at once; a linearizable read after
    /// restart answered revision 1706 after 1710 was acknowledged). So while
    /// leading in the restored term, reads wait for the whole log it
    /// restarted with: every acknowledged write is in it.
    pub(crate) async fn read_index_here(
        &self,
        deadline: Instant,
    ) -> Result<u64, RaftError<TypeConfig, LinearizableReadError<TypeConfig>>> {
        let _no_transfer = self.until_no_transfer(deadline).await;
        let (read, _applied) = self
            .raft
            .get_read_log_id(openraft::ReadPolicy::ReadIndex)
            .await?;
        let index = read.index();
        Ok(match self.restored_leadership {
            Some((term, last))
                if self.term() == term
                    && !hark_mvcc::chaos::mutation("read-index-after-restore") =>
            {
                index.max(last)
            }
            _ => index,
        })
    }

    /// etcd's ensureLeadership: whether this member leads, confirmed now by
    /// a quorum (a read index) within the request timeout, in the same term
    /// before and after, with everything up to that index applied here. A
    /// leader cut off from the others answers `false`: openraft 0.9 has no
    /// check-quorum step-down, so without this it would go on answering
    /// for the cluster (a lease kept alive on it, expired by the new leader).
    pub async fn confirm_leadership(&self) -> bool {
        if hark_mvcc::chaos::mutation("lease-without-leadership-check") {
            return self.is_leader();
        }
        if !self.is_leader() {
            return false;
        }
        let term = self.term();
        let deadline = Instant::now() + self.request_timeout;
        let Ok(Ok(index)) = tokio::time::timeout_at(deadline, self.read_index_here(deadline)).await
        else {
            return false;
        };
        let remaining = deadline.saturating_duration_since(Instant::now());
        let applied = self
            .raft
            .wait(Some(remaining))
            .applied_index_at_least(Some(index), "leadership confirmed")
            .await;
        applied.is_ok() && self.is_leader() && self.term() == term
    }

    /// Returns once this member has applied every write acknowledged before
    /// the call (a linearizable read may then be served from its store).
    pub async fn read_barrier(&self) -> Result<(), ReplicaError> {
        if hark_mvcc::chaos::mutation("read-without-read-index") {
            return Ok(());
        }
        let deadline = Instant::now() + self.request_timeout;
        loop {
            let leader = self.wait_for_leader(deadline).await?;
            let index = if leader == self.member_id {
                match self.read_index_here(deadline).await {
                    Ok(index) => Some(index),
                    Err(RaftError::Fatal(_)) => return Err(ReplicaError::Stopped),
                    Err(RaftError::APIError(_)) => None,
                }
            } else {
                let asked = self
                    .call_member::<_, u64, RaftError<TypeConfig, LinearizableReadError<TypeConfig>>>(
                        leader,
                        Method::ReadIndex,
                        &(),
                        deadline,
                    )
                    .await?;
                match asked {
                    Some(Ok(Ok(index))) => Some(index),
                    _ => None,
                }
            };
            if index.is_none() {
                metrics::counter!("etcd_server_read_indexes_failed_total").increment(1);
            }
            if let Some(index) = index {
                let remaining = deadline.saturating_duration_since(Instant::now());
                return match self
                    .raft
                    .wait(Some(remaining))
                    .applied_index_at_least(Some(index), "read index")
                    .await
                {
                    Ok(_) => Ok(()),
                    Err(openraft::metrics::WaitError::Timeout(..)) => {
                        metrics::counter!("etcd_server_slow_read_indexes_total").increment(1);
                        Err(ReplicaError::Timeout)
                    }
                    Err(openraft::metrics::WaitError::ShuttingDown) => Err(ReplicaError::Stopped),
                };
            }
            if Instant::now() >= deadline {
                metrics::counter!("etcd_server_slow_read_indexes_total").increment(1);
                return Err(ReplicaError::Timeout);
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}
