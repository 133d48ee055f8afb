//! The member's long-running tasks, each with a name, and the one order in
//! which they stop.
//!
//! Shutdown, as [`crate::RunningServer::shutdown`] carries it out:
//! 1. [`Stop`] is raised: every listener stops accepting and says GOAWAY,
//!    watch and keep-alive streams end with "server stopped", background
//!    loops (publish, auto-compaction, certificate reload, leadership) return.
//! 2. Listeners finish their in-flight requests, for at most the drain
//!    timeout; those still busy then are aborted, and named in the log.
//! 3. Stream tasks and background tasks are joined.
//! 4. The replicated log stops: nothing more is applied.
//! 5. The lessor, the auth store, the watch engine and the store close, in
//!    that order, off the runtime (the store's close joins its threads).

use std::future::Future;
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// The stop signal as tasks see it: raised once, when shutdown begins.
#[derive(Clone, Default)]
pub struct Stop(CancellationToken);

impl Stop {
    /// Resolves once shutdown has begun.
    pub async fn raised(&self) {
        self.0.cancelled().await
    }
}

/// A task with the name shutdown reports it by.
struct Named {
    name: String,
    handle: JoinHandle<()>,
}

/// The member's tasks: listeners, background loops, and the tasks of
/// long-lived streams (watch, lease keep-alive), which are many and nameless.
#[derive(Default)]
pub struct Tasks {
    stop: Stop,
    streams: TaskTracker,
    listeners: Vec<Named>,
    background: Vec<Named>,
}

impl Tasks {
    pub fn stop(&self) -> Stop {
        self.stop.clone()
    }

    /// Where stream tasks are spawned, so that shutdown can wait for them.
    pub fn streams(&self) -> TaskTracker {
        self.streams.clone()
    }

    /// A listener's serving loop; it must end by itself once [`Stop`] is
    /// raised and its connections are done.
    pub fn listener(&mut self, name: String, serving: impl Future<Output = ()> + Send + 'static) {
        self.listeners.push(Named {
            name,
            handle: tokio::spawn(serving),
        });
    }

    /// A loop that runs until shutdown: it is dropped where it waits when
    /// [`Stop`] is raised.
    pub fn background(&mut self, name: &str, work: impl Future<Output = ()> + Send + 'static) {
        let stop = self.stop();
        self.background.push(Named {
            name: name.to_string(),
            handle: tokio::spawn(async move {
                tokio::select! {
                    _ = work => {}
                    _ = stop.raised() => {}
                }
            }),
        });
    }

    /// Steps 1 to 3 of the module's order.
    pub async fn stop_all(self, drain: Duration) {
        self.stop.0.cancel();
        join_or_abort("listener", self.listeners, drain).await;
        self.streams.close();
        if tokio::time::timeout(drain, self.streams.wait())
            .await
            .is_err()
        {
            tracing::warn!(
                open = self.streams.len(),
                "stream tasks did not end in time; they close with their connections"
            );
        }
        join_or_abort("background task", self.background, drain).await;
    }
}

/// Waits for `tasks` for at most `limit`, then aborts the ones left.
async fn join_or_abort(kind: &str, tasks: Vec<Named>, limit: Duration) {
    let deadline = tokio::time::Instant::now() + limit;
    let mut aborted = Vec::new();
    for mut task in tasks {
        if tokio::time::timeout_at(deadline, &mut task.handle)
            .await
            .is_err()
        {
            // A client that neither finishes its requests nor closes its
            // connection (or answers the GOAWAY ping) must not keep the
            // store open.
            tracing::warn!(%kind, name = %task.name, "did not stop in time; aborted");
            task.handle.abort();
            aborted.push(task.handle);
        }
    }
    for handle in aborted {
        let _ = handle.await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn stop_ends_background_loops_and_waits_for_stream_tasks() {
        let mut tasks = Tasks::default();
        let (ended_tx, mut ended_rx) = tokio::sync::mpsc::unbounded_channel();
        let stop = tasks.stop();
        let tx = ended_tx.clone();
        tasks.streams().spawn(async move {
            stop.raised().await;
            tx.send("stream").unwrap();
        });
        tasks.background("forever", std::future::pending());
        let stop = tasks.stop();
        let tx = ended_tx.clone();
        tasks.listener("listener".into(), async move {
            stop.raised().await;
            tx.send("listener").unwrap();
        });
        tasks.stop_all(Duration::from_secs(5)).await;
        drop(ended_tx);
        let mut ended = Vec::new();
        while let Some(what) = ended_rx.recv().await {
            ended.push(what);
        }
        ended.sort();
        assert_eq!(ended, ["listener", "stream"]);
    }

    #[tokio::test]
    async fn a_listener_that_never_ends_is_aborted_at_the_drain_timeout() {
        let mut tasks = Tasks::default();
        let (held_tx, held_rx) = tokio::sync::oneshot::channel::<()>();
        tasks.listener("stuck".into(), async move {
            let _held = held_tx;
            std::future::pending::<()>().await;
        });
        let stop = tasks.stop();
        tasks.listener("prompt".into(), async move { stop.raised().await });
        tasks.stop_all(Duration::from_millis(50)).await;
        // Aborting dropped the task's future, and what it held with it.
        assert!(held_rx.await.is_err());
    }
}
