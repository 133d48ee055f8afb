//! `harkctl`: etcdctl's commands, flags, output (simple and json, byte for
//! byte as etcdctl 3.5 prints them), error messages and exit codes, over
//! `hark-client`. Works against Hark and etcd.

mod auth;
mod check;
mod cluster;
mod concurrency;
mod ctx;
mod endpoint;
mod exit;
mod json;
mod kv;
mod lease;
mod maintenance;
mod print;
mod progress;
mod snapshot;
mod txn;
mod watch;

use std::io::Write;
use std::time::Duration;

use clap::{Parser, Subcommand};

use ctx::Ctx;
use endpoint::EndpointCommand;
use exit::{EXIT_BAD_ARGS, EXIT_BAD_CONNECTION, EXIT_ERROR, Exit, Outcome};
use kv::{DelArgs, GetArgs, PutArgs, del_request, get_request, put_request};
use lease::LeaseCommand;
use maintenance::{AlarmCommand, CompactionArgs};
use print::Format;
use txn::TxnArgs;
use watch::WatchArgs;

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
    /// timeout for short running command (excluding dial timeout) [default: 5s; defrag: 5m]
    #[arg(long, global = true, env = "ETCDCTL_COMMAND_TIMEOUT")]
    command_timeout: Option<String>,
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
    Defrag {
        /// use all endpoints from the cluster member list
        #[arg(long)]
        cluster: bool,
    },
    /// Shows keys and bytes per key prefix, now and with history (Hark only)
    Du(maintenance::DuArgs),
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
    /// Acquires a named lock
    Lock(concurrency::LockArgs),
    /// Observes and participates in leader election
    Elect(concurrency::ElectArgs),
    /// Prints the version of harkctl
    Version,
    /// commands for checking properties of the etcd cluster
    #[command(subcommand)]
    Check(check::CheckCommand),
    /// Writes man pages for harkctl and each of its commands into a directory
    Man {
        /// The directory (created if missing)
        dir: std::path::PathBuf,
    },
    /// Generates a completion script: `source <(harkctl completion bash)`
    Completion {
        /// bash, zsh, fish, powershell or elvish
        shell: clap_complete::Shell,
    },
}

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

async fn run(cli: Cli) -> Outcome {
    let format = Format::parse(&cli.write_out, cli.hex)?;
    let command_timeout = match &cli.command_timeout {
        None => None,
        Some(given) => Some(parse_duration(given).ok_or_else(|| {
            Exit::new(
                EXIT_ERROR,
                format!("invalid argument {given:?} for \"--command-timeout\" flag"),
            )
        })?),
    };
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
        command_timeout: command_timeout.unwrap_or(Duration::from_secs(5)),
        long_timeout: command_timeout.unwrap_or(ctx::LONG_COMMAND_TIMEOUT),
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
            let resp = if a.stream {
                ctx.timed(c.range_streamed(req)).await?
            } else {
                ctx.timed(c.range(req)).await?
            };
            ctx.format.get(&resp, &a)
        }
        Command::Del(a) => {
            let req = del_request(&a)?;
            let c = ctx.client().await?;
            let resp = ctx.timed(c.delete_range(req)).await?;
            ctx.format.del(&resp)
        }
        Command::Compaction(a) => maintenance::compaction(&ctx, a).await,
        Command::Txn(a) => txn::run(&ctx, a.args, a.interactive).await,
        Command::Watch(a) => watch::watch(&ctx, a).await,
        Command::Lease(l) => lease::lease(&ctx, l).await,
        Command::Endpoint(EndpointCommand::Status { cluster }) => {
            endpoint::endpoint_status(&ctx.with_cluster_endpoints(cluster).await?).await
        }
        Command::Endpoint(EndpointCommand::Health { cluster }) => {
            endpoint::endpoint_health(&ctx.with_cluster_endpoints(cluster).await?).await
        }
        Command::Endpoint(EndpointCommand::Hashkv { cluster, rev }) => {
            endpoint::endpoint_hashkv(&ctx.with_cluster_endpoints(cluster).await?, rev).await
        }
        Command::Snapshot(c) => snapshot::run(&ctx, c).await,
        Command::Defrag { cluster } => {
            maintenance::defrag(&ctx.with_cluster_endpoints(cluster).await?).await
        }
        Command::Du(a) => maintenance::du(&ctx, a).await,
        Command::Alarm(a) => maintenance::alarm(&ctx, a).await,
        Command::Member(m) => cluster::member(&ctx, m).await,
        Command::MoveLeader { args } => cluster::move_leader(&ctx, &args).await,
        Command::User(c) => auth::user(&ctx, c).await,
        Command::Role(c) => auth::role(&ctx, c).await,
        Command::Auth(c) => auth::auth(&ctx, c).await,
        Command::Lock(a) => concurrency::lock(&ctx, a).await,
        Command::Elect(a) => concurrency::elect(&ctx, a).await,
        Command::Check(c) => check::check(&ctx, c).await,
        Command::Man { dir } => {
            use clap::CommandFactory;
            write_man_pages(&dir, Cli::command())
                .map_err(|e| Exit::new(EXIT_ERROR, format!("{}: {e}", dir.display())))
        }
        Command::Completion { shell } => {
            use clap::CommandFactory;
            clap_complete::generate(
                shell,
                &mut Cli::command(),
                "harkctl",
                &mut std::io::stdout(),
            );
            Ok(())
        }
        Command::Version => {
            // etcdctl's two lines; the API is etcd's 3.5.
            println!("harkctl version: {}", env!("CARGO_PKG_VERSION"));
            println!("API version: 3.5");
            Ok(())
        }
    }
}

/// `harkctl.1`, then `harkctl-<command>.1` (and `harkctl-<command>-<sub>.1`)
/// for every command, in `man`'s own format.
fn write_man_pages(dir: &std::path::Path, cli: clap::Command) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut cli = cli;
    cli.build();
    fn write(dir: &std::path::Path, name: String, cmd: &clap::Command) -> std::io::Result<()> {
        let page = cmd
            .clone()
            .name(name.clone())
            .bin_name(name.replace('-', " "));
        let mut out = Vec::new();
        clap_mangen::Man::new(page).render(&mut out)?;
        std::fs::write(dir.join(format!("{name}.1")), out)?;
        for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
            write(dir, format!("{name}-{}", sub.get_name()), sub)?;
        }
        Ok(())
    }
    write(dir, "harkctl".to_string(), &cli)
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
