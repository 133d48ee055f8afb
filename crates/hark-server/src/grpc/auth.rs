//! The Auth service: etcd's users, roles and switches over `hark-auth`.
//! Every change is planned from the current auth state and written as a
//! guarded records change through the replicated log; one that lost a race
//! with another change is planned again from the newer state.

use bytes::Bytes;
use hark_auth::{AuthError, AuthState, PermissionRecord};
use hark_mvcc::{RecordsRequest, WriteRequest, WriteResponse};
use hark_proto::authpb;
use hark_proto::etcdserverpb::{self as pb, ResponseHeader, auth_server::Auth};
use tonic::metadata::MetadataMap;
use tonic::{Request, Response, Status};

use crate::grpc::access::auth_status;
use crate::grpc::errors::replica_status;
use crate::node::{Node, NodeHandle};

/// Tries of a change that keeps losing races before giving up.
const CHANGE_TRIES: usize = 16;

pub struct AuthService {
    node: NodeHandle,
}

impl AuthService {
    pub fn new(node: NodeHandle) -> Self {
        AuthService { node }
    }

    /// Applies the change `plan` makes of the current state, as root
    /// (etcd's needAdminPermission); `None` from `plan` changes nothing.
    async fn change(
        &self,
        metadata: &MetadataMap,
        plan: impl Fn(&AuthState) -> Result<Option<RecordsRequest>, AuthError>,
    ) -> Result<Option<ResponseHeader>, Status> {
        let node = self.node.get()?;
        node.caller(metadata)?.admin().map_err(auth_status)?;
        for _ in 0..CHANGE_TRIES {
            let state = node.auth.state().map_err(auth_status)?;
            let Some(change) = plan(&state).map_err(auth_status)? else {
                return Ok(node.header(node.store.current_revision()));
            };
            match node
                .apply(WriteRequest::Records(change))
                .await
                .map_err(replica_status)?
            {
                WriteResponse::Records(r) if r.applied => return Ok(node.header(r.header_revision)),
                WriteResponse::Records(_) => continue,
                other => {
                    return Err(Status::internal(format!(
                        "hark: the store answered with {other:?}"
                    )));
                }
            }
        }
        Err(Status::unavailable(
            "etcdserver: auth store changed too often meanwhile; try again",
        ))
    }

    /// Reads the state as root (`check` may let others through).
    fn read(
        &self,
        metadata: &MetadataMap,
        check: impl FnOnce(&hark_auth::Caller) -> Result<(), AuthError>,
    ) -> Result<(std::sync::Arc<Node>, std::sync::Arc<AuthState>), Status> {
        let node = self.node.get()?;
        check(&node.caller(metadata)?).map_err(auth_status)?;
        let state = node.auth.state().map_err(auth_status)?;
        Ok((node, state))
    }

    /// Hashes a new password for a caller already known to be root:
    /// bcrypt is the most CPU a request can ask for, so nobody else may
    /// make the member spend it.
    async fn hash(&self, metadata: &MetadataMap, password: String) -> Result<Bytes, Status> {
        let node = self.node.get()?;
        node.caller(metadata)?.admin().map_err(auth_status)?;
        let auth = node.auth.clone();
        drop(node);
        on_bcrypt_pool(move || auth.hash_password(&password))
            .await?
            .map_err(auth_status)
    }
}

/// Runs a bcrypt job (hashing, or checking a password) off the async
/// runtime, at most [`bcrypt_slots`] at once: a flood of logins or password
/// changes queues here (as cheap waiting tasks) instead of taking every
/// core from the writes.
async fn on_bcrypt_pool<T: Send + 'static>(
    job: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Status> {
    static SLOTS: std::sync::OnceLock<tokio::sync::Semaphore> = std::sync::OnceLock::new();
    let slots = SLOTS.get_or_init(|| tokio::sync::Semaphore::new(bcrypt_slots()));
    let _slot = slots
        .acquire()
        .await
        .map_err(|_| Status::unavailable("etcdserver: server stopped"))?;
    tokio::task::spawn_blocking(job)
        .await
        .map_err(|e| Status::internal(format!("hark: bcrypt failed: {e}")))
}

/// Half the cores, at least one.
fn bcrypt_slots() -> usize {
    std::thread::available_parallelism().map_or(1, |n| (n.get() / 2).max(1))
}

fn permission_to_pb(p: &PermissionRecord) -> authpb::Permission {
    authpb::Permission {
        perm_type: p.perm_type,
        key: p.key.clone(),
        range_end: p.range_end.clone(),
    }
}

/// Runs a handler's body and wraps its answer in a response.
macro_rules! unary {
    ($body:expr) => {{ $body.await.map(Response::new) }};
}

