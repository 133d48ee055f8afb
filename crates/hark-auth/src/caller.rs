//! `Caller`: who sent a request, with the auth state it is judged by, and
//! one check per kind of request (etcd 3.6's rules, its 2026 fixes included).
//! The server calls exactly one of these per request; no permission logic
//! lives anywhere else.

use std::sync::Arc;

use bytes::Bytes;
use hark_mvcc::{
    AlarmAction, DeleteRangeRequest, PutRequest, RangeRequest, RecordGuard, RequestOp, TxnRequest,
    WriteRequest,
};

use crate::error::AuthError;
use crate::perms::Access;
use crate::state::AuthState;

/// The keys attached to a lease now (empty for an unknown lease).
pub type LeaseKeys<'a> = &'a dyn Fn(i64) -> Vec<Bytes>;

pub struct Caller {
    state: Arc<AuthState>,
    user: Option<String>,
}

impl Caller {
    pub(crate) fn new(state: Arc<AuthState>, user: Option<String>) -> Caller {
        Caller { state, user }
    }

    /// The user, if auth is enabled and the request named one.
    pub fn user(&self) -> Option<&str> {
        self.user.as_deref()
    }

    pub fn state(&self) -> &AuthState {
        &self.state
    }

    /// The guard a permitted write carries into the apply path: it is
    /// refused there (etcd's "revision of auth store is old") if users or
    /// roles changed after this check. `None` with auth disabled.
    pub fn guard(&self) -> Option<RecordGuard> {
        self.state.enabled().then(|| self.state.revision_guard())
    }

    /// `write`, wrapped in the guard when auth is enabled.
    pub fn guarded(&self, write: WriteRequest) -> WriteRequest {
        match self.guard() {
            Some(g) => WriteRequest::Guarded(g, Box::new(write)),
            None => write,
        }
    }

    /// etcd's `requireAuthInfo`: any authenticated user.
    pub fn authenticated(&self) -> Result<(), AuthError> {
        if self.state.enabled() && self.user.is_none() {
            return Err(AuthError::UserEmpty);
        }
        Ok(())
    }

    /// etcd's `IsAdminPermitted`: a user with the root role.
    pub fn admin(&self) -> Result<(), AuthError> {
        if !self.state.enabled() {
            return Ok(());
        }
        let user = self.user.as_deref().ok_or(AuthError::UserEmpty)?;
        if user.is_empty() {
            return Err(AuthError::UserEmpty);
        }
        if self.state.user(user).is_none() {
            return Err(AuthError::UserNotFound);
        }
        if !self.state.is_root(user) {
            return Err(AuthError::PermissionDenied);
        }
        Ok(())
    }

    fn is_admin(&self) -> bool {
        self.admin().is_ok()
    }

    /// etcd's `isOpPermitted` over `key` / `range_end` (etcd's encoding).
    pub fn permitted(&self, access: Access, key: &[u8], range_end: &[u8]) -> Result<(), AuthError> {
        if !self.state.enabled() {
            return Ok(());
        }
        let user = self.user.as_deref().ok_or(AuthError::UserEmpty)?;
        if self.state.user(user).is_none() {
            return Err(AuthError::PermissionDenied);
        }
        if self.state.is_root(user) {
            return Ok(());
        }
        let perms = self.state.perms(user).ok_or(AuthError::PermissionDenied)?;
        if perms.permits(access, key, range_end) {
            Ok(())
        } else {
            Err(AuthError::PermissionDenied)
        }
    }

    pub fn range(&self, r: &RangeRequest) -> Result<(), AuthError> {
        self.permitted(Access::Read, &r.key, &r.range_end)
    }

    /// A watch, checked once at create against the range exactly as the
    /// client sent it (GHSA-xg4h-6gfc-h4m8: not after a from-key rewrite).
    pub fn watch(&self, key: &[u8], range_end: &[u8]) -> Result<(), AuthError> {
        self.permitted(Access::Read, key, range_end)
    }

    /// `access` on every key attached to a lease, unless root.
    pub fn lease_keys(&self, access: Access, keys: &[Bytes]) -> Result<(), AuthError> {
        if !self.state.enabled() || self.is_admin() {
            return Ok(());
        }
        keys.iter().try_for_each(|k| self.permitted(access, k, b""))
    }

    fn put(&self, p: &PutRequest, lease_keys: LeaseKeys<'_>) -> Result<(), AuthError> {
        self.permitted(Access::Write, &p.key, b"")?;
        if p.lease != 0 {
            self.lease_keys(Access::Write, &lease_keys(p.lease))?;
        }
        if p.prev_kv {
            self.permitted(Access::Read, &p.key, b"")?;
        }
        Ok(())
    }

    fn delete_range(&self, d: &DeleteRangeRequest) -> Result<(), AuthError> {
        self.permitted(Access::Write, &d.key, &d.range_end)?;
        if d.prev_kv {
            self.permitted(Access::Read, &d.key, &d.range_end)?;
        }
        Ok(())
    }

    /// Every compare (READ) and every operation of both branches, nested
    /// txns included.
    pub fn txn(&self, t: &TxnRequest, lease_keys: LeaseKeys<'_>) -> Result<(), AuthError> {
        for c in &t.compare {
            self.permitted(Access::Read, &c.key, &c.range_end)?;
        }
        for op in t.success.iter().chain(&t.failure) {
            match op {
                RequestOp::Range(r) => self.range(r)?,
                RequestOp::Put(p) => self.put(p, lease_keys)?,
                RequestOp::DeleteRange(d) => self.delete_range(d)?,
                RequestOp::Txn(inner) => self.txn(inner, lease_keys)?,
            }
        }
        Ok(())
    }

    /// Any write entering the apply path.
    pub fn write(&self, w: &WriteRequest, lease_keys: LeaseKeys<'_>) -> Result<(), AuthError> {
        match w {
            WriteRequest::Put(p) => self.put(p, lease_keys),
            WriteRequest::DeleteRange(d) => self.delete_range(d),
            WriteRequest::Txn(t) => self.txn(t, lease_keys),
            WriteRequest::Compact(_) | WriteRequest::Records(_) => self.admin(),
            WriteRequest::LeaseGrant(_) => self.authenticated(),
            WriteRequest::LeaseRevoke(r) => {
                self.authenticated()?;
                self.lease_keys(Access::Write, &lease_keys(r.id))
            }
            WriteRequest::Alarm(a) => match a.action {
                AlarmAction::Get => self.authenticated(),
                AlarmAction::Activate | AlarmAction::Deactivate => self.admin(),
            },
            WriteRequest::Guarded(_, inner) => self.write(inner, lease_keys),
        }
    }

    /// etcd's UserGet rule: root, or the user asking about itself.
    pub fn user_get(&self, name: &str) -> Result<(), AuthError> {
        if self.user.as_deref() == Some(name) && self.state.user(name).is_some() {
            return Ok(());
        }
        self.admin()
    }

    /// etcd's RoleGet rule: root, or a user holding the role.
    pub fn role_get(&self, role: &str) -> Result<(), AuthError> {
        let holds = self
            .user
            .as_deref()
            .and_then(|u| self.state.user(u))
            .is_some_and(|u| u.roles.iter().any(|r| r == role));
        if holds {
            return Ok(());
        }
        self.admin()
    }
}
