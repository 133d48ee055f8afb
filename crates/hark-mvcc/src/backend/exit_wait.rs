//! Process exit waits, briefly, for every open database to close.
//!
//! RocksDB's process-wide state (its default environment, thread pools and
//! their mutexes) is torn down by C++ static destructors when the process
//! exits. A database still closing on another thread at that moment aborts
//! the process ("pthread lock: Invalid argument"). That happens when the
//! last clone of a store is dropped on a background thread (a watch
//! engine's, a lessor's) just as `main` returns. The pure-Rust backend
//! counts itself too: its close stops its worker threads and syncs its
//! journal, and an exit that waits for that keeps the close whole.

use std::sync::{Condvar, Mutex, Once};
use std::time::Duration;

/// Long enough for a close in progress (RocksDB waits for its running
/// background jobs); short, since a database that is never closed keeps
/// exit waiting this long.
const MOST: Duration = Duration::from_secs(2);

static OPEN: Mutex<usize> = Mutex::new(0);
static ALL_CLOSED: Condvar = Condvar::new();

/// Counts one open RocksDB database until dropped: process exit waits
/// (at most 2 s) until every counted database has closed. A crate that
/// opens a RocksDB database of its own (the raft log) holds one beside
/// it, declared after the database so that it drops after it.
pub struct OpenDatabase(());

impl OpenDatabase {
    /// Call after the database opened: static destructors run in the
    /// reverse order of registration, and RocksDB's lazily built statics
    /// exist by then, so this hook runs before they are destroyed.
    pub fn count() -> OpenDatabase {
        static REGISTER: Once = Once::new();
        REGISTER.call_once(|| {
            // SAFETY: registers a plain `extern "C"` function taking no
            // arguments; it only touches Rust statics.
            unsafe {
                libc::atexit(wait_for_open_databases);
            }
        });
        *OPEN.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        OpenDatabase(())
    }
}

impl Drop for OpenDatabase {
    fn drop(&mut self) {
        *OPEN.lock().unwrap_or_else(|e| e.into_inner()) -= 1;
        ALL_CLOSED.notify_all();
    }
}

extern "C" fn wait_for_open_databases() {
    let open = OPEN.lock().unwrap_or_else(|e| e.into_inner());
    let _ = ALL_CLOSED.wait_timeout_while(open, MOST, |open| *open > 0);
}
