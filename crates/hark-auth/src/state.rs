//! The auth state at one records generation: decoded from the store's
//! records, read by permission checks, and the source of every change
//! (each change is planned from a state and guarded by its revision, so a
//! change planned from a state that moved meanwhile does not apply).

use std::collections::{BTreeMap, HashMap};

use bytes::Bytes;
use hark_mvcc::{RecordChange, RecordGuard, RecordsRequest, Store};
use prost::Message;

use crate::error::AuthError;
use crate::perms::UserPerms;
use crate::records::{
    AUTH, ENABLED_KEY, PermissionRecord, REVISION_KEY, ROLES, RoleRecord, USERS, UserOptions,
    UserRecord,
};

/// The name of etcd's superuser and of the role that makes one.
pub const ROOT: &str = "root";

/// Hark's own key in the `auth` bucket: the auth revision when auth was
/// last enabled. Tokens issued before it are void (etcd drops its simple
/// tokens on disable); etcd ignores the key in a snapshot.
const ENABLED_AT_KEY: &[u8] = b"harkEnabledAt";

#[derive(Debug, Default)]
pub struct AuthState {
    pub(crate) generation: u64,
    enabled: bool,
    revision: u64,
    enabled_at: u64,
    /// The stored revision record as read, for guards (`None`: never written).
    stored_revision: Option<Bytes>,
    stored_enabled: Option<Bytes>,
    users: BTreeMap<String, UserRecord>,
    roles: BTreeMap<String, RoleRecord>,
    perms: HashMap<String, UserPerms>,
}

