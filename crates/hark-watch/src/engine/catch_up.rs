//! Unsynced watchers: caught up in bounded steps from the memory window,
//! the store's history, or (one key) the store's key index; cancelled when
//! they need compacted history; held back on a backoff when a history read
//! fails, without holding up anyone else.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rustc_hash::FxHashMap;

use super::Engine;
use super::dispatch::RevisionEvents;
use crate::event::WatchEvent;
use crate::index::{KeyIndex, NIL, SENT_SINCE_TICK, Slot};
use crate::response::{Events, ResponseKind, WatchResponse};

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

/// When a failed history read is tried again, and the delay that led there.
#[derive(Clone, Copy)]
pub(super) struct Backoff {
    pub(super) until: Instant,
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
    /// One bounded step of catch-up for unsynced watchers: cancel those that need
    /// compacted history, then deliver one chunk of revisions to the rest.
    /// Returns whether there was work it could do: after a failed history read,
    /// watchers that need history wait for the retry while the rest go on.
    pub(super) fn catch_up_step(&mut self) -> bool {
        let compacted = self.store.compacted_revision();
        let slots: Vec<Slot> = self.unsynced.iter().copied().collect();
        let mut worked = false;
        for slot in slots {
            let w = self.watchers.get(slot);
            if w.min_rev < compacted {
                let (stream, id) = (w.stream, w.id);
                let st = self.streams.get_mut(&stream).expect("watcher's stream");
                st.outbox.push_control(WatchResponse {
                    watch_id: id,
                    header_revision: 0,
                    kind: ResponseKind::Compacted {
                        compact_revision: compacted,
                    },
                });
                // The id stays in use (mapped to nothing) until the client cancels it.
                st.ids.insert(id, NIL);
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

    /// Whether an unsynced watcher needs revisions older than the window.
    pub(super) fn needs_history(&self) -> bool {
        let first = self.window_first();
        self.unsynced
            .iter()
            .any(|&s| self.watchers.get(s).min_rev < first)
    }

    /// The oldest revision the memory window holds (`rev + 1` when empty).
    pub(super) fn window_first(&self) -> i64 {
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
            // A key's changes read fine; the backoff still stands for the
            // full history reads (a successful one resets it).
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
            .map(|c| Arc::new(RevisionEvents::from_history(c)))
            .collect();
        Ok((chunk, (history.next - 1).min(upto)))
    }
}
