//! The lock and election services through the `etcd-client` crate's
//! `lock()` and `campaign()` family, against Hark and against etcd 3.7 in
//! the same run: one script of steps, each one's outcome written down
//! (revisions, keys, values, error codes and messages; lease IDs renamed in
//! order of appearance), and the two transcripts must be equal.
//! `HARK_REQUIRE_ETCDCTL=1` (CI) makes a missing `etcd-3.7` a failure.

mod common;

use std::collections::HashMap;
use std::time::Duration;

use common::etcd::{Etcd, tool};
use etcd_client::{LeaderKey, LockOptions, ProclaimOptions, ResignOptions};

/// How long a queued call must stay unanswered to count as waiting.
const QUIET: Duration = Duration::from_millis(700);

/// Only a hang reaches it.
const PATIENCE: Duration = Duration::from_secs(20);

/// The outcomes of the script's steps, lease IDs renamed.
#[derive(Default)]
struct Transcript {
    lines: Vec<String>,
    leases: HashMap<i64, String>,
}

impl Transcript {
    fn lease(&mut self, id: i64) -> String {
        let n = self.leases.len();
        self.leases
            .entry(id)
            .or_insert_with(|| format!("lease{n}"))
            .clone()
    }

    /// A key `name/<lease hex>` with the lease renamed.
    fn key(&mut self, key: &[u8]) -> String {
        let key = String::from_utf8_lossy(key).into_owned();
        match key.rsplit_once('/') {
            Some((name, hex)) => match i64::from_str_radix(hex, 16) {
                Ok(id) => format!("{name}/<{}>", self.lease(id)),
                Err(_) => key,
            },
            None => key,
        }
    }

    fn note(&mut self, step: &str, outcome: String) {
        self.lines.push(format!("{step}: {outcome}"));
    }

    fn failed(&mut self, step: &str, e: etcd_client::Error) {
        let (code, message) = common::status(e);
        self.note(step, format!("{code:?} {message}"));
    }
}

fn revision(header: Option<&etcd_client::ResponseHeader>) -> i64 {
    header.map_or(0, |h| h.revision())
}

/// Checks that a queued call is still waiting.
async fn waiting<T>(call: &mut tokio::task::JoinHandle<T>) {
    assert!(
        tokio::time::timeout(QUIET, &mut *call).await.is_err(),
        "a queued call returned before its turn"
    );
}

/// The queued call's outcome, once its turn came.
async fn turn<T>(call: tokio::task::JoinHandle<T>) -> T {
    tokio::time::timeout(PATIENCE, call)
        .await
        .expect("the queued call's turn came")
        .unwrap()
}

