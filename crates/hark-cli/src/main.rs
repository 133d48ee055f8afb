//! `harkctl`: etcdctl's commands, flags, output (simple and json, byte for
//! byte as etcdctl 3.5 prints them), error messages and exit codes, over
//! `hark-client`. Works against Hark and etcd.

mod auth;
mod cluster;
mod json;
mod print;
mod snapshot;
mod txn;

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use bytes::Bytes;
use clap::{Args, Parser, Subcommand};
use hark_client::{Client, WatchError, WatchOptions, pb};

use print::Format;

/// etcdctl's exit codes.
pub const EXIT_ERROR: i32 = 1;
const EXIT_BAD_CONNECTION: i32 = 2;
const EXIT_INVALID_INPUT: i32 = 3;
const EXIT_BAD_FEATURE: i32 = 4;
pub const EXIT_INTERRUPTED: i32 = 5;
pub const EXIT_BAD_ARGS: i32 = 128;

#[derive(Parser)]
#[command(
    name = "harkctl",
    version,
    infer_subcommands = true,
    about = "A command line client for Hark and etcd (etcdctl compatible)"
)]
struct Cli {
    /// gRPC endpoints
    #[arg(
        long,
        global = true,
        value_delimiter = ',',
        default_value = "127.0.0.1:2379",
        env = "ETCDCTL_ENDPOINTS"
    )]
    endpoints: Vec<String>,
    /// dial timeout for client connections
    #[arg(
        long,
        global = true,
        default_value = "2s",
        env = "ETCDCTL_DIAL_TIMEOUT"
    )]
    dial_timeout: String,
    /// timeout for short running command (excluding dial timeout)
    #[arg(
        long,
        global = true,
        default_value = "5s",
        env = "ETCDCTL_COMMAND_TIMEOUT"
    )]
    command_timeout: String,
    /// set the output format (fields, json, simple, table)
    #[arg(
        short = 'w',
        long = "write-out",
        global = true,
        default_value = "simple",
        env = "ETCDCTL_WRITE_OUT"
    )]
    write_out: String,
    /// print byte strings as hex encoded strings
    #[arg(long, global = true)]
    hex: bool,
    /// `username[:password]` for authentication (prompt if password is not supplied)
    #[arg(
        long,
        global = true,
        env = "ETCDCTL_USER",
        help = "username[:password] for authentication (prompt if password is not supplied)"
    )]
    user: Option<String>,
    /// password for authentication (if this option is used, --user option shouldn't include password)
    #[arg(long, global = true, env = "ETCDCTL_PASSWORD")]
    password: Option<String>,
    /// verify certificates of TLS-enabled secure servers using this CA bundle
    #[arg(long, global = true, env = "ETCDCTL_CACERT")]
    cacert: Option<std::path::PathBuf>,
    /// identify secure client using this TLS certificate file
    #[arg(long, global = true, env = "ETCDCTL_CERT")]
    cert: Option<std::path::PathBuf>,
    /// identify secure client using this TLS key file
    #[arg(long, global = true, env = "ETCDCTL_KEY")]
    key: Option<std::path::PathBuf>,
    /// skip server certificate verification (CAUTION: this option should be enabled only for testing purposes)
    #[arg(long, global = true, env = "ETCDCTL_INSECURE_SKIP_TLS_VERIFY", num_args = 0..=1,
          default_missing_value = "true", action = clap::ArgAction::Set, default_value_t = false)]
    insecure_skip_tls_verify: bool,
    /// disable transport security for client connections
    #[arg(long, global = true, env = "ETCDCTL_INSECURE_TRANSPORT", num_args = 0..=1,
          default_missing_value = "true", action = clap::ArgAction::Set, default_value_t = true)]
    insecure_transport: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Puts the given key into the store
    Put(PutArgs),
    /// Gets the key or a range of keys
    Get(GetArgs),
    /// Removes the specified key or range of keys [key, range_end)
    Del(DelArgs),
    /// Watches events stream on keys or prefixes
    Watch(WatchArgs),
    /// Txn processes all the requests in one transaction
    Txn(TxnArgs),
    /// Compacts the event history in etcd
    Compaction(CompactionArgs),
    /// Lease related commands
    #[command(subcommand)]
    Lease(LeaseCommand),
    /// Endpoint related commands
    #[command(subcommand)]
    Endpoint(EndpointCommand),
    /// Manages etcd node snapshots
    #[command(subcommand)]
    Snapshot(snapshot::SnapshotCommand),
    /// Defragments the storage of the etcd members with given endpoints
    Defrag,
    /// Alarm related commands
    #[command(subcommand)]
    Alarm(AlarmCommand),
    /// Membership related commands
    #[command(subcommand)]
    Member(cluster::MemberCommand),
    /// Transfers leadership to another etcd cluster member.
    MoveLeader { args: Vec<String> },
    /// User related commands
    #[command(subcommand)]
    User(auth::UserCommand),
    /// Role related commands
    #[command(subcommand)]
    Role(auth::RoleCommand),
    /// Enable or disable authentication
    #[command(subcommand)]
    Auth(auth::AuthCommand),
}

