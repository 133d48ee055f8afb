//! Plain HTTP next to gRPC: `GET /metrics` (Prometheus text), `GET /health`
//! and the probes `/livez` and `/readyz`, on the client port and on
//! `--listen-metrics-urls`; and Hark's `GET /debug/watch/streams`, the watch
//! streams with the deepest queues (the web console's Health page).

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
        .get_or_init(|| match crate::ops::metrics::configure(PrometheusBuilder::new())
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

/// Which listener the routes serve: key prefixes (`hark_prefix_*`) appear
/// only on a client listener, which asks for what the data asks for
/// (client certificates under `--client-cert-auth`); never on
/// `--listen-metrics-urls`, which asks nobody, as etcd's metrics name no key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listener {
    Client,
    Metrics,
}

pub fn routes(node: NodeHandle, listener: Listener) -> Router {
    let metrics = prometheus();
    Router::new()
        .route(
            "/metrics",
            get({
                let node = node.clone();
                move || {
                    let scrape = crate::ops::runtime_metrics::Scrape::start();
                    let node = node.get().ok();
                    if let Some(node) = &node {
                        crate::ops::metrics::refresh(node);
                    }
                    let mut body = metrics
                        .as_ref()
                        .map(|h| crate::ops::metrics::with_sorted_labels(&h.render()))
                        .unwrap_or_default();
                    if let Some(node) = &node
                        && listener == Listener::Client
                    {
                        body.push_str(&crate::ops::metrics::prefix_usage_text(node));
                    }
                    drop(scrape);
                    async move { ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], body) }
                }
            }),
        )
        .route(
            "/health",
            get({
                let node = node.clone();
                move |uri: axum::http::Uri| health(node.clone(), HealthQuery::parse(uri.query()))
            }),
        )
        .route("/debug/vars", get(debug_vars))
        .route(
            "/debug/watch/streams",
            get({
                let node = node.clone();
                // One report at a time: each is a pass over every stream on
                // the engine's thread.
                let one = std::sync::Arc::new(tokio::sync::Mutex::new(()));
                move |headers: axum::http::HeaderMap| {
                    let (node, one) = (node.clone(), one.clone());
                    async move {
                        let _one = one.lock().await;
                        watch_streams(node, headers).await
                    }
                }
            }),
        )
        .route(
            "/livez",
            get({
                let node = node.clone();
                move |uri: axum::http::Uri| {
                    probe(node.clone(), Probe::Livez, HealthQuery::parse(uri.query()))
                }
            }),
        )
        .route(
            "/readyz",
            get(move |uri: axum::http::Uri| {
                probe(node.clone(), Probe::Readyz, HealthQuery::parse(uri.query()))
            }),
        )
}

/// etcd's `/debug/vars` (Go's expvar): a JSON object with the command line
/// and memory figures. Tools and etcd's own tests read it as JSON; Hark's
/// `memstats` has what a Rust process can say truthfully: `Sys`, the
/// resident set in bytes.
async fn debug_vars() -> impl IntoResponse {
    let cmdline: Vec<String> = std::env::args().collect();
    // SAFETY: sysconf reads a constant of the system.
    let page = u64::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096);
    let resident = std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| pages * page);
    let body = serde_json::json!({
        "cmdline": cmdline,
        "memstats": { "Sys": resident },
    });
    (
        [(header::CONTENT_TYPE, "application/json; charset=utf-8")],
        body.to_string(),
    )
}

/// Streams listed by `/debug/watch/streams`.
const STREAMS_SHOWN: usize = 20;

/// The watch streams with the deepest queues, as JSON: `{"streams": N,
/// "deepest": [{stream, client, watchers, unsynced, victims,
/// queued_responses, queued_events, queued_bytes}, ...]}`, at most
/// [`STREAMS_SHOWN`] of them. Under auth only root may look (it names
/// clients' addresses, as etcd's maintenance calls need root); 503 if the
/// member or its engine does not answer.
async fn watch_streams(
    handle: NodeHandle,
    headers: axum::http::HeaderMap,
) -> axum::response::Response {
    let metadata = tonic::metadata::MetadataMap::from_headers(headers);
    if let Err(s) =
        crate::grpc::access::require(&handle, &metadata, crate::grpc::access::Needs::Admin)
    {
        let status = match s.code() {
            tonic::Code::PermissionDenied => StatusCode::FORBIDDEN,
            tonic::Code::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
            _ => StatusCode::UNAUTHORIZED,
        };
        return (status, format!("{}\n", s.message())).into_response();
    }
    let node = match handle.get() {
        Ok(node) => node,
        Err(s) => {
            return (StatusCode::SERVICE_UNAVAILABLE, s.message().to_string()).into_response();
        }
    };
    let hub = node.hub.clone();
    let loads =
        tokio::task::spawn_blocking(move || hub.stream_loads(std::time::Duration::from_secs(2)))
            .await
            .ok()
            .flatten();
    let Some(loads) = loads else {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            "the watch engine did not answer\n",
        )
            .into_response();
    };
    let deepest: Vec<_> = loads
        .iter()
        .take(STREAMS_SHOWN)
        .map(|l| {
            serde_json::json!({
                "stream": l.stream,
                "client": &*l.label,
                "watchers": l.watchers,
                "unsynced": l.unsynced,
                "victims": l.victims,
                "queued_responses": l.queued_responses,
                "queued_events": l.queued_events,
                "queued_bytes": l.queued_bytes,
            })
        })
        .collect();
    let body = serde_json::json!({ "streams": loads.len(), "deepest": deepest });
    (
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// etcd's (3.6) Kubernetes-style probes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Probe {
    /// The process serves: a serializable read answers.
    Livez,
    /// The member can serve clients: no CORRUPT alarm, and a serializable
    /// and a linearizable read answer (the latter needs a leader).
    Readyz,
}

