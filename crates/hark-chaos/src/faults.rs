//! The fault schedule: a seeded sequence of faults, each held for a while
//! and then undone, with a leader awaited between them.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use tokio::time::Instant;

use crate::cluster::{Cluster, ELECTION_MS, status, wait_for_leader};
use crate::history::FaultRecord;
use crate::workload::{Clock, LEASE_TTL, REQUEST_TIMEOUT, connect};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Fault {
    /// SIGKILL a random member, restart it a little later. Hark members run
    /// with the power-loss simulation, so every kill also drops the writes
    /// they had not synced.
    Kill,
    /// Every member loses power at once (SIGKILL of all; Hark's unsynced
    /// writes lost with them, etcd's kept by the page cache), then all
    /// restart: nothing acknowledged may be lost.
    PowerLoss,
    /// SIGKILL the leader.
    KillLeader,
    /// SIGSTOP a random member (the leader half the time) for two to five
    /// election timeouts, then SIGCONT.
    Pause,
    /// One random member cut off from the others, both ways.
    Partition,
    /// The leader cut off from the others, both ways.
    IsolateLeader,
    /// The leader cut off from the others, both ways, for longer than a
    /// lease's TTL (TTL + 1 to TTL + 3 s): a lease kept alive only through
    /// it must run out on the others' side all the same, and its holder
    /// must have been told it lost it.
    IsolateLeaderLong,
    /// A follower cut off from the others, both ways, for ten to fifteen
    /// election timeouts, then healed (pre-vote's case: its elections while
    /// cut off must not depose the leader once it is back).
    IsolateFollowerLong,
    /// One member's connections to another refused (one way only).
    OneWay,
    /// SIGKILL a follower, keep it down while writes go on (long enough,
    /// at `--snapshot-count 300`, to need a snapshot), restart it, and kill
    /// it again while it catches up: a kill during snapshot install or log
    /// replay.
    KillCatchingUp,
    /// Remove a follower (MemberRemove), kill it and delete its data, add it
    /// back (MemberAdd, same peer URL) and start it empty, joining the
    /// existing cluster: it catches up from a snapshot or the log.
    MemberReplace,
}

/// The member that was just restarted or healed to catch up (and may be
/// installing a snapshot), while that lasts: the backup client saves from it
/// then.
#[derive(Clone, Default)]
pub struct CatchingUp(Arc<Mutex<Option<(usize, Instant)>>>);

/// How long after its restart or heal a member counts as catching up.
const CATCHING_UP_FOR: Duration = Duration::from_secs(5);

impl Fault {
    /// The name `--faults` knows it by (clap's, from the variant's name).
    pub fn name(self) -> String {
        clap::ValueEnum::to_possible_value(&self)
            .expect("no fault kind is skipped")
            .get_name()
            .to_string()
    }
}

impl CatchingUp {
    fn started(&self, i: usize) {
        *self.0.lock().unwrap() = Some((i, Instant::now() + CATCHING_UP_FOR));
    }

    fn stopped(&self) {
        *self.0.lock().unwrap() = None;
    }

    pub fn member(&self) -> Option<usize> {
        self.0
            .lock()
            .unwrap()
            .filter(|(_, until)| Instant::now() < *until)
            .map(|(i, _)| i)
    }
}

