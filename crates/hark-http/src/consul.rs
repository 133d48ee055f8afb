//! Consul's KV HTTP API (`/v1/kv/<key>`, `/v1/txn`) over the same gRPC
//! services, with Consul's blocking queries served by the watch engine.
//!
//! Indexes are Hark revisions. `X-Consul-Index` is the store's revision when
//! the answer was read; a request with `?index=N` parks until an event on
//! *its* key or prefix above N (not any change in the store: consul#3890),
//! or until `?wait` (Consul's rules: 5 min by default, at most 10, plus up to
//! a sixteenth of jitter). An index ahead of the store, or one below the
//! compaction, is answered at once.
//!
//! Parked queries are capped per client (IP address) and in all
//! ([`ConsulOptions`]); past a cap a query is answered 429 in Consul's words.
//! Queries parked on the same read that one change wakes share one Range
//! (`shared_reads`), so a write under a prefix watched by N queries costs
//! one read of it, not N.
//!
//! Under etcd's auth, a request's token (Consul's `X-Consul-Token` header,
//! `Authorization: Bearer`, or `?token=`) goes with every call it makes,
//! its parked watch included: Consul's ACL tokens become etcd users.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{FromRequestParts, Path, State};
use axum::response::Response;
use axum::routing::{MethodRouter, put};
use base64::Engine;
use bytes::Bytes;
use hark_proto::etcdserverpb::{self as pb, compare, kv_client::KvClient, request_op, response_op};
use hark_proto::mvccpb::KeyValue;
use http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use serde::{Deserialize, Serialize};
use tonic::Status;

use crate::GrpcService;
use crate::limits::ParkingLimits;
use crate::parking::Parking;
use crate::shared_reads::{ReadAt, SharedReads};

/// Consul's default blocking wait.
const DEFAULT_WAIT: Duration = Duration::from_secs(5 * 60);
/// Consul's longest blocking wait.
const MAX_WAIT: Duration = Duration::from_secs(10 * 60);

/// The default cap on blocking queries parked by one client (IP address).
///
/// A parked query costs about 10-20 KiB, almost all of it its HTTP
/// connection (hyper's buffers, starting at 8 KiB to read, and the socket's
/// in the kernel), not the watcher (~250 B in the engine) or its entry
/// here. Consul's agent allows 200 connections per client
/// (`http_max_conns_per_client`), but Consul's clients talk to a local
/// agent, which multiplexes their queries; Hark's talk to the server
/// directly, and many (consul-template with many keys, a NAT, a proxy) may
/// share one address. 1,024 leaves them five times Consul's room while one
/// address can take at most a sixteenth of [`DEFAULT_MAX_PARKED_TOTAL`].
pub const DEFAULT_MAX_PARKED_PER_CLIENT: usize = 1_024;

/// The default cap on blocking queries parked at once, across clients:
/// 16,384 queries, at ~10-20 KiB each (see
/// [`DEFAULT_MAX_PARKED_PER_CLIENT`]), are at most ~160-320 MiB and as many
/// open sockets, a bound a server sized for etcd's work can carry; a
/// deployment with more watchers should use gRPC watches, which share a
/// stream.
pub const DEFAULT_MAX_PARKED_TOTAL: usize = 16_384;

/// A request's client IP address, from what the server put in its
/// extensions about the connection; `None` when not known.
pub type ClientAddress = fn(&http::Extensions) -> Option<IpAddr>;

/// How [`routes`] serves Consul's KV API.
#[derive(Clone, Debug)]
pub struct ConsulOptions {
    /// The largest request body (a PUT's value, a transaction), in bytes.
    pub max_body_bytes: usize,
    /// Blocking queries one client (IP address) may have parked at once;
    /// 0 is no cap, as Consul's `http_max_conns_per_client = 0`.
    pub max_parked_per_client: usize,
    /// Blocking queries parked at once in all; 0 is no cap.
    pub max_parked_total: usize,
    /// Finds a request's client address. Requests it finds none for share
    /// one client's allowance.
    pub client_address: ClientAddress,
}

impl Default for ConsulOptions {
    /// etcd's request limit (`--max-request-bytes`' 1.5 MiB), the default
    /// caps, and the address tonic's server gives a plain TCP connection.
    fn default() -> ConsulOptions {
        ConsulOptions {
            max_body_bytes: 1_572_864,
            max_parked_per_client: DEFAULT_MAX_PARKED_PER_CLIENT,
            max_parked_total: DEFAULT_MAX_PARKED_TOTAL,
            client_address: tcp_client_address,
        }
    }
}

