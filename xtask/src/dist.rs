//! `cargo xtask dist`: Hark as it is installed. The release archive
//! (`hark`, `harkctl`, man pages, the sample configuration, the systemd
//! unit and its environment file, LICENSE, `SHA256SUMS`), checked by
//! unpacking it and running what it holds; with `--deb`, the Debian
//! package from `hark-server`'s `[package.metadata.deb]` (cargo-deb).
//!
//! `cargo xtask deb-smoke DEB`: installs the package with `dpkg -i`, starts
//! the service as its unit says (systemd when it runs, else by hand: the
//! unit's user, command and environment file, with a `NOTIFY_SOCKET` to
//! hear READY=1), talks to it with the installed `harkctl`, stops it and
//! purges the package.

use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use crate::{Result, TempDir, build_release, build_server, target_dir, workspace_root};

/// The cargo-deb release CI installs (`cargo install cargo-deb --locked
/// --version ...`), named in errors so a missing one is one command away.
pub const CARGO_DEB_VERSION: &str = "3.6.3";

/// Files of the archive besides the binaries and man pages: (source in the
/// workspace, place in the archive).
const FILES: &[(&str, &str)] = &[
    ("LICENSE", "LICENSE"),
    ("README.md", "README.md"),
    (
        "crates/hark-server/contrib/hark.conf.yml.sample",
        "hark.conf.yml.sample",
    ),
    (
        "crates/hark-server/contrib/systemd/hark.service",
        "contrib/systemd/hark.service",
    ),
    (
        "crates/hark-server/contrib/default/hark",
        "contrib/default/hark",
    ),
];

struct DistArgs {
    /// `release` (what users get) or `dev` (CI: the debug binaries the
    /// tests built, so no third RocksDB build).
    profile: String,
    deb: bool,
}

fn parse(args: &[&str]) -> Result<DistArgs> {
    let mut parsed = DistArgs {
        profile: "release".to_string(),
        deb: false,
    };
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match *arg {
            "--deb" => parsed.deb = true,
            "--profile" => match rest.next().copied() {
                Some(p @ ("release" | "dev")) => parsed.profile = p.to_string(),
                other => return Err(format!("--profile takes release or dev, not {other:?}")),
            },
            other => return Err(format!("dist: unknown argument {other}")),
        }
    }
    Ok(parsed)
}

