//! What a Consul request says besides its path: its query string and the
//! etcd token it carries.

use std::time::Duration;

use axum::extract::FromRequestParts;
use http::{HeaderMap, Uri};

/// Consul's default blocking wait.
const DEFAULT_WAIT: Duration = Duration::from_secs(5 * 60);
/// Consul's longest blocking wait.
const MAX_WAIT: Duration = Duration::from_secs(10 * 60);

/// The caller's etcd token, as Consul clients send theirs:
/// `X-Consul-Token`, `Authorization: Bearer <token>`, or `?token=`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct Token(pub(crate) Option<String>);

impl Token {
    fn of(headers: &HeaderMap, uri: &Uri) -> Token {
        let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
        let token = header("x-consul-token")
            .or_else(|| header("authorization").and_then(|a| a.strip_prefix("Bearer ")))
            .map(str::to_owned)
            .or_else(|| Query::of(uri).get("token").map(str::to_owned))
            .filter(|t| !t.is_empty());
        Token(token)
    }

    /// `message` as a gRPC request carrying the token (etcd's `token`
    /// metadata).
    pub(crate) fn request<T>(&self, message: T) -> tonic::Request<T> {
        let mut request = tonic::Request::new(message);
        if let Some(value) = self
            .0
            .as_deref()
            .and_then(|t| tonic::metadata::MetadataValue::try_from(t).ok())
        {
            request.metadata_mut().insert("token", value);
        }
        request
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Token {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut http::request::Parts,
        _: &S,
    ) -> Result<Self, Self::Rejection> {
        Ok(Token::of(&parts.headers, &parts.uri))
    }
}

/// The query string's parameters, percent-decoded; a flag without `=` has
/// an empty value.
#[derive(Debug, Default)]
pub(super) struct Query(Vec<(String, String)>);

impl Query {
    pub(super) fn of(uri: &Uri) -> Query {
        let decode = |s: &str| {
            percent_encoding::percent_decode_str(&s.replace('+', " "))
                .decode_utf8_lossy()
                .into_owned()
        };
        Query(
            uri.query()
                .unwrap_or("")
                .split('&')
                .filter(|p| !p.is_empty())
                .map(|p| match p.split_once('=') {
                    Some((k, v)) => (decode(k), decode(v)),
                    None => (decode(p), String::new()),
                })
                .collect(),
        )
    }

    pub(super) fn has(&self, name: &str) -> bool {
        self.0.iter().any(|(k, _)| k == name)
    }

    pub(super) fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// A number parameter; a malformed one is a 400 with this message.
    pub(super) fn number(&self, name: &str) -> Result<Option<u64>, String> {
        match self.get(name) {
            None => Ok(None),
            Some(v) => v
                .parse()
                .map(Some)
                .map_err(|_| format!("Invalid {name}: {v:?}")),
        }
    }

    /// `?wait`, as Consul takes it: a Go duration, capped at the maximum;
    /// the default when absent, zero or negative (Go parses `-5s`, and
    /// Consul then waits its default); 400 when Go would not parse it
    /// (junk, or past Go's ~292 years).
    pub(super) fn wait(&self) -> Result<Duration, String> {
        let invalid = || "Invalid wait time".to_string();
        let text = match self.get("wait") {
            None | Some("") => return Ok(DEFAULT_WAIT),
            Some(text) => text,
        };
        // Go takes one sign; the duration parser takes `+` only.
        let (negative, magnitude) = match text.strip_prefix('-') {
            Some(rest) if rest.starts_with('+') => return Err(invalid()),
            Some(rest) => (true, rest),
            None => (false, text),
        };
        match hark_proto::go_duration::parse(magnitude) {
            Ok(_) if negative => Ok(DEFAULT_WAIT),
            Ok(Duration::ZERO) => Ok(DEFAULT_WAIT),
            Ok(wait) => Ok(wait.min(MAX_WAIT)),
            Err(_) => Err(invalid()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_are_go_durations() {
        let wait =
            |w: &str| Query::of(&format!("/v1/kv/k?wait={w}").parse::<Uri>().unwrap()).wait();
        assert_eq!(wait("1m30s"), Ok(Duration::from_secs(90)));
        assert_eq!(wait("10"), Err("Invalid wait time".to_string()));
        assert!(wait(&format!("{}h", "9".repeat(400))).is_err());
    }

    #[test]
    fn wait_defaults_to_five_minutes_and_is_capped_at_ten() {
        let query = |q: &str| Query::of(&format!("/v1/kv/a?{q}").parse::<Uri>().unwrap());
        assert_eq!(query("index=3").wait().unwrap(), DEFAULT_WAIT);
        assert_eq!(query("wait=2s").wait().unwrap(), Duration::from_secs(2));
        assert_eq!(query("wait=1h").wait().unwrap(), MAX_WAIT);
        assert_eq!(query("wait=0").wait().unwrap(), DEFAULT_WAIT);
        assert_eq!(query("wait=0s").wait().unwrap(), DEFAULT_WAIT);
        // Past Go's range: Consul answers 400, as here.
        assert!(query("wait=100000000000000000000s").wait().is_err());
        assert!(query("wait=2562048h").wait().is_err());
        assert_eq!(query("wait=2562047h").wait().unwrap(), MAX_WAIT);
        assert!(query("wait=soon").wait().is_err());
        // Go parses a negative wait, and Consul then waits its default.
        assert_eq!(query("wait=-5s").wait().unwrap(), DEFAULT_WAIT);
        assert_eq!(query("wait=-0").wait().unwrap(), DEFAULT_WAIT);
        assert_eq!(query("wait=%2B5s").wait().unwrap(), Duration::from_secs(5));
        for junk in [
            "-", "-+5s", "+-5s", "--5s", "-5", "5s-", "1e9s", "NaNs", "infh", "%20", "5%00s",
        ] {
            assert!(query(&format!("wait={junk}")).wait().is_err(), "{junk}");
        }
        assert!(query("index=x").number("index").is_err());
        assert_eq!(query("keys&separator=%2F").get("separator"), Some("/"));
        assert!(query("recurse").has("recurse"));
    }
}
