//! The lock workload: a mutex the way clientv3's `concurrency.Mutex` builds
//! one. Each round a client opens a session (a lease it keeps alive), puts
//! its key under the lock's prefix with that lease, waits until no key with
//! a lower create revision is left (watching the next lower one's delete),
//! checks its own key is still there, holds the lock a while, then deletes
//! its key and revokes the lease.
//!
//! A hold lasts from when the client learned it held the lock until it let
//! go, or until its lease could have run out on the cluster: a TTL after the
//! last keep-alive it sent that was answered. Two holds that overlap mean
//! two clients acted as holders at once (see `safety.rs`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use etcd_client::{Client, EventType, GetOptions, SortOrder, SortTarget, WatchOptions};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tokio::time::Instant;

use crate::history::{LeaseFate, LeaseRecord, LockHold};
use crate::workload::{Clock, LEASE_TTL, PREFIX, REQUEST_TIMEOUT, connect_or_move_on};

/// Every lock key starts with this (inside [`PREFIX`], so the watchers see
/// them).
pub fn lock_prefix() -> String {
    format!("{PREFIX}lock/")
}

/// One lock client until `until`, on one member at a time (the next after
/// any error). Its holds go to `holds`, its sessions' leases to `leases`.
pub async fn lock_client(
    client: usize,
    endpoints: Vec<String>,
    seed: u64,
    clock: Clock,
    until: Instant,
    holds: Arc<Mutex<Vec<LockHold>>>,
    leases: Arc<Mutex<Vec<LeaseRecord>>>,
) {
    let mut rng = StdRng::seed_from_u64(seed ^ 0x10c4 ^ (client as u64).wrapping_mul(0x2545_f491));
    let mut at = client % endpoints.len();
    while Instant::now() < until {
        let Some(mut c) = connect_or_move_on(&endpoints, &mut at).await else {
            continue;
        };
        let mut round = Round {
            client,
            endpoint: &endpoints[at],
            clock,
            until,
            holds: &holds,
        };
        let (record, went_well) = round.run(&mut c, &mut rng).await;
        if let Some(record) = record {
            leases.lock().unwrap().push(record);
        }
        if !went_well {
            at = (at + 1) % endpoints.len();
        }
        tokio::time::sleep(Duration::from_millis(rng.random_range(50..300))).await;
    }
}

struct Round<'a> {
    client: usize,
    endpoint: &'a str,
    clock: Clock,
    until: Instant,
    holds: &'a Mutex<Vec<LockHold>>,
}

/// What the session's keep-alive task learned: the acknowledged renewals'
/// send times and how long the lease is known to live.
struct Session {
    renewals_sent_us: Mutex<Vec<u64>>,
    protected_until_us: AtomicU64,
}

