//! The execution of a write transaction against the key index plus the
//! backend, at the revision being written: compares, then puts, deletes and
//! reads that see the transaction's own earlier changes, into the commit
//! group's batch.

use std::cmp::Ordering;
use std::collections::HashMap;

use bytes::Bytes;
use prost::Message;

use crate::backend::{Backend, Table, WriteBatch};
use crate::error::{Error, Result};
use crate::key_index::{KeyRange, TreeIndex};
use crate::kv::{Event, EventKind, KeyValue};
use crate::layout::{self, rev_key, tombstone_row_value};
use crate::lease_table::LeaseTable;
use crate::read_plan::{finish_range, load_kv, missing_value, plan_range};
use crate::request::{
    Compare, CompareResult, CompareTarget, DeleteRangeRequest, DeleteRangeResponse,
    LeaseRevokeResponse, PutRequest, PutResponse, RangeRequest, RangeResponse, RequestOp,
    ResponseOp, TxnRequest, TxnResponse,
};
use crate::revision::Revision;
use crate::usage::{UsageChange, live_size};

/// A write transaction being applied at main revision `base_rev + 1`.
pub(crate) struct TxnWriter<'a> {
    pub index: &'a mut TreeIndex,
    pub backend: &'a dyn Backend,
    /// Values written earlier in this commit group, not yet in the backend.
    pub overlay: &'a mut HashMap<Revision, KeyValue>,
    pub batch: &'a mut WriteBatch,
    /// Kept in step with the index: which live key holds which lease.
    pub leases: &'a mut LeaseTable,
    pub base_rev: i64,
    pub compact_rev: i64,
    /// Changes made so far; the next one gets `sub = changes`.
    pub changes: i64,
    pub events: Vec<Event>,
    /// Each change's share of space per prefix, applied once the group is durable.
    pub usage: &'a mut Vec<UsageChange>,
    /// Publish each event with the key's previous value.
    pub with_prev_kvs: bool,
}

