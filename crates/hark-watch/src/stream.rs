//! The public API: a [`WatchHub`] per store, a [`WatchStream`] per client stream.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::task::{Context, Poll};

use bytes::Bytes;
use crossbeam_channel::Sender;
use hark_mvcc::Store;
use parking_lot::Mutex;

use crate::command::{Command, StreamId};
use crate::config::WatchConfig;
use crate::engine::Engine;
use crate::ids::IdSet;
use crate::outbox::{EventCounts, Outbox, Responses};
use crate::request::{WatchError, WatchRequest};
use crate::response::WatchId;

/// The watch engine of one store. Cheap to clone; the engine thread stops once
/// every hub clone and every stream is dropped.
#[derive(Clone)]
pub struct WatchHub {
    inner: Arc<HubInner>,
}

struct HubInner {
    store: Store,
    /// Taken by [`WatchHub::shutdown`] to wait for the engine.
    engine: Option<std::thread::JoinHandle<()>>,
    commands: Sender<Command>,
    config: WatchConfig,
    counts: Arc<EventCounts>,
    next_stream: AtomicU32,
}

impl WatchHub {
    /// Starts the engine thread for `store`.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// use hark_mvcc::Store;
    /// use hark_watch::{WatchConfig, WatchHub};
    ///
    /// let store = Store::in_memory();
    /// // Streams may queue 16 batches before their watchers become victims.
    /// let config = WatchConfig {
    ///     stream_capacity: 16,
    ///     ..WatchConfig::default()
    /// };
    /// let hub = WatchHub::new(store.clone(), config);
    /// let (stream, responses) = hub.new_stream_for("10.0.0.7:52114");
    /// let loads = hub.stream_loads(Duration::from_secs(5)).expect("the engine answers");
    /// assert_eq!(loads.len(), 1);
    /// assert_eq!(&*loads[0].label, "10.0.0.7:52114");
    /// assert_eq!(loads[0].watchers, 0);
    ///
    /// // The engine stops once the hub and every stream are gone.
    /// drop((stream, responses));
    /// hub.shutdown();
    /// ```
    pub fn new(store: Store, config: WatchConfig) -> WatchHub {
        Self::with_engine_start(store, config, || {})
    }

    /// [`WatchHub::new`], running `on_start` first on the engine's thread
    /// (to pin it to a CPU, say). Lowering its priority there is a trap: the
    /// engine delivers live events too, and at niceness 19 one busy
    /// neighbouring thread delayed them by tens of ms (docs/benchmarks.md).
    pub fn with_engine_start(
        store: Store,
        config: WatchConfig,
        on_start: impl FnOnce() + Send + 'static,
    ) -> WatchHub {
        let (start_rev, feed) = store.subscribe_within(config.feed_bytes);
        let (commands, commands_rx) = crossbeam_channel::unbounded();
        let counts = Arc::new(EventCounts::default());
        let engine = Engine::new(
            store.clone(),
            config.clone(),
            start_rev,
            feed,
            commands_rx,
            counts.clone(),
        );
        let engine = std::thread::Builder::new()
            .name("hark-watch-engine".into())
            .spawn(move || {
                on_start();
                engine.run()
            })
            .expect("spawning the watch engine thread");
        WatchHub {
            inner: Arc::new(HubInner {
                store,
                engine: Some(engine),
                commands,
                config,
                counts,
                next_stream: AtomicU32::new(0),
            }),
        }
    }

    /// Drops this handle and, if it was the last one, waits until the engine has
    /// stopped, which it does once every stream is closed too. Afterwards the
    /// engine holds no clone of the store, so closing the store closes it.
    pub fn shutdown(self) {
        if let Ok(mut inner) = Arc::try_unwrap(self.inner) {
            let engine = inner.engine.take();
            // Dropping the last handle tells the engine the hub is gone.
            drop(inner);
            if let Some(engine) = engine {
                let _ = engine.join();
            }
        }
    }

