//! A range read as a sequence of chunks, all at one revision (etcd 3.7's
//! `KV.RangeStream`): however large the range, the reader holds one chunk
//! at a time, and each chunk costs its own size to read (the scan of the
//! index stops after it; nothing is counted until the end).

use std::sync::atomic::Ordering;

use bytes::Bytes;

use super::Store;
use crate::error::{Error, Result};
use crate::key_index::KeyRange;
use crate::read_plan::{count_keys, finish_range_encoded, plan_chunk};
use crate::request::RangeRequest;
use crate::validate;

/// Keys in the first chunk; later chunks grow or shrink towards the
/// target size (as etcd sizes them).
const FIRST_CHUNK_KEYS: usize = 10;

/// One chunk of a streamed range: the next key-values, each in its
/// `mvccpb.KeyValue` encoding; `end` on the last chunk only.
#[derive(Debug, Default)]
pub struct RangeChunk {
    /// The next key-values, in key order.
    pub kvs: Vec<Bytes>,
    /// On the last chunk only: the answer's header revision, count and more.
    pub end: Option<RangeStreamEnd>,
}

/// What the last chunk adds: what a single Range answer would have said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RangeStreamEnd {
    /// The store's revision when the stream began (every chunk was read at
    /// it, or at the revision the request named).
    pub header_revision: i64,
    /// Keys in the whole range at the revision read.
    pub count: i64,
    /// Whether the request's `limit` left keys out.
    pub more: bool,
}

/// The chunks of one streamed range, in key order (see
/// [`Store::range_stream`]). Each `next` reads one chunk.
pub struct RangeChunks {
    store: Store,
    req: RangeRequest,
    /// The revision every chunk is read at.
    at: i64,
    header_revision: i64,
    /// The request's `limit` (`usize::MAX` for none).
    total_limit: usize,
    chunk_keys: usize,
    target_bytes: usize,
    sent: usize,
    done: bool,
}

impl Store {
    /// `req` read chunk by chunk, every chunk at the same revision (the
    /// current one unless `req.revision` names one), each near
    /// `target_bytes` of key-values. Sort orders and revision filters are
    /// not taken (etcd 3.7 refuses them too): the chunks come in key order.
    /// A `count_only` request is one chunk with the count. A chunk whose
    /// revision has been compacted meanwhile fails with
    /// [`Error::Compacted`], and the stream ends there.
    pub fn range_stream(&self, req: &RangeRequest, target_bytes: usize) -> Result<RangeChunks> {
        validate::check_range(req)?;
        if let Some(why) = req.stream_refusal() {
            return Err(Error::InvalidArgument(why.into()));
        }
        let (current, at) = self.read_revisions(req.revision)?;
        let total_limit = usize::try_from(req.limit)
            .ok()
            .filter(|&l| l > 0)
            .unwrap_or(usize::MAX);
        Ok(RangeChunks {
            store: self.clone(),
            req: RangeRequest {
                revision: at,
                ..req.clone()
            },
            at,
            header_revision: current,
            total_limit,
            chunk_keys: FIRST_CHUNK_KEYS.min(total_limit),
            target_bytes: target_bytes.max(1),
            sent: 0,
            done: false,
        })
    }
}

impl RangeChunks {
    /// The keys of the range from `key` on, at the stream's revision.
    fn count_from(&self, key: &[u8]) -> Result<i64> {
        let shared = self.store.shared();
        shared.outside_installs(|| {
            let index = shared.index.read();
            // Under the index lock, as every read checks it.
            if self.at < shared.compact_rev.load(Ordering::Acquire) {
                return Err(Error::Compacted);
            }
            let range = KeyRange::new(key, &self.req.range_end);
            Ok(count_keys(&index, range, self.at))
        })
    }

    fn read_chunk(&mut self) -> Result<RangeChunk> {
        let shared = self.store.shared();
        if self.req.count_only {
            self.done = true;
            let count = self.count_from(&self.req.key)?;
            return Ok(RangeChunk {
                kvs: Vec::new(),
                end: Some(RangeStreamEnd {
                    header_revision: self.header_revision,
                    count,
                    more: false,
                }),
            });
        }
        let limit = self.chunk_keys.min(self.total_limit - self.sent);
        let resp = shared.outside_installs(|| {
            let plan = {
                let index = shared.index.read();
                // Checked under the index lock, as every read is: compaction
                // changes the index only after raising the compacted revision.
                if self.at < shared.compact_rev.load(Ordering::Acquire) {
                    return Err(Error::Compacted);
                }
                plan_chunk(&index, &self.req, self.at, limit)
            };
            let at = self.at;
            let resp =
                finish_range_encoded(plan, &self.req, |revs| shared.load_committed_rows(revs, at))?;
            Ok(resp)
        })?;
        self.sent += resp.kvs.len();
        metrics::counter!("etcd_mvcc_range_total").increment(1);
        let done = !resp.more || self.sent >= self.total_limit;
        let mut end = None;
        if done {
            self.done = true;
            let mut count = self.sent as i64;
            if resp.more {
                // The limit stopped the stream: the keys after it count too.
                count += self.count_from(&next_key_after(&resp.kvs)?)?;
            }
            end = Some(RangeStreamEnd {
                header_revision: self.header_revision,
                count,
                more: resp.more,
            });
        } else {
            self.req.key = next_key_after(&resp.kvs)?;
            let bytes: usize = resp.kvs.iter().map(Bytes::len).sum();
            // As etcd: double below half the target, halve above twice it.
            if bytes < self.target_bytes / 2 {
                self.chunk_keys = self.chunk_keys.saturating_mul(2);
            } else if bytes > self.target_bytes.saturating_mul(2) {
                self.chunk_keys = (self.chunk_keys / 2).max(1);
            }
        }
        Ok(RangeChunk { kvs: resp.kvs, end })
    }
}

/// The smallest key after the last key-value of a chunk (a chunk that
/// says more keys follow is never empty: its limit is at least 1).
fn next_key_after(kvs: &[Bytes]) -> Result<Bytes> {
    let last = kvs
        .last()
        .ok_or_else(|| Error::Backend("a chunk that has more is empty".into()))?;
    let kv = crate::layout::decode_kv(last)?;
    let mut next = Vec::with_capacity(kv.key.len() + 1);
    next.extend_from_slice(&kv.key);
    next.push(0);
    Ok(Bytes::from(next))
}

impl Iterator for RangeChunks {
    type Item = Result<RangeChunk>;

    fn next(&mut self) -> Option<Result<RangeChunk>> {
        if self.done {
            return None;
        }
        let chunk = self.read_chunk();
        if chunk.is_err() {
            self.done = true;
        }
        Some(chunk)
    }
}
