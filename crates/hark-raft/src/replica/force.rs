//! etcd's `--force-new-cluster`: a member that lost its quorum for good
//! restarts as a cluster of its own, with its data, its member id and its
//! cluster id, the other members removed. As etcd does it, before raft
//! starts and on this member's log alone: entries past the last one known
//! committed are dropped (they may never have been acknowledged), and a
//! membership entry naming this member as the only voter is appended.
//! Raft then starts on that membership, elects this member at once and
//! commits it; members are added back with MemberAdd.

use std::collections::{BTreeMap, BTreeSet};

use openraft::EntryPayload;
use openraft::storage::{RaftLogReader, RaftLogStorage, RaftStateMachine};

use crate::log_store::LogStore;
use crate::state_machine::StateMachine;
use crate::types::{Entry, LogId, Membership};

/// Rewrites the end of `log` so that `member_id` alone is the cluster.
/// Nothing to do on a log that holds no entry yet.
pub(super) async fn force_new_cluster(
    log: &mut LogStore,
    state_machine: &mut StateMachine,
    member_id: u64,
) -> Result<(), String> {
    let failed =
        |what: &str, e: &dyn std::fmt::Display| format!("--force-new-cluster: {what}: {e}");
    let state = log
        .get_log_state()
        .await
        .map_err(|e| failed("reading the log", &e))?;
    let (applied, applied_membership) = state_machine
        .applied_state()
        .await
        .map_err(|e| failed("reading the store's log position", &e))?;
    let committed = log
        .read_committed()
        .await
        .map_err(|e| failed("reading the commit index", &e))?;
    // The newest entry known committed: what the store applied, or the
    // commit index the log recorded, whichever is further.
    let Some(known) = [applied, committed, state.last_purged_log_id]
        .into_iter()
        .flatten()
        .max_by_key(|id: &LogId| id.index)
    else {
        return Ok(());
    };
    // Already alone (the flag left set from an earlier forced start, say):
    // a voter of one commits an entry once its own log has it durable, so
    // every entry its log holds may have been acknowledged, while the commit
    // hint and the store's position are saved lazily and lag after a power
    // loss. Nothing is dropped then.
    let last = state.last_log_id.unwrap_or(known);
    let from = [applied, state.last_purged_log_id]
        .into_iter()
        .flatten()
        .map(|id| id.index + 1)
        .max()
        .unwrap_or(0);
    let at_end = newest_membership(log, from, last.index)
        .await
        .map_err(|e| failed("reading the log", &e))?
        .unwrap_or_else(|| applied_membership.membership().clone());
    let alone_already = at_end.voter_ids().eq([member_id]) && at_end.get_joint_config().len() == 1;
    let keep = if alone_already { last } else { known };
    if let Some(last) = state.last_log_id
        && last.index > keep.index
    {
        tracing::warn!(
            discarded_from = keep.index + 1,
            discarded_to = last.index,
            "--force-new-cluster: discarding log entries not known to be committed"
        );
        log.truncate_after(Some(keep))
            .await
            .map_err(|e| failed("discarding uncommitted entries", &e))?;
    }
    // The membership in force: the last one in the kept log after what the
    // store applied, else the store's.
    let membership = newest_membership(log, from, keep.index)
        .await
        .map_err(|e| failed("reading the log", &e))?
        .unwrap_or_else(|| applied_membership.membership().clone());
    let me = membership.get_node(&member_id).cloned().ok_or_else(|| {
        format!("--force-new-cluster: member {member_id:x} is not in the cluster's membership")
    })?;
    let removed: Vec<String> = membership
        .nodes()
        .filter(|(id, _)| **id != member_id)
        .map(|(id, info)| format!("{id:x} ({info})"))
        .collect();
    let alone = Membership::new(
        vec![BTreeSet::from([member_id])],
        BTreeMap::from([(member_id, me)]),
    )
    .map_err(|e| failed("building its membership", &e))?;
    log.append_before_start(Entry {
        log_id: LogId::new(keep.leader_id, keep.index + 1),
        payload: EntryPayload::Membership(alone),
    })?;
    tracing::warn!(
        member_id = %format!("{member_id:x}"),
        removed = ?removed,
        "forcing a new cluster of this member alone; restart it without --force-new-cluster \
         and add members back with MemberAdd"
    );
    Ok(())
}

/// The newest membership entry among the log's entries `from..=upto`.
async fn newest_membership(
    log: &mut LogStore,
    from: u64,
    upto: u64,
) -> Result<Option<Membership>, std::io::Error> {
    if from > upto {
        return Ok(None);
    }
    let entries = log.try_get_log_entries(from..=upto).await?;
    Ok(entries.iter().rev().find_map(|e| match &e.payload {
        EntryPayload::Membership(m) => Some(m.clone()),
        _ => None,
    }))
}
