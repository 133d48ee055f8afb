//! harkctl's output, byte for byte.
//!
//! `etcdctl_3_5_is_the_golden_output`: the same script of commands runs with
//! etcdctl 3.5 against one Hark server and with harkctl against another with
//! the same member identity; stdout, the `Error:` line and the exit code must
//! match for every step (lease ids, timings, ports and db sizes masked).
//! Needs `etcdctl-3.5` on PATH (CI installs it); `HARK_REQUIRE_ETCDCTL=1`
//! turns its absence into a failure.
//!
//! `fixed_outputs`: expected outputs written down from etcdctl 3.5's
//! printers, checked without etcdctl.
//!
//! `etcdctl_3_5_auth_output` and `etcdctl_3_5_tls_output` do the same for
//! the auth commands and for the TLS flags over mutual TLS.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use clap::Parser;

const HARKCTL: &str = env!("CARGO_BIN_EXE_harkctl");

struct Server {
    running: hark_server::RunningServer,
    _dir: tempfile::TempDir,
}

async fn server() -> Server {
    server_with(&["--listen-client-urls=http://127.0.0.1:0".to_string()]).await
}

/// A test server with `listen` (its client URL and TLS flags).
async fn server_with(listen: &[String]) -> Server {
    let dir = tempfile::tempdir().unwrap();
    let config = hark_server::Config::try_parse_from(
        [
            "hark".to_string(),
            "--listen-peer-urls=http://127.0.0.1:0".into(),
            "--initial-advertise-peer-urls=http://golden.test:2380".into(),
            // The same identity on every test server: equal ids in JSON headers.
            "--name=golden".into(),
            "--advertise-client-urls=http://golden.test:2379".into(),
            format!("--data-dir={}", dir.path().display()),
            "--unsafe-no-fsync".into(),
        ]
        .into_iter()
        .chain(listen.iter().cloned()),
    )
    .unwrap();
    Server {
        running: hark_server::start(&config).await.unwrap(),
        _dir: dir,
    }
}

#[derive(Debug, PartialEq)]
struct Run {
    stdout: String,
    error: Vec<String>,
    code: i32,
}

fn run(bin: &str, endpoint: &str, args: &[&str], stdin: &str) -> Run {
    let mut child = Command::new(bin)
        .env("ETCDCTL_API", "3")
        .arg(format!("--endpoints={endpoint}"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let mask = |s: &str| mask(s, endpoint);
    Run {
        stdout: mask(&String::from_utf8_lossy(&out.stdout)),
        // etcdctl's client also logs retries as JSON lines: compare the rest.
        error: String::from_utf8_lossy(&out.stderr)
            .lines()
            .filter(|l| !l.starts_with('{'))
            .map(mask)
            .collect(),
        code: out.status.code().unwrap_or(-1),
    }
}

/// A child's stdout, line by line, read on a thread of its own.
fn lines_of(stdout: std::process::ChildStdout) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if tx.send(line.unwrap()).is_err() {
                return;
            }
        }
    });
    rx
}

