//! Accepting the `:authority` that older grpc-go clients send.
//!
//! etcd 3.4's clientv3 dials per-endpoint Maintenance calls (etcdctl's
//! `endpoint status`, `endpoint hashkv`, …) with the endpoint URL itself as the
//! target, so its requests carry `:authority: http://127.0.0.1:2379`. Go's HTTP/2
//! server takes that; the `h2` crate under tonic rejects it as malformed with
//! `RST_STREAM(PROTOCOL_ERROR)` and has no switch to relax the check.
//!
//! [`AuthorityFix`] sits between the socket and the HTTP/2 server and reads
//! the client's frames. It decodes the connection's first header block: a gRPC
//! client sends one `:authority` for all requests of a connection, so if that
//! one is well formed the connection passes through untouched from then on
//! (no further HPACK work). If it carries a scheme, every header block of the
//! connection is decoded (following the client's HPACK state) and re-encoded —
//! the scheme stripped from `:authority`, every field a literal that does not
//! touch the dynamic table, so the server's HPACK state never depends on what
//! the client's encoder indexed. Other frames, HTTP/1 connections and the
//! server's replies pass as is.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use bytes::{Buf, BufMut, BytesMut};
use loona_hpack::Decoder;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tonic::transport::server::Connected;

const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
const FRAME_HEADER: usize = 9;
const HEADERS: u8 = 0x1;
const CONTINUATION: u8 = 0x9;
const END_STREAM: u8 = 0x1;
const END_HEADERS: u8 = 0x4;
const PADDED: u8 = 0x8;
const PRIORITY: u8 = 0x20;
/// HTTP/2's default SETTINGS_MAX_FRAME_SIZE, which the server never lowers.
const MAX_FRAME: usize = 16_384;

enum State {
    /// Not yet known whether the client speaks HTTP/2 with prior knowledge.
    Sniffing,
    Http2 {
        decoder: Box<Decoder<'static>>,
        /// Set once a block had to be rewritten; then all of them are.
        rewriting: bool,
        /// A HEADERS frame waiting for its CONTINUATION frames.
        pending: Option<PendingBlock>,
    },
    /// HTTP/1, or a client whose HPACK we could not follow: bytes pass as is.
    Passthrough,
}

struct PendingBlock {
    stream_id: u32,
    /// END_STREAM, plus the PRIORITY fields if the HEADERS frame had them.
    end_stream: bool,
    priority: Option<[u8; 5]>,
    block: Vec<u8>,
    /// The frames as received, forwarded unchanged when no rewrite is needed.
    raw: Vec<u8>,
}

/// A client connection whose header blocks get a scheme-free `:authority`.
pub struct AuthorityFix<IO> {
    io: IO,
    state: State,
    /// Bytes read from the client and not yet processed.
    input: BytesMut,
    /// Processed bytes not yet handed to the server.
    output: BytesMut,
    eof: bool,
}

impl<IO> AuthorityFix<IO> {
    pub fn new(io: IO) -> Self {
        AuthorityFix {
            io,
            state: State::Sniffing,
            input: BytesMut::new(),
            output: BytesMut::new(),
            eof: false,
        }
    }

    /// Moves every complete unit from `input` to `output`.
    fn process(&mut self) {
        loop {
            match &mut self.state {
                State::Passthrough => {
                    let all = self.input.split();
                    self.output.unsplit(all);
                    return;
                }
                State::Sniffing => {
                    let n = self.input.len().min(PREFACE.len());
                    if self.input[..n] != PREFACE[..n] {
                        self.state = State::Passthrough;
                    } else if n == PREFACE.len() {
                        let preface = self.input.split_to(n);
                        self.output.unsplit(preface);
                        self.state = State::Http2 {
                            decoder: Box::new(Decoder::new()),
                            rewriting: false,
                            pending: None,
                        };
                    } else {
                        return;
                    }
                }
                State::Http2 { .. } => {
                    if self.input.len() < FRAME_HEADER {
                        return;
                    }
                    let len = (usize::from(self.input[0]) << 16)
                        | (usize::from(self.input[1]) << 8)
                        | usize::from(self.input[2]);
                    if self.input.len() < FRAME_HEADER + len {
                        return;
                    }
                    let frame = self.input.split_to(FRAME_HEADER + len);
                    self.frame(&frame);
                }
            }
        }
    }

