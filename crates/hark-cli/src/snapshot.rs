//! `harkctl snapshot save | status | restore`: etcdctl's `snapshot save`
//! (the server's stream into a file) and etcdutl's `snapshot status` and
//! `snapshot restore` (a file into a data dir `hark` starts from), for
//! snapshots saved by Hark or by etcd.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use clap::{Args, Subcommand};

use crate::ctx::Ctx;
use crate::exit::{EXIT_BAD_ARGS, EXIT_ERROR, EXIT_INTERRUPTED, Exit, Outcome};
use crate::progress::{Progress, ago, si_bytes};
use hark_snapshot::RestoreProgress;

#[derive(Subcommand)]
pub enum SnapshotCommand {
    /// Stores an etcd node backend snapshot to a given file
    Save { args: Vec<String> },
    /// Gets backend snapshot status of a given file
    Status { args: Vec<String> },
    /// Restores an etcd member snapshot to a Hark data directory
    Restore(RestoreArgs),
}

#[derive(Args)]
pub struct RestoreArgs {
    args: Vec<String>,
    /// Path to the data directory (default: `<name>.hark`)
    #[arg(long, help = "Path to the data directory [default: <name>.hark]")]
    data_dir: Option<PathBuf>,
    /// Human-readable name for this member
    #[arg(long, default_value = "default")]
    name: String,
    /// Initial cluster configuration for restore bootstrap
    #[arg(long, default_value = "default=http://localhost:2380")]
    initial_cluster: String,
    /// Initial cluster token for the etcd cluster during restore bootstrap
    #[arg(long, default_value = "etcd-cluster")]
    initial_cluster_token: String,
    /// List of this member's peer URLs to advertise to the rest of the cluster
    #[arg(long, default_value = "http://localhost:2380")]
    initial_advertise_peer_urls: String,
    /// Ignore snapshot integrity hash value (required if copied from data directory)
    #[arg(long)]
    skip_hash_check: bool,
    /// The storage backend of the new data dir: rocksdb or fjall (start
    /// the server with the same --backend)
    #[arg(long, default_value = "rocksdb")]
    backend: hark_snapshot::BackendKind,
}

fn one_file(args: &[String], command: &str) -> Result<PathBuf, Exit> {
    match args {
        [path] => Ok(PathBuf::from(path)),
        _ => Err(Exit::new(
            EXIT_BAD_ARGS,
            format!("snapshot {command} expects one argument"),
        )),
    }
}

pub async fn run(ctx: &Ctx, command: SnapshotCommand) -> Outcome {
    match command {
        SnapshotCommand::Save { args } => save(ctx, one_file(&args, "save")?).await,
        SnapshotCommand::Status { args } => {
            let path = one_file(&args, "status")?;
            let st =
                hark_snapshot::status(&path).map_err(|e| Exit::new(EXIT_ERROR, e.to_string()))?;
            ctx.format.snapshot_status(&st)
        }
        SnapshotCommand::Restore(a) => restore(a),
    }
}

/// etcdctl's `snapshot save`: one endpoint's stream into `<path>.part`,
/// which must end with the checksum, then renamed to `path`. A bar shows
/// the bytes on a terminal; otherwise etcdctl's four log lines go to stderr.
async fn save(ctx: &Ctx, path: PathBuf) -> Outcome {
    if ctx.endpoints.len() != 1 {
        return Err(Exit::new(
            EXIT_BAD_ARGS,
            format!(
                "snapshot must be requested to one selected node, not multiple {:?}",
                ctx.endpoints
            ),
        ));
    }
    let endpoint = ctx.endpoints[0].clone();
    let failed = |e: &dyn std::fmt::Display| Exit::new(EXIT_INTERRUPTED, e.to_string());
    let part = PathBuf::from(format!("{}.part", path.display()));
    let client = ctx.client().await?;
    let progress = Progress::bytes("harkctl/snapshot.rs", None);
    progress.set_message(format!("saving {}", path.display()));
    let saved = async {
        // etcdctl's file mode (0600). A stale `.part` goes first, and the
        // new one is created only where nothing is, so a symlink planted at
        // that name is never followed.
        let _ = std::fs::remove_file(&part);
        let mut file = {
            use std::os::unix::fs::OpenOptionsExt;
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&part)
                .map_err(|e| failed(&format!("{}: {e}", part.display())))?
        };
        progress.log(
            "created temporary db file",
            &[("path", part.display().to_string())],
        );
        let started = Instant::now();
        let mut stream = client.snapshot().await.map_err(|e| failed(&e))?;
        progress.log("fetching snapshot", &[("endpoint", endpoint.clone())]);
        let mut size = 0u64;
        while let Some(msg) = stream
            .message()
            .await
            .map_err(|status| failed(&status.message()))?
        {
            if size == 0 && msg.remaining_bytes > 0 {
                // The database's bytes after this chunk, then the checksum.
                let total = msg.blob.len() as u64 + msg.remaining_bytes + 32;
                progress.set_length(total);
            }
            file.write_all(&msg.blob).map_err(|e| failed(&e))?;
            size += msg.blob.len() as u64;
            progress.set_position(size);
        }
        if !hark_snapshot::has_checksum(size) {
            return Err(failed(&format!(
                "sha256 checksum not found [bytes: {size}]"
            )));
        }
        file.sync_all().map_err(|e| failed(&e))?;
        progress.log(
            "fetched snapshot",
            &[
                ("endpoint", endpoint.clone()),
                ("size", si_bytes(size)),
                ("took", ago(started)),
            ],
        );
        std::fs::rename(&part, &path).map_err(|e| failed(&e))?;
        progress.log("saved", &[("path", path.display().to_string())]);
        Ok(())
    }
    .await;
    progress.finish();
    if saved.is_err() {
        let _ = std::fs::remove_file(&part);
    }
    saved?;
    println!("Snapshot saved at {}", path.display());
    Ok(())
}

