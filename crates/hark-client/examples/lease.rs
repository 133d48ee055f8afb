//! Leases: a key that lives only while its owner keeps renewing the lease
//! (service registration, locks). Grant, attach a key, keep alive past the
//! TTL, revoke: the key disappears with the lease.
//!
//! `cargo run -p hark-client --example lease` against `ETCD_ENDPOINT`
//! (default `http://127.0.0.1:2379`; Hark or etcd 3.5). It writes only under
//! `hark-client-examples/lease/`, and takes about 4 s.

use std::time::{Duration, Instant};

use hark_client::{Client, pb};

const KEY: &str = "hark-client-examples/lease/node-1";
/// Short, to show renewal past it; etcd's and Hark's shortest is 2 s.
const TTL: i64 = 3;

pub async fn run(endpoint: &str) -> Result<(), Box<dyn std::error::Error>> {
    let client = Client::connect([endpoint]).await?;
    client.delete(KEY).await?;

    let lease = client.lease_grant(TTL, 0).await?;
    assert_eq!(lease.ttl, TTL);
    client
        .put_request(pb::PutRequest {
            key: KEY.into(),
            value: "10.0.0.7:8080".into(),
            lease: lease.id,
            ..Default::default()
        })
        .await?;

    // Renewed every TTL/3 in the background while `alive` lives.
    let alive = client.keep_alive(lease.id).await?;
    assert_eq!(alive.ttl(), TTL);
    tokio::time::sleep(Duration::from_secs(TTL as u64 + 1)).await;
    let kvs = client.get(KEY).await?.kvs;
    let kv = kvs.first().ok_or("the key expired with its lease")?;
    assert_eq!(kv.lease, lease.id, "the key outlived the TTL");
    let left = client.lease_time_to_live(lease.id, true).await?;
    assert_eq!(left.granted_ttl, TTL);
    // Whole seconds left since the last renewal (-1 would mean it expired).
    assert!((0..=TTL).contains(&left.ttl), "{}", left.ttl);
    assert_eq!(left.keys, [KEY]);

    // Revoking deletes the lease's keys at once (one revision for them all).
    client.lease_revoke(lease.id).await?;
    assert!(client.get(KEY).await?.kvs.is_empty());
    assert_eq!(client.lease_time_to_live(lease.id, false).await?.ttl, -1);
    // The keep-alive's next renewal finds the lease gone, and stops.
    let deadline = Instant::now() + Duration::from_secs(10);
    while alive.ttl() > 0 {
        assert!(
            Instant::now() < deadline,
            "the keep-alive did not see the revoke"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Writing with a lease that is gone fails with etcd's error.
    let err = client
        .put_request(pb::PutRequest {
            key: KEY.into(),
            lease: lease.id,
            ..Default::default()
        })
        .await
        .expect_err("the lease is gone");
    assert!(
        err.to_string().contains("requested lease not found"),
        "{err}"
    );
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let endpoint =
        std::env::var("ETCD_ENDPOINT").unwrap_or_else(|_| "http://127.0.0.1:2379".into());
    run(&endpoint).await?;
    println!("lease: ok");
    Ok(())
}