    fn frame(&mut self, frame: &[u8]) {
        let State::Http2 { pending, .. } = &mut self.state else {
            unreachable!("frames are parsed only in HTTP/2 state");
        };
        let kind = frame[3];
        let flags = frame[4];
        let stream_id = u32::from_be_bytes(frame[5..9].try_into().expect("4 bytes")) & 0x7fff_ffff;
        let payload = &frame[FRAME_HEADER..];
        match (kind, pending.as_mut()) {
            (HEADERS, None) => {
                let Some((priority, fragment)) = split_headers_payload(flags, payload) else {
                    return self.give_up(frame);
                };
                let block = PendingBlock {
                    stream_id,
                    end_stream: flags & END_STREAM != 0,
                    priority,
                    block: fragment.to_vec(),
                    raw: frame.to_vec(),
                };
                if flags & END_HEADERS != 0 {
                    self.block(block);
                } else {
                    *pending = Some(block);
                }
            }
            (CONTINUATION, Some(block)) if block.stream_id == stream_id => {
                block.block.extend_from_slice(payload);
                block.raw.extend_from_slice(frame);
                if flags & END_HEADERS != 0 {
                    let block = pending.take().expect("checked above");
                    self.block(block);
                }
            }
            (_, None) => self.output.extend_from_slice(frame),
            // Anything else between HEADERS and its CONTINUATION is the client's
            // protocol error: let the server see it as it came.
            (_, Some(_)) => {
                let block = pending.take().expect("checked above");
                self.output.extend_from_slice(&block.raw);
                self.give_up(frame);
            }
        }
    }

    /// A complete header block: forward it, or its rewrite.
    fn block(&mut self, b: PendingBlock) {
        let State::Http2 {
            decoder, rewriting, ..
        } = &mut self.state
        else {
            unreachable!("blocks are decoded only in HTTP/2 state");
        };
        let Ok(mut fields) = decoder.decode(&b.block) else {
            // We no longer know the client's HPACK state.
            return self.give_up(&b.raw);
        };
        let mut fixed = false;
        for (name, value) in &mut fields {
            if name.as_slice() == b":authority"
                && let Some(at) = find(value, b"://")
            {
                value.drain(..at + 3);
                while value.last() == Some(&b'/') {
                    value.pop();
                }
                fixed = true;
            }
        }
        if !(fixed || *rewriting) {
            // A well-formed first block: the rest of the connection is trusted
            // to keep its authority, so no more decoding.
            self.output.extend_from_slice(&b.raw);
            self.state = State::Passthrough;
            return;
        }
        *rewriting = true;
        let block = encode_literals(&fields);
        write_header_frames(&mut self.output, &b, &block);
    }

    fn give_up(&mut self, frame: &[u8]) {
        self.output.extend_from_slice(frame);
        self.state = State::Passthrough;
    }
}

/// The PRIORITY fields and the header block fragment of a HEADERS payload.
#[allow(clippy::type_complexity)]
fn split_headers_payload(flags: u8, payload: &[u8]) -> Option<(Option<[u8; 5]>, &[u8])> {
    let mut p = payload;
    let mut pad = 0;
    if flags & PADDED != 0 {
        pad = usize::from(*p.first()?);
        p = &p[1..];
    }
    let mut priority = None;
    if flags & PRIORITY != 0 {
        priority = Some(p.get(..5)?.try_into().ok()?);
        p = &p[5..];
    }
    let end = p.len().checked_sub(pad)?;
    Some((priority, &p[..end]))
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// HPACK "literal header field without indexing — new name" for every field,
/// strings without Huffman coding (RFC 7541 §6.2.2).
fn encode_literals(fields: &[(Vec<u8>, Vec<u8>)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (name, value) in fields {
        out.push(0);
        encode_string(&mut out, name);
        encode_string(&mut out, value);
    }
    out
}

fn encode_string(out: &mut Vec<u8>, s: &[u8]) {
    // A 7-bit prefix integer (RFC 7541 §5.1), H bit clear.
    let mut n = s.len();
    if n < 127 {
        out.push(n as u8);
    } else {
        out.push(127);
        n -= 127;
        while n >= 128 {
            out.push((n % 128) as u8 | 0x80);
            n /= 128;
        }
        out.push(n as u8);
    }
    out.extend_from_slice(s);
}

/// A HEADERS frame (with CONTINUATION frames if the block is large).
fn write_header_frames(out: &mut BytesMut, b: &PendingBlock, block: &[u8]) {
    let mut first_payload = Vec::with_capacity(5 + block.len().min(MAX_FRAME));
    let mut flags = 0;
    if b.end_stream {
        flags |= END_STREAM;
    }
    if let Some(priority) = b.priority {
        flags |= PRIORITY;
        first_payload.extend_from_slice(&priority);
    }
    let room = MAX_FRAME - first_payload.len();
    let (head, mut rest) = block.split_at(block.len().min(room));
    first_payload.extend_from_slice(head);
    if rest.is_empty() {
        flags |= END_HEADERS;
    }
    put_frame(out, HEADERS, flags, b.stream_id, &first_payload);
    while !rest.is_empty() {
        let (chunk, tail) = rest.split_at(rest.len().min(MAX_FRAME));
        rest = tail;
        let flags = if rest.is_empty() { END_HEADERS } else { 0 };
        put_frame(out, CONTINUATION, flags, b.stream_id, chunk);
    }
}

fn put_frame(out: &mut BytesMut, kind: u8, flags: u8, stream_id: u32, payload: &[u8]) {
    let len = payload.len() as u32;
    out.put_slice(&len.to_be_bytes()[1..]);
    out.put_u8(kind);
    out.put_u8(flags);
    out.put_u32(stream_id);
    out.put_slice(payload);
}

impl<IO: AsyncRead + Unpin> AsyncRead for AuthorityFix<IO> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            if !this.output.is_empty() {
                let n = this.output.len().min(buf.remaining());
                buf.put_slice(&this.output[..n]);
                this.output.advance(n);
                return Poll::Ready(Ok(()));
            }
            if this.eof {
                return Poll::Ready(Ok(()));
            }
            if matches!(this.state, State::Passthrough) && this.input.is_empty() {
                return Pin::new(&mut this.io).poll_read(cx, buf);
            }
            this.input.reserve(16 * 1024);
            let before = this.input.len();
            let spare = this.input.spare_capacity_mut();
            let mut read = ReadBuf::uninit(spare);
            ready!(Pin::new(&mut this.io).poll_read(cx, &mut read))?;
            let n = read.filled().len();
            // SAFETY: `ReadBuf` initialised exactly these `n` bytes of spare capacity.
            unsafe { this.input.set_len(before + n) };
            if n == 0 {
                // The client is gone: hand over whatever is left, then EOF.
                this.eof = true;
                let rest = this.input.split();
                this.output.unsplit(rest);
            } else {
                this.process();
            }
        }
    }
}

