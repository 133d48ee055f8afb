//! The state machine is `hark-mvcc`'s store: committed entries go through the
//! one apply seam, `Store::apply_logged`, which records each entry's log id
//! (and the membership in force) in the same backend write as the revision it
//! produced.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use futures_util::TryStreamExt;
use hark_mvcc::{LoggedDone, Store, WriteRequest, WriteResponse};
use openraft::storage::{EntryResponder, RaftStateMachine};
use openraft::{EntryPayload, RaftSnapshotBuilder};
use openraft_legacy::network_v1::SnapshotReceiverFactory;
use parking_lot::Mutex;
use tokio::sync::oneshot;

use crate::durability::LogDurability;
use crate::log_store::PurgeFloor;
use crate::types::{
    Applied, Command, LogId, Membership, Snapshot, SnapshotMeta, StoredMembership, TypeConfig,
    decode, encode,
};

type IoResult<T> = Result<T, std::io::Error>;

fn io_err(e: impl std::fmt::Display) -> std::io::Error {
    std::io::Error::other(e.to_string())
}

/// A snapshot's meta as Hark records it beside the file (`current.meta`,
/// `installing.meta`): openraft 0.9's layout, whose third field names the
/// file. openraft 0.10 dropped the id from its own meta (a snapshot is
/// known by its last log id) but writes the same layout with an empty id,
/// so a record written before the upgrade still names its file.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct SnapshotRecord {
    last_log_id: Option<LogId>,
    last_membership: StoredMembership,
    file_id: String,
}

impl SnapshotRecord {
    /// The record of `meta`, its file named after its last log id (and the
    /// store revision it holds, when built here).
    fn new(meta: &SnapshotMeta, revision: Option<i64>) -> SnapshotRecord {
        let last = meta.last_log_id;
        let position = last.map_or("0-0".to_string(), |l| {
            format!("{}-{}", l.leader_id.term, l.index)
        });
        SnapshotRecord {
            last_log_id: last,
            last_membership: meta.last_membership.clone(),
            file_id: match revision {
                Some(rev) => format!("{position}-{rev}"),
                None => position,
            },
        }
    }

    fn meta(&self) -> SnapshotMeta {
        SnapshotMeta {
            last_log_id: self.last_log_id,
            last_membership: self.last_membership.clone(),
        }
    }
}

/// Writes this member proposed, waiting for their own apply: `seq` → answer.
#[derive(Default)]
pub(crate) struct Pending {
    waiting: Mutex<HashMap<u64, oneshot::Sender<OwnApply>>>,
    /// On the leader, followers' proposals (by origin and seq) whose apply
    /// goes back in the answer to their batch (see [`ProposeAnswer`]).
    ///
    /// [`ProposeAnswer`]: crate::types::ProposeAnswer
    forwarded: Mutex<HashMap<(u64, u64), oneshot::Sender<Applied>>>,
    /// Snapshots this member began to install: their entries are never
    /// applied here one by one, so a proposal among them gets no answer.
    snapshots_installed: AtomicU64,
}

/// What became of a member's own proposal at its apply.
#[derive(Debug)]
pub(crate) enum OwnApply {
    /// Applied, or refused by the store: the answer for its client.
    Done(hark_mvcc::Result<WriteResponse>),
    /// A [`Command::WriteInTerm`] that a leader of another term appended:
    /// refused on every member, nothing changed.
    OtherTerm,
}

impl Pending {
    /// Waits for `seq`'s apply; `None` when `limit` writes already wait.
    pub(crate) fn register(&self, seq: u64, limit: usize) -> Option<oneshot::Receiver<OwnApply>> {
        let mut waiting = self.waiting.lock();
        if waiting.len() >= limit {
            return None;
        }
        let (tx, rx) = oneshot::channel();
        waiting.insert(seq, tx);
        Some(rx)
    }

    pub(crate) fn forget(&self, seq: u64) {
        self.waiting.lock().remove(&seq);
    }

    fn answer(&self, seq: u64, result: OwnApply) {
        if let Some(tx) = self.waiting.lock().remove(&seq) {
            let _ = tx.send(result);
        }
    }

    /// Waits for the apply of follower `origin`'s proposal `seq`. Bounded
    /// by the leader's proposal queue: each waits only while its batch does.
    pub(crate) fn expect_forwarded(&self, origin: u64, seq: u64) -> oneshot::Receiver<Applied> {
        let (tx, rx) = oneshot::channel();
        self.forwarded.lock().insert((origin, seq), tx);
        rx
    }

    pub(crate) fn forget_forwarded(&self, origin: u64, seq: u64) {
        self.forwarded.lock().remove(&(origin, seq));
    }

    /// A [`Command::WriteInTerm`] refused at apply (another term's leader
    /// appended it). A follower's waits for its own apply, which says so:
    /// the leader's answer (`GuardFailed`) could be a store's refusal.
    fn refuse_other_term(&self, own: bool, origin: u64, seq: u64) {
        if own {
            self.answer(seq, OwnApply::OtherTerm);
        } else {
            self.forget_forwarded(origin, seq);
        }
    }

    /// How many snapshots this member began to install since it started.
    pub(crate) fn snapshots_installed(&self) -> u64 {
        self.snapshots_installed.load(Ordering::SeqCst)
    }

    /// The apply of a proposal this member made (`origin` is this member)
    /// or a follower's.
    fn answer_any(
        &self,
        own: bool,
        origin: u64,
        seq: u64,
        index: u64,
        result: hark_mvcc::Result<WriteResponse>,
    ) {
        if own {
            self.answer(seq, OwnApply::Done(result));
        } else if let Some(tx) = self.forwarded.lock().remove(&(origin, seq)) {
            let _ = tx.send((index, result));
        }
    }
}

