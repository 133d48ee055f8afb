//! Consul's KV HTTP API (`/v1/kv/<key>`, `/v1/txn`) over the same gRPC
//! services, with Consul's blocking queries served by the watch engine.
//!
//! Indexes are Hark revisions. `X-Consul-Index` is the store's revision when
//! the answer was read; a request with `?index=N` parks until an event on
//! *its* key or prefix above N (not any change in the store: consul#3890),
//! or until `?wait` (Consul's rules: 5 min by default, at most 10, plus up to
//! a sixteenth of jitter). An index ahead of the store, or one below the
//! compaction, is answered at once.
//!
//! Parked queries are capped per client (IP address) and in all
//! ([`ConsulOptions`]); past a cap a query is answered 429 in Consul's words.
//! Queries parked on the same read that one change wakes share one Range
//! (`shared_reads`), so a write under a prefix watched by N queries costs
//! one read of it, not N.
//!
//! Under etcd's auth, a request's token (Consul's `X-Consul-Token` header,
//! `Authorization: Bearer`, or `?token=`) goes with every call it makes,
//! its parked watch included: Consul's ACL tokens become etcd users.

mod answer;
mod kv;
mod parking;
mod query;
mod txn;

use std::net::IpAddr;

use axum::Router;
use axum::routing::{MethodRouter, put};
use http::StatusCode;

use crate::GrpcService;
use crate::limits::ParkingLimits;
use crate::shared_reads::SharedReads;
use answer::consul_error;
use kv::{Kv, delete_kv, get_kv, put_kv};
use parking::Parking;
use txn::txn;

/// The default cap on blocking queries parked by one client (IP address).
///
/// A parked query costs about 10-20 KiB, almost all of it its HTTP
/// connection (hyper's buffers, starting at 8 KiB to read, and the socket's
/// in the kernel), not the watcher (~250 B in the engine) or its entry
/// here. Consul's agent allows 200 connections per client
/// (`http_max_conns_per_client`), but Consul's clients talk to a local
/// agent, which multiplexes their queries; Hark's talk to the server
/// directly, and many (consul-template with many keys, a NAT, a proxy) may
/// share one address. 1,024 leaves them five times Consul's room while one
/// address can take at most a sixteenth of [`DEFAULT_MAX_PARKED_TOTAL`].
pub const DEFAULT_MAX_PARKED_PER_CLIENT: usize = 1_024;

/// The default cap on blocking queries parked at once, across clients:
/// 16,384 queries, at ~10-20 KiB each (see
/// [`DEFAULT_MAX_PARKED_PER_CLIENT`]), are at most ~160-320 MiB and as many
/// open sockets, a bound a server sized for etcd's work can carry; a
/// deployment with more watchers should use gRPC watches, which share a
/// stream.
pub const DEFAULT_MAX_PARKED_TOTAL: usize = 16_384;

/// A request's client IP address, from what the server put in its
/// extensions about the connection; `None` when not known.
pub type ClientAddress = fn(&http::Extensions) -> Option<IpAddr>;

/// How [`routes`] serves Consul's KV API.
#[derive(Clone, Debug)]
pub struct ConsulOptions {
    /// The largest request body (a PUT's value, a transaction), in bytes.
    pub max_body_bytes: usize,
    /// Blocking queries one client (IP address) may have parked at once;
    /// 0 is no cap, as Consul's `http_max_conns_per_client = 0`.
    pub max_parked_per_client: usize,
    /// Blocking queries parked at once in all; 0 is no cap.
    pub max_parked_total: usize,
    /// Finds a request's client address. Requests it finds none for share
    /// one client's allowance.
    pub client_address: ClientAddress,
}

impl Default for ConsulOptions {
    /// etcd's request limit (`--max-request-bytes`' 1.5 MiB), the default
    /// caps, and the address tonic's server gives a plain TCP connection.
    fn default() -> ConsulOptions {
        ConsulOptions {
            max_body_bytes: 1_572_864,
            max_parked_per_client: DEFAULT_MAX_PARKED_PER_CLIENT,
            max_parked_total: DEFAULT_MAX_PARKED_TOTAL,
            client_address: tcp_client_address,
        }
    }
}

/// The peer address tonic's server records for a TCP connection
/// ([`tonic::transport::server::TcpConnectInfo`]).
pub fn tcp_client_address(extensions: &http::Extensions) -> Option<IpAddr> {
    extensions
        .get::<tonic::transport::server::TcpConnectInfo>()?
        .remote_addr()
        .map(|address| address.ip())
}

/// Consul's KV routes, calling `grpc`.
pub fn routes(grpc: GrpcService, options: ConsulOptions) -> Router {
    let kv = Kv {
        parking: Parking::new(grpc.clone()),
        grpc,
        limits: ParkingLimits::new(options.max_parked_per_client, options.max_parked_total),
        reads: SharedReads::new(),
        client_address: options.client_address,
        max_body_bytes: options.max_body_bytes,
    };
    let key_route = || -> MethodRouter<Kv> {
        axum::routing::get(get_kv)
            .put(put_kv)
            .delete(delete_kv)
            .fallback(|| async {
                consul_error(StatusCode::METHOD_NOT_ALLOWED, "method not allowed")
            })
    };
    Router::new()
        .route("/v1/kv/{*key}", key_route())
        .route("/v1/kv/", key_route())
        .route("/v1/txn", put(txn))
        .with_state(kv)
}
