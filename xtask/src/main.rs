//! Project chores, run as `cargo xtask <command>` (see `.cargo/config.toml`).
//!
//! Commands:
//!
//! - `codegen`: regenerate the prost/tonic code of `crates/hark-proto` from
//!   the protos under `proto/`, with the vendored `protoc`.
//! - `codegen --check`: regenerate into a temporary directory and fail if the
//!   committed code differs (for CI).
//! - `run [ARGS]`: build the workspace the way the tests do and run Hark on the
//!   default data dir (see `run` for why it is not a plain `cargo run`).
//! - `loadtest SCENARIO [ARGS]`: build Hark and the load generator in release
//!   mode, then run `hark-loadtest` (see `crates/hark-loadtest`).
//! - `chaos [ARGS]`: build like the tests do, then run the fault suite
//!   `hark-chaos` (see `crates/hark-chaos`) against the debug `hark`.
//! - `attack [ARGS]`: the hostile-client battery (`hark-loadtest attack`):
//!   release builds, or with `--quick` the debug builds the tests use.
//! - `watch-guard`: the real-client watch-latency scenario in its short CI
//!   form against the debug `hark` (see `watch_guard`).
//! - `prune [HOURS]`: free disk in the target directory (see `prune`).
//! - `dist [--profile release|dev] [--deb]`: the release archive, checked,
//!   and the Debian package (see `dist.rs`).
//! - `deb-smoke DEB`: install, start, use, stop and purge the package.
//! - `upgrade`: the rolling-upgrade test from an older build (`upgrade.rs`).
//! - `etcd`, `etcd-e2e`: the newest etcd built from Go modules, and etcd's
//!   own end-to-end tests run on Hark (`etcd.rs`).
//! - `kube`, `kube-storage`: Kubernetes' control plane on Hark ×3 and etcd
//!   ×3 with a checked workload, and the API server's storage conformance
//!   tests on both (`kube.rs`).

mod dist;
mod etcd;
mod kube;
mod upgrade;

use std::ffi::OsStr;
use std::fmt::Write as _;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::{SystemTime, UNIX_EPOCH};

/// Protos to compile, relative to the include root `<workspace>/proto`.
const PROTOS: &[&str] = &[
    "etcd/api/mvccpb/kv.proto",
    "etcd/api/authpb/auth.proto",
    "etcd/api/etcdserverpb/rpc.proto",
    "etcd/server/v3lockpb/v3lock.proto",
    "etcd/server/v3electionpb/v3election.proto",
    "hark/peerpb/peer.proto",
    "hark/harkpb/usage.proto",
];

/// Files the generator must produce (one per proto package); `hark-proto`'s
/// `lib.rs` includes exactly these.
const EXPECTED_OUTPUTS: &[&str] = &[
    "authpb.rs",
    "authpb.serde.rs",
    "etcdserverpb.rs",
    "etcdserverpb.serde.rs",
    "harkpb.rs",
    "harkpb.serde.rs",
    "harkpeerpb.rs",
    "mvccpb.rs",
    "mvccpb.serde.rs",
    "v3electionpb.rs",
    "v3electionpb.serde.rs",
    "v3lockpb.rs",
    "v3lockpb.serde.rs",
];

/// Packages that get serde impls in the proto3 JSON mapping (pbjson), for
/// etcd's JSON gateway. Hark's peer protocol is gRPC-only.
const JSON_PACKAGES: &[&str] = &[
    ".authpb",
    ".etcdserverpb",
    ".harkpb",
    ".mvccpb",
    ".v3electionpb",
    ".v3lockpb",
];

/// Where the generated code is committed, relative to the workspace root.
const GENERATED_DIR: &str = "crates/hark-proto/src/generated";

const HELP: &str = "\
Usage: cargo xtask <command>

