//! Who may call the peer port. Every call a member makes to another names
//! the caller: its member id and cluster id in two request headers
//! ([`MEMBER_ID_HEADER`], [`CLUSTER_ID_HEADER`], hex as etcd prints ids). The
//! `Peer` service refuses raft RPCs and forwarded work from anyone who does
//! not name this member's cluster (`FailedPrecondition`, "cluster ID
//! mismatch", etcd's 412) or is not a current member of it
//! (`PermissionDenied`), before doing any work. `Members`, which a member
//! being added asks for its id before it has one, stays open.
//!
//! "Current member" is this member's own view: the voters and learners of
//! the newest membership in its log. That view can be behind, and raft
//! messages come to a member precisely to bring it up to date, so two
//! callers it does not know are let through for raft RPCs (AppendEntries,
//! InstallSnapshot, Vote), never for forwarded work:
//! * any caller of its cluster while this member has no membership at all
//!   (it was added and has not received the log yet);
//! * a caller one of the members it knows lists as a member (this member
//!   missed the change that added the caller, e.g. it was down while the
//!   caller was added and the caller now leads). The answers are cached
//!   for a while; one check runs at a time, at most one every
//!   [`CHECK_INTERVAL`], so callers naming ids at random cannot make this
//!   member flood its peers.
//!
//! The headers are a claim, not a proof: they stop callers of another
//! cluster, removed members and clients that name no member; a caller
//! that knows a member's id (the client API lists them) can still name
//! it. Tying an id to a peer certificate is the TLS layer's business.

use std::collections::HashMap;
use std::time::Duration;

use tokio::time::Instant;
use tonic::Status;
use tonic::metadata::{MetadataMap, MetadataValue};

use crate::network::{Method, call};
use crate::replica::Replica;
use crate::types::MemberInfo;

/// The calling member's id (hex, as etcd prints member ids).
pub const MEMBER_ID_HEADER: &str = "hark-peer-member-id";
/// The calling member's cluster id (hex).
pub const CLUSTER_ID_HEADER: &str = "hark-peer-cluster-id";

/// How long another member's word that a caller is (or is not) a member is
/// trusted.
const VOUCHED_FOR: Duration = Duration::from_secs(10);
const REFUSED_FOR: Duration = Duration::from_secs(2);
/// Least time between two checks with the other members.
const CHECK_INTERVAL: Duration = Duration::from_millis(100);
/// How long a check waits for the other members' answers.
const CHECK_TIMEOUT: Duration = Duration::from_secs(1);
/// Most callers remembered; past it the cache starts over.
const CACHED_CALLERS: usize = 1024;

/// The member a peer call comes from, as its headers say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Caller {
    pub(crate) member_id: u64,
    pub(crate) cluster_id: u64,
}

impl Caller {
    /// Names this caller in `request`'s headers.
    pub(crate) fn stamp<T>(&self, request: &mut tonic::Request<T>) {
        let md = request.metadata_mut();
        md.insert(MEMBER_ID_HEADER, hex_value(self.member_id));
        md.insert(CLUSTER_ID_HEADER, hex_value(self.cluster_id));
    }
}

fn hex_value(id: u64) -> MetadataValue<tonic::metadata::Ascii> {
    format!("{id:x}")
        .parse()
        .expect("hex digits are a valid header value")
}

/// What a call asks of this member.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Asks {
    /// Raft's own messages (AppendEntries, InstallSnapshot, Vote): from a
    /// member this one may not know yet (see the module documentation).
    Raft,
    /// Work forwarded by another member (proposals, read indexes,
    /// membership changes, the layers' forwards, transfer steps): members
    /// this one knows only.
    Forwarded,
}

/// Other members' answers about callers this member does not know.
#[derive(Default)]
pub(crate) struct Vouches {
    answers: parking_lot::Mutex<HashMap<u64, (bool, Instant)>>,
    /// Held while the other members are asked; when the last check began.
    checking: tokio::sync::Mutex<Option<Instant>>,
}

impl Vouches {
    fn cached(&self, id: u64) -> Option<bool> {
        let answers = self.answers.lock();
        let (member, at) = *answers.get(&id)?;
        let valid = if member { VOUCHED_FOR } else { REFUSED_FOR };
        (at.elapsed() < valid).then_some(member)
    }

    fn remember(&self, id: u64, member: bool) {
        let mut answers = self.answers.lock();
        if answers.len() >= CACHED_CALLERS {
            answers.clear();
        }
        answers.insert(id, (member, Instant::now()));
    }
}

