//! The `hark` binary's configuration: etcd's flag names for what Hark supports,
//! each also read from a `HARK_*` environment variable.

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, ValueEnum};
use hark_snapshot::schedule::{Backups, Schedule};

pub mod command_line;
pub mod config_file;
pub mod etcd_flags;
pub mod feature_gates;

#[derive(Debug, Clone, Parser)]
#[command(
    name = "hark",
    version = crate::VERSION_TEXT,
    about = "Hark: an etcd v3 compatible key-value store built around watch",
    // Go's flag package takes a flag given twice, and the last value wins:
    // scripts and etcd's own tests rely on it.
    args_override_self = true
)]
pub struct Config {
    /// etcd's YAML configuration file (keys are these flags' names, TLS in
    /// `client-transport-security` / `peer-transport-security`); when
    /// given, every other flag and environment variable is ignored, as in
    /// etcd.
    #[arg(long, env = "HARK_CONFIG_FILE")]
    pub config_file: Option<PathBuf>,

    /// Human-readable name for this member.
    #[arg(long, env = "HARK_NAME", default_value = "default")]
    pub name: String,

    /// Path to the data directory (default: `<name>.hark`).
    #[arg(
        long,
        env = "HARK_DATA_DIR",
        help = "Path to the data directory [default: <name>.hark]"
    )]
    pub data_dir: Option<PathBuf>,

    /// A dedicated directory for the replicated log (etcd's WAL), e.g. on
    /// a faster disk (default: `<data-dir>/raft/log`). Moving an existing
    /// log there is the operator's job: started with the store's log
    /// missing, a member refuses to start.
    #[arg(long, env = "HARK_WAL_DIR")]
    pub wal_dir: Option<PathBuf>,

    /// A snapshot file (saved by etcd or Hark) to restore into --data-dir
    /// before the first start; ignored once the data dir holds a store.
    #[arg(long, env = "HARK_FROM_SNAPSHOT")]
    pub from_snapshot: Option<PathBuf>,

    /// URLs to serve clients on (gRPC and HTTP), comma-separated.
    #[arg(
        long,
        env = "HARK_LISTEN_CLIENT_URLS",
        value_delimiter = ',',
        default_value = "http://127.0.0.1:2379"
    )]
    pub listen_client_urls: Vec<String>,

    /// Client URLs to advertise (MemberList) [default: the listen URLs].
    #[arg(long, env = "HARK_ADVERTISE_CLIENT_URLS", value_delimiter = ',')]
    pub advertise_client_urls: Vec<String>,

    /// Extra URLs serving only /metrics and /health, comma-separated.
    #[arg(long, env = "HARK_LISTEN_METRICS_URLS", value_delimiter = ',')]
    pub listen_metrics_urls: Vec<String>,

    /// URLs serving the HTTP endpoints only (JSON gateway, /version,
    /// /metrics, /health), comma-separated. When set, the client URLs serve
    /// gRPC only, as etcd's flag of the same name.
    #[arg(long, env = "HARK_LISTEN_CLIENT_HTTP_URLS", value_delimiter = ',')]
    pub listen_client_http_urls: Vec<String>,

    /// Origins allowed to call the HTTP endpoints from a browser
    /// (comma-separated; `*` allows any, etcd's default). Empty, Hark's
    /// default: same-origin only (the web console), so that a web page a
    /// user opens cannot read or write the store.
    #[arg(long, env = "HARK_CORS", default_value = "")]
    pub cors: String,

    /// Most streams a client connection may have open at once (HTTP/2's
    /// SETTINGS_MAX_CONCURRENT_STREAMS): each Watch and LeaseKeepAlive, and
    /// each call in flight, is one. etcd's default is unlimited; Hark's
    /// bounds what one connection can hold.
    #[arg(long, env = "HARK_MAX_CONCURRENT_STREAMS", default_value_t = 10_000,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_concurrent_streams: u32,

    /// How often the server pings a client connection to check it is alive
    /// (HTTP/2 PING); 0 disables the pings.
    #[arg(long, env = "HARK_GRPC_KEEPALIVE_INTERVAL", default_value = "2h",
          value_parser = parse_go_duration)]
    pub grpc_keepalive_interval: Duration,

    /// How long a ping's answer may take before the connection is closed
    /// (0: the 20 s default).
    #[arg(long, env = "HARK_GRPC_KEEPALIVE_TIMEOUT", default_value = "20s",
          value_parser = parse_go_duration)]
    pub grpc_keepalive_timeout: Duration,

    /// Most watchers one watch stream may hold at once; a create past it is
    /// refused (Hark's own bound: etcd has none).
    #[arg(long, env = "HARK_MAX_WATCHERS_PER_STREAM", default_value_t = 100_000,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_watchers_per_stream: u64,

    /// Bytes of the newest revisions the watch engine keeps in memory, so
    /// watchers that fall behind catch up without reading the store (Hark's
    /// own: etcd reads every catch-up from its store). Smaller spends less
    /// memory; watchers further behind read history instead. At least 1 MiB.
    #[arg(long, env = "HARK_WATCH_WINDOW_BYTES", default_value_t = hark_watch::DEFAULT_WINDOW_BYTES as u64,
          value_parser = clap::value_parser!(u64).range(1 << 20..))]
    pub watch_window_bytes: u64,

    /// Largest request a client may send, in bytes.
    #[arg(long, env = "HARK_MAX_REQUEST_BYTES", default_value_t = 1_572_864)]
    pub max_request_bytes: usize,

    /// Backend size at which the NOSPACE alarm is raised and writes that grow
    /// the store are refused; 0 means the default, etcd's 2 GiB; negative
    /// disables the quota.
    #[arg(
        long,
        env = "HARK_QUOTA_BACKEND_BYTES",
        default_value_t = 0,
        allow_negative_numbers = true
    )]
    pub quota_backend_bytes: i64,

    /// Certificate (PEM) served on https:// client URLs.
    #[arg(long, env = "HARK_CERT_FILE")]
    pub cert_file: Option<PathBuf>,

    /// Private key (PEM) of `--cert-file`.
    #[arg(long, env = "HARK_KEY_FILE")]
    pub key_file: Option<PathBuf>,

    /// CA certificates (PEM) that client certificates must chain to; with
    /// it set, a client certificate is required (as etcd).
    #[arg(long, env = "HARK_TRUSTED_CA_FILE")]
    pub trusted_ca_file: Option<PathBuf>,

    /// Require a client certificate signed by `--trusted-ca-file`; its common
    /// name is the user when a request carries no token.
    #[arg(long, env = "HARK_CLIENT_CERT_AUTH", num_args = 0..=1,
          default_missing_value = "true", action = clap::ArgAction::Set, default_value_t = false)]
    pub client_cert_auth: bool,

    /// Revoked client certificates (PEM CRLs).
    #[arg(long, env = "HARK_CLIENT_CRL_FILE")]
    pub client_crl_file: Option<PathBuf>,

    /// Serve https:// client URLs with a generated self-signed certificate
    /// (development only).
    #[arg(long, env = "HARK_AUTO_TLS", num_args = 0..=1,
          default_missing_value = "true", action = clap::ArgAction::Set, default_value_t = false)]
    pub auto_tls: bool,

    /// Lowest TLS version accepted: TLS1.2 or TLS1.3.
    #[arg(long, env = "HARK_TLS_MIN_VERSION")]
    pub tls_min_version: Option<String>,

    /// Highest TLS version accepted: TLS1.2 or TLS1.3.
    #[arg(long, env = "HARK_TLS_MAX_VERSION")]
    pub tls_max_version: Option<String>,

    /// Cipher suites allowed (IANA names, comma-separated) [default: rustls'].
    #[arg(long, env = "HARK_CIPHER_SUITES", value_delimiter = ',')]
    pub cipher_suites: Vec<String>,

    /// Certificate (PEM) served on https:// peer URLs, and shown to the
    /// other members when dialling theirs.
    #[arg(long, env = "HARK_PEER_CERT_FILE")]
    pub peer_cert_file: Option<PathBuf>,

    /// Private key (PEM) of `--peer-cert-file`.
    #[arg(long, env = "HARK_PEER_KEY_FILE")]
    pub peer_key_file: Option<PathBuf>,

    /// CA certificates (PEM) the other members' certificates must chain to
    /// (both ways: dialling members must show one).
    #[arg(long, env = "HARK_PEER_TRUSTED_CA_FILE")]
    pub peer_trusted_ca_file: Option<PathBuf>,

    /// Require the members dialling this one to show a certificate signed
    /// by `--peer-trusted-ca-file` (which already implies it, as in etcd).
    #[arg(long, env = "HARK_PEER_CLIENT_CERT_AUTH", num_args = 0..=1,
          default_missing_value = "true", action = clap::ArgAction::Set, default_value_t = false)]
    pub peer_client_cert_auth: bool,

    /// Revoked peer certificates (PEM CRLs).
    #[arg(long, env = "HARK_PEER_CRL_FILE")]
    pub peer_crl_file: Option<PathBuf>,

    /// Serve https:// peer URLs with a generated self-signed certificate;
    /// peers' certificates are then not verified (development only).
    #[arg(long, env = "HARK_PEER_AUTO_TLS", num_args = 0..=1,
          default_missing_value = "true", action = clap::ArgAction::Set, default_value_t = false)]
    pub peer_auto_tls: bool,

    /// The common names a peer certificate may have (both ways), comma
    /// separated; any other is refused at the handshake.
    #[arg(long, env = "HARK_PEER_CERT_ALLOWED_CN", value_delimiter = ',')]
    pub peer_cert_allowed_cn: Vec<String>,

    /// Do not check a dialling member's certificate against the address it
    /// dials from (etcd checks the IP and DNS SANs, when it has any).
    #[arg(long, alias = "experimental-peer-skip-client-san-verification",
          env = "HARK_PEER_SKIP_CLIENT_SAN_VERIFICATION", num_args = 0..=1,
          default_missing_value = "true", action = clap::ArgAction::Set, default_value_t = false)]
    pub peer_skip_client_san_verification: bool,

    /// The common names a client certificate may have, comma separated
    /// (etcd sets it only in the config file, as
    /// `client-transport-security.allowed-cn`); needs --trusted-ca-file.
    #[arg(long, env = "HARK_CLIENT_CERT_ALLOWED_CN", value_delimiter = ',')]
    pub client_cert_allowed_cn: Vec<String>,

    /// Host names (or IP addresses) one of which a client certificate's
    /// SANs must name, comma separated; needs --trusted-ca-file. Not
    /// together with allowed common names (etcd refuses the pair).
    #[arg(long, env = "HARK_CLIENT_CERT_ALLOWED_HOSTNAME", value_delimiter = ',')]
    pub client_cert_allowed_hostname: Vec<String>,

    /// The same for peer certificates (both ways).
    #[arg(long, env = "HARK_PEER_CERT_ALLOWED_HOSTNAME", value_delimiter = ',')]
    pub peer_cert_allowed_hostname: Vec<String>,

    /// Auth token kind: `simple` (etcd's default), or
    /// `jwt,sign-method=RS256,pub-key=FILE,priv-key=FILE,ttl=5m` (signed
    /// tokens every member verifies; RS*, PS*, ES256, ES384, EdDSA, HS*).
    #[arg(long, env = "HARK_AUTH_TOKEN", default_value = "simple", value_parser = parse_auth_token)]
    pub auth_token: String,

    /// Seconds a simple token lives after its last use.
    #[arg(long, env = "HARK_AUTH_TOKEN_TTL", default_value_t = 300)]
    pub auth_token_ttl: u64,

    /// bcrypt cost of stored passwords (4 to 31).
    #[arg(long, env = "HARK_BCRYPT_COST", default_value_t = 10,
          value_parser = clap::value_parser!(u32).range(4..=31))]
    pub bcrypt_cost: u32,

    /// Most operations (and compares) in one transaction.
    #[arg(long, env = "HARK_MAX_TXN_OPS", default_value_t = 128)]
    pub max_txn_ops: usize,

    /// `periodic` (retention is a duration, e.g. 1h or a number of hours) or
    /// `revision` (retention is a number of revisions).
    #[arg(long, env = "HARK_AUTO_COMPACTION_MODE", value_enum, default_value_t = CompactionMode::Periodic)]
    pub auto_compaction_mode: CompactionMode,

    /// How much history auto-compaction keeps; 0 disables it.
    #[arg(long, env = "HARK_AUTO_COMPACTION_RETENTION", default_value = "0")]
    pub auto_compaction_retention: String,

    /// Defragment by itself when the rows compaction deleted since the last
    /// defragmentation (in this process) hold more than this fraction of
    /// the database's size (0.5: half of it), at most once per --auto-defrag-interval and never while a
    /// defragmentation or a snapshot is under way. 0: off.
    #[arg(long, env = "HARK_AUTO_DEFRAG_RATIO", default_value_t = 0.0)]
    pub auto_defrag_ratio: f64,

    /// Where the data dir's store lives: `rocksdb` (the default) or `fjall`
    /// (pure Rust). A data dir written by the other is refused; move data
    /// between them with `snapshot save` and `--from-snapshot`. (The raft
    /// log stays in RocksDB either way.)
    #[arg(long, env = "HARK_BACKEND", default_value = "rocksdb",
          value_parser = clap::value_parser!(hark_mvcc::BackendKind))]
    pub backend: hark_mvcc::BackendKind,

    /// Keep space per key prefix (`harkctl du`, the console, the
    /// `hark_prefix_*` metrics) for prefixes up to this many `/` deep:
    /// `/registry/pods/default/` is 4. 0: only the whole store's totals.
    #[arg(long, env = "HARK_USAGE_DEPTH", default_value_t = hark_mvcc::DEFAULT_USAGE_DEPTH as u32,
          value_parser = clap::value_parser!(u32).range(0..=32))]
    pub usage_depth: u32,

    /// The least time between two automatic defragmentations.
    #[arg(long, env = "HARK_AUTO_DEFRAG_INTERVAL", default_value = "1h",
          value_parser = parse_go_duration)]
    pub auto_defrag_interval: Duration,

    /// Back up this member's data on a schedule: an interval (`6h`, `30m`) or
    /// a cron expression in UTC (`0 */6 * * *`; six fields with seconds
    /// first). Each backup is an etcd snapshot file in --snapshot-dir, read
    /// back and checked after writing. Empty: no scheduled backups.
    #[arg(long, env = "HARK_SNAPSHOT_SCHEDULE", default_value = "")]
    pub snapshot_schedule: String,

    /// How many scheduled backups to keep; older ones are removed.
    #[arg(long, env = "HARK_SNAPSHOT_RETENTION", default_value_t = 5,
          value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub snapshot_retention: u64,

    /// Where scheduled backups go [default: DATA_DIR/backups].
    #[arg(long, env = "HARK_SNAPSHOT_DIR")]
    pub snapshot_dir: Option<PathBuf>,

    /// Interval of progress notifications to idle `progress_notify` watchers.
    #[arg(long = "experimental-watch-progress-notify-interval",
          alias = "watch-progress-notify-interval",
          env = "HARK_EXPERIMENTAL_WATCH_PROGRESS_NOTIFY_INTERVAL",
          default_value = "10m", value_parser = parse_go_duration)]
    pub watch_progress_notify_interval: Duration,

    /// URLs to serve other members on (Hark's peer protocol), comma-separated.
    /// Every member runs the replicated log; without --initial-cluster it is
    /// a cluster of one that MemberAdd can grow. Port 0 picks a free port.
    #[arg(
        long,
        env = "HARK_LISTEN_PEER_URLS",
        value_delimiter = ',',
        default_value = "http://localhost:2380"
    )]
    pub listen_peer_urls: Vec<String>,

    /// This member's peer URLs as the other members reach them
    /// [default: --listen-peer-urls].
    #[arg(long, env = "HARK_INITIAL_ADVERTISE_PEER_URLS", value_delimiter = ',')]
    pub initial_advertise_peer_urls: Vec<String>,

    /// The members of a new cluster: name=peer-url,... (a name may repeat for
    /// several URLs). Ignored on a restart with an existing data dir.
    #[arg(long, env = "HARK_INITIAL_CLUSTER", default_value = "")]
    pub initial_cluster: String,

    /// new: start a new cluster from --initial-cluster; existing: join a
    /// cluster this member was added to (MemberAdd). Ignored on restarts.
    #[arg(long, env = "HARK_INITIAL_CLUSTER_STATE", value_enum, default_value_t = ClusterState::New)]
    pub initial_cluster_state: ClusterState,

    /// Distinguishes clusters started from the same --initial-cluster (it is
    /// part of every member id).
    #[arg(
        long,
        env = "HARK_INITIAL_CLUSTER_TOKEN",
        default_value = "etcd-cluster"
    )]
    pub initial_cluster_token: String,

    /// Milliseconds between the leader's heartbeats.
    #[arg(long, env = "HARK_HEARTBEAT_INTERVAL", default_value_t = 100)]
    pub heartbeat_interval: u64,

    /// Milliseconds without a heartbeat before a member starts an election.
    #[arg(long, env = "HARK_ELECTION_TIMEOUT", default_value_t = 1000)]
    pub election_timeout: u64,

    /// Applied log entries between raft snapshots (after which the log is purged).
    #[arg(long, env = "HARK_SNAPSHOT_COUNT", default_value_t = 100_000)]
    pub snapshot_count: u64,

    /// Log entries kept after a raft snapshot for slow followers to catch up
    /// from without a snapshot (etcd's default 5,000); unset, the lesser of
    /// 5,000 and `--snapshot-count`.
    #[arg(long, alias = "experimental-snapshot-catchup-entries",
          alias = "experimental-snapshot-catch-up-entries",
          env = "HARK_SNAPSHOT_CATCHUP_ENTRIES", value_parser = clap::value_parser!(u64).range(1..))]
    pub snapshot_catchup_entries: Option<u64>,

    /// At start, defragment the store when at least this many MiB of it
    /// are reclaimable (etcd's bootstrap defragmentation); 0 never.
    #[arg(
        long,
        alias = "experimental-bootstrap-defrag-threshold-megabytes",
        env = "HARK_BOOTSTRAP_DEFRAG_THRESHOLD_MEGABYTES",
        default_value_t = 0
    )]
    pub bootstrap_defrag_threshold_megabytes: u64,

    /// Stored revisions a compaction looks at per batch (etcd's default is
    /// 1000); unset, Hark's own batch of 10,000.
    #[arg(long, alias = "experimental-compaction-batch-limit",
          env = "HARK_COMPACTION_BATCH_LIMIT", value_parser = clap::value_parser!(u64).range(1..))]
    pub compaction_batch_limit: Option<u64>,

    /// Pause between a compaction's batches (etcd's default is 10ms); unset,
    /// none: Hark's compaction runs off the write path.
    #[arg(long, alias = "experimental-compaction-sleep-interval",
          env = "HARK_COMPACTION_SLEEP_INTERVAL", value_parser = parse_go_duration)]
    pub compaction_sleep_interval: Option<Duration>,

    /// Refuse a membership change that would leave fewer started, connected
    /// voters than a quorum (etcd's default); `false` lets any change through.
    #[arg(long, env = "HARK_STRICT_RECONFIG_CHECK", num_args = 0..=1,
          default_missing_value = "true", action = clap::ArgAction::Set, default_value_t = true)]
    pub strict_reconfig_check: bool,

    /// A member whose election timer fires asks the others whether it would
    /// win before it raises its term (etcd's default since 3.5), so one cut
    /// off and healed does not depose a working leader; `false` elects
    /// without asking.
    #[arg(long, env = "HARK_PRE_VOTE", num_args = 0..=1,
          default_missing_value = "true", action = clap::ArgAction::Set, default_value_t = true)]
    pub pre_vote: bool,

    /// Most appends the leader keeps in flight to one follower, on the link
    /// that follower opened to it; 1 sends each append once the one before
    /// it is answered.
    #[arg(long, env = "HARK_PEER_APPEND_WINDOW",
          default_value_t = hark_raft::DEFAULT_APPEND_WINDOW as u64,
          value_parser = clap::value_parser!(u64).range(1..=hark_raft::MAX_APPEND_WINDOW as u64))]
    pub peer_append_window: u64,

    /// Most batches of writes a member has on their way to the log at
    /// once (each one log entry); 1 starts a batch only once the one before
    /// it is applied.
    #[arg(long, env = "HARK_PROPOSAL_BATCHES_IN_FLIGHT",
          default_value_t = hark_raft::DEFAULT_BATCHES_IN_FLIGHT as u64,
          value_parser = clap::value_parser!(u64).range(1..=hark_raft::MAX_BATCHES_IN_FLIGHT as u64))]
    pub proposal_batches_in_flight: u64,

    /// Restart this member, with its data, as the only member of its
    /// cluster (after the others are lost for good): entries not known to
    /// be committed are dropped, the other members removed. Start without
    /// it afterwards; add members back with MemberAdd.
    #[arg(long, env = "HARK_FORCE_NEW_CLUSTER", num_args = 0..=1,
          default_missing_value = "true", action = clap::ArgAction::Set, default_value_t = false)]
    pub force_new_cluster: bool,

    /// Before serving clients, compare this member's HashKV with every
    /// peer's at this member's revision, and refuse to start on a mismatch
    /// (etcd 3.6: `--feature-gates=InitialCorruptCheck=true`).
    #[arg(long, env = "HARK_EXPERIMENTAL_INITIAL_CORRUPT_CHECK", num_args = 0..=1,
          default_missing_value = "true", action = clap::ArgAction::Set, default_value_t = false)]
    pub experimental_initial_corrupt_check: bool,

    /// How often the leader compares its HashKV with every member's and
    /// raises the CORRUPT alarm on a mismatch; 0 never.
    #[arg(long, alias = "experimental-corrupt-check-time", env = "HARK_CORRUPT_CHECK_TIME",
          default_value = "0s", value_parser = parse_go_duration)]
    pub corrupt_check_time: Duration,

    /// Have the leader compare the members' hashes at the newest compacted
    /// revision every --compact-hash-check-time (etcd 3.7:
    /// `--feature-gates=CompactHashCheck=true`).
    #[arg(long, env = "HARK_EXPERIMENTAL_COMPACT_HASH_CHECK_ENABLED", num_args = 0..=1,
          default_missing_value = "true", action = clap::ArgAction::Set, default_value_t = false)]
    pub experimental_compact_hash_check_enabled: bool,

    /// How often the compaction hash check runs.
    #[arg(long, alias = "experimental-compact-hash-check-time",
          env = "HARK_COMPACT_HASH_CHECK_TIME", default_value = "1m",
          value_parser = parse_go_duration)]
    pub compact_hash_check_time: Duration,

    /// etcd 3.6's feature gates, `Name=true|false,...`: `InitialCorruptCheck`
    /// is honoured; the others are accepted and warned about.
    #[arg(long, env = "HARK_FEATURE_GATES", default_value = "")]
    pub feature_gates: String,

    /// The local address connections to other members leave from (e.g. on a
    /// host with several addresses, or for a proxy that tells members apart
    /// by address) [default: the system's choice].
    #[arg(long, env = "HARK_PEER_LOCAL_ADDR")]
    pub peer_local_addr: Option<std::net::IpAddr>,

    /// Do not fsync: a crash may lose acknowledged writes (tests and benchmarks).
    #[arg(long, env = "HARK_UNSAFE_NO_FSYNC", num_args = 0..=1,
          default_missing_value = "true", action = clap::ArgAction::Set, default_value_t = false)]
    pub unsafe_no_fsync: bool,

    /// The logger: `zap`, the only one etcd 3.5 and later know (Hark's
    /// logs are its own, in the format --log-format names).
    #[arg(long, env = "HARK_LOGGER", default_value = "zap", value_parser = ["zap"])]
    pub logger: String,

    /// debug, info, warn or error.
    #[arg(long, env = "HARK_LOG_LEVEL", default_value = "info")]
    pub log_level: String,

    /// Log lines as zap's JSON, as etcd writes them, or zap's `console`
    /// form (tab-separated; `text` is the same).
    #[arg(long, env = "HARK_LOG_FORMAT", value_enum, default_value_t = LogFormat::Json)]
    pub log_format: LogFormat,

    /// Where log lines go, comma-separated: `default` or `stderr`,
    /// `stdout`, or files (appended to; `/dev/null` discards).
    #[arg(
        long,
        env = "HARK_LOG_OUTPUTS",
        value_delimiter = ',',
        default_value = "default"
    )]
    pub log_outputs: Vec<String>,
}

