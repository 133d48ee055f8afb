//! The committer thread, the one apply seam: it applies requests in arrival
//! order at new revisions, writes each group in one backend write with one
//! sync, then publishes the changes and answers the callers.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use crossbeam_channel::{Receiver, Sender};
use parking_lot::Mutex;

use super::compactor::Compaction;
use super::image::StoreImage;
use super::load::load_state;
use super::shared::{COMPACTION_BATCH, Job, JobDone, Shared, Work};
use crate::alarm::{Alarm, AlarmAction, AlarmKind, AlarmRequest, AlarmResponse};
use crate::announce::Announcement;
use crate::backend::{Backend, Table, WriteBatch};
use crate::error::{Error, Result};
use crate::kv::{CommittedRevision, EventKind, KeyValue};
use crate::layout::{
    self, META_CURRENT_REV, META_FINISHED_COMPACT, META_LOG_POSITION, META_SCHEDULED_COMPACT,
    encode_counter,
};
use crate::records::{RecordChange, RecordsRequest, RecordsResponse};
use crate::request::{
    CompactRequest, CompactResponse, LeaseGrantResponse, RequestOp, TxnRequest, WriteRequest,
    WriteResponse,
};
use crate::revision::Revision;
use crate::txn_writer::TxnWriter;
use crate::usage::{PrefixUsage, UsageChange};

/// What applying one request produced, to act on once the group is durable.
pub(super) enum Outcome {
    Ready(Result<WriteResponse>, Option<Arc<CommittedRevision>>),
    /// A job without a request (a barrier, or a log entry for another layer).
    Nothing,
    Compact {
        request: CompactRequest,
        header_revision: i64,
    },
}

/// Owns the write side: applies requests in arrival order, one group per backend write.
pub(super) struct Committer {
    shared: Arc<Shared>,
    compactions: Sender<Compaction>,
    /// Newest revision applied, durable or not.
    applied_rev: i64,
    /// Newest compaction revision accepted, durable or not.
    compact_target: i64,
}

impl Committer {
    pub(super) fn new(shared: Arc<Shared>, compactions: Sender<Compaction>) -> Self {
        let applied_rev = shared.committed_rev.load(Ordering::Acquire);
        let compact_target = shared.compact_rev.load(Ordering::Acquire);
        Committer {
            shared,
            compactions,
            applied_rev,
            compact_target,
        }
    }

    /// The committer thread: takes jobs in arrival order, a group at a time.
    /// It holds the committer only while applying, so a caller may commit on
    /// its own thread in between (`StoreOptions::commit_on_caller`).
    pub(super) fn run(committer: Arc<Mutex<Committer>>, jobs: Receiver<Job>) {
        let mut next = None;
        loop {
            let first = match next.take() {
                Some(job) => job,
                None => match jobs.recv() {
                    Ok(job) => job,
                    Err(_) => return,
                },
            };
            let mut this = committer.lock();
            if first.is_install() {
                this.install(first);
                continue;
            }
            let mut group = vec![first];
            while group.len() < this.shared.options.max_group {
                match jobs.try_recv() {
                    // An install runs alone, after the group before it.
                    Ok(job) if job.is_install() => {
                        next = Some(job);
                        break;
                    }
                    Ok(job) => group.push(job),
                    Err(_) => break,
                }
            }
            this.commit_group(group);
        }
    }

    /// [`Store::install`]: clears both tables, copies the source's image,
    /// rebuilds the in-memory state from it and tells subscribers.
    pub(super) fn install(&mut self, job: Job) {
        self.shared.queued_jobs.fetch_sub(1, Ordering::AcqRel);
        let Job {
            mut parts,
            position,
        } = job;
        let (Work::Install(source), done) = parts.remove(0) else {
            unreachable!("install jobs hold an install")
        };
        let before = self.applied_rev;
        let result = self.replace_contents(&source, position.unwrap_or_default());
        drop(source);
        if let Err(e) = &result {
            tracing::error!(error = %e, "installing a snapshot failed; the store stops taking writes");
            self.shared.failed.store(true, Ordering::Release);
        } else {
            let mut subs = self.shared.subscribers.lock();
            self.shared
                .committed_rev
                .store(self.applied_rev, Ordering::Release);
            if self.applied_rev > before {
                let jump = Arc::new(CommittedRevision {
                    revision: self.applied_rev,
                    events: Vec::new(),
                    with_prev_kvs: false,
                });
                subs.retain(|s| s.offer(&jump));
            }
        }
        self.shared.record_gauges();
        done(result.err().map(Err));
    }

