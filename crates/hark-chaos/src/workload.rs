//! The clients: the register workload (puts, reads both ways, CAS) and the
//! watch workload (a watcher per member, resuming after any error from the
//! revision after the last it saw). Everything sent and seen is recorded.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use etcd_client::{Client, ConnectOptions, EventType, WatchOptions};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tokio::time::Instant;

use crate::history::{Call, Event, LeaseFate, LeaseRecord, Op, Outcome, WatchLog, WatchResponse};

/// Every key the workloads touch starts with this.
pub const PREFIX: &str = "/chaos/";

/// How long a request may take before it counts as unanswered: past the
/// election timeout, so a leader change alone does not time requests out.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(3);

/// Registers live this long; then the clients move on to fresh keys, so
/// that each key's history stays short enough for the linearizability search.
const KEY_EPOCH: Duration = Duration::from_secs(2);
const KEYS_PER_EPOCH: u64 = 4;

/// The run's clock: microseconds since the workloads began.
#[derive(Clone, Copy)]
pub struct Clock(pub Instant);

impl Clock {
    pub fn now_us(&self) -> u64 {
        self.0.elapsed().as_micros() as u64
    }
}

pub async fn connect(endpoint: &str) -> Option<Client> {
    let options = ConnectOptions::new()
        .with_connect_timeout(Duration::from_millis(500))
        .with_timeout(REQUEST_TIMEOUT)
        .with_keep_alive(Duration::from_secs(1), Duration::from_secs(1));
    Client::connect([endpoint], Some(options)).await.ok()
}

