//! The attacks. Each runs within `Target::scale` and returns what the
//! attacker was told, and whether that is the clear refusal the case
//! expects; the runner measures what the attack cost meanwhile.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use base64::Engine;
use hark_proto::etcdserverpb::{self as pb, auth_client::AuthClient, kv_client::KvClient};
use prost::Message;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tonic::transport::Channel;

use super::h2wire::{self, Heard, Name, RawH2};
use super::http1;
use super::{Answer, Target};
use crate::servers::cpu_seconds;

/// The header Hark's front door uses internally for a client certificate's
/// common name; a client that sends it must gain nothing.
const SPOOFED_HEADER: &str = "hark-internal-client-cn";
/// A refused AuthUserAdd costs well under this much server CPU; bcrypt at
/// the default cost 10 takes ~50 ms or more, so hashing even a tenth of the
/// calls would cross it.
const USER_ADD_CPU_PER_CALL: Duration = Duration::from_millis(5);

pub async fn run(case: &str, t: &Target) -> Result<Answer, String> {
    match case {
        "hpack-bomb" => hpack_bomb(t).await,
        "continuation-flood" => continuation_flood(t).await,
        "rapid-reset" => rapid_reset(t).await,
        "stream-flood" => stream_flood(t).await,
        "slowloris" => slowloris(t).await,
        "huge-body" => huge_body(t).await,
        "consul-parking" => consul_parking(t).await,
        "spoofed-identity" => spoofed_identity(t).await,
        "user-add-flood" => user_add_flood(t).await,
        "huge-txn" => huge_txn(t).await,
        "huge-range" => huge_range(t).await,
        "long-names" => long_names(t).await,
        other => Err(format!("no case {other}")),
    }
}

// --- helpers ---------------------------------------------------------------

async fn channel(endpoint: &str) -> Result<Channel, String> {
    Channel::from_shared(endpoint.to_string())
        .map_err(|e| e.to_string())?
        .connect()
        .await
        .map_err(|e| format!("connecting to {endpoint}: {e}"))
}

/// root's token (the battery's servers run with auth on, root's password
/// being `secure::PASSWORD`).
pub async fn root_token(endpoint: &str) -> Result<String, String> {
    let reply = AuthClient::new(channel(endpoint).await?)
        .authenticate(pb::AuthenticateRequest {
            name: crate::secure::USER.into(),
            password: crate::secure::PASSWORD.into(),
        })
        .await
        .map_err(|s| format!("authenticating as root: {}", s.message()))?;
    Ok(reply.into_inner().token)
}

fn with_token<T>(message: T, token: &str) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    request
        .metadata_mut()
        .insert("token", token.parse().expect("a token is ASCII"));
    request
}

fn status_text(status: &tonic::Status) -> String {
    format!("{:?} \"{}\"", status.code(), status.message())
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1 << 20) as f64)
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// What a raw HTTP/2 connection was told, after `did` (what the attacker
/// sent): a GOAWAY or a status is a clear refusal; a connection dropped
/// without either is not; silence is not.
fn h2_answer(heard: &Heard, did: &str) -> Answer {
    let mut parts = Vec::new();
    if let Some(ending) = heard.ending() {
        parts.push(ending);
    }
    if !heard.answers.is_empty() {
        parts.push(heard.answers_text());
    }
    if !heard.resets.is_empty() {
        parts.push(heard.resets_text());
    }
    let clear = heard.goaway.is_some() || !heard.answers.is_empty() || !heard.resets.is_empty();
    if parts.is_empty() {
        parts.push("no answer, connection open".into());
    }
    Answer {
        said: format!("{} ({did})", parts.join("; ")),
        clear,
        misses: Vec::new(),
    }
}

/// Sends `bytes` in pieces until done, the server goes away, or `deadline`;
/// returns the bytes sent and why it stopped early, if it did.
async fn send_until(
    conn: &RawH2,
    bytes: &[u8],
    piece: usize,
    deadline: Instant,
) -> (u64, Option<String>) {
    let mut sent = 0u64;
    for chunk in bytes.chunks(piece) {
        if conn.gone() {
            return (sent, Some("server went away".into()));
        }
        match tokio::time::timeout_at(deadline.into(), conn.send(chunk)).await {
            Ok(Ok(())) => sent += chunk.len() as u64,
            Ok(Err(e)) => return (sent, Some(format!("write failed: {e}"))),
            Err(_) => return (sent, Some("write blocked until the time bound".into())),
        }
    }
    (sent, None)
}

// --- HTTP/2 ------------------------------------------------------------------

/// (1) One HEADERS frame announcing 16 MiB of HPACK: a 4 KB literal added to
/// the dynamic table, then 1-byte references to it. Expected: the frame is
/// refused by its header (GOAWAY FRAME_SIZE_ERROR), before it is buffered.
async fn hpack_bomb(t: &Target) -> Result<Answer, String> {
    let deadline = Instant::now() + t.scale.bound;
    let conn = RawH2::connect(t.addr, None).await?;
    let bomb = h2wire::hpack_bomb(h2wire::MAX_ANNOUNCED_LEN);
    let (sent, stopped) = send_until(&conn, &bomb, 64 << 10, deadline).await;
    conn.wait_closed(deadline.min(Instant::now() + Duration::from_secs(2)))
        .await;
    let did = format!(
        "{} of the {} frame sent{}",
        mib(sent),
        mib(bomb.len() as u64),
        stopped.map(|s| format!(", then {s}")).unwrap_or_default()
    );
    Ok(h2_answer(&conn.heard.lock(), &did))
}

