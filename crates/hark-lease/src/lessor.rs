//! The lessor: grants, keep-alives and time-to-live answered from memory,
//! and the expiry thread that revokes what ran out through the log.

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bytes::Bytes;
use crossbeam_channel::{Receiver, Sender};
use hark_mvcc::{LeaseGrantRequest, LeaseRevokeRequest, Store, WriteRequest, WriteResponse};
use parking_lot::Mutex;

use crate::config::LessorConfig;
use crate::error::LeaseError;
use crate::log::LeaseLog;

/// etcd's `MaxLeaseTTL`: larger TTLs are refused.
pub const MAX_LEASE_TTL: i64 = 9_000_000_000;

/// A granted lease.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Granted {
    /// Its id (picked by the lessor when the grant asked for 0).
    pub id: i64,
    /// Its TTL in seconds, after raising to the minimum.
    pub ttl: i64,
    /// The store's revision after the grant.
    pub header_revision: i64,
}

/// A lease's remaining time (etcd's LeaseTimeToLive).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimeToLive {
    /// The lease.
    pub id: i64,
    /// Whole seconds left (truncated, as etcd reports it).
    pub ttl: i64,
    /// The TTL it was granted with.
    pub granted_ttl: i64,
    /// Attached keys, when asked for.
    pub keys: Vec<Bytes>,
}

#[derive(Debug, Clone, Copy)]
struct LeaseClock {
    ttl: i64,
    expiry: Instant,
    /// A revoke for it is in flight: keep-alives no longer save it.
    revoking: bool,
}

struct Inner {
    store: Store,
    log: Arc<dyn LeaseLog>,
    /// Whether this lessor expires leases (always, unless in a cluster).
    primary: std::sync::atomic::AtomicBool,
    config: LessorConfig,
    leases: Mutex<HashMap<i64, LeaseClock>>,
    id_seed: std::hash::RandomState,
    id_counter: AtomicU64,
}

