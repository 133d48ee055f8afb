//! etcd's auth errors. The messages are etcd's `rpctypes` texts, which
//! clients match on; the server picks each one's gRPC code.

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    #[error("etcdserver: root user does not exist")]
    RootUserNotExist,
    #[error("etcdserver: root user does not have root role")]
    RootRoleNotExist,
    #[error("etcdserver: user name already exists")]
    UserAlreadyExist,
    #[error("etcdserver: user name is empty")]
    UserEmpty,
    #[error("etcdserver: user name not found")]
    UserNotFound,
    #[error("etcdserver: role name already exists")]
    RoleAlreadyExist,
    #[error("etcdserver: role name not found")]
    RoleNotFound,
    #[error("etcdserver: role name is empty")]
    RoleEmpty,
    /// A new user's name is longer than [`crate::MAX_NAME_LEN`]. etcd has
    /// no such check and, past bbolt's key limit, stops at apply instead.
    #[error("etcdserver: user name is too long")]
    UserNameTooLong,
    /// A new role's name is longer than [`crate::MAX_NAME_LEN`].
    #[error("etcdserver: role name is too long")]
    RoleNameTooLong,
    #[error("etcdserver: authentication failed, invalid user ID or password")]
    AuthFailed,
    /// etcd sends this one with gRPC code Unknown and its internal text.
    #[error("auth: authentication failed, password was given for no password user")]
    NoPasswordUser,
    #[error("etcdserver: permission not given")]
    PermissionNotGiven,
    #[error("etcdserver: permission denied")]
    PermissionDenied,
    #[error("etcdserver: role is not granted to the user")]
    RoleNotGranted,
    #[error("etcdserver: permission is not granted to the role")]
    PermissionNotGranted,
    #[error("etcdserver: authentication is not enabled")]
    AuthNotEnabled,
    #[error("etcdserver: invalid auth token")]
    InvalidAuthToken,
    #[error("etcdserver: invalid auth management")]
    InvalidAuthMgmt,
    #[error("etcdserver: revision of auth store is old")]
    AuthOldRevision,
    /// Authenticate on a member that has only a JWT public key.
    #[error("auth: token signing attempted with verify-only key")]
    VerifyOnly,
    /// Signing a JWT failed.
    #[error("auth: signing a token failed: {0}")]
    Signing(String),
    /// bcrypt refused a password (e.g. longer than its 72 bytes).
    #[error("bcrypt: {0}")]
    Hashing(String),
    /// A stored record does not decode (the data dir is damaged).
    #[error("etcdserver: auth store: {0}")]
    Corrupt(String),
}
