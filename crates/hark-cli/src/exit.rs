//! How a command ends: etcdctl's exit codes and its error lines.

use crate::json;

/// etcdctl's exit codes.
pub const EXIT_ERROR: i32 = 1;
pub const EXIT_BAD_CONNECTION: i32 = 2;
pub const EXIT_INVALID_INPUT: i32 = 3;
pub const EXIT_BAD_FEATURE: i32 = 4;
pub const EXIT_INTERRUPTED: i32 = 5;
pub const EXIT_BAD_ARGS: i32 = 128;

/// A failure that ends the command: `Error: <message>` on stderr, then `code`.
#[derive(Debug)]
pub struct Exit {
    pub(crate) code: i32,
    pub(crate) message: Option<String>,
}

impl Exit {
    pub fn new(code: i32, message: impl Into<String>) -> Exit {
        Exit {
            code,
            message: Some(message.into()),
        }
    }

    pub(crate) fn silent(code: i32) -> Exit {
        Exit {
            code,
            message: None,
        }
    }
}

impl From<hark_client::Error> for Exit {
    fn from(e: hark_client::Error) -> Exit {
        // No connection at all (refused, unreachable, TLS handshake or
        // certificate refused): etcdctl's client retries such failures
        // until its deadline and then says only "context deadline
        // exceeded", with the reason in a JSON log line on stderr. harkctl
        // fails at once, in the same words. Other failures are reported as
        // they are.
        if let hark_client::Error::Status(status) = &e
            && let Some(source) = std::error::Error::source(status)
            && never_connected(source)
        {
            let mut reason = status.message().to_string();
            let mut cause = Some(source);
            while let Some(c) = cause {
                // Layers often repeat their inner error's text.
                let text = c.to_string();
                if !reason.contains(&text) {
                    reason = format!("{reason}: {text}");
                }
                cause = c.source();
            }
            let line = json::Obj::new()
                .str_nz("level", "warn")
                .str_nz("logger", "harkctl")
                .str_nz("msg", "no connection to the endpoint")
                .str_nz("error", &reason)
                .end();
            eprintln!("{line}");
            return Exit::new(EXIT_ERROR, "context deadline exceeded");
        }
        Exit::new(EXIT_ERROR, e.to_string())
    }
}

/// Whether a transport error means no connection was made (or TLS refused
/// it): refused, unreachable, timed out, not resolved, or a TLS failure
/// (rustls reports those as invalid data). Under TLS 1.3 a server that
/// refuses the client's certificate does so after the client's handshake
/// is over: the client sees its first write fail (broken pipe, reset)
/// unless the alert is read first. Those count too: every harkctl command
/// opens a fresh connection, so its first call breaking that way means the
/// server would not take it (an established connection that breaks
/// mid-call reads the same, and is rare for a one-shot command).
fn never_connected(error: &(dyn std::error::Error + 'static)) -> bool {
    use std::io::ErrorKind::*;
    let mut cause = Some(error);
    while let Some(c) = cause {
        if let Some(io) = c.downcast_ref::<std::io::Error>()
            && matches!(
                io.kind(),
                ConnectionRefused
                    | TimedOut
                    | AddrNotAvailable
                    | HostUnreachable
                    | NetworkUnreachable
                    | InvalidData
                    | BrokenPipe
                    | ConnectionReset
                    | ConnectionAborted
            )
        {
            return true;
        }
        // Not io::Errors: the resolver's, and hyper's for a connection
        // that closed before answering (the third way a TLS refusal shows).
        let text = c.to_string();
        if text.starts_with("dns error") || text.contains("connection closed") {
            return true;
        }
        cause = c.source();
    }
    false
}

pub type Outcome = Result<(), Exit>;

/// How Go's strconv reports a parse failure (`func`: ParseInt or ParseUint).
pub(crate) fn go_parse_error(func: &str, input: &str, e: &std::num::ParseIntError) -> String {
    let why = match e.kind() {
        std::num::IntErrorKind::PosOverflow | std::num::IntErrorKind::NegOverflow => {
            "value out of range"
        }
        _ => "invalid syntax",
    };
    format!("strconv.{func}: parsing {input:?}: {why}")
}
