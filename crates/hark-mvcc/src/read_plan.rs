//! A range read in two steps: the plan (which keys, from the key index, under
//! its lock) and its finish (their values, from the backend, after the lock).
//! Used by readers (at a committed revision) and by the committer's
//! transactions (at the revision being written, seeing their own
//! not-yet-durable changes).

use std::collections::HashMap;

use bytes::Bytes;
use prost::Message;

use crate::backend::{Backend, Table};
use crate::error::{Error, Result};
use crate::key_index::{IndexEntry, KeyRange, TreeIndex};
use crate::kv::KeyValue;
use crate::layout::{decode_kv, rev_key};
use crate::request::{EncodedRangeResponse, RangeRequest, RangeResponse, SortOrder, SortTarget};
use crate::revision::Revision;

/// Loads the value stored at a revision.
pub(crate) fn load_kv(
    backend: &dyn Backend,
    overlay: &HashMap<Revision, KeyValue>,
    rev: Revision,
) -> Result<Option<KeyValue>> {
    if let Some(kv) = overlay.get(&rev) {
        return Ok(Some(kv.clone()));
    }
    match backend.get(Table::Kv, &rev_key(rev, false))? {
        Some(bytes) => Ok(Some(decode_kv(&bytes)?)),
        None => Ok(None),
    }
}

/// The index points at a revision the backend does not hold.
pub(crate) fn missing_value(rev: Revision) -> Error {
    Error::Backend(format!(
        "missing value at revision {}_{}",
        rev.main, rev.sub
    ))
}

/// The keys a range selects, before their values are loaded.
pub(crate) struct RangePlan {
    entries: Vec<(Bytes, IndexEntry)>,
    count: i64,
    /// More entries matched than `limit` (etcd's `more`), known before loading
    /// only when no value sort is needed.
    more: bool,
}

/// etcd's default ordering rules: a non-key target with no order sorts ascending;
/// key ascending is the natural order and needs no sort.
fn effective_order(req: &RangeRequest) -> SortOrder {
    match (req.sort_target, req.sort_order) {
        (SortTarget::Key, SortOrder::Ascend) => SortOrder::None,
        (t, SortOrder::None) if t != SortTarget::Key => SortOrder::Ascend,
        (_, o) => o,
    }
}

fn passes_filters(req: &RangeRequest, e: &IndexEntry) -> bool {
    let m = e.rev.main;
    let c = e.create_revision;
    (req.min_mod_revision == 0 || m >= req.min_mod_revision)
        && (req.max_mod_revision == 0 || m <= req.max_mod_revision)
        && (req.min_create_revision == 0 || c >= req.min_create_revision)
        && (req.max_create_revision == 0 || c <= req.max_create_revision)
}

/// Picks the keys of `req` at main revision `at` from the index.
pub(crate) fn plan_range(index: &TreeIndex, req: &RangeRequest, at: i64) -> RangePlan {
    let range = KeyRange::new(&req.key, &req.range_end);
    let order = effective_order(req);
    let limit = usize::try_from(req.limit).ok().filter(|&l| l > 0);
    // Without a sort, keys arrive in order and only the first `limit + 1` matter.
    let keep_at_most = match (order, limit) {
        (SortOrder::None, Some(l)) => l + 1,
        _ => usize::MAX,
    };
    if req.count_only {
        return RangePlan {
            entries: Vec::new(),
            count: index.count(range, None, at) as i64,
            more: false,
        };
    }
    let mut count = 0i64;
    let mut entries = Vec::new();
    index.visit_while(range, at, |k, e| {
        count += 1;
        if passes_filters(req, &e) {
            entries.push((Bytes::copy_from_slice(k), e));
        }
        entries.len() < keep_at_most
    });
    // The keys past the last one kept only count: from the chunks'
    // summaries, so a limited read of a large range costs its limit.
    if entries.len() == keep_at_most
        && let Some((last, _)) = entries.last()
    {
        count += index.count(range, Some(last), at) as i64;
    }
    let mut more = false;
    if req.sort_target != SortTarget::Value || order == SortOrder::None {
        sort_entries(&mut entries, req.sort_target, order);
        if let Some(l) = limit
            && entries.len() > l
        {
            entries.truncate(l);
            more = true;
        }
    }
    RangePlan {
        entries,
        count,
        more,
    }
}

/// The first `limit` keys of `req`'s range at `at`, in key order, and
/// whether more follow: one chunk of a streamed range. Unlike
/// [`plan_range`] it counts nothing and stops scanning after `limit + 1`
/// keys, so a chunk costs its own size whatever the range holds. (`count`
/// is the chunk's own length.)
pub(crate) fn plan_chunk(
    index: &TreeIndex,
    req: &RangeRequest,
    at: i64,
    limit: usize,
) -> RangePlan {
    let range = KeyRange::new(&req.key, &req.range_end);
    let mut entries = Vec::with_capacity(limit.min(1024) + 1);
    index.visit_while(range, at, |k, e| {
        entries.push((Bytes::copy_from_slice(k), e));
        entries.len() <= limit
    });
    let more = entries.len() > limit;
    entries.truncate(limit);
    RangePlan {
        count: entries.len() as i64,
        entries,
        more,
    }
}

