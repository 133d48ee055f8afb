//! The engine: one thread owns every watcher. It takes committed revisions from
//! the store (the writer only enqueues them, so it never waits for watchers),
//! delivers them to synced watchers, catches unsynced ones up from an in-memory
//! window of recent revisions (or the store's history when older), and retries
//! victims when their stream's consumer makes room.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, select};
use hark_mvcc::{CommittedRevision, EventKind, Feed, PrevKvInterest, Store};
use parking_lot::Mutex;
use rustc_hash::FxHashMap;

use crate::config::WatchConfig;
use crate::event::WatchEvent;
use crate::index::{
    KeyIndex, Keys, NIL, NO_DELETE, NO_PUT, PREV_KV, PROGRESS_NOTIFY, SENT_SINCE_TICK, Slab, Slot,
    State, Watcher,
};
use crate::outbox::{EventCounts, Outbox};
use crate::response::{Events, NO_WATCH_ID, ResponseKind, WatchId, WatchResponse};
use crate::stream::{StreamIds, WatchRequest};

pub(crate) type StreamId = u32;

pub(crate) enum Command {
    OpenStream {
        stream: StreamId,
        outbox: Arc<Outbox>,
        ids: Arc<Mutex<StreamIds>>,
    },
    CloseStream {
        stream: StreamId,
    },
    /// `now`: the store's revision when `watch` was called; a watch from the
    /// current revision starts right after it (as etcd registers synchronously).
    Create {
        stream: StreamId,
        id: WatchId,
        req: WatchRequest,
        now: i64,
    },
    Reject {
        stream: StreamId,
        reason: String,
    },
    Cancel {
        stream: StreamId,
        id: WatchId,
    },
    /// `None`: every watcher of the stream (etcd's `RequestProgressAll`).
    Progress {
        stream: StreamId,
        id: Option<WatchId>,
    },
    /// The stream's consumer took a batch after a push was refused.
    Drained {
        stream: StreamId,
    },
    /// No hub handle is left: stop once the last stream closes.
    HubDropped,
    /// Stop until the sender is dropped (see [`crate::WatchHub::pause`]).
    Pause(Receiver<()>),
}

struct StreamState {
    outbox: Arc<Outbox>,
    /// Shared with the stream handle: id → slot (`NIL` while only reserved, or
    /// after a compaction cancel until the client cancels the id).
    ids: Arc<Mutex<StreamIds>>,
    /// Victims with the batch each could not deliver, in the order they failed.
    victims: VecDeque<(Slot, WatchResponse)>,
}

impl StreamState {
    fn slots(&self) -> Vec<Slot> {
        self.ids
            .lock()
            .slots
            .values()
            .copied()
            .filter(|&s| s != NIL)
            .collect()
    }
}

/// The changes of one revision, shared by the window and every receiver.
struct RevisionEvents {
    revision: i64,
    events: Vec<Arc<WatchEvent>>,
    bytes: usize,
}

impl RevisionEvents {
    fn new(c: &CommittedRevision) -> Self {
        let events: Vec<Arc<WatchEvent>> = c
            .events
            .iter()
            .map(|e| Arc::new(WatchEvent::from_store(e, c.with_prev_kvs)))
            .collect();
        let bytes = events.iter().map(|e| e.held_bytes()).sum();
        RevisionEvents {
            revision: c.revision,
            events,
            bytes,
        }
    }
}

/// Events that catching-up watchers' responses share, with each event's
/// revision and size beside it so that cutting every watcher's batches reads
/// two compact arrays rather than each event again.
struct SharedEvents {
    events: Arc<[Arc<WatchEvent>]>,
    revisions: Vec<i64>,
    sizes: Vec<u32>,
}

