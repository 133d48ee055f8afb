//! etcd's corruption checks: members compare their HashKV at one revision.
//!
//! * The **initial check** (`--experimental-initial-corrupt-check`, etcd
//!   3.6's `InitialCorruptCheck` gate) runs before a member serves clients:
//!   a peer whose hash differs at this member's revision, under the same
//!   compacted revision, stops the start.
//! * The **periodic check** (`--corrupt-check-time`) runs on the leader:
//!   a follower ahead of it, or whose hash differs under the leader's
//!   compacted revision, or a leader whose own hash changed at an unchanged
//!   revision, raises the CORRUPT alarm (for member 0, as etcd 3.5 does: the
//!   check cannot tell which member is wrong). The alarm goes through the
//!   log like any write, and every member then refuses writes.
//!
//! * The **compaction hash check** (`--experimental-compact-hash-check-enabled`,
//!   etcd 3.7's `CompactHashCheck` gate) runs on the leader every
//!   `--compact-hash-check-time`: the members' hashes at the newest
//!   compacted revision, compared among those compacted to it.
//!
//! A peer that is down, behind this member's revision or compacted past it
//! is skipped with a warning, as in etcd: the checks find disagreement, not
//! absence.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use futures_util::future::join_all;
use hark_mvcc::{AlarmAction, AlarmKind, AlarmRequest, KvHash, WriteRequest};
use serde::{Deserialize, Serialize};
use tokio::time::Instant;

use crate::network::Method;
use crate::replica::Replica;

/// One member's HashKV, as a peer answers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemberHash {
    pub hash: u32,
    /// The member's current revision when it hashed.
    pub revision: i64,
    pub compact_revision: i64,
}

impl From<KvHash> for MemberHash {
    fn from(h: KvHash) -> Self {
        MemberHash {
            hash: h.hash,
            revision: h.current_revision,
            compact_revision: h.compact_revision,
        }
    }
}

/// Why a peer gave no hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
pub enum NoHash {
    /// The peer has not reached the revision yet (etcd's ErrFutureRev).
    #[error("etcdserver: mvcc: required revision is a future revision")]
    Behind,
    /// The peer compacted past the revision (etcd's ErrCompacted).
    #[error("etcdserver: mvcc: required revision has been compacted")]
    Compacted,
    #[error("{0}")]
    Failed(String),
}

/// A peer's answer to "your hash at revision r".
#[derive(Debug, Clone)]
pub struct PeerHash {
    pub id: u64,
    pub peer_urls: Vec<String>,
    pub answer: Result<MemberHash, NoHash>,
}

impl Replica {
    /// This member's hash at `revision` (0: its current one): what it
    /// answers its peers.
    pub(crate) async fn hash_here(&self, revision: i64) -> Result<MemberHash, NoHash> {
        if revision < 0 {
            return Err(NoHash::Failed(format!("revision {revision} is negative")));
        }
        let store = self.store.clone();
        match tokio::task::spawn_blocking(move || store.hash_kv(revision)).await {
            Ok(Ok(h)) => Ok(h.into()),
            Ok(Err(hark_mvcc::Error::FutureRevision)) => Err(NoHash::Behind),
            Ok(Err(hark_mvcc::Error::Compacted)) => Err(NoHash::Compacted),
            Ok(Err(e)) => Err(NoHash::Failed(e.to_string())),
            Err(e) => Err(NoHash::Failed(format!("hashing: {e}"))),
        }
    }

    /// What this member answers a peer asking for its hash.
    pub(crate) async fn hash_for_peer(&self, revision: i64) -> Result<MemberHash, NoHash> {
        if self.hashes_held.load(Ordering::Acquire) {
            return Err(NoHash::Failed(
                "the member is running its initial corruption check".into(),
            ));
        }
        self.hash_here(revision).await
    }

