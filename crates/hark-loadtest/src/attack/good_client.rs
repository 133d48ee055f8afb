//! The well-behaved client that runs through every attack: puts at a fixed
//! rate as root, each launched on its tick whether or not the last one
//! returned (so a stalled server shows as many slow puts, not as fewer
//! puts), and one watch over its keys that must deliver every put.

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hark_client::WatchOptions;

/// Puts per second.
const RATE: u64 = 50;
/// A put that takes longer counts as failed (and as this long in the p99).
const PUT_TIMEOUT: Duration = Duration::from_secs(10);
const PREFIX: &str = "good/";

#[derive(Clone, Copy)]
struct PutSample {
    started: Instant,
    seq: u64,
    /// How long it took; `None` if it failed or timed out.
    took: Option<Duration>,
}

#[derive(Default)]
struct State {
    done: Vec<PutSample>,
    /// Puts launched and not finished: seq → launch time.
    in_flight: BTreeMap<u64, Instant>,
    /// Sequence numbers whose event the watch delivered.
    seen: HashSet<u64>,
    watch_error: Option<String>,
}

pub struct GoodClient {
    state: Arc<Mutex<State>>,
    stop: Arc<AtomicBool>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
    /// The good client's own runtime: it stands for a client on another
    /// machine, so its puts never wait in a run queue behind the attacker's
    /// tasks in this process.
    runtime: Option<tokio::runtime::Runtime>,
}

/// The puts launched within a window.
pub struct Window {
    pub count: usize,
    pub failures: usize,
    latencies: Vec<Duration>,
}

impl Window {
    /// The 99th percentile (failed puts count as [`PUT_TIMEOUT`]).
    pub fn p99(&self) -> Option<Duration> {
        if self.latencies.is_empty() {
            return None;
        }
        let mut sorted = self.latencies.clone();
        sorted.sort_unstable();
        let rank = ((sorted.len() as f64) * 0.99).ceil() as usize;
        Some(sorted[rank.clamp(1, sorted.len()) - 1])
    }
}

fn lock(state: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    state.lock().unwrap_or_else(|e| e.into_inner())
}

impl GoodClient {
    /// Connects as root (the options `Server::start` set), creates the
    /// watch, and starts writing once the watch exists.
    pub async fn start(endpoints: &[String]) -> Result<GoodClient, String> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("good-client")
            .enable_all()
            .build()
            .map_err(|e| format!("good client's runtime: {e}"))?;
        let endpoints = endpoints.to_vec();
        let started = runtime.spawn(async move { GoodClient::start_here(&endpoints).await });
        let mut good = started.await.map_err(|e| format!("good client: {e}"))??;
        good.runtime = Some(runtime);
        Ok(good)
    }

    /// [`GoodClient::start`]'s work, on the good client's runtime (the
    /// connection's tasks live on the runtime that makes it).
    async fn start_here(endpoints: &[String]) -> Result<GoodClient, String> {
        let client = crate::secure::connect(endpoints)
            .await
            .map_err(|e| format!("good client: {e}"))?;
        let state: Arc<Mutex<State>> = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let mut watch = client
            .watch(
                PREFIX,
                WatchOptions {
                    prefix: true,
                    created_notify: true,
                    ..Default::default()
                },
            )
            .await
            .map_err(|e| format!("good client's watch: {e}"))?;
        match tokio::time::timeout(Duration::from_secs(10), watch.next()).await {
            Ok(Some(Ok(update))) if update.created => {}
            other => return Err(format!("good client's watch was not created: {other:?}")),
        }
        let watcher = {
            let state = state.clone();
            tokio::spawn(async move {
                while let Some(update) = watch.next().await {
                    match update {
                        Ok(update) => {
                            let mut state = lock(&state);
                            for event in update.events {
                                let seq = event.kv.as_ref().and_then(|kv| {
                                    std::str::from_utf8(&kv.key)
                                        .ok()?
                                        .strip_prefix(PREFIX)?
                                        .parse::<u64>()
                                        .ok()
                                });
                                if let Some(seq) = seq {
                                    state.seen.insert(seq);
                                }
                            }
                        }
                        Err(e) => {
                            lock(&state).watch_error = Some(e.to_string());
                            return;
                        }
                    }
                }
            })
        };
        let writer = {
            let (state, stop) = (state.clone(), stop.clone());
            tokio::spawn(async move {
                let mut tick = tokio::time::interval(Duration::from_micros(1_000_000 / RATE));
                tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                let mut seq = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    tick.tick().await;
                    seq += 1;
                    let started = Instant::now();
                    lock(&state).in_flight.insert(seq, started);
                    let (client, state) = (client.clone(), state.clone());
                    tokio::spawn(async move {
                        let put = client.put(format!("{PREFIX}{seq:012}"), "fine");
                        let took = match tokio::time::timeout(PUT_TIMEOUT, put).await {
                            Ok(Ok(_)) => Some(started.elapsed()),
                            _ => None,
                        };
                        let mut state = lock(&state);
                        state.in_flight.remove(&seq);
                        state.done.push(PutSample { started, seq, took });
                    });
                }
            })
        };
        Ok(GoodClient {
            state,
            stop,
            tasks: vec![watcher, writer],
            runtime: None,
        })
    }

    /// Waits until every put launched before `until` has finished (each
    /// is bounded by [`PUT_TIMEOUT`]).
    pub async fn settle(&self, until: Instant) {
        let give_up = Instant::now() + PUT_TIMEOUT + Duration::from_secs(1);
        loop {
            let pending = lock(&self.state)
                .in_flight
                .values()
                .any(|started| *started < until);
            if !pending || Instant::now() > give_up {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    pub fn puts_between(&self, from: Instant, until: Instant) -> Window {
        let state = lock(&self.state);
        let puts: Vec<&PutSample> = state
            .done
            .iter()
            .filter(|p| p.started >= from && p.started < until)
            .collect();
        Window {
            count: puts.len(),
            failures: puts.iter().filter(|p| p.took.is_none()).count(),
            latencies: puts.iter().map(|p| p.took.unwrap_or(PUT_TIMEOUT)).collect(),
        }
    }

    /// Successful puts launched in the window whose event the watch has not
    /// delivered after up to 5 s.
    pub async fn missing_events(&self, from: Instant, until: Instant) -> usize {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let missing = {
                let state = lock(&self.state);
                state
                    .done
                    .iter()
                    .filter(|p| p.started >= from && p.started < until && p.took.is_some())
                    .filter(|p| !state.seen.contains(&p.seq))
                    .count()
            };
            if missing == 0 || Instant::now() > deadline {
                return missing;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    pub fn watch_error(&self) -> Option<String> {
        lock(&self.state).watch_error.clone()
    }

    pub fn stop(self) {
        // Dropping stops it.
    }
}

impl Drop for GoodClient {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for task in &self.tasks {
            task.abort();
        }
        // Dropped inside the caller's runtime, where blocking is not allowed.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn p99_is_the_value_at_the_99th_percentile_rank() {
        let window = |ms: Vec<u64>| Window {
            count: ms.len(),
            failures: 0,
            latencies: ms.into_iter().map(Duration::from_millis).collect(),
        };
        // 100 samples: the 99th smallest.
        let w = window((1..=100).collect());
        assert_eq!(w.p99(), Some(Duration::from_millis(99)));
        // Few samples: the largest.
        assert_eq!(window(vec![3, 1, 2]).p99(), Some(Duration::from_millis(3)));
        assert_eq!(window(vec![]).p99(), None);
    }
}
