//! HTTP scenarios: the JSON gateway's put and range (`gateway`), and
//! requests parked until their key changes (`parked`): Hark's Consul-style
//! blocking GET against etcd's closest HTTP form, a `/v3/watch` stream per
//! request.
//!
//! The HTTP/1.1 client is a few lines over a TCP stream: keep-alive, one
//! request at a time per connection, answers read by `Content-Length` (or up
//! to a marker, for parked requests), so what is measured is the server.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine;
use bytes::Bytes;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

use crate::harness::{Metric, Options, ServerCpu, clients, count, load, metric, pct_ms};
use crate::servers::rss_bytes;

/// Standard base64 with padding, as the gateway wants bytes.
fn base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// When each parked request was answered, by its number.
type Woken = tokio::sync::Mutex<HashMap<usize, Instant>>;

/// `host:port` of an endpoint URL.
fn authority(endpoint: &str) -> &str {
    endpoint.trim_start_matches("http://").trim_end_matches('/')
}

/// One keep-alive HTTP/1.1 connection.
struct Connection {
    reader: BufReader<TcpStream>,
    host: String,
}

impl Connection {
    async fn open(endpoint: &str) -> Result<Connection, String> {
        let host = authority(endpoint).to_string();
        let stream = TcpStream::connect(&host)
            .await
            .map_err(|e| format!("connecting to {host}: {e}"))?;
        let _ = stream.set_nodelay(true);
        Ok(Connection {
            reader: BufReader::new(stream),
            host,
        })
    }

    async fn send(&mut self, method: &str, path: &str, body: &str) -> Result<(), String> {
        let request = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            self.host,
            body.len()
        );
        self.reader
            .get_mut()
            .write_all(request.as_bytes())
            .await
            .map_err(|e| e.to_string())
    }

    /// A whole answer (by `Content-Length`, or chunked): status and body.
    async fn answer(&mut self) -> Result<(u16, Vec<u8>), String> {
        let mut status = 0;
        let mut length = 0;
        let mut chunked = false;
        let mut line = String::new();
        loop {
            line.clear();
            let n = self
                .reader
                .read_line(&mut line)
                .await
                .map_err(|e| e.to_string())?;
            if n == 0 {
                return Err("connection closed".into());
            }
            let l = line.trim_end();
            if l.is_empty() {
                break;
            }
            if status == 0 {
                status = l
                    .split(' ')
                    .nth(1)
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(0);
            } else if let Some((name, value)) = l.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse().map_err(|_| "bad content-length")?;
                } else if name.eq_ignore_ascii_case("transfer-encoding") {
                    chunked = value.trim().eq_ignore_ascii_case("chunked");
                }
            }
        }
        if chunked {
            return Ok((status, self.chunks().await?));
        }
        let mut body = vec![0; length];
        self.reader
            .read_exact(&mut body)
            .await
            .map_err(|e| e.to_string())?;
        Ok((status, body))
    }

    /// A chunked body, up to its last (empty) chunk.
    async fn chunks(&mut self) -> Result<Vec<u8>, String> {
        let mut body = Vec::new();
        let mut line = String::new();
        loop {
            line.clear();
            self.reader
                .read_line(&mut line)
                .await
                .map_err(|e| e.to_string())?;
            let size = usize::from_str_radix(line.trim(), 16)
                .map_err(|_| format!("bad chunk size {line:?}"))?;
            let mut chunk = vec![0; size + 2];
            self.reader
                .read_exact(&mut chunk)
                .await
                .map_err(|e| e.to_string())?;
            if size == 0 {
                return Ok(body);
            }
            body.extend_from_slice(&chunk[..size]);
        }
    }

    async fn request(&mut self, method: &str, path: &str, body: &str) -> Result<Vec<u8>, String> {
        self.send(method, path, body).await?;
        let (status, body) = self.answer().await?;
        if status != 200 {
            return Err(format!(
                "{method} {path}: {status} {}",
                String::from_utf8_lossy(&body)
            ));
        }
        Ok(body)
    }

    /// Reads until `marker` has arrived (a streamed or late answer).
    async fn read_until(&mut self, marker: &[u8]) -> Result<(), String> {
        let mut seen = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            let n = self
                .reader
                .read(&mut buf)
                .await
                .map_err(|e| e.to_string())?;
            if n == 0 {
                return Err("connection closed before the answer".into());
            }
            seen.extend_from_slice(&buf[..n]);
            if seen.windows(marker.len()).any(|w| w == marker) {
                return Ok(());
            }
            // Keep only what a marker cut in two could need.
            if seen.len() > 8192 {
                seen.drain(..seen.len() - marker.len());
            }
        }
    }
}

