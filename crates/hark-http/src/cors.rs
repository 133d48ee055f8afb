//! etcd's `--cors`: which browser origins may call the HTTP endpoints.

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::{Next, from_fn_with_state};
use axum::response::Response;
use http::{HeaderValue, Method, StatusCode, header};

/// Allowed origins (etcd's `--cors`, comma-separated; `*` allows every
/// origin, which is etcd's default).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cors {
    origins: Arc<[String]>,
}

impl Cors {
    /// From the flag's value, e.g. `*` or `https://a.example,https://b.example`.
    pub fn parse(flag: &str) -> Cors {
        let origins = flag
            .split(',')
            .map(str::trim)
            .filter(|o| !o.is_empty())
            .map(str::to_string)
            .collect();
        Cors { origins }
    }

    fn allows(&self, origin: &str) -> bool {
        self.origins.iter().any(|o| o == origin)
    }

    /// The `Access-Control-Allow-Origin` a request from `origin` gets.
    fn allowed_origin(&self, origin: Option<&HeaderValue>) -> Option<HeaderValue> {
        if self.allows("*") {
            return Some(HeaderValue::from_static("*"));
        }
        let origin = origin?;
        self.allows(origin.to_str().ok()?).then(|| origin.clone())
    }

    /// `router` with etcd's CORS headers on every response, and `OPTIONS`
    /// (a browser's preflight) answered 200 without reaching it.
    pub fn apply(self, router: Router) -> Router {
        router.layer(from_fn_with_state(self, cors))
    }
}

async fn cors(State(cors): State<Cors>, request: Request, next: Next) -> Response {
    let allowed = cors.allowed_origin(request.headers().get(header::ORIGIN));
    let mut response = if request.method() == Method::OPTIONS {
        Response::builder()
            .status(StatusCode::OK)
            .body(Body::empty())
            .expect("a valid response")
    } else {
        next.run(request).await
    };
    if let Some(origin) = allowed {
        let headers = response.headers_mut();
        headers.insert(
            header::ACCESS_CONTROL_ALLOW_METHODS,
            HeaderValue::from_static("POST, GET, OPTIONS, PUT, DELETE"),
        );
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        headers.insert(
            header::ACCESS_CONTROL_ALLOW_HEADERS,
            HeaderValue::from_static("accept, content-type, authorization"),
        );
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_star_allows_every_origin_and_a_list_only_its_own() {
        let any = Cors::parse("*");
        assert_eq!(any.allowed_origin(None).unwrap(), "*");
        let listed = Cors::parse("https://a.example, https://b.example");
        let b = HeaderValue::from_static("https://b.example");
        assert_eq!(listed.allowed_origin(Some(&b)).unwrap(), b);
        let c = HeaderValue::from_static("https://c.example");
        assert_eq!(listed.allowed_origin(Some(&c)), None);
        assert_eq!(listed.allowed_origin(None), None);
        assert_eq!(Cors::parse("").allowed_origin(None), None);
    }
}
