//! `hark-client`: an async client for Hark — and for etcd, since it speaks
//! only etcd's v3 gRPC API (it depends on `hark-proto`, never on the server).
//!
//! * [`Client`]: KV (get, put, delete, [`Txn`], compact), leases (grant,
//!   revoke, a keep-alive task, time-to-live, list), maintenance status;
//!   calls ride through leader changes and members down, retried as
//!   clientv3 retries them (never a write that could apply twice).
//! * [`Client::watch`]: watches multiplexed over one gRPC stream, each with its
//!   own buffer. A broken stream is re-opened with backoff and every watch is
//!   re-created from the revision after the last one it delivered, so a
//!   consumer sees no gap and no duplicate. See [`watch`].
//! * Locks and elections through etcd's lock and election services:
//!   [`Client::lock`], [`Client::campaign`], [`Client::observe`].
//! * [`Cache`]: a list-and-watch cache of a prefix, with waits for a revision
//!   (consistent reads from cache) and change subscriptions.
//! * Blocking queries in the Nomad style: [`Client::wait_for_change`] and
//!   [`Client::changed_since`].
//!
//! It works against Hark and against etcd 3.5 alike; the crate's README
//! has a tour, and `examples/` has runnable examples (each also run against
//! both servers by `tests/examples.rs`).
//!
//! ```no_run
//! # async fn demo() -> Result<(), hark_client::Error> {
//! use hark_client::{Client, WatchOptions};
//!
//! let client = Client::connect(["http://127.0.0.1:2379"]).await?;
//! let put = client.put("greeting", "hello").await?;
//! // From the revision after the put: a watch "from now" could be created
//! // on the server only after the next put, and miss it.
//! let after = put.header.unwrap().revision + 1;
//! let mut watch = client
//!     .watch("greeting", WatchOptions::default().from_revision(after))
//!     .await?;
//! client.put("greeting", "hi").await?;
//! let change = watch.next().await.unwrap()?;
//! assert_eq!(change.events[0].kv.as_ref().unwrap().value, "hi");
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

mod auth;
mod blocking;
pub mod cache;
mod client;
mod concurrency;
mod endpoints;
mod secure;
mod txn;
pub mod watch;

pub use auth::PermissionType;
pub use blocking::{Changed, Changes};
pub use cache::{Cache, CacheEvent};
pub use client::{Client, Error, KeepAlive};
pub use concurrency::LeaderKey;
pub use hark_proto::authpb::Permission;
pub use hark_proto::etcdserverpb as pb;
pub use hark_proto::mvccpb::{Event, KeyValue, event::EventType};
pub use secure::{ConnectOptions, TlsOptions};
pub use txn::{Compare, CompareOp, Op, Txn};
pub use watch::{Watch, WatchError, WatchOptions, WatchUpdate};

// The README's code compiles (as `no_run` doc tests).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

/// etcd's "end of the key space" rule: the smallest key greater than every key
/// starting with `prefix` (`"\0"`, meaning every key, for an empty prefix).
pub use hark_proto::keys::prefix_end;
