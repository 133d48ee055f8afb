//! The KV, Lease and Watch calls the recipes are made of, made in process
//! and as the caller: its token and its connection (so its certificate's
//! name, under mutual TLS) go along with every call.

use bytes::Bytes;
use hark_http::GrpcService;
use hark_proto::etcdserverpb::{
    self as pb, compare, kv_client::KvClient, lease_client::LeaseClient, range_request, request_op,
    response_op, watch_client::WatchClient, watch_request,
};
use hark_proto::mvccpb::{KeyValue, event::EventType};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Status;
use tonic::metadata::MetadataMap;

/// The TTL of the lease a lock or a campaign gets when it names none
/// (clientv3's session default).
pub const SESSION_TTL: i64 = 60;

/// Metadata that names the caller; everything else stays behind.
const CREDENTIALS: [&str; 2] = ["token", "authorization"];

/// Every failure of a step is answered as etcd's server answers it: the
/// steps are clientv3 calls there, whose errors reach the caller as
/// `Unknown` with the message kept.
pub fn failed(status: Status) -> Status {
    Status::unknown(status.message())
}

/// The calls of one request, made as its caller.
#[derive(Clone)]
pub struct Calls {
    grpc: GrpcService,
    metadata: MetadataMap,
    extensions: tonic::Extensions,
}

impl Calls {
    /// Calls through `grpc` made as the sender of `request`.
    pub fn as_sender_of<T>(grpc: &GrpcService, request: &tonic::Request<T>) -> Calls {
        let mut metadata = MetadataMap::new();
        for name in CREDENTIALS {
            if let Some(value) = request.metadata().get(name) {
                metadata.insert(name, value.clone());
            }
        }
        Calls {
            grpc: grpc.clone(),
            metadata,
            extensions: request.extensions().clone(),
        }
    }

    fn request<M>(&self, message: M) -> tonic::Request<M> {
        tonic::Request::from_parts(self.metadata.clone(), self.extensions.clone(), message)
    }

    fn kv(&self) -> KvClient<GrpcService> {
        KvClient::new(self.grpc.clone()).max_decoding_message_size(usize::MAX)
    }

    pub async fn txn(&self, txn: pb::TxnRequest) -> Result<pb::TxnResponse, Status> {
        let response = self.kv().txn(self.request(txn)).await.map_err(failed)?;
        Ok(response.into_inner())
    }

    pub async fn range(&self, range: pb::RangeRequest) -> Result<pb::RangeResponse, Status> {
        let response = self.kv().range(self.request(range)).await.map_err(failed)?;
        Ok(response.into_inner())
    }

    pub async fn delete(&self, key: Bytes) -> Result<pb::DeleteRangeResponse, Status> {
        let delete = pb::DeleteRangeRequest {
            key,
            ..Default::default()
        };
        let response = self
            .kv()
            .delete_range(self.request(delete))
            .await
            .map_err(failed)?;
        Ok(response.into_inner())
    }

    /// The lease a lock or a campaign is bound to: the one named, or (0) a
    /// new one of [`SESSION_TTL`] that nothing keeps alive, as etcd's server
    /// does.
    pub async fn session_lease(&self, lease: i64) -> Result<i64, Status> {
        if lease != 0 {
            return Ok(lease);
        }
        let grant = pb::LeaseGrantRequest {
            ttl: SESSION_TTL,
            id: 0,
        };
        let response = LeaseClient::new(self.grpc.clone())
            .lease_grant(self.request(grant))
            .await
            .map_err(failed)?;
        Ok(response.into_inner().id)
    }

    /// Watches `key` (to `range_end`, if not empty) from `revision` on.
    pub async fn watch(
        &self,
        key: Bytes,
        range_end: Bytes,
        revision: i64,
    ) -> Result<WatchStream, Status> {
        let (requests, stream) = mpsc::channel(1);
        let create = pb::WatchRequest {
            request_union: Some(watch_request::RequestUnion::CreateRequest(
                pb::WatchCreateRequest {
                    key,
                    range_end,
                    start_revision: revision,
                    ..Default::default()
                },
            )),
        };
        requests
            .send(create)
            .await
            .expect("the receiver is right here");
        let responses = WatchClient::new(self.grpc.clone())
            .max_decoding_message_size(usize::MAX)
            .watch(self.request(ReceiverStream::new(stream)))
            .await
            .map_err(failed)?
            .into_inner();
        Ok(WatchStream {
            responses,
            _requests: requests,
        })
    }

    /// Waits until every key under `prefix` created at or before
    /// `max_create_revision` is gone: the holders or candidates ahead.
    /// Each round waits on the newest of them (clientv3's `waitDeletes`),
    /// so a queue of waiters forms a chain, each woken by one deletion.
    pub async fn wait_deletes(
        &self,
        prefix: &Bytes,
        max_create_revision: i64,
    ) -> Result<(), Status> {
        loop {
            let newest = self
                .range(pb::RangeRequest {
                    max_create_revision,
                    ..by_creation(prefix, range_request::SortOrder::Descend)
                })
                .await?;
            let Some(ahead) = newest.kvs.first() else {
                return Ok(());
            };
            let revision = newest.header.map_or(0, |h| h.revision);
            self.wait_delete(ahead.key.clone(), revision).await?;
        }
    }

