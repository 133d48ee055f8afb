//! The Watch response body: gRPC messages written a piece at a time, as
//! HTTP/2 asks for them.
//!
//! tonic's server encodes each response message whole before handing it to
//! hyper, and hyper takes the next piece of a body whenever the stream has
//! any send capacity at all. A 1 MiB catch-up response was therefore held
//! encoded up to three times per stream (tonic's buffer, hyper's chunk in
//! hand, h2's send queue): about 2 MiB per stream, 202 MB of a 398 MB heap
//! with 100 streams catching up (heaptrack, docs/benchmarks.md). Here a
//! response stays a [`WatchFrame`] (its events shared with the engine) until
//! hyper polls, and each poll copies out at most [`CHUNK_BYTES`] of its
//! encoding, so a stream holds no more than h2's send queue and one chunk.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{BufMut, Bytes, BytesMut};
use http_body::Frame;
use prost::Message;
use prost::encoding::{WireType, encode_key, encode_varint};
use tokio_stream::Stream;
use tonic::Status;
use tonic::codegen::http;

use crate::grpc::watch_frame::{EVENTS_TAG, WatchFrame};

/// Most bytes one poll of the body copies out (tonic's yield threshold):
/// small replies that are ready together still share one write.
pub const CHUNK_BYTES: usize = 32 << 10;

/// gRPC's message prefix: a compression flag and the length (big-endian).
const GRPC_PREFIX: usize = 5;

/// A stream of [`WatchFrame`]s as a gRPC response body: length-prefixed
/// messages, then the trailers of the status the stream ends with (OK when
/// it simply ends).
pub struct WatchBody<S> {
    frames: S,
    /// The frame being written out, if one is under way.
    current: Option<FrameCursor>,
    /// The status to send as trailers once the data before it is out.
    ending: Option<Status>,
    ended: bool,
}

impl<S> WatchBody<S> {
    pub fn new(frames: S) -> Self {
        WatchBody {
            frames,
            current: None,
            ending: None,
            ended: false,
        }
    }
}

