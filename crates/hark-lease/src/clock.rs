//! The lessor's clock, replaceable in tests.

use std::sync::Arc;
use std::time::Instant;

/// Where the lessor reads the time: the real clock, or a test's.
#[derive(Clone)]
pub struct Clock(Arc<dyn Fn() -> Instant + Send + Sync>);

impl Clock {
    /// A clock that asks `now` for the time.
    pub fn new(now: impl Fn() -> Instant + Send + Sync + 'static) -> Self {
        Clock(Arc::new(now))
    }

    /// The time now, by this clock.
    pub fn now(&self) -> Instant {
        (self.0)()
    }
}

impl Default for Clock {
    fn default() -> Self {
        Clock::new(Instant::now)
    }
}

impl std::fmt::Debug for Clock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Clock")
    }
}