    /// Waits for a deletion of `key` at `revision` or later.
    async fn wait_delete(&self, key: Bytes, revision: i64) -> Result<(), Status> {
        let mut watch = self.watch(key, Bytes::new(), revision).await?;
        loop {
            let response = watch.next().await?;
            if response
                .events
                .iter()
                .any(|e| e.r#type() == EventType::Delete)
            {
                return Ok(());
            }
        }
    }
}

/// A watch stream that stays open while this lives.
pub struct WatchStream {
    responses: tonic::Streaming<pb::WatchResponse>,
    _requests: mpsc::Sender<pb::WatchRequest>,
}

impl WatchStream {
    /// The next response; an ended or cancelled watch (say, compacted
    /// past its revision) is an error, as clientv3's watch channel closing.
    pub async fn next(&mut self) -> Result<pb::WatchResponse, Status> {
        match self.responses.message().await.map_err(failed)? {
            Some(response) if response.canceled => {
                let reason = if response.compact_revision != 0 {
                    "etcdserver: mvcc: required revision has been compacted".to_string()
                } else {
                    response.cancel_reason
                };
                Err(Status::unknown(reason))
            }
            Some(response) => Ok(response),
            None => Err(Status::unknown("lost watcher waiting for delete")),
        }
    }
}

/// The key of a holder or candidate bound to `lease`: the prefix, then the
/// lease ID in hex as Go's `%x` writes it.
pub fn holder_key(prefix: &[u8], lease: i64) -> Bytes {
    let hex = if lease < 0 {
        format!("-{:x}", lease.unsigned_abs())
    } else {
        format!("{lease:x}")
    };
    [prefix, hex.as_bytes()].concat().into()
}

/// The name's prefix: `name` and a slash.
pub fn prefix_of(name: &[u8]) -> Bytes {
    [name, b"/"].concat().into()
}

/// The key under `prefix` created first (`Ascend`) or last (`Descend`).
pub fn by_creation(prefix: &Bytes, order: range_request::SortOrder) -> pb::RangeRequest {
    pb::RangeRequest {
        key: prefix.clone(),
        range_end: hark_proto::keys::prefix_end(prefix).into(),
        limit: 1,
        sort_order: order as i32,
        sort_target: range_request::SortTarget::Create as i32,
        ..Default::default()
    }
}

/// `key`'s creation revision compared with `revision` (0: absent).
pub fn created_at(key: &Bytes, revision: i64) -> pb::Compare {
    pb::Compare {
        result: compare::CompareResult::Equal as i32,
        target: compare::CompareTarget::Create as i32,
        key: key.clone(),
        target_union: Some(compare::TargetUnion::CreateRevision(revision)),
        ..Default::default()
    }
}

pub fn put_op(key: &Bytes, value: Bytes, lease: i64) -> pb::RequestOp {
    pb::RequestOp {
        request: Some(request_op::Request::RequestPut(pb::PutRequest {
            key: key.clone(),
            value,
            lease,
            ..Default::default()
        })),
    }
}

pub fn get_op(range: pb::RangeRequest) -> pb::RequestOp {
    pb::RequestOp {
        request: Some(request_op::Request::RequestRange(range)),
    }
}

pub fn delete_op(key: &Bytes) -> pb::RequestOp {
    pb::RequestOp {
        request: Some(request_op::Request::RequestDeleteRange(
            pb::DeleteRangeRequest {
                key: key.clone(),
                ..Default::default()
            },
        )),
    }
}

pub fn get_key(key: &Bytes) -> pb::RangeRequest {
    pb::RangeRequest {
        key: key.clone(),
        ..Default::default()
    }
}

/// The first key-value a txn's `i`th op (a range) read.
pub fn first_read(txn: &pb::TxnResponse, i: usize) -> Option<&KeyValue> {
    match txn.responses.get(i)?.response.as_ref()? {
        response_op::Response::ResponseRange(range) => range.kvs.first(),
        _ => None,
    }
}

/// Deletes a key unless disarmed: a waiting lock or campaign whose caller
/// went away (its request dropped mid-wait) leaves no key behind to block
/// the others, as clientv3's cancelled `Lock` and `Campaign` clean up.
pub struct CleanUp {
    pending: Option<(Calls, pb::TxnRequest)>,
}

impl CleanUp {
    pub fn new(calls: &Calls, txn: pb::TxnRequest) -> CleanUp {
        CleanUp {
            pending: Some((calls.clone(), txn)),
        }
    }

    pub fn disarm(mut self) {
        self.pending = None;
    }
}

impl Drop for CleanUp {
    fn drop(&mut self) {
        if let Some((calls, txn)) = self.pending.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(async move {
                if let Err(e) = calls.txn(txn).await {
                    tracing::debug!(error = %e, "removing an abandoned lock or campaign key");
                }
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holder_keys_are_the_prefix_and_the_lease_in_hex_as_go_writes_it() {
        assert_eq!(
            holder_key(b"l1/", 7587899356693685766),
            Bytes::from_static(b"l1/694da24333246606")
        );
        assert_eq!(holder_key(b"/", 10), Bytes::from_static(b"/a"));
        assert_eq!(holder_key(b"n/", -26), Bytes::from_static(b"n/-1a"));
        assert_eq!(prefix_of(b""), Bytes::from_static(b"/"));
    }

    #[test]
    fn only_the_callers_credentials_go_along() {
        let mut request = tonic::Request::new(());
        request
            .metadata_mut()
            .insert("token", "t1".parse().unwrap());
        request
            .metadata_mut()
            .insert("grpc-timeout", "1S".parse().unwrap());
        request.extensions_mut().insert(42u8);
        let grpc = hark_http::in_process(tonic::service::Routes::default());
        let calls = Calls::as_sender_of(&grpc, &request);
        let out = calls.request(());
        assert_eq!(out.metadata().get("token").unwrap(), "t1");
        assert!(out.metadata().get("grpc-timeout").is_none());
        assert_eq!(out.extensions().get::<u8>(), Some(&42));
    }
}
