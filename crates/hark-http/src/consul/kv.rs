//! `/v1/kv/<key>`: reads (blocking ones parked on the watch engine), writes
//! and deletes, each as etcd requests.

use std::collections::BTreeMap;
use std::net::IpAddr;

use axum::body::Body;
use axum::extract::{FromRequestParts, Path, State};
use axum::response::Response;
use base64::Engine;
use bytes::Bytes;
use hark_proto::etcdserverpb::{self as pb, compare, kv_client::KvClient, request_op, response_op};
use hark_proto::mvccpb::KeyValue;
use http::{HeaderValue, StatusCode, Uri, header};
use serde::Serialize;
use tonic::Status;

use super::ClientAddress;
use super::answer::{Answer, bad_request, consul_error, index_headers, json, status_error};
use super::parking::Parking;
use super::query::{Query, Token};
use crate::GrpcService;
use crate::limits::ParkingLimits;
use crate::shared_reads::{ReadAt, SharedReads};

#[derive(Clone)]
pub(super) struct Kv {
    pub(super) grpc: GrpcService,
    pub(super) parking: Parking,
    pub(super) limits: ParkingLimits,
    pub(super) reads: SharedReads<SharedRead, Answer>,
    pub(super) client_address: ClientAddress,
    pub(super) max_body_bytes: usize,
}

/// What queries share a read by: the same caller, read and answer.
#[derive(Clone, PartialEq, Eq, Hash)]
pub(super) struct SharedRead {
    token: Token,
    read: Read,
    view: View,
}

/// The caller's IP address ([`ConsulOptions::client_address`]).
pub(super) struct Client(Option<IpAddr>);

impl FromRequestParts<Kv> for Client {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut http::request::Parts,
        kv: &Kv,
    ) -> Result<Self, Self::Rejection> {
        Ok(Client((kv.client_address)(&parts.extensions)))
    }
}

/// The first key after every key starting with `prefix` (etcd's prefix
/// range end); `\0` (every key) for the empty prefix.
pub(super) fn prefix_end(prefix: &[u8]) -> Bytes {
    Bytes::from(hark_proto::keys::prefix_end(prefix))
}

/// The start of a prefix range: `\0` for the empty prefix (etcd refuses an
/// empty key).
pub(super) fn every_key_from(prefix: Bytes) -> Bytes {
    if prefix.is_empty() {
        Bytes::from_static(b"\0")
    } else {
        prefix
    }
}

/// One key as Consul writes it (`structs.DirEntry`, fields in its order).
#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct DirEntry {
    lock_index: u64,
    key: String,
    flags: u64,
    /// base64; `null` for an empty value, as Consul stores one.
    value: Option<String>,
    create_index: i64,
    modify_index: i64,
}

impl DirEntry {
    pub(super) fn of(kv: &KeyValue, with_value: bool) -> DirEntry {
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
    pub(super) async fn read_body(&self, body: Body) -> Result<Bytes, Response> {
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
pub(super) fn kv_client(grpc: &GrpcService) -> KvClient<GrpcService> {
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
pub(super) async fn get_kv(
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
pub(super) async fn put_kv(
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
pub(super) async fn delete_kv(
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
pub(super) fn mod_revision_is(key: Bytes, index: i64) -> pb::Compare {
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

#[cfg(test)]
mod tests {
    use super::*;

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