fn name_of(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn u64_record(v: &Bytes) -> Option<u64> {
    v.as_ref().try_into().ok().map(u64::from_be_bytes)
}

impl AuthState {
    /// Decodes the state from `store`'s records at `generation`.
    pub(crate) fn load(store: &Store, generation: u64) -> Result<AuthState, AuthError> {
        let stored_enabled = store.record(AUTH, ENABLED_KEY);
        let stored_revision = store.record(AUTH, REVISION_KEY);
        let mut state = AuthState {
            generation,
            enabled: stored_enabled.as_deref() == Some(&[1u8][..]),
            // etcd's auth store starts at revision 1.
            revision: stored_revision.as_ref().and_then(u64_record).unwrap_or(1),
            enabled_at: store
                .record(AUTH, ENABLED_AT_KEY)
                .as_ref()
                .and_then(u64_record)
                .unwrap_or(0),
            stored_revision,
            stored_enabled,
            ..Default::default()
        };
        for (name, value) in store.records(USERS) {
            let user = UserRecord::decode(value)
                .map_err(|e| AuthError::Corrupt(format!("user {}: {e}", name_of(&name))))?;
            state.users.insert(name_of(&name), user);
        }
        for (name, value) in store.records(ROLES) {
            let role = RoleRecord::decode(value)
                .map_err(|e| AuthError::Corrupt(format!("role {}: {e}", name_of(&name))))?;
            state.roles.insert(name_of(&name), role);
        }
        for (name, user) in &state.users {
            let perms = UserPerms::build(
                user.roles
                    .iter()
                    .filter_map(|r| state.roles.get(r))
                    .flat_map(|r| &r.key_permission),
            );
            state.perms.insert(name.clone(), perms);
        }
        Ok(state)
    }

    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// etcd's auth revision: bumped by every change to users and roles.
    pub fn revision(&self) -> u64 {
        self.revision
    }

    pub(crate) fn enabled_at(&self) -> u64 {
        self.enabled_at
    }

    pub fn user(&self, name: &str) -> Option<&UserRecord> {
        self.users.get(name)
    }

    pub fn role(&self, name: &str) -> Option<&RoleRecord> {
        self.roles.get(name)
    }

    /// User names in byte order (etcd lists its bucket's keys).
    pub fn user_names(&self) -> Vec<String> {
        self.users.keys().cloned().collect()
    }

    pub fn role_names(&self) -> Vec<String> {
        self.roles.keys().cloned().collect()
    }

    pub(crate) fn perms(&self, user: &str) -> Option<&UserPerms> {
        self.perms.get(user)
    }

    pub fn is_root(&self, user: &str) -> bool {
        self.users
            .get(user)
            .is_some_and(|u| u.roles.iter().any(|r| r == ROOT))
    }

    /// Holds while the auth revision is the one this state was read at.
    pub fn revision_guard(&self) -> RecordGuard {
        RecordGuard {
            bucket: AUTH.into(),
            key: Bytes::from_static(REVISION_KEY),
            expected: self.stored_revision.clone(),
        }
    }

    fn plan(&self) -> Plan<'_> {
        Plan {
            state: self,
            changes: Vec::new(),
            bump: true,
        }
    }

    // Each change below is etcd's authStore method of the same name: its
    // checks in its order, its errors. `Ok(None)`: succeeds, nothing to write.

    pub fn auth_enable(&self) -> Result<Option<RecordsRequest>, AuthError> {
        if self.enabled {
            return Ok(None);
        }
        let root = self.users.get(ROOT).ok_or(AuthError::RootUserNotExist)?;
        if !root.roles.iter().any(|r| r == ROOT) {
            return Err(AuthError::RootRoleNotExist);
        }
        let mut plan = self.plan();
        plan.bump = false;
        plan.put(AUTH, ENABLED_KEY, vec![1]);
        plan.put(AUTH, ENABLED_AT_KEY, self.revision.to_be_bytes().to_vec());
        Ok(Some(plan.finish()))
    }

    pub fn auth_disable(&self) -> Result<Option<RecordsRequest>, AuthError> {
        if !self.enabled {
            return Ok(None);
        }
        let mut plan = self.plan();
        plan.put(AUTH, ENABLED_KEY, vec![0]);
        Ok(Some(plan.finish()))
    }

    /// `password_hash`: the bcrypt hash (ignored with `no_password`).
    pub fn user_add(
        &self,
        name: &str,
        password_hash: Bytes,
        no_password: bool,
    ) -> Result<RecordsRequest, AuthError> {
        if name.is_empty() {
            return Err(AuthError::UserEmpty);
        }
        if name.len() > crate::MAX_NAME_LEN {
            return Err(AuthError::UserNameTooLong);
        }
        if self.users.contains_key(name) {
            return Err(AuthError::UserAlreadyExist);
        }
        let user = UserRecord {
            name: Bytes::copy_from_slice(name.as_bytes()),
            password: if no_password {
                Bytes::new()
            } else {
                password_hash
            },
            roles: Vec::new(),
            options: Some(UserOptions { no_password }),
        };
        let mut plan = self.plan();
        plan.put_user(&user);
        Ok(plan.finish())
    }

    pub fn user_delete(&self, name: &str) -> Result<RecordsRequest, AuthError> {
        if self.enabled && name == ROOT {
            return Err(AuthError::InvalidAuthMgmt);
        }
        if !self.users.contains_key(name) {
            return Err(AuthError::UserNotFound);
        }
        let mut plan = self.plan();
        plan.delete(USERS, name.as_bytes());
        Ok(plan.finish())
    }

    pub fn user_change_password(
        &self,
        name: &str,
        password_hash: Bytes,
    ) -> Result<RecordsRequest, AuthError> {
        let mut user = self.users.get(name).ok_or(AuthError::UserNotFound)?.clone();
        if !user.no_password() {
            user.password = password_hash;
        }
        let mut plan = self.plan();
        plan.put_user(&user);
        Ok(plan.finish())
    }

    pub fn user_grant_role(
        &self,
        name: &str,
        role: &str,
    ) -> Result<Option<RecordsRequest>, AuthError> {
        let mut user = self.users.get(name).ok_or(AuthError::UserNotFound)?.clone();
        if role != ROOT && !self.roles.contains_key(role) {
            return Err(AuthError::RoleNotFound);
        }
        if user.roles.iter().any(|r| r == role) {
            return Ok(None);
        }
        user.roles.push(role.to_owned());
        user.roles.sort();
        let mut plan = self.plan();
        plan.put_user(&user);
        Ok(Some(plan.finish()))
    }

    pub fn user_revoke_role(&self, name: &str, role: &str) -> Result<RecordsRequest, AuthError> {
        if self.enabled && name == ROOT && role == ROOT {
            return Err(AuthError::InvalidAuthMgmt);
        }
        let mut user = self.users.get(name).ok_or(AuthError::UserNotFound)?.clone();
        let before = user.roles.len();
        user.roles.retain(|r| r != role);
        if user.roles.len() == before {
            return Err(AuthError::RoleNotGranted);
        }
        let mut plan = self.plan();
        plan.put_user(&user);
        Ok(plan.finish())
    }

    pub fn role_add(&self, name: &str) -> Result<RecordsRequest, AuthError> {
        if name.is_empty() {
            return Err(AuthError::RoleEmpty);
        }
        if name.len() > crate::MAX_NAME_LEN {
            return Err(AuthError::RoleNameTooLong);
        }
        if self.roles.contains_key(name) {
            return Err(AuthError::RoleAlreadyExist);
        }
        let role = RoleRecord {
            name: Bytes::copy_from_slice(name.as_bytes()),
            key_permission: Vec::new(),
        };
        let mut plan = self.plan();
        plan.put_role(&role);
        Ok(plan.finish())
    }

    /// Deletes the role and takes it from every user holding it.
    pub fn role_delete(&self, name: &str) -> Result<RecordsRequest, AuthError> {
        if self.enabled && name == ROOT {
            return Err(AuthError::InvalidAuthMgmt);
        }
        if !self.roles.contains_key(name) {
            return Err(AuthError::RoleNotFound);
        }
        let mut plan = self.plan();
        plan.delete(ROLES, name.as_bytes());
        for user in self.users.values() {
            if user.roles.iter().any(|r| r == name) {
                let mut user = user.clone();
                user.roles.retain(|r| r != name);
                plan.put_user(&user);
            }
        }
        Ok(plan.finish())
    }

    pub fn role_grant_permission(
        &self,
        name: &str,
        perm: Option<PermissionRecord>,
    ) -> Result<RecordsRequest, AuthError> {
        let perm = perm.ok_or(AuthError::PermissionNotGiven)?;
        if !valid_permission_range(&perm.key, &perm.range_end) {
            return Err(AuthError::InvalidAuthMgmt);
        }
        let mut role = self.roles.get(name).ok_or(AuthError::RoleNotFound)?.clone();
        // etcd replaces the type of an equal (key, range_end) found where the
        // key would sort, and otherwise adds the permission, sorted by key.
        let at = role.key_permission.partition_point(|p| p.key < perm.key);
        match role.key_permission.get_mut(at) {
            Some(p) if p.key == perm.key && p.range_end == perm.range_end => {
                p.perm_type = perm.perm_type;
            }
            _ => {
                role.key_permission.push(perm);
                role.key_permission.sort_by(|a, b| a.key.cmp(&b.key));
            }
        }
        let mut plan = self.plan();
        plan.put_role(&role);
        Ok(plan.finish())
    }

    pub fn role_revoke_permission(
        &self,
        name: &str,
        key: &[u8],
        range_end: &[u8],
    ) -> Result<RecordsRequest, AuthError> {
        let mut role = self.roles.get(name).ok_or(AuthError::RoleNotFound)?.clone();
        let before = role.key_permission.len();
        role.key_permission
            .retain(|p| !(p.key.as_ref() == key && p.range_end.as_ref() == range_end));
        if role.key_permission.len() == before {
            return Err(AuthError::PermissionNotGranted);
        }
        let mut plan = self.plan();
        plan.put_role(&role);
        Ok(plan.finish())
    }
}

