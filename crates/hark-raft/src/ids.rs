//! Member and cluster ids, derived as etcd derives them, so a cluster started
//! with etcd's flags has the ids etcd would give it (and keeps them).

use sha1::{Digest, Sha1};

/// etcd's member id: the first 8 bytes (big-endian) of
/// sha1(sorted peer URLs joined, then the cluster token).
pub fn member_id(peer_urls: &[String], token: &str) -> u64 {
    url_hash(peer_urls, token, None)
}

/// etcd's member id for a member added at run time (`MemberAdd`): the unix
/// time of the addition is hashed in too, so re-adding the same URLs gives a
/// new id.
pub fn added_member_id(peer_urls: &[String], token: &str, unix_seconds: u64) -> u64 {
    url_hash(peer_urls, token, Some(unix_seconds))
}

fn url_hash(peer_urls: &[String], token: &str, unix_seconds: Option<u64>) -> u64 {
    let mut urls: Vec<&str> = peer_urls.iter().map(String::as_str).collect();
    urls.sort_unstable();
    let mut hash = Sha1::new();
    for u in urls {
        hash.update(u.as_bytes());
    }
    hash.update(token.as_bytes());
    if let Some(t) = unix_seconds {
        hash.update(t.to_string().as_bytes());
    }
    first_u64(&hash.finalize())
}

/// etcd's cluster id: the first 8 bytes of sha1 over the sorted member ids
/// (8 bytes big-endian each) of the initial cluster.
pub fn cluster_id(member_ids: &[u64]) -> u64 {
    let mut ids = member_ids.to_vec();
    ids.sort_unstable();
    let mut hash = Sha1::new();
    for id in ids {
        hash.update(id.to_be_bytes());
    }
    first_u64(&hash.finalize())
}

fn first_u64(digest: &[u8]) -> u64 {
    u64::from_be_bytes(digest[..8].try_into().expect("sha1 is 20 bytes"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_default_etcd_member_gets_etcds_well_known_ids() {
        // `etcd` with no flags: peer URL http://localhost:2380, token
        // etcd-cluster; etcd reports member 8e9e05c52164694d in cluster
        // cdf818194e3a8c32.
        let member = member_id(&["http://localhost:2380".to_string()], "etcd-cluster");
        assert_eq!(format!("{member:x}"), "8e9e05c52164694d");
        assert_eq!(format!("{:x}", cluster_id(&[member])), "cdf818194e3a8c32");
    }

    #[test]
    fn url_order_does_not_matter_and_the_token_and_time_do() {
        let a = ["http://a:2380".to_string(), "http://b:2380".to_string()];
        let b = [a[1].clone(), a[0].clone()];
        assert_eq!(member_id(&a, "t"), member_id(&b, "t"));
        assert_ne!(member_id(&a, "t"), member_id(&a, "u"));
        assert_ne!(added_member_id(&a, "t", 1), added_member_id(&a, "t", 2));
        assert_eq!(cluster_id(&[1, 2]), cluster_id(&[2, 1]));
    }
}
