//! `check perf`: etcdctl's write-load check. Puts of a 256-byte key and a
//! 1 KiB value under a prefix at a fixed rate from many clients for 60 s,
//! then judged against etcdctl's thresholds: throughput over 90 % of the
//! load's rate, slowest put at most 0.5 s, standard deviation at most 0.1 s,
//! and no errors. The output lines and exit codes are etcdctl 3.5's.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use clap::{Args, Subcommand};
use hark_client::{Client, pb};
use tokio::sync::{Mutex, mpsc};

use crate::ctx::Ctx;
use crate::exit::{EXIT_BAD_FEATURE, EXIT_ERROR, EXIT_INVALID_INPUT, Exit, Outcome};
use crate::progress::Progress;

#[derive(Subcommand)]
pub(crate) enum CheckCommand {
    /// Check the performance of the etcd cluster
    Perf(PerfArgs),
}

#[derive(Args)]
pub(crate) struct PerfArgs {
    /// The performance check's workload model. Accepted workloads: s(small), m(medium), l(large), xl(xLarge)
    #[arg(long, default_value = "s")]
    load: String,
    /// The prefix for writing the performance check's keys.
    #[arg(long, default_value = "/etcdctl-check-perf/")]
    prefix: String,
    /// Compact storage with last revision after test is finished.
    #[arg(long)]
    auto_compact: bool,
    /// Defragment storage after test is finished.
    #[arg(long)]
    auto_defrag: bool,
    /// Seconds the load runs (etcdctl always runs 60)
    #[arg(long, default_value_t = 60)]
    duration: u64,
}

/// etcdctl's value: 1 KiB of zero bytes, shared by every put.
static VALUE: [u8; 1024] = [0; 1024];

/// One of etcdctl's load profiles: puts a second, and concurrent clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Load {
    rate: u32,
    clients: usize,
}

/// etcdctl's names for its profiles (`checkPerfCfgMap`).
fn load_named(name: &str) -> Option<Load> {
    let (rate, clients) = match name {
        "s" | "small" => (150, 50),
        "m" | "medium" => (1000, 200),
        "l" | "large" => (8000, 500),
        "xl" | "xLarge" => (15000, 1000),
        _ => return None,
    };
    Some(Load { rate, clients })
}

/// What etcd's `report` package reports of a run.
#[derive(Debug, Default)]
struct Stats {
    /// Seconds each successful put took.
    latencies: Vec<f64>,
    /// Failed puts by error message.
    errors: BTreeMap<String, usize>,
    /// Seconds from the first put sent to the last answered.
    total: f64,
}

impl Stats {
    fn rps(&self) -> f64 {
        self.latencies.len() as f64 / self.total.max(f64::MIN_POSITIVE)
    }

    fn slowest(&self) -> f64 {
        self.latencies.iter().copied().fold(0.0, f64::max)
    }

    /// The population standard deviation, as etcd's report computes it.
    fn stddev(&self) -> f64 {
        let n = self.latencies.len() as f64;
        if n == 0.0 {
            return 0.0;
        }
        let mean = self.latencies.iter().sum::<f64>() / n;
        let variance = self
            .latencies
            .iter()
            .map(|l| (l - mean) * (l - mean))
            .sum::<f64>()
            / n;
        variance.sqrt()
    }

    /// etcdctl's verdict lines, and whether the check passed.
    fn verdict(&self, rate: u32) -> (Vec<String>, bool) {
        let mut lines = Vec::new();
        let mut ok = true;
        if !self.errors.is_empty() {
            lines.push("FAIL: too many errors".to_string());
            for (error, count) in &self.errors {
                lines.push(format!("FAIL: ERROR({error}) -> {count}"));
            }
            ok = false;
        }
        let rps = self.rps();
        if rps / f64::from(rate) <= 0.9 {
            lines.push(format!(
                "FAIL: Throughput too low: {} writes/s",
                rps as i64 + 1
            ));
            ok = false;
        } else {
            lines.push(format!("PASS: Throughput is {} writes/s", rps as i64 + 1));
        }
        let slowest = self.slowest();
        if slowest > 0.5 {
            lines.push(format!("Slowest request took too long: {slowest:.6}s"));
            ok = false;
        } else {
            lines.push(format!("PASS: Slowest request took {slowest:.6}s"));
        }
        let stddev = self.stddev();
        if stddev > 0.1 {
            lines.push(format!("Stddev too high: {stddev:.6}s"));
            ok = false;
        } else {
            lines.push(format!("PASS: Stddev is {stddev:.6}s"));
        }
        lines.push(if ok { "PASS" } else { "FAIL" }.to_string());
        (lines, ok)
    }
}

