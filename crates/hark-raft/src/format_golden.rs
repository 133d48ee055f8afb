//! Golden files of the log's and the peer protocol's encodings
//! (`tests/golden/*.hex`): each is decoded and compared with the value it
//! holds, and the value re-encoded must give the same bytes. A change to a
//! logged or sent type fails here first; it then needs a new format version
//! (see [`crate::format`]) and new golden files beside the old ones, which
//! must still decode. `HARK_WRITE_GOLDEN=1` writes missing files.

use std::path::PathBuf;

use bytes::Bytes;
use hark_mvcc::{
    KeyValue, LeaseRevokeRequest, PutRequest, PutResponse, RecordGuard, WriteRequest, WriteResponse,
};
use openraft::raft::{AppendEntriesRequest, AppendEntriesResponse, VoteRequest, VoteResponse};
use openraft::{EntryPayload, Vote};

use crate::types::Membership;

use crate::replica::MembershipChange;
use crate::transfer::TransferStep;
use crate::types::{
    Batch, Command, Entry, LogId, MemberInfo, Proposal, ProposeAnswer, Proposed, TypeConfig,
};

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

fn log_id(term: u64, index: u64) -> LogId {
    crate::types::log_id(term, 0x1111_2222_3333_4444, index)
}

fn member(name: &str, port: u16) -> MemberInfo {
    MemberInfo {
        name: name.to_string(),
        peer_urls: vec![format!("http://10.0.0.1:{port}")],
        client_urls: vec![format!("http://10.0.0.1:{}", port - 1)],
    }
}

pub(crate) fn batch() -> Batch {
    Batch {
        proposals: vec![
            Proposal {
                origin: 0x1111_2222_3333_4444,
                seq: 7,
                command: Command::Write(WriteRequest::Put(PutRequest {
                    key: Bytes::from_static(b"golden/key"),
                    value: Bytes::from_static(b"value \x00\xff"),
                    lease: 0x694d_71ad_0d5b_2f01,
                    prev_kv: true,
                    ..Default::default()
                })),
            },
            Proposal {
                origin: 0x5555_6666_7777_8888,
                seq: 8,
                command: Command::WriteInTerm {
                    term: 3,
                    request: WriteRequest::LeaseRevoke(LeaseRevokeRequest {
                        id: 0x694d_71ad_0d5b_2f01,
                    }),
                },
            },
            Proposal {
                origin: 0x1111_2222_3333_4444,
                seq: 9,
                command: Command::Write(WriteRequest::Guarded(
                    RecordGuard {
                        bucket: "authRevision".to_string(),
                        key: Bytes::from_static(b"rev"),
                        expected: Some(Bytes::from_static(b"\x00\x00\x00\x05")),
                    },
                    Box::new(WriteRequest::Put(PutRequest {
                        key: Bytes::from_static(b"guarded"),
                        value: Bytes::from_static(b"v"),
                        ..Default::default()
                    })),
                )),
            },
        ],
    }
}

pub(crate) fn entries() -> Vec<(&'static str, Entry)> {
    let voters: std::collections::BTreeSet<u64> = [0x1111_2222_3333_4444u64, 0x5555_6666_7777_8888]
        .into_iter()
        .collect();
    let nodes: std::collections::BTreeMap<u64, MemberInfo> = [
        (0x1111_2222_3333_4444u64, member("m1", 2380)),
        (0x5555_6666_7777_8888, member("m2", 12380)),
    ]
    .into_iter()
    .collect();
    vec![
        (
            "entry-normal",
            Entry {
                log_id: log_id(3, 42),
                payload: EntryPayload::Normal(batch()),
            },
        ),
        (
            "entry-membership",
            Entry {
                log_id: log_id(2, 5),
                payload: EntryPayload::Membership(Membership::new(vec![voters], nodes).unwrap()),
            },
        ),
        (
            "entry-blank",
            Entry {
                log_id: log_id(3, 41),
                payload: EntryPayload::Blank,
            },
        ),
    ]
}

/// A leader's answer to a follower's batch of three: two applied (one
/// with its apply sent), one whose fate is unknown.
fn propose_answer() -> ProposeAnswer {
    ProposeAnswer {
        outcomes: vec![Proposed::Appended, Proposed::Appended, Proposed::Unknown],
        applied: vec![
            Some((
                42,
                Ok(WriteResponse::Put(PutResponse {
                    header_revision: 7,
                    prev_kv: Some(KeyValue {
                        key: Bytes::from_static(b"golden/key"),
                        create_revision: 5,
                        mod_revision: 6,
                        version: 2,
                        value: Bytes::from_static(b"old \x00\xff"),
                        lease: 0x694d_71ad_0d5b_2f01,
                        flags: 0,
                    }),
                })),
            )),
            None,
            None,
        ],
    }
}

/// The applies ride behind the outcomes: a follower from before them reads
/// the outcomes alone, and an answer from a leader from before them reads
/// as one without applies.
#[test]
fn propose_answers_read_across_the_applies_added_to_them() {
    use crate::types::{decode, encode};
    let answer = propose_answer();
    let today = encode(&Ok::<_, ()>(answer.clone()));
    let before: Result<Vec<Proposed>, ()> = decode(&today).unwrap();
    assert_eq!(before, Ok(answer.outcomes.clone()));
    let from_before = encode(&Ok::<_, ()>(answer.outcomes.clone()));
    let read: Result<ProposeAnswer, ()> = decode(&from_before).unwrap();
    assert_eq!(read, Ok(ProposeAnswer::outcomes(answer.outcomes)));
}