pub fn dist(args: &[&str]) -> Result<ExitCode> {
    let args = parse(args)?;
    let root = workspace_root();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let bin_dir = if args.profile == "release" {
        build_release(&root)?
    } else {
        build_server(&root)?.and_then(|hark| hark.parent().map(Path::to_path_buf))
    };
    let Some(bin_dir) = bin_dir else {
        return Ok(ExitCode::FAILURE);
    };
    let version = env!("CARGO_PKG_VERSION");
    let name = format!("hark-{version}-{}-linux", std::env::consts::ARCH);
    let out = target_dir(&cargo, &root)?.join("dist");
    let stage = out.join(&name);
    if stage.exists() {
        std::fs::remove_dir_all(&stage).map_err(|e| format!("{}: {e}", stage.display()))?;
    }
    std::fs::create_dir_all(&stage).map_err(|e| format!("{}: {e}", stage.display()))?;

    // The man pages, from harkctl's own clap model; cargo-deb packages them
    // from beside the binaries.
    let man = bin_dir.join("man");
    if man.exists() {
        std::fs::remove_dir_all(&man).map_err(|e| format!("{}: {e}", man.display()))?;
    }
    run(Command::new(bin_dir.join("harkctl")).arg("man").arg(&man))?;

    for bin in ["hark", "harkctl"] {
        copy(&bin_dir.join(bin), &stage.join(bin))?;
    }
    for (from, to) in FILES {
        copy(&root.join(from), &stage.join(to))?;
    }
    for page in read_dir(&man)? {
        let file_name = page.file_name().expect("a page has a name");
        copy(&page, &stage.join("man/man1").join(file_name))?;
    }
    // SHA256SUMS: `sha256sum -c SHA256SUMS` in the unpacked dir checks it.
    let mut listed: Vec<String> = walk(&stage)?
        .iter()
        .map(|p| {
            p.strip_prefix(&stage)
                .expect("under the stage")
                .display()
                .to_string()
        })
        .collect();
    listed.sort();
    let sums = Command::new("sha256sum")
        .args(&listed)
        .current_dir(&stage)
        .output()
        .map_err(|e| format!("running sha256sum: {e}"))?;
    if !sums.status.success() {
        return Err(format!(
            "sha256sum failed: {}",
            String::from_utf8_lossy(&sums.stderr)
        ));
    }
    std::fs::write(stage.join("SHA256SUMS"), &sums.stdout)
        .map_err(|e| format!("writing SHA256SUMS: {e}"))?;

    let archive = out.join(format!("{name}.tar.gz"));
    // Reproducible: sorted names, root-owned, one fixed time.
    let epoch = std::env::var("SOURCE_DATE_EPOCH").unwrap_or_else(|_| "0".to_string());
    run(Command::new("tar")
        .args([
            "--sort=name",
            "--owner=0",
            "--group=0",
            "--numeric-owner",
            &format!("--mtime=@{epoch}"),
            "-czf",
        ])
        .arg(&archive)
        .arg("-C")
        .arg(&out)
        .arg(&name))?;
    check_archive(&archive, &name, version)?;
    println!("{}", archive.display());

    if args.deb {
        let deb_ok = Command::new(&cargo)
            .args(["deb", "--version"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !deb_ok {
            return Err(format!(
                "cargo-deb is missing: cargo install cargo-deb --locked --version {CARGO_DEB_VERSION}"
            ));
        }
        let mut deb = Command::new(&cargo);
        deb.args(["deb", "-p", "hark-server", "--no-build", "--output"])
            .arg(&out)
            .current_dir(&root);
        if args.profile == "dev" {
            deb.args(["--profile", "dev"]);
        }
        // cargo-deb prints the package's path.
        run(&mut deb)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Unpacks the archive into a fresh dir, checks every file against
/// SHA256SUMS and runs both binaries' version commands.
fn check_archive(archive: &Path, name: &str, version: &str) -> Result<()> {
    let unpacked = TempDir::new("dist-check")?;
    run(Command::new("tar")
        .arg("-xzf")
        .arg(archive)
        .arg("-C")
        .arg(unpacked.path()))?;
    let dir = unpacked.path().join(name);
    let checked = Command::new("sha256sum")
        .args(["--check", "--quiet", "--strict", "SHA256SUMS"])
        .current_dir(&dir)
        .status()
        .map_err(|e| format!("running sha256sum: {e}"))?;
    if !checked.success() {
        return Err("the unpacked archive does not match its SHA256SUMS".into());
    }
    for (bin, arg) in [("hark", "--version"), ("harkctl", "version")] {
        let out = Command::new(dir.join(bin))
            .arg(arg)
            .output()
            .map_err(|e| format!("running the archive's {bin}: {e}"))?;
        let said = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() || !said.contains(version) {
            return Err(format!("the archive's `{bin} {arg}` said {said:?}"));
        }
    }
    Ok(())
}

pub fn deb_smoke(args: &[&str]) -> Result<ExitCode> {
    let deb = match args {
        [deb] => PathBuf::from(deb),
        // What `dist --deb` made of this version.
        [] => {
            let arch = Command::new("dpkg")
                .arg("--print-architecture")
                .output()
                .map_err(|e| format!("running dpkg: {e}"))?;
            let arch = String::from_utf8_lossy(&arch.stdout).trim().to_string();
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
            target_dir(&cargo, &workspace_root())?
                .join("dist")
                .join(format!("hark_{}-1_{arch}.deb", env!("CARGO_PKG_VERSION")))
        }
        _ => return Err("deb-smoke takes at most the .deb's path".into()),
    };
    let installed = Command::new("dpkg-query")
        .args(["-W", "-f=${Status}", "hark"])
        .output()
        .map_err(|e| format!("running dpkg-query: {e}"))?;
    if String::from_utf8_lossy(&installed.stdout).contains("installed") {
        return Err(
            "the hark package is installed already; deb-smoke installs and purges it".into(),
        );
    }
    let data_dir_existed = Path::new("/var/lib/hark").exists();
    if data_dir_existed {
        return Err("/var/lib/hark exists; deb-smoke would start a service over it".into());
    }
    run(Command::new("dpkg").arg("-i").arg(&deb))?;
    let result = smoke_installed();
    // Purged whatever happened, and the data dir the test made removed.
    let purged = run(Command::new("dpkg").args(["--purge", "hark"]));
    let _ = std::fs::remove_dir_all("/var/lib/hark");
    result?;
    purged?;
    for gone in ["/usr/bin/hark", "/usr/bin/harkctl", "/etc/default/hark"] {
        if Path::new(gone).exists() {
            return Err(format!("{gone} is still there after the purge"));
        }
    }
    println!("deb-smoke: installed, started, served, stopped and purged");
    Ok(ExitCode::SUCCESS)
}

/// What the installed package must hold and do.
fn smoke_installed() -> Result<()> {
    let unit_path = [
        "/usr/lib/systemd/system/hark.service",
        "/lib/systemd/system/hark.service",
    ]
    .into_iter()
    .find(|p| Path::new(p).exists())
    .ok_or("no hark.service installed")?;
    for file in ["/usr/bin/hark", "/usr/bin/harkctl", "/etc/default/hark"] {
        if !Path::new(file).exists() {
            return Err(format!("{file} is not installed"));
        }
    }
    run(Command::new("getent")
        .args(["passwd", "hark"])
        .stdout(Stdio::null()))?;
    let man = Command::new("man")
        .args(["-w", "harkctl-check-perf"])
        .output()
        .map_err(|e| format!("running man: {e}"))?;
    if !man.status.success() {
        return Err("man does not find harkctl's pages".into());
    }
    let unit = std::fs::read_to_string(unit_path).map_err(|e| format!("{unit_path}: {e}"))?;
    let setting = |key: &str| {
        unit.lines()
            .find_map(|l| l.strip_prefix(&format!("{key}=")))
            .map(str::to_string)
            .ok_or(format!("{unit_path} has no {key}="))
    };
    let (exec_start, user) = (setting("ExecStart")?, setting("User")?);
    let env_file = setting("EnvironmentFile")?;
    let env_file = env_file.trim_start_matches('-');
    if setting("Type")? != "notify" {
        return Err("hark.service is not Type=notify".into());
    }
    let env = std::fs::read_to_string(env_file).map_err(|e| format!("{env_file}: {e}"))?;
    let vars: Vec<(String, String)> = env
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let endpoint = vars
        .iter()
        .find(|(k, _)| k == "ETCD_ADVERTISE_CLIENT_URLS")
        .map(|(_, v)| v.clone())
        .ok_or("/etc/default/hark sets no ETCD_ADVERTISE_CLIENT_URLS")?;

    if Path::new("/run/systemd/system").exists() {
        // systemd runs: postinst started the unit (Type=notify, so the
        // start waited for READY=1).
        run(Command::new("systemctl").args(["is-active", "--quiet", "hark"]))?;
        talk(&endpoint)?;
        run(Command::new("systemctl").args(["stop", "hark"]))?;
        return Ok(());
    }

    // No systemd: what it would do. The unit's user runs its command with
    // the environment file's variables and a socket to notify.
    let sock_dir = TempDir::new("deb-smoke")?;
    let socket_path = sock_dir.path().join("notify");
    let socket = UnixDatagram::bind(&socket_path).map_err(|e| format!("notify socket: {e}"))?;
    use std::os::unix::fs::PermissionsExt;
    for (path, mode) in [(sock_dir.path(), 0o755), (socket_path.as_path(), 0o777)] {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    socket
        .set_read_timeout(Some(Duration::from_secs(1)))
        .map_err(|e| e.to_string())?;
    // setpriv execs the command as the user (no process between, which
    // would answer SIGTERM itself); hark's log goes to a file shown on failure.
    let log_path = sock_dir.path().join("hark.log");
    let log = std::fs::File::create(&log_path).map_err(|e| format!("hark.log: {e}"))?;
    let mut command = Command::new("setpriv");
    command
        .args(["--reuid", &user, "--regid", &user, "--init-groups", "--"])
        .args(exec_start.split_whitespace())
        .stdout(log.try_clone().map_err(|e| e.to_string())?)
        .stderr(log)
        .env_clear()
        .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
        .env("NOTIFY_SOCKET", &socket_path)
        .envs(vars.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .current_dir("/");
    let mut child = command
        .spawn()
        .map_err(|e| format!("starting {exec_start} as {user}: {e}"))?;
    let outcome = (|| {
        wait_for(&socket, "READY=1", Duration::from_secs(60))?;
        talk(&endpoint)?;
        // SIGTERM, as systemd stops a unit: STOPPING=1, then exit 0.
        run(Command::new("kill").args(["-TERM", &child.id().to_string()]))?;
        wait_for(&socket, "STOPPING=1", Duration::from_secs(30))?;
        let status = child.wait().map_err(|e| e.to_string())?;
        if !status.success() {
            return Err(format!("hark exited with {status} after SIGTERM"));
        }
        Ok(())
    })();
    if outcome.is_err() {
        let _ = child.kill();
        let _ = child.wait();
        eprintln!("{}", std::fs::read_to_string(&log_path).unwrap_or_default());
    }
    outcome
}

/// The installed harkctl against the service: a put read back, and the
/// member's status.
fn talk(endpoint: &str) -> Result<()> {
    let harkctl = |args: &[&str]| -> Result<String> {
        let out = Command::new("/usr/bin/harkctl")
            .arg(format!("--endpoints={endpoint}"))
            .args(args)
            .output()
            .map_err(|e| format!("running harkctl: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "harkctl {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    };
    harkctl(&["put", "installed-by", "dpkg"])?;
    let got = harkctl(&["get", "installed-by", "--print-value-only"])?;
    if got.trim() != "dpkg" {
        return Err(format!("get installed-by said {got:?}"));
    }
    harkctl(&["endpoint", "status"])?;
    Ok(())
}

/// Waits until a datagram holding `state` (a line of it) arrives.
fn wait_for(socket: &UnixDatagram, state: &str, within: Duration) -> Result<()> {
    let deadline = Instant::now() + within;
    let mut buf = [0u8; 4096];
    while Instant::now() < deadline {
        if let Ok(n) = socket.recv(&mut buf)
            && String::from_utf8_lossy(&buf[..n])
                .lines()
                .any(|l| l == state)
        {
            return Ok(());
        }
    }
    Err(format!("no {state} within {within:?}"))
}

fn run(command: &mut Command) -> Result<()> {
    let status = command
        .status()
        .map_err(|e| format!("running {}: {e}", command.get_program().display()))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!(
            "{} {:?} failed: {status}",
            command.get_program().display(),
            command.get_args().collect::<Vec<_>>()
        ))
    }
}

fn copy(from: &Path, to: &Path) -> Result<()> {
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    }
    std::fs::copy(from, to).map_err(|e| format!("copying {}: {e}", from.display()))?;
    Ok(())
}

fn read_dir(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .collect();
    paths.sort();
    Ok(paths)
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for path in read_dir(dir)? {
        if path.is_dir() {
            files.extend(walk(&path)?);
        } else {
            files.push(path);
        }
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_are_release_or_dev() {
        assert_eq!(parse(&[]).unwrap().profile, "release");
        let dev = parse(&["--profile", "dev", "--deb"]).unwrap();
        assert_eq!((dev.profile.as_str(), dev.deb), ("dev", true));
        assert!(parse(&["--profile", "bench"]).is_err());
        assert!(parse(&["--tarball"]).is_err());
    }
}
