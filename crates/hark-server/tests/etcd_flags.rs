//! The `hark` binary started as etcd is: with every etcd 3.5.17 and 3.6.0
//! flag it does not act on (`etcd-flags/*.txt`, classified in
//! `config/etcd_flags.rs`), which it warns about once each, by name; and
//! from `ETCD_*` variables alone, as Debian's unit and `/etc/default/etcd`
//! configure etcd; and from etcd's own sample `--config-file`.

mod common;

use std::collections::BTreeSet;
use std::process::Command;

use hark_server::config::etcd_flags::{IfSet, Takes, WITHOUT_EFFECT};

use common::{free_port, logs, ready, spawn, spawn_exactly, stop_cleanly};

/// The log's zap JSON lines at `level` (the harness's `--- file` headers
/// skipped).
fn zap_lines(log: &str, level: &str) -> Vec<serde_json::Value> {
    log.lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["level"] == level)
        .collect()
}

/// `--flag` or `--flag=<example>` for each flag set aside, from both lists.
fn set_aside_flags() -> Vec<(String, String)> {
    let mut seen = BTreeSet::new();
    let mut flags = Vec::new();
    for version in ["v3.5.17", "v3.6.0"] {
        let path = format!("{}/etcd-flags/{version}.txt", env!("CARGO_MANIFEST_DIR"));
        for line in std::fs::read_to_string(path).unwrap().lines() {
            let mut parts = line.splitn(3, ' ');
            let Some(name) = parts.next().and_then(|n| n.strip_prefix("--")) else {
                continue;
            };
            let Some(w) = WITHOUT_EFFECT.iter().find(|w| w.flag == name) else {
                continue; // Hark's own flag
            };
            if !seen.insert(name.to_string()) {
                continue;
            }
            let arg = match (w.takes, parts.nth(1)) {
                (Takes::Switch, _) => format!("--{name}"),
                (Takes::Value, example) => {
                    let example = example.unwrap_or("");
                    assert!(
                        w.if_set == IfSet::Warn || example.is_empty() || example == "*",
                        "{name}: a guarded flag's example must be its harmless default"
                    );
                    format!("--{name}={example}")
                }
            };
            flags.push((name.to_string(), arg));
        }
    }
    flags
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_etcd_flag_without_effect_is_accepted_and_warned_about_once() {
    let flags = set_aside_flags();
    assert!(flags.len() > 70, "{} flags", flags.len());
    let cwd = tempfile::tempdir().unwrap();
    let endpoint = format!("http://127.0.0.1:{}", free_port());
    let mut args = vec![format!("--listen-client-urls={endpoint}")];
    args.extend(flags.iter().map(|(_, arg)| arg.clone()));
    let mut child = spawn(cwd.path(), &args, &[]);
    let mut c = ready(&endpoint, &mut child).await;
    c.put("swapped", "in", None).await.unwrap();
    let got = c.get("swapped", None).await.unwrap();
    assert_eq!(got.kvs()[0].value(), b"in");

    let log = logs(cwd.path());
    let warnings = zap_lines(&log, "warn");
    let mut warned = 0;
    for (name, arg) in &flags {
        let about: Vec<_> = warnings
            .iter()
            .filter(|w| w["flag"] == format!("--{name}"))
            .collect();
        // Given empty, a flag is not given at all (as in etcd): nothing
        // to warn about.
        if arg.ends_with('=') {
            assert!(about.is_empty(), "--{name}= is its default: {about:?}");
            continue;
        }
        warned += 1;
        assert_eq!(about.len(), 1, "--{name}: {about:?}\n{log}");
        assert_eq!(about[0]["msg"], "etcd flag has no effect in Hark");
        assert!(about[0]["reason"].as_str().is_some_and(|r| !r.is_empty()));
    }
    assert!(warned > 40, "{warned} flags with a value or a switch");
    stop_cleanly(&mut child, cwd.path());
}

#[test]
fn a_guarded_flag_with_a_value_stops_the_start_with_a_clear_error() {
    let out = Command::new(common::HARK)
        .args(["--discovery=https://discovery.etcd.io/3e86b59982e49066c5d813af1c2e2579cbf573de"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--discovery=")
            && err.contains("is not supported")
            && err.contains("--initial-cluster"),
        "{err}"
    );
}

/// Debian's etcd unit sets `ETCD_NAME` and `ETCD_DATA_DIR` and reads the
/// rest from `/etc/default/etcd`; `ExecStart` passes no flag.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_member_configured_by_etcd_variables_alone_serves_as_configured() {
    let cwd = tempfile::tempdir().unwrap();
    let data_dir = cwd.path().join("var/lib/etcd/default");
    let client = format!("http://127.0.0.1:{}", free_port());
    let peer = format!("http://127.0.0.1:{}", free_port());
    let env = [
        ("ETCD_NAME", "debian-host".to_string()),
        ("ETCD_DATA_DIR", data_dir.display().to_string()),
        ("ETCD_LISTEN_CLIENT_URLS", client.clone()),
        ("ETCD_ADVERTISE_CLIENT_URLS", client.clone()),
        ("ETCD_LISTEN_PEER_URLS", peer.clone()),
        ("ETCD_INITIAL_ADVERTISE_PEER_URLS", peer.clone()),
        ("ETCD_INITIAL_CLUSTER", format!("debian-host={peer}")),
        ("ETCD_INITIAL_CLUSTER_TOKEN", "debian-cluster".to_string()),
        ("ETCD_PRE_VOTE", "true".to_string()),
        ("ETCD_MEMORY_MLOCK", "true".to_string()),
        ("ETCD_UNSUPPORTED_ARCH", "arm64".to_string()),
        ("DAEMON_ARGS", String::new()),
    ];
    let mut child = spawn_exactly(cwd.path(), &[], &env);
    let mut c = ready(&client, &mut child).await;
    let members = c.member_list().await.unwrap();
    assert_eq!(members.members()[0].name(), "debian-host");
    assert_eq!(members.members()[0].peer_urls(), [peer.as_str()]);
    assert_eq!(members.members()[0].client_urls(), [client.as_str()]);
    c.put("k", "v", None).await.unwrap();
    assert!(data_dir.is_dir(), "the data dir ETCD_DATA_DIR names");
    let log = logs(cwd.path());
    let warnings = zap_lines(&log, "warn");
    let mlock = warnings
        .iter()
        .filter(|w| w["flag"] == "--memory-mlock")
        .count();
    assert_eq!(mlock, 1, "{log}");
    // `--pre-vote` is one Hark acts on: no warning.
    assert!(!warnings.iter().any(|w| w["flag"] == "--pre-vote"), "{log}");
    assert!(
        warnings
            .iter()
            .any(|w| w["msg"] == "unrecognized environment variable"
                && w["variable"] == "ETCD_UNSUPPORTED_ARCH"),
        "{log}"
    );
    stop_cleanly(&mut child, cwd.path());
}

#[test]
fn a_flag_given_on_the_command_line_and_in_etcd_variables_is_an_error() {
    let out = Command::new(common::HARK)
        .args(["--name=from-flag"])
        .env("ETCD_NAME", "from-env")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("conflicting environment variable \"ETCD_NAME\" is shadowed by corresponding command-line flag"),
        "{err}"
    );
}