impl Round<'_> {
    /// One session: its lease record (none if no lease was granted) and
    /// whether every call was answered.
    async fn run(&mut self, c: &mut Client, rng: &mut StdRng) -> (Option<LeaseRecord>, bool) {
        let granted_us = self.clock.now_us();
        let Ok(Ok(grant)) =
            tokio::time::timeout(REQUEST_TIMEOUT, c.lease_grant(LEASE_TTL, None)).await
        else {
            return (None, false);
        };
        let lease = grant.id();
        let session = Arc::new(Session {
            renewals_sent_us: Mutex::new(Vec::new()),
            protected_until_us: AtomicU64::new(granted_us + grant.ttl().max(0) as u64 * 1_000_000),
        });
        let keeper = tokio::spawn(keep_alive(
            c.clone(),
            lease,
            grant.ttl(),
            self.clock,
            session.clone(),
        ));
        let key = format!("{}{lease:x}", lock_prefix());
        let options = etcd_client::PutOptions::new().with_lease(lease);
        let put = tokio::time::timeout(
            REQUEST_TIMEOUT,
            c.put(key.as_str(), format!("c{}", self.client), Some(options)),
        )
        .await;
        let put_revision = match put {
            Ok(Ok(r)) => r.header().map(|h| h.revision()),
            _ => None,
        };
        let mut went_well = put_revision.is_some();
        if let Some(create_revision) = put_revision {
            match self.wait_turn(c, &key, create_revision, &session).await {
                Ok(Some(acquired_us)) => {
                    self.hold(rng, lease, &key, create_revision, acquired_us, &session)
                        .await
                }
                Ok(None) => {}
                Err(()) => went_well = false,
            }
        }
        let let_go_us = self.clock.now_us();
        let _ = tokio::time::timeout(REQUEST_TIMEOUT, c.delete(key.as_str(), None)).await;
        let fate = match tokio::time::timeout(REQUEST_TIMEOUT, c.lease_revoke(lease)).await {
            Ok(Ok(r)) => LeaseFate::Revoked {
                revision: r.header().map_or(0, |h| h.revision()),
            },
            _ => LeaseFate::RevokeUnknown,
        };
        keeper.abort();
        let renewals_sent_us = session.renewals_sent_us.lock().unwrap().clone();
        let record = LeaseRecord {
            client: self.client,
            lease,
            ttl: grant.ttl(),
            key,
            put_revision,
            kept_alive: renewals_sent_us.len(),
            fate,
            granted_us,
            renewals_sent_us,
            let_go_us: Some(let_go_us),
        };
        (Some(record), went_well)
    }

    /// Waits until no lock key older than ours is left, then checks ours is
    /// still there: the time it learned it holds the lock; `None` when the
    /// session ran out first; an error when a call failed.
    async fn wait_turn(
        &self,
        c: &mut Client,
        key: &str,
        create_revision: i64,
        session: &Session,
    ) -> Result<Option<u64>, ()> {
        let lost = || self.clock.now_us() >= session.protected_until_us.load(Ordering::SeqCst);
        loop {
            if lost() || Instant::now() >= self.until + Duration::from_secs(5) {
                return Ok(None);
            }
            let older = GetOptions::new()
                .with_prefix()
                .with_max_create_revision(create_revision - 1)
                .with_sort(SortTarget::Create, SortOrder::Descend)
                .with_limit(1);
            let Ok(Ok(r)) =
                tokio::time::timeout(REQUEST_TIMEOUT, c.get(lock_prefix(), Some(older))).await
            else {
                return Err(());
            };
            let Some(before) = r.kvs().first() else {
                break;
            };
            let before = before.key().to_vec();
            let from = r.header().map_or(0, |h| h.revision()) + 1;
            let options = WatchOptions::new().with_start_revision(from);
            let Ok(Ok(mut stream)) =
                tokio::time::timeout(REQUEST_TIMEOUT, c.watch(before, Some(options))).await
            else {
                return Err(());
            };
            // Until that key is deleted (or the watch breaks: look again).
            loop {
                if lost() {
                    return Ok(None);
                }
                match tokio::time::timeout(Duration::from_millis(200), stream.message()).await {
                    Err(_) => continue,
                    Ok(Ok(Some(w))) => {
                        if w.canceled()
                            || w.events()
                                .iter()
                                .any(|e| e.event_type() == EventType::Delete)
                        {
                            break;
                        }
                    }
                    Ok(_) => return Err(()),
                }
            }
        }
        // clientv3's Mutex checks its own key last: gone means the session
        // expired while it waited.
        let Ok(Ok(mine)) = tokio::time::timeout(REQUEST_TIMEOUT, c.get(key, None)).await else {
            return Err(());
        };
        let acquired_us = self.clock.now_us();
        Ok((!mine.kvs().is_empty() && !lost()).then_some(acquired_us))
    }

    /// Holds the lock for a while, or until the lease could have run out.
    async fn hold(
        &self,
        rng: &mut StdRng,
        lease: i64,
        key: &str,
        create_revision: i64,
        acquired_us: u64,
        session: &Session,
    ) {
        // Mostly short holds; some longer than a TTL, as a leader election's
        // holder keeps its lock, so that a partition can fall inside one.
        let held_for = if rng.random_bool(0.3) {
            rng.random_range(4_000_000..8_000_000)
        } else {
            rng.random_range(200_000..1_200_000)
        };
        let release_at = acquired_us + held_for;
        let (ended_us, how_ended) = loop {
            let now = self.clock.now_us();
            let protected = session.protected_until_us.load(Ordering::SeqCst);
            if protected <= now.min(release_at) {
                break (protected, "lease lost");
            }
            if now >= release_at {
                break (now, "released");
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        self.holds.lock().unwrap().push(LockHold {
            client: self.client,
            endpoint: self.endpoint.to_string(),
            lease,
            key: key.to_string(),
            create_revision,
            acquired_us,
            ended_us,
            how_ended: how_ended.into(),
        });
    }
}

/// The session's keep-alives, a third of the TTL apart as clientv3 sends
/// them, until one goes unanswered (the session is then lost).
async fn keep_alive(mut c: Client, lease: i64, ttl: i64, clock: Clock, session: Arc<Session>) {
    let Ok(Ok((mut keeper, mut answers))) =
        tokio::time::timeout(REQUEST_TIMEOUT, c.lease_keep_alive(lease)).await
    else {
        return;
    };
    let every = Duration::from_millis((ttl.max(1) as u64 * 1000) / 3);
    loop {
        tokio::time::sleep(every).await;
        let sent_us = clock.now_us();
        if keeper.keep_alive().await.is_err() {
            return;
        }
        match tokio::time::timeout(REQUEST_TIMEOUT, answers.message()).await {
            Ok(Ok(Some(answer))) if answer.ttl() > 0 => {
                session.renewals_sent_us.lock().unwrap().push(sent_us);
                session
                    .protected_until_us
                    .fetch_max(sent_us + answer.ttl() as u64 * 1_000_000, Ordering::SeqCst);
            }
            _ => return,
        }
    }
}
