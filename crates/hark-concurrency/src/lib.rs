//! `hark-concurrency`: etcd's lock and election gRPC services.
//!
//! - [`LockService`] serves `v3lockpb.Lock` (Lock, Unlock).
//! - [`ElectionService`] serves `v3electionpb.Election` (Campaign, Proclaim,
//!   Leader, Observe, Resign).
//!
//! Neither keeps state. As in etcd's server, a holder or candidate is a key
//! under the name's prefix (`name/` and its lease ID in hex) bound to its
//! lease, and the holder or leader is the key created first; waiting is
//! watching the key created just before one's own until it is deleted, so
//! waiters form a queue in creation order and each release wakes one. A
//! lease's end (expiry, revoke) therefore releases the lock or the
//! leadership, by the one write path every other deletion takes.
//!
//! Every step is a call on the server's own KV, Lease and Watch services
//! through an in-process [`hark_http::GrpcService`], made as the caller
//! (its token and its connection go along), so auth applies to each key
//! as it would to the caller's own calls. Failures answer as etcd's do:
//! `Unknown`, with etcd's message (`election: no leader`, `etcdserver:
//! requested lease not found`, ...).

mod calls;
mod election;
mod lock;

pub use calls::SESSION_TTL;
pub use election::ElectionService;
pub use lock::LockService;
