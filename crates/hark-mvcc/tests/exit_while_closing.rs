//! A process whose last store handle is dropped on a background thread just
//! as `main` returns must wait for the store to close: RocksDB's static state
//! is destroyed at exit, and a close still running then aborts the process.

use std::process::Command;
use std::time::Duration;

use hark_mvcc::{PutRequest, Store, StoreOptions, WriteRequest};

const CHILD: &str = "child_drops_its_store_on_another_thread_after_returning";

#[test]
fn exit_waits_for_a_store_closing_on_another_thread() {
    let dir = tempfile::tempdir().unwrap();
    let output = Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            CHILD,
            "--nocapture",
            "--test-threads=1",
        ])
        .env("EXIT_TEST_DIR", dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "child failed: {:?}\n{stderr}",
        output.status
    );
    // Printed by the background thread half a second after the test
    // returned: only a process that waited at exit gets that far.
    assert!(
        stderr.contains("closing the store"),
        "exit did not wait:\n{stderr}"
    );
    // And the store it closed is whole.
    let store = Store::open(dir.path(), StoreOptions::default()).unwrap();
    assert_eq!(store.current_revision(), 2);
}

#[test]
#[ignore = "run by exit_waits_for_a_store_closing_on_another_thread in a child process"]
fn child_drops_its_store_on_another_thread_after_returning() {
    let dir = std::env::var_os("EXIT_TEST_DIR").expect("run by the parent test");
    let store = Store::open(dir, StoreOptions::default()).unwrap();
    store
        .apply_blocking(WriteRequest::Put(PutRequest {
            key: "k".into(),
            value: "v".into(),
            ..Default::default()
        }))
        .unwrap();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(500));
        eprintln!("closing the store");
        drop(store);
    });
}