#[derive(Subcommand)]
enum AlarmCommand {
    /// Lists all alarms
    List,
    /// Disarms all alarms
    Disarm,
}

#[derive(Args, Clone)]
pub struct PutArgs {
    args: Vec<String>,
    /// lease ID (in hexadecimal) to attach to the key
    #[arg(long, default_value = "0")]
    lease: String,
    /// return the previous key-value pair before modification
    #[arg(long)]
    prev_kv: bool,
    /// updates the key using its current value
    #[arg(long)]
    ignore_value: bool,
    /// updates the key using its current lease
    #[arg(long)]
    ignore_lease: bool,
}

#[derive(Args, Clone)]
pub struct GetArgs {
    args: Vec<String>,
    /// Linearizable(l) or Serializable(s)
    #[arg(long, default_value = "l")]
    consistency: String,
    /// Order of results; ASCEND or DESCEND (ASCEND by default)
    #[arg(long, default_value = "")]
    order: String,
    /// Sort target; CREATE, KEY, MODIFY, VALUE, or VERSION
    #[arg(long, default_value = "")]
    sort_by: String,
    /// Maximum number of results
    #[arg(long, default_value_t = 0)]
    limit: i64,
    /// Get keys with matching prefix
    #[arg(long)]
    prefix: bool,
    /// Get keys that are greater than or equal to the given key using byte compare
    #[arg(long)]
    from_key: bool,
    /// Specify the kv revision
    #[arg(long, default_value_t = 0)]
    rev: i64,
    /// Get only the keys
    #[arg(long)]
    keys_only: bool,
    /// Get only the count
    #[arg(long)]
    count_only: bool,
    /// Only write values when using the "simple" output format
    #[arg(long)]
    print_value_only: bool,
}

#[derive(Args, Clone)]
pub struct DelArgs {
    args: Vec<String>,
    /// delete keys with matching prefix
    #[arg(long)]
    prefix: bool,
    /// return deleted key-value pairs
    #[arg(long)]
    prev_kv: bool,
    /// delete keys that are greater than or equal to the given key using byte compare
    #[arg(long)]
    from_key: bool,
    /// delete range of keys
    #[arg(long)]
    range: bool,
}

#[derive(Args)]
struct WatchArgs {
    #[command(flatten)]
    watch: WatchFlags,
    /// Interactive mode
    #[arg(short, long)]
    interactive: bool,
    /// get periodic watch progress notification from server
    #[arg(long)]
    progress_notify: bool,
}

#[derive(Args)]
struct TxnArgs {
    args: Vec<String>,
    /// Input from stdin interactively
    #[arg(short, long)]
    interactive: bool,
}

#[derive(Args)]
struct CompactionArgs {
    args: Vec<String>,
    /// 'true' to wait for compaction to physically remove all old revisions
    #[arg(long)]
    physical: bool,
}

#[derive(Subcommand)]
enum LeaseCommand {
    /// Creates leases
    Grant { args: Vec<String> },
    /// Revokes leases
    Revoke { args: Vec<String> },
    /// Get lease information
    Timetolive {
        args: Vec<String>,
        /// Get keys attached to this lease
        #[arg(long)]
        keys: bool,
    },
    /// List all active leases
    List,
    /// Keeps leases alive (renew)
    KeepAlive {
        args: Vec<String>,
        /// Resets the keep-alive time to its original value and exits immediately
        #[arg(long)]
        once: bool,
    },
}

#[derive(Subcommand)]
enum EndpointCommand {
    /// Checks the healthiness of endpoints specified in `--endpoints` flag
    Health {
        /// use all endpoints from the cluster member list
        #[arg(long)]
        cluster: bool,
    },
    /// Prints out the status of endpoints specified in `--endpoints` flag
    Status {
        /// use all endpoints from the cluster member list
        #[arg(long)]
        cluster: bool,
    },
}

/// A failure that ends the command: `Error: <message>` on stderr, then `code`.
#[derive(Debug)]
pub struct Exit {
    code: i32,
    message: Option<String>,
}

impl Exit {
    pub fn new(code: i32, message: impl Into<String>) -> Exit {
        Exit {
            code,
            message: Some(message.into()),
        }
    }

    fn silent(code: i32) -> Exit {
        Exit {
            code,
            message: None,
        }
    }
}

