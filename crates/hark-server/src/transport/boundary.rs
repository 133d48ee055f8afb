//! The identity boundary: every request that arrives on any listener —
//! client, client-HTTP, metrics or peer port, gRPC or HTTP/1 or HTTP/2, any
//! route — loses every header Hark uses internally (`hark-internal-*`)
//! before anything routes it. Only code behind this layer sets them (the
//! client certificate's name, from the connection: [`crate::transport::wire_edits`]),
//! so a client can never name itself, and a route added later cannot forget
//! the check: it is on the listener, not on the routes.

use std::task::{Context, Poll};

use tower::{Layer, Service};

/// The prefix of every header name Hark sets for itself.
pub const INTERNAL_HEADER_PREFIX: &str = "hark-internal-";

/// Wraps a listener's whole service in [`IdentityBoundary`].
#[derive(Clone, Copy, Debug, Default)]
pub struct IdentityBoundaryLayer;

impl<S> Layer<S> for IdentityBoundaryLayer {
    type Service = IdentityBoundary<S>;

    fn layer(&self, inner: S) -> IdentityBoundary<S> {
        IdentityBoundary { inner }
    }
}

/// See the module documentation.
#[derive(Clone, Debug)]
pub struct IdentityBoundary<S> {
    inner: S,
}

impl<S, B> Service<http::Request<B>> for IdentityBoundary<S>
where
    S: Service<http::Request<B>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: http::Request<B>) -> S::Future {
        strip_internal_headers(request.headers_mut());
        self.inner.call(request)
    }
}

/// Removes every `hark-internal-*` header (names arrive lower-case).
pub fn strip_internal_headers(headers: &mut http::HeaderMap) {
    // Nothing is allocated unless a client sent one.
    while let Some(name) = headers
        .keys()
        .find(|name| name.as_str().starts_with(INTERNAL_HEADER_PREFIX))
        .cloned()
    {
        headers.remove(&name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_internal_header_goes_and_nothing_else() {
        let mut headers = http::HeaderMap::new();
        headers.insert("hark-internal-client-cn", "root".parse().unwrap());
        headers.append("hark-internal-client-cn", "root2".parse().unwrap());
        headers.insert("hark-internal-future", "x".parse().unwrap());
        headers.insert("Hark-Internal-Upper", "x".parse().unwrap());
        headers.insert("token", "t".parse().unwrap());
        headers.insert("hark-public", "p".parse().unwrap());
        strip_internal_headers(&mut headers);
        let mut left: Vec<&str> = headers.keys().map(|k| k.as_str()).collect();
        left.sort();
        assert_eq!(left, ["hark-public", "token"]);
    }
}