pub async fn run(
    cluster: &mut Cluster,
    faults: &[Fault],
    seed: u64,
    clock: Clock,
    until: Instant,
    catching_up: CatchingUp,
) -> Vec<FaultRecord> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut records = Vec::new();
    // `began` names the fault kind on the note that injects one.
    let mut note = |began: Option<Fault>, what: String| {
        eprintln!("  [{:>7.3}s] {what}", clock.now_us() as f64 / 1e6);
        records.push(FaultRecord {
            at_us: clock.now_us(),
            what,
            fault: began.map(Fault::name),
        });
    };
    let n = cluster.members.len();
    // A single member has no links to cut and no peer to catch up from.
    let faults: Vec<Fault> = faults
        .iter()
        .copied()
        .filter(|f| {
            n > 1
                || matches!(
                    f,
                    Fault::Kill | Fault::KillLeader | Fault::PowerLoss | Fault::Pause
                )
        })
        .collect();
    while Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(rng.random_range(500..1500))).await;
        if Instant::now() >= until || faults.is_empty() {
            break;
        }
        let leader = match wait_for_leader(cluster, Duration::from_secs(15)).await {
            Ok(l) => l,
            Err(e) => {
                note(None, format!("no leader before the next fault: {e}"));
                cluster.recover_all();
                continue;
            }
        };
        // A member still catching up from the last fault stays the backups'
        // target until its time is up: a healed member's install can begin
        // seconds after the heal, when the next fault has already begun.
        let fault = *faults.choose(&mut rng).expect("a fault kind");
        let hold = Duration::from_millis(rng.random_range(ELECTION_MS * 2..ELECTION_MS * 5));
        let random = rng.random_range(0..n);
        match fault {
            Fault::Kill | Fault::KillLeader => {
                let i = if fault == Fault::Kill { random } else { leader };
                note(Some(fault), format!("kill m{i} (leader: m{leader})"));
                cluster.kill(i);
                tokio::time::sleep(hold).await;
                note(None, format!("restart m{i}"));
                cluster.restart(i);
            }
            Fault::PowerLoss => {
                note(
                    Some(fault),
                    format!("power loss: every member killed at once (leader: m{leader})"),
                );
                for i in 0..n {
                    cluster.kill(i);
                }
                tokio::time::sleep(hold).await;
                note(None, "power back: every member restarted".into());
                for i in 0..n {
                    cluster.restart(i);
                }
            }
            Fault::Pause => {
                let i = if rng.random_bool(0.5) { leader } else { random };
                note(Some(fault), format!("pause m{i} (leader: m{leader})"));
                cluster.pause(i, true);
                tokio::time::sleep(hold).await;
                note(None, format!("resume m{i}"));
                cluster.pause(i, false);
            }
            Fault::Partition
            | Fault::IsolateLeader
            | Fault::IsolateLeaderLong
            | Fault::IsolateFollowerLong => {
                let i = match fault {
                    Fault::Partition => random,
                    Fault::IsolateFollowerLong => (leader + 1 + random % (n - 1).max(1)) % n,
                    _ => leader,
                };
                let hold = match fault {
                    Fault::IsolateLeaderLong => Duration::from_millis(
                        LEASE_TTL as u64 * 1000 + rng.random_range(1000..3000),
                    ),
                    Fault::IsolateFollowerLong => Duration::from_millis(
                        crate::cluster::ELECTION_MS * rng.random_range(10..=15),
                    ),
                    _ => hold,
                };
                note(
                    Some(fault),
                    format!("partition m{i} from the rest (leader: m{leader})"),
                );
                cluster.links.partition(&[i], n);
                tokio::time::sleep(hold).await;
                note(None, "heal".into());
                cluster.links.heal();
                // A member cut off for long falls behind the leader's log and
                // installs a snapshot on healing, while it serves clients: the
                // install a backup must not see half-done. (A restarted member
                // installs before it serves, so only a partition shows this.)
                catching_up.started(i);
            }
            Fault::KillCatchingUp => {
                let i = (leader + rng.random_range(1..n)) % n;
                note(
                    Some(fault),
                    format!("kill m{i} (leader: m{leader}), keep it down"),
                );
                cluster.kill(i);
                tokio::time::sleep(hold * 3).await;
                note(None, format!("restart m{i}"));
                cluster.restart(i);
                catching_up.started(i);
                tokio::time::sleep(Duration::from_millis(rng.random_range(100..800))).await;
                note(None, format!("kill m{i} again while it catches up"));
                catching_up.stopped();
                cluster.kill(i);
                tokio::time::sleep(hold).await;
                note(None, format!("restart m{i}"));
                cluster.restart(i);
                catching_up.started(i);
            }
            Fault::MemberReplace => {
                let i = (leader + rng.random_range(1..n)) % n;
                match replace_member(cluster, leader, i).await {
                    Ok(what) => {
                        catching_up.started(i);
                        note(Some(fault), what)
                    }
                    Err(e) => note(None, format!("replacing m{i} failed: {e}")),
                }
                // Time to catch up: a member still catching up does not count
                // as started, and etcd refuses the next change until it does.
                tokio::time::sleep(hold).await;
            }
            Fault::OneWay => {
                let from = random;
                let to = (from + rng.random_range(1..n)) % n;
                note(
                    Some(fault),
                    format!("cut m{from} -> m{to} (leader: m{leader})"),
                );
                cluster.links.cut(from, to);
                tokio::time::sleep(hold).await;
                note(None, "heal".into());
                cluster.links.heal();
            }
        }
    }
    records
}

/// [`Fault::MemberReplace`], through the leader: MemberRemove, wipe,
/// MemberAdd, start empty.
async fn replace_member(cluster: &mut Cluster, leader: usize, i: usize) -> Result<String, String> {
    let old_id = status(&cluster.members[i].client_url)
        .await
        .ok_or("the member does not answer")?
        .id;
    let mut c = connect(&cluster.members[leader].client_url)
        .await
        .ok_or("the leader does not answer")?;
    tokio::time::timeout(REQUEST_TIMEOUT, c.member_remove(old_id))
        .await
        .map_err(|_| "MemberRemove timed out".to_string())?
        .map_err(|e| format!("MemberRemove: {e}"))?;
    cluster.wipe(i);
    let url = cluster.members[i].peer_url.clone();
    // MemberAdd is refused for a while after a change (etcd: 'unhealthy
    // cluster' until every voter has been connected to the leader for 5 s,
    // which the faults before can keep from happening): retry. The member
    // is already removed and wiped, so giving up early leaves the cluster
    // a member short for the rest of the run.
    let mut added = None;
    let mut last_error = String::new();
    for _ in 0..240 {
        match tokio::time::timeout(REQUEST_TIMEOUT, c.member_add([url.as_str()], None)).await {
            Ok(Ok(r)) => {
                added = r.member().map(|m| m.id());
                break;
            }
            Ok(Err(e)) => last_error = e.to_string(),
            Err(_) => last_error = "timed out".into(),
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let new_id = added.ok_or(format!("MemberAdd did not succeed: {last_error}"))?;
    cluster.restart(i);
    Ok(format!(
        "replaced m{i}: {old_id:x} removed, its data deleted, added back as {new_id:x}"
    ))
}
