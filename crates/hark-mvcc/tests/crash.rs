//! Crash test in sled's style: a child process (this test binary, re-executed)
//! writes under load to a store (on each on-disk backend built) and reports each acknowledged write on
//! stdout; the parent kills it with SIGKILL at a random moment, reopens the store
//! and checks that nothing acknowledged was lost, no txn is half-visible, revisions
//! continue, and an interrupted compaction completes. Repeated over many cycles on
//! the same directory.

#![cfg(any(feature = "rocksdb", feature = "fjall"))]

use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use hark_mvcc::backend::Table;
use hark_mvcc::*;

const CHILD_ENV: &str = "HARK_CRASH_CHILD_DIR";
const BACKEND_ENV: &str = "HARK_CRASH_BACKEND";
const CYCLES: u64 = 12;
const TXN_KEYS: [&str; 3] = ["txn/a", "txn/b", "txn/c"];

/// A small xorshift generator; the seed is printed so a failure can be replayed.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The child: four put threads and one txn thread write until killed. Each line is an acknowledged write:
/// `put <rev> <key>`, `txn <rev> <n>`, `compact <rev>`.
///
/// Not a test of its own: ignored in normal runs (so it never shows as a
/// pass that checked nothing), and run by name, ignored included, when
/// `crash_recovery_keeps_acknowledged_writes` re-executes this binary.
#[test]
#[ignore = "the crash test's child process, run by crash_recovery_keeps_acknowledged_writes"]
fn crash_child_writer() {
    let dir = std::env::var(CHILD_ENV).expect("run only as the crash test's child");
    let cycle: u64 = std::env::var("HARK_CRASH_CYCLE").unwrap().parse().unwrap();
    let backend: BackendKind = std::env::var(BACKEND_ENV).unwrap().parse().unwrap();
    let store = Store::open(&dir, options(backend)).unwrap();
    let out = Arc::new(std::sync::Mutex::new(std::io::stdout()));
    let report = |line: String| {
        let mut out = out.lock().unwrap();
        writeln!(out, "{line}").unwrap();
        out.flush().unwrap();
    };
    report("ready".into());
    std::thread::scope(|scope| {
        for w in 0..4 {
            let (store, report) = (&store, &report);
            scope.spawn(move || {
                for i in 0.. {
                    let key = format!("put/{cycle}/{w}/{i}");
                    let r = store
                        .put(PutRequest::new(key.clone(), key.clone()))
                        .unwrap();
                    report(format!("put {} {key}", r.header_revision));
                }
            });
        }
        let (store, report) = (&store, &report);
        scope.spawn(move || {
            for n in 0u64.. {
                let value = format!("{cycle}-{n}");
                let txn = TxnRequest {
                    compare: vec![],
                    success: TXN_KEYS
                        .iter()
                        .map(|k| RequestOp::Put(PutRequest::new(*k, value.clone())))
                        .collect(),
                    failure: vec![],
                };
                let r = store.txn(txn).unwrap();
                report(format!("txn {} {value}", r.header_revision));
                if n % 50 == 25 {
                    // Compact most history so compactions have real work and get interrupted.
                    let at = store.current_revision() - 5;
                    if at > store.compacted_revision() {
                        store.compact(at, false).unwrap();
                        report(format!("compact {at}"));
                    }
                }
            }
        });
    });
}

#[derive(Default)]
struct Acks {
    puts: Vec<(i64, String)>,
    last_txn: Option<(i64, String)>,
    last_compact: i64,
    max_rev: i64,
}

fn parse_acks(lines: &[String]) -> Acks {
    let mut acks = Acks::default();
    for line in lines {
        let mut parts = line.split(' ');
        match (parts.next(), parts.next(), parts.next()) {
            (Some("put"), Some(rev), Some(key)) => {
                let rev: i64 = rev.parse().unwrap();
                acks.max_rev = acks.max_rev.max(rev);
                acks.puts.push((rev, key.to_string()));
            }
            (Some("txn"), Some(rev), Some(value)) => {
                let rev: i64 = rev.parse().unwrap();
                acks.max_rev = acks.max_rev.max(rev);
                if acks.last_txn.as_ref().is_none_or(|(r, _)| *r < rev) {
                    acks.last_txn = Some((rev, value.to_string()));
                }
            }
            (Some("compact"), Some(rev), None) => {
                acks.last_compact = acks.last_compact.max(rev.parse().unwrap())
            }
            _ => {} // "ready", or a line cut by the kill
        }
    }
    acks
}

fn options(backend: BackendKind) -> StoreOptions {
    StoreOptions {
        backend,
        ..StoreOptions::default()
    }
}

fn run_child(dir: &Path, backend: BackendKind, cycle: u64, kill_after: Duration) -> Vec<String> {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "crash_child_writer",
            "--exact",
            "--include-ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, dir)
        .env("HARK_CRASH_CYCLE", cycle.to_string())
        .env(BACKEND_ENV, backend.name())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        BufReader::new(stdout)
            .lines()
            .map_while(|l| l.ok())
            .collect::<Vec<String>>()
    });
    std::thread::sleep(kill_after);
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    reader.join().unwrap()
}

