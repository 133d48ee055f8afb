//! `put`, `get` and `del`: their flags and arguments as
//! requests, as etcdctl reads them.

use std::io::Read;

use bytes::Bytes;
use clap::Args;
use hark_client::pb;

use crate::exit::{EXIT_BAD_ARGS, EXIT_BAD_FEATURE, Exit, go_parse_error};

#[derive(Args, Clone)]
pub struct PutArgs {
    pub(crate) args: Vec<String>,
    /// lease ID (in hexadecimal) to attach to the key
    #[arg(long, default_value = "0")]
    pub(crate) lease: String,
    /// return the previous key-value pair before modification
    #[arg(long)]
    pub(crate) prev_kv: bool,
    /// updates the key using its current value
    #[arg(long)]
    pub(crate) ignore_value: bool,
    /// updates the key using its current lease
    #[arg(long)]
    pub(crate) ignore_lease: bool,
}

#[derive(Args, Clone)]
pub struct GetArgs {
    pub(crate) args: Vec<String>,
    /// Linearizable(l) or Serializable(s)
    #[arg(long, default_value = "l")]
    pub(crate) consistency: String,
    /// Order of results; ASCEND or DESCEND (ASCEND by default)
    #[arg(long, default_value = "")]
    pub(crate) order: String,
    /// Sort target; CREATE, KEY, MODIFY, VALUE, or VERSION
    #[arg(long, default_value = "")]
    pub(crate) sort_by: String,
    /// Maximum number of results
    #[arg(long, default_value_t = 0)]
    pub(crate) limit: i64,
    /// Get keys with matching prefix
    #[arg(long)]
    pub(crate) prefix: bool,
    /// Get keys that are greater than or equal to the given key using byte compare
    #[arg(long)]
    pub(crate) from_key: bool,
    /// Specify the kv revision
    #[arg(long, default_value_t = 0)]
    pub(crate) rev: i64,
    /// Get only the keys
    #[arg(long)]
    pub(crate) keys_only: bool,
    /// Get only the count
    #[arg(long)]
    pub(crate) count_only: bool,
    /// Only write values when using the "simple" output format
    #[arg(long)]
    pub(crate) print_value_only: bool,
    /// Use the RangeStream RPC
    #[arg(long)]
    pub(crate) stream: bool,
}

#[derive(Args, Clone)]
pub struct DelArgs {
    pub(crate) args: Vec<String>,
    /// delete keys with matching prefix
    #[arg(long)]
    pub(crate) prefix: bool,
    /// return deleted key-value pairs
    #[arg(long)]
    pub(crate) prev_kv: bool,
    /// delete keys that are greater than or equal to the given key using byte compare
    #[arg(long)]
    pub(crate) from_key: bool,
    /// delete range of keys
    #[arg(long)]
    pub(crate) range: bool,
}

pub(crate) fn parse_lease(s: &str) -> Result<i64, std::num::ParseIntError> {
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