/// The peer address tonic's server records for a TCP connection
/// ([`tonic::transport::server::TcpConnectInfo`]).
pub fn tcp_client_address(extensions: &http::Extensions) -> Option<IpAddr> {
    extensions
        .get::<tonic::transport::server::TcpConnectInfo>()?
        .remote_addr()
        .map(|address| address.ip())
}

#[derive(Clone)]
struct Kv {
    grpc: GrpcService,
    parking: Parking,
    limits: ParkingLimits,
    reads: SharedReads<SharedRead, Answer>,
    client_address: ClientAddress,
    max_body_bytes: usize,
}

/// What queries share a read by: the same caller, read and answer.
#[derive(Clone, PartialEq, Eq, Hash)]
struct SharedRead {
    token: Token,
    read: Read,
    view: View,
}

/// The caller's IP address ([`ConsulOptions::client_address`]).
struct Client(Option<IpAddr>);

impl FromRequestParts<Kv> for Client {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut http::request::Parts,
        kv: &Kv,
    ) -> Result<Self, Self::Rejection> {
        Ok(Client((kv.client_address)(&parts.extensions)))
    }
}

/// The caller's etcd token, as Consul clients send theirs:
/// `X-Consul-Token`, `Authorization: Bearer <token>`, or `?token=`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct Token(pub(crate) Option<String>);

impl Token {
    fn of(headers: &HeaderMap, uri: &Uri) -> Token {
        let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
        let token = header("x-consul-token")
            .or_else(|| header("authorization").and_then(|a| a.strip_prefix("Bearer ")))
            .map(str::to_owned)
            .or_else(|| Query::of(uri).get("token").map(str::to_owned))
            .filter(|t| !t.is_empty());
        Token(token)
    }

    /// `message` as a gRPC request carrying the token (etcd's `token`
    /// metadata).
    pub(crate) fn request<T>(&self, message: T) -> tonic::Request<T> {
        let mut request = tonic::Request::new(message);
        if let Some(value) = self
            .0
            .as_deref()
            .and_then(|t| tonic::metadata::MetadataValue::try_from(t).ok())
        {
            request.metadata_mut().insert("token", value);
        }
        request
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Token {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut http::request::Parts,
        _: &S,
    ) -> Result<Self, Self::Rejection> {
        Ok(Token::of(&parts.headers, &parts.uri))
    }
}

/// Consul's KV routes, calling `grpc`.
pub fn routes(grpc: GrpcService, options: ConsulOptions) -> Router {
    let kv = Kv {
        parking: Parking::new(grpc.clone()),
        grpc,
        limits: ParkingLimits::new(options.max_parked_per_client, options.max_parked_total),
        reads: SharedReads::new(),
        client_address: options.client_address,
        max_body_bytes: options.max_body_bytes,
    };
    let key_route = || -> MethodRouter<Kv> {
        axum::routing::get(get_kv)
            .put(put_kv)
            .delete(delete_kv)
            .fallback(|| async {
                consul_error(StatusCode::METHOD_NOT_ALLOWED, "method not allowed")
            })
    };
    Router::new()
        .route("/v1/kv/{*key}", key_route())
        .route("/v1/kv/", key_route())
        .route("/v1/txn", put(txn))
        .with_state(kv)
}

/// The query string's parameters, percent-decoded; a flag without `=` has
/// an empty value.
#[derive(Debug, Default)]
struct Query(Vec<(String, String)>);

impl Query {
    fn of(uri: &Uri) -> Query {
        let decode = |s: &str| {
            percent_encoding::percent_decode_str(&s.replace('+', " "))
                .decode_utf8_lossy()
                .into_owned()
        };
        Query(
            uri.query()
                .unwrap_or("")
                .split('&')
                .filter(|p| !p.is_empty())
                .map(|p| match p.split_once('=') {
                    Some((k, v)) => (decode(k), decode(v)),
                    None => (decode(p), String::new()),
                })
                .collect(),
        )
    }