impl From<hark_client::Error> for Exit {
    fn from(e: hark_client::Error) -> Exit {
        // No connection at all (refused, unreachable, TLS handshake or
        // certificate refused): etcdctl's client retries such failures
        // until its deadline and then says only "context deadline
        // exceeded", with the reason in a JSON log line on stderr. harkctl
        // fails at once, in the same words. Other failures are reported as
        // they are.
        if let hark_client::Error::Status(status) = &e
            && let Some(source) = std::error::Error::source(status)
            && never_connected(source)
        {
            let mut reason = status.message().to_string();
            let mut cause = Some(source);
            while let Some(c) = cause {
                // Layers often repeat their inner error's text.
                let text = c.to_string();
                if !reason.contains(&text) {
                    reason = format!("{reason}: {text}");
                }
                cause = c.source();
            }
            let line = json::Obj::new()
                .str_nz("level", "warn")
                .str_nz("logger", "harkctl")
                .str_nz("msg", "no connection to the endpoint")
                .str_nz("error", &reason)
                .end();
            eprintln!("{line}");
            return Exit::new(EXIT_ERROR, "context deadline exceeded");
        }
        Exit::new(EXIT_ERROR, e.to_string())
    }
}

/// Whether a transport error means no connection was made (or TLS refused
/// it): refused, unreachable, timed out, not resolved, or a TLS failure
/// (rustls reports those as invalid data). Under TLS 1.3 a server that
/// refuses the client's certificate does so after the client's handshake
/// is over: the client sees its first write fail (broken pipe, reset)
/// unless the alert is read first. Those count too: every harkctl command
/// opens a fresh connection, so its first call breaking that way means the
/// server would not take it (an established connection that breaks
/// mid-call reads the same, and is rare for a one-shot command).
fn never_connected(error: &(dyn std::error::Error + 'static)) -> bool {
    use std::io::ErrorKind::*;
    let mut cause = Some(error);
    while let Some(c) = cause {
        if let Some(io) = c.downcast_ref::<std::io::Error>()
            && matches!(
                io.kind(),
                ConnectionRefused
                    | TimedOut
                    | AddrNotAvailable
                    | HostUnreachable
                    | NetworkUnreachable
                    | InvalidData
                    | BrokenPipe
                    | ConnectionReset
                    | ConnectionAborted
            )
        {
            return true;
        }
        // Not io::Errors: the resolver's, and hyper's for a connection
        // that closed before answering (the third way a TLS refusal shows).
        let text = c.to_string();
        if text.starts_with("dns error") || text.contains("connection closed") {
            return true;
        }
        cause = c.source();
    }
    false
}

pub type Outcome = Result<(), Exit>;

fn main() {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            match e.kind() {
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => e.exit(),
                ErrorKind::UnknownArgument => {
                    let arg = e
                        .get(clap::error::ContextKind::InvalidArg)
                        .map(|a| a.to_string())
                        .unwrap_or_default();
                    eprintln!("Error: unknown flag: {arg}");
                }
                _ => eprintln!(
                    "Error: {}",
                    e.render().to_string().lines().next().unwrap_or("")
                ),
            }
            std::process::exit(EXIT_ERROR);
        }
    };
    let runtime = tokio::runtime::Runtime::new().expect("start the tokio runtime");
    let outcome = runtime.block_on(run(cli));
    let _ = std::io::stdout().flush();
    if let Err(exit) = outcome {
        if let Some(message) = exit.message {
            eprintln!("Error: {message}");
        }
        std::process::exit(exit.code);
    }
}

pub struct Ctx {
    endpoints: Vec<String>,
    command_timeout: Duration,
    format: Format,
    /// `--hex` (etcdctl's JSON member list prints ids in hex with it).
    hex: bool,
    /// `--user`, `--password` and the TLS flags.
    options: hark_client::ConnectOptions,
}

impl Ctx {
    async fn client(&self) -> Result<Client, Exit> {
        self.connect(&self.endpoints).await
    }

    /// A client of `endpoints` with this command's user and TLS.
    async fn connect(&self, endpoints: &[impl AsRef<str>]) -> Result<Client, Exit> {
        Client::connect_with(endpoints, self.options.clone())
            .await
            // A refused login too, as etcdctl exits.
            .map_err(|e| Exit::new(EXIT_BAD_CONNECTION, e.to_string()))
    }

    /// With `--cluster`: every member's client URLs from the member list
    /// instead of `--endpoints` (etcdctl's `endpoint --cluster`).
    async fn with_cluster_endpoints(&self, cluster: bool) -> Result<Ctx, Exit> {
        let endpoints = if cluster {
            let c = self.client().await?;
            let members = self.timed(c.member_list(true)).await.map_err(|e| {
                Exit::new(
                    EXIT_ERROR,
                    format!(
                        "failed to fetch endpoints from etcd cluster member list: {}",
                        e.message.unwrap_or_default()
                    ),
                )
            })?;
            members
                .members
                .into_iter()
                .flat_map(|m| m.client_ur_ls)
                .collect()
        } else {
            self.endpoints.clone()
        };
        Ok(Ctx {
            endpoints,
            command_timeout: self.command_timeout,
            format: self.format,
            hex: self.hex,
            options: self.options.clone(),
        })
    }