/// Grants, renews and expires leases. Dropping it stops the expiry thread.
pub struct Lessor {
    inner: Arc<Inner>,
    stop: Option<Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for Lessor {
    fn drop(&mut self) {
        self.stop.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

type Callback<T> = Box<dyn FnOnce(Result<T, LeaseError>) + Send + 'static>;

impl Lessor {
    /// Takes over the store's leases, each with its full TTL from now, and starts
    /// the expiry thread.
    ///
    /// ```
    /// use std::sync::mpsc;
    /// use std::time::Duration;
    ///
    /// use hark_lease::{Lessor, LessorConfig};
    /// use hark_mvcc::Store;
    ///
    /// let store = Store::in_memory();
    /// let lessor = Lessor::start(store.clone(), LessorConfig::default());
    /// let (tx, rx) = mpsc::channel();
    /// lessor.grant(5, 60, Box::new(move |r| drop(tx.send(r))));
    /// rx.recv_timeout(Duration::from_secs(5))??;
    /// drop(lessor); // stops the expiry thread
    ///
    /// // The lease is in the store; a new lessor takes it over.
    /// let lessor = Lessor::start(store, LessorConfig::default());
    /// assert_eq!(lessor.leases(), [5]);
    /// assert_eq!(lessor.time_to_live(5, false)?.granted_ttl, 60);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn start(store: Store, config: LessorConfig) -> Lessor {
        let log: Arc<dyn LeaseLog> = Arc::new(store.clone());
        Lessor::start_with_log(store, log, config, true)
    }

    /// [`Lessor::start`] for a member of a cluster: writes go through `log`,
    /// and leases expire only while the lessor is `primary` (see
    /// [`Lessor::set_primary`]).
    pub fn start_with_log(
        store: Store,
        log: Arc<dyn LeaseLog>,
        config: LessorConfig,
        primary: bool,
    ) -> Lessor {
        let now = config.clock.now();
        let leases = store
            .leases()
            .into_iter()
            .map(|(id, ttl)| (id, LeaseClock::new(ttl, now)))
            .collect();
        let interval = config.check_interval;
        let inner = Arc::new(Inner {
            store,
            log,
            primary: std::sync::atomic::AtomicBool::new(primary),
            config,
            leases: Mutex::new(leases),
            id_seed: std::hash::RandomState::new(),
            id_counter: AtomicU64::new(0),
        });
        let (stop_tx, stop_rx) = crossbeam_channel::bounded::<()>(0);
        let thread = {
            let inner = inner.clone();
            std::thread::Builder::new()
                .name("hark-lease-expiry".into())
                .spawn(move || run_expiry(inner, stop_rx, interval))
                .expect("spawn the lease expiry thread")
        };
        Lessor {
            inner,
            stop: Some(stop_tx),
            thread: Some(thread),
        }
    }

    /// Grants a lease (`id` 0: the lessor picks a positive one). `done` runs once the
    /// grant is durable, on the store's committer thread.
    ///
    /// ```
    /// use std::sync::mpsc;
    /// use std::time::Duration;
    ///
    /// use hark_lease::{Granted, LeaseError, Lessor, LessorConfig, MAX_LEASE_TTL};
    /// use hark_mvcc::Store;
    ///
    /// const WAIT: Duration = Duration::from_secs(5);
    ///
    /// let lessor = Lessor::start(Store::in_memory(), LessorConfig::default());
    /// let (tx, rx) = mpsc::channel();
    /// // Each call's `done` sends its outcome to `rx`.
    /// let done = || -> Box<dyn FnOnce(Result<Granted, LeaseError>) + Send> {
    ///     let tx = tx.clone();
    ///     Box::new(move |r| drop(tx.send(r)))
    /// };
    ///
    /// // A TTL below the minimum (2 s by default) is raised to it.
    /// lessor.grant(42, 1, done());
    /// let granted = rx.recv_timeout(WAIT)??;
    /// assert_eq!((granted.id, granted.ttl), (42, 2));
    ///
    /// lessor.grant(42, 30, done());
    /// assert_eq!(rx.recv_timeout(WAIT)?, Err(LeaseError::Exists));
    /// lessor.grant(0, MAX_LEASE_TTL + 1, done());
    /// assert_eq!(rx.recv_timeout(WAIT)?, Err(LeaseError::TtlTooLarge));
    /// assert_eq!(lessor.leases(), [42]);
    /// drop(lessor);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn grant(&self, id: i64, ttl: i64, done: Callback<Granted>) {
        if ttl > MAX_LEASE_TTL {
            return done(Err(LeaseError::TtlTooLarge));
        }
        let ttl = ttl.max(self.inner.config.min_ttl);
        let id = if id == 0 { self.fresh_id() } else { id };
        let inner = self.inner.clone();
        self.inner.log.apply(
            WriteRequest::LeaseGrant(LeaseGrantRequest { id, ttl }),
            Box::new(move |r| {
                done(r.map(|resp| {
                    let WriteResponse::LeaseGrant(g) = resp else {
                        unreachable!("lease grant answered with {resp:?}")
                    };
                    inner
                        .leases
                        .lock()
                        .insert(id, LeaseClock::new(ttl, inner.config.clock.now()));
                    Granted {
                        id,
                        ttl,
                        header_revision: g.header_revision,
                    }
                }))
            }),
        );
    }

    /// Makes this lessor the one that expires leases (its member became the
    /// leader: every lease gets its full TTL from now, as etcd's new leader
    /// gives them) or not (another member leads).
    pub fn set_primary(&self, primary: bool) {
        let was = self.inner.primary.swap(primary, Ordering::AcqRel);
        if primary && !was {
            sync_with_store(&self.inner);
            let now = self.inner.config.clock.now() + self.inner.config.promotion_extension;
            for l in self.inner.leases.lock().values_mut() {
                l.expiry = now + secs(l.ttl);
            }
        }
    }

    /// Whether this lessor expires leases (the leader's, or a single
    /// member's).
    pub fn is_primary(&self) -> bool {
        self.inner.primary.load(Ordering::Acquire)
    }

    /// Revokes a lease and deletes its keys; `done` gets the revision of the change.
    ///
    /// ```
    /// use std::sync::mpsc;
    /// use std::time::Duration;
    ///
    /// use hark_lease::{LeaseError, Lessor, LessorConfig};
    /// use hark_mvcc::{PutRequest, RangeRequest, Store};
    ///
    /// const WAIT: Duration = Duration::from_secs(5);
    ///
    /// let store = Store::in_memory();
    /// let lessor = Lessor::start(store.clone(), LessorConfig::default());
    /// let (tx, rx) = mpsc::channel();
    /// lessor.grant(7, 60, Box::new(move |r| drop(tx.send(r))));
    /// rx.recv_timeout(WAIT)??;
    /// for key in ["locks/a", "locks/b"] {
    ///     let mut put = PutRequest::new(key, "held");
    ///     put.lease = 7;
    ///     store.put(put)?;
    /// }
    /// let before = store.current_revision();
    ///
    /// let (tx, rx) = mpsc::channel();
    /// // Each call's `done` sends its outcome to `rx`.
    /// let done = || -> Box<dyn FnOnce(Result<i64, LeaseError>) + Send> {
    ///     let tx = tx.clone();
    ///     Box::new(move |r| drop(tx.send(r)))
    /// };
    /// lessor.revoke(7, done());
    /// // Both keys go in one revision.
    /// assert_eq!(rx.recv_timeout(WAIT)?, Ok(before + 1));
    /// assert!(store.range(&RangeRequest::range("locks/", "locks0"))?.kvs.is_empty());
    ///
    /// lessor.revoke(7, done());
    /// assert_eq!(rx.recv_timeout(WAIT)?, Err(LeaseError::NotFound));
    /// drop(lessor);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn revoke(&self, id: i64, done: Callback<i64>) {
        revoke(&self.inner, id, Revoke::Asked, done);
    }