    fn has(&self, name: &str) -> bool {
        self.0.iter().any(|(k, _)| k == name)
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// A number parameter; a malformed one is a 400 with this message.
    fn number(&self, name: &str) -> Result<Option<u64>, String> {
        match self.get(name) {
            None => Ok(None),
            Some(v) => v
                .parse()
                .map(Some)
                .map_err(|_| format!("Invalid {name}: {v:?}")),
        }
    }

    /// `?wait`, as Consul takes it: a Go duration, capped at the maximum;
    /// the default when absent, zero or negative (Go parses `-5s`, and
    /// Consul then waits its default); 400 when Go would not parse it
    /// (junk, or past Go's ~292 years).
    fn wait(&self) -> Result<Duration, String> {
        let invalid = || "Invalid wait time".to_string();
        let text = match self.get("wait") {
            None | Some("") => return Ok(DEFAULT_WAIT),
            Some(text) => text,
        };
        // Go takes one sign; the duration parser takes `+` only.
        let (negative, magnitude) = match text.strip_prefix('-') {
            Some(rest) if rest.starts_with('+') => return Err(invalid()),
            Some(rest) => (true, rest),
            None => (false, text),
        };
        match hark_proto::go_duration::parse(magnitude) {
            Ok(_) if negative => Ok(DEFAULT_WAIT),
            Ok(Duration::ZERO) => Ok(DEFAULT_WAIT),
            Ok(wait) => Ok(wait.min(MAX_WAIT)),
            Err(_) => Err(invalid()),
        }
    }
}

/// The first key after every key starting with `prefix` (etcd's prefix
/// range end); `\0` (every key) for the empty prefix.
fn prefix_end(prefix: &[u8]) -> Bytes {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return Bytes::from(end);
        }
    }
    Bytes::from_static(b"\0")
}

/// The start of a prefix range: `\0` for the empty prefix (etcd refuses an
/// empty key).
fn every_key_from(prefix: Bytes) -> Bytes {
    if prefix.is_empty() {
        Bytes::from_static(b"\0")
    } else {
        prefix
    }
}

/// One key as Consul writes it (`structs.DirEntry`, fields in its order).
#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct DirEntry {
    lock_index: u64,
    key: String,
    flags: u64,
    /// base64; `null` for an empty value, as Consul stores one.
    value: Option<String>,
    create_index: i64,
    modify_index: i64,
}

impl DirEntry {
    fn of(kv: &KeyValue, with_value: bool) -> DirEntry {
        DirEntry {
            lock_index: 0,
            key: String::from_utf8_lossy(&kv.key).into_owned(),
            flags: kv.hark_flags,
            value: (with_value && !kv.value.is_empty())
                .then(|| base64::engine::general_purpose::STANDARD.encode(&kv.value)),
            create_index: kv.create_revision,
            modify_index: kv.mod_revision,
        }
    }
}

/// What a GET reads: one key, or a prefix (`?recurse`, `?keys`, `?index-map`).
#[derive(Clone, PartialEq, Eq, Hash)]
struct Read {
    key: Bytes,
    range_end: Bytes,
    keys_only: bool,
    serializable: bool,
}

impl Kv {
    /// A PUT's whole body, or Consul's 413 when it is over the limit.
    async fn read_body(&self, body: Body) -> Result<Bytes, Response> {
        axum::body::to_bytes(body, self.max_body_bytes)
            .await
            .map_err(|_| {
                consul_error(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    &format!(
                        "Request body too large, max size: {} bytes",
                        self.max_body_bytes
                    ),
                )
            })
    }

    async fn range(&self, read: &Read, token: &Token) -> Result<pb::RangeResponse, Status> {
        let request = pb::RangeRequest {
            key: read.key.clone(),
            range_end: read.range_end.clone(),
            keys_only: read.keys_only,
            serializable: read.serializable,
            ..Default::default()
        };
        // Boxed: a parked query's future is as large as the largest thing
        // it awaits, for as long as it is parked, and the in-process gRPC
        // call is by far the largest.
        Ok(
            Box::pin(kv_client(&self.grpc).range(token.request(request)))
                .await?
                .into_inner(),
        )
    }

    /// A fresh read, answered as `view` writes it, with the revision it
    /// was read at (`None` when it failed).
    async fn read_answer(&self, read: &Read, view: &View, token: &Token) -> ReadAt<Answer> {
        match self.range(read, token).await {
            Ok(response) => ReadAt {
                revision: Some(header_revision(&response)),
                value: view.answer(&response),
            },
            Err(status) => ReadAt {
                revision: None,
                value: Answer::status_error(status),
            },
        }
    }
}

/// A KV client taking answers of any size (a prefix read may be large).
fn kv_client(grpc: &GrpcService) -> KvClient<GrpcService> {
    KvClient::new(grpc.clone()).max_decoding_message_size(usize::MAX)
}

fn header_revision(response: &pb::RangeResponse) -> i64 {
    response.header.as_ref().map_or(0, |h| h.revision)
}

