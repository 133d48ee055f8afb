//! The KV service: etcd's wire types in, `hark_mvcc` requests through the apply
//! path (reads straight from the store), etcd's wire types out.

use hark_mvcc as mvcc;
use hark_proto::etcdserverpb::{
    self as pb, compare, kv_server::Kv, range_request, request_op, response_op,
};
use hark_proto::mvccpb;
use prost::Message;
use tonic::metadata::MetadataMap;
use tonic::{Request, Response, Status};

use crate::grpc::access::auth_status;

use crate::grpc::errors::{mvcc_status, replica_status, request_too_large};
use crate::node::{Node, NodeHandle};

pub struct KvService {
    node: NodeHandle,
}

impl KvService {
    pub fn new(node: NodeHandle) -> Self {
        KvService { node }
    }

    async fn do_range(
        &self,
        metadata: MetadataMap,
        req: pb::RangeRequest,
    ) -> Result<pb::RangeResponse, Status> {
        let node = self.node.get()?;
        let req = admit_range(&node, &metadata, req).await?;
        let resp = node.store.range(&req).map_err(mvcc_status)?;
        let header = node.header(resp.header_revision);
        Ok(range_to_pb(resp, header))
    }

    async fn do_put(
        &self,
        metadata: MetadataMap,
        req: pb::PutRequest,
    ) -> Result<pb::PutResponse, Status> {
        let node = self.node.get()?;
        check_size(&node, &req)?;
        let put = mvcc::WriteRequest::Put(put_from_pb(req));
        match write(&node, &metadata, put).await? {
            mvcc::WriteResponse::Put(r) => {
                let header = node.header(r.header_revision);
                Ok(put_to_pb(r, header))
            }
            other => Err(unexpected(&other)),
        }
    }

    async fn do_delete(
        &self,
        metadata: MetadataMap,
        req: pb::DeleteRangeRequest,
    ) -> Result<pb::DeleteRangeResponse, Status> {
        let node = self.node.get()?;
        check_size(&node, &req)?;
        let delete = mvcc::WriteRequest::DeleteRange(delete_from_pb(req));
        match write(&node, &metadata, delete).await? {
            mvcc::WriteResponse::DeleteRange(r) => {
                let header = node.header(r.header_revision);
                Ok(delete_to_pb(r, header))
            }
            other => Err(unexpected(&other)),
        }
    }

    async fn do_txn(
        &self,
        metadata: MetadataMap,
        req: pb::TxnRequest,
    ) -> Result<pb::TxnResponse, Status> {
        let node = self.node.get()?;
        check_size(&node, &req)?;
        let txn = txn_from_pb(req)?;
        match write(&node, &metadata, mvcc::WriteRequest::Txn(txn)).await? {
            mvcc::WriteResponse::Txn(r) => {
                let header = node.header(r.header_revision);
                Ok(txn_to_pb(r, header))
            }
            other => Err(unexpected(&other)),
        }
    }

    async fn do_compact(
        &self,
        metadata: MetadataMap,
        req: pb::CompactionRequest,
    ) -> Result<pb::CompactionResponse, Status> {
        let node = self.node.get()?;
        let compact = mvcc::CompactRequest {
            revision: req.revision,
            physical: req.physical,
        };
        match write(&node, &metadata, mvcc::WriteRequest::Compact(compact)).await? {
            mvcc::WriteResponse::Compact(r) => Ok(pb::CompactionResponse {
                header: node.header(r.header_revision),
            }),
            other => Err(unexpected(&other)),
        }
    }
}

/// etcd refuses a write whose encoding exceeds `--max-request-bytes`.
fn check_size(node: &Node, req: &impl Message) -> Result<(), Status> {
    if req.encoded_len() > node.max_request_bytes {
        Err(request_too_large())
    } else {
        Ok(())
    }
}

/// A write from a client: authorized, then through the quota and the log.
async fn write(
    node: &Node,
    metadata: &MetadataMap,
    req: mvcc::WriteRequest,
) -> Result<mvcc::WriteResponse, Status> {
    let caller = node.caller(metadata)?;
    let req = node.authorize_write(&caller, req)?;
    crate::grpc::quota::check(node, &req).await?;
    node.apply(req).await.map_err(replica_status)
}

