//! Hark's `Usage` service (`harkpb`): space per prefix from the store's
//! counters, for `harkctl du`, the gateway and the console.

use bytes::Bytes;
use hark_mvcc as mvcc;
use hark_proto::harkpb::{self as pb, usage_server::Usage};
use tonic::{Request, Response, Status};

use crate::grpc::access::auth_status;
use crate::grpc::errors::mvcc_status;
use crate::node::NodeHandle;

pub struct UsageService {
    node: NodeHandle,
}

impl UsageService {
    pub fn new(node: NodeHandle) -> Self {
        UsageService { node }
    }
}

#[tonic::async_trait]
impl Usage for UsageService {
    async fn du(
        &self,
        request: Request<pb::DuRequest>,
    ) -> Result<Response<pb::DuResponse>, Status> {
        let node = self.node.get()?;
        let (metadata, _, req) = request.into_parts();
        // Sizes name the keys' prefixes: the caller must be able to read
        // every key under the prefix.
        let covered = if req.prefix.is_empty() {
            mvcc::RangeRequest {
                key: Bytes::from_static(b"\0"),
                range_end: Bytes::from_static(b"\0"),
                ..Default::default()
            }
        } else {
            mvcc::RangeRequest::prefix(req.prefix.clone())
        };
        node.caller(&metadata)?
            .range(&covered)
            .map_err(auth_status)?;
        let (stats, truncated) = node
            .store
            .prefix_usage(&req.prefix, req.depth as usize)
            .map_err(mvcc_status)?;
        Ok(Response::new(pb::DuResponse {
            header: node.header(node.store.current_revision()),
            prefixes: stats
                .into_iter()
                .map(|s| pb::PrefixUsage {
                    prefix: s.prefix,
                    depth: s.depth as u32,
                    keys: s.usage.keys,
                    bytes: s.usage.bytes,
                    revisions: s.usage.revisions,
                    history_bytes: s.usage.history_bytes,
                })
                .collect(),
            tracked_depth: node.store.usage_depth() as u32,
            truncated,
        }))
    }
}
