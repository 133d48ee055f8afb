//! The records auth keeps in the store, in etcd's own buckets and
//! encodings (`auth`: `authEnabled`, `authRevision`; `authUsers`: name →
//! `authpb.User`; `authRoles`: name → `authpb.Role`), so a snapshot carries
//! them to and from etcd unchanged.

use bytes::Bytes;

pub const AUTH: &str = "auth";
pub const USERS: &str = "authUsers";
pub const ROLES: &str = "authRoles";
pub const ENABLED_KEY: &[u8] = b"authEnabled";
pub const REVISION_KEY: &[u8] = b"authRevision";

/// `authpb.User`: the password is the bcrypt hash, never the password.
#[derive(Clone, PartialEq, prost::Message)]
pub struct UserRecord {
    #[prost(bytes = "bytes", tag = "1")]
    pub name: Bytes,
    #[prost(bytes = "bytes", tag = "2")]
    pub password: Bytes,
    /// Sorted, as etcd keeps them.
    #[prost(string, repeated, tag = "3")]
    pub roles: Vec<String>,
    #[prost(message, optional, tag = "4")]
    pub options: Option<UserOptions>,
}

impl UserRecord {
    pub fn no_password(&self) -> bool {
        self.options.as_ref().is_some_and(|o| o.no_password)
    }
}

/// `authpb.UserAddOptions`.
#[derive(Clone, Copy, PartialEq, prost::Message)]
pub struct UserOptions {
    #[prost(bool, tag = "1")]
    pub no_password: bool,
}

/// `authpb.Permission.Type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PermType {
    Read = 0,
    Write = 1,
    ReadWrite = 2,
}

impl PermType {
    pub fn from_number(n: i32) -> Option<PermType> {
        match n {
            0 => Some(PermType::Read),
            1 => Some(PermType::Write),
            2 => Some(PermType::ReadWrite),
            _ => None,
        }
    }

    pub fn reads(self) -> bool {
        matches!(self, PermType::Read | PermType::ReadWrite)
    }

    pub fn writes(self) -> bool {
        matches!(self, PermType::Write | PermType::ReadWrite)
    }
}

/// `authpb.Permission`: one key (`range_end` empty), `[key, range_end)`, or
/// every key from `key` (`range_end` = `"\0"`).
#[derive(Clone, PartialEq, Eq, prost::Message)]
pub struct PermissionRecord {
    #[prost(int32, tag = "1")]
    pub perm_type: i32,
    #[prost(bytes = "bytes", tag = "2")]
    pub key: Bytes,
    #[prost(bytes = "bytes", tag = "3")]
    pub range_end: Bytes,
}

/// `authpb.Role`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct RoleRecord {
    #[prost(bytes = "bytes", tag = "1")]
    pub name: Bytes,
    #[prost(message, repeated, tag = "2")]
    pub key_permission: Vec<PermissionRecord>,
}
