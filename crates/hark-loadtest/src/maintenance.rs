//! The `maintenance` scenario: what looking after a large store costs the
//! clients writing to it. It fills the store (`--fill-mb`, 4 KiB values),
//! then, with one writer putting every 2 ms on its own thread:
//!
//! 1. idle: the writer's p99 with nothing else going on;
//! 2. snapshot: the whole store streamed to a file (MB/s), p99 meanwhile;
//! 3. restore: that file restored into a fresh data dir by Hark's restore
//!    and by etcd's `etcdutl snapshot restore` (MB/s each; both read etcd's
//!    format, whichever server saved it);
//! 4. defragment, after half the keys are deleted and compacted away: how
//!    long it takes, the size before and after, and p99 meanwhile.
//!
//! The `auto-defrag` scenario ([`auto_defrag`]) fills the store the same
//! way, deletes half and compacts, then waits for the space to come back
//! by itself (Hark started with `--auto-defrag-ratio`), or, when it does
//! not within [`ON_ITS_OWN`], defragments as an operator's job would
//! (etcd): the writer's p99 from the compaction until the space is back.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use hark_client::Client;

use crate::harness::{
    Metric, Options, clients, current_revision, joined, load, metric, on_own_thread, pct_ms,
};

const VALUE_SIZE: usize = 4096;
const IDLE_SAMPLES: usize = 500;

/// What the live writer is measuring now.
const IDLE: u64 = 0;
const SNAPSHOT: u64 = 1;
const BETWEEN: u64 = 2;
const DEFRAG: u64 = 3;
const STOP: u64 = 4;