/// Rows at or below the compacted revision must be exactly the retained ones:
/// per key at most one, and no tombstone older than the compacted revision.
fn assert_compaction_complete(dir: &Path, backend: BackendKind, compacted: i64) {
    let backend = backend.open(dir).unwrap();
    let mut per_key: HashMap<Bytes, usize> = HashMap::new();
    let end = {
        let mut e = (compacted + 1).to_be_bytes().to_vec();
        e.push(b'_');
        e
    };
    backend
        .scan(Table::Kv, &[], Some(&end), &mut |k, v| {
            let kv = <KeyValue as prost::Message>::decode(v).unwrap();
            let tombstone = k.len() == 18;
            let main = i64::from_be_bytes(k[..8].try_into().unwrap());
            assert!(
                !tombstone || main == compacted,
                "tombstone at {main} survived compaction at {compacted}"
            );
            *per_key.entry(kv.key).or_default() += 1;
            true
        })
        .unwrap();
    for (k, n) in per_key {
        assert_eq!(
            n, 1,
            "key {k:?} keeps {n} revisions at or below {compacted}"
        );
    }
}

#[cfg(feature = "rocksdb")]
#[test]
fn crash_recovery_keeps_acknowledged_writes_on_rocksdb() {
    crash_recovery_keeps_acknowledged_writes(BackendKind::RocksDb);
}

#[cfg(feature = "fjall")]
#[test]
fn crash_recovery_keeps_acknowledged_writes_on_fjall() {
    crash_recovery_keeps_acknowledged_writes(BackendKind::Fjall);
}

fn crash_recovery_keeps_acknowledged_writes(backend: BackendKind) {
    if std::env::var(CHILD_ENV).is_ok() {
        return;
    }
    let seed = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    eprintln!("crash test on {backend}, seed {seed}");
    let mut rng = Rng(seed);
    let dir = tempfile::tempdir().unwrap();
    let mut all_puts: BTreeMap<String, i64> = BTreeMap::new();
    let mut last_txn: Option<(i64, String)> = None;
    let mut last_compact = 0;
    let mut max_acked = 0;
    let mut total_acks = 0;
    for cycle in 0..CYCLES {
        let kill_after = Duration::from_millis(150 + rng.below(450));
        let lines = run_child(dir.path(), backend, cycle, kill_after);
        let acks = parse_acks(&lines);
        total_acks += acks.puts.len();
        all_puts.extend(acks.puts.iter().map(|(r, k)| (k.clone(), *r)));
        if acks.last_txn.is_some() {
            last_txn = acks.last_txn.clone();
        }
        last_compact = last_compact.max(acks.last_compact);
        max_acked = max_acked.max(acks.max_rev);

        let started = Instant::now();
        let store = Store::open(dir.path(), options(backend)).unwrap();
        eprintln!(
            "cycle {cycle}: killed after {kill_after:?}, {} acks, reopened at {} (compacted {}) in {:?}",
            lines.len(),
            store.current_revision(),
            store.compacted_revision(),
            started.elapsed()
        );
        assert!(
            store.current_revision() >= max_acked,
            "revisions go on from the last acknowledged one"
        );
        assert!(store.compacted_revision() >= last_compact);
        for (key, rev) in &all_puts {
            let kv = store
                .range(&RangeRequest::key(key.clone()))
                .unwrap()
                .kvs
                .pop();
            let kv = kv.unwrap_or_else(|| panic!("acknowledged put of {key} at {rev} lost"));
            assert_eq!((kv.mod_revision, kv.value.as_ref()), (*rev, key.as_bytes()));
        }
        // The txn keys: all three from one txn, never a mix, and not older than the last ack.
        let txn_kvs = store
            .range(&RangeRequest::range("txn/", "txn0"))
            .unwrap()
            .kvs;
        if let Some((rev, value)) = &last_txn {
            assert_eq!(txn_kvs.len(), 3);
            let first = &txn_kvs[0];
            for kv in &txn_kvs {
                assert_eq!(
                    (kv.mod_revision, &kv.value),
                    (first.mod_revision, &first.value),
                    "half a txn is visible"
                );
            }
            assert!(first.mod_revision >= *rev);
            if first.mod_revision == *rev {
                assert_eq!(first.value.as_ref(), value.as_bytes());
            }
        }
        // A write after recovery continues the revision sequence.
        let next = store.current_revision() + 1;
        let r = store
            .put(PutRequest::new(format!("after/{cycle}"), "x"))
            .unwrap();
        assert_eq!(r.header_revision, next);
        let compacted = store.compacted_revision();
        drop(store);
        assert_compaction_complete(dir.path(), backend, compacted);
        max_acked = max_acked.max(next);
    }
    assert!(
        total_acks > 100,
        "the child should have written under load (got {total_acks} acks)"
    );
    assert!(
        last_compact > 0,
        "some compaction should have been acknowledged"
    );
}
