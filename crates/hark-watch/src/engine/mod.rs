//! The engine: one thread owns every watcher. It takes committed revisions from
//! the store (the writer only enqueues them, so it never waits for watchers),
//! delivers them to synced watchers, catches unsynced ones up from an in-memory
//! window of recent revisions (or the store's history when older), and retries
//! victims when their stream's consumer makes room.
//!
//! Rooms: `commands.rs` (what streams ask), `dispatch.rs` (each new
//! revision to synced watchers, the window), `catch_up.rs` (unsynced
//! watchers, from the window or history), `victims.rs` (full streams).
//! This file holds the state, the loop and the moves between the groups.

mod catch_up;
mod commands;
mod dispatch;
mod victims;

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use crossbeam_channel::{Receiver, select};
use hark_mvcc::{EventKind, Feed, PrevKvInterest, Store};

use crate::command::{Command, StreamId};
use crate::config::WatchConfig;
use crate::event::WatchEvent;
use crate::ids::IdMap;
use crate::index::{FRAGMENT, KeyIndex, NIL, NO_DELETE, NO_PUT, PREV_KV, Slab, Slot, State};
use crate::outbox::{EventCounts, Outbox};
use crate::response::{Events, ResponseKind, WatchResponse};
use catch_up::Backoff;
use dispatch::RevisionEvents;

struct StreamState {
    outbox: Arc<Outbox>,
    label: Arc<str>,
    /// The stream's watch ids → their watchers (`NIL` after a compaction
    /// cancel, until the client cancels the id). The handle keeps its own
    /// set of ids in use, for allocation; commands keep the two in step.
    ids: IdMap,
    /// Victims with the batch each could not deliver, in the order they failed.
    victims: VecDeque<(Slot, WatchResponse)>,
}

impl StreamState {
    fn slots(&self) -> Vec<Slot> {
        self.ids.slots().filter(|&s| s != NIL).collect()
    }
}

pub(crate) struct Engine {
    store: Store,
    config: WatchConfig,
    /// Committed revisions, within a byte budget: past it the store leaves
    /// revisions out and the engine reads them from history instead.
    feed: Feed,
    commands: Receiver<Command>,
    /// Newest revision delivered to synced watchers.
    rev: i64,
    /// The hub's event counts (the outboxes keep them).
    counts: Arc<EventCounts>,
    /// Recent revisions, contiguous, ending at `rev`.
    window: VecDeque<Arc<RevisionEvents>>,
    /// What the window's events held as they entered it...
    window_bytes: usize,
    /// ...and what they gained since (see `window_share.rs`).
    window_gained: Arc<AtomicUsize>,
    watchers: Slab,
    streams: HashMap<StreamId, StreamState>,
    synced: KeyIndex,
    unsynced: HashSet<Slot>,
    victims: usize,
    last_tick: Instant,
    hub_dropped: bool,
    /// Set after a failed history read: watchers that need the store's history
    /// wait until then; every other watcher goes on.
    history_retry: Option<Backoff>,
    /// Watchers with `prev_kv`; while any, the store publishes previous values.
    prev_kv_watchers: usize,
    prev_kv_interest: Option<PrevKvInterest>,
}

impl Engine {
    pub(crate) fn new(
        store: Store,
        config: WatchConfig,
        start_rev: i64,
        feed: Feed,
        commands: Receiver<Command>,
        counts: Arc<EventCounts>,
    ) -> Self {
        Engine {
            counts,
            store,
            config,
            feed,
            commands,
            rev: start_rev,
            window: VecDeque::new(),
            window_bytes: 0,
            window_gained: Arc::default(),
            watchers: Slab::default(),
            streams: HashMap::new(),
            synced: KeyIndex::default(),
            unsynced: HashSet::new(),
            victims: 0,
            last_tick: Instant::now(),
            hub_dropped: false,
            history_retry: None,
            prev_kv_watchers: 0,
            prev_kv_interest: None,
        }
    }

    pub(crate) fn run(mut self) {
        loop {
            self.drain_feed();
            let mut handled = false;
            while let Ok(cmd) = self.commands.try_recv() {
                // Be current before answering, so "from now" means now.
                self.drain_feed();
                self.handle(cmd);
                handled = true;
            }
            let caught_up_some = !self.unsynced.is_empty() && self.catch_up_step();
            self.maybe_tick();
            self.report();
            if self.hub_dropped && self.streams.is_empty() {
                return;
            }
            if handled || caught_up_some {
                continue;
            }
            // Idle, or only watchers waiting out a history retry: sleep until
            // there is work, the retry is due or the tick. A retry nobody
            // waits for any more is dropped (else a past `until` would spin).
            if self.history_retry.is_some() && !self.needs_history() {
                self.history_retry = None;
            }
            let wait = self.history_retry.map_or(self.config.tick, |b| {
                b.until
                    .saturating_duration_since(Instant::now())
                    .min(self.config.tick)
            });
            select! {
                recv(self.feed) -> c => match c {
                    Ok(c) => self.dispatch(&c),
                    Err(_) => return,
                },
                recv(self.commands) -> cmd => match cmd {
                    Ok(cmd) => self.handle(cmd),
                    Err(_) => return,
                },
                default(wait) => {}
            }
        }
    }

