//! The front door: what a client without credentials can make a member do.
//! Each test is one of the hostile requests of `cargo xtask attack`, sent
//! to a real server over a real socket, with the answer etcd (or HTTP/2
//! itself) prescribes:
//!
//! * an HTTP/2 frame longer than the server advertised ends the connection
//!   with GOAWAY(FRAME_SIZE_ERROR) at once, not after 16 MB were buffered;
//! * the internal identity header names nobody on any route of any port;
//! * under auth, a stream without a caller gets no engine stream, a
//!   keep-alive stream without one is refused at open, user changes are
//!   checked before bcrypt runs, and a connection's streams and a stream's
//!   watchers are bounded;
//! * a snapshot's scratch file cannot be pre-empted by another local user;
//! * the default CORS policy refuses another origin's writes;
//! * a refused TLS handshake is logged with who and why.

mod common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use hark_proto::etcdserverpb as pb;
use pb::{
    auth_client::AuthClient, kv_client::KvClient, lease_client::LeaseClient,
    maintenance_client::MaintenanceClient, watch_client::WatchClient,
};
use tonic::transport::Channel;

const ROOT_PW: &str = "rootpw";
const SPOOF: &str = "hark-internal-client-cn";

fn addr_of(endpoint: &str) -> SocketAddr {
    endpoint
        .trim_start_matches("http://")
        .parse()
        .expect("an http://ip:port endpoint")
}

async fn channel(endpoint: &str) -> Channel {
    Channel::from_shared(endpoint.to_string())
        .unwrap()
        .connect()
        .await
        .unwrap()
}

fn with_token<T>(message: T, token: &str) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    if !token.is_empty() {
        request
            .metadata_mut()
            .insert("token", token.parse().unwrap());
    }
    request
}

fn spoofed<T>(message: T) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    request
        .metadata_mut()
        .insert(SPOOF, "root".parse().unwrap());
    request
}

/// Adds root (with a password unless `no_password`), enables auth, and
/// returns root's token (empty without a password).
async fn enable_auth(channel: &Channel, no_password: bool) -> String {
    let mut auth = AuthClient::new(channel.clone());
    auth.user_add(pb::AuthUserAddRequest {
        name: "root".into(),
        password: if no_password { "" } else { ROOT_PW }.into(),
        options: Some(hark_proto::authpb::UserAddOptions { no_password }),
        ..Default::default()
    })
    .await
    .unwrap();
    auth.user_grant_role(pb::AuthUserGrantRoleRequest {
        user: "root".into(),
        role: "root".into(),
    })
    .await
    .unwrap();
    auth.auth_enable(pb::AuthEnableRequest {}).await.unwrap();
    if no_password {
        return String::new();
    }
    auth.authenticate(pb::AuthenticateRequest {
        name: "root".into(),
        password: ROOT_PW.into(),
    })
    .await
    .unwrap()
    .into_inner()
    .token
}

// --- HTTP/2 frames by hand ---------------------------------------------

const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
const SETTINGS: u8 = 0x4;
const GOAWAY: u8 = 0x7;
const HEADERS: u8 = 0x1;
const END_HEADERS: u8 = 0x4;

fn frame_header(len: usize, kind: u8, flags: u8, stream: u32) -> Vec<u8> {
    let mut f = (len as u32).to_be_bytes()[1..].to_vec();
    f.push(kind);
    f.push(flags);
    f.extend_from_slice(&stream.to_be_bytes());
    f
}

/// Reads frames until `want` arrives (or the connection ends); returns it.
fn read_until(s: &mut TcpStream, want: u8) -> Option<(u8, Vec<u8>)> {
    loop {
        let mut head = [0u8; 9];
        s.read_exact(&mut head).ok()?;
        let len = (usize::from(head[0]) << 16) | (usize::from(head[1]) << 8) | usize::from(head[2]);
        let mut payload = vec![0u8; len];
        s.read_exact(&mut payload).ok()?;
        if head[3] == want {
            return Some((head[4], payload));
        }
    }
}

