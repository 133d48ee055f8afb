//! Watch responses on their way out (written to the wire by
//! [`crate::grpc::watch_body`]).
//!
//! A `WatchFrame` is a `WatchResponse` whose events stay as the engine shares
//! them. Each event's `mvccpb.Event` encoding is made once
//! ([`WatchEvent::encoded`]) and the body copies those bytes into every
//! response that carries the event, instead of rebuilding and re-encoding a
//! protobuf message per watcher. (Profiled on catch-up to 100 watchers before:
//! a fifth of the server's CPU was reference counting the key and value of
//! each event per watcher, and most of the rest was encoding them again.)

use hark_proto::etcdserverpb as pb;
use hark_watch::{Events, WatchEvent};
use prost::Message;
use prost::encoding::encoded_len_varint;

/// `WatchResponse.events`.
pub(crate) const EVENTS_TAG: u32 = 11;

/// One `WatchResponse`: every field but the events in `head`, then the events.
#[derive(Debug, Clone, Default)]
pub struct WatchFrame {
    pub head: pb::WatchResponse,
    pub events: Events,
    /// The events go out with their `prev_kv` (already loaded into each).
    pub prev_kv: bool,
}

impl WatchFrame {
    fn event_bytes(&self, e: &WatchEvent) -> usize {
        let len = e.encoded(self.prev_kv).len();
        1 + encoded_len_varint(len as u64) + len
    }

    pub fn encoded_len(&self) -> usize {
        self.head.encoded_len()
            + self
                .events
                .iter()
                .map(|e| self.event_bytes(e))
                .sum::<usize>()
    }

    /// Writes the frame as `WatchResponse`'s protobuf encoding (events last,
    /// which is where their field number puts them anyway) in one piece: the
    /// reference the Watch body's piecewise encoding is tested against.
    #[cfg(test)]
    pub fn encode(&self, buf: &mut Vec<u8>) {
        use prost::encoding::{WireType, encode_key, encode_varint};
        self.head.encode(buf).expect("a Vec grows as needed");
        for e in &self.events {
            let bytes = e.encoded(self.prev_kv);
            encode_key(EVENTS_TAG, WireType::LengthDelimited, buf);
            encode_varint(bytes.len() as u64, buf);
            buf.extend_from_slice(bytes);
        }
    }

    /// etcd's `sendFragments`: a response of at least `max_bytes` with two or
    /// more events is split into pieces under `max_bytes` (a single larger
    /// event goes alone); every piece but the last has `fragment` set.
    pub fn fragment(self, max_bytes: usize) -> Vec<WatchFrame> {
        if self.events.len() < 2 || self.encoded_len() < max_bytes {
            return vec![self];
        }
        let mut shell = WatchFrame {
            head: self.head.clone(),
            events: Events::new(),
            prev_kv: self.prev_kv,
        };
        shell.head.fragment = true;
        let base = shell.head.encoded_len();
        let mut pieces = Vec::new();
        let mut cur = shell.clone();
        let mut size = base;
        for e in &self.events {
            let added = self.event_bytes(e);
            if !cur.events.is_empty() && size + added >= max_bytes {
                pieces.push(std::mem::replace(&mut cur, shell.clone()));
                size = base;
            }
            size += added;
            cur.events.push(e.clone());
        }
        cur.head.fragment = false;
        pieces.push(cur);
        pieces
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::sync::Arc;

    use super::*;
    use hark_mvcc::{EventKind, KeyValue};
    use hark_proto::mvccpb;

    /// An event with a value of `value_len` bytes (the Watch body's tests too).
    pub(crate) fn event(kind: EventKind, key: &str, value_len: usize, rev: i64) -> Arc<WatchEvent> {
        Arc::new(WatchEvent::new(
            kind,
            KeyValue {
                key: key.to_string().into(),
                create_revision: 2,
                mod_revision: rev,
                version: rev - 1,
                value: vec![b'v'; value_len].into(),
                lease: 7,
                flags: 9,
            },
        ))
    }

    /// What the frame must decode to, built field by field from the protobuf types.
    fn expected(frame: &WatchFrame) -> pb::WatchResponse {
        let mut w = frame.head.clone();
        w.events = frame
            .events
            .iter()
            .map(|e| mvccpb::Event {
                r#type: match e.kind {
                    EventKind::Put => mvccpb::event::EventType::Put as i32,
                    EventKind::Delete => mvccpb::event::EventType::Delete as i32,
                },
                kv: Some(mvccpb::KeyValue {
                    key: e.kv.key.clone(),
                    create_revision: e.kv.create_revision,
                    mod_revision: e.kv.mod_revision,
                    version: e.kv.version,
                    value: e.kv.value.clone(),
                    lease: e.kv.lease,
                    hark_flags: e.kv.flags,
                }),
                prev_kv: None,
            })
            .collect();
        w
    }

    fn decoded(frame: &WatchFrame) -> pb::WatchResponse {
        let mut buf = Vec::new();
        frame.encode(&mut buf);
        assert_eq!(buf.len(), frame.encoded_len());
        pb::WatchResponse::decode(buf.as_slice()).unwrap()
    }

    fn frame(events: Vec<Arc<WatchEvent>>) -> WatchFrame {
        let events: Events = events.into_iter().collect();
        WatchFrame {
            head: pb::WatchResponse {
                header: Some(pb::ResponseHeader {
                    cluster_id: 1,
                    member_id: 2,
                    revision: 9,
                    raft_term: 3,
                    hark_auth_revision: 0,
                }),
                watch_id: 3,
                ..Default::default()
            },
            events,
            prev_kv: false,
        }
    }

    #[test]
    fn a_frame_decodes_as_the_watch_response_it_stands_for() {
        let f = frame(vec![
            event(EventKind::Put, "a", 10, 3),
            event(EventKind::Delete, "b", 0, 4),
            event(EventKind::Put, "c", 300, 5),
        ]);
        assert_eq!(decoded(&f), expected(&f));
        let mut canceled = frame(Vec::new());
        canceled.head.canceled = true;
        canceled.head.compact_revision = 8;
        assert_eq!(decoded(&canceled), expected(&canceled));
    }

    #[test]
    fn fragments_keep_every_event_in_order_under_the_limit() {
        let f = frame(
            (0..10)
                .map(|i| event(EventKind::Put, "k", 100 + i, 3 + i as i64))
                .collect(),
        );
        let pieces = f.clone().fragment(350);
        assert!(pieces.len() > 1);
        let (last, rest) = pieces.split_last().unwrap();
        assert!(rest.iter().all(|p| p.head.fragment) && !last.head.fragment);
        for p in &pieces {
            assert!(
                p.encoded_len() < 350 || p.events.len() == 1,
                "{}",
                p.encoded_len()
            );
            assert_eq!(p.head.watch_id, 3);
        }
        let rejoined: Vec<_> = pieces.iter().flat_map(|p| decoded(p).events).collect();
        assert_eq!(rejoined, expected(&f).events);
    }

    #[test]
    fn small_or_single_event_responses_are_not_fragmented() {
        let one = frame(vec![event(EventKind::Put, "k", 10_000, 3)]);
        assert_eq!(one.clone().fragment(100).len(), 1);
        let small = frame(vec![
            event(EventKind::Put, "k", 1, 3),
            event(EventKind::Put, "k", 1, 4),
        ]);
        let pieces = small.clone().fragment(1000);
        assert_eq!(pieces.len(), 1);
        assert_eq!(decoded(&pieces[0]), expected(&small));
    }
}
