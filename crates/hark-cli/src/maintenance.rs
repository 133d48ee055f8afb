//! `compaction`, `defrag`, `alarm list | disarm` and Hark's `du`.

use clap::{Args, Subcommand};
use hark_client::pb;

use std::time::{Duration, Instant};

use crate::ctx::Ctx;
use crate::exit::{EXIT_BAD_ARGS, EXIT_ERROR, Exit, Outcome};
use crate::json;
use crate::print::Format;
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

/// `harkctl du [PREFIX] [--depth N]`: Hark's space per prefix.
#[derive(Args)]
pub(crate) struct DuArgs {
    /// The prefix: empty (every key) or ending with '/'
    #[arg(default_value = "")]
    prefix: String,
    /// How many levels below the prefix to list (a level ends at each '/')
    #[arg(long, default_value_t = 1)]
    depth: u32,
}

/// One line per prefix, like `du`: the prefix first, then those under it.
/// Sizes are the server's counters (kept on every write and compaction),
/// so this is as cheap on a full store as on an empty one.
pub(crate) async fn du(ctx: &Ctx, a: DuArgs) -> Outcome {
    let c = ctx.client().await?;
    let resp = ctx.timed(c.du(a.prefix.into_bytes(), a.depth)).await?;
    let rows: Vec<Vec<String>> = resp
        .prefixes
        .iter()
        .map(|p| {
            vec![
                p.keys.to_string(),
                crate::print::humanize_bytes(p.bytes.max(0) as u64),
                p.revisions.to_string(),
                crate::print::humanize_bytes(p.history_bytes.max(0) as u64),
                String::from_utf8_lossy(&p.prefix).into_owned(),
            ]
        })
        .collect();
    const HEADERS: [&str; 5] = ["keys", "bytes", "revisions", "history bytes", "prefix"];
    match ctx.format {
        Format::Json => {
            let prefixes = resp
                .prefixes
                .iter()
                .map(|p| {
                    json::Obj::new()
                        .raw("prefix", &json::b64(&p.prefix))
                        .raw("depth", &p.depth.to_string())
                        .raw("keys", &p.keys.to_string())
                        .raw("bytes", &p.bytes.to_string())
                        .raw("revisions", &p.revisions.to_string())
                        .raw("history_bytes", &p.history_bytes.to_string())
                        .end()
                })
                .collect::<Vec<_>>();
            let out = json::Obj::new()
                .opt("header", json::header(&resp.header))
                .raw("tracked_depth", &resp.tracked_depth.to_string())
                .raw("prefixes", &format!("[{}]", prefixes.join(",")))
                .bool_nz("truncated", resp.truncated)
                .end();
            println!("{out}");
        }
        Format::Table => crate::print::print_table(&HEADERS, &rows),
        Format::Simple { .. } | Format::Fields => {
            let widths: Vec<usize> = (0..4)
                .map(|i| {
                    rows.iter()
                        .map(|r| r[i].len())
                        .chain([HEADERS[i].len()])
                        .max()
                        .unwrap_or(0)
                })
                .collect();
            let line = |cells: &[String]| {
                let mut s = String::new();
                for (i, w) in widths.iter().enumerate() {
                    s.push_str(&format!("{:>w$}  ", cells[i], w = *w));
                }
                s.push_str(&cells[4]);
                println!("{s}");
            };
            line(&HEADERS.map(|h| h.to_uppercase()));
            for r in &rows {
                line(r);
            }
        }
    }
    if resp.truncated {
        eprintln!(
            "harkctl: more prefixes than one answer lists; ask for a deeper prefix or a smaller --depth"
        );
    }
    Ok(())
}
