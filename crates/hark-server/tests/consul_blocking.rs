//! Consul blocking queries at scale, over real HTTP to a real server: past a
//! cap a query is refused 429 in Consul's words (and counted), and one write
//! under a prefix wakes every query parked on it, through one watcher, into
//! one shared Range.

mod common;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpSocket};

/// Both tests read process-wide metrics (one recorder for every server in
/// the process): they run one at a time.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// How long a request that should be answered at once may take.
const PROMPTLY: Duration = Duration::from_secs(10);

struct Reply {
    status: u16,
    /// Lower-cased.
    headers: String,
    body: String,
}

impl Reply {
    fn index(&self) -> u64 {
        self.headers
            .lines()
            .find_map(|l| l.strip_prefix("x-consul-index: "))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("no X-Consul-Index in {}", self.headers))
    }
}

/// One HTTP/1.1 request to `to`, sent from the local address `from` (any of
/// 127.0.0.0/8: a different client address each).
async fn request(from: Ipv4Addr, to: SocketAddr, method: &str, path: &str, body: &str) -> Reply {
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind(SocketAddr::new(IpAddr::V4(from), 0)).unwrap();
    let mut stream = socket.connect(to).await.unwrap();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {to}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.unwrap();
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").expect("a whole answer");
    let headers = head.to_ascii_lowercase();
    let body = if headers.contains("transfer-encoding: chunked") {
        unchunked(body)
    } else {
        body.to_string()
    };
    Reply {
        status: head.split_whitespace().nth(1).unwrap().parse().unwrap(),
        headers,
        body,
    }
}

fn unchunked(mut chunked: &str) -> String {
    let mut body = String::new();
    while let Some((size, rest)) = chunked.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).unwrap();
        if size == 0 {
            break;
        }
        body.push_str(&rest[..size]);
        chunked = &rest[size + 2..];
    }
    body
}

const ME: Ipv4Addr = Ipv4Addr::LOCALHOST;

/// The sum of every series of `name` whose labels contain `labels`.
async fn metric(server: SocketAddr, name: &str, labels: &str) -> f64 {
    let text = request(ME, server, "GET", "/metrics", "").await.body;
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.rsplit_once(' '))
        .filter(|(series, _)| {
            let (metric, rest) = series.split_once('{').unwrap_or((series, ""));
            metric == name && rest.contains(labels)
        })
        .map(|(_, value)| value.parse::<f64>().unwrap())
        .sum()
}

