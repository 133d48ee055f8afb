//! Events as the engine shares them: allocated once per change, referenced by
//! every watcher that receives it, encoded at most once per form.

use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use hark_mvcc::{EventKind, KeyValue, RangeRequest, Store};
use prost::Message;

use crate::window_share::WindowShare;

/// One change of one key, shared (`Arc`) by every receiver.
#[derive(Debug)]
pub struct WatchEvent {
    /// A put or a delete.
    pub kind: EventKind,
    /// For a delete: only `key` and `mod_revision` (etcd's form).
    pub kv: KeyValue,
    prev_kv: OnceLock<Option<KeyValue>>,
    encoded: OnceLock<Bytes>,
    encoded_with_prev: OnceLock<Bytes>,
    /// Its revision's share of the engine's window, for an event published
    /// into it: what the event gains later (encoded forms, a previous value
    /// read on demand) counts against the window's budget.
    window: Option<Arc<WindowShare>>,
}

/// `mvccpb.Event`'s wire layout.
#[derive(Clone, PartialEq, prost::Message)]
struct WireEvent {
    #[prost(int32, tag = "1")]
    kind: i32,
    #[prost(message, optional, tag = "2")]
    kv: Option<KeyValue>,
    #[prost(message, optional, tag = "3")]
    prev_kv: Option<KeyValue>,
}

impl WatchEvent {
    /// An event whose previous value, if wanted, is read on demand (the
    /// engine's crate-internal `load_prev_kv`, for `prev_kv` watchers).
    pub fn new(kind: EventKind, kv: KeyValue) -> Self {
        WatchEvent {
            kind,
            kv,
            prev_kv: OnceLock::new(),
            encoded: OnceLock::new(),
            encoded_with_prev: OnceLock::new(),
            window: None,
        }
    }

    /// The event, counted in the window by `share`.
    pub(crate) fn in_window(mut self, share: Arc<WindowShare>) -> Self {
        self.window = Some(share);
        self
    }

    fn grew(&self, bytes: usize) {
        if let Some(share) = &self.window {
            share.grew(bytes);
        }
    }

    /// An event whose previous value is already known (published with it).
    pub fn with_prev_kv(kind: EventKind, kv: KeyValue, prev_kv: Option<KeyValue>) -> Self {
        let event = WatchEvent::new(kind, kv);
        let _ = event.prev_kv.set(prev_kv);
        event
    }

    /// From a store event: its previous value travels with it when the
    /// revision carries previous values.
    pub(crate) fn from_store(e: &hark_mvcc::Event, with_prev_kvs: bool) -> Self {
        if with_prev_kvs {
            WatchEvent::with_prev_kv(e.kind, e.kv.clone(), e.prev_kv.clone())
        } else {
            WatchEvent::new(e.kind, e.kv.clone())
        }
    }

    /// The revision of the change.
    pub fn revision(&self) -> i64 {
        self.kv.mod_revision
    }

    /// The key's value before this change, once it is known (published with
    /// the event, or read by the engine for a `prev_kv` watcher); `None` for a
    /// creation, when that revision is compacted, or when nobody asked for it.
    pub fn prev_kv(&self) -> Option<&KeyValue> {
        self.prev_kv.get().and_then(Option::as_ref)
    }

    /// Reads the value at `mod_revision - 1` unless it came with the event
    /// (etcd's rule: never for a put that created the key; silently absent
    /// when compacted). Only events published before a `prev_kv` watcher
    /// existed, and history read for catch-up, need the read.
    pub(crate) fn load_prev_kv(&self, store: &Store) {
        self.prev_kv.get_or_init(|| {
            if self.kind == EventKind::Put && self.kv.create_revision == self.kv.mod_revision {
                return None;
            }
            let mut req = RangeRequest::key(self.kv.key.clone());
            req.revision = self.kv.mod_revision - 1;
            let prev = store.range(&req).ok().and_then(|mut r| r.kvs.pop());
            if let Some(p) = &prev {
                self.grew(p.key.len() + p.value.len());
            }
            prev
        });
    }

    /// The `mvccpb.Event` encoding, computed once per form and shared.
    pub fn encoded(&self, with_prev_kv: bool) -> &Bytes {
        let cell = if with_prev_kv {
            &self.encoded_with_prev
        } else {
            &self.encoded
        };
        cell.get_or_init(|| {
            let wire = WireEvent {
                kind: match self.kind {
                    EventKind::Put => 0,
                    EventKind::Delete => 1,
                },
                kv: Some(self.kv.clone()),
                prev_kv: if with_prev_kv {
                    self.prev_kv().cloned()
                } else {
                    None
                },
            };
            let encoded = Bytes::from(wire.encode_to_vec());
            self.grew(encoded.len());
            encoded
        })
    }

    /// Bytes this event adds to a response (an estimate, used to cut batches).
    pub(crate) fn approx_size(&self) -> usize {
        self.kv.key.len() + self.kv.value.len() + 48
    }

    /// Bytes it holds, with a previous value it carries (for the window).
    pub(crate) fn held_bytes(&self) -> usize {
        self.approx_size() + self.prev_kv().map_or(0, |p| p.key.len() + p.value.len())
    }
}
