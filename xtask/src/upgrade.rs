//! `cargo xtask upgrade`: the rolling-upgrade test against real older
//! builds. It builds `hark` at each of [`UPGRADE_BASELINES`] in a git
//! worktree (the same target dir, so only Hark's own crates compile again),
//! keeps those binaries, rebuilds the current tree like the tests do, and
//! runs `crates/hark-server/tests/rolling_upgrade.rs` from each with
//! `HARK_OLD_BIN` (and `HARK_OLD_LOG_FORMAT`).

use std::path::Path;
use std::process::{Command, ExitCode};

use crate::{Result, build_server, target_dir, workspace_root};

/// A build a rolling upgrade starts from.
pub struct Baseline {
    pub commit: &'static str,
    pub what: &'static str,
    /// The format of the log it leaves (a format-0 log is rewritten once
    /// by each new member).
    pub log_format: u8,
}

/// The builds a rolling upgrade must start from: the last before log
/// entries and peer messages carried a format version (format 0, the
/// oldest), the last on openraft 0.9 (reverse links, format 1; its
/// members cannot decode the peer methods openraft 0.10 added), and the
/// last that sent one append at a time (its members answer each call on a
/// link on a task of its own, so they must be sent one at a time). Moved
/// forward when a release's format is the new baseline.
pub const UPGRADE_BASELINES: &[Baseline] = &[
    Baseline {
        commit: "9f7dbeba6386d04dbe86bd1658346099c664382e",
        what: "the last build before format versions",
        log_format: 0,
    },
    Baseline {
        commit: "ebc9528eb4d1e3cab1f441f56ffbffb72d0f4277",
        what: "the last build on openraft 0.9",
        log_format: 1,
    },
    Baseline {
        commit: "75c471ee84f94c52dce184dee2a3a8beba349548",
        what: "the last build with one append at a time per follower",
        log_format: 1,
    },
];

