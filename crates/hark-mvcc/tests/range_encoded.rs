//! `Store::range_encoded` answers exactly what `Store::range` does, in the
//! wire form: for any request shape (limits, sorts, filters, `keys_only`,
//! `count_only`, past revisions), each encoded key-value decodes to the
//! one `range` returns, in the same order, with the same `more` and `count`.
//! `Store::range_stream`'s chunks, merged, are that same answer, whatever
//! the chunk size, and stay at one revision while writes go on.

use bytes::Bytes;
use hark_mvcc::{
    DeleteRangeRequest, Error, KeyValue, PutRequest, RangeChunk, RangeRequest, SortOrder,
    SortTarget, Store,
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

/// Every chunk of a stream, checked for etcd's shape: key-values only,
/// except the last, which alone has the end.
fn drain(chunks: impl Iterator<Item = hark_mvcc::Result<RangeChunk>>) -> Vec<RangeChunk> {
    let all: Vec<RangeChunk> = chunks.map(|c| c.unwrap()).collect();
    let (last, rest) = all.split_last().expect("at least one chunk");
    assert!(last.end.is_some(), "the last chunk ends the stream");
    assert!(rest.iter().all(|c| c.end.is_none() && !c.kvs.is_empty()));
    all
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn streamed_chunks_merge_into_the_range_answer(
        writes in prop::collection::vec((0..40usize, 0..300usize, any::<bool>()), 1..80),
        start in 0..40usize,
        limit in 0..30i64,
        keys_only in any::<bool>(),
        count_only in any::<bool>(),
        back in 0..3i64,
        target_bytes in 1..4000usize,
    ) {
        let store = Store::in_memory();
        for (i, (key, len, delete)) in writes.into_iter().enumerate() {
            let key = format!("k{key:02}");
            if delete {
                store.delete_range(DeleteRangeRequest::new(key, "")).unwrap();
            } else {
                store.put(PutRequest::new(key, vec![b'a' + (i % 26) as u8; len])).unwrap();
            }
        }
        let req = RangeRequest {
            key: Bytes::from(format!("k{start:02}")),
            range_end: Bytes::from_static(b"l"),
            limit,
            revision: (store.current_revision() - back).max(1),
            keys_only,
            count_only,
            ..RangeRequest::default()
        };
        let whole = store.range_encoded(&req).unwrap();
        let chunks = drain(store.range_stream(&req, target_bytes).unwrap());
        let merged: Vec<Bytes> = chunks.iter().flat_map(|c| c.kvs.clone()).collect();
        let end = chunks.last().unwrap().end.unwrap();
        prop_assert_eq!(merged, whole.kvs);
        prop_assert_eq!(end.count, whole.count);
        prop_assert_eq!(end.more, whole.more);
        prop_assert_eq!(end.header_revision, store.current_revision());
    }
}

/// A range of 2,000 values of 1 KiB in chunks of about 32 KiB: no chunk
/// is far from the target (etcd's sizing: the key count doubles below half
/// of it and halves above twice it), writes made while it is read do not
/// show, and a compaction past its revision ends it with `Compacted`.
#[test]
fn a_stream_stays_at_its_revision_in_chunks_near_the_target() {
    let store = Store::in_memory();
    for i in 0..2000 {
        store
            .put(PutRequest::new(format!("k{i:04}"), vec![b'v'; 1024]))
            .unwrap();
    }
    let at = store.current_revision();
    let req = RangeRequest {
        key: Bytes::from_static(b"k"),
        range_end: Bytes::from_static(b"l"),
        ..RangeRequest::default()
    };
    let target = 32 * 1024;
    let mut stream = store.range_stream(&req, target).unwrap();
    let first = stream.next().unwrap().unwrap();
    // Written after the stream began: not in it.
    store.put(PutRequest::new("k0500", "changed")).unwrap();
    store.put(PutRequest::new("k9999", "added")).unwrap();
    store
        .delete_range(DeleteRangeRequest::new("k1500", ""))
        .unwrap();
    let mut chunks = vec![first];
    chunks.extend(drain(stream));
    let merged: Vec<KeyValue> = chunks
        .iter()
        .flat_map(|c| c.kvs.iter().map(|b| KeyValue::decode(b.as_ref()).unwrap()))
        .collect();
    let then = store
        .range(&RangeRequest {
            revision: at,
            ..req.clone()
        })
        .unwrap();
    assert_eq!(merged, then.kvs);
    assert_eq!(merged.len(), 2000);
    let end = chunks.last().unwrap().end.unwrap();
    assert_eq!(
        (end.header_revision, end.count, end.more),
        (at, 2000, false)
    );
    let sizes: Vec<usize> = chunks
        .iter()
        .map(|c| c.kvs.iter().map(Bytes::len).sum())
        .collect();
    assert!(chunks.len() > 10, "{sizes:?}");
    assert!(sizes.iter().all(|&s| s <= 4 * target), "{sizes:?}");

    // Compacted past the stream's revision between two chunks.
    let mut stream = store.range_stream(&req, target).unwrap();
    assert!(stream.next().unwrap().is_ok());
    store.put(PutRequest::new("k0001", "newer")).unwrap();
    store.compact(store.current_revision(), false).unwrap();
    assert!(matches!(stream.next(), Some(Err(Error::Compacted))));
    assert!(stream.next().is_none(), "the stream ends at the error");
}

#[test]
fn a_stream_takes_no_sort_order_and_no_revision_filter() {
    let store = Store::in_memory();
    store.put(PutRequest::new("a", "1")).unwrap();
    for req in [
        RangeRequest {
            sort_order: SortOrder::Descend,
            ..RangeRequest::key("a")
        },
        RangeRequest {
            sort_target: SortTarget::Mod,
            sort_order: SortOrder::Ascend,
            ..RangeRequest::key("a")
        },
        RangeRequest {
            min_mod_revision: 1,
            ..RangeRequest::key("a")
        },
    ] {
        assert!(matches!(
            store.range_stream(&req, 1024),
            Err(Error::InvalidArgument(_))
        ));
    }
    // Key order, asked for explicitly, is the order chunks come in.
    let req = RangeRequest {
        sort_target: SortTarget::Key,
        sort_order: SortOrder::Ascend,
        ..RangeRequest::key("a")
    };
    assert_eq!(drain(store.range_stream(&req, 1024).unwrap()).len(), 1);
}