    /// Every other member's hash at `revision`, asked at once, each with
    /// the request timeout.
    pub async fn peer_hashes(&self, revision: i64) -> Vec<PeerHash> {
        let deadline = Instant::now() + self.request_timeout;
        let peers = self
            .members()
            .into_iter()
            .filter(|m| m.id != self.member_id());
        join_all(peers.map(|m| async move {
            let answer = match self
                .call_member::<_, MemberHash, NoHash>(m.id, Method::HashKv, &revision, deadline)
                .await
            {
                Ok(Some(Ok(answer))) => answer,
                Ok(Some(Err(status))) => Err(NoHash::Failed(status.message().to_string())),
                Ok(None) => Err(NoHash::Failed("no address for the member".into())),
                Err(e) => Err(NoHash::Failed(e.to_string())),
            };
            PeerHash {
                id: m.id,
                peer_urls: m.info.peer_urls,
                answer,
            }
        }))
        .await
    }

    /// etcd's initial corruption check: `Err` (etcd's message) when a peer's
    /// hash at this member's revision differs under the same compacted
    /// revision.
    pub async fn initial_corruption_check(&self) -> Result<(), String> {
        let me = format!("{:x}", self.member_id());
        tracing::info!(
            local_member_id = %me,
            timeout = ?self.request_timeout,
            "starting initial corruption check"
        );
        let local = self
            .hash_here(0)
            .await
            .map_err(|e| format!("{me} failed to fetch hash ({e})"))?;
        let mut mismatches = 0;
        for peer in self.peer_hashes(local.revision).await {
            let remote = format!("{:x}", peer.id);
            match peer.answer {
                Ok(theirs) if theirs.hash != local.hash => {
                    let same_compaction = theirs.compact_revision == local.compact_revision;
                    tracing::warn!(
                        local_member_id = %me,
                        local_member_revision = local.revision,
                        local_member_compact_revision = local.compact_revision,
                        local_member_hash = local.hash,
                        remote_peer_id = %remote,
                        remote_peer_endpoints = ?peer.peer_urls,
                        remote_peer_revision = theirs.revision,
                        remote_peer_compact_revision = theirs.compact_revision,
                        remote_peer_hash = theirs.hash,
                        "{}",
                        if same_compaction {
                            "found different hash values from remote peer"
                        } else {
                            "found different compact revision values from remote peer"
                        }
                    );
                    mismatches += usize::from(same_compaction);
                }
                Ok(_) => {}
                Err(why) => tracing::warn!(
                    local_member_id = %me,
                    local_member_revision = local.revision,
                    remote_peer_id = %remote,
                    remote_peer_endpoints = ?peer.peer_urls,
                    error = %why,
                    "{}",
                    match why {
                        NoHash::Behind => "cannot fetch hash from slow remote peer",
                        NoHash::Compacted =>
                            "cannot fetch hash from remote peer; local member is behind",
                        NoHash::Failed(_) => "cannot fetch hash from remote peer",
                    }
                ),
            }
        }
        if mismatches > 0 {
            return Err(format!("{me} found data inconsistency with peers"));
        }
        tracing::info!(local_member_id = %me, "initial corruption checking passed; no corruption");
        self.hashes_held.store(false, Ordering::Release);
        Ok(())
    }

