//! etcd's backend layout (its `server/storage/schema`): bucket names, meta
//! keys and the encodings of what they hold. The `key` bucket's rows are
//! already Hark's `kv` rows byte for byte, and revisions are encoded as
//! there ([`hark_mvcc::layout`]).

use serde::{Deserialize, Serialize};

pub const KEY: &str = "key";
pub const META: &str = "meta";
pub const LEASE: &str = "lease";
pub const ALARM: &str = "alarm";
pub const CLUSTER: &str = "cluster";
pub const MEMBERS: &str = "members";
pub const MEMBERS_REMOVED: &str = "members_removed";
pub const AUTH: &str = "auth";
pub const AUTH_USERS: &str = "authUsers";
pub const AUTH_ROLES: &str = "authRoles";

/// Every bucket an etcd 3.5 backend has, created even when empty (etcd 3.5's
/// restore fails without `meta`).
pub const BUCKETS: [&str; 10] = [
    KEY,
    META,
    LEASE,
    ALARM,
    CLUSTER,
    MEMBERS,
    MEMBERS_REMOVED,
    AUTH,
    AUTH_USERS,
    AUTH_ROLES,
];

/// The buckets that hold records of the layers above the store (auth's
/// users, roles and switches), carried both ways as they are.
pub const RECORD_BUCKETS: [&str; 3] = [AUTH, AUTH_USERS, AUTH_ROLES];

pub const CONSISTENT_INDEX: &str = "consistent_index";
pub const TERM: &str = "term";
pub const CONF_STATE: &str = "confState";
pub const SCHEDULED_COMPACT: &str = "scheduledCompactRev";
pub const FINISHED_COMPACT: &str = "finishedCompactRev";
pub const CLUSTER_VERSION: &str = "clusterVersion";
pub const AUTH_REVISION: &str = "authRevision";
/// etcd 3.6's addition to `meta` (its one schema change since 3.5).
pub const STORAGE_VERSION: &str = "storageVersion";

/// The cluster version a Hark snapshot declares: the oldest etcd that can
/// start on it. etcd refuses to start on a store whose cluster version is
/// above its own, and nothing in the snapshot needs more than 3.5, so etcd
/// 3.4 and 3.5 still restore it.
pub const CLUSTER_VERSION_VALUE: &str = "3.5.0";
/// The storage (schema) version a Hark snapshot declares: etcd 3.7's, whose
/// schema it follows (3.6 added this field; 3.7 changed nothing). etcd 3.5
/// and older ignore the field.
pub const STORAGE_VERSION_VALUE: &str = "3.7.0";

/// etcd's `leasepb.Lease`, the `lease` bucket's value (keyed by the
/// big-endian lease id).
#[derive(Clone, PartialEq, prost::Message)]
pub struct LeaseRecord {
    #[prost(int64, tag = "1")]
    pub id: i64,
    #[prost(int64, tag = "2")]
    pub ttl: i64,
    #[prost(int64, tag = "3")]
    pub remaining_ttl: i64,
}

/// etcd's `etcdserverpb.AlarmMember`, the `alarm` bucket's key (its value is empty).
#[derive(Clone, PartialEq, prost::Message)]
pub struct AlarmRecord {
    #[prost(uint64, tag = "1")]
    pub member_id: u64,
    #[prost(int32, tag = "2")]
    pub alarm: i32,
}

/// A member as etcd's `members` bucket holds it: key = the id in lowercase
/// hex, value = this JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemberRecord {
    pub id: u64,
    #[serde(rename = "peerURLs", default)]
    pub peer_urls: Vec<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(rename = "clientURLs", default, skip_serializing_if = "Vec::is_empty")]
    pub client_urls: Vec<String>,
}

/// raft's configuration as etcd 3.5 keeps it in `meta/confState`.
#[derive(Debug, Serialize)]
pub struct ConfState {
    pub voters: Vec<u64>,
    pub auto_leave: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    #[test]
    fn encodings_match_etcds_bytes() {
        // From a snapshot etcd 3.5.1 saved: a lease, a member (revisions are
        // hark_mvcc::layout's, tested there).
        let lease = LeaseRecord {
            id: 0x13b0a22e0431290a,
            ttl: 600,
            remaining_ttl: 0,
        };
        let decoded = LeaseRecord::decode(lease.encode_to_vec().as_slice()).unwrap();
        assert_eq!(decoded, lease);
        let member = MemberRecord {
            id: 12428976124636271536,
            peer_urls: vec!["http://127.0.0.1:23791".into()],
            name: "e35".into(),
            client_urls: vec![],
        };
        assert_eq!(
            serde_json::to_string(&member).unwrap(),
            r#"{"id":12428976124636271536,"peerURLs":["http://127.0.0.1:23791"],"name":"e35"}"#
        );
    }
}
