//! `large-range`: the server memory one huge Range costs (a Kubernetes LIST
//! of a big resource without pagination), the same list read in pages of
//! `limit` keys with a continue key, as Kubernetes' reflectors page it, and
//! as etcd 3.7's `KV.RangeStream` (chunks at one pinned revision, what
//! Kubernetes 1.37 lists with), timed to its last byte.
//!
//! The server's peak resident memory is its kernel high-water mark
//! (`VmHWM`), reset just before each read (`/proc/PID/clear_refs` 5, as
//! root), so no sampling interval can miss the peak. Growth is that peak
//! over the resident memory right before the read.

use std::time::Instant;

use bytes::Bytes;
use hark_client::pb;
use prost::Message;

use crate::harness::{Metric, Options, clients, metric};
use crate::maintenance::fill;

const PREFIX: &str = "list/";
/// Keys per page of the paginated list (client-go's default page size).
const PAGE: i64 = 500;
const MIB: f64 = (1 << 20) as f64;

pub async fn run(
    o: &Options,
    endpoints: &[String],
    pid: Option<u32>,
) -> Result<Vec<Metric>, String> {
    let pid = pid.ok_or("large-range measures the server's memory: it needs its pid")?;
    let cs = clients(endpoints, o.conns).await?;
    let keys = fill(o, &cs, PREFIX).await?;
    let c = &cs[0];
    // Let the fill's flushes and compactions settle before measuring.
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;

    let whole = pb::RangeRequest {
        key: PREFIX.into(),
        range_end: prefix_end(PREFIX),
        ..Default::default()
    };

    // First the stream: the range too large for one message is its case.
    let before_stream = reset_peak(pid)?;
    let started_stream = Instant::now();
    let mut stream = c
        .range_stream(whole.clone())
        .await
        .map_err(|e| format!("RangeStream: {e}"))?;
    let (mut chunks, mut streamed, mut streamed_bytes) = (0usize, 0usize, 0usize);
    while let Some(chunk) = stream
        .message()
        .await
        .map_err(|e| format!("RangeStream: {e}"))?
    {
        chunks += 1;
        streamed_bytes += chunk.encoded_len();
        if let Some(part) = chunk.range_response {
            streamed += part.kvs.len();
        }
    }
    let took_stream = started_stream.elapsed();
    let stream_growth = peak_rss(pid)?.saturating_sub(before_stream) as f64;
    if streamed != keys {
        return Err(format!("the stream listed {streamed} of {keys} keys"));
    }
    let mut metrics = vec![
        metric("stream: bytes", streamed_bytes as f64 / MIB, "MiB"),
        metric("stream: chunks", chunks as f64, "n"),
        metric("stream: server peak RSS growth", stream_growth / MIB, "MiB"),
        metric(
            "stream: time to the last byte",
            took_stream.as_secs_f64(),
            "s",
        ),
    ];

    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    let before = reset_peak(pid)?;
    let started = Instant::now();
    // One message can hold at most 2 GiB (and a server may cap it lower):
    // past that, the one-range figures are left out, as a client gets none.
    match c.range(whole.clone()).await {
        Ok(answer) => {
            let took = started.elapsed();
            let peak = peak_rss(pid)?;
            if answer.kvs.len() != keys {
                return Err(format!(
                    "the range returned {} of {keys} keys",
                    answer.kvs.len()
                ));
            }
            let answer_bytes = answer.encoded_len() as f64;
            drop(answer);
            let growth = peak.saturating_sub(before) as f64;
            metrics.extend([
                metric("answer size", answer_bytes / MIB, "MiB"),
                metric("one range: server peak RSS growth", growth / MIB, "MiB"),
                metric("one range: growth / answer", growth / answer_bytes, "x"),
                metric("one range: time", took.as_secs_f64(), "s"),
            ]);
        }
        Err(e) => eprintln!("large-range: the one range failed ({e}); its figures are left out"),
    }

    // The same list in pages: each page from the key after the last one.
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    let before_pages = reset_peak(pid)?;
    let mut from = Bytes::from(PREFIX);
    let (mut pages, mut listed, mut largest_page) = (0usize, 0usize, 0usize);
    let started_pages = Instant::now();
    loop {
        let page = c
            .range(pb::RangeRequest {
                key: from.clone(),
                limit: PAGE,
                ..whole.clone()
            })
            .await
            .map_err(|e| e.to_string())?;
        pages += 1;
        listed += page.kvs.len();
        largest_page = largest_page.max(page.encoded_len());
        let Some(last) = page.kvs.last() else { break };
        let mut next = last.key.to_vec();
        next.push(0);
        from = next.into();
        if !page.more {
            break;
        }
    }
    let took_pages = started_pages.elapsed();
    let pages_growth = peak_rss(pid)?.saturating_sub(before_pages) as f64;
    if listed != keys {
        return Err(format!("the pages listed {listed} of {keys} keys"));
    }
    metrics.extend([
        metric("pages listed", pages as f64, "n"),
        metric("largest page", largest_page as f64 / MIB, "MiB"),
        metric(
            "paginated: server peak RSS growth",
            pages_growth / MIB,
            "MiB",
        ),
        metric("paginated: time", took_pages.as_secs_f64(), "s"),
    ]);
    Ok(metrics)
}

fn prefix_end(prefix: &str) -> Bytes {
    let mut end = prefix.as_bytes().to_vec();
    *end.last_mut().expect("a prefix is not empty") += 1;
    end.into()
}

/// Resets the server's resident high-water mark to its resident memory
/// now, and returns that.
fn reset_peak(pid: u32) -> Result<u64, String> {
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5")
        .map_err(|e| format!("resetting pid {pid}'s peak RSS (needs root): {e}"))?;
    crate::servers::rss_bytes(pid)
}

/// The server's resident high-water mark since the last reset.
fn peak_rss(pid: u32) -> Result<u64, String> {
    crate::servers::status_bytes(pid, "VmHWM")
}