    /// Takes every queued revision; if the store left some out (the feed's
    /// budget was spent), jumps to its current revision and lets every synced
    /// watcher catch up from history, as after a snapshot install.
    fn drain_feed(&mut self) {
        while let Ok(c) = self.feed.try_recv() {
            self.dispatch(&c);
        }
        if self.feed.take_lag() {
            metrics::counter!("hark_watch_feed_lagged_total").increment(1);
            let current = self.store.current_revision();
            if current > self.rev {
                self.resync(current);
            }
        }
    }

    fn report(&self) {
        metrics::gauge!("hark_watch_feed_queued_bytes").set(self.feed.queued_bytes() as f64);
        metrics::gauge!("hark_watch_window_bytes").set(self.window_held() as f64);
        metrics::gauge!("hark_watch_window_revisions").set(self.window.len() as f64);
        metrics::gauge!("etcd_debugging_mvcc_watch_stream_total").set(self.streams.len() as f64);
        metrics::gauge!("etcd_debugging_mvcc_watcher_total").set(self.watchers.len as f64);
        metrics::gauge!("etcd_debugging_mvcc_slow_watcher_total")
            .set((self.unsynced.len() + self.victims) as f64);
        metrics::gauge!("etcd_debugging_mvcc_pending_events_total")
            .set(self.counts.pending.load(Ordering::Relaxed) as f64);
        metrics::counter!("etcd_debugging_mvcc_events_total")
            .absolute(self.counts.sent.load(Ordering::Relaxed));
    }

    /// Every stream's watchers and queue, deepest queue first.
    fn stream_loads(&self) -> Vec<crate::StreamLoad> {
        let mut loads: Vec<_> = self
            .streams
            .iter()
            .map(|(&stream, st)| {
                let slots = st.slots();
                let queue = st.outbox.queued();
                crate::StreamLoad {
                    stream,
                    label: st.label.clone(),
                    watchers: slots.len(),
                    unsynced: slots.iter().filter(|s| self.unsynced.contains(s)).count(),
                    victims: st.victims.len(),
                    queued_responses: queue.responses,
                    queued_events: queue.events,
                    queued_bytes: queue.bytes,
                }
            })
            .collect();
        loads.sort_by_key(|l| {
            (
                std::cmp::Reverse(l.queued_events + l.victims),
                std::cmp::Reverse(l.queued_bytes),
                l.stream,
            )
        });
        loads
    }

    /// Filters `events` for the watcher; `None` if nothing is left to send.
    fn response_for(&self, slot: Slot, mut events: Events, header: i64) -> Option<WatchResponse> {
        let w = self.watchers.get(slot);
        events.retain(|e| match e.kind {
            EventKind::Put => !w.has(NO_PUT),
            EventKind::Delete => !w.has(NO_DELETE),
        });
        if events.is_empty() {
            return None;
        }
        let prev_kv = w.has(PREV_KV);
        if prev_kv {
            for e in &events {
                e.load_prev_kv(&self.store);
            }
            // etcd reads the previous value as it sends: once the revision
            // before an event is compacted, the event goes without it, even
            // when it was known earlier (published with the event, or read
            // for another watcher). The apiserver relies on this: a watch it
            // resumes across a compaction fails instead of going on.
            let compacted = self.store.compacted_revision();
            let stale = |e: &Arc<WatchEvent>| e.revision() - 1 < compacted && e.prev_kv().is_some();
            if events.iter().any(stale) {
                events = events
                    .iter()
                    .map(|e| {
                        if stale(e) {
                            Arc::new(WatchEvent::with_prev_kv(e.kind, e.kv.clone(), None))
                        } else {
                            Arc::clone(e)
                        }
                    })
                    .collect();
            }
        }
        Some(WatchResponse {
            watch_id: w.id,
            header_revision: header,
            kind: ResponseKind::Events {
                events,
                prev_kv,
                fragment: w.has(FRAGMENT),
            },
        })
    }

    /// Puts a watcher that owes nothing where it belongs: synced if it has seen
    /// everything up to `rev`, else unsynced.
    fn settle(&mut self, slot: Slot) {
        if self.watchers.get(slot).min_rev > self.rev {
            self.watchers.get_mut(slot).state = State::Synced;
            self.synced.insert(slot, &mut self.watchers);
        } else {
            self.watchers.get_mut(slot).state = State::Unsynced;
            self.unsynced.insert(slot);
        }
    }

    /// Forgets a watcher (its id mapping is the caller's business).
    fn remove_watcher(&mut self, slot: Slot) {
        let w = self.watchers.get(slot);
        let stream = w.stream;
        if w.has(PREV_KV) {
            self.prev_kv_watchers -= 1;
            if self.prev_kv_watchers == 0 {
                self.prev_kv_interest = None;
            }
        }
        match w.state {
            State::Synced => self.synced.remove(slot, &mut self.watchers),
            State::Unsynced => {
                self.unsynced.remove(&slot);
            }
            State::Victim => {
                self.victims -= 1;
                if let Some(st) = self.streams.get_mut(&stream) {
                    st.victims.retain(|(s, _)| *s != slot);
                }
            }
        }
        self.watchers.remove(slot);
    }
}
