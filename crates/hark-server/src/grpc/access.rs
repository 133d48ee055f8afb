//! Who sent a request and what it may do: the one place the services ask
//! `hark-auth`. Each handler resolves its [`Caller`] here and calls the one
//! check of its request kind; a permitted write leaves wrapped in the auth
//! revision guard.

use bytes::Bytes;
use hark_auth::{AuthError, Caller, Credentials};
use hark_mvcc::WriteRequest;
use tonic::Status;
use tonic::metadata::MetadataMap;

use crate::node::Node;

/// The token a request carries: metadata `token`, else `authorization`,
/// with a leading `Bearer ` dropped (etcd 3.5.32+).
pub fn token(metadata: &MetadataMap) -> Option<&str> {
    let raw = metadata
        .get("token")
        .or_else(|| metadata.get("authorization"))?
        .to_str()
        .ok()?;
    Some(raw.strip_prefix("Bearer ").unwrap_or(raw))
}

/// Lets a request carrying a simple token this member does not know yet
/// wait until the member has applied what was committed when it arrived
/// (a linearizable barrier), then go on to be judged as usual. The token
/// may have been issued by another member a moment ago: it is committed
/// before the client has it, so after the barrier this member knows it too.
/// Known tokens, JWTs and requests without a token pass straight through.
pub async fn catch_up_for_token(
    axum::extract::State(node): axum::extract::State<crate::node::NodeHandle>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let Ok(node) = node.get() else {
        return next.run(request).await;
    };
    // The headers move into metadata and back: read as the handlers read them.
    let (mut parts, body) = request.into_parts();
    let metadata = MetadataMap::from_headers(std::mem::take(&mut parts.headers));
    let waits = token(&metadata).is_some_and(|t| node.auth.awaits_token(t));
    parts.headers = metadata.into_headers();
    if waits {
        // Without a leader the barrier fails: the token is judged as it is.
        let _ = node.linearizable_barrier().await;
    }
    drop(node);
    next.run(axum::extract::Request::from_parts(parts, body))
        .await
}

/// etcd's interceptors for clientv3's `WithRequireLeader`: a request
/// carrying `hasleader: true` to a member that has no leader (see
/// [`hark_raft::Replica::has_leader`]) is refused at once with "etcdserver:
/// no leader", unary or stream, before any work. (An open watch or
/// keep-alive stream also ends once its member loses its leader:
/// `watch::leader_lost`.)
pub async fn refuse_without_leader(
    axum::extract::State(node): axum::extract::State<crate::node::NodeHandle>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let requires = request
        .headers()
        .get(crate::grpc::watch::REQUIRE_LEADER_KEY)
        .is_some_and(|v| v.as_bytes() == b"true");
    if requires
        && let Ok(node) = node.get()
        && !node.replica.has_leader()
    {
        return Status::unavailable(crate::grpc::watch::NO_LEADER).into_http::<axum::body::Body>();
    }
    next.run(request).await
}

/// Internal metadata carrying the verified client certificate's common
/// name from the connection to the handlers; whatever a client sends under
/// this name is removed first.
const CLIENT_CN: &str = "hark-internal-client-cn";

/// Sets [`CLIENT_CN`] on a gRPC request from its connection's verified
/// certificate (mutual TLS), and only from there ([`crate::transport::wire_edits`]
/// calls it on every request).
pub fn set_client_identity<B>(request: &mut http::Request<B>) {
    request.headers_mut().remove(CLIENT_CN);
    let cn = request
        .extensions()
        .get::<crate::transport::conn::ConnInfo>()
        .and_then(|info| info.common_name.as_deref());
    if let Some(cn) = cn
        && let Ok(value) = http::HeaderValue::from_str(cn)
    {
        request.headers_mut().insert(CLIENT_CN, value);
    }
}