impl<S> http_body::Body for WatchBody<S>
where
    S: Stream<Item = Result<WatchFrame, Status>> + Unpin,
{
    type Data = Bytes;
    type Error = Status;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Status>>> {
        let this = self.get_mut();
        if this.ended {
            return Poll::Ready(None);
        }
        if let Some(status) = this.ending.take() {
            this.ended = true;
            return Poll::Ready(Some(Ok(Frame::trailers(trailers(status)))));
        }
        let mut out = BytesMut::new();
        loop {
            if let Some(cursor) = &mut this.current {
                let room = CHUNK_BYTES - out.len();
                out.reserve(cursor.remaining().min(room));
                if !cursor.write(&mut out, CHUNK_BYTES) {
                    return Poll::Ready(Some(Ok(Frame::data(out.freeze()))));
                }
                this.current = None;
                if out.len() >= CHUNK_BYTES {
                    return Poll::Ready(Some(Ok(Frame::data(out.freeze()))));
                }
            }
            let next = match Pin::new(&mut this.frames).poll_next(cx) {
                Poll::Pending if out.is_empty() => return Poll::Pending,
                Poll::Pending => return Poll::Ready(Some(Ok(Frame::data(out.freeze())))),
                Poll::Ready(next) => next,
            };
            match next {
                Some(Ok(frame)) => match FrameCursor::new(frame) {
                    Ok(cursor) => this.current = Some(cursor),
                    Err(status) => this.ending = Some(status),
                },
                Some(Err(status)) => this.ending = Some(status),
                None => this.ending = Some(Status::ok("")),
            }
            if let Some(status) = this.ending.take() {
                if out.is_empty() {
                    this.ended = true;
                    return Poll::Ready(Some(Ok(Frame::trailers(trailers(status)))));
                }
                // The trailers go on the next poll, after this data.
                this.ending = Some(status);
                return Poll::Ready(Some(Ok(Frame::data(out.freeze()))));
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.ended
    }
}

/// A status as gRPC trailers; one whose message cannot be a header value
/// becomes Internal, as in tonic.
fn trailers(status: Status) -> http::HeaderMap {
    let mut map = http::HeaderMap::new();
    if let Err(bad) = status.add_header(&mut map) {
        map.clear();
        let _ = bad.add_header(&mut map);
    }
    map
}

/// Where the encoding of one frame has got to. The frame is written as its
/// gRPC prefix and head (every field but the events), then each event as its
/// field key and length followed by its shared encoding.
struct FrameCursor {
    frame: WatchFrame,
    /// The gRPC prefix and the head's encoding.
    prefix: Vec<u8>,
    part: Part,
    /// Bytes of the current part already written.
    offset: usize,
    /// The current event's field key and length (at most 1 + 10 bytes).
    event_head: [u8; 16],
    event_head_len: usize,
    remaining: usize,
}

#[derive(Clone, Copy)]
enum Part {
    Prefix,
    EventHead(usize),
    EventBody(usize),
    Done,
}

impl FrameCursor {
    fn new(frame: WatchFrame) -> Result<FrameCursor, Status> {
        let len = frame.encoded_len();
        let Ok(len32) = u32::try_from(len) else {
            return Err(Status::resource_exhausted(format!(
                "a watch response of {len} bytes is over gRPC's 4 GiB limit"
            )));
        };
        let mut prefix = Vec::with_capacity(GRPC_PREFIX + frame.head.encoded_len());
        prefix.put_u8(0);
        prefix.put_u32(len32);
        debug_assert!(frame.head.events.is_empty(), "events go in `events`");
        frame
            .head
            .encode(&mut prefix)
            .expect("a Vec grows as needed");
        Ok(FrameCursor {
            frame,
            prefix,
            part: Part::Prefix,
            offset: 0,
            event_head: [0; 16],
            event_head_len: 0,
            remaining: GRPC_PREFIX + len,
        })
    }

    /// Bytes of the frame not yet written.
    fn remaining(&self) -> usize {
        self.remaining
    }

    fn part_bytes(&self) -> &[u8] {
        match self.part {
            Part::Prefix => &self.prefix,
            Part::EventHead(_) => &self.event_head[..self.event_head_len],
            Part::EventBody(i) => self.frame.events[i].encoded(self.frame.prev_kv),
            Part::Done => &[],
        }
    }

    fn next_part(&mut self) {
        self.offset = 0;
        let next_event = match self.part {
            Part::Prefix => 0,
            Part::EventHead(i) => {
                self.part = Part::EventBody(i);
                return;
            }
            Part::EventBody(i) => i + 1,
            Part::Done => return,
        };
        if next_event == self.frame.events.len() {
            self.part = Part::Done;
            return;
        }
        let len = self.frame.events[next_event]
            .encoded(self.frame.prev_kv)
            .len();
        let mut head = &mut self.event_head[..];
        encode_key(EVENTS_TAG, WireType::LengthDelimited, &mut head);
        encode_varint(len as u64, &mut head);
        self.event_head_len = 16 - head.len();
        self.part = Part::EventHead(next_event);
    }

    /// Appends the frame's next bytes to `out` until `out` holds `limit`
    /// bytes; true once the whole frame is written.
    fn write(&mut self, out: &mut BytesMut, limit: usize) -> bool {
        loop {
            if matches!(self.part, Part::Done) {
                return true;
            }
            let room = limit.saturating_sub(out.len());
            if room == 0 {
                return false;
            }
            let offset = self.offset;
            let part = self.part_bytes();
            let take = (part.len() - offset).min(room);
            out.extend_from_slice(&part[offset..offset + take]);
            let part_done = offset + take == part.len();
            self.offset += take;
            self.remaining -= take;
            if part_done {
                self.next_part();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use super::*;
    use crate::grpc::watch_frame::tests::event;
    use hark_mvcc::EventKind;
    use hark_proto::etcdserverpb as pb;
    use hark_watch::Events;

    fn frame(watch_id: i64, values: &[usize]) -> WatchFrame {
        let events: Events = values
            .iter()
            .enumerate()
            .map(|(i, len)| event(EventKind::Put, "k", *len, 3 + i as i64))
            .collect();
        WatchFrame {
            head: pb::WatchResponse {
                header: Some(pb::ResponseHeader {
                    revision: 9,
                    ..Default::default()
                }),
                watch_id,
                ..Default::default()
            },
            events,
            prev_kv: false,
        }
    }

    /// A ready stream of the given items.
    struct Items(VecDeque<Result<WatchFrame, Status>>);

    impl Stream for Items {
        type Item = Result<WatchFrame, Status>;
        fn poll_next(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Self::Item>> {
            Poll::Ready(self.0.pop_front())
        }
    }

    /// The body's data pieces, and its trailers.
    async fn collect(items: Vec<Result<WatchFrame, Status>>) -> (Vec<Bytes>, http::HeaderMap) {
        let mut body = WatchBody::new(Items(items.into()));
        let mut data = Vec::new();
        let mut trailers = None;
        while let Some(frame) =
            std::future::poll_fn(|cx| http_body::Body::poll_frame(Pin::new(&mut body), cx)).await
        {
            let frame = frame.unwrap();
            assert!(trailers.is_none(), "nothing follows the trailers");
            match frame.into_data() {
                Ok(d) => data.push(d),
                Err(frame) => trailers = Some(frame.into_trailers().unwrap()),
            }
        }
        assert!(http_body::Body::is_end_stream(&body));
        (data, trailers.expect("trailers end the body"))
    }

    /// The gRPC messages in `data`, decoded.
    fn messages(data: &[Bytes]) -> Vec<pb::WatchResponse> {
        let all: Vec<u8> = data.iter().flat_map(|d| d.iter().copied()).collect();
        let mut rest = all.as_slice();
        let mut out = Vec::new();
        while !rest.is_empty() {
            assert_eq!(rest[0], 0, "not compressed");
            let len = u32::from_be_bytes(rest[1..5].try_into().unwrap()) as usize;
            out.push(pb::WatchResponse::decode(&rest[5..5 + len]).unwrap());
            rest = &rest[5 + len..];
        }
        out
    }

    fn expected(f: &WatchFrame) -> pb::WatchResponse {
        let mut buf = Vec::new();
        f.encode(&mut buf);
        pb::WatchResponse::decode(buf.as_slice()).unwrap()
    }

    #[tokio::test]
    async fn frames_go_out_whole_in_chunks_no_larger_than_the_limit() {
        // One frame far over a chunk, small ones that share a chunk, one
        // without events, and one whose single event spans chunks.
        let frames = [
            frame(1, &[10_000; 20]),
            frame(2, &[5]),
            frame(3, &[7, 9]),
            frame(4, &[]),
            frame(5, &[3 * CHUNK_BYTES]),
        ];
        let (data, trailers) = collect(frames.iter().cloned().map(Ok).collect()).await;
        assert!(data.iter().all(|d| !d.is_empty() && d.len() <= CHUNK_BYTES));
        let total: usize = frames.iter().map(|f| GRPC_PREFIX + f.encoded_len()).sum();
        assert_eq!(data.iter().map(Bytes::len).sum::<usize>(), total);
        // Frames 2-4 are small and ready together: they share a chunk.
        assert!(
            data.len() < total.div_ceil(CHUNK_BYTES) + 2,
            "{}",
            data.len()
        );
        let sent = messages(&data);
        assert_eq!(sent, frames.iter().map(expected).collect::<Vec<_>>());
        assert_eq!(trailers.get("grpc-status").unwrap(), "0");
    }

    #[tokio::test]
    async fn an_error_ends_the_body_with_its_status_after_the_frames_before_it() {
        let items = vec![
            Ok(frame(1, &[100])),
            Err(Status::unavailable("etcdserver: no leader")),
            Ok(frame(2, &[100])),
        ];
        let (data, trailers) = collect(items).await;
        assert_eq!(messages(&data).len(), 1);
        assert_eq!(trailers.get("grpc-status").unwrap(), "14");
        // Percent-encoded, as gRPC's spec has it.
        assert_eq!(
            trailers.get("grpc-message").unwrap(),
            "etcdserver:%20no%20leader"
        );
    }

    #[tokio::test]
    async fn an_empty_stream_is_only_ok_trailers() {
        let (data, trailers) = collect(Vec::new()).await;
        assert!(data.is_empty());
        assert_eq!(trailers.get("grpc-status").unwrap(), "0");
    }

    #[test]
    fn a_cursor_writes_the_same_bytes_at_any_chunk_size() {
        let f = frame(7, &[1, 200, 0, 5_000, 130]);
        let whole = {
            let mut buf = Vec::new();
            f.encode(&mut buf);
            buf
        };
        for limit in [1, 2, 3, 7, 64, 1_000, 100_000] {
            let mut cursor = FrameCursor::new(f.clone()).unwrap();
            let mut all = Vec::new();
            loop {
                let mut out = BytesMut::new();
                let done = cursor.write(&mut out, limit);
                assert!(out.len() <= limit);
                all.extend_from_slice(&out);
                if done {
                    break;
                }
                assert_eq!(
                    out.len(),
                    limit,
                    "a piece short of the limit ends the frame"
                );
            }
            assert_eq!(cursor.remaining(), 0);
            assert_eq!(&all[GRPC_PREFIX..], whole.as_slice(), "limit {limit}");
            assert_eq!(
                u32::from_be_bytes(all[1..5].try_into().unwrap()) as usize,
                whole.len()
            );
        }
    }
}
