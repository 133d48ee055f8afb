//! Victims: watchers whose stream was full. Each holds the one batch it
//! could not deliver and costs nothing per further event; when the
//! stream's consumer makes room, the batch goes out and the watcher owes
//! only what came after it.

use super::Engine;
use crate::command::StreamId;
use crate::index::{Slot, State};
use crate::response::WatchResponse;

impl Engine {
    pub(super) fn make_victim(&mut self, slot: Slot, held: WatchResponse, next_rev: i64) {
        let w = self.watchers.get_mut(slot);
        w.min_rev = next_rev;
        w.state = State::Victim;
        let stream = w.stream;
        self.victims += 1;
        let st = self.streams.get_mut(&stream).expect("watcher's stream");
        st.victims.push_back((slot, held));
    }

    pub(super) fn retry_victims(&mut self, stream: StreamId) {
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
}
