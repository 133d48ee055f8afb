//! `cargo xtask etcd` and `cargo xtask etcd-e2e`: the newest etcd as the
//! reference, built from Go modules with the machine's Go.
//!
//! The versions are pinned by the Go module in `xtask/etcd/` (its `go.mod`
//! and `go.sum` are committed): etcd's server, etcdctl, etcdutl and
//! end-to-end tests at [`ETCD_VERSION`], and etcd's `benchmark` tool from
//! the root module `go.etcd.io/etcd/v3`, whose newest 3.7 release on the
//! module proxy is v3.7.0 (the tool is a client; its version does not
//! change what it measures). Everything is built once into a cache outside
//! the tree ([`cache_dir`]) and reused while the version matches.

use std::fs;
use std::io::{BufRead, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use crate::Result;

/// The etcd release every comparison takes (`xtask/etcd/go.mod` pins it).
pub const ETCD_VERSION: &str = "3.7.3";

/// The programs `cargo xtask etcd` builds: (file name, Go package).
const PROGRAMS: &[(&str, &str)] = &[
    ("etcd", "go.etcd.io/etcd/server/v3"),
    ("etcdctl", "go.etcd.io/etcd/etcdctl/v3"),
    ("etcdutl", "go.etcd.io/etcd/etcdutl/v3"),
    ("benchmark", "go.etcd.io/etcd/v3/tools/benchmark"),
];

/// etcd's end-to-end test package.
const E2E_PACKAGE: &str = "go.etcd.io/etcd/tests/v3/e2e";

/// Where the built programs live: `$HARK_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/hark`, else `~/.cache/hark`; then `etcd-vX.Y.Z`.
pub fn cache_dir() -> PathBuf {
    let base = std::env::var_os("HARK_CACHE_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("XDG_CACHE_HOME").map(|d| PathBuf::from(d).join("hark")))
        .or_else(|| std::env::var_os("HOME").map(|d| PathBuf::from(d).join(".cache/hark")))
        .unwrap_or_else(|| PathBuf::from("/var/tmp/hark-cache"));
    base.join(format!("etcd-v{ETCD_VERSION}"))
}

/// The Go module that pins etcd's versions.
fn go_module(root: &Path) -> PathBuf {
    root.join("xtask").join("etcd")
}

/// `cargo xtask etcd [--dir]`: builds (or finds) etcd, etcdctl, etcdutl and
/// benchmark at [`ETCD_VERSION`], checks their versions and prints their
/// paths; `--dir` prints only the directory that holds them.
pub fn etcd(args: &[&str]) -> Result<ExitCode> {
    let only_dir = match args {
        [] => false,
        ["--dir"] => true,
        _ => return Err(format!("etcd: unknown arguments {args:?} (want [--dir])")),
    };
    let dir = build_programs(&crate::workspace_root())?;
    if only_dir {
        println!("{}", dir.display());
    } else {
        for (name, _) in PROGRAMS {
            println!("{name}: {}", dir.join(name).display());
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Builds whatever of [`PROGRAMS`] is missing and returns their directory.
pub fn build_programs(root: &Path) -> Result<PathBuf> {
    let dir = cache_dir();
    make_private_dir(&dir)?;
    for (name, package) in PROGRAMS {
        let path = dir.join(name);
        if !path.exists() {
            eprintln!("== building {name} {ETCD_VERSION} ({package})");
            go_build(root, &["build"], package, &path)?;
        }
    }
    check_versions(&dir)?;
    Ok(dir)
}

/// `go build` / `go test -c` of `package` from the pinning module into
/// `out`, written under a temporary name first so that an interrupted build
/// leaves no half-written program behind.
fn go_build(root: &Path, verb: &[&str], package: &str, out: &Path) -> Result<()> {
    go_build_in(&go_module(root), verb, package, out)
}

/// [`go_build`] from the Go module in `module`.
pub fn go_build_in(module: &Path, verb: &[&str], package: &str, out: &Path) -> Result<()> {
    let partial = out.with_extension("part");
    let status = Command::new("go")
        .args(verb)
        .args(["-mod=readonly", "-trimpath", "-o"])
        .arg(&partial)
        .arg(package)
        .env("CGO_ENABLED", "0")
        .current_dir(module)
        .status()
        .map_err(|e| format!("running go (Go 1.26+ must be on PATH): {e}"))?;
    if !status.success() {
        return Err(format!("go {} {package} failed", verb.join(" ")));
    }
    fs::rename(&partial, out).map_err(|e| format!("{}: {e}", out.display()))
}

/// Each program answers its version: the pin took effect.
fn check_versions(dir: &Path) -> Result<()> {
    for (name, args, want) in [
        (
            "etcd",
            &["--version"][..],
            format!("etcd Version: {ETCD_VERSION}"),
        ),
        (
            "etcdctl",
            &["version"][..],
            format!("etcdctl version: {ETCD_VERSION}"),
        ),
        (
            "etcdutl",
            &["version"][..],
            format!("etcdutl version: {ETCD_VERSION}"),
        ),
        ("benchmark", &["--help"][..], "benchmark".to_string()),
    ] {
        let out = Command::new(dir.join(name))
            .args(args)
            .output()
            .map_err(|e| format!("running {name}: {e}"))?;
        let text = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() || !text.contains(&want) {
            return Err(format!(
                "{} {}: want {want:?}, got {text:?}",
                dir.join(name).display(),
                args.join(" ")
            ));
        }
    }
    Ok(())
}

pub fn make_private_dir(dir: &Path) -> Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))
}

/// The tests `etcd-e2e` runs when no REGEX is given: those about what a
/// client or an operator sees (KV, txn, watch, lease, lock, election, auth,
/// endpoint health, membership, compaction, defragmentation, alarms,
/// snapshots, the JSON gateway, metrics, versions, TLS, configuration and
/// flags, corruption checks). Tests that cannot apply to Hark are run too
/// and listed, with the reason, in [`NOT_APPLICABLE`].
pub const SELECTION: &[&str] = &[
    // KV, txn, compaction
    "TestCtlV3SerializableRead",
    "TestCtlV3LinearizableRead",
    "TestCtlV3Put",
    "TestCtlV3Get",
    "TestCtlV3Del",
    "TestCtlV3MakeMirror",
    "TestTxnRangeConsistency",
    // watch
    "TestCtlV3Watch",
    "TestWatch",
    "TestDeleteEventDrop_Issue18089",
    "TestStartWatcherFromCompactedRevision",
    "TestResumeCompactionOnTombstone",
    // lease, lock, election
    "TestCtlV3LeaseKeepAlive",
    "TestLeaseRevoke",
    "TestCtlV3Lock",
    "TestCtlV3Elect",
    // auth, users, roles
    "TestAuth",
    "TestCtlV3Auth",
    "TestCtlV3GetAuthStatus",
    "TestCtlV3RoleAddTimeout",
    // membership
    "TestCtlV3MemberList",
    "TestCtlV3MemberAdd",
    "TestCtlV3MemberUpdate",
    "TestCtlV3MemberPromote",
    "TestCtlV3ConsistentMemberList",
    "TestRemoveNonExistingMember",
    "TestMemberReplace",
    // maintenance: defrag, snapshots, corruption checks
    "TestCtlV3DefragOffline",
    "TestCtlV3Snapshot",
    "TestIssue6361",
    "TestRestoreCompactionRevBump",
    "TestEtcdCorruptHash",
    "TestPeriodicCheckDetectsCorruption",
    "TestCompactHashCheck",
    // versions, endpoints, health, metrics
    "TestCtlV3Version",
    "TestClusterVersion",
    "TestCtlV3DialWithHTTPScheme",
    "TestHTTPHealthHandler",
    "TestHTTPLivezReadyzHandler",
    "TestV3Metrics",
    "TestNoMetricsMissing",
    // JSON gateway and the TCP gateway
    "TestCurlV3",
    "TestCurlWatchIssue19509",
    "TestGateway",
    // TLS, configuration and flags
    "TestConnectionMultiplexing",
    "TestEtcdExampleConfig",
    "TestEtcdMultiPeer",
    "TestEtcdUnixPeers",
    "TestEtcdListenMetricsURLsWithMissingClientTLSInfo",
    "TestEtcdPeer",
    "TestBootstrapDefragFlag",
    "TestSnapshotCatchupEntriesFlag",
    "TestEtcdHealthyWithTinySnapshotCatchupEntries",
    "TestEtcdTLSVersion",
    "TestEtcdDeprecatedFlags",
    "TestV2DeprecationEnforceDefaultValue",
    "TestEtcdAdvertiseClientUnix",
    "TestServerJsonLogging",
    "TestConnectionRejectMessage",
];

/// CI's short form (`--short`): quick tests of the selection, one or two
/// per area, that pass on Hark; a regression in any fails CI.
pub const SHORT: &[&str] = &[
    "TestCtlV3Version",
    "TestCtlV3PutIgnoreValue",
    "TestCtlV3GetFormat",
    "TestCtlV3GetRev",
    "TestTxnRangeConsistency",
    "TestCtlV3Watch",
    "TestCtlV3Lock",
    "TestCtlV3Elect",
    "TestCtlV3MemberList",
    "TestCtlV3MemberAdd",
    "TestAuthCluster",
    "TestCtlV3AuthCertCN",
    "TestCtlV3Snapshot",
    "TestCurlV3KVBasicOperation",
    "TestCurlV3Watch",
    "TestServerJsonLogging",
];

/// Tests (or subtests, `Test/sub`) of the selection that cannot apply to
/// Hark, and why. They run all the same; the summary counts them apart, and
/// a test whose only failures are such subtests with them.
pub const NOT_APPLICABLE: &[(&str, &str)] = &[
    (
        "TestHTTPLivezReadyzHandler/corrupt",
        "corrupts the member's bbolt file while it is down, which Hark does not have",
    ),
    (
        "TestEtcdCorruptHash",
        "corrupts the member's bbolt file, which Hark does not have",
    ),
    (
        "TestPeriodicCheckDetectsCorruption",
        "corrupts the member's bbolt file, which Hark does not have",
    ),
    (
        "TestCompactHashCheckDetectCorruption",
        "corrupts the member's bbolt file, which Hark does not have",
    ),
    (
        "TestCompactHashCheckDetectCorruptionWithFeatureGate",
        "corrupts the member's bbolt file, which Hark does not have",
    ),
    (
        "TestCtlV3DefragOffline",
        "etcdutl defrag opens etcd's bbolt file in the data dir",
    ),
    (
        "TestRestoreCompactionRevBump",
        "starts the server on a data dir etcdutl restored in etcd's layout (bbolt and WAL)",
    ),
];

/// Why test `r` cannot apply to Hark, if it cannot: it is listed in
/// [`NOT_APPLICABLE`], or it failed only in subtests listed there.
fn cannot_apply(r: &TestResult, results: &[TestResult]) -> Option<&'static str> {
    let listed = |name: &str| {
        NOT_APPLICABLE
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, why)| *why)
    };
    if let Some(why) = listed(&r.name) {
        return Some(why);
    }
    let prefix = format!("{}/", r.name);
    let failed: Vec<&TestResult> = results
        .iter()
        .filter(|s| s.outcome == "FAIL" && s.name.starts_with(&prefix))
        .collect();
    // Only the innermost failures count: a subtest fails when its own do.
    let leaves: Vec<&&TestResult> = failed
        .iter()
        .filter(|s| {
            let inner = format!("{}/", s.name);
            !failed.iter().any(|t| t.name.starts_with(&inner))
        })
        .collect();
    let mut why = None;
    for leaf in &leaves {
        why = Some(listed(&leaf.name)?);
    }
    why
}