Commands:
  codegen           Regenerate crates/hark-proto/src/generated/ from proto/
  codegen --check   Fail if the committed generated code is stale
  run [ARGS]        Build like the tests do, then run the hark server (default data dir ./default.hark)
  cluster [ARGS]    Build like the tests do, then run a local 3-member cluster with etcd's flags
                    (clients on 2379, 22379, 32379; data in ./cluster/m1..m3.hark; ARGS go to every member)
  loadtest ARGS     Release-build, then run the load generator (`cargo xtask loadtest help`)
  chaos [ARGS]      Build like the tests do, then run the fault suite on a 3-member cluster
                    (`cargo xtask chaos --help`; e.g. --seed 7 --duration 60 --compare-etcd PATH;
                    --mutation NAME runs Hark with a deliberate bug and expects it caught)
  attack [ARGS]     Hostile clients against Hark (auth on) while a good client writes and watches;
                    fails when Hark misses a target (`cargo xtask attack --help`; --quick for CI
                    uses the debug build; --only CASE,..; --compare-etcd PATH; --out FILE; --json)
  loadtest scale [--quick] [ARGS]
                    Fill one member to 10 M Kubernetes-shaped keys (~20 GiB) and measure it at
                    each size, beside etcd with --compare-etcd (`cargo xtask loadtest scale --help`);
                    --quick is CI's small form on the debug binaries
  watch-guard       Build like the tests do, then the real-client watch-latency scenario
                    (etcd-client, one stream per watcher) against Hark alone; fails past
                    its event-after-ack p99 bound or on a lost or duplicated event (CI)
  prune [HOURS]     Free disk in the target dir: delete test and program binaries not rebuilt
                    for HOURS (default 24) and the incremental caches; RocksDB's build stays
  dist [--profile release|dev] [--deb]
                    Build hark and harkctl (release by default), then the archive
                    target/dist/hark-VERSION-ARCH-linux.tar.gz (binaries, man pages, sample
                    config, systemd unit, /etc/default file, LICENSE, SHA256SUMS), unpacked and
                    checked; --deb also builds the .deb with cargo-deb
  deb-smoke [DEB]   As root: dpkg -i the package (default: the one dist --deb made), start the service as its unit does, use it
                    with the installed harkctl, stop it (SIGTERM) and purge the package
  upgrade           Build hark at the upgrade baseline (the last commit before format versions)
                    in a git worktree, then run the rolling-upgrade test from it to this tree
  etcd [--dir]      Build (once, into a cache outside the tree) etcd, etcdctl, etcdutl and
                    etcd's benchmark tool at the version xtask/etcd/go.mod pins; print their paths
  etcd-e2e [--server hark|etcd] [--release] [--short | REGEX]
                    etcd's own end-to-end tests (same version) with `etcd` being the server under
                    test (Hark's debug build by default), each test in its own process; prints a
                    table and the totals; --release tests Hark's release build;
                    --short is CI's quick form (docs/etcd-e2e.md)
  kube [--server hark|etcd] [--release] [--faults | --bench]
                    Build (once, into a cache outside the tree) kube-apiserver,
                    kube-controller-manager and kubectl at the version xtask/kube/go.mod pins; run
                    the control plane on etcd ×3, then Hark ×3 (kubeadm's etcd arguments, mutual
                    TLS) and the checked workload of xtask/kube/harness; --faults: kill the
                    leader, pause a member and compact under load, an informer and a watch;
                    --bench: creates, lists, 200 informers under updates, members' RSS and
                    CPU, beside etcd with ratios (docs/kubernetes.md, docs/benchmarks.md)
  kube-storage [--server hark|etcd] [--release] [REGEX]
                    The Kubernetes API server's storage conformance tests (k8s.io/apiserver's
                    generic storage tests on its etcd3 layer) on etcd ×3, then Hark ×3 (debug
                    build by default); prints both columns; fails if a test that passes on etcd
                    fails on Hark (docs/kubernetes.md)
  help              Print this help
";

type Result<T, E = String> = std::result::Result<T, E>;

fn main() -> ExitCode {
    forget_cargo_run_env();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let result = match args.as_slice() {
        ["codegen"] => codegen(),
        ["codegen", "--check"] => codegen_check(),
        ["run", rest @ ..] => run(rest),
        ["cluster", rest @ ..] => cluster(rest),
        ["loadtest", rest @ ..] => loadtest(rest),
        ["chaos", rest @ ..] => chaos(rest),
        ["attack", rest @ ..] => attack(rest),
        ["watch-guard"] => watch_guard(),
        ["dist", rest @ ..] => dist::dist(rest),
        ["deb-smoke", rest @ ..] => dist::deb_smoke(rest),
        ["upgrade", rest @ ..] => upgrade::upgrade(rest),
        ["etcd", rest @ ..] => etcd::etcd(rest),
        ["etcd-e2e", rest @ ..] => etcd::etcd_e2e(rest),
        ["kube", rest @ ..] => kube::kube(rest),
        ["kube-storage", rest @ ..] => kube::kube_storage(rest),
        ["prune"] => prune(24),
        ["prune", hours] => match hours.parse() {
            Ok(hours) => prune(hours),
            Err(_) => Err(format!(
                "prune: HOURS must be a whole number, not {hours:?}"
            )),
        },
        [] | ["help" | "--help" | "-h"] => {
            print!("{HELP}");
            Ok(ExitCode::SUCCESS)
        }
        _ => {
            eprintln!("xtask: unknown arguments: {}\n\n{HELP}", args.join(" "));
            Ok(ExitCode::from(2))
        }
    };
    result.unwrap_or_else(|err| {
        eprintln!("xtask: error: {err}");
        ExitCode::FAILURE
    })
}

