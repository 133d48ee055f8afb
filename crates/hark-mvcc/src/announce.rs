//! Announcements: messages for the layers above that travel the write path
//! (and so the replicated log) but change nothing stored and take no
//! revision. Every member's store hands each one, in log order, to the
//! listeners registered for its topic. etcd's Authenticate entry is the
//! model: it carries a new simple token through raft so that every member,
//! not only the one that checked the password, knows it.

use bytes::Bytes;

use crate::records::{RecordChange, RecordGuard, RecordsRequest};
use crate::request::WriteRequest;

/// The records bucket announcements travel under; nothing is ever stored in
/// it. On the log an announcement is a records change of this bucket
/// guarded by a value the bucket never holds: a member of a build before
/// announcements decodes it as an ordinary records change, finds the guard
/// false and changes nothing (it just does not hear it), while a member
/// that knows announcements hands it to its listeners and stores nothing.
/// A request variant of its own would need a new log format, which members
/// of the previous build refuse, stalling a rolling upgrade.
pub const ANNOUNCEMENT_BUCKET: &str = "hark.announcement";

/// Longest topic name (the layers above name topics, never clients).
pub const MAX_ANNOUNCEMENT_TOPIC_LEN: usize = 255;
/// Largest announcement body: room for a user name of bbolt's longest key
/// (32 KiB) and what goes with it, nothing like a client's payload.
pub const MAX_ANNOUNCEMENT_BODY_LEN: usize = 64 * 1024;

/// A message every member takes in log order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Announcement {
    /// Who listens (see [`crate::Store::listen`]).
    pub topic: String,
    /// What the listeners of the topic make of it.
    pub body: Bytes,
}

impl Announcement {
    /// The write that carries it through the log. Its answer is a
    /// [`crate::RecordsResponse`] whose `applied` says whether a listener of
    /// this member took it (a member that does not listen to the topic
    /// drops it).
    pub fn into_request(self) -> WriteRequest {
        WriteRequest::Records(RecordsRequest {
            guards: vec![RecordGuard {
                bucket: ANNOUNCEMENT_BUCKET.to_owned(),
                key: Bytes::from(self.topic.clone().into_bytes()),
                expected: Some(self.body.clone()),
            }],
            changes: vec![RecordChange::Put {
                bucket: ANNOUNCEMENT_BUCKET.to_owned(),
                key: Bytes::from(self.topic.into_bytes()),
                value: self.body,
            }],
        })
    }

    /// The announcement a records change carries, if it is one.
    pub fn carried_by(req: &RecordsRequest) -> Option<Announcement> {
        let [guard] = req.guards.as_slice() else {
            return None;
        };
        let [RecordChange::Put { bucket, key, value }] = req.changes.as_slice() else {
            return None;
        };
        let announced = guard.bucket == ANNOUNCEMENT_BUCKET
            && *bucket == ANNOUNCEMENT_BUCKET
            && guard.key == key
            && guard.expected.as_ref() == Some(value);
        let topic = std::str::from_utf8(key).ok()?;
        announced.then(|| Announcement {
            topic: topic.to_owned(),
            body: value.clone(),
        })
    }

    /// Whether a records change touches the announcement bucket (only an
    /// announcement may).
    pub(crate) fn touches_bucket(req: &RecordsRequest) -> bool {
        let changes = req.changes.iter().map(|c| match c {
            RecordChange::Put { bucket, .. } | RecordChange::Delete { bucket, .. } => bucket,
        });
        req.guards
            .iter()
            .map(|g| &g.bucket)
            .chain(changes)
            .any(|b| b == ANNOUNCEMENT_BUCKET)
    }
}

/// What a listener does with an announcement's body. Called on the store's
/// committer thread, in log order: it must be quick and must not wait on
/// the store.
pub type Listener = std::sync::Arc<dyn Fn(&Bytes) + Send + Sync>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Store, WriteResponse};

    fn announcement(topic: &str, body: &[u8]) -> Announcement {
        Announcement {
            topic: topic.into(),
            body: Bytes::copy_from_slice(body),
        }
    }

    /// Heard in log order by the topic's listener, stored nowhere; nothing
    /// else may touch the bucket, and the bounds hold before the log.
    #[test]
    fn announcements_reach_their_listener_and_store_nothing() {
        let store = Store::in_memory();
        let heard = std::sync::Arc::new(parking_lot::Mutex::new(Vec::new()));
        let sink = heard.clone();
        store.listen(
            "t",
            std::sync::Arc::new(move |b| sink.lock().push(b.clone())),
        );
        let generation = store.records_generation();
        for body in [&b"one"[..], b"two"] {
            match store.apply_blocking(announcement("t", body).into_request()) {
                Ok(WriteResponse::Records(r)) => assert!(r.applied),
                other => panic!("{other:?}"),
            }
        }
        match store.apply_blocking(announcement("other", b"x").into_request()) {
            Ok(WriteResponse::Records(r)) => assert!(!r.applied, "nobody listens"),
            other => panic!("{other:?}"),
        }
        assert_eq!(*heard.lock(), vec![Bytes::from("one"), Bytes::from("two")]);
        assert_eq!(store.records_generation(), generation, "no record changed");
        assert!(store.records(ANNOUNCEMENT_BUCKET).is_empty());

        // A plain records change of the bucket is refused.
        let plain = RecordsRequest {
            guards: Vec::new(),
            changes: vec![RecordChange::Put {
                bucket: ANNOUNCEMENT_BUCKET.into(),
                key: Bytes::from_static(b"t"),
                value: Bytes::from_static(b"v"),
            }],
        };
        assert!(Announcement::carried_by(&plain).is_none());
        assert_eq!(
            store
                .apply_blocking(WriteRequest::Records(plain))
                .unwrap_err(),
            crate::Error::InvalidBucket
        );
        let big = vec![0u8; MAX_ANNOUNCEMENT_BODY_LEN + 1];
        assert!(matches!(
            store.validate(&announcement("t", &big).into_request()),
            Err(crate::Error::InvalidArgument(_))
        ));
        assert!(
            store
                .validate(&announcement("", b"x").into_request())
                .is_err()
        );
        let a = announcement("t", b"body");
        let WriteRequest::Records(r) = a.clone().into_request() else {
            unreachable!()
        };
        assert_eq!(Announcement::carried_by(&r), Some(a));
    }
}
