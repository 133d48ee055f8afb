//! `hark-watch`: etcd's watch semantics over a [`hark_mvcc::Store`].
//!
//! A [`WatchHub`] runs one engine thread per store. Streams ([`WatchStream`])
//! create and cancel watchers; everything they are sent arrives in order on the
//! paired [`Responses`]. The engine keeps etcd's three kinds of watchers:
//!
//! * **synced** — caught up; each committed revision is delivered as it arrives;
//! * **unsynced** — catching up, from an in-memory window of recent revisions
//!   (or the store's history when older), in bounded steps;
//! * **victims** — their stream's consumer fell behind; each holds the one
//!   batch it could not deliver and costs nothing per further event until the
//!   consumer makes room, then catches up.
//!
//! The store's writer only enqueues committed revisions: it never waits for
//! the engine or any watcher. Each event is allocated once and shared (`Arc`)
//! by every receiver, and encoded at most once ([`WatchEvent::encoded`]).
//!
//! # Example
//!
//! ```
//! use std::time::Duration;
//!
//! use bytes::Bytes;
//! use hark_mvcc::{DeleteRangeRequest, EventKind, PutRequest, Store};
//! use hark_watch::{ResponseKind, WatchConfig, WatchHub, WatchRequest};
//!
//! const WAIT: Duration = Duration::from_secs(5);
//!
//! let store = Store::in_memory();
//! let hub = WatchHub::new(store.clone(), WatchConfig::default());
//! let first = store.put(PutRequest::new("config/color", "blue"))?.header_revision;
//!
//! // One stream; every reply to it arrives, in order, on `responses`.
//! let (stream, responses) = hub.new_stream();
//! // Every change under config/ from `first` on: history, then live.
//! let id = stream.watch(WatchRequest::prefix("config/").from_revision(first))?;
//! let created = responses.recv_timeout(WAIT).expect("created");
//! assert!(matches!(created.kind, ResponseKind::Created));
//! assert_eq!(created.watch_id, id);
//!
//! store.put(PutRequest::new("elsewhere", "not watched"))?;
//! let put = store.put(PutRequest::new("config/size", "L"))?.header_revision;
//! let del = store
//!     .delete_range(DeleteRangeRequest::new("config/color", ""))?
//!     .header_revision;
//!
//! let mut seen = Vec::new();
//! while seen.len() < 3 {
//!     let response = responses.recv_timeout(WAIT).expect("events");
//!     assert_eq!(response.watch_id, id);
//!     for e in response.events() {
//!         seen.push((e.revision(), e.kind, e.kv.key.clone(), e.kv.value.clone()));
//!     }
//! }
//! let (k, v) = (Bytes::from_static, Bytes::from_static);
//! assert_eq!(
//!     seen,
//!     [
//!         (first, EventKind::Put, k(b"config/color"), v(b"blue")),
//!         (put, EventKind::Put, k(b"config/size"), v(b"L")),
//!         // A delete carries only the key and its revision, as etcd's does.
//!         (del, EventKind::Delete, k(b"config/color"), Bytes::new()),
//!     ]
//! );
//!
//! // Close the stream, then stop the engine thread.
//! drop((stream, responses));
//! hub.shutdown();
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

mod command;
mod config;
mod engine;
mod event;
mod ids;
mod index;
mod outbox;
mod request;
mod response;
mod stream;
mod window_share;

pub use config::{DEFAULT_WINDOW_BYTES, WatchConfig};
pub use event::WatchEvent;
pub use outbox::{MAX_UNANSWERED, Responses};
pub use request::{WatchError, WatchRequest};
pub use response::{Events, NO_WATCH_ID, ResponseKind, WatchId, WatchResponse};
pub use stream::{EnginePause, StreamLoad, WatchHub, WatchStream, WindowUsage};