/// Runs a watch until it printed `lines` lines (or 10 s passed), then stops it.
fn run_watch(bin: &str, endpoint: &str, args: &[&str], lines: usize) -> Vec<String> {
    let mut child = Command::new(bin)
        .env("ETCDCTL_API", "3")
        .arg(format!("--endpoints={endpoint}"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let rx = lines_of(child.stdout.take().unwrap());
    let mut got = Vec::new();
    while got.len() < lines {
        match rx.recv_timeout(Duration::from_secs(10)) {
            Ok(l) => got.push(mask(&l, endpoint)),
            Err(_) => break,
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    got
}

/// Hides what differs between two runs for reasons other than the tool: the
/// server's address, lease ids, remaining TTLs, timings and database sizes.
fn mask(s: &str, endpoint: &str) -> String {
    let s = s.replace(endpoint, "<endpoint>");
    let re = |p: &str| regex::Regex::new(p).unwrap();
    // Lease, member and cluster ids: random, printed in hex without leading
    // zeros (15 digits one time in 16), so any length from 13 digits. A
    // shorter one is padded where etcdctl prints `%16x` or a table column:
    // the spaces before it go with it (found: "Member  <lease> updated" and
    // a table row sorted apart by its extra space).
    let s = re(r"( *)\b[0-9a-f]{13,16}\b").replace_all(&s, |c: &regex::Captures| {
        if c[1].is_empty() {
            "<lease>"
        } else {
            " <lease>"
        }
    });
    let s = re(r#""ID":\d+|"id":\d+"#).replace_all(&s, "\"ID\":<lease>");
    let s = re(r"remaining\(\d+s\)").replace_all(&s, "remaining(<n>s)");
    let s = re(r"took = \S+").replace_all(&s, "took = <t>");
    let s = re(r#""took":"[^"]*""#).replace_all(&s, "\"took\":<t>");
    let s = re(r#""(dbSize|dbSizeInUse)":\d+"#).replace_all(&s, "\"$1\":<n>");
    let s = re(r"\d+(\.\d+)? [kMG]?B, ").replace_all(&s, "<size>, ");
    s.to_string()
}

/// Puts members in one order whatever their ids. Both servers list members
/// by id, and each gives the learner a random one, so whether it comes
/// before or after the first member is chance, not a difference of tools.
fn members_in_fixed_order(s: &str) -> String {
    let sorted = |mut parts: Vec<&str>, sep: &str| {
        parts.sort_unstable();
        parts.join(sep)
    };
    let re = |p: &str| regex::Regex::new(p).unwrap();
    // `member add`: ETCD_INITIAL_CLUSTER="a=...,b=..."
    let s = re(r#"ETCD_INITIAL_CLUSTER="([^"]*)""#).replace_all(s, |c: &regex::Captures| {
        format!(
            "ETCD_INITIAL_CLUSTER=\"{}\"",
            sorted(c[1].split(',').collect(), ",")
        )
    });
    // json: "members":[{...},{...}] (member objects hold no nested objects)
    let s = re(r#""members":\[\{(.*?)\}\]"#).replace_all(&s, |c: &regex::Captures| {
        format!(
            "\"members\":[{{{}}}]",
            sorted(c[1].split("},{").collect(), "},{")
        )
    });
    // simple and table: one line per member, after the ids are masked
    let is_row = |l: &&str| {
        (l.starts_with("| ") || l.contains(", "))
            && (l.contains("<lease>") || l.contains("<learner>"))
    };
    let lines: Vec<&str> = s.lines().collect();
    let mut rows: Vec<&str> = lines.iter().copied().filter(is_row).collect();
    rows.sort_unstable();
    let mut rows = rows.into_iter();
    let mut out: Vec<&str> = lines
        .iter()
        .map(|l| if is_row(l) { rows.next().unwrap() } else { l })
        .collect();
    if s.ends_with('\n') {
        out.push("");
    }
    out.join("\n")
}

fn find_on_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// etcdctl 3.5, and two fresh servers with the same identity: one for
/// etcdctl (`golden`, at `ge`), one for harkctl (`ours`, at `oe`).
struct Side {
    etcdctl: String,
    rt: tokio::runtime::Runtime,
    golden: Server,
    ours: Server,
    ge: String,
    oe: String,
}

/// `None` (skip) without etcdctl-3.5 on PATH, unless CI requires it.
fn side_by_side() -> Option<Side> {
    let Some(etcdctl) = find_on_path("etcdctl-3.5") else {
        assert_ne!(
            std::env::var("HARK_REQUIRE_ETCDCTL").as_deref(),
            Ok("1"),
            "etcdctl-3.5 is not on PATH"
        );
        eprintln!("etcdctl-3.5 not on PATH: skipped");
        return None;
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let golden = rt.block_on(server());
    let ours = rt.block_on(server());
    let ge = golden.running.endpoints()[0].clone();
    let oe = ours.running.endpoints()[0].clone();
    Some(Side {
        etcdctl: etcdctl.to_str().unwrap().to_string(),
        rt,
        golden,
        ours,
        ge,
        oe,
    })
}

/// Steps run in order on a fresh server: (args, stdin).
fn script() -> Vec<(Vec<String>, String)> {
    let s = |args: &[&str]| (args.iter().map(|a| a.to_string()).collect(), String::new());
    let with_stdin = |args: &[&str], stdin: &str| {
        (
            args.iter().map(|a| a.to_string()).collect(),
            stdin.to_string(),
        )
    };
    vec![
        s(&["put", "foo", "bar"]),
        s(&["put", "foo", "baz", "--prev-kv"]),
        s(&["put", "-w", "json", "fob", "1"]),
        s(&["put", "-w", "fields", "--prev-kv", "fob", "2"]),
        with_stdin(&["put", "stdin-key"], "from stdin\n"),
        s(&["put"]),
        s(&["put", "k", "v", "--lease=zz"]),
        s(&["put", "k", "v", "--lease=abc"]),
        s(&["get", "foo"]),
        s(&["get", "fo", "--prefix"]),
        s(&["get", "fo", "--prefix", "--keys-only"]),
        s(&["get", "fo", "--prefix", "--print-value-only"]),
        s(&["get", "", "--prefix", "-w", "json"]),
        s(&["get", "", "--from-key", "--limit=2", "-w", "json"]),
        s(&[
            "get",
            "f",
            "--prefix",
            "--sort-by=MODIFY",
            "--order=DESCEND",
        ]),
        s(&["get", "f", "--prefix", "--sort-by=VALUE"]),
        s(&["get", "f", "--prefix", "--count-only", "-w", "fields"]),
        s(&["get", "f", "--prefix", "--count-only"]),
        s(&["get", "foo", "--rev=2", "-w", "fields"]),
        s(&["get", "foo", "--hex"]),
        s(&["get", "missing"]),
        s(&["get", "missing", "-w", "json"]),
        s(&["get", "foo", "--rev=1000"]),
        s(&["get", "a", "--prefix", "--from-key"]),
        s(&["get"]),
        s(&["get", "foo", "-w", "table"]),
        s(&["get", "foo", "-w", "yaml"]),
        with_stdin(
            &["txn"],
            "value(\"foo\") = \"baz\"\nmod(\"fob\") > \"0\"\n\nput foo qux\nget fob\ndel nothing\n\nput foo nope\n\n",
        ),
        with_stdin(
            &["txn", "-w", "json"],
            "version(\"foo\") > \"10\"\n\nput foo yes\n\nput foo no\nget foo\n\n",
        ),
        with_stdin(&["txn", "-i"], "\nput t 1\n\n\n"),
        with_stdin(&["txn"], "value(\"foo\") = \"x\"\n"),
        with_stdin(&["txn"], "nonsense\n\n\n\n"),
        s(&["del", "nothing"]),
        s(&["del", "fob", "--prev-kv"]),
        s(&["del", "f", "--prefix", "--prev-kv", "-w", "json"]),
        s(&["lease", "list"]),
        s(&["lease", "list", "-w", "json"]),
        s(&["lease", "timetolive", "1234"]),
        s(&["lease", "timetolive", "1234", "-w", "json"]),
        s(&["lease", "revoke", "1234"]),
        s(&["lease", "grant"]),
        s(&["lease", "grant", "x"]),
        s(&["compaction", "3"]),
        s(&["compaction", "3"]),
        s(&["compaction", "1000"]),
        s(&["compaction", "4", "--physical"]),
        s(&["compaction", "x"]),
        s(&["get", "foo", "--rev=2"]),
        s(&["endpoint", "status"]),
        s(&["endpoint", "status", "-w", "json"]),
        s(&["endpoint", "health"]),
        s(&["endpoint", "health", "-w", "json"]),
        s(&["endpoint", "hashkv"]),
        s(&["endpoint", "hashkv", "--rev=2"]),
        s(&["endpoint", "hashkv", "-w", "json"]),
        s(&["endpoint", "hashkv", "-w", "table"]),
        s(&["endpoint", "hashkv", "-w", "fields"]),
        s(&["endpoint", "hashkv", "--rev=100000"]),
        s(&["defrag"]),
        s(&["alarm", "list"]),
        s(&["alarm", "list", "-w", "json"]),
        s(&["alarm", "disarm"]),
        s(&["member", "list"]),
        s(&["member", "list", "-w", "json"]),
        s(&["member", "list", "-w", "json", "--hex"]),
        s(&["member", "list", "-w", "fields"]),
        s(&["member", "list", "-w", "table"]),
        s(&["member", "add"]),
        s(&["member", "add", "new"]),
        s(&["member", "add", "new", "http://new.test:2380"]),
        s(&["member", "remove"]),
        s(&["member", "remove", "zz"]),
        s(&["member", "remove", "1234"]),
        s(&["member", "update", "1234"]),
        s(&["member", "update", "1234", "--peer-urls=http://x.test:2380"]),
        s(&["member", "promote", "1234"]),
        s(&["move-leader"]),
        s(&["move-leader", "zz"]),
        s(&["move-leader", "1234"]),
    ]
}

/// A learner's life, with the id each tool's server gave it masked.
fn learner_script(own: &str, learner: &str) -> Vec<Vec<String>> {
    let v = |args: &[&str]| args.iter().map(|a| a.to_string()).collect::<Vec<_>>();
    vec![
        // A peer URL a member already has: refused. (A second voter for a
        // cluster of one would be accepted, as etcd accepts it, and leave
        // the server without a quorum for the rest of the script.)
        v(&[
            "member",
            "add",
            "dup",
            "--peer-urls=http://learner.test:2380",
        ]),
        v(&["member", "list"]),
        v(&["member", "list", "-w", "json"]),
        v(&[
            "member",
            "update",
            learner,
            "--peer-urls=http://moved.test:2380",
        ]),
        v(&["member", "list", "-w", "table"]),
        // Never started, so never in sync with the leader.
        v(&["member", "promote", learner]),
        v(&["member", "promote", learner, "-w", "json"]),
        v(&["move-leader", learner]),
        v(&["move-leader", own]),
        v(&["move-leader", own, "-w", "json"]),
        v(&["member", "remove", learner, "-w", "json"]),
        v(&["member", "remove", learner]),
        v(&["member", "list"]),
    ]
}

fn lease_script(id: &str) -> Vec<Vec<String>> {
    let v = |args: &[&str]| args.iter().map(|a| a.to_string()).collect::<Vec<_>>();
    vec![
        v(&["put", "leased", "v", &format!("--lease={id}")]),
        v(&["lease", "timetolive", id, "--keys"]),
        v(&["lease", "timetolive", id, "--keys", "-w", "json"]),
        v(&["lease", "keep-alive", "--once", id]),
        v(&["lease", "keep-alive", "--once", id, "-w", "json"]),
        v(&["lease", "list"]),
        v(&["lease", "revoke", id]),
        v(&["lease", "timetolive", id]),
        v(&["get", "leased"]),
    ]
}

#[test]
fn etcdctl_3_5_is_the_golden_output() {
    let Some(Side {
        etcdctl,
        rt,
        golden,
        ours,
        ge,
        oe,
    }) = side_by_side()
    else {
        return;
    };
    let mut mismatches = Vec::new();
    let mut compare = |label: String, want: Run, got: Run| {
        if want != got {
            mismatches.push(format!("{label}\n  etcdctl: {want:?}\n  harkctl: {got:?}"));
        }
    };
    for (args, stdin) in script() {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let want = run(&etcdctl, &ge, &a, &stdin);
        let got = run(HARKCTL, &oe, &a, &stdin);
        compare(format!("{args:?}"), want, got);
    }
    // Leases: each tool works with the id its own server granted.
    let grant = |bin: &str, ep: &str| {
        let r = run(bin, ep, &["lease", "grant", "600"], "");
        let id = r.stdout.split_whitespace().nth(1).unwrap().to_string();
        (r, id)
    };
    let (want, _) = grant(&etcdctl, &ge);
    let (got, _) = grant(HARKCTL, &oe);
    compare("lease grant".into(), want, got);
    let raw_id = |bin: &str, ep: &str| {
        let out = Command::new(bin)
            .args([
                format!("--endpoints={ep}"),
                "lease".into(),
                "grant".into(),
                "600".into(),
            ])
            .output()
            .unwrap();
        String::from_utf8(out.stdout)
            .unwrap()
            .split_whitespace()
            .nth(1)
            .unwrap()
            .to_string()
    };
    let (gid, oid) = (raw_id(&etcdctl, &ge), raw_id(HARKCTL, &oe));
    for (g, o) in lease_script(&gid).into_iter().zip(lease_script(&oid)) {
        let ga: Vec<&str> = g.iter().map(String::as_str).collect();
        let oa: Vec<&str> = o.iter().map(String::as_str).collect();
        compare(
            format!("{g:?}"),
            run(&etcdctl, &ge, &ga, ""),
            run(HARKCTL, &oe, &oa, ""),
        );
    }
    // Members: each tool adds a learner, then works with the id it got.
    let own = run(&etcdctl, &ge, &["member", "list"], "")
        .stdout
        .split(',')
        .next()
        .unwrap()
        .to_string();
    let add_learner = |bin: &str, ep: &str, json: bool| {
        let mut args = vec![
            "member",
            "add",
            "learner",
            "--learner",
            "--peer-urls=http://learner.test:2380",
        ];
        if json {
            args.extend(["-w", "json"]);
        }
        let out = Command::new(bin)
            .arg(format!("--endpoints={ep}"))
            .args(&args)
            .output()
            .unwrap();
        let stdout = String::from_utf8(out.stdout).unwrap();
        let id: u64 = if json {
            let member = regex::Regex::new(r#""member":\{"ID":(\d+)"#).unwrap();
            member.captures(&stdout).unwrap()[1].parse().unwrap()
        } else {
            let hex = stdout.split_whitespace().nth(1).unwrap();
            u64::from_str_radix(hex, 16).unwrap()
        };
        let masked = stdout
            .replace(&format!("{id:16x}"), "<learner>")
            .replace(&id.to_string(), "<learner>");
        (masked, id)
    };
    for json in [false, true] {
        let (want, gid) = add_learner(&etcdctl, &ge, json);
        let (got, oid) = add_learner(HARKCTL, &oe, json);
        assert!(!want.is_empty(), "etcdctl added no learner");
        let printed = |stdout: String| Run {
            stdout: members_in_fixed_order(&stdout),
            error: Vec::new(),
            code: 0,
        };
        compare(
            format!("member add --learner (json: {json})"),
            printed(want),
            printed(got),
        );
        let (g, o) = (format!("{gid:x}"), format!("{oid:x}"));
        for (ga, oa) in learner_script(&own, &g)
            .into_iter()
            .zip(learner_script(&own, &o))
        {
            let ga: Vec<&str> = ga.iter().map(String::as_str).collect();
            let oa: Vec<&str> = oa.iter().map(String::as_str).collect();
            let masked = |r: Run, id: u64| Run {
                stdout: members_in_fixed_order(
                    &r.stdout
                        .replace(&format!("{id:16x}"), "<learner>")
                        .replace(&format!("{id:x}"), "<learner>")
                        .replace(&id.to_string(), "<learner>"),
                ),
                error: r.error,
                code: r.code,
            };
            compare(
                format!("{ga:?}"),
                masked(run(&etcdctl, &ge, &ga, ""), gid),
                masked(run(HARKCTL, &oe, &oa, ""), oid),
            );
        }
    }
    // Watches: history with prev_kv, in simple and json; and a command run
    // for each event (after `--`, so `--rev` goes before it).
    let revision = regex::Regex::new(r#""revision":(\d+)"#).unwrap();
    let each_event =
        "echo $ETCD_WATCH_REVISION $ETCD_WATCH_EVENT_TYPE $ETCD_WATCH_KEY $ETCD_WATCH_VALUE";
    for (mut args, exec, lines) in [
        (vec!["watch", "w", "--prev-kv"], vec![], 8),
        (vec!["watch", "w", "--prefix", "-w", "json"], vec![], 1),
        (vec!["watch", "w"], vec!["--", "sh", "-c", each_event], 8),
    ] {
        let mut first = String::new();
        for (bin, ep) in [(etcdctl.as_str(), &ge), (HARKCTL, &oe)] {
            let put = run(bin, ep, &["put", "w", "1", "-w", "json"], "").stdout;
            first = revision.captures(&put).unwrap()[1].to_string();
            run(bin, ep, &["put", "w", "2"], "");
            run(bin, ep, &["del", "w"], "");
        }
        let rev = format!("--rev={first}");
        args.push(&rev);
        args.extend(exec);
        let want = run_watch(&etcdctl, &ge, &args, lines);
        let got = run_watch(HARKCTL, &oe, &args, lines);
        assert_eq!(want.len(), lines, "etcdctl printed {want:?}");
        if want != got {
            mismatches.push(format!("{args:?}\n  etcdctl: {want:?}\n  harkctl: {got:?}"));
        }
    }
    rt.block_on(golden.running.shutdown());
    rt.block_on(ours.running.shutdown());
    assert!(
        mismatches.is_empty(),
        "{} mismatches:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}

#[test]
fn fixed_outputs() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let srv = rt.block_on(server());
    let ep = srv.running.endpoints()[0].clone();
    let out = |args: &[&str], stdin: &str| run(HARKCTL, &ep, args, stdin);
    assert_eq!(out(&["put", "k", "v"], "").stdout, "OK\n");
    assert_eq!(
        out(&["version"], "").stdout,
        format!(
            "harkctl version: {}\nAPI version: 3.5\n",
            env!("CARGO_PKG_VERSION")
        )
    );
    assert_eq!(
        out(&["put", "--prev-kv", "k", "v2"], "").stdout,
        "OK\nk\nv\n"
    );
    assert_eq!(out(&["get", "k"], "").stdout, "k\nv2\n");
    assert_eq!(
        out(&["get", "--hex", "k"], "").stdout,
        "\\x6b\n\\x76\\x32\n"
    );
    assert_eq!(
        out(&["txn"], "value(\"k\") = \"v2\"\n\nput k v3\nget k\n\n\n").stdout,
        "SUCCESS\n\nOK\n\nk\nv3\n"
    );
    assert_eq!(out(&["del", "--prev-kv", "k"], "").stdout, "1\nk\nv3\n");
    assert_eq!(out(&["del", "k"], "").stdout, "0\n");
    assert_eq!(
        out(&["compaction", "2"], "").stdout,
        "compacted revision 2\n"
    );
    // (Lease ids are masked by `run`.)
    assert_eq!(
        out(&["lease", "grant", "60"], "").stdout,
        "lease <lease> granted with TTL(60s)\n"
    );
    let e = out(&["get", "k", "--rev=100"], "");
    assert_eq!(
        (e.stdout.as_str(), e.error, e.code),
        (
            "",
            vec!["Error: etcdserver: mvcc: required revision is a future revision".to_string()],
            1
        )
    );
    let bad = out(&["get"], "");
    assert_eq!(bad.code, 128);
    rt.block_on(srv.running.shutdown());
}

#[test]
fn interactive_watch_takes_watch_and_progress_lines() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let srv = rt.block_on(server());
    let ep = srv.running.endpoints()[0].clone();
    let mut child = Command::new(HARKCTL)
        .args([format!("--endpoints={ep}"), "watch".into(), "-i".into()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "watch k --prev-kv").unwrap();
    writeln!(stdin, "bogus").unwrap();
    stdin.flush().unwrap();
    let rx = lines_of(child.stdout.take().unwrap());
    // The watch is created asynchronously: write until its first event shows.
    let mut lines = Vec::new();
    for _ in 0..50 {
        run(HARKCTL, &ep, &["put", "k", "v"], "");
        if let Ok(l) = rx.recv_timeout(Duration::from_millis(200)) {
            lines.push(l);
            break;
        }
    }
    while lines.len() < 3 {
        lines.push(rx.recv_timeout(Duration::from_secs(10)).unwrap());
    }
    assert_eq!(lines, ["PUT", "k", "v"]);
    writeln!(stdin, "progress").unwrap();
    stdin.flush().unwrap();
    // Events of further puts may come first; then the progress line.
    let mut later = Vec::new();
    loop {
        let l = rx.recv_timeout(Duration::from_secs(10)).unwrap();
        if l.starts_with("progress notify: ") {
            break;
        }
        later.push(l);
        assert!(later.len() < 500, "no progress line: {later:?}");
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("Invalid command bogus (only support watch)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("Error: error reading watch request line: EOF"),
        "{stderr}"
    );
    rt.block_on(srv.running.shutdown());
}

#[test]
fn member_order_does_not_count() {
    // The four outputs of one CI run where the learner's random id sorted
    // before the first member's on etcd and after it on Hark.
    let pairs = [
        (
            "ETCD_NAME=\"learner\"\nETCD_INITIAL_CLUSTER=\"learner=http://l.test:2380,golden=http://g.test:2380\"\n",
            "ETCD_NAME=\"learner\"\nETCD_INITIAL_CLUSTER=\"golden=http://g.test:2380,learner=http://l.test:2380\"\n",
        ),
        (
            "<lease>, unstarted, , http://l.test:2380, , true\n<lease>, started, golden, http://g.test:2380, http://g.test:2379, false\n",
            "<lease>, started, golden, http://g.test:2380, http://g.test:2379, false\n<lease>, unstarted, , http://l.test:2380, , true\n",
        ),
        (
            r#"{"header":{"revision":13},"members":[{"ID":<lease>,"peerURLs":["http://l.test:2380"],"isLearner":true},{"ID":<lease>,"name":"golden","peerURLs":["http://g.test:2380"]}]}"#,
            r#"{"header":{"revision":13},"members":[{"ID":<lease>,"name":"golden","peerURLs":["http://g.test:2380"]},{"ID":<lease>,"peerURLs":["http://l.test:2380"],"isLearner":true}]}"#,
        ),
        (
            "+---+\n|  ID  | NAME |\n+---+\n| <lease> |        |\n| <lease> | golden |\n+---+\n",
            "+---+\n|  ID  | NAME |\n+---+\n| <lease> | golden |\n| <lease> |        |\n+---+\n",
        ),
    ];
    for (etcd, hark) in pairs {
        assert_ne!(etcd, hark);
        assert_eq!(members_in_fixed_order(etcd), members_in_fixed_order(hark));
        // Only the order is forgiven: a changed member still shows.
        let changed = hark.replacen("golden", "other", 1);
        assert_ne!(
            members_in_fixed_order(etcd),
            members_in_fixed_order(&changed)
        );
    }
    assert_eq!(
        members_in_fixed_order("|  ID  | STATUS |\n| <lease> | b |\n| <lease> | a |\n"),
        "|  ID  | STATUS |\n| <lease> | a |\n| <lease> | b |\n"
    );
}

#[test]
fn a_short_id_masks_as_a_full_one() {
    // The two outputs of a CI run where etcd's learner drew a 15-digit id.
    let etcd = "Member  bd0e09990baa3ac updated in cluster 8e9e05c52164694d\n\
                |  bd0e09990baa3ac | unstarted |\n| 8e9e05c52164694d |   started |\n";
    let hark = "Member 9f4c1e0d2b3a4c5d updated in cluster 1c2d3e4f5a6b7c8d\n\
                | 1c2d3e4f5a6b7c8d |   started |\n| 9f4c1e0d2b3a4c5d | unstarted |\n";
    let masked = |s: &str| members_in_fixed_order(&mask(s, "<none>"));
    assert_eq!(masked(etcd), masked(hark));
    assert!(masked(etcd).starts_with("Member <lease> updated in cluster <lease>\n"));
    // The id still has to be there.
    assert_ne!(
        masked(etcd),
        masked(&hark.replacen("9f4c1e0d2b3a4c5d", "", 1))
    );
}

/// The auth commands: etcdctl 3.5 against one server, harkctl against
/// another, one script; `R` runs as root, `A` as alice.
#[test]
fn etcdctl_3_5_auth_output() {
    let Some(Side {
        etcdctl,
        rt,
        golden,
        ours,
        ge,
        oe,
    }) = side_by_side()
    else {
        return;
    };
    let steps: &[(&[&str], &str)] = &[
        (&["user", "add"], ""),
        (&["user", "add", ":x"], ""),
        (&["user", "add", "root:rootpw"], ""),
        (&["user", "add", "root", "--interactive=false"], "again\n"),
        (&["auth", "status"], ""),
        (&["auth", "enable"], ""),
        (&["get", "a"], ""),
        (&["R", "auth", "status"], ""),
        (
            &["R", "user", "add", "alice", "--interactive=false"],
            "alicepw\n",
        ),
        (&["R", "user", "add", "carol", "--new-user-password=c"], ""),
        (&["R", "role", "add", "r"], ""),
        (&["R", "role", "add", "r"], ""),
        (
            &["R", "role", "grant-permission", "r", "read", "a", "c"],
            "",
        ),
        (
            &[
                "R",
                "role",
                "grant-permission",
                "--prefix",
                "r",
                "readwrite",
                "w",
            ],
            "",
        ),
        (
            &[
                "R",
                "role",
                "grant-permission",
                "--from-key",
                "r",
                "READ",
                "z",
            ],
            "",
        ),
        (&["R", "role", "grant-permission", "r", "write", "p"], ""),
        (&["R", "role", "grant-permission", "r", "bogus", "p"], ""),
        (
            &[
                "R",
                "role",
                "grant-permission",
                "--prefix",
                "--from-key",
                "r",
                "read",
                "p",
            ],
            "",
        ),
        (
            &[
                "R",
                "role",
                "grant-permission",
                "--prefix",
                "r",
                "read",
                "p",
                "q",
            ],
            "",
        ),
        (&["R", "role", "grant-permission", "r", "read"], ""),
        (&["R", "user", "grant-role", "alice", "r"], ""),
        (&["R", "user", "grant-role", "alice", "nope"], ""),
        (&["R", "role", "get", "r"], ""),
        (&["R", "role", "get", "nope"], ""),
        (&["R", "user", "get", "alice"], ""),
        (&["R", "user", "get", "--detail", "alice"], ""),
        (&["R", "user", "get", "nobody"], ""),
        (&["R", "user", "list"], ""),
        (&["R", "role", "list"], ""),
        (&["R", "-w", "json", "user", "list"], ""),
        (&["R", "-w", "json", "role", "list"], ""),
        (&["R", "-w", "json", "role", "get", "r"], ""),
        (&["R", "-w", "json", "user", "get", "alice"], ""),
        (&["R", "-w", "json", "auth", "status"], ""),
        (&["R", "-w", "json", "role", "add", "j"], ""),
        (&["R", "-w", "json", "role", "delete", "j"], ""),
        (&["R", "-w", "fields", "auth", "status"], ""),
        (&["R", "-w", "table", "user", "list"], ""),
        (&["R", "-w", "fields", "role", "get", "r"], ""),
        (&["R", "-w", "fields", "user", "get", "alice"], ""),
        (&["R", "-w", "table", "role", "get", "r"], ""),
        (&["A", "get", "a"], ""),
        (&["A", "put", "a", "2"], ""),
        (&["A", "put", "w1", "2"], ""),
        (&["A", "user", "list"], ""),
        (&["A", "user", "get", "alice"], ""),
        (&["--user", "alice:wrong", "get", "a"], ""),
        (
            &["--user", "alice", "--password", "alicepw", "get", "a"],
            "",
        ),
        (
            &["--user", "alice:x", "--password", "alicepw", "get", "a"],
            "",
        ),
        (&["R", "role", "revoke-permission", "r", "a", "c"], ""),
        (&["R", "role", "revoke-permission", "r", "a", "c"], ""),
        (
            &["R", "role", "revoke-permission", "--prefix", "r", "w"],
            "",
        ),
        (
            &["R", "role", "revoke-permission", "--from-key", "r", "z"],
            "",
        ),
        (&["R", "role", "revoke-permission", "r", "p"], ""),
        (
            &["R", "user", "passwd", "alice", "--interactive=false"],
            "newpw\n",
        ),
        (&["--user", "alice:newpw", "user", "get", "alice"], ""),
        (&["R", "user", "revoke-role", "alice", "r"], ""),
        (&["R", "user", "revoke-role", "alice", "r"], ""),
        (&["R", "user", "delete", "root"], ""),
        (&["R", "role", "delete", "root"], ""),
        (&["R", "user", "delete", "alice"], ""),
        (&["R", "role", "delete", "r"], ""),
        (&["R", "auth", "disable"], ""),
        (&["auth", "status"], ""),
        (&["user", "list"], ""),
    ];
    let mut mismatches = Vec::new();
    for (args, stdin) in steps {
        let args: Vec<&str> = args
            .iter()
            .flat_map(|a| match *a {
                "R" => vec!["--user", "root:rootpw"],
                "A" => vec!["--user", "alice:alicepw"],
                other => vec![other],
            })
            .collect();
        let want = run(&etcdctl, &ge, &args, stdin);
        let got = run(HARKCTL, &oe, &args, stdin);
        if want != got {
            mismatches.push(format!("{args:?}\n  etcdctl: {want:?}\n  harkctl: {got:?}"));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
    rt.block_on(golden.running.shutdown());
    rt.block_on(ours.running.shutdown());
}

/// A CA and, signed by it, a server certificate for 127.0.0.1 and client
/// certificates named root and alice; and a second CA that signed nothing
/// the server knows.
fn pki(dir: &std::path::Path) {
    use rcgen::{
        BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose,
        IsCa, KeyPair, KeyUsagePurpose,
    };
    let write = |name: &str, body: String| std::fs::write(dir.join(name), body).unwrap();
    let ca = |name: &str| {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.distinguished_name.push(DnType::CommonName, name);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap()
    };
    let ours = ca("harkctl test CA");
    write("ca.pem", ours.pem());
    write("other-ca.pem", ca("another CA").pem());
    for (name, server) in [("server", true), ("root", false), ("alice", false)] {
        let sans = if server {
            vec!["127.0.0.1".to_string()]
        } else {
            vec![]
        };
        let mut params = CertificateParams::new(sans).unwrap();
        params.distinguished_name.push(DnType::CommonName, name);
        params.extended_key_usages = vec![if server {
            ExtendedKeyUsagePurpose::ServerAuth
        } else {
            ExtendedKeyUsagePurpose::ClientAuth
        }];
        let key = KeyPair::generate().unwrap();
        write(
            &format!("{name}.pem"),
            params.signed_by(&key, &ours).unwrap().pem(),
        );
        write(&format!("{name}.key"), key.serialize_pem());
    }
}

#[test]
fn etcdctl_3_5_tls_output() {
    let Some(etcdctl) = find_on_path("etcdctl-3.5") else {
        assert_ne!(
            std::env::var("HARK_REQUIRE_ETCDCTL").as_deref(),
            Ok("1"),
            "etcdctl-3.5 is not on PATH"
        );
        return;
    };
    let etcdctl = etcdctl.to_str().unwrap().to_string();
    let certs = tempfile::tempdir().unwrap();
    pki(certs.path());
    let path = |name: &str| certs.path().join(name).display().to_string();
    let listen = [
        "--listen-client-urls=https://127.0.0.1:0".to_string(),
        format!("--cert-file={}", path("server.pem")),
        format!("--key-file={}", path("server.key")),
        format!("--trusted-ca-file={}", path("ca.pem")),
        "--client-cert-auth".into(),
    ];
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let golden = rt.block_on(server_with(&listen));
    let ours = rt.block_on(server_with(&listen));
    let ge = golden.running.endpoints()[0].clone();
    let oe = ours.running.endpoints()[0].clone();
    assert!(ge.starts_with("https://"), "{ge}");
    let ca = [format!("--cacert={}", path("ca.pem"))];
    let as_user = |who: &str| {
        vec![
            format!("--cert={}", path(&format!("{who}.pem"))),
            format!("--key={}", path(&format!("{who}.key"))),
        ]
    };
    let root = as_user("root");
    let alice = as_user("alice");
    let with = |parts: &[&[String]], args: &[&str]| -> Vec<String> {
        parts
            .iter()
            .flat_map(|p| p.iter().cloned())
            .chain(args.iter().map(|a| a.to_string()))
            .collect()
    };
    let short = "--command-timeout=2s".to_string();
    let ca_short = [ca[0].clone(), short.clone()];
    let other_ca_short = [format!("--cacert={}", path("other-ca.pem")), short];
    let skip = [
        "--insecure-skip-tls-verify".to_string(),
        "--insecure-transport=false".into(),
    ];
    let none: [String; 0] = [];
    let steps: Vec<Vec<String>> = vec![
        with(&[&ca, &root], &["put", "k", "v"]),
        with(&[&ca, &alice], &["get", "k"]),
        with(&[&ca, &root], &["-w", "json", "get", "k"]),
        with(&[&skip, &root], &["get", "k"]),
        // Refused: no client certificate, a CA that did not sign the server.
        with(&[&ca_short, &none], &["get", "k"]),
        with(&[&other_ca_short, &root], &["get", "k"]),
        // Auth over TLS: the certificate's common name is the user.
        with(&[&ca, &root], &["user", "add", "root:rootpw"]),
        with(&[&ca, &root], &["role", "add", "root"]),
        with(&[&ca, &root], &["user", "grant-role", "root", "root"]),
        with(&[&ca, &root], &["auth", "enable"]),
        with(&[&ca, &root], &["put", "k", "w"]),
        with(&[&ca, &alice], &["get", "k"]),
        with(&[&ca, &alice], &["--user", "root:rootpw", "get", "k"]),
        with(&[&ca, &alice], &["--user", "root:wrong", "get", "k"]),
        with(&[&ca, &root], &["auth", "status"]),
        with(&[&ca, &root], &["auth", "disable"]),
    ];
    let mut mismatches = Vec::new();
    for args in &steps {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let want = run(&etcdctl, &ge, &args, "");
        let got = run(HARKCTL, &oe, &args, "");
        if want != got {
            mismatches.push(format!("{args:?}\n  etcdctl: {want:?}\n  harkctl: {got:?}"));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
    rt.block_on(golden.running.shutdown());
    rt.block_on(ours.running.shutdown());
}

#[test]
fn dial_timeout_bounds_a_server_that_never_answers() {
    // Takes connections (the kernel's backlog) and never says a word, so
    // the TLS handshake hangs: only the dial timeout can end it before the
    // command timeout.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("https://{}", silent.local_addr().unwrap());
    let args = [
        "--insecure-skip-tls-verify",
        "--insecure-transport=false",
        "--dial-timeout=5s",
        "--command-timeout=12s",
        "get",
        "k",
    ];
    let started = std::time::Instant::now();
    let ours = run(HARKCTL, &endpoint, &args, "");
    let took = started.elapsed();
    assert_eq!(
        (ours.error.as_slice(), ours.code),
        (&["Error: context deadline exceeded".to_string()][..], 1),
        "{ours:?}"
    );
    // Ended by the 5 s dial timeout: not the 2 s default, nor the command
    // timeout.
    assert!(
        took >= Duration::from_millis(4500) && took < Duration::from_secs(11),
        "ended by --dial-timeout: {took:?}"
    );
    // etcdctl 3.5 prints the same, though it waits out the command timeout.
    if let Some(etcdctl) = find_on_path("etcdctl-3.5") {
        let theirs = run(etcdctl.to_str().unwrap(), &endpoint, &args, "");
        assert_eq!(ours, theirs);
    }
    drop(silent);
}

/// `harkctl completion <shell>` (etcdctl 3.6's command): bash loads the
/// script and completes harkctl with it; the others get a script naming it.
#[test]
fn completion_scripts_load_in_their_shells() {
    let script = |shell: &str| {
        let out = Command::new(HARKCTL)
            .args(["completion", shell])
            .output()
            .unwrap();
        assert!(out.status.success(), "{shell}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    for shell in ["bash", "zsh", "fish", "powershell"] {
        assert!(script(shell).contains("harkctl"), "{shell}");
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("harkctl.bash");
    std::fs::write(&path, script("bash")).unwrap();
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!("source {} && complete -p harkctl", path.display()))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && said.contains("harkctl"), "{out:?}");
    let bad = Command::new(HARKCTL)
        .args(["completion", "tcsh"])
        .output()
        .unwrap();
    assert!(!bad.status.success());
}
