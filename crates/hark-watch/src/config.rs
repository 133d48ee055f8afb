use std::time::Duration;

/// [`WatchConfig::window_bytes`]'s default.
pub const DEFAULT_WINDOW_BYTES: usize = 128 << 20;

/// Tuning of the watch engine. Defaults follow etcd where it has a number.
#[derive(Debug, Clone)]
pub struct WatchConfig {
    /// Bytes of committed revisions the store may queue for the engine; past
    /// it the store stops queuing and the engine catches up from its window
    /// or the store's history (see ARCHITECTURE.md, "threads and queues").
    pub feed_bytes: usize,
    /// Event batches a stream may queue before its watchers become victims
    /// (etcd's `chanBufLen`).
    pub stream_capacity: usize,
    /// ...or bytes of their events (whichever comes first).
    pub stream_bytes: usize,
    /// Most recent revisions kept in memory for catch-up...
    pub window_revisions: usize,
    /// ...and most bytes they hold: their keys and values, previous values,
    /// and the encoded forms streams keep in them once sent.
    pub window_bytes: usize,
    /// A catch-up response is cut at a revision boundary past this many bytes
    /// (well under gRPC's 2 MiB default, even without `fragment`).
    pub max_response_bytes: usize,
    /// Revisions, and bytes, read per catch-up step.
    pub catch_up_revisions: usize,
    /// ...and bytes.
    pub catch_up_bytes: usize,
    /// How often idle `progress_notify` watchers get a progress reply (etcd's
    /// `--watch-progress-notify-interval`, default 10 min); `None` disables.
    pub progress_notify_interval: Option<Duration>,
    /// Longest the engine sleeps with nothing to do.
    pub tick: Duration,
    /// Most watchers one stream may hold at once; a create past it is
    /// refused ([`crate::WatchError::TooManyWatchers`]). etcd has no such
    /// bound; this one keeps a single client from filling the engine.
    pub max_watchers_per_stream: usize,
}

impl Default for WatchConfig {
    fn default() -> Self {
        WatchConfig {
            feed_bytes: 64 << 20,
            stream_capacity: 128,
            stream_bytes: 16 << 20,
            window_revisions: 200_000,
            window_bytes: DEFAULT_WINDOW_BYTES,
            max_response_bytes: 1 << 20,
            catch_up_revisions: 10_000,
            catch_up_bytes: 8 << 20,
            progress_notify_interval: Some(Duration::from_secs(600)),
            tick: Duration::from_millis(100),
            max_watchers_per_stream: 100_000,
        }
    }
}
