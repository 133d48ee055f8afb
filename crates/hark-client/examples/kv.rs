//! Put, get, a read of the past, a prefix range and deletes: etcd's basic
//! key-value calls, and what their revisions mean.
//!
//! `cargo run -p hark-client --example kv` against `ETCD_ENDPOINT` (default
//! `http://127.0.0.1:2379`; Hark or etcd 3.5). It writes only under
//! `hark-client-examples/kv/`.

use hark_client::{Client, pb, prefix_end};

const PREFIX: &str = "hark-client-examples/kv/";

pub async fn run(endpoint: &str) -> Result<(), Box<dyn std::error::Error>> {
    let client = Client::connect([endpoint]).await?;
    let everything = pb::DeleteRangeRequest {
        key: PREFIX.into(),
        range_end: prefix_end(PREFIX.as_bytes()).into(),
        prev_kv: true,
    };
    // What an earlier run left.
    client.delete_range(everything.clone()).await?;

    let colour = format!("{PREFIX}colour");
    // Each write that changes something makes a new store revision.
    let first = client.put(colour.clone(), "blue").await?;
    let created_at = first.header.unwrap_or_default().revision;
    let got = client.get(colour.clone()).await?;
    let kv = &got.kvs[0];
    assert_eq!(kv.value, "blue");
    assert_eq!(
        (kv.create_revision, kv.mod_revision, kv.version),
        (created_at, created_at, 1)
    );

    let second = client.put(colour.clone(), "green").await?;
    let changed_at = second.header.unwrap_or_default().revision;
    assert!(changed_at > created_at);
    let kv = &client.get(colour.clone()).await?.kvs[0];
    assert_eq!(kv.value, "green");
    assert_eq!(
        (kv.create_revision, kv.mod_revision, kv.version),
        (created_at, changed_at, 2)
    );

    // Until it is compacted, the past stays readable.
    let then = client
        .range(pb::RangeRequest {
            key: colour.clone().into(),
            revision: created_at,
            ..Default::default()
        })
        .await?;
    assert_eq!(then.kvs[0].value, "blue");

    // A prefix read returns keys in order; `count` counts them all even
    // when `limit` returns fewer.
    client.put(format!("{PREFIX}shape"), "circle").await?;
    client.put(format!("{PREFIX}size"), "3").await?;
    let all = client.get_prefix(PREFIX).await?;
    let keys: Vec<_> = all.kvs.iter().map(|kv| kv.key.clone()).collect();
    assert_eq!(
        keys,
        [
            colour.clone(),
            format!("{PREFIX}shape"),
            format!("{PREFIX}size")
        ]
    );
    let prefix = pb::RangeRequest {
        key: PREFIX.into(),
        range_end: prefix_end(PREFIX.as_bytes()).into(),
        ..Default::default()
    };
    let page = client
        .range(pb::RangeRequest { limit: 2, ..prefix })
        .await?;
    assert_eq!((page.kvs.len(), page.more, page.count), (2, true, 3));

    let deleted = client.delete(colour.clone()).await?;
    assert_eq!(deleted.deleted, 1);
    assert!(client.get(colour.clone()).await?.kvs.is_empty());
    // Deleting what is not there is no error (and makes no revision).
    assert_eq!(client.delete(colour).await?.deleted, 0);

    // A range delete, returning what it deleted.
    let rest = client.delete_range(everything).await?;
    assert_eq!(rest.deleted, 2);
    assert_eq!(rest.prev_kvs[0].value, "circle");
    assert_eq!(client.get_prefix(PREFIX).await?.count, 0);
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let endpoint =
        std::env::var("ETCD_ENDPOINT").unwrap_or_else(|_| "http://127.0.0.1:2379".into());
    run(&endpoint).await?;
    println!("kv: ok");
    Ok(())
}
