//! The state machine is `hark-mvcc`'s store: committed entries go through the
//! one apply seam, `Store::apply_logged`, which records each entry's log id
//! (and the membership in force) in the same backend write as the revision it
//! produced.

use std::collections::HashMap;
use std::sync::Arc;

use hark_mvcc::{LoggedDone, Store, WriteRequest, WriteResponse};
use openraft::storage::{RaftStateMachine, Snapshot};
use openraft::{EntryPayload, RaftSnapshotBuilder, StorageIOError};
use parking_lot::Mutex;
use tokio::sync::oneshot;

use crate::types::{
    Command, LogId, SnapshotMeta, StorageError, StoredMembership, TypeConfig, decode, encode,
};

/// Writes this member proposed, waiting for their own apply: `seq` → answer.
#[derive(Default)]
pub(crate) struct Pending {
    waiting: Mutex<HashMap<u64, oneshot::Sender<hark_mvcc::Result<WriteResponse>>>>,
}

impl Pending {
    pub(crate) fn register(&self, seq: u64) -> oneshot::Receiver<hark_mvcc::Result<WriteResponse>> {
        let (tx, rx) = oneshot::channel();
        self.waiting.lock().insert(seq, tx);
        rx
    }

    pub(crate) fn forget(&self, seq: u64) {
        self.waiting.lock().remove(&seq);
    }

    fn answer(&self, seq: u64, result: hark_mvcc::Result<WriteResponse>) {
        if let Some(tx) = self.waiting.lock().remove(&seq) {
            let _ = tx.send(result);
        }
    }
}

/// openraft's view of the store.
pub struct StateMachine {
    store: Store,
    member_id: u64,
    pending: Arc<Pending>,
    /// The membership in force, encoded once (it is recorded with every entry).
    membership: StoredMembership,
    membership_bytes: Vec<u8>,
}

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
    pub(crate) fn new(store: Store, member_id: u64, pending: Arc<Pending>) -> Result<Self, String> {
        let membership = match store.log_position().map_err(|e| e.to_string())? {
            Some(p) => {
                decode_position(&p)
                    .map_err(|e| format!("the store's recorded log position is unreadable: {e}"))?
                    .1
            }
            None => StoredMembership::default(),
        };
        Ok(StateMachine {
            store,
            member_id,
            pending,
            membership_bytes: encode(&membership),
            membership,
        })
    }
}

impl RaftStateMachine<TypeConfig> for StateMachine {
    type SnapshotBuilder = SnapshotBuilder;

    async fn applied_state(&mut self) -> Result<(Option<LogId>, StoredMembership), StorageError> {
        let position = self
            .store
            .log_position()
            .map_err(|e| StorageIOError::read_state_machine(&e))?;
        match position {
            None => Ok((None, StoredMembership::default())),
            Some(p) => {
                let (log_id, membership) =
                    decode_position(&p).map_err(|e| StorageIOError::read_state_machine(&e))?;
                Ok((Some(log_id), membership))
            }
        }
    }

    async fn apply<I>(&mut self, entries: I) -> Result<Vec<()>, StorageError>
    where
        I: IntoIterator<Item = openraft::Entry<TypeConfig>> + Send,
        I::IntoIter: Send,
    {
        let mut applied = Vec::new();
        let failed: Arc<Mutex<Option<(LogId, hark_mvcc::Error)>>> = Arc::default();
        for entry in entries {
            let log_id = entry.log_id;
            let mut parts: Vec<(Option<WriteRequest>, LoggedDone)> = Vec::new();
            match entry.payload {
                EntryPayload::Blank => {}
                EntryPayload::Membership(m) => {
                    self.membership = StoredMembership::new(Some(log_id), m);
                    self.membership_bytes = encode(&self.membership);
                }
                EntryPayload::Normal(batch) => {
                    for p in batch.proposals {
                        let Command::Write(req) = p.command;
                        let ours = (p.origin == self.member_id).then_some(p.seq);
                        let pending = self.pending.clone();
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
                                if let Some(seq) = ours {
                                    pending.answer(seq, r);
                                }
                            }),
                        ));
                    }
                }
            }
            let position = encode_position(&log_id, &self.membership_bytes);
            self.store.apply_logged(parts, position);
            applied.push(());
        }
        // Everything above is applied and visible to readers once the
        // barrier passes: openraft may then answer reads at this index.
        let (tx, rx) = oneshot::channel();
        self.store.barrier(move || {
            let _ = tx.send(());
        });
        if rx.await.is_err() {
            return Err(StorageIOError::write_state_machine(&hark_mvcc::Error::Closed).into());
        }
        if let Some((log_id, e)) = failed.lock().take() {
            return Err(StorageIOError::apply(log_id, &e).into());
        }
        Ok(applied)
    }

    async fn get_snapshot_builder(&mut self) -> Self::SnapshotBuilder {
        SnapshotBuilder {}
    }

    async fn begin_receiving_snapshot(&mut self) -> Result<Box<tokio::fs::File>, StorageError> {
        Err(StorageIOError::write_snapshot(None, &unsupported()).into())
    }

    async fn install_snapshot(
        &mut self,
        meta: &SnapshotMeta,
        _snapshot: Box<tokio::fs::File>,
    ) -> Result<(), StorageError> {
        Err(StorageIOError::write_snapshot(Some(meta.signature()), &unsupported()).into())
    }

    async fn get_current_snapshot(&mut self) -> Result<Option<Snapshot<TypeConfig>>, StorageError> {
        Ok(None)
    }
}

fn unsupported() -> std::io::Error {
    std::io::Error::other("raft snapshots are not built yet")
}

/// Builds a snapshot of the store for a member too far behind the log.
pub struct SnapshotBuilder {}

impl RaftSnapshotBuilder<TypeConfig> for SnapshotBuilder {
    async fn build_snapshot(&mut self) -> Result<Snapshot<TypeConfig>, StorageError> {
        Err(StorageIOError::write_snapshot(None, &unsupported()).into())
    }
}