    /// Stops the engine thread until the returned guard is dropped, as a
    /// starved CPU would: the store's feed fills to its budget and then
    /// lags, and streams get nothing new. For tests of the lag policy.
    pub fn pause(&self) -> EnginePause {
        let (resume, paused) = crossbeam_channel::bounded(0);
        let _ = self.inner.commands.send(Command::Pause(paused));
        EnginePause { _resume: resume }
    }

    /// Every open stream's watchers and queue, deepest queue first (queued
    /// events plus victims' held batches); `None` if the engine did not
    /// answer within `timeout` (busy, or stopped).
    pub fn stream_loads(&self, timeout: std::time::Duration) -> Option<Vec<StreamLoad>> {
        let (reply, answer) = crossbeam_channel::bounded(1);
        self.inner.commands.send(Command::Report(reply)).ok()?;
        answer.recv_timeout(timeout).ok()
    }

    /// The engine's window of recent revisions: how many, and the bytes
    /// they hold (`hark_watch_window_revisions` and `_bytes`); `None` if the
    /// engine did not answer within `timeout`.
    pub fn window_usage(&self, timeout: std::time::Duration) -> Option<WindowUsage> {
        let (reply, answer) = crossbeam_channel::bounded(1);
        self.inner.commands.send(Command::Window(reply)).ok()?;
        answer.recv_timeout(timeout).ok()
    }

    /// Events this hub's consumers have taken, and events queued for them
    /// and not yet taken (the figures behind `etcd_debugging_mvcc_events_total`
    /// and `etcd_debugging_mvcc_pending_events_total`).
    pub fn event_counts(&self) -> (u64, i64) {
        (
            self.inner.counts.sent.load(Ordering::Relaxed),
            self.inner.counts.pending.load(Ordering::Relaxed),
        )
    }

    /// Opens a stream: the handle to create, cancel and poll watchers, and the
    /// ordered receiver of everything the stream is sent.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// use hark_mvcc::{PutRequest, Store};
    /// use hark_watch::{ResponseKind, WatchConfig, WatchHub, WatchRequest};
    ///
    /// let store = Store::in_memory();
    /// let hub = WatchHub::new(store.clone(), WatchConfig::default());
    /// let (stream, responses) = hub.new_stream();
    /// let id = stream.watch(WatchRequest::key("k"))?;
    /// assert_eq!(id, 0, "ids are picked from 0 up");
    ///
    /// let created = responses.recv_timeout(Duration::from_secs(5)).expect("created");
    /// assert!(matches!(created.kind, ResponseKind::Created));
    /// // From "now": the watch sees the next revision, not the current one.
    /// assert_eq!(created.header_revision, store.current_revision());
    ///
    /// drop((stream, responses));
    /// hub.shutdown();
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new_stream(&self) -> (WatchStream, Responses) {
        self.new_stream_for("")
    }

    /// [`Self::new_stream`], naming who the stream serves (a client's
    /// address, say) in [`Self::stream_loads`].
    pub fn new_stream_for(&self, label: &str) -> (WatchStream, Responses) {
        let id = self.inner.next_stream.fetch_add(1, Ordering::Relaxed);
        let engine = self.inner.commands.clone();
        let on_drained = Box::new(move || {
            let _ = engine.send(Command::Drained { stream: id });
        });
        let outbox = Arc::new(Outbox::new(
            (
                self.inner.config.stream_capacity,
                self.inner.config.stream_bytes,
            ),
            on_drained,
            self.inner.counts.clone(),
        ));
        let _ = self.inner.commands.send(Command::OpenStream {
            stream: id,
            outbox: outbox.clone(),
            label: label.into(),
        });
        let stream = WatchStream {
            id,
            store: self.inner.store.clone(),
            ids: Mutex::new(StreamIds {
                max_live: self.inner.config.max_watchers_per_stream,
                ..StreamIds::default()
            }),
            commands: self.inner.commands.clone(),
            outbox: outbox.clone(),
        };
        (stream, Responses { outbox })
    }
}

