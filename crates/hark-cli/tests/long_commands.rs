//! harkctl's long commands as a user runs them: `check perf` against a
//! real server, the progress of `snapshot save | restore` (zap log lines
//! off a terminal, as etcdctl writes them; a bar on a terminal, through
//! `script`'s pseudo-terminal), and the man pages `man` reads.

use std::path::Path;
use std::process::{Command, Output};

use clap::Parser;

const HARKCTL: &str = env!("CARGO_BIN_EXE_harkctl");

struct Server {
    running: hark_server::RunningServer,
    _dir: tempfile::TempDir,
}

impl Server {
    async fn start() -> Server {
        let dir = tempfile::tempdir().unwrap();
        let config = hark_server::Config::try_parse_from([
            "hark".to_string(),
            "--listen-peer-urls=http://127.0.0.1:0".into(),
            "--listen-client-urls=http://127.0.0.1:0".into(),
            format!("--data-dir={}", dir.path().display()),
        ])
        .unwrap();
        Server {
            running: hark_server::start(&config).await.unwrap(),
            _dir: dir,
        }
    }

    fn endpoint(&self) -> String {
        self.running.endpoints()[0].clone()
    }
}

fn harkctl(endpoint: &str, args: &[&str]) -> Output {
    Command::new(HARKCTL)
        .arg(format!("--endpoints={endpoint}"))
        .args(args)
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The zap lines of a stderr, parsed; every one must have zap's keys first.
fn zap_lines(stderr: &str) -> Vec<serde_json::Map<String, serde_json::Value>> {
    stderr
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| {
            let line: serde_json::Map<String, serde_json::Value> =
                serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}"));
            // zap's keys lead, in zap's order (the map itself is sorted).
            let at: Vec<Option<usize>> = ["level", "ts", "caller", "msg"]
                .iter()
                .map(|k| l.find(&format!("\"{k}\":")))
                .collect();
            assert_eq!(at[0], Some(1), "{l}");
            assert!(at.windows(2).all(|w| w[0] < w[1]), "{l}");
            line
        })
        .collect()
}

