//! Leases in a cluster: grants and revokes go through the replicated log,
//! only the leader's lessor expires leases, and keep-alives and time-to-live
//! questions received by a follower are answered by the leader (whose lessor
//! holds the real expiry times), as in etcd.

use std::sync::Arc;

use hark_lease::{LeaseError, LeaseLog, Lessor, LogDone, TimeToLive};
use hark_mvcc::{LeaseRevokeRequest, WriteRequest};
use hark_raft::{ForwardHandler, Replica, ReplicaError, decode_message, encode_message};
use serde::{Deserialize, Serialize};
use tokio::runtime::Handle;

use crate::node::NodeHandle;

/// The lessor's writes, through the log.
pub struct ReplicatedLeases {
    pub replica: Arc<Replica>,
    pub runtime: Handle,
}

impl LeaseLog for ReplicatedLeases {
    fn apply(&self, req: WriteRequest, done: LogDone) {
        let replica = self.replica.clone();
        self.runtime.spawn(async move {
            done(replica.write(req).await.map_err(lease_error));
        });
    }

    /// As etcd's revokeExpiredLeases: only once this member has confirmed
    /// with a quorum that it leads, and then only in the term it leads in.
    fn expire(&self, id: i64, done: LogDone) {
        let replica = self.replica.clone();
        self.runtime.spawn(async move {
            let term = replica.term();
            if !replica.confirm_leadership().await {
                tracing::debug!(
                    lease = id,
                    "not revoking an expired lease: leadership not confirmed"
                );
                return done(Err(LeaseError::NotPrimary));
            }
            let revoke = WriteRequest::LeaseRevoke(LeaseRevokeRequest { id });
            done(
                replica
                    .write_in_term(term, revoke)
                    .await
                    .map_err(lease_error),
            );
        });
    }
}

fn lease_error(e: ReplicaError) -> LeaseError {
    match e {
        ReplicaError::Store(inner) => LeaseError::from(inner),
        other => LeaseError::Unavailable(other.to_string()),
    }
}

/// Keeps the lessor primary exactly while this member leads: set again at
/// each change openraft reports, until the node or raft is gone.
pub async fn follow_leadership(replica: Arc<Replica>, lessor: NodeHandle) {
    let mut leadership = replica.leadership();
    loop {
        let leads = leadership.is_leader();
        let Ok(node) = lessor.get() else {
            return;
        };
        node.lessor.set_primary(leads);
        drop(node);
        if !leadership.changed().await {
            return;
        }
    }
}

/// What a follower asks the leader's lessor.
#[derive(Debug, Serialize, Deserialize)]
enum LeaseAsk {
    KeepAlive { id: i64 },
    TimeToLive { id: i64, keys: bool },
}

/// The leader lessor's answer to a [`LeaseAsk`].
#[derive(Debug, PartialEq, Serialize, Deserialize)]
enum LeaseAnswer {
    /// The renewed TTL; 0 when the lease is unknown or expired.
    KeepAlive { ttl: i64 },
    /// `None` when the lease is unknown.
    TimeToLive(Option<Remaining>),
    /// The member asked could not confirm that it leads.
    NotPrimary,
}

/// A [`TimeToLive`] without its id (the question has it).
#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Remaining {
    ttl: i64,
    granted_ttl: i64,
    keys: Vec<Vec<u8>>,
}

/// Renews lease `id`, on the leader's lessor; the TTL, 0 when the lease is
/// unknown or expired (etcd's answer).
pub async fn keep_alive(replica: &Replica, lessor: &Lessor, id: i64) -> Result<i64, LeaseError> {
    if lessor.is_primary() {
        return renew_here(replica, lessor, id).await;
    }
    match ask(replica, &LeaseAsk::KeepAlive { id }).await? {
        LeaseAnswer::KeepAlive { ttl } => Ok(ttl),
        LeaseAnswer::NotPrimary => Err(LeaseError::NotPrimary),
        LeaseAnswer::TimeToLive(_) => Err(bad_answer()),
    }
}

