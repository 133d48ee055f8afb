//! `cargo xtask kube`: Kubernetes' control plane (kube-apiserver,
//! kube-controller-manager, kubectl, at [`KUBE_VERSION`], built from Go
//! modules with the module in `xtask/kube/` pinning k8s.io/kubernetes and
//! its staging modules) on three Hark members and on three etcd members,
//! driven by `xtask/kube/harness`.
//!
//! `cargo xtask kube-storage`: the Kubernetes API server's storage
//! conformance tests (the generic tests of `k8s.io/apiserver/pkg/storage/
//! testing`, on the apiserver's own etcd3 storage layer) against Hark and
//! etcd, one after the other, in one run; the test starts a fresh cluster
//! of three members for every store it builds.
//!
//! The Go test lives in `crates/hark-server/tests/kube-storage/` (its
//! `go.mod` pins k8s.io/apiserver and etcd's client); it is compiled into
//! the cache beside etcd's programs. The run fails when a test that passes
//! on etcd fails on Hark.

use std::fs;
use std::io::{BufRead, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use crate::Result;
use crate::etcd::{self, TestResult};

/// The Kubernetes release the apiserver pieces come from (pinned by the
/// Go modules' `go.mod`).
pub const KUBE_VERSION: &str = "1.37.2";

/// The same release as Kubernetes' staging modules number it.
const STAGING_VERSION: &str = "v0.37.2";

/// Where the Kubernetes builds live: beside etcd's (see [`etcd::cache_dir`]).
fn cache_dir() -> PathBuf {
    etcd::cache_dir()
        .parent()
        .map_or_else(etcd::cache_dir, Path::to_path_buf)
        .join(format!("kube-v{KUBE_VERSION}"))
}

/// The storage test's Go module.
fn storage_module(root: &Path) -> PathBuf {
    root.join("crates/hark-server/tests/kube-storage")
}

/// The Go module that pins Kubernetes (`xtask/kube/`).
fn kube_module(root: &Path) -> PathBuf {
    root.join("xtask/kube")
}

/// Kubernetes' programs: (file name, Go package).
const KUBE_PROGRAMS: &[(&str, &str)] = &[
    ("kube-apiserver", "k8s.io/kubernetes/cmd/kube-apiserver"),
    (
        "kube-controller-manager",
        "k8s.io/kubernetes/cmd/kube-controller-manager",
    ),
    ("kubectl", "k8s.io/kubernetes/cmd/kubectl"),
];

/// Builds whatever of [`KUBE_PROGRAMS`] is missing (about 7 minutes cold
/// on 2 cores), then the harness (always: it is ours and quick), into
/// [`cache_dir`]; checks the apiserver's version.
fn build_kube(root: &Path) -> Result<PathBuf> {
    let dir = cache_dir();
    etcd::make_private_dir(&dir)?;
    let module = kube_module(root);
    // Built from modules, Kubernetes does not know its version; kubectl and
    // the apiserver report it, so it is stamped as its own build does.
    let (major, minor) = KUBE_VERSION
        .split_once('.')
        .and_then(|(major, rest)| Some((major, rest.split_once('.')?.0)))
        .ok_or("KUBE_VERSION is major.minor.patch")?;
    let mut ldflags = String::from("-ldflags=");
    for package in [
        "k8s.io/component-base/version",
        "k8s.io/client-go/pkg/version",
    ] {
        for (name, value) in [
            ("gitVersion", format!("v{KUBE_VERSION}")),
            ("gitMajor", major.to_string()),
            ("gitMinor", minor.to_string()),
            ("gitTreeState", "clean".to_string()),
        ] {
            ldflags.push_str(&format!("-X {package}.{name}={value} "));
        }
    }
    for (name, package) in KUBE_PROGRAMS {
        let path = dir.join(name);
        if !path.exists() {
            eprintln!("== building {name} {KUBE_VERSION} ({package})");
            etcd::go_build_in(&module, &["build", ldflags.trim_end()], package, &path)?;
        }
    }
    etcd::go_build_in(&module, &["build"], "./harness", &dir.join("kube-harness"))?;
    let out = Command::new(dir.join("kube-apiserver"))
        .arg("--version")
        .output()
        .map_err(|e| format!("running kube-apiserver: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    if !text.contains(&format!("Kubernetes v{KUBE_VERSION}")) {
        return Err(format!(
            "kube-apiserver --version: want v{KUBE_VERSION}, got {text:?}"
        ));
    }
    Ok(dir)
}

/// `cargo xtask kube [--release] [--server hark|etcd] [--faults | --bench]`:
/// the workload (or the fault run, or the benchmark) on etcd ×3, then on
/// Hark ×3 (Hark's debug build unless `--release`).
pub fn kube(args: &[&str]) -> Result<ExitCode> {
    let root = crate::workspace_root();
    let mut release = false;
    let mut mode = "workload";
    let mut servers: Vec<&'static str> = vec!["etcd", "hark"];
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match *arg {
            "--release" => release = true,
            "--faults" => mode = "faults",
            "--bench" => mode = "bench",
            "--server" => servers = vec![parse_server(args.next().copied())?],
            a => return Err(format!("kube: unknown argument {a}")),
        }
    }
    let Some(binaries) = server_binaries(&root, release, &servers)? else {
        return Ok(ExitCode::FAILURE);
    };
    let dir = build_kube(&root)?;
    let mut failed = Vec::new();
    let mut figures: Vec<(&str, Vec<(String, f64)>)> = Vec::new();
    for (server, binary) in binaries {
        let work = crate::TempDir::new(&format!("kube-{server}"))?;
        eprintln!("== Kubernetes {KUBE_VERSION} on {server} ×3");
        let status = Command::new(dir.join("kube-harness"))
            .arg(format!("-server={}", binary.display()))
            .arg(format!("-server-name={server}"))
            .arg(format!("-kube-bin={}", dir.display()))
            .arg(format!("-work={}", work.path().join("run").display()))
            .arg(format!("-mode={mode}"))
            .arg(format!(
                "-results={}",
                work.path().join("results").display()
            ))
            .status()
            .map_err(|e| format!("running kube-harness: {e}"))?;
        // The fault run and the benchmark judge Hark; etcd's run is the
        // reference they are read beside (etcd answers some writes after a
        // kill with 500s).
        let judged = mode == "workload" || server == "hark";
        if !status.success() && !judged {
            eprintln!("== {server}: the reference's failed checks are reported above, not judged");
        } else if !status.success() {
            // Keep the logs of a failed run.
            let kept = dir.join(format!("failed-{server}"));
            let _ = fs::remove_dir_all(&kept);
            if fs::rename(work.path().join("run"), &kept).is_ok() {
                eprintln!("== {server}: logs kept in {}", kept.display());
            }
            failed.push(server);
        }
        if mode == "bench" {
            let text = fs::read_to_string(work.path().join("results")).unwrap_or_default();
            figures.push((server, parse_figures(&text)));
        }
    }
    if mode == "bench" {
        print_bench(&figures);
    }
    if failed.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        eprintln!("kube: failed on {}", failed.join(", "));
        Ok(ExitCode::FAILURE)
    }
}

