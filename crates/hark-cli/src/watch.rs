//! `watch`: one watch, or watches read from stdin (`--interactive`), each
//! event printed as etcdctl prints it.

use std::io::Write;

use clap::{Args, Parser};
use hark_client::{Client, WatchError, WatchOptions};

use crate::ctx::Ctx;
use crate::exit::{EXIT_BAD_ARGS, EXIT_INTERRUPTED, EXIT_INVALID_INPUT, Exit, Outcome};
use crate::print::Format;

#[derive(Args)]
pub(crate) struct WatchArgs {
    #[command(flatten)]
    pub(crate) watch: WatchFlags,
    /// Interactive mode
    #[arg(short, long)]
    pub(crate) interactive: bool,
    /// get periodic watch progress notification from server
    #[arg(long)]
    pub(crate) progress_notify: bool,
}

pub(crate) async fn watch(ctx: &Ctx, a: WatchArgs) -> Outcome {
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
        let words = crate::txn::argify(line.trim());
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
pub(crate) struct WatchFlags {
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
