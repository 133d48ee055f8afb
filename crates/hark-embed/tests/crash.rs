//! A process that embeds Hark is killed with SIGKILL in the middle of its
//! writes and its watch; the store, opened again, has every write the
//! process saw acknowledged, and a watch resumed from the last revision
//! the process's watcher handled gets every later change once, in order.
//!
//! The child is this test binary itself, running the ignored test
//! `child_writes_until_killed` (sled's crash tests do the same).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

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

#[test]
fn sigkill_loses_nothing_acknowledged_and_a_watch_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "child_writes_until_killed",
            "--nocapture",
        ])
        .env(DIR_VAR, dir.path())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut acked = Vec::new();
    let mut seen = 0;
    let started = Instant::now();
    // Killed mid-stream: after 300 acknowledged writes, at full speed.
    while acked.len() < 300 {
        let line = lines.next().expect("the child's output").unwrap();
        let words: Vec<&str> = line.split_whitespace().collect();
        match words[..] {
            ["acked", n, rev] => {
                acked.push((n.parse::<u64>().unwrap(), rev.parse::<i64>().unwrap()))
            }
            ["seen", rev] => seen = rev.parse().unwrap(),
            _ => {}
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the child stalled"
        );
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    // Lines the child wrote before it died are acknowledgements too.
    for line in lines.map_while(Result::ok) {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words[..] {
            ["acked", n, rev] => acked.push((n.parse().unwrap(), rev.parse().unwrap())),
            ["seen", rev] => seen = rev.parse().unwrap(),
            _ => {}
        }
    }

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
    // revision, a watch gets every revision up to now once, in order.
    let watch = hark
        .watch(WatchRequest::prefix("k/").from_revision(seen + 1))
        .unwrap();
    let want = (hark.revision() - seen) as usize;
    let events = watch.events_timeout(want, Duration::from_secs(30));
    let revisions: Vec<i64> = events.iter().map(|e| e.revision()).collect();
    let expected: Vec<i64> = (seen + 1..=hark.revision()).collect();
    assert_eq!(revisions, expected, "resumed after revision {seen}");
    assert!(events.iter().all(|e| e.kind == EventKind::Put));
    assert!(
        watch
            .recv_timeout(Duration::from_millis(200))
            .is_none_or(|r| matches!(r.kind, ResponseKind::Progress)),
        "nothing more"
    );
    eprintln!(
        "{} writes acknowledged before SIGKILL, the watcher at {seen}, the store at {}",
        acked.len(),
        hark.revision()
    );
}