/// `name value` lines, as the harness writes its figures.
fn parse_figures(text: &str) -> Vec<(String, f64)> {
    text.lines()
        .filter_map(|line| {
            let (name, value) = line.split_once(' ')?;
            Some((name.to_string(), value.trim().parse().ok()?))
        })
        .collect()
}

/// The benchmark's table: each figure on etcd and on Hark and their ratio,
/// then the targets (create throughput and p99 no worse than
/// etcd's, watch delay p99 at most 0.8× etcd's, member RSS at most 0.5×).
fn print_bench(figures: &[(&str, Vec<(String, f64)>)]) {
    let get = |server: &str, name: &str| {
        figures
            .iter()
            .find(|(s, _)| *s == server)
            .and_then(|(_, f)| f.iter().find(|(n, _)| n == name))
            .map(|(_, v)| *v)
    };
    // Every figure either server reported, in the order reported (Hark's
    // own, such as its watch window and RocksDB's memory, after etcd's).
    let mut names: Vec<&str> = Vec::new();
    for (_, reported) in figures {
        for (name, _) in reported {
            if !names.contains(&name.as_str()) {
                names.push(name);
            }
        }
    }
    if names.is_empty() {
        return;
    }
    println!("\n| figure | etcd | Hark | Hark / etcd |\n|---|---|---|---|");
    for name in names {
        let (etcd, hark) = (get("etcd", name), get("hark", name));
        let cell = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.2}"));
        let ratio = match (etcd, hark) {
            (Some(e), Some(h)) if e != 0.0 => format!("{:.2}", h / e),
            _ => "-".to_string(),
        };
        println!("| {name} | {} | {} | {ratio} |", cell(etcd), cell(hark));
    }
    let ratio = |name: &str| Some(get("hark", name)? / get("etcd", name)?);
    let peak_rss = |server: &str| {
        (0..3)
            .filter_map(|i| get(server, &format!("m{i}_peak_rss_mib")))
            .reduce(f64::max)
    };
    let rss = peak_rss("hark").zip(peak_rss("etcd")).map(|(h, e)| h / e);
    println!();
    // The target, Hark's ratio to etcd, and whether a ratio meets it.
    type Target = (&'static str, Option<f64>, fn(f64) -> bool);
    let targets: [Target; 4] = [
        (
            "create throughput ≥ 1.0× etcd's",
            ratio("create_objects_per_s"),
            |r| r >= 1.0,
        ),
        ("create p99 ≤ 1.0× etcd's", ratio("create_p99_ms"), |r| {
            r <= 1.0
        }),
        (
            "watch delay p99 ≤ 0.8× etcd's",
            ratio("watch_delay_p99_ms"),
            |r| r <= 0.8,
        ),
        ("largest member peak RSS ≤ 0.5× etcd's", rss, |r| {
            r <= 0.5
        }),
    ];
    for (target, value, met) in targets {
        let verdict = match value.map(met) {
            Some(true) => "met",
            Some(false) => "missed",
            None => "not measured",
        };
        let value = value.map_or("-".to_string(), |v| format!("{v:.2}×"));
        println!("{target}: {value} ({verdict})");
    }
}