    /// Renews a lease to its full TTL; returns that TTL.
    ///
    /// On a clock the example moves itself (no waiting):
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::sync::atomic::{AtomicU64, Ordering};
    /// use std::sync::mpsc;
    /// use std::time::{Duration, Instant};
    ///
    /// use hark_lease::{Clock, LeaseError, Lessor, LessorConfig};
    /// use hark_mvcc::Store;
    ///
    /// let (start, secs) = (Instant::now(), Arc::new(AtomicU64::new(0)));
    /// let now = secs.clone();
    /// let config = LessorConfig {
    ///     clock: Clock::new(move || start + Duration::from_secs(now.load(Ordering::SeqCst))),
    ///     ..LessorConfig::default()
    /// };
    /// let lessor = Lessor::start(Store::in_memory(), config);
    /// let (tx, rx) = mpsc::channel();
    /// lessor.grant(1, 10, Box::new(move |r| drop(tx.send(r))));
    /// rx.recv_timeout(Duration::from_secs(5))??;
    ///
    /// secs.store(8, Ordering::SeqCst);
    /// assert_eq!(lessor.time_to_live(1, false)?.ttl, 2);
    /// assert_eq!(lessor.keep_alive(1), Ok(10));
    /// assert_eq!(lessor.time_to_live(1, false)?.ttl, 10, "renewed in full");
    ///
    /// // Past its expiry a lease can no longer be kept alive.
    /// secs.store(18, Ordering::SeqCst);
    /// assert_eq!(lessor.keep_alive(1), Err(LeaseError::NotFound));
    /// assert_eq!(lessor.keep_alive(99), Err(LeaseError::NotFound));
    /// drop(lessor);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn keep_alive(&self, id: i64) -> Result<i64, LeaseError> {
        let now = self.inner.config.clock.now();
        let mut leases = self.inner.leases.lock();
        adopt(&self.inner, &mut leases, id, now);
        match leases.get_mut(&id) {
            Some(l) if !l.revoking && l.expiry > now => {
                l.expiry = now + secs(l.ttl);
                metrics::counter!("etcd_debugging_lease_renewed_total").increment(1);
                Ok(l.ttl)
            }
            _ => Err(LeaseError::NotFound),
        }
    }

    /// A lease's remaining and granted TTL, and its keys if `with_keys`.
    ///
    /// ```
    /// use std::sync::mpsc;
    /// use std::time::{Duration, Instant};
    ///
    /// use hark_lease::{Clock, LeaseError, Lessor, LessorConfig};
    /// use hark_mvcc::{PutRequest, Store};
    ///
    /// // A clock that stands still, so the remaining time is exact.
    /// let frozen = Instant::now();
    /// let config = LessorConfig {
    ///     clock: Clock::new(move || frozen),
    ///     ..LessorConfig::default()
    /// };
    /// let store = Store::in_memory();
    /// let lessor = Lessor::start(store.clone(), config);
    /// let (tx, rx) = mpsc::channel();
    /// lessor.grant(3, 30, Box::new(move |r| drop(tx.send(r))));
    /// rx.recv_timeout(Duration::from_secs(5))??;
    /// let mut put = PutRequest::new("svc/web-1", "10.0.0.1");
    /// put.lease = 3;
    /// store.put(put)?;
    ///
    /// let ttl = lessor.time_to_live(3, true)?;
    /// assert_eq!((ttl.id, ttl.ttl, ttl.granted_ttl), (3, 30, 30));
    /// assert_eq!(ttl.keys, ["svc/web-1"]);
    /// assert!(lessor.time_to_live(3, false)?.keys.is_empty(), "keys only when asked");
    /// assert_eq!(lessor.time_to_live(4, false), Err(LeaseError::NotFound));
    /// drop(lessor);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn time_to_live(&self, id: i64, with_keys: bool) -> Result<TimeToLive, LeaseError> {
        let clock = {
            let mut leases = self.inner.leases.lock();
            adopt(&self.inner, &mut leases, id, self.inner.config.clock.now());
            match leases.get(&id) {
                Some(clock) if self.inner.store.lease_ttl(id).is_some() => *clock,
                _ => return Err(LeaseError::NotFound),
            }
        };
        let keys = if with_keys {
            self.inner
                .store
                .lease_keys(id)
                .ok_or(LeaseError::NotFound)?
        } else {
            Vec::new()
        };
        let left = clock
            .expiry
            .saturating_duration_since(self.inner.config.clock.now());
        Ok(TimeToLive {
            id,
            ttl: left.as_secs() as i64,
            granted_ttl: clock.ttl,
            keys,
        })
    }

    /// Ids of every lease, sorted.
    pub fn leases(&self) -> Vec<i64> {
        // The store's records decide (a revoke just applied, here or through
        // another member, counts before its callback has run).
        let mut ids: Vec<i64> = self
            .inner
            .leases
            .lock()
            .keys()
            .copied()
            .filter(|id| self.inner.store.lease_ttl(*id).is_some())
            .collect();
        ids.sort_unstable();
        ids
    }

    /// Revokes every lease that has expired by the clock's time, waiting until the
    /// revokes are applied; returns their ids, sorted. The expiry thread calls this
    /// every `check_interval`.
    ///
    /// Expiry on a clock the example moves itself (no waiting):
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::sync::atomic::{AtomicU64, Ordering};
    /// use std::sync::mpsc;
    /// use std::time::{Duration, Instant};
    ///
    /// use hark_lease::{Clock, Lessor, LessorConfig};
    /// use hark_mvcc::{PutRequest, RangeRequest, Store};
    ///
    /// let (start, secs) = (Instant::now(), Arc::new(AtomicU64::new(0)));
    /// let now = secs.clone();
    /// let config = LessorConfig {
    ///     clock: Clock::new(move || start + Duration::from_secs(now.load(Ordering::SeqCst))),
    ///     // Only this example expires leases.
    ///     check_interval: Duration::from_secs(3600),
    ///     ..LessorConfig::default()
    /// };
    /// let store = Store::in_memory();
    /// let lessor = Lessor::start(store.clone(), config);
    /// for (id, ttl) in [(1, 5), (2, 20)] {
    ///     let (tx, rx) = mpsc::channel();
    ///     lessor.grant(id, ttl, Box::new(move |r| drop(tx.send(r))));
    ///     rx.recv_timeout(Duration::from_secs(5))??;
    /// }
    /// let mut put = PutRequest::new("tmp/job", "running");
    /// put.lease = 1;
    /// store.put(put)?;
    ///
    /// assert!(lessor.expire_due().is_empty(), "nothing due yet");
    /// secs.store(6, Ordering::SeqCst);
    /// assert_eq!(lessor.expire_due(), [1]);
    /// assert!(store.range(&RangeRequest::key("tmp/job"))?.kvs.is_empty());
    /// assert_eq!(lessor.leases(), [2]);
    /// drop(lessor);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn expire_due(&self) -> Vec<i64> {
        expire_due(&self.inner)
    }

    fn fresh_id(&self) -> i64 {
        let leases = self.inner.leases.lock();
        loop {
            let n = self.inner.id_counter.fetch_add(1, Ordering::Relaxed);
            let id = (self.inner.id_seed.hash_one(n) & i64::MAX as u64) as i64;
            if id != 0 && !leases.contains_key(&id) {
                return id;
            }
        }
    }
}