#[tonic::async_trait]
impl Auth for AuthService {
    async fn auth_enable(
        &self,
        request: Request<pb::AuthEnableRequest>,
    ) -> Result<Response<pb::AuthEnableResponse>, Status> {
        unary!(async {
            let header = self.change(request.metadata(), |s| s.auth_enable()).await?;
            Ok(pb::AuthEnableResponse { header })
        })
    }

    async fn auth_disable(
        &self,
        request: Request<pb::AuthDisableRequest>,
    ) -> Result<Response<pb::AuthDisableResponse>, Status> {
        unary!(async {
            let header = self
                .change(request.metadata(), |s| s.auth_disable())
                .await?;
            Ok(pb::AuthDisableResponse { header })
        })
    }

    async fn auth_status(
        &self,
        request: Request<pb::AuthStatusRequest>,
    ) -> Result<Response<pb::AuthStatusResponse>, Status> {
        unary!(async {
            // As etcd: anyone may ask whether auth is on (etcdctl's `auth
            // status` runs without credentials); a bad token still fails.
            let (node, state) = self.read(request.metadata(), |_| Ok(()))?;
            Ok(pb::AuthStatusResponse {
                header: node.header(node.store.current_revision()),
                enabled: state.enabled(),
                auth_revision: state.revision(),
            })
        })
    }

    async fn authenticate(
        &self,
        request: Request<pb::AuthenticateRequest>,
    ) -> Result<Response<pb::AuthenticateResponse>, Status> {
        unary!(async {
            let node = self.node.get()?;
            // As etcd: the password is checked against every auth change
            // acknowledged before the request (a user just added elsewhere).
            node.linearizable_barrier().await?;
            let auth = node.auth.clone();
            let pb::AuthenticateRequest { name, password } = request.into_inner();
            // bcrypt is slow on purpose: off the runtime's threads.
            let login = on_bcrypt_pool(move || auth.authenticate(&name, &password))
                .await?
                .map_err(auth_status)?;
            // A simple token goes through the log, as etcd's Authenticate
            // entry does: every member learns it, so the client may use it
            // on any of them.
            let revision = match login.announcement {
                Some(announcement) => match node
                    .apply(announcement.into_request())
                    .await
                    .map_err(replica_status)?
                {
                    WriteResponse::Records(r) => r.header_revision,
                    other => {
                        return Err(Status::internal(format!(
                            "hark: the store answered with {other:?}"
                        )));
                    }
                },
                None => node.store.current_revision(),
            };
            Ok(pb::AuthenticateResponse {
                header: node.header(revision),
                token: login.token,
            })
        })
    }

    async fn user_add(
        &self,
        request: Request<pb::AuthUserAddRequest>,
    ) -> Result<Response<pb::AuthUserAddResponse>, Status> {
        unary!(async {
            let (metadata, _, req) = request.into_parts();
            let no_password = req.options.is_some_and(|o| o.no_password);
            // etcd hashes even an empty password; a hash the client sent is ignored.
            let hash = if no_password {
                Bytes::new()
            } else {
                self.hash(&metadata, req.password).await?
            };
            let header = self
                .change(&metadata, |s| {
                    s.user_add(&req.name, hash.clone(), no_password).map(Some)
                })
                .await?;
            Ok(pb::AuthUserAddResponse { header })
        })
    }

    async fn user_get(
        &self,
        request: Request<pb::AuthUserGetRequest>,
    ) -> Result<Response<pb::AuthUserGetResponse>, Status> {
        unary!(async {
            let name = &request.get_ref().name;
            let (node, state) = self.read(request.metadata(), |c| c.user_get(name))?;
            let user = state
                .user(name)
                .ok_or_else(|| auth_status(AuthError::UserNotFound))?;
            Ok(pb::AuthUserGetResponse {
                header: node.header(node.store.current_revision()),
                roles: user.roles.clone(),
            })
        })
    }

    async fn user_list(
        &self,
        request: Request<pb::AuthUserListRequest>,
    ) -> Result<Response<pb::AuthUserListResponse>, Status> {
        unary!(async {
            let (node, state) = self.read(request.metadata(), |c| c.admin())?;
            Ok(pb::AuthUserListResponse {
                header: node.header(node.store.current_revision()),
                users: state.user_names(),
            })
        })
    }

    async fn user_delete(
        &self,
        request: Request<pb::AuthUserDeleteRequest>,
    ) -> Result<Response<pb::AuthUserDeleteResponse>, Status> {
        unary!(async {
            let name = &request.get_ref().name;
            let header = self
                .change(request.metadata(), |s| s.user_delete(name).map(Some))
                .await?;
            Ok(pb::AuthUserDeleteResponse { header })
        })
    }