/// How a GET's answer is written from its read.
#[derive(Clone, PartialEq, Eq, Hash)]
struct View {
    /// The key or prefix asked for.
    key: String,
    /// `?keys`: the keys alone, each cut after this separator (if not empty).
    keys: Option<String>,
    /// Hark's `?index-map`: `{key: mod_revision}`.
    index_map: bool,
    /// `?raw` (without `?recurse`): the value alone.
    raw: bool,
}

impl View {
    fn of(query: &Query, key: String) -> View {
        let separator = query
            .get("separator")
            .or(query.get("seperator"))
            .unwrap_or("");
        View {
            key,
            keys: query.has("keys").then(|| separator.to_string()),
            index_map: query.has("index-map"),
            raw: query.has("raw") && !query.has("recurse"),
        }
    }

    fn answer(&self, response: &pb::RangeResponse) -> Answer {
        let index = header_revision(response);
        if let Some(separator) = &self.keys {
            let keys = list_keys(&response.kvs, self.key.len(), separator);
            if keys.is_empty() && !self.key.is_empty() {
                return Answer::not_found(index);
            }
            return Answer::json(StatusCode::OK, index, &keys);
        }
        if self.index_map {
            let map: BTreeMap<String, i64> = response
                .kvs
                .iter()
                .map(|kv| {
                    (
                        String::from_utf8_lossy(&kv.key).into_owned(),
                        kv.mod_revision,
                    )
                })
                .collect();
            return Answer::json(StatusCode::OK, index, &map);
        }
        if response.kvs.is_empty() {
            return Answer::not_found(index);
        }
        if self.raw {
            let mut raw = Answer::new(StatusCode::OK, response.kvs[0].value.clone());
            raw.headers
                .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"));
            raw.headers.insert(
                "x-content-type-options",
                HeaderValue::from_static("nosniff"),
            );
            raw.headers.insert(
                "content-security-policy",
                HeaderValue::from_static("sandbox"),
            );
            index_headers(&mut raw.headers, index);
            return raw;
        }
        let entries: Vec<DirEntry> = response
            .kvs
            .iter()
            .map(|kv| DirEntry::of(kv, true))
            .collect();
        Answer::json(StatusCode::OK, index, &entries)
    }
}

/// `GET /v1/kv/<key>`: the key (`?raw`: its value alone), the prefix
/// (`?recurse`), its keys (`?keys`, `?separator`), or Hark's `?index-map`
/// (`{key: mod_revision}` of the prefix). With `?index`, parks until a
/// change to what it reads (or `?wait`), within the caps on parked queries.
async fn get_kv(
    State(kv): State<Kv>,
    Client(client): Client,
    token: Token,
    key: Option<Path<String>>,
    uri: Uri,
) -> Response {
    let key = key.map(|Path(k)| k).unwrap_or_default();
    let query = Query::of(&uri);
    let whole_prefix = query.has("recurse") || query.has("keys") || query.has("index-map");
    if key.is_empty() && !whole_prefix {
        return consul_error(StatusCode::BAD_REQUEST, "Missing key name");
    }
    let key_bytes = Bytes::from(key.clone().into_bytes());
    let read = Read {
        range_end: if whole_prefix {
            prefix_end(&key_bytes)
        } else {
            Bytes::new()
        },
        key: if whole_prefix {
            every_key_from(key_bytes)
        } else {
            key_bytes
        },
        keys_only: query.has("keys") || query.has("index-map"),
        serializable: query.has("stale"),
    };
    let view = View::of(&query, key);
    let index = match query.number("index") {
        Ok(index) => index.unwrap_or(0),
        Err(e) => return bad_request(e),
    };
    let wait = match query.wait() {
        Ok(wait) => wait,
        Err(e) => return bad_request(e),
    };
    // A query that may park takes its place under the caps before it costs
    // a read, so a flood past them costs nothing.
    let slot = if index == 0 {
        None
    } else {
        match kv.limits.admit(client) {
            Ok(slot) => Some(slot),
            Err(refusal) => return consul_error(StatusCode::TOO_MANY_REQUESTS, refusal.message()),
        }
    };
    let first = match kv.range(&read, &token).await {
        Ok(first) => first,
        Err(status) => return status_error(status),
    };
    let revision = header_revision(&first);
    // Index 0 never blocks; an index ahead of the store means the client
    // saw another store (a restore): answer at once so it resets.
    if index == 0 || index > revision as u64 {
        return view.answer(&first).into();
    }
    // Only its revision is kept while parked.
    drop(first);
    let shared = kv.reads.ticket(SharedRead {
        token: token.clone(),
        read: read.clone(),
        view: view.clone(),
    });
    let mut parked = kv
        .parking
        .park(
            read.key.clone(),
            read.range_end.clone(),
            index as i64,
            token.clone(),
        )
        .await;
    let jitter = wait.mul_f64(rand::random::<f64>() / 16.0);
    let changed_at = tokio::time::timeout(wait + jitter, parked.woken())
        .await
        .ok()
        .flatten();
    drop(parked);
    drop(slot);
    // Never older than what it read first, nor than the change that woke it.
    let needed = revision.max(changed_at.unwrap_or(0));
    let answer = shared
        .answer(needed, || kv.read_answer(&read, &view, &token))
        .await;
    answer.value.clone().into()
}