/// `--wal-dir`: the replicated log lives there, the store stays in the
/// data dir, a restart finds both; started without it, the member refuses
/// rather than serve a store whose log it cannot see.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_raft_log_goes_to_the_wal_dir() {
    let cwd = tempfile::tempdir().unwrap();
    let (data, wal) = (cwd.path().join("data"), cwd.path().join("wal"));
    let endpoint = format!("http://127.0.0.1:{}", free_port());
    let args = vec![
        format!("--listen-client-urls={endpoint}"),
        format!("--data-dir={}", data.display()),
        format!("--wal-dir={}", wal.display()),
    ];
    let mut child = spawn(cwd.path(), &args, &[]);
    let mut c = ready(&endpoint, &mut child).await;
    c.put("in", "the log", None).await.unwrap();
    drop(c);
    stop_cleanly(&mut child, cwd.path());
    assert!(
        std::fs::read_dir(&wal).unwrap().count() > 0,
        "the log is in --wal-dir"
    );
    assert!(
        !data.join("raft").join("log").exists(),
        "and not in the data dir"
    );

    let mut child = spawn(cwd.path(), &args, &[]);
    let mut c = ready(&endpoint, &mut child).await;
    assert_eq!(
        c.get("in", None).await.unwrap().kvs()[0].value(),
        b"the log"
    );
    drop(c);
    stop_cleanly(&mut child, cwd.path());

    let without = Command::new(common::HARK)
        .current_dir(cwd.path())
        .args([
            format!("--listen-client-urls={endpoint}"),
            format!("--data-dir={}", data.display()),
            "--listen-peer-urls=http://127.0.0.1:0".to_string(),
        ])
        .output()
        .unwrap();
    assert!(!without.status.success());
    let err = String::from_utf8_lossy(&without.stderr);
    assert!(
        err.contains("its log") && err.contains("is missing"),
        "{err}"
    );
}