/// How many keys of `range` exist at `at`.
pub(crate) fn count_keys(index: &TreeIndex, range: KeyRange<'_>, at: i64) -> i64 {
    index.count(range, None, at) as i64
}

fn sort_entries(entries: &mut [(Bytes, IndexEntry)], target: SortTarget, order: SortOrder) {
    let key_fn = |(k, e): &(Bytes, IndexEntry)| -> (i64, Bytes) {
        match target {
            SortTarget::Key | SortTarget::Value => (0, k.clone()),
            SortTarget::Version => (e.version, Bytes::new()),
            SortTarget::Create => (e.create_revision, Bytes::new()),
            SortTarget::Mod => (e.rev.main, Bytes::new()),
        }
    };
    match order {
        SortOrder::None => {}
        SortOrder::Ascend => entries.sort_by_cached_key(key_fn),
        SortOrder::Descend => {
            entries.sort_by_cached_key(key_fn);
            entries.reverse();
        }
    }
}

/// Loads the planned values and finishes sorting, limiting and trimming.
pub(crate) fn finish_range(
    plan: RangePlan,
    req: &RangeRequest,
    mut load: impl FnMut(Revision) -> Result<KeyValue>,
) -> Result<RangeResponse> {
    let mut kvs = Vec::with_capacity(plan.entries.len());
    for (_, e) in &plan.entries {
        kvs.push(load(e.rev)?);
    }
    let mut more = plan.more;
    if req.sort_target == SortTarget::Value && effective_order(req) != SortOrder::None {
        kvs.sort_by(|a, b| a.value.cmp(&b.value));
        if effective_order(req) == SortOrder::Descend {
            kvs.reverse();
        }
        if let Some(l) = usize::try_from(req.limit).ok().filter(|&l| l > 0)
            && kvs.len() > l
        {
            kvs.truncate(l);
            more = true;
        }
    }
    if req.keys_only {
        for kv in &mut kvs {
            kv.value = Bytes::new();
        }
    }
    Ok(RangeResponse {
        header_revision: 0,
        kvs,
        more,
        count: plan.count,
    })
}

/// Rows looked up together by [`finish_range_encoded`]: enough for a
/// backend's batched lookup to pay (RocksDB's MultiGet consults each
/// file's index and filter once per batch), few enough that a batch's rows
/// are a small part of a large answer.
const ROWS_PER_LOAD: usize = 512;

/// As [`finish_range`], but each key-value stays in its stored encoding
/// (the rows are `mvccpb.KeyValue` bytes): one allocation per row, none
/// decoded, so an answer is held once. Only a sort by value (which needs
/// the values) or `keys_only` (which drops them) decodes and encodes again,
/// one row at a time. `load_rows` loads the rows of several revisions at
/// once, in their order.
pub(crate) fn finish_range_encoded(
    plan: RangePlan,
    req: &RangeRequest,
    mut load_rows: impl FnMut(&[Revision]) -> Result<Vec<Vec<u8>>>,
) -> Result<EncodedRangeResponse> {
    let by_value = req.sort_target == SortTarget::Value && effective_order(req) != SortOrder::None;
    if by_value {
        let count = plan.count;
        let resp = finish_range(plan, req, |rev| {
            let row = load_rows(&[rev])?.pop().ok_or_else(|| missing_value(rev))?;
            decode_kv(&row)
        })?;
        return Ok(EncodedRangeResponse {
            header_revision: 0,
            kvs: resp
                .kvs
                .iter()
                .map(|kv| Bytes::from(kv.encode_to_vec()))
                .collect(),
            more: resp.more,
            count,
        });
    }
    let mut kvs = Vec::with_capacity(plan.entries.len());
    let mut revs = Vec::with_capacity(ROWS_PER_LOAD.min(plan.entries.len()));
    for batch in plan.entries.chunks(ROWS_PER_LOAD) {
        revs.clear();
        revs.extend(batch.iter().map(|(_, e)| e.rev));
        let rows = load_rows(&revs)?;
        debug_assert_eq!(rows.len(), revs.len(), "a row per revision, or an error");
        for row in rows {
            kvs.push(if req.keys_only {
                let mut kv = decode_kv(&row)?;
                kv.value = Bytes::new();
                Bytes::from(kv.encode_to_vec())
            } else {
                Bytes::from(row)
            });
        }
    }
    Ok(EncodedRangeResponse {
        header_revision: 0,
        kvs,
        more: plan.more,
        count: plan.count,
    })
}