/// openraft's view of the store.
pub struct StateMachine {
    /// Raised once a snapshot's meta is on disk: the log may be purged to it.
    purge_floor: PurgeFloor,
    store: Store,
    /// Where snapshots are built and received.
    snapshots: std::path::PathBuf,
    /// The file a snapshot is being received into.
    /// The snapshot file being received from the leader, and since when.
    receiving: Option<(std::path::PathBuf, std::time::Instant)>,
    snapshot_files: SnapshotFiles,
    /// The store as the network exports it for a follower (see
    /// [`SnapshotSource`]); emptied when this state machine is dropped.
    exported: Arc<Mutex<Option<Store>>>,
    member_id: u64,
    pending: Arc<Pending>,
    /// An entry is applied (and its write answered) only once it is on this
    /// member's disk: see [`crate::durability`].
    durability: LogDurability,
    /// The membership in force, encoded once (it is recorded with every entry).
    membership: StoredMembership,
    membership_bytes: Vec<u8>,
    /// Turns true once an applied membership leaves this member out.
    removed: Arc<tokio::sync::watch::Sender<bool>>,
}

impl Drop for StateMachine {
    fn drop(&mut self) {
        // A snapshot export started after this has no store to read.
        self.exported.lock().take();
    }
}

/// Whether `membership` names members, none of them this one.
fn leaves_out(membership: &Membership, member_id: u64) -> bool {
    membership.nodes().next().is_some() && membership.get_node(&member_id).is_none()
}

/// The file (in the snapshots directory) that says an applied membership
/// has named this member, and the log index of the first that did. A
/// member joining a cluster applies the log from its start, whose
/// memberships do not name it yet: only one that has been admitted can be
/// removed, and only by a membership after its admission. A member that
/// replays the log after a restart (its store's unsynced writes lost with
/// the power) applies again the memberships from before it was added,
/// which leave it out (the removal of the member it replaced among them):
/// those do not remove it.
const ADMITTED_FILE: &str = "admitted";

/// The log index this member was admitted at (see [`ADMITTED_FILE`]). A
/// file without one (written by an older build, or cut short) says
/// admitted at 0: any membership that leaves it out removes it.
fn admitted(snapshots: &std::path::Path) -> Option<u64> {
    let text = std::fs::read_to_string(snapshots.join(ADMITTED_FILE)).ok()?;
    Some(text.trim().parse().unwrap_or(0))
}

/// Whether a membership at log index `index` that leaves this member out
/// removes it: only one after its admission does.
fn admitted_before(index: u64, snapshots: &std::path::Path) -> bool {
    admitted(snapshots).is_some_and(|at| index > at)
}

/// Records that an applied membership (at log index `index`) named this
/// member, unless one did before; durable before it is relied on (a member
/// removed right after would otherwise serve on).
fn record_admission(snapshots: &std::path::Path, index: u64) -> Result<(), String> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let path = snapshots.join(ADMITTED_FILE);
    if path.exists() {
        return Ok(());
    }
    // Private, as every file of the data dir.
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .mode(0o600)
        .open(&path)
        .and_then(|mut f| {
            f.write_all(index.to_string().as_bytes())?;
            f.sync_all().map(|()| f)
        })
        .map_err(|e| {
            format!(
                "recording this member's admission in {}: {e}",
                path.display()
            )
        })?;
    drop(file);
    if let Ok(dir) = std::fs::File::open(snapshots) {
        let _ = dir.sync_all();
    }
    Ok(())
}

/// Held while the snapshot directory's files change or are opened: a build
/// and an install finishing together would each delete the other's file and
/// leave `current.meta` naming a missing one.
type SnapshotFiles = Arc<tokio::sync::Mutex<()>>;

/// What the store records with each applied entry.
pub(crate) fn encode_position(log_id: &LogId, membership_bytes: &[u8]) -> Vec<u8> {
    let mut out = encode(log_id);
    out.extend_from_slice(membership_bytes);
    out
}

pub(crate) fn decode_position(bytes: &[u8]) -> Result<(LogId, StoredMembership), postcard::Error> {
    let (log_id, rest) = postcard::take_from_bytes::<LogId>(bytes)?;
    Ok((log_id, decode(rest)?))
}

impl StateMachine {
    /// True once the state machine, and every snapshot build or install
    /// it started, has let go of the store: a build runs in a task of its
    /// own, which openraft does not wait for when it stops.
    /// What the network sends a follower that needs a snapshot.
    pub(crate) fn snapshot_source(&self) -> SnapshotSource {
        SnapshotSource {
            store: self.exported.clone(),
            files: Arc::downgrade(&self.snapshot_files),
            member_id: self.member_id,
            dir: self.snapshots.clone(),
        }
    }

    pub(crate) fn released_probe(&self) -> impl Fn() -> bool + Send + Sync + 'static {
        let files = Arc::downgrade(&self.snapshot_files);
        move || files.strong_count() == 0
    }

    pub(crate) fn new(
        store: Store,
        member_id: u64,
        pending: Arc<Pending>,
        snapshots: std::path::PathBuf,
        purge_floor: PurgeFloor,
        durability: LogDurability,
        removed: Arc<tokio::sync::watch::Sender<bool>>,
    ) -> Result<Self, String> {
        hark_mvcc::ensure_private_dir(&snapshots)
            .map_err(|e| format!("creating {}: {e}", snapshots.display()))?;
        remove_partial_files(&snapshots);
        if let Ok(bytes) = std::fs::read(snapshots.join(META_FILE)) {
            let meta: SnapshotRecord = decode(&bytes)
                .map_err(|e| format!("the current snapshot's meta is unreadable: {e}"))?;
            if let Some(last) = meta.last_log_id {
                purge_floor.raise(last);
            }
        }
        let membership = match store.log_position().map_err(|e| e.to_string())? {
            Some(p) => {
                decode_position(&p)
                    .map_err(|e| format!("the store's recorded log position is unreadable: {e}"))?
                    .1
            }
            None => StoredMembership::default(),
        };
        // Restarted after its removal was applied: it is still removed. (A
        // member still replaying the log from before it joined is not.)
        let at = membership.log_id().map_or(0, |l| l.index);
        if leaves_out(membership.membership(), member_id) {
            if admitted_before(at, &snapshots) {
                removed.send_replace(true);
            }
        } else if membership.membership().nodes().next().is_some() {
            record_admission(&snapshots, at)?;
        }
        Ok(StateMachine {
            exported: Arc::new(Mutex::new(Some(store.clone()))),
            store,
            snapshots,
            purge_floor,
            receiving: None,
            snapshot_files: SnapshotFiles::default(),
            member_id,
            pending,
            durability,
            membership_bytes: encode(&membership),
            membership,
            removed,
        })
    }
}

