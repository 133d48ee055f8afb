//! etcd's JSON gateway: `POST /v3/<path>` (and `/v3beta/<path>`, which etcd
//! still rewrites to `/v3/`) for every RPC of KV, Lease, Cluster, Maintenance,
//! Auth, Lock and Election, the Watch, LeaseKeepAlive and Observe streams,
//! Hark's `POST /v3/hark/du` (space per prefix), and `GET /version`.
//!
//! Each route decodes the JSON body into the RPC's request (proto3 JSON
//! mapping: either field name, 64-bit integers as numbers or strings, any
//! base64, unknown fields dropped), calls the gRPC service in process, and
//! writes the response as etcd 3.5 does: proto field names, 64-bit integers
//! as strings, zero values omitted. Stream messages go out one chunk each,
//! `{"result":...}` and a newline.

use std::future::Future;

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::response::Response;
use axum::routing::{MethodRouter, any, get, post};
use bytes::Bytes;
use futures_util::StreamExt;
use hark_proto::etcdserverpb::{
    self as pb, auth_client::AuthClient, cluster_client::ClusterClient, kv_client::KvClient,
    lease_client::LeaseClient, maintenance_client::MaintenanceClient, watch_client::WatchClient,
};
use hark_proto::harkpb::{self, usage_client::UsageClient};
use hark_proto::v3electionpb::{self as election, election_client::ElectionClient};
use hark_proto::v3lockpb::{self as lock, lock_client::LockClient};
use http::{HeaderMap, StatusCode, header};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Code, Status};

use crate::GrpcService;
use crate::json::{self, Successive};
use crate::status::{error_response, plain_error, stream_error_chunk};

