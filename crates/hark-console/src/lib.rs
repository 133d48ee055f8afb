//! `hark-console`: the web console, served at `/ui/` by the `hark` binary.
//!
//! Plain HTML, CSS and JavaScript modules under `assets/`, embedded in the
//! binary at build time (no Node toolchain to build or run Hark). The pages
//! call Hark only through etcd's JSON gateway (`/v3/*`) on the origin that
//! served them, so the console can do exactly what any HTTP client can, and
//! nothing in this crate touches the store.
//!
//! Every answer carries a strict Content-Security-Policy: scripts only from
//! this origin, no inline script, no plugins, no framing. The pages render
//! keys and values as text (never as markup), so a key holding HTML shows
//! as the characters it is.

use axum::Router;
use axum::extract::Path;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use http::{HeaderValue, StatusCode, header};

/// One embedded file: its name under `/ui/`, its media type and bytes.
struct Asset {
    name: &'static str,
    media_type: &'static str,
    body: &'static str,
}

/// An asset of `assets/` by its file name, embedded at build time.
macro_rules! asset {
    ($name:literal, $media_type:literal) => {
        Asset {
            name: $name,
            media_type: $media_type,
            body: include_str!(concat!("../assets/", $name)),
        }
    };
}

const INDEX: Asset = asset!("index.html", "text/html; charset=utf-8");

const ASSETS: &[Asset] = &[
    INDEX,
    asset!("console.css", "text/css; charset=utf-8"),
    asset!("console.js", "text/javascript; charset=utf-8"),
    asset!("dom.js", "text/javascript; charset=utf-8"),
    asset!("gateway.js", "text/javascript; charset=utf-8"),
    asset!("keys.js", "text/javascript; charset=utf-8"),
    asset!("history.js", "text/javascript; charset=utf-8"),
    asset!("watch.js", "text/javascript; charset=utf-8"),
    asset!("health.js", "text/javascript; charset=utf-8"),
];

/// Scripts, styles, images and requests only from this origin; nothing
/// inline, no plugins, and no other site may frame the console.
/// Trusted Types with no policy: the browser refuses every HTML sink
/// (`innerHTML` and kin), so the pages can only set text.
const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self'; img-src 'self' data:; connect-src 'self'; \
     base-uri 'none'; form-action 'none'; frame-ancestors 'none'; \
     require-trusted-types-for 'script'; trusted-types 'none'";

/// The console's routes: `/ui` (redirected), `/ui/` and its assets.
pub fn routes() -> Router {
    Router::new()
        .route("/ui", get(|| async { Redirect::permanent("/ui/") }))
        .route("/ui/", get(|| async { serve(&INDEX) }))
        .route("/ui/{name}", get(asset))
}

async fn asset(Path(name): Path<String>) -> Response {
    match ASSETS.iter().find(|a| a.name == name) {
        Some(asset) => serve(asset),
        None => (StatusCode::NOT_FOUND, "no such page\n").into_response(),
    }
}

fn serve(asset: &Asset) -> Response {
    let mut response = asset.body.into_response();
    let headers = response.headers_mut();
    for (name, value) in [
        (header::CONTENT_TYPE, asset.media_type),
        (header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::REFERRER_POLICY, "no-referrer"),
        // Assets change with the binary; a browser checks before reusing.
        (header::CACHE_CONTROL, "no-cache"),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;
    use tower::ServiceExt;

    async fn get(path: &str) -> (StatusCode, http::HeaderMap, String) {
        let request = http::Request::get(path)
            .body(axum::body::Body::empty())
            .unwrap();
        let response = routes().oneshot(request).await.unwrap();
        let (parts, body) = response.into_parts();
        let body = body.collect().await.unwrap().to_bytes();
        (
            parts.status,
            parts.headers,
            String::from_utf8(body.to_vec()).unwrap(),
        )
    }

    #[tokio::test]
    async fn every_asset_is_served_with_its_type_and_the_policy() {
        for asset in ASSETS {
            let (status, headers, body) = get(&format!("/ui/{}", asset.name)).await;
            assert_eq!(status, StatusCode::OK, "{}", asset.name);
            assert_eq!(headers[header::CONTENT_TYPE], asset.media_type);
            assert_eq!(
                headers[header::CONTENT_SECURITY_POLICY],
                CONTENT_SECURITY_POLICY
            );
            assert_eq!(headers[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
            assert_eq!(body, asset.body);
        }
        let (status, _, body) = get("/ui/").await;
        assert_eq!(status, StatusCode::OK);
        assert!(body.contains("<script type=\"module\" src=\"console.js\">"));
    }

    #[tokio::test]
    async fn unknown_pages_are_not_found_and_ui_redirects() {
        let (status, _, _) = get("/ui/nothing.js").await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        let (status, headers, _) = get("/ui").await;
        assert_eq!(status, StatusCode::PERMANENT_REDIRECT);
        assert_eq!(headers[header::LOCATION], "/ui/");
    }

    /// The pages load nothing from elsewhere and run no inline script: every
    /// script tag names a file served here.
    #[test]
    fn pages_use_only_their_own_files() {
        for asset in ASSETS {
            // The one address a page may name: SVG's namespace, which is
            // an identifier, never fetched.
            let body = asset.body.replace("\"http://www.w3.org/2000/svg\"", "");
            for needle in [
                "http://",
                "https://",
                "javascript:",
                "onclick=",
                "innerHTML",
            ] {
                assert!(!body.contains(needle), "{} contains {needle:?}", asset.name);
            }
        }
        // Every module a script imports is served too.
        for asset in ASSETS {
            for import in asset.body.split("from \"./").skip(1) {
                let name = import.split('"').next().unwrap();
                assert!(
                    ASSETS.iter().any(|a| a.name == name),
                    "{} imports {name}, which is not served",
                    asset.name
                );
            }
        }
        for src in INDEX.body.split("src=\"").skip(1) {
            let name = src.split('"').next().unwrap();
            assert!(
                ASSETS.iter().any(|a| a.name == name),
                "{name} is not served"
            );
        }
    }
}