/// (2) A header block that never ends: HEADERS without END_HEADERS, then
/// CONTINUATION frames of valid fields for `continuation_for`
/// (CVE-2024-27316 and kin). Expected: GOAWAY once the block exceeds the
/// header list limit.
async fn continuation_flood(t: &Target) -> Result<Answer, String> {
    let deadline = Instant::now() + t.scale.continuation_for.min(t.scale.bound);
    let conn = RawH2::connect(t.addr, None).await?;
    let first = h2wire::grpc_request_block("/etcdserverpb.KV/Range", &t.addr.to_string());
    conn.send(&h2wire::frame(h2wire::HEADERS, 0, 1, &first))
        .await?;
    // Whole fields per frame, so the concatenated block stays valid HPACK.
    let mut field = Vec::new();
    h2wire::hpack_literal(&mut field, Name::Literal("x-flood"), &[b'a'; 100]);
    let payload = field.repeat(h2wire::DEFAULT_MAX_FRAME / field.len());
    let continuation = h2wire::frame(h2wire::CONTINUATION, 0, 1, &payload);
    let batch = continuation.repeat(16);
    let mut frames = 0u64;
    let mut stopped = None;
    while Instant::now() < deadline {
        if conn.gone() {
            stopped = Some("server went away".to_string());
            break;
        }
        match tokio::time::timeout_at(deadline.into(), conn.send(&batch)).await {
            Ok(Ok(())) => frames += 16,
            Ok(Err(e)) => {
                stopped = Some(format!("write failed: {e}"));
                break;
            }
            Err(_) => {
                stopped = Some("writes blocked".into());
                break;
            }
        }
    }
    conn.wait_closed(Instant::now() + Duration::from_secs(1))
        .await;
    let did = format!(
        "{frames} CONTINUATION frames ({}) sent{}",
        mib(frames * continuation.len() as u64),
        stopped
            .map(|s| format!(", then {s}"))
            .unwrap_or_else(|| ", time bound reached".into())
    );
    Ok(h2_answer(&conn.heard.lock(), &did))
}

/// (3) Rapid reset (CVE-2023-44487): a gRPC Range stream opened and reset
/// at once, again and again on one connection. The server may absorb it
/// (no stream outlives its reset) or end the connection with a GOAWAY;
/// what it must not do is drop the connection without saying why.
async fn rapid_reset(t: &Target) -> Result<Answer, String> {
    let deadline = Instant::now() + t.scale.bound;
    let conn = RawH2::connect(t.addr, None).await?;
    let block = h2wire::grpc_request_block("/etcdserverpb.KV/Range", &t.addr.to_string());
    let total = t.scale.rapid_resets;
    let mut opened = 0usize;
    let mut stream = 1u32;
    let mut stopped = None;
    let mut batch = Vec::new();
    while opened < total && Instant::now() < deadline {
        if conn.gone() {
            stopped = Some("server went away");
            break;
        }
        batch.clear();
        for _ in 0..500.min(total - opened) {
            batch.extend(h2wire::frame(
                h2wire::HEADERS,
                h2wire::END_HEADERS,
                stream,
                &block,
            ));
            batch.extend(h2wire::frame(
                h2wire::RST_STREAM,
                0,
                stream,
                &h2wire::CANCEL.to_be_bytes(),
            ));
            stream += 2;
            opened += 1;
        }
        match tokio::time::timeout_at(deadline.into(), conn.send(&batch)).await {
            Ok(Ok(())) => {}
            Ok(Err(_)) => {
                stopped = Some("write failed");
                break;
            }
            Err(_) => {
                stopped = Some("writes blocked");
                break;
            }
        }
    }
    conn.wait_closed(Instant::now() + Duration::from_secs(1))
        .await;
    let heard = conn.heard.lock();
    let did = format!(
        "{opened} of {total} streams opened and reset{}",
        stopped.map(|s| format!(", then {s}")).unwrap_or_default()
    );
    if heard.goaway.is_none() && heard.closed.is_none() {
        // Absorbed: every stream ended by our reset, the connection open.
        let mut said = format!("absorbed: connection open, no GOAWAY ({did})");
        if !heard.answers.is_empty() {
            said += &format!("; answers: {}", heard.answers_text());
        }
        return Ok(Answer {
            said,
            clear: true,
            misses: Vec::new(),
        });
    }
    Ok(h2_answer(&heard, &did))
}

/// A WatchResponse, named by what it tells an anonymous client.
fn label_watch_response(bytes: &[u8]) -> String {
    match pb::WatchResponse::decode(bytes) {
        Ok(r) if r.canceled => format!("canceled \"{}\"", r.cancel_reason),
        Ok(r) if r.created => "created: WATCH ACCEPTED WITHOUT CREDENTIALS".into(),
        Ok(_) => "other WatchResponse".into(),
        Err(e) => format!("undecodable WatchResponse: {e}"),
    }
}

