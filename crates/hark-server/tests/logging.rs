//! The member's log as etcd's log pipelines read it: zap's JSON by default,
//! every line of a start-up, a put and a shutdown; zap's console form; and
//! `--log-outputs` sending every line to each output named.

mod common;

use common::{free_port, logs, ready, spawn, stop_cleanly};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_start_a_put_and_a_shutdown_are_logged_as_zap_json_lines() {
    let cwd = tempfile::tempdir().unwrap();
    let endpoint = format!("http://127.0.0.1:{}", free_port());
    let mut child = spawn(
        cwd.path(),
        &[format!("--listen-client-urls={endpoint}")],
        &[],
    );
    let mut c = ready(&endpoint, &mut child).await;
    c.put("logged", "yes", None).await.unwrap();
    drop(c);
    stop_cleanly(&mut child, cwd.path());

    let log = logs(cwd.path());
    let ts = regex::Regex::new(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$").unwrap();
    let caller = regex::Regex::new(r"^[a-z0-9_]+/[A-Za-z0-9_/.-]+\.rs:\d+$").unwrap();
    let mut lines = 0;
    let mut messages = Vec::new();
    for line in log
        .lines()
        .filter(|l| !l.starts_with("--- ") && !l.is_empty())
    {
        let v: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        // zap's order: level, ts, caller, msg, then the fields.
        let at = |key: &str| line.find(&format!("\"{key}\":")).unwrap_or(usize::MAX);
        assert!(
            line.starts_with("{\"level\":") && at("ts") < at("caller") && at("caller") < at("msg"),
            "{line}"
        );
        let level = v["level"].as_str().unwrap();
        assert!(
            ["debug", "info", "warn", "error"].contains(&level),
            "{line}"
        );
        assert!(ts.is_match(v["ts"].as_str().unwrap()), "{line}");
        assert!(caller.is_match(v["caller"].as_str().unwrap()), "{line}");
        messages.push(v["msg"].as_str().unwrap().to_string());
        lines += 1;
    }
    assert!(lines > 10, "{log}");
    assert!(
        messages.iter().any(|m| m == "shutting down"),
        "the shutdown is logged: {messages:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_form_goes_to_every_output_named() {
    let cwd = tempfile::tempdir().unwrap();
    let endpoint = format!("http://127.0.0.1:{}", free_port());
    let (a, b) = (cwd.path().join("a.log"), cwd.path().join("b.log"));
    let mut child = spawn(
        cwd.path(),
        &[
            format!("--listen-client-urls={endpoint}"),
            "--log-format=console".into(),
            format!("--log-outputs={},{}", a.display(), b.display()),
        ],
        &[],
    );
    let c = ready(&endpoint, &mut child).await;
    drop(c);
    stop_cleanly(&mut child, cwd.path());
    let (a, b) = (
        std::fs::read_to_string(a).unwrap(),
        std::fs::read_to_string(b).unwrap(),
    );
    assert_eq!(a, b, "both outputs get every line");
    assert!(a.lines().count() > 10, "{a}");
    for line in a.lines() {
        let parts: Vec<&str> = line.split('\t').collect();
        assert!(parts.len() >= 4, "ts, level, caller, msg: {line}");
        assert!(
            ["debug", "info", "warn", "error"].contains(&parts[1]),
            "{line}"
        );
        if let Some(fields) = parts.get(4) {
            serde_json::from_str::<serde_json::Value>(fields)
                .unwrap_or_else(|e| panic!("fields not JSON ({e}): {line}"));
        }
    }
    let stderr = logs(cwd.path());
    assert!(
        stderr
            .lines()
            .all(|l| l.starts_with("--- ") || l.is_empty()),
        "nothing on stderr: {stderr}"
    );
}