/// etcd's default `--quota-backend-bytes`: 2 GiB.
pub const DEFAULT_QUOTA_BYTES: i64 = 2 << 30;
/// Above this etcd warns that the quota may degrade performance.
pub const MAX_SUGGESTED_QUOTA_BYTES: i64 = 8 << 30;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompactionMode {
    Periodic,
    Revision,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ClusterState {
    New,
    Existing,
}

/// This member's place in a replicated cluster, from the cluster flags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterPlan {
    pub member_id: u64,
    pub peer_urls: Vec<String>,
    /// `--initial-cluster`: name → peer URLs, in flag order.
    pub initial: Vec<(String, Vec<String>)>,
    pub state: ClusterState,
    pub token: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    Json,
    #[value(alias = "text")]
    Console,
}

/// Scheduled backups (`--snapshot-schedule`): when, and where to.
#[derive(Debug, Clone)]
pub struct BackupPlan {
    pub schedule: Schedule,
    pub backups: Backups,
}

/// What auto-compaction keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retention {
    Off,
    Period(Duration),
    Revisions(i64),
}

impl Config {
    /// Log entries kept after a snapshot: `--snapshot-catchup-entries`, else
    /// the lesser of etcd's default (5,000) and `--snapshot-count`.
    pub fn snapshot_catchup_entries(&self) -> u64 {
        self.snapshot_catchup_entries
            .unwrap_or(self.snapshot_count.min(5000))
    }

