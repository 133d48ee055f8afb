//! The flags resolved once into each subsystem's own settings, before
//! anything opens: a bad flag fails here, and `start` only wires what this
//! hands it.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use hark_auth::AuthOptions;
use hark_lease::LessorConfig;
use hark_mvcc::StoreOptions;
use hark_raft::{Join, MemberInfo, ReplicaConfig, ReplicaDirs};
use hark_watch::WatchConfig;

use crate::config::{
    BackupPlan, ClusterPlan, ClusterState, Config, MAX_SUGGESTED_QUOTA_BYTES, Retention,
};
use crate::listeners::{Bound, listen_urls, local_addrs};
use crate::transport::tls::TlsSettings;

/// gRPC's allowance on top of `--max-request-bytes` for framing, as etcd's.
const GRPC_OVERHEAD_BYTES: usize = 512 * 1024;

/// One member's settings, subsystem by subsystem.
pub struct Plan {
    pub name: String,
    pub data_dir: PathBuf,
    /// The replicated log's and the snapshots' directories: under
    /// `<data-dir>/raft`, the log in `--wal-dir` when given.
    pub raft_dirs: ReplicaDirs,
    pub store: StoreOptions,
    pub watch: WatchConfig,
    pub lessor: LessorConfig,
    pub auth: AuthOptions,
    /// The replicated log's settings; its peer TLS is added once the peer
    /// certificates are loaded.
    pub replica: ReplicaConfig,
    pub retention: Retention,
    /// `--snapshot-schedule`: backups into a directory, if asked for.
    pub backups: Option<BackupPlan>,
    /// `--auto-defrag-ratio`: defragmentation by itself, if asked for.
    pub auto_defrag: Option<hark_mvcc::AutoDefrag>,
    pub limits: Limits,
    pub addrs: Addrs,
    /// The client, client-http and metrics listeners' TLS, if any of them is https://.
    pub client_tls: Option<TlsPlan>,
    /// The peer links' TLS (etcd's `--peer-*` flags), served and dialled.
    pub peer_tls: Option<TlsPlan>,
    /// `--cors`.
    pub cors: String,
    pub corruption: CorruptionChecks,
}

/// etcd's corruption checks (see `hark_raft::corruption`).
#[derive(Clone, Copy, Debug)]
pub struct CorruptionChecks {
    /// Compare hashes with the peers before serving clients.
    pub initial: bool,
    /// How often the leader compares every member's hash (`None`: never).
    pub every: Option<Duration>,
    /// How often the leader compares the hashes at the newest compaction
    /// (`None`: never).
    pub compact_hash_every: Option<Duration>,
}

/// What one request may cost.
#[derive(Clone, Copy)]
pub struct Limits {
    /// `--max-request-bytes`.
    pub max_request_bytes: usize,
    /// The largest gRPC message taken: the request limit plus framing.
    pub max_message_bytes: usize,
    /// `--quota-backend-bytes` (etcd's default when unset; negative: none).
    pub quota_bytes: i64,
    /// `--max-concurrent-streams`, per connection.
    pub max_concurrent_streams: u32,
    /// `--grpc-keepalive-interval` and `--grpc-keepalive-timeout`: how often
    /// the server pings an idle client connection, and how long it waits for
    /// the answer (`None`: no pings, the interval being 0).
    pub keepalive: Option<(Duration, Duration)>,
}

/// Where the member is reached.
pub struct Addrs {
    /// Bound client addresses (gRPC and HTTP), in `--listen-client-urls` order.
    pub client: Vec<SocketAddr>,
    pub metrics: Vec<SocketAddr>,
    pub client_http: Vec<SocketAddr>,
    /// `http(s)://addr` of each client listener.
    pub client_endpoints: Vec<String>,
    /// The client URLs published in the membership (`--advertise-client-urls`,
    /// else the endpoints).
    pub advertised_client_urls: Vec<String>,
}