impl LeaseClock {
    fn new(ttl: i64, now: Instant) -> Self {
        LeaseClock {
            ttl,
            expiry: now + secs(ttl),
            revoking: false,
        }
    }
}

fn secs(ttl: i64) -> Duration {
    Duration::from_secs(ttl.max(0) as u64)
}

/// Why a lease is revoked: a client asked, or this lessor found it expired
/// (a replicated log then applies it only in the term it was decided).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Revoke {
    Asked,
    Expired,
}

fn revoke(inner: &Arc<Inner>, id: i64, why: Revoke, done: Callback<i64>) {
    let owner = inner.clone();
    let done: crate::log::LogDone = Box::new(move |r| {
        if matches!(r, Ok(_) | Err(LeaseError::NotFound)) {
            owner.leases.lock().remove(&id);
        } else if let Some(l) = owner.leases.lock().get_mut(&id) {
            // Let the expiry thread try again.
            l.revoking = false;
        }
        done(r.map(|resp| match resp {
            WriteResponse::LeaseRevoke(v) => v.header_revision,
            other => unreachable!("lease revoke answered with {other:?}"),
        }))
    });
    match why {
        Revoke::Asked => inner
            .log
            .apply(WriteRequest::LeaseRevoke(LeaseRevokeRequest { id }), done),
        Revoke::Expired => inner.log.expire(id, done),
    }
}

