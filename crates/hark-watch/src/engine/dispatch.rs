//! Each newly committed revision: into the memory window, and to every
//! synced watcher it concerns; a gap (a lagging feed, a snapshot install)
//! sends every synced watcher to catch up instead.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use hark_mvcc::CommittedRevision;

use super::Engine;
use crate::command::StreamId;
use crate::event::WatchEvent;
use crate::index::{SENT_SINCE_TICK, Slot, State};
use crate::response::WatchResponse;
use crate::window_share::WindowShare;

/// The changes of one revision, shared by the window and every receiver.
pub(super) struct RevisionEvents {
    pub(super) revision: i64,
    pub(super) events: Vec<Arc<WatchEvent>>,
    /// What its events held when they were made; in the window, what they
    /// gain there is counted by `share`.
    pub(super) bytes: usize,
    pub(super) share: Option<Arc<WindowShare>>,
}

impl RevisionEvents {
    /// A revision entering the window: `gained` is the window's total of
    /// what its revisions' events gained there.
    pub(super) fn entering_window(c: &CommittedRevision, gained: &Arc<AtomicUsize>) -> Self {
        Self::new(c, Some(Arc::new(WindowShare::entering(gained.clone()))))
    }

    /// A revision read from the store's history (never in the window).
    pub(super) fn from_history(c: &CommittedRevision) -> Self {
        Self::new(c, None)
    }

    fn new(c: &CommittedRevision, share: Option<Arc<WindowShare>>) -> Self {
        let events: Vec<Arc<WatchEvent>> = c
            .events
            .iter()
            .map(|e| {
                let event = WatchEvent::from_store(e, c.with_prev_kvs);
                Arc::new(match &share {
                    Some(share) => event.in_window(share.clone()),
                    None => event,
                })
            })
            .collect();
        let bytes = events.iter().map(|e| e.held_bytes()).sum();
        RevisionEvents {
            revision: c.revision,
            events,
            bytes,
            share,
        }
    }

    fn left_window(&self) {
        if let Some(share) = &self.share {
            share.left();
        }
    }
}

impl Engine {
    /// Bytes the window holds: its events as they entered, and what they
    /// gained since.
    pub(super) fn window_held(&self) -> usize {
        self.window_bytes + self.window_gained.load(Ordering::Relaxed)
    }

    /// A newly committed revision: remember it, deliver it to synced watchers.
    pub(super) fn dispatch(&mut self, c: &CommittedRevision) {
        if c.revision <= self.rev {
            return; // published before a lag resync that covered it
        }
        // Revisions were left out (a lagging feed), or a snapshot was
        // installed: published as one empty revision, which no write
        // produces, even when it is only one revision ahead.
        if c.revision > self.rev + 1 || c.events.is_empty() {
            return self.resync(c.revision);
        }
        let revision = Arc::new(RevisionEvents::entering_window(c, &self.window_gained));
        self.rev = c.revision;

        // (watcher, event index) for every match; sorted, each watcher's events
        // are adjacent and in order.
        let mut matches: Vec<(Slot, usize)> = Vec::new();
        for (i, ev) in revision.events.iter().enumerate() {
            self.synced
                .matching(&ev.kv.key, &self.watchers, |slot| matches.push((slot, i)));
        }
        if revision.events.len() > 1 {
            matches.sort_unstable();
        }
        // Responses grouped by stream, so each outbox is locked and woken once.
        let mut per_stream: HashMap<StreamId, Vec<(Slot, WatchResponse)>> = HashMap::new();
        let dropped = hark_mvcc::chaos::mutation("watch-drop-event")
            && self.rev % 300 == i64::from(std::process::id() % 300);
        for group in matches.chunk_by(|a, b| a.0 == b.0) {
            let slot = group[0].0;
            let w = self.watchers.get(slot);
            if w.min_rev > self.rev {
                continue; // a future start revision not reached yet
            }
            if dropped {
                continue; // the mutation run's lost event
            }
            let events = group
                .iter()
                .map(|&(_, i)| revision.events[i].clone())
                .collect();
            if let Some(resp) = self.response_for(slot, events, self.rev) {
                per_stream.entry(w.stream).or_default().push((slot, resp));
            }
        }
        for (stream, batch) in per_stream {
            let outbox = self.streams[&stream].outbox.clone();
            let refused = outbox.push_events_batch(batch, |slot| {
                self.watchers.get_mut(slot).flags |= SENT_SINCE_TICK
            });
            for (slot, resp) in refused {
                self.synced.remove(slot, &mut self.watchers);
                self.make_victim(slot, resp, self.rev + 1);
            }
        }

        self.window_bytes += revision.bytes;
        self.window.push_back(revision);
        while self.window.len() > self.config.window_revisions
            || (self.window_held() > self.config.window_bytes && self.window.len() > 1)
        {
            let old = self.window.pop_front().expect("non-empty");
            self.window_bytes -= old.bytes;
            old.left_window();
        }
    }

    /// The store jumped to `revision` past revisions it never published (a
    /// replicated member installed a snapshot): every synced watcher catches
    /// up from the store's new history instead, or is cancelled as compacted
    /// if it needs revisions the snapshot no longer holds.
    pub(super) fn resync(&mut self, revision: i64) {
        let seen = self.rev;
        for slot in self.watchers.live_slots() {
            if self.watchers.get(slot).state == State::Synced {
                self.synced.remove(slot, &mut self.watchers);
                let w = self.watchers.get_mut(slot);
                w.min_rev = w.min_rev.max(seen + 1);
                w.state = State::Unsynced;
                self.unsynced.insert(slot);
            }
        }
        // The window's revisions end before the jump; history covers the rest.
        for old in self.window.drain(..) {
            old.left_window();
        }
        self.window_bytes = 0;
        self.rev = revision;
    }
}