/// A TLS server to build: its flags, where `--auto-tls` keeps its
/// certificate, and the host names that certificate is made for.
pub struct TlsPlan {
    pub settings: TlsSettings,
    pub auto_dir: PathBuf,
    pub hosts: Vec<String>,
}

impl Plan {
    pub fn resolve(config: &Config, bound: &Bound) -> Result<Plan, String> {
        let data_dir = config.data_dir();
        let cluster = config.cluster_plan(&local_addrs(&bound.peer))?;
        let quota_bytes = config.quota_bytes();
        if quota_bytes > MAX_SUGGESTED_QUOTA_BYTES {
            tracing::warn!(
                quota = quota_bytes,
                suggested_max = MAX_SUGGESTED_QUOTA_BYTES,
                "quota exceeds the maximum value suggested by etcd"
            );
        }
        let interval = config.watch_progress_notify_interval;
        let gates = crate::config::feature_gates::parse(&config.feature_gates)
            .map_err(|e| format!("--feature-gates: {e}"))?;
        for (gate, reason) in &gates.without_effect {
            tracing::warn!(gate, reason, "etcd feature gate has no effect in Hark");
        }
        if config.compact_hash_check_time.is_zero() {
            return Err("--compact-hash-check-time must be more than 0".into());
        }
        let corruption = CorruptionChecks {
            initial: config.experimental_initial_corrupt_check || gates.initial_corrupt_check,
            every: Some(config.corrupt_check_time).filter(|t| !t.is_zero()),
            compact_hash_every: (config.experimental_compact_hash_check_enabled
                || gates.compact_hash_check)
                .then_some(config.compact_hash_check_time),
        };
        Ok(Plan {
            corruption,
            name: config.name.clone(),
            store: StoreOptions {
                // The raft log's fsync is the durability point; the store
                // re-applies from its recorded log position after a crash.
                sync: false,
                max_txn_ops: config.max_txn_ops,
                // The log's state machine is the only submitter: it applies
                // each entry on its own task rather than through the
                // committer thread.
                commit_on_caller: true,
                usage_depth: config.usage_depth as usize,
                backend: config.backend,
                compaction_batch_limit: config
                    .compaction_batch_limit
                    .map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
                compaction_sleep: config.compaction_sleep_interval.unwrap_or_default(),
                ..StoreOptions::default()
            },
            watch: WatchConfig {
                progress_notify_interval: (!interval.is_zero()).then_some(interval),
                max_watchers_per_stream: usize::try_from(config.max_watchers_per_stream)
                    .unwrap_or(usize::MAX),
                window_bytes: usize::try_from(config.watch_window_bytes).unwrap_or(usize::MAX),
                ..WatchConfig::default()
            },
            lessor: LessorConfig {
                // etcd's minimum lease TTL: 1.5 election timeouts, at least 2 s.
                min_ttl: (config.election_timeout * 3 / 2).div_ceil(1000).max(2) as i64,
                // etcd's Promote(electionTimeout): a new leader gives every
                // lease its TTL plus an election timeout.
                promotion_extension: Duration::from_millis(config.election_timeout),
                ..LessorConfig::default()
            },
            auth: AuthOptions {
                bcrypt_cost: config.bcrypt_cost,
                token_ttl: Duration::from_secs(config.auth_token_ttl.max(1)),
                tokens: config.token_kind()?,
            },
            replica: ReplicaConfig {
                initial_corruption_check: corruption.initial,
                peer_source: config.peer_local_addr.or_else(|| {
                    gates
                        .set_member_local_addr
                        .then(|| member_local_addr(&cluster.peer_urls))
                        .flatten()
                }),
                ..replica_config(config, &cluster)
            },
            retention: config.retention()?,
            backups: config.backups(&config.name)?,
            auto_defrag: config.auto_defrag()?,
            limits: Limits {
                max_request_bytes: config.max_request_bytes,
                max_message_bytes: config.max_request_bytes + GRPC_OVERHEAD_BYTES,
                quota_bytes,
                max_concurrent_streams: config.max_concurrent_streams,
                keepalive: config.keepalive(),
            },
            addrs: addrs(config, bound)?,
            client_tls: client_tls(config, &data_dir)?,
            peer_tls: peer_tls(config, &data_dir)?,
            cors: config.cors.clone(),
            raft_dirs: ReplicaDirs {
                log: config
                    .wal_dir
                    .clone()
                    .unwrap_or_else(|| data_dir.join("raft").join("log")),
                snapshots: data_dir.join("raft").join("snapshots"),
            },
            data_dir,
        })
    }
}

