//! The server's stop signal as its long-running tasks see it: a watch
//! channel that turns `true` once shutdown has begun.

use tokio::sync::watch;

/// Resolves when shutdown has begun (or the server is gone).
pub async fn shutting_down(rx: &mut watch::Receiver<bool>) {
    let _ = rx.wait_for(|stopping| *stopping).await;
}
