//! Opening the layers, binding the listeners, serving, and shutting down.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hark_lease::{Lessor, LessorConfig};
use hark_mvcc::{Store, StoreOptions};
use hark_proto::etcdserverpb::{
    auth_server::AuthServer, cluster_server::ClusterServer, kv_server::KvServer,
    lease_server::LeaseServer, maintenance_server::MaintenanceServer,
};
use hark_raft::{Join, MemberInfo, Replica, ReplicaConfig};
use hark_watch::{WatchConfig, WatchHub};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_stream::StreamExt;
use tonic::service::Routes;
use tonic::transport::Server;

use crate::cluster_leases::{LeaseForwards, ReplicatedLeases, follow_leadership};
use crate::config::{ClusterPlan, ClusterState, Config, socket_addrs};
use crate::grpc::auth::AuthService;
use crate::grpc::kv::KvService;
use crate::grpc::lease::LeaseService;
use crate::grpc::maintenance::{ClusterService, MaintenanceService};
use crate::grpc::watch::WatchService;
use crate::node::{Node, NodeHandle};
use crate::ops::{auto_compaction, probes};
use crate::shutdown::shutting_down;
use crate::transport::authority::AuthorityFix;
use crate::transport::pacing::{AcceptPace, Sliced};
use crate::transport::traffic::Counted;

/// gRPC's allowance on top of `--max-request-bytes` for framing, as etcd's.
const GRPC_OVERHEAD_BYTES: usize = 512 * 1024;

/// HTTP/2 flow-control windows. h2 lets a peer keep about half the connection
/// window in small unread DATA frames before it answers ENHANCE_YOUR_CALM, so a
/// large window lets clients pipeline thousands of watch creates or keep-alives.
const CONNECTION_WINDOW: u32 = 64 << 20;
const STREAM_WINDOW: u32 = 16 << 20;
/// Streams a connection may make the server reset for its own errors (chiefly
/// streams past SETTINGS_MAX_CONCURRENT_STREAMS, refused) before it is ended
/// with GOAWAY(ENHANCE_YOUR_CALM). hyper's default; tonic passes "no limit",
/// under which one connection had 90,000 streams refused one by one.
const MAX_LOCAL_ERROR_RESETS: usize = 1024;
/// How long shutdown waits for in-flight requests.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(10);

/// A serving Hark member; [`RunningServer::shutdown`] stops it cleanly.
pub struct RunningServer {
    /// Bound client addresses (gRPC and HTTP), in `--listen-client-urls` order.
    pub client_addrs: Vec<SocketAddr>,
    /// Bound `--listen-metrics-urls` addresses.
    pub metrics_addrs: Vec<SocketAddr>,
    /// Bound `--listen-client-http-urls` addresses.
    pub client_http_addrs: Vec<SocketAddr>,
    /// `http(s)://addr` of each client listener, in the same order.
    client_endpoints: Vec<String>,
    node: Arc<Node>,
    stop: watch::Sender<bool>,
    tasks: Vec<JoinHandle<()>>,
}