impl RaftStateMachine<TypeConfig> for StateMachine {
    type SnapshotData = tokio::fs::File;
    type SnapshotBuilder = SnapshotBuilder;

    async fn applied_state(&mut self) -> IoResult<(Option<LogId>, StoredMembership)> {
        let position = self.store.log_position().map_err(io_err)?;
        match position {
            None => Ok((None, StoredMembership::default())),
            Some(p) => {
                let (mut log_id, membership) = decode_position(&p).map_err(io_err)?;
                if hark_mvcc::chaos::mutation("reapply-after-restart") && log_id.index > 1 {
                    log_id.index -= 1;
                }
                Ok((Some(log_id), membership))
            }
        }
    }

    async fn apply<S>(&mut self, mut stream: S) -> IoResult<()>
    where
        S: futures_util::Stream<Item = IoResult<EntryResponder<TypeConfig>>> + Unpin + Send,
    {
        let mut entries = Vec::new();
        let mut responders = Vec::new();
        while let Some((entry, responder)) = stream.try_next().await? {
            entries.push(entry);
            responders.extend(responder);
        }
        if let Some(last) = entries.last()
            && !hark_mvcc::chaos::mutation("apply-before-leader-durable")
        {
            let waiting = std::time::Instant::now();
            self.durability
                .wait(last.log_id.index)
                .await
                .map_err(io_err)?;
            crate::stages::record("durable_wait", waiting);
        }
        let applying = std::time::Instant::now();
        let mut last_index = None;
        let failed: Arc<Mutex<Option<(LogId, hark_mvcc::Error)>>> = Arc::default();
        for entry in entries {
            let log_id = entry.log_id;
            last_index = Some(log_id.index);
            let mut parts: Vec<(Option<WriteRequest>, LoggedDone)> = Vec::new();
            match entry.payload {
                EntryPayload::Blank => {}
                EntryPayload::Membership(m) => {
                    log_member_changes(self.member_id, self.membership.membership(), &m);
                    if !leaves_out(&m, self.member_id) {
                        record_admission(&self.snapshots, log_id.index).map_err(io_err)?;
                    } else if admitted_before(log_id.index, &self.snapshots) {
                        self.removed.send_replace(true);
                    }
                    self.membership = StoredMembership::new(Some(log_id), m);
                    self.membership_bytes = encode(&self.membership);
                }
                EntryPayload::Normal(batch) => {
                    for p in batch.proposals {
                        let (own, origin, seq) = (p.origin == self.member_id, p.origin, p.seq);
                        let pending = self.pending.clone();
                        let req = match p.command {
                            Command::Write(req) => req,
                            Command::WriteInTerm { term, request } => {
                                if term == log_id.leader_id.term
                                    || hark_mvcc::chaos::mutation("revoke-in-any-term")
                                {
                                    request
                                } else {
                                    parts.push((
                                        None,
                                        Box::new(move |_| {
                                            pending.refuse_other_term(own, origin, seq);
                                        }),
                                    ));
                                    continue;
                                }
                            }
                        };
                        let failed = failed.clone();
                        parts.push((
                            Some(req),
                            Box::new(move |r| {
                                let r = r.unwrap_or(Err(hark_mvcc::Error::Closed));
                                // A backend failure stops this member (the store
                                // takes no more writes); refusals are ordinary outcomes.
                                if let Err(
                                    e @ (hark_mvcc::Error::Backend(_) | hark_mvcc::Error::Closed),
                                ) = &r
                                {
                                    failed.lock().get_or_insert((log_id, e.clone()));
                                }
                                pending.answer_any(own, origin, seq, log_id.index, r);
                            }),
                        ));
                    }
                }
            }
            let position = encode_position(&log_id, &self.membership_bytes);
            self.store.apply_logged(parts, position);
        }
        // Everything above is applied and visible to readers once the
        // barrier passes: openraft may then answer reads at this index.
        let (tx, rx) = oneshot::channel();
        self.store.barrier(move || {
            let _ = tx.send(());
        });
        if rx.await.is_err() {
            return Err(io_err(hark_mvcc::Error::Closed));
        }
        crate::stages::record("apply", applying);
        if let Some((log_id, e)) = failed.lock().take() {
            return Err(io_err(format!("applying entry {log_id}: {e}")));
        }
        if let Some(index) = last_index {
            metrics::gauge!("etcd_server_proposals_applied_total").set(index as f64);
        }
        for responder in responders {
            responder.send(());
        }
        Ok(())
    }

    async fn get_snapshot_builder(&mut self) -> Self::SnapshotBuilder {
        SnapshotBuilder {
            store: self.store.clone(),
            dir: self.snapshots.clone(),
            purge_floor: self.purge_floor.clone(),
            files: self.snapshot_files.clone(),
        }
    }

