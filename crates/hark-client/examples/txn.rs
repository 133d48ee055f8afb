//! Transactions: create-if-absent, and compare-and-swap on a counter that
//! two writers race to increment (etcd's optimistic concurrency: compare
//! the key's `mod_revision`, retry on failure).
//!
//! `cargo run -p hark-client --example txn` against `ETCD_ENDPOINT` (default
//! `http://127.0.0.1:2379`; Hark or etcd 3.5). It writes only under
//! `hark-client-examples/txn/`.

use hark_client::pb::response_op::Response;
use hark_client::{Client, Compare, CompareOp, KeyValue, Op, Txn};

const COUNTER: &str = "hark-client-examples/txn/counter";

/// The counter's value and the revision of its last change.
async fn read(client: &Client) -> Result<(u64, i64), Box<dyn std::error::Error>> {
    let kv = client.get(COUNTER).await?.kvs.into_iter().next();
    let kv = kv.ok_or("the counter does not exist")?;
    Ok((std::str::from_utf8(&kv.value)?.parse()?, kv.mod_revision))
}

/// Sets the counter to `value` only if it has not changed since `seen`
/// (its `mod_revision` then); on failure, returns the counter as it is.
async fn swap(
    client: &Client,
    seen: i64,
    value: u64,
) -> Result<Result<(), KeyValue>, Box<dyn std::error::Error>> {
    let resp = client
        .txn(
            Txn::new()
                .when([Compare::mod_revision(COUNTER, CompareOp::Equal, seen)])
                .and_then([Op::put(COUNTER, value.to_string())])
                .or_else([Op::get(COUNTER)]),
        )
        .await?;
    if resp.succeeded {
        return Ok(Ok(()));
    }
    // The failure branch's read, in the same transaction: no second round trip.
    match resp.responses.into_iter().next().and_then(|r| r.response) {
        Some(Response::ResponseRange(range)) => {
            Ok(Err(range.kvs.into_iter().next().ok_or("gone")?))
        }
        other => Err(format!("unexpected response {other:?}").into()),
    }
}

pub async fn run(endpoint: &str) -> Result<(), Box<dyn std::error::Error>> {
    let client = Client::connect([endpoint]).await?;
    // What an earlier run left.
    client.delete(COUNTER).await?;
    client.delete(format!("{COUNTER}-done")).await?;

    // Create-if-absent: a missing key has create_revision 0.
    let create = || {
        Txn::new()
            .when([Compare::create_revision(COUNTER, CompareOp::Equal, 0)])
            .and_then([Op::put(COUNTER, "0")])
    };
    assert!(client.txn(create()).await?.succeeded);
    assert!(!client.txn(create()).await?.succeeded, "it exists now");

    // Two writers read the same version...
    let (a_value, a_seen) = read(&client).await?;
    let (b_value, b_seen) = read(&client).await?;
    assert_eq!((a_value, a_seen), (b_value, b_seen));
    // ...the first swap wins...
    assert_eq!(swap(&client, a_seen, a_value + 1).await?, Ok(()));
    // ...and the second loses: the counter moved on, and the failure
    // branch tells it to what.
    let current = swap(&client, b_seen, b_value + 1)
        .await?
        .expect_err("a stale compare-and-swap fails");
    assert_eq!(current.value, "1");
    assert!(current.mod_revision > b_seen);
    // Retrying from what it saw succeeds.
    let value: u64 = std::str::from_utf8(&current.value)?.parse()?;
    assert_eq!(
        swap(&client, current.mod_revision, value + 1).await?,
        Ok(())
    );
    assert_eq!(read(&client).await?.0, 2);

    // A branch's ops all run at one revision, atomically.
    let resp = client
        .txn(
            Txn::new()
                .when([Compare::value(COUNTER, CompareOp::Equal, "2")])
                .and_then([
                    Op::delete(COUNTER),
                    Op::put(format!("{COUNTER}-done"), "yes"),
                ]),
        )
        .await?;
    assert!(resp.succeeded);
    let revision = resp.header.unwrap_or_default().revision;
    let done = client.get(format!("{COUNTER}-done")).await?;
    assert_eq!(done.kvs[0].mod_revision, revision);
    assert!(client.get(COUNTER).await?.kvs.is_empty());
    client.delete(format!("{COUNTER}-done")).await?;
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let endpoint =
        std::env::var("ETCD_ENDPOINT").unwrap_or_else(|_| "http://127.0.0.1:2379".into());
    run(&endpoint).await?;
    println!("txn: ok");
    Ok(())
}
