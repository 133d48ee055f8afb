//! `/v1/txn`: Consul's transaction as one etcd Txn.

use axum::body::Body;
use axum::extract::State;
use axum::response::Response;
use base64::Engine;
use bytes::Bytes;
use hark_proto::etcdserverpb::{self as pb, request_op, response_op};
use http::StatusCode;
use serde::Deserialize;

use super::answer::{consul_error, json, status_error};
use super::kv::{DirEntry, Kv, every_key_from, kv_client, mod_revision_is, prefix_end};
use super::query::Token;

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
pub(super) async fn txn(State(kv): State<Kv>, token: Token, body: Body) -> Response {
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
