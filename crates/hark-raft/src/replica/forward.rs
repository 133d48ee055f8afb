//! Calls to the leader: the layers' requests forwarded to its
//! [`ForwardHandler`], and any peer method called on one member with a
//! deadline.

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use tokio::time::Instant;

use super::{ForwardHandler, Replica, ReplicaError};
use crate::metrics_watch::MetricsWatch;
use crate::network::{Method, call_peer};

impl Replica {
    /// Sets what this member does with requests other members forward to it
    /// while it leads.
    pub fn set_forward_handler(&self, handler: Arc<dyn ForwardHandler>) {
        *self.forward_handler.write() = Some(handler);
    }

    /// Runs `request` on the leader's [`ForwardHandler`] (this member's own
    /// when it leads) and returns its answer. Errors when no leader answers
    /// in time, or the leader changed while it was on its way.
    pub async fn forward_to_leader(&self, request: Vec<u8>) -> Result<Vec<u8>, ReplicaError> {
        let deadline = Instant::now() + self.request_timeout;
        loop {
            let leader = self.wait_for_leader(deadline).await?;
            let answer = if leader == self.member_id {
                self.handle_forwarded(request.clone()).await
            } else {
                match self
                    .call_member::<_, Vec<u8>, ()>(leader, Method::Forward, &request, deadline)
                    .await?
                {
                    Some(Ok(answer)) => answer,
                    _ => Err(()),
                }
            };
            if let Ok(answer) = answer {
                return Ok(answer);
            }
            if Instant::now() >= deadline {
                return Err(ReplicaError::Timeout);
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// A forwarded request, run here if this member leads (`Err` if not).
    pub(crate) async fn handle_forwarded(&self, request: Vec<u8>) -> Result<Vec<u8>, ()> {
        let handler = self.forward_handler.read().clone();
        match handler {
            Some(h) if self.is_leader() => Ok(h.handle(request).await),
            _ => Err(()),
        }
    }

    /// Sends `request` to member `leader` with what is left until
    /// `deadline`. `None` when this member does not know its address.
    pub(crate) async fn call_member<T, R, E>(
        &self,
        leader: u64,
        method: Method,
        request: &T,
        deadline: Instant,
    ) -> Result<Option<Result<Result<R, E>, tonic::Status>>, ReplicaError>
    where
        T: Serialize,
        R: serde::de::DeserializeOwned,
        E: serde::de::DeserializeOwned,
    {
        let Some(node) = self.node(leader) else {
            return Ok(None);
        };
        // A peer URL no channel can be made for is no leader to call.
        self.channels
            .client(&node)
            .map_err(|_| ReplicaError::NoLeader)?;
        let remaining = deadline.saturating_duration_since(Instant::now());
        Ok(Some(
            call_peer(
                &self.channels,
                leader,
                &node,
                method,
                crate::types::encode(request),
                remaining,
                self.as_caller(),
            )
            .await,
        ))
    }

    /// Waits (up to `deadline`) until this member knows a leader: the
    /// leader and its term, read together.
    pub(super) async fn wait_for_leader_in_term(
        &self,
        deadline: Instant,
    ) -> Result<(u64, u64), ReplicaError> {
        let mut metrics = self.raft.metrics();
        let known = metrics.wait_for(|m| m.current_leader.is_some());
        match tokio::time::timeout_at(deadline, known).await {
            Ok(Ok(m)) => m
                .current_leader
                .map(|leader| (leader, m.current_term))
                .ok_or(ReplicaError::NoLeader),
            Ok(Err(_)) => Err(ReplicaError::Stopped),
            Err(_) => Err(ReplicaError::Timeout),
        }
    }

    /// Waits until this member knows a leader.
    pub(super) async fn wait_for_leader(&self, deadline: Instant) -> Result<u64, ReplicaError> {
        Ok(self.wait_for_leader_in_term(deadline).await?.0)
    }
}
