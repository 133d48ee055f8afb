//! The lessor's settings.

use std::time::Duration;

use crate::clock::Clock;

/// The lessor's settings.
#[derive(Debug, Clone)]
pub struct LessorConfig {
    /// Shorter TTLs are raised to this (etcd: 1.5 election timeouts, 2 s by default).
    pub min_ttl: i64,
    /// How often the expiry thread looks for expired leases (etcd: 500 ms).
    pub check_interval: Duration,
    /// Where time comes from (the real clock by default).
    pub clock: Clock,
}

impl Default for LessorConfig {
    fn default() -> Self {
        LessorConfig {
            min_ttl: 2,
            check_interval: Duration::from_millis(500),
            clock: Clock::default(),
        }
    }
}