    pub(super) fn replace_contents(&mut self, source: &Shared, position: Vec<u8>) -> Result<()> {
        let shared = self.shared.clone();
        // No physical compaction runs meanwhile, and none planned before runs after.
        let _compacting = shared.compacting.lock();
        // The mutation takes the locks only once the rows are in, as
        // installs once did: readers meanwhile see the store half-filled.
        let mut early = (!crate::chaos::mutation("install-visible-to-readers")).then(|| {
            (
                shared.index.write(),
                shared.leases.lock(),
                shared.alarms.lock(),
            )
        });
        // Bumped under the index lock and before any row changes: a reader
        // that took the generation under the index lock and finds it
        // unchanged afterwards saw no row of this install (see
        // `Shared::outside_installs`).
        shared.generation.fetch_add(1, Ordering::AcqRel);
        if let Some(dir) = &shared.checkpoint_dir {
            super::checkpoint::remove(&shared, dir)
                .map_err(|e| Error::Backend(format!("removing the index checkpoint: {e}")))?;
        }
        let backend = shared.backend.as_ref();
        for table in Table::ALL {
            clear_table(backend, table)?;
        }
        source.backend.read_snapshot(&mut |view| {
            let image = StoreImage { view };
            let mut batch = WriteBatch::default();
            let mut failed = None;
            // The mutation refills in small batches with a pause after each
            // of the first five, so that a reader let in meanwhile meets a
            // half-filled store. Only five: an install slowed by seconds
            // outlasts the leader's patience, is sent again and restarts,
            // and the member never serves at all.
            let (batch_rows, mut pauses) = if crate::chaos::mutation("install-visible-to-readers") {
                (100, 5)
            } else {
                (COMPACTION_BATCH, 0)
            };
            image.for_each_row(&mut |k, v| {
                batch.put(Table::Kv, k.to_vec(), v.to_vec());
                if batch.len() >= batch_rows {
                    if let Err(e) = backend.write(std::mem::take(&mut batch), false) {
                        failed = Some(e);
                        return false;
                    }
                    if pauses > 0 {
                        pauses -= 1;
                        std::thread::sleep(std::time::Duration::from_millis(200));
                    }
                }
                true
            })?;
            if let Some(e) = failed {
                return Err(e);
            }
            for (id, ttl) in image.leases()? {
                batch.put(Table::Meta, layout::lease_key(id), layout::lease_value(ttl));
            }
            for a in image.alarms()? {
                batch.put(Table::Meta, layout::alarm_key(a), Vec::new());
            }
            for (bucket, key, value) in image.records()? {
                batch.put(
                    Table::Meta,
                    layout::record_key(&bucket, &key),
                    value.to_vec(),
                );
            }
            batch.put(
                Table::Meta,
                META_CURRENT_REV.to_vec(),
                encode_counter(image.revision()?),
            );
            let (scheduled, finished) = (
                image.scheduled_compact_revision()?,
                image.finished_compact_revision()?,
            );
            if scheduled > 0 {
                batch.put(
                    Table::Meta,
                    META_SCHEDULED_COMPACT.to_vec(),
                    encode_counter(scheduled),
                );
                batch.put(
                    Table::Meta,
                    META_FINISHED_COMPACT.to_vec(),
                    encode_counter(finished),
                );
            }
            batch.put(Table::Meta, META_LOG_POSITION.to_vec(), position.clone());
            backend.write(batch, true)
        })?;
        let (mut index, mut leases, mut alarms) = early.take().unwrap_or_else(|| {
            (
                shared.index.write(),
                shared.leases.lock(),
                shared.alarms.lock(),
            )
        });
        let mut loaded = load_state(backend, shared.options.usage_depth)?;
        // Before the compaction below, which subtracts what it deletes.
        *shared.usage.lock() = std::mem::replace(&mut loaded.usage, PrefixUsage::new(0));
        // As on open: the key index forgets what the compaction removed (or
        // HashKV's keep set and reads differ from a member that restarted),
        // and a compaction the source had not finished is finished here.
        if loaded.scheduled > 0 {
            let dropped = loaded.index.compact(loaded.scheduled);
            if loaded.scheduled > loaded.finished {
                shared.delete_compacted(loaded.scheduled, dropped)?;
            }
        }
        *index = loaded.index;
        *leases = loaded.leases;
        shared
            .nospace
            .store(loaded.alarms.any(AlarmKind::NoSpace), Ordering::Release);
        shared
            .corrupt
            .store(loaded.alarms.any(AlarmKind::Corrupt), Ordering::Release);
        *alarms = loaded.alarms;
        *shared.records.write() = loaded.records;
        shared.records_generation.fetch_add(1, Ordering::AcqRel);
        shared
            .compact_rev
            .store(loaded.scheduled, Ordering::Release);
        self.applied_rev = loaded.current;
        self.compact_target = loaded.scheduled;
        shared.compaction_finished(loaded.scheduled);
        drop((index, leases, alarms));
        shared.measure_sizes(true);
        Ok(())
    }