/// One stream's load, as [`WatchHub::stream_loads`] reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamLoad {
    /// The stream's number within its hub.
    pub stream: u32,
    /// Who it serves, as given to [`WatchHub::new_stream_for`].
    pub label: Arc<str>,
    /// Its watchers.
    pub watchers: usize,
    /// Its watchers still catching up on history.
    pub unsynced: usize,
    /// Its watchers holding a batch the full queue refused.
    pub victims: usize,
    /// Responses waiting for the consumer...
    pub queued_responses: usize,
    /// ...the events in them...
    pub queued_events: usize,
    /// ...and their approximate bytes.
    pub queued_bytes: usize,
}

/// The engine's window, as [`WatchHub::window_usage`] reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowUsage {
    /// Revisions in the window.
    pub revisions: usize,
    /// Bytes their events hold: as they entered the window, and what they
    /// gained there since (encoded forms, previous values read later).
    pub bytes: usize,
}

/// Holds the engine stopped (see [`WatchHub::pause`]); dropping it resumes.
pub struct EnginePause {
    _resume: Sender<()>,
}

impl Drop for HubInner {
    fn drop(&mut self) {
        // Outboxes hold command senders too, so the channel alone never closes.
        let _ = self.commands.send(Command::HubDropped);
    }
}

/// A stream's watch ids in use, kept by its handle alone: it hands ids out
/// and spots duplicates at once. An id is in use from its create until the
/// client cancels it (also after the engine cancelled it as compacted, as
/// etcd keeps it). The engine maps ids to watchers on its own; the ordered
/// command channel keeps the two in step.
#[derive(Default)]
struct StreamIds {
    next: WatchId,
    in_use: IdSet,
    /// How many ids `in_use` holds.
    live: usize,
    /// [`WatchConfig::max_watchers_per_stream`].
    max_live: usize,
    closed: bool,
}

/// One client stream (etcd's mvcc `WatchStream`). Every reply, including a
/// rejected create, arrives in order on the paired [`Responses`].
pub struct WatchStream {
    id: StreamId,
    /// To pin "now" for watches from the current revision at the moment of the call.
    store: Store,
    ids: Mutex<StreamIds>,
    commands: Sender<Command>,
    /// Counts the requests in flight (see [`WatchStream::poll_ready`]).
    outbox: Arc<Outbox>,
}

impl WatchStream {
    /// Ready when the stream may make another request: fewer than
    /// [`MAX_UNANSWERED`](crate::MAX_UNANSWERED) are unhandled by the engine or answered with a
    /// reply the consumer has not taken. A server awaits this before reading
    /// its client's next request, so a client that sends without reading
    /// (or an engine that falls behind) is held back by flow control
    /// rather than queued without bound. Requests made without waiting are
    /// still taken.
    pub fn poll_ready(&self, cx: &mut Context<'_>) -> Poll<()> {
        self.outbox.poll_requests_room(cx)
    }