    /// Replaces the store's contents with the snapshot's: restored into a
    /// scratch store first (checksum checked), then copied in place, so the
    /// store, the watch engine and every client stream stay up.
    async fn install_snapshot(
        &mut self,
        meta: &SnapshotMeta,
        snapshot: tokio::fs::File,
    ) -> IoResult<()> {
        let fail = |e: &dyn std::fmt::Display| {
            io_err(format!("installing snapshot {:?}: {e}", meta.signature()))
        };
        // Counted before anything changes (and so before raft reports the
        // snapshot applied): a writer that sees it counted cannot tell
        // whether its entry is among the snapshot's.
        self.pending
            .snapshots_installed
            .fetch_add(1, Ordering::SeqCst);
        let syncing = std::time::Instant::now();
        snapshot.sync_all().await.map_err(|e| fail(&e))?;
        metrics::histogram!("etcd_snap_db_fsync_duration_seconds")
            .record(syncing.elapsed().as_secs_f64());
        drop(snapshot);
        let (received, since) = self
            .receiving
            .take()
            .ok_or_else(|| fail(&"no snapshot was being received"))?;
        metrics::histogram!("etcd_snap_db_save_total_duration_seconds")
            .record(since.elapsed().as_secs_f64());
        let last = meta
            .last_log_id
            .ok_or_else(|| fail(&"a snapshot without a last log id"))?;
        // Kept under its final name and marked as being installed before the
        // store is touched: the copy into the store is not atomic, so a
        // member killed during it finishes the install when it starts again.
        let marked = SnapshotRecord::new(meta, None);
        let kept = self.snapshots.join(snapshot_file(&marked.file_id));
        let (store, dir) = (self.store.clone(), self.snapshots.clone());
        let files = self.snapshot_files.clone();
        metrics::gauge!("etcd_server_snapshot_apply_in_progress_total").set(1.0);
        let installed = tokio::task::spawn_blocking(move || -> Result<(), String> {
            let _files = files.blocking_lock();
            // A damaged file is refused here, before it is marked.
            let source = restore_to_scratch(&received, &dir)?;
            std::fs::rename(&received, &kept).map_err(|e| e.to_string())?;
            write_meta_as(&dir, INSTALLING_FILE, &marked).map_err(|e| e.to_string())?;
            copy_into_store(&store, source, &dir, &marked)
        })
        .await;
        metrics::gauge!("etcd_server_snapshot_apply_in_progress_total").set(0.0);
        installed.map_err(|e| fail(&e))?.map_err(|e| fail(&e))?;
        self.purge_floor.raise(last);
        self.membership = meta.last_membership.clone();
        self.membership_bytes = encode(&self.membership);
        // A snapshot sent to this member names it (it is sent only to
        // members): admitted, as by an applied membership.
        if !leaves_out(self.membership.membership(), self.member_id)
            && self.membership.membership().nodes().next().is_some()
        {
            let at = self.membership.log_id().map_or(0, |l| l.index);
            record_admission(&self.snapshots, at).map_err(io_err)?;
        }
        tracing::info!(snapshot = ?meta.signature(), "installed a snapshot from the leader");
        if let Some(last) = meta.last_log_id {
            metrics::gauge!("etcd_server_proposals_applied_total").set(last.index as f64);
        }
        Ok(())
    }

    async fn get_current_snapshot(&mut self) -> IoResult<Option<Snapshot>> {
        let _files = self.snapshot_files.lock().await;
        current_snapshot(&self.snapshots).await
    }
}

/// openraft 0.9's chunked snapshot transfer (through `openraft-legacy`),
/// which peers of the 0.9 build still speak: chunks are written to a file.
impl SnapshotReceiverFactory<TypeConfig> for StateMachine {
    type SnapshotReceiver = tokio::fs::File;

    async fn begin_receiving_snapshot(&mut self) -> IoResult<tokio::fs::File> {
        let path = self.snapshots.join("incoming.part");
        // Private, as every file of the data dir (etcd's snapshots are 0600).
        let file = tokio::fs::OpenOptions::new()
            .create(true)
            .truncate(true)
            .read(true)
            .write(true)
            .mode(0o600)
            .open(&path)
            .await?;
        self.receiving = Some((path, std::time::Instant::now()));
        Ok(file)
    }
}

fn snapshot_file(id: &str) -> String {
    format!("{id}.snap")
}

/// The meta of the snapshot the log may be purged to.
const META_FILE: &str = "current.meta";
/// The meta of a snapshot received from the leader whose copy into the store
/// has not finished; present only between the two.
const INSTALLING_FILE: &str = "installing.meta";

/// Records which snapshot is current (its meta), atomically.
fn write_meta(dir: &std::path::Path, meta: &SnapshotRecord) -> std::io::Result<()> {
    write_meta_as(dir, META_FILE, meta)
}

fn write_meta_as(dir: &std::path::Path, name: &str, meta: &SnapshotRecord) -> std::io::Result<()> {
    let tmp = dir.join(format!("{name}.tmp"));
    std::fs::write(&tmp, encode(meta))?;
    std::fs::File::open(&tmp)?.sync_all()?;
    std::fs::rename(&tmp, dir.join(name))?;
    // The rename itself is durable once the directory is.
    std::fs::File::open(dir)?.sync_all()
}

/// Restores a snapshot file into a scratch store (its checksum checked), to
/// be copied from: the store itself, the watch engine and every client
/// stream stay up meanwhile.
fn restore_to_scratch(file: &std::path::Path, dir: &std::path::Path) -> Result<Store, String> {
    let scratch = dir.join("installing");
    let _ = std::fs::remove_dir_all(&scratch);
    hark_snapshot::restore(file, &scratch, &Default::default()).map_err(|e| e.to_string())?;
    Store::open(
        &scratch,
        hark_mvcc::StoreOptions {
            sync: false,
            ..Default::default()
        },
    )
    .map_err(|e| e.to_string())
}

/// Replaces the store's contents with `source`'s, then makes `meta` (marked
/// as installing) the current snapshot. Each step can be redone, so a member
/// killed anywhere in here redoes it all when it starts again.
fn copy_into_store(
    store: &Store,
    source: Store,
    dir: &std::path::Path,
    meta: &SnapshotRecord,
) -> Result<(), String> {
    let last = meta.last_log_id.ok_or("a snapshot without a last log id")?;
    let position = encode_position(&last, &encode(&meta.last_membership));
    let (tx, rx) = std::sync::mpsc::channel();
    store.install(source, position, move |r| {
        let _ = tx.send(r);
    });
    let result = rx
        .recv()
        .unwrap_or(Err(hark_mvcc::Error::Closed))
        .map_err(|e| e.to_string());
    let _ = std::fs::remove_dir_all(dir.join("installing"));
    result?;
    write_meta(dir, meta).map_err(|e| e.to_string())?;
    std::fs::remove_file(dir.join(INSTALLING_FILE)).map_err(|e| e.to_string())?;
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| e.to_string())?;
    remove_older(dir, &meta.file_id);
    Ok(())
}