    /// Takes a group of queued jobs off the queue's counts and applies it.
    pub(super) fn commit_group(&mut self, group: Vec<Job>) {
        self.shared
            .queued_jobs
            .fetch_sub(group.len(), Ordering::AcqRel);
        self.apply_group(group);
    }

    /// Applies a group of requests in one backend write (jobs never queued
    /// come here directly, on the submitting thread). etcd's
    /// `etcd_server_proposals_*` count log entries: `hark-raft` keeps them.
    pub(super) fn apply_group(&mut self, group: Vec<Job>) {
        if self.shared.failed.load(Ordering::Acquire) {
            for (_, done) in group.into_iter().flat_map(|j| j.parts) {
                done(Some(Err(Error::Closed)));
            }
            return;
        }
        let mut batch = WriteBatch::default();
        let mut overlay = HashMap::new();
        let mut usage = Vec::new();
        let mut outcomes = Vec::with_capacity(group.len());
        let mut dones = Vec::with_capacity(group.len());
        let mut position = None;
        for job in group {
            for (work, done) in job.parts {
                outcomes.push(match work {
                    Work::Request(req) => {
                        let op = req.unguarded().op_name();
                        let started = Instant::now();
                        let outcome = self.apply_one(req, &mut batch, &mut overlay, &mut usage);
                        record_apply(op, &outcome, started.elapsed());
                        outcome
                    }
                    Work::Refused(e) => Outcome::Ready(Err(e), None),
                    Work::Nothing => Outcome::Nothing,
                    Work::Install(_) => unreachable!("an install runs alone"),
                });
                dones.push(done);
            }
            position = job.position.or(position);
        }
        if let Some(p) = position {
            // A backend failure while applying a logged entry must not be
            // recorded as applied: a restart re-applies it from the log.
            if let Some(e) = outcomes.iter().find_map(|o| match o {
                Outcome::Ready(Err(e @ Error::Backend(_)), _) => Some(e.clone()),
                _ => None,
            }) {
                tracing::error!(error = %e, "applying a logged entry failed; the store stops taking writes");
                self.shared.failed.store(true, Ordering::Release);
                for done in dones {
                    done(Some(Err(e.clone())));
                }
                return;
            }
            batch.put(Table::Meta, META_LOG_POSITION.to_vec(), p);
        }
        if batch.is_empty() {
            // Only reads, failures or no-op deletes: nothing to make durable.
            return self.finish(outcomes, dones);
        }
        batch.put(
            Table::Meta,
            META_CURRENT_REV.to_vec(),
            encode_counter(self.applied_rev),
        );
        // Under a replicated log, the log's fsync is the durability point and a
        // restart re-applies what follows the recorded position: no second sync.
        let started = Instant::now();
        let written = self.shared.backend.write(batch, self.shared.options.sync);
        // One synced write is both etcd's WAL fsync and its backend commit:
        // RocksDB's write-ahead log is the store's durability point.
        let took = started.elapsed().as_secs_f64();
        metrics::histogram!("etcd_disk_backend_commit_duration_seconds").record(took);
        if self.shared.options.sync {
            metrics::histogram!("etcd_disk_wal_fsync_duration_seconds").record(took);
        }
        match written {
            Ok(()) => {
                if !usage.is_empty() {
                    let mut prefixes = self.shared.usage.lock();
                    for change in &usage {
                        prefixes.apply(change);
                    }
                }
                self.finish(outcomes, dones)
            }
            Err(e) => {
                tracing::error!(error = %e, "backend write failed; the store stops taking writes");
                self.shared.failed.store(true, Ordering::Release);
                for done in dones {
                    done(Some(Err(e.clone())));
                }
            }
        }
    }