impl SharedEvents {
    fn new(events: impl Iterator<Item = Arc<WatchEvent>>) -> Self {
        let events: Arc<[Arc<WatchEvent>]> = events.collect();
        SharedEvents {
            revisions: events.iter().map(|e| e.revision()).collect(),
            sizes: events.iter().map(|e| e.approx_size() as u32).collect(),
            events,
        }
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
    window_bytes: usize,
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

/// When a failed history read is tried again, and the delay that led there.
#[derive(Clone, Copy)]
struct Backoff {
    until: Instant,
    delay: Duration,
}

impl Backoff {
    const FIRST: Duration = Duration::from_millis(10);
    const LONGEST: Duration = Duration::from_secs(2);

    fn after(previous: Option<Backoff>) -> Backoff {
        let delay = previous.map_or(Self::FIRST, |b| (b.delay * 2).min(Self::LONGEST));
        Backoff {
            until: Instant::now() + delay,
            delay,
        }
    }
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
            // there is work, the retry is due or the tick.
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
        metrics::gauge!("etcd_debugging_mvcc_watch_stream_total").set(self.streams.len() as f64);
        metrics::gauge!("etcd_debugging_mvcc_watcher_total").set(self.watchers.len as f64);
        metrics::gauge!("etcd_debugging_mvcc_slow_watcher_total")
            .set((self.unsynced.len() + self.victims) as f64);
        metrics::gauge!("etcd_debugging_mvcc_pending_events_total")
            .set(self.counts.pending.load(Ordering::Relaxed) as f64);
        metrics::counter!("etcd_debugging_mvcc_events_total")
            .absolute(self.counts.sent.load(Ordering::Relaxed));
    }

    /// A newly committed revision: remember it, deliver it to synced watchers.
    fn dispatch(&mut self, c: &CommittedRevision) {
        if c.revision <= self.rev {
            return; // published before a lag resync that covered it
        }
        if c.revision > self.rev + 1 {
            // Revisions were left out (a lagging feed, a snapshot install).
            return self.resync(c.revision);
        }
        let revision = Arc::new(RevisionEvents::new(c));
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
            || (self.window_bytes > self.config.window_bytes && self.window.len() > 1)
        {
            let old = self.window.pop_front().expect("non-empty");
            self.window_bytes -= old.bytes;
        }
    }

    /// The store jumped to `revision` past revisions it never published (a
    /// replicated member installed a snapshot): every synced watcher catches
    /// up from the store's new history instead, or is cancelled as compacted
    /// if it needs revisions the snapshot no longer holds.
    fn resync(&mut self, revision: i64) {
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
        self.window.clear();
        self.window_bytes = 0;
        self.rev = revision;
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
        }
        Some(WatchResponse {
            watch_id: w.id,
            header_revision: header,
            kind: ResponseKind::Events { events, prev_kv },
        })
    }

