//! Caps on parked blocking queries: at most so many per client (by IP
//! address) and so many in all. A query takes a [`Slot`] before it parks and
//! gives it back when it wakes; past a cap it is answered 429 at once, in
//! Consul's own words, and counted.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Arc;

use parking_lot::Mutex;

/// Gauge: blocking queries parked now (from their first read, which they
/// make within the caps, to their wake-up).
const PARKED: &str = "hark_consul_blocking_queries_parked";
/// Counter: blocking queries refused, by the cap they met (`limit`).
const REFUSED: &str = "hark_consul_blocking_queries_refused_total";

/// Consul's 429 text for a client holding too many connections: the agent's
/// `http_max_conns_per_client` is enforced by hashicorp/go-connlimit, whose
/// 429 handler (`connlimit.go`, `tooManyConnsMsg`) writes this body. A
/// parked query holds its connection open, so it is the same situation.
pub(crate) const PER_CLIENT_REFUSAL: &str =
    "Your IP is issuing too many concurrent connections, please rate limit your calls\n";

/// Consul's 429 text when a server's own limit is spent and another server
/// may still serve the call: `ErrRetryElsewhere` of its request limits
/// (hashicorp/consul, `agent/consul/rate/handler.go`).
pub(crate) const TOTAL_REFUSAL: &str =
    "rate limit exceeded, try again later or against a different server";

/// The cap a refused query met.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// Its client already has the most parked queries one client may have.
    PerClient,
    /// The server already has the most parked queries it takes.
    Total,
}

impl Refusal {
    /// Consul's text for this refusal.
    pub(crate) fn message(self) -> &'static str {
        match self {
            Refusal::PerClient => PER_CLIENT_REFUSAL,
            Refusal::Total => TOTAL_REFUSAL,
        }
    }

    fn label(self) -> &'static str {
        match self {
            Refusal::PerClient => "per_client",
            Refusal::Total => "total",
        }
    }
}

/// The caps and how many queries each client has parked.
#[derive(Clone)]
pub(crate) struct ParkingLimits {
    inner: Arc<Inner>,
}

struct Inner {
    per_client: usize,
    total: usize,
    parked: Mutex<Parked>,
}

#[derive(Default)]
struct Parked {
    total: usize,
    /// Clients whose address is unknown share one allowance (`None`).
    by_client: HashMap<Option<IpAddr>, usize>,
}

/// One parked query's place under the caps, given back when dropped.
pub(crate) struct Slot {
    limits: ParkingLimits,
    client: Option<IpAddr>,
}

impl ParkingLimits {
    /// Caps of `per_client` and `total` parked queries; 0 is no cap (as
    /// Consul's `http_max_conns_per_client = 0`).
    pub(crate) fn new(per_client: usize, total: usize) -> ParkingLimits {
        metrics::describe_gauge!(
            PARKED,
            "Consul blocking queries parked now (from their first read to their wake-up)."
        );
        metrics::describe_counter!(
            REFUSED,
            "Consul blocking queries answered 429 because a cap on parked queries was reached, by the cap (per_client, total)."
        );
        // Every series from the first scrape, at zero.
        for refusal in [Refusal::PerClient, Refusal::Total] {
            metrics::counter!(REFUSED, "limit" => refusal.label()).increment(0);
        }
        metrics::gauge!(PARKED).increment(0.0);
        ParkingLimits {
            inner: Arc::new(Inner {
                per_client,
                total,
                parked: Mutex::new(Parked::default()),
            }),
        }
    }

    /// A slot for one more parked query of `client`, or the cap it meets
    /// (counted).
    pub(crate) fn admit(&self, client: Option<IpAddr>) -> Result<Slot, Refusal> {
        let client = client.map(|ip| ip.to_canonical());
        let mut parked = self.inner.parked.lock();
        let of_client = parked.by_client.get(&client).copied().unwrap_or(0);
        let refusal = if reached(self.inner.per_client, of_client) {
            Some(Refusal::PerClient)
        } else if reached(self.inner.total, parked.total) {
            Some(Refusal::Total)
        } else {
            None
        };
        if let Some(refusal) = refusal {
            metrics::counter!(REFUSED, "limit" => refusal.label()).increment(1);
            return Err(refusal);
        }
        parked.total += 1;
        *parked.by_client.entry(client).or_default() += 1;
        metrics::gauge!(PARKED).increment(1.0);
        Ok(Slot {
            limits: self.clone(),
            client,
        })
    }
}

fn reached(cap: usize, count: usize) -> bool {
    cap != 0 && count >= cap
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut parked = self.limits.inner.parked.lock();
        parked.total -= 1;
        if let Some(count) = parked.by_client.get_mut(&self.client) {
            *count -= 1;
            if *count == 0 {
                parked.by_client.remove(&self.client);
            }
        }
        metrics::gauge!(PARKED).decrement(1.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_client_and_the_whole_server_are_capped_and_slots_come_back() {
        let limits = ParkingLimits::new(2, 3);
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        let b: IpAddr = "10.0.0.2".parse().unwrap();
        let first = limits.admit(Some(a)).unwrap();
        let _second = limits.admit(Some(a)).unwrap();
        assert_eq!(limits.admit(Some(a)).err(), Some(Refusal::PerClient));
        let _third = limits.admit(Some(b)).unwrap();
        assert_eq!(limits.admit(Some(b)).err(), Some(Refusal::Total));
        drop(first);
        let _again = limits.admit(Some(a)).unwrap();
        // The same client, as an IPv4-mapped IPv6 address.
        let mapped: IpAddr = "::ffff:10.0.0.1".parse().unwrap();
        assert_eq!(limits.admit(Some(mapped)).err(), Some(Refusal::PerClient));
    }

    #[test]
    fn a_cap_of_zero_is_no_cap() {
        let limits = ParkingLimits::new(0, 0);
        let slots: Vec<_> = (0..100).map(|_| limits.admit(None).unwrap()).collect();
        assert_eq!(slots.len(), 100);
    }
}
