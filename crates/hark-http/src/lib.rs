//! `hark-http`: Hark's HTTP dialects, mounted by the `hark` binary next to gRPC.
//!
//! - [`gateway`]: etcd's JSON gateway. `POST /v3/<service>/<method>` with a
//!   JSON body, answered in JSON exactly as etcd 3.5's grpc-gateway writes
//!   it, plus `GET /version`.
//! - [`consul`]: Consul's KV API (`/v1/kv/<key>`, `/v1/txn`) with blocking
//!   queries (`?index=N&wait=D`), each parked request a watcher on one
//!   shared watch stream, capped per client and in all, and the requests one
//!   change wakes sharing one read.
//!
//! Every call is made on the server's own gRPC services through an
//! in-process [`GrpcService`] (no socket): an HTTP call and its gRPC twin run
//! the same code, so each behaviour is implemented once and every dialect
//! gets it. This crate knows the wire types (`hark-proto`) and nothing of the
//! store, the watch engine or the log.

pub mod consul;
pub mod cors;
pub mod gateway;
mod json;
mod limits;
mod shared_reads;
mod status;

use tower::ServiceExt;
use tower::util::BoxCloneSyncService;

pub use gateway::{GatewayOptions, routes};

/// The gRPC services a dialect calls: any `tower` service that answers gRPC
/// requests, typically the server's own [`tonic::service::Routes`] called in
/// process, or a [`tonic::transport::Channel`] to a remote member.
pub type GrpcService = BoxCloneSyncService<
    http::Request<tonic::body::Body>,
    http::Response<tonic::body::Body>,
    TransportError,
>;

/// A [`GrpcService`]'s failure to carry a call (a transport's; the
/// in-process service has none). A concrete type rather than a boxed
/// `dyn Error`: tonic's clients convert it `Into` a boxed error, and an
/// identity conversion of a boxed `dyn Error` inside an async handler trips
/// rustc's higher-ranked lifetime inference (rust-lang/rust#102211).
#[derive(Debug)]
pub struct TransportError(pub Box<dyn std::error::Error + Send + Sync>);

impl std::fmt::Display for TransportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for TransportError {}

/// The server's own gRPC routes as a [`GrpcService`], called without a socket.
pub fn in_process(routes: tonic::service::Routes) -> GrpcService {
    let routes =
        ServiceExt::<http::Request<tonic::body::Body>>::map_err(routes, |never| match never {});
    BoxCloneSyncService::new(routes)
}
