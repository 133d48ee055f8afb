//! grpc-go's answer to a request message over the receive limit:
//! `RESOURCE_EXHAUSTED`, "grpc: received message larger than max (N vs. M)".
//! tonic refuses the same message with `OUT_OF_RANGE` and words of its own;
//! etcd's clients and tests expect grpc-go's, so the status is rewritten on
//! the way out.

use http::HeaderMap;
use tonic::{Code, Status};

/// Rewrites tonic's oversized-message status (a trailers-only response,
/// so the status is in the headers) into grpc-go's; leaves any other
/// response alone ([`crate::transport::wire_edits`] calls it on every response).
pub fn as_grpc_go(headers: &mut HeaderMap) {
    let Some(status) = Status::from_header_map(headers) else {
        return;
    };
    if status.code() != Code::OutOfRange {
        return;
    }
    if let Some(message) = grpc_go_message(status.message()) {
        headers.remove("grpc-message");
        // Only fails for a message that cannot be a header, which this is not.
        let _ = Status::resource_exhausted(message).add_header(headers);
    }
}

/// What a stream's receive error means: `None` when the client went away
/// (tonic reports its reset as `Cancelled`, a broken connection as
/// `Unknown`); otherwise the status the stream ends with, as grpc-go's
/// server returns it (an oversized message as `RESOURCE_EXHAUSTED`).
pub fn stream_receive_error(status: Status) -> Option<Status> {
    match status.code() {
        Code::Cancelled | Code::Unknown => None,
        Code::OutOfRange => Some(match grpc_go_message(status.message()) {
            Some(message) => Status::resource_exhausted(message),
            None => status,
        }),
        _ => Some(status),
    }
}

fn grpc_go_message(tonic_message: &str) -> Option<String> {
    let rest = tonic_message.strip_prefix("Error, decoded message length too large: found ")?;
    let (found, rest) = rest.split_once(" bytes, the limit is: ")?;
    let limit = rest.strip_suffix(" bytes")?;
    Some(format!(
        "grpc: received message larger than max ({found} vs. {limit})"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewrites_only_the_size_message() {
        assert_eq!(
            grpc_go_message(
                "Error, decoded message length too large: found 2097200 bytes, the limit is: 2097152 bytes"
            )
            .as_deref(),
            Some("grpc: received message larger than max (2097200 vs. 2097152)")
        );
        assert_eq!(
            grpc_go_message("etcdserver: mvcc: required revision is a future revision"),
            None
        );
    }
}
