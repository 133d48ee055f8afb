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
        .get_or_init(|| match crate::server_metrics::configure(PrometheusBuilder::new())
            .install_recorder()
        {
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
            get({
                let node = node.clone();
                move || {
                    if let Ok(node) = node.get() {
                        crate::server_metrics::refresh(&node);
                    }
                    let body = metrics.as_ref().map(|h| h.render()).unwrap_or_default();
                    async move { ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], body) }
                }
            }),
        )
        .route(
            "/health",
            get(move |uri: axum::http::Uri| health(node.clone(), HealthQuery::parse(uri.query()))),
        )
}

/// etcd's `/health`: unhealthy while an alarm is raised (except those named
/// in `?exclude=`), else healthy when the member can serve a read.
async fn health(node: NodeHandle, query: HealthQuery) -> impl IntoResponse {
    // etcd writes the JSON with Go's http.Error (text/plain, a trailing
    // newline) on failure, and lets Go sniff the type on success.
    let text = || [(header::CONTENT_TYPE, "text/plain; charset=utf-8")];
    let unhealthy = |reason: String| {
        metrics::counter!("etcd_server_health_failures").increment(1);
        (
            StatusCode::SERVICE_UNAVAILABLE,
            text(),
            serde_json::json!({"health": "false", "reason": reason}).to_string() + "\n",
        )
    };
    let node = match node.get() {
        Ok(node) => node,
        Err(s) => return unhealthy(s.message().to_string()),
    };
    let excluded: Vec<&str> = query.exclude.iter().map(String::as_str).collect();
    if let Some(alarm) = node
        .store
        .alarms()
        .into_iter()
        .find(|a| !excluded.contains(&a.kind.name()))
    {
        return unhealthy(format!("ALARM {}", alarm.kind.name()));
    }
    match node.store.range(&hark_mvcc::RangeRequest::key("health")) {
        Ok(_) => {
            metrics::counter!("etcd_server_health_success").increment(1);
            (
                StatusCode::OK,
                text(),
                r#"{"health":"true","reason":""}"#.to_string(),
            )
        }
        Err(e) => unhealthy(format!("RANGE ERROR:{e}")),
    }
}

/// `/health`'s query: `exclude=NOSPACE` (repeatable) ignores that alarm.
#[derive(Debug, Default)]
struct HealthQuery {
    exclude: Vec<String>,
}

impl HealthQuery {
    fn parse(query: Option<&str>) -> HealthQuery {
        let exclude = query
            .unwrap_or("")
            .split('&')
            .filter_map(|pair| pair.strip_prefix("exclude="))
            .map(str::to_string)
            .collect();
        HealthQuery { exclude }
    }
}
