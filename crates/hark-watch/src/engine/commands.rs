//! The stream handles' requests: open and close streams, create and
//! cancel watchers, progress; and the periodic `progress_notify`.

use std::collections::VecDeque;
use std::time::Instant;

use super::{Engine, StreamState};
use crate::command::{Command, StreamId};
use crate::ids::IdMap;
use crate::index::{
    FRAGMENT, Keys, NIL, NO_DELETE, NO_PUT, PREV_KV, PROGRESS_NOTIFY, SENT_SINCE_TICK, Slot, State,
    Watcher,
};
use crate::request::WatchRequest;
use crate::response::{NO_WATCH_ID, ResponseKind, WatchId, WatchResponse};

impl Engine {
    pub(super) fn handle(&mut self, cmd: Command) {
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
                label,
            } => {
                self.streams.insert(
                    stream,
                    StreamState {
                        outbox,
                        label,
                        ids: IdMap::default(),
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
                let Some(st) = self.streams.get_mut(&stream) else {
                    return;
                };
                let Some(slot) = st.ids.remove(id) else {
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
            Command::Report(reply) => {
                let _ = reply.send(self.stream_loads());
            }
            Command::Window(reply) => {
                let _ = reply.send(crate::WindowUsage {
                    revisions: self.window.len(),
                    bytes: self.window_held(),
                });
            }
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
        let start = req.start_revision;
        // From "now": the first revision after the call, even if this engine has
        // dispatched past it already (then it is caught up from memory).
        let min_rev = if start == 0 { now + 1 } else { start };
        let flags = [
            (req.no_put, NO_PUT),
            (req.no_delete, NO_DELETE),
            (req.prev_kv, PREV_KV),
            (req.progress_notify, PROGRESS_NOTIFY),
            (req.fragment, FRAGMENT),
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
        if let Some(st) = self.streams.get_mut(&stream) {
            debug_assert!(st.ids.get(id).is_none(), "watch id {id} given out twice");
            st.ids.insert(id, slot);
        }
        // The created reply goes first: every event of this watcher is queued after it.
        outbox.push_control(WatchResponse {
            watch_id: id,
            header_revision: if start == 0 { now } else { self.rev.max(now) },
            kind: ResponseKind::Created,
        });
        self.settle(slot);
    }

    /// Progress is owed only when every watcher concerned is synced and past its
    /// start revision; the reply is queued behind all events already queued.
    pub(super) fn progress(&mut self, stream: StreamId, id: Option<WatchId>) {
        let Some(st) = self.streams.get(&stream) else {
            return;
        };
        let slots: Vec<Slot> = match id {
            Some(id) => st.ids.get(id).filter(|&s| s != NIL).into_iter().collect(),
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

    /// Periodic `progress_notify`: to watchers that asked for it and were sent no
    /// events since the last tick.
    pub(super) fn maybe_tick(&mut self) {
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
}
