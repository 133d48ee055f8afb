//! Reading and writing the gateway's JSON.

use bytes::{Bytes, BytesMut};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// A request body: the message as JSON; an empty body is the empty message
/// (grpc-gateway reads EOF as `{}`).
pub(crate) fn decode<T: DeserializeOwned + Default>(body: &[u8]) -> Result<T, String> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(T::default());
    }
    serde_json::from_slice(body).map_err(|e| e.to_string())
}

/// One stream message as grpc-gateway frames it: `{"result":<msg>}` and a
/// newline, written as one chunk (clients parse chunk by chunk).
pub(crate) fn result_chunk<T: Serialize>(message: &T) -> Bytes {
    let mut out = Vec::with_capacity(128);
    out.extend_from_slice(br#"{"result":"#);
    serde_json::to_writer(&mut out, message).expect("proto messages serialize");
    out.extend_from_slice(b"}\n");
    Bytes::from(out)
}

/// Successive JSON objects in a body that arrives in pieces (Go's
/// `json.Decoder` on a streaming request body): whitespace between them is
/// skipped, an object cut at a piece's end waits for the next piece.
///
/// Each byte is scanned once (depth and string state carry over between
/// pieces), and serde parses an object only once it has closed; an object
/// that grows past `limit` bytes is an error.
pub(crate) struct Successive {
    pending: BytesMut,
    limit: usize,
    /// Bytes of `pending` already scanned.
    scanned: usize,
    depth: u32,
    in_string: bool,
    escaped: bool,
}

impl Successive {
    pub(crate) fn new(limit: usize) -> Successive {
        Successive {
            pending: BytesMut::new(),
            limit,
            scanned: 0,
            depth: 0,
            in_string: false,
            escaped: false,
        }
    }

    /// Adds a piece of the body.
    pub(crate) fn push(&mut self, piece: &[u8]) {
        self.pending.extend_from_slice(piece);
    }

    /// The next whole object, `Ok(None)` until more of the body arrives.
    pub(crate) fn next<T: DeserializeOwned>(&mut self) -> Result<Option<T>, String> {
        while self.scanned < self.pending.len() {
            let byte = self.pending[self.scanned];
            self.scanned += 1;
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                } else if byte == b'\\' {
                    self.escaped = true;
                } else if byte == b'"' {
                    self.in_string = false;
                }
                continue;
            }
            match byte {
                b'"' if self.depth > 0 => self.in_string = true,
                b'{' | b'[' => self.depth += 1,
                b'}' | b']' if self.depth > 0 => {
                    self.depth -= 1;
                    if self.depth == 0 {
                        let value = self.pending.split_to(self.scanned);
                        self.scanned = 0;
                        return serde_json::from_slice(&value)
                            .map(Some)
                            .map_err(|e| e.to_string());
                    }
                }
                b if self.depth == 0 && b.is_ascii_whitespace() => {
                    // Between objects: drop it.
                    let _ = self.pending.split_to(self.scanned);
                    self.scanned = 0;
                }
                _ if self.depth == 0 => {
                    return Err(format!("expected a JSON object, found {:?}", byte as char));
                }
                _ => {}
            }
        }
        if self.pending.len() > self.limit {
            return Err(format!("a request over {} bytes", self.limit));
        }
        Ok(None)
    }

    /// At the body's end: whether an object was left unfinished.
    pub(crate) fn unfinished(&self) -> bool {
        !self.pending.iter().all(u8::is_ascii_whitespace)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hark_proto::etcdserverpb::{RangeRequest, WatchRequest, watch_request::RequestUnion};

    #[test]
    fn values_split_anywhere_come_out_whole_and_in_order() {
        let body = br#"{"create_request":{"key":"Zm9v"}} {"progress_request":{}}
{"cancel_request":{"watch_id":"7"}}"#;
        for cut in 0..body.len() {
            let mut values = Successive::new(1 << 20);
            let mut seen = Vec::new();
            for piece in [&body[..cut], &body[cut..]] {
                values.push(piece);
                while let Some(req) = values.next::<WatchRequest>().unwrap() {
                    seen.push(req.request_union.unwrap());
                }
            }
            assert!(!values.unfinished(), "cut at {cut}");
            assert_eq!(seen.len(), 3, "cut at {cut}");
            assert!(matches!(&seen[0], RequestUnion::CreateRequest(c) if &c.key[..] == b"foo"));
            assert!(matches!(&seen[1], RequestUnion::ProgressRequest(_)));
            assert!(matches!(&seen[2], RequestUnion::CancelRequest(c) if c.watch_id == 7));
        }
    }

    #[test]
    fn a_malformed_value_is_an_error_and_a_cut_one_is_unfinished() {
        let mut values = Successive::new(1 << 20);
        values.push(br#"{"key":"Zm9v""#);
        assert!(values.next::<RangeRequest>().unwrap().is_none());
        assert!(values.unfinished());
        let mut bad = Successive::new(1 << 20);
        bad.push(br#"{"key":}"#);
        assert!(bad.next::<RangeRequest>().is_err());
        let mut not_an_object = Successive::new(1 << 20);
        not_an_object.push(b" 42 ");
        assert!(not_an_object.next::<RangeRequest>().is_err());
        // Braces and quotes inside strings do not count.
        let mut tricky = Successive::new(1 << 20);
        tricky.push(br#"{"create_request":{"key":"Zm9v"}, "x":"}{\"\\"} {"progress_request":{}}"#);
        assert!(tricky.next::<WatchRequest>().unwrap().is_some());
        assert!(tricky.next::<WatchRequest>().unwrap().is_some());
        assert!(!tricky.unfinished());
    }

    #[test]
    fn an_object_that_never_ends_is_refused_at_the_limit() {
        let mut values = Successive::new(64);
        values.push(br#"{"create_request":{"key":""#);
        let mut refused = false;
        for _ in 0..100 {
            values.push(b"A");
            match values.next::<WatchRequest>() {
                Ok(None) => {}
                Ok(Some(_)) => panic!("no object ended"),
                Err(_) => {
                    refused = true;
                    break;
                }
            }
        }
        assert!(refused);
    }

    #[test]
    fn input_takes_either_name_numbers_or_strings_and_any_base64() {
        // lowerCamel and proto names, an int64 as a number and as a string,
        // an enum by number and by name, unpadded URL-safe base64, and an
        // unknown field, which is dropped.
        let req: RangeRequest = decode(
            br#"{"key":"_w","rangeEnd":"AA==","limit":5,"revision":"3","sort_order":2,"sortTarget":"MOD","bogus":[1]}"#,
        )
        .unwrap();
        assert_eq!(&req.key[..], &[0xff]);
        assert_eq!(&req.range_end[..], &[0]);
        assert_eq!((req.limit, req.revision), (5, 3));
        assert_eq!((req.sort_order, req.sort_target), (2, 3));
        assert_eq!(
            decode::<RangeRequest>(b" \n").unwrap(),
            RangeRequest::default()
        );
        assert!(decode::<RangeRequest>(br#"{"key":"!!"}"#).is_err());
    }

    #[test]
    fn output_has_proto_names_strings_for_64_bit_integers_and_no_zero_values() {
        use hark_proto::etcdserverpb::{RangeResponse, ResponseHeader};
        use hark_proto::mvccpb::KeyValue;
        let response = RangeResponse {
            header: Some(ResponseHeader {
                cluster_id: 1,
                member_id: 2,
                revision: 3,
                raft_term: 0,
                hark_auth_revision: 0,
            }),
            kvs: vec![KeyValue {
                key: Bytes::from_static(b"foo"),
                create_revision: 2,
                mod_revision: 3,
                version: 1,
                value: Bytes::new(),
                lease: 0,
                hark_flags: 0,
            }],
            more: false,
            count: 1,
        };
        assert_eq!(
            std::str::from_utf8(&result_chunk(&response)).unwrap(),
            concat!(
                r#"{"result":{"header":{"cluster_id":"1","member_id":"2","revision":"3"},"#,
                r#""kvs":[{"key":"Zm9v","create_revision":"2","mod_revision":"3","version":"1"}],"count":"1"}}"#,
                "\n"
            )
        );
        // Hark's auth revision (auth enabled) is a header field like the others.
        let with_auth = ResponseHeader {
            revision: 3,
            hark_auth_revision: 5,
            ..Default::default()
        };
        assert_eq!(
            std::str::from_utf8(&result_chunk(&with_auth)).unwrap(),
            "{\"result\":{\"revision\":\"3\",\"hark_auth_revision\":\"5\"}}\n"
        );
    }
}