/// (4) Watch streams without a token on one connection, far past the
/// server's SETTINGS_MAX_CONCURRENT_STREAMS, each sending a create.
/// Expected: no watch created; every stream refused (a cancel with
/// etcd's reason, RST_STREAM REFUSED_STREAM, or a GOAWAY covering it).
async fn stream_flood(t: &Target) -> Result<Answer, String> {
    let deadline = Instant::now() + t.scale.bound;
    let conn = RawH2::connect(t.addr, Some(label_watch_response)).await?;
    let advertised = conn.heard.lock().max_concurrent_streams();
    let block = h2wire::grpc_request_block("/etcdserverpb.Watch/Watch", &t.addr.to_string());
    let total = t.scale.flood_streams;
    let mut opened = 0usize;
    let mut stream = 1u32;
    let mut stopped = None;
    let mut batch = Vec::new();
    'sending: while opened < total && Instant::now() < deadline {
        batch.clear();
        let mut data_bytes = 0;
        let in_batch = 200.min(total - opened);
        for _ in 0..in_batch {
            let create = pb::WatchRequest {
                request_union: Some(pb::watch_request::RequestUnion::CreateRequest(
                    pb::WatchCreateRequest {
                        key: format!("attack/flood/{opened}").into_bytes().into(),
                        ..Default::default()
                    },
                )),
            };
            let message = h2wire::grpc_message(&create);
            data_bytes += message.len();
            batch.extend(h2wire::frame(
                h2wire::HEADERS,
                h2wire::END_HEADERS,
                stream,
                &block,
            ));
            batch.extend(h2wire::frame(h2wire::DATA, 0, stream, &message));
            stream += 2;
            opened += 1;
        }
        // DATA beyond the server's connection window would be a
        // flow-control error, a different (and uninteresting) refusal.
        if !conn.reserve_window(data_bytes, deadline).await {
            stopped = Some(if conn.gone() {
                "server went away"
            } else {
                "the server's flow-control window stayed shut"
            });
            // This batch was not sent.
            opened -= in_batch;
            stream -= 2 * in_batch as u32;
            break 'sending;
        }
        match tokio::time::timeout_at(deadline.into(), conn.send(&batch)).await {
            Ok(Ok(())) => {}
            Ok(Err(_)) => {
                stopped = Some("write failed");
                break;
            }
            Err(_) => {
                stopped = Some("writes blocked");
                break;
            }
        }
    }
    // Let the answers arrive: a server may take seconds to get through the
    // streams it was sent, so wait until all are answered, the server goes
    // away, or the count stops moving for 3 s (at most the bound plus 5 s).
    let settle_until = deadline.max(Instant::now()) + Duration::from_secs(5);
    let mut last = (0, Instant::now());
    while Instant::now() < settle_until && !conn.gone() {
        let now = conn.heard.lock().streams_answered.len();
        if now >= opened || last.1.elapsed() >= Duration::from_secs(3) {
            break;
        }
        if now != last.0 {
            last = (now, Instant::now());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let heard = conn.heard.lock();
    let covered_by_goaway = heard.goaway.as_ref().map_or(0, |(last, _, _)| {
        (1..stream).step_by(2).filter(|id| id > last).count()
    });
    let answered = heard
        .streams_answered
        .iter()
        .filter(|id| heard.goaway.as_ref().is_none_or(|(last, _, _)| *id <= last))
        .count();
    let accepted = heard
        .answers
        .iter()
        .filter(|(what, _)| what.contains("ACCEPTED"))
        .map(|(_, n)| *n)
        .sum::<u64>();
    let unanswered = opened.saturating_sub(answered + covered_by_goaway);
    let mut parts = vec![format!(
        "server allows {} streams; {opened} of {total} opened{}",
        advertised.map_or("unlimited".into(), |n| n.to_string()),
        stopped.map(|s| format!(" ({s})")).unwrap_or_default()
    )];
    if !heard.answers.is_empty() {
        parts.push(heard.answers_text());
    }
    if !heard.resets.is_empty() {
        parts.push(heard.resets_text());
    }
    if let Some(ending) = heard.ending() {
        parts.push(format!("{ending}, covering {covered_by_goaway} more"));
    }
    if unanswered > 0 {
        parts.push(format!("{unanswered} streams unanswered"));
    }
    let mut misses = Vec::new();
    if accepted > 0 {
        misses.push(format!("{accepted} anonymous watches created"));
    }
    Ok(Answer {
        said: parts.join("; "),
        clear: accepted == 0 && (unanswered == 0 || heard.goaway.is_some()),
        misses,
    })
}

// --- HTTP/1 ------------------------------------------------------------------

/// How one slow connection ended.
enum Slow {
    ConnectFailed,
    HeldOpen,
    ClosedByServer {
        after: Duration,
        status: Option<u16>,
    },
    WriteFailed,
}

/// (5) Slowloris: many HTTP/1 connections to the gateway, each sending the
/// start of a `POST /v3/kv/range` and then one header byte every 2 s.
/// Expected: the server never serves such a request, keeps serving new
/// clients, and closes them at its header-read timeout.
async fn slowloris(t: &Target) -> Result<Answer, String> {
    let run_for = t.scale.slowloris_for;
    let start = Instant::now();
    let until = start + run_for;
    let connects = Arc::new(tokio::sync::Semaphore::new(256));
    let mut tasks = Vec::new();
    for _ in 0..t.scale.slowloris_conns {
        let (addr, connects) = (t.addr, connects.clone());
        tasks.push(tokio::spawn(async move {
            let stream = {
                let _permit = connects.acquire().await;
                TcpStream::connect(addr).await
            };
            let Ok(mut stream) = stream else {
                return Slow::ConnectFailed;
            };
            let head = format!("POST /v3/kv/range HTTP/1.1\r\nHost: {addr}\r\nX-Slow: ");
            if stream.write_all(head.as_bytes()).await.is_err() {
                return Slow::WriteFailed;
            }
            let mut buf = [0u8; 512];
            loop {
                let tick = tokio::time::sleep(Duration::from_secs(2));
                tokio::select! {
                    read = stream.read(&mut buf) => {
                        let status = match read {
                            Ok(n) if n > 0 => http1::status_of(&buf[..n]),
                            _ => None,
                        };
                        return Slow::ClosedByServer { after: start.elapsed(), status };
                    }
                    _ = tick => {
                        if Instant::now() >= until {
                            return Slow::HeldOpen;
                        }
                        if stream.write_all(b"a").await.is_err() {
                            return Slow::WriteFailed;
                        }
                    }
                }
            }
        }));
    }
    // With them all open, a new client must still be served.
    tokio::time::sleep(Duration::from_secs(2).min(run_for / 2)).await;
    let probe = new_client_probe(t).await;
    let mut held = 0;
    let mut failed_connect = 0;
    let mut closed = Vec::new();
    let mut statuses: BTreeMap<String, usize> = BTreeMap::new();
    let mut write_failed = 0;
    for task in tasks {
        match task.await.map_err(|e| e.to_string())? {
            Slow::ConnectFailed => failed_connect += 1,
            Slow::HeldOpen => held += 1,
            Slow::WriteFailed => write_failed += 1,
            Slow::ClosedByServer { after, status } => {
                closed.push(after);
                let key = status.map_or("no answer".into(), |s| format!("HTTP {s}"));
                *statuses.entry(key).or_default() += 1;
            }
        }
    }
    closed.sort();
    let mut parts = vec![format!(
        "{} connections for {:.0} s",
        t.scale.slowloris_conns,
        run_for.as_secs_f64()
    )];
    if !closed.is_empty() {
        let what = statuses
            .iter()
            .map(|(s, n)| format!("{n}× {s}"))
            .collect::<Vec<_>>()
            .join(", ");
        parts.push(format!(
            "{} closed by the server after {:.1}-{:.1} s ({what})",
            closed.len(),
            closed[0].as_secs_f64(),
            closed[closed.len() - 1].as_secs_f64()
        ));
    }
    if held > 0 {
        parts.push(format!("{held} still open at the end"));
    }
    if write_failed > 0 {
        parts.push(format!("{write_failed} reset"));
    }
    if failed_connect > 0 {
        parts.push(format!("{failed_connect} could not connect"));
    }
    parts.push(probe.0.clone());
    let served = statuses.keys().any(|s| s.starts_with("HTTP 2"));
    Ok(Answer {
        said: parts.join("; "),
        clear: !served && probe.1,
        misses: if probe.1 {
            Vec::new()
        } else {
            vec!["a new client was not served".into()]
        },
    })
}

/// A fresh connection's `GET /version`: (what happened, served in time).
async fn new_client_probe(t: &Target) -> (String, bool) {
    let started = Instant::now();
    let request = http1::request("GET", "/version", t.addr, &[], "");
    match http1::exchange(t.addr, &request, Duration::from_secs(5)).await {
        Ok((_, answer)) if answer.status == 200 => (
            format!(
                "a new client served in {:.0} ms",
                started.elapsed().as_secs_f64() * 1e3
            ),
            true,
        ),
        Ok((_, answer)) => (format!("a new client got HTTP {}", answer.status), false),
        Err(e) => (format!("a new client: {e}"), false),
    }
}

/// (6) A 1 GiB JSON body streamed to `/v3/kv/put` without a token, as fast
/// as the server takes it. Expected: an early refusal (413 at the size
/// limit, or 401), not a server that buffers the gigabyte.
async fn huge_body(t: &Target) -> Result<Answer, String> {
    let deadline = Instant::now() + t.scale.bound;
    let stream = TcpStream::connect(t.addr)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    let (mut read, mut write) = stream.into_split();
    let total = t.scale.body_bytes;
    let head = format!(
        "POST /v3/kv/put HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {total}\r\n\r\n",
        t.addr
    );
    let opening = format!(r#"{{"key":"{}","value":""#, b64(b"attack/huge"));
    let closing = r#""}"#;
    // The server's answer, whenever it comes.
    let answer = tokio::spawn(async move {
        let mut raw = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            match read.read(&mut buf).await {
                Ok(0) => return (raw, "EOF".to_string()),
                Ok(n) => {
                    raw.extend_from_slice(&buf[..n]);
                    if raw.windows(4).any(|w| w == b"\r\n\r\n") {
                        return (raw, String::new());
                    }
                }
                Err(e) => return (raw, e.to_string()),
            }
        }
    });
    let filler = vec![b'A'; 256 << 10];
    let started = Instant::now();
    let mut sent = 0u64;
    let mut stopped = match write.write_all(head.as_bytes()).await {
        Ok(()) => None,
        Err(e) => Some(format!("write failed at once: {e}")),
    };
    while stopped.is_none() && sent < total {
        if answer.is_finished() {
            stopped = Some("the server answered".into());
            break;
        }
        if Instant::now() >= deadline {
            stopped = Some("time bound reached".into());
            break;
        }
        let left = total - sent;
        let piece: &[u8] = if sent == 0 {
            opening.as_bytes()
        } else if left == closing.len() as u64 {
            closing.as_bytes()
        } else {
            &filler[..filler.len().min((left - closing.len() as u64) as usize)]
        };
        match tokio::time::timeout_at(deadline.into(), write.write_all(piece)).await {
            Ok(Ok(())) => sent += piece.len() as u64,
            Ok(Err(e)) => stopped = Some(format!("write failed: {e}")),
            Err(_) => stopped = Some("writes blocked until the time bound".into()),
        }
    }
    let took = started.elapsed();
    let mut answer = answer;
    let (raw, ended) = match tokio::time::timeout(Duration::from_secs(3), &mut answer).await {
        Ok(Ok(result)) => result,
        _ => (Vec::new(), "no answer within 3 s".into()),
    };
    answer.abort();
    let text = String::from_utf8_lossy(&raw);
    let status = http1::status_of(&raw);
    let body_start = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.trim().chars().take(100).collect::<String>())
        .unwrap_or_default();
    let did = format!(
        "{} of {} sent in {:.1} s{}",
        mib(sent),
        mib(total),
        took.as_secs_f64(),
        stopped.map(|s| format!(", then {s}")).unwrap_or_default()
    );
    Ok(match status {
        Some(code) => Answer {
            said: format!("HTTP {code} {body_start} ({did})"),
            clear: code >= 400,
            misses: Vec::new(),
        },
        None => Answer {
            said: format!("no HTTP answer: {ended} ({did})"),
            clear: false,
            misses: Vec::new(),
        },
    })
}