    /// Runs a call under `--command-timeout`.
    async fn timed<T>(
        &self,
        call: impl std::future::Future<Output = Result<T, hark_client::Error>>,
    ) -> Result<T, Exit> {
        match tokio::time::timeout(self.command_timeout, call).await {
            Ok(r) => r.map_err(Exit::from),
            Err(_) => Err(Exit::new(EXIT_ERROR, "context deadline exceeded")),
        }
    }
}

async fn run(cli: Cli) -> Outcome {
    let format = Format::parse(&cli.write_out, cli.hex)?;
    let command_timeout = parse_duration(&cli.command_timeout).ok_or_else(|| {
        Exit::new(
            EXIT_ERROR,
            format!(
                "invalid argument {:?} for \"--command-timeout\" flag",
                cli.command_timeout
            ),
        )
    })?;
    let dial_timeout = parse_duration(&cli.dial_timeout).ok_or_else(|| {
        Exit::new(
            EXIT_ERROR,
            format!(
                "invalid argument {:?} for \"--dial-timeout\" flag",
                cli.dial_timeout
            ),
        )
    })?;
    let options = hark_client::ConnectOptions {
        dial_timeout: Some(dial_timeout),
        ..connect_options(&cli)?
    };
    let ctx = Ctx {
        endpoints: cli.endpoints.iter().map(|e| e.trim().to_string()).collect(),
        command_timeout,
        format,
        hex: cli.hex,
        options,
    };
    match cli.command {
        Command::Put(a) => {
            let req = put_request(&a, true)?;
            let c = ctx.client().await?;
            let resp = ctx.timed(c.put_request(req)).await?;
            ctx.format.put(&resp)
        }
        Command::Get(a) => {
            let req = get_request(&a)?;
            let c = ctx.client().await?;
            let resp = ctx.timed(c.range(req)).await?;
            ctx.format.get(&resp, &a)
        }
        Command::Del(a) => {
            let req = del_request(&a)?;
            let c = ctx.client().await?;
            let resp = ctx.timed(c.delete_range(req)).await?;
            ctx.format.del(&resp)
        }
        Command::Compaction(a) => {
            if a.args.len() != 1 {
                return Err(Exit::new(
                    EXIT_BAD_ARGS,
                    "compaction command needs 1 argument",
                ));
            }
            let rev: i64 = a.args[0].parse().map_err(|_| {
                Exit::new(
                    EXIT_ERROR,
                    format!("strconv.ParseInt: parsing {:?}: invalid syntax", a.args[0]),
                )
            })?;
            let c = ctx.client().await?;
            ctx.timed(c.compact(rev, a.physical)).await?;
            println!("compacted revision {rev}");
            Ok(())
        }
        Command::Txn(a) => txn::run(&ctx, a.args, a.interactive).await,
        Command::Watch(a) => watch(&ctx, a).await,
        Command::Lease(l) => lease(&ctx, l).await,
        Command::Endpoint(EndpointCommand::Status { cluster }) => {
            endpoint_status(&ctx.with_cluster_endpoints(cluster).await?).await
        }
        Command::Endpoint(EndpointCommand::Health { cluster }) => {
            endpoint_health(&ctx.with_cluster_endpoints(cluster).await?).await
        }
        Command::Snapshot(c) => snapshot::run(&ctx, c).await,
        Command::Defrag => defrag(&ctx).await,
        Command::Alarm(a) => alarm(&ctx, a).await,
        Command::Member(m) => cluster::member(&ctx, m).await,
        Command::MoveLeader { args } => cluster::move_leader(&ctx, &args).await,
        Command::User(c) => auth::user(&ctx, c).await,
        Command::Role(c) => auth::role(&ctx, c).await,
        Command::Auth(c) => auth::auth(&ctx, c).await,
    }
}

/// etcdctl's `--user`, `--password` and TLS flags as client options: TLS
/// when a CA, a certificate or (with `--insecure-transport=false`)
/// `--insecure-skip-tls-verify` is given, or an endpoint is `https://`.
fn connect_options(cli: &Cli) -> Result<hark_client::ConnectOptions, Exit> {
    let read = |path: &std::path::Path| {
        std::fs::read(path)
            .map_err(|e| Exit::new(EXIT_BAD_CONNECTION, format!("open {}: {e}", path.display())))
    };
    let user = match (&cli.user, &cli.password) {
        (None, _) => None,
        // With --password the whole of --user is the name (as etcdctl 3.5).
        (Some(user), Some(password)) => Some((user.clone(), password.clone())),
        (Some(user), None) => match user.split_once(':') {
            Some((name, password)) => Some((name.to_string(), password.to_string())),
            None => {
                eprint!("Password: ");
                let mut line = String::new();
                std::io::stdin()
                    .read_line(&mut line)
                    .map_err(|e| Exit::new(EXIT_ERROR, e.to_string()))?;
                Some((
                    user.clone(),
                    line.trim_end_matches(['\n', '\r']).to_string(),
                ))
            }
        },
    };
    let skip = cli.insecure_skip_tls_verify && !cli.insecure_transport;
    let https = cli
        .endpoints
        .iter()
        .any(|e| e.trim().starts_with("https://"));
    let tls = if cli.cacert.is_some() || cli.cert.is_some() || skip || https {
        let identity = match (&cli.cert, &cli.key) {
            (Some(cert), Some(key)) => Some((read(cert)?, read(key)?)),
            (None, None) => None,
            _ => {
                return Err(Exit::new(
                    EXIT_BAD_ARGS,
                    "--cert and --key must be given together",
                ));
            }
        };
        Some(hark_client::TlsOptions {
            ca_pem: cli.cacert.as_deref().map(read).transpose()?,
            identity,
            insecure_skip_verify: skip,
        })
    } else {
        None
    };
    Ok(hark_client::ConnectOptions {
        user,
        tls,
        ..Default::default()
    })
}

