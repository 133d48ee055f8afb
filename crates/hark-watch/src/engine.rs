//! The engine: one thread owns every watcher. It takes committed revisions from
//! the store (the writer only enqueues them, so it never waits for watchers),
//! delivers them to synced watchers, catches unsynced ones up from an in-memory
//! window of recent revisions (or the store's history when older), and retries
//! victims when their stream's consumer makes room.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Instant;

use bytes::Bytes;
use crossbeam_channel::{Receiver, select};
use hark_mvcc::{CommittedRevision, EventKind, KeyRange, Store};

use crate::config::WatchConfig;
use crate::event::WatchEvent;
use crate::outbox::{Outbox, PENDING_EVENTS};
use crate::response::{NO_WATCH_ID, ResponseKind, WatchId, WatchResponse};
use crate::stream::WatchRequest;

pub(crate) type StreamId = u64;
type Slot = usize;

pub(crate) enum Command {
    OpenStream {
        stream: StreamId,
        outbox: Arc<Outbox>,
    },
    CloseStream {
        stream: StreamId,
    },
    Create {
        stream: StreamId,
        id: WatchId,
        req: WatchRequest,
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
}

/// The keys a watcher covers.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Keys {
    One(Bytes),
    /// `[start, end)`; `end: None` means every key `>= start`. Boxed: most
    /// watchers watch one key, and this enum is in every watcher.
    Span(Box<(Bytes, Option<Bytes>)>),
}

impl Keys {
    fn new(key: &Bytes, range_end: &Bytes) -> Keys {
        match KeyRange::new(key, range_end) {
            KeyRange::Single(_) => Keys::One(key.clone()),
            KeyRange::Span { end, .. } => {
                Keys::Span(Box::new((key.clone(), end.map(|_| range_end.clone()))))
            }
        }
    }