/// etcd's gRPC code for each auth error (its `rpctypes`).
pub fn auth_status(e: AuthError) -> Status {
    use AuthError::*;
    let message = e.to_string();
    match e {
        RootUserNotExist | RootRoleNotExist | UserAlreadyExist | UserNotFound
        | RoleAlreadyExist | RoleNotFound | RoleNotGranted | PermissionNotGranted
        | AuthNotEnabled => Status::failed_precondition(message),
        UserEmpty | RoleEmpty | UserNameTooLong | RoleNameTooLong | AuthFailed
        | PermissionNotGiven | InvalidAuthMgmt | AuthOldRevision => {
            Status::invalid_argument(message)
        }
        PermissionDenied => Status::permission_denied(message),
        InvalidAuthToken => Status::unauthenticated(message),
        NoPasswordUser | Hashing(_) | VerifyOnly | Signing(_) => Status::unknown(message),
        Corrupt(_) => Status::internal(message),
    }
}

/// How a denied watch create reads in its cancel reason: grpc-go's text of
/// the status etcd would have answered with.
pub fn watch_cancel_reason(e: AuthError) -> String {
    let (code, e) = match e {
        AuthError::InvalidAuthToken => ("Unauthenticated", e),
        AuthError::AuthOldRevision => ("InvalidArgument", e),
        AuthError::UserEmpty => ("InvalidArgument", e),
        _ => ("PermissionDenied", AuthError::PermissionDenied),
    };
    format!("rpc error: code = {code} desc = {e}")
}

impl Node {
    /// The request's caller (etcd's AuthInfoFromCtx): its token's user, or
    /// nobody. With auth disabled everyone passes every check.
    pub fn caller(&self, metadata: &MetadataMap) -> Result<Caller, Status> {
        self.auth_caller(metadata).map_err(auth_status)
    }

    /// [`Node::caller`] with the auth error itself.
    pub fn auth_caller(&self, metadata: &MetadataMap) -> Result<Caller, AuthError> {
        self.auth.caller(Credentials {
            token: token(metadata),
            common_name: metadata.get(CLIENT_CN).and_then(|v| v.to_str().ok()),
        })
    }

    /// Why a watch create with `key` / `range_end` as the client sent them
    /// is refused, if it is: checked once, at create (etcd's
    /// isWatchPermitted), against the range as sent.
    pub fn watch_refusal(
        &self,
        metadata: &MetadataMap,
        key: &[u8],
        range_end: &[u8],
    ) -> Option<String> {
        // etcd reads an empty key as "\0" before the check.
        let key = if key.is_empty() { b"\0" } else { key };
        self.auth_caller(metadata)
            .and_then(|caller| caller.watch(key, range_end))
            .err()
            .map(watch_cancel_reason)
    }

    /// The keys a lease holds now, for the checks that need them.
    pub fn lease_keys(&self, id: i64) -> Vec<Bytes> {
        self.store.lease_keys(id).unwrap_or_default()
    }

    /// Checks a write for `caller`. An invalid request (an empty key, too
    /// many txn ops, …) gets its own error first, as etcd's gRPC layer
    /// checks it before auth, and so never reaches the log: a refused
    /// request costs no proposal, fsync or apply.
    pub fn check_write(&self, caller: &Caller, write: &WriteRequest) -> Result<(), Status> {
        self.store
            .validate(write)
            .map_err(crate::grpc::errors::mvcc_status)?;
        caller
            .write(write, &|id| self.lease_keys(id))
            .map_err(auth_status)
    }

    /// [`Node::check_write`], then the write wrapped in the auth revision guard.
    pub fn authorize_write(
        &self,
        caller: &Caller,
        write: WriteRequest,
    ) -> Result<WriteRequest, Status> {
        self.check_write(caller, &write)?;
        Ok(caller.guarded(write))
    }
}

/// What a request kind needs of its caller, beyond key permissions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    /// Root (etcd's IsAdminPermitted): compaction, maintenance that reads or
    /// changes the whole store, membership changes, auth management.
    Admin,
    /// Any authenticated user (etcd's requireAuthInfo): Status, MemberList,
    /// alarm listing, lease grant and keep-alive.
    Authenticated,
}

impl Needs {
    pub fn check(self, caller: &Caller) -> Result<(), Status> {
        match self {
            Needs::Admin => caller.admin(),
            Needs::Authenticated => caller.authenticated(),
        }
        .map_err(auth_status)
    }
}

/// Checks that the sender of a request with `metadata` has what `needs` says.
pub fn require(
    node: &crate::node::NodeHandle,
    metadata: &MetadataMap,
    needs: Needs,
) -> Result<(), Status> {
    needs.check(&node.get()?.caller(metadata)?)
}