impl<IO: AsyncWrite + Unpin> AsyncWrite for AuthorityFix<IO> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}

impl<IO: Connected> Connected for AuthorityFix<IO> {
    type ConnectInfo = IO::ConnectInfo;

    fn connect_info(&self) -> Self::ConnectInfo {
        self.io.connect_info()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    fn headers_frame(stream_id: u32, block: &[u8]) -> Vec<u8> {
        let mut out = BytesMut::new();
        put_frame(&mut out, HEADERS, END_HEADERS, stream_id, block);
        out.to_vec()
    }

    /// A block as a client might send it: `:authority` as a literal with
    /// incremental indexing (static name index 1), so later blocks can refer
    /// to it by dynamic index 62.
    fn client_block(authority: &str) -> Vec<u8> {
        let mut b = vec![0x83, 0x86]; // :method POST, :scheme http
        b.push(0x41); // literal with incremental indexing, name = static 1
        encode_string(&mut b, authority.as_bytes());
        b.push(0x04); // literal without indexing, name = static 4 (:path)
        encode_string(&mut b, b"/etcdserverpb.KV/Range");
        b
    }

    async fn run(input: Vec<u8>) -> Vec<u8> {
        let mut fix = AuthorityFix::new(&input[..]);
        let mut out = Vec::new();
        fix.read_to_end(&mut out).await.unwrap();
        out
    }

    /// Splits the output after the preface into (type, flags, stream, payload).
    fn frames(mut bytes: &[u8]) -> Vec<(u8, u8, u32, Vec<u8>)> {
        let mut out = Vec::new();
        while !bytes.is_empty() {
            let len = (usize::from(bytes[0]) << 16)
                | (usize::from(bytes[1]) << 8)
                | usize::from(bytes[2]);
            let id = u32::from_be_bytes(bytes[5..9].try_into().unwrap());
            out.push((bytes[3], bytes[4], id, bytes[9..9 + len].to_vec()));
            bytes = &bytes[9 + len..];
        }
        out
    }

    #[tokio::test]
    async fn well_formed_connections_pass_unchanged() {
        let mut input = PREFACE.to_vec();
        input.extend(headers_frame(1, &client_block("127.0.0.1:2379")));
        input.extend(headers_frame(3, &[0x83, 0x86, 0xbe, 0x84])); // 0xbe: dynamic 62
        assert_eq!(run(input.clone()).await, input);
        let http1 = b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n".to_vec();
        assert_eq!(run(http1.clone()).await, http1);
    }

    #[tokio::test]
    async fn a_scheme_in_the_authority_is_stripped_from_then_on() {
        let mut input = PREFACE.to_vec();
        input.extend(headers_frame(1, &client_block("http://127.0.0.1:2379")));
        // The next request names the authority by its dynamic index only.
        input.extend(headers_frame(3, &[0x83, 0x86, 0xbe, 0x84]));
        let out = run(input).await;
        assert_eq!(&out[..PREFACE.len()], PREFACE);
        let frames = frames(&out[PREFACE.len()..]);
        assert_eq!(frames.len(), 2);
        // The server decodes with a fresh table: rewritten blocks stand alone.
        let mut server = Decoder::new();
        let mut authorities = Vec::new();
        for (kind, flags, _, payload) in &frames {
            assert_eq!((*kind, flags & END_HEADERS), (HEADERS, END_HEADERS));
            let fields = server.decode(payload).unwrap();
            let authority = fields.iter().find(|(n, _)| n == b":authority").unwrap();
            authorities.push(String::from_utf8(authority.1.clone()).unwrap());
        }
        assert_eq!(authorities, ["127.0.0.1:2379", "127.0.0.1:2379"]);
    }
}
