//! Format versions: of the entries a member keeps in its log, and of the
//! messages it sends its peers. Both are postcard (compact, not
//! self-describing), so a reader must know which types wrote the bytes.
//!
//! * **Log entries** are stored as one version byte, then the entry. A log
//!   store records its format (`log_format` in its state); a store written
//!   before versioning (format 0: bare entries) is rewritten to the current
//!   format, in one atomic write, when a newer build opens it. A store or an
//!   entry in a format newer than this build's is refused, never guessed at:
//!   a downgrade fails at start instead of misreading the log.
//! * **Peer messages** say their format in `Envelope.format`. Format 0 is a
//!   sender from before versioning; its payload is the same as format 1's.
//!   A message newer than this build's format is refused with
//!   `FailedPrecondition` naming both versions.
//!
//! The golden files in `tests/golden/` hold today's encodings; a change to
//! a logged or sent type must bump the format here and keep the old files
//! decoding (see `format_golden.rs`).

use crate::types::{Entry, decode};

/// The log format this build writes: 1, a version byte before each entry.
pub const LOG_FORMAT: u8 = 1;

/// The peer-message format this build sends.
pub const PEER_FORMAT: u32 = 1;

/// Why stored or received bytes were not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FormatError {
    /// Written by a newer Hark: this build must not guess at it.
    Newer { found: u32, supported: u32 },
    /// Not an entry of the format it claims.
    Undecodable(String),
}

impl std::fmt::Display for FormatError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FormatError::Newer { found, supported } => write!(
                f,
                "format {found} is newer than this build's {supported}: run a newer hark"
            ),
            FormatError::Undecodable(e) => write!(f, "undecodable: {e}"),
        }
    }
}

impl std::error::Error for FormatError {}

/// An entry as the log stores it in the current format.
pub fn encode_entry(entry: &Entry) -> Vec<u8> {
    // Encoded straight behind the version byte: every append passes here.
    postcard::to_extend(entry, vec![LOG_FORMAT]).expect("serializing to a Vec cannot fail")
}

/// A stored entry of the current format (its version byte first).
pub fn decode_entry(bytes: &[u8]) -> Result<Entry, FormatError> {
    match bytes.split_first() {
        Some((&LOG_FORMAT, rest)) => {
            decode(rest).map_err(|e| FormatError::Undecodable(e.to_string()))
        }
        Some((&version, _)) if version > LOG_FORMAT => Err(FormatError::Newer {
            found: u32::from(version),
            supported: u32::from(LOG_FORMAT),
        }),
        Some((&version, _)) => Err(FormatError::Undecodable(format!(
            "entry format {version} is not one this build reads"
        ))),
        None => Err(FormatError::Undecodable("an empty entry".into())),
    }
}

/// A stored entry of format 0 (Hark before versioning: the entry alone),
/// as the current format stores it.
pub fn upgrade_format_0_entry(bytes: &[u8]) -> Result<Vec<u8>, FormatError> {
    let entry: Entry = decode(bytes).map_err(|e| FormatError::Undecodable(e.to_string()))?;
    Ok(encode_entry(&entry))
}

/// Whether a peer message of format `format` can be read here.
pub fn check_peer_format(format: u32) -> Result<(), FormatError> {
    if format > PEER_FORMAT {
        return Err(FormatError::Newer {
            found: format,
            supported: PEER_FORMAT,
        });
    }
    Ok(())
}

/// A vote request, as a member of this build or of the openraft 0.9 build
/// sends it: openraft 0.10 added a last field (`leadership_transfer`) that
/// 0.9's requests lack, so theirs is read as a request without it. Still
/// peer format 1: a 0.9 member reads today's requests and stops before the
/// new field.
pub(crate) fn decode_vote_request(
    bytes: &[u8],
) -> Result<openraft::raft::VoteRequest<crate::types::TypeConfig>, postcard::Error> {
    use crate::types::{LogId, Vote, decode};
    decode(bytes).or_else(|_| {
        decode::<(Vote, Option<LogId>)>(bytes)
            .map(|(vote, last_log_id)| openraft::raft::VoteRequest::new(vote, last_log_id))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format_golden::{entries, golden};
    use crate::types::encode;

    /// Today's stored entries are the golden format-0 bytes behind a
    /// version byte, and format-0 bytes (a log written before versioning)
    /// upgrade to exactly them.
    #[test]
    fn golden_format_0_entries_upgrade_and_decode() {
        for (name, entry) in entries() {
            let format_0 = golden(name, &encode(&entry));
            let stored = encode_entry(&entry);
            assert_eq!(stored[0], LOG_FORMAT);
            assert_eq!(stored[1..], format_0[..], "{name}");
            assert_eq!(upgrade_format_0_entry(&format_0).unwrap(), stored, "{name}");
            let decoded = decode_entry(&stored).unwrap();
            assert_eq!(format!("{decoded:?}"), format!("{entry:?}"), "{name}");
        }
    }

    #[test]
    fn newer_formats_are_refused_not_guessed() {
        let (_, entry) = entries().remove(0);
        let mut stored = encode_entry(&entry);
        stored[0] = LOG_FORMAT + 1;
        assert_eq!(
            decode_entry(&stored).unwrap_err(),
            FormatError::Newer {
                found: 2,
                supported: 1
            }
        );
        assert_eq!(
            decode_entry(&stored).unwrap_err().to_string(),
            "format 2 is newer than this build's 1: run a newer hark"
        );
        assert!(matches!(
            decode_entry(&[]).unwrap_err(),
            FormatError::Undecodable(_)
        ));
        assert!(check_peer_format(0).is_ok());
        assert!(check_peer_format(PEER_FORMAT).is_ok());
        assert!(check_peer_format(PEER_FORMAT + 1).is_err());
    }
}