/// Go's `time.ParseDuration`, as etcdctl reads its timeouts.
fn parse_duration(s: &str) -> Option<Duration> {
    hark_proto::go_duration::parse(s.trim()).ok()
}

fn parse_lease(s: &str) -> Result<i64, std::num::ParseIntError> {
    i64::from_str_radix(s, 16)
}

/// etcdctl's `put` flags and arguments as a request (`stdin_value`: read a
/// missing value from stdin, as the top-level command does).
pub fn put_request(a: &PutArgs, stdin_value: bool) -> Result<pb::PutRequest, Exit> {
    let usage = "put command needs 1 argument and input from stdin or 2 arguments";
    let key = a
        .args
        .first()
        .ok_or_else(|| Exit::new(EXIT_BAD_ARGS, usage))?;
    let value: Bytes = match (a.args.get(1), a.ignore_value) {
        (Some(_), true) => {
            return Err(Exit::new(
                EXIT_BAD_ARGS,
                "put command needs only 1 argument when 'ignore-value' is set",
            ));
        }
        (Some(v), false) => v.clone().into(),
        (None, true) => Bytes::new(),
        (None, false) => {
            let mut buf = Vec::new();
            if !stdin_value || std::io::stdin().read_to_end(&mut buf).is_err() || buf.is_empty() {
                return Err(Exit::new(EXIT_BAD_ARGS, usage));
            }
            buf.into()
        }
    };
    let lease = parse_lease(&a.lease).map_err(|e| {
        Exit::new(
            EXIT_BAD_ARGS,
            format!(
                "bad lease ID ({}), expecting ID in Hex",
                go_parse_error("ParseInt", &a.lease, &e)
            ),
        )
    })?;
    Ok(pb::PutRequest {
        key: key.clone().into(),
        value,
        lease,
        prev_kv: a.prev_kv,
        ignore_value: a.ignore_value,
        ignore_lease: a.ignore_lease,
        ..Default::default()
    })
}

/// How Go's strconv reports a parse failure (`func`: ParseInt or ParseUint).
fn go_parse_error(func: &str, input: &str, e: &std::num::ParseIntError) -> String {
    let why = match e.kind() {
        std::num::IntErrorKind::PosOverflow | std::num::IntErrorKind::NegOverflow => {
            "value out of range"
        }
        _ => "invalid syntax",
    };
    format!("strconv.{func}: parsing {input:?}: {why}")
}

fn range_end_for(key: &str, prefix: bool, from_key: bool) -> (Bytes, Bytes) {
    if prefix {
        if key.is_empty() {
            return (Bytes::from_static(b"\0"), Bytes::from_static(b"\0"));
        }
        return (
            key.to_string().into(),
            hark_client::prefix_end(key.as_bytes()).into(),
        );
    }
    if from_key {
        let k: Bytes = if key.is_empty() {
            Bytes::from_static(b"\0")
        } else {
            key.to_string().into()
        };
        return (k, Bytes::from_static(b"\0"));
    }
    (key.to_string().into(), Bytes::new())
}

fn check_range_flags(cmd: &str, args: &[String], prefix: bool, from_key: bool) -> Result<(), Exit> {
    if args.is_empty() || args.len() > 2 && cmd == "del" {
        let what = if cmd == "del" { "del" } else { "get" };
        return Err(Exit::new(
            EXIT_BAD_ARGS,
            format!(
                "{what} command needs one argument as key and an optional argument as range_end"
            ),
        ));
    }
    if prefix && from_key {
        return Err(Exit::new(
            EXIT_BAD_ARGS,
            "`--prefix` and `--from-key` cannot be set at the same time, choose one",
        ));
    }
    Ok(())
}