    /// One pass of etcd's periodic check, on the leader. `Ok(true)` when it
    /// raised the CORRUPT alarm; `Err` when it could not check.
    pub async fn periodic_corruption_check(&self) -> Result<bool, String> {
        let first = self.hash_here(0).await.map_err(|e| e.to_string())?;
        let peers = self.peer_hashes(first.revision).await;
        self.read_barrier().await.map_err(|e| e.to_string())?;
        let second = self.hash_here(0).await.map_err(|e| e.to_string())?;
        let mut corrupt = false;
        if second.hash != first.hash
            && second.revision == first.revision
            && second.compact_revision == first.compact_revision
        {
            tracing::warn!(
                revision_1 = first.revision,
                compact_revision_1 = first.compact_revision,
                hash_1 = first.hash,
                revision_2 = second.revision,
                compact_revision_2 = second.compact_revision,
                hash_2 = second.hash,
                "found hash mismatch"
            );
            corrupt = true;
        }
        let mut checked = 0;
        for peer in &peers {
            let Ok(theirs) = &peer.answer else { continue };
            checked += 1;
            let follower = format!("{:x}", peer.id);
            if theirs.revision > second.revision {
                tracing::warn!(
                    leader_revision = second.revision,
                    follower_revision = theirs.revision,
                    follower_peer_id = %follower,
                    "revision from follower must be less than or equal to leader's"
                );
                corrupt = true;
            }
            if theirs.compact_revision > second.compact_revision {
                tracing::warn!(
                    leader_compact_revision = second.compact_revision,
                    follower_compact_revision = theirs.compact_revision,
                    follower_peer_id = %follower,
                    "compact revision from follower must be less than or equal to leader's"
                );
                corrupt = true;
            }
            if theirs.compact_revision == first.compact_revision && theirs.hash != first.hash {
                tracing::warn!(
                    leader_compact_revision = second.compact_revision,
                    leader_hash = first.hash,
                    follower_compact_revision = theirs.compact_revision,
                    follower_hash = theirs.hash,
                    follower_peer_id = %follower,
                    "same compact revision then hashes must match"
                );
                corrupt = true;
            }
        }
        if corrupt {
            self.raise_corrupt_alarm(0).await?;
        }
        tracing::info!(
            number_of_peers_checked = checked,
            "finished peer corruption check"
        );
        Ok(corrupt)
    }

    /// One pass of etcd's compaction hash check, on the leader: the hash
    /// at this member's compacted revision, compared with every peer's at
    /// the same revision where the peer has compacted to it too. A
    /// mismatch raises the CORRUPT alarm (for the members outside a
    /// majority, as etcd). Each pass hashes the whole store on every
    /// member until all have been compared. `checked` is the newest
    /// compaction every peer has been compared at: it is not compared
    /// again. Returns the number of compactions checked (0 or 1), which
    /// etcd logs.
    pub async fn compact_hash_check(&self, checked: &mut i64) -> Result<usize, String> {
        tracing::info!(
            "local-member-id" = %format!("{:x}", self.member_id()),
            timeout = ?self.request_timeout,
            "starting compact hash check"
        );
        let compacted = self.store.compacted_revision();
        let mut hashes_checked = 0;
        if compacted > *checked {
            let mine = self.hash_here(compacted).await.map_err(|e| e.to_string())?;
            hashes_checked = 1;
            let peers = self.peer_hashes(compacted).await;
            let leader = format!("{:x}", self.member_id());
            // As etcd: members grouped by hash, the leader among them; a
            // group holding a majority of the members is right, and each
            // member outside it gets the CORRUPT alarm. With no majority
            // the alarm is for member 0: no one can tell who is wrong.
            let mut groups: Vec<(u32, Vec<u64>)> = vec![(mine.hash, vec![self.member_id()])];
            let mut compared = 0;
            for peer in &peers {
                let skipped = match &peer.answer {
                    Err(e) => Some(e.to_string()),
                    Ok(theirs) if theirs.compact_revision != mine.compact_revision => {
                        Some(format!(
                            "the peer's CompactRevision {} doesn't match leader's CompactRevision {}",
                            theirs.compact_revision, mine.compact_revision
                        ))
                    }
                    Ok(_) => None,
                };
                if let Some(reason) = skipped {
                    tracing::warn!(
                        "number-of-peers" = peers.len(),
                        "leader-id" = %leader,
                        "peer-id" = %format!("{:x}", peer.id),
                        reason,
                        "Skipped peer's hash"
                    );
                    continue;
                }
                let Ok(theirs) = &peer.answer else { continue };
                compared += 1;
                match groups.iter_mut().find(|(hash, _)| *hash == theirs.hash) {
                    Some((_, ids)) => ids.push(peer.id),
                    None => groups.push((theirs.hash, vec![peer.id])),
                }
            }
            if groups.len() == 1 {
                if compared == peers.len() {
                    tracing::info!(
                        "compact-revision" = compacted,
                        hash = mine.hash,
                        "successfully checked hash on whole cluster"
                    );
                    *checked = compacted;
                } else {
                    tracing::warn!(
                        "compact-revision" = compacted,
                        "number-of-peers-checked" = compared,
                        "number-of-peers" = peers.len(),
                        "skipped the compaction hash check on some members: checked again next time"
                    );
                }
            } else {
                let members = peers.len() + 1;
                let quorum = members / 2 + 1;
                let majority = groups.iter().position(|(_, ids)| ids.len() >= quorum);
                let mut corrupt: Vec<u64> = Vec::new();
                match majority {
                    Some(at) => {
                        groups.remove(at);
                        corrupt.extend(groups.iter().flat_map(|(_, ids)| ids.iter().copied()));
                    }
                    None => {
                        tracing::error!(
                            "leader-id" = %leader,
                            "leader-compact-revision" = compacted,
                            "leader-hash" = mine.hash,
                            "Detected compaction hash mismatch but cannot identify the corrupted members, so intentionally set the memberID as 0"
                        );
                        corrupt.push(0);
                    }
                }
                for (hash, ids) in &groups {
                    let ids: Vec<String> = ids.iter().map(|id| format!("{id:x}")).collect();
                    tracing::error!(
                        "leader-id" = %leader,
                        "leader-compact-revision" = compacted,
                        "leader-hash" = mine.hash,
                        "peer-hash" = hash,
                        "peer-ids" = ?ids,
                        "Detected compaction hash mismatch"
                    );
                }
                for member_id in corrupt {
                    self.raise_corrupt_alarm(member_id).await?;
                }
                *checked = compacted;
            }
        }
        tracing::info!(
            "number-of-hashes-checked" = hashes_checked,
            "finished compaction hash check"
        );
        Ok(hashes_checked)
    }

