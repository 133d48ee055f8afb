//! A stream's ordered response queue. The engine never blocks on it: event
//! batches are refused once `capacity` of them, or `capacity_bytes` of their
//! events, wait (the watcher then becomes a victim holding its batch); control replies (created, canceled, progress) are
//! always taken, since they answer the client's own requests.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex, MutexGuard};

use crate::response::{ResponseKind, WatchResponse};

/// Tells the engine a stream's consumer made room after a refused push.
pub(crate) type OnDrained = Box<dyn Fn() + Send + Sync>;

/// One hub's event counts, kept by its outboxes and published by its
/// engine: a registry lookup per response cost ~5% of the server's CPU in
/// the fanout loadtest. Per hub, so two hubs in a process count apart.
#[derive(Default)]
pub(crate) struct EventCounts {
    /// Events queued in the hub's outboxes and not yet taken by a consumer
    /// (`etcd_debugging_mvcc_pending_events_total`).
    pub(crate) pending: AtomicI64,
    /// Events taken by consumers (`etcd_debugging_mvcc_events_total`).
    pub(crate) sent: AtomicU64,
}

/// A queue's depth: responses waiting, the events in them and their
/// approximate bytes.
pub(crate) struct Queued {
    pub(crate) responses: usize,
    pub(crate) events: usize,
    pub(crate) bytes: usize,
}

pub(crate) struct Outbox {
    capacity: usize,
    capacity_bytes: usize,
    state: Mutex<State>,
    ready: Condvar,
    on_drained: OnDrained,
    counts: Arc<EventCounts>,
}

#[derive(Default)]
struct State {
    /// Each response with the approximate bytes of its events (0 for a
    /// control reply), counted once as it is queued.
    queue: VecDeque<(WatchResponse, usize)>,
    /// Event responses in `queue` (the rest are control replies)...
    event_batches: usize,
    /// ...and the approximate bytes of their events.
    event_bytes: usize,
    closed: bool,
    /// A push was refused; tell the engine when room appears.
    engine_waiting: bool,
    waker: Option<Waker>,
    /// Requests of the stream's handle the engine has not handled yet; with
    /// the control replies queued, held under [`MAX_UNANSWERED`].
    unanswered: usize,
    /// The stream's handle waits for room under [`MAX_UNANSWERED`].
    requests_waker: Option<Waker>,
    /// The stream's handle waits for the queue to close.
    closed_waker: Option<Waker>,
}

/// Requests a stream may have in flight: sent and not yet handled by the
/// engine, or answered with a reply its consumer has not taken (etcd blocks
/// a stream's receive loop on a full control channel the same way).
pub const MAX_UNANSWERED: usize = 1024;

impl State {
    fn requests_room(&self) -> bool {
        let control_replies = self.queue.len() - self.event_batches;
        self.unanswered + control_replies < MAX_UNANSWERED
    }

    /// Called when a request is answered: wakes a handle waiting for room.
    fn wake_requests(&mut self) {
        if self.requests_room()
            && let Some(w) = self.requests_waker.take()
        {
            w.wake();
        }
    }
}

impl Outbox {
    pub(crate) fn new(
        (capacity, capacity_bytes): (usize, usize),
        on_drained: OnDrained,
        counts: Arc<EventCounts>,
    ) -> Self {
        Outbox {
            capacity: capacity.max(1),
            capacity_bytes,
            state: Mutex::new(State::default()),
            ready: Condvar::new(),
            on_drained,
            counts,
        }
    }

    /// Queues an event batch unless the queue is full (one batch is always
    /// taken into an empty queue, however large).
    pub(crate) fn push_events(&self, resp: WatchResponse) -> Result<(), WatchResponse> {
        match self.push_events_batch(vec![((), resp)], |()| {}).pop() {
            Some(((), refused)) => Err(refused),
            None => Ok(()),
        }
    }

