//! `hark-server`: Hark's etcd v3 API over gRPC (tonic) and its HTTP endpoints.
//!
//! One [`Node`] holds the store, the watch engine and the lessor; the gRPC
//! services (the private modules `kv`, `watch`, `lease` and `maintenance`)
//! translate between etcd's wire types and those layers and never touch
//! storage themselves. Every write goes through `hark_mvcc::Store::apply`, the
//! one apply path.
//!
//! [`start`] binds the listeners and serves until [`RunningServer::shutdown`];
//! the `hark` binary wraps it with etcd's flags ([`Config`]).

mod access;
mod auth;
mod authority;
mod boundary;
mod cluster_leases;
mod compactor;
pub mod config;
mod errors;
mod grpc_metrics;
mod http;
mod kv;
mod lease;
mod maintenance;
mod node;
mod oversize;
mod pacing;
mod quota;
mod server;
mod server_metrics;
mod shutdown;
mod tls;
mod traffic;
mod watch;
mod watch_frame;
mod wire_edits;

pub use config::{Config, LogFormat};
pub use node::Node;
pub use server::{RunningServer, start};

/// The version Hark reports in `Status`: clients gate features on etcd's version,
/// and Hark implements the 3.5 API (progress requests need at least 3.5.8...).
pub const ETCD_VERSION: &str = "3.5.17";
/// The cluster version in `GET /version`, as a 3.5 cluster reports it.
pub const ETCD_CLUSTER_VERSION: &str = "3.5.0";