/// `cargo xtask` is `cargo run -p xtask`, which hands xtask the package
/// variables of xtask itself (`CARGO_PKG_NAME=xtask`, ...). Inherited by the
/// cargo builds xtask starts, they reach build scripts that declare
/// `rerun-if-env-changed` on them (ring's does), so every build from xtask
/// and every plain `cargo test` rebuilt ring, rustls and all of Hark in
/// turn. Dropped here, before any thread or child exists.
fn forget_cargo_run_env() {
    let _ = MANIFEST_DIR.set(std::env::var_os("CARGO_MANIFEST_DIR"));
    let inherited: Vec<_> = std::env::vars_os()
        .map(|(name, _)| name)
        .filter(|name| {
            let name = name.to_string_lossy();
            name.starts_with("CARGO_PKG_")
                || name.starts_with("CARGO_MANIFEST_")
                || matches!(
                    name.as_ref(),
                    "CARGO_CRATE_NAME" | "CARGO_BIN_NAME" | "CARGO_PRIMARY_PACKAGE"
                )
        })
        .collect();
    for name in inherited {
        // SAFETY: called first thing in `main`, while the process has one
        // thread; nothing reads the environment concurrently.
        unsafe { std::env::remove_var(name) };
    }
}

/// `CARGO_MANIFEST_DIR` as `cargo run` gave it, kept for [`workspace_root`].
static MANIFEST_DIR: std::sync::OnceLock<Option<std::ffi::OsString>> = std::sync::OnceLock::new();

/// What `run` starts: the server binary.
const RUN_TARGET: &str = "hark";

/// `cargo xtask run`: builds with exactly the selection the tests use
/// (`--workspace --all-targets`), then runs the program. A plain `cargo run`
/// selects one package, which resolves the build-time crates (bindgen's
/// dependencies) with other features and so recompiles RocksDB's C++ a second
/// time (~20 CPU-minutes); this way the one build serves tests and running.
fn run(args: &[&str]) -> Result<ExitCode> {
    let root = workspace_root();
    let Some(program) = build_server(&root)? else {
        return Ok(ExitCode::FAILURE);
    };
    let mut cmd = Command::new(&program);
    cmd.args(args).current_dir(&root);
    // Become the server, so Ctrl-C and SIGTERM reach it alone and it exits cleanly.
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        let err = cmd.exec();
        Err(format!("running {}: {err}", program.display()))
    }
    #[cfg(not(unix))]
    {
        let status = cmd
            .status()
            .map_err(|e| format!("running {}: {e}", program.display()))?;
        Ok(if status.success() {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        })
    }
}