pub(crate) async fn check(ctx: &Ctx, command: CheckCommand) -> Outcome {
    match command {
        CheckCommand::Perf(args) => perf(ctx, args).await,
    }
}

async fn perf(ctx: &Ctx, args: PerfArgs) -> Outcome {
    let load = load_named(&args.load).ok_or_else(|| {
        Exit::new(
            EXIT_BAD_FEATURE,
            format!("unknown load option {}", args.load),
        )
    })?;
    let mut clients = Vec::with_capacity(load.clients);
    for _ in 0..load.clients {
        clients.push(ctx.client().await?);
    }
    let first = clients[0].clone();
    let existing = ctx
        .timed(first.range(pb::RangeRequest {
            key: args.prefix.clone().into(),
            range_end: hark_client::prefix_end(args.prefix.as_bytes()).into(),
            limit: 1,
            ..Default::default()
        }))
        .await?;
    if !existing.kvs.is_empty() {
        return Err(Exit::new(
            EXIT_INVALID_INPUT,
            format!(
                "prefix {:?} has keys. Delete with 'etcdctl del --prefix {}' first",
                args.prefix, args.prefix
            ),
        ));
    }

    let progress = Progress::seconds("harkctl/check.rs", args.duration);
    progress.set_message("putting");
    let stats = run_load(
        &clients,
        load,
        &args.prefix,
        Duration::from_secs(args.duration),
        &progress,
    )
    .await;
    progress.finish();

    // etcdctl's cleanup: the prefix deleted, then compaction and defrag
    // when asked for.
    let deleted = tokio::time::timeout(
        Duration::from_secs(30),
        first.delete_prefix(args.prefix.clone()),
    )
    .await;
    match deleted {
        Ok(Ok(resp)) => {
            if args.auto_compact {
                let revision = resp.header.map(|h| h.revision).unwrap_or(0);
                ctx.timed(first.compact(revision, false)).await?;
                println!("compacted revision {revision}");
            }
        }
        Ok(Err(e)) => println!("FAIL: Cleanup failed during key deletion: ERROR({e})"),
        Err(_) => {
            println!("FAIL: Cleanup failed during key deletion: ERROR(context deadline exceeded)")
        }
    }
    if args.auto_defrag {
        crate::maintenance::defrag(ctx).await?;
    }

    let (lines, ok) = stats.verdict(load.rate);
    for line in lines {
        println!("{line}");
    }
    if ok {
        Ok(())
    } else {
        Err(Exit::silent(EXIT_ERROR))
    }
}

/// Puts at `load.rate` a second for `duration`, `load.clients` at a time,
/// each worker on its own connection.
async fn run_load(
    clients: &[Client],
    load: Load,
    prefix: &str,
    duration: Duration,
    progress: &Progress,
) -> Stats {
    let (requests, queue) = mpsc::channel::<Vec<u8>>(load.clients);
    let queue = Arc::new(Mutex::new(queue));
    let (results, mut answered) = mpsc::unbounded_channel::<Result<f64, String>>();
    let mut workers = Vec::new();
    for client in clients {
        let (client, queue, results) = (client.clone(), queue.clone(), results.clone());
        workers.push(tokio::spawn(async move {
            loop {
                let key = queue.lock().await.recv().await;
                let Some(key) = key else { return };
                let sent = Instant::now();
                let put = client.put(key, Bytes::from_static(&VALUE)).await;
                let result = put
                    .map(|_| sent.elapsed().as_secs_f64())
                    .map_err(|e| e.to_string());
                if results.send(result).is_err() {
                    return;
                }
            }
        }));
    }
    drop(results);

    let started = Instant::now();
    // Owns the sender: the queue closes when the pacing ends.
    let pacer = async move {
        let mut rng = Rng::seeded();
        let mut issued = 0u64;
        let mut tick = tokio::time::interval(Duration::from_millis(1));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        while started.elapsed() < duration {
            tick.tick().await;
            progress.set_position(started.elapsed().as_secs());
            // As many puts as the rate allows by now (etcdctl's limiter
            // has a burst of one; a millisecond tick is as close as timers go).
            let due = (started.elapsed().as_secs_f64() * f64::from(load.rate)) as u64;
            while issued < due && started.elapsed() < duration {
                let mut key = prefix.as_bytes().to_vec();
                key.extend_from_slice(&random_key_tail(&mut rng));
                if requests.send(key).await.is_err() {
                    return;
                }
                issued += 1;
            }
        }
    };
    let mut stats = Stats::default();
    let collector = async {
        while let Some(result) = answered.recv().await {
            match result {
                Ok(latency) => stats.latencies.push(latency),
                Err(e) => *stats.errors.entry(e).or_default() += 1,
            }
        }
    };
    let paced = async {
        pacer.await;
        for worker in workers {
            let _ = worker.await;
        }
    };
    tokio::join!(paced, collector);
    stats.total = started.elapsed().as_secs_f64();
    stats
}

