//! What each listener serves: the gRPC services, the HTTP dialects that call
//! them in process, the probes and the web console.

use hark_concurrency::{ElectionService, LockService};
use hark_proto::etcdserverpb::{
    auth_server::AuthServer, cluster_server::ClusterServer, lease_server::LeaseServer,
    maintenance_server::MaintenanceServer,
};
use hark_proto::harkpb::usage_server::UsageServer;
use hark_proto::v3electionpb::election_server::ElectionServer;
use hark_proto::v3lockpb::lock_server::LockServer;
use tonic::service::Routes;

use crate::grpc::auth::AuthService;
use crate::grpc::kv_range::KvRoutes;
use crate::grpc::lease::LeaseService;
use crate::grpc::maintenance::{ClusterService, MaintenanceService};
use crate::grpc::usage::UsageService;
use crate::grpc::watch::WatchService;
use crate::node::NodeHandle;
use crate::ops::probes;
use crate::plan::Limits;

/// gRPC routes as a listener serves them.
fn on_the_wire(routes: Routes, handle: &NodeHandle) -> axum::Router {
    // Before the in-process clone: a gateway request must not name a user
    // by certificate (etcd ignores the CN for gateway requests).
    routes
        .into_axum_router()
        .layer(axum::middleware::from_fn_with_state(
            handle.clone(),
            crate::grpc::access::catch_up_for_token,
        ))
        .layer(axum::middleware::from_fn_with_state(
            handle.clone(),
            crate::grpc::access::refuse_without_leader,
        ))
        .layer(crate::transport::wire_edits::WireEditsLayer)
        // Outermost, to count what goes over the wire (after the rewrite of
        // oversized-message statuses above).
        .layer(crate::transport::grpc_metrics::GrpcMetricsLayer::new())
}

/// The routes of each kind of listener.
pub struct ListenerRoutes {
    pub client: Routes,
    pub client_http: Routes,
    pub metrics: Routes,
}

/// `cors` is `--cors`; `separate_http` says whether `--listen-client-http-urls`
/// moves the HTTP endpoints off the client URLs (etcd's flag).
pub fn listener_routes(
    handle: &NodeHandle,
    limits: Limits,
    cors: &str,
    separate_http: bool,
) -> ListenerRoutes {
    let limit = limits.max_message_bytes;
    let core = Routes::new(KvRoutes::new(handle.clone(), limit))
        .add_service(WatchService::new(handle.clone(), limit))
        .add_service(
            LeaseServer::new(LeaseService::new(handle.clone())).max_decoding_message_size(limit),
        )
        .add_service(
            MaintenanceServer::new(MaintenanceService::new(handle.clone()))
                .max_decoding_message_size(limit),
        )
        .add_service(AuthServer::new(AuthService::new(handle.clone())))
        .add_service(UsageServer::new(UsageService::new(handle.clone())))
        .add_service(
            ClusterServer::new(ClusterService::new(handle.clone()))
                .max_decoding_message_size(limit),
        );
    // Locks and elections are made of calls on the services above, in
    // process and as their caller (as etcd's server makes them).
    let steps = hark_http::in_process(Routes::from(on_the_wire(core.clone(), handle)));
    let grpc = on_the_wire(
        core.add_service(
            LockServer::new(LockService::new(steps.clone())).max_decoding_message_size(limit),
        )
        .add_service(
            ElectionServer::new(ElectionService::new(steps)).max_decoding_message_size(limit),
        ),
        handle,
    );
    // The HTTP dialects call these same gRPC routes in process.
    let in_process = hark_http::in_process(Routes::from(grpc.clone()));
    let gateway = hark_http::routes(
        in_process.clone(),
        hark_http::GatewayOptions {
            server_version: crate::ETCD_VERSION.to_string(),
            cluster_version: crate::ETCD_CLUSTER_VERSION.to_string(),
            implementation: vec![
                ("harkserver", crate::HARK_VERSION.to_string()),
                ("harkcommit", crate::GIT_COMMIT.to_string()),
            ],
            // Room for base64 (4/3) and JSON around the largest request.
            max_body_bytes: 2 * limit,
        },
    );
    let consul_kv = hark_http::consul::routes(
        in_process,
        hark_http::consul::ConsulOptions {
            max_body_bytes: limits.max_request_bytes,
            // Parked queries are capped per client address, which only this
            // crate's connections (plain or TLS) know.
            client_address: |extensions| {
                Some(
                    extensions
                        .get::<crate::transport::conn::ConnInfo>()?
                        .remote?
                        .ip(),
                )
            },
            ..Default::default()
        },
    );
    let http = hark_http::cors::Cors::parse(cors)
        .apply(
            gateway
                .merge(consul_kv)
                .merge(probes::routes(handle.clone(), probes::Listener::Client)),
        )
        // The web console: static pages that call the gateway above.
        .merge(hark_console::routes());
    ListenerRoutes {
        client: if separate_http {
            Routes::from(grpc)
        } else {
            Routes::from(grpc.merge(http.clone()))
        },
        client_http: Routes::from(http),
        metrics: Routes::from(probes::routes(handle.clone(), probes::Listener::Metrics)),
    }
}