fn addrs(config: &Config, bound: &Bound) -> Result<Addrs, String> {
    let client = local_addrs(&bound.client);
    let client_endpoints: Vec<String> = bound
        .client
        .iter()
        .flat_map(|listener| {
            let addr = listener.tcp_addr();
            listener.urls.iter().map(move |url| match addr {
                // A unix socket's URL is its own endpoint.
                None => url.clone(),
                Some(a) => {
                    let scheme = if crate::config::is_https(url) {
                        "https"
                    } else {
                        "http"
                    };
                    format!("{scheme}://{a}")
                }
            })
        })
        .collect();
    let advertised_client_urls = if config.advertise_client_urls.is_empty() {
        client_endpoints.clone()
    } else {
        config.advertise_client_urls.clone()
    };
    Ok(Addrs {
        client,
        metrics: local_addrs(&bound.metrics),
        client_http: local_addrs(&bound.client_http),
        client_endpoints,
        advertised_client_urls,
    })
}

/// The replicated log's settings (kept in `<data-dir>/raft`) from the cluster flags.
/// etcd's `SetMemberLocalAddr`: the first advertised peer URL whose host
/// is an IP address, neither loopback nor unspecified, is where this
/// member's connections to its peers leave from; with etcd's lines.
fn member_local_addr(advertised: &[String]) -> Option<std::net::IpAddr> {
    tracing::info!(
        "advertise-peer-urls" = ?advertised,
        "searching for a suitable member local address in AdvertisePeerURLs"
    );
    let urls: Vec<&String> = advertised.iter().collect();
    let found = url_hosts(&urls).into_iter().find_map(|host| {
        let ip: std::net::IpAddr = host.parse().ok()?;
        (!ip.is_loopback() && !ip.is_unspecified()).then_some(ip)
    });
    match found {
        Some(ip) => tracing::info!("LocalAddr" = %ip, "setting member local address"),
        None => tracing::warn!(
            "advertise-peer-urls" = ?advertised,
            "unable to set a member local address due to lack of suitable local addresses"
        ),
    }
    found
}

fn replica_config(config: &Config, plan: &ClusterPlan) -> ReplicaConfig {
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
    ReplicaConfig {
        member_id: plan.member_id,
        cluster_id: hark_raft::ids::cluster_id(&initial_ids),
        join,
        cluster_token: plan.token.clone(),
        initial_members,
        heartbeat_interval: Duration::from_millis(config.heartbeat_interval),
        election_timeout: election,
        snapshot_count: config.snapshot_count,
        snapshot_catchup_entries: config.snapshot_catchup_entries(),
        fsync: !config.unsafe_no_fsync,
        peer_source: config.peer_local_addr,
        peer_tls: None,
        initial_corruption_check: false,
        force_new_cluster: config.force_new_cluster,
        strict_reconfig_check: config.strict_reconfig_check,
        pre_vote: config.pre_vote,
        append_window: usize::try_from(config.peer_append_window)
            .unwrap_or(hark_raft::MAX_APPEND_WINDOW),
        batches_in_flight: usize::try_from(config.proposal_batches_in_flight)
            .unwrap_or(hark_raft::MAX_BATCHES_IN_FLIGHT),
        // etcd's request timeout: 5 s plus two election timeouts.
        request_timeout: Duration::from_secs(5) + 2 * election,
    }
}

