//! `Store::range_encoded` answers exactly what `Store::range` does, in the
//! wire form: for any request shape (limits, sorts, filters, `keys_only`,
//! `count_only`, past revisions), each encoded key-value decodes to the
//! one `range` returns, in the same order, with the same `more` and `count`.

use bytes::Bytes;
use hark_mvcc::{
    DeleteRangeRequest, KeyValue, PutRequest, RangeRequest, SortOrder, SortTarget, Store,
};
use proptest::prelude::*;
use prost::Message;

fn request() -> impl Strategy<Value = RangeRequest> {
    let target = prop::sample::select(vec![
        SortTarget::Key,
        SortTarget::Version,
        SortTarget::Create,
        SortTarget::Mod,
        SortTarget::Value,
    ]);
    let order = prop::sample::select(vec![SortOrder::None, SortOrder::Ascend, SortOrder::Descend]);
    (
        0..8usize,
        0..5i64,
        target,
        order,
        any::<bool>(),
        any::<bool>(),
        0..3i64,
        0..20i64,
    )
        .prop_map(
            |(start, limit, sort_target, sort_order, keys_only, count_only, back, min_mod)| {
                RangeRequest {
                    key: Bytes::from(format!("k{start}")),
                    range_end: Bytes::from_static(b"l"),
                    limit,
                    revision: -back, // turned into a revision below
                    sort_target,
                    sort_order,
                    keys_only,
                    count_only,
                    min_mod_revision: min_mod,
                    ..RangeRequest::default()
                }
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn encoded_ranges_decode_to_what_range_returns(
        writes in prop::collection::vec((0..10usize, 0..40usize, any::<bool>()), 1..30),
        mut req in request(),
    ) {
        let store = Store::in_memory();
        for (i, (key, len, delete)) in writes.into_iter().enumerate() {
            let key = format!("k{key}");
            if delete {
                store.delete_range(DeleteRangeRequest::new(key, "")).unwrap();
            } else {
                // Values differ in content and length, so a sort by value is visible.
                let value = vec![b'a' + (i % 26) as u8; len];
                store.put(PutRequest::new(key, value)).unwrap();
            }
        }
        req.revision = (store.current_revision() + req.revision).max(1);
        let plain = store.range(&req).unwrap();
        let encoded = store.range_encoded(&req).unwrap();
        let decoded: Vec<KeyValue> = encoded
            .kvs
            .iter()
            .map(|b| KeyValue::decode(b.as_ref()).unwrap())
            .collect();
        prop_assert_eq!(&decoded, &plain.kvs);
        prop_assert_eq!(encoded.more, plain.more);
        prop_assert_eq!(encoded.count, plain.count);
        prop_assert_eq!(encoded.header_revision, plain.header_revision);
    }
}

#[test]
fn an_encoded_row_is_the_stored_bytes() {
    let store = Store::in_memory();
    store.put(PutRequest::new("a", "value")).unwrap();
    let encoded = store.range_encoded(&RangeRequest::key("a")).unwrap();
    let kv = store.range(&RangeRequest::key("a")).unwrap().kvs.remove(0);
    assert_eq!(encoded.kvs, [Bytes::from(kv.encode_to_vec())]);
}
