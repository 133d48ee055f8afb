//! Backups on a schedule: when the next one is due ([`Schedule`]), and one
//! taken into a directory of them ([`Backups::take`]): written as
//! `etcdctl snapshot save` leaves a file, read back and checked, and the
//! oldest beyond the retention removed. The server runs the loop; this
//! module holds every decision, so it is tested without one.

use std::path::{Path, PathBuf};
use std::time::Duration;

use chrono::{DateTime, Utc};
use hark_mvcc::Store;

use crate::{Member, Result, status, verify};

/// When backups are due.
#[derive(Debug, Clone)]
pub enum Schedule {
    /// Every interval, the first one interval after start.
    Every(Duration),
    /// At the times a cron expression names (five fields, or six with
    /// seconds first), in UTC.
    Cron(Box<croner::Cron>),
}

impl Schedule {
    /// A cron expression, refused with the parser's reason when malformed.
    pub fn cron(expression: &str) -> std::result::Result<Schedule, String> {
        croner::Cron::new(expression)
            .with_seconds_optional()
            .parse()
            .map(|c| Schedule::Cron(Box::new(c)))
            .map_err(|e| format!("invalid cron expression {expression:?}: {e}"))
    }

    /// The first time a backup is due after `now` (`None`: never again,
    /// a cron expression with no future match).
    pub fn next_after(&self, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        match self {
            Schedule::Every(every) => chrono::Duration::from_std(*every)
                .ok()
                .and_then(|d| now.checked_add_signed(d)),
            Schedule::Cron(cron) => cron.find_next_occurrence(&now, false).ok(),
        }
    }
}

/// For logs: `every 90s`, or `cron 0 */6 * * *`.
impl std::fmt::Display for Schedule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Schedule::Every(every) => write!(f, "every {every:?}"),
            Schedule::Cron(cron) => write!(f, "cron {}", cron.pattern),
        }
    }
}

/// A directory of scheduled backups of one member, the newest `keep` kept.
#[derive(Debug, Clone)]
pub struct Backups {
    pub dir: PathBuf,
    /// The member's name, which starts every file name (so members sharing
    /// a directory prune only their own).
    pub member: String,
    pub keep: usize,
}

/// One backup taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Taken {
    pub path: PathBuf,
    pub revision: i64,
    /// The whole file, checksum included.
    pub bytes: u64,
    /// Older backups removed to keep the retention.
    pub removed: Vec<PathBuf>,
}

impl Backups {
    /// Writes a backup of `store` at `now`, checks it and prunes the oldest.
    /// A backup that fails its check is removed and reported as the error;
    /// nothing older is removed then. The new backup is never pruned, even
    /// when a clock set back names it older than the ones before.
    pub fn take(&self, store: &Store, member: &Member, now: DateTime<Utc>) -> Result<Taken> {
        hark_mvcc::ensure_private_dir(&self.dir)?;
        let path = self.dir.join(self.file_name(now));
        if path.exists() {
            return Err(crate::Error::Io(std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                format!("{} already exists", path.display()),
            )));
        }
        let written = crate::save(store, member, &path)?;
        if let Err(e) = self.check(&path, written.revision) {
            let _ = std::fs::remove_file(&path);
            return Err(e);
        }
        let bytes = std::fs::metadata(&path)?.len();
        // The new name is on disk before any older backup goes.
        std::fs::File::open(&self.dir)?.sync_all()?;
        // A good backup stays good if removing an old one fails.
        let removed = self.prune(&path).unwrap_or_else(|e| {
            tracing::warn!(error = %e, dir = %self.dir.display(), "removing old backups failed");
            Vec::new()
        });
        Ok(Taken {
            path,
            revision: written.revision,
            bytes,
            removed,
        })
    }

    /// The backups in the directory, oldest first.
    pub fn list(&self) -> Result<Vec<PathBuf>> {
        let prefix = format!("{}-", self.member);
        let mut found: Vec<PathBuf> = std::fs::read_dir(&self.dir)?
            .filter_map(|e| e.ok())
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .and_then(|n| n.strip_prefix(&prefix))
                    .and_then(|rest| rest.strip_suffix(".db"))
                    .is_some_and(is_timestamp)
            })
            .collect();
        // The timestamp sorts as text.
        found.sort();
        Ok(found)
    }

    /// `<member>-<UTC time to the millisecond>.db`.
    fn file_name(&self, now: DateTime<Utc>) -> String {
        format!("{}-{}.db", self.member, now.format(TIMESTAMP))
    }

    /// What `etcdutl snapshot status` and a restore rely on: the trailing
    /// sha256 matches, the database reads, and it holds the revision written.
    fn check(&self, path: &Path, revision: i64) -> Result<()> {
        verify(path, false)?;
        let read = status(path)?;
        if read.revision != revision {
            return Err(crate::Error::NotEtcd(format!(
                "{} reads as revision {}, {revision} was written",
                path.display(),
                read.revision
            )));
        }
        Ok(())
    }

    /// Removes the oldest of this member's backups other than `new`, so
    /// that `keep` remain with it.
    fn prune(&self, new: &Path) -> Result<Vec<PathBuf>> {
        let mut others = self.list()?;
        others.retain(|p| p != new);
        let excess = others.len().saturating_sub(self.keep.max(1) - 1);
        let mut removed = Vec::new();
        for old in others.into_iter().take(excess) {
            std::fs::remove_file(&old)?;
            removed.push(old);
        }
        Ok(removed)
    }
}