/// etcd's `isValidPermissionRange`: a key, and an end that is empty, above
/// the key, or `"\0"`.
fn valid_permission_range(key: &[u8], range_end: &[u8]) -> bool {
    !key.is_empty() && (range_end.is_empty() || range_end == b"\0" || key < range_end)
}

/// A change being planned from one state.
struct Plan<'a> {
    state: &'a AuthState,
    changes: Vec<RecordChange>,
    bump: bool,
}

impl Plan<'_> {
    fn put(&mut self, bucket: &str, key: &[u8], value: Vec<u8>) {
        self.changes.push(RecordChange::Put {
            bucket: bucket.into(),
            key: Bytes::copy_from_slice(key),
            value: value.into(),
        });
    }

    fn delete(&mut self, bucket: &str, key: &[u8]) {
        self.changes.push(RecordChange::Delete {
            bucket: bucket.into(),
            key: Bytes::copy_from_slice(key),
        });
    }

    fn put_user(&mut self, user: &UserRecord) {
        self.put(USERS, &user.name, user.encode_to_vec());
    }

    fn put_role(&mut self, role: &RoleRecord) {
        self.put(ROLES, &role.name, role.encode_to_vec());
    }

    /// Guarded by the revision and the switch as read; the revision moves on.
    fn finish(mut self) -> RecordsRequest {
        if self.bump {
            self.put(
                AUTH,
                REVISION_KEY,
                (self.state.revision + 1).to_be_bytes().to_vec(),
            );
        }
        RecordsRequest {
            guards: vec![
                self.state.revision_guard(),
                RecordGuard {
                    bucket: AUTH.into(),
                    key: Bytes::from_static(ENABLED_KEY),
                    expected: self.state.stored_enabled.clone(),
                },
            ],
            changes: self.changes,
        }
    }
}
