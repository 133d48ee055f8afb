//! go-grpc-prometheus' server counters, which etcd exports and dashboards use:
//! `grpc_server_started_total`, `grpc_server_handled_total`,
//! `grpc_server_msg_received_total` and `grpc_server_msg_sent_total`.
//!
//! One tower layer ([`GrpcMetricsLayer`]) around the gRPC routes counts them
//! for every method, so no handler counts anything. It reads what goes over
//! the wire: the method from the path, messages from the gRPC framing of the
//! request and response bodies, and the code from `grpc-status` (in the
//! trailers, or in the headers of a trailers-only answer). A call whose
//! response is dropped before its trailers went out lost its client: it
//! counts as `Canceled`, as grpc-go counts a cancelled context.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use axum::body::Body;
use bytes::Bytes;
use metrics::Counter;
use pin_project_lite::pin_project;
use tonic::{Code, Status};
use tower::{Layer, Service};

/// Every method Hark serves, as `(service, method, grpc_type)`; each one's
/// series exist (at zero) from the first scrape, as go-grpc-prometheus
/// pre-registers them.
pub const METHODS: &[(&str, &str, &str)] = &[
    ("etcdserverpb.KV", "Range", "unary"),
    ("etcdserverpb.KV", "Put", "unary"),
    ("etcdserverpb.KV", "DeleteRange", "unary"),
    ("etcdserverpb.KV", "Txn", "unary"),
    ("etcdserverpb.KV", "Compact", "unary"),
    ("etcdserverpb.Watch", "Watch", "bidi_stream"),
    ("etcdserverpb.Lease", "LeaseGrant", "unary"),
    ("etcdserverpb.Lease", "LeaseRevoke", "unary"),
    ("etcdserverpb.Lease", "LeaseKeepAlive", "bidi_stream"),
    ("etcdserverpb.Lease", "LeaseTimeToLive", "unary"),
    ("etcdserverpb.Lease", "LeaseLeases", "unary"),
    ("etcdserverpb.Cluster", "MemberAdd", "unary"),
    ("etcdserverpb.Cluster", "MemberRemove", "unary"),
    ("etcdserverpb.Cluster", "MemberUpdate", "unary"),
    ("etcdserverpb.Cluster", "MemberList", "unary"),
    ("etcdserverpb.Cluster", "MemberPromote", "unary"),
    ("etcdserverpb.Maintenance", "Alarm", "unary"),
    ("etcdserverpb.Maintenance", "Status", "unary"),
    ("etcdserverpb.Maintenance", "Defragment", "unary"),
    ("etcdserverpb.Maintenance", "Hash", "unary"),
    ("etcdserverpb.Maintenance", "HashKV", "unary"),
    ("etcdserverpb.Maintenance", "Snapshot", "server_stream"),
    ("etcdserverpb.Maintenance", "MoveLeader", "unary"),
    ("etcdserverpb.Maintenance", "Downgrade", "unary"),
    ("etcdserverpb.Auth", "AuthEnable", "unary"),
    ("etcdserverpb.Auth", "AuthDisable", "unary"),
    ("etcdserverpb.Auth", "AuthStatus", "unary"),
    ("etcdserverpb.Auth", "Authenticate", "unary"),
    ("etcdserverpb.Auth", "UserAdd", "unary"),
    ("etcdserverpb.Auth", "UserGet", "unary"),
    ("etcdserverpb.Auth", "UserList", "unary"),
    ("etcdserverpb.Auth", "UserDelete", "unary"),
    ("etcdserverpb.Auth", "UserChangePassword", "unary"),
    ("etcdserverpb.Auth", "UserGrantRole", "unary"),
    ("etcdserverpb.Auth", "UserRevokeRole", "unary"),
    ("etcdserverpb.Auth", "RoleAdd", "unary"),
    ("etcdserverpb.Auth", "RoleGet", "unary"),
    ("etcdserverpb.Auth", "RoleList", "unary"),
    ("etcdserverpb.Auth", "RoleDelete", "unary"),
    ("etcdserverpb.Auth", "RoleGrantPermission", "unary"),
    ("etcdserverpb.Auth", "RoleRevokePermission", "unary"),
];

