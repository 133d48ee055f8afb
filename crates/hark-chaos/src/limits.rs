//! Members that do not share their limits, as in a rolling flag change:
//! each member's `--max-txn-ops`, `--max-request-bytes` and
//! `--quota-backend-bytes` differ ([`MEMBER_LIMITS`]), and the near-limits
//! workload sends requests that one member takes and another refuses. A
//! limit must be applied by the member that takes the request, before it
//! proposes: checked again at apply with each member's own flags, the
//! members would apply different logs. The final HashKV comparison (and the
//! final-state check) catches that.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use etcd_client::{Txn, TxnOp};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tokio::time::Instant;

use crate::history::{FinalHash, LimitRecord};
use crate::workload::{PREFIX, REQUEST_TIMEOUT, connect};

/// Each member's limits, in member order.
pub struct Limits {
    pub max_txn_ops: usize,
    pub max_request_bytes: usize,
    pub quota_backend_bytes: u64,
}

pub const MEMBER_LIMITS: [Limits; 3] = [
    Limits {
        max_txn_ops: 256,
        max_request_bytes: 1536 * 1024,
        quota_backend_bytes: 8 << 30,
    },
    Limits {
        max_txn_ops: 128,
        max_request_bytes: 512 * 1024,
        quota_backend_bytes: 2 << 30,
    },
    Limits {
        max_txn_ops: 192,
        max_request_bytes: 1024 * 1024,
        quota_backend_bytes: 4 << 30,
    },
];

impl Limits {
    pub fn flags(&self) -> Vec<String> {
        vec![
            format!("--max-txn-ops={}", self.max_txn_ops),
            format!("--max-request-bytes={}", self.max_request_bytes),
            format!("--quota-backend-bytes={}", self.quota_backend_bytes),
        ]
    }
}

/// Large values go outside [`PREFIX`]: the watchers and lists there would
/// have to take them all in one message.
const LARGE_PREFIX: &str = "/chaos-large/";

/// One near-limits client until `until`: txns of 100 to 260 puts under
/// [`PREFIX`] and puts of 300 KiB to 1.4 MiB values, each to a random member.
pub async fn near_limits_client(
    client: usize,
    endpoints: Vec<String>,
    seed: u64,
    until: Instant,
    records: Arc<Mutex<Vec<LimitRecord>>>,
) {
    let mut rng = StdRng::seed_from_u64(seed ^ 0x11_3175 ^ client as u64);
    let mut n = 0u64;
    while Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(rng.random_range(300..800))).await;
        let member = rng.random_range(0..endpoints.len());
        let Some(mut c) = connect(&endpoints[member]).await else {
            continue;
        };
        n += 1;
        let (txn_ops, value_bytes, answer) = if rng.random_bool(0.75) {
            let ops = rng.random_range(100..=260);
            let puts: Vec<TxnOp> = (0..ops)
                .map(|i| TxnOp::put(format!("{PREFIX}t{client}-{n}/{i:03}"), "v", None))
                .collect();
            let answer =
                tokio::time::timeout(REQUEST_TIMEOUT, c.txn(Txn::new().and_then(puts))).await;
            (ops, 0, answer.map(|r| r.map(|_| ())))
        } else {
            let bytes = rng.random_range(300 * 1024..1400 * 1024);
            let key = format!("{LARGE_PREFIX}{client}-{n}");
            let answer =
                tokio::time::timeout(REQUEST_TIMEOUT, c.put(key, vec![b'x'; bytes], None)).await;
            (0, bytes, answer.map(|r| r.map(|_| ())))
        };
        let refused = match answer {
            Ok(Ok(())) => None,
            Ok(Err(e)) => Some(e.to_string()),
            Err(_) => Some("timed out".into()),
        };
        records.lock().unwrap().push(LimitRecord {
            member,
            txn_ops,
            value_bytes,
            refused,
        });
    }
}

/// A txn over a member's `--max-txn-ops` is not taken by that member, and
/// one within it is not refused for its size.
pub fn check(records: &[LimitRecord], report: &mut crate::report::Report) {
    if records.is_empty() {
        return;
    }
    let too_many = "too many operations in txn request";
    let mut accepted = 0;
    for r in records.iter().filter(|r| r.txn_ops > 0) {
        let limit = MEMBER_LIMITS[r.member].max_txn_ops;
        let said_too_many = r.refused.as_deref().is_some_and(|e| e.contains(too_many));
        if r.refused.is_none() {
            accepted += 1;
        }
        // Over the limit and taken, or within it and refused for it (other
        // errors, from a member down or a leader change, say nothing).
        let over = r.txn_ops > limit;
        if (over && r.refused.is_none()) || (!over && said_too_many) {
            report.anomaly(format!(
                "m{} (--max-txn-ops {limit}) answered a {}-op txn with {:?}",
                r.member, r.txn_ops, r.refused
            ));
        }
    }
    let large = records.iter().filter(|r| r.value_bytes > 0);
    let large_ok = large.clone().filter(|r| r.refused.is_none()).count();
    report.facts.push(format!(
        "{} near-limit requests to members with different limits: {accepted} txns of 100-260 ops \
         and {large_ok} of {} large puts accepted",
        records.len(),
        large.count()
    ));
}

/// HashKV at `revision` from the member at `endpoint`.
pub async fn final_hash(endpoint: &str, revision: i64) -> FinalHash {
    let mut out = FinalHash {
        endpoint: endpoint.to_string(),
        revision,
        ..Default::default()
    };
    let Some(mut c) = connect(endpoint).await else {
        out.error = Some("no connection".into());
        return out;
    };
    match tokio::time::timeout(Duration::from_secs(30), c.hash_kv(revision)).await {
        Ok(Ok(r)) => {
            out.hash = r.hash();
            out.compact_revision = r.compact_version();
        }
        Ok(Err(e)) => out.error = Some(e.to_string()),
        Err(_) => out.error = Some("timed out".into()),
    }
    out
}

/// All members' hashes at the final revision agree (etcd's corruption
/// check compares the same).
pub fn check_hashes(hashes: &[FinalHash], report: &mut crate::report::Report) {
    let answered: Vec<&FinalHash> = hashes.iter().filter(|h| h.error.is_none()).collect();
    for h in hashes.iter().filter(|h| h.error.is_some()) {
        report.anomaly(format!(
            "{}: no HashKV at revision {}: {}",
            h.endpoint,
            h.revision,
            h.error.as_deref().unwrap_or_default()
        ));
    }
    let Some(first) = answered.first() else {
        return;
    };
    let differ: Vec<_> = answered
        .iter()
        .filter(|h| h.compact_revision == first.compact_revision && h.hash != first.hash)
        .collect();
    if differ.is_empty() {
        report.facts.push(format!(
            "HashKV at revision {} equal on {} members",
            first.revision,
            answered.len()
        ));
    } else {
        report.anomaly(format!(
            "HashKV at revision {} differs between members: {:?}",
            first.revision,
            answered
                .iter()
                .map(|h| (&h.endpoint, h.hash, h.compact_revision))
                .collect::<Vec<_>>()
        ));
    }
}
