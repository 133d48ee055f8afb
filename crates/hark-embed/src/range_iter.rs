//! A range read a page at a time, at one revision.

use std::collections::VecDeque;

use bytes::{BufMut, Bytes, BytesMut};
use hark_mvcc::{Error, KeyValue, RangeRequest, Result, SortOrder, SortTarget, Store};

/// Key-values read per page.
pub(crate) const PAGE: i64 = 1000;

/// The key-values of a range, in key order, read 1000 at a time at one
/// revision (see [`crate::Hark::range_iter`]). Yields `Err` once, then ends.
pub struct RangeIter {
    store: Store,
    /// The next page's request: `key` moves past each page read.
    next: RangeRequest,
    page: VecDeque<KeyValue>,
    /// What the caller's `limit` still allows (`None`: no limit).
    left: Option<i64>,
    /// The last page was read (or an error was returned).
    done: bool,
    filters: Filters,
}

/// The request's revision filters, applied here: the store applies a
/// filter after its limit, so a filtered page could come back empty while
/// keys remain, and the next page's start would be unknown.
#[derive(Clone, Copy)]
struct Filters {
    min_mod: i64,
    max_mod: i64,
    min_create: i64,
    max_create: i64,
}

impl Filters {
    fn admit(&self, kv: &KeyValue) -> bool {
        (self.min_mod == 0 || kv.mod_revision >= self.min_mod)
            && (self.max_mod == 0 || kv.mod_revision <= self.max_mod)
            && (self.min_create == 0 || kv.create_revision >= self.min_create)
            && (self.max_create == 0 || kv.create_revision <= self.max_create)
    }
}

impl RangeIter {
    pub(crate) fn new(store: Store, request: &RangeRequest, page: i64) -> Result<RangeIter> {
        let key_order =
            request.sort_target == SortTarget::Key && request.sort_order != SortOrder::Descend;
        if !key_order || request.count_only {
            return Err(Error::InvalidArgument(
                "a range is iterated in key order, without sort or count_only".into(),
            ));
        }
        if request.limit < 0 {
            return Err(Error::InvalidArgument("limit must not be negative".into()));
        }
        let filters = Filters {
            min_mod: request.min_mod_revision,
            max_mod: request.max_mod_revision,
            min_create: request.min_create_revision,
            max_create: request.max_create_revision,
        };
        let next = RangeRequest {
            key: request.key.clone(),
            range_end: request.range_end.clone(),
            limit: page,
            revision: request.revision,
            keys_only: request.keys_only,
            ..RangeRequest::default()
        };
        let mut iter = RangeIter {
            store,
            next,
            page: VecDeque::new(),
            left: (request.limit > 0).then_some(request.limit),
            done: false,
            filters,
        };
        // The first page now: it pins the revision, and a bad request or a
        // compacted revision fails here rather than at the first item.
        iter.read_page()?;
        Ok(iter)
    }

    /// The revision every page is read at: watch from the one after it to
    /// follow the range from where the iteration saw it (list, then watch).
    pub fn revision(&self) -> i64 {
        self.next.revision
    }

    /// Reads the next page; pins the revision at the first.
    fn read_page(&mut self) -> Result<()> {
        let response = self.store.range(&self.next)?;
        if self.next.revision == 0 {
            self.next.revision = response.header_revision;
        }
        // A single key (no range end) is one page; so is a short page.
        self.done = !response.more || self.next.range_end.is_empty();
        if let Some(last) = response.kvs.last() {
            self.next.key = key_after(&last.key);
        }
        let filters = self.filters;
        self.page
            .extend(response.kvs.into_iter().filter(|kv| filters.admit(kv)));
        Ok(())
    }
}

/// The smallest key greater than `key`.
fn key_after(key: &[u8]) -> Bytes {
    let mut next = BytesMut::with_capacity(key.len() + 1);
    next.put_slice(key);
    next.put_u8(0);
    next.freeze()
}

impl Iterator for RangeIter {
    type Item = Result<KeyValue>;

    fn next(&mut self) -> Option<Result<KeyValue>> {
        if self.left == Some(0) {
            return None;
        }
        while self.page.is_empty() {
            if self.done {
                return None;
            }
            if let Err(e) = self.read_page() {
                self.done = true;
                return Some(Err(e));
            }
        }
        if let Some(left) = &mut self.left {
            *left -= 1;
        }
        self.page.pop_front().map(Ok)
    }
}

impl std::fmt::Debug for RangeIter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RangeIter")
            .field("revision", &self.next.revision)
            .field("next_key", &self.next.key)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hark_mvcc::PutRequest;
    use proptest::prelude::*;

    proptest! {
        /// Paged iteration yields exactly what one Range returns for the same
        /// request (limit, revision filters, a past revision), whatever the
        /// page size, and writes between pages are not seen.
        #[test]
        fn iteration_matches_one_range(
            puts in prop::collection::vec((0u8..40, 0u8..3), 1..120),
            from in 0u8..40,
            span in 0u8..45,
            page in 1i64..7,
            limit in 0i64..30,
            min_mod in 0i64..60,
            past in any::<bool>(),
        ) {
            let store = Store::in_memory();
            for (key, value) in &puts {
                store.put(PutRequest::new(format!("k{key:02}"), vec![*value])).unwrap();
            }
            let revision = if past { store.current_revision() / 2 + 1 } else { 0 };
            let mut request = RangeRequest::range(format!("k{from:02}"), format!("k{:02}", from + span));
            request.revision = revision;
            request.min_mod_revision = min_mod;
            let want_request = request.clone();
            request.limit = limit;
            let mut want: Vec<_> = store.range(&want_request).unwrap().kvs
                .into_iter().map(|kv| (kv.key, kv.mod_revision)).collect();
            if limit > 0 {
                want.truncate(limit as usize);
            }
            // Writes after the first page stay out of the iteration.
            let mut iter = RangeIter::new(store.clone(), &request, page).unwrap();
            let mut got = Vec::new();
            if let Some(first) = iter.next() {
                let kv = first.unwrap();
                got.push((kv.key, kv.mod_revision));
                store.put(PutRequest::new(format!("k{from:02}x"), "new")).unwrap();
            }
            got.extend(iter.map(|kv| kv.map(|kv| (kv.key, kv.mod_revision)).unwrap()));
            prop_assert_eq!(&got, &want);
        }
    }

    #[test]
    fn a_compaction_under_the_pinned_revision_ends_the_iteration_with_its_error() {
        let store = Store::in_memory();
        for i in 0..10 {
            store.put(PutRequest::new(format!("k{i}"), "v")).unwrap();
        }
        let mut iter = RangeIter::new(store.clone(), &RangeRequest::prefix("k"), 3).unwrap();
        assert_eq!(iter.revision(), store.current_revision());
        assert!(iter.next().unwrap().is_ok());
        store.put(PutRequest::new("k0", "w")).unwrap();
        store.compact(store.current_revision(), false).unwrap();
        let rest: Vec<_> = iter.collect();
        // The first page's two other keys, then the compaction's error, then nothing.
        assert_eq!(rest.len(), 3);
        assert!(matches!(rest[2], Err(Error::Compacted)));
    }

    #[test]
    fn sorting_and_count_only_are_refused() {
        let store = Store::in_memory();
        let mut request = RangeRequest::prefix("k");
        request.sort_order = SortOrder::Descend;
        assert!(RangeIter::new(store.clone(), &request, 3).is_err());
        let mut request = RangeRequest::prefix("k");
        request.count_only = true;
        assert!(RangeIter::new(store, &request, 3).is_err());
    }
}