async fn script(endpoint: &str) -> Vec<String> {
    let mut t = Transcript::default();
    let mut c = common::client(endpoint).await;
    let a = c.lease_grant(30, None).await.unwrap().id();
    let b = c.lease_grant(30, None).await.unwrap().id();
    t.lease(a);
    t.lease(b);

    // Locks: the first holds, the same lease again holds the same lock,
    // a second lease waits until the first unlocks.
    let with = |lease| Some(LockOptions::new().with_lease(lease));
    let held = c.lock("l", with(a)).await.unwrap();
    let key_a = held.key().to_vec();
    let line = format!("{} at {}", t.key(&key_a), revision(held.header()));
    t.note("lock", line);
    let again = c.lock("l", with(a)).await.unwrap();
    let line = format!("{} at {}", t.key(again.key()), revision(again.header()));
    t.note("lock again", line);
    let mut queued = {
        let mut c = c.clone();
        tokio::spawn(async move { c.lock("l", Some(LockOptions::new().with_lease(b))).await })
    };
    waiting(&mut queued).await;
    let unlocked = c.unlock(key_a.clone()).await.unwrap();
    t.note("unlock", format!("at {}", revision(unlocked.header())));
    let next = turn(queued).await.unwrap();
    let line = format!("{} at {}", t.key(next.key()), revision(next.header()));
    t.note("queued lock", line);
    match c.lock("l", with(0x7777)).await {
        Ok(r) => panic!("locked under no lease: {r:?}"),
        Err(e) => t.failed("lock under an unknown lease", e),
    }
    let unlocked = c.unlock("l/none").await.unwrap();
    t.note(
        "unlock of no key",
        format!("at {}", revision(unlocked.header())),
    );

    // A waiter whose client goes away leaves no key behind.
    let c2 = c.lease_grant(30, None).await.unwrap().id();
    let waiter_key = format!("l/{c2:x}");
    let waiter = {
        let mut c = common::client(endpoint).await;
        tokio::spawn(async move { c.lock("l", Some(LockOptions::new().with_lease(c2))).await })
    };
    tokio::time::sleep(QUIET).await;
    let present = !c
        .get(waiter_key.clone(), None)
        .await
        .unwrap()
        .kvs()
        .is_empty();
    t.note(
        "a waiter's key while it waits",
        format!("present {present}"),
    );
    waiter.abort();
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while !c
        .get(waiter_key.clone(), None)
        .await
        .unwrap()
        .kvs()
        .is_empty()
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the abandoned key stayed"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    t.note("a waiter's key after it went away", "gone".into());
    let unlocked = c.unlock(next.key().to_vec()).await.unwrap();
    t.note(
        "unlock the queued",
        format!("at {}", revision(unlocked.header())),
    );

    // Elections.
    match c.leader("e").await {
        Ok(r) => panic!("a leader of nothing: {r:?}"),
        Err(e) => t.failed("leader before any campaign", e),
    }
    let won = c.campaign("e", "v1", a).await.unwrap();
    let leader: LeaderKey = won.leader().unwrap().clone();
    let line = format!(
        "{} name {} rev {} {} at {}",
        t.key(leader.key()),
        String::from_utf8_lossy(leader.name()),
        leader.rev(),
        t.lease(leader.lease()),
        revision(won.header())
    );
    t.note("campaign", line);
    let mut observed = c.observe("e").await.unwrap();
    let mut observe = async |t: &mut Transcript, step: &str| {
        let seen = tokio::time::timeout(PATIENCE, observed.message())
            .await
            .expect("an observation")
            .unwrap()
            .unwrap();
        let kv = seen.kv().unwrap();
        let line = format!(
            "{} = {} created {} at {}",
            t.key(kv.key()),
            String::from_utf8_lossy(kv.value()),
            kv.create_revision(),
            revision(seen.header())
        );
        t.note(step, line);
    };
    observe(&mut t, "observed first").await;
    let shown = c.leader("e").await.unwrap();
    let kv = shown.kv().unwrap();
    let line = format!(
        "{} = {}",
        t.key(kv.key()),
        String::from_utf8_lossy(kv.value())
    );
    t.note("leader", line);
    let proclaimed = c
        .proclaim(
            "v2",
            Some(ProclaimOptions::new().with_leader(leader.clone())),
        )
        .await
        .unwrap();
    t.note("proclaim", format!("at {}", revision(proclaimed.header())));
    observe(&mut t, "observed the proclamation").await;
    let stale = leader.clone().with_rev(1);
    match c
        .proclaim("v3", Some(ProclaimOptions::new().with_leader(stale)))
        .await
    {
        Ok(r) => panic!("proclaimed as a stale leader: {r:?}"),
        Err(e) => t.failed("proclaim as a stale leader", e),
    }
    match c.proclaim("v3", None).await {
        Ok(r) => panic!("proclaimed as nobody: {r:?}"),
        Err(e) => t.failed("proclaim without a leader", e),
    }
    match c.resign(None).await {
        Ok(r) => panic!("resigned as nobody: {r:?}"),
        Err(e) => t.failed("resign without a leader", e),
    }
    let mut runner_up = {
        let mut c = c.clone();
        tokio::spawn(async move { c.campaign("e", "w", b).await })
    };
    waiting(&mut runner_up).await;
    let resigned = c
        .resign(Some(ResignOptions::new().with_leader(leader.clone())))
        .await
        .unwrap();
    t.note("resign", format!("at {}", revision(resigned.header())));
    let won = turn(runner_up).await.unwrap();
    let second = won.leader().unwrap().clone();
    let line = format!(
        "{} rev {} at {}",
        t.key(second.key()),
        second.rev(),
        revision(won.header())
    );
    t.note("queued campaign", line);
    observe(&mut t, "observed the next leader").await;
    // Campaigning again as the leader, with a new value, proclaims it.
    let again = c.campaign("e", "w2", b).await.unwrap();
    let line = format!(
        "rev {} at {}",
        again.leader().unwrap().rev(),
        revision(again.header())
    );
    t.note("campaign again", line);
    observe(&mut t, "observed the new value").await;
    let resigned = c
        .resign(Some(ResignOptions::new().with_leader(leader)))
        .await
        .unwrap();
    t.note(
        "resign as a past leader",
        format!("at {}", revision(resigned.header())),
    );
    c.lease_revoke(b).await.unwrap();
    match c.leader("e").await {
        Ok(r) => panic!("a leader after its lease ended: {r:?}"),
        Err(e) => t.failed("leader after the lease ended", e),
    }

    // No lease named: one of 60 s is granted.
    let held = c.lock("m", None).await.unwrap();
    let id = i64::from_str_radix(
        std::str::from_utf8(held.key())
            .unwrap()
            .rsplit_once('/')
            .unwrap()
            .1,
        16,
    )
    .unwrap();
    let ttl = c.lease_time_to_live(id, None).await.unwrap();
    t.note(
        "lock without a lease",
        format!("granted {} s", ttl.granted_ttl()),
    );
    t.lines
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lock_and_election_answer_as_etcd_3_7_does() {
    let Some(etcd_binary) = tool("etcd-3.7") else {
        return;
    };
    let etcd = Etcd::start(&etcd_binary);
    let hark = common::start(&[]).await;
    let theirs = script(&etcd.endpoint).await;
    let ours = script(&hark.endpoint()).await;
    for (n, (t, o)) in theirs.iter().zip(&ours).enumerate() {
        assert_eq!(t, o, "step {n} differs (etcd, then hark)");
    }
    assert_eq!(theirs.len(), ours.len());
    eprintln!("{}", ours.join("\n"));
}