    pub(super) fn apply_one(
        &mut self,
        req: WriteRequest,
        batch: &mut WriteBatch,
        overlay: &mut HashMap<Revision, KeyValue>,
        usage: &mut Vec<UsageChange>,
    ) -> Outcome {
        if let Some(refusal) = self.refused_by_alarm(req.unguarded()) {
            return Outcome::Ready(Err(refusal), None);
        }
        let mut req = req;
        while let WriteRequest::Guarded(guard, inner) = req {
            if !self.shared.records.read().holds(&guard) {
                return Outcome::Ready(Err(Error::GuardFailed), None);
            }
            req = *inner;
        }
        if let WriteRequest::Records(r) = req {
            if let Some(a) = Announcement::carried_by(&r) {
                return self.announce(a);
            }
            return self.apply_records(r, batch);
        }
        if let WriteRequest::Alarm(a) = req {
            return self.apply_alarm(a, batch);
        }
        if let WriteRequest::Compact(c) = req {
            return self.accept_compaction(c, batch);
        }
        let mut index = self.shared.index.write();
        let mut leases = self.shared.leases.lock();
        if let WriteRequest::LeaseGrant(g) = req {
            if leases.contains(g.id) {
                return Outcome::Ready(Err(Error::LeaseExists), None);
            }
            leases.grant(g.id, g.ttl);
            metrics::counter!("etcd_debugging_lease_granted_total").increment(1);
            metrics::histogram!("etcd_debugging_lease_ttl_total").record(g.ttl as f64);
            batch.put(
                Table::Meta,
                layout::lease_key(g.id),
                layout::lease_value(g.ttl),
            );
            let resp = LeaseGrantResponse {
                header_revision: self.applied_rev,
            };
            return Outcome::Ready(Ok(WriteResponse::LeaseGrant(resp)), None);
        }
        // Read once per request, so every event of a revision agrees.
        let with_prev_kvs = self.shared.prev_kv_interest.load(Ordering::Acquire) > 0;
        let mut writer = TxnWriter {
            index: &mut index,
            backend: self.shared.backend.as_ref(),
            overlay,
            batch,
            leases: &mut leases,
            base_rev: self.applied_rev,
            compact_rev: self.compact_target,
            changes: 0,
            events: Vec::new(),
            usage,
            with_prev_kvs,
        };
        let result = match req {
            WriteRequest::Put(p) => writer.apply_put(&p).map(WriteResponse::Put),
            WriteRequest::DeleteRange(d) => writer.delete_range(&d).map(WriteResponse::DeleteRange),
            WriteRequest::Txn(t) => {
                metrics::counter!("etcd_mvcc_txn_total").increment(1);
                writer.apply_txn(&t).map(WriteResponse::Txn)
            }
            WriteRequest::LeaseRevoke(r) => {
                let revoked = writer.revoke_lease(r.id);
                if revoked.is_ok() {
                    metrics::counter!("etcd_debugging_lease_revoked_total").increment(1);
                }
                revoked.map(WriteResponse::LeaseRevoke)
            }
            WriteRequest::Compact(_)
            | WriteRequest::LeaseGrant(_)
            | WriteRequest::Alarm(_)
            | WriteRequest::Records(_)
            | WriteRequest::Guarded(..) => {
                unreachable!("handled above")
            }
        };
        let events = std::mem::take(&mut writer.events);
        if events.is_empty() {
            return Outcome::Ready(result, None);
        }
        self.applied_rev += 1;
        let (puts, put_bytes) = events
            .iter()
            .filter(|e| e.kind == EventKind::Put)
            .fold((0u64, 0usize), |(n, bytes), e| {
                (n + 1, bytes + e.kv.key.len() + e.kv.value.len())
            });
        metrics::counter!("etcd_mvcc_put_total").increment(puts);
        metrics::gauge!("etcd_debugging_mvcc_total_put_size_in_bytes").increment(put_bytes as f64);
        metrics::counter!("etcd_mvcc_delete_total").increment(events.len() as u64 - puts);
        let committed = Arc::new(CommittedRevision {
            revision: self.applied_rev,
            events,
            with_prev_kvs,
        });
        Outcome::Ready(result, Some(committed))
    }

