//! The gRPC services (etcd's KV, Watch, Lease, Cluster, Maintenance and
//! Auth) over the layers below, with what they share: the caller's access
//! check, etcd's status codes and messages, oversize receives, the quota.

pub(crate) mod access;
pub(crate) mod auth;
pub(crate) mod errors;
pub(crate) mod kv;
pub(crate) mod kv_range;
pub(crate) mod lease;
pub(crate) mod maintenance;
pub(crate) mod oversize;
pub(crate) mod quota;
pub(crate) mod usage;
pub(crate) mod watch;
pub(crate) mod watch_body;
pub(crate) mod watch_frame;
