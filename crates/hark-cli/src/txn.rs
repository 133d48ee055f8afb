//! `txn`: etcdctl's stdin grammar — compares, a blank line, success ops, a
//! blank line, failure ops, a blank line.
//!
//! One deliberate difference: etcdctl 3.5 panics (exit 2) on an unknown
//! compare operator and on every `lease(...)` compare; harkctl reports the
//! first as a malformed comparison (exit 3) and reads the second's value as a
//! hex lease id, as etcd's later versions do.

use std::io::BufRead;
use std::sync::OnceLock;

use clap::{Parser, Subcommand};
use hark_client::{Compare, CompareOp, Op, Txn};

use clap::Args;

use crate::ctx::Ctx;
use crate::exit::{EXIT_BAD_ARGS, EXIT_INVALID_INPUT, Exit, Outcome};
use crate::kv::{DelArgs, GetArgs, PutArgs, del_request, get_request, put_request};

pub async fn run(ctx: &Ctx, args: Vec<String>, interactive: bool) -> Outcome {
    if !args.is_empty() {
        return Err(Exit::new(
            EXIT_BAD_ARGS,
            "txn command does not accept argument",
        ));
    }
    let c = ctx.client().await?;
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    prompt(interactive, "compares:");
    let mut compares = Vec::new();
    for line in section(&mut input)? {
        compares.push(parse_compare(&line)?);
    }
    prompt(interactive, "success requests (get, put, del):");
    let success = ops(section(&mut input)?)?;
    prompt(interactive, "failure requests (get, put, del):");
    let failure = ops(section(&mut input)?)?;
    // No command timeout, as etcdctl.
    let resp = c
        .txn(Txn::new().when(compares).and_then(success).or_else(failure))
        .await?;
    ctx.format.txn(&resp)
}

fn prompt(interactive: bool, text: &str) {
    if interactive {
        println!("{text}");
    }
}

/// Lines up to the next blank one. Running out of input first is an error
/// (`Error: EOF`), as etcdctl's reader reports it.
fn section(input: &mut impl BufRead) -> Result<Vec<String>, Exit> {
    let mut lines = Vec::new();
    loop {
        let mut line = String::new();
        let n = input
            .read_line(&mut line)
            .map_err(|e| Exit::new(EXIT_INVALID_INPUT, e.to_string()))?;
        if n == 0 || !line.ends_with('\n') {
            return Err(Exit::new(EXIT_INVALID_INPUT, "EOF"));
        }
        let line = line.trim();
        if line.is_empty() {
            return Ok(lines);
        }
        lines.push(line.to_string());
    }
}

fn ops(lines: Vec<String>) -> Result<Vec<Op>, Exit> {
    lines.iter().map(|l| parse_op(l)).collect()
}

#[derive(Parser)]
#[command(no_binary_name = true, infer_subcommands = true)]
struct OpLine {
    #[command(subcommand)]
    op: OpCommand,
}

#[derive(Subcommand)]
enum OpCommand {
    Put(PutArgs),
    Get(GetArgs),
    Del(DelArgs),
}

fn parse_op(line: &str) -> Result<Op, Exit> {
    let words = argify(line);
    if words.len() < 2 {
        return Err(Exit::new(
            EXIT_INVALID_INPUT,
            format!("invalid txn compare request: {line}"),
        ));
    }
    let parsed = OpLine::try_parse_from(&words)
        .map_err(|_| Exit::new(EXIT_INVALID_INPUT, format!("invalid txn request: {line}")))?;
    Ok(match parsed.op {
        OpCommand::Put(a) => Op::put_request(put_request(&a, false)?),
        OpCommand::Get(a) => Op::range(get_request(&a)?),
        OpCommand::Del(a) => Op::delete_range(del_request(&a)?),
    })
}