const TIMESTAMP: &str = "%Y%m%dT%H%M%S%.3fZ";

/// Exactly what [`TIMESTAMP`] writes (chrono's parser alone also takes
/// one-digit fields and leading spaces).
fn is_timestamp(s: &str) -> bool {
    chrono::NaiveDateTime::parse_from_str(s, TIMESTAMP)
        .is_ok_and(|t| t.format(TIMESTAMP).to_string() == s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;
    use hark_mvcc::{PutRequest, StoreOptions};

    fn at(h: u32, m: u32, s: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 12, 5, h, m, s).unwrap()
    }

    #[test]
    fn an_interval_is_due_one_interval_on_and_cron_at_its_next_match() {
        let every = Schedule::Every(Duration::from_secs(90));
        assert_eq!(every.next_after(at(10, 0, 0)), Some(at(10, 1, 30)));
        let six_hourly = Schedule::cron("0 */6 * * *").unwrap();
        assert_eq!(six_hourly.next_after(at(10, 0, 0)), Some(at(12, 0, 0)));
        // Due exactly now means the next match, not now again.
        assert_eq!(six_hourly.next_after(at(12, 0, 0)), Some(at(18, 0, 0)));
        let with_seconds = Schedule::cron("*/20 * * * * *").unwrap();
        assert_eq!(with_seconds.next_after(at(10, 0, 5)), Some(at(10, 0, 20)));
        assert_eq!(every.to_string(), "every 90s");
        assert_eq!(six_hourly.to_string(), "cron 0 */6 * * *");
        let err = Schedule::cron("every hour").unwrap_err();
        assert!(
            err.starts_with("invalid cron expression \"every hour\""),
            "{err}"
        );
        assert!(Schedule::cron("61 * * * *").is_err());
    }

    fn store_with(dir: &Path, keys: usize) -> Store {
        let store = Store::open(dir, StoreOptions::default()).unwrap();
        for i in 0..keys {
            store
                .put(PutRequest {
                    key: format!("k{i}").into(),
                    value: "v".into(),
                    ..Default::default()
                })
                .unwrap();
        }
        store
    }

    fn member() -> Member {
        Member {
            id: 1,
            name: "m1".into(),
            peer_urls: vec![],
            client_urls: vec![],
        }
    }

    /// A snapshot saved from a RocksDB store restores onto fjall and back,
    /// every revision kept: how a data dir moves between `--backend`s.
    #[test]
    fn a_snapshot_moves_a_store_between_backends() {
        use hark_mvcc::{BackendKind, RangeRequest};
        let dir = tempfile::tempdir().unwrap();
        let rocks = store_with(&dir.path().join("rocks"), 50);
        rocks.compact(20, true).unwrap();
        let saved = dir.path().join("a.snap");
        crate::save(&rocks, &member(), &saved).unwrap();
        let want = rocks.range(&RangeRequest::prefix("k")).unwrap().kvs;
        let want_old = rocks
            .range(&RangeRequest {
                revision: 30,
                ..RangeRequest::prefix("k")
            })
            .unwrap()
            .kvs;
        // (fjall is built when the workspace is: the server enables it.)
        for backend in [BackendKind::Fjall, BackendKind::RocksDb]
            .into_iter()
            .filter(|b| b.is_built())
        {
            let into = dir.path().join(backend.name());
            let _ = std::fs::remove_dir_all(&into);
            let options = crate::RestoreOptions {
                backend,
                ..Default::default()
            };
            crate::restore(&saved, &into, &options).unwrap();
            assert_eq!(BackendKind::written_in(&into), Some(backend));
            let store = Store::open(
                &into,
                StoreOptions {
                    backend,
                    ..StoreOptions::default()
                },
            )
            .unwrap();
            assert_eq!(store.current_revision(), rocks.current_revision());
            assert_eq!(store.compacted_revision(), 20);
            assert_eq!(store.range(&RangeRequest::prefix("k")).unwrap().kvs, want);
            let old = RangeRequest {
                revision: 30,
                ..RangeRequest::prefix("k")
            };
            assert_eq!(store.range(&old).unwrap().kvs, want_old);
        }
    }

    #[test]
    fn each_backup_is_checked_and_only_the_newest_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_with(&dir.path().join("data"), 5);
        let backups = Backups {
            dir: dir.path().join("backups"),
            member: "m1".into(),
            keep: 2,
        };
        // Someone else's files stay, whatever they look like.
        std::fs::create_dir_all(&backups.dir).unwrap();
        for other in ["m2-20261205T100000.000Z.db", "m1-notes.db", "m1.db"] {
            std::fs::write(backups.dir.join(other), b"x").unwrap();
        }
        let mut taken = Vec::new();
        for second in 0..4 {
            let t = backups.take(&store, &member(), at(10, 0, second)).unwrap();
            assert_eq!(t.revision, 6);
            assert_eq!(t.bytes, std::fs::metadata(&t.path).unwrap().len());
            assert_eq!(status(&t.path).unwrap().revision, 6);
            taken.push(t);
        }
        assert!(taken[0].removed.is_empty() && taken[1].removed.is_empty());
        assert_eq!(taken[2].removed, vec![taken[0].path.clone()]);
        assert_eq!(taken[3].removed, vec![taken[1].path.clone()]);
        assert_eq!(
            backups.list().unwrap(),
            vec![taken[2].path.clone(), taken[3].path.clone()]
        );
        assert_eq!(
            taken[3].path.file_name().unwrap().to_str().unwrap(),
            "m1-20261205T100003.000Z.db"
        );
        let mut left: Vec<String> = std::fs::read_dir(&backups.dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(
            left,
            [
                "m1-20261205T100002.000Z.db",
                "m1-20261205T100003.000Z.db",
                "m1-notes.db",
                "m1.db",
                "m2-20261205T100000.000Z.db"
            ]
        );
    }

    #[test]
    fn a_backup_that_cannot_be_written_removes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_with(&dir.path().join("data"), 1);
        let two = Backups {
            dir: dir.path().join("backups"),
            member: "m1".into(),
            keep: 2,
        };
        let first = two.take(&store, &member(), at(10, 0, 0)).unwrap();
        let second = two.take(&store, &member(), at(10, 0, 1)).unwrap();
        // Kept to one, the next take would remove the first; its name is
        // taken by a directory, so the write fails and nothing goes.
        let one = Backups { keep: 1, ..two };
        std::fs::create_dir(one.dir.join("m1-20261205T100002.000Z.db")).unwrap();
        assert!(one.take(&store, &member(), at(10, 0, 2)).is_err());
        assert!(first.path.exists() && second.path.exists());
        // It works again once the name is free, and keeps only itself.
        std::fs::remove_dir(one.dir.join("m1-20261205T100002.000Z.db")).unwrap();
        let third = one.take(&store, &member(), at(10, 0, 2)).unwrap();
        assert_eq!(third.removed, vec![first.path.clone(), second.path.clone()]);
    }

    #[test]
    fn a_backup_named_older_by_a_clock_set_back_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_with(&dir.path().join("data"), 1);
        let backups = Backups {
            dir: dir.path().join("backups"),
            member: "m1".into(),
            keep: 1,
        };
        let later = backups.take(&store, &member(), at(12, 0, 0)).unwrap();
        let earlier = backups.take(&store, &member(), at(11, 0, 0)).unwrap();
        assert!(earlier.path.exists(), "the new backup was pruned");
        assert_eq!(earlier.removed, vec![later.path.clone()]);
        // Names chrono would read but TIMESTAMP never writes are not ours.
        for loose in ["m1-2026125T100000.000Z.db", "m1- 20261205T100000.000Z.db"] {
            std::fs::write(backups.dir.join(loose), b"x").unwrap();
        }
        assert_eq!(backups.list().unwrap(), vec![earlier.path.clone()]);
    }
}