/// A connection to `endpoints[*at]`; when none can be made, `at` moves to
/// the next member and `None` comes back after a short pause (the caller
/// loops), as clientv3 fails over.
pub async fn connect_or_move_on(endpoints: &[String], at: &mut usize) -> Option<Client> {
    let c = connect(&endpoints[*at]).await;
    if c.is_none() {
        *at = (*at + 1) % endpoints.len();
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    c
}

/// The register clients' client: `hark-client`, given every member (its
/// own first), which moves to the next member when one is unavailable and
/// retries what clientv3 retries (reads; writes only when never sent) for
/// up to 2 s, within the 3 s a request may take.
async fn retrying_client(endpoints: &[String], first: usize) -> Option<hark_client::Client> {
    let ordered: Vec<&String> = endpoints
        .iter()
        .cycle()
        .skip(first)
        .take(endpoints.len())
        .collect();
    let options = hark_client::ConnectOptions {
        dial_timeout: Some(Duration::from_millis(500)),
        retry_for: Some(Duration::from_secs(2)),
        ..Default::default()
    };
    hark_client::Client::connect_with(ordered, options)
        .await
        .ok()
}

/// One register client until `until`, through [`retrying_client`]: it talks
/// to one member at a time and moves on as clientv3 fails over.
pub async fn register_client(
    client: usize,
    endpoints: Vec<String>,
    seed: u64,
    clock: Clock,
    until: Instant,
    ops: Arc<Mutex<Vec<Op>>>,
) {
    let mut rng = StdRng::seed_from_u64(seed ^ (client as u64).wrapping_mul(0x9e37_79b9));
    let Some(c) = retrying_client(&endpoints, client % endpoints.len()).await else {
        return;
    };
    let mut written = 0u64;
    // The mod_revision this client last saw per key, for its CAS.
    let mut seen: std::collections::HashMap<String, i64> = Default::default();
    while Instant::now() < until {
        let epoch = clock.0.elapsed().as_millis() as u64 / KEY_EPOCH.as_millis() as u64;
        let key = format!(
            "{PREFIX}r{}",
            epoch * KEYS_PER_EPOCH + rng.random_range(0..KEYS_PER_EPOCH)
        );
        let roll = rng.random_range(0..100);
        let call = if roll < 35 {
            written += 1;
            Call::Put {
                value: format!("c{client}-{written}"),
            }
        } else if roll < 65 {
            Call::Get {
                serializable: false,
            }
        } else if roll < 80 {
            Call::Get { serializable: true }
        } else if roll < 92 || seen.get(&key).is_none_or(|m| *m == 0) {
            written += 1;
            Call::Cas {
                expect: seen.get(&key).copied().unwrap_or(0),
                value: format!("c{client}-{written}"),
            }
        } else {
            Call::CasDelete { expect: seen[&key] }
        };
        let invoked_us = clock.now_us();
        let answer = tokio::time::timeout(REQUEST_TIMEOUT, send(&c, &key, &call)).await;
        let returned_us = clock.now_us();
        let (outcome, returned) = match answer {
            Ok(Ok(outcome)) => (outcome, Some(returned_us)),
            Ok(Err(e)) => (
                Outcome::Failed {
                    // Reads change nothing; a write that errs may still commit.
                    definite: matches!(call, Call::Get { .. }),
                    error: e.to_string(),
                },
                Some(returned_us),
            ),
            Err(_) => (
                Outcome::Failed {
                    definite: matches!(call, Call::Get { .. }),
                    error: "timed out".into(),
                },
                None,
            ),
        };
        match &outcome {
            Outcome::Read {
                value: Some((_, m)),
                ..
            } => {
                seen.insert(key.clone(), *m);
            }
            Outcome::Written { .. } if matches!(call, Call::CasDelete { .. }) => {
                seen.insert(key.clone(), 0);
            }
            Outcome::Written { revision } => {
                seen.insert(key.clone(), *revision);
            }
            Outcome::Read { value: None, .. } => {
                seen.insert(key.clone(), 0);
            }
            _ => {}
        }
        ops.lock().unwrap().push(Op {
            client,
            key,
            call,
            invoked_us,
            returned_us: returned,
            outcome,
        });
    }
}

async fn send(
    c: &hark_client::Client,
    key: &str,
    call: &Call,
) -> Result<Outcome, hark_client::Error> {
    use hark_client::{Compare, CompareOp, Op, Txn, pb};
    let revision = |h: Option<pb::ResponseHeader>| h.map_or(0, |h| h.revision);
    let key = key.to_string();
    match call {
        Call::Put { value } => {
            let r = c.put(key, value.clone()).await?;
            Ok(Outcome::Written {
                revision: revision(r.header),
            })
        }
        Call::Get { serializable } => {
            let r = c
                .range(pb::RangeRequest {
                    key: key.into(),
                    serializable: *serializable,
                    ..Default::default()
                })
                .await?;
            let value = r.kvs.first().map(|kv| {
                (
                    String::from_utf8_lossy(&kv.value).into_owned(),
                    kv.mod_revision,
                )
            });
            Ok(Outcome::Read {
                revision: revision(r.header),
                value,
            })
        }
        Call::Cas { expect, .. } | Call::CasDelete { expect } => {
            let then = match call {
                Call::Cas { value, .. } => Op::put(key.clone(), value.clone()),
                _ => Op::delete(key.clone()),
            };
            let txn = Txn::new()
                .when([Compare::mod_revision(key, CompareOp::Equal, *expect)])
                .and_then([then]);
            let r = c.txn(txn).await?;
            let revision = revision(r.header);
            Ok(if r.succeeded {
                Outcome::Written { revision }
            } else {
                Outcome::NotWritten { revision }
            })
        }
    }
}

/// Lease TTL of the lease workload (seconds): well past etcd's minimum
/// (1.5 election timeouts), short enough for many leases a run.
pub const LEASE_TTL: i64 = 3;

/// One lease client until `until`: grants a lease, puts a key under it, then
/// either keeps it alive a few times and revokes it, or lets it expire.
/// Keys are `PREFIX` + `l<client>-<n>`, so the watchers see their puts and
/// deletes.
pub async fn lease_client(
    client: usize,
    endpoints: Vec<String>,
    seed: u64,
    clock: Clock,
    until: Instant,
    leases: Arc<Mutex<Vec<LeaseRecord>>>,
) {
    let mut rng = StdRng::seed_from_u64(seed ^ 0x1ea5e ^ client as u64);
    let mut at = client % endpoints.len();
    let mut n = 0u64;
    while Instant::now() < until {
        let Some(mut c) = connect_or_move_on(&endpoints, &mut at).await else {
            continue;
        };
        let granted_us = clock.now_us();
        let granted = tokio::time::timeout(REQUEST_TIMEOUT, c.lease_grant(LEASE_TTL, None)).await;
        let Ok(Ok(grant)) = granted else {
            // An unanswered grant is harmless: nothing is attached to it.
            at = (at + 1) % endpoints.len();
            continue;
        };
        n += 1;
        let key = format!("{PREFIX}l{client}-{n}");
        let options = etcd_client::PutOptions::new().with_lease(grant.id());
        let put = tokio::time::timeout(
            REQUEST_TIMEOUT,
            c.put(
                key.as_str(),
                format!("lease-{:x}", grant.id()),
                Some(options),
            ),
        )
        .await;
        let put_revision = match put {
            Ok(Ok(r)) => r.header().map(|h| h.revision()),
            _ => None,
        };
        let mut record = LeaseRecord {
            client,
            lease: grant.id(),
            ttl: grant.ttl(),
            key,
            put_revision,
            kept_alive: 0,
            fate: LeaseFate::LeftToExpire,
            granted_us,
            renewals_sent_us: Vec::new(),
            let_go_us: None,
        };
        if rng.random_bool(0.5) {
            if let Ok(Ok((mut keeper, mut stream))) =
                tokio::time::timeout(REQUEST_TIMEOUT, c.lease_keep_alive(grant.id())).await
            {
                for _ in 0..rng.random_range(1..8) {
                    tokio::time::sleep(Duration::from_millis(700)).await;
                    let sent_us = clock.now_us();
                    if keeper.keep_alive().await.is_err() {
                        break;
                    }
                    match tokio::time::timeout(REQUEST_TIMEOUT, stream.message()).await {
                        Ok(Ok(Some(r))) if r.ttl() > 0 => {
                            record.kept_alive += 1;
                            record.renewals_sent_us.push(sent_us);
                        }
                        _ => break,
                    }
                }
            }
            record.let_go_us = Some(clock.now_us());
            record.fate =
                match tokio::time::timeout(REQUEST_TIMEOUT, c.lease_revoke(grant.id())).await {
                    Ok(Ok(r)) => LeaseFate::Revoked {
                        revision: r.header().map_or(0, |h| h.revision()),
                    },
                    // "lease not found": it expired first, also fine.
                    _ => LeaseFate::RevokeUnknown,
                };
        }
        leases.lock().unwrap().push(record);
        tokio::time::sleep(Duration::from_millis(rng.random_range(100..500))).await;
    }
}

/// One watcher on [`PREFIX`] from revision 1, pinned to `endpoint`. After
/// any break it resumes from the revision after the last it saw. Stops once
/// it has seen everything up to `drain_to` (set when the run ends), or at
/// `give_up`.
pub async fn watcher(
    watcher: usize,
    endpoint: String,
    prev_kv: bool,
    no_delete: bool,
    drain_to: Arc<AtomicI64>,
    clock: Clock,
    give_up: Instant,
) -> WatchLog {
    let mut log = WatchLog {
        watcher,
        endpoint: endpoint.clone(),
        prev_kv,
        no_delete,
        responses: Vec::new(),
    };
    // Everything up to here was delivered (events or progress).
    let mut delivered = 0i64;
    let mut next = 1i64;
    let done = |delivered: i64| {
        let target = drain_to.load(Ordering::SeqCst);
        target > 0 && delivered >= target
    };
    while !done(delivered) && Instant::now() < give_up {
        let Some(mut c) = connect(&endpoint).await else {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        let mut options = WatchOptions::new()
            .with_prefix()
            .with_start_revision(next)
            .with_progress_notify();
        if prev_kv {
            options = options.with_prev_key();
        }
        if no_delete {
            options = options.with_filters([etcd_client::WatchFilterType::NoDelete]);
        }
        let Ok(Ok(mut stream)) =
            tokio::time::timeout(REQUEST_TIMEOUT, c.watch(PREFIX, Some(options))).await
        else {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        log.responses.push(WatchResponse::Started {
            start_revision: next,
        });
        let mut progress_asked = Instant::now();
        let reason = loop {
            if done(delivered) || Instant::now() >= give_up {
                break "finished".to_string();
            }
            // Ask for progress now and then: bookmarks are checked too.
            if progress_asked.elapsed() > Duration::from_millis(700) {
                let _ = stream.request_progress().await;
                progress_asked = Instant::now();
            }
            let message = tokio::time::timeout(Duration::from_millis(500), stream.message()).await;
            let response = match message {
                Err(_) => continue,
                Ok(Err(e)) => break e.to_string(),
                Ok(Ok(None)) => break "stream ended".to_string(),
                Ok(Ok(Some(r))) => r,
            };
            if response.canceled() || response.compact_revision() > 0 {
                log.responses.push(WatchResponse::Broken {
                    reason: format!("canceled: {}", response.cancel_reason()),
                    compact_revision: response.compact_revision(),
                });
                // Behind a compaction: what is left starts there (Kubernetes
                // lists again and watches from the list's revision).
                next = next.max(response.compact_revision());
                break String::new();
            }
            let header_revision = response.header().map_or(0, |h| h.revision());
            if response.events().is_empty() {
                if !response.created() {
                    log.responses.push(WatchResponse::Progress {
                        revision: header_revision,
                    });
                    delivered = delivered.max(header_revision);
                }
                continue;
            }
            let events: Vec<Event> = response
                .events()
                .iter()
                .filter_map(|e| {
                    let kv = e.kv()?;
                    Some(Event {
                        revision: kv.mod_revision(),
                        key: String::from_utf8_lossy(kv.key()).into_owned(),
                        value: match e.event_type() {
                            EventType::Put => {
                                Some(String::from_utf8_lossy(kv.value()).into_owned())
                            }
                            EventType::Delete => None,
                        },
                        prev_value: e
                            .prev_kv()
                            .map(|p| String::from_utf8_lossy(p.value()).into_owned()),
                    })
                })
                .collect();
            if let Some(last) = events.last() {
                next = last.revision + 1;
                delivered = delivered.max(last.revision);
            }
            log.responses.push(WatchResponse::Events {
                header_revision,
                events,
                received_us: clock.now_us(),
            });
        };
        if !reason.is_empty() && reason != "finished" {
            log.responses.push(WatchResponse::Broken {
                reason,
                compact_revision: 0,
            });
        }
        // Progress up to `delivered` also moves the resume point: nothing in
        // between exists.
        next = next.max(delivered + 1);
        // Dropping the stream ends its watch.
        drop(stream);
    }
    log
}
