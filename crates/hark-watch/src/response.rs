//! What a watch stream delivers, in order, on its one response channel.

use std::sync::Arc;

use crate::event::WatchEvent;

pub type WatchId = i64;

/// A response's events. Inline up to one: a live revision usually brings each
/// watcher one event, and a heap list per watcher per revision was, with its
/// free on another thread, a sixth of the server's CPU in the fanout loadtest.
pub type Events = smallvec::SmallVec<[Arc<WatchEvent>; 1]>;

/// etcd's `watch_id` on replies that belong to no single watcher.
pub const NO_WATCH_ID: WatchId = -1;

#[derive(Debug, Clone)]
pub struct WatchResponse {
    pub watch_id: WatchId,
    /// etcd's `header.revision` for this kind of reply (see [`ResponseKind`]).
    pub header_revision: i64,
    pub kind: ResponseKind,
}

#[derive(Debug, Clone)]
pub enum ResponseKind {
    /// The watch exists; header = the engine's revision at creation.
    Created,
    /// The create failed (`created` and `canceled`, watch id -1); the stream stays.
    CreateRejected { reason: String },
    /// Events in revision order, never splitting a revision. Header: the event
    /// revision when live, the engine's revision on catch-up.
    Events {
        events: Events,
        /// The watcher asked for `prev_kv` (already loaded into each event).
        prev_kv: bool,
    },
    /// No events; every earlier event of this stream (or watcher) has been sent.
    Progress,
    /// Canceled on request.
    Canceled,
    /// Canceled because the watcher needs compacted history (header 0, as etcd).
    Compacted { compact_revision: i64 },
}

impl WatchResponse {
    pub fn events(&self) -> &[Arc<WatchEvent>] {
        match &self.kind {
            ResponseKind::Events { events, .. } => events,
            _ => &[],
        }
    }
}
