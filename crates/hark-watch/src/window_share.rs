//! What a revision's events gain in memory while they are in the engine's
//! window of recent revisions, counted against the window's byte budget as
//! it is gained: the encoded forms a stream caches in an event once it is
//! sent (one per form, with and without the previous value), and a
//! previous value read after the event was published. Counting only what
//! an event held when it entered, the window held two to three times its
//! budget (measured under the Kubernetes benchmark: 52–92 MiB held while
//! 34 MiB were counted).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use parking_lot::Mutex;

/// One revision's share: what its events gained while in the window.
#[derive(Debug)]
pub(crate) struct WindowShare {
    /// Locked so that a gain and the revision's leaving never interleave:
    /// `total` is exactly the sum over the revisions in the window.
    gains: Mutex<Gains>,
    /// Every revision's gains in the window, together (the engine's).
    total: Arc<AtomicUsize>,
}

#[derive(Debug)]
struct Gains {
    /// The revision is still in the window.
    in_window: bool,
    /// What its events gained since it entered.
    bytes: usize,
}

impl WindowShare {
    /// The share of a revision entering the window.
    pub(crate) fn entering(total: Arc<AtomicUsize>) -> Self {
        WindowShare {
            gains: Mutex::new(Gains {
                in_window: true,
                bytes: 0,
            }),
            total,
        }
    }

    /// An event of the revision now holds `bytes` more.
    pub(crate) fn grew(&self, bytes: usize) {
        let mut gains = self.gains.lock();
        if gains.in_window {
            gains.bytes += bytes;
            self.total.fetch_add(bytes, Ordering::Relaxed);
        }
    }

    /// The revision left the window: its gains no longer count (its events
    /// may live on in streams' queues, bounded there).
    pub(crate) fn left(&self) {
        let mut gains = self.gains.lock();
        if gains.in_window {
            gains.in_window = false;
            self.total.fetch_sub(gains.bytes, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_total_is_the_sum_of_the_gains_of_revisions_still_in_the_window() {
        let total = Arc::new(AtomicUsize::new(0));
        let a = WindowShare::entering(total.clone());
        let b = WindowShare::entering(total.clone());
        a.grew(10);
        b.grew(5);
        assert_eq!(total.load(Ordering::Relaxed), 15);
        a.left();
        assert_eq!(total.load(Ordering::Relaxed), 5);
        a.grew(7); // an event of a revision gone from the window: not counted
        a.left();
        assert_eq!(total.load(Ordering::Relaxed), 5);
        b.left();
        assert_eq!(total.load(Ordering::Relaxed), 0);
    }

    /// Gains racing the revision's leaving from other threads: whatever
    /// the interleaving, nothing is left counted once it has left.
    #[test]
    fn gains_racing_the_leaving_leave_nothing_counted() {
        for _ in 0..200 {
            let total = Arc::new(AtomicUsize::new(0));
            let share = Arc::new(WindowShare::entering(total.clone()));
            let growers: Vec<_> = (0..3)
                .map(|_| {
                    let share = share.clone();
                    std::thread::spawn(move || {
                        for _ in 0..100 {
                            share.grew(3);
                        }
                    })
                })
                .collect();
            share.left();
            for g in growers {
                g.join().unwrap();
            }
            assert_eq!(total.load(Ordering::Relaxed), 0);
        }
    }
}
