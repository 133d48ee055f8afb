//! Prints postcard encodings of openraft 0.9 messages, one `name hex` per line,
//! for the 0.10 prototype to decode and re-encode.
use std::collections::{BTreeMap, BTreeSet};

use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, InstallSnapshotRequest, VoteRequest, VoteResponse,
};
use openraft::{
    CommittedLeaderId, Entry, EntryPayload, LogId, Membership, SnapshotMeta, StoredMembership, Vote,
};

#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Member {
    pub name: String,
    pub urls: Vec<String>,
}

openraft::declare_raft_types!(pub TC: D = Vec<u8>, R = (), NodeId = u64, Node = Member, Entry = openraft::Entry<TC>, SnapshotData = std::io::Cursor<Vec<u8>>);

fn hex(name: &str, v: &impl serde::Serialize) {
    let b = postcard::to_stdvec(v).unwrap();
    println!(
        "{name} {}",
        b.iter().map(|x| format!("{x:02x}")).collect::<String>()
    );
}

fn main() {
    let lid = |t: u64, n: u64, i: u64| LogId::new(CommittedLeaderId::new(t, n), i);
    let member = |n: &str| Member {
        name: n.into(),
        urls: vec![format!("http://{n}:2380")],
    };
    let nodes = BTreeMap::from([
        (1u64, member("a")),
        (2, member("b")),
        (3, member("c")),
        (4, member("d")),
    ]);
    let membership = Membership::new(
        vec![BTreeSet::from([1, 2, 3]), BTreeSet::from([1, 2, 4])],
        nodes,
    );
    let e_blank: Entry<TC> = Entry {
        log_id: lid(7, 2, 100),
        payload: EntryPayload::Blank,
    };
    let e_normal: Entry<TC> = Entry {
        log_id: lid(7, 2, 101),
        payload: EntryPayload::Normal(vec![1, 2, 3]),
    };
    let e_member: Entry<TC> = Entry {
        log_id: lid(7, 2, 102),
        payload: EntryPayload::Membership(membership.clone()),
    };
    hex("entry-blank", &e_blank);
    hex("entry-normal", &e_normal);
    hex("entry-membership", &e_member);
    let mut vote = Vote::new(7, 2);
    hex("vote", &vote);
    vote.commit();
    hex("vote-committed", &vote);
    hex(
        "vote-request",
        &VoteRequest::<u64>::new(Vote::new(8, 3), Some(lid(7, 2, 102))),
    );
    hex(
        "vote-response",
        &VoteResponse::<u64> {
            vote: Vote::new(8, 3),
            vote_granted: true,
            last_log_id: Some(lid(7, 2, 101)),
        },
    );
    hex(
        "append-entries",
        &AppendEntriesRequest::<TC> {
            vote,
            prev_log_id: Some(lid(7, 2, 99)),
            entries: vec![e_blank.clone(), e_normal.clone(), e_member.clone()],
            leader_commit: Some(lid(7, 2, 98)),
        },
    );
    hex("append-success", &AppendEntriesResponse::<u64>::Success);
    hex(
        "append-partial",
        &AppendEntriesResponse::<u64>::PartialSuccess(Some(lid(7, 2, 100))),
    );
    hex("append-conflict", &AppendEntriesResponse::<u64>::Conflict);
    hex(
        "append-higher-vote",
        &AppendEntriesResponse::<u64>::HigherVote(Vote::new(9, 1)),
    );
    let stored = StoredMembership::new(Some(lid(7, 2, 102)), membership);
    let meta = SnapshotMeta {
        last_log_id: Some(lid(7, 2, 102)),
        last_membership: stored.clone(),
        snapshot_id: "s1".into(),
    };
    hex("stored-membership", &stored);
    hex("snapshot-meta", &meta);
    hex(
        "install-snapshot",
        &InstallSnapshotRequest::<TC> {
            vote,
            meta,
            offset: 1 << 20,
            data: vec![9; 4],
            done: false,
        },
    );
}