/// etcdctl's word splitting: `"..."` (Go escapes), `'...'` (literal) or a bare
/// word.
pub fn argify(line: &str) -> Vec<String> {
    static WORD: OnceLock<regex::Regex> = OnceLock::new();
    let word = WORD.get_or_init(|| {
        regex::Regex::new(r#""(?:[^"\\]|\\.)*"|'[^']*'|[^'"\s]\S*[^'"\s]?"#).expect("valid regex")
    });
    word.find_iter(line)
        .map(|m| {
            let w = m.as_str();
            if w.starts_with('"') {
                go_unquote(w)
                    .map(|(s, _)| s)
                    .unwrap_or_else(|| w.to_string())
            } else if w.starts_with('\'') && w.len() >= 2 {
                w[1..w.len() - 1].to_string()
            } else {
                w.to_string()
            }
        })
        .collect()
}

/// Reads one Go-quoted string (`"..."` with escapes, or a raw `` `...` ``)
/// at the start of `s`; returns it and the rest.
fn go_unquote(s: &str) -> Option<(String, &str)> {
    let mut chars = s.char_indices();
    let (_, quote) = chars.next()?;
    if quote == '`' {
        let end = s[1..].find('`')? + 1;
        return Some((s[1..end].to_string(), &s[end + 1..]));
    }
    if quote != '"' {
        return None;
    }
    let mut out = String::new();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Some((out, &s[i + 1..])),
            '\\' => {
                let (_, e) = chars.next()?;
                match e {
                    'n' => out.push('\n'),
                    't' => out.push('\t'),
                    'r' => out.push('\r'),
                    'a' => out.push('\u{7}'),
                    'b' => out.push('\u{8}'),
                    'f' => out.push('\u{c}'),
                    'v' => out.push('\u{b}'),
                    '\\' => out.push('\\'),
                    '"' => out.push('"'),
                    '\'' => out.push('\''),
                    'x' | 'u' | 'U' => {
                        let n = match e {
                            'x' => 2,
                            'u' => 4,
                            _ => 8,
                        };
                        let hex: String = (0..n)
                            .filter_map(|_| chars.next().map(|(_, c)| c))
                            .collect();
                        out.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
                    }
                    _ => return None,
                }
            }
            c => out.push(c),
        }
    }
    None
}

fn parse_compare(line: &str) -> Result<Compare, Exit> {
    let malformed = |why: &str| {
        Exit::new(
            EXIT_INVALID_INPUT,
            if why.is_empty() {
                format!("malformed comparison: {line}")
            } else {
                format!("malformed comparison: {line} ({why})")
            },
        )
    };
    let (target, rest) = line.split_once('(').ok_or_else(|| malformed(""))?;
    // "%q) %s %q", as Go's Sscanf reads it.
    let (key, rest) = go_unquote(rest.trim_start()).ok_or_else(|| malformed(""))?;
    let rest = rest.strip_prefix(')').ok_or_else(|| malformed(""))?;
    if !rest.starts_with(char::is_whitespace) {
        return Err(malformed(""));
    }
    let rest = rest.trim_start();
    let (op, rest) = rest
        .split_once(char::is_whitespace)
        .ok_or_else(|| malformed(""))?;
    let (value, _) = go_unquote(rest.trim_start()).ok_or_else(|| malformed(""))?;
    let op = match op {
        "=" => CompareOp::Equal,
        "!=" => CompareOp::NotEqual,
        ">" => CompareOp::Greater,
        "<" => CompareOp::Less,
        other => return Err(malformed(&format!("unknown operator {other}"))),
    };
    let int = |v: &str| {
        v.parse::<i64>().map_err(|_| {
            Exit::new(
                EXIT_INVALID_INPUT,
                format!("invalid txn compare request: {line}"),
            )
        })
    };
    Ok(match target {
        "ver" | "version" => Compare::version(key, op, int(&value)?),
        "c" | "create" => Compare::create_revision(key, op, int(&value)?),
        "m" | "mod" => Compare::mod_revision(key, op, int(&value)?),
        "val" | "value" => Compare::value(key, op, value),
        "lease" => Compare::lease(
            key,
            op,
            i64::from_str_radix(&value, 16).map_err(|_| {
                Exit::new(
                    EXIT_INVALID_INPUT,
                    format!("invalid txn compare request: {line}"),
                )
            })?,
        ),
        other => return Err(malformed(&format!("unknown target {other}"))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_and_quotes() {
        assert_eq!(argify(r#"put k "a b\n""#), ["put", "k", "a b\n"]);
        assert_eq!(argify("put k 'x y'"), ["put", "k", "x y"]);
        assert_eq!(argify("get --prefix k"), ["get", "--prefix", "k"]);
    }

    #[test]
    fn compares_follow_the_sscanf_grammar() {
        assert!(parse_compare(r#"value("k") = "v""#).is_ok());
        assert!(parse_compare(r#"mod("k") > "5""#).is_ok());
        assert_eq!(
            parse_compare(r#"mod("k") > "x""#).unwrap_err().code,
            EXIT_INVALID_INPUT
        );
        assert!(parse_compare(r#"value("k")="v""#).is_err());
        assert!(parse_compare(r#"value("k") == "v""#).is_err());
        assert!(parse_compare("bogus").is_err());
    }
}

#[derive(Args)]
pub(crate) struct TxnArgs {
    pub(crate) args: Vec<String>,
    /// Input from stdin interactively
    #[arg(short, long)]
    pub(crate) interactive: bool,
}