const ALL_CODES: [Code; 17] = [
    Code::Ok,
    Code::Cancelled,
    Code::Unknown,
    Code::InvalidArgument,
    Code::DeadlineExceeded,
    Code::NotFound,
    Code::AlreadyExists,
    Code::PermissionDenied,
    Code::ResourceExhausted,
    Code::FailedPrecondition,
    Code::Aborted,
    Code::OutOfRange,
    Code::Unimplemented,
    Code::Internal,
    Code::Unavailable,
    Code::DataLoss,
    Code::Unauthenticated,
];

/// Describes the four counters and creates every method's series at zero.
fn describe() {
    metrics::describe_counter!(
        "grpc_server_started_total",
        "Total number of RPCs started on the server."
    );
    metrics::describe_counter!(
        "grpc_server_handled_total",
        "Total number of RPCs completed on the server, regardless of success or failure."
    );
    metrics::describe_counter!(
        "grpc_server_msg_received_total",
        "Total number of RPC stream messages received on the server."
    );
    metrics::describe_counter!(
        "grpc_server_msg_sent_total",
        "Total number of gRPC stream messages sent by the server."
    );
}

/// go-grpc-prometheus' handling-time histogram (etcd exports it under
/// `--metrics=extensive`; Hark always does).
pub const HANDLING_SECONDS: &str = "grpc_server_handling_seconds";

/// One method's series, looked up once when the layer is built.
struct MethodSeries {
    /// `unary` or `stream`, as etcd's `etcd_server_client_requests_total`
    /// tells calls apart.
    call_type: &'static str,
    handling: metrics::Histogram,
    started: Counter,
    received: Counter,
    sent: Counter,
    /// Indexed by the code's number (`ALL_CODES` is in that order).
    handled: [Counter; ALL_CODES.len()],
}

impl MethodSeries {
    fn new(service: &'static str, method: &'static str, kind: &'static str) -> MethodSeries {
        let labels = [
            ("grpc_type", kind),
            ("grpc_service", service),
            ("grpc_method", method),
        ];
        let series = |name: &'static str| {
            let counter = metrics::counter!(name, &labels);
            // Exported at zero from the first scrape, as go-grpc-prometheus
            // pre-registers them.
            counter.increment(0);
            counter
        };
        MethodSeries {
            call_type: if kind == "unary" { "unary" } else { "stream" },
            handling: metrics::histogram!(HANDLING_SECONDS, &labels),
            started: series("grpc_server_started_total"),
            received: series("grpc_server_msg_received_total"),
            sent: series("grpc_server_msg_sent_total"),
            handled: ALL_CODES.map(|code| {
                let counter = metrics::counter!("grpc_server_handled_total",
                    "grpc_type" => kind, "grpc_service" => service,
                    "grpc_method" => method, "grpc_code" => code_name(code));
                counter.increment(0);
                counter
            }),
        }
    }

    fn handled(&self, code: Code) {
        // tonic's codes are grpc's 17, numbered as `ALL_CODES` is ordered.
        let index = usize::try_from(i32::from(code)).unwrap_or(2);
        if let Some(counter) = self.handled.get(index) {
            counter.increment(1);
        }
    }
}

/// Counts `grpc_server_*` for the gRPC routes it wraps (see the module docs).
/// Build it after the metrics recorder is installed: it registers every
/// method's series at zero.
#[derive(Clone)]
pub struct GrpcMetricsLayer {
    /// Keyed by request path, `/etcdserverpb.KV/Range`.
    methods: Arc<HashMap<String, Arc<MethodSeries>>>,
}

impl GrpcMetricsLayer {
    pub fn new() -> GrpcMetricsLayer {
        describe();
        let methods = METHODS
            .iter()
            .map(|&(service, method, kind)| {
                let series = MethodSeries::new(service, method, kind);
                (format!("/{service}/{method}"), Arc::new(series))
            })
            .collect();
        GrpcMetricsLayer {
            methods: Arc::new(methods),
        }
    }
}

impl<S> Layer<S> for GrpcMetricsLayer {
    type Service = GrpcMetrics<S>;

    fn layer(&self, inner: S) -> GrpcMetrics<S> {
        GrpcMetrics {
            inner,
            methods: self.methods.clone(),
        }
    }
}

#[derive(Clone)]
pub struct GrpcMetrics<S> {
    inner: S,
    methods: Arc<HashMap<String, Arc<MethodSeries>>>,
}

