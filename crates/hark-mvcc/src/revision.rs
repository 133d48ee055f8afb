//! Revisions and their byte encoding as backend keys.

/// A point in the store's history: `main` grows by one per write transaction that
/// changes something, `sub` numbers the changes inside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub(crate) struct Revision {
    pub main: i64,
    pub sub: i64,
}

/// Length of an encoded revision: 8 bytes main, `_`, 8 bytes sub (etcd's layout).
pub(crate) const REV_BYTES_LEN: usize = 17;
/// Suffix appended to the backend key of a tombstone (a delete).
const TOMBSTONE_MARK: u8 = b't';

impl Revision {
    pub(crate) const fn new(main: i64, sub: i64) -> Self {
        Revision { main, sub }
    }

    /// Big-endian encoding, so byte order equals revision order.
    pub(crate) fn to_bytes(self, tombstone: bool) -> Vec<u8> {
        let mut out = Vec::with_capacity(REV_BYTES_LEN + 1);
        out.extend_from_slice(&(self.main as u64).to_be_bytes());
        out.push(b'_');
        out.extend_from_slice(&(self.sub as u64).to_be_bytes());
        if tombstone {
            out.push(TOMBSTONE_MARK);
        }
        out
    }

    /// Decodes a backend key; returns the revision and whether it marks a tombstone.
    pub(crate) fn from_bytes(bytes: &[u8]) -> Option<(Revision, bool)> {
        if bytes.len() < REV_BYTES_LEN || bytes[8] != b'_' {
            return None;
        }
        let main = u64::from_be_bytes(bytes[0..8].try_into().ok()?) as i64;
        let sub = u64::from_be_bytes(bytes[9..17].try_into().ok()?) as i64;
        let tombstone = match &bytes[REV_BYTES_LEN..] {
            [] => false,
            [TOMBSTONE_MARK] => true,
            _ => return None,
        };
        Some((Revision { main, sub }, tombstone))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_round_trips_and_sorts_like_revisions() {
        let a = Revision::new(2, 0);
        let b = Revision::new(2, 1);
        let c = Revision::new(256, 0);
        assert_eq!(Revision::from_bytes(&a.to_bytes(false)), Some((a, false)));
        assert_eq!(Revision::from_bytes(&c.to_bytes(true)), Some((c, true)));
        assert!(a.to_bytes(false) < b.to_bytes(false));
        assert!(b.to_bytes(true) < c.to_bytes(false));
        assert_eq!(Revision::from_bytes(b"short"), None);
        let mut bad = a.to_bytes(false);
        bad.push(b'x');
        assert_eq!(Revision::from_bytes(&bad), None);
    }
}
