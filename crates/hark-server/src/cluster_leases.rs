//! Leases in a cluster: grants and revokes go through the replicated log,
//! only the leader's lessor expires leases, and keep-alives and time-to-live
//! questions received by a follower are answered by the leader (whose lessor
//! holds the real expiry times), as in etcd.

use std::sync::Arc;

use hark_lease::{LeaseError, LeaseLog, Lessor, LogDone, TimeToLive};
use hark_mvcc::WriteRequest;
use hark_raft::{ForwardHandler, Replica, ReplicaError};
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
            done(replica.write(req).await.map_err(|e| match e {
                ReplicaError::Store(inner) => LeaseError::from(inner),
                other => LeaseError::Unavailable(other.to_string()),
            }));
        });
    }
}

/// Keeps the lessor primary exactly while this member leads: set again at
/// each change openraft reports, until the node or raft is gone.
pub fn follow_leadership(replica: Arc<Replica>, lessor: NodeHandle) {
    let mut leadership = replica.leadership();
    tokio::spawn(async move {
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
    });
}

/// What a follower asks the leader's lessor.
const KEEP_ALIVE: u8 = 1;
const TIME_TO_LIVE: u8 = 2;

/// Renews lease `id`, on the leader's lessor; the TTL, 0 when the lease is
/// unknown or expired (etcd's answer).
pub async fn keep_alive(replica: &Replica, lessor: &Lessor, id: i64) -> Result<i64, LeaseError> {
    if lessor.is_primary() {
        return Ok(lessor.keep_alive(id).unwrap_or(0));
    }
    let mut request = vec![KEEP_ALIVE];
    request.extend_from_slice(&id.to_be_bytes());
    let answer = forward(replica, request).await?;
    Ok(i64::from_be_bytes(
        answer.try_into().map_err(|_| bad_answer())?,
    ))
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
    let mut request = vec![TIME_TO_LIVE, u8::from(keys)];
    request.extend_from_slice(&id.to_be_bytes());
    let answer = forward(replica, request).await?;
    decode_ttl(id, &answer).ok_or_else(bad_answer)
}

async fn forward(replica: &Replica, request: Vec<u8>) -> Result<Vec<u8>, LeaseError> {
    replica
        .forward_to_leader(request)
        .await
        .map_err(|e| LeaseError::Unavailable(e.to_string()))
}

fn bad_answer() -> LeaseError {
    LeaseError::Unavailable("etcdserver: unexpected answer from the leader".into())
}

/// `[found][ttl][granted][n keys]([len][key])*`, all integers big-endian.
fn encode_ttl(t: Option<TimeToLive>) -> Vec<u8> {
    let Some(t) = t else {
        return vec![0];
    };
    let mut out = vec![1];
    out.extend_from_slice(&t.ttl.to_be_bytes());
    out.extend_from_slice(&t.granted_ttl.to_be_bytes());
    out.extend_from_slice(&(t.keys.len() as u32).to_be_bytes());
    for k in &t.keys {
        out.extend_from_slice(&(k.len() as u32).to_be_bytes());
        out.extend_from_slice(k);
    }
    out
}

fn decode_ttl(id: i64, bytes: &[u8]) -> Option<Option<TimeToLive>> {
    let (&found, mut rest) = bytes.split_first()?;
    if found == 0 {
        return Some(None);
    }
    let mut take = |n: usize| -> Option<&[u8]> {
        let (head, tail) = rest.split_at_checked(n)?;
        rest = tail;
        Some(head)
    };
    let ttl = i64::from_be_bytes(take(8)?.try_into().ok()?);
    let granted_ttl = i64::from_be_bytes(take(8)?.try_into().ok()?);
    let count = u32::from_be_bytes(take(4)?.try_into().ok()?);
    let mut keys = Vec::with_capacity(count.min(1 << 16) as usize);
    for _ in 0..count {
        let len = u32::from_be_bytes(take(4)?.try_into().ok()?) as usize;
        keys.push(bytes::Bytes::copy_from_slice(take(len)?));
    }
    Some(Some(TimeToLive {
        id,
        ttl,
        granted_ttl,
        keys,
    }))
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
            let Ok(node) = node.get() else {
                return Vec::new();
            };
            let id = |at: usize| {
                request
                    .get(at..at + 8)
                    .and_then(|b| b.try_into().ok())
                    .map(i64::from_be_bytes)
            };
            match request.first() {
                Some(&KEEP_ALIVE) => match id(1) {
                    Some(id) => node
                        .lessor
                        .keep_alive(id)
                        .unwrap_or(0)
                        .to_be_bytes()
                        .to_vec(),
                    None => Vec::new(),
                },
                Some(&TIME_TO_LIVE) => match id(2) {
                    Some(id) => encode_ttl(node.lessor.time_to_live(id, request[1] == 1).ok()),
                    None => Vec::new(),
                },
                _ => Vec::new(),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_to_live_answers_round_trip() {
        let t = TimeToLive {
            id: 7,
            ttl: 4,
            granted_ttl: 10,
            keys: vec![
                bytes::Bytes::from_static(b"a"),
                bytes::Bytes::from_static(b"bc"),
            ],
        };
        assert_eq!(decode_ttl(7, &encode_ttl(Some(t.clone()))), Some(Some(t)));
        assert_eq!(decode_ttl(7, &encode_ttl(None)), Some(None));
        assert_eq!(decode_ttl(7, &[1, 0, 0]), None);
    }
}