impl<S> Service<http::Request<Body>> for GrpcMetrics<S>
where
    S: Service<http::Request<Body>, Response = http::Response<Body>>,
{
    type Response = http::Response<Body>;
    type Error = S::Error;
    type Future = CountedCall<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        // Paths no method answers to (Unimplemented) are not counted, as
        // go-grpc-prometheus counts only registered methods.
        let Some(series) = self.methods.get(request.uri().path()).cloned() else {
            return CountedCall {
                inner: self.inner.call(request),
                ending: Ending(None),
            };
        };
        series.started.increment(1);
        let version = client_api_version(request.headers());
        metrics::counter!("etcd_server_client_requests_total",
            "client_api_version" => version, "type" => series.call_type)
        .increment(1);
        let received = series.received.clone();
        let request = request.map(|body| Body::new(CountedBody::new(body, received, Ending(None))));
        CountedCall {
            inner: self.inner.call(request),
            ending: Ending(Some((series, std::time::Instant::now()))),
        }
    }
}

pin_project! {
    /// A counted call until its handler answers; then its response body.
    pub struct CountedCall<F> {
        #[pin]
        inner: F,
        ending: Ending,
    }
}

impl<F, E> Future for CountedCall<F>
where
    F: Future<Output = Result<http::Response<Body>, E>>,
{
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let response = ready!(this.inner.poll(cx))?;
        let mut ending = std::mem::take(this.ending);
        let Some(series) = ending.0.as_ref().map(|(series, _)| series.clone()) else {
            return Poll::Ready(Ok(response));
        };
        // A trailers-only answer carries its status in the headers.
        if let Some(status) = Status::from_header_map(response.headers()) {
            ending.finish(status.code());
        }
        let sent = series.sent.clone();
        Poll::Ready(Ok(
            response.map(|body| Body::new(CountedBody::new(body, sent, ending)))
        ))
    }
}

/// Counts a call as handled exactly once: with the code it ended with, or
/// as `Canceled` if dropped unfinished (its client went away).
#[derive(Default)]
struct Ending(Option<(Arc<MethodSeries>, std::time::Instant)>);

impl Ending {
    fn finish(&mut self, code: Code) {
        if let Some((series, started)) = self.0.take() {
            series.handled(code);
            series.handling.record(started.elapsed().as_secs_f64());
        }
    }
}

/// The client's API version as etcd's clients send it (`client-api-version`,
/// e.g. `3.7`), for `etcd_server_client_requests_total`; `unknown` when
/// absent or not a short `major.minor`, so a client cannot make up label
/// values without end.
fn client_api_version(headers: &http::HeaderMap) -> String {
    let Some(value) = headers
        .get("client-api-version")
        .and_then(|v| v.to_str().ok())
    else {
        return "unknown".to_string();
    };
    let short = value.len() <= 7;
    let mut parts = value.split('.');
    let numeric = |p: Option<&str>| {
        p.is_some_and(|p| !p.is_empty() && p.len() <= 3 && p.bytes().all(|b| b.is_ascii_digit()))
    };
    if short && numeric(parts.next()) && numeric(parts.next()) && parts.next().is_none() {
        value.to_string()
    } else {
        "unknown".to_string()
    }
}

impl Drop for Ending {
    fn drop(&mut self) {
        self.finish(Code::Cancelled);
    }
}

pin_project! {
    /// A request or response body whose whole gRPC messages are counted as
    /// they pass; a response body also ends its call at the trailers.
    struct CountedBody<B> {
        #[pin]
        inner: B,
        framing: Framing,
        messages: Counter,
        ending: Ending,
    }
}

impl<B> CountedBody<B> {
    fn new(inner: B, messages: Counter, ending: Ending) -> Self {
        CountedBody {
            inner,
            framing: Framing::default(),
            messages,
            ending,
        }
    }
}

