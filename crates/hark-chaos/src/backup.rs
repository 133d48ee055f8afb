//! Backups under faults: `snapshot save` (Maintenance.Snapshot) from a
//! random member every few seconds, and several times a second from a
//! member just restarted or healed to catch up, while members are killed,
//! cut off, catch up and install snapshots from the leader (a healed member
//! installs while it serves; a restarted one serves only once caught up).
//! After the run each backup is checked
//! as an operator would rely on it: its checksum verified, restored (with
//! `hark-snapshot`, which reads etcd's format) and its keys compared with
//! the revision log as of the revision the backup claims. A backup taken
//! from a half-installed store has a valid checksum but not the state of
//! any revision.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use etcd_client::{Client, ConnectOptions};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tokio::io::AsyncWriteExt;
use tokio::time::Instant;

use crate::faults::CatchingUp;
use crate::history::{BackupRecord, History, RevisionLog};
use crate::report::Report;
use crate::workload::{Clock, PREFIX};

/// One backup client until `until`, its files in `dir`.
pub async fn backup_client(
    endpoints: Vec<String>,
    seed: u64,
    clock: Clock,
    until: Instant,
    dir: PathBuf,
    records: Arc<Mutex<Vec<BackupRecord>>>,
    catching_up: CatchingUp,
) {
    let mut rng = StdRng::seed_from_u64(seed ^ 0xbac0);
    let _ = std::fs::create_dir_all(&dir);
    let mut n = 0;
    while Instant::now() < until {
        // Every 2-4 s from a random member, or every 0.1-0.3 s from a member
        // catching up, while it may be installing a snapshot.
        let next = Instant::now() + Duration::from_millis(rng.random_range(2000..4000));
        let member = loop {
            if let Some(i) = catching_up.member() {
                tokio::time::sleep(Duration::from_millis(rng.random_range(100..300))).await;
                break i;
            }
            if Instant::now() >= next {
                break rng.random_range(0..endpoints.len());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        n += 1;
        let path = dir.join(format!("backup-{n}.db"));
        let started_us = clock.now_us();
        let saved = tokio::time::timeout(Duration::from_secs(20), save(&endpoints[member], &path))
            .await
            .unwrap_or_else(|_| Err("timed out".into()));
        records.lock().unwrap().push(BackupRecord {
            member,
            path: path.display().to_string(),
            started_us,
            finished_us: clock.now_us(),
            error: saved.err(),
        });
    }
}

/// Streams one member's snapshot into `path`, over a connection with
/// etcdctl's keep-alive (a ping every 2 s, 6 s for its answer) and no
/// per-request time-out, as `etcdctl snapshot save` connects. With the
/// workload's 1 s keep-alive, a save sent to a member not yet serving (its
/// connection waiting in the listener's queue) or on a loaded machine gave
/// up before any row came.
async fn save(endpoint: &str, path: &Path) -> Result<(), String> {
    let options = ConnectOptions::new()
        .with_connect_timeout(Duration::from_secs(2))
        .with_keep_alive(Duration::from_secs(2), Duration::from_secs(6));
    let mut c = Client::connect([endpoint], Some(options))
        .await
        .map_err(|e| format!("no connection: {e}"))?;
    let mut stream = c.snapshot().await.map_err(|e| e.to_string())?;
    let mut file = tokio::fs::File::create(path)
        .await
        .map_err(|e| e.to_string())?;
    while let Some(part) = stream.message().await.map_err(|e| e.to_string())? {
        file.write_all(part.blob())
            .await
            .map_err(|e| e.to_string())?;
    }
    file.flush().await.map_err(|e| e.to_string())
}

/// Every backup taken verifies, restores, and holds exactly the log's keys
/// under [`PREFIX`] as of its revision; and no member's backups go back in
/// revision (see [`check_member_order`]).
pub fn check(history: &History, log: &RevisionLog, report: &mut Report) {
    if history.backups.is_empty() {
        return;
    }
    let mut restored = 0;
    let mut revisions = Vec::new();
    for (i, b) in history.backups.iter().enumerate() {
        if b.error.is_some() {
            continue;
        }
        let who = format!(
            "backup {} from m{} ({:.3}s-{:.3}s)",
            i + 1,
            b.member,
            b.started_us as f64 / 1e6,
            b.finished_us as f64 / 1e6
        );
        match restore_and_read(Path::new(&b.path)) {
            Err(e) => report.anomaly(format!("{who}: {e}")),
            Ok((revision, kvs)) => {
                restored += 1;
                revisions.push((i, revision));
                let want = state_at(log, revision);
                if kvs != want {
                    let missing: Vec<_> = want
                        .keys()
                        .filter(|k| !kvs.contains_key(*k))
                        .take(3)
                        .collect();
                    let extra: Vec<_> = kvs
                        .keys()
                        .filter(|k| !want.contains_key(*k))
                        .take(3)
                        .collect();
                    let differing: Vec<_> = want
                        .iter()
                        .filter(|(k, v)| kvs.get(*k).is_some_and(|got| got != *v))
                        .map(|(k, _)| k)
                        .take(3)
                        .collect();
                    report.anomaly(format!(
                        "{who}: claims revision {revision} but holds {} keys where the log has {} \
                         (missing e.g. {missing:?}, extra {extra:?}, differing {differing:?})",
                        kvs.len(),
                        want.len()
                    ));
                }
            }
        }
    }
    check_member_order(&history.backups, &revisions, report);
    let failed = history.backups.iter().filter(|b| b.error.is_some()).count();
    report.facts.push(format!(
        "{} backups taken under faults ({failed} could not be taken): {restored} verified, \
         restored and compared with the log at their revision",
        history.backups.len()
    ));
}

/// A member serves clients only once it has applied what was committed
/// when it started, and its store never loses an applied revision, so a
/// backup that one member began after another of its backups had finished
/// claims at least that one's revision. A backup read from a half-installed
/// store breaks this even when its keys agree with its revision: the
/// install clears the store and refills it in revision order, so a read
/// meanwhile finds an older state (or none, at revision 1).
/// `revisions` holds (index into `backups`, restored revision).
fn check_member_order(backups: &[BackupRecord], revisions: &[(usize, i64)], report: &mut Report) {
    for &(i, revision) in revisions {
        let b = &backups[i];
        let newest_before = revisions
            .iter()
            .filter(|&&(j, _)| {
                backups[j].member == b.member && backups[j].finished_us < b.started_us
            })
            .max_by_key(|&&(_, r)| r);
        if let Some(&(j, earlier)) = newest_before
            && earlier > revision
        {
            report.anomaly(format!(
                "backup {} from m{} ({:.3}s) claims revision {revision}, older than revision \
                 {earlier} of backup {} that m{} had finished before it began: the member's \
                 store went back in time",
                i + 1,
                b.member,
                b.started_us as f64 / 1e6,
                j + 1,
                b.member
            ));
        }
    }
}

/// The backup's revision and its keys under [`PREFIX`], by restoring it.
fn restore_and_read(path: &Path) -> Result<(i64, BTreeMap<String, String>), String> {
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    let dir = scratch.path().join("store");
    let restored = hark_snapshot::restore(path, &dir, &Default::default())
        .map_err(|e| format!("does not restore: {e}"))?;
    let store = hark_mvcc::Store::open(
        &dir,
        hark_mvcc::StoreOptions {
            sync: false,
            ..Default::default()
        },
    )
    .map_err(|e| format!("the restored store does not open: {e}"))?;
    let range = store
        .range(&hark_mvcc::RangeRequest {
            key: PREFIX.into(),
            range_end: hark_client::prefix_end(PREFIX.as_bytes()).into(),
            ..Default::default()
        })
        .map_err(|e| format!("the restored store does not read: {e}"))?;
    let kvs = range
        .kvs
        .iter()
        .map(|kv| {
            (
                String::from_utf8_lossy(&kv.key).into_owned(),
                String::from_utf8_lossy(&kv.value).into_owned(),
            )
        })
        .collect();
    Ok((restored.revision, kvs))
}

/// Every key's value as of `revision`, by the log.
fn state_at(log: &RevisionLog, revision: i64) -> BTreeMap<String, String> {
    let mut state = BTreeMap::new();
    for events in log.range(..=revision).map(|(_, events)| events) {
        for (key, e) in events {
            match &e.value {
                Some(v) => state.insert(key.clone(), v.clone()),
                None => state.remove(key),
            };
        }
    }
    state
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::Event;

    /// A store with `/chaos/a` = 1 then 2 (revisions 2 and 3), saved as a
    /// snapshot at `path`.
    fn backup_at(path: &Path) {
        let dir = tempfile::tempdir().unwrap();
        let store = hark_mvcc::Store::open(dir.path(), Default::default()).unwrap();
        for v in ["1", "2"] {
            store
                .put(hark_mvcc::PutRequest {
                    key: "/chaos/a".into(),
                    value: v.into(),
                    ..Default::default()
                })
                .unwrap();
        }
        let member = hark_snapshot::Member {
            id: 1,
            name: "m0".into(),
            peer_urls: vec![],
            client_urls: vec![],
        };
        hark_snapshot::save(&store, &member, path).unwrap();
    }

    fn history_with(path: &Path, log_value_at_3: &str) -> (History, RevisionLog) {
        let mut log = RevisionLog::new();
        for (rev, v) in [(2, "1"), (3, log_value_at_3)] {
            let e = Event {
                revision: rev,
                key: "/chaos/a".into(),
                value: Some(v.into()),
                prev_value: None,
            };
            log.entry(rev).or_default().insert(e.key.clone(), e);
        }
        let history = History {
            backups: vec![BackupRecord {
                member: 0,
                path: path.display().to_string(),
                started_us: 0,
                finished_us: 1,
                error: None,
            }],
            ..Default::default()
        };
        (history, log)
    }

    fn anomalies(history: &History, log: &RevisionLog) -> Vec<String> {
        let mut report = Report::default();
        check(history, log, &mut report);
        report.anomalies
    }

    #[test]
    fn a_backup_is_restored_and_compared_with_the_log_at_its_revision() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("backup.db");
        backup_at(&path);
        let (good, log) = history_with(&path, "2");
        assert_eq!(anomalies(&good, &log), Vec::<String>::new());
        // The log says revision 3 wrote another value: the backup differs.
        let (other, log) = history_with(&path, "3");
        let found = anomalies(&other, &log);
        assert!(found[0].contains("claims revision 3"), "{found:?}");
        // A damaged file (its checksum no longer matches) does not restore.
        let mut bytes = std::fs::read(&path).unwrap();
        let middle = bytes.len() / 2;
        bytes[middle] ^= 0xff;
        std::fs::write(&path, bytes).unwrap();
        let found = anomalies(&good, &log);
        assert!(found[0].contains("does not restore"), "{found:?}");
    }

    #[test]
    fn a_members_backup_may_not_claim_an_older_revision_than_one_it_finished_before() {
        let record = |member, started_us, finished_us| BackupRecord {
            member,
            path: String::new(),
            started_us,
            finished_us,
            error: None,
        };
        let backups = [
            record(0, 0, 10),
            record(0, 20, 30), // began after the first ended: at least 572
            record(1, 20, 30), // another member may lag
            record(0, 5, 25),  // overlapped the first: may be older
            record(0, 40, 50), // as new as the newest before it
        ];
        let order = |revisions: &[(usize, i64)]| {
            let mut report = Report::default();
            check_member_order(&backups, revisions, &mut report);
            report.anomalies
        };
        let sound = [(0, 572), (1, 600), (2, 3), (3, 500), (4, 600)];
        assert_eq!(order(&sound), Vec::<String>::new());
        // Read while an install had cleared the store: revision 1.
        let went_back = [(0, 572), (1, 1), (2, 3), (3, 500), (4, 600)];
        let found = order(&went_back);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].contains("backup 2 from m0") && found[0].contains("older than revision 572"),
            "{found:?}"
        );
    }
}
