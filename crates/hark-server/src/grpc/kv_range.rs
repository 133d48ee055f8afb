//! KV's Range, written from the store's rows. A large answer (a Kubernetes
//! LIST of a big resource is one Range) is held once: each key-value stays
//! the stored row's bytes, which are already its `mvccpb.KeyValue`
//! encoding (`Store::range_encoded`), and the encoder copies them into the
//! message buffer, sized exactly first, letting each row go as it is
//! copied. Decoding every value and encoding it again held the answer two
//! to three times over.
//!
//! `KvRoutes` is the KV service as routed: Range here, every other method
//! to the generated `KvServer`.

use std::convert::Infallible;

use bytes::{BufMut, Bytes};
use hark_proto::etcdserverpb::{self as pb, kv_server::KvServer};
use prost::Message;
use prost::encoding::{WireType, encode_key, encode_varint, encoded_len_varint};
use tonic::codec::{Codec, EncodeBuf, Encoder};
use tonic::codegen::{Body, BoxFuture, Context, Poll, Service, StdError, http};
use tonic::server::{Grpc, NamedService, UnaryService};
use tonic::{Request, Response, Status};
use tonic_prost::ProstDecoder;

use crate::grpc::errors::mvcc_status;
use crate::grpc::kv::{KvService, admit_range};
use crate::node::NodeHandle;

const RANGE_PATH: &str = "/etcdserverpb.KV/Range";
/// `RangeResponse.kvs`.
const KVS_TAG: u32 = 2;

/// A `RangeResponse`: every field but the key-values in `head`, then each
/// key-value's encoding.
#[derive(Debug, Default)]
pub struct RangeFrame {
    pub head: pb::RangeResponse,
    pub kvs: Vec<Bytes>,
}

impl RangeFrame {
    pub fn encoded_len(&self) -> usize {
        self.head.encoded_len()
            + self
                .kvs
                .iter()
                .map(|kv| 1 + encoded_len_varint(kv.len() as u64) + kv.len())
                .sum::<usize>()
    }

    /// Writes the frame as `RangeResponse`'s encoding (the key-values after
    /// the other fields: protobuf takes fields in any order), dropping each
    /// key-value once written.
    pub fn encode(self, buf: &mut impl BufMut) {
        debug_assert!(self.head.kvs.is_empty(), "key-values go in `kvs`");
        self.head
            .encode(buf)
            .expect("EncodeBuf and Vec grow as needed");
        for kv in self.kvs {
            encode_key(KVS_TAG, WireType::LengthDelimited, buf);
            encode_varint(kv.len() as u64, buf);
            buf.put_slice(&kv);
        }
    }
}

/// The Range method's codec: requests as tonic's prost codec decodes them,
/// responses are [`RangeFrame`]s.
#[derive(Debug, Clone, Copy, Default)]
pub struct RangeCodec;

#[derive(Debug, Clone, Copy, Default)]
pub struct RangeEncoder;

impl Codec for RangeCodec {
    type Encode = RangeFrame;
    type Decode = pb::RangeRequest;
    type Encoder = RangeEncoder;
    type Decoder = ProstDecoder<pb::RangeRequest>;

    fn encoder(&mut self) -> RangeEncoder {
        RangeEncoder
    }

    fn decoder(&mut self) -> Self::Decoder {
        ProstDecoder::default()
    }
}

impl Encoder for RangeEncoder {
    type Item = RangeFrame;
    type Error = Status;

    fn encode(&mut self, frame: RangeFrame, buf: &mut EncodeBuf<'_>) -> Result<(), Status> {
        // Exactly once: growing a buffer of hundreds of MiB by doubling
        // copies it, holding old and new at once.
        buf.reserve(frame.encoded_len());
        frame.encode(buf);
        Ok(())
    }
}

/// The KV service: Range answered from the store's rows, the rest by the
/// generated server.
#[derive(Clone)]
pub struct KvRoutes {
    kv: KvServer<KvService>,
    node: NodeHandle,
    max_decoding_message_size: usize,
}

