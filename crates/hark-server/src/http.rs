//! Plain HTTP next to gRPC: `GET /metrics` (Prometheus text) and `GET /health`,
//! on the client port and on `--listen-metrics-urls`.

use std::sync::OnceLock;

use axum::Router;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};

use crate::node::NodeHandle;

/// The process-wide Prometheus recorder (a process has one metrics recorder).
/// `None` if something else installed a recorder first.
pub fn prometheus() -> Option<PrometheusHandle> {
    static HANDLE: OnceLock<Option<PrometheusHandle>> = OnceLock::new();
    HANDLE
        .get_or_init(|| match PrometheusBuilder::new().install_recorder() {
            Ok(handle) => Some(handle),
            Err(e) => {
                tracing::warn!(error = %e, "metrics recorder not installed; /metrics will be empty");
                None
            }
        })
        .clone()
}

pub fn routes(node: NodeHandle) -> Router {
    let metrics = prometheus();
    Router::new()
        .route(
            "/metrics",
            get(move || {
                let body = metrics.as_ref().map(|h| h.render()).unwrap_or_default();
                async move { ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], body) }
            }),
        )
        .route("/health", get(move || health(node.clone())))
}

/// etcd's `/health`: healthy when the member can serve a read.
async fn health(node: NodeHandle) -> impl IntoResponse {
    let read = node
        .get()
        .map_err(|s| s.message().to_string())
        .and_then(|node| {
            node.store
                .range(&hark_mvcc::RangeRequest::key("health"))
                .map_err(|e| e.to_string())
        });
    let json = [(header::CONTENT_TYPE, "application/json")];
    match read {
        Ok(_) => (StatusCode::OK, json, r#"{"health":"true"}"#.to_string()),
        Err(e) => (
            StatusCode::SERVICE_UNAVAILABLE,
            json,
            serde_json::json!({"health": "false", "reason": e}).to_string(),
        ),
    }
}
