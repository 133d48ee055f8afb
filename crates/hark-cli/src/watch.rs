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
    print_watch(ctx.format, watch, w.exec.clone()).await
}

/// Prints each update; with `exec` (the command after `--`), runs it once
/// per event, as etcdctl does, with the event in `ETCD_WATCH_*` variables.
async fn print_watch(format: Format, mut w: hark_client::Watch, exec: Vec<String>) -> Outcome {
    while let Some(update) = w.next().await {
        match update {
            Ok(u) => {
                format.watch(&u);
                let _ = std::io::stdout().flush();
                for event in &u.events {
                    run_for_event(&exec, u.revision, event).await;
                }
            }
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
                    let _ = print_watch(format, watch, w.exec).await;
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
    /// A command run for each event, after `--` (`ETCD_WATCH_REVISION`,
    /// `_EVENT_TYPE`, `_KEY` and `_VALUE` set, Go-quoted as etcdctl sets them)
    #[arg(last = true)]
    exec: Vec<String>,
}

/// Runs `exec` (if any) for one event; a failed command ends harkctl with
/// exit status 1 and etcdctl's message, as etcdctl's `os.Exit(1)` does.
async fn run_for_event(exec: &[String], revision: i64, event: &hark_client::Event) {
    let Some((program, args)) = exec.split_first() else {
        return;
    };
    let kv = event.kv.clone().unwrap_or_default();
    let kind = if event.r#type == 1 { "DELETE" } else { "PUT" };
    let status = tokio::process::Command::new(program)
        .args(args)
        .env("ETCD_WATCH_REVISION", revision.to_string())
        .env("ETCD_WATCH_EVENT_TYPE", go_quote(kind.as_bytes()))
        .env("ETCD_WATCH_KEY", go_quote(&kv.key))
        .env("ETCD_WATCH_VALUE", go_quote(&kv.value))
        .status()
        .await;
    let failed = match status {
        Ok(s) if s.success() => return,
        Ok(s) => match s.code() {
            Some(code) => format!("exit status {code}"),
            None => s.to_string(),
        },
        Err(e) => e.to_string(),
    };
    let quoted: Vec<String> = exec.iter().map(|a| go_quote(a.as_bytes())).collect();
    eprintln!("command [{}] error ({failed})", quoted.join(" "));
    std::process::exit(1);
}

/// Go's `%q` of a byte string (`strconv.Quote`): printable characters as
/// they are, the usual backslash escapes, other bytes as `\xNN`.
fn go_quote(bytes: &[u8]) -> String {
    let mut out = String::from("\"");
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                '\r' => out.push_str("\\r"),
                '\u{7}' => out.push_str("\\a"),
                '\u{8}' => out.push_str("\\b"),
                '\u{c}' => out.push_str("\\f"),
                '\u{b}' => out.push_str("\\v"),
                c if (c as u32) < 0x20 || c == '\u{7f}' => {
                    out.push_str(&format!("\\x{:02x}", c as u32));
                }
                c if c.is_control() => out.push_str(&format!("\\u{:04x}", c as u32)),
                c => out.push(c),
            }
        }
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out.push('"');
    out
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

#[cfg(test)]
mod tests {
    use super::go_quote;

    #[test]
    fn bytes_are_quoted_as_gos_strconv_quote_does() {
        assert_eq!(go_quote(b"PUT"), r#""PUT""#);
        assert_eq!(go_quote(b""), r#""""#);
        assert_eq!(go_quote(b"a \"b\" \\ c"), r#""a \"b\" \\ c""#);
        assert_eq!(go_quote(b"l1\nl2\t\x00\x7f"), r#""l1\nl2\t\x00\x7f""#);
        assert_eq!(go_quote("héllo".as_bytes()), r#""héllo""#);
        assert_eq!(go_quote(b"\xff\xfe"), r#""\xff\xfe""#);
        assert_eq!(go_quote("\u{85}".as_bytes()), r#""\u0085""#);
    }
}