/// `--server`'s value: `hark` or `etcd`.
fn parse_server(value: Option<&str>) -> Result<&'static str> {
    match value {
        Some("hark") => Ok("hark"),
        Some("etcd") => Ok("etcd"),
        other => Err(format!("--server takes hark or etcd, not {other:?}")),
    }
}

/// Each of `servers` with the binary to run: etcd's from the pinned build,
/// Hark's release or debug build (built first); `None` when Hark's build
/// failed.
fn server_binaries(
    root: &Path,
    release: bool,
    servers: &[&'static str],
) -> Result<Option<Vec<(&'static str, PathBuf)>>> {
    let etcd_dir = etcd::build_programs(root)?;
    let mut binaries = Vec::new();
    for &server in servers {
        let binary = match server {
            "hark" if release => match crate::build_release(root)? {
                Some(dir) => dir.join("hark"),
                None => return Ok(None),
            },
            "hark" => match crate::build_server(root)? {
                Some(hark) => hark,
                None => return Ok(None),
            },
            _ => etcd_dir.join("etcd"),
        };
        binaries.push((server, binary));
    }
    Ok(Some(binaries))
}

/// `cargo xtask kube-storage [--release] [--server hark|etcd] [REGEX]`.
pub fn kube_storage(args: &[&str]) -> Result<ExitCode> {
    let root = crate::workspace_root();
    let mut release = false;
    let mut servers: Vec<&'static str> = vec!["etcd", "hark"];
    let mut pattern = ".".to_string();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match *arg {
            "--release" => release = true,
            "--server" => servers = vec![parse_server(args.next().copied())?],
            a if a.starts_with('-') => return Err(format!("kube-storage: unknown flag {a}")),
            a => pattern = a.to_string(),
        }
    }
    let Some(binaries) = server_binaries(&root, release, &servers)? else {
        return Ok(ExitCode::FAILURE);
    };
    let dir = cache_dir();
    etcd::make_private_dir(&dir)?;
    let suite = dir.join("kube-storage.test");
    eprintln!("== building the apiserver's storage tests (k8s.io/apiserver {STAGING_VERSION})");
    etcd::go_build_in(&storage_module(&root), &["test", "-c"], ".", &suite)?;

    let mut verdicts: Vec<(&str, Vec<TestResult>)> = Vec::new();
    for (server, binary) in binaries {
        let log_path = dir.join(format!("kube-storage-{server}.log"));
        eprintln!(
            "== the apiserver's storage tests on {server} ×3 (a fresh cluster per store); full output in {}",
            log_path.display()
        );
        let results = run_suite(&suite, &pattern, &binary, &log_path)?;
        verdicts.push((server, results));
    }
    Ok(report(&verdicts))
}