/// etcdctl's key after the prefix: 256 bytes, a random non-negative
/// 63-bit number varint-encoded (Go's `binary.PutVarint`) at the front.
fn random_key_tail(rng: &mut Rng) -> [u8; 256] {
    let mut key = [0u8; 256];
    let n = (rng.next() >> 1) as i64;
    // Zig-zag, then 7 bits a byte.
    let mut v = ((n << 1) ^ (n >> 63)) as u64;
    let mut i = 0;
    while v >= 0x80 {
        key[i] = (v as u8) | 0x80;
        v >>= 7;
        i += 1;
    }
    key[i] = v as u8;
    key
}

/// splitmix64: random enough for spreading keys.
struct Rng(u64);

impl Rng {
    fn seeded() -> Rng {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        Rng(nanos ^ u64::from(std::process::id()))
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_profiles_are_etcdctls() {
        assert_eq!(
            load_named("s"),
            Some(Load {
                rate: 150,
                clients: 50
            })
        );
        assert_eq!(
            load_named("medium"),
            Some(Load {
                rate: 1000,
                clients: 200
            })
        );
        assert_eq!(
            load_named("l"),
            Some(Load {
                rate: 8000,
                clients: 500
            })
        );
        assert_eq!(
            load_named("xLarge"),
            Some(Load {
                rate: 15000,
                clients: 1000
            })
        );
        assert_eq!(load_named("xlarge"), None);
    }

    #[test]
    fn the_verdict_uses_etcdctls_thresholds_and_lines() {
        let passing = Stats {
            latencies: vec![0.002; 1500],
            errors: BTreeMap::new(),
            total: 10.0,
        };
        let (lines, ok) = passing.verdict(150);
        assert!(ok);
        assert_eq!(
            lines,
            [
                "PASS: Throughput is 151 writes/s",
                "PASS: Slowest request took 0.002000s",
                "PASS: Stddev is 0.000000s",
                "PASS"
            ]
        );
        // 90 % of the rate exactly is too low, as in etcdctl (`<= 0.9`).
        let mut slow = Stats {
            latencies: vec![0.01; 1349],
            errors: BTreeMap::from([("etcdserver: request timed out".to_string(), 2)]),
            total: 10.0,
        };
        slow.latencies.push(0.6);
        let (lines, ok) = slow.verdict(150);
        assert!(!ok);
        assert_eq!(lines[0], "FAIL: too many errors");
        assert_eq!(lines[1], "FAIL: ERROR(etcdserver: request timed out) -> 2");
        assert_eq!(lines[2], "FAIL: Throughput too low: 136 writes/s");
        assert_eq!(lines[3], "Slowest request took too long: 0.600000s");
        assert_eq!(lines[4], "PASS: Stddev is 0.016052s");
        assert_eq!(lines[5], "FAIL");
    }

    #[test]
    fn keys_start_with_gos_varint_of_the_random_number() {
        let mut rng = Rng(7);
        let key = random_key_tail(&mut rng);
        // Decode as Go's binary.Varint: the number must be non-negative.
        let (mut v, mut shift, mut i) = (0u64, 0, 0);
        loop {
            v |= u64::from(key[i] & 0x7f) << shift;
            if key[i] < 0x80 {
                break;
            }
            shift += 7;
            i += 1;
        }
        let n = ((v >> 1) as i64) ^ -((v & 1) as i64);
        assert!(n >= 0);
        assert!(key[i + 1..].iter().all(|b| *b == 0));
        assert_eq!(key.len(), 256);
    }
}