    /// The token kind `--auth-token` names, with a JWT's key files read
    /// (etcd's options: `sign-method` required, `pub-key`, `priv-key`,
    /// `ttl` default 5m; unknown ones are warned about).
    pub fn token_kind(&self) -> Result<hark_auth::TokenKind, String> {
        let mut parts = self.auth_token.split(',');
        if parts.next() != Some("jwt") {
            return Ok(hark_auth::TokenKind::Simple);
        }
        let mut options = std::collections::BTreeMap::new();
        for part in parts.filter(|p| !p.is_empty()) {
            let (k, v) = part
                .split_once('=')
                .ok_or_else(|| format!("auth: invalid auth options: {part:?} is not key=value"))?;
            if !["sign-method", "pub-key", "priv-key", "ttl"].contains(&k) {
                tracing::warn!(option = k, "unknown JWT option");
            }
            options.insert(k, v);
        }
        let read = |k: &str| {
            options
                .get(k)
                .map(|path| {
                    std::fs::read(path).map_err(|e| format!("--auth-token {k}={path}: {e}"))
                })
                .transpose()
        };
        let method = options
            .get("sign-method")
            .ok_or("auth: invalid auth options: jwt needs sign-method")?;
        let ttl = match options.get("ttl") {
            Some(t) => parse_go_duration(t)?,
            None => Duration::from_secs(5 * 60),
        };
        let tokens = hark_auth::JwtTokens::new(
            method,
            read("pub-key")?.as_deref(),
            read("priv-key")?.as_deref(),
            ttl,
        )?;
        Ok(hark_auth::TokenKind::Jwt(std::sync::Arc::new(tokens)))
    }

