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
    let origin = request.headers().get(header::ORIGIN);
    let allowed = cors.allowed_origin(origin);
    // A browser sends `Origin` with every cross-origin request, and a
    // "simple" one (a form POST) runs before the browser reads the answer's
    // CORS headers: refuse it here, or any page could write the store.
    if let Some(origin) = origin
        && allowed.is_none()
        && !same_origin(origin, &request)
    {
        return Response::builder()
            .status(StatusCode::FORBIDDEN)
            .header(header::CONTENT_TYPE, "text/plain")
            .body(Body::from(
                "cross-origin request refused: the origin is not in --cors\n",
            ))
            .expect("a valid response");
    }
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

/// Whether `origin` names the host the request was sent to (the web
/// console's own calls).
fn same_origin(origin: &HeaderValue, request: &Request) -> bool {
    let host = request
        .uri()
        .authority()
        .map(|a| a.as_str())
        .or_else(|| request.headers().get(header::HOST)?.to_str().ok());
    let origin_host = origin
        .to_str()
        .ok()
        .and_then(|o| o.split_once("://"))
        .map(|(_, host)| host);
    matches!((origin_host, host), (Some(o), Some(h)) if o.eq_ignore_ascii_case(h))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_origin_is_the_host_asked() {
        let request = |host: &str| {
            Request::builder()
                .uri("/v3/kv/put")
                .header(header::HOST, host)
                .body(Body::empty())
                .unwrap()
        };
        let origin = HeaderValue::from_static("http://127.0.0.1:2379");
        assert!(same_origin(&origin, &request("127.0.0.1:2379")));
        assert!(!same_origin(&origin, &request("127.0.0.1:2380")));
        assert!(!same_origin(
            &HeaderValue::from_static("null"),
            &request("127.0.0.1:2379")
        ));
    }

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