/// etcd's LeaseRenew on the leader (PR #18441): a leader that cannot confirm
/// with a quorum that it still leads renews nothing, so that a leader cut
/// off from the others does not keep alive a lease the new leader expires.
async fn renew_here(replica: &Replica, lessor: &Lessor, id: i64) -> Result<i64, LeaseError> {
    if !replica.confirm_leadership().await || !lessor.is_primary() {
        return Err(LeaseError::NotPrimary);
    }
    Ok(lessor.keep_alive(id).unwrap_or(0))
}

/// Lease `id`'s time to live as the leader's lessor knows it.
pub async fn time_to_live(
    replica: &Replica,
    lessor: &Lessor,
    id: i64,
    keys: bool,
) -> Result<Option<TimeToLive>, LeaseError> {
    if lessor.is_primary() {
        return Ok(lessor.time_to_live(id, keys).ok());
    }
    match ask(replica, &LeaseAsk::TimeToLive { id, keys }).await? {
        LeaseAnswer::TimeToLive(remaining) => Ok(remaining.map(|r| TimeToLive {
            id,
            ttl: r.ttl,
            granted_ttl: r.granted_ttl,
            keys: r.keys.into_iter().map(bytes::Bytes::from).collect(),
        })),
        LeaseAnswer::NotPrimary => Err(LeaseError::NotPrimary),
        LeaseAnswer::KeepAlive { .. } => Err(bad_answer()),
    }
}

async fn ask(replica: &Replica, question: &LeaseAsk) -> Result<LeaseAnswer, LeaseError> {
    let answer = replica
        .forward_to_leader(encode_message(question))
        .await
        .map_err(|e| LeaseError::Unavailable(e.to_string()))?;
    decode_message(&answer).ok_or_else(bad_answer)
}

fn bad_answer() -> LeaseError {
    LeaseError::Unavailable("etcdserver: unexpected answer from the leader".into())
}

/// The leader's answer to `question` from its lessor.
async fn answer(replica: &Replica, lessor: &Lessor, question: LeaseAsk) -> LeaseAnswer {
    match question {
        LeaseAsk::KeepAlive { id } => match renew_here(replica, lessor, id).await {
            Ok(ttl) => LeaseAnswer::KeepAlive { ttl },
            Err(_) => LeaseAnswer::NotPrimary,
        },
        LeaseAsk::TimeToLive { id, keys } => {
            LeaseAnswer::TimeToLive(lessor.time_to_live(id, keys).ok().map(|t| Remaining {
                ttl: t.ttl,
                granted_ttl: t.granted_ttl,
                keys: t.keys.into_iter().map(|k| k.to_vec()).collect(),
            }))
        }
    }
}

/// The leader's side: answers followers from its lessor.
pub struct LeaseForwards {
    pub node: NodeHandle,
}

impl ForwardHandler for LeaseForwards {
    fn handle(
        &self,
        request: Vec<u8>,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Vec<u8>> + Send>> {
        let node = self.node.clone();
        Box::pin(async move {
            let (Ok(node), Some(question)) = (node.get(), decode_message(&request)) else {
                return Vec::new();
            };
            encode_message(&answer(&node.replica, &node.lessor, question).await)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn questions_and_answers_round_trip_and_junk_is_refused() {
        let question = LeaseAsk::TimeToLive { id: 7, keys: true };
        let decoded: Option<LeaseAsk> = decode_message(&encode_message(&question));
        assert!(matches!(
            decoded,
            Some(LeaseAsk::TimeToLive { id: 7, keys: true })
        ));
        let answer = LeaseAnswer::TimeToLive(Some(Remaining {
            ttl: 4,
            granted_ttl: 10,
            keys: vec![b"a".to_vec(), b"bc".to_vec()],
        }));
        let bytes = encode_message(&answer);
        assert_eq!(decode_message::<LeaseAnswer>(&bytes), Some(answer));
        assert_eq!(decode_message::<LeaseAnswer>(&[9, 9, 9]), None);
        assert_eq!(
            decode_message::<LeaseAnswer>(&bytes[..bytes.len() - 1]),
            None
        );
    }
}