/// What a parked request has seen so far.
#[derive(Default, Clone, Copy)]
struct ParkedState {
    status: Option<u16>,
    woken: Option<Instant>,
    ended: bool,
}

/// What the parked requests share: their states, a bound on connects in
/// flight, and how many have been sent (or failed to be).
#[derive(Clone)]
struct Parking {
    states: Arc<std::sync::Mutex<Vec<ParkedState>>>,
    connects: Arc<tokio::sync::Semaphore>,
    sent: Arc<AtomicUsize>,
}

impl Parking {
    fn new(n: usize) -> Parking {
        Parking {
            states: Arc::new(std::sync::Mutex::new(vec![ParkedState::default(); n])),
            connects: Arc::new(tokio::sync::Semaphore::new(256)),
            sent: Arc::default(),
        }
    }

    fn snapshot(&self) -> Vec<ParkedState> {
        self.states
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

/// A parked HTTP request on its own connection from `from`: records its
/// status, the moment `marker` arrives (its wake-up) and its end.
fn park(
    from: IpAddr,
    addr: std::net::SocketAddr,
    request: String,
    marker: &'static [u8],
    parking: Parking,
    index: usize,
) -> tokio::task::JoinHandle<()> {
    let Parking {
        states,
        connects,
        sent,
    } = parking;
    tokio::spawn(async move {
        let set = |f: &dyn Fn(&mut ParkedState)| {
            let mut states = states.lock().unwrap_or_else(|e| e.into_inner());
            f(&mut states[index]);
        };
        let stream = {
            let _permit = connects.acquire().await;
            http1::connect_from(from, addr).await
        };
        let Ok(mut stream) = stream else {
            set(&|s| s.ended = true);
            sent.fetch_add(1, Ordering::Relaxed);
            return;
        };
        let written = stream.write_all(request.as_bytes()).await;
        sent.fetch_add(1, Ordering::Relaxed);
        if written.is_err() {
            set(&|s| s.ended = true);
            return;
        }
        let mut seen = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            match stream.read(&mut buf).await {
                Ok(n) if n > 0 => {
                    seen.extend_from_slice(&buf[..n]);
                    let status = http1::status_of(&seen);
                    let woke = seen.windows(marker.len()).any(|w| w == marker);
                    set(&|s| {
                        s.status = s.status.or(status);
                        if woke && s.woken.is_none() {
                            s.woken = Some(Instant::now());
                        }
                    });
                    if woke {
                        return;
                    }
                }
                _ => {
                    set(&|s| s.ended = true);
                    return;
                }
            }
        }
    })
}

/// `, refused: 26× HTTP 429` for the requests answered before their wake-up.
fn refusals(states: &[ParkedState]) -> String {
    let mut tally: BTreeMap<String, usize> = BTreeMap::new();
    for state in states {
        match state.status {
            Some(code) if code != 200 => *tally.entry(format!("HTTP {code}")).or_default() += 1,
            None if state.ended => *tally.entry("closed".into()).or_default() += 1,
            _ => {}
        }
    }
    if tally.is_empty() {
        return String::new();
    }
    let text: Vec<String> = tally
        .iter()
        .map(|(what, k)| format!("{k}× {what}"))
        .collect();
    format!(", refused: {}", text.join(", "))
}

/// (7) Consul blocking queries (Hark): absurd `?wait=` values, then
/// `parked` queries parked at once from client addresses 127.0.0.2.. (1,000
/// each, under Hark's per-address cap of 1,024), then 50 more from the first
/// address (past the cap), all woken by one put. etcd has no Consul API:
/// its closest equivalent, a `/v3/watch` long poll per request, is parked
/// instead. Expected: every absurd wait answered 400 or capped (it parks),
/// queries past the cap refused 429, every parked query woken, new clients
/// still served.
async fn consul_parking(t: &Target) -> Result<Answer, String> {
    let deadline = Instant::now() + t.scale.bound;
    let ch = channel(&t.endpoint).await?;
    let mut kv = KvClient::new(ch);
    let put = kv
        .put(with_token(
            pb::PutRequest {
                key: b"attack/parked".to_vec().into(),
                value: b"v".to_vec().into(),
                ..Default::default()
            },
            &t.root_token,
        ))
        .await
        .map_err(|s| status_text(&s))?;
    let revision = put.into_inner().header.map_or(0, |h| h.revision);
    let token_header: (&str, String) = if t.is_hark() {
        ("X-Consul-Token", t.root_token.clone())
    } else {
        ("Authorization", t.root_token.clone())
    };
    let mut parts = Vec::new();
    let mut clear = true;

    // Absurd waits: each must be refused (400) or capped (it parks).
    if t.is_hark() {
        let absurd = [
            "99999999999999999999h",
            "9223372036854775807ns",
            "2562047h47m16.854775808s",
            "-5s",
            "1e9h",
            "1y",
            "%00",
        ];
        let mut outcomes: BTreeMap<String, Vec<&str>> = BTreeMap::new();
        for wait in absurd {
            let path = format!("/v1/kv/attack/parked?index={revision}&wait={wait}");
            let request = http1::request(
                "GET",
                &path,
                t.addr,
                &[(token_header.0, &token_header.1)],
                "",
            );
            let what = match http1::exchange(t.addr, &request, Duration::from_millis(1500)).await {
                Ok((_, a)) => {
                    if a.status >= 500 {
                        clear = false;
                    }
                    format!("HTTP {} {}", a.status, a.body.lines().next().unwrap_or(""))
                }
                Err(e) if e.starts_with("no answer") => "parked (capped wait)".into(),
                Err(e) => {
                    clear = false;
                    e
                }
            };
            outcomes.entry(what).or_default().push(wait);
        }
        parts.push(format!(
            "wait=: {}",
            outcomes
                .iter()
                .map(|(what, waits)| format!("{} → {what}", waits.join(" ")))
                .collect::<Vec<_>>()
                .join("; ")
        ));
    } else {
        parts.push("wait=: n/a (no Consul API; /v3/watch long polls parked instead)".into());
    }

    // Park: spread over client addresses 127.0.0.2.. so no address passes
    // the per-client cap (1,024) and all of them really park.
    let n = t.scale.parked;
    let per_address = 1_000;
    // Then more from the first address, past Hark's per-address cap (1,024).
    let extra = 50;
    let parking = Parking::new(n + extra);
    let (marker, request_for): (&'static [u8], Box<dyn Fn() -> String>) = if t.is_hark() {
        let path = format!("/v1/kv/attack/parked?index={revision}&wait=10m");
        let token = token_header.1.clone();
        let addr = t.addr;
        (
            &b"ModifyIndex"[..],
            Box::new(move || http1::request("GET", &path, addr, &[("X-Consul-Token", &token)], "")),
        )
    } else {
        let body = format!(
            r#"{{"create_request":{{"key":"{}","start_revision":"{}"}}}}"#,
            b64(b"attack/parked"),
            revision + 1
        );
        let token = token_header.1.clone();
        let addr = t.addr;
        (
            &b"\"events\""[..],
            Box::new(move || {
                http1::request(
                    "POST",
                    "/v3/watch",
                    addr,
                    &[("Authorization", &token)],
                    &body,
                )
            }),
        )
    };
    let mut tasks = Vec::with_capacity(n);
    let parking_started = Instant::now();
    for i in 0..n {
        let from = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2 + (i / per_address) as u8));
        tasks.push(park(
            from,
            t.addr,
            request_for(),
            marker,
            parking.clone(),
            i,
        ));
    }
    // Parked: sent and not answered (for etcd: answered 200, its watch
    // created, and waiting), a second after the last was sent.
    while parking.sent.load(Ordering::Relaxed) < n && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let parked_in = parking_started.elapsed();
    let first_address = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));
    for i in n..n + extra {
        tasks.push(park(
            first_address,
            t.addr,
            request_for(),
            marker,
            parking.clone(),
            i,
        ));
    }
    let extra_deadline = Instant::now() + Duration::from_secs(5);
    while parking.sent.load(Ordering::Relaxed) < n + extra && Instant::now() < extra_deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let probe = new_client_probe(t).await;
    let before = parking.snapshot();
    let parked: Vec<usize> = (0..n + extra)
        .filter(|&i| {
            !before[i].ended
                && before[i].status.is_none_or(|c| c == 200)
                && before[i].woken.is_none()
        })
        .collect();
    let extra_parked = parked.iter().filter(|&&i| i >= n).count();
    // One put wakes them all.
    let woke_at = Instant::now();
    kv.put(with_token(
        pb::PutRequest {
            key: b"attack/parked".to_vec().into(),
            value: b"moved".to_vec().into(),
            ..Default::default()
        },
        &t.root_token,
    ))
    .await
    .map_err(|s| status_text(&s))?;
    let wake_deadline = Instant::now() + Duration::from_secs(10);
    let woken = loop {
        let now = parking.snapshot();
        let woken = parked.iter().filter(|&&i| now[i].woken.is_some()).count();
        if woken == parked.len() || Instant::now() > wake_deadline {
            let last = parked
                .iter()
                .filter_map(|&i| now[i].woken)
                .max()
                .map(|at| at.saturating_duration_since(woke_at));
            break (woken, last);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    for task in tasks {
        task.abort();
    }
    parts.push(format!(
        "{} of {n} parked from {} addresses in {:.1} s{}",
        parked.len() - extra_parked,
        n.div_ceil(per_address),
        parked_in.as_secs_f64(),
        refusals(&before[..n])
    ));
    parts.push(format!(
        "{extra} more from {first_address}: {extra_parked} parked{}",
        refusals(&before[n..])
    ));
    parts.push(format!(
        "{} of {} woken by one put{}",
        woken.0,
        parked.len(),
        woken
            .1
            .map(|d| format!(" within {:.0} ms", d.as_secs_f64() * 1e3))
            .unwrap_or_default()
    ));
    parts.push(probe.0);
    let mut misses = Vec::new();
    if woken.0 < parked.len() {
        misses.push(format!(
            "{} parked queries not woken",
            parked.len() - woken.0
        ));
    }
    if !probe.1 {
        misses.push("a new client was not served".into());
    }
    Ok(Answer {
        said: parts.join("; "),
        clear,
        misses,
    })
}

// --- identity, auth, limits ---------------------------------------------------

/// (8) The internal identity header on every route, without a token.
/// Expected: privileged routes refuse as they refuse an anonymous caller;
/// public routes answer as they answer one without the header.
async fn spoofed_identity(t: &Target) -> Result<Answer, String> {
    let ch = channel(&t.endpoint).await?;
    let spoof = |request: &mut tonic::metadata::MetadataMap| {
        request.insert(SPOOFED_HEADER, "root".parse().expect("ASCII"));
    };
    let mut parts = Vec::new();
    let mut clear = true;
    let mut kv = KvClient::new(ch);
    let mut range = tonic::Request::new(pb::RangeRequest {
        key: b"a".to_vec().into(),
        ..Default::default()
    });
    spoof(range.metadata_mut());
    let mut put = tonic::Request::new(pb::PutRequest {
        key: b"a".to_vec().into(),
        value: b"spoofed".to_vec().into(),
        ..Default::default()
    });
    spoof(put.metadata_mut());
    for (name, result) in [
        ("gRPC Range", kv.range(range).await.map(drop)),
        ("gRPC Put", kv.put(put).await.map(drop)),
    ] {
        match result {
            Ok(()) => {
                clear = false;
                parts.push(format!("{name}: SERVED"));
            }
            Err(s) => parts.push(format!("{name}: {}", status_text(&s))),
        }
    }
    // (method, path, body, privileged)
    let routes: [(&str, &str, &str, bool); 5] = [
        ("POST", "/v3/kv/range", r#"{"key":"YQ=="}"#, true),
        ("GET", "/debug/watch/streams", "", true),
        ("GET", "/v1/kv/x", "", true),
        ("GET", "/metrics", "", false),
        ("GET", "/health", "", false),
    ];
    for (method, path, body, privileged) in routes {
        let spoofed = http1::request(method, path, t.addr, &[(SPOOFED_HEADER, "root")], body);
        let plain = http1::request(method, path, t.addr, &[], body);
        let with = http1::exchange(t.addr, &spoofed, Duration::from_secs(5)).await;
        let without = http1::exchange(t.addr, &plain, Duration::from_secs(5)).await;
        let (with, without) = match (with, without) {
            (Ok((_, w)), Ok((_, wo))) => (w, wo),
            (w, wo) => {
                clear = false;
                parts.push(format!(
                    "{path}: {}",
                    w.err().or(wo.err()).unwrap_or_default()
                ));
                continue;
            }
        };
        let same = with.status == without.status;
        if privileged {
            let refused = !(200..300).contains(&with.status);
            clear &= refused;
            let why = with
                .body
                .lines()
                .next()
                .unwrap_or("")
                .chars()
                .take(60)
                .collect::<String>();
            parts.push(format!(
                "{path}: {}{}",
                with.status,
                if refused {
                    format!(" {why}")
                } else {
                    " SERVED".into()
                }
            ));
        } else {
            clear &= same;
            parts.push(format!(
                "{path}: {} ({})",
                with.status,
                if same {
                    "= anonymous"
                } else {
                    "DIFFERS from anonymous"
                }
            ));
        }
    }
    Ok(Answer {
        said: parts.join("; "),
        clear,
        misses: Vec::new(),
    })
}

/// (9) AuthUserAdd calls without a token, all at once. Expected: each
/// refused (etcd's "user name is empty") before any password is hashed,
/// so the server's CPU barely moves.
async fn user_add_flood(t: &Target) -> Result<Answer, String> {
    let deadline = Instant::now() + t.scale.bound;
    let ch = channel(&t.endpoint).await?;
    let n = t.scale.user_adds;
    let cpu_before = cpu_seconds(t.pid)?;
    let started = Instant::now();
    let calls: Vec<_> = (0..n)
        .map(|i| {
            let mut auth = AuthClient::new(ch.clone());
            tokio::spawn(async move {
                let call = auth.user_add(pb::AuthUserAddRequest {
                    name: format!("mallory{i}"),
                    password: "hunter2".into(),
                    ..Default::default()
                });
                match tokio::time::timeout_at(deadline.into(), call).await {
                    Ok(Ok(_)) => "ACCEPTED".to_string(),
                    Ok(Err(s)) => status_text(&s),
                    Err(_) => "no answer within the time bound".into(),
                }
            })
        })
        .collect();
    let mut tally: BTreeMap<String, usize> = BTreeMap::new();
    for call in calls {
        *tally
            .entry(call.await.map_err(|e| e.to_string())?)
            .or_default() += 1;
    }
    let took = started.elapsed();
    let cpu = cpu_seconds(t.pid)? - cpu_before;
    let per_call = Duration::from_secs_f64(cpu / n as f64);
    let refused_with_status = tally
        .iter()
        .filter(|(what, _)| *what != "ACCEPTED" && !what.starts_with("no answer"))
        .map(|(_, k)| *k)
        .sum::<usize>();
    let said = format!(
        "{} in {:.2} s; server CPU +{cpu:.2} s ({:.2} ms per call)",
        tally
            .iter()
            .map(|(what, k)| format!("{k}× {what}"))
            .collect::<Vec<_>>()
            .join(", "),
        took.as_secs_f64(),
        per_call.as_secs_f64() * 1e3
    );
    let mut misses = Vec::new();
    if per_call > USER_ADD_CPU_PER_CALL {
        misses.push(format!(
            "server CPU {:.1} ms per refused call > {} ms (hashing before refusing?)",
            per_call.as_secs_f64() * 1e3,
            USER_ADD_CPU_PER_CALL.as_millis()
        ));
    }
    Ok(Answer {
        said,
        clear: refused_with_status == n,
        misses,
    })
}

/// (12) With auth off (the default, where any client may manage users):
/// role and user names past bbolt's 32 KiB key limit (a snapshot could no
/// longer hold them) and past fjall's 64 KiB (its apply would panic), then
/// a whole snapshot streamed. Expected: each name refused with
/// InvalidArgument before the log, and the snapshot complete. Auth is
/// turned back on at the end.
async fn long_names(t: &Target) -> Result<Answer, String> {
    use hark_proto::etcdserverpb::maintenance_client::MaintenanceClient;
    let ch = channel(&t.endpoint).await?;
    let mut auth = AuthClient::new(ch.clone());
    auth.auth_disable(with_token(pb::AuthDisableRequest {}, &t.root_token))
        .await
        .map_err(|s| format!("turning auth off: {}", status_text(&s)))?;
    let mut told = Vec::new();
    let mut refused = 0;
    for len in [40_000usize, 70_000] {
        let role = auth
            .role_add(pb::AuthRoleAddRequest {
                name: "r".repeat(len),
            })
            .await;
        let user = auth
            .user_add(pb::AuthUserAddRequest {
                name: "u".repeat(len),
                options: Some(hark_proto::authpb::UserAddOptions { no_password: true }),
                ..Default::default()
            })
            .await;
        for (what, answer) in [("role", role.map(|_| ())), ("user", user.map(|_| ()))] {
            match answer {
                Ok(()) => told.push(format!("{what} of {len} B ACCEPTED")),
                Err(s) => {
                    refused += usize::from(s.code() == tonic::Code::InvalidArgument);
                    told.push(format!("{what} of {len} B: {}", status_text(&s)));
                }
            }
        }
    }
    let mut snapshot = MaintenanceClient::new(ch)
        .snapshot(pb::SnapshotRequest {})
        .await
        .map_err(|s| format!("snapshot: {}", status_text(&s)))?
        .into_inner();
    let mut bytes = 0usize;
    let snapshot_ok = loop {
        match snapshot.message().await {
            Ok(Some(chunk)) => bytes += chunk.blob.len(),
            Ok(None) => break true,
            Err(s) => {
                told.push(format!(
                    "snapshot failed after {bytes} B: {}",
                    status_text(&s)
                ));
                break false;
            }
        }
    };
    if snapshot_ok {
        told.push(format!("snapshot of {bytes} B complete"));
    }
    // Auth back on, as the harness's other checks (root's token) expect.
    if let Err(s) = auth.auth_enable(pb::AuthEnableRequest {}).await {
        told.push(format!("turning auth back on: {}", status_text(&s)));
    }
    Ok(Answer {
        said: told.join("; "),
        clear: refused == 4 && snapshot_ok,
        misses: Vec::new(),
    })
}

/// (10) A Txn of 100,000 ops (as root, so the size check is what answers).
/// Expected: InvalidArgument "etcdserver: too many operations in txn request".
async fn huge_txn(t: &Target) -> Result<Answer, String> {
    let ch = channel(&t.endpoint).await?;
    let op = pb::RequestOp {
        request: Some(pb::request_op::Request::RequestRange(pb::RangeRequest {
            key: b"k".to_vec().into(),
            ..Default::default()
        })),
    };
    let txn = pb::TxnRequest {
        success: vec![op; t.scale.txn_ops],
        ..Default::default()
    };
    let bytes = txn.encoded_len();
    let started = Instant::now();
    let result = tokio::time::timeout(
        t.scale.bound,
        KvClient::new(ch)
            .max_encoding_message_size(usize::MAX)
            .txn(with_token(txn, &t.root_token)),
    )
    .await;
    let took = started.elapsed();
    let expected = "etcdserver: too many operations in txn request";
    Ok(match result {
        Ok(Err(s)) => Answer {
            said: format!(
                "{} in {:.0} ms ({} ops, {})",
                status_text(&s),
                took.as_secs_f64() * 1e3,
                t.scale.txn_ops,
                mib(bytes as u64)
            ),
            clear: s.code() == tonic::Code::InvalidArgument && s.message() == expected,
            misses: Vec::new(),
        },
        Ok(Ok(_)) => Answer {
            said: format!("SERVED a Txn of {} ops", t.scale.txn_ops),
            clear: false,
            misses: Vec::new(),
        },
        Err(_) => Answer {
            said: "no answer within the time bound".into(),
            clear: false,
            misses: Vec::new(),
        },
    })
}

/// (11) A Range whose key and range_end are 1 MiB each (as root).
/// Expected: a refusal with a clear status (a size limit), not an answer
/// and not a dropped connection.
async fn huge_range(t: &Target) -> Result<Answer, String> {
    let ch = channel(&t.endpoint).await?;
    let request = pb::RangeRequest {
        key: vec![b'k'; 1 << 20].into(),
        range_end: vec![b'l'; 1 << 20].into(),
        ..Default::default()
    };
    let bytes = request.encoded_len();
    let started = Instant::now();
    let result = tokio::time::timeout(
        t.scale.bound,
        KvClient::new(ch)
            .max_encoding_message_size(usize::MAX)
            .range(with_token(request, &t.root_token)),
    )
    .await;
    let took = started.elapsed();
    Ok(match result {
        Ok(Err(s)) => Answer {
            said: format!(
                "{} in {:.0} ms (request {} bytes)",
                status_text(&s),
                took.as_secs_f64() * 1e3,
                bytes
            ),
            // A limit's status; not a transport failure.
            clear: !matches!(
                s.code(),
                tonic::Code::Unknown
                    | tonic::Code::Internal
                    | tonic::Code::Unavailable
                    | tonic::Code::Cancelled
            ),
            misses: Vec::new(),
        },
        Ok(Ok(r)) => Answer {
            said: format!("SERVED: {} kvs", r.into_inner().kvs.len()),
            clear: false,
            misses: Vec::new(),
        },
        Err(_) => Answer {
            said: "no answer within the time bound".into(),
            clear: false,
            misses: Vec::new(),
        },
    })
}