/// Parses a hex id header (`None`: absent; `Err`: not an id).
fn header_id(md: &MetadataMap, name: &str) -> Result<Option<u64>, Status> {
    let Some(value) = md.get(name) else {
        return Ok(None);
    };
    value
        .to_str()
        .ok()
        .and_then(|s| u64::from_str_radix(s.trim(), 16).ok())
        .map(Some)
        .ok_or_else(|| Status::permission_denied(format!("peer: malformed {name} header")))
}

impl Replica {
    /// This member as a caller of others.
    pub(crate) fn as_caller(&self) -> Caller {
        Caller {
            member_id: self.member_id(),
            cluster_id: self.cluster_id(),
        }
    }

    /// Admits a call with these headers, or says why not (see the module
    /// documentation).
    pub(crate) async fn admit(&self, md: &MetadataMap, asks: Asks) -> Result<(), Status> {
        let local = self.cluster_id();
        let member_id = header_id(md, MEMBER_ID_HEADER)?;
        let cluster_id = header_id(md, CLUSTER_ID_HEADER)?;
        let (Some(member_id), Some(cluster_id)) = (member_id, cluster_id) else {
            return Err(Status::permission_denied(format!(
                "peer: the caller did not name itself as a member of cluster {local:x} \
                 ({MEMBER_ID_HEADER} and {CLUSTER_ID_HEADER} headers)"
            )));
        };
        if cluster_id != local {
            return Err(Status::failed_precondition(format!(
                "cluster ID mismatch: this member is in cluster {local:x}, \
                 the caller says {cluster_id:x}"
            )));
        }
        let mut known = {
            let metrics = self.raft.metrics();
            let metrics = metrics.borrow();
            metrics
                .membership_config
                .membership()
                .get_node(&member_id)
                .is_some()
        };
        let mut empty = false;
        if !known {
            // The metrics follow raft's state (and are blank for a moment
            // at start): raft itself decides.
            let in_force = self
                .raft
                .with_raft_state(move |st| {
                    let membership = st.membership_state.effective();
                    (
                        membership.get_node(&member_id).is_some(),
                        membership.nodes().next().is_none(),
                    )
                })
                .await;
            match in_force {
                Ok(state) => (known, empty) = state,
                Err(_) => return Err(Status::unavailable("peer: this member is stopping")),
            }
        }
        let admitted = known
            || (asks == Asks::Raft
                && member_id != self.member_id()
                && (empty || self.vouched_for(member_id).await));
        if admitted {
            Ok(())
        } else {
            Err(Status::permission_denied(format!(
                "peer: member {member_id:x} is not a member of cluster {local:x}"
            )))
        }
    }

    /// Whether one of the members this member knows lists `id` as a member
    /// of this cluster.
    async fn vouched_for(&self, id: u64) -> bool {
        if let Some(member) = self.vouches.cached(id) {
            return member;
        }
        // One check at a time; a caller that arrives meanwhile is refused
        // and asks again (raft retries).
        let Ok(mut last) = self.vouches.checking.try_lock() else {
            return false;
        };
        if let Some(member) = self.vouches.cached(id) {
            return member;
        }
        if last.is_some_and(|at| at.elapsed() < CHECK_INTERVAL) {
            return false;
        }
        *last = Some(Instant::now());
        let others: Vec<MemberInfo> = self
            .members()
            .into_iter()
            .filter(|m| m.id != self.member_id())
            .map(|m| m.info)
            .collect();
        if others.is_empty() {
            // No one to ask (or raft's metrics are not out yet at start).
            return false;
        }
        let mut asked = tokio::task::JoinSet::new();
        for info in others {
            let Ok(mut client) = self.channels.client(&info) else {
                continue;
            };
            let me = self.as_caller();
            asked.spawn(async move {
                call::<_, (u64, Vec<(u64, MemberInfo, bool)>), ()>(
                    &mut client,
                    Method::Members,
                    &(),
                    Some(CHECK_TIMEOUT),
                    Some(me),
                )
                .await
            });
        }
        let cluster_id = self.cluster_id();
        let vouched = tokio::time::timeout(CHECK_TIMEOUT, async {
            while let Some(answer) = asked.join_next().await {
                if let Ok(Ok(Ok((cluster, members)))) = answer
                    && cluster == cluster_id
                    && members.iter().any(|(m, _, _)| *m == id)
                {
                    return true;
                }
            }
            false
        })
        .await
        .unwrap_or(false);
        asked.abort_all();
        if vouched {
            tracing::info!(
                member = %format!("{id:x}"),
                "a member this member does not know yet is vouched for by another"
            );
        }
        self.vouches.remember(id, vouched);
        vouched
    }
}