    /// Queues as many batches as fit, in order, under one lock and one wake-up;
    /// calls `sent` for each queued one and returns the refused tail.
    pub(crate) fn push_events_batch<T>(
        &self,
        batch: Vec<(T, WatchResponse)>,
        mut sent: impl FnMut(T),
    ) -> Vec<(T, WatchResponse)> {
        let mut st = self.state.lock();
        if st.closed {
            return Vec::new();
        }
        let mut batch = batch.into_iter().peekable();
        let mut events = 0;
        while let Some((_, resp)) = batch.peek() {
            let bytes = resp.events().iter().map(|e| e.approx_size()).sum::<usize>();
            if st.event_batches > 0
                && (st.event_batches >= self.capacity
                    || st.event_bytes + bytes > self.capacity_bytes)
            {
                break;
            }
            let (tag, resp) = batch.next().expect("peeked");
            events += resp.events().len();
            st.event_batches += 1;
            st.event_bytes += bytes;
            st.queue.push_back((resp, bytes));
            sent(tag);
        }
        let refused: Vec<_> = batch.collect();
        if !refused.is_empty() {
            st.engine_waiting = true;
        }
        self.counts
            .pending
            .fetch_add(events as i64, Ordering::Relaxed);
        Self::wake(st, &self.ready);
        refused
    }

    pub(crate) fn push_control(&self, resp: WatchResponse) {
        let mut st = self.state.lock();
        if !st.closed {
            st.queue.push_back((resp, 0));
            Self::wake(st, &self.ready);
        }
    }

    /// What waits for the consumer now.
    pub(crate) fn queued(&self) -> Queued {
        let st = self.state.lock();
        Queued {
            responses: st.queue.len(),
            events: st.queue.iter().map(|(r, _)| r.events().len()).sum(),
            bytes: st.event_bytes,
        }
    }

    /// The stream's handle sent the engine a request.
    pub(crate) fn request_sent(&self) {
        self.state.lock().unanswered += 1;
    }

    /// The engine handled one of the stream's requests.
    pub(crate) fn request_handled(&self) {
        let mut st = self.state.lock();
        st.unanswered = st.unanswered.saturating_sub(1);
        st.wake_requests();
    }

    /// Ready when the stream may send another request (see [`MAX_UNANSWERED`]);
    /// a closed stream is always ready (its requests are refused).
    pub(crate) fn poll_requests_room(&self, cx: &mut Context<'_>) -> Poll<()> {
        let mut st = self.state.lock();
        if st.closed || st.requests_room() {
            return Poll::Ready(());
        }
        st.requests_waker = Some(cx.waker().clone());
        Poll::Pending
    }

    /// Ready once the queue is closed: its consumer went away, or the engine
    /// closed the stream.
    pub(crate) fn poll_closed(&self, cx: &mut Context<'_>) -> Poll<()> {
        let mut st = self.state.lock();
        if st.closed {
            return Poll::Ready(());
        }
        st.closed_waker = Some(cx.waker().clone());
        Poll::Pending
    }

    /// Releases the lock, then wakes whoever waits: a blocked or an async reader.
    fn wake(mut st: MutexGuard<'_, State>, ready: &Condvar) {
        let waker = st.waker.take();
        drop(st);
        ready.notify_all();
        if let Some(w) = waker {
            w.wake();
        }
    }

    /// No more responses; drops what was queued. Idempotent.
    pub(crate) fn close(&self) {
        let mut st = self.state.lock();
        st.closed = true;
        let dropped: usize = st.queue.drain(..).map(|(r, _)| r.events().len()).sum();
        for w in [st.requests_waker.take(), st.closed_waker.take()]
            .into_iter()
            .flatten()
        {
            w.wake();
        }
        st.event_batches = 0;
        st.event_bytes = 0;
        self.counts
            .pending
            .fetch_sub(dropped as i64, Ordering::Relaxed);
        Self::wake(st, &self.ready);
    }

    /// `Ok(Some)`: a response; `Ok(None)`: empty for now; `Err(())`: closed.
    fn take(&self, st: &mut State) -> Result<Option<WatchResponse>, ()> {
        let Some((resp, bytes)) = st.queue.pop_front() else {
            return if st.closed { Err(()) } else { Ok(None) };
        };
        if let ResponseKind::Events { events, .. } = &resp.kind {
            st.event_batches -= 1;
            st.event_bytes -= bytes;
            self.counts
                .pending
                .fetch_sub(events.len() as i64, Ordering::Relaxed);
            self.counts
                .sent
                .fetch_add(events.len() as u64, Ordering::Relaxed);
            if st.engine_waiting {
                st.engine_waiting = false;
                (self.on_drained)();
            }
        } else {
            st.wake_requests();
        }
        Ok(Some(resp))
    }
}