    fn make_victim(&mut self, slot: Slot, held: WatchResponse, next_rev: i64) {
        let w = self.watchers.get_mut(slot);
        w.min_rev = next_rev;
        w.state = State::Victim;
        let stream = w.stream;
        self.victims += 1;
        let st = self.streams.get_mut(&stream).expect("watcher's stream");
        st.victims.push_back((slot, held));
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

    fn handle(&mut self, cmd: Command) {
        // A request of a stream's handle: count it handled once done.
        let answered = match &cmd {
            Command::Create { stream, .. }
            | Command::Reject { stream, .. }
            | Command::Cancel { stream, .. }
            | Command::Progress { stream, .. } => {
                self.streams.get(stream).map(|st| st.outbox.clone())
            }
            _ => None,
        };
        self.handle_command(cmd);
        if let Some(outbox) = answered {
            outbox.request_handled();
        }
    }

    fn handle_command(&mut self, cmd: Command) {
        match cmd {
            Command::OpenStream {
                stream,
                outbox,
                ids,
            } => {
                self.streams.insert(
                    stream,
                    StreamState {
                        outbox,
                        ids,
                        victims: VecDeque::new(),
                    },
                );
            }
            Command::CloseStream { stream } => {
                let Some(st) = self.streams.get(&stream) else {
                    return;
                };
                for slot in st.slots() {
                    self.remove_watcher(slot);
                }
                let st = self.streams.remove(&stream).expect("checked above");
                st.outbox.close();
            }
            Command::Create {
                stream,
                id,
                req,
                now,
            } => self.create(stream, id, req, now),
            Command::Reject { stream, reason } => {
                if let Some(st) = self.streams.get(&stream) {
                    st.outbox.push_control(WatchResponse {
                        watch_id: NO_WATCH_ID,
                        header_revision: self.rev,
                        kind: ResponseKind::CreateRejected { reason },
                    });
                }
            }
            Command::Cancel { stream, id } => {
                let Some(st) = self.streams.get(&stream) else {
                    return;
                };
                let Some(slot) = st.ids.lock().slots.remove(&id) else {
                    return; // already canceled: no second reply
                };
                let outbox = st.outbox.clone();
                if slot != NIL {
                    self.remove_watcher(slot);
                }
                outbox.push_control(WatchResponse {
                    watch_id: id,
                    header_revision: self.rev,
                    kind: ResponseKind::Canceled,
                });
            }
            Command::Progress { stream, id } => self.progress(stream, id),
            Command::Drained { stream } => self.retry_victims(stream),
            Command::HubDropped => self.hub_dropped = true,
            Command::Pause(resume) => {
                let _ = resume.recv();
            }
        }
    }

    fn create(&mut self, stream: StreamId, id: WatchId, req: WatchRequest, now: i64) {
        let Some(st) = self.streams.get(&stream) else {
            return;
        };
        let outbox = st.outbox.clone();
        let ids = st.ids.clone();
        let start = req.start_revision;
        // From "now": the first revision after the call, even if this engine has
        // dispatched past it already (then it is caught up from memory).
        let min_rev = if start == 0 { now + 1 } else { start };
        let flags = [
            (req.no_put, NO_PUT),
            (req.no_delete, NO_DELETE),
            (req.prev_kv, PREV_KV),
            (req.progress_notify, PROGRESS_NOTIFY),
        ]
        .iter()
        .filter(|(on, _)| *on)
        .fold(0, |acc, (_, f)| acc | f);
        if req.prev_kv {
            self.prev_kv_watchers += 1;
            if self.prev_kv_interest.is_none() {
                self.prev_kv_interest = Some(self.store.want_prev_kvs());
            }
        }
        let keys = Keys::new(&req.key, &req.range_end);
        let slot = self
            .watchers
            .insert(Watcher::new(id, stream, keys, min_rev, start, flags));
        ids.lock().slots.insert(id, slot);
        // The created reply goes first: every event of this watcher is queued after it.
        outbox.push_control(WatchResponse {
            watch_id: id,
            header_revision: if start == 0 { now } else { self.rev.max(now) },
            kind: ResponseKind::Created,
        });
        self.settle(slot);
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

    /// Progress is owed only when every watcher concerned is synced and past its
    /// start revision; the reply is queued behind all events already queued.
    fn progress(&mut self, stream: StreamId, id: Option<WatchId>) {
        let Some(st) = self.streams.get(&stream) else {
            return;
        };
        let slots: Vec<Slot> = match id {
            Some(id) => st
                .ids
                .lock()
                .slots
                .get(&id)
                .copied()
                .filter(|&s| s != NIL)
                .into_iter()
                .collect(),
            None => st.slots(),
        };
        if slots.is_empty() {
            return;
        }
        let ready = slots.iter().all(|&s| {
            let w = self.watchers.get(s);
            w.state == State::Synced && self.rev >= w.start_rev
        });
        if ready {
            st.outbox.push_control(WatchResponse {
                watch_id: id.unwrap_or(NO_WATCH_ID),
                header_revision: self.rev,
                kind: ResponseKind::Progress,
            });
        }
    }

    fn retry_victims(&mut self, stream: StreamId) {
        loop {
            let Some(st) = self.streams.get_mut(&stream) else {
                return;
            };
            let Some((slot, held)) = st.victims.pop_front() else {
                return;
            };
            if let Err(held) = st.outbox.push_events(held) {
                st.victims.push_front((slot, held));
                return;
            }
            self.victims -= 1;
            // Delivered: it owes only what came after the held batch.
            self.settle(slot);
        }
    }

    /// Periodic `progress_notify`: to watchers that asked for it and were sent no
    /// events since the last tick.
    fn maybe_tick(&mut self) {
        let Some(interval) = self.config.progress_notify_interval else {
            return;
        };
        if self.last_tick.elapsed() < interval {
            return;
        }
        self.last_tick = Instant::now();
        let mut due = Vec::new();
        for w in self.watchers.iter_mut() {
            if w.has(PROGRESS_NOTIFY) && !w.has(SENT_SINCE_TICK) {
                due.push((w.stream, w.id));
            }
            w.flags &= !SENT_SINCE_TICK;
        }
        for (stream, id) in due {
            self.progress(stream, Some(id));
        }
    }

    /// One bounded step of catch-up for unsynced watchers: cancel those that need
    /// compacted history, then deliver one chunk of revisions to the rest.
    /// Returns whether there was work it could do: after a failed history read,
    /// watchers that need history wait for the retry while the rest go on.
    fn catch_up_step(&mut self) -> bool {
        let compacted = self.store.compacted_revision();
        let slots: Vec<Slot> = self.unsynced.iter().copied().collect();
        let mut worked = false;
        for slot in slots {
            let w = self.watchers.get(slot);
            if w.min_rev < compacted {
                let (stream, id) = (w.stream, w.id);
                let st = &self.streams[&stream];
                st.outbox.push_control(WatchResponse {
                    watch_id: id,
                    header_revision: 0,
                    kind: ResponseKind::Compacted {
                        compact_revision: compacted,
                    },
                });
                // The id stays in use (mapped to nothing) until the client cancels it.
                st.ids.lock().slots.insert(id, NIL);
                self.remove_watcher(slot);
                worked = true;
            } else if w.min_rev > self.rev {
                self.unsynced.remove(&slot);
                self.settle(slot);
                worked = true;
            }
        }
        let history_due = self.history_retry.is_none_or(|b| Instant::now() >= b.until);
        if history_due && self.catch_up_narrow() {
            return true;
        }
        let window_first = self.window_first();
        let Some(from) = self
            .unsynced
            .iter()
            .map(|&s| self.watchers.get(s).min_rev)
            .filter(|&rev| history_due || rev >= window_first)
            .min()
        else {
            return worked;
        };
        let (chunk, last) = match self.read_revisions(from) {
            Ok(read) => read,
            Err(hark_mvcc::Error::Compacted) => return true, // cancelled on the next step
            Err(e) => {
                self.history_failed(&e);
                return true;
            }
        };
        if from < window_first {
            self.history_retry = None;
        }

        // Index the unsynced watchers (their index links are free), scan the chunk once.
        let mut index: KeyIndex = KeyIndex::default();
        let slots: Vec<Slot> = self.unsynced.iter().copied().collect();
        for &slot in &slots {
            index.insert(slot, &mut self.watchers);
        }
        // The chunk's events in one list that every watcher's responses share;
        // each watcher gets the positions of its events in it.
        let all = SharedEvents::new(chunk.iter().flat_map(|r| r.events.iter().cloned()));
        // Fx, not SipHash: one lookup per event per matching watcher.
        let mut found: FxHashMap<Slot, Vec<u32>> = FxHashMap::default();
        for (i, ev) in all.events.iter().enumerate() {
            index.matching(&ev.kv.key, &self.watchers, |slot| {
                if self.watchers.get(slot).min_rev <= ev.revision() {
                    found.entry(slot).or_default().push(i as u32);
                }
            });
        }
        for slot in slots {
            let min_rev = self.watchers.get(slot).min_rev;
            // Past the chunk, or before it (waiting out a history retry).
            if min_rev > last || min_rev < from {
                continue;
            }
            let picked = found.remove(&slot).unwrap_or_default();
            self.deliver_catch_up(slot, &all, &picked, last);
        }
        true
    }

    /// The oldest revision the memory window holds (`rev + 1` when empty).
    fn window_first(&self) -> i64 {
        self.window.front().map_or(self.rev + 1, |r| r.revision)
    }

    /// A history read failed: the watchers that need history try again after a
    /// growing delay, without holding up the others.
    fn history_failed(&mut self, e: &hark_mvcc::Error) {
        let retry = Backoff::after(self.history_retry);
        tracing::error!(error = %e, retry_in = ?retry.delay, "watch catch-up cannot read history");
        self.history_retry = Some(retry);
    }

    /// Single-key watchers that need history older than the memory window read
    /// just their key's changes through the store's key index, so their cost
    /// follows what they watch rather than everything written meanwhile.
    /// Returns whether it did any work (at most `NARROW_PER_STEP` watchers).
    fn catch_up_narrow(&mut self) -> bool {
        const NARROW_PER_STEP: usize = 256;
        let window_first = self.window_first();
        let narrow: Vec<Slot> = self
            .unsynced
            .iter()
            .copied()
            .filter(|&s| {
                let w = self.watchers.get(s);
                w.min_rev < window_first && w.keys.single().is_some()
            })
            .take(NARROW_PER_STEP)
            .collect();
        let upto = window_first - 1;
        for &slot in &narrow {
            let w = self.watchers.get(slot);
            let key = w.keys.single().expect("filtered above");
            let events = match self.store.key_changes(key, b"", w.min_rev, upto) {
                Ok(events) => events,
                Err(hark_mvcc::Error::Compacted) => continue, // cancelled on the next step
                Err(e) => {
                    self.history_failed(&e);
                    return true;
                }
            };
            self.history_retry = None;
            let all = SharedEvents::new(
                events
                    .iter()
                    .map(|e| Arc::new(WatchEvent::from_store(e, false))),
            );
            let picked: Vec<u32> = (0..all.events.len() as u32).collect();
            self.deliver_catch_up(slot, &all, &picked, upto);
        }
        !narrow.is_empty()
    }

    /// Sends a caught-up watcher its events (`picked` positions in `all`) in
    /// batches cut at revision boundaries by size; on a full stream it becomes
    /// a victim holding the batch. A batch of adjacent positions shares `all`.
    fn deliver_catch_up(&mut self, slot: Slot, all: &SharedEvents, picked: &[u32], last: i64) {
        let stream = self.watchers.get(slot).stream;
        let outbox = self.streams[&stream].outbox.clone();
        let event = |i: u32| &all.events[i as usize];
        let (revision, size_of) = (
            |i: u32| all.revisions[i as usize],
            |i: u32| all.sizes[i as usize],
        );
        let mut rest = picked;
        while !rest.is_empty() {
            let mut end = 0;
            let mut bytes = 0;
            while end < rest.len() {
                let rev = revision(rest[end]);
                let same_rev = rest[end..]
                    .iter()
                    .take_while(|&&i| revision(i) == rev)
                    .count();
                let size: usize = rest[end..end + same_rev]
                    .iter()
                    .map(|&i| size_of(i) as usize)
                    .sum();
                if end > 0 && bytes + size > self.config.max_response_bytes {
                    break;
                }
                bytes += size;
                end += same_rev;
            }
            let (batch, tail) = rest.split_at(end);
            rest = tail;
            let (first, final_pos) = (batch[0], *batch.last().expect("non-empty"));
            let batch_last = revision(final_pos);
            let events = if (final_pos - first) as usize + 1 == batch.len() {
                Events::Shared {
                    all: all.events.clone(),
                    range: first as usize..final_pos as usize + 1,
                }
            } else {
                batch.iter().map(|&i| event(i).clone()).collect()
            };
            let Some(resp) = self.response_for(slot, events, self.rev) else {
                continue;
            };
            self.watchers.get_mut(slot).flags |= SENT_SINCE_TICK;
            if let Err(resp) = outbox.push_events(resp) {
                self.unsynced.remove(&slot);
                self.make_victim(slot, resp, batch_last + 1);
                return;
            }
        }
        self.watchers.get_mut(slot).min_rev = last + 1;
        if last >= self.rev {
            self.unsynced.remove(&slot);
            self.settle(slot);
        }
    }

    /// Revisions from `from` on (at most one chunk), never past `self.rev`
    /// (later ones reach synced watchers through `dispatch`), and the last
    /// revision the chunk covers (revisions without changes yield nothing).
    fn read_revisions(&self, from: i64) -> hark_mvcc::Result<(Vec<Arc<RevisionEvents>>, i64)> {
        let max = self.config.catch_up_revisions;
        if let Some(first) = self.window.front().map(|r| r.revision)
            && from >= first
        {
            let skip = (from - first) as usize;
            let chunk: Vec<_> = self.window.iter().skip(skip).take(max).cloned().collect();
            let covered = chunk.last().map_or(self.rev, |r| r.revision);
            return Ok((chunk, covered));
        }
        let upto = self.window.front().map_or(self.rev, |r| r.revision - 1);
        let history = self
            .store
            .history_chunk(from, max, self.config.catch_up_bytes)?;
        let chunk = history
            .revisions
            .iter()
            .filter(|c| c.revision <= upto)
            .map(|c| Arc::new(RevisionEvents::new(c)))
            .collect();
        Ok((chunk, (history.next - 1).min(upto)))
    }
}