    async fn user_change_password(
        &self,
        request: Request<pb::AuthUserChangePasswordRequest>,
    ) -> Result<Response<pb::AuthUserChangePasswordResponse>, Status> {
        unary!(async {
            let (metadata, _, req) = request.into_parts();
            // etcd hashes a given password; without one, a hash the client
            // sent (base64) is stored as it is.
            let hash = if req.password.is_empty() {
                use base64::Engine;
                base64::engine::general_purpose::STANDARD
                    .decode(&req.hashed_password)
                    .map(Bytes::from)
                    .map_err(|_| auth_status(AuthError::NoPasswordUser))?
            } else {
                self.hash(&metadata, req.password).await?
            };
            let header = self
                .change(&metadata, |s| {
                    s.user_change_password(&req.name, hash.clone()).map(Some)
                })
                .await?;
            Ok(pb::AuthUserChangePasswordResponse { header })
        })
    }

    async fn user_grant_role(
        &self,
        request: Request<pb::AuthUserGrantRoleRequest>,
    ) -> Result<Response<pb::AuthUserGrantRoleResponse>, Status> {
        unary!(async {
            let req = request.get_ref();
            let header = self
                .change(request.metadata(), |s| {
                    s.user_grant_role(&req.user, &req.role)
                })
                .await?;
            Ok(pb::AuthUserGrantRoleResponse { header })
        })
    }

    async fn user_revoke_role(
        &self,
        request: Request<pb::AuthUserRevokeRoleRequest>,
    ) -> Result<Response<pb::AuthUserRevokeRoleResponse>, Status> {
        unary!(async {
            let req = request.get_ref();
            let header = self
                .change(request.metadata(), |s| {
                    s.user_revoke_role(&req.name, &req.role).map(Some)
                })
                .await?;
            Ok(pb::AuthUserRevokeRoleResponse { header })
        })
    }

    async fn role_add(
        &self,
        request: Request<pb::AuthRoleAddRequest>,
    ) -> Result<Response<pb::AuthRoleAddResponse>, Status> {
        unary!(async {
            let name = &request.get_ref().name;
            let header = self
                .change(request.metadata(), |s| s.role_add(name).map(Some))
                .await?;
            Ok(pb::AuthRoleAddResponse { header })
        })
    }

    async fn role_get(
        &self,
        request: Request<pb::AuthRoleGetRequest>,
    ) -> Result<Response<pb::AuthRoleGetResponse>, Status> {
        unary!(async {
            let name = &request.get_ref().role;
            let (node, state) = self.read(request.metadata(), |c| c.role_get(name))?;
            let role = state
                .role(name)
                .ok_or_else(|| auth_status(AuthError::RoleNotFound))?;
            Ok(pb::AuthRoleGetResponse {
                header: node.header(node.store.current_revision()),
                perm: role.key_permission.iter().map(permission_to_pb).collect(),
            })
        })
    }

    async fn role_list(
        &self,
        request: Request<pb::AuthRoleListRequest>,
    ) -> Result<Response<pb::AuthRoleListResponse>, Status> {
        unary!(async {
            let (node, state) = self.read(request.metadata(), |c| c.admin())?;
            Ok(pb::AuthRoleListResponse {
                header: node.header(node.store.current_revision()),
                roles: state.role_names(),
            })
        })
    }

    async fn role_delete(
        &self,
        request: Request<pb::AuthRoleDeleteRequest>,
    ) -> Result<Response<pb::AuthRoleDeleteResponse>, Status> {
        unary!(async {
            let name = &request.get_ref().role;
            let header = self
                .change(request.metadata(), |s| s.role_delete(name).map(Some))
                .await?;
            Ok(pb::AuthRoleDeleteResponse { header })
        })
    }

    async fn role_grant_permission(
        &self,
        request: Request<pb::AuthRoleGrantPermissionRequest>,
    ) -> Result<Response<pb::AuthRoleGrantPermissionResponse>, Status> {
        unary!(async {
            let req = request.get_ref();
            let perm = req.perm.as_ref().map(|p| PermissionRecord {
                perm_type: p.perm_type,
                key: p.key.clone(),
                range_end: p.range_end.clone(),
            });
            let header = self
                .change(request.metadata(), |s| {
                    s.role_grant_permission(&req.name, perm.clone()).map(Some)
                })
                .await?;
            Ok(pb::AuthRoleGrantPermissionResponse { header })
        })
    }

    async fn role_revoke_permission(
        &self,
        request: Request<pb::AuthRoleRevokePermissionRequest>,
    ) -> Result<Response<pb::AuthRoleRevokePermissionResponse>, Status> {
        unary!(async {
            let req = request.get_ref();
            let header = self
                .change(request.metadata(), |s| {
                    s.role_revoke_permission(&req.role, &req.key, &req.range_end)
                        .map(Some)
                })
                .await?;
            Ok(pb::AuthRoleRevokePermissionResponse { header })
        })
    }
}
