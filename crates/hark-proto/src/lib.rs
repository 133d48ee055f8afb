// The files under src/generated/ are written by `cargo xtask codegen`; never edit them by hand.

//! The etcd v3 API as Rust types: prost messages and tonic clients/servers.
//!
//! The protos under `proto/etcd/` reproduce etcd's `etcdserverpb`,
//! `mvccpb` and `authpb` packages and its lock and election services
//! (`v3lockpb`, `v3electionpb`) field for field, so Hark speaks the same
//! wire format and gRPC method paths (e.g. `/etcdserverpb.KV/Range`) as etcd
//! and works with etcd's clients. Two fields are Hark's own, both number
//! 1000, not encoded when 0 and skipped by etcd's clients: `hark_flags` in
//! `KeyValue` and `PutRequest` (Consul's flags) and `hark_auth_revision` in
//! `ResponseHeader`.
//!
//! [`go_duration`] parses Go's duration syntax, which etcd's flags and
//! clients use alongside these messages; [`keys`] has etcd's prefix rule
//! for range ends.
//!
//! The Rust code is generated ahead of time and committed under
//! `src/generated/`: this crate has no build script and building it needs
//! no `protoc`. After changing a proto, run `cargo xtask codegen` (it uses a
//! vendored `protoc`); CI runs `cargo xtask codegen --check` to catch stale
//! code.
//!
//! With the `serde` feature, the etcd types also implement serde's traits in
//! the proto3 JSON mapping as etcd's JSON gateway uses it (pbjson): proto
//! field names, 64-bit integers as strings, bytes as base64, zero values
//! omitted, unknown fields ignored.

pub mod go_duration;
pub mod keys;

/// Key-values and watch events (`mvccpb`).
#[allow(clippy::all, clippy::pedantic, missing_docs)]
pub mod mvccpb {
    include!("generated/mvccpb.rs");
    #[cfg(feature = "serde")]
    include!("generated/mvccpb.serde.rs");
}

/// Users, roles and permissions (`authpb`).
#[allow(clippy::all, clippy::pedantic, missing_docs)]
pub mod authpb {
    include!("generated/authpb.rs");
    #[cfg(feature = "serde")]
    include!("generated/authpb.serde.rs");
}

/// The gRPC services (KV, Watch, Lease, Cluster, Maintenance, Auth) and
/// their messages (`etcdserverpb`).
#[allow(clippy::all, clippy::pedantic, missing_docs)]
pub mod etcdserverpb {
    include!("generated/etcdserverpb.rs");
    #[cfg(feature = "serde")]
    include!("generated/etcdserverpb.serde.rs");
}

/// etcd's lock service (`v3lockpb`).
#[allow(clippy::all, clippy::pedantic, missing_docs)]
pub mod v3lockpb {
    include!("generated/v3lockpb.rs");
    #[cfg(feature = "serde")]
    include!("generated/v3lockpb.serde.rs");
}

/// etcd's election service (`v3electionpb`).
#[allow(clippy::all, clippy::pedantic, missing_docs)]
pub mod v3electionpb {
    include!("generated/v3electionpb.rs");
    #[cfg(feature = "serde")]
    include!("generated/v3electionpb.serde.rs");
}

/// Hark's own additions to the client API (`harkpb`): space per prefix.
#[allow(clippy::all, clippy::pedantic, missing_docs)]
pub mod harkpb {
    include!("generated/harkpb.rs");
    #[cfg(feature = "serde")]
    include!("generated/harkpb.serde.rs");
}

/// Hark's member-to-member protocol (`harkpeerpb`): openraft messages and
/// forwarded proposals between the members of a cluster, on the peer port.
#[allow(clippy::all, clippy::pedantic, missing_docs)]
pub mod harkpeerpb {
    include!("generated/harkpeerpb.rs");
}