/// Waits until `name{labels}` reads `want`.
async fn until_metric(server: SocketAddr, name: &str, labels: &str, want: f64) {
    let deadline = Instant::now() + PROMPTLY;
    loop {
        let now = metric(server, name, labels).await;
        if now == want {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{name}{{{labels}}} is {now}, not {want}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Writes `value` at `key` over Consul's API; the store's revision after.
async fn put(at: SocketAddr, key: &str, value: &str) -> u64 {
    let reply = request(ME, at, "PUT", &format!("/v1/kv/{key}"), value).await;
    assert_eq!((reply.status, reply.body.as_str()), (200, "true"));
    reply.index()
}

const PARKED: &str = "hark_consul_blocking_queries_parked";
const REFUSED: &str = "hark_consul_blocking_queries_refused_total";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parked_queries_past_a_cap_are_refused_429_in_consuls_words_and_counted() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let hark = common::start(&[]).await;
    let server = hark.server.client_addrs[0];
    // Consul's routes with small caps, served as the server serves its own
    // (tonic, HTTP/1.1 allowed, tonic's connection info), calling the
    // server over gRPC.
    let channel = tonic::transport::Channel::from_shared(hark.endpoint())
        .unwrap()
        .connect()
        .await
        .unwrap();
    let grpc = tower::util::BoxCloneSyncService::new(tower::ServiceExt::map_err(
        channel,
        |e: tonic::transport::Error| hark_http::TransportError(Box::new(e)),
    ));
    let routes = hark_http::consul::routes(
        grpc,
        hark_http::consul::ConsulOptions {
            max_parked_per_client: 2,
            max_parked_total: 3,
            ..Default::default()
        },
    );
    let listener = TcpListener::bind((ME, 0)).await.unwrap();
    let consul = listener.local_addr().unwrap();
    tokio::spawn(
        tonic::transport::Server::builder()
            .accept_http1(true)
            .add_routes(tonic::service::Routes::from(routes))
            .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener)),
    );

    let index = put(consul, "capped/k", "old").await;
    let parked_before = metric(server, PARKED, "").await;
    let refused_before = (
        metric(server, REFUSED, r#"limit="per_client""#).await,
        metric(server, REFUSED, r#"limit="total""#).await,
    );
    let query = format!("/v1/kv/capped/k?index={index}&wait=60s");
    let park = |from: Ipv4Addr| {
        let query = query.clone();
        tokio::spawn(async move { request(from, consul, "GET", &query, "").await })
    };
    let refused = |from: Ipv4Addr| {
        let query = query.clone();
        async move {
            tokio::time::timeout(PROMPTLY, request(from, consul, "GET", &query, ""))
                .await
                .expect("parked past the cap instead of being refused")
        }
    };
    let (a, b, c) = (ME, Ipv4Addr::new(127, 0, 0, 2), Ipv4Addr::new(127, 0, 0, 3));

    // Client a may park two.
    let mut parked = vec![park(a), park(a)];
    until_metric(server, PARKED, "", parked_before + 2.0).await;
    let third = refused(a).await;
    assert_eq!(third.status, 429, "{}", third.body);
    assert_eq!(
        third.body,
        "Your IP is issuing too many concurrent connections, please rate limit your calls\n"
    );
    // Another client may still park, up to the total of three.
    parked.push(park(b));
    until_metric(server, PARKED, "", parked_before + 3.0).await;
    let fourth = refused(c).await;
    assert_eq!(fourth.status, 429, "{}", fourth.body);
    assert_eq!(
        fourth.body,
        "rate limit exceeded, try again later or against a different server"
    );
    assert_eq!(
        (
            metric(server, REFUSED, r#"limit="per_client""#).await,
            metric(server, REFUSED, r#"limit="total""#).await,
        ),
        (refused_before.0 + 1.0, refused_before.1 + 1.0)
    );

    // The parked ones are still served, and give their places back.
    let written = put(consul, "capped/k", "new").await;
    for query in parked {
        let answer = query.await.unwrap();
        assert_eq!(answer.status, 200, "{}", answer.body);
        assert!(answer.body.contains(r#""Value":"bmV3""#), "{}", answer.body);
        assert_eq!(answer.index(), written);
    }
    until_metric(server, PARKED, "", parked_before).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_write_wakes_the_queries_parked_on_a_prefix_through_one_watcher_into_one_range() {
    const QUERIES: usize = 8;
    let _alone = ONE_AT_A_TIME.lock().await;
    let hark = common::start(&[]).await;
    let server = hark.server.client_addrs[0];
    let ranges = || {
        metric(
            server,
            "grpc_server_handled_total",
            r#"grpc_method="Range""#,
        )
    };

    put(server, "shared/a", "1").await;
    let index = put(server, "shared/b", "2").await;
    let ranges_before = ranges().await;
    let query = format!("/v1/kv/shared/?recurse&index={index}&wait=60s");
    let parked: Vec<_> = (0..QUERIES)
        .map(|_| {
            let query = query.clone();
            tokio::spawn(async move { request(ME, server, "GET", &query, "").await })
        })
        .collect();
    // Each query read once before it parked, and all wait on one watcher.
    until_metric(server, PARKED, "", QUERIES as f64).await;
    until_metric(
        server,
        "grpc_server_handled_total",
        r#"grpc_method="Range""#,
        ranges_before + QUERIES as f64,
    )
    .await;
    until_metric(server, "etcd_debugging_mvcc_watcher_total", "", 1.0).await;
    let ranges_parked = ranges().await;

    let written = put(server, "shared/a", "3").await;
    for query in parked {
        let answer = tokio::time::timeout(PROMPTLY, query)
            .await
            .expect("a parked query was not woken")
            .unwrap();
        assert_eq!(answer.status, 200, "{}", answer.body);
        assert_eq!(answer.index(), written);
        // shared/a is now "3" (base64 "Mw==").
        assert!(
            answer
                .body
                .contains(r#""Key":"shared/a","Flags":0,"Value":"Mw==""#),
            "{}",
            answer.body
        );
    }
    // Counted when its answer went out, before the queries had theirs.
    assert_eq!(
        ranges().await - ranges_parked,
        1.0,
        "one Range for all {QUERIES}"
    );
}