/// What the gateway says about itself and how much it reads.
#[derive(Debug, Clone)]
pub struct GatewayOptions {
    /// `etcdserver` in `GET /version` (plain numbers: Patroni `int()`s them).
    pub server_version: String,
    /// `etcdcluster` in `GET /version`.
    pub cluster_version: String,
    /// More `GET /version` fields, after etcd's two: the implementation's
    /// own version and build (clients ignore fields they do not know).
    pub implementation: Vec<(&'static str, String)>,
    /// The largest request body read; a larger one is refused with
    /// ResourceExhausted (HTTP 429), as gRPC refuses an oversize message.
    pub max_body_bytes: usize,
}

#[derive(Clone)]
struct Gateway {
    grpc: GrpcService,
    max_body_bytes: usize,
}

// Every client here takes responses of any size, as etcd's gateway does
// (`MaxCallRecvMsgSize(math.MaxInt32)`); tonic's default stops at 4 MiB.

/// Buffered stream requests between the body reader and the gRPC stream.
const STREAM_REQUESTS: usize = 64;

/// The gateway's routes, calling `grpc` for every RPC.
pub fn routes(grpc: GrpcService, options: GatewayOptions) -> Router {
    let mut version = format!(
        r#"{{"etcdserver":{},"etcdcluster":{}"#,
        serde_json::Value::from(options.server_version),
        serde_json::Value::from(options.cluster_version),
    );
    for (name, value) in &options.implementation {
        version += &format!(
            ",{}:{}",
            serde_json::Value::from(*name),
            serde_json::Value::from(value.as_str())
        );
    }
    version.push('}');
    let gateway = Gateway {
        grpc,
        max_body_bytes: options.max_body_bytes,
    };
    let mut router = Router::new().route(
        "/version",
        get(move || async move {
            (
                [(header::CONTENT_TYPE, "application/json")],
                version.clone(),
            )
        }),
    );
    for prefix in ["/v3", "/v3beta"] {
        for (path, method) in rpcs() {
            router = router.route(
                &format!("{prefix}/{path}"),
                method.fallback(|| async { plain_error(StatusCode::METHOD_NOT_ALLOWED) }),
            );
        }
        router = router.route(
            &format!("{prefix}/{{*unknown}}"),
            any(|| async { plain_error(StatusCode::NOT_FOUND) }),
        );
    }
    router.with_state(gateway)
}

/// A unary RPC's route: `$client::$method` taking `$request`.
macro_rules! unary {
    ($client:ident, $method:ident, $request:ty) => {{
        post(
            |State(gw): State<Gateway>, headers: HeaderMap, body: Body| async move {
                gw.unary(
                    headers,
                    body,
                    |grpc, req: tonic::Request<$request>| async move {
                        $client::new(grpc)
                            .max_decoding_message_size(usize::MAX)
                            .$method(req)
                            .await
                    },
                )
                .await
            },
        )
    }};
}

/// Every path under `/v3/` with its route (etcd's `rpc.pb.gw.go`).
fn rpcs() -> Vec<(&'static str, MethodRouter<Gateway>)> {
    vec![
        ("kv/range", unary!(KvClient, range, pb::RangeRequest)),
        ("kv/put", unary!(KvClient, put, pb::PutRequest)),
        (
            "kv/deleterange",
            unary!(KvClient, delete_range, pb::DeleteRangeRequest),
        ),
        ("kv/txn", unary!(KvClient, txn, pb::TxnRequest)),
        (
            "kv/compaction",
            unary!(KvClient, compact, pb::CompactionRequest),
        ),
        ("watch", post(watch)),
        (
            "lease/grant",
            unary!(LeaseClient, lease_grant, pb::LeaseGrantRequest),
        ),
        (
            "lease/revoke",
            unary!(LeaseClient, lease_revoke, pb::LeaseRevokeRequest),
        ),
        (
            "kv/lease/revoke",
            unary!(LeaseClient, lease_revoke, pb::LeaseRevokeRequest),
        ),
        ("lease/keepalive", post(keep_alive)),
        (
            "lease/timetolive",
            unary!(LeaseClient, lease_time_to_live, pb::LeaseTimeToLiveRequest),
        ),
        (
            "kv/lease/timetolive",
            unary!(LeaseClient, lease_time_to_live, pb::LeaseTimeToLiveRequest),
        ),
        (
            "lease/leases",
            unary!(LeaseClient, lease_leases, pb::LeaseLeasesRequest),
        ),
        (
            "kv/lease/leases",
            unary!(LeaseClient, lease_leases, pb::LeaseLeasesRequest),
        ),
        (
            "cluster/member/add",
            unary!(ClusterClient, member_add, pb::MemberAddRequest),
        ),
        (
            "cluster/member/remove",
            unary!(ClusterClient, member_remove, pb::MemberRemoveRequest),
        ),
        (
            "cluster/member/update",
            unary!(ClusterClient, member_update, pb::MemberUpdateRequest),
        ),
        (
            "cluster/member/list",
            unary!(ClusterClient, member_list, pb::MemberListRequest),
        ),
        (
            "cluster/member/promote",
            unary!(ClusterClient, member_promote, pb::MemberPromoteRequest),
        ),
        (
            "maintenance/alarm",
            unary!(MaintenanceClient, alarm, pb::AlarmRequest),
        ),
        (
            "maintenance/status",
            unary!(MaintenanceClient, status, pb::StatusRequest),
        ),
        (
            "maintenance/defragment",
            unary!(MaintenanceClient, defragment, pb::DefragmentRequest),
        ),
        (
            "maintenance/hash",
            unary!(MaintenanceClient, hash, pb::HashRequest),
        ),
        // etcd 3.6 and later (3.5 had none: its proto mapped HashKV to
        // Hash's path).
        (
            "maintenance/hashkv",
            unary!(MaintenanceClient, hash_kv, pb::HashKvRequest),
        ),
        ("maintenance/snapshot", post(snapshot)),
        ("lock/lock", unary!(LockClient, lock, lock::LockRequest)),
        (
            "lock/unlock",
            unary!(LockClient, unlock, lock::UnlockRequest),
        ),
        (
            "election/campaign",
            unary!(ElectionClient, campaign, election::CampaignRequest),
        ),
        (
            "election/proclaim",
            unary!(ElectionClient, proclaim, election::ProclaimRequest),
        ),
        (
            "election/leader",
            unary!(ElectionClient, leader, election::LeaderRequest),
        ),
        ("election/observe", post(observe)),
        (
            "election/resign",
            unary!(ElectionClient, resign, election::ResignRequest),
        ),
        (
            "maintenance/transfer-leadership",
            unary!(MaintenanceClient, move_leader, pb::MoveLeaderRequest),
        ),
        (
            "maintenance/downgrade",
            unary!(MaintenanceClient, downgrade, pb::DowngradeRequest),
        ),
        // Hark's own: space per prefix (harkpb.Usage).
        ("hark/du", unary!(UsageClient, du, harkpb::DuRequest)),
        (
            "auth/enable",
            unary!(AuthClient, auth_enable, pb::AuthEnableRequest),
        ),
        (
            "auth/disable",
            unary!(AuthClient, auth_disable, pb::AuthDisableRequest),
        ),
        (
            "auth/status",
            unary!(AuthClient, auth_status, pb::AuthStatusRequest),
        ),
        (
            "auth/authenticate",
            unary!(AuthClient, authenticate, pb::AuthenticateRequest),
        ),
        (
            "auth/user/add",
            unary!(AuthClient, user_add, pb::AuthUserAddRequest),
        ),
        (
            "auth/user/get",
            unary!(AuthClient, user_get, pb::AuthUserGetRequest),
        ),
        (
            "auth/user/list",
            unary!(AuthClient, user_list, pb::AuthUserListRequest),
        ),
        (
            "auth/user/delete",
            unary!(AuthClient, user_delete, pb::AuthUserDeleteRequest),
        ),
        (
            "auth/user/changepw",
            unary!(
                AuthClient,
                user_change_password,
                pb::AuthUserChangePasswordRequest
            ),
        ),
        (
            "auth/user/grant",
            unary!(AuthClient, user_grant_role, pb::AuthUserGrantRoleRequest),
        ),
        (
            "auth/user/revoke",
            unary!(AuthClient, user_revoke_role, pb::AuthUserRevokeRoleRequest),
        ),
        (
            "auth/role/add",
            unary!(AuthClient, role_add, pb::AuthRoleAddRequest),
        ),
        (
            "auth/role/get",
            unary!(AuthClient, role_get, pb::AuthRoleGetRequest),
        ),
        (
            "auth/role/list",
            unary!(AuthClient, role_list, pb::AuthRoleListRequest),
        ),
        (
            "auth/role/delete",
            unary!(AuthClient, role_delete, pb::AuthRoleDeleteRequest),
        ),
        (
            "auth/role/grant",
            unary!(
                AuthClient,
                role_grant_permission,
                pb::AuthRoleGrantPermissionRequest
            ),
        ),
        (
            "auth/role/revoke",
            unary!(
                AuthClient,
                role_revoke_permission,
                pb::AuthRoleRevokePermissionRequest
            ),
        ),
    ]
}

impl Gateway {
    /// Reads the whole body, or answers as gRPC answers an oversize message.
    async fn read_body(&self, body: Body) -> Result<Bytes, Response> {
        axum::body::to_bytes(body, self.max_body_bytes)
            .await
            .map_err(|e| {
                let too_large = std::error::Error::source(&e)
                    .is_some_and(|s| s.is::<http_body_util::LengthLimitError>());
                if too_large {
                    error_response(
                        Code::ResourceExhausted,
                        &format!(
                            "grpc: received message larger than max (body over {} bytes)",
                            self.max_body_bytes
                        ),
                    )
                } else {
                    error_response(Code::InvalidArgument, &e.to_string())
                }
            })
    }