/// The meta of the current snapshot, if there is one.
fn read_meta(dir: &std::path::Path) -> Result<Option<SnapshotRecord>, String> {
    match std::fs::read(dir.join(META_FILE)) {
        Ok(bytes) => decode(&bytes)
            .map(Some)
            .map_err(|e| format!("the current snapshot's meta is unreadable: {e}")),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e.to_string()),
    }
}

/// Finishes a snapshot install a kill interrupted (see `install_snapshot`);
/// to be called before the store's log position is read.
pub(crate) fn finish_interrupted_install(
    store: &Store,
    dir: &std::path::Path,
) -> Result<(), String> {
    let Ok(bytes) = std::fs::read(dir.join(INSTALLING_FILE)) else {
        return Ok(());
    };
    let meta: SnapshotRecord = decode(&bytes)
        .map_err(|e| format!("the meta of the snapshot being installed is unreadable: {e}"))?;
    tracing::warn!(snapshot = %meta.file_id, "finishing a snapshot install cut short");
    restore_to_scratch(&dir.join(snapshot_file(&meta.file_id)), dir)
        .and_then(|source| copy_into_store(store, source, dir, &meta))
        .map_err(|e| format!("finishing the install of snapshot {}: {e}", meta.file_id))
}

/// Deletes every snapshot file but `keep`'s.
fn remove_older(dir: &std::path::Path, keep: &str) {
    let keep = snapshot_file(keep);
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            if name.ends_with(".snap") && name != keep {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}

/// The current snapshot: its file when this member has one (one it
/// received from the leader), otherwise [`BUILT`], which the network
/// replaces with an export of the store when it sends it.
async fn current_snapshot(dir: &std::path::Path) -> std::io::Result<Option<Snapshot>> {
    let Ok(bytes) = tokio::fs::read(dir.join(META_FILE)).await else {
        return Ok(None);
    };
    let record: SnapshotRecord = decode(&bytes).map_err(std::io::Error::other)?;
    Ok(Some(Snapshot {
        meta: record.meta(),
        snapshot: snapshot_data(dir, &record).await?,
    }))
}

/// `record`'s file, or [`BUILT`] when it has none (a snapshot built here).
async fn snapshot_data(
    dir: &std::path::Path,
    record: &SnapshotRecord,
) -> std::io::Result<tokio::fs::File> {
    match tokio::fs::File::open(dir.join(snapshot_file(&record.file_id))).await {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => tokio::fs::File::open(BUILT).await,
        opened => opened,
    }
}

/// The data of a snapshot built here: no file, as the store itself holds
/// it. Stands for "export the store" until the network sends it (an etcd
/// snapshot file is never empty).
const BUILT: &str = "/dev/null";

/// Removes what an export or build killed midway left: `*.part` files.
fn remove_partial_files(dir: &std::path::Path) {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            if e.file_name().to_string_lossy().ends_with(".part") {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}

/// What a follower too far behind the log is sent: the store as it is when
/// it is sent, exported as an etcd snapshot file.
///
/// A snapshot built here records only how far the log may be purged (the
/// store is synced to at least there first); it copies nothing, so a
/// snapshot every `--snapshot-count` entries costs a sync, not a copy of
/// the store, which at tens of GiB would take minutes and twice the
/// store's size of disk each time. etcd does the same: its raft snapshot
/// holds no data, and a follower is sent the database file as it is then.
/// The export is at or past the built snapshot's position and says so in
/// its meta; the follower installs it at that position, and the entries
/// between the two that the leader then sends are ones it already has
/// committed (openraft skips them).
#[derive(Clone)]
pub(crate) struct SnapshotSource {
    store: Arc<Mutex<Option<Store>>>,
    /// The state machine's file lock: held (strongly) while exporting, so
    /// the state machine's release waits for an export too.
    files: std::sync::Weak<tokio::sync::Mutex<()>>,
    member_id: u64,
    dir: std::path::PathBuf,
}

impl SnapshotSource {
    /// `snapshot` as it is when it holds a file; a built one (see
    /// [`BUILT`]) as an export of the store now.
    pub(crate) async fn to_send(&self, snapshot: Snapshot) -> IoResult<Snapshot> {
        if snapshot.snapshot.metadata().await?.len() > 0 {
            return Ok(snapshot);
        }
        let files = self
            .files
            .upgrade()
            .ok_or_else(|| io_err("the state machine has stopped"))?;
        let store = self
            .store
            .lock()
            .clone()
            .ok_or_else(|| io_err("the state machine has stopped"))?;
        let (dir, member_id) = (self.dir.clone(), self.member_id);
        let (meta, file) = tokio::task::spawn_blocking(move || {
            let _held = files;
            export(&store, member_id, &dir)
        })
        .await
        .map_err(io_err)?
        .map_err(|e| io_err(format!("exporting the store for a follower: {e}")))?;
        Ok(Snapshot {
            meta,
            snapshot: tokio::fs::File::from_std(file),
        })
    }
}

/// Numbers concurrent exports' files apart.
static EXPORTS: AtomicU64 = AtomicU64::new(0);

/// The store exported as an etcd snapshot file (consistent: writes go on
/// meanwhile), with the meta of the position it holds. The file is
/// unlinked once open: it lives as long as the send that reads it.
fn export(
    store: &Store,
    member_id: u64,
    dir: &std::path::Path,
) -> Result<(SnapshotMeta, std::fs::File), String> {
    let saving = std::time::Instant::now();
    let path = dir.join(format!(
        "sending-{}-{}.part",
        std::process::id(),
        EXPORTS.fetch_add(1, Ordering::Relaxed)
    ));
    let member = hark_snapshot::Member {
        id: member_id,
        name: String::new(),
        peer_urls: Vec::new(),
        client_urls: Vec::new(),
    };
    let written = hark_snapshot::save(store, &member, &path);
    let opened = std::fs::File::open(&path);
    let _ = std::fs::remove_file(&path);
    let written = written.map_err(|e| e.to_string())?;
    let file = opened.map_err(|e| e.to_string())?;
    metrics::histogram!("etcd_debugging_snap_save_marshalling_duration_seconds")
        .record(saving.elapsed().as_secs_f64());
    let position = written
        .log_position
        .ok_or("the store has applied no log entry yet")?;
    let (last, membership) = decode_position(&position).map_err(|e| e.to_string())?;
    tracing::info!(
        index = last.index,
        revision = written.revision,
        took = ?saving.elapsed(),
        "exported the store as a snapshot for a follower"
    );
    Ok((
        SnapshotMeta {
            last_log_id: Some(last),
            last_membership: membership,
        },
        file,
    ))
}

/// Builds a snapshot: the position the store has applied, recorded once
/// the store is synced to it, so the log may be purged to there. No data is
/// copied (see [`SnapshotSource`]).
pub struct SnapshotBuilder {
    store: Store,
    dir: std::path::PathBuf,
    purge_floor: PurgeFloor,
    files: SnapshotFiles,
}

impl RaftSnapshotBuilder<TypeConfig> for SnapshotBuilder {
    type SnapshotData = tokio::fs::File;

    async fn build_snapshot(&mut self) -> IoResult<Snapshot> {
        let fail = |e: &dyn std::fmt::Display| io_err(format!("building a snapshot: {e}"));
        let (store, dir) = (self.store.clone(), self.dir.clone());
        let (purge_floor, files) = (self.purge_floor.clone(), self.files.clone());
        let meta = tokio::task::spawn_blocking(move || -> Result<_, String> {
            let started = std::time::Instant::now();
            // Read before the sync: everything up to it is then on disk
            // (the store may apply more meanwhile; they are not claimed).
            let revision = store.current_revision();
            let position = store
                .log_position()
                .map_err(|e| e.to_string())?
                .ok_or("the store has applied no log entry yet")?;
            store.sync_to_disk().map_err(|e| e.to_string())?;
            metrics::histogram!("etcd_snap_fsync_duration_seconds")
                .record(started.elapsed().as_secs_f64());
            let (last, membership) = decode_position(&position).map_err(|e| e.to_string())?;
            let meta = SnapshotRecord::new(
                &SnapshotMeta {
                    last_log_id: Some(last),
                    last_membership: membership,
                },
                Some(revision),
            );
            let _files = files.blocking_lock();
            // A snapshot installed while this one was built is newer (or the
            // same): it stays current, and this one is dropped.
            if let Some(current) = read_meta(&dir)?
                && current.last_log_id >= meta.last_log_id
            {
                return Ok(current);
            }
            write_meta(&dir, &meta).map_err(|e| e.to_string())?;
            purge_floor.raise(last);
            remove_older(&dir, &meta.file_id);
            tracing::info!(snapshot = %meta.file_id, revision, "built a snapshot");
            // etcd's line for the same moment.
            tracing::info!("snapshot-index" = last.index, "saved snapshot to disk");
            metrics::histogram!("etcd_debugging_snap_save_total_duration_seconds")
                .record(started.elapsed().as_secs_f64());
            Ok(meta)
        })
        .await
        .map_err(|e| fail(&e))?
        .map_err(|e| fail(&e))?;
        let _files = self.files.lock().await;
        Ok(Snapshot {
            meta: meta.meta(),
            snapshot: snapshot_data(&self.dir, &meta).await?,
        })
    }
}

/// etcd's `added member` / `removed member` lines, with etcd's keys, for
/// the members a membership entry adds or removes.
fn log_member_changes(local: u64, before: &Membership, after: &Membership) {
    let voters_after: std::collections::BTreeSet<u64> = after.voter_ids().collect();
    let voters_before: std::collections::BTreeSet<u64> = before.voter_ids().collect();
    for (id, info) in after.nodes() {
        if before.get_node(id).is_none() {
            tracing::info!(
                "local-member-id" = %format!("{local:x}"),
                "added-peer-id" = %format!("{id:x}"),
                "added-peer-peer-urls" = ?info.peer_urls,
                "added-peer-is-learner" = !voters_after.contains(id),
                "added member"
            );
        }
    }
    for (id, info) in before.nodes() {
        if after.get_node(id).is_none() {
            tracing::info!(
                "local-member-id" = %format!("{local:x}"),
                "removed-remote-peer-id" = %format!("{id:x}"),
                "removed-remote-peer-urls" = ?info.peer_urls,
                "removed-remote-peer-is-learner" = !voters_before.contains(id),
                "removed member"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{Batch, Entry, Proposal};
    use hark_mvcc::{LeaseGrantRequest, LeaseRevokeRequest};

    fn entry(term: u64, index: u64, seq: u64, command: Command) -> Entry {
        Entry {
            log_id: crate::types::log_id(term, 1, index),
            payload: EntryPayload::Normal(Batch {
                proposals: vec![Proposal {
                    origin: 1,
                    seq,
                    command,
                }],
            }),
        }
    }

    /// A deposed leader's revoke of a lease it found expired, appended by the
    /// next leader, deletes nothing (etcd issues #12528, #15247); appended by
    /// the leader that decided it, it revokes.
    #[tokio::test]
    async fn a_revoke_decided_in_another_term_is_refused_at_apply() {
        let store = Store::in_memory();
        store
            .apply_blocking(WriteRequest::LeaseGrant(LeaseGrantRequest {
                id: 7,
                ttl: 10,
            }))
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let pending = Arc::new(Pending::default());
        let mut machine = StateMachine::new(
            store.clone(),
            1,
            pending.clone(),
            dir.path().join("snapshots"),
            PurgeFloor::default(),
            LogDurability::all_durable(),
            Arc::new(tokio::sync::watch::channel(false).0),
        )
        .unwrap();
        let revoke = || Command::WriteInTerm {
            term: 2,
            request: WriteRequest::LeaseRevoke(LeaseRevokeRequest { id: 7 }),
        };
        let answer = pending.register(1, 10).unwrap();
        machine
            .apply(stream_of(vec![entry(3, 5, 1, revoke())]))
            .await
            .unwrap();
        let refused = answer.await.unwrap();
        assert!(matches!(refused, OwnApply::OtherTerm), "{refused:?}");
        assert_eq!(store.lease_ttl(7), Some(10), "the lease stays");
        let answer = pending.register(2, 10).unwrap();
        machine
            .apply(stream_of(vec![entry(2, 6, 2, revoke())]))
            .await
            .unwrap();
        let revoked = answer.await.unwrap();
        assert!(
            matches!(revoked, OwnApply::Done(Ok(WriteResponse::LeaseRevoke(_)))),
            "{revoked:?}"
        );
        assert_eq!(store.lease_ttl(7), None);
    }

    /// `entries` as openraft hands them to the state machine: a stream,
    /// with no client waiting on any.
    fn stream_of(
        entries: Vec<Entry>,
    ) -> impl futures_util::Stream<Item = IoResult<EntryResponder<TypeConfig>>> + Unpin + Send {
        futures_util::stream::iter(entries.into_iter().map(|e| Ok((e, None))))
    }

    /// A membership of voters `ids`.
    fn membership(ids: &[u64]) -> Membership {
        let nodes: std::collections::BTreeMap<u64, crate::types::MemberInfo> = ids
            .iter()
            .map(|&id| (id, crate::types::MemberInfo::default()))
            .collect();
        let voters: std::collections::BTreeSet<u64> = ids.iter().copied().collect();
        Membership::new(vec![voters], nodes).unwrap()
    }

    /// `m` as the log entry at `index`.
    fn membership_at(index: u64, m: Membership) -> Entry {
        Entry {
            log_id: crate::types::log_id(1, 1, index),
            payload: EntryPayload::Membership(m),
        }
    }

    /// Member `id`'s state machine over `store`, its snapshots under `dir`,
    /// and the watch that says whether it was removed.
    fn open_as(
        id: u64,
        store: Store,
        dir: &std::path::Path,
    ) -> (StateMachine, tokio::sync::watch::Receiver<bool>) {
        let (removed, watch) = tokio::sync::watch::channel(false);
        let machine = StateMachine::new(
            store,
            id,
            Arc::new(Pending::default()),
            dir.join("snapshots"),
            PurgeFloor::default(),
            LogDurability::all_durable(),
            Arc::new(removed),
        )
        .unwrap();
        (machine, watch)
    }

    /// A membership that leaves this member out, once applied, says it was
    /// removed; one that keeps it does not; and a state machine opened on
    /// a store whose recorded membership leaves it out says so at once.
    #[tokio::test]
    async fn applying_its_own_removal_tells_the_member() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::in_memory();
        let open = |store: Store| open_as(1, store, dir.path());
        let (mut machine, watch) = open(store.clone());
        assert!(!*watch.borrow(), "no membership yet: a member being added");
        machine
            .apply(stream_of(vec![membership_at(1, membership(&[1, 2, 3]))]))
            .await
            .unwrap();
        machine
            .apply(stream_of(vec![membership_at(2, membership(&[1, 3]))]))
            .await
            .unwrap();
        assert!(!*watch.borrow(), "another member removed");
        machine
            .apply(stream_of(vec![membership_at(3, membership(&[2, 3]))]))
            .await
            .unwrap();
        assert!(*watch.borrow(), "this member removed");
        drop(machine);
        let (_again, watch) = open(store);
        assert!(*watch.borrow(), "still removed after a restart");
    }

    /// A member that replaced another and replays the log after a power
    /// loss (its store's writes since the last sync gone) applies the
    /// removal of the member it replaced again, after its own admission was
    /// recorded: that removal came before the admission and does not remove
    /// it; a membership after the admission does. Found by the fault suite
    /// (seed 5820): the replaced member stopped, "permanently removed".
    #[tokio::test]
    async fn replaying_memberships_from_before_its_admission_does_not_remove_a_member() {
        let dir = tempfile::tempdir().unwrap();
        let open = |store: Store| open_as(9, store, dir.path());
        let (mut machine, watch) = open(Store::in_memory());
        for (index, members) in [(1, &[1, 2, 3][..]), (2, &[1, 2]), (3, &[1, 2, 9])] {
            machine
                .apply(stream_of(vec![membership_at(index, membership(members))]))
                .await
                .unwrap();
        }
        assert!(!*watch.borrow(), "admitted at 3");
        drop(machine);
        // The store lost what it applied; the admission (synced) stayed.
        let (mut machine, watch) = open(Store::in_memory());
        machine
            .apply(stream_of(vec![membership_at(2, membership(&[1, 2]))]))
            .await
            .unwrap();
        assert!(!*watch.borrow(), "a removal from before its admission");
        machine
            .apply(stream_of(vec![membership_at(3, membership(&[1, 2, 9]))]))
            .await
            .unwrap();
        machine
            .apply(stream_of(vec![membership_at(4, membership(&[1, 2]))]))
            .await
            .unwrap();
        assert!(*watch.borrow(), "removed after its admission");
    }

    /// A member joining a cluster applies the log from its start, whose
    /// memberships do not name it yet: that is not a removal, neither as
    /// it applies them nor when it restarts among them.
    #[tokio::test]
    async fn a_joining_member_replaying_the_log_before_its_addition_is_not_removed() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::in_memory();
        let open = |store: Store| open_as(9, store, dir.path());
        let (mut machine, watch) = open(store.clone());
        machine
            .apply(stream_of(vec![membership_at(1, membership(&[1]))]))
            .await
            .unwrap();
        machine
            .apply(stream_of(vec![membership_at(2, membership(&[1, 2]))]))
            .await
            .unwrap();
        assert!(!*watch.borrow(), "removed before it was ever added");
        drop(machine);
        let (mut machine, watch) = open(store.clone());
        assert!(!*watch.borrow(), "removed at a restart before it was added");
        machine
            .apply(stream_of(vec![membership_at(3, membership(&[1, 2, 9]))]))
            .await
            .unwrap();
        machine
            .apply(stream_of(vec![membership_at(4, membership(&[1, 2]))]))
            .await
            .unwrap();
        assert!(*watch.borrow(), "removed once it had been added");
    }

    /// A store behind a state machine in `dir`, fed `entries` puts of
    /// `value_bytes` each at log indexes `first..`.
    async fn machine_with(
        dir: &std::path::Path,
        first: u64,
        entries: u64,
        value_bytes: usize,
    ) -> StateMachine {
        let mut machine = StateMachine::new(
            Store::in_memory(),
            1,
            Arc::new(Pending::default()),
            dir.join("snapshots"),
            PurgeFloor::default(),
            LogDurability::all_durable(),
            Arc::new(tokio::sync::watch::channel(false).0),
        )
        .unwrap();
        for i in 0..entries {
            let put = hark_mvcc::PutRequest::new(format!("k{i}"), vec![b'v'; value_bytes]);
            machine
                .apply(stream_of(vec![entry(
                    1,
                    first + i,
                    i,
                    Command::Write(WriteRequest::Put(put)),
                )]))
                .await
                .unwrap();
        }
        machine
    }

    async fn build(machine: &mut StateMachine) -> Snapshot {
        machine
            .get_snapshot_builder()
            .await
            .build_snapshot()
            .await
            .unwrap()
    }

    /// A follower building its own (slow, older) snapshot while it installs
    /// a newer one from the leader: both succeed, and the current snapshot
    /// is the installed one, its file present. (Before, the build finished
    /// last: it made its older snapshot current and deleted the installed
    /// one's file.)
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_build_during_an_install_leaves_the_installed_snapshot_current() {
        let leader_dir = tempfile::tempdir().unwrap();
        let mut leader = machine_with(leader_dir.path(), 1000, 1, 10).await;
        let built = build(&mut leader).await;
        let mut sent = leader.snapshot_source().to_send(built).await.unwrap();

        let dir = tempfile::tempdir().unwrap();
        let mut follower = machine_with(dir.path(), 1, 40, 100_000).await;
        let mut receiving = follower.begin_receiving_snapshot().await.unwrap();
        tokio::io::copy(&mut sent.snapshot, &mut receiving)
            .await
            .unwrap();
        let mut builder = follower.get_snapshot_builder().await;
        let (built, installed) = tokio::join!(
            builder.build_snapshot(),
            follower.install_snapshot(&sent.meta, receiving)
        );
        built.unwrap();
        installed.unwrap();
        let current = follower.get_current_snapshot().await.unwrap().unwrap();
        assert_eq!(current.meta, sent.meta, "the installed snapshot is current");
        let snaps: Vec<String> = std::fs::read_dir(dir.path().join("snapshots"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".snap"))
            .collect();
        let installed_file = snapshot_file(&SnapshotRecord::new(&sent.meta, None).file_id);
        assert_eq!(snaps, [installed_file]);
    }

    /// A built snapshot copies nothing: it records the applied position
    /// (the log may be purged to it) and leaves no file. Sent, it is the
    /// store exported then: at or past that position, and what a follower
    /// installs from it reads as the leader does.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_built_snapshot_copies_nothing_and_is_sent_as_the_store_then() {
        let leader_dir = tempfile::tempdir().unwrap();
        let mut leader = machine_with(leader_dir.path(), 1000, 1, 10).await;
        let built = build(&mut leader).await;
        let files: Vec<String> = std::fs::read_dir(leader_dir.path().join("snapshots"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".snap") || n.ends_with(".part"))
            .collect();
        assert!(files.is_empty(), "no copy of the store: {files:?}");
        assert_eq!(built.snapshot.metadata().await.unwrap().len(), 0);
        let current = leader.get_current_snapshot().await.unwrap().unwrap();
        assert_eq!(current.meta, built.meta, "the built snapshot is current");
        let applied = leader.applied_state().await.unwrap().0;
        assert_eq!(built.meta.last_log_id, applied);

        // Applied after the build: the export holds it, and says so.
        let put = hark_mvcc::PutRequest::new("after-the-build", "v");
        leader
            .apply(stream_of(vec![entry(
                1,
                1001,
                1,
                Command::Write(WriteRequest::Put(put)),
            )]))
            .await
            .unwrap();
        let mut sent = leader.snapshot_source().to_send(current).await.unwrap();
        assert_eq!(sent.meta.last_log_id.map(|l| l.index), Some(1001));
        assert!(sent.meta.last_log_id > built.meta.last_log_id);
        assert!(sent.snapshot.metadata().await.unwrap().len() > 0);
        let dir = tempfile::tempdir().unwrap();
        let mut follower = machine_with(dir.path(), 1, 40, 100_000).await;
        let mut receiving = follower.begin_receiving_snapshot().await.unwrap();
        tokio::io::copy(&mut sent.snapshot, &mut receiving)
            .await
            .unwrap();
        follower
            .install_snapshot(&sent.meta, receiving)
            .await
            .unwrap();
        assert_eq!(
            follower.applied_state().await.unwrap().0,
            sent.meta.last_log_id
        );
        let all = |m: &StateMachine| {
            m.store
                .range(&hark_mvcc::RangeRequest {
                    key: bytes::Bytes::from_static(b"\0"),
                    range_end: bytes::Bytes::from_static(b"\0"),
                    ..Default::default()
                })
                .unwrap()
        };
        let (theirs, ours) = (all(&follower), all(&leader));
        assert_eq!(ours.kvs.len(), 2);
        assert_eq!(theirs.kvs, ours.kvs);
        assert_eq!(
            follower.store.current_revision(),
            leader.store.current_revision()
        );
        // Nothing is left behind on the leader: the export was unlinked.
        let left = std::fs::read_dir(leader_dir.path().join("snapshots"))
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .ends_with(".part")
            })
            .count();
        assert_eq!(left, 0);
    }

    #[test]
    fn writes_past_the_limit_are_refused_until_one_is_answered_or_forgotten() {
        let pending = Pending::default();
        let waiting: Vec<_> = (0..3).map(|seq| pending.register(seq, 3)).collect();
        assert!(waiting.iter().all(Option::is_some));
        assert!(
            pending.register(3, 3).is_none(),
            "a fourth write is refused"
        );
        pending.answer(0, OwnApply::Done(Err(hark_mvcc::Error::Closed)));
        assert!(
            pending.register(4, 3).is_some(),
            "an answered write frees its place"
        );
        pending.forget(1);
        assert!(pending.register(5, 3).is_some(), "so does a forgotten one");
        assert!(pending.register(6, 3).is_none());
    }
}