/// The etcd release whose sample configuration file the test starts Hark
/// with. The file lives only in the source of etcd's root module; the Go
/// module proxy serves that source (3.6.8 and 3.7.0 carry the same file).
const ETCD_SOURCE_MODULE: &str = "go.etcd.io/etcd/v3@v3.7.0";

/// etcd's own sample configuration file, `etcd.conf.yml.sample`, from
/// etcd's source as the Go module proxy serves it (`HARK_ETCD_SAMPLE_CONFIG`
/// names another file). `None` without Go, which fails where
/// HARK_REQUIRE_GO=1 (CI).
fn etcd_sample_config() -> Option<String> {
    let path = match std::env::var_os("HARK_ETCD_SAMPLE_CONFIG") {
        Some(path) => std::path::PathBuf::from(path),
        None => common::go_module_dir(ETCD_SOURCE_MODULE)?.join("etcd.conf.yml.sample"),
    };
    let text = std::fs::read_to_string(&path);
    Some(text.unwrap_or_else(|e| panic!("etcd's sample config {}: {e}", path.display())))
}

/// `hark --config-file` with etcd's `etcd.conf.yml.sample`, changed only in
/// its two ports (2379 and 2380 would collide with other tests): the member
/// serves as the file says, knows every key in it, warns once about each
/// setting without effect, and ignores the other flags and the ETCD_* and
/// HARK_* variables, as etcd does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn etcds_sample_config_file_starts_a_member_alone() {
    let Some(sample) = etcd_sample_config() else {
        return;
    };
    let (client_port, peer_port) = (free_port(), free_port());
    for port in ["localhost:2379", "localhost:2380"] {
        assert_eq!(sample.matches(port).count(), 2, "{port} in the sample");
    }
    let text = sample
        .replace("localhost:2379", &format!("localhost:{client_port}"))
        .replace("localhost:2380", &format!("localhost:{peer_port}"));
    let cwd = tempfile::tempdir().unwrap();
    std::fs::write(cwd.path().join("etcd.conf.yml"), text).unwrap();
    let ignored_port = free_port();
    let env = [
        ("ETCD_NAME", "from-etcd-env".to_string()),
        ("HARK_NAME", "from-hark-env".to_string()),
        (
            "HARK_LISTEN_CLIENT_URLS",
            format!("http://127.0.0.1:{ignored_port}"),
        ),
    ];
    let args = [
        "--config-file=etcd.conf.yml".to_string(),
        "--max-txn-ops=1".to_string(),
    ];
    let mut child = spawn_exactly(cwd.path(), &args, &env);
    let mut c = ready(&format!("http://127.0.0.1:{client_port}"), &mut child).await;
    let members = c.member_list().await.unwrap();
    let me = &members.members()[0];
    assert_eq!(me.name(), "default");
    assert_eq!(me.peer_urls(), [format!("http://localhost:{peer_port}")]);
    assert_eq!(
        me.client_urls(),
        [format!("http://localhost:{client_port}")]
    );
    // --max-txn-ops=1 was ignored: two puts in one txn pass.
    let two = etcd_client::Txn::new().and_then([
        etcd_client::TxnOp::put("a", "1", None),
        etcd_client::TxnOp::put("b", "2", None),
    ]);
    c.txn(two).await.unwrap();
    assert!(
        cwd.path().join("default.hark").is_dir(),
        "the sample's empty data-dir is the default, <name>.hark"
    );
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", ignored_port)).is_err(),
        "HARK_LISTEN_CLIENT_URLS was ignored"
    );
    let log = logs(cwd.path());
    let info = zap_lines(&log, "info");
    assert!(
        info.iter().any(|l| l["msg"]
            .as_str()
            .unwrap()
            .starts_with("loaded server configuration")
            && l["path"] == "etcd.conf.yml"),
        "{log}"
    );
    let warnings = zap_lines(&log, "warn");
    for flag in [
        "--enable-pprof",
        "--max-wals",
        "--self-signed-cert-validity",
    ] {
        let n = warnings.iter().filter(|w| w["flag"] == flag).count();
        assert_eq!(n, 1, "{flag}: {log}");
    }
    assert!(
        !warnings
            .iter()
            .any(|w| w["msg"] == "unrecognized configuration file key"),
        "every key of etcd's sample is known: {log}"
    );
    // The sample's `log-level: debug` holds.
    assert!(!zap_lines(&log, "debug").is_empty(), "{log}");
    drop(c);
    stop_cleanly(&mut child, cwd.path());
}