impl KvRoutes {
    pub fn new(node: NodeHandle, max_decoding_message_size: usize) -> Self {
        KvRoutes {
            kv: KvServer::new(KvService::new(node.clone()))
                .max_decoding_message_size(max_decoding_message_size),
            node,
            max_decoding_message_size,
        }
    }
}

impl NamedService for KvRoutes {
    const NAME: &'static str = "etcdserverpb.KV";
}

impl<B> Service<http::Request<B>> for KvRoutes
where
    B: Body + Send + 'static,
    B::Error: Into<StdError> + Send + 'static,
{
    type Response = http::Response<tonic::body::Body>;
    type Error = Infallible;
    type Future = BoxFuture<Self::Response, Infallible>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        if req.uri().path() != RANGE_PATH {
            return self.kv.call(req);
        }
        let method = RangeMethod(self.node.clone());
        let limit = self.max_decoding_message_size;
        Box::pin(async move {
            let mut grpc = Grpc::new(RangeCodec).apply_max_message_size_config(Some(limit), None);
            Ok(grpc.unary(method, req).await)
        })
    }
}

/// `Range(RangeRequest) returns (RangeResponse)`.
struct RangeMethod(NodeHandle);

impl UnaryService<pb::RangeRequest> for RangeMethod {
    type Response = RangeFrame;
    type Future = BoxFuture<Response<RangeFrame>, Status>;

    fn call(&mut self, request: Request<pb::RangeRequest>) -> Self::Future {
        let handle = self.0.clone();
        Box::pin(async move {
            let started = std::time::Instant::now();
            let answered = async {
                let node = handle.get()?;
                let (metadata, _, req) = request.into_parts();
                let req = admit_range(&node, &metadata, req).await?;
                let resp = node.store.range_encoded(&req).map_err(mvcc_status)?;
                Ok(Response::new(RangeFrame {
                    head: pb::RangeResponse {
                        header: node.header(resp.header_revision),
                        kvs: Vec::new(),
                        more: resp.more,
                        count: resp.count,
                    },
                    kvs: resp.kvs,
                }))
            }
            .await;
            // etcd's per-type request latency, which it keeps for Range.
            // Literal labels: the key is built without allocating, on
            // every read.
            let took = started.elapsed().as_secs_f64();
            if answered.is_ok() {
                metrics::histogram!("etcd_server_request_duration_seconds",
                    "success" => "true", "type" => "Range")
                .record(took);
            } else {
                metrics::histogram!("etcd_server_request_duration_seconds",
                    "success" => "false", "type" => "Range")
                .record(took);
            }
            answered
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hark_proto::mvccpb;

    #[test]
    fn a_frame_decodes_as_the_range_response_it_stands_for() {
        let kvs: Vec<mvccpb::KeyValue> = (0..3)
            .map(|i| mvccpb::KeyValue {
                key: format!("k{i}").into(),
                value: vec![b'v'; 200 * i].into(),
                create_revision: 2 + i as i64,
                mod_revision: 5,
                version: 1,
                ..Default::default()
            })
            .collect();
        let head = pb::RangeResponse {
            header: Some(pb::ResponseHeader {
                revision: 9,
                cluster_id: 7,
                ..Default::default()
            }),
            kvs: Vec::new(),
            more: true,
            count: 12,
        };
        let frame = RangeFrame {
            head: head.clone(),
            kvs: kvs.iter().map(|kv| kv.encode_to_vec().into()).collect(),
        };
        let len = frame.encoded_len();
        let mut buf = Vec::new();
        frame.encode(&mut buf);
        assert_eq!(buf.len(), len);
        let decoded = pb::RangeResponse::decode(buf.as_slice()).unwrap();
        assert_eq!(decoded, pb::RangeResponse { kvs, ..head });
    }
}