/// Runs a probe's checks: `200 ok`, or `503` listing each check as
/// `[+]name ok` / `[-]name failed: reason` and `<probe> check failed`;
/// `?verbose` lists the checks on success too, `?exclude=name` skips one.
async fn probe(node: NodeHandle, probe: Probe, query: HealthQuery) -> impl IntoResponse {
    let checks: &[&str] = match probe {
        Probe::Livez => &["serializable_read"],
        Probe::Readyz => &["data_corruption", "serializable_read", "linearizable_read"],
    };
    let mut lines = String::new();
    let mut failed = false;
    for &check in checks {
        if query.exclude.iter().any(|e| e == check) {
            lines += &format!("[+]{check} excluded: ok\n");
            continue;
        }
        let outcome = match node.get() {
            Err(s) => Err(s.message().to_string()),
            Ok(node) => match check {
                "data_corruption" => match node
                    .store
                    .alarms()
                    .into_iter()
                    .find(|a| a.kind.name() == "CORRUPT")
                {
                    Some(_) => Err("alarm activated: CORRUPT".to_string()),
                    None => Ok(()),
                },
                "serializable_read" => match node.replica.fatal_error() {
                    Some(why) => Err(format!("raft stopped: {why}")),
                    None => node
                        .store
                        .range(&hark_mvcc::RangeRequest::key("health"))
                        .map(drop)
                        .map_err(|e| e.to_string()),
                },
                _ => node
                    .linearizable_barrier()
                    .await
                    .map_err(|s| s.message().to_string()),
            },
        };
        match outcome {
            Ok(()) => lines += &format!("[+]{check} ok\n"),
            Err(reason) => {
                failed = true;
                lines += &format!("[-]{check} failed: {reason}\n");
            }
        }
    }
    let name = match probe {
        Probe::Livez => "livez",
        Probe::Readyz => "readyz",
    };
    let text = [(header::CONTENT_TYPE, "text/plain; charset=utf-8")];
    if failed {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            text,
            format!("{lines}{name} check failed\n"),
        );
    }
    let body = if query.verbose {
        format!("{lines}ok\n")
    } else {
        "ok".to_string()
    };
    (StatusCode::OK, text, body)
}

/// etcd's `/health`: unhealthy while an alarm is raised (except those named
/// in `?exclude=`), else healthy when the member can serve a read: a
/// linearizable one with a leader, or with `?serializable=true` a local one.
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
    if let Some(why) = node.replica.fatal_error() {
        return unhealthy(format!("RAFT STOPPED: {why}"));
    }
    let excluded: Vec<&str> = query.exclude.iter().map(String::as_str).collect();
    if let Some(alarm) = node
        .store
        .alarms()
        .into_iter()
        .find(|a| !excluded.contains(&a.kind.name()))
    {
        return unhealthy(format!("ALARM {}", alarm.kind.name()));
    }
    // As etcd: unless `?serializable=true` asks only about this member, the
    // cluster must have a leader and a linearizable read must answer.
    if !query.serializable {
        if node.replica.status().leader.is_none() {
            return unhealthy("RAFT NO LEADER".to_string());
        }
        if let Err(s) = node.linearizable_barrier().await {
            return unhealthy(format!("RANGE ERROR:{}", s.message()));
        }
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

/// The query of `/health` and the probes: `exclude=NAME` (repeatable)
/// ignores that alarm (`/health`) or check (probes); `verbose` lists a
/// probe's checks on success.
#[derive(Debug, Default)]
struct HealthQuery {
    exclude: Vec<String>,
    verbose: bool,
    /// `serializable=true` (`/health` only): this member's own read.
    serializable: bool,
}

impl HealthQuery {
    fn parse(query: Option<&str>) -> HealthQuery {
        let pairs = || query.unwrap_or("").split('&');
        let exclude = pairs()
            .filter_map(|pair| pair.strip_prefix("exclude="))
            .map(str::to_string)
            .collect();
        let verbose = pairs().any(|p| p == "verbose" || p.starts_with("verbose="));
        let serializable = pairs().any(|p| p == "serializable=true");
        HealthQuery {
            exclude,
            verbose,
            serializable,
        }
    }
}