/// The server's SETTINGS, as (identifier, value) pairs.
fn server_settings(addr: SocketAddr) -> Vec<(u16, u32)> {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(PREFACE).unwrap();
    s.write_all(&frame_header(0, SETTINGS, 0, 0)).unwrap();
    let (_, payload) = read_until(&mut s, SETTINGS).expect("the server's SETTINGS");
    payload
        .chunks(6)
        .map(|c| {
            (
                u16::from_be_bytes([c[0], c[1]]),
                u32::from_be_bytes([c[2], c[3], c[4], c[5]]),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_headers_frame_ends_the_connection_at_its_header() {
    let server = common::start(&[]).await;
    let addr = addr_of(&server.endpoint());
    let settings = tokio::task::spawn_blocking(move || server_settings(addr))
        .await
        .unwrap();
    // SETTINGS_MAX_FRAME_SIZE left at its default (16,384): absent, or that.
    assert!(
        settings.iter().all(|&(id, v)| id != 0x5 || v == 16_384),
        "{settings:?}"
    );
    let goaway = tokio::task::spawn_blocking(move || {
        let mut s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.write_all(PREFACE).unwrap();
        s.write_all(&frame_header(0, SETTINGS, 0, 0)).unwrap();
        // The HPACK bomb's start: a HEADERS frame announcing 16 MB, of which
        // only the first 64 KiB are sent. A server that waits for the whole
        // frame before judging it never answers.
        s.write_all(&frame_header((16 << 20) - 1, HEADERS, END_HEADERS, 1))
            .unwrap();
        let mut block = vec![0x40, 0x01, b'x', 0x7f, 0x81, 0x1f];
        block.extend(std::iter::repeat_n(b'a', 4_000));
        block.resize(64 << 10, 0xbe);
        let _ = s.write_all(&block);
        read_until(&mut s, GOAWAY)
    })
    .await
    .unwrap();
    let (_, payload) = goaway.expect("a GOAWAY before the rest of the frame");
    let code = u32::from_be_bytes(payload[4..8].try_into().unwrap());
    assert_eq!(code, 0x6, "FRAME_SIZE_ERROR");
    // The member serves on.
    let mut client = server.client().await;
    client.put("still", "up", None).await.unwrap();
}

/// etcd's `--grpc-keepalive-interval` and `--grpc-keepalive-timeout`: an
/// idle connection is pinged, and one whose client no longer answers is
/// closed, so a vanished client's watches and keep-alives do not linger.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_stops_answering_pings_is_cut_off() {
    const PING: u8 = 0x6;
    let server = common::start(&[
        "--grpc-keepalive-interval=300ms",
        "--grpc-keepalive-timeout=500ms",
    ])
    .await;
    let addr = addr_of(&server.endpoint());
    let (pinged, closed_after) = tokio::task::spawn_blocking(move || {
        let mut s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.write_all(PREFACE).unwrap();
        s.write_all(&frame_header(0, SETTINGS, 0, 0)).unwrap();
        let pinged = read_until(&mut s, PING).is_some();
        // Never answered: the server must give up on the connection.
        let since = std::time::Instant::now();
        let mut rest = Vec::new();
        let _ = s.read_to_end(&mut rest);
        (pinged, since.elapsed())
    })
    .await
    .unwrap();
    assert!(pinged, "no PING on an idle connection");
    assert!(
        closed_after < Duration::from_secs(5),
        "the connection stayed open {closed_after:?} after an unanswered PING"
    );
    let mut client = server.client().await;
    client.put("still", "up", None).await.unwrap();
}

// --- one identity boundary ----------------------------------------------

/// A raw HTTP/1.1 request; returns the status and the body's first line.
fn http(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        request += &format!("{name}: {value}\r\n");
    }
    request += "\r\n";
    request += body;
    s.write_all(request.as_bytes()).unwrap();
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let code = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (code, body.lines().next().unwrap_or("").to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_internal_identity_header_names_nobody_on_any_route_or_port() {
    let peer_port = common::free_port();
    let peer_url = format!("http://127.0.0.1:{peer_port}");
    let dir = tempfile::tempdir().unwrap();
    let args = vec![
        "hark".to_string(),
        "--listen-client-urls=http://127.0.0.1:0".into(),
        "--listen-metrics-urls=http://127.0.0.1:0".into(),
        format!("--listen-peer-urls={peer_url}"),
        format!("--initial-advertise-peer-urls={peer_url}"),
        format!("--initial-cluster=default={peer_url}"),
        format!("--data-dir={}", dir.path().display()),
    ];
    let config = <hark_server::Config as clap::Parser>::try_parse_from(args).unwrap();
    let server = hark_server::start(&config).await.unwrap();
    let endpoint = server.endpoints()[0].clone();
    let client_addr = server.client_addrs[0];
    let metrics_addr = server.metrics_addrs[0];
    let ch = channel(&endpoint).await;
    let root = enable_auth(&ch, false).await;

    // gRPC on the client port: every call is refused as anonymous.
    let anonymous = "etcdserver: user name is empty";
    let mut kv = KvClient::new(ch.clone());
    let mut auth = AuthClient::new(ch.clone());
    let mut maintenance = MaintenanceClient::new(ch.clone());
    let mut lease = LeaseClient::new(ch.clone());
    let statuses = [
        kv.range(spoofed(pb::RangeRequest {
            key: b"a".to_vec().into(),
            ..Default::default()
        }))
        .await
        .err(),
        kv.put(spoofed(pb::PutRequest {
            key: b"a".to_vec().into(),
            ..Default::default()
        }))
        .await
        .err(),
        auth.user_list(spoofed(pb::AuthUserListRequest {}))
            .await
            .err(),
        auth.role_list(spoofed(pb::AuthRoleListRequest {}))
            .await
            .err(),
        auth.user_add(spoofed(pb::AuthUserAddRequest {
            name: "mallory".into(),
            password: "x".into(),
            ..Default::default()
        }))
        .await
        .err(),
        maintenance
            .hash_kv(spoofed(pb::HashKvRequest { revision: 0 }))
            .await
            .err(),
        lease
            .lease_grant(spoofed(pb::LeaseGrantRequest { ttl: 60, id: 0 }))
            .await
            .err(),
    ];
    for (i, status) in statuses.into_iter().enumerate() {
        let status = status.unwrap_or_else(|| panic!("gRPC call {i} was answered"));
        assert_eq!(
            (status.code(), status.message()),
            (tonic::Code::InvalidArgument, anonymous),
            "gRPC call {i}"
        );
    }
    // A watch create with the header is refused as anonymous too.
    let (tx, rx) = tokio::sync::mpsc::channel(1);
    tx.send(pb::WatchRequest {
        request_union: Some(pb::watch_request::RequestUnion::CreateRequest(
            pb::WatchCreateRequest {
                key: b"a".to_vec().into(),
                ..Default::default()
            },
        )),
    })
    .await
    .unwrap();
    let mut watch = WatchClient::new(ch.clone())
        .watch(spoofed(tokio_stream::wrappers::ReceiverStream::new(rx)))
        .await
        .unwrap()
        .into_inner();
    let created = watch.message().await.unwrap().unwrap();
    assert!(created.canceled, "{created:?}");
    assert!(created.cancel_reason.contains(anonymous), "{created:?}");

    // HTTP on the client and metrics ports: a privileged route refuses,
    // and every route answers the spoofed request as it answers one without
    // the header.
    let privileged: &[(&str, &str, &str)] = &[
        ("GET", "/debug/watch/streams", ""),
        ("POST", "/v3/kv/range", r#"{"key":"YQ=="}"#),
        ("POST", "/v3/kv/put", r#"{"key":"YQ==","value":"YQ=="}"#),
        ("POST", "/v3/auth/user/list", "{}"),
        ("POST", "/v3/auth/role/list", "{}"),
        ("GET", "/v1/kv/a", ""),
        ("PUT", "/v1/kv/a", "x"),
    ];
    let public: &[(&str, &str, &str)] = &[
        ("GET", "/metrics", ""),
        ("GET", "/health", ""),
        ("GET", "/livez", ""),
        ("GET", "/readyz", ""),
        ("GET", "/version", ""),
        ("GET", "/ui/", ""),
    ];
    let metrics_routes: &[(&str, &str, &str)] = &[
        ("GET", "/debug/watch/streams", ""),
        ("GET", "/metrics", ""),
        ("GET", "/health", ""),
        ("GET", "/livez", ""),
        ("GET", "/readyz", ""),
    ];
    let mut checked = 0;
    for (addr, routes) in [
        (client_addr, privileged),
        (client_addr, public),
        (metrics_addr, metrics_routes),
    ] {
        for &(method, path, body) in routes {
            let (with, with_body) = tokio::task::spawn_blocking(move || {
                http(addr, method, path, &[(SPOOF, "root")], body)
            })
            .await
            .unwrap();
            let (without, _) =
                tokio::task::spawn_blocking(move || http(addr, method, path, &[], body))
                    .await
                    .unwrap();
            assert_ne!(with, 0, "{method} {path} on {addr} answered nothing");
            if path != "/metrics" {
                assert_eq!(with, without, "{method} {path} on {addr}: {with_body}");
            }
            let is_privileged = routes.as_ptr() != public.as_ptr()
                && !["/metrics", "/health", "/livez", "/readyz"].contains(&path);
            if is_privileged {
                assert!(
                    !(200..300).contains(&with),
                    "{method} {path} on {addr} answered {with}: {with_body}"
                );
            }
            checked += 1;
        }
    }
    assert_eq!(
        checked,
        privileged.len() + public.len() + metrics_routes.len()
    );
    // With root's token the privileged report is there (the route works).
    let token = root.clone();
    let (ok, _) = tokio::task::spawn_blocking(move || {
        http(
            client_addr,
            "GET",
            "/debug/watch/streams",
            &[("token", &token)],
            "",
        )
    })
    .await
    .unwrap();
    assert_eq!(ok, 200);

    // The peer port: the header changes nothing there either.
    let peer = Channel::from_shared(peer_url)
        .unwrap()
        .connect()
        .await
        .unwrap();
    let members = |spoof: bool| {
        let peer = peer.clone();
        async move {
            let mut request = tonic::Request::new(hark_proto::harkpeerpb::Envelope {
                data: hark_raft_unit(),
                format: hark_raft::format::PEER_FORMAT,
            });
            if spoof {
                request
                    .metadata_mut()
                    .insert(SPOOF, "root".parse().unwrap());
            }
            hark_proto::harkpeerpb::peer_client::PeerClient::new(peer)
                .members(request)
                .await
                .map(|r| r.into_inner().data)
                .map_err(|s| s.code())
        }
    };
    assert_eq!(members(true).await, members(false).await);
    server.shutdown().await;
}

/// The peer protocol's encoding of `()` (Members takes no argument): what
/// the server answers is compared with and without the header, so any
/// well-formed envelope will do.
fn hark_raft_unit() -> bytes::Bytes {
    bytes::Bytes::new()
}

// --- limits before work -------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anonymous_watch_streams_get_no_engine_stream() {
    let server = common::start(&[]).await;
    let endpoint = server.endpoint();
    let ch = channel(&endpoint).await;
    let root = enable_auth(&ch, false).await;
    let mut streams = Vec::new();
    for i in 0..20 {
        let (tx, rx) = tokio::sync::mpsc::channel(1);
        tx.send(pb::WatchRequest {
            request_union: Some(pb::watch_request::RequestUnion::CreateRequest(
                pb::WatchCreateRequest {
                    key: format!("k{i}").into_bytes().into(),
                    ..Default::default()
                },
            )),
        })
        .await
        .unwrap();
        let token = if i % 2 == 0 { "" } else { "not-a-token.1" };
        let mut inbound = WatchClient::new(ch.clone())
            .watch(with_token(
                tokio_stream::wrappers::ReceiverStream::new(rx),
                token,
            ))
            .await
            .unwrap()
            .into_inner();
        let answer = inbound.message().await.unwrap().unwrap();
        assert!(answer.created && answer.canceled, "{answer:?}");
        let expected = if token.is_empty() {
            "rpc error: code = InvalidArgument desc = etcdserver: user name is empty"
        } else {
            "rpc error: code = Unauthenticated desc = etcdserver: invalid auth token"
        };
        assert_eq!(answer.cancel_reason, expected);
        streams.push((tx, inbound));
    }
    // All 20 are open, and the engine holds none of them.
    let addr = addr_of(&endpoint);
    let report = tokio::task::spawn_blocking(move || {
        http(addr, "GET", "/debug/watch/streams", &[("token", &root)], "")
    })
    .await
    .unwrap();
    assert_eq!(report.0, 200);
    assert!(report.1.contains(r#""streams":0"#), "{}", report.1);
    // Still answering: a second create on an open anonymous stream.
    let (tx, inbound) = &mut streams[0];
    tx.send(pb::WatchRequest {
        request_union: Some(pb::watch_request::RequestUnion::CreateRequest(
            pb::WatchCreateRequest {
                key: b"again".to_vec().into(),
                ..Default::default()
            },
        )),
    })
    .await
    .unwrap();
    let again = inbound.message().await.unwrap().unwrap();
    assert!(again.canceled, "{again:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_anonymous_keep_alive_stream_is_refused_at_open() {
    let server = common::start(&[]).await;
    let ch = channel(&server.endpoint()).await;
    enable_auth(&ch, false).await;
    // The client sends nothing: the refusal must not wait for a request.
    let (_tx, rx) = tokio::sync::mpsc::channel::<pb::LeaseKeepAliveRequest>(1);
    let opened = tokio::time::timeout(Duration::from_secs(10), async {
        let mut stream = LeaseClient::new(ch.clone())
            .lease_keep_alive(tokio_stream::wrappers::ReceiverStream::new(rx))
            .await?
            .into_inner();
        stream.message().await
    })
    .await
    .expect("an answer without a request");
    let status = opened.expect_err("refused");
    assert_eq!(
        (status.code(), status.message()),
        (
            tonic::Code::InvalidArgument,
            "etcdserver: user name is empty"
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn user_changes_are_checked_before_bcrypt_runs() {
    // At cost 31 one hash takes days: a refusal that arrives at all was
    // decided before hashing.
    let server = common::start(&["--bcrypt-cost=31"]).await;
    let ch = channel(&server.endpoint()).await;
    enable_auth(&ch, true).await;
    let mut auth = AuthClient::new(ch.clone());
    for _ in 0..4 {
        let add = tokio::time::timeout(
            Duration::from_secs(10),
            auth.user_add(pb::AuthUserAddRequest {
                name: "mallory".into(),
                password: "pw".into(),
                ..Default::default()
            }),
        )
        .await
        .expect("refused before hashing");
        let status = add.expect_err("refused");
        assert_eq!(status.message(), "etcdserver: user name is empty");
        let change = tokio::time::timeout(
            Duration::from_secs(10),
            auth.user_change_password(pb::AuthUserChangePasswordRequest {
                name: "root".into(),
                password: "pw".into(),
                ..Default::default()
            }),
        )
        .await
        .expect("refused before hashing");
        let status = change.expect_err("refused");
        assert_eq!(status.message(), "etcdserver: user name is empty");
    }
    // The member is not busy hashing: it answers at once (Status, like
    // etcd's, wants a user under auth, so the answer is that refusal).
    let status = tokio::time::timeout(
        Duration::from_secs(10),
        MaintenanceClient::new(ch).status(pb::StatusRequest {}),
    )
    .await
    .expect("answered while the refused calls were made");
    let status = status.expect_err("anonymous");
    assert_eq!(status.message(), "etcdserver: user name is empty");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invalid_write_is_refused_before_the_log() {
    // A 100k-op txn refused only at apply cost a proposal, a log append, an
    // fsync and an apply (and held up every put queued behind it): refused
    // writes must leave the log where it was.
    let server = common::start(&["--max-txn-ops=4"]).await;
    let ch = channel(&server.endpoint()).await;
    let mut kv = KvClient::new(ch.clone());
    let mut maintenance = MaintenanceClient::new(ch);
    kv.put(pb::PutRequest {
        key: "a".into(),
        ..Default::default()
    })
    .await
    .unwrap();
    let index = |s: pb::StatusResponse| (s.raft_index, s.raft_applied_index);
    // Once the put's entry shows as applied (the status can trail the
    // answer a little), the log is at rest.
    let mut before = (0, 1);
    for _ in 0..100 {
        before = index(
            maintenance
                .status(pb::StatusRequest {})
                .await
                .unwrap()
                .into_inner(),
        );
        if before.0 == before.1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(before.0, before.1, "the log did not come to rest");
    let range = pb::RequestOp {
        request: Some(pb::request_op::Request::RequestRange(pb::RangeRequest {
            key: "a".into(),
            ..Default::default()
        })),
    };
    for _ in 0..5 {
        let status = kv
            .put(pb::PutRequest::default())
            .await
            .expect_err("an empty key");
        assert_eq!(
            (status.code(), status.message()),
            (
                tonic::Code::InvalidArgument,
                "etcdserver: key is not provided"
            )
        );
        let status = kv
            .txn(pb::TxnRequest {
                success: vec![range.clone(); 5],
                ..Default::default()
            })
            .await
            .expect_err("over --max-txn-ops");
        assert_eq!(
            (status.code(), status.message()),
            (
                tonic::Code::InvalidArgument,
                "etcdserver: too many operations in txn request"
            )
        );
    }
    let after = index(
        maintenance
            .status(pb::StatusRequest {})
            .await
            .unwrap()
            .into_inner(),
    );
    assert_eq!(after, before, "refused writes reached the log");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_per_connection_and_watchers_per_stream_are_bounded() {
    let server = common::start(&[]).await;
    let addr = addr_of(&server.endpoint());
    let settings = tokio::task::spawn_blocking(move || server_settings(addr))
        .await
        .unwrap();
    // SETTINGS_MAX_CONCURRENT_STREAMS (0x3) at the documented default.
    assert!(settings.contains(&(0x3, 10_000)), "{settings:?}");
    drop(server);

    // The peer port has its own cap: a stranger there opens no more.
    let peer_port = common::free_port();
    let dir = tempfile::tempdir().unwrap();
    let config = <hark_server::Config as clap::Parser>::try_parse_from([
        "hark".to_string(),
        "--listen-client-urls=http://127.0.0.1:0".to_string(),
        format!("--listen-peer-urls=http://127.0.0.1:{peer_port}"),
        format!("--data-dir={}", dir.path().display()),
    ])
    .unwrap();
    let server = hark_server::start(&config).await.unwrap();
    let peer: SocketAddr = format!("127.0.0.1:{peer_port}").parse().unwrap();
    let settings = tokio::task::spawn_blocking(move || server_settings(peer))
        .await
        .unwrap();
    assert!(
        settings.contains(&(0x3, hark_server::PEER_MAX_STREAMS)),
        "{settings:?}"
    );
    server.shutdown().await;

    let server =
        common::start(&["--max-concurrent-streams=7", "--max-watchers-per-stream=2"]).await;
    let addr = addr_of(&server.endpoint());
    let settings = tokio::task::spawn_blocking(move || server_settings(addr))
        .await
        .unwrap();
    assert!(settings.contains(&(0x3, 7)), "{settings:?}");
    let mut client = server.client().await;
    let mut stream = client.watch("a", None).await.unwrap();
    stream.watch("b", None).await.unwrap();
    stream.watch("c", None).await.unwrap();
    let mut answers = Vec::new();
    while answers.len() < 3 {
        let r = stream.message().await.unwrap().unwrap();
        answers.push((r.created(), r.canceled(), r.cancel_reason().to_string()));
    }
    assert_eq!(
        answers[..2],
        [(true, false, String::new()), (true, false, String::new())]
    );
    assert_eq!(
        answers[2],
        (
            true,
            true,
            "etcdserver: too many watchers on this stream".to_string()
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_snapshot_cannot_be_pre_empted_through_a_shared_temp_dir() {
    let server = common::start(&[]).await;
    let mut client = server.client().await;
    client.put("k", "v", None).await.unwrap();
    // Another local user takes every name the snapshot's scratch file
    // could have had in the shared temp dir, as symlinks to a file of
    // theirs (or of the victim's).
    let victim = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(victim.path(), b"precious").unwrap();
    let mut planted = Vec::new();
    for n in 0..8 {
        let name =
            std::env::temp_dir().join(format!("hark-snapshot-{}-{n}.db", std::process::id()));
        if std::os::unix::fs::symlink(victim.path(), &name).is_ok() {
            planted.push(name);
        }
    }
    let mut stream = client.snapshot().await.unwrap();
    let mut bytes = 0;
    while let Some(chunk) = stream.message().await.unwrap() {
        bytes += chunk.blob().len();
    }
    for name in planted {
        let _ = std::fs::remove_file(name);
    }
    assert!(bytes > 0, "a snapshot was sent");
    assert_eq!(std::fs::read(victim.path()).unwrap(), b"precious");
    // Nothing is left behind in the data dir.
    let left: Vec<_> = std::fs::read_dir(server.dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".snapshot-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_origin_cannot_write_by_default() {
    let server = common::start(&[]).await;
    let addr = addr_of(&server.endpoint());
    let put = |origin: Option<String>| {
        tokio::task::spawn_blocking(move || {
            let headers: Vec<(&str, &str)> = origin
                .as_deref()
                .map(|o| vec![("Origin", o)])
                .unwrap_or_default();
            http(
                addr,
                "POST",
                "/v3/kv/put",
                &headers,
                r#"{"key":"YQ==","value":"YQ=="}"#,
            )
        })
    };
    // A page elsewhere posting a "simple" cross-origin request.
    let (code, body) = put(Some("http://evil.example".into())).await.unwrap();
    assert_eq!(code, 403, "{body}");
    let mut client = server.client().await;
    assert_eq!(client.get("a", None).await.unwrap().count(), 0);
    // The console (same origin) and non-browser clients are served.
    assert_eq!(put(Some(format!("http://{addr}"))).await.unwrap().0, 200);
    assert_eq!(put(None).await.unwrap().0, 200);
    drop(server);

    // `--cors='*'` is etcd's behaviour.
    let server = common::start(&["--cors=*"]).await;
    let addr = addr_of(&server.endpoint());
    let (code, _) = tokio::task::spawn_blocking(move || {
        http(
            addr,
            "POST",
            "/v3/kv/put",
            &[("Origin", "http://evil.example")],
            r#"{"key":"YQ==","value":"YQ=="}"#,
        )
    })
    .await
    .unwrap();
    assert_eq!(code, 200);
}