/// A lease granted through another member and not yet in the table: taken
/// in with its full TTL from now (as the periodic sync would).
fn adopt(inner: &Inner, leases: &mut HashMap<i64, LeaseClock>, id: i64, now: Instant) {
    if !leases.contains_key(&id)
        && let Some(ttl) = inner.store.lease_ttl(id)
    {
        leases.insert(id, LeaseClock::new(ttl, now));
    }
}

/// Brings the lease table in step with the store's records: leases granted
/// through another member appear (with their full TTL), revoked ones go.
fn sync_with_store(inner: &Inner) {
    let stored: HashMap<i64, i64> = inner.store.leases().into_iter().collect();
    let now = inner.config.clock.now();
    let mut leases = inner.leases.lock();
    leases.retain(|id, l| stored.contains_key(id) || l.revoking);
    for (id, ttl) in stored {
        leases
            .entry(id)
            .or_insert_with(|| LeaseClock::new(ttl, now));
    }
}

fn expire_due(inner: &Arc<Inner>) -> Vec<i64> {
    if !inner.primary.load(Ordering::Acquire) {
        return Vec::new();
    }
    let now = inner.config.clock.now();
    let mut due: Vec<i64> = {
        let mut leases = inner.leases.lock();
        leases
            .iter_mut()
            .filter(|(_, l)| !l.revoking && l.expiry <= now)
            .map(|(id, l)| {
                l.revoking = true;
                *id
            })
            .collect()
    };
    due.sort_unstable();
    let (tx, rx) = crossbeam_channel::unbounded();
    for &id in &due {
        let tx = tx.clone();
        revoke(
            inner,
            id,
            Revoke::Expired,
            Box::new(move |r| {
                match &r {
                    Ok(_) => {
                        metrics::counter!("etcd_debugging_server_lease_expired_total").increment(1);
                    }
                    Err(e) => {
                        tracing::warn!(lease = id, error = %e, "revoking an expired lease failed")
                    }
                }
                let _ = tx.send(());
            }),
        );
    }
    drop(tx);
    while rx.recv().is_ok() {}
    due
}

fn run_expiry(inner: Arc<Inner>, stop: Receiver<()>, interval: Duration) {
    loop {
        match stop.recv_timeout(interval) {
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => {}
            _ => return,
        }
        sync_with_store(&inner);
        let expired = expire_due(&inner);
        if !expired.is_empty() {
            tracing::debug!(count = expired.len(), "revoked expired leases");
        }
    }
}