/// Runs a child to its end: success or failure, as its own exit says.
fn run_child(command: &mut Command) -> Result<ExitCode> {
    let status = command
        .status()
        .map_err(|e| format!("running {}: {e}", command.get_program().display()))?;
    Ok(if status.success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Builds with exactly the selection the tests use (see [`run`]) and
/// returns the debug `hark` binary; `None` if the build failed.
fn build_server(root: &Path) -> Result<Option<PathBuf>> {
    build_server_with(root, &[])
}

/// [`build_server`] with extra cargo arguments (features: only Hark's own
/// crates are rebuilt, and both builds stay cached side by side).
fn build_server_with(root: &Path, extra: &[&str]) -> Result<Option<PathBuf>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let status = Command::new(&cargo)
        .args(["build", "--workspace", "--all-targets", "--locked"])
        .args(extra)
        .current_dir(root)
        .status()
        .map_err(|e| format!("running cargo build: {e}"))?;
    if !status.success() {
        return Ok(None);
    }
    Ok(Some(
        target_dir(&cargo, root)?.join("debug").join(RUN_TARGET),
    ))
}

/// `cargo xtask chaos`: the fault suite checks correctness, not speed, so
/// it runs the debug binaries the tests build (no third RocksDB build).
///
/// `--mutation NAME` (see hark-mvcc's `chaos.rs`) builds Hark with that
/// deliberate bug available and switches it on: the run succeeds when the
/// checkers report an anomaly, and fails when the bug goes unnoticed.
fn chaos(args: &[&str]) -> Result<ExitCode> {
    let root = workspace_root();
    let args = etcd::resolve_compare_etcd(args)?;
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut mutation = None;
    let mut rest = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match (*arg, arg.strip_prefix("--mutation=")) {
            (_, Some(name)) => mutation = Some(name.to_string()),
            ("--mutation", None) => {
                mutation = Some(args.next().ok_or("--mutation needs a name")?.to_string())
            }
            _ => rest.push(*arg),
        }
    }
    let features: &[&str] = match mutation {
        Some(_) => &["--features", "hark-server/chaos-mutations"],
        None => &[],
    };
    let Some(hark) = build_server_with(&root, features)? else {
        return Ok(ExitCode::FAILURE);
    };
    let mut command = Command::new(hark.with_file_name("hark-chaos"));
    command
        .args(&rest)
        .arg(format!("--hark={}", hark.display()))
        .current_dir(&root);
    if let Some(name) = &mutation {
        command.env("HARK_MUTATION", name);
    }
    let status = command
        .status()
        .map_err(|e| format!("running hark-chaos: {e}"))?;
    // hark-chaos exits 1 when it found anomalies, 2 when the run failed.
    Ok(match (&mutation, status.code()) {
        (None, Some(0)) => ExitCode::SUCCESS,
        (Some(name), Some(1)) => {
            eprintln!("mutation {name}: caught");
            ExitCode::SUCCESS
        }
        (Some(name), Some(0)) => {
            eprintln!("mutation {name}: NOT caught: the checkers found nothing");
            ExitCode::FAILURE
        }
        _ => ExitCode::FAILURE,
    })
}

/// The three members `cluster` starts: (name, client port, peer port), as
/// etcd's own Procfile lays out a local cluster.
const CLUSTER: [(&str, u16, u16); 3] = [
    ("m1", 2379, 2380),
    ("m2", 22379, 22380),
    ("m3", 32379, 32380),
];

