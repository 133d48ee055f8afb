//! etcd's leases over a [`hark_mvcc::Store`].
//!
//! The store keeps what must survive a crash: each lease's id and granted TTL, and
//! which keys are attached to it. The [`Lessor`] keeps time: every lease's expiry,
//! pushed back by keep-alives. An expired lease is revoked by submitting
//! `WriteRequest::LeaseRevoke` to the store's one apply path, so its keys are
//! deleted in one revision and watchers see the DELETE events like any other.
//!
//! As etcd does on a leader change, a restart gives every lease its full TTL
//! again: remaining time is not persisted.
//!
//! In a cluster the lessor writes through a [`LeaseLog`] (the replicated log)
//! instead of the store, learns of leases granted or revoked elsewhere from the
//! store, and expires leases only while it is the primary (the leader's); a
//! lessor made primary gives every lease its full TTL again, as etcd's does.
//!
//! # Example
//!
//! ```
//! use std::sync::mpsc;
//! use std::time::Duration;
//!
//! use hark_lease::{LeaseError, Lessor, LessorConfig};
//! use hark_mvcc::{PutRequest, RangeRequest, Store};
//!
//! const WAIT: Duration = Duration::from_secs(5);
//!
//! let store = Store::in_memory();
//! let lessor = Lessor::start(store.clone(), LessorConfig::default());
//!
//! // Grant a 10 s lease; the callback runs once the grant is durable.
//! let (tx, rx) = mpsc::channel();
//! lessor.grant(0, 10, Box::new(move |r| drop(tx.send(r))));
//! let lease = rx.recv_timeout(WAIT)??;
//! assert!(lease.id > 0);
//! assert_eq!(lease.ttl, 10);
//!
//! // Attach a key by putting it with the lease.
//! let mut put = PutRequest::new("sessions/alice", "online");
//! put.lease = lease.id;
//! let put_rev = store.put(put)?.header_revision;
//! let ttl = lessor.time_to_live(lease.id, true)?;
//! assert_eq!(ttl.granted_ttl, 10);
//! assert!((9..=10).contains(&ttl.ttl), "whole seconds left: {}", ttl.ttl);
//! assert_eq!(ttl.keys, ["sessions/alice"]);
//!
//! // A keep-alive renews it to its full TTL.
//! assert_eq!(lessor.keep_alive(lease.id), Ok(10));
//!
//! // Revoking it deletes its keys in one revision.
//! let (tx, rx) = mpsc::channel();
//! lessor.revoke(lease.id, Box::new(move |r| drop(tx.send(r))));
//! let revoked_at = rx.recv_timeout(WAIT)??;
//! assert_eq!(revoked_at, put_rev + 1);
//! assert!(store.range(&RangeRequest::key("sessions/alice"))?.kvs.is_empty());
//! assert_eq!(lessor.keep_alive(lease.id), Err(LeaseError::NotFound));
//! assert!(lessor.leases().is_empty());
//!
//! // Dropping the lessor stops its expiry thread.
//! drop(lessor);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

mod clock;
mod config;
mod error;
mod lessor;
mod log;

pub use clock::Clock;
pub use config::LessorConfig;
pub use error::LeaseError;
pub use lessor::{Granted, Lessor, MAX_LEASE_TTL, TimeToLive};
pub use log::{LeaseLog, LogDone};