    pub fn data_dir(&self) -> PathBuf {
        self.data_dir
            .clone()
            .unwrap_or_else(|| PathBuf::from(format!("{}.hark", self.name)))
    }

    /// The cluster this member belongs to. `bound_peers` are the addresses
    /// the --listen-peer-urls were bound to, in order: a URL with port 0
    /// stands for the port it got.
    pub fn cluster_plan(&self, bound_peers: &[SocketAddr]) -> Result<ClusterPlan, String> {
        let mut bound = bound_peers.iter();
        let listen: Vec<String> = self
            .listen_peer_urls
            .iter()
            .filter(|u| !u.trim().is_empty())
            .map(|url| {
                // A unix socket's URL is its own address.
                if is_unix_url(url) {
                    return url.clone();
                }
                match bound.next() {
                    Some(addr) if url.trim_end_matches('/').ends_with(":0") => {
                        format!("http://{addr}")
                    }
                    _ => url.clone(),
                }
            })
            .collect();
        let mut initial: Vec<(String, Vec<String>)> = Vec::new();
        for part in self.initial_cluster.split(',').filter(|p| !p.is_empty()) {
            let (name, url) = part
                .split_once('=')
                .ok_or_else(|| format!("--initial-cluster: {part:?} is not name=url"))?;
            if unix_socket_path(url, true)
                .map_err(|e| format!("--initial-cluster: {e}"))?
                .is_none()
            {
                socket_addrs(url).map_err(|e| format!("--initial-cluster: {e}"))?;
            }
            match initial.iter_mut().find(|(n, _)| n == name) {
                Some((_, urls)) => urls.push(url.to_string()),
                None => initial.push((name.to_string(), vec![url.to_string()])),
            }
        }
        let advertised = if self.initial_advertise_peer_urls.is_empty() {
            listen
        } else {
            self.initial_advertise_peer_urls.clone()
        };
        if initial.is_empty() {
            // Peer URLs without --initial-cluster: a cluster of this member alone.
            initial.push((self.name.clone(), advertised.clone()));
        }
        let peer_urls = match initial.iter().find(|(n, _)| *n == self.name) {
            Some((_, urls)) if advertised.is_empty() => urls.clone(),
            Some((_, urls)) => {
                let (mut a, mut b) = (urls.clone(), advertised.clone());
                a.sort();
                b.sort();
                if a != b {
                    return Err(format!(
                        "--initial-cluster has {:?} for {}, but --initial-advertise-peer-urls is {:?}",
                        urls, self.name, advertised
                    ));
                }
                advertised
            }
            None => {
                return Err(format!(
                    "--initial-cluster {:?} has no member named {:?} (--name)",
                    self.initial_cluster, self.name
                ));
            }
        };
        // Every member must write the same first membership entry whatever
        // order its flags list a member's URLs in.
        for (_, urls) in &mut initial {
            urls.sort();
            urls.dedup();
        }
        let mut peer_urls = peer_urls;
        peer_urls.sort();
        Ok(ClusterPlan {
            member_id: hark_raft::ids::member_id(&peer_urls, &self.initial_cluster_token),
            peer_urls,
            initial,
            state: self.initial_cluster_state,
            token: self.initial_cluster_token.clone(),
        })
    }