/// `cargo xtask cluster`: builds as `run` does, starts three `hark` members
/// with etcd's cluster flags, and stops them all when any one exits or on
/// Ctrl-C (their data stays in `./cluster`, so a second run resumes it).
fn cluster(args: &[&str]) -> Result<ExitCode> {
    let root = workspace_root();
    let Some(program) = build_server(&root)? else {
        return Ok(ExitCode::FAILURE);
    };
    let initial: Vec<String> = CLUSTER
        .iter()
        .map(|(name, _, peer)| format!("{name}=http://127.0.0.1:{peer}"))
        .collect();
    let mut children = Vec::new();
    for (name, client, peer) in CLUSTER {
        let child = Command::new(&program)
            .args([
                "--name",
                name,
                "--data-dir",
                &format!("cluster/{name}.hark"),
                "--listen-client-urls",
                &format!("http://127.0.0.1:{client}"),
                "--advertise-client-urls",
                &format!("http://127.0.0.1:{client}"),
                "--listen-peer-urls",
                &format!("http://127.0.0.1:{peer}"),
                "--initial-advertise-peer-urls",
                &format!("http://127.0.0.1:{peer}"),
                "--initial-cluster",
                &initial.join(","),
                "--initial-cluster-state",
                "new",
            ])
            .args(args)
            .current_dir(&root)
            .spawn()
            .map_err(|e| format!("starting {}: {e}", program.display()))?;
        children.push(child);
    }
    eprintln!(
        "xtask: cluster of 3 serving on http://127.0.0.1:2379, :22379, :32379 (Ctrl-C stops all)"
    );
    // Ctrl-C reaches the whole process group, members included; otherwise
    // wait until one member exits, then stop the others.
    let code = loop {
        let mut exited = None;
        for child in &mut children {
            if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
                exited = Some(status);
            }
        }
        if let Some(status) = exited {
            break status;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    };
    for child in &mut children {
        let _ = child.kill();
        let _ = child.wait();
    }
    Ok(if code.success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// `cargo xtask loadtest`: the load generator and the server must be optimised
/// builds to measure anything, so both are built with `--release` (always the
/// same selection, so RocksDB's release build is paid once), then the
/// generator runs with `HARK_BIN` pointing at the server it may start.
fn loadtest(args: &[&str]) -> Result<ExitCode> {
    let root = workspace_root();
    if let ["scale", rest @ ..] = args
        && rest.contains(&"--quick")
    {
        return scale_quick(&root, rest);
    }
    let args = etcd::resolve_compare_etcd(args)?;
    let Some(release) = build_release(&root)? else {
        return Ok(ExitCode::FAILURE);
    };
    run_child(
        Command::new(release.join("hark-loadtest"))
            .args(&args)
            .env("HARK_BIN", release.join("hark")),
    )
}

/// `cargo xtask loadtest scale --quick`: CI's form of the scale scenario,
/// so its code cannot rot: the debug binaries the tests build (no release
/// RocksDB build), 20,000 keys measured at 10,000 and 20,000, short loads.
/// Its figures say nothing about scale; the full run is in docs/benchmarks.md.
fn scale_quick(root: &Path, args: &[&str]) -> Result<ExitCode> {
    let rest: Vec<&str> = args.iter().copied().filter(|a| *a != "--quick").collect();
    let rest = etcd::resolve_compare_etcd(&rest)?;
    let Some(hark) = build_server(root)? else {
        return Ok(ExitCode::FAILURE);
    };
    run_child(
        Command::new(hark.with_file_name("hark-loadtest"))
            .arg("scale")
            .args(["--keys", "20000", "--checkpoints", "10000,20000"])
            .args(["--seconds", "2", "--rate", "100", "--reads", "200"])
            .args(&rest)
            .env("HARK_BIN", &hark)
            .current_dir(root),
    )
}

/// Release-builds every binary (always the same selection, so RocksDB's
/// release build is paid once for `loadtest` and `attack`) and returns the
/// release directory; `None` if the build failed.
fn build_release(root: &Path) -> Result<Option<PathBuf>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let status = Command::new(&cargo)
        .args(["build", "--release", "--workspace", "--bins", "--locked"])
        .current_dir(root)
        .status()
        .map_err(|e| format!("running cargo build: {e}"))?;
    if !status.success() {
        return Ok(None);
    }
    Ok(Some(target_dir(&cargo, root)?.join("release")))
}

/// `cargo xtask attack`: the hostile-client battery of `hark-loadtest
/// attack`. Its figures are costs and latencies, so the full run uses the
/// release builds (as `loadtest`, the same selection, so RocksDB's release
/// build is shared); `--quick` is CI's form and, like `chaos`, runs the
/// debug binaries the tests build, so CI pays no release RocksDB build.
fn attack(args: &[&str]) -> Result<ExitCode> {
    let root = workspace_root();
    let args = etcd::resolve_compare_etcd(args)?;
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let args = args.as_slice();
    let quick = args.contains(&"--quick");
    let wants_help = args.iter().any(|a| matches!(*a, "--help" | "-h" | "help"));
    let (hark, generator) = if quick || wants_help {
        let Some(hark) = build_server(&root)? else {
            return Ok(ExitCode::FAILURE);
        };
        let generator = hark.with_file_name("hark-loadtest");
        (hark, generator)
    } else {
        let Some(release) = build_release(&root)? else {
            return Ok(ExitCode::FAILURE);
        };
        (release.join("hark"), release.join("hark-loadtest"))
    };
    run_child(
        Command::new(&generator)
            .arg("attack")
            .args(args)
            .env("HARK_BIN", &hark)
            .current_dir(&root),
    )
}

/// `cargo xtask watch-guard`: 100 watchers, each on its own watch stream
/// consumed by the `etcd-client` crate, over 4 connections, while an
/// open-loop writer puts 200 keys/s for 5 s; three rounds on a fresh Hark
/// each. Fails when the median event-after-ack p99 is over the bound or an
/// event is lost or duplicated. Debug binaries (no third RocksDB build), so
/// the bound is set from debug runs on a quiet 2-core machine (2026-12-04):
/// 9.6-10.7 ms as built, 30-50 ms with the watch engine's thread at
/// niceness 19, the regression of #34 (docs/benchmarks.md).
fn watch_guard() -> Result<ExitCode> {
    const BOUND_MS: &str = "20";
    let root = workspace_root();
    let Some(hark) = build_server(&root)? else {
        return Ok(ExitCode::FAILURE);
    };
    let generator = hark.with_file_name("hark-loadtest");
    run_child(
        Command::new(&generator)
            .args(["watch-latency", "--etcd-client", "--hark-alone"])
            .args(["--rate", "200", "--duration", "5", "--rounds", "3"])
            .args(["--max-after-ack-p99", BOUND_MS])
            .arg("--hark")
            .arg(&hark)
            .current_dir(&root),
    )
}

/// `cargo xtask prune [HOURS]`: every build variant and every test leaves
/// its linked binaries in `<profile>/deps` (40-240 MB each, RocksDB linked
/// in), and a kept target dir grows until the disk is full (74 GB once).
/// Deletes the binaries not rebuilt for `hours` and the incremental caches;
/// keeps libraries and build-script outputs, so RocksDB is not rebuilt.
fn prune(hours: u64) -> Result<ExitCode> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let target = target_dir(&cargo, &workspace_root())?;
    let cutoff = SystemTime::now() - std::time::Duration::from_secs(hours * 3600);
    let freed = prune_target(&target, cutoff)?;
    println!(
        "xtask: freed {:.1} GB in {}",
        freed as f64 / 1e9,
        target.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// Deletes from each profile dir of `target` the executables in `deps`
/// last modified before `cutoff`, and the whole `incremental` dir; returns
/// the bytes freed.
fn prune_target(target: &Path, cutoff: SystemTime) -> Result<u64> {
    use std::os::unix::fs::PermissionsExt;
    let mut freed = 0;
    let profiles =
        fs::read_dir(target).map_err(|e| format!("reading {}: {e}", target.display()))?;
    for profile in profiles.flatten() {
        let profile = profile.path();
        if let Ok(entries) = fs::read_dir(profile.join("deps")) {
            for entry in entries.flatten() {
                let Ok(meta) = entry.metadata() else { continue };
                let executable = meta.is_file() && meta.permissions().mode() & 0o111 != 0;
                // Shared libraries are executable too, and proc macros are them.
                let library = entry.path().extension().is_some_and(|e| e == "so");
                let old = meta.modified().is_ok_and(|m| m < cutoff);
                if executable && !library && old && fs::remove_file(entry.path()).is_ok() {
                    freed += meta.len();
                }
            }
        }
        let incremental = profile.join("incremental");
        if incremental.is_dir() {
            freed += dir_size(&incremental);
            fs::remove_dir_all(&incremental)
                .map_err(|e| format!("removing {}: {e}", incremental.display()))?;
        }
    }
    Ok(freed)
}

fn dir_size(dir: &Path) -> u64 {
    let Ok(entries) = fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => dir_size(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

/// The workspace's target directory, as cargo reports it.
fn target_dir(cargo: &str, root: &Path) -> Result<PathBuf> {
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .current_dir(root)
        .output()
        .map_err(|e| format!("running cargo metadata: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let key = "\"target_directory\":\"";
    let start = text
        .find(key)
        .ok_or("cargo metadata printed no target_directory")?
        + key.len();
    let end = text[start..]
        .find('"')
        .ok_or("cargo metadata output is cut")?
        + start;
    Ok(PathBuf::from(text[start..end].replace("\\\\", "\\")))
}

/// `cargo xtask codegen`: regenerate and write the files that changed.
fn codegen() -> Result<ExitCode> {
    let root = workspace_root();
    let tmp = TempDir::new("codegen")?;
    let generated = generate(&root, tmp.path())?;
    let dest = root.join(GENERATED_DIR);
    fs::create_dir_all(&dest).map_err(|e| format!("creating {}: {e}", dest.display()))?;

    for (name, contents) in &generated {
        let path = dest.join(name);
        if fs::read(&path).ok().as_deref() == Some(contents.as_slice()) {
            println!("unchanged {GENERATED_DIR}/{name}");
            continue;
        }
        fs::write(&path, contents).map_err(|e| format!("writing {}: {e}", path.display()))?;
        println!("wrote     {GENERATED_DIR}/{name}");
    }
    for name in committed_rs_files(&dest)? {
        if !generated.iter().any(|(n, _)| *n == name) {
            let path = dest.join(&name);
            fs::remove_file(&path).map_err(|e| format!("removing {}: {e}", path.display()))?;
            println!("removed   {GENERATED_DIR}/{name} (no longer generated)");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `cargo xtask codegen --check`: exit 1 if the committed files are stale.
fn codegen_check() -> Result<ExitCode> {
    let root = workspace_root();
    let tmp = TempDir::new("codegen-check")?;
    let generated = generate(&root, tmp.path())?;
    let dest = root.join(GENERATED_DIR);

    let mut stale = Vec::new();
    for (name, contents) in &generated {
        match fs::read(dest.join(name)) {
            Ok(committed) if committed == *contents => {}
            Ok(_) => stale.push(format!("{GENERATED_DIR}/{name} (differs)")),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                stale.push(format!("{GENERATED_DIR}/{name} (missing)"));
            }
            Err(e) => return Err(format!("reading {GENERATED_DIR}/{name}: {e}")),
        }
    }
    if dest.is_dir() {
        for name in committed_rs_files(&dest)? {
            if !generated.iter().any(|(n, _)| *n == name) {
                stale.push(format!("{GENERATED_DIR}/{name} (not generated any more)"));
            }
        }
    }

    if stale.is_empty() {
        println!("hark-proto: generated code is up to date");
        return Ok(ExitCode::SUCCESS);
    }
    let mut msg = String::from("hark-proto: generated code is stale:\n");
    for s in &stale {
        let _ = writeln!(msg, "  {s}");
    }
    msg.push_str("run `cargo xtask codegen` and commit the result");
    eprintln!("{msg}");
    Ok(ExitCode::FAILURE)
}

/// Runs protoc + prost + tonic (and pbjson for the JSON mapping) into
/// `out_dir`, formats the output with
/// rustfmt, and returns `(file name, contents)` sorted by name.
fn generate(root: &Path, out_dir: &Path) -> Result<Vec<(String, Vec<u8>)>> {
    let include = root.join("proto");
    let protos: Vec<PathBuf> = PROTOS.iter().map(|p| include.join(p)).collect();
    for p in &protos {
        if !p.is_file() {
            return Err(format!("missing proto file {}", p.display()));
        }
    }
    let protoc = protoc_bin_vendored::protoc_bin_path()
        .map_err(|e| format!("locating the vendored protoc: {e}"))?;

    let mut config = tonic_prost_build::Config::new();
    config.protoc_executable(protoc);
    let descriptors = out_dir.join("descriptors.bin");
    config.file_descriptor_set_path(&descriptors);
    // `bytes::Bytes` for every bytes field: keys and values pass between the wire
    // and the store (which holds `Bytes`) without copying.
    config.bytes(["."]);
    tonic_prost_build::configure()
        .build_server(true)
        .build_client(true)
        .emit_rerun_if_changed(false)
        .out_dir(out_dir)
        .compile_with_config(config, &protos, &[include])
        .map_err(|e| format!("protoc/prost code generation failed: {e}"))?;

    // etcd's gateway writes proto field names (`range_end`, `TTL`) and drops
    // fields it does not know; bytes fields are `Bytes`, as above.
    let descriptor_set =
        fs::read(&descriptors).map_err(|e| format!("reading {}: {e}", descriptors.display()))?;
    fs::remove_file(&descriptors)
        .map_err(|e| format!("removing {}: {e}", descriptors.display()))?;
    pbjson_build::Builder::new()
        .register_descriptors(&descriptor_set)
        .map_err(|e| format!("reading the descriptor set: {e}"))?
        .out_dir(out_dir)
        .preserve_proto_field_names()
        .ignore_unknown_fields()
        .build(JSON_PACKAGES)
        .map_err(|e| format!("pbjson code generation failed: {e}"))?;

    let names = committed_rs_files(out_dir)?;
    if names != EXPECTED_OUTPUTS {
        return Err(format!(
            "generator produced {names:?}, expected {EXPECTED_OUTPUTS:?}; \
             update xtask and crates/hark-proto/src/lib.rs together"
        ));
    }
    let paths: Vec<PathBuf> = names.iter().map(|n| out_dir.join(n)).collect();
    rustfmt(root, &paths)?;

    names
        .into_iter()
        .map(|name| {
            let path = out_dir.join(&name);
            let contents =
                fs::read(&path).map_err(|e| format!("reading {}: {e}", path.display()))?;
            Ok((name, contents))
        })
        .collect()
}

/// Formats `files` in place as `cargo fmt` would (edition 2024, and the
/// workspace's rustfmt.toml if there is one), so that `cargo fmt --check` and
/// `codegen --check` agree.
fn rustfmt(root: &Path, files: &[PathBuf]) -> Result<()> {
    let rustfmt = std::env::var_os("RUSTFMT").unwrap_or_else(|| "rustfmt".into());
    let mut cmd = Command::new(&rustfmt);
    cmd.args(["--edition", "2024"]);
    if let Some(cfg) = ["rustfmt.toml", ".rustfmt.toml"]
        .iter()
        .map(|n| root.join(n))
        .find(|p| p.is_file())
    {
        cmd.arg("--config-path").arg(cfg);
    }
    cmd.args(files);
    let status = cmd.status().map_err(|e| {
        format!(
            "running {}: {e} (is rustfmt installed? `rustup component add rustfmt`)",
            Path::new(&rustfmt).display()
        )
    })?;
    if !status.success() {
        return Err(format!("rustfmt failed on the generated code ({status})"));
    }
    Ok(())
}

/// Sorted names of the `*.rs` files directly in `dir`.
fn committed_rs_files(dir: &Path) -> Result<Vec<String>> {
    let entries = fs::read_dir(dir).map_err(|e| format!("listing {}: {e}", dir.display()))?;
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| format!("listing {}: {e}", dir.display()))?;
        let path = entry.path();
        if path.is_file() && path.extension() == Some(OsStr::new("rs")) {
            let name = entry
                .file_name()
                .into_string()
                .map_err(|n| format!("non-UTF-8 file name {}", Path::new(&n).display()))?;
            names.push(name);
        }
    }
    names.sort();
    Ok(names)
}

/// The workspace root: the parent of this crate's directory. `cargo run`
/// names that directory at run time; the compile-time path is only a fallback,
/// since checkouts at other paths share one target dir (and one binary).
fn workspace_root() -> PathBuf {
    let manifest_dir = MANIFEST_DIR
        .get()
        .cloned()
        .flatten()
        .or_else(|| std::env::var_os("CARGO_MANIFEST_DIR"))
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from);
    manifest_dir
        .parent()
        .expect("xtask lives in a subdirectory of the workspace")
        .to_path_buf()
}

/// A uniquely named directory under the system temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(label: &str) -> Result<Self> {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let path =
            std::env::temp_dir().join(format!("hark-xtask-{label}-{}-{nanos}", std::process::id()));
        fs::create_dir(&path).map_err(|e| format!("creating {}: {e}", path.display()))?;
        Ok(Self(path))
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;
    use std::time::Duration;

    fn file(path: &Path, executable: bool, age: Duration) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, b"0123456789").unwrap();
        let mode = if executable { 0o755 } else { 0o644 };
        fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
        let f = fs::File::options().write(true).open(path).unwrap();
        f.set_modified(SystemTime::now() - age).unwrap();
    }

    /// Old binaries and incremental caches go; libraries, build outputs
    /// and binaries built since the cutoff stay.
    #[test]
    fn prune_deletes_only_old_binaries_and_incremental_caches() {
        let dir = TempDir::new("prune-test").unwrap();
        let t = dir.path();
        let day = Duration::from_secs(24 * 3600);
        let minute = Duration::from_secs(60);
        file(&t.join("debug/deps/watch-0123"), true, 2 * day);
        file(&t.join("release/deps/hark-4567"), true, 2 * day);
        file(&t.join("debug/deps/metrics-89ab"), true, minute);
        file(&t.join("debug/deps/libhark_mvcc-cdef.rlib"), false, 2 * day);
        file(&t.join("debug/deps/libserde_derive-0000.so"), true, 2 * day);
        file(
            &t.join("debug/build/librocksdb-sys-1/out/librocksdb.a"),
            false,
            2 * day,
        );
        file(
            &t.join("debug/incremental/hark-1/s-1/query-cache.bin"),
            false,
            minute,
        );

        let freed = prune_target(t, SystemTime::now() - day).unwrap();

        assert_eq!(freed, 30, "two old binaries and one cache file of 10 bytes");
        assert!(!t.join("debug/deps/watch-0123").exists());
        assert!(!t.join("release/deps/hark-4567").exists());
        assert!(!t.join("debug/incremental").exists());
        for kept in [
            "debug/deps/metrics-89ab",
            "debug/deps/libhark_mvcc-cdef.rlib",
            "debug/deps/libserde_derive-0000.so",
            "debug/build/librocksdb-sys-1/out/librocksdb.a",
        ] {
            assert!(t.join(kept).exists(), "{kept} was deleted");
        }
    }
}