/// Consul's key list: every key, or with a separator each key cut after the
/// first separator past the prefix (one entry per "directory").
fn list_keys(kvs: &[KeyValue], prefix_len: usize, separator: &str) -> Vec<String> {
    let mut keys: Vec<String> = kvs
        .iter()
        .map(|kv| {
            let key = String::from_utf8_lossy(&kv.key).into_owned();
            if separator.is_empty() || key.len() < prefix_len {
                return key;
            }
            match key[prefix_len..].find(separator) {
                Some(at) => key[..prefix_len + at + separator.len()].to_string(),
                None => key,
            }
        })
        .collect();
    keys.dedup();
    keys
}

/// `PUT /v1/kv/<key>`: the body is the value; `?cas=0` creates only,
/// `?cas=N` writes only over mod revision N. Answers `true` or `false`.
async fn put_kv(
    State(kv): State<Kv>,
    token: Token,
    key: Option<Path<String>>,
    uri: Uri,
    body: Body,
) -> Response {
    let key = key.map(|Path(k)| k).unwrap_or_default();
    if key.is_empty() {
        return consul_error(StatusCode::BAD_REQUEST, "Missing key name");
    }
    let query = Query::of(&uri);
    if ["cas", "acquire", "release"]
        .iter()
        .filter(|f| query.has(f))
        .count()
        > 1
    {
        return consul_error(StatusCode::BAD_REQUEST, "Conflicting flags");
    }
    if query.has("acquire") || query.has("release") {
        return consul_error(StatusCode::BAD_REQUEST, "Hark has no Consul sessions");
    }
    let flags = match query.number("flags") {
        Ok(flags) => flags.unwrap_or(0),
        Err(e) => return bad_request(e),
    };
    let cas = match query.number("cas") {
        Ok(cas) => cas,
        Err(e) => return bad_request(e),
    };
    let value = match kv.read_body(body).await {
        Ok(value) => value,
        Err(refused) => return refused,
    };
    let key = Bytes::from(key.into_bytes());
    let put = request_op::Request::RequestPut(pb::PutRequest {
        key: key.clone(),
        value,
        hark_flags: flags,
        ..Default::default()
    });
    let compares = cas.map(|index| vec![mod_revision_is(key, index as i64)]);
    write(&kv, &token, compares.unwrap_or_default(), put, false).await
}

/// `DELETE /v1/kv/<key>` (`?recurse`: the prefix; `?cas=N`: only over mod
/// revision N).
async fn delete_kv(
    State(kv): State<Kv>,
    token: Token,
    key: Option<Path<String>>,
    uri: Uri,
) -> Response {
    let key = key.map(|Path(k)| k).unwrap_or_default();
    let query = Query::of(&uri);
    if key.is_empty() && !query.has("recurse") {
        return consul_error(StatusCode::BAD_REQUEST, "Missing key name");
    }
    // `recurse` wins over `cas`, as in Consul.
    let cas = match query.number("cas") {
        Ok(cas) if !query.has("recurse") => cas,
        Ok(_) => None,
        Err(e) => return bad_request(e),
    };
    let key = Bytes::from(key.into_bytes());
    let delete = if query.has("recurse") {
        pb::DeleteRangeRequest {
            range_end: prefix_end(&key),
            key: every_key_from(key.clone()),
            ..Default::default()
        }
    } else {
        pb::DeleteRangeRequest {
            key: key.clone(),
            ..Default::default()
        }
    };
    let compares = cas.map(|index| vec![mod_revision_is(key, index as i64)]);
    // Consul's delete-cas answers `true` for a key that is not there at all
    // (and `false` for one at another index).
    write(
        &kv,
        &token,
        compares.unwrap_or_default(),
        request_op::Request::RequestDeleteRange(delete),
        true,
    )
    .await
}