    /// etcd's capped and corrupt appliers: with NOSPACE raised, what can grow
    /// the store fails; with CORRUPT raised, everything but alarms does.
    pub(super) fn refused_by_alarm(&self, req: &WriteRequest) -> Option<Error> {
        if matches!(req, WriteRequest::Alarm(_)) {
            return None;
        }
        // etcd serves read-only txns outside its applier, and its corrupt
        // applier lets Authenticate by, so CORRUPT lets both by.
        let read_only = matches!(req, WriteRequest::Txn(t) if txn_is_read_only(t));
        let announcement =
            || matches!(req, WriteRequest::Records(r) if Announcement::carried_by(r).is_some());
        if self.shared.corrupt.load(Ordering::Acquire) && !read_only && !announcement() {
            return Some(Error::Corrupt);
        }
        let grows = match req {
            WriteRequest::Put(_) | WriteRequest::LeaseGrant(_) => true,
            WriteRequest::Txn(t) => txn_has_put(t),
            _ => false,
        };
        (grows && self.shared.nospace.load(Ordering::Acquire)).then_some(Error::NoSpace)
    }

    pub(super) fn apply_alarm(&mut self, req: AlarmRequest, batch: &mut WriteBatch) -> Outcome {
        let mut alarms = self.shared.alarms.lock();
        let listed = match (req.action, req.kind) {
            (AlarmAction::Get, kind) => alarms.list(kind),
            (AlarmAction::Activate, None) => Vec::new(),
            (AlarmAction::Activate, Some(kind)) => {
                let raised = Alarm {
                    member_id: req.member_id,
                    kind,
                };
                if alarms.insert(raised) {
                    tracing::warn!(member = req.member_id, alarm = kind.name(), "alarm raised");
                    batch.put(Table::Meta, layout::alarm_key(raised), Vec::new());
                }
                vec![raised]
            }
            (AlarmAction::Deactivate, kind) => {
                let cleared = alarms.matching(req.member_id, kind);
                for a in &cleared {
                    tracing::info!(member = a.member_id, alarm = a.kind.name(), "alarm cleared");
                    alarms.remove(a);
                    batch.delete(Table::Meta, layout::alarm_key(*a));
                }
                cleared
            }
        };
        self.shared
            .nospace
            .store(alarms.any(AlarmKind::NoSpace), Ordering::Release);
        self.shared
            .corrupt
            .store(alarms.any(AlarmKind::Corrupt), Ordering::Release);
        let resp = AlarmResponse {
            header_revision: self.applied_rev,
            alarms: listed,
        };
        Outcome::Ready(Ok(WriteResponse::Alarm(resp)), None)
    }

    /// Applies a records change if its guards hold. Readers see it before it
    /// is durable (unlike revisions): records are rare, and a backend write
    /// that fails stops the store, so nothing is served from a state that a
    /// restart would lose without the writer having been told it failed.
    /// Hands an announcement to its topic's listener; stores nothing.
    fn announce(&mut self, a: Announcement) -> Outcome {
        let listener = self.shared.listeners.read().get(&a.topic).cloned();
        if let Some(listener) = &listener {
            listener(&a.body);
        }
        let resp = RecordsResponse {
            header_revision: self.applied_rev,
            applied: listener.is_some(),
        };
        Outcome::Ready(Ok(WriteResponse::Records(resp)), None)
    }

    pub(super) fn apply_records(&mut self, req: RecordsRequest, batch: &mut WriteBatch) -> Outcome {
        let mut table = self.shared.records.write();
        let applied = req.guards.iter().all(|g| table.holds(g));
        if applied {
            for change in req.changes {
                match change {
                    RecordChange::Put { bucket, key, value } => {
                        batch.put(
                            Table::Meta,
                            layout::record_key(&bucket, &key),
                            value.to_vec(),
                        );
                        table.put(bucket, key, value);
                    }
                    RecordChange::Delete { bucket, key } => {
                        batch.delete(Table::Meta, layout::record_key(&bucket, &key));
                        table.delete(&bucket, &key);
                    }
                }
            }
            self.shared
                .records_generation
                .fetch_add(1, Ordering::AcqRel);
        }
        let resp = RecordsResponse {
            header_revision: self.applied_rev,
            applied,
        };
        Outcome::Ready(Ok(WriteResponse::Records(resp)), None)
    }

