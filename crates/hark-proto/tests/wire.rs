//! Wire-format checks of the generated etcd types against hand-computed bytes.

use hark_proto::etcdserverpb::watch_create_request::FilterType;
use hark_proto::etcdserverpb::watch_request::RequestUnion;
use hark_proto::etcdserverpb::{
    Compare, RequestOp, TxnRequest, WatchCreateRequest, WatchRequest, compare, request_op,
};
use hark_proto::mvccpb::KeyValue;
use prost::Message;

#[test]
fn key_value_encodes_to_known_bytes() {
    let kv = KeyValue {
        key: prost::bytes::Bytes::from_static(b"a"),
        create_revision: 2,
        mod_revision: 3,
        version: 1,
        value: prost::bytes::Bytes::from_static(b"x"),
        lease: 0,
        hark_flags: 0,
    };
    // (field << 3 | wire type): key=1/LEN, create_revision=2/VARINT,
    // mod_revision=3/VARINT, version=4/VARINT, value=5/LEN; lease=0 and
    // Hark's hark_flags=0 are omitted: an etcd key-value encodes as etcd's.
    let expected = [
        0x0a, 0x01, b'a', // key
        0x10, 0x02, // create_revision
        0x18, 0x03, // mod_revision
        0x20, 0x01, // version
        0x2a, 0x01, b'x', // value
    ];
    assert_eq!(kv.encode_to_vec(), expected);
    assert_eq!(KeyValue::decode(&expected[..]).unwrap(), kv);

    // lease is field 6 (VARINT).
    let leased = KeyValue {
        lease: 0x7f,
        ..KeyValue::default()
    };
    assert_eq!(leased.encode_to_vec(), [0x30, 0x7f]);

    // Hark's Consul flags are field 1000 (VARINT): tag varint 0xc0 0x3e.
    let flagged = KeyValue {
        hark_flags: 5,
        ..KeyValue::default()
    };
    assert_eq!(flagged.encode_to_vec(), [0xc0, 0x3e, 0x05]);
}

#[test]
fn watch_create_request_round_trips() {
    let req = WatchRequest {
        request_union: Some(RequestUnion::CreateRequest(WatchCreateRequest {
            key: prost::bytes::Bytes::from_static(b"/registry/"),
            range_end: prost::bytes::Bytes::from_static(b"/registry0"),
            start_revision: 42,
            progress_notify: false,
            filters: vec![FilterType::Nodelete as i32],
            prev_kv: true,
            watch_id: 7,
            fragment: false,
        })),
    };
    let bytes = req.encode_to_vec();
    // create_request is field 1 of WatchRequest, length-delimited.
    assert_eq!(bytes[0], 0x0a);

    let decoded = WatchRequest::decode(bytes.as_slice()).unwrap();
    let Some(RequestUnion::CreateRequest(create)) = decoded.request_union else {
        panic!("expected a create_request, got {decoded:?}");
    };
    assert_eq!(create.key, &b"/registry/"[..]);
    assert_eq!(create.range_end, &b"/registry0"[..]);
    assert_eq!(create.start_revision, 42);
    assert!(!create.progress_notify);
    assert_eq!(create.filters, [1]); // NODELETE = 1
    assert_eq!(create.filters().collect::<Vec<_>>(), [FilterType::Nodelete]);
    assert!(create.prev_kv);
    assert_eq!(create.watch_id, 7);
    assert!(!create.fragment);
}

#[test]
fn watch_create_request_encodes_to_known_bytes() {
    let req = WatchRequest {
        request_union: Some(RequestUnion::CreateRequest(WatchCreateRequest {
            key: prost::bytes::Bytes::from_static(b"foo"),
            start_revision: 5,
            filters: vec![FilterType::Nodelete as i32],
            prev_kv: true,
            watch_id: 300,
            ..WatchCreateRequest::default()
        })),
    };
    let expected = [
        0x0a, 0x0f, // create_request = 1, 15 bytes
        0x0a, 0x03, b'f', b'o', b'o', // key = 1
        0x18, 0x05, // start_revision = 3
        0x2a, 0x01, 0x01, // filters = 5, packed: [NODELETE = 1]
        0x30, 0x01, // prev_kv = 6
        0x38, 0xac, 0x02, // watch_id = 7, varint 300
    ];
    assert_eq!(req.encode_to_vec(), expected);

    // Other watch requests: cancel_request = 2 (watch_id = 1), progress_request = 3.
    let cancel = WatchRequest {
        request_union: Some(RequestUnion::CancelRequest(
            hark_proto::etcdserverpb::WatchCancelRequest { watch_id: 9 },
        )),
    };
    assert_eq!(cancel.encode_to_vec(), [0x12, 0x02, 0x08, 0x09]);
    let progress = WatchRequest {
        request_union: Some(RequestUnion::ProgressRequest(
            hark_proto::etcdserverpb::WatchProgressRequest {},
        )),
    };
    assert_eq!(progress.encode_to_vec(), [0x1a, 0x00]);
}

#[test]
fn compare_range_end_is_field_64() {
    let cmp = Compare {
        result: compare::CompareResult::Equal as i32,
        target: compare::CompareTarget::Mod as i32,
        key: prost::bytes::Bytes::from_static(b"k"),
        range_end: prost::bytes::Bytes::from_static(b"l"),
        target_union: Some(compare::TargetUnion::ModRevision(4)),
    };
    let expected = [
        0x10, 0x02, // target = 2: MOD
        0x1a, 0x01, b'k', // key = 3
        0x30, 0x04, // mod_revision = 6 (target_union)
        0x82, 0x04, 0x01, b'l', // range_end = 64: tag (64 << 3 | 2) = 514 = varint 0x82 0x04
    ];
    let txn = TxnRequest {
        compare: vec![cmp.clone()],
        success: vec![RequestOp {
            request: Some(request_op::Request::RequestTxn(TxnRequest::default())),
        }],
        failure: vec![],
    };
    assert_eq!(cmp.encode_to_vec(), expected);
    let decoded = TxnRequest::decode(txn.encode_to_vec().as_slice()).unwrap();
    assert_eq!(decoded, txn);
}