/// Runs the compiled suite with `server` as the binary its clusters run,
/// logging everything and collecting every verdict line.
fn run_suite(
    suite: &Path,
    pattern: &str,
    server: &Path,
    log_path: &Path,
) -> Result<Vec<TestResult>> {
    let mut log = fs::File::create(log_path).map_err(|e| format!("{}: {e}", log_path.display()))?;
    let mut child = Command::new(suite)
        .args(["-test.v", "-test.timeout=30m", "-test.run", pattern])
        .env("KUBE_STORAGE_SERVER", server)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("running {}: {e}", suite.display()))?;
    // stderr (the client's logs) goes to the log beside stdout.
    let stderr = child.stderr.take().expect("piped");
    let mut stderr_log = log.try_clone().map_err(|e| e.to_string())?;
    let stderr_thread = std::thread::spawn(move || {
        for line in BufReader::new(stderr).split(b'\n').map_while(|l| l.ok()) {
            let _ = stderr_log.write_all(&line);
            let _ = stderr_log.write_all(b"\n");
        }
    });
    let mut results = Vec::new();
    let stdout = child.stdout.take().expect("piped");
    for line in BufReader::new(stdout).split(b'\n').map_while(|l| l.ok()) {
        let _ = log.write_all(&line);
        let _ = log.write_all(b"\n");
        if let Some(result) = etcd::parse_result(&String::from_utf8_lossy(&line)) {
            if !result.name.contains('/') {
                println!(
                    "{:<5} {:>7.1}s  {}",
                    result.outcome, result.seconds, result.name
                );
            }
            results.push(result);
        }
    }
    let status = child.wait().map_err(|e| e.to_string())?;
    let _ = stderr_thread.join();
    // `go test` exits 1 when a test failed, and printed its verdict.
    if !(status.success() || status.code() == Some(1)) {
        return Err(format!(
            "{} ended without verdicts ({status}); see {}",
            suite.display(),
            log_path.display()
        ));
    }
    Ok(results)
}

/// Prints the side-by-side table (top-level tests and their first-level
/// subtests) and says whether every test that passed on etcd passed on
/// Hark, subtests at every depth included.
fn report(verdicts: &[(&str, Vec<TestResult>)]) -> ExitCode {
    let mut names: Vec<&str> = Vec::new();
    for (_, results) in verdicts {
        for r in results {
            if !names.contains(&r.name.as_str()) {
                names.push(&r.name);
            }
        }
    }
    let outcome = |server: &str, name: &str| {
        verdicts
            .iter()
            .find(|(s, _)| *s == server)
            .and_then(|(_, results)| results.iter().rev().find(|r| r.name == name))
            .map(|r| r.outcome)
    };
    println!();
    let header: Vec<&str> = verdicts.iter().map(|(s, _)| *s).collect();
    println!("| test | {} |", header.join(" | "));
    println!("|---|{}", "---|".repeat(header.len()));
    for name in names.iter().filter(|n| n.matches('/').count() <= 1) {
        let cells: Vec<&str> = header
            .iter()
            .map(|s| outcome(s, name).unwrap_or("-"))
            .collect();
        println!("| {name} | {} |", cells.join(" | "));
    }
    for (server, results) in verdicts {
        let top = results.iter().filter(|r| !r.name.contains('/'));
        let count = |o: &str| top.clone().filter(|r| r.outcome == o).count();
        println!(
            "\n{server}: {} top-level tests passed, {} failed, {} skipped; {} verdicts in all",
            count("PASS"),
            count("FAIL"),
            count("SKIP"),
            results.len()
        );
    }
    if header.len() == 2 {
        let mut worse = Vec::new();
        for name in &names {
            if outcome("etcd", name) == Some("PASS") && outcome("hark", name) != Some("PASS") {
                worse.push(*name);
            }
        }
        if worse.is_empty() {
            println!("every test that passes on etcd passes on Hark");
        } else {
            println!("passes on etcd, not on Hark: {}", worse.join(", "));
            return ExitCode::FAILURE;
        }
    } else if verdicts
        .iter()
        .any(|(_, results)| results.iter().any(|r| r.outcome == "FAIL"))
    {
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
