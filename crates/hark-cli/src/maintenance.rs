//! `compaction`, `defrag` and `alarm list | disarm`.

use clap::{Args, Subcommand};
use hark_client::pb;

use crate::ctx::Ctx;
use crate::exit::{EXIT_BAD_ARGS, EXIT_ERROR, Exit, Outcome};

#[derive(Subcommand)]
pub(crate) enum AlarmCommand {
    /// Lists all alarms
    List,
    /// Disarms all alarms
    Disarm,
}

/// etcdctl's `defrag`: each endpoint in turn, a line for each.
pub(crate) async fn defrag(ctx: &Ctx) -> Outcome {
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
