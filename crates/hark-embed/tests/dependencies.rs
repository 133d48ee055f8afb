//! What embedding Hark pulls in: the crate's normal dependency tree, as
//! `cargo metadata` resolves it, holds no gRPC, HTTP or server crate; and
//! built with only the pure-Rust backend, nothing that compiles C or C++.

use std::collections::{BTreeSet, HashMap};
use std::process::Command;

use serde_json::Value;

const FORBIDDEN: &[&str] = &[
    "tonic",
    "tonic-build",
    "prost-build",
    "hyper",
    "h2",
    "axum",
    "tower",
    "tokio-rustls",
    "hark-proto",
    "hark-server",
    "hark-raft",
    "hark-http",
    "hark-client",
    "hark-console",
    "hark-auth",
    "hark-cli",
];

/// The target triple rustc builds for by default (`rustc -vV`'s `host:`).
fn host_triple() -> String {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let out = Command::new(rustc).arg("-vV").output().unwrap();
    let info = String::from_utf8(out.stdout).unwrap();
    info.lines()
        .find_map(|l| l.strip_prefix("host: "))
        .expect("rustc -vV names its host")
        .to_string()
}

/// What `cargo <args>` prints, run in this crate; fails the test if it fails.
fn cargo(args: &[&str]) -> Vec<u8> {
    let out = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

#[test]
fn no_grpc_or_server_crate_in_the_tree() {
    // Resolved for this host only: other targets' dependencies (Android's,
    // Windows') are never downloaded by a build here, and offline metadata
    // without the filter would need them.
    let host = host_triple();
    let out = cargo(&[
        "metadata",
        "--format-version",
        "1",
        "--locked",
        "--offline",
        "--filter-platform",
        &host,
    ]);
    let meta: Value = serde_json::from_slice(&out).unwrap();
    let names: HashMap<&str, &str> = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["id"].as_str().unwrap(), p["name"].as_str().unwrap()))
        .collect();
    let nodes: HashMap<&str, &Value> = meta["resolve"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["id"].as_str().unwrap(), n))
        .collect();
    let root = names
        .iter()
        .find(|(_, name)| **name == "hark-embed")
        .map(|(id, _)| *id)
        .unwrap();
    // Walk every edge but dev-dependencies (normal and build: what a user's
    // build compiles), by package id, so each version of a crate is walked.
    let mut walked = BTreeSet::new();
    let mut todo = vec![root];
    while let Some(id) = todo.pop() {
        if !walked.insert(id) {
            continue;
        }
        for dep in nodes[id]["deps"].as_array().unwrap() {
            let built = dep["dep_kinds"]
                .as_array()
                .unwrap()
                .iter()
                .any(|k| k["kind"].as_str() != Some("dev"));
            if built {
                todo.push(dep["pkg"].as_str().unwrap());
            }
        }
    }
    let seen: BTreeSet<&str> = walked.iter().map(|id| names[id]).collect();
    // The walk is transitive: RocksDB comes through hark-mvcc.
    assert!(
        ["hark-mvcc", "hark-watch", "rocksdb"]
            .iter()
            .all(|c| seen.contains(c)),
        "{seen:?}"
    );
    let found: Vec<_> = FORBIDDEN.iter().filter(|f| seen.contains(*f)).collect();
    assert!(found.is_empty(), "hark-embed depends on {found:?}");
}

/// Crates that build C or C++ (or find a system library) for a dependency.
const NATIVE_BUILD: &[&str] = &[
    "librocksdb-sys",
    "rocksdb",
    "cc",
    "cmake",
    "bindgen",
    "pkg-config",
    "zstd-sys",
    "lz4-sys",
    "libz-sys",
    "bzip2-sys",
];

#[test]
fn the_pure_rust_build_compiles_no_c_or_cpp() {
    // What `cargo build -p hark-embed --no-default-features --features
    // fjall` compiles: normal and build dependencies, for this host.
    let host = host_triple();
    let out = cargo(&[
        "tree",
        "--locked",
        "--offline",
        "-p",
        "hark-embed",
        "--no-default-features",
        "--features",
        "fjall",
        "-e",
        "normal,build",
        "--prefix",
        "none",
        "--format",
        "{p}",
        "--target",
        &host,
    ]);
    let tree = String::from_utf8(out).unwrap();
    let crates: BTreeSet<&str> = tree
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .collect();
    assert!(
        ["hark-mvcc", "hark-watch", "hark-lease", "fjall"]
            .iter()
            .all(|c| crates.contains(c)),
        "{crates:?}"
    );
    let found: Vec<_> = NATIVE_BUILD
        .iter()
        .filter(|c| crates.contains(*c))
        .collect();
    assert!(found.is_empty(), "the fjall build compiles {found:?}");
}
