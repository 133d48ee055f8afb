//! Below the services: TLS and what a connection says of its caller, the
//! HTTP/2 front (`:authority` repair, fair turns, traffic counts), the
//! identity boundary, the wire edits on responses and the gRPC metrics
//! layer.

pub(crate) mod authority;
pub(crate) mod boundary;
pub(crate) mod conn;
pub(crate) mod grpc_metrics;
pub(crate) mod pacing;
pub(crate) mod tls;
pub(crate) mod traffic;
pub(crate) mod wire_edits;