fn vote_request() -> VoteRequest<TypeConfig> {
    VoteRequest {
        vote: Vote::new(4, 0x5555_6666_7777_8888),
        last_log_id: Some(log_id(3, 42)),
        leadership_transfer: false,
    }
}

/// openraft 0.10 added `leadership_transfer` at the end of a vote request.
/// A member of the 0.9 build reads today's requests (postcard reads no
/// further than its type), and its own requests (`peer-vote.hex`, written
/// by that build) read as requests without the flag.
#[test]
fn vote_requests_read_across_the_leadership_transfer_flag() {
    use crate::types::{decode, encode};
    let today = encode(&vote_request());
    let read_by_0_9: (crate::types::Vote, Option<LogId>) = decode(&today).unwrap();
    assert_eq!(
        read_by_0_9,
        (vote_request().vote, vote_request().last_log_id)
    );
    let from_0_9 = golden("peer-vote", &[]);
    let read = crate::format::decode_vote_request(&from_0_9).unwrap();
    assert_eq!(format!("{read:?}"), format!("{:?}", vote_request()));
}

/// Decodes a message's bytes: what it holds (as `Debug` prints it), and
/// its bytes when encoded again.
type Check = Box<dyn Fn(&[u8]) -> (String, Vec<u8>)>;

/// A message's bytes today, its value as `Debug` prints it, its check.
type Case = (Vec<u8>, String, Check);

/// The peer messages: `(file, today's bytes, the value as Debug, check)`.
fn messages() -> Vec<(&'static str, Vec<u8>, String, Check)> {
    use crate::types::{decode, encode};
    fn case<T>(value: T) -> Case
    where
        T: serde::Serialize + serde::de::DeserializeOwned + std::fmt::Debug + 'static,
    {
        (
            encode(&value),
            format!("{value:?}"),
            Box::new(|bytes: &[u8]| {
                let decoded: T = decode(bytes).expect("a golden message decodes");
                (format!("{decoded:?}"), encode(&decoded))
            }),
        )
    }
    let append = AppendEntriesRequest::<TypeConfig> {
        vote: Vote::new_committed(3, 0x1111_2222_3333_4444),
        prev_log_id: Some(log_id(3, 41)),
        entries: vec![entries().remove(0).1],
        leader_commit: Some(log_id(3, 40)),
    };
    let cases: Vec<(&'static str, Case)> = vec![
        ("peer-append-entries", case(append)),
        (
            "peer-append-entries-response",
            case(AppendEntriesResponse::<TypeConfig>::Success),
        ),
        ("peer-vote-request", case(vote_request())),
        (
            "peer-vote-response",
            case(VoteResponse::<TypeConfig> {
                vote: Vote::new(4, 0x5555_6666_7777_8888),
                vote_granted: true,
                last_log_id: Some(log_id(3, 42)),
            }),
        ),
        ("peer-propose", case(batch())),
        (
            "peer-membership-change",
            case(MembershipChange::Add {
                id: 0x9999_aaaa_bbbb_cccc,
                member: member("m3", 22380),
                learner: true,
            }),
        ),
        (
            "peer-transfer-step",
            case(TransferStep::StandForElection {
                after_millis: 150,
                for_millis: 2000,
            }),
        ),
        ("peer-hash-kv", case(1234i64)),
        ("peer-propose-answer", case(Ok::<_, ()>(propose_answer()))),
    ];
    cases
        .into_iter()
        .map(|(name, (bytes, debug, check))| (name, bytes, debug, check))
        .collect()
}

fn hex(bytes: &[u8]) -> String {
    let mut s: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    s.push('\n');
    s
}

fn unhex(text: &str) -> Vec<u8> {
    let text = text.trim();
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex"))
        .collect()
}

/// The golden file's bytes, written first when `HARK_WRITE_GOLDEN=1`.
pub(crate) fn golden(name: &str, today: &[u8]) -> Vec<u8> {
    let path = golden_dir().join(format!("{name}.hex"));
    if !path.exists() && std::env::var("HARK_WRITE_GOLDEN").as_deref() == Ok("1") {
        std::fs::create_dir_all(golden_dir()).unwrap();
        std::fs::write(&path, hex(today)).unwrap();
    }
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (HARK_WRITE_GOLDEN=1 writes it)", path.display()));
    unhex(&text)
}

#[test]
fn peer_messages_decode_from_their_golden_files() {
    for (name, today, expected, check) in messages() {
        let golden = golden(name, &today);
        let (decoded, reencoded) = check(&golden);
        assert_eq!(
            decoded, expected,
            "{name}: the golden file holds another value"
        );
        assert_eq!(reencoded, golden, "{name}: re-encoding changed the bytes");
        assert_eq!(
            today, golden,
            "{name}: today's encoding differs from the golden file: a new format version is due"
        );
    }
}

#[test]
fn log_entries_decode_from_their_golden_files() {
    for (name, entry) in entries() {
        let today = crate::types::encode(&entry);
        let golden = golden(name, &today);
        let decoded: Entry = crate::types::decode(&golden).expect("a golden entry decodes");
        assert_eq!(format!("{decoded:?}"), format!("{entry:?}"), "{name}");
        assert_eq!(today, golden, "{name}: a new format version is due");
    }
}