/// Opens the data dir, starts the engine and the lessor, binds every listener
/// and starts serving.
pub async fn start(config: &Config) -> Result<RunningServer, String> {
    let retention = config.retention()?;
    // Ports first: a taken port must fail the start before the store and its
    // threads exist (seen: the process then crashed on its way out).
    let client_listeners = bind_all(&config.listen_client_urls).await?;
    let metrics_listeners = bind_all(&config.listen_metrics_urls).await?;
    let client_http_listeners = bind_all(&config.listen_client_http_urls).await?;
    let peer_listeners = bind_all(&config.listen_peer_urls).await?;
    let plan = config.cluster_plan(&local_addrs(&peer_listeners)?)?;
    let data_dir = config.data_dir();
    if config.quota_bytes() > crate::config::MAX_SUGGESTED_QUOTA_BYTES {
        tracing::warn!(
            quota = config.quota_bytes(),
            suggested_max = crate::config::MAX_SUGGESTED_QUOTA_BYTES,
            "quota exceeds the maximum value suggested by etcd"
        );
    }
    let options = StoreOptions {
        // The raft log's fsync is the durability point; the store re-applies
        // from its recorded log position after a crash.
        sync: false,
        max_txn_ops: config.max_txn_ops,
        // The log's state machine is the only submitter: it applies each
        // entry on its own task rather than through the committer thread.
        commit_on_caller: true,
        ..StoreOptions::default()
    };
    if let Some(snapshot) = &config.from_snapshot {
        restore_first(snapshot, &data_dir).await?;
    }
    let tls = client_tls(config, &data_dir)?;
    let peer_tls = peer_tls(config, &data_dir)?;
    let tokens = config.token_kind()?;
    let store = {
        let dir = data_dir.clone();
        tokio::task::spawn_blocking(move || Store::open(dir, options))
            .await
            .map_err(|e| e.to_string())?
            .map_err(|e| format!("cannot open data dir {}: {e}", data_dir.display()))?
    };
    remove_snapshot_scratch(&data_dir);
    let interval = config.watch_progress_notify_interval;
    // The engine's thread keeps the default priority: at niceness 19 a busy
    // neighbour delayed live events by tens of ms (docs/benchmarks.md, #34).
    let hub = WatchHub::new(
        store.clone(),
        WatchConfig {
            progress_notify_interval: (!interval.is_zero()).then_some(interval),
            max_watchers_per_stream: usize::try_from(config.max_watchers_per_stream)
                .unwrap_or(usize::MAX),
            ..WatchConfig::default()
        },
    );

    let client_addrs = local_addrs(&client_listeners)?;
    let metrics_addrs = local_addrs(&metrics_listeners)?;
    let client_http_addrs = local_addrs(&client_http_listeners)?;
    let client_endpoints: Vec<String> = client_addrs
        .iter()
        .zip(listen_urls(&config.listen_client_urls))
        .map(|(a, url)| {
            let scheme = if crate::config::is_https(url) {
                "https"
            } else {
                "http"
            };
            format!("{scheme}://{a}")
        })
        .collect();
    let client_urls = if config.advertise_client_urls.is_empty() {
        client_endpoints.clone()
    } else {
        config.advertise_client_urls.clone()
    };
    let replica = start_replica(config, &plan, peer_tls.as_ref(), &store, &data_dir).await?;
    // etcd's minimum lease TTL: 1.5 election timeouts, at least 2 s.
    let lessor_config = LessorConfig {
        min_ttl: (config.election_timeout * 3 / 2).div_ceil(1000).max(2) as i64,
        ..LessorConfig::default()
    };
    let lease_log = Arc::new(ReplicatedLeases {
        replica: replica.clone(),
        runtime: tokio::runtime::Handle::current(),
    });
    let lessor = Lessor::start_with_log(store.clone(), lease_log, lessor_config, false);
    let (stop, shutdown) = watch::channel(false);
    let auth = hark_auth::AuthStore::new(
        store.clone(),
        hark_auth::AuthOptions {
            bcrypt_cost: config.bcrypt_cost,
            token_ttl: Duration::from_secs(config.auth_token_ttl.max(1)),
            tokens,
        },
    )
    .map_err(|e| format!("cannot read the auth store: {e}"))?;
    let node = Arc::new(Node {
        auth,
        store,
        hub,
        lessor,
        name: config.name.clone(),
        data_dir: data_dir.clone(),
        client_urls,
        max_request_bytes: config.max_request_bytes,
        quota_bytes: config.quota_bytes(),
        replica,
        shutdown,
    });

    // The recorder first, so that the series registered next are kept.
    let _ = probes::prometheus();
    crate::ops::metrics::register(&node);

    let limit = config.max_request_bytes + GRPC_OVERHEAD_BYTES;
    let handle = NodeHandle::new(&node);
    let grpc =
        Routes::new(KvServer::new(KvService::new(handle.clone())).max_decoding_message_size(limit))
            .add_service(WatchService::new(handle.clone(), limit))
            .add_service(
                LeaseServer::new(LeaseService::new(handle.clone()))
                    .max_decoding_message_size(limit),
            )
            .add_service(
                MaintenanceServer::new(MaintenanceService::new(handle.clone()))
                    .max_decoding_message_size(limit),
            )
            .add_service(AuthServer::new(AuthService::new(handle.clone())))
            .add_service(
                ClusterServer::new(ClusterService::new(handle.clone()))
                    .max_decoding_message_size(limit),
            );
    // Before the in-process clone: a gateway request must not name a user
    // by certificate (etcd ignores the CN for gateway requests).
    let grpc = grpc
        .into_axum_router()
        .layer(crate::transport::wire_edits::WireEditsLayer)
        // Outermost, to count what goes over the wire (after the rewrite of
        // oversized-message statuses above).
        .layer(crate::transport::grpc_metrics::GrpcMetricsLayer::new());
    // The HTTP dialects call these same gRPC routes in process.
    let in_process = hark_http::in_process(Routes::from(grpc.clone()));
    let gateway = hark_http::routes(
        in_process.clone(),
        hark_http::GatewayOptions {
            server_version: crate::ETCD_VERSION.to_string(),
            cluster_version: crate::ETCD_CLUSTER_VERSION.to_string(),
            // Room for base64 (4/3) and JSON around the largest request.
            max_body_bytes: 2 * limit,
        },
    );
    let consul_kv = hark_http::consul::routes(
        in_process,
        hark_http::consul::ConsulOptions {
            max_body_bytes: config.max_request_bytes,
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
    if config.cors.split(',').any(|o| o.trim() == "*")
        && !node.auth.state().is_ok_and(|s| s.enabled())
    {
        tracing::warn!(
            "--cors='*' with auth disabled: any web page a user opens can read and write this store"
        );
    }
    let http_routes = hark_http::cors::Cors::parse(&config.cors)
        .apply(
            gateway
                .merge(consul_kv)
                .merge(probes::routes(handle.clone())),
        )
        // The web console: static pages that call the gateway above.
        .merge(hark_console::routes());
    // etcd's --listen-client-http-urls moves the HTTP endpoints off the
    // client URLs.
    let client_routes = if client_http_listeners.is_empty() {
        Routes::from(grpc.merge(http_routes.clone()))
    } else {
        Routes::from(grpc)
    };
    let client_http_routes = Routes::from(http_routes);
    let metrics_routes = Routes::from(probes::routes(handle.clone()));

    for tls in tls.iter().chain(&peer_tls) {
        tls.watch_files(node.shutdown.clone());
    }
    let tls_for = |url: &String| crate::config::is_https(url).then(|| tls.clone()).flatten();
    let client_tls: Vec<_> = listen_urls(&config.listen_client_urls)
        .map(tls_for)
        .collect();
    let client_http_tls: Vec<_> = listen_urls(&config.listen_client_http_urls)
        .map(tls_for)
        .collect();
    let mut tasks = Vec::new();
    let streams = config.max_concurrent_streams;
    for (listener, tls) in client_listeners.into_iter().zip(client_tls) {
        tasks.push(serve(
            listener,
            tls,
            client_routes.clone(),
            node.shutdown.clone(),
            (Traffic::Counted, streams),
        ));
    }
    for (listener, tls) in client_http_listeners.into_iter().zip(client_http_tls) {
        tasks.push(serve(
            listener,
            tls,
            client_http_routes.clone(),
            node.shutdown.clone(),
            (Traffic::Counted, streams),
        ));
    }
    let metrics_tls: Vec<_> = listen_urls(&config.listen_metrics_urls)
        .map(tls_for)
        .collect();
    for (listener, tls) in metrics_listeners.into_iter().zip(metrics_tls) {
        tasks.push(serve(
            listener,
            tls,
            metrics_routes.clone(),
            node.shutdown.clone(),
            (Traffic::NotCounted, streams),
        ));
    }
    let replica = &node.replica;
    replica.set_forward_handler(Arc::new(LeaseForwards {
        node: handle.clone(),
    }));
    follow_leadership(replica.clone(), handle.clone());
    let peer_listener_tls: Vec<_> = listen_urls(&config.listen_peer_urls)
        .map(|url| {
            crate::config::is_https(url)
                .then(|| peer_tls.clone())
                .flatten()
        })
        .collect();
    for (listener, tls) in peer_listeners.into_iter().zip(peer_listener_tls) {
        tasks.push(serve_peers(listener, tls, replica, node.shutdown.clone()));
    }
    publish(
        replica.clone(),
        config.name.clone(),
        node.client_urls.clone(),
        node.shutdown.clone(),
    );
    auto_compaction::spawn(node.clone(), retention);
    tracing::info!(
        name = %config.name,
        data_dir = %data_dir.display(),
        clients = ?client_addrs,
        metrics = ?metrics_addrs,
        client_http = ?client_http_addrs,
        revision = node.store.current_revision(),
        "hark is serving"
    );
    Ok(RunningServer {
        client_addrs,
        metrics_addrs,
        client_http_addrs,
        client_endpoints,
        node,
        stop,
        tasks,
    })
}

/// Starts this member's replicated log (in `<data-dir>/raft`) from the cluster flags.
async fn start_replica(
    config: &Config,
    plan: &ClusterPlan,
    peer_tls: Option<&Arc<crate::transport::tls::TlsServer>>,
    store: &Store,
    data_dir: &std::path::Path,
) -> Result<Arc<Replica>, String> {
    let initial_members = match plan.state {
        ClusterState::Existing => BTreeMap::new(),
        ClusterState::New => plan
            .initial
            .iter()
            // The first entry must be the same on every member: client URLs
            // are not in the flags, so each member publishes its own later.
            .map(|(name, urls)| {
                let info = MemberInfo {
                    name: name.clone(),
                    peer_urls: urls.clone(),
                    client_urls: Vec::new(),
                };
                (hark_raft::ids::member_id(urls, &plan.token), info)
            })
            .collect(),
    };
    let election = Duration::from_millis(config.election_timeout);
    let join = (plan.state == ClusterState::Existing).then(|| Join {
        own_peer_urls: plan.peer_urls.clone(),
        cluster_peer_urls: plan
            .initial
            .iter()
            .flat_map(|(_, urls)| urls.clone())
            .collect(),
    });
    let initial_ids: Vec<u64> = plan
        .initial
        .iter()
        .map(|(_, urls)| hark_raft::ids::member_id(urls, &plan.token))
        .collect();
    let replica_config = ReplicaConfig {
        member_id: plan.member_id,
        cluster_id: hark_raft::ids::cluster_id(&initial_ids),
        join,
        cluster_token: plan.token.clone(),
        initial_members,
        heartbeat_interval: Duration::from_millis(config.heartbeat_interval),
        election_timeout: election,
        snapshot_count: config.snapshot_count,
        fsync: !config.unsafe_no_fsync,
        peer_source: config.peer_local_addr,
        peer_tls: peer_tls.and_then(|t| t.peer_tls()),
        // etcd's request timeout: 5 s plus two election timeouts.
        request_timeout: Duration::from_secs(5) + 2 * election,
    };
    Replica::start(replica_config, store.clone(), &data_dir.join("raft")).await
}

/// etcd's publish: records this member's name and client URLs in the
/// membership (a member added by MemberAdd has neither), and keeps checking
/// the committed membership shows them, publishing again if not.
fn publish(
    replica: Arc<Replica>,
    name: String,
    client_urls: Vec<String>,
    mut shutdown: watch::Receiver<bool>,
) {
    tokio::spawn(async move {
        tokio::select! {
            _ = replica.keep_published(name, client_urls) => {}
            _ = shutting_down(&mut shutdown) => {}
        }
    });
}

/// Serves the peer protocol on one `--listen-peer-urls` listener.
fn serve_peers(
    listener: TcpListener,
    tls: Option<Arc<crate::transport::tls::TlsServer>>,
    replica: &Arc<Replica>,
    mut shutdown: watch::Receiver<bool>,
) -> JoinHandle<()> {
    let service = replica.peer_service();
    tokio::spawn(async move {
        let incoming = connections(listener, tls).map(Ok::<_, std::io::Error>);
        let result = Server::builder()
            .initial_connection_window_size(CONNECTION_WINDOW)
            .initial_stream_window_size(STREAM_WINDOW)
            .max_frame_size(crate::transport::authority::MAX_FRAME_SIZE)
            .http2_max_header_list_size(crate::transport::authority::MAX_HEADER_LIST_SIZE)
            .http2_max_local_error_reset_streams(Some(MAX_LOCAL_ERROR_RESETS))
            .layer(crate::transport::boundary::IdentityBoundaryLayer)
            .add_service(service)
            .serve_with_incoming_shutdown(incoming, async move {
                shutting_down(&mut shutdown).await;
            })
            .await;
        if let Err(e) = result {
            tracing::error!(error = %e, "peer listener failed");
        }
    })
}

/// `--from-snapshot`: a data dir that holds nothing yet is built from the
/// snapshot; one that holds a store is left alone (a restart with the same
/// flags must not lose what was written since).
async fn restore_first(
    snapshot: &std::path::Path,
    data_dir: &std::path::Path,
) -> Result<(), String> {
    let empty = std::fs::read_dir(data_dir).map_or(true, |mut e| e.next().is_none());
    if !empty {
        tracing::info!(
            data_dir = %data_dir.display(),
            "the data dir already holds a store; --from-snapshot is not applied"
        );
        return Ok(());
    }
    let (from, into) = (snapshot.to_path_buf(), data_dir.to_path_buf());
    let restored = tokio::task::spawn_blocking(move || {
        hark_snapshot::restore(&from, &into, &hark_snapshot::RestoreOptions::default())
    })
    .await
    .map_err(|e| e.to_string())?
    .map_err(|e| format!("cannot restore {}: {e}", snapshot.display()))?;
    tracing::info!(
        snapshot = %snapshot.display(),
        revision = restored.revision,
        compact_revision = restored.compact_revision,
        "restored the data dir from a snapshot"
    );
    Ok(())
}

/// Removes what a snapshot being sent left behind when the process died
/// (`Maintenance::Snapshot` writes under `<data-dir>/.snapshot-*`).
fn remove_snapshot_scratch(data_dir: &std::path::Path) {
    let Ok(entries) = std::fs::read_dir(data_dir) else {
        return;
    };
    for entry in entries.flatten() {
        if entry
            .file_name()
            .to_string_lossy()
            .starts_with(".snapshot-")
        {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// The listen URLs that make listeners, in order.
fn listen_urls(urls: &[String]) -> impl Iterator<Item = &String> {
    urls.iter().filter(|u| !u.trim().is_empty())
}

/// The client listeners' TLS, if any client URL is https:// (etcd's flags).
fn client_tls(
    config: &Config,
    data_dir: &std::path::Path,
) -> Result<Option<Arc<crate::transport::tls::TlsServer>>, String> {
    let urls: Vec<&String> = listen_urls(&config.listen_client_urls)
        .chain(listen_urls(&config.listen_client_http_urls))
        .chain(listen_urls(&config.listen_metrics_urls))
        .collect();
    let settings = crate::transport::tls::TlsSettings {
        cert_file: config.cert_file.clone(),
        key_file: config.key_file.clone(),
        trusted_ca_file: config.trusted_ca_file.clone(),
        client_cert_auth: config.client_cert_auth,
        client_crl_file: config.client_crl_file.clone(),
        auto_tls: config.auto_tls,
        min_version: config.tls_min_version.clone(),
        max_version: config.tls_max_version.clone(),
        cipher_suites: config.cipher_suites.clone(),
        allowed_cn: None,
        dials: false,
    };
    if !urls.iter().any(|u| crate::config::is_https(u)) {
        if settings.is_set() {
            tracing::warn!("TLS flags are set but no client URL is https://: serving plain HTTP");
        }
        return Ok(None);
    }
    if !settings.is_set() {
        return Err("https:// client URLs need --cert-file and --key-file (or --auto-tls)".into());
    }
    let auto_dir = data_dir.join("fixtures").join("client");
    crate::transport::tls::TlsServer::new(settings, &auto_dir, &url_hosts(&urls)).map(Some)
}

/// The peer links' TLS (etcd's `--peer-*` flags), for https:// peer URLs:
/// served on the peer listeners and used to dial the other members.
fn peer_tls(
    config: &Config,
    data_dir: &std::path::Path,
) -> Result<Option<Arc<crate::transport::tls::TlsServer>>, String> {
    let settings = crate::transport::tls::TlsSettings {
        cert_file: config.peer_cert_file.clone(),
        key_file: config.peer_key_file.clone(),
        trusted_ca_file: config.peer_trusted_ca_file.clone(),
        client_cert_auth: config.peer_client_cert_auth,
        client_crl_file: config.peer_crl_file.clone(),
        auto_tls: config.peer_auto_tls,
        min_version: config.tls_min_version.clone(),
        max_version: config.tls_max_version.clone(),
        cipher_suites: config.cipher_suites.clone(),
        allowed_cn: config.peer_cert_allowed_cn.clone(),
        dials: true,
    };
    let listen: Vec<&String> = listen_urls(&config.listen_peer_urls).collect();
    let any_https = listen
        .iter()
        .copied()
        .chain(&config.initial_advertise_peer_urls)
        .any(|u| crate::config::is_https(u))
        || config.initial_cluster.contains("https://");
    if !settings.is_set() {
        if any_https {
            return Err(
                "https:// peer URLs need --peer-cert-file and --peer-key-file (or --peer-auto-tls)"
                    .into(),
            );
        }
        return Ok(None);
    }
    if !any_https {
        tracing::warn!("peer TLS flags are set but no peer URL is https://: peers talk plain HTTP");
    }
    let auto_dir = data_dir.join("fixtures").join("peer");
    crate::transport::tls::TlsServer::new(settings, &auto_dir, &url_hosts(&listen)).map(Some)
}

/// The hosts of `urls` (the names a self-signed certificate is made for).
fn url_hosts(urls: &[&String]) -> Vec<String> {
    urls.iter()
        .filter_map(|u| {
            let rest = u.trim().split_once("://")?.1;
            let host = rest.rsplit_once(':').map_or(rest, |(h, _)| h);
            Some(host.trim_matches(['[', ']']).to_string())
        })
        .collect()
}

async fn bind_all(urls: &[String]) -> Result<Vec<TcpListener>, String> {
    let mut listeners = Vec::new();
    for url in listen_urls(urls) {
        let addr = socket_addrs(url)?[0];
        let listener = listen(addr, crate::transport::pacing::LISTEN_BACKLOG)
            .map_err(|e| format!("cannot listen on {url}: {e}"))?;
        listeners.push(listener);
    }
    Ok(listeners)
}

/// Binds `addr` (with SO_REUSEADDR, as `TcpListener::bind` does) and
/// listens with a backlog of `backlog`.
fn listen(addr: SocketAddr, backlog: u32) -> std::io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(backlog)
}

fn local_addrs(listeners: &[TcpListener]) -> Result<Vec<SocketAddr>, String> {
    listeners
        .iter()
        .map(|l| l.local_addr().map_err(|e| e.to_string()))
        .collect()
}

/// Whether a listener's bytes count as client traffic (the metrics port's
/// scrapes do not).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Traffic {
    Counted,
    NotCounted,
}

/// Serves `routes` on one listener; `max_streams` is each connection's
/// SETTINGS_MAX_CONCURRENT_STREAMS (`--max-concurrent-streams`).
fn serve(
    listener: TcpListener,
    tls: Option<Arc<crate::transport::tls::TlsServer>>,
    routes: Routes,
    mut shutdown: watch::Receiver<bool>,
    (traffic, max_streams): (Traffic, u32),
) -> JoinHandle<()> {
    tokio::spawn(async move {
        // Every connection goes through AuthorityFix (see authority.rs).
        let incoming = connections(listener, tls).map(move |conn| {
            let counted = Counted::new(conn, traffic == Traffic::Counted);
            Ok::<_, std::io::Error>(AuthorityFix::new(Sliced::new(counted)))
        });
        // The frame and header list limits are stated, not left to
        // hyper's defaults: AuthorityFix steps aside at the same figures.
        let result = Server::builder()
            .accept_http1(true)
            .initial_connection_window_size(CONNECTION_WINDOW)
            .initial_stream_window_size(STREAM_WINDOW)
            .max_frame_size(crate::transport::authority::MAX_FRAME_SIZE)
            .http2_max_header_list_size(crate::transport::authority::MAX_HEADER_LIST_SIZE)
            .http2_max_local_error_reset_streams(Some(MAX_LOCAL_ERROR_RESETS))
            .max_concurrent_streams(max_streams)
            // Every route of every listener behind one identity boundary.
            .layer(crate::transport::boundary::IdentityBoundaryLayer)
            .add_routes(routes)
            .serve_with_incoming_shutdown(incoming, async move {
                shutting_down(&mut shutdown).await;
            })
            .await;
        if let Err(e) = result {
            tracing::error!(error = %e, "listener failed");
        }
    })
}

/// A listener's connections: plain, or TLS once their handshake is done.
/// Handshakes run in tasks of their own under [`crate::transport::tls::HANDSHAKE_TIMEOUT`],
/// so a client that stalls one holds up nobody else; at most the handshakes
/// begun within one timeout are in flight. Finished connections wait in a
/// queue of 64 for the server to take them: when it is full, handshake
/// tasks wait, the accept loop does not.
fn connections(
    listener: TcpListener,
    tls: Option<Arc<crate::transport::tls::TlsServer>>,
) -> std::pin::Pin<Box<dyn tokio_stream::Stream<Item = crate::transport::conn::Conn> + Send>> {
    use crate::transport::conn::Conn;
    use crate::transport::tls::HANDSHAKE_TIMEOUT;
    let Some(tls) = tls else {
        return Box::pin(accepted(listener).map(Conn::Plain));
    };
    let (tx, rx) = tokio::sync::mpsc::channel(64);
    tokio::spawn(async move {
        let mut incoming = std::pin::pin!(accepted(listener));
        loop {
            let tcp = tokio::select! {
                tcp = incoming.next() => match tcp {
                    Some(tcp) => tcp,
                    None => return,
                },
                // The server stopped serving this listener.
                _ = tx.closed() => return,
            };
            let acceptor = tokio_rustls::TlsAcceptor::from(tls.config());
            let cert_user = tls.cert_user();
            let tx = tx.clone();
            tokio::spawn(async move {
                let remote = tcp.peer_addr().ok();
                // As etcd logs "rejected connection": who, and why (a client
                // certificate in X.509 v1 form reads "UnsupportedCertVersion",
                // see docs/security.md).
                match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await {
                    Ok(Ok(stream)) => {
                        let _ = tx.send(Conn::Tls(Box::new(stream), cert_user)).await;
                    }
                    Ok(Err(e)) => tracing::warn!(
                        remote = ?remote,
                        error = %e,
                        "rejected connection: TLS handshake failed"
                    ),
                    Err(_) => tracing::warn!(
                        remote = ?remote,
                        "rejected connection: TLS handshake timed out"
                    ),
                }
            });
        }
    });
    Box::pin(tokio_stream::wrappers::ReceiverStream::new(rx))
}

/// A listener's connections, Nagle off, taken at the [`AcceptPace`]. A failed
/// accept (out of file descriptors and the like) is logged and skipped: the
/// others keep being served.
fn accepted(listener: TcpListener) -> impl tokio_stream::Stream<Item = tokio::net::TcpStream> {
    futures_util::stream::unfold(
        (listener, AcceptPace::default()),
        |(listener, mut pace)| async move {
            loop {
                pace.admit().await;
                match listener.accept().await {
                    Ok((tcp, _)) => {
                        let _ = tcp.set_nodelay(true);
                        return Some((tcp, (listener, pace)));
                    }
                    Err(e) => tracing::warn!(error = %e, "accepting a connection failed"),
                }
            }
        },
    )
}

impl RunningServer {
    /// `http://addr` (`https://` for TLS) of each client listener.
    pub fn endpoints(&self) -> Vec<String> {
        self.client_endpoints.clone()
    }

    pub fn node(&self) -> &Arc<Node> {
        &self.node
    }

    /// Stops accepting, ends watch and keep-alive streams, lets in-flight
    /// requests finish (up to a timeout), then closes the lessor, the engine and
    /// the store, which makes everything acknowledged durable and releases the
    /// data dir.
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        let mut tasks = self.tasks;
        let drain = async {
            for task in &mut tasks {
                let _ = task.await;
            }
        };
        if tokio::time::timeout(DRAIN_TIMEOUT, drain).await.is_err() {
            // A client that neither finishes its requests nor closes its
            // connection (or answers the GOAWAY ping) must not keep the store open.
            tracing::warn!("in-flight requests did not finish in time; closing their connections");
            for task in &tasks {
                task.abort();
            }
            for task in tasks {
                let _ = task.await;
            }
        }
        self.node.replica.shutdown().await;
        tracing::info!("listeners closed; closing the store");
        // Stream tasks finishing may still hold the node for a moment, and
        // openraft's state machine task a clone of the store.
        let store_closed = self.node.store.backend_closed();
        let mut node = self.node;
        let deadline = tokio::time::Instant::now() + DRAIN_TIMEOUT;
        loop {
            match Arc::try_unwrap(node) {
                Ok(owned) => {
                    let Node {
                        store,
                        hub,
                        lessor,
                        auth,
                        ..
                    } = owned;
                    let _ = tokio::task::spawn_blocking(move || {
                        drop((lessor, auth));
                        hub.shutdown();
                        // The last handle: joins the store's threads, closes RocksDB.
                        drop(store);
                    })
                    .await;
                    while !store_closed.is_closed() {
                        if tokio::time::Instant::now() >= deadline {
                            tracing::warn!("tasks still hold the store; it closes when they end");
                            break;
                        }
                        tokio::time::sleep(Duration::from_millis(5)).await;
                    }
                    break;
                }
                Err(shared) if tokio::time::Instant::now() < deadline => {
                    node = shared;
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                Err(_) => {
                    tracing::warn!("requests still hold the store; it closes when they end");
                    break;
                }
            }
        }
        tracing::info!("hark stopped");
    }
}
