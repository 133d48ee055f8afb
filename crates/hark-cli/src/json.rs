//! JSON as etcdctl writes it: Go's `encoding/json` over etcd's generated
//! structs — fields in declaration order, zero values omitted (`omitempty`),
//! 64-bit integers as bare numbers, bytes as padded base64, Go's string
//! escapes.

use base64::Engine;
use hark_client::pb;
use hark_client::{Event, KeyValue};

/// A JSON object being written, field by field.
pub struct Obj(String);

impl Obj {
    pub fn new() -> Obj {
        Obj(String::from("{"))
    }

    fn key(&mut self, key: &str) {
        if self.0.len() > 1 {
            self.0.push(',');
        }
        self.0.push('"');
        self.0.push_str(key);
        self.0.push_str("\":");
    }

    /// Always written.
    pub fn raw(mut self, key: &str, value: &str) -> Obj {
        self.key(key);
        self.0.push_str(value);
        self
    }

    pub fn int(self, key: &str, v: impl Into<i128>) -> Obj {
        let v = v.into();
        self.raw(key, &v.to_string())
    }

    /// Omitted when zero.
    pub fn int_nz(self, key: &str, v: impl Into<i128>) -> Obj {
        let v = v.into();
        if v == 0 {
            self
        } else {
            self.raw(key, &v.to_string())
        }
    }

    pub fn bool_nz(self, key: &str, v: bool) -> Obj {
        if v { self.raw(key, "true") } else { self }
    }

    pub fn bytes_nz(self, key: &str, v: &[u8]) -> Obj {
        if v.is_empty() {
            self
        } else {
            self.raw(key, &b64(v))
        }
    }

    pub fn str_nz(self, key: &str, v: &str) -> Obj {
        if v.is_empty() {
            self
        } else {
            self.raw(key, &string(v))
        }
    }

    pub fn opt(self, key: &str, v: Option<String>) -> Obj {
        match v {
            Some(v) => self.raw(key, &v),
            None => self,
        }
    }

    /// An array omitted when empty.
    pub fn list_nz(self, key: &str, items: Vec<String>) -> Obj {
        if items.is_empty() {
            self
        } else {
            self.raw(key, &format!("[{}]", items.join(",")))
        }
    }

    pub fn end(mut self) -> String {
        self.0.push('}');
        self.0
    }
}

pub fn b64(v: &[u8]) -> String {
    format!(
        "\"{}\"",
        base64::engine::general_purpose::STANDARD.encode(v)
    )
}

/// A Go `encoding/json` string literal.
pub fn string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

pub fn header(h: &Option<pb::ResponseHeader>) -> Option<String> {
    h.as_ref().map(|h| header_fields(Obj::new(), h).end())
}

/// The header's fields, as Go flattens an embedded `*pb.ResponseHeader`.
pub fn header_fields(o: Obj, h: &pb::ResponseHeader) -> Obj {
    o.int_nz("cluster_id", h.cluster_id)
        .int_nz("member_id", h.member_id)
        .int_nz("revision", h.revision)
        .int_nz("raft_term", h.raft_term)
}

pub fn kv(kv: &KeyValue) -> String {
    Obj::new()
        .bytes_nz("key", &kv.key)
        .int_nz("create_revision", kv.create_revision)
        .int_nz("mod_revision", kv.mod_revision)
        .int_nz("version", kv.version)
        .bytes_nz("value", &kv.value)
        .int_nz("lease", kv.lease)
        .end()
}

pub fn event(e: &Event) -> String {
    Obj::new()
        .int_nz("type", e.r#type)
        .opt("kv", e.kv.as_ref().map(kv))
        .opt("prev_kv", e.prev_kv.as_ref().map(kv))
        .end()
}

pub fn range(r: &pb::RangeResponse) -> String {
    Obj::new()
        .opt("header", header(&r.header))
        .list_nz("kvs", r.kvs.iter().map(kv).collect())
        .bool_nz("more", r.more)
        .int_nz("count", r.count)
        .end()
}

pub fn put(r: &pb::PutResponse) -> String {
    Obj::new()
        .opt("header", header(&r.header))
        .opt("prev_kv", r.prev_kv.as_ref().map(kv))
        .end()
}

pub fn delete(r: &pb::DeleteRangeResponse) -> String {
    Obj::new()
        .opt("header", header(&r.header))
        .int_nz("deleted", r.deleted)
        .list_nz("prev_kvs", r.prev_kvs.iter().map(kv).collect())
        .end()
}

pub fn txn(r: &pb::TxnResponse) -> String {
    use pb::response_op::Response;
    let responses = r
        .responses
        .iter()
        .map(|op| {
            let inner = match &op.response {
                Some(Response::ResponseRange(x)) => format!("{{\"response_range\":{}}}", range(x)),
                Some(Response::ResponsePut(x)) => format!("{{\"response_put\":{}}}", put(x)),
                Some(Response::ResponseDeleteRange(x)) => {
                    format!("{{\"response_delete_range\":{}}}", delete(x))
                }
                Some(Response::ResponseTxn(x)) => format!("{{\"response_txn\":{}}}", txn(x)),
                None => "null".to_string(),
            };
            format!("{{\"Response\":{inner}}}")
        })
        .collect();
    Obj::new()
        .opt("header", header(&r.header))
        .bool_nz("succeeded", r.succeeded)
        .list_nz("responses", responses)
        .end()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_style_strings_and_bytes() {
        assert_eq!(
            string("a<b>&\"\\\n\u{1}"),
            r#""a\u003cb\u003e\u0026\"\\\n\u0001""#
        );
        assert_eq!(b64(b"foo1"), "\"Zm9vMQ==\"");
        let h = pb::ResponseHeader {
            cluster_id: 14841639068965178418,
            member_id: 1,
            revision: 3,
            raft_term: 0,
            // Hark's extension: etcdctl does not know it, so never prints it.
            hark_auth_revision: 7,
        };
        assert_eq!(
            header(&Some(h)).unwrap(),
            r#"{"cluster_id":14841639068965178418,"member_id":1,"revision":3}"#
        );
    }
}
