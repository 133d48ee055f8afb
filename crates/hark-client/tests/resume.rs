//! A watch survives its server being killed (SIGKILL) and restarted: the
//! client reconnects and resumes from the revision after the last one it
//! delivered, so the consumer sees every revision exactly once, in order.
//!
//! Runs the `hark` binary that `cargo test --workspace` builds next to the
//! test executables.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use hark_client::{Client, WatchOptions};
use tokio::sync::Mutex;

fn hark_binary() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let bin = exe.parent().unwrap().parent().unwrap().join("hark");
    assert!(
        bin.is_file(),
        "{} missing: run the tests with `cargo test --workspace`",
        bin.display()
    );
    bin
}

fn spawn(dir: &Path, port: u16) -> Child {
    Command::new(hark_binary())
        .args([
            format!("--listen-client-urls=http://127.0.0.1:{port}"),
            "--listen-peer-urls=http://127.0.0.1:0".into(),
            format!("--data-dir={}", dir.join("data").display()),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

async fn ready(c: &Client) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while c.status().await.is_err() {
        assert!(Instant::now() < deadline, "hark did not come up");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_watch_resumes_across_a_server_kill_and_restart() {
    let dir = tempfile::tempdir().unwrap();
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = spawn(dir.path(), port);
    let c = Client::connect([format!("http://127.0.0.1:{port}")])
        .await
        .unwrap();
    ready(&c).await;

    let options = WatchOptions {
        prefix: true,
        created_notify: true,
        ..Default::default()
    };
    let mut w = c.watch("r/", options).await.unwrap();
    assert!(w.next().await.unwrap().unwrap().created);
    let seen: Arc<Mutex<Vec<(i64, String)>>> = Arc::default();
    let collector = {
        let seen = seen.clone();
        tokio::spawn(async move {
            while let Some(update) = w.next().await {
                let update = update.expect("the watch never fails");
                let mut seen = seen.lock().await;
                for e in update.events {
                    let kv = e.kv.unwrap();
                    seen.push((kv.mod_revision, String::from_utf8(kv.key.to_vec()).unwrap()));
                }
            }
        })
    };

    // One writer; a failed put (server down) is retried with the same key.
    let acked: Arc<Mutex<Vec<(i64, String)>>> = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (c, acked, stop) = (c.clone(), acked.clone(), stop.clone());
        tokio::spawn(async move {
            let mut i = 0;
            while !stop.load(Ordering::Relaxed) {
                let key = format!("r/{i}");
                match c.put(key.clone(), "v").await {
                    Ok(r) => {
                        acked.lock().await.push((r.header.unwrap().revision, key));
                        i += 1;
                    }
                    Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
                }
            }
        })
    };
    let wait_acked = |n: usize| {
        let acked = acked.clone();
        async move {
            let deadline = Instant::now() + Duration::from_secs(60);
            while acked.lock().await.len() < n {
                assert!(Instant::now() < deadline, "writes stalled");
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    };
    wait_acked(100).await;
    child.kill().unwrap();
    child.wait().unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut child = spawn(dir.path(), port);
    wait_acked(300).await;
    stop.store(true, Ordering::Relaxed);
    writer.await.unwrap();

    let last = c.status().await.unwrap().header.unwrap().revision;
    let deadline = Instant::now() + Duration::from_secs(30);
    while seen.lock().await.last().map_or(0, |s| s.0) < last {
        assert!(Instant::now() < deadline, "the watch did not catch up");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let seen = seen.lock().await.clone();
    let revisions: Vec<i64> = seen.iter().map(|s| s.0).collect();
    assert_eq!(
        revisions,
        (2..=last).collect::<Vec<_>>(),
        "every revision exactly once, in order"
    );
    for (rev, key) in acked.lock().await.iter() {
        assert_eq!(&seen[(rev - 2) as usize].1, key);
    }
    collector.abort();
    child.kill().unwrap();
    child.wait().unwrap();
}
