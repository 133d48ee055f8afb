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

/// The calling member's id (hex, as etcd prints member ids).
pub const MEMBER_ID_HEADER: &str = "hark-peer-member-id";
/// The calling member's cluster id (hex).
pub const CLUSTER_ID_HEADER: &str = "hark-peer-cluster-id";
/// How a refusal names a caller that is no member of the cluster; a
/// removed member recognizes its peers' refusals by it
/// ([`crate::network::PeerRefusals`]).
pub(crate) const NOT_A_MEMBER: &str = "is not a member of cluster";

/// How long another member's word that a caller is (or is not) a member is
/// trusted.
pub(crate) const VOUCHED_FOR: Duration = Duration::from_secs(10);
pub(crate) const REFUSED_FOR: Duration = Duration::from_secs(2);
/// Least time between two checks with the other members.
pub(crate) const CHECK_INTERVAL: Duration = Duration::from_millis(100);
/// How long a check waits for the other members' answers.
pub(crate) const CHECK_TIMEOUT: Duration = Duration::from_secs(1);
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
    pub(crate) answers: parking_lot::Mutex<HashMap<u64, (bool, Instant)>>,
    /// Held while the other members are asked; when the last check began.
    pub(crate) checking: tokio::sync::Mutex<Option<Instant>>,
}

impl Vouches {
    pub(crate) fn cached(&self, id: u64) -> Option<bool> {
        let answers = self.answers.lock();
        let (member, at) = *answers.get(&id)?;
        let valid = if member { VOUCHED_FOR } else { REFUSED_FOR };
        (at.elapsed() < valid).then_some(member)
    }

    pub(crate) fn remember(&self, id: u64, member: bool) {
        let mut answers = self.answers.lock();
        if answers.len() >= CACHED_CALLERS {
            answers.clear();
        }
        answers.insert(id, (member, Instant::now()));
    }
}

/// Parses a hex id header (`None`: absent; `Err`: not an id).
pub(crate) fn header_id(md: &MetadataMap, name: &str) -> Result<Option<u64>, Status> {
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