/// The receiving end of a watch stream: every response, in order.
pub struct Responses {
    pub(crate) outbox: std::sync::Arc<Outbox>,
}

impl Responses {
    /// The next response without waiting; `None` if none is queued (or closed).
    pub fn try_recv(&self) -> Option<WatchResponse> {
        self.outbox
            .take(&mut self.outbox.state.lock())
            .ok()
            .flatten()
    }

    /// Waits up to `timeout` for the next response; `None` on timeout or close.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// use hark_mvcc::{EventKind, PutRequest, Store};
    /// use hark_watch::{ResponseKind, WatchConfig, WatchHub, WatchRequest};
    ///
    /// const WAIT: Duration = Duration::from_secs(5);
    ///
    /// let store = Store::in_memory();
    /// let hub = WatchHub::new(store.clone(), WatchConfig::default());
    /// let (stream, responses) = hub.new_stream();
    /// let id = stream.watch(WatchRequest::key("k"))?;
    /// assert!(matches!(responses.recv_timeout(WAIT).unwrap().kind, ResponseKind::Created));
    /// // Nothing more is owed yet: the wait times out.
    /// assert!(responses.recv_timeout(Duration::from_millis(50)).is_none());
    ///
    /// let rev = store.put(PutRequest::new("k", "v1"))?.header_revision;
    /// let response = responses.recv_timeout(WAIT).expect("the put");
    /// assert_eq!((response.watch_id, response.header_revision), (id, rev));
    /// let event = &response.events()[0];
    /// assert_eq!((event.kind, event.revision()), (EventKind::Put, rev));
    /// assert_eq!((&event.kv.key[..], &event.kv.value[..]), (&b"k"[..], &b"v1"[..]));
    ///
    /// // Once the stream's handle is dropped, the engine closes its receiver:
    /// // the wait ends early, with `None`.
    /// drop(stream);
    /// let started = std::time::Instant::now();
    /// assert!(responses.recv_timeout(WAIT).is_none());
    /// assert!(started.elapsed() < WAIT);
    /// drop(responses);
    /// hub.shutdown();
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn recv_timeout(&self, timeout: Duration) -> Option<WatchResponse> {
        let deadline = Instant::now() + timeout;
        let mut st = self.outbox.state.lock();
        loop {
            match self.outbox.take(&mut st) {
                Ok(Some(r)) => return Some(r),
                Err(()) => return None,
                Ok(None) => {
                    if self.outbox.ready.wait_until(&mut st, deadline).timed_out() {
                        return self.outbox.take(&mut st).ok().flatten();
                    }
                }
            }
        }
    }

    /// Waits, with no time limit, for the next response; `None` once the
    /// stream is closed (its handle dropped, or the engine stopped).
    pub fn recv_blocking(&self) -> Option<WatchResponse> {
        let mut st = self.outbox.state.lock();
        loop {
            match self.outbox.take(&mut st) {
                Ok(Some(r)) => return Some(r),
                Err(()) => return None,
                Ok(None) => self.outbox.ready.wait(&mut st),
            }
        }
    }

    /// The next response; `None` once the stream is closed. Runtime-agnostic.
    pub fn recv(&self) -> impl Future<Output = Option<WatchResponse>> + '_ {
        RecvFuture { responses: self }
    }

    /// [`Responses::recv`] as a poll, for a consumer that is itself a stream or
    /// future: `Ready(None)` once closed; when `Pending`, `cx` is woken by the
    /// next response.
    pub fn poll_recv(&self, cx: &mut Context<'_>) -> Poll<Option<WatchResponse>> {
        let mut st = self.outbox.state.lock();
        match self.outbox.take(&mut st) {
            Ok(Some(r)) => Poll::Ready(Some(r)),
            Err(()) => Poll::Ready(None),
            Ok(None) => {
                st.waker = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

/// A consumer that is gone takes nothing more: the stream's queue is closed,
/// so the engine stops filling it and the handle's `ready` resolves (a
/// server then sees its client's disconnect instead of waiting for room).
impl Drop for Responses {
    fn drop(&mut self) {
        self.outbox.close();
    }
}

struct RecvFuture<'a> {
    responses: &'a Responses,
}

impl Future for RecvFuture<'_> {
    type Output = Option<WatchResponse>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.responses.poll_recv(cx)
    }
}