fn msgs(lines: &[serde_json::Map<String, serde_json::Value>]) -> Vec<String> {
    lines
        .iter()
        .map(|l| l["msg"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_perf_reports_etcdctls_verdict_and_cleans_up() {
    let server = Server::start().await;
    let ep = server.endpoint();
    let run = tokio::task::spawn_blocking({
        let ep = ep.clone();
        move || {
            harkctl(
                &ep,
                &[
                    "check",
                    "perf",
                    "--load=s",
                    "--duration=3",
                    "--auto-compact",
                    "--auto-defrag",
                ],
            )
        }
    })
    .await
    .unwrap();
    let out = text(&run.stdout);
    assert_eq!(run.status.code(), Some(0), "{out}{}", text(&run.stderr));
    let lines: Vec<&str> = out.lines().collect();
    let shapes = [
        r"^compacted revision \d+$",
        r"^Finished defragmenting etcd member\[.+\]$",
        r"^PASS: Throughput is 1[3-6]\d writes/s$",
        r"^PASS: Slowest request took 0\.\d{6}s$",
        r"^PASS: Stddev is 0\.\d{6}s$",
        r"^PASS$",
    ];
    assert_eq!(lines.len(), shapes.len(), "{out}");
    for (line, shape) in lines.iter().zip(shapes) {
        assert!(
            regex::Regex::new(shape).unwrap().is_match(line),
            "{line} !~ {shape}"
        );
    }
    // The load's keys are gone, and so is their history.
    let mut client = etcd_client::Client::connect([ep.as_str()], None)
        .await
        .unwrap();
    let left = client
        .get(
            "/etcdctl-check-perf/",
            Some(
                etcd_client::GetOptions::new()
                    .with_prefix()
                    .with_count_only(),
            ),
        )
        .await
        .unwrap();
    assert_eq!(left.count(), 0);
    let put = client.put("/other", "x", None).await.unwrap();
    let compacted = client
        .get(
            "/etcdctl-check-perf/",
            Some(etcd_client::GetOptions::new().with_revision(2)),
        )
        .await
        .unwrap_err();
    assert!(compacted.to_string().contains("compacted"), "{compacted}");
    assert!(put.header().unwrap().revision() > 400);

    // A prefix with keys is refused before any load, as etcdctl does.
    client
        .put("/etcdctl-check-perf/left", "x", None)
        .await
        .unwrap();
    let refused = harkctl(&ep, &["check", "perf", "--duration=1"]);
    assert_eq!(refused.status.code(), Some(3));
    assert_eq!(
        text(&refused.stderr),
        "Error: prefix \"/etcdctl-check-perf/\" has keys. Delete with 'etcdctl del --prefix /etcdctl-check-perf/' first\n"
    );
    let unknown = harkctl(&ep, &["check", "perf", "--load=huge"]);
    assert_eq!(unknown.status.code(), Some(4));
    assert_eq!(text(&unknown.stderr), "Error: unknown load option huge\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snapshot_save_and_restore_log_etcds_lines_off_a_terminal() {
    let server = Server::start().await;
    let ep = server.endpoint();
    let dir = tempfile::tempdir().unwrap();
    let mut client = etcd_client::Client::connect([ep.as_str()], None)
        .await
        .unwrap();
    for i in 0..100 {
        client
            .put(format!("k{i}"), vec![7u8; 1000], None)
            .await
            .unwrap();
    }

    let file = dir.path().join("s.db");
    let saved = harkctl(&ep, &["snapshot", "save", file.to_str().unwrap()]);
    assert!(saved.status.success(), "{}", text(&saved.stderr));
    assert_eq!(
        text(&saved.stdout),
        format!("Snapshot saved at {}\n", file.display())
    );
    let lines = zap_lines(&text(&saved.stderr));
    assert_eq!(
        msgs(&lines),
        [
            "created temporary db file",
            "fetching snapshot",
            "fetched snapshot",
            "saved"
        ]
    );
    assert_eq!(lines[2]["endpoint"], ep.as_str());
    let size = std::fs::metadata(&file).unwrap().len();
    assert!(size > 100_000);
    let size_field = lines[2]["size"].as_str().unwrap();
    assert!(
        regex::Regex::new(r"^\d+(\.\d)? kB$")
            .unwrap()
            .is_match(size_field),
        "{size_field}"
    );
    assert_eq!(lines[3]["path"], file.to_str().unwrap());

    // etcdctl 3.5 saving from the same server logs the same lines.
    if let Some(etcdctl) = etcdctl() {
        let theirs = dir.path().join("theirs.db");
        let out = Command::new(etcdctl)
            .args([&format!("--endpoints={ep}"), "snapshot", "save"])
            .arg(&theirs)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        let etcd_lines = zap_lines(&text(&out.stderr));
        let keys =
            |l: &serde_json::Map<String, serde_json::Value>| l.keys().cloned().collect::<Vec<_>>();
        let etcd_main: Vec<_> = etcd_lines
            .iter()
            .filter(|l| msgs(&lines).contains(&l["msg"].as_str().unwrap().to_string()))
            .collect();
        assert_eq!(etcd_main.len(), 4, "{}", text(&out.stderr));
        for (ours, theirs) in lines.iter().zip(etcd_main) {
            assert_eq!(ours["msg"], theirs["msg"]);
            assert_eq!(keys(ours), keys(theirs));
        }
    }

    let restored = Command::new(HARKCTL)
        .args(["snapshot", "restore"])
        .arg(&file)
        .arg(format!(
            "--data-dir={}",
            dir.path().join("restored").display()
        ))
        .output()
        .unwrap();
    assert!(restored.status.success(), "{}", text(&restored.stderr));
    let lines = zap_lines(&text(&restored.stderr));
    assert_eq!(msgs(&lines), ["restoring snapshot", "restored snapshot"]);
    assert_eq!(lines[1]["path"], file.to_str().unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_terminal_a_bar_replaces_the_log_lines() {
    if !Path::new("/usr/bin/script").exists() {
        panic!("util-linux's `script` (Debian's bsdutils, always installed) is missing");
    }
    let server = Server::start().await;
    let ep = server.endpoint();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.db");
    // `script` runs harkctl on a pseudo-terminal and copies what it wrote.
    let shown = Command::new("script")
        .args(["-qec"])
        .arg(format!(
            "{HARKCTL} --endpoints={ep} snapshot save {}",
            file.display()
        ))
        .arg("/dev/null")
        .env("TERM", "xterm")
        .output()
        .unwrap();
    let screen = text(&shown.stdout);
    assert!(shown.status.success(), "{screen}");
    assert!(
        screen.contains(&format!("Snapshot saved at {}", file.display())),
        "{screen}"
    );
    assert!(
        !screen.contains(r#""msg":"#),
        "no log lines on a terminal: {screen}"
    );
    assert!(file.is_file());
}

#[test]
fn man_pages_read_in_man() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(HARKCTL)
        .arg("man")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    // man writes bold as a character, a backspace, the character again.
    let overstrike = regex::Regex::new(".\u{8}").unwrap();
    for (page, says) in [
        ("harkctl", "lock"),
        ("harkctl-check-perf", "--auto-defrag"),
        ("harkctl-snapshot-restore", "--skip-hash-check"),
        ("harkctl-defrag", "--cluster"),
    ] {
        let file = dir.path().join(format!("{page}.1"));
        let rendered = Command::new("man")
            .arg("-l")
            .arg(&file)
            .env("MANWIDTH", "200")
            .output()
            .unwrap_or_else(|e| panic!("man (Debian's man-db): {e}"));
        assert!(rendered.status.success(), "{}", text(&rendered.stderr));
        let plain = overstrike
            .replace_all(&text(&rendered.stdout), "")
            .into_owned();
        let name_line = format!("{page} - ");
        assert!(
            plain.contains(&name_line) || plain.contains(&name_line.replace('-', "\u{2010}")),
            "{page}: {plain}"
        );
        assert!(
            plain.contains(says) || plain.contains(&says.replace('-', "\u{2010}")),
            "{page} lacks {says}: {plain}"
        );
    }
}

fn etcdctl() -> Option<String> {
    let found = Command::new("etcdctl-3.5").arg("version").output().is_ok();
    if !found && std::env::var("HARK_REQUIRE_ETCDCTL").as_deref() == Ok("1") {
        panic!("etcdctl-3.5 is required (HARK_REQUIRE_ETCDCTL=1) but not on PATH");
    }
    found.then(|| "etcdctl-3.5".to_string())
}
