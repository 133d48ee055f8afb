//! Every example in `examples/` run against an in-process Hark server and
//! against a real etcd 3.7 (skipped without the `etcd-3.7` binary, see
//! `common/etcd.rs`). Each example asserts its own outcome; each run gets a
//! fresh server.

mod common;

// `main` is for `cargo run --example`; here only `run` is called.
#[allow(dead_code)]
#[path = "../examples/blocking_query.rs"]
mod blocking_query;
#[allow(dead_code)]
#[path = "../examples/cache.rs"]
mod cache;
#[allow(dead_code)]
#[path = "../examples/kv.rs"]
mod kv;
#[allow(dead_code)]
#[path = "../examples/lease.rs"]
mod lease;
#[allow(dead_code)]
#[path = "../examples/txn.rs"]
mod txn;
#[allow(dead_code)]
#[path = "../examples/watch_resume.rs"]
mod watch_resume;

/// One test per example and server: `on_hark::kv`, `on_etcd::kv`, ...
macro_rules! run_examples {
    ($($example:ident),* $(,)?) => {
        mod on_hark {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $example() {
                    let (server, _dir) = crate::common::server(&[]).await;
                    let endpoint = server.endpoints().remove(0);
                    crate::$example::run(&endpoint).await.unwrap();
                }
            )*
        }

        mod on_etcd {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $example() {
                    let Some(etcd) = crate::common::etcd::start() else { return };
                    let client = hark_client::Client::connect([&etcd.endpoint]).await.unwrap();
                    crate::common::etcd::ready(&client).await;
                    crate::$example::run(&etcd.endpoint).await.unwrap();
                }
            )*
        }
    };
}

run_examples!(kv, txn, lease, watch_resume, cache, blocking_query);