impl TxnWriter<'_> {
    /// Reads see this transaction's earlier changes.
    fn read_rev(&self) -> i64 {
        if self.changes > 0 {
            self.base_rev + 1
        } else {
            self.base_rev
        }
    }

    fn load(&self, rev: Revision) -> Result<KeyValue> {
        load_kv(self.backend, self.overlay, rev)?.ok_or_else(|| missing_value(rev))
    }

    /// Applies a whole (validated) transaction. Compares of nested transactions are
    /// evaluated up front against the state before any change, as etcd does, and the
    /// chosen path is checked before anything is written, so an error leaves no trace.
    pub(crate) fn apply_txn(&mut self, txn: &TxnRequest) -> Result<TxnResponse> {
        let mut path = Vec::new();
        self.choose_path(txn, &mut path)?;
        let mut path = path.into_iter();
        self.check_path(txn, &mut path.clone())?;
        self.run_txn(txn, &mut path)
    }

    pub(crate) fn apply_put(&mut self, put: &PutRequest) -> Result<PutResponse> {
        self.check_put(put)?;
        self.put(put)
    }

    fn choose_path(&self, txn: &TxnRequest, path: &mut Vec<bool>) -> Result<()> {
        let mut ok = true;
        for c in &txn.compare {
            if !self.compare_holds(c)? {
                ok = false;
                break;
            }
        }
        path.push(ok);
        for op in if ok { &txn.success } else { &txn.failure } {
            if let RequestOp::Txn(nested) = op {
                self.choose_path(nested, path)?;
            }
        }
        Ok(())
    }

    fn check_path(&self, txn: &TxnRequest, path: &mut impl Iterator<Item = bool>) -> Result<()> {
        let ok = path.next().expect("path covers every txn on it");
        for op in if ok { &txn.success } else { &txn.failure } {
            match op {
                RequestOp::Range(r) => {
                    if r.revision > self.base_rev {
                        return Err(Error::FutureRevision);
                    }
                    if r.revision > 0 && r.revision < self.compact_rev {
                        return Err(Error::Compacted);
                    }
                }
                RequestOp::Put(p) => self.check_put(p)?,
                RequestOp::DeleteRange(_) => {}
                RequestOp::Txn(nested) => self.check_path(nested, path)?,
            }
        }
        Ok(())
    }

    fn check_put(&self, put: &PutRequest) -> Result<()> {
        if (put.ignore_value || put.ignore_lease)
            && self.index.get(&put.key, self.read_rev()).is_none()
        {
            return Err(Error::KeyNotFound);
        }
        if put.lease != 0 && !self.leases.contains(put.lease) {
            return Err(Error::LeaseNotFound);
        }
        Ok(())
    }

    fn run_txn(
        &mut self,
        txn: &TxnRequest,
        path: &mut impl Iterator<Item = bool>,
    ) -> Result<TxnResponse> {
        let ok = path.next().expect("path covers every txn on it");
        let ops = if ok { &txn.success } else { &txn.failure };
        let mut responses = Vec::with_capacity(ops.len());
        for op in ops {
            responses.push(match op {
                RequestOp::Range(r) => ResponseOp::Range(self.range(r)?),
                RequestOp::Put(p) => ResponseOp::Put(self.put(p)?),
                RequestOp::DeleteRange(d) => ResponseOp::DeleteRange(self.delete_range(d)?),
                RequestOp::Txn(nested) => ResponseOp::Txn(self.run_txn(nested, path)?),
            });
        }
        Ok(TxnResponse {
            header_revision: self.read_rev(),
            succeeded: ok,
            responses,
        })
    }

    fn compare_holds(&self, c: &Compare) -> Result<bool> {
        let at = self.read_rev();
        let mut entries = Vec::new();
        self.index
            .visit(KeyRange::new(&c.key, &c.range_end), at, |_, e| {
                entries.push(e)
            });
        if entries.is_empty() {
            // A missing key compares as all zeros, except that no value matches it.
            return Ok(match &c.target {
                CompareTarget::Value(_) => false,
                t => holds(c.result, 0i64.cmp(&int_operand(t))),
            });
        }
        for e in entries {
            let ord = match &c.target {
                CompareTarget::Version(v) => e.version.cmp(v),
                CompareTarget::CreateRevision(v) => e.create_revision.cmp(v),
                CompareTarget::ModRevision(v) => e.rev.main.cmp(v),
                CompareTarget::Lease(v) => self.load(e.rev)?.lease.cmp(v),
                CompareTarget::Value(v) => self.load(e.rev)?.value.as_ref().cmp(v.as_ref()),
            };
            if !holds(c.result, ord) {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn range(&self, req: &RangeRequest) -> Result<RangeResponse> {
        let at = if req.revision > 0 {
            req.revision
        } else {
            self.read_rev()
        };
        let plan = plan_range(self.index, req, at);
        let mut resp = finish_range(plan, req, |rev| self.load(rev))?;
        resp.header_revision = self.read_rev();
        Ok(resp)
    }

    fn next_rev(&mut self) -> Revision {
        let rev = Revision::new(self.base_rev + 1, self.changes);
        self.changes += 1;
        rev
    }

    fn put(&mut self, req: &PutRequest) -> Result<PutResponse> {
        let prev = match self.index.get(&req.key, self.read_rev()) {
            Some(e)
                if req.prev_kv || req.ignore_value || req.ignore_lease || self.with_prev_kvs =>
            {
                Some(self.load(e.rev)?)
            }
            _ => None,
        };
        let rev = self.next_rev();
        // A request's bytes may be slices of the transport's whole receive
        // buffer; what the store keeps (index, overlay, watch events) gets its
        // own small allocation so it does not pin that buffer (measured before:
        // ~5 KB of server RSS per put that never came back).
        let key = Bytes::copy_from_slice(&req.key);
        let value = match (&prev, req.ignore_value) {
            (Some(p), true) => p.value.clone(),
            _ => Bytes::copy_from_slice(&req.value),
        };
        let size = live_size(&key, &value);
        let (entry, before) = self.index.put(&key, rev, rev.main, 1, size);
        let kv = KeyValue {
            key,
            create_revision: entry.create_revision,
            mod_revision: rev.main,
            version: entry.version,
            value,
            lease: match (&prev, req.ignore_lease) {
                (Some(p), true) => p.lease,
                _ => req.lease,
            },
            flags: match (&prev, req.ignore_value) {
                (Some(p), true) => p.flags,
                _ => req.flags,
            },
        };
        let row_key = rev_key(rev, false);
        let row = kv.encode_to_vec();
        self.usage.push(UsageChange::revision(
            kv.key.clone(),
            row_key.len() + row.len(),
            before,
            Some(size),
        ));
        self.batch.put(Table::Kv, row_key, row);
        self.leases.attach(&kv.key, kv.lease);
        self.overlay.insert(rev, kv.clone());
        self.events.push(Event {
            kind: EventKind::Put,
            kv,
            prev_kv: if self.with_prev_kvs {
                prev.clone()
            } else {
                None
            },
        });
        Ok(PutResponse {
            header_revision: rev.main,
            prev_kv: if req.prev_kv { prev } else { None },
        })
    }

    /// Forgets lease `id` and deletes its keys, all at this transaction's revision.
    pub(crate) fn revoke_lease(&mut self, id: i64) -> Result<LeaseRevokeResponse> {
        let keys = self.leases.remove(id).ok_or(Error::LeaseNotFound)?;
        self.batch.delete(Table::Meta, layout::lease_key(id));
        for key in keys {
            self.delete_range(&DeleteRangeRequest::new(key, Bytes::new()))?;
        }
        Ok(LeaseRevokeResponse {
            header_revision: self.read_rev(),
        })
    }

    pub(crate) fn delete_range(&mut self, req: &DeleteRangeRequest) -> Result<DeleteRangeResponse> {
        let mut doomed = Vec::new();
        self.index.visit(
            KeyRange::new(&req.key, &req.range_end),
            self.read_rev(),
            |k, e| doomed.push((Bytes::copy_from_slice(k), e)),
        );
        let mut prev_kvs = Vec::new();
        if req.prev_kv || self.with_prev_kvs {
            for (_, e) in &doomed {
                prev_kvs.push(self.load(e.rev)?);
            }
        }
        for (i, (key, _)) in doomed.iter().enumerate() {
            let rev = self.next_rev();
            let before = self.index.tombstone(key, rev);
            self.leases.detach(key);
            let kv = KeyValue {
                key: key.clone(),
                mod_revision: rev.main,
                ..Default::default()
            };
            let row_key = rev_key(rev, true);
            let row = tombstone_row_value(key.clone());
            self.usage.push(UsageChange::revision(
                key.clone(),
                row_key.len() + row.len(),
                before,
                None,
            ));
            self.batch.put(Table::Kv, row_key, row);
            self.events.push(Event {
                kind: EventKind::Delete,
                kv,
                prev_kv: if self.with_prev_kvs {
                    prev_kvs.get(i).cloned()
                } else {
                    None
                },
            });
        }
        if !req.prev_kv {
            prev_kvs.clear();
        }
        Ok(DeleteRangeResponse {
            header_revision: self.read_rev(),
            deleted: doomed.len() as i64,
            prev_kvs,
        })
    }
}

fn int_operand(t: &CompareTarget) -> i64 {
    match t {
        CompareTarget::Version(v)
        | CompareTarget::CreateRevision(v)
        | CompareTarget::ModRevision(v) => *v,
        CompareTarget::Lease(v) => *v,
        CompareTarget::Value(_) => 0,
    }
}

fn holds(result: CompareResult, ord: Ordering) -> bool {
    match result {
        CompareResult::Equal => ord == Ordering::Equal,
        CompareResult::NotEqual => ord != Ordering::Equal,
        CompareResult::Greater => ord == Ordering::Greater,
        CompareResult::Less => ord == Ordering::Less,
    }
}