    /// The backend quota in bytes: `--quota-backend-bytes`, etcd's default
    /// when it is 0; negative means no quota.
    pub fn quota_bytes(&self) -> i64 {
        if self.quota_backend_bytes == 0 {
            DEFAULT_QUOTA_BYTES
        } else {
            self.quota_backend_bytes
        }
    }

    /// Automatic defragmentation, if asked for.
    pub fn auto_defrag(&self) -> Result<Option<hark_mvcc::AutoDefrag>, String> {
        let ratio = self.auto_defrag_ratio;
        if !(0.0..1.0).contains(&ratio) {
            return Err(format!(
                "invalid --auto-defrag-ratio {ratio}: a fraction from 0 (off) up to, not including, 1"
            ));
        }
        if self.auto_defrag_interval.is_zero() {
            return Err("invalid --auto-defrag-interval: more than 0".into());
        }
        Ok((ratio > 0.0).then_some(hark_mvcc::AutoDefrag {
            ratio,
            every: self.auto_defrag_interval,
        }))
    }

    /// The scheduled backups asked for, if any.
    pub fn backups(&self, member: &str) -> Result<Option<BackupPlan>, String> {
        let raw = self.snapshot_schedule.trim();
        if raw.is_empty() {
            return Ok(None);
        }
        let schedule = match parse_go_duration(raw) {
            Ok(every) if every.is_zero() => return Ok(None),
            Ok(every) if every < Duration::from_secs(1) => {
                return Err(format!(
                    "invalid --snapshot-schedule {raw:?}: at least 1s apart"
                ));
            }
            Ok(every) => Schedule::Every(every),
            Err(_) => {
                Schedule::cron(raw).map_err(|e| format!("invalid --snapshot-schedule: {e}"))?
            }
        };
        if schedule.next_after(chrono::Utc::now()).is_none() {
            return Err(format!(
                "invalid --snapshot-schedule {raw:?}: it names no time from now on"
            ));
        }
        // The member's name starts every file name: it must stay one name
        // inside the directory.
        if member.is_empty() || member.starts_with('.') || member.contains(['/', '\\']) {
            return Err(format!(
                "--snapshot-schedule needs a --name usable in a file name, not {member:?}"
            ));
        }
        let dir = self
            .snapshot_dir
            .clone()
            .unwrap_or_else(|| self.data_dir().join("backups"));
        // The store's own directories: backups there would count as the
        // store's size (and its quota), or mix with its files.
        let same = |a: &std::path::Path, b: &std::path::Path| {
            a == b
                || a.canonicalize()
                    .ok()
                    .is_some_and(|a| Some(a) == b.canonicalize().ok())
        };
        if same(&dir, &self.data_dir()) || self.wal_dir.as_deref().is_some_and(|w| same(&dir, w)) {
            return Err(format!(
                "--snapshot-dir {} is the store's own directory; give another",
                dir.display()
            ));
        }
        Ok(Some(BackupPlan {
            schedule,
            backups: Backups {
                dir,
                member: member.to_string(),
                keep: self.snapshot_retention as usize,
            },
        }))
    }