    /// A unary body as its request, or the answer refusing it.
    async fn request<Req: DeserializeOwned + Default>(&self, body: Body) -> Result<Req, Response> {
        let body = self.read_body(body).await?;
        json::decode::<Req>(&body).map_err(|e| error_response(Code::InvalidArgument, &e))
    }

    async fn unary<Req, Resp, F, Fut>(self, headers: HeaderMap, body: Body, call: F) -> Response
    where
        Req: DeserializeOwned + Default,
        Resp: Serialize,
        F: FnOnce(GrpcService, tonic::Request<Req>) -> Fut,
        Fut: Future<Output = Result<tonic::Response<Resp>, Status>>,
    {
        let request = match self.request::<Req>(body).await {
            Ok(request) => request,
            Err(refused) => return refused,
        };
        match call(self.grpc, with_metadata(request, &headers)).await {
            Ok(response) => {
                let body =
                    serde_json::to_vec(response.get_ref()).expect("proto messages serialize");
                json_response(Body::from(body))
            }
            Err(status) => error_response(status.code(), status.message()),
        }
    }
}

/// `POST /v3/watch`: successive requests read from the body go on one watch
/// stream, which stays open after the body ends (etcd's watch ignores its
/// client's end of sending) until the HTTP client goes away.
async fn watch(State(gw): State<Gateway>, headers: HeaderMap, body: Body) -> Response {
    let (requests, stream) = mpsc::channel::<pb::WatchRequest>(STREAM_REQUESTS);
    let keep_open = requests.clone();
    tokio::spawn(read_requests(body, requests, gw.max_body_bytes, "watch"));
    let request = with_metadata(ReceiverStream::new(stream), &headers);
    match WatchClient::new(gw.grpc)
        .max_decoding_message_size(usize::MAX)
        .watch(request)
        .await
    {
        // Dropping the last sender when the response ends closes the watch
        // stream, and with it the member's watchers.
        Ok(responses) => streamed(responses.into_inner(), Some(keep_open)),
        Err(status) => error_response(status.code(), status.message()),
    }
}

/// `POST /v3/lease/keepalive`: each request in the body is answered; the
/// stream ends with the body, as etcd's (one request, one answer).
async fn keep_alive(State(gw): State<Gateway>, headers: HeaderMap, body: Body) -> Response {
    let (requests, stream) = mpsc::channel::<pb::LeaseKeepAliveRequest>(STREAM_REQUESTS);
    tokio::spawn(read_requests(
        body,
        requests,
        gw.max_body_bytes,
        "lease keep-alive",
    ));
    let request = with_metadata(ReceiverStream::new(stream), &headers);
    match LeaseClient::new(gw.grpc)
        .max_decoding_message_size(usize::MAX)
        .lease_keep_alive(request)
        .await
    {
        Ok(responses) => streamed::<_, pb::LeaseKeepAliveRequest>(responses.into_inner(), None),
        Err(status) => error_response(status.code(), status.message()),
    }
}

/// `POST /v3/maintenance/snapshot`: the snapshot's pieces, one chunk each.
async fn snapshot(State(gw): State<Gateway>, headers: HeaderMap, body: Body) -> Response {
    let request = match gw.request::<pb::SnapshotRequest>(body).await {
        Ok(request) => request,
        Err(refused) => return refused,
    };
    match MaintenanceClient::new(gw.grpc)
        .max_decoding_message_size(usize::MAX)
        .snapshot(with_metadata(request, &headers))
        .await
    {
        Ok(responses) => streamed::<_, ()>(responses.into_inner(), None),
        Err(status) => error_response(status.code(), status.message()),
    }
}

/// `POST /v3/election/observe`: the leader and each change, one chunk each,
/// until the HTTP client goes away.
async fn observe(State(gw): State<Gateway>, headers: HeaderMap, body: Body) -> Response {
    let request = match gw.request::<election::LeaderRequest>(body).await {
        Ok(request) => request,
        Err(refused) => return refused,
    };
    match ElectionClient::new(gw.grpc)
        .max_decoding_message_size(usize::MAX)
        .observe(with_metadata(request, &headers))
        .await
    {
        Ok(responses) => streamed::<_, ()>(responses.into_inner(), None),
        Err(status) => error_response(status.code(), status.message()),
    }
}

/// Feeds the JSON values of a streaming body to `requests`. A malformed
/// value ends the reading (grpc-gateway's behaviour), not the stream.
async fn read_requests<T: DeserializeOwned>(
    body: Body,
    requests: mpsc::Sender<T>,
    limit: usize,
    what: &'static str,
) {
    let mut pieces = body.into_data_stream();
    let mut values = Successive::new(limit);
    while let Some(piece) = pieces.next().await {
        let Ok(piece) = piece else { return };
        values.push(&piece);
        loop {
            match values.next::<T>() {
                Ok(Some(request)) => {
                    if requests.send(request).await.is_err() {
                        return;
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    tracing::debug!(error = %e, "{what} over HTTP: a malformed request ends the reading");
                    return;
                }
            }
        }
    }
    if values.unfinished() {
        tracing::debug!("{what} over HTTP: the body ended inside a request");
    }
}

/// A gRPC response stream as a chunked body. `keep_open` lives as long as
/// the body does.
fn streamed<T, K>(messages: tonic::Streaming<T>, keep_open: Option<mpsc::Sender<K>>) -> Response
where
    T: Serialize + Send + 'static,
    K: Send + 'static,
{
    let chunks = messages.scan(false, move |failed, message| {
        let _keep_open = &keep_open;
        let chunk = match message {
            _ if *failed => None,
            Ok(message) => Some(json::result_chunk(&message)),
            Err(status) => {
                *failed = true;
                Some(stream_error_chunk(status.code(), status.message()))
            }
        };
        std::future::ready(chunk)
    });
    json_response(Body::from_stream(
        chunks.map(Ok::<_, std::convert::Infallible>),
    ))
}

fn json_response(body: Body) -> Response {
    Response::builder()
        .header(header::CONTENT_TYPE, "application/json")
        // grpc-gateway passes the gRPC response's headers on this way.
        .header("grpc-metadata-content-type", "application/grpc")
        .body(body)
        .expect("a valid response")
}

/// The request with the HTTP headers gRPC metadata is made of, as
/// grpc-gateway maps them: `Authorization` (the auth token), and
/// `Grpc-Metadata-<key>` as `<key>` (e.g. `Grpc-Metadata-hasleader: true`).
fn with_metadata<T>(message: T, headers: &HeaderMap) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    let metadata = request.metadata_mut();
    for (name, value) in headers {
        let key = if name == header::AUTHORIZATION {
            "authorization"
        } else if let Some(key) = name.as_str().strip_prefix("grpc-metadata-") {
            key
        } else {
            continue;
        };
        if let (Ok(key), Ok(value)) = (
            tonic::metadata::MetadataKey::from_bytes(key.as_bytes()),
            tonic::metadata::MetadataValue::try_from(value.as_bytes()),
        ) {
            metadata.append(key, value);
        }
    }
    request
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn authorization_and_grpc_metadata_headers_become_metadata_and_others_do_not() {
        let mut headers = HeaderMap::new();
        headers.insert(header::AUTHORIZATION, "tok".parse().unwrap());
        headers.insert("grpc-metadata-hasleader", "true".parse().unwrap());
        headers.insert(header::USER_AGENT, "curl".parse().unwrap());
        let request = with_metadata((), &headers);
        let metadata = request.metadata();
        assert_eq!(metadata.get("authorization").unwrap(), "tok");
        assert_eq!(metadata.get("hasleader").unwrap(), "true");
        assert!(metadata.get("user-agent").is_none());
    }

    #[test]
    fn every_path_is_routed_once() {
        let paths: Vec<_> = rpcs().into_iter().map(|(p, _)| p).collect();
        let mut unique = paths.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), paths.len());
        // etcd 3.7's paths (rpc.pb.gw.go): 5 KV, watch, 8 lease (with the
        // kv/lease aliases), 5 cluster, 8 maintenance (HashKV has its own
        // since 3.6; 3.5 mapped it to Hash's), 17 auth; and
        // v3lock.pb.gw.go's 2, v3election.pb.gw.go's 5; and Hark's hark/du.
        assert_eq!(paths.len(), 52);
    }
}
