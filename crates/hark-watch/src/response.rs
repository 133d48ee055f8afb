//! What a watch stream delivers, in order, on its one response channel.

use std::ops::{Deref, Range};
use std::sync::Arc;

use smallvec::SmallVec;

use crate::event::WatchEvent;

/// A watcher's id within its stream (etcd's `watch_id`).
pub type WatchId = i64;

/// A response's events, in order.
///
/// Either a list of its own, inline up to one event (a live revision usually
/// brings each watcher one event, and a heap list per watcher per revision,
/// freed on another thread, was a sixth of the server's CPU in the fanout
/// loadtest), or a run of a list that many responses share (watchers catching
/// up together over the same revisions, without an `Arc` clone per event per
/// watcher).
#[derive(Debug, Clone)]
pub enum Events {
    /// A list of its own.
    Own(SmallVec<[Arc<WatchEvent>; 1]>),
    /// `all[range]`, shared with other responses.
    Shared {
        /// The shared list.
        all: Arc<[Arc<WatchEvent>]>,
        /// This response's part of it.
        range: Range<usize>,
    },
}

impl Events {
    /// No events.
    pub fn new() -> Events {
        Events::Own(SmallVec::new())
    }

    /// The list as one of its own, to change it.
    fn own(&mut self) -> &mut SmallVec<[Arc<WatchEvent>; 1]> {
        if let Events::Shared { all, range } = self {
            let own = all[range.clone()].iter().cloned().collect();
            *self = Events::Own(own);
        }
        match self {
            Events::Own(list) => list,
            Events::Shared { .. } => unreachable!("made its own above"),
        }
    }

    /// Appends an event (a shared run is copied into a list of its own first).
    pub fn push(&mut self, event: Arc<WatchEvent>) {
        self.own().push(event);
    }

    /// Keeps the events `keep` accepts; a shared run stays shared when all are kept.
    pub fn retain(&mut self, mut keep: impl FnMut(&Arc<WatchEvent>) -> bool) {
        if self.iter().all(&mut keep) {
            return;
        }
        self.own().retain(|e| keep(e));
    }
}

impl Default for Events {
    fn default() -> Self {
        Events::new()
    }
}

impl Deref for Events {
    type Target = [Arc<WatchEvent>];

    fn deref(&self) -> &[Arc<WatchEvent>] {
        match self {
            Events::Own(list) => list,
            Events::Shared { all, range } => &all[range.clone()],
        }
    }
}

impl<'a> IntoIterator for &'a Events {
    type Item = &'a Arc<WatchEvent>;
    type IntoIter = std::slice::Iter<'a, Arc<WatchEvent>>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl FromIterator<Arc<WatchEvent>> for Events {
    fn from_iter<I: IntoIterator<Item = Arc<WatchEvent>>>(iter: I) -> Events {
        Events::Own(iter.into_iter().collect())
    }
}

/// etcd's `watch_id` on replies that belong to no single watcher.
pub const NO_WATCH_ID: WatchId = -1;

/// One reply on a stream: to a request (created, canceled, progress) or
/// events for one watcher.
#[derive(Debug, Clone)]
pub struct WatchResponse {
    /// The watcher it is for ([`NO_WATCH_ID`] for a stream-wide reply).
    pub watch_id: WatchId,
    /// etcd's `header.revision` for this kind of reply (see [`ResponseKind`]).
    pub header_revision: i64,
    /// What it says.
    pub kind: ResponseKind,
}

/// What a [`WatchResponse`] says.
#[derive(Debug, Clone)]
pub enum ResponseKind {
    /// The watch exists; header = the engine's revision at creation.
    Created,
    /// The create failed (`created` and `canceled`, watch id -1); the stream stays.
    CreateRejected {
        /// etcd's `cancel_reason`.
        reason: String,
    },
    /// Events in revision order, never splitting a revision. Header: the event
    /// revision when live, the engine's revision on catch-up.
    Events {
        /// The events, each shared with every other watcher that gets it.
        events: Events,
        /// The watcher asked for `prev_kv` (already loaded into each event).
        prev_kv: bool,
        /// The watcher allows a response too large for one message to be
        /// split (etcd's `fragment`).
        fragment: bool,
    },
    /// No events; every earlier event of this stream (or watcher) has been sent.
    Progress,
    /// Canceled on request.
    Canceled,
    /// Canceled because the watcher needs compacted history (header 0, as etcd).
    Compacted {
        /// The store's compact revision: watch again from it or later.
        compact_revision: i64,
    },
}

impl WatchResponse {
    /// Its events (none unless it is [`ResponseKind::Events`]).
    pub fn events(&self) -> &[Arc<WatchEvent>] {
        match &self.kind {
            ResponseKind::Events { events, .. } => events,
            _ => &[],
        }
    }
}

#[cfg(test)]
mod tests {
    use hark_mvcc::{EventKind, KeyValue};

    use super::*;

    fn event(kind: EventKind, rev: i64) -> Arc<WatchEvent> {
        Arc::new(WatchEvent::new(
            kind,
            KeyValue {
                key: format!("k{rev}").into(),
                mod_revision: rev,
                ..Default::default()
            },
        ))
    }

    fn revisions(events: &Events) -> Vec<i64> {
        events.iter().map(|e| e.revision()).collect()
    }

    #[test]
    fn a_shared_run_reads_its_range_and_is_copied_only_when_changed() {
        let all: Arc<[Arc<WatchEvent>]> = (1..=6)
            .map(|r| {
                let kind = if r % 2 == 0 {
                    EventKind::Delete
                } else {
                    EventKind::Put
                };
                event(kind, r)
            })
            .collect();
        let mut run = Events::Shared {
            all: all.clone(),
            range: 1..5,
        };
        assert_eq!(revisions(&run), [2, 3, 4, 5]);
        run.retain(|_| true);
        assert!(
            matches!(run, Events::Shared { .. }),
            "nothing removed: still shared"
        );
        run.retain(|e| e.kind == EventKind::Put);
        assert!(matches!(run, Events::Own(_)));
        assert_eq!(revisions(&run), [3, 5]);
        let mut pushed = Events::Shared { all, range: 0..1 };
        pushed.push(event(EventKind::Put, 9));
        assert_eq!(revisions(&pushed), [1, 9]);
    }
}