    pub fn retention(&self) -> Result<Retention, String> {
        let raw = self.auto_compaction_retention.trim();
        let bad = || format!("invalid --auto-compaction-retention {raw:?}");
        let retention = match self.auto_compaction_mode {
            // etcd: a bare number is hours.
            CompactionMode::Periodic => match raw.parse::<u64>() {
                Ok(hours) => Duration::from_secs(hours * 3600),
                Err(_) => parse_go_duration(raw).map_err(|_| bad())?,
            },
            CompactionMode::Revision => {
                let n = raw.parse::<i64>().map_err(|_| bad())?;
                if n < 0 {
                    return Err(bad());
                }
                return Ok(if n == 0 {
                    Retention::Off
                } else {
                    Retention::Revisions(n)
                });
            }
        };
        Ok(if retention.is_zero() {
            Retention::Off
        } else {
            Retention::Period(retention)
        })
    }

    /// `--grpc-keepalive-interval` and `--grpc-keepalive-timeout`, as etcd
    /// passes them to grpc-go (where a zero timeout means the default):
    /// `None` when the server sends no pings.
    pub fn keepalive(&self) -> Option<(Duration, Duration)> {
        let timeout = match self.grpc_keepalive_timeout {
            Duration::ZERO => Duration::from_secs(20),
            t => t,
        };
        (!self.grpc_keepalive_interval.is_zero()).then_some((self.grpc_keepalive_interval, timeout))
    }

