//! etcd's key-range rules as its clients apply them.

/// The smallest key greater than every key starting with `prefix` (etcd's
/// `GetPrefixRangeEnd`): `"\0"`, meaning every key from the start, for an
/// empty prefix or one of 0xff bytes only.
///
/// ```
/// use hark_proto::keys::prefix_end;
///
/// assert_eq!(prefix_end(b"jobs/"), b"jobs0");
/// assert_eq!(prefix_end(b"a\xff"), b"b");
/// assert_eq!(prefix_end(b""), b"\0");
/// ```
pub fn prefix_end(prefix: &[u8]) -> Vec<u8> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return end;
        }
    }
    vec![0]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_end_follows_etcd() {
        assert_eq!(prefix_end(b"a/"), b"a0");
        assert_eq!(prefix_end(b"a\xff"), b"b");
        assert_eq!(prefix_end(b"\xff\xff"), b"\0");
        assert_eq!(prefix_end(b""), b"\0");
    }
}
