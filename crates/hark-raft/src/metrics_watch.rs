//! openraft 0.10 hands its metrics out through its runtime's watch channel,
//! whose receiver wraps tokio's without exposing it; these are the calls of
//! tokio's receiver that hark-raft waits on its metrics with.

use openraft::alias::WatchReceiverOf;
use openraft::async_runtime::{RecvError, WatchReceiver};
use tokio::sync::watch::Ref;

use crate::types::TypeConfig;

pub(crate) trait MetricsWatch<T: 'static> {
    /// The current value.
    fn borrow(&self) -> Ref<'_, T>;

    /// Waits until the value satisfies `holds`; an error once the sender
    /// (openraft's core) is gone.
    async fn wait_for(&mut self, holds: impl FnMut(&T) -> bool) -> Result<Ref<'_, T>, RecvError>;

    /// Waits for the next change. openraft's channel keeps no per-receiver
    /// mark of what was seen: this may return for a change already
    /// borrowed, which the loops here only check again.
    async fn changed(&mut self) -> Result<(), RecvError>;
}

impl<T: Send + Sync + 'static> MetricsWatch<T> for WatchReceiverOf<TypeConfig, T> {
    fn borrow(&self) -> Ref<'_, T> {
        self.borrow_watched()
    }

    async fn wait_for(
        &mut self,
        mut holds: impl FnMut(&T) -> bool,
    ) -> Result<Ref<'_, T>, RecvError> {
        loop {
            if holds(&self.borrow_watched()) {
                return Ok(self.borrow_watched());
            }
            WatchReceiver::changed(self).await?;
        }
    }

    async fn changed(&mut self) -> Result<(), RecvError> {
        WatchReceiver::changed(self).await
    }
}