    /// `--log-level` as a tracing filter (etcd's `panic` and `fatal` map to error).
    pub fn log_filter(&self) -> Result<&'static str, String> {
        match self.log_level.as_str() {
            "debug" => Ok("debug"),
            "info" => Ok("info"),
            "warn" => Ok("warn"),
            "error" | "dpanic" | "panic" | "fatal" => Ok("error"),
            other => Err(format!("invalid --log-level {other:?}")),
        }
    }
}

/// Resolves an `http://host:port` URL to the addresses to bind or advertise.
/// Whether a listen URL is served with TLS.
pub fn is_https(url: &str) -> bool {
    url.trim().starts_with("https://")
}

/// Whether `url` names a unix socket (`unix://` or `unixs://`).
pub fn is_unix_url(url: &str) -> bool {
    url.starts_with("unix://") || url.starts_with("unixs://")
}

/// The socket file a `unix://` URL names, as etcd reads it: for a peer URL
/// its host (`unix://etcd.unix:1` is `./etcd.unix:1`), for a client URL its
/// host and path (`unix:///run/etcd.sock` is `/run/etcd.sock`); relative
/// to the working directory. `None` for other schemes.
pub fn unix_socket_path(url: &str, peer: bool) -> Result<Option<PathBuf>, String> {
    if url.starts_with("unixs://") {
        return Err(format!(
            "{url:?}: TLS over a unix socket (unixs://) is not supported; use unix://"
        ));
    }
    let Some(rest) = url.strip_prefix("unix://") else {
        return Ok(None);
    };
    let path = if peer {
        rest.split('/').next().unwrap_or("")
    } else {
        rest
    };
    if path.is_empty() || path.len() > 107 {
        return Err(format!(
            "{url:?}: a unix socket URL needs a path of 1 to 107 bytes"
        ));
    }
    Ok(Some(PathBuf::from(path)))
}

pub fn socket_addrs(url: &str) -> Result<Vec<SocketAddr>, String> {
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"))
        .ok_or_else(|| format!("unsupported URL {url:?}: use http:// or https://"))?;
    let host_port = rest.trim_end_matches('/');
    let addrs: Vec<SocketAddr> = host_port
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {url:?}: {e}"))?
        .collect();
    if addrs.is_empty() {
        return Err(format!("{url:?} resolves to no address"));
    }
    Ok(addrs)
}

/// Whether `url` is a peer URL MemberAdd and MemberUpdate take: etcd checks
/// its form only (`http(s)://host:port`, no path), not that the host
/// resolves, so a member may be added before its DNS name exists.
pub fn is_peer_url(url: &str) -> bool {
    let url = url.trim();
    let Some(host_port) = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"))
    else {
        return false;
    };
    let Some((host, port)) = host_port.rsplit_once(':') else {
        return false;
    };
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    !host.is_empty() && !host.contains(['/', '[', ']']) && port.parse::<u16>().is_ok()
}

/// `--auth-token`: `simple`, or `jwt` with its options (checked at start,
/// when the key files are read: see [`Config::token_kind`]).
fn parse_auth_token(s: &str) -> Result<String, String> {
    match s.split(',').next() {
        Some("simple" | "jwt") => Ok(s.to_owned()),
        Some(other) => Err(format!(
            "auth token type {other:?} is not supported (use simple or jwt,...)"
        )),
        None => Err("empty auth token".into()),
    }
}

