//! A process that embeds Hark is killed with SIGKILL in the middle of its
//! writes and its watch; the store, opened again, has every write the
//! process saw acknowledged, and a watch resumed from the last revision
//! the process's watcher handled gets every later change once, in order.
//!
//! The child is this test binary itself, running the ignored test
//! `child_writes_until_killed` (sled's crash tests do the same).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use hark_embed::{EventKind, Hark, ResponseKind, WatchRequest};

const DIR_VAR: &str = "HARK_EMBED_CRASH_DIR";

#[test]
#[ignore = "the child of sigkill_loses_nothing_acknowledged; runs only there"]
fn child_writes_until_killed() {
    let dir = std::env::var(DIR_VAR).expect("run by sigkill_loses_nothing_acknowledged");
    let hark = Hark::open(dir).unwrap();
    let watch = hark.watch(WatchRequest::prefix("k/")).unwrap();
    let printer = std::thread::spawn(move || {
        loop {
            let Some(response) = watch.recv_timeout(Duration::from_secs(60)) else {
                return;
            };
            if let Some(last) = response.events().last() {
                println!("seen {}", last.revision());
            }
        }
    });
    for n in 0.. {
        let rev = hark.put(format!("k/{n:06}"), n.to_string()).unwrap();
        println!("acked {n} {rev}");
    }
    printer.join().unwrap();
}

/// The child process, killed (SIGKILL) when dropped, so a failed test
/// leaves none behind.
struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// What the child printed: acknowledged writes `(n, revision)` and the
/// last revision its watcher handled.
#[derive(Default)]
struct Heard {
    acked: Vec<(u64, i64)>,
    seen: i64,
}

impl Heard {
    fn take(&mut self, line: &str) {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words[..] {
            ["acked", n, rev] => self.acked.push((n.parse().unwrap(), rev.parse().unwrap())),
            ["seen", rev] => self.seen = rev.parse().unwrap(),
            _ => {}
        }
    }
}

#[test]
fn sigkill_loses_nothing_acknowledged_and_a_watch_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Child(
        Command::new(std::env::current_exe().unwrap())
            .args([
                "--ignored",
                "--exact",
                "child_writes_until_killed",
                "--nocapture",
            ])
            .env(DIR_VAR, dir.path())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    // Read on a thread, so a silent child cannot hang the test.
    let (lines_tx, lines) = std::sync::mpsc::channel();
    let stdout = child.0.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if lines_tx.send(line).is_err() {
                return;
            }
        }
    });
    let mut heard = Heard::default();
    // Killed mid-stream: after 300 acknowledged writes at full speed, and
    // once the watcher has handled some.
    while heard.acked.len() < 300 || heard.seen == 0 {
        let line = lines
            .recv_timeout(Duration::from_secs(60))
            .expect("the child went silent");
        heard.take(&line);
    }
    drop(child); // SIGKILL, then reaped
    // Lines the child wrote before it died are acknowledgements too.
    while let Ok(line) = lines.recv_timeout(Duration::from_secs(5)) {
        heard.take(&line);
    }
    let Heard { acked, seen } = heard;

    let hark = Hark::open(dir.path()).unwrap();
    let (_, last_acked) = *acked.last().unwrap();
    assert!(hark.revision() >= last_acked);
    for &(n, rev) in &acked {
        let kv = hark
            .get(format!("k/{n:06}"))
            .unwrap()
            .unwrap_or_else(|| panic!("acknowledged k/{n:06} at {rev} is lost"));
        assert_eq!((kv.value, kv.mod_revision), (n.to_string().into(), rev));
    }

    // The child's watcher handled up to `seen`; resumed from the next
    // revision, a watch gets every revision up to now once, in order (every
    // write here is a put, one revision each).
    let watch = hark
        .watch(WatchRequest::prefix("k/").from_revision(seen + 1))
        .unwrap();
    let created = watch.recv_timeout(Duration::from_secs(10)).unwrap();
    assert!(matches!(created.kind, ResponseKind::Created));
    let want = (hark.revision() - seen) as usize;
    let events = watch.events_timeout(want, Duration::from_secs(30)).unwrap();
    let revisions: Vec<i64> = events.iter().map(|e| e.revision()).collect();
    let expected: Vec<i64> = (seen + 1..=hark.revision()).collect();
    assert_eq!(revisions, expected, "resumed after revision {seen}");
    assert!(events.iter().all(|e| e.kind == EventKind::Put));
    assert!(
        watch.recv_timeout(Duration::from_millis(200)).is_none(),
        "nothing more"
    );
    eprintln!(
        "{} writes acknowledged before SIGKILL, the watcher at {seen}, the store at {}",
        acked.len(),
        hark.revision()
    );
    drop(watch);
    assert!(hark.close(), "the last handle closes the store");
}
