//! Permission ranges against a simple model: a request is permitted
//! exactly when every key it names is in some granted range.

use bytes::Bytes;
use hark_auth::*;
use hark_mvcc::*;
use proptest::prelude::*;

fn key() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(prop::sample::select(vec![b'a', b'b', b'c']), 1..=3)
}

/// `(key, range_end)` in etcd's encoding: one key, a range, or from-key.
fn range() -> impl Strategy<Value = (Vec<u8>, Vec<u8>)> {
    prop_oneof![
        key().prop_map(|k| (k, vec![])),
        (key(), key()).prop_filter_map("a range ends above its key", |(a, b)| {
            (a < b).then_some((a, b))
        }),
        key().prop_map(|k| (k, vec![0])),
    ]
}

fn in_range(k: &[u8], (key, end): &(Vec<u8>, Vec<u8>)) -> bool {
    match end.as_slice() {
        [] => k == key.as_slice(),
        [0] => k >= key.as_slice(),
        end => k >= key.as_slice() && k < end,
    }
}

proptest! {
    #[test]
    fn ranges_are_permitted_exactly_when_covered(
        grants in prop::collection::vec(range(), 0..5),
        request in range(),
    ) {
        let store = Store::in_memory();
        let options = AuthOptions { bcrypt_cost: 4, ..Default::default() };
        let auth = AuthStore::new(store.clone(), options).unwrap();
        let apply = |c: RecordsRequest| { store.apply_blocking(WriteRequest::Records(c)).unwrap(); };
        apply(auth.state().unwrap().user_add("root", Bytes::new(), true).unwrap());
        apply(auth.state().unwrap().user_grant_role("root", ROOT).unwrap().unwrap());
        apply(auth.state().unwrap().user_add("u", Bytes::new(), true).unwrap());
        apply(auth.state().unwrap().role_add("r").unwrap());
        apply(auth.state().unwrap().user_grant_role("u", "r").unwrap().unwrap());
        for (k, e) in &grants {
            let p = PermissionRecord {
                perm_type: PermType::Read as i32,
                key: Bytes::copy_from_slice(k),
                range_end: Bytes::copy_from_slice(e),
            };
            apply(auth.state().unwrap().role_grant_permission("r", Some(p)).unwrap());
        }
        apply(auth.state().unwrap().auth_enable().unwrap().unwrap());
        let caller = auth.caller(Credentials { token: None, common_name: Some("u") }).unwrap();
        let got = caller.permitted(Access::Read, &request.0, &request.1).is_ok();
        // The model: cut the key space at every boundary any grant or the
        // request has (a point [k, k\0) has two). Each piece between two
        // cuts lies wholly inside or outside every grant, so the request is
        // covered when the first key of each of its pieces is in a grant.
        let covered = |k: &[u8]| grants.iter().any(|g| in_range(k, g));
        let expected = if request.1.is_empty() {
            covered(&request.0)
        } else {
            let mut cuts: Vec<Vec<u8>> = vec![];
            for (k, e) in grants.iter().chain(std::iter::once(&request)) {
                cuts.push(k.clone());
                match e.as_slice() {
                    [] => cuts.push([k.as_slice(), &[0]].concat()),
                    [0] => {}
                    e => cuts.push(e.to_vec()),
                }
            }
            cuts.sort();
            cuts.dedup();
            cuts.iter().filter(|c| in_range(c, &request)).all(|c| covered(c))
        };
        prop_assert_eq!(got, expected, "grants {:?} request {:?}", grants, request);
    }
}