fn unexpected(resp: &mvcc::WriteResponse) -> Status {
    Status::internal(format!("hark: the store answered with {resp:?}"))
}

/// A RangeStream chunk as etcd sends it: key-values only, and on the last
/// chunk the header, the count and `more`.
fn range_chunk_to_pb(
    node: &Node,
    chunk: mvcc::RangeChunk,
) -> Result<pb::RangeStreamResponse, Status> {
    let kvs = chunk
        .kvs
        .iter()
        .map(|kv| mvccpb::KeyValue::decode(kv.as_ref()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| Status::internal(format!("hark: a stored key-value: {e}")))?;
    let mut out = pb::RangeResponse {
        kvs,
        ..Default::default()
    };
    if let Some(end) = chunk.end {
        out.header = node.header(end.header_revision);
        out.count = end.count;
        out.more = end.more;
    }
    Ok(pb::RangeStreamResponse {
        range_response: Some(out),
    })
}

#[tonic::async_trait]
impl Kv for KvService {
    type RangeStreamStream = std::pin::Pin<
        Box<dyn futures_util::Stream<Item = Result<pb::RangeStreamResponse, Status>> + Send>,
    >;

    /// etcd 3.7's RangeStream: its request checks (sort orders and
    /// revision filters are not served, as in etcd), permission and (unless
    /// serializable) the linearizable barrier once, at the start; then
    /// chunks of about `--max-request-bytes` at one revision, each read
    /// when the transport asks for the next message. So the member holds a
    /// chunk or two whatever the range, and a client that stops reading
    /// holds no thread and no more than that.
    async fn range_stream(
        &self,
        request: Request<pb::RangeRequest>,
    ) -> Result<Response<Self::RangeStreamStream>, Status> {
        let (metadata, _, message) = request.into_parts();
        let serializable = message.serializable;
        let req = range_from_pb(message);
        if let Some(why) = req.stream_refusal() {
            return Err(Status::unimplemented(why));
        }
        let node = self.node.get()?;
        let req = admit_store_range(&node, &metadata, req, serializable).await?;
        let chunks = node
            .store
            .range_stream(&req, node.max_request_bytes)
            .map_err(mvcc_status)?;
        let messages = chunks.map(move |chunk| {
            chunk
                .map_err(mvcc_status)
                .and_then(|c| range_chunk_to_pb(&node, c))
        });
        Ok(Response::new(Box::pin(futures_util::stream::iter(
            messages,
        ))))
    }

    async fn range(
        &self,
        request: Request<pb::RangeRequest>,
    ) -> Result<Response<pb::RangeResponse>, Status> {
        let (metadata, _, message) = request.into_parts();
        self.do_range(metadata, message).await.map(Response::new)
    }

    async fn put(
        &self,
        request: Request<pb::PutRequest>,
    ) -> Result<Response<pb::PutResponse>, Status> {
        let (metadata, _, message) = request.into_parts();
        self.do_put(metadata, message).await.map(Response::new)
    }

    async fn delete_range(
        &self,
        request: Request<pb::DeleteRangeRequest>,
    ) -> Result<Response<pb::DeleteRangeResponse>, Status> {
        let (metadata, _, message) = request.into_parts();
        self.do_delete(metadata, message).await.map(Response::new)
    }

    async fn txn(
        &self,
        request: Request<pb::TxnRequest>,
    ) -> Result<Response<pb::TxnResponse>, Status> {
        let (metadata, _, message) = request.into_parts();
        self.do_txn(metadata, message).await.map(Response::new)
    }

    async fn compact(
        &self,
        request: Request<pb::CompactionRequest>,
    ) -> Result<Response<pb::CompactionResponse>, Status> {
        let (metadata, _, message) = request.into_parts();
        self.do_compact(metadata, message).await.map(Response::new)
    }
}

// ---- wire -> store ----

/// A Range's checks before it reads: the caller's permission, then (unless
/// `serializable`) the wait for the leader's read index. The store's request.
pub(crate) async fn admit_range(
    node: &Node,
    metadata: &MetadataMap,
    req: pb::RangeRequest,
) -> Result<mvcc::RangeRequest, Status> {
    let serializable = req.serializable;
    admit_store_range(node, metadata, range_from_pb(req), serializable).await
}

/// [`admit_range`] for a request already in the store's terms.
async fn admit_store_range(
    node: &Node,
    metadata: &MetadataMap,
    req: mvcc::RangeRequest,
    serializable: bool,
) -> Result<mvcc::RangeRequest, Status> {
    if !req.key.is_empty() {
        node.caller(metadata)?.range(&req).map_err(auth_status)?;
    }
    if !serializable {
        node.linearizable_barrier().await?;
    }
    Ok(req)
}

pub fn range_from_pb(r: pb::RangeRequest) -> mvcc::RangeRequest {
    use range_request::{SortOrder as O, SortTarget as T};
    mvcc::RangeRequest {
        key: r.key,
        range_end: r.range_end,
        limit: r.limit,
        revision: r.revision,
        sort_order: match O::try_from(r.sort_order) {
            Ok(O::Ascend) => mvcc::SortOrder::Ascend,
            Ok(O::Descend) => mvcc::SortOrder::Descend,
            _ => mvcc::SortOrder::None,
        },
        sort_target: match T::try_from(r.sort_target) {
            Ok(T::Version) => mvcc::SortTarget::Version,
            Ok(T::Create) => mvcc::SortTarget::Create,
            Ok(T::Mod) => mvcc::SortTarget::Mod,
            Ok(T::Value) => mvcc::SortTarget::Value,
            _ => mvcc::SortTarget::Key,
        },
        keys_only: r.keys_only,
        count_only: r.count_only,
        min_mod_revision: r.min_mod_revision,
        max_mod_revision: r.max_mod_revision,
        min_create_revision: r.min_create_revision,
        max_create_revision: r.max_create_revision,
    }
}

fn put_from_pb(p: pb::PutRequest) -> mvcc::PutRequest {
    mvcc::PutRequest {
        key: p.key,
        value: p.value,
        lease: p.lease,
        prev_kv: p.prev_kv,
        ignore_value: p.ignore_value,
        ignore_lease: p.ignore_lease,
        flags: p.hark_flags,
    }
}

fn delete_from_pb(d: pb::DeleteRangeRequest) -> mvcc::DeleteRangeRequest {
    mvcc::DeleteRangeRequest {
        key: d.key,
        range_end: d.range_end,
        prev_kv: d.prev_kv,
    }
}

fn compare_from_pb(c: pb::Compare) -> mvcc::Compare {
    use compare::{CompareResult as R, CompareTarget as T, TargetUnion as U};
    let result = match R::try_from(c.result) {
        Ok(R::Greater) => mvcc::CompareResult::Greater,
        Ok(R::Less) => mvcc::CompareResult::Less,
        Ok(R::NotEqual) => mvcc::CompareResult::NotEqual,
        _ => mvcc::CompareResult::Equal,
    };
    // As etcd: `target` decides what is compared; a union of another kind counts
    // as that target's zero value.
    let u = c.target_union;
    let target = match T::try_from(c.target) {
        Ok(T::Create) => mvcc::CompareTarget::CreateRevision(match u {
            Some(U::CreateRevision(v)) => v,
            _ => 0,
        }),
        Ok(T::Mod) => mvcc::CompareTarget::ModRevision(match u {
            Some(U::ModRevision(v)) => v,
            _ => 0,
        }),
        Ok(T::Value) => mvcc::CompareTarget::Value(match u {
            Some(U::Value(v)) => v,
            _ => Default::default(),
        }),
        Ok(T::Lease) => mvcc::CompareTarget::Lease(match u {
            Some(U::Lease(v)) => v,
            _ => 0,
        }),
        _ => mvcc::CompareTarget::Version(match u {
            Some(U::Version(v)) => v,
            _ => 0,
        }),
    };
    mvcc::Compare {
        key: c.key,
        range_end: c.range_end,
        result,
        target,
    }
}

fn ops_from_pb(ops: Vec<pb::RequestOp>) -> Result<Vec<mvcc::RequestOp>, Status> {
    ops.into_iter()
        .map(|op| match op.request {
            Some(request_op::Request::RequestRange(r)) => {
                Ok(mvcc::RequestOp::Range(range_from_pb(r)))
            }
            Some(request_op::Request::RequestPut(p)) => Ok(mvcc::RequestOp::Put(put_from_pb(p))),
            Some(request_op::Request::RequestDeleteRange(d)) => {
                Ok(mvcc::RequestOp::DeleteRange(delete_from_pb(d)))
            }
            Some(request_op::Request::RequestTxn(t)) => Ok(mvcc::RequestOp::Txn(txn_from_pb(t)?)),
            // etcd answers an empty op with "key not found".
            None => Err(mvcc_status(mvcc::Error::KeyNotFound)),
        })
        .collect()
}

fn txn_from_pb(t: pb::TxnRequest) -> Result<mvcc::TxnRequest, Status> {
    Ok(mvcc::TxnRequest {
        compare: t.compare.into_iter().map(compare_from_pb).collect(),
        success: ops_from_pb(t.success)?,
        failure: ops_from_pb(t.failure)?,
    })
}

// ---- store -> wire ----

pub fn kv_to_pb(kv: mvcc::KeyValue) -> mvccpb::KeyValue {
    mvccpb::KeyValue {
        key: kv.key,
        create_revision: kv.create_revision,
        mod_revision: kv.mod_revision,
        version: kv.version,
        value: kv.value,
        lease: kv.lease,
        hark_flags: kv.flags,
    }
}

/// Inner responses of a txn carry only their revision, as etcd's do.
fn inner_header(revision: i64) -> Option<pb::ResponseHeader> {
    Some(pb::ResponseHeader {
        revision,
        ..Default::default()
    })
}

fn range_to_pb(r: mvcc::RangeResponse, header: Option<pb::ResponseHeader>) -> pb::RangeResponse {
    pb::RangeResponse {
        header,
        kvs: r.kvs.into_iter().map(kv_to_pb).collect(),
        more: r.more,
        count: r.count,
    }
}

fn put_to_pb(r: mvcc::PutResponse, header: Option<pb::ResponseHeader>) -> pb::PutResponse {
    pb::PutResponse {
        header,
        prev_kv: r.prev_kv.map(kv_to_pb),
    }
}

fn delete_to_pb(
    r: mvcc::DeleteRangeResponse,
    header: Option<pb::ResponseHeader>,
) -> pb::DeleteRangeResponse {
    pb::DeleteRangeResponse {
        header,
        deleted: r.deleted,
        prev_kvs: r.prev_kvs.into_iter().map(kv_to_pb).collect(),
    }
}

fn txn_to_pb(r: mvcc::TxnResponse, header: Option<pb::ResponseHeader>) -> pb::TxnResponse {
    let responses = r
        .responses
        .into_iter()
        .map(|op| pb::ResponseOp {
            response: Some(match op {
                mvcc::ResponseOp::Range(x) => {
                    let h = inner_header(x.header_revision);
                    response_op::Response::ResponseRange(range_to_pb(x, h))
                }
                mvcc::ResponseOp::Put(x) => {
                    let h = inner_header(x.header_revision);
                    response_op::Response::ResponsePut(put_to_pb(x, h))
                }
                mvcc::ResponseOp::DeleteRange(x) => {
                    let h = inner_header(x.header_revision);
                    response_op::Response::ResponseDeleteRange(delete_to_pb(x, h))
                }
                mvcc::ResponseOp::Txn(x) => {
                    let h = inner_header(x.header_revision);
                    response_op::Response::ResponseTxn(txn_to_pb(x, h))
                }
            }),
        })
        .collect();
    pb::TxnResponse {
        header,
        succeeded: r.succeeded,
        responses,
    }
}
