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
    /// Added to every lease's TTL when this lessor becomes primary (etcd
    /// extends by an election timeout, PR #4778): a keep-alive the old
    /// leader answered just before it lost leadership still counts.
    pub promotion_extension: Duration,
}

impl Default for LessorConfig {
    fn default() -> Self {
        LessorConfig {
            min_ttl: 2,
            check_interval: Duration::from_millis(500),
            clock: Clock::default(),
            promotion_extension: Duration::ZERO,
        }
    }
}