pub fn upgrade(args: &[&str]) -> Result<ExitCode> {
    if !args.is_empty() {
        return Err(format!("upgrade takes no arguments, not {args:?}"));
    }
    let root = workspace_root();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let target = target_dir(&cargo, &root)?;
    let dir = target.join("upgrade");
    let mut old_bins = Vec::new();
    for baseline in UPGRADE_BASELINES {
        let old_bin = dir.join(format!("hark-{}", &baseline.commit[..12]));
        if !old_bin.exists() {
            build_baseline(&root, &cargo, &target, &dir, &old_bin, baseline.commit)?;
        }
        old_bins.push((baseline, old_bin));
    }
    // The baseline's build replaced target/debug/hark: build the current
    // tree again (only the final links, its artifacts are fresh).
    if build_server(&root)?.is_none() {
        return Ok(ExitCode::FAILURE);
    }
    // The README's test selection, already built: `--test rolling_upgrade`
    // alone would resolve the build-time crates differently and, on a cold
    // machine, compile RocksDB's C++ again (16 minutes of a cold CI run).
    let built = Command::new(&cargo)
        .args(["test", "--workspace", "--locked", "--no-run"])
        .args(["--message-format", "json-render-diagnostics"])
        .current_dir(&root)
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("running cargo test --no-run: {e}"))?;
    if !built.status.success() {
        return Ok(ExitCode::FAILURE);
    }
    let test = test_executable(&String::from_utf8_lossy(&built.stdout), "rolling_upgrade")
        .ok_or("cargo built no rolling_upgrade test")?;
    for (baseline, old_bin) in old_bins {
        eprintln!(
            "== rolling upgrade from {} ({})",
            baseline.what,
            &baseline.commit[..12]
        );
        let status = Command::new(&test)
            .env("HARK_OLD_BIN", &old_bin)
            .env("HARK_OLD_LOG_FORMAT", baseline.log_format.to_string())
            .env("HARK_REQUIRE_UPGRADE", "1")
            .current_dir(root.join("crates/hark-server"))
            .status()
            .map_err(|e| format!("running {}: {e}", test.display()))?;
        if !status.success() {
            return Ok(ExitCode::FAILURE);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The workspace's `[profile.dev] debug` (Cargo.toml), which every
/// baseline is built with.
const DEV_DEBUG: &str = "line-tables-only";

fn build_baseline(
    root: &Path,
    cargo: &str,
    target: &Path,
    dir: &Path,
    old_bin: &Path,
    commit: &str,
) -> Result<()> {
    let tree = dir.join("tree");
    let git = |args: &[&str]| -> Result<()> {
        let status = Command::new("git")
            .arg("-C")
            .arg(root)
            .args(args)
            .status()
            .map_err(|e| format!("running git: {e}"))?;
        if status.success() {
            Ok(())
        } else {
            Err(format!(
                "git {args:?} failed (a shallow clone lacks the baseline commit)"
            ))
        }
    };
    let tree_arg = tree.to_str().ok_or("the target dir's path is not UTF-8")?;
    // A tree left by an interrupted run goes first.
    let _ = git(&["worktree", "remove", "--force", tree_arg]);
    let _ = std::fs::remove_dir_all(&tree);
    git(&["worktree", "prune"])?;
    git(&["worktree", "add", "--detach", tree_arg, commit])?;
    // The tests' own selection (`--all-targets`): any other resolves the
    // build-time crates differently and, on a machine without that variant,
    // compiles RocksDB's C++ once more. The baseline's test executables are
    // deleted after: only `hark` is wanted.
    // And this tree's dev profile: a baseline from before its debug setting
    // would build every dependency (RocksDB's C++ with them) once more, with
    // full debug info (13 min 42 s and ~25 GB more of a cold CI run, measured).
    let built = Command::new(cargo)
        .args(["build", "--workspace", "--all-targets", "--locked"])
        .args(["--message-format", "json-render-diagnostics"])
        .env("CARGO_PROFILE_DEV_DEBUG", DEV_DEBUG)
        .env("CARGO_TARGET_DIR", target)
        .current_dir(&tree)
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("running cargo build: {e}"));
    let copied = match built {
        Ok(out) if out.status.success() => {
            let kept = std::fs::copy(target.join("debug/hark"), old_bin)
                .map(|_| ())
                .map_err(|e| format!("keeping the baseline's hark: {e}"));
            remove_test_executables(&String::from_utf8_lossy(&out.stdout));
            kept
        }
        Ok(out) => Err(format!("building the baseline failed: {}", out.status)),
        Err(e) => Err(e),
    };
    let _ = git(&["worktree", "remove", "--force", tree_arg]);
    copied
}

/// The executable of test target `name` among cargo's JSON messages.
fn test_executable(messages: &str, name: &str) -> Option<std::path::PathBuf> {
    let target = format!("\"name\":\"{name}\"");
    messages
        .lines()
        .filter(|l| l.contains("\"reason\":\"compiler-artifact\"") && l.contains(&target))
        .find_map(|line| {
            let key = "\"executable\":\"";
            let rest = &line[line.find(key)? + key.len()..];
            Some(rest[..rest.find('"')?].into())
        })
}

/// Deletes the test executables cargo's JSON messages name (their
/// `"profile":{..."test":true...}` artifacts): the baseline's tests are
/// never run, and each is tens of MB.
fn remove_test_executables(messages: &str) {
    for line in messages.lines() {
        if !line.contains("\"reason\":\"compiler-artifact\"") || !line.contains("\"test\":true") {
            continue;
        }
        let key = "\"executable\":\"";
        if let Some(start) = line.find(key) {
            let rest = &line[start + key.len()..];
            if let Some(end) = rest.find('"') {
                let _ = std::fs::remove_file(&rest[..end]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    /// The baselines are built with the workspace's own dev profile debug
    /// setting, or every dependency compiles a second time.
    #[test]
    fn baselines_build_with_the_workspaces_dev_debug_setting() {
        let manifest = std::fs::read_to_string(crate::workspace_root().join("Cargo.toml"))
            .expect("read the workspace's Cargo.toml");
        let dev = manifest
            .split("\n[")
            .find(|section| section.starts_with("profile.dev]"))
            .expect("a [profile.dev] section");
        let debug = dev
            .lines()
            .find_map(|l| l.trim().strip_prefix("debug = "))
            .expect("[profile.dev] sets debug");
        assert_eq!(debug.trim_matches('"'), super::DEV_DEBUG);
    }
}
