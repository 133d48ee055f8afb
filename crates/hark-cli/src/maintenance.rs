//! `compaction`, `defrag` and `alarm list | disarm`.

use clap::{Args, Subcommand};
use hark_client::pb;

use std::time::{Duration, Instant};

use crate::ctx::Ctx;
use crate::exit::{EXIT_BAD_ARGS, EXIT_ERROR, Exit, Outcome};
use crate::progress::{Progress, si_bytes};

#[derive(Subcommand)]
pub(crate) enum AlarmCommand {
    /// Lists all alarms
    List,
    /// Disarms all alarms
    Disarm,
}

/// etcdctl's `defrag` (`--cluster`: every member): each endpoint in turn,
/// a line for each. Hark reclaims space gently, about 20 s per GiB stored
/// (docs/operations.md), so without `--command-timeout` each member gets
/// [`Ctx::long_timeout`] rather than etcdctl's 5 s. A spinner shows the
/// member's size while it shrinks; off a terminal, log lines say when each
/// member starts and ends.
pub(crate) async fn defrag(ctx: &Ctx) -> Outcome {
    let mut failed = false;
    for ep in &ctx.endpoints {
        let progress = Progress::spinner("harkctl/maintenance.rs");
        progress.set_message(format!("defragmenting {ep}"));
        let started = Instant::now();
        let result = match ctx.connect(&[ep]).await {
            Ok(c) => {
                let before = db_size(ctx, &c).await;
                progress.log(
                    "defragmenting",
                    &[("endpoint", ep.clone()), ("current-db-size", before)],
                );
                let defragmented = defrag_showing_size(ctx, &c, ep, &progress).await;
                if defragmented.is_ok() {
                    progress.log(
                        "finished defragmenting",
                        &[
                            ("endpoint", ep.clone()),
                            ("current-db-size", db_size(ctx, &c).await),
                            ("took", format!("{:?}", started.elapsed())),
                        ],
                    );
                }
                defragmented
            }
            Err(e) => Err(e),
        };
        progress.finish();
        match result {
            Ok(()) => println!("Finished defragmenting etcd member[{ep}]"),
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

/// One member's Defragment under [`Ctx::long_timeout`], its size polled
/// into the spinner meanwhile.
async fn defrag_showing_size(
    ctx: &Ctx,
    c: &hark_client::Client,
    ep: &str,
    progress: &Progress,
) -> Result<(), Exit> {
    let call = tokio::time::timeout(ctx.long_timeout, c.defragment());
    tokio::pin!(call);
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        tokio::select! {
            done = &mut call => {
                return match done {
                    Ok(r) => r.map(|_| ()).map_err(Exit::from),
                    Err(_) => Err(Exit::new(EXIT_ERROR, "context deadline exceeded")),
                };
            }
            _ = tick.tick(), if progress.on_terminal() => {
                progress.set_message(format!("defragmenting {ep}: {}", db_size(ctx, c).await));
            }
        }
    }
}

/// The member's backend size as etcd logs it, or `?` when Status fails.
async fn db_size(ctx: &Ctx, c: &hark_client::Client) -> String {
    match ctx.timed(c.status()).await {
        Ok(s) => si_bytes(u64::try_from(s.db_size).unwrap_or(0)),
        Err(_) => "?".to_string(),
    }
}

/// etcdctl's `alarm list` and `alarm disarm` (which lists, then disarms each
/// alarm of each member, as clientv3 does).
pub(crate) async fn alarm(ctx: &Ctx, command: AlarmCommand) -> Outcome {
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

#[derive(Args)]
pub(crate) struct CompactionArgs {
    pub(crate) args: Vec<String>,
    /// 'true' to wait for compaction to physically remove all old revisions
    #[arg(long)]
    pub(crate) physical: bool,
}

/// `compaction <revision>`.
pub(crate) async fn compaction(ctx: &Ctx, a: CompactionArgs) -> Outcome {
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