    pub(super) fn accept_compaction(
        &mut self,
        request: CompactRequest,
        batch: &mut WriteBatch,
    ) -> Outcome {
        if request.revision <= self.compact_target {
            return Outcome::Ready(Err(Error::Compacted), None);
        }
        if request.revision > self.applied_rev {
            return Outcome::Ready(Err(Error::FutureRevision), None);
        }
        self.compact_target = request.revision;
        batch.put(
            Table::Meta,
            META_SCHEDULED_COMPACT.to_vec(),
            encode_counter(request.revision),
        );
        Outcome::Compact {
            request,
            header_revision: self.applied_rev,
        }
    }

    /// The group is durable: make it visible, publish it, answer the callers.
    pub(super) fn finish(&mut self, outcomes: Vec<Outcome>, dones: Vec<JobDone>) {
        {
            let mut subs = self.shared.subscribers.lock();
            self.shared
                .committed_rev
                .store(self.applied_rev, Ordering::Release);
            for outcome in &outcomes {
                if let Outcome::Ready(_, Some(committed)) = outcome {
                    subs.retain(|s| s.offer(committed));
                }
            }
        }
        for (outcome, done) in outcomes.into_iter().zip(dones) {
            match outcome {
                Outcome::Ready(result, _) => done(Some(result)),
                Outcome::Nothing => done(None),
                Outcome::Compact {
                    request,
                    header_revision,
                } => {
                    self.start_compaction(request, header_revision, done);
                }
            }
        }
        self.shared.record_gauges();
    }

    pub(super) fn start_compaction(
        &mut self,
        request: CompactRequest,
        header_revision: i64,
        done: JobDone,
    ) {
        let at = request.revision;
        // From here no read below `at` passes (readers check the bar under
        // the index lock), so the compactor thread may compact the index a
        // step at a time while writes go on.
        self.shared.compact_rev.store(at, Ordering::Release);
        let resp = CompactResponse { header_revision };
        let done = if request.physical {
            Some((done, resp))
        } else {
            done(Some(Ok(WriteResponse::Compact(resp))));
            None
        };
        if let Err(crossbeam_channel::SendError(c)) = self.compactions.send(Compaction {
            generation: self.shared.generation.load(Ordering::Acquire),
            at,
            done,
        }) && let Some((done, _)) = c.done
        {
            done(Some(Err(Error::Closed)));
        }
    }
}

/// How long etcd lets one request's apply take before counting it slow
/// (`--warning-apply-duration`'s default).
const SLOW_APPLY: std::time::Duration = std::time::Duration::from_millis(100);

/// etcd's `etcd_server_apply_duration_seconds{version,op,success}` and
/// `etcd_server_slow_apply_total` for one request applied.
fn record_apply(op: &'static str, outcome: &Outcome, took: std::time::Duration) {
    let success = match outcome {
        Outcome::Ready(result, _) => result.is_ok(),
        Outcome::Nothing | Outcome::Compact { .. } => true,
    };
    let success = if success { "true" } else { "false" };
    metrics::histogram!("etcd_server_apply_duration_seconds",
        "op" => op, "success" => success, "version" => "v3")
    .record(took.as_secs_f64());
    if took > SLOW_APPLY {
        metrics::counter!("etcd_server_slow_apply_total").increment(1);
    }
}

/// Whether a txn holds a put in either branch, at any depth (etcd's quota
/// counts a txn's larger branch, so a put anywhere makes it cost space).
pub(super) fn txn_has_put(t: &TxnRequest) -> bool {
    t.success.iter().chain(&t.failure).any(|op| match op {
        RequestOp::Put(_) => true,
        RequestOp::Txn(inner) => txn_has_put(inner),
        _ => false,
    })
}

/// Whether a txn only reads, in both branches and at any depth.
pub(super) fn txn_is_read_only(t: &TxnRequest) -> bool {
    t.success.iter().chain(&t.failure).all(|op| match op {
        RequestOp::Range(_) => true,
        RequestOp::Txn(inner) => txn_is_read_only(inner),
        _ => false,
    })
}

/// Deletes every row of `table`, in batches.
pub(super) fn clear_table(backend: &dyn Backend, table: Table) -> Result<()> {
    loop {
        let mut batch = WriteBatch::default();
        backend.scan(table, &[], None, &mut |k, _| {
            batch.delete(table, k.to_vec());
            batch.len() < COMPACTION_BATCH
        })?;
        if batch.is_empty() {
            return Ok(());
        }
        backend.write(batch, false)?;
    }
}