/// `mod_revision(key) == index`; index 0 means "the key does not exist".
fn mod_revision_is(key: Bytes, index: i64) -> pb::Compare {
    pb::Compare {
        result: compare::CompareResult::Equal as i32,
        target: compare::CompareTarget::Mod as i32,
        key,
        target_union: Some(compare::TargetUnion::ModRevision(index)),
        ..Default::default()
    }
}

/// One write as a Txn (so a compare and the write are one step); answers
/// `true` when it was made, or (`absent_is_done`) when its compare failed
/// because the key does not exist.
async fn write(
    kv: &Kv,
    token: &Token,
    compares: Vec<pb::Compare>,
    op: request_op::Request,
    absent_is_done: bool,
) -> Response {
    let failure = match compares.first() {
        Some(compare) if absent_is_done => vec![pb::RequestOp {
            request: Some(request_op::Request::RequestRange(pb::RangeRequest {
                key: compare.key.clone(),
                count_only: true,
                ..Default::default()
            })),
        }],
        _ => Vec::new(),
    };
    let txn = pb::TxnRequest {
        compare: compares,
        success: vec![pb::RequestOp { request: Some(op) }],
        failure,
    };
    match kv_client(&kv.grpc).txn(token.request(txn)).await {
        Ok(response) => {
            let response = response.into_inner();
            let index = response.header.as_ref().map_or(0, |h| h.revision);
            let absent = !response.succeeded
                && absent_is_done
                && response.responses.iter().any(|r| {
                    matches!(&r.response, Some(response_op::Response::ResponseRange(range)) if range.count == 0)
                });
            json(StatusCode::OK, index, &(response.succeeded || absent))
        }
        Err(status) => status_error(status),
    }
}

/// One operation of a Consul transaction (`{"KV": {...}}`).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct TxnOp {
    #[serde(rename = "KV")]
    kv: Option<TxnKvOp>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct TxnKvOp {
    verb: String,
    key: String,
    #[serde(default)]
    value: Option<String>,
    #[serde(default)]
    flags: u64,
    #[serde(default)]
    index: u64,
}