/// etcdutl's `snapshot restore`, into a Hark data dir. The cluster flags are
/// checked as etcdutl checks them; the restored store keeps its data, and
/// the member's identity comes from the flags `hark` is started with.
fn restore(a: RestoreArgs) -> Outcome {
    let snapshot = one_file(&a.args, "restore")?;
    let peers = parse_initial_cluster(&a.initial_cluster)?;
    let ours: Vec<&str> = peers
        .iter()
        .filter(|(name, _)| *name == a.name)
        .map(|(_, url)| url.as_str())
        .collect();
    if ours.is_empty() {
        return Err(Exit::new(
            EXIT_ERROR,
            format!(
                "couldn't find local name {:?} in the initial cluster configuration",
                a.name
            ),
        ));
    }
    let advertised: Vec<&str> = a.initial_advertise_peer_urls.split(',').collect();
    let mut sorted_ours = ours.clone();
    let mut sorted_advertised = advertised.clone();
    sorted_ours.sort_unstable();
    sorted_advertised.sort_unstable();
    if sorted_ours != sorted_advertised {
        return Err(Exit::new(
            EXIT_ERROR,
            format!(
                "--initial-cluster has {}={} but missing from --initial-advertise-peer-urls={} ({:?} vs {:?})",
                a.name,
                ours.join(","),
                a.initial_advertise_peer_urls,
                sorted_advertised,
                sorted_ours
            ),
        ));
    }
    let data_dir = a
        .data_dir
        .unwrap_or_else(|| PathBuf::from(format!("{}.hark", a.name)));
    let progress = Arc::new(Progress::bytes("harkctl/snapshot.rs", None));
    let fields = [
        ("path", snapshot.display().to_string()),
        ("data-dir", data_dir.display().to_string()),
    ];
    progress.log("restoring snapshot", &fields);
    let shown = progress.clone();
    let options = hark_snapshot::RestoreOptions {
        skip_hash_check: a.skip_hash_check,
        backend: a.backend,
        progress: shown.on_terminal().then(|| {
            hark_snapshot::ProgressHook(Arc::new(move |step| match step {
                RestoreProgress::Checking { done, total } => {
                    shown.set_message("checking the sha256");
                    shown.set_length(total);
                    shown.set_position(done);
                }
                RestoreProgress::Loading { rows } => {
                    shown.set_message(format!("loading: {rows} revisions"));
                }
            }))
        }),
    };
    let restored = hark_snapshot::restore(&snapshot, &data_dir, &options);
    progress.finish();
    let restored = restored.map_err(|e| Exit::new(EXIT_ERROR, e.to_string()))?;
    progress.log("restored snapshot", &fields);
    eprintln!(
        "restored snapshot {} into {} at revision {} ({} revisions, compacted at {}; cluster token {:?})",
        snapshot.display(),
        data_dir.display(),
        restored.revision,
        restored.rows,
        restored.compact_revision,
        a.initial_cluster_token
    );
    Ok(())
}

/// `name=url,name=url` (etcd's `--initial-cluster`).
fn parse_initial_cluster(s: &str) -> Result<Vec<(String, String)>, Exit> {
    s.split(',')
        .filter(|p| !p.trim().is_empty())
        .map(|pair| {
            pair.split_once('=')
                .map(|(n, u)| (n.trim().to_string(), u.trim().to_string()))
                .ok_or_else(|| {
                    Exit::new(
                        EXIT_ERROR,
                        format!("invalid --initial-cluster entry {pair:?} (want name=url)"),
                    )
                })
        })
        .collect()
}