/// `gateway`: puts and ranges through the JSON gateway, `--clients`
/// connections each doing one request at a time.
pub async fn gateway(
    o: &Options,
    endpoints: &[String],
    pid: Option<u32>,
) -> Result<Vec<Metric>, String> {
    // One connection per task, so a request never waits for another's.
    let mut conns = Vec::new();
    for i in 0..o.clients {
        let conn = Connection::open(&endpoints[i % endpoints.len()]).await?;
        conns.push(Arc::new(tokio::sync::Mutex::new(conn)));
    }
    let value = base64(&vec![b'x'; o.value_size]);
    let cpu = ServerCpu::start(pid);
    let (wall, lat) = {
        let value = value.clone();
        load(&conns, o.clients, o.total, move |conn, i| {
            let value = value.clone();
            async move {
                let mut conn = conn.lock().await;
                let body = format!(
                    r#"{{"key":"{}","value":"{value}"}}"#,
                    base64(format!("gw/{i}").as_bytes())
                );
                conn.request("POST", "/v3/kv/put", &body).await.map(drop)
            }
        })
        .await?
    };
    let mut out = vec![
        metric(
            "gateway puts/s",
            o.total as f64 / wall.as_secs_f64(),
            "ops/s",
        ),
        metric("gateway put p50", pct_ms(&lat, 0.50), "ms"),
        metric("gateway put p99", pct_ms(&lat, 0.99), "ms"),
    ];
    out.extend(cpu.per("server CPU per gateway put", o.total as u64));
    let keys = o.total;
    let cpu = ServerCpu::start(pid);
    let (wall, lat) = {
        load(&conns, o.clients, o.total, move |conn, i| async move {
            let mut conn = conn.lock().await;
            let k = i.wrapping_mul(2_654_435_761) % keys;
            let body = format!(r#"{{"key":"{}"}}"#, base64(format!("gw/{k}").as_bytes()));
            let answer = conn.request("POST", "/v3/kv/range", &body).await?;
            if answer.windows(5).any(|w| w == b"\"kvs\"") {
                Ok(())
            } else {
                Err(format!(
                    "gw/{k} missing: {}",
                    String::from_utf8_lossy(&answer)
                ))
            }
        })
        .await?
    };
    out.extend([
        metric(
            "gateway ranges/s",
            o.total as f64 / wall.as_secs_f64(),
            "ops/s",
        ),
        metric("gateway range p50", pct_ms(&lat, 0.50), "ms"),
        metric("gateway range p99", pct_ms(&lat, 0.99), "ms"),
    ]);
    out.extend(cpu.per("server CPU per gateway range", o.total as u64));
    Ok(out)
}

/// The body of `GET path` on `endpoint` (one connection, then closed).
pub(crate) async fn get_text(endpoint: &str, path: &str) -> Result<String, String> {
    let mut conn = Connection::open(endpoint).await?;
    let body = conn.request("GET", path, "").await?;
    String::from_utf8(body).map_err(|e| format!("GET {path}: {e}"))
}

/// The number in `name <n>` of a Prometheus text body.
pub(crate) fn gauge(metrics: &str, name: &str) -> Option<f64> {
    metrics.lines().find_map(|l| {
        let rest = l.strip_prefix(name)?.strip_prefix(' ')?;
        rest.trim().parse().ok()
    })
}

/// `parked`: `--watchers` requests (default 10,000), each on a connection of
/// its own and waiting for its own key to change; then puts to some of those
/// keys, one at a time, each timed from its acknowledgement to the waiting
/// request's answer. Hark's requests are Consul blocking GETs
/// (`/v1/kv/<key>?index=R&wait=10m`); etcd has no blocking read, so its
/// requests are its HTTP form of waiting for a change, a `/v3/watch` stream
/// from R+1. The server's RSS is read before and with all of them parked.
pub async fn parked(
    o: &Options,
    endpoints: &[String],
    pid: Option<u32>,
) -> Result<Vec<Metric>, String> {
    let pid = pid.ok_or("parked needs the server's pid (--pid, or --compare-etcd)")?;
    // Hark answers Consul's key listing; etcd has no such path.
    let hark = {
        let mut probe = Connection::open(&endpoints[0]).await?;
        probe.send("GET", "/v1/kv/?keys", "").await?;
        probe.answer().await?.0 == 200
    };
    let n = o.watchers.unwrap_or(10_000);
    let wakes = o.events.clamp(1, n);
    let endpoint = &endpoints[0];
    let grpc = clients(endpoints, 1).await?;
    let c = &grpc[0];
    // The keys exist first, so every request has something to read.
    crate::harness::put_load(&grpc, 16, n, Bytes::from_static(b"v"), |i| {
        format!("parked/{i}")
    })
    .await?;
    let revision = crate::harness::current_revision(c).await?;
    let before = rss_bytes(pid)?;
    let woken: Arc<Woken> = Arc::default();
    let mut tasks = Vec::with_capacity(n);
    let started = Instant::now();
    for i in 0..n {
        let mut conn = Connection::open(endpoint).await?;
        let key = format!("parked/{i}");
        if hark {
            conn.send(
                "GET",
                &format!("/v1/kv/{key}?index={revision}&wait=10m"),
                "",
            )
            .await?;
        } else {
            let body = format!(
                r#"{{"create_request":{{"key":"{}","start_revision":"{}"}}}}"#,
                base64(key.as_bytes()),
                revision + 1
            );
            conn.send("POST", "/v3/watch", &body).await?;
        }
        let woken = woken.clone();
        let marker: &'static [u8] = if hark { b"ModifyIndex" } else { b"\"events\"" };
        tasks.push(tokio::spawn(async move {
            let result = conn.read_until(marker).await;
            woken.lock().await.insert(i, Instant::now());
            drop(conn);
            result
        }));
    }
    // Parked = a watcher each, on either server.
    let deadline = Instant::now() + Duration::from_secs(300);
    let mut metrics_conn = Connection::open(endpoint).await?;
    loop {
        let body = metrics_conn.request("GET", "/metrics", "").await?;
        let text = String::from_utf8_lossy(&body);
        if gauge(&text, "etcd_debugging_mvcc_watcher_total").unwrap_or(0.0) >= n as f64 {
            break;
        }
        if Instant::now() > deadline {
            return Err(format!(
                "only {:?} of {n} parked",
                gauge(&text, "etcd_debugging_mvcc_watcher_total")
            ));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let parked_in = started.elapsed();
    tokio::time::sleep(Duration::from_secs(1)).await;
    let with_parked = rss_bytes(pid)?;
    // Wake some, one at a time: from the put's acknowledgement to the answer.
    let mut latencies = Vec::with_capacity(wakes);
    for w in 0..wakes {
        let i = w * (n / wakes);
        let acked = {
            c.put(format!("parked/{i}"), "moved")
                .await
                .map_err(|e| e.to_string())?;
            Instant::now()
        };
        let deadline = acked + Duration::from_secs(10);
        let woke = loop {
            if let Some(at) = woken.lock().await.get(&i).copied() {
                break at;
            }
            if Instant::now() > deadline {
                return Err(format!("parked/{i} was not woken within 10 s"));
            }
            tokio::time::sleep(Duration::from_micros(200)).await;
        };
        latencies.push(woke.saturating_duration_since(acked).as_micros() as u64);
    }
    latencies.sort_unstable();
    let answered = woken.lock().await.len();
    for task in tasks {
        task.abort();
    }
    let mut out = vec![
        count(
            "requests parked",
            n as u64,
            "requests",
            crate::harness::Combine::Min,
        ),
        metric("time to park all", parked_in.as_secs_f64(), "s"),
        metric(
            "server RSS with all parked",
            with_parked as f64 / (1 << 20) as f64,
            "MiB",
        ),
        metric(
            "RSS per parked request",
            with_parked.saturating_sub(before) as f64 / n as f64,
            "bytes",
        ),
        metric("wake-up p50", pct_ms(&latencies, 0.50), "ms"),
        metric("wake-up p99", pct_ms(&latencies, 0.99), "ms"),
    ];
    out.push(count(
        "answered early or wrongly",
        answered.saturating_sub(wakes) as u64,
        "requests",
        crate::harness::Combine::Sum,
    ));
    Ok(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn base64_matches_the_standard_alphabet_with_padding() {
        assert_eq!(super::base64(b"foo"), "Zm9v");
        assert_eq!(super::base64(b"fo"), "Zm8=");
        assert_eq!(super::base64(b"f"), "Zg==");
        assert_eq!(super::base64(b""), "");
    }

    #[test]
    fn a_gauge_is_read_from_prometheus_text() {
        let text = "# HELP x\netcd_debugging_mvcc_watcher_total 42\nother 1\n";
        assert_eq!(
            super::gauge(text, "etcd_debugging_mvcc_watcher_total"),
            Some(42.0)
        );
        assert_eq!(super::gauge(text, "missing"), None);
    }
}