/// `PUT /v1/txn`: Consul's KV verbs as one etcd Txn. Checks (`check-index`,
/// `check-not-exists`, `cas`, `delete-cas`) become compares; the rest the
/// Txn's operations. A failed check is 409 with Consul's error list.
async fn txn(State(kv): State<Kv>, token: Token, body: Body) -> Response {
    let body = match kv.read_body(body).await {
        Ok(body) => body,
        Err(refused) => return refused,
    };
    let ops: Vec<TxnOp> = match serde_json::from_slice(&body) {
        Ok(ops) => ops,
        Err(e) => {
            return consul_error(
                StatusCode::BAD_REQUEST,
                &format!("Failed to parse body: {e}"),
            );
        }
    };
    let mut compares = Vec::new();
    let mut checks = Vec::new();
    let mut requests = Vec::new();
    // Which result each operation's answer becomes (None: no result).
    let mut answers = Vec::new();
    for (at, op) in ops.into_iter().enumerate() {
        let Some(op) = op.kv else {
            return consul_error(
                StatusCode::BAD_REQUEST,
                "Hark's transactions take KV operations only",
            );
        };
        let key = Bytes::from(op.key.into_bytes());
        let value = match op
            .value
            .as_deref()
            .map(|v| base64::engine::general_purpose::STANDARD.decode(v))
        {
            None => Bytes::new(),
            Some(Ok(v)) => Bytes::from(v),
            Some(Err(e)) => {
                return consul_error(
                    StatusCode::BAD_REQUEST,
                    &format!("Failed to parse body: {e}"),
                );
            }
        };
        let flags = op.flags;
        let put = |key: Bytes, value: Bytes| {
            request_op::Request::RequestPut(pb::PutRequest {
                key,
                value,
                hark_flags: flags,
                ..Default::default()
            })
        };
        let range = |key: Bytes, range_end: Bytes| {
            request_op::Request::RequestRange(pb::RangeRequest {
                key,
                range_end,
                ..Default::default()
            })
        };
        match op.verb.as_str() {
            "set" => {
                requests.push(put(key.clone(), value));
                requests.push(range(key, Bytes::new()));
                answers.push(Some((requests.len() - 1, false)));
            }
            "cas" => {
                compares.push(mod_revision_is(key.clone(), op.index as i64));
                checks.push(at);
                requests.push(put(key.clone(), value));
                requests.push(range(key, Bytes::new()));
                answers.push(Some((requests.len() - 1, false)));
            }
            "get" => {
                requests.push(range(key, Bytes::new()));
                answers.push(Some((requests.len() - 1, true)));
            }
            "get-tree" => {
                let end = prefix_end(&key);
                requests.push(range(every_key_from(key), end));
                answers.push(Some((requests.len() - 1, true)));
            }
            "check-index" => {
                compares.push(mod_revision_is(key.clone(), op.index as i64));
                checks.push(at);
                requests.push(range(key, Bytes::new()));
                answers.push(Some((requests.len() - 1, false)));
            }
            "check-not-exists" => {
                compares.push(mod_revision_is(key, 0));
                checks.push(at);
                answers.push(None);
            }
            "delete" | "delete-tree" | "delete-cas" => {
                let (key, range_end) = if op.verb == "delete-tree" {
                    let end = prefix_end(&key);
                    (every_key_from(key), end)
                } else {
                    (key, Bytes::new())
                };
                if op.verb == "delete-cas" {
                    compares.push(mod_revision_is(key.clone(), op.index as i64));
                    checks.push(at);
                }
                requests.push(request_op::Request::RequestDeleteRange(
                    pb::DeleteRangeRequest {
                        key,
                        range_end,
                        ..Default::default()
                    },
                ));
                answers.push(None);
            }
            verb => {
                return consul_error(
                    StatusCode::BAD_REQUEST,
                    &format!("Hark does not support the KV verb {verb:?} (no Consul sessions)"),
                );
            }
        }
    }
    let txn = pb::TxnRequest {
        compare: compares,
        success: requests
            .into_iter()
            .map(|r| pb::RequestOp { request: Some(r) })
            .collect(),
        failure: Vec::new(),
    };
    let response = match kv_client(&kv.grpc).txn(token.request(txn)).await {
        Ok(response) => response.into_inner(),
        Err(status) => return status_error(status),
    };
    let index = response.header.as_ref().map_or(0, |h| h.revision);
    if !response.succeeded {
        let errors: Vec<serde_json::Value> = checks
            .into_iter()
            .map(|at| serde_json::json!({"OpIndex": at, "What": "failed check"}))
            .collect();
        return json(
            StatusCode::CONFLICT,
            index,
            &serde_json::json!({"Results": null, "Errors": errors}),
        );
    }
    let mut results = Vec::new();
    for (slot, with_value) in answers.into_iter().flatten() {
        if let Some(response_op::Response::ResponseRange(range)) = response
            .responses
            .get(slot)
            .and_then(|r| r.response.as_ref())
        {
            for found in &range.kvs {
                results.push(serde_json::json!({"KV": DirEntry::of(found, with_value)}));
            }
        }
    }
    json(
        StatusCode::OK,
        index,
        &serde_json::json!({"Results": results, "Errors": null}),
    )
}

fn index_headers(headers: &mut HeaderMap, index: i64) {
    let index = HeaderValue::from(index.max(0));
    headers.insert("x-consul-index", index.clone());
    headers.insert("x-hark-index", index);
    headers.insert("x-consul-knownleader", HeaderValue::from_static("true"));
    headers.insert("x-consul-lastcontact", HeaderValue::from_static("0"));
}

/// A whole answer, kept to be given to every query that shares its read.
#[derive(Clone)]
struct Answer {
    status: StatusCode,
    headers: HeaderMap,
    body: Bytes,
}

impl Answer {
    fn new(status: StatusCode, body: impl Into<Bytes>) -> Answer {
        Answer {
            status,
            headers: HeaderMap::new(),
            body: body.into(),
        }
    }

    fn json<T: Serialize + ?Sized>(status: StatusCode, index: i64, body: &T) -> Answer {
        let mut answer = Answer::new(status, serde_json::to_vec(body).expect("serializable"));
        answer.headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        index_headers(&mut answer.headers, index);
        answer
    }

    fn not_found(index: i64) -> Answer {
        let mut answer = Answer::new(StatusCode::NOT_FOUND, Bytes::new());
        index_headers(&mut answer.headers, index);
        answer
    }

    /// Consul's errors are plain text.
    fn error(status: StatusCode, message: &str) -> Answer {
        let mut answer = Answer::new(status, message.to_string());
        answer.headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        );
        answer
    }

    /// A gRPC failure in Consul's form: its status as HTTP, its message as
    /// text.
    fn status_error(status: Status) -> Answer {
        Answer::error(crate::status::http_status(status.code()), status.message())
    }
}

