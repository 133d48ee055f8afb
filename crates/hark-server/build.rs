//! Records the commit the `hark` binary is built from (`HARK_GIT_COMMIT`,
//! for `hark --version`, `hark_build_info` and `GET /version`): taken from
//! the variable when the build sets it (a release built from an archive),
//! else from git, else `unknown` (a crates.io build has no repository).

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !text.is_empty()).then_some(text)
}

fn main() {
    println!("cargo:rerun-if-env-changed=HARK_GIT_COMMIT");
    let commit = std::env::var("HARK_GIT_COMMIT")
        .ok()
        .filter(|c| !c.is_empty())
        .or_else(|| git(&["rev-parse", "--short=12", "HEAD"]))
        .unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=HARK_GIT_COMMIT={commit}");
    // The compiler's version, as `go_info` and `etcd_server_go_version`
    // name etcd's Go: `rust1.90.0`.
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    let version = Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|v| v.split_whitespace().nth(1).map(str::to_string))
        .unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=HARK_RUSTC_VERSION=rust{version}");
    // Built again when HEAD moves: it names a branch whose ref moves, or a
    // commit itself.
    if let Some(git_dir) = git(&["rev-parse", "--absolute-git-dir"]) {
        println!("cargo:rerun-if-changed={git_dir}/HEAD");
        if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
            let loose = format!("{git_dir}/{branch}");
            if std::path::Path::new(&loose).exists() {
                println!("cargo:rerun-if-changed={loose}");
            }
        }
        let packed = format!("{git_dir}/packed-refs");
        if std::path::Path::new(&packed).exists() {
            println!("cargo:rerun-if-changed={packed}");
        }
    }
}