pub fn get_request(a: &GetArgs) -> Result<pb::RangeRequest, Exit> {
    use pb::range_request::{SortOrder, SortTarget};
    check_range_flags("get", &a.args, a.prefix, a.from_key)?;
    if a.keys_only && a.count_only {
        return Err(Exit::new(
            EXIT_BAD_ARGS,
            "`--keys-only` and `--count-only` cannot be set at the same time, choose one",
        ));
    }
    let serializable = match a.consistency.as_str() {
        "l" => false,
        "s" => true,
        other => {
            return Err(Exit::new(
                EXIT_BAD_FEATURE,
                format!("unknown consistency flag {other:?}"),
            ));
        }
    };
    if a.args.len() > 1 && (a.prefix || a.from_key) {
        return Err(Exit::new(
            EXIT_BAD_ARGS,
            "too many arguments, only accept one argument when `--prefix` or `--from-key` is set",
        ));
    }
    let order = match a.order.to_uppercase().as_str() {
        "ASCEND" => SortOrder::Ascend,
        "DESCEND" => SortOrder::Descend,
        "" => SortOrder::None,
        _ => {
            return Err(Exit::new(
                EXIT_BAD_FEATURE,
                format!("bad sort order {}", a.order),
            ));
        }
    };
    let target = match a.sort_by.to_uppercase().as_str() {
        "CREATE" => SortTarget::Create,
        "KEY" | "" => SortTarget::Key,
        "MODIFY" => SortTarget::Mod,
        "VALUE" => SortTarget::Value,
        "VERSION" => SortTarget::Version,
        _ => {
            return Err(Exit::new(
                EXIT_BAD_FEATURE,
                format!("bad sort target {}", a.sort_by),
            ));
        }
    };
    // clientv3 turns (KEY, ASCEND) into no sort.
    let order = if target == SortTarget::Key && order == SortOrder::Ascend {
        SortOrder::None
    } else {
        order
    };
    let (key, mut range_end) = range_end_for(&a.args[0], a.prefix, a.from_key);
    if let Some(end) = a.args.get(1) {
        range_end = end.clone().into();
    }
    Ok(pb::RangeRequest {
        key,
        range_end,
        limit: a.limit,
        revision: a.rev.max(0),
        sort_order: order as i32,
        sort_target: target as i32,
        serializable,
        keys_only: a.keys_only,
        count_only: a.count_only,
        ..Default::default()
    })
}

pub fn del_request(a: &DelArgs) -> Result<pb::DeleteRangeRequest, Exit> {
    check_range_flags("del", &a.args, a.prefix, a.from_key)?;
    if a.args.len() > 1 && (a.prefix || a.from_key) {
        return Err(Exit::new(
            EXIT_BAD_ARGS,
            "too many arguments, only accept one argument when `--prefix` or `--from-key` is set",
        ));
    }
    let (key, mut range_end) = range_end_for(&a.args[0], a.prefix, a.from_key);
    if let Some(end) = a.args.get(1) {
        if !a.range {
            eprintln!(
                "In etcd v3.6, the operation will be suspended for a few seconds to provide the user time to verify range."
            );
        }
        range_end = end.clone().into();
    }
    Ok(pb::DeleteRangeRequest {
        key,
        range_end,
        prev_kv: a.prev_kv,
    })
}

async fn watch(ctx: &Ctx, a: WatchArgs) -> Outcome {
    let c = ctx.client().await?;
    if a.interactive {
        return watch_interactive(ctx, c, a).await;
    }
    let w = &a.watch;
    if w.args.is_empty() || w.args.len() > 2 {
        return Err(Exit::new(EXIT_BAD_ARGS, "bad number of arguments"));
    }
    if w.args.len() == 2 && w.prefix {
        return Err(Exit::new(
            EXIT_BAD_ARGS,
            "`range_end` and `--prefix` are mutually exclusive",
        ));
    }
    let watch = c
        .watch(w.args[0].clone(), w.options(a.progress_notify))
        .await?;
    print_watch(ctx.format, watch).await
}

async fn print_watch(format: Format, mut w: hark_client::Watch) -> Outcome {
    while let Some(update) = w.next().await {
        match update {
            Ok(u) => format.watch(&u),
            Err(WatchError::Compacted { compact_revision }) => {
                eprintln!(
                    "watch was canceled (etcdserver: mvcc: required revision has been compacted)"
                );
                format.watch_canceled(compact_revision);
                break;
            }
            Err(WatchError::Canceled { reason }) => {
                eprintln!("watch was canceled ({reason})");
                break;
            }
            Err(WatchError::Closed) => break,
        }
        let _ = std::io::stdout().flush();
    }
    Err(Exit::new(
        EXIT_INTERRUPTED,
        "watch is canceled by the server",
    ))
}