impl From<Answer> for Response {
    fn from(answer: Answer) -> Response {
        let mut response = Response::new(Body::from(answer.body));
        *response.status_mut() = answer.status;
        *response.headers_mut() = answer.headers;
        response
    }
}

fn json<T: Serialize + ?Sized>(status: StatusCode, index: i64, body: &T) -> Response {
    Answer::json(status, index, body).into()
}

fn consul_error(status: StatusCode, message: &str) -> Response {
    Answer::error(status, message).into()
}

fn bad_request(message: String) -> Response {
    consul_error(StatusCode::BAD_REQUEST, &message)
}

fn status_error(status: Status) -> Response {
    Answer::status_error(status).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_are_go_durations() {
        let wait =
            |w: &str| Query::of(&format!("/v1/kv/k?wait={w}").parse::<Uri>().unwrap()).wait();
        assert_eq!(wait("1m30s"), Ok(Duration::from_secs(90)));
        assert_eq!(wait("10"), Err("Invalid wait time".to_string()));
        assert!(wait(&format!("{}h", "9".repeat(400))).is_err());
    }

    #[test]
    fn wait_defaults_to_five_minutes_and_is_capped_at_ten() {
        let query = |q: &str| Query::of(&format!("/v1/kv/a?{q}").parse::<Uri>().unwrap());
        assert_eq!(query("index=3").wait().unwrap(), DEFAULT_WAIT);
        assert_eq!(query("wait=2s").wait().unwrap(), Duration::from_secs(2));
        assert_eq!(query("wait=1h").wait().unwrap(), MAX_WAIT);
        assert_eq!(query("wait=0").wait().unwrap(), DEFAULT_WAIT);
        assert_eq!(query("wait=0s").wait().unwrap(), DEFAULT_WAIT);
        // Past Go's range: Consul answers 400, as here.
        assert!(query("wait=100000000000000000000s").wait().is_err());
        assert!(query("wait=2562048h").wait().is_err());
        assert_eq!(query("wait=2562047h").wait().unwrap(), MAX_WAIT);
        assert!(query("wait=soon").wait().is_err());
        // Go parses a negative wait, and Consul then waits its default.
        assert_eq!(query("wait=-5s").wait().unwrap(), DEFAULT_WAIT);
        assert_eq!(query("wait=-0").wait().unwrap(), DEFAULT_WAIT);
        assert_eq!(query("wait=%2B5s").wait().unwrap(), Duration::from_secs(5));
        for junk in [
            "-", "-+5s", "+-5s", "--5s", "-5", "5s-", "1e9s", "NaNs", "infh", "%20", "5%00s",
        ] {
            assert!(query(&format!("wait={junk}")).wait().is_err(), "{junk}");
        }
        assert!(query("index=x").number("index").is_err());
        assert_eq!(query("keys&separator=%2F").get("separator"), Some("/"));
        assert!(query("recurse").has("recurse"));
    }

    #[test]
    fn a_prefix_ends_after_its_last_key() {
        assert_eq!(&prefix_end(b"a/")[..], b"a0");
        assert_eq!(&prefix_end(b"a\xff")[..], b"b");
        assert_eq!(&prefix_end(b"")[..], b"\0");
    }

    #[test]
    fn keys_are_cut_after_the_first_separator_past_the_prefix() {
        let kv = |k: &str| KeyValue {
            key: Bytes::from(k.to_string()),
            ..Default::default()
        };
        let kvs = [kv("web/a"), kv("web/b/1"), kv("web/b/2"), kv("web/c/x/y")];
        assert_eq!(
            list_keys(&kvs, "web/".len(), "/"),
            ["web/a", "web/b/", "web/c/"]
        );
        assert_eq!(list_keys(&kvs, 4, "").len(), 4);
    }

    #[test]
    fn an_entry_is_written_as_consul_writes_it() {
        let kv = KeyValue {
            key: Bytes::from_static(b"web/a"),
            value: Bytes::from_static(b"hi"),
            create_revision: 4,
            mod_revision: 7,
            hark_flags: 42,
            ..Default::default()
        };
        assert_eq!(
            serde_json::to_string(&DirEntry::of(&kv, true)).unwrap(),
            r#"{"LockIndex":0,"Key":"web/a","Flags":42,"Value":"aGk=","CreateIndex":4,"ModifyIndex":7}"#
        );
        let empty = KeyValue {
            value: Bytes::new(),
            ..kv
        };
        assert!(
            serde_json::to_string(&DirEntry::of(&empty, true))
                .unwrap()
                .contains(r#""Value":null"#)
        );
    }
}