pub async fn run(o: &Options, endpoints: &[String]) -> Result<Vec<Metric>, String> {
    let cs = clients(endpoints, o.conns).await?;
    let keys = fill(o, &cs, "m/").await?;
    let filled = status_size(&cs[0]).await?;

    let phase = Arc::new(AtomicU64::new(IDLE));
    let idle_done = Arc::new(tokio::sync::Notify::new());
    let writer = {
        let (phase, idle_done) = (phase.clone(), idle_done.clone());
        let value = Bytes::from(vec![b'w'; 256]);
        on_own_thread(endpoints, move |c| async move {
            let mut samples: [Vec<u64>; 4] = Default::default();
            for i in 0u64.. {
                let now = phase.load(Ordering::Acquire);
                if now == STOP {
                    break;
                }
                let t0 = Instant::now();
                if let Err(e) = c.put(format!("live/{}", i % 1000), value.clone()).await {
                    // Wake the scenario, which then finds the writer's error.
                    idle_done.notify_one();
                    return Err(e.to_string());
                }
                samples[now as usize].push(t0.elapsed().as_micros() as u64);
                if now == IDLE && samples[0].len() == IDLE_SAMPLES {
                    idle_done.notify_one();
                }
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            Ok(samples)
        })
    };
    idle_done.notified().await;
    // Stops the writer whatever happens from here on.
    struct StopWriter(Arc<AtomicU64>);
    impl Drop for StopWriter {
        fn drop(&mut self) {
            self.0.store(STOP, Ordering::Release);
        }
    }
    let stop_writer = StopWriter(phase.clone());

    phase.store(SNAPSHOT, Ordering::Release);
    let file = std::env::temp_dir().join(format!("hark-loadtest-{}.snap", std::process::id()));
    let started = Instant::now();
    let saved = save_snapshot(&cs[0], &file).await?;
    let snapshot_secs = started.elapsed().as_secs_f64();
    phase.store(BETWEEN, Ordering::Release);
    eprintln!(
        "   snapshot: {:.0} MB in {snapshot_secs:.1} s",
        saved as f64 / 1e6
    );

    let mut out = vec![
        metric("db size filled", filled as f64 / 1e6, "MB"),
        metric("snapshot size", saved as f64 / 1e6, "MB"),
        metric("snapshot", saved as f64 / 1e6 / snapshot_secs, "MB/s"),
    ];
    out.extend(restores(o, &file, saved)?);
    let _ = std::fs::remove_file(&file);

    // Half the keys go; compaction leaves their space for defragment to reclaim.
    let c = &cs[0];
    c.delete_range(hark_client::pb::DeleteRangeRequest {
        key: "m/".into(),
        range_end: format!("m/{:09}", keys / 2).into(),
        ..Default::default()
    })
    .await
    .map_err(|e| e.to_string())?;
    let rev = current_revision(c).await?;
    c.compact(rev, true).await.map_err(|e| e.to_string())?;
    let before = status_size(c).await?;
    phase.store(DEFRAG, Ordering::Release);
    let started = Instant::now();
    c.defragment().await.map_err(|e| e.to_string())?;
    let defrag_secs = started.elapsed().as_secs_f64();
    drop(stop_writer);
    let after = status_size(c).await?;
    eprintln!(
        "   defragment: {:.0} -> {:.0} MB in {defrag_secs:.1} s",
        before as f64 / 1e6,
        after as f64 / 1e6
    );

    let mut samples = joined(writer).await?;
    for s in &mut samples {
        s.sort_unstable();
    }
    let idle = pct_ms(&samples[IDLE as usize], 0.99);
    let during_snapshot = pct_ms(&samples[SNAPSHOT as usize], 0.99);
    let during_defrag = pct_ms(&samples[DEFRAG as usize], 0.99);
    let worst_defrag = samples[DEFRAG as usize].last().copied().unwrap_or(0) as f64 / 1000.0;
    out.extend([
        metric("put p99 idle", idle, "ms"),
        metric("put p99 during snapshot", during_snapshot, "ms"),
        metric("put p99 during defrag", during_defrag, "ms"),
        metric("put max during defrag", worst_defrag, "ms"),
        metric(
            "put p99 during defrag / idle",
            during_defrag / idle,
            "ratio",
        ),
        metric(
            "puts during defrag",
            samples[DEFRAG as usize].len() as f64,
            "puts",
        ),
        metric("defrag time", defrag_secs, "s"),
        metric("db size before defrag", before as f64 / 1e6, "MB"),
        metric("db size after defrag", after as f64 / 1e6, "MB"),
    ]);
    Ok(out)
}

/// How long `auto-defrag` waits for the space to come back by itself
/// before it defragments as an operator's job would.
const ON_ITS_OWN: Duration = Duration::from_secs(10);

/// The flags Hark runs with in the `auto-defrag` scenario.
pub const AUTO_DEFRAG_FLAGS: [&str; 2] = ["--auto-defrag-ratio=0.3", "--auto-defrag-interval=1s"];

pub async fn auto_defrag(o: &Options, endpoints: &[String]) -> Result<Vec<Metric>, String> {
    let cs = clients(endpoints, o.conns).await?;
    let keys = fill(o, &cs, "m/").await?;

    let phase = Arc::new(AtomicU64::new(IDLE));
    let idle_done = Arc::new(tokio::sync::Notify::new());
    let writer = {
        let (phase, idle_done) = (phase.clone(), idle_done.clone());
        let value = Bytes::from(vec![b'w'; 256]);
        on_own_thread(endpoints, move |c| async move {
            // Idle, then from the compaction until the space is back.
            let mut samples: [Vec<u64>; 2] = Default::default();
            for i in 0u64.. {
                let now = phase.load(Ordering::Acquire);
                if now == STOP {
                    break;
                }
                let t0 = Instant::now();
                if let Err(e) = c.put(format!("live/{}", i % 1000), value.clone()).await {
                    idle_done.notify_one();
                    return Err(e.to_string());
                }
                samples[(now == DEFRAG) as usize].push(t0.elapsed().as_micros() as u64);
                if now == IDLE && samples[0].len() == IDLE_SAMPLES {
                    idle_done.notify_one();
                }
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            Ok(samples)
        })
    };
    idle_done.notified().await;
    struct StopWriter(Arc<AtomicU64>);
    impl Drop for StopWriter {
        fn drop(&mut self) {
            self.0.store(STOP, Ordering::Release);
        }
    }
    let stop_writer = StopWriter(phase.clone());

    let c = &cs[0];
    let full = status_size(c).await?;
    c.delete_range(hark_client::pb::DeleteRangeRequest {
        key: "m/".into(),
        range_end: format!("m/{:09}", keys / 2).into(),
        ..Default::default()
    })
    .await
    .map_err(|e| e.to_string())?;
    let rev = current_revision(c).await?;
    phase.store(DEFRAG, Ordering::Release);
    let started = Instant::now();
    c.compact(rev, true).await.map_err(|e| e.to_string())?;
    // Back: a quarter of the full size gone (half the data was deleted).
    let target = full - full / 4;
    let mut by_itself = false;
    while started.elapsed() < ON_ITS_OWN {
        if status_size(c).await? < target {
            by_itself = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    if !by_itself {
        c.defragment().await.map_err(|e| e.to_string())?;
    }
    let back_secs = started.elapsed().as_secs_f64();
    drop(stop_writer);
    let after = status_size(c).await?;
    eprintln!(
        "   {}: {:.0} -> {:.0} MB {back_secs:.1} s after compacting",
        if by_itself {
            "space back by itself"
        } else {
            "not back by itself: defragmented"
        },
        full as f64 / 1e6,
        after as f64 / 1e6
    );
    let mut samples = joined(writer).await?;
    for s in &mut samples {
        s.sort_unstable();
    }
    let idle = pct_ms(&samples[0], 0.99);
    let during = pct_ms(&samples[1], 0.99);
    Ok(vec![
        metric(
            "space back by itself",
            f64::from(u8::from(by_itself)),
            "yes=1",
        ),
        metric("compaction to space back", back_secs, "s"),
        metric("put p99 idle", idle, "ms"),
        metric("put p99 until space back", during, "ms"),
        metric(
            "put max until space back",
            samples[1].last().copied().unwrap_or(0) as f64 / 1000.0,
            "ms",
        ),
        metric("put p99 until back / idle", during / idle, "ratio"),
        metric("db size full", full as f64 / 1e6, "MB"),
        metric("db size after", after as f64 / 1e6, "MB"),
    ])
}

/// Writes `--fill-mb` MiB under `prefix`: keys `<prefix><n, 9 digits>` of
/// `VALUE_SIZE` bytes each. Returns the number of keys.
pub(crate) async fn fill(o: &Options, cs: &[Client], prefix: &str) -> Result<usize, String> {
    let keys = ((o.fill_mb << 20) as usize / VALUE_SIZE).max(1);
    eprintln!(
        "   filling {} MiB: {keys} keys of {VALUE_SIZE} B",
        o.fill_mb
    );
    // Values that do not compress: RocksDB's lz4 would otherwise shrink a
    // run of equal bytes to nothing and the store would not be the size asked.
    let prefix = prefix.to_owned();
    load(cs, o.clients, keys, move |c, i| {
        let key = format!("{prefix}{i:09}");
        async move {
            c.put(key, incompressible(i as u64))
                .await
                .map(drop)
                .map_err(|e| e.to_string())
        }
    })
    .await?;
    Ok(keys)
}

/// `VALUE_SIZE` pseudo-random bytes, different for each `seed` (xorshift64).
fn incompressible(seed: u64) -> Bytes {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut out = Vec::with_capacity(VALUE_SIZE);
    while out.len() < VALUE_SIZE {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out.extend_from_slice(&x.to_le_bytes());
    }
    out.truncate(VALUE_SIZE);
    Bytes::from(out)
}

async fn status_size(c: &Client) -> Result<i64, String> {
    Ok(c.status().await.map_err(|e| e.to_string())?.db_size)
}

/// Streams the server's snapshot into `path`; returns the bytes of the file.
async fn save_snapshot(c: &Client, path: &Path) -> Result<u64, String> {
    use std::io::Write;
    let mut stream = c.snapshot().await.map_err(|e| e.to_string())?;
    let mut file = std::io::BufWriter::new(std::fs::File::create(path).map_err(|e| e.to_string())?);
    let mut size = 0u64;
    while let Some(msg) = stream.message().await.map_err(|e| e.to_string())? {
        file.write_all(&msg.blob).map_err(|e| e.to_string())?;
        size += msg.blob.len() as u64;
    }
    file.flush().map_err(|e| e.to_string())?;
    if !hark_snapshot::has_checksum(size) {
        return Err(format!("snapshot without its checksum ({size} bytes)"));
    }
    Ok(size)
}

/// Restores `file` with Hark's restore and, when an etcd binary was given,
/// with the `etcdutl` beside it; MB/s of snapshot for each.
fn restores(o: &Options, file: &Path, size: u64) -> Result<Vec<Metric>, String> {
    let scratch =
        std::env::temp_dir().join(format!("hark-loadtest-restore-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    let mut out = Vec::new();
    let started = Instant::now();
    hark_snapshot::restore(
        file,
        &scratch.join("hark"),
        &hark_snapshot::RestoreOptions::default(),
    )
    .map_err(|e| format!("hark restore: {e}"))?;
    out.push(metric(
        "restore (hark)",
        size as f64 / 1e6 / started.elapsed().as_secs_f64(),
        "MB/s",
    ));
    if let Some(etcdutl) = o.compare_etcd.as_deref().and_then(etcdutl_beside) {
        let started = Instant::now();
        let status = std::process::Command::new(&etcdutl)
            .args(["snapshot", "restore"])
            .arg(file)
            .arg("--data-dir")
            .arg(scratch.join("etcd"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .map_err(|e| format!("{}: {e}", etcdutl.display()))?;
        if !status.success() {
            return Err(format!("{} snapshot restore failed", etcdutl.display()));
        }
        out.push(metric(
            "restore (etcdutl)",
            size as f64 / 1e6 / started.elapsed().as_secs_f64(),
            "MB/s",
        ));
    }
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(out)
}

/// `etcdutl` named as the etcd binary is (`etcd-3.5` → `etcdutl-3.5`).
fn etcdutl_beside(etcd: &str) -> Option<PathBuf> {
    let etcd = Path::new(etcd);
    let name = etcd.file_name()?.to_str()?;
    let sibling = etcd.with_file_name(name.replacen("etcd", "etcdutl", 1));
    if sibling.is_file() {
        return Some(sibling);
    }
    // A bare name is looked up on PATH.
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name.replacen("etcd", "etcdutl", 1)))
        .find(|p| p.is_file())
}