    fn contains(&self, key: &[u8]) -> bool {
        match self {
            Keys::One(k) => k.as_ref() == key,
            Keys::Span(span) => {
                key >= span.0.as_ref() && span.1.as_ref().is_none_or(|e| key < e.as_ref())
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Synced,
    Unsynced,
    /// Its stream was full; the batch it could not deliver waits in the stream's
    /// `victims` queue.
    Victim,
}

struct Watcher {
    stream: StreamId,
    id: WatchId,
    keys: Keys,
    /// The next revision this watcher needs.
    min_rev: i64,
    start_rev: i64,
    no_put: bool,
    no_delete: bool,
    prev_kv: bool,
    progress_notify: bool,
    /// Events went out since the last progress-notify tick.
    sent_since_tick: bool,
    state: State,
    /// Position in its synced-index list (valid while synced).
    pos: u32,
}

impl Watcher {
    fn wants(&self, ev: &WatchEvent) -> bool {
        match ev.kind {
            EventKind::Put => !self.no_put,
            EventKind::Delete => !self.no_delete,
        }
    }
}

/// Watchers by what they watch: exact keys by hash, ranges grouped by identical
/// range (watchers of one prefix share one entry, so matching an event costs one
/// lookup plus one check per distinct range).
#[derive(Default)]
struct SyncedIndex {
    groups: HashMap<Keys, Vec<Slot>>,
    /// The distinct ranges in `groups`, scanned per event.
    spans: Vec<Keys>,
}

impl SyncedIndex {
    /// Adds `slot` under `keys`; returns its position in that group.
    fn insert(&mut self, slot: Slot, keys: &Keys) -> u32 {
        let list = self.groups.entry(keys.clone()).or_insert_with(|| {
            if matches!(keys, Keys::Span(..)) {
                self.spans.push(keys.clone());
            }
            Vec::new()
        });
        list.push(slot);
        (list.len() - 1) as u32
    }

    /// Removes `slot`; the watcher that took its place gets its new position.
    fn remove(&mut self, slot: Slot, watchers: &mut Slab) {
        let keys = watchers.get(slot).keys.clone();
        let pos = watchers.get(slot).pos as usize;
        let list = self
            .groups
            .get_mut(&keys)
            .expect("synced watcher is indexed");
        debug_assert_eq!(list[pos], slot);
        list.swap_remove(pos);
        if let Some(&moved) = list.get(pos) {
            watchers.get_mut(moved).pos = pos as u32;
        }
        if list.is_empty() {
            self.groups.remove(&keys);
            self.spans.retain(|s| *s != keys);
        }
    }

    fn matching(&self, key: &Bytes, mut f: impl FnMut(Slot)) {
        if let Some(list) = self.groups.get(&Keys::One(key.clone())) {
            list.iter().for_each(|&s| f(s));
        }
        for span in &self.spans {
            if span.contains(key) {
                self.groups[span].iter().for_each(|&s| f(s));
            }
        }
    }
}

#[derive(Default)]
struct Slab {
    entries: Vec<Option<Watcher>>,
    free: Vec<Slot>,
    len: usize,
}

impl Slab {
    fn insert(&mut self, w: Watcher) -> Slot {
        self.len += 1;
        match self.free.pop() {
            Some(s) => {
                self.entries[s] = Some(w);
                s
            }
            None => {
                self.entries.push(Some(w));
                self.entries.len() - 1
            }
        }
    }
    fn remove(&mut self, s: Slot) -> Watcher {
        self.len -= 1;
        self.free.push(s);
        self.entries[s].take().expect("live slot")
    }
    fn get(&self, s: Slot) -> &Watcher {
        self.entries[s].as_ref().expect("live slot")
    }
    fn get_mut(&mut self, s: Slot) -> &mut Watcher {
        self.entries[s].as_mut().expect("live slot")
    }
}

struct StreamState {
    outbox: Arc<Outbox>,
    watchers: HashMap<WatchId, Slot>,
    /// Canceled by compaction, id still in use until the client cancels it.
    compacted: HashSet<WatchId>,
    /// Victims with the batch each could not deliver, in the order they failed.
    victims: VecDeque<(Slot, WatchResponse)>,
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
            .map(|e| Arc::new(WatchEvent::new(e.kind, e.kv.clone())))
            .collect();
        let bytes = events.iter().map(|e| e.approx_size()).sum();
        RevisionEvents {
            revision: c.revision,
            events,
            bytes,
        }
    }
}

pub(crate) struct Engine {
    store: Store,
    config: WatchConfig,
    revisions: Receiver<Arc<CommittedRevision>>,
    commands: Receiver<Command>,
    /// Newest revision delivered to synced watchers.
    rev: i64,
    shared_rev: Arc<AtomicI64>,
    /// Recent revisions, contiguous, ending at `rev`.
    window: VecDeque<Arc<RevisionEvents>>,
    window_bytes: usize,
    watchers: Slab,
    streams: HashMap<StreamId, StreamState>,
    synced: SyncedIndex,
    unsynced: HashSet<Slot>,
    victims: usize,
    last_tick: Instant,
    hub_dropped: bool,
}

impl Engine {
    pub(crate) fn new(
        store: Store,
        config: WatchConfig,
        start_rev: i64,
        revisions: Receiver<Arc<CommittedRevision>>,
        commands: Receiver<Command>,
        shared_rev: Arc<AtomicI64>,
    ) -> Self {
        shared_rev.store(start_rev, Ordering::Release);
        Engine {
            store,
            config,
            revisions,
            commands,
            rev: start_rev,
            shared_rev,
            window: VecDeque::new(),
            window_bytes: 0,
            watchers: Slab::default(),
            streams: HashMap::new(),
            synced: SyncedIndex::default(),
            unsynced: HashSet::new(),
            victims: 0,
            last_tick: Instant::now(),
            hub_dropped: false,
        }
    }

    pub(crate) fn run(mut self) {
        loop {
            while let Ok(c) = self.revisions.try_recv() {
                self.dispatch(&c);
            }
            let mut handled = false;
            while let Ok(cmd) = self.commands.try_recv() {
                // Be current before answering, so "from now" means now.
                while let Ok(c) = self.revisions.try_recv() {
                    self.dispatch(&c);
                }
                self.handle(cmd);
                handled = true;
            }
            if !self.unsynced.is_empty() {
                self.catch_up_step();
            }
            self.maybe_tick();
            self.report();
            if self.hub_dropped && self.streams.is_empty() {
                return;
            }
            if handled || !self.unsynced.is_empty() {
                continue;
            }
            select! {
                recv(self.revisions) -> c => match c {
                    Ok(c) => self.dispatch(&c),
                    Err(_) => return,
                },
                recv(self.commands) -> cmd => match cmd {
                    Ok(cmd) => self.handle(cmd),
                    Err(_) => return, // every stream and the hub are gone
                },
                default(self.config.tick) => {}
            }
        }
    }

    fn report(&self) {
        metrics::gauge!("etcd_debugging_mvcc_watch_stream_total").set(self.streams.len() as f64);
        metrics::gauge!("etcd_debugging_mvcc_watcher_total").set(self.watchers.len as f64);
        metrics::gauge!("etcd_debugging_mvcc_slow_watcher_total")
            .set((self.unsynced.len() + self.victims) as f64);
        metrics::gauge!("etcd_debugging_mvcc_pending_events_total")
            .set(PENDING_EVENTS.load(Ordering::Relaxed) as f64);
    }

    /// A newly committed revision: remember it, deliver it to synced watchers.
    fn dispatch(&mut self, c: &CommittedRevision) {
        debug_assert_eq!(
            c.revision,
            self.rev + 1,
            "the store publishes every revision in order"
        );
        let revision = Arc::new(RevisionEvents::new(c));
        self.rev = c.revision;
        self.shared_rev.store(self.rev, Ordering::Release);

        // (watcher, event index) for every match; sorted, each watcher's events
        // are adjacent and in revision order.
        let mut matches: Vec<(Slot, usize)> = Vec::new();
        for (i, ev) in revision.events.iter().enumerate() {
            self.synced
                .matching(&ev.kv.key, |slot| matches.push((slot, i)));
        }
        if revision.events.len() > 1 {
            matches.sort_unstable();
        }
        // Responses grouped by stream, so each outbox is locked and woken once.
        let mut per_stream: HashMap<StreamId, Vec<(Slot, WatchResponse)>> = HashMap::new();
        for group in matches.chunk_by(|a, b| a.0 == b.0) {
            let slot = group[0].0;
            let w = self.watchers.get(slot);
            if w.min_rev > self.rev {
                continue; // a future start revision not reached yet
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
                self.watchers.get_mut(slot).sent_since_tick = true
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

    /// Filters `events` for the watcher; `None` if nothing is left to send.
    fn response_for(
        &self,
        slot: Slot,
        mut events: Vec<Arc<WatchEvent>>,
        header: i64,
    ) -> Option<WatchResponse> {
        let w = self.watchers.get(slot);
        events.retain(|e| w.wants(e));
        if events.is_empty() {
            return None;
        }
        if w.prev_kv {
            for e in &events {
                e.load_prev_kv(&self.store);
            }
        }
        Some(WatchResponse {
            watch_id: w.id,
            header_revision: header,
            kind: ResponseKind::Events {
                events,
                prev_kv: w.prev_kv,
            },
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
        let rev = self.rev;
        let w = self.watchers.get_mut(slot);
        if w.min_rev > rev {
            w.state = State::Synced;
            w.pos = self.synced.insert(slot, &w.keys);
        } else {
            w.state = State::Unsynced;
            self.unsynced.insert(slot);
        }
    }

    fn handle(&mut self, cmd: Command) {
        match cmd {
            Command::OpenStream { stream, outbox } => {
                self.streams.insert(
                    stream,
                    StreamState {
                        outbox,
                        watchers: HashMap::new(),
                        compacted: HashSet::new(),
                        victims: VecDeque::new(),
                    },
                );
            }
            Command::CloseStream { stream } => {
                let Some(st) = self.streams.get(&stream) else {
                    return;
                };
                let slots: Vec<Slot> = st.watchers.values().copied().collect();
                for slot in slots {
                    self.remove_watcher(slot);
                }
                let st = self.streams.remove(&stream).expect("checked above");
                st.outbox.close();
            }
            Command::Create { stream, id, req } => self.create(stream, id, req),
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
                let Some(st) = self.streams.get_mut(&stream) else {
                    return;
                };
                let slot = st.watchers.get(&id).copied();
                let known = slot.is_some() || st.compacted.remove(&id);
                if let Some(slot) = slot {
                    self.remove_watcher(slot);
                }
                if known {
                    self.streams[&stream].outbox.push_control(WatchResponse {
                        watch_id: id,
                        header_revision: self.rev,
                        kind: ResponseKind::Canceled,
                    });
                }
            }
            Command::Progress { stream, id } => self.progress(stream, id),
            Command::Drained { stream } => self.retry_victims(stream),
            Command::HubDropped => self.hub_dropped = true,
        }
    }

    fn create(&mut self, stream: StreamId, id: WatchId, req: WatchRequest) {
        let Some(st) = self.streams.get(&stream) else {
            return;
        };
        let outbox = st.outbox.clone();
        let start = req.start_revision;
        let min_rev = if start == 0 || start > self.rev {
            start.max(self.rev + 1)
        } else {
            start
        };
        let slot = self.watchers.insert(Watcher {
            stream,
            id,
            keys: Keys::new(&req.key, &req.range_end),
            min_rev,
            start_rev: start,
            no_put: req.no_put,
            no_delete: req.no_delete,
            prev_kv: req.prev_kv,
            progress_notify: req.progress_notify,
            sent_since_tick: false,
            state: State::Unsynced,
            pos: 0,
        });
        self.streams
            .get_mut(&stream)
            .expect("checked")
            .watchers
            .insert(id, slot);
        // The created reply goes first: every event of this watcher is queued after it.
        outbox.push_control(WatchResponse {
            watch_id: id,
            header_revision: self.rev,
            kind: ResponseKind::Created,
        });
        self.settle(slot);
    }

    fn remove_watcher(&mut self, slot: Slot) {
        let w = self.watchers.get(slot);
        let (stream, id) = (w.stream, w.id);
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
        if let Some(st) = self.streams.get_mut(&stream) {
            st.watchers.remove(&id);
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
            Some(id) => st.watchers.get(&id).copied().into_iter().collect(),
            None => st.watchers.values().copied().collect(),
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
        let Some(st) = self.streams.get_mut(&stream) else {
            return;
        };
        while let Some((slot, held)) = st.victims.pop_front() {
            if let Err(held) = st.outbox.push_events(held) {
                st.victims.push_front((slot, held));
                return;
            }
            self.victims -= 1;
            // Delivered: it owes only what came after the held batch.
            let w = self.watchers.get_mut(slot);
            if w.min_rev > self.rev {
                w.state = State::Synced;
                w.pos = self.synced.insert(slot, &w.keys);
            } else {
                w.state = State::Unsynced;
                self.unsynced.insert(slot);
            }
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
        for (slot, w) in self.watchers.entries.iter_mut().enumerate() {
            let Some(w) = w else { continue };
            if w.progress_notify && !std::mem::take(&mut w.sent_since_tick) {
                due.push((slot, w.stream, w.id));
            }
        }
        for (_, stream, id) in due {
            self.progress(stream, Some(id));
        }
    }

    /// One bounded step of catch-up for unsynced watchers: cancel those that need
    /// compacted history, then deliver one chunk of revisions to the rest.
    fn catch_up_step(&mut self) {
        let compacted = self.store.compacted_revision();
        let slots: Vec<Slot> = self.unsynced.iter().copied().collect();
        for slot in slots {
            let w = self.watchers.get(slot);
            if w.min_rev < compacted {
                let (stream, id) = (w.stream, w.id);
                self.streams[&stream].outbox.push_control(WatchResponse {
                    watch_id: id,
                    header_revision: 0,
                    kind: ResponseKind::Compacted {
                        compact_revision: compacted,
                    },
                });
                self.remove_watcher(slot);
                self.streams
                    .get_mut(&stream)
                    .expect("exists")
                    .compacted
                    .insert(id);
            } else if w.min_rev > self.rev {
                self.unsynced.remove(&slot);
                self.settle(slot);
            }
        }
        let Some(from) = self
            .unsynced
            .iter()
            .map(|&s| self.watchers.get(s).min_rev)
            .min()
        else {
            return;
        };
        let (chunk, last) = match self.read_revisions(from) {
            Ok(read) => read,
            Err(hark_mvcc::Error::Compacted) => return, // cancelled on the next step
            Err(e) => {
                tracing::error!(error = %e, "watch catch-up cannot read history; retrying");
                std::thread::sleep(self.config.tick);
                return;
            }
        };

        // Index the unsynced watchers once, then scan the chunk once.
        let mut index = SyncedIndex::default();
        let slots: Vec<Slot> = self.unsynced.iter().copied().collect();
        for &slot in &slots {
            index.insert(slot, &self.watchers.get(slot).keys);
        }
        let mut found: HashMap<Slot, Vec<Arc<WatchEvent>>> = HashMap::new();
        for r in &chunk {
            for ev in &r.events {
                index.matching(&ev.kv.key, |slot| {
                    if self.watchers.get(slot).min_rev <= r.revision {
                        found.entry(slot).or_default().push(ev.clone());
                    }
                });
            }
        }
        for slot in slots {
            if self.watchers.get(slot).min_rev > last {
                continue;
            }
            let events = found.remove(&slot).unwrap_or_default();
            self.deliver_catch_up(slot, events, last);
        }
    }

    /// Sends a caught-up watcher its events in batches cut at revision boundaries
    /// by size; on a full stream it becomes a victim holding the batch.
    fn deliver_catch_up(&mut self, slot: Slot, events: Vec<Arc<WatchEvent>>, last: i64) {
        let stream = self.watchers.get(slot).stream;
        let outbox = self.streams[&stream].outbox.clone();
        let mut rest = events.as_slice();
        while !rest.is_empty() {
            let mut end = 0;
            let mut bytes = 0;
            while end < rest.len() {
                let rev = rest[end].revision();
                let same_rev = rest[end..]
                    .iter()
                    .take_while(|e| e.revision() == rev)
                    .count();
                let size: usize = rest[end..end + same_rev]
                    .iter()
                    .map(|e| e.approx_size())
                    .sum();
                if end > 0 && bytes + size > self.config.max_response_bytes {
                    break;
                }
                bytes += size;
                end += same_rev;
            }
            let (batch, tail) = rest.split_at(end);
            rest = tail;
            let batch_last = batch.last().expect("non-empty").revision();
            let Some(resp) = self.response_for(slot, batch.to_vec(), self.rev) else {
                continue;
            };
            self.watchers.get_mut(slot).sent_since_tick = true;
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
