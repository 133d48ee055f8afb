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

pub use config::WatchConfig;
pub use event::WatchEvent;
pub use outbox::{MAX_UNANSWERED, Responses};
pub use request::{WatchError, WatchRequest};
pub use response::{Events, NO_WATCH_ID, ResponseKind, WatchId, WatchResponse};
pub use stream::{EnginePause, StreamLoad, WatchHub, WatchStream};