/// The `-test.run` pattern of [`SELECTION`].
fn selection_pattern() -> String {
    format!("^({})", SELECTION.join("|"))
}

/// `cargo xtask etcd-e2e [--server hark|etcd] [--release] [--short | REGEX]`:
/// etcd's end-to-end tests at [`ETCD_VERSION`], with `etcd` in their bin dir
/// being the server under test (Hark's debug build by default, its release
/// build with `--release`, or etcd itself) and etcd's own etcdctl and etcdutl
/// beside it. A few tests time the server under load (the watch-delay
/// ones); they compare fairly with etcd's release build only with
/// `--release`.
pub fn etcd_e2e(args: &[&str]) -> Result<ExitCode> {
    let root = crate::workspace_root();
    let mut server = "hark".to_string();
    let mut release = false;
    let mut pattern = None;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match *arg {
            "--server" => {
                server = args
                    .next()
                    .ok_or("--server needs hark or etcd")?
                    .to_string()
            }
            a if a.starts_with("--server=") => server = a["--server=".len()..].to_string(),
            "--short" => pattern = Some(format!("^({})$", SHORT.join("|"))),
            "--release" => release = true,
            a if a.starts_with('-') => return Err(format!("etcd-e2e: unknown flag {a}")),
            a => pattern = Some(a.to_string()),
        }
    }
    let pattern = pattern.unwrap_or_else(selection_pattern);
    let dir = build_programs(&root)?;
    let suite = dir.join("e2e.test");
    if !suite.exists() {
        eprintln!("== building etcd's e2e tests {ETCD_VERSION} ({E2E_PACKAGE})");
        go_build(&root, &["test", "-c"], E2E_PACKAGE, &suite)?;
    }
    let server_binary = match server.as_str() {
        "etcd" => dir.join("etcd"),
        "hark" if release => match crate::build_release(&root)? {
            Some(dir) => dir.join("hark"),
            None => return Ok(ExitCode::FAILURE),
        },
        "hark" => match crate::build_server(&root)? {
            Some(hark) => hark,
            None => return Ok(ExitCode::FAILURE),
        },
        other => return Err(format!("--server must be hark or etcd, not {other:?}")),
    };
    // The framework runs `<bin-dir>/etcd`, `etcdctl` and `etcdutl`.
    let bin_dir = dir.join(format!("bin-{server}"));
    make_private_dir(&bin_dir)?;
    for (name, target) in [
        ("etcd", server_binary),
        ("etcdctl", dir.join("etcdctl")),
        ("etcdutl", dir.join("etcdutl")),
    ] {
        let link = bin_dir.join(name);
        let _ = fs::remove_file(&link);
        std::os::unix::fs::symlink(&target, &link)
            .map_err(|e| format!("{}: {e}", link.display()))?;
    }
    // The tests find their certificates at ../fixtures from their package
    // directory, in Go's module cache.
    let package_dir = module_dir(&root, "go.etcd.io/etcd/tests/v3")?.join("e2e");
    let log_path = dir.join(format!("e2e-{server}.log"));
    let mut log =
        fs::File::create(&log_path).map_err(|e| format!("{}: {e}", log_path.display()))?;
    eprintln!(
        "== etcd's e2e tests on {server} ({}); full output in {}",
        pattern,
        log_path.display()
    );
    // One process per test: a test that fails can leave a goroutine behind
    // (a wait on a log line), and the framework then skips every test after
    // it in the same process.
    let listed = Command::new(&suite)
        .args(["-test.list", &pattern])
        .current_dir(&package_dir)
        .output()
        .map_err(|e| format!("running {}: {e}", suite.display()))?;
    let names: Vec<String> = String::from_utf8_lossy(&listed.stdout)
        .lines()
        .filter(|l| l.starts_with("Test"))
        .map(str::to_string)
        .collect();
    let mut results = Vec::new();
    for name in &names {
        let before = results.len();
        let finished = run_one(&suite, name, &bin_dir, &package_dir, &mut log, &mut results)?;
        if !finished || !results[before..].iter().any(|r| &r.name == name) {
            // Killed or timed out without a verdict: a failure.
            println!(
                "FAIL  {:>8}  {name} (no verdict: the test process ended early)",
                "-"
            );
            results.push(TestResult {
                name: name.clone(),
                outcome: "FAIL",
                seconds: 0.0,
            });
        }
    }
    // One line per top-level test (its last verdict, if it printed two).
    let mut top: Vec<&TestResult> = Vec::new();
    for r in results.iter().filter(|r| !r.name.contains('/')) {
        match top.iter_mut().find(|t| t.name == r.name) {
            Some(slot) => *slot = r,
            None => top.push(r),
        }
    }
    let count = |outcome: &str| top.iter().filter(|r| r.outcome == outcome).count();
    println!();
    println!("| test | {server} | seconds |");
    println!("|---|---|---|");
    for r in &top {
        let note = cannot_apply(r, &results)
            .map_or(String::new(), |why| format!(" (not applicable: {why})"));
        println!("| {} | {}{note} | {:.1} |", r.name, r.outcome, r.seconds);
    }
    let not_applicable = top
        .iter()
        .filter(|r| r.outcome == "FAIL" && cannot_apply(r, &results).is_some())
        .count();
    println!(
        "\n{} passed, {} failed ({not_applicable} of them cannot apply to Hark), {} skipped (etcd {ETCD_VERSION} e2e on {server})",
        count("PASS"),
        count("FAIL"),
        count("SKIP")
    );
    Ok(if count("FAIL") == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Runs one test in its own process (5 minutes at most; etcd's own run
/// takes at most 1 minute for any test of the selection), logging its
/// output and collecting every verdict it prints; `false` if the process
/// did not exit successfully or by a test failure.
fn run_one(
    suite: &Path,
    name: &str,
    bin_dir: &Path,
    package_dir: &Path,
    log: &mut fs::File,
    results: &mut Vec<TestResult>,
) -> Result<bool> {
    use std::os::unix::process::CommandExt;
    // The test's data dirs (Go's t.TempDir) go under a dir of its own,
    // removed afterwards: a test killed at its timeout never removes its
    // own, and a full run left gigabytes in /tmp. Short, as unix socket
    // paths under it must stay within 108 bytes.
    let scratch = std::env::temp_dir().join(format!("hark-e2e-{}", std::process::id()));
    let _ = fs::remove_dir_all(&scratch);
    fs::create_dir_all(&scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;
    let mut child = Command::new(suite)
        .process_group(0)
        .args(["-test.v", "-test.timeout=5m", "-test.run"])
        .arg(format!("^{name}$"))
        .arg(format!("-bin-dir={}", bin_dir.display()))
        .current_dir(package_dir)
        .env("EXPECT_DEBUG", "true")
        .env("TMPDIR", &scratch)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("running {}: {e}", suite.display()))?;
    let stdout = child.stdout.take().expect("piped");
    // Servers' and tools' output passes through as it is, not always UTF-8.
    for line in BufReader::new(stdout).split(b'\n') {
        let line = match line {
            Ok(line) => line,
            Err(e) => {
                let _ = child.kill();
                return Err(format!("reading the tests' output: {e}"));
            }
        };
        let _ = log.write_all(&line);
        let _ = log.write_all(b"\n");
        let line = String::from_utf8_lossy(&line);
        if let Some(result) = parse_result(&line) {
            println!(
                "{:<5} {:>7.1}s  {}",
                result.outcome, result.seconds, result.name
            );
            results.push(result);
        }
    }
    let status = child.wait().map_err(|e| e.to_string())?;
    // A test that timed out leaves its servers running, on the ports the
    // next test takes: everything of its process group goes, and every
    // server started from the bin dir (etcd's framework starts them on a
    // pseudo-terminal, in sessions of their own).
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{}", child.id())])
        .stderr(Stdio::null())
        .status();
    let _ = Command::new("pkill")
        .args(["-KILL", "-f"])
        .arg(format!("^{}/etcd ", bin_dir.display()))
        .status();
    let _ = fs::remove_dir_all(&scratch);
    // `go test` exits 1 when a test failed: a verdict was printed.
    Ok(status.success() || status.code() == Some(1))
}

pub struct TestResult {
    pub name: String,
    pub outcome: &'static str,
    pub seconds: f64,
}

/// `--- PASS: TestName (1.23s)` (indented for subtests) from `go test -v`.
pub fn parse_result(line: &str) -> Option<TestResult> {
    let rest = line.trim_start().strip_prefix("--- ")?;
    let (outcome, rest) = rest.split_once(": ")?;
    let outcome = match outcome {
        "PASS" => "PASS",
        "FAIL" => "FAIL",
        "SKIP" => "SKIP",
        _ => return None,
    };
    let (name, time) = rest.split_once(" (")?;
    let seconds = time
        .trim_end_matches(')')
        .trim_end_matches('s')
        .parse()
        .ok()?;
    Some(TestResult {
        name: name.to_string(),
        outcome,
        seconds,
    })
}

/// Where Go's module cache holds `module` at the version the pin chose.
fn module_dir(root: &Path, module: &str) -> Result<PathBuf> {
    let out = Command::new("go")
        .args(["list", "-mod=readonly", "-m", "-f", "{{.Dir}}", module])
        .current_dir(go_module(root))
        .output()
        .map_err(|e| format!("running go list: {e}"))?;
    let dir = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() || dir.is_empty() {
        return Err(format!(
            "go list -m {module}: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(PathBuf::from(dir))
}

/// The names `--compare-etcd` takes for the etcd [`build_programs`] makes.
const ETCD_ALIASES: &[&str] = &["etcd-3.7", "etcd-3.7.3"];

/// `args` with `--compare-etcd etcd-3.7` (or `=etcd-3.7`, or `etcd-3.7.3`)
/// replaced by the path of the etcd this module builds, built first if
/// need be; any other value (a path) is left as it is.
pub fn resolve_compare_etcd(args: &[&str]) -> Result<Vec<String>> {
    let mut out = Vec::with_capacity(args.len());
    let mut iter = args.iter().peekable();
    while let Some(arg) = iter.next() {
        let value = if *arg == "--compare-etcd" {
            out.push(arg.to_string());
            match iter.next() {
                Some(v) => *v,
                None => break,
            }
        } else if let Some(v) = arg.strip_prefix("--compare-etcd=") {
            out.push("--compare-etcd".to_string());
            v
        } else {
            out.push(arg.to_string());
            continue;
        };
        if ETCD_ALIASES.contains(&value) {
            let dir = build_programs(&crate::workspace_root())?;
            out.push(dir.join("etcd").display().to_string());
        } else {
            out.push(value.to_string());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_test_failing_only_in_subtests_that_cannot_apply_cannot_apply() {
        let result = |name: &str, outcome| TestResult {
            name: name.into(),
            outcome,
            seconds: 0.0,
        };
        let livez = result("TestHTTPLivezReadyzHandler", "FAIL");
        let corrupt = result("TestHTTPLivezReadyzHandler/corrupt", "FAIL");
        let partitioned = result("TestHTTPLivezReadyzHandler/network_partitioned", "FAIL");
        let passed = result("TestHTTPLivezReadyzHandler/network_partitioned", "PASS");
        let only_corrupt = [corrupt, passed];
        assert!(cannot_apply(&livez, &only_corrupt).is_some());
        let both = [
            result("TestHTTPLivezReadyzHandler/corrupt", "FAIL"),
            partitioned,
        ];
        assert!(cannot_apply(&livez, &both).is_none());
        assert!(cannot_apply(&livez, &[]).is_none());
        let listed = result("TestCtlV3DefragOffline", "FAIL");
        assert!(cannot_apply(&listed, &[]).is_some());
    }

    #[test]
    fn go_mod_pins_the_version_the_tools_check() {
        let go_mod =
            fs::read_to_string(go_module(&crate::workspace_root()).join("go.mod")).unwrap();
        for module in ["server", "etcdctl", "etcdutl", "tests"] {
            let line = format!("go.etcd.io/etcd/{module}/v3 v{ETCD_VERSION}");
            assert!(go_mod.contains(&line), "go.mod lacks {line:?}");
        }
    }

    #[test]
    fn compare_etcd_keeps_paths_and_other_arguments() {
        let args = [
            "all",
            "--compare-etcd",
            "/opt/etcd",
            "--rounds=3",
            "--compare-etcd=/x",
        ];
        assert_eq!(
            resolve_compare_etcd(&args).unwrap(),
            [
                "all",
                "--compare-etcd",
                "/opt/etcd",
                "--rounds=3",
                "--compare-etcd",
                "/x"
            ]
        );
    }

    #[test]
    fn parses_go_test_results() {
        let r = parse_result("--- PASS: TestCtlV3Put (3.21s)").unwrap();
        assert_eq!(
            (r.name.as_str(), r.outcome, r.seconds),
            ("TestCtlV3Put", "PASS", 3.21)
        );
        let r = parse_result("    --- FAIL: TestCtlV3Put/NoTLS (0.50s)").unwrap();
        assert_eq!((r.name.as_str(), r.outcome), ("TestCtlV3Put/NoTLS", "FAIL"));
        assert!(parse_result("=== RUN   TestCtlV3Put").is_none());
        assert!(parse_result("--- BENCH: x").is_none());
    }

    #[test]
    fn the_short_form_is_part_of_the_selection() {
        for name in SHORT {
            assert!(SELECTION.iter().any(|p| name.starts_with(p)), "{name}");
        }
    }

    #[test]
    fn not_applicable_tests_are_in_the_selection() {
        for (name, _) in NOT_APPLICABLE {
            assert!(
                SELECTION.iter().any(|p| name.starts_with(p)),
                "{name} is listed as not applicable but not selected"
            );
        }
    }
}