async fn watch_interactive(ctx: &Ctx, c: Client, a: WatchArgs) -> Outcome {
    let (tx, mut lines) = tokio::sync::mpsc::unbounded_channel::<String>();
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        let mut line = String::new();
        loop {
            line.clear();
            match stdin.read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {
                    if tx.send(line.clone()).is_err() {
                        return;
                    }
                }
            }
        }
    });
    while let Some(line) = lines.recv().await {
        let words = txn::argify(line.trim());
        let Some(first) = words.first() else {
            eprintln!(
                "Invalid command: {} (watch and progress supported)",
                line.trim()
            );
            continue;
        };
        match first.as_str() {
            "progress" => c.request_progress(),
            "watch" => {
                let parsed = WatchLine::try_parse_from(words.iter().map(String::as_str));
                let Ok(w) = parsed else {
                    eprintln!(
                        "Invalid command {} (command type or key is not provided)",
                        line.trim()
                    );
                    continue;
                };
                let w = w.watch;
                if w.args.is_empty() {
                    eprintln!(
                        "Invalid command {} (command type or key is not provided)",
                        line.trim()
                    );
                    continue;
                }
                let watch = c
                    .watch(w.args[0].clone(), w.options(a.progress_notify))
                    .await?;
                let format = ctx.format;
                tokio::spawn(async move {
                    let _ = print_watch(format, watch).await;
                });
            }
            _ => eprintln!("Invalid command {} (only support watch)", line.trim()),
        }
    }
    Err(Exit::new(
        EXIT_INVALID_INPUT,
        "error reading watch request line: EOF",
    ))
}

/// One `watch ...` line of interactive mode (the first word is the command).
#[derive(Parser)]
struct WatchLine {
    #[command(flatten)]
    watch: WatchFlags,
}

/// What a watch command line and an interactive `watch` line share.
#[derive(Args)]
struct WatchFlags {
    args: Vec<String>,
    /// Watch on a prefix if prefix is set
    #[arg(long)]
    prefix: bool,
    /// Revision to start watching
    #[arg(long, default_value_t = 0)]
    rev: i64,
    /// get the previous key-value pair before the event happens
    #[arg(long)]
    prev_kv: bool,
}

impl WatchFlags {
    fn options(&self, progress_notify: bool) -> WatchOptions {
        WatchOptions {
            prefix: self.prefix,
            range_end: self.args.get(1).map(|e| e.clone().into()),
            start_revision: self.rev,
            prev_kv: self.prev_kv,
            progress_notify,
            ..Default::default()
        }
    }
}

fn lease_id_arg(args: &[String], usage: &str) -> Result<i64, Exit> {
    let arg = args
        .first()
        .ok_or_else(|| Exit::new(EXIT_BAD_ARGS, usage))?;
    parse_lease(arg).map_err(|e| {
        Exit::new(
            EXIT_BAD_ARGS,
            format!(
                "bad lease ID arg ({}), expecting ID in Hex",
                go_parse_error("ParseInt", arg, &e)
            ),
        )
    })
}

async fn lease(ctx: &Ctx, cmd: LeaseCommand) -> Outcome {
    match cmd {
        LeaseCommand::Grant { args } => {
            let arg = args.first().ok_or_else(|| {
                Exit::new(EXIT_BAD_ARGS, "lease grant command needs TTL argument")
            })?;
            let ttl: i64 = arg.parse().map_err(|e: std::num::ParseIntError| {
                Exit::new(
                    EXIT_BAD_ARGS,
                    format!("bad TTL ({})", go_parse_error("ParseInt", arg, &e)),
                )
            })?;
            let c = ctx.client().await?;
            let resp = ctx.timed(c.lease_grant(ttl, 0)).await.map_err(|e| {
                Exit::new(
                    EXIT_ERROR,
                    format!("failed to grant lease ({})", e.message.unwrap_or_default()),
                )
            })?;
            ctx.format.lease_grant(&resp);
            Ok(())
        }
        LeaseCommand::Revoke { args } => {
            let id = lease_id_arg(&args, "lease revoke command needs 1 argument")?;
            let c = ctx.client().await?;
            let resp = ctx.timed(c.lease_revoke(id)).await.map_err(|e| {
                Exit::new(
                    EXIT_ERROR,
                    format!("failed to revoke lease ({})", e.message.unwrap_or_default()),
                )
            })?;
            ctx.format.lease_revoke(id, &resp);
            Ok(())
        }
        LeaseCommand::Timetolive { args, keys } => {
            let id = lease_id_arg(&args, "lease timetolive command needs lease ID as argument")?;
            let c = ctx.client().await?;
            let resp = c
                .lease_time_to_live(id, keys)
                .await
                .map_err(|e| Exit::new(EXIT_BAD_CONNECTION, e.to_string()))?;
            ctx.format.lease_time_to_live(&resp, keys);
            Ok(())
        }
        LeaseCommand::List => {
            let c = ctx.client().await?;
            let resp = c
                .leases()
                .await
                .map_err(|e| Exit::new(EXIT_BAD_CONNECTION, e.to_string()))?;
            ctx.format.lease_list(&resp);
            Ok(())
        }
        LeaseCommand::KeepAlive { args, once } => {
            let id = lease_id_arg(&args, "lease keep-alive command needs lease ID as argument")?;
            let c = ctx.client().await?;
            loop {
                let reply = c
                    .lease_keep_alive_once(id)
                    .await
                    .map_err(|e| Exit::new(EXIT_BAD_CONNECTION, e.to_string()))?;
                let (ttl, header) = (reply.ttl, reply.header);
                if ttl <= 0 {
                    if once {
                        return Err(Exit::new(
                            EXIT_BAD_CONNECTION,
                            "etcdserver: requested lease not found",
                        ));
                    }
                    ctx.format.lease_expired(id);
                    return Ok(());
                }
                ctx.format.lease_keep_alive(id, ttl, &header);
                let _ = std::io::stdout().flush();
                if once {
                    return Ok(());
                }
                tokio::time::sleep(Duration::from_millis((ttl as u64 * 1000 / 3).max(500))).await;
            }
        }
    }
}

