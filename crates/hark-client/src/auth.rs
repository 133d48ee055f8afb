//! etcd's Auth service: users, roles, permissions, the enable switch.

use hark_proto::authpb;
use hark_proto::etcdserverpb::{self as pb, auth_client::AuthClient};

use crate::client::{Client, Error};

/// A permission's kind (etcd's `authpb.Permission.Type`).
pub use authpb::permission::Type as PermissionType;

impl Client {
    /// Turns authentication on (etcd's AuthEnable RPC); etcd requires a
    /// `root` user holding the `root` role first.
    pub async fn auth_enable(&self) -> Result<pb::AuthEnableResponse, Error> {
        self.call_once(|ch| async move {
            AuthClient::new(ch)
                .auth_enable(pb::AuthEnableRequest {})
                .await
        })
        .await
    }

    /// Turns authentication off (etcd's AuthDisable RPC; root only).
    pub async fn auth_disable(&self) -> Result<pb::AuthDisableResponse, Error> {
        self.call_once(|ch| async move {
            AuthClient::new(ch)
                .auth_disable(pb::AuthDisableRequest {})
                .await
        })
        .await
    }

    /// Whether authentication is on, and the auth store's revision (etcd's
    /// AuthStatus RPC).
    pub async fn auth_status(&self) -> Result<pb::AuthStatusResponse, Error> {
        self.call(|ch| async move {
            AuthClient::new(ch)
                .auth_status(pb::AuthStatusRequest {})
                .await
        })
        .await
    }

    /// A user with a password, or (`no_password`) one that only a client
    /// certificate's common name can be.
    pub async fn user_add(
        &self,
        name: &str,
        password: &str,
        no_password: bool,
    ) -> Result<pb::AuthUserAddResponse, Error> {
        let req = pb::AuthUserAddRequest {
            name: name.into(),
            password: password.into(),
            options: Some(authpb::UserAddOptions { no_password }),
            hashed_password: String::new(),
        };
        self.call_once(|ch| {
            let req = req.clone();
            async move { AuthClient::new(ch).user_add(req).await }
        })
        .await
    }

    /// A user's roles (etcd's UserGet RPC).
    pub async fn user_get(&self, name: &str) -> Result<pb::AuthUserGetResponse, Error> {
        let req = pb::AuthUserGetRequest { name: name.into() };
        self.call(|ch| {
            let req = req.clone();
            async move { AuthClient::new(ch).user_get(req).await }
        })
        .await
    }

    /// Every user's name (etcd's UserList RPC).
    pub async fn user_list(&self) -> Result<pb::AuthUserListResponse, Error> {
        self.call(|ch| async move {
            AuthClient::new(ch)
                .user_list(pb::AuthUserListRequest {})
                .await
        })
        .await
    }

    /// Deletes a user (etcd's UserDelete RPC).
    pub async fn user_delete(&self, name: &str) -> Result<pb::AuthUserDeleteResponse, Error> {
        let req = pb::AuthUserDeleteRequest { name: name.into() };
        self.call_once(|ch| {
            let req = req.clone();
            async move { AuthClient::new(ch).user_delete(req).await }
        })
        .await
    }

    /// Sets a user's password (etcd's UserChangePassword RPC).
    pub async fn user_change_password(
        &self,
        name: &str,
        password: &str,
    ) -> Result<pb::AuthUserChangePasswordResponse, Error> {
        let req = pb::AuthUserChangePasswordRequest {
            name: name.into(),
            password: password.into(),
            hashed_password: String::new(),
        };
        self.call_once(|ch| {
            let req = req.clone();
            async move { AuthClient::new(ch).user_change_password(req).await }
        })
        .await
    }

    /// Gives `user` the role `role` (etcd's UserGrantRole RPC).
    pub async fn user_grant_role(
        &self,
        user: &str,
        role: &str,
    ) -> Result<pb::AuthUserGrantRoleResponse, Error> {
        let req = pb::AuthUserGrantRoleRequest {
            user: user.into(),
            role: role.into(),
        };
        self.call_once(|ch| {
            let req = req.clone();
            async move { AuthClient::new(ch).user_grant_role(req).await }
        })
        .await
    }

    /// Takes the role `role` from user `name` (etcd's UserRevokeRole RPC).
    pub async fn user_revoke_role(
        &self,
        name: &str,
        role: &str,
    ) -> Result<pb::AuthUserRevokeRoleResponse, Error> {
        let req = pb::AuthUserRevokeRoleRequest {
            name: name.into(),
            role: role.into(),
        };
        self.call_once(|ch| {
            let req = req.clone();
            async move { AuthClient::new(ch).user_revoke_role(req).await }
        })
        .await
    }

    /// Creates a role with no permissions (etcd's RoleAdd RPC).
    pub async fn role_add(&self, name: &str) -> Result<pb::AuthRoleAddResponse, Error> {
        let req = pb::AuthRoleAddRequest { name: name.into() };
        self.call_once(|ch| {
            let req = req.clone();
            async move { AuthClient::new(ch).role_add(req).await }
        })
        .await
    }

    /// A role's permissions (etcd's RoleGet RPC).
    pub async fn role_get(&self, role: &str) -> Result<pb::AuthRoleGetResponse, Error> {
        let req = pb::AuthRoleGetRequest { role: role.into() };
        self.call(|ch| {
            let req = req.clone();
            async move { AuthClient::new(ch).role_get(req).await }
        })
        .await
    }

    /// Every role's name (etcd's RoleList RPC).
    pub async fn role_list(&self) -> Result<pb::AuthRoleListResponse, Error> {
        self.call(|ch| async move {
            AuthClient::new(ch)
                .role_list(pb::AuthRoleListRequest {})
                .await
        })
        .await
    }

    /// Deletes a role, and takes it from every user (etcd's RoleDelete RPC).
    pub async fn role_delete(&self, role: &str) -> Result<pb::AuthRoleDeleteResponse, Error> {
        let req = pb::AuthRoleDeleteRequest { role: role.into() };
        self.call_once(|ch| {
            let req = req.clone();
            async move { AuthClient::new(ch).role_delete(req).await }
        })
        .await
    }

    /// Grants `kind` on `key` (`range_end` empty), `[key, range_end)`, or
    /// every key from `key` (`range_end` = `"\0"`).
    pub async fn role_grant_permission(
        &self,
        role: &str,
        kind: PermissionType,
        key: impl Into<bytes::Bytes>,
        range_end: impl Into<bytes::Bytes>,
    ) -> Result<pb::AuthRoleGrantPermissionResponse, Error> {
        let req = pb::AuthRoleGrantPermissionRequest {
            name: role.into(),
            perm: Some(authpb::Permission {
                perm_type: kind as i32,
                key: key.into(),
                range_end: range_end.into(),
            }),
        };
        self.call_once(|ch| {
            let req = req.clone();
            async move { AuthClient::new(ch).role_grant_permission(req).await }
        })
        .await
    }

    /// Removes the role's permission on exactly `key` / `range_end` (as
    /// granted; etcd's RoleRevokePermission RPC).
    pub async fn role_revoke_permission(
        &self,
        role: &str,
        key: impl Into<bytes::Bytes>,
        range_end: impl Into<bytes::Bytes>,
    ) -> Result<pb::AuthRoleRevokePermissionResponse, Error> {
        let req = pb::AuthRoleRevokePermissionRequest {
            role: role.into(),
            key: key.into(),
            range_end: range_end.into(),
        };
        self.call_once(|ch| {
            let req = req.clone();
            async move { AuthClient::new(ch).role_revoke_permission(req).await }
        })
        .await
    }
}
