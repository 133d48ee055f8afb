//! Servers for the tests: an in-process Hark server on a free port over a
//! temporary data dir, and a real etcd ([`etcd`]).

// Each test binary includes this module and uses only a part of it.
#![allow(dead_code)]

pub mod etcd;

use clap::Parser;

pub async fn server(extra: &[&str]) -> (hark_server::RunningServer, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec![
        "hark".to_string(),
        "--listen-client-urls=http://127.0.0.1:0".into(),
        "--listen-peer-urls=http://127.0.0.1:0".into(),
        format!("--data-dir={}", dir.path().display()),
        "--unsafe-no-fsync".into(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let config = hark_server::Config::try_parse_from(args).unwrap();
    (hark_server::start(&config).await.unwrap(), dir)
}
