//! What stream handles ask of the engine thread, in one ordered channel.

use std::sync::Arc;

use crossbeam_channel::Receiver;

use crate::outbox::Outbox;
use crate::request::WatchRequest;
use crate::response::WatchId;

pub(crate) type StreamId = u32;

pub(crate) enum Command {
    OpenStream {
        stream: StreamId,
        outbox: Arc<Outbox>,
        /// Who the stream serves (a client's address), for reports.
        label: Arc<str>,
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
    /// Each stream's load, for [`crate::WatchHub::stream_loads`].
    Report(crossbeam_channel::Sender<Vec<crate::StreamLoad>>),
    /// The window's size, for [`crate::WatchHub::window_usage`].
    Window(crossbeam_channel::Sender<crate::WindowUsage>),
    /// No hub handle is left: stop once the last stream closes.
    HubDropped,
    /// Stop until the sender is dropped (see [`crate::WatchHub::pause`]).
    Pause(Receiver<()>),
}
