//! A client may pipeline 10,000 small messages on one HTTP/2 stream before reading
//! anything, as Go's gRPC does with watch creates and lease keep-alives, each in
//! its own DATA frame. With h2's default windows the server would close such a
//! connection with GOAWAY(ENHANCE_YOUR_CALM) after about a thousand.

mod common;

use std::net::SocketAddr;
use std::time::Duration;

use bytes::{Buf, Bytes, BytesMut};
use hark_proto::etcdserverpb::{
    LeaseKeepAliveRequest, LeaseKeepAliveResponse, WatchCreateRequest, WatchRequest, WatchResponse,
    watch_request::RequestUnion,
};
use prost::Message;

const MESSAGES: usize = 10_000;

/// Sends every message as its own gRPC frame in its own DATA frame, then reads
/// replies until `want` of them satisfy `count`; returns how many did.
async fn pipeline<R: Message + Default>(
    addr: SocketAddr,
    path: &str,
    messages: Vec<Vec<u8>>,
    want: usize,
    count: impl Fn(&R) -> bool,
) -> usize {
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    // Replies that arrive while the client is still sending wait unread, one
    // small DATA frame each (a keep-alive is answered once leadership is
    // confirmed, one by one). Go's gRPC transport buffers them without limit;
    // h2's client would drop the connection after about a thousand.
    let (client, connection) = h2::client::Builder::new()
        .data_frame_budget(64 << 20)
        .handshake(tcp)
        .await
        .unwrap();
    tokio::spawn(async move {
        if let Err(e) = connection.await {
            eprintln!("h2 connection ended: {e}");
        }
    });
    let mut client = client.ready().await.unwrap();
    let request = http::Request::builder()
        .method("POST")
        .uri(format!("http://{addr}{path}"))
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .body(())
        .unwrap();
    let (response, mut send) = client.send_request(request, false).unwrap();
    for m in messages {
        let mut frame = Vec::with_capacity(5 + m.len());
        frame.push(0);
        frame.extend_from_slice(&(m.len() as u32).to_be_bytes());
        frame.extend_from_slice(&m);
        send.send_data(Bytes::from(frame), false).unwrap();
    }
    let response = response.await.expect("response headers");
    assert_eq!(response.status(), 200);
    let mut body = response.into_body();
    let mut buf = BytesMut::new();
    let mut matched = 0;
    while matched < want {
        let chunk = match body.data().await {
            Some(Ok(chunk)) => chunk,
            Some(Err(e)) => panic!("connection failed after {matched} replies: {e}"),
            None => panic!("stream ended after {matched} replies"),
        };
        let _ = body.flow_control().release_capacity(chunk.len());
        buf.extend_from_slice(&chunk);
        while buf.len() >= 5 {
            let len = u32::from_be_bytes(buf[1..5].try_into().unwrap()) as usize;
            if buf.len() < 5 + len {
                break;
            }
            buf.advance(5);
            let msg = R::decode(buf.split_to(len).freeze()).unwrap();
            if count(&msg) {
                matched += 1;
            }
        }
    }
    drop(send);
    matched
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_pipelined_watch_creates_on_one_stream() {
    let srv = common::start(&["--unsafe-no-fsync"]).await;
    let creates = (0..MESSAGES)
        .map(|i| {
            WatchRequest {
                request_union: Some(RequestUnion::CreateRequest(WatchCreateRequest {
                    key: format!("key-{i}").into(),
                    ..Default::default()
                })),
            }
            .encode_to_vec()
        })
        .collect();
    let created = tokio::time::timeout(
        Duration::from_secs(120),
        pipeline::<WatchResponse>(
            srv.server.client_addrs[0],
            "/etcdserverpb.Watch/Watch",
            creates,
            MESSAGES,
            |r| r.created && !r.canceled,
        ),
    )
    .await
    .expect("all creates answered in time");
    assert_eq!(created, MESSAGES);
    srv.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_pipelined_keep_alives_on_one_stream() {
    let srv = common::start(&["--unsafe-no-fsync"]).await;
    let mut c = srv.client().await;
    let lease = c.lease_grant(600, None).await.unwrap().id();
    let pings = (0..MESSAGES)
        .map(|_| LeaseKeepAliveRequest { id: lease }.encode_to_vec())
        .collect();
    let acked = tokio::time::timeout(
        Duration::from_secs(120),
        pipeline::<LeaseKeepAliveResponse>(
            srv.server.client_addrs[0],
            "/etcdserverpb.Lease/LeaseKeepAlive",
            pings,
            MESSAGES,
            |r| r.id == lease && r.ttl == 600,
        ),
    )
    .await
    .expect("all keep-alives answered in time");
    assert_eq!(acked, MESSAGES);
    srv.server.shutdown().await;
}
