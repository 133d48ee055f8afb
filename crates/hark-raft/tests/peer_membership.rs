//! The peer port admits only current members of its cluster: real members
//! (each with its own RocksDB store and log) serving gRPC over loopback,
//! called by their own raft and by a bare client naming itself (or not) in
//! the `hark-peer-*` headers.

mod common;

use std::time::Duration;

use bytes::Bytes;
use common::{Cluster, ELECTION, Settings, put_via};
use hark_proto::harkpeerpb::Envelope;
use hark_proto::harkpeerpb::peer_client::PeerClient;
use hark_raft::{
    CLUSTER_ID_HEADER, MEMBER_ID_HEADER, MembershipChange, MembershipError, ReplicaError,
};
use tonic::transport::Channel;
use tonic::{Code, Status};

const CLUSTER_ID: u64 = 0xcdf8_1819_4e3a_8c32;
/// An id no member has.
const STRANGER: u64 = 0x8e9e_05c5_2164_694d;

const SETTINGS: Settings = Settings {
    cluster_id: CLUSTER_ID,
    token: "peer-membership",
    snapshot_count: 10_000,
    fsync: false,
    leader_deadline: ELECTION.saturating_mul(20),
    request_timeout: Duration::from_secs(5),
    // A member is added while another is down, which etcd's strict check
    // refuses (as etcd with --strict-reconfig-check=false, it is allowed).
    strict_reconfig_check: false,
    append_window: hark_raft::DEFAULT_APPEND_WINDOW,
    batches_in_flight: hark_raft::DEFAULT_BATCHES_IN_FLIGHT,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rpc {
    AppendEntries,
    Vote,
    InstallSnapshot,
    Propose,
    ReadIndex,
    ChangeMembership,
    Members,
    Forward,
    TransferLeader,
}

/// Every method that writes, votes or runs work for the caller.
const GUARDED: [Rpc; 8] = [
    Rpc::AppendEntries,
    Rpc::Vote,
    Rpc::InstallSnapshot,
    Rpc::Propose,
    Rpc::ReadIndex,
    Rpc::ChangeMembership,
    Rpc::Forward,
    Rpc::TransferLeader,
];

/// Who a bare call says it is: `(member id, cluster id)` header values.
type Naming<'a> = Option<(&'a str, &'a str)>;

/// Calls `rpc` on the member at `url` with `data` as the envelope, as a
/// sender from before format versions (format 0).
async fn ask(url: &str, rpc: Rpc, naming: Naming<'_>, data: &[u8]) -> Result<Bytes, Status> {
    ask_in(url, rpc, naming, data, 0).await
}

/// [`ask`] with the envelope saying `format`.
async fn ask_in(
    url: &str,
    rpc: Rpc,
    naming: Naming<'_>,
    data: &[u8],
    format: u32,
) -> Result<Bytes, Status> {
    let channel = Channel::from_shared(url.to_string())
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut client = PeerClient::new(channel);
    let mut req = tonic::Request::new(Envelope {
        data: Bytes::copy_from_slice(data),
        format,
    });
    req.set_timeout(Duration::from_secs(5));
    if let Some((member, cluster)) = naming {
        req.metadata_mut()
            .insert(MEMBER_ID_HEADER, member.parse().unwrap());
        req.metadata_mut()
            .insert(CLUSTER_ID_HEADER, cluster.parse().unwrap());
    }
    let answer = match rpc {
        Rpc::AppendEntries => client.append_entries(req).await,
        Rpc::Vote => client.vote(req).await,
        Rpc::InstallSnapshot => client.install_snapshot(req).await,
        Rpc::Propose => client.propose(req).await,
        Rpc::ReadIndex => client.read_index(req).await,
        Rpc::ChangeMembership => client.change_membership(req).await,
        Rpc::Members => client.members(req).await,
        Rpc::Forward => client.forward(req).await,
        Rpc::TransferLeader => client.transfer_leader(req).await,
    };
    answer.map(|r| r.into_inner().data)
}

/// A body no method can decode: a call admitted gets `InvalidArgument`
/// for it, so a refusal is the admission's and not the decoder's.
const GARBAGE: &[u8] = &[0xff; 16];

fn assert_refused(answer: Result<Bytes, Status>, code: Code, message: &str, what: &str) {
    let status = answer.expect_err(what);
    assert_eq!(status.code(), code, "{what}: {status:?}");
    assert!(
        status.message().contains(message),
        "{what}: {:?} does not say {message:?}",
        status.message()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_peer_port_refuses_callers_that_are_not_current_members() {
    let cluster = Cluster::start(3, SETTINGS).await;
    let leader = cluster.leader().await;
    let follower = cluster.follower(leader);
    let rev = put_via(cluster.member(leader), "before", "v").await;
    let cid = format!("{CLUSTER_ID:x}");
    let member = format!("{follower:x}");
    let stranger = format!("{STRANGER:x}");

    for target in [leader, follower] {
        let url = &cluster.member(target).url;
        for rpc in GUARDED {
            let what = format!("{rpc:?} on {target:x}");
            // (1) Naming no member at all (a client the peer CA signed, or
            // anyone without TLS).
            assert_refused(
                ask(url, rpc, None, GARBAGE).await,
                Code::PermissionDenied,
                "did not name itself as a member of cluster cdf818194e3a8c32",
                &format!("{what} without headers"),
            );
            // Half a name is no name.
            assert_refused(
                ask(url, rpc, Some((&member, "")), GARBAGE).await,
                Code::PermissionDenied,
                "malformed hark-peer-cluster-id",
                &format!("{what} with an empty cluster id"),
            );
            // (2) A member's id, another cluster's id.
            assert_refused(
                ask(url, rpc, Some((&member, "1")), GARBAGE).await,
                Code::FailedPrecondition,
                "cluster ID mismatch",
                &format!("{what} from another cluster"),
            );
            // (3) This cluster, an id that is no member's.
            assert_refused(
                ask(url, rpc, Some((&stranger, &cid)), GARBAGE).await,
                Code::PermissionDenied,
                "peer: member 8e9e05c52164694d is not a member of cluster cdf818194e3a8c32",
                &format!("{what} from a stranger"),
            );
            assert_refused(
                ask(url, rpc, Some(("not-hex", &cid)), GARBAGE).await,
                Code::PermissionDenied,
                "malformed hark-peer-member-id",
                &format!("{what} with a malformed id"),
            );
            // A member naming itself is admitted: the garbage body is what
            // it is refused for (ReadIndex takes `()`, which postcard reads
            // from any bytes: it is answered).
            let admitted = ask(url, rpc, Some((&member, &cid)), GARBAGE).await;
            if rpc == Rpc::ReadIndex {
                admitted.expect("a read index asked by a member");
            } else {
                assert_refused(
                    admitted,
                    Code::InvalidArgument,
                    "undecodable peer message",
                    &format!("{what} from a member"),
                );
            }
            // A member's message in a format newer than this build's is
            // refused before it is decoded, not guessed at.
            let newer = hark_raft::format::PEER_FORMAT + 1;
            assert_refused(
                ask_in(url, rpc, Some((&member, &cid)), GARBAGE, newer).await,
                Code::FailedPrecondition,
                "peer message of format 2 is newer than this build's 1: run a newer hark",
                &format!("{what} in format {newer}"),
            );
        }
        // Members stays open: a member being added asks it for its id
        // before it has one to name itself with.
        ask(url, Rpc::Members, None, &[]).await.unwrap();
    }
    // Nothing refused reached the log.
    assert_eq!(cluster.member(leader).store.current_revision(), rev);

    // (4) The members' own calls name them: the cluster elects and
    // replicates, writes from every member apply everywhere.
    let mut last = rev;
    for (i, id) in cluster.members.keys().enumerate() {
        last = put_via(cluster.member(*id), &format!("k{i}"), "v").await;
    }
    assert_eq!(last, rev + 3);
    for id in cluster.members.keys() {
        cluster.caught_up(*id, last).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn members_added_and_missed_are_admitted_and_a_removed_one_is_not() {
    let mut cluster = Cluster::start(3, SETTINGS).await;
    let cid = format!("{CLUSTER_ID:x}");
    let leader = cluster.leader().await;
    put_via(cluster.member(leader), "a", "v").await;
    // A follower misses everything that follows.
    let missed = cluster.follower(leader);
    cluster.stop(missed).await;

    // A member is added: it receives the log while it knows no membership
    // at all, and is promoted.
    let (added, info, listener) = cluster.bind_new().await;
    cluster
        .member(leader)
        .replica
        .change_membership(MembershipChange::Add {
            id: added,
            member: info,
            learner: true,
        })
        .await
        .unwrap();
    cluster.launch(added, listener).await;
    let rev = put_via(cluster.member(leader), "b", "v").await;
    cluster.caught_up(added, rev).await;
    // A learner forwards writes: the leader lists it.
    assert_eq!(put_via(cluster.member(added), "c", "v").await, rev + 1);
    // As etcd, a learner is promoted once the leader has seen it in sync
    // (its apply above can be ahead of what the leader heard): retried.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        match cluster
            .member(leader)
            .replica
            .change_membership(MembershipChange::Promote { id: added })
            .await
        {
            Err(ReplicaError::Membership(MembershipError::LearnerNotReady))
                if tokio::time::Instant::now() < deadline =>
            {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            promoted => break promoted.unwrap(),
        }
    }
    cluster.member(added).replica.read_barrier().await.unwrap();
    assert!(!cluster.member(added).replica.status().is_learner);

    // The new member leads: the member that missed its addition does not
    // know it.
    cluster.lead(added).await;
    // The old leader restarts, so no append it had queued for the missing
    // member (holding the entry that added the new one) is left to reach
    // it: what it learns next, it learns from the new leader.
    cluster.stop(leader).await;
    cluster.restart(leader).await;
    cluster.lead(added).await;
    let rev = put_via(cluster.member(added), "d", "v").await;
    cluster.caught_up(leader, rev).await;
    // Its log ends before the new leader was added: the leader's appends
    // come from a caller it does not know. Its old members vouch for the
    // new leader, and it catches up.
    cluster.restart(missed).await;
    cluster.caught_up(missed, rev).await;
    assert!(
        cluster
            .member(missed)
            .replica
            .members()
            .iter()
            .any(|m| m.id == added)
    );
    let rev = put_via(cluster.member(missed), "e", "v").await;
    for id in cluster.members.keys() {
        cluster.caught_up(*id, rev).await;
    }

    // A removed member is refused, by the leader and by the others.
    let removed = cluster.other_than(&[added, missed]);
    // Refused until the leader has reached every voter for 5 s.
    cluster
        .remove(added, removed, Duration::from_secs(20))
        .await;
    cluster.stop(removed).await;
    let rev = put_via(cluster.member(added), "f", "v").await;
    cluster.caught_up(missed, rev).await;
    let name = format!("{removed:x}");
    let refusal = format!("peer: member {removed:x} is not a member of cluster {cid}");
    for target in [added, missed] {
        let url = &cluster.member(target).url;
        for rpc in GUARDED {
            assert_refused(
                ask(url, rpc, Some((&name, &cid)), GARBAGE).await,
                Code::PermissionDenied,
                &refusal,
                &format!("{rpc:?} from removed {removed:x} on {target:x}"),
            );
        }
    }
    // The members left still replicate.
    let rev = put_via(cluster.member(missed), "g", "v").await;
    cluster.caught_up(added, rev).await;
}
