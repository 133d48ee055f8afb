//! The endpoints a client was given and which one its calls use; shared by
//! unary calls and the watch stream, which move on together when one fails.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;

use crate::secure::Credentials;

/// The endpoints and which one is in use.
#[derive(Clone)]
pub(crate) struct Endpoints {
    channels: Arc<Vec<Channel>>,
    current: Arc<AtomicUsize>,
    pub(crate) credentials: Credentials,
}

/// A channel whose calls carry the client's token.
pub(crate) type Conn = InterceptedService<Channel, Credentials>;

impl Endpoints {
    pub fn new(channels: Vec<Channel>, credentials: Credentials) -> Self {
        Endpoints {
            channels: Arc::new(channels),
            current: Arc::default(),
            credentials,
        }
    }

    /// Calls go to endpoint `i` from now on.
    pub fn use_endpoint(&self, i: usize) {
        self.current.store(i, Ordering::Relaxed);
    }

    pub fn current(&self) -> (usize, Conn) {
        let i = self.current.load(Ordering::Relaxed) % self.channels.len();
        (i, self.conn(i))
    }

    pub fn conn(&self, i: usize) -> Conn {
        InterceptedService::new(self.channels[i].clone(), self.credentials.clone())
    }

    /// The bare channel of endpoint `i` (for Authenticate).
    pub fn channel(&self, i: usize) -> Channel {
        self.channels[i].clone()
    }

    /// Endpoint `i` failed: move on to the next (unless someone already did).
    pub fn failed(&self, i: usize) {
        let next = (i + 1) % self.channels.len();
        let _ = self
            .current
            .compare_exchange(i, next, Ordering::Relaxed, Ordering::Relaxed);
    }

    pub fn len(&self) -> usize {
        self.channels.len()
    }
}
