//! `hark-server`: Hark's etcd v3 API over gRPC (tonic) and its HTTP endpoints.
//!
//! One [`Node`] holds the store, the watch engine and the lessor; the gRPC
//! services (`grpc/`) translate between etcd's wire types and those layers
//! and never touch storage themselves; `transport/` is what lies under
//! them (TLS, the HTTP/2 front, metrics), `ops/` the probes, metrics and
//! auto-compaction; `server.rs` wires it all from a [`Config`] resolved
//! once (`plan.rs`), and `tasks.rs` states the order it stops in. Every
//! write goes through the replicated log to `hark_mvcc::Store`'s one apply
//! path.
//!
//! [`start`] binds the listeners and serves until [`RunningServer::shutdown`];
//! the `hark` binary wraps it with etcd's flags ([`Config`]).

mod cluster_leases;
pub mod config;
pub mod gateway;
mod grpc;
mod listeners;
pub mod logging;
mod node;
mod ops;
mod plan;
mod routes;
mod server;
mod tasks;
mod transport;

pub use config::{Config, LogFormat};
pub use listeners::PEER_MAX_STREAMS;
pub use node::Node;
pub use server::{RunningServer, start};

/// The etcd version Hark implements, as a literal for `concat!`.
macro_rules! etcd_version {
    () => {
        "3.7.3"
    };
}

/// The version Hark reports in `Status`: clients gate features on etcd's
/// version, and Hark implements the 3.7 API (KV.RangeStream, the feature
/// gates) and everything older clients ask for (Kubernetes needs 3.5.13 or
/// later). etcd 3.7.3 is the release Hark is measured and tested against.
pub const ETCD_VERSION: &str = etcd_version!();
/// Hark's own version.
pub const HARK_VERSION: &str = env!("CARGO_PKG_VERSION");
/// The commit this build is from (`build.rs`; `unknown` outside a repository).
pub const GIT_COMMIT: &str = env!("HARK_GIT_COMMIT");
/// `hark --version`: clap puts `hark ` first; then etcd's own lines
/// (`etcd Version: X.Y.Z`, which tools and etcd's test framework parse to
/// learn what the binary speaks).
pub const VERSION_TEXT: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    "\netcd Version: ",
    etcd_version!(),
    "\nGit SHA: ",
    env!("HARK_GIT_COMMIT"),
    "\netcd API version: ",
    etcd_version!()
);
/// The cluster version in `GET /version`, as a 3.7 cluster reports it.
pub const ETCD_CLUSTER_VERSION: &str = "3.7.0";
/// [`ETCD_CLUSTER_VERSION`] as etcd names it in logs and metric labels:
/// major.minor (`3.5`).
pub(crate) fn cluster_version_minor() -> &'static str {
    ETCD_CLUSTER_VERSION
        .rsplit_once('.')
        .map_or(ETCD_CLUSTER_VERSION, |(minor, _)| minor)
}