/// Go's `time.ParseDuration` (etcd's flags are written in it).
pub fn parse_go_duration(s: &str) -> Result<Duration, String> {
    hark_proto::go_duration::parse(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_defrag_flags() {
        let parse = |args: &[&str]| {
            let mut all = vec!["hark"];
            all.extend(args);
            Config::try_parse_from(all).unwrap().auto_defrag()
        };
        assert_eq!(parse(&[]), Ok(None));
        assert_eq!(
            parse(&["--auto-defrag-ratio=0.4"]),
            Ok(Some(hark_mvcc::AutoDefrag {
                ratio: 0.4,
                every: Duration::from_secs(3600)
            }))
        );
        assert_eq!(
            parse(&["--auto-defrag-ratio=0.4", "--auto-defrag-interval=10m"])
                .unwrap()
                .unwrap()
                .every,
            Duration::from_secs(600)
        );
        for bad in ["1", "1.5", "-0.1", "NaN"] {
            let err = parse(&[&format!("--auto-defrag-ratio={bad}")]).unwrap_err();
            assert!(err.starts_with("invalid --auto-defrag-ratio"), "{err}");
        }
        assert!(parse(&["--auto-defrag-ratio=0.4", "--auto-defrag-interval=0s"]).is_err());
    }

    #[test]
    fn watch_window_bytes_defaults_to_the_engines_and_refuses_under_a_mebibyte() {
        let parse = |args: &[&str]| {
            let mut all = vec!["hark"];
            all.extend(args);
            Config::try_parse_from(all).map(|c| c.watch_window_bytes)
        };
        assert_eq!(parse(&[]).unwrap(), hark_watch::DEFAULT_WINDOW_BYTES as u64);
        assert_eq!(parse(&["--watch-window-bytes=1048576"]).unwrap(), 1 << 20);
        for bad in ["1048575", "0", "-1", "16MiB"] {
            assert!(
                parse(&[&format!("--watch-window-bytes={bad}")]).is_err(),
                "{bad} accepted"
            );
        }
    }

    #[test]
    fn snapshot_schedule_takes_an_interval_or_cron() {
        let plan = |args: &[&str]| {
            let mut all = vec!["hark", "--name=m1"];
            all.extend(args);
            Config::try_parse_from(all).unwrap().backups("m1")
        };
        assert!(plan(&[]).unwrap().is_none());
        assert!(plan(&["--snapshot-schedule=0s"]).unwrap().is_none());
        let every = plan(&["--snapshot-schedule=6h"]).unwrap().unwrap();
        assert!(matches!(every.schedule, Schedule::Every(d) if d == Duration::from_secs(6 * 3600)));
        assert_eq!(every.backups.dir, PathBuf::from("m1.hark").join("backups"));
        assert_eq!(every.backups.keep, 5);
        assert_eq!(every.backups.member, "m1");
        let cron = plan(&[
            "--snapshot-schedule=0 */6 * * *",
            "--snapshot-retention=3",
            "--snapshot-dir=/backups",
        ])
        .unwrap()
        .unwrap();
        assert!(matches!(cron.schedule, Schedule::Cron(_)));
        assert_eq!(cron.backups.dir, PathBuf::from("/backups"));
        assert_eq!(cron.backups.keep, 3);
        let err = plan(&["--snapshot-schedule=often"]).unwrap_err();
        assert!(
            err.starts_with("invalid --snapshot-schedule: invalid cron expression"),
            "{err}"
        );
        assert!(
            plan(&["--snapshot-schedule=500ms"])
                .unwrap_err()
                .contains("at least 1s")
        );
        assert!(Config::try_parse_from(["hark", "--snapshot-retention=0"]).is_err());
        assert!(
            plan(&["--snapshot-schedule=0 0 31 2 *"])
                .unwrap_err()
                .contains("no time from now on")
        );
        assert!(
            plan(&["--snapshot-schedule=1h", "--snapshot-dir=m1.hark"])
                .unwrap_err()
                .contains("own directory")
        );
        let named = |name: &str| {
            Config::try_parse_from(["hark", "--snapshot-schedule=1h"])
                .unwrap()
                .backups(name)
        };
        for bad in ["", "../x", "a/b", ".hidden", "a\\b"] {
            assert!(
                named(bad).unwrap_err().contains("usable in a file name"),
                "{bad}"
            );
        }
    }

    #[test]
    fn flags_defaults_and_retention() {
        let c = Config::try_parse_from(["hark"]).unwrap();
        assert_eq!(c.data_dir(), PathBuf::from("default.hark"));
        assert_eq!(c.listen_client_urls, vec!["http://127.0.0.1:2379"]);
        assert_eq!(c.max_request_bytes, 1_572_864);
        assert_eq!(c.quota_bytes(), 2 << 30);
        assert_eq!(c.retention(), Ok(Retention::Off));
        assert_eq!(c.watch_progress_notify_interval, Duration::from_secs(600));

        let c = Config::try_parse_from([
            "hark",
            "--name=n1",
            "--auto-compaction-retention=2",
            "--watch-progress-notify-interval",
            "3s",
            "--listen-client-urls=http://127.0.0.1:1,http://127.0.0.1:2",
        ])
        .unwrap();
        assert_eq!(c.data_dir(), PathBuf::from("n1.hark"));
        assert_eq!(
            c.retention(),
            Ok(Retention::Period(Duration::from_secs(7200)))
        );
        assert_eq!(c.watch_progress_notify_interval, Duration::from_secs(3));
        assert_eq!(c.listen_client_urls.len(), 2);
        let c = Config::try_parse_from(["hark", "--quota-backend-bytes=1048576"]).unwrap();
        assert_eq!(c.quota_bytes(), 1 << 20);
        let c = Config::try_parse_from(["hark", "--quota-backend-bytes", "-1"]).unwrap();
        assert_eq!(c.quota_bytes(), -1);

        let c = Config::try_parse_from([
            "hark",
            "--auto-compaction-mode=revision",
            "--auto-compaction-retention=1000",
            "--experimental-watch-progress-notify-interval=250ms",
        ])
        .unwrap();
        assert_eq!(c.retention(), Ok(Retention::Revisions(1000)));
        assert_eq!(c.watch_progress_notify_interval, Duration::from_millis(250));

        let c = Config::try_parse_from(["hark", "--auto-compaction-retention=30m"]).unwrap();
        assert_eq!(
            c.retention(),
            Ok(Retention::Period(Duration::from_secs(1800)))
        );
        assert!(Config::try_parse_from(["hark", "--log-format=xml"]).is_err());
    }

    #[test]
    fn urls() {
        assert_eq!(
            socket_addrs("http://127.0.0.1:2379").unwrap(),
            vec!["127.0.0.1:2379".parse().unwrap()]
        );
        assert_eq!(
            socket_addrs("https://127.0.0.1:2379").unwrap(),
            vec!["127.0.0.1:2379".parse().unwrap()]
        );
        assert!(is_https("https://127.0.0.1:2379") && !is_https("http://127.0.0.1:2379"));
        assert!(socket_addrs("unix://x").is_err());
        // etcd's reading of unix:// URLs: a peer URL's host, a client URL's
        // host and path.
        let path = |url, peer| unix_socket_path(url, peer).unwrap();
        assert_eq!(path("unix://etcd.unix:1", true), Some("etcd.unix:1".into()));
        assert_eq!(
            path("unix://localhost:20001/x", true),
            Some("localhost:20001".into())
        );
        assert_eq!(
            path("unix:///run/etcd.sock", false),
            Some("/run/etcd.sock".into())
        );
        assert_eq!(path("unix://cli2:5", false), Some("cli2:5".into()));
        assert_eq!(path("http://127.0.0.1:2379", false), None);
        assert!(unix_socket_path("unixs://a:1", true).is_err());
        assert!(unix_socket_path("unix://", false).is_err());
        assert!(socket_addrs("http://127.0.0.1").is_err());
        assert!(is_peer_url("http://not-yet-in-dns.test:2380"));
        assert!(is_peer_url("http://[::1]:2380"));
        assert!(is_peer_url("https://10.0.0.7:2380"));
        for bad in [
            "ftp://a:2380",
            "http://a",
            "http://a:2380/path",
            "http://:2380",
            "http://a:port",
            "a:2380",
        ] {
            assert!(!is_peer_url(bad), "{bad}");
        }
    }
}
