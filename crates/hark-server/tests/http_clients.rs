//! HTTP clients, unchanged, against Hark's HTTP APIs: etcd3gw (PyPI)
//! against the JSON gateway, run against etcd 3.7 first so its checks are
//! known to hold for etcd; Debian's python3-consul against the Consul KV API.
//! Its own test binary: each server here sets the process's metrics.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};

use common::etcd::{Etcd, tool};

/// Whether `python3` can import `module`; where HARK_REQUIRE_PYCLIENTS=1
/// (CI) a missing client fails the test instead of skipping it.
fn python_with(python: &str, module: &str) -> bool {
    let found = Command::new(python)
        .args(["-c", &format!("import {module}")])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        assert!(
            std::env::var("HARK_REQUIRE_PYCLIENTS").as_deref() != Ok("1"),
            "want the Python module {module} for {python}"
        );
        eprintln!("{python} cannot import {module}: skipped");
    }
    found
}

/// Runs `tests/clients/<script>` against `endpoint` (`http://host:port`).
fn python_check(python: &str, script: &str, endpoint: &str) -> Result<(), String> {
    let (host, port) = endpoint
        .trim_start_matches("http://")
        .rsplit_once(':')
        .unwrap();
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/clients")
        .join(script);
    let out = Command::new(python)
        .arg(path)
        .args([host, port])
        .output()
        .unwrap();
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{script} against {endpoint}: {}\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn etcd3gw_from_pypi_runs_unchanged_against_hark() {
    let Some(etcd_binary) = tool("etcd-3.7") else {
        return;
    };
    if !python_with("python3", "etcd3gw") {
        return;
    }
    let etcd = Etcd::start(&etcd_binary);
    let hark = common::start(&[]).await;
    let hark_endpoint = hark.endpoint();
    tokio::task::spawn_blocking(move || {
        // The same checks against etcd first: they hold for the real thing.
        python_check("python3", "etcd3gw_check.py", &etcd.endpoint).unwrap();
        python_check("python3", "etcd3gw_check.py", &hark_endpoint).unwrap();
    })
    .await
    .unwrap();
}

/// Debian's python3-consul is installed for the system's Python.
const SYSTEM_PYTHON: &str = "/usr/bin/python3";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_consul_from_debian_runs_unchanged_against_hark_blocking_queries_included() {
    if !python_with(SYSTEM_PYTHON, "consul") {
        return;
    }
    let hark = common::start(&[]).await;
    let hark_endpoint = hark.endpoint();
    tokio::task::spawn_blocking(move || {
        python_check(SYSTEM_PYTHON, "consul_check.py", &hark_endpoint).unwrap();
    })
    .await
    .unwrap();
}
