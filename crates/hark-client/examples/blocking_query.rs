//! Blocking queries in the style of Nomad and Consul: keep a view of a
//! prefix (key -> mod revision), park until something under it changes after
//! the revision the view is as of (`wait_for_change`), then fetch only what
//! moved (`changed_since`).
//!
//! `cargo run -p hark-client --example blocking_query` against
//! `ETCD_ENDPOINT` (default `http://127.0.0.1:2379`; Hark or etcd 3.5). It
//! writes only under `hark-client-examples/blocking/`.

use std::collections::HashMap;
use std::time::Duration;

use hark_client::{Changed, Client, Op, Txn};

const PREFIX: &str = "hark-client-examples/blocking/";

pub async fn run(endpoint: &str) -> Result<(), Box<dyn std::error::Error>> {
    let client = Client::connect([endpoint]).await?;
    client.delete_prefix(PREFIX).await?;
    let key = |name: &str| format!("{PREFIX}{name}");
    client.put(key("api"), "10.0.0.1").await?;
    client.put(key("db"), "10.0.0.2").await?;

    // The first view: everything is new to an empty one.
    let first = client.changed_since(PREFIX, &HashMap::new()).await?;
    assert_eq!(first.updated.len(), 2);
    assert!(first.deleted.is_empty());
    let mut view: HashMap<_, _> = first
        .updated
        .iter()
        .map(|kv| (kv.key.clone(), kv.mod_revision))
        .collect();

    // Nothing moves: the wait times out with no changes.
    let quiet = client
        .wait_for_change(PREFIX, first.revision, Duration::from_millis(300))
        .await?;
    assert!(quiet.is_empty());

    // A writer changes one key and deletes another while we wait.
    let writer = async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let txn = Txn::new().and_then([Op::put(key("api"), "10.0.0.9"), Op::delete(key("db"))]);
        client.txn(txn).await
    };
    let wait = client.wait_for_change(PREFIX, first.revision, Duration::from_secs(30));
    let (written, changed) = tokio::join!(writer, wait);
    let revision = written?.header.unwrap_or_default().revision;
    let changed = changed?;
    let expected = [
        Changed {
            key: key("api").into(),
            mod_revision: revision,
            deleted: false,
        },
        Changed {
            key: key("db").into(),
            mod_revision: revision,
            deleted: true,
        },
    ];
    assert_eq!(changed, expected);

    // Fetch only what moved since our view, as of one revision.
    let next = client.changed_since(PREFIX, &view).await?;
    assert!(next.revision >= revision);
    assert_eq!(next.updated.len(), 1);
    assert_eq!(next.updated[0].value, "10.0.0.9");
    assert_eq!(next.deleted, [key("db")]);
    for kv in &next.updated {
        view.insert(kv.key.clone(), kv.mod_revision);
    }
    for gone in &next.deleted {
        view.remove(gone);
    }
    assert_eq!(view.len(), 1);

    // A wait from a revision the store has moved past returns at once,
    // with the first change after it.
    let again = client
        .wait_for_change(PREFIX, first.revision, Duration::from_secs(30))
        .await?;
    assert_eq!(again, expected);
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let endpoint =
        std::env::var("ETCD_ENDPOINT").unwrap_or_else(|_| "http://127.0.0.1:2379".into());
    run(&endpoint).await?;
    println!("blocking_query: ok");
    Ok(())
}