    /// Runs the compaction hash check every `interval` while this member
    /// leads, until `stopped` resolves (etcd's `CompactHashCheck`).
    pub async fn compact_hash_check_every(
        self: Arc<Self>,
        interval: Duration,
        stopped: impl std::future::Future<Output = ()>,
    ) {
        tracing::info!(
            "local-member-id" = %format!("{:x}", self.member_id()),
            interval = ?interval,
            "enabled compact hash check"
        );
        tokio::pin!(stopped);
        let mut checked = 0;
        while self.next_turn_as_leader(interval, stopped.as_mut()).await {
            if let Err(e) = self.compact_hash_check(&mut checked).await {
                tracing::warn!(error = %e, "compact hash check failed");
            }
        }
    }

    /// The CORRUPT alarm for `member_id` (0: the whole cluster), through
    /// the log like any write.
    async fn raise_corrupt_alarm(&self, member_id: u64) -> Result<(), String> {
        self.write(WriteRequest::Alarm(AlarmRequest {
            action: AlarmAction::Activate,
            member_id,
            kind: Some(AlarmKind::Corrupt),
        }))
        .await
        .map(drop)
        .map_err(|e| format!("raising the CORRUPT alarm: {e}"))
    }

    /// Waits `interval` at a time until this member leads: `true` then,
    /// `false` once `stopped` resolves.
    async fn next_turn_as_leader(
        &self,
        interval: Duration,
        mut stopped: std::pin::Pin<&mut impl std::future::Future<Output = ()>>,
    ) -> bool {
        loop {
            tokio::select! {
                _ = &mut stopped => return false,
                _ = tokio::time::sleep(interval) => {}
            }
            if self.is_leader() {
                return true;
            }
        }
    }

    /// Runs the periodic check every `interval` while this member leads,
    /// until `stopped` resolves.
    pub async fn check_for_corruption_every(
        self: Arc<Self>,
        interval: Duration,
        stopped: impl std::future::Future<Output = ()>,
    ) {
        tracing::info!(
            local_member_id = %format!("{:x}", self.member_id()),
            interval = ?interval,
            "enabled corruption checking"
        );
        tokio::pin!(stopped);
        while self.next_turn_as_leader(interval, stopped.as_mut()).await {
            if let Err(e) = self.periodic_corruption_check().await {
                tracing::warn!(error = %e, "failed to check hash KV");
            }
        }
    }
}