/// The client listeners' TLS, if any client URL is https:// (etcd's flags).
fn client_tls(config: &Config, data_dir: &Path) -> Result<Option<TlsPlan>, String> {
    let urls: Vec<&String> = listen_urls(&config.listen_client_urls)
        .chain(listen_urls(&config.listen_client_http_urls))
        .chain(listen_urls(&config.listen_metrics_urls))
        .collect();
    let settings = TlsSettings {
        cert_file: config.cert_file.clone(),
        key_file: config.key_file.clone(),
        trusted_ca_file: config.trusted_ca_file.clone(),
        client_cert_auth: config.client_cert_auth,
        client_crl_file: config.client_crl_file.clone(),
        auto_tls: config.auto_tls,
        min_version: config.tls_min_version.clone(),
        max_version: config.tls_max_version.clone(),
        cipher_suites: config.cipher_suites.clone(),
        allowed_cns: config.client_cert_allowed_cn.clone(),
        allowed_hostnames: config.client_cert_allowed_hostname.clone(),
        dials: false,
        check_caller_san: false,
    };
    if !urls.iter().any(|u| crate::config::is_https(u)) {
        if settings.is_set() {
            tracing::warn!("TLS flags are set but no client URL is https://: serving plain HTTP");
        }
        return Ok(None);
    }
    if !settings.is_set() {
        let client_https = listen_urls(&config.listen_client_urls)
            .chain(listen_urls(&config.listen_client_http_urls))
            .any(|u| crate::config::is_https(u));
        if !client_https {
            // etcd's own words, which its tests and tools look for.
            return Err(
                "client TLS key/cert (--cert-file, --key-file) must be provided for metrics secure url"
                    .into(),
            );
        }
        return Err("https:// client URLs need --cert-file and --key-file (or --auto-tls)".into());
    }
    Ok(Some(TlsPlan {
        settings,
        auto_dir: data_dir.join("fixtures").join("client"),
        hosts: url_hosts(&urls),
    }))
}

/// The peer links' TLS (etcd's `--peer-*` flags), for https:// peer URLs:
/// served on the peer listeners and used to dial the other members.
fn peer_tls(config: &Config, data_dir: &Path) -> Result<Option<TlsPlan>, String> {
    let settings = TlsSettings {
        cert_file: config.peer_cert_file.clone(),
        key_file: config.peer_key_file.clone(),
        trusted_ca_file: config.peer_trusted_ca_file.clone(),
        client_cert_auth: config.peer_client_cert_auth,
        client_crl_file: config.peer_crl_file.clone(),
        auto_tls: config.peer_auto_tls,
        min_version: config.tls_min_version.clone(),
        max_version: config.tls_max_version.clone(),
        cipher_suites: config.cipher_suites.clone(),
        allowed_cns: config.peer_cert_allowed_cn.clone(),
        allowed_hostnames: config.peer_cert_allowed_hostname.clone(),
        dials: true,
        check_caller_san: !config.peer_skip_client_san_verification,
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
    Ok(Some(TlsPlan {
        settings,
        auto_dir: data_dir.join("fixtures").join("peer"),
        hosts: url_hosts(&listen),
    }))
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

#[cfg(test)]
mod tests {
    use super::member_local_addr;

    #[test]
    fn the_member_local_address_is_the_first_routable_advertised_ip() {
        let urls = |list: &[&str]| list.iter().map(|u| u.to_string()).collect::<Vec<_>>();
        let pick = |list: &[&str]| member_local_addr(&urls(list)).map(|ip| ip.to_string());
        assert_eq!(
            pick(&["https://127.0.0.1:2380", "https://192.0.2.2:2380"]),
            Some("192.0.2.2".into())
        );
        assert_eq!(
            pick(&["http://[2001:db8::1]:2380"]),
            Some("2001:db8::1".into())
        );
        assert_eq!(
            pick(&["http://localhost:2380", "http://0.0.0.0:2380"]),
            None
        );
        assert_eq!(pick(&["http://[::1]:2380"]), None);
    }
}
