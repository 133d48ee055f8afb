//! The durable side of leases: which leases exist (with their granted TTL) and
//! which live keys each one holds. Timing (expiry, keep-alive) is not here: it
//! belongs to `hark-lease`, which revokes through the apply path like any write.

use std::collections::{HashMap, HashSet};

use bytes::Bytes;

#[derive(Debug, Default)]
struct Lease {
    ttl: i64,
    keys: HashSet<Bytes>,
}

/// Leases and their keys, kept in step with the key index by the committer.
#[derive(Debug, Default)]
pub(crate) struct LeaseTable {
    leases: HashMap<i64, Lease>,
    /// Lease of each live key that has one.
    key_lease: HashMap<Bytes, i64>,
}

impl LeaseTable {
    pub fn contains(&self, id: i64) -> bool {
        self.leases.contains_key(&id)
    }

    pub fn ttl(&self, id: i64) -> Option<i64> {
        self.leases.get(&id).map(|l| l.ttl)
    }

    pub fn grant(&mut self, id: i64, ttl: i64) {
        self.leases.entry(id).or_default().ttl = ttl;
    }

    /// Forgets a lease; returns its keys, sorted.
    pub fn remove(&mut self, id: i64) -> Option<Vec<Bytes>> {
        let lease = self.leases.remove(&id)?;
        let mut keys: Vec<Bytes> = lease.keys.into_iter().collect();
        for k in &keys {
            self.key_lease.remove(k);
        }
        keys.sort();
        Some(keys)
    }

    /// Records that `key` now holds `lease` (0: none), leaving its previous lease.
    pub fn attach(&mut self, key: &Bytes, lease: i64) {
        self.detach(key);
        if lease != 0
            && let Some(l) = self.leases.get_mut(&lease)
        {
            l.keys.insert(key.clone());
            self.key_lease.insert(key.clone(), lease);
        }
    }

    /// `key` was deleted.
    pub fn detach(&mut self, key: &Bytes) {
        // Every put and delete comes here: skip hashing the key when no key
        // holds a lease at all.
        if self.key_lease.is_empty() {
            return;
        }
        if let Some(old) = self.key_lease.remove(key)
            && let Some(l) = self.leases.get_mut(&old)
        {
            l.keys.remove(key);
        }
    }

    pub fn list(&self) -> Vec<(i64, i64)> {
        let mut all: Vec<_> = self.leases.iter().map(|(id, l)| (*id, l.ttl)).collect();
        all.sort_unstable();
        all
    }

    /// Every key attached to a lease, with its lease (an index checkpoint's copy).
    pub fn key_leases(&self) -> Vec<(Bytes, i64)> {
        self.key_lease
            .iter()
            .map(|(k, l)| (k.clone(), *l))
            .collect()
    }

    pub fn keys(&self, id: i64) -> Option<Vec<Bytes>> {
        let mut keys: Vec<Bytes> = self.leases.get(&id)?.keys.iter().cloned().collect();
        keys.sort();
        Some(keys)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_follow_their_latest_lease() {
        let mut t = LeaseTable::default();
        t.grant(1, 10);
        t.grant(2, 20);
        let k = Bytes::from_static(b"k");
        t.attach(&k, 1);
        assert_eq!(t.keys(1), Some(vec![k.clone()]));
        t.attach(&k, 2);
        assert_eq!(t.keys(1), Some(vec![]));
        assert_eq!(t.keys(2), Some(vec![k.clone()]));
        t.attach(&k, 0);
        assert_eq!(t.keys(2), Some(vec![]));
        t.attach(&k, 2);
        t.detach(&k);
        assert_eq!(t.keys(2), Some(vec![]));
        t.attach(&k, 1);
        assert_eq!(t.remove(1), Some(vec![k.clone()]));
        assert!(!t.contains(1));
        assert_eq!(t.list(), vec![(2, 20)]);
        // A key of a removed lease holds no lease any more.
        t.attach(&k, 2);
        assert_eq!(t.keys(2), Some(vec![k]));
    }
}
