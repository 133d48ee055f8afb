//! `hark-auth`: etcd's authentication and role-based permissions over a
//! `hark_mvcc::Store`.
//!
//! * Users, roles and the enable switch are store **records** in etcd's own
//!   buckets and encodings ([`records`]), so they are written through the
//!   store's one apply path: durable, replicated by the log in front of it,
//!   and carried by snapshots to and from etcd.
//! * Every change is planned from an [`AuthState`] and guarded by the auth
//!   revision it was planned at: applied on every member alike, or not at
//!   all when another change got there first (the caller plans again).
//! * A request's [`Caller`] (from its token or client certificate) holds the
//!   state it is judged by and offers one check per request kind; a
//!   permitted write carries the revision guard, so a permission revoked
//!   meanwhile refuses it at apply time.
//! * Passwords are bcrypt hashes; tokens (etcd's simple ones, or JWTs
//!   any member verifies) are checked without hashing. A simple token is
//!   announced through the log and learnt by every member as it applies it.
//!
//! The crate knows nothing of gRPC: the server maps [`AuthError`]s to
//! etcd's status codes.

mod caller;
mod error;
mod jwt;
mod perms;
pub mod records;
mod state;
mod store;
mod tokens;

pub use caller::{Caller, LeaseKeys};
pub use error::AuthError;
pub use jwt::JwtTokens;
pub use perms::Access;
pub use records::{PermType, PermissionRecord, RoleRecord, UserRecord};
pub use state::{AuthState, ROOT};
pub use store::{AuthOptions, AuthStore, Credentials, Login, SIMPLE_TOKEN_TOPIC, TokenKind};

/// Longest user or role name: the longest record key every backend and
/// etcd's snapshot format hold (bbolt's key limit), so whatever etcd can
/// store, Hark takes, and a longer name is refused before the log.
pub const MAX_NAME_LEN: usize = hark_mvcc::MAX_RECORD_KEY_LEN;