/// Hark's own sample configuration (`contrib/hark.conf.yml.sample`, shipped
/// in the release archive and the .deb), changed only in its ports and data
/// dir: it starts a member that serves, with no key unknown and no setting
/// without effect.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn harks_sample_config_file_starts_a_member() {
    let sample = include_str!("../contrib/hark.conf.yml.sample");
    let (client_port, peer_port) = (free_port(), free_port());
    let cwd = tempfile::tempdir().unwrap();
    for (from, count) in [("127.0.0.1:2379", 2), ("127.0.0.1:2380", 3)] {
        assert_eq!(sample.matches(from).count(), count, "{from} in the sample");
    }
    let text = sample
        .replace("127.0.0.1:2379", &format!("127.0.0.1:{client_port}"))
        .replace("127.0.0.1:2380", &format!("127.0.0.1:{peer_port}"))
        .replace("/var/lib/hark/default", "sample.hark");
    std::fs::write(cwd.path().join("hark.conf.yml"), text).unwrap();
    let mut child = spawn_exactly(
        cwd.path(),
        &["--config-file=hark.conf.yml".to_string()],
        &[],
    );
    let mut c = ready(&format!("http://127.0.0.1:{client_port}"), &mut child).await;
    c.put("k", "v", None).await.unwrap();
    let members = c.member_list().await.unwrap();
    assert_eq!(members.members()[0].name(), "default");
    assert!(cwd.path().join("sample.hark").is_dir());
    let log = logs(cwd.path());
    let mut warnings = zap_lines(&log, "warn");
    // openraft's own note when a member that just made itself leader meets
    // a notice from before its vote: a race of its start, not a setting.
    warnings.retain(|line| {
        !line["msg"]
            .as_str()
            .is_some_and(|m| m.starts_with("A message will be ignored because Leader vote changed"))
    });
    assert!(
        warnings.is_empty(),
        "the sample sets nothing Hark warns about: {log}"
    );
    drop(c);
    stop_cleanly(&mut child, cwd.path());
}