    /// [`WatchStream::poll_ready`] as a future.
    pub fn ready(&self) -> impl Future<Output = ()> + '_ {
        std::future::poll_fn(|cx| self.poll_ready(cx))
    }

    /// Resolves once the stream's [`Responses`] was dropped (its consumer
    /// went away) or the engine closed the stream. A server whose client
    /// stopped sending, but still reads, waits on this to know when to let go.
    pub fn closed(&self) -> impl Future<Output = ()> + '_ {
        std::future::poll_fn(|cx| self.outbox.poll_closed(cx))
    }

    /// Sends the engine a request that it answers (or decides not to).
    fn request(&self, cmd: Command) {
        self.outbox.request_sent();
        if self.commands.send(cmd).is_err() {
            self.outbox.request_handled();
        }
    }

    /// Creates a watcher. A refused create is also answered on the response
    /// channel (created + canceled, watch id -1), in order with other creates.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// use hark_mvcc::{DeleteRangeRequest, EventKind, PutRequest, Store};
    /// use hark_watch::{NO_WATCH_ID, ResponseKind, WatchConfig, WatchError, WatchHub, WatchRequest};
    ///
    /// const WAIT: Duration = Duration::from_secs(5);
    ///
    /// let store = Store::in_memory();
    /// let hub = WatchHub::new(store.clone(), WatchConfig::default());
    /// let (stream, responses) = hub.new_stream();
    ///
    /// // Deletes only, each with the value the key had before.
    /// let mut req = WatchRequest::prefix("jobs/").with_prev_kv();
    /// req.no_put = true;
    /// req.id = 7;
    /// assert_eq!(stream.watch(req)?, 7);
    /// assert!(matches!(responses.recv_timeout(WAIT).unwrap().kind, ResponseKind::Created));
    ///
    /// // A refused create: the error now, and a rejection in order on the stream.
    /// assert_eq!(
    ///     stream.watch(WatchRequest::range("b", "a")),
    ///     Err(WatchError::EmptyRange)
    /// );
    /// let rejected = responses.recv_timeout(WAIT).unwrap();
    /// assert_eq!(rejected.watch_id, NO_WATCH_ID);
    /// assert!(matches!(rejected.kind, ResponseKind::CreateRejected { .. }));
    ///
    /// store.put(PutRequest::new("jobs/1", "queued"))?; // filtered out
    /// let rev = store
    ///     .delete_range(DeleteRangeRequest::new("jobs/1", ""))?
    ///     .header_revision;
    /// let response = responses.recv_timeout(WAIT).expect("the delete");
    /// assert_eq!((response.watch_id, response.header_revision), (7, rev));
    /// let event = &response.events()[0];
    /// assert_eq!((event.kind, event.revision()), (EventKind::Delete, rev));
    /// assert_eq!(event.prev_kv().unwrap().value, "queued");
    ///
    /// drop((stream, responses));
    /// hub.shutdown();
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn watch(&self, mut req: WatchRequest) -> Result<WatchId, WatchError> {
        // Held until the command is sent, so that the engine learns of ids
        // in the order the handle gave them out and took them back.
        let mut ids = self.ids.lock();
        let result = admit(&mut ids, &mut req);
        let cmd = match &result {
            Ok(id) => Command::Create {
                stream: self.id,
                id: *id,
                req,
                now: self.store.current_revision(),
            },
            Err(WatchError::Closed) => return result,
            Err(e) => Command::Reject {
                stream: self.id,
                reason: e.to_string(),
            },
        };
        self.request(cmd);
        drop(ids);
        result
    }

    /// Refuses a create for a reason of the caller's (e.g. permission): the
    /// client gets created + canceled with `reason` and watch id -1, in order
    /// with the stream's other replies; no id is used.
    pub fn reject(&self, reason: String) {
        self.request(Command::Reject {
            stream: self.id,
            reason,
        });
    }

    /// Cancels a watcher; `false` (and no reply, as etcd) if the id is unknown.
    /// The id is free again at once: a create that reuses it reaches the
    /// engine after this cancel.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// use hark_mvcc::{PutRequest, Store};
    /// use hark_watch::{ResponseKind, WatchConfig, WatchHub, WatchRequest};
    ///
    /// const WAIT: Duration = Duration::from_secs(5);
    ///
    /// let store = Store::in_memory();
    /// let hub = WatchHub::new(store.clone(), WatchConfig::default());
    /// let (stream, responses) = hub.new_stream();
    /// let id = stream.watch(WatchRequest::key("k"))?;
    /// assert!(matches!(responses.recv_timeout(WAIT).unwrap().kind, ResponseKind::Created));
    ///
    /// assert!(stream.cancel(id));
    /// let canceled = responses.recv_timeout(WAIT).expect("canceled");
    /// assert_eq!(canceled.watch_id, id);
    /// assert!(matches!(canceled.kind, ResponseKind::Canceled));
    /// assert!(!stream.cancel(id), "no longer known");
    ///
    /// // The watcher is gone: a change to its key is not sent.
    /// store.put(PutRequest::new("k", "v"))?;
    /// assert!(responses.recv_timeout(Duration::from_millis(100)).is_none());
    ///
    /// drop((stream, responses));
    /// hub.shutdown();
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cancel(&self, id: WatchId) -> bool {
        let mut ids = self.ids.lock();
        if !ids.in_use.remove(id) {
            return false;
        }
        ids.live -= 1;
        // Sent under the lock, as in `watch`.
        self.request(Command::Cancel {
            stream: self.id,
            id,
        });
        true
    }

    /// Asks for a progress reply for one watcher (sent only if it is synced).
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// use hark_mvcc::{PutRequest, Store};
    /// use hark_watch::{ResponseKind, WatchConfig, WatchHub, WatchRequest};
    ///
    /// const WAIT: Duration = Duration::from_secs(5);
    ///
    /// let store = Store::in_memory();
    /// let hub = WatchHub::new(store.clone(), WatchConfig::default());
    /// let (stream, responses) = hub.new_stream();
    /// let id = stream.watch(WatchRequest::key("k"))?;
    /// assert!(matches!(responses.recv_timeout(WAIT).unwrap().kind, ResponseKind::Created));
    /// let rev = store.put(PutRequest::new("k", "v"))?.header_revision;
    /// assert_eq!(responses.recv_timeout(WAIT).unwrap().events().len(), 1);
    ///
    /// stream.request_progress(id);
    /// let progress = responses.recv_timeout(WAIT).expect("progress");
    /// assert!(matches!(progress.kind, ResponseKind::Progress));
    /// assert_eq!((progress.watch_id, progress.header_revision), (id, rev));
    ///
    /// drop((stream, responses));
    /// hub.shutdown();
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn request_progress(&self, id: WatchId) {
        self.request(Command::Progress {
            stream: self.id,
            id: Some(id),
        });
    }

    /// etcd's `RequestProgressAll`: a reply with watch id -1 and the current
    /// revision, only if every watcher of the stream is synced (else nothing).
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// use hark_mvcc::{PutRequest, Store};
    /// use hark_watch::{NO_WATCH_ID, ResponseKind, WatchConfig, WatchHub, WatchRequest};
    ///
    /// const WAIT: Duration = Duration::from_secs(5);
    ///
    /// let store = Store::in_memory();
    /// let hub = WatchHub::new(store.clone(), WatchConfig::default());
    /// let (stream, responses) = hub.new_stream();
    /// stream.watch(WatchRequest::prefix("a/"))?;
    /// stream.watch(WatchRequest::prefix("b/"))?;
    /// for _ in 0..2 {
    ///     assert!(matches!(responses.recv_timeout(WAIT).unwrap().kind, ResponseKind::Created));
    /// }
    /// let rev = store.put(PutRequest::new("b/1", "x"))?.header_revision;
    /// assert_eq!(responses.recv_timeout(WAIT).unwrap().header_revision, rev);
    ///
    /// // Every event up to `rev` has been sent to this stream.
    /// stream.request_progress_all();
    /// let progress = responses.recv_timeout(WAIT).expect("progress");
    /// assert!(matches!(progress.kind, ResponseKind::Progress));
    /// assert_eq!((progress.watch_id, progress.header_revision), (NO_WATCH_ID, rev));
    ///
    /// drop((stream, responses));
    /// hub.shutdown();
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn request_progress_all(&self) {
        self.request(Command::Progress {
            stream: self.id,
            id: None,
        });
    }
}

impl Drop for WatchStream {
    fn drop(&mut self) {
        self.ids.lock().closed = true;
        let _ = self.commands.send(Command::CloseStream { stream: self.id });
    }
}

/// Checks a create and gives it its id (etcd's checks, in etcd's order).
fn admit(ids: &mut StreamIds, req: &mut WatchRequest) -> Result<WatchId, WatchError> {
    if ids.closed {
        return Err(WatchError::Closed);
    }
    if req.start_revision < 0 {
        return Err(WatchError::NegativeRevision);
    }
    if ids.live >= ids.max_live {
        return Err(WatchError::TooManyWatchers);
    }
    if req.key.is_empty() {
        req.key = Bytes::from_static(b"\0");
    }
    if !req.range_end.is_empty() && req.range_end.as_ref() != b"\0" && req.key >= req.range_end {
        return Err(WatchError::EmptyRange);
    }
    let id = if req.id == 0 {
        while ids.in_use.contains(ids.next) {
            ids.next += 1;
        }
        ids.next += 1;
        ids.next - 1
    } else if ids.in_use.contains(req.id) {
        return Err(WatchError::DuplicateId);
    } else {
        req.id
    };
    ids.in_use.insert(id);
    ids.live += 1;
    Ok(id)
}