async fn endpoint_status(ctx: &Ctx) -> Outcome {
    let mut statuses = Vec::new();
    let mut failed = false;
    for ep in &ctx.endpoints {
        let result = match ctx.connect(&[ep]).await {
            Ok(c) => ctx.timed(c.status()).await,
            Err(e) => Err(e),
        };
        match result {
            Ok(s) => statuses.push((ep.clone(), s)),
            Err(e) => {
                failed = true;
                eprintln!(
                    "Failed to get the status of endpoint {ep} ({})",
                    e.message.unwrap_or_default()
                );
            }
        }
    }
    ctx.format.endpoint_status(&statuses)?;
    if failed {
        return Err(Exit::silent(EXIT_ERROR));
    }
    Ok(())
}

/// etcdctl's `defrag`: each endpoint in turn, a line for each.
async fn defrag(ctx: &Ctx) -> Outcome {
    let mut failed = false;
    for ep in &ctx.endpoints {
        let result = match ctx.connect(&[ep]).await {
            Ok(c) => c.defragment().await.map_err(Exit::from),
            Err(e) => Err(e),
        };
        match result {
            Ok(_) => println!("Finished defragmenting etcd member[{ep}]"),
            Err(e) => {
                failed = true;
                eprintln!(
                    "Failed to defragment etcd member[{ep}] ({})",
                    e.message.unwrap_or_default()
                );
            }
        }
    }
    if failed {
        return Err(Exit::silent(EXIT_ERROR));
    }
    Ok(())
}

/// etcdctl's `alarm list` and `alarm disarm` (which lists, then disarms each
/// alarm of each member, as clientv3 does).
async fn alarm(ctx: &Ctx, command: AlarmCommand) -> Outcome {
    use pb::alarm_request::AlarmAction;
    let c = ctx.client().await?;
    let listed = ctx
        .timed(c.alarm(AlarmAction::Get, 0, pb::AlarmType::None))
        .await?;
    let header = listed.header;
    let shown = match command {
        AlarmCommand::List => listed.alarms,
        AlarmCommand::Disarm => {
            let mut cleared = Vec::new();
            for a in listed.alarms {
                let kind = pb::AlarmType::try_from(a.alarm).unwrap_or(pb::AlarmType::None);
                let r = ctx
                    .timed(c.alarm(AlarmAction::Deactivate, a.member_id, kind))
                    .await?;
                cleared.extend(r.alarms);
            }
            cleared
        }
    };
    ctx.format.alarms(&header, &shown)
}

async fn endpoint_health(ctx: &Ctx) -> Outcome {
    let mut results = Vec::new();
    for ep in &ctx.endpoints {
        let start = Instant::now();
        let probe = async {
            let c = Client::connect_with([ep], ctx.options.clone()).await?;
            match c.get("health").await {
                Ok(_) => {}
                Err(hark_client::Error::Status(s))
                    if s.message() == "etcdserver: permission denied" => {}
                Err(e) => return Err(e),
            }
            let took = start.elapsed();
            let alarms = c.status().await.map(|_| ());
            Ok::<_, hark_client::Error>((took, alarms))
        };
        let outcome = tokio::time::timeout(ctx.command_timeout, probe).await;
        let took = start.elapsed();
        let result = match outcome {
            Ok(Ok((took, Ok(())))) => print::Health {
                endpoint: ep.clone(),
                healthy: true,
                took,
                error: String::new(),
            },
            Ok(Ok((took, Err(_)))) => print::Health {
                endpoint: ep.clone(),
                healthy: false,
                took,
                error: "Unable to fetch the alarm list".into(),
            },
            Ok(Err(e)) => print::Health {
                endpoint: ep.clone(),
                healthy: false,
                took,
                error: e.to_string(),
            },
            Err(_) => print::Health {
                endpoint: ep.clone(),
                healthy: false,
                took,
                error: "context deadline exceeded".into(),
            },
        };
        results.push(result);
    }
    ctx.format.endpoint_health(&results)?;
    if results.iter().any(|h| !h.healthy) {
        return Err(Exit::new(EXIT_ERROR, "unhealthy cluster"));
    }
    Ok(())
}