impl<B> http_body::Body for CountedBody<B>
where
    B: http_body::Body<Data = Bytes>,
{
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, B::Error>>> {
        let this = self.project();
        let frame = ready!(this.inner.poll_frame(cx));
        match &frame {
            Some(Ok(frame)) => {
                if let Some(data) = frame.data_ref() {
                    let whole = this.framing.feed(data);
                    if whole > 0 {
                        this.messages.increment(whole);
                    }
                } else if let Some(trailers) = frame.trailers_ref() {
                    let code =
                        Status::from_header_map(trailers).map_or(Code::Unknown, |s| s.code());
                    this.ending.finish(code);
                }
            }
            // A body that fails, or ends without trailers, ended abnormally.
            Some(Err(_)) | None => this.ending.finish(Code::Unknown),
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

/// Finds whole messages in a gRPC body's bytes, however they are split
/// into frames: each message is a 5-byte prefix (a compression flag and a
/// big-endian length) followed by that many bytes.
#[derive(Default, Debug)]
struct Framing {
    prefix: [u8; 5],
    /// Prefix bytes seen of the current message; 5 once in its payload.
    prefix_len: usize,
    /// Payload bytes of the current message still to come.
    payload_left: usize,
}

impl Framing {
    /// Takes the next bytes; returns how many messages they completed.
    fn feed(&mut self, mut data: &[u8]) -> u64 {
        let mut whole = 0;
        while !data.is_empty() {
            if self.prefix_len < 5 {
                let take = (5 - self.prefix_len).min(data.len());
                self.prefix[self.prefix_len..self.prefix_len + take].copy_from_slice(&data[..take]);
                self.prefix_len += take;
                data = &data[take..];
                if self.prefix_len == 5 {
                    let len = u32::from_be_bytes([
                        self.prefix[1],
                        self.prefix[2],
                        self.prefix[3],
                        self.prefix[4],
                    ]);
                    self.payload_left = len as usize;
                }
            } else {
                let take = self.payload_left.min(data.len());
                self.payload_left -= take;
                data = &data[take..];
            }
            if self.prefix_len == 5 && self.payload_left == 0 {
                whole += 1;
                self.prefix_len = 0;
            }
        }
        whole
    }
}

/// grpc-go's names for status codes (the `grpc_code` label values).
fn code_name(code: Code) -> &'static str {
    match code {
        Code::Ok => "OK",
        Code::Cancelled => "Canceled",
        Code::Unknown => "Unknown",
        Code::InvalidArgument => "InvalidArgument",
        Code::DeadlineExceeded => "DeadlineExceeded",
        Code::NotFound => "NotFound",
        Code::AlreadyExists => "AlreadyExists",
        Code::PermissionDenied => "PermissionDenied",
        Code::ResourceExhausted => "ResourceExhausted",
        Code::FailedPrecondition => "FailedPrecondition",
        Code::Aborted => "Aborted",
        Code::OutOfRange => "OutOfRange",
        Code::Unimplemented => "Unimplemented",
        Code::Internal => "Internal",
        Code::Unavailable => "Unavailable",
        Code::DataLoss => "DataLoss",
        Code::Unauthenticated => "Unauthenticated",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_api_versions_are_short_numbers_or_unknown() {
        let version = |v: Option<&str>| {
            let mut headers = http::HeaderMap::new();
            if let Some(v) = v {
                headers.insert("client-api-version", v.parse().unwrap());
            }
            client_api_version(&headers)
        };
        assert_eq!(version(Some("3.7")), "3.7");
        assert_eq!(version(Some("3.10")), "3.10");
        assert_eq!(version(None), "unknown");
        for hostile in ["3", "3.7.1", "a.b", "3.", "1234.5", "3.7-x", ""] {
            assert_eq!(version(Some(hostile)), "unknown", "{hostile:?}");
        }
    }

    fn message(len: usize) -> Vec<u8> {
        let mut m = vec![0];
        m.extend_from_slice(&(len as u32).to_be_bytes());
        m.extend(std::iter::repeat_n(7, len));
        m
    }

    /// Three messages (one empty) cut at every pair of points: always three.
    #[test]
    fn framing_counts_whole_messages_however_the_bytes_are_split() {
        let bytes: Vec<u8> = [message(3), message(0), message(300)].concat();
        for a in 0..=bytes.len() {
            for b in a..=bytes.len() {
                let mut framing = Framing::default();
                let counts = [
                    framing.feed(&bytes[..a]),
                    framing.feed(&bytes[a..b]),
                    framing.feed(&bytes[b..]),
                ];
                assert_eq!(counts.iter().sum::<u64>(), 3, "split at {a}, {b}");
                // A message counts when its last byte arrives, not before.
                let done_by_a = [8, 13, bytes.len()].iter().filter(|&&end| end <= a).count();
                assert_eq!(counts[0], done_by_a as u64, "split at {a}");
            }
        }
        let mut framing = Framing::default();
        assert_eq!(framing.feed(&message(10)[..14]), 0);
        assert_eq!(framing.feed(&[7]), 1);
    }
}
