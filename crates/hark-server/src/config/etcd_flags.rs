//! etcd's flags that Hark takes without acting on them. An etcd deployment
//! (a kubeadm manifest, a systemd unit, a config management role) passes
//! flags tuned for etcd's internals; refusing them would stop the swap, and
//! ignoring them silently would hide a difference. So each is accepted, set
//! aside before the command line reaches clap, and warned about once, with
//! why it has no effect. The few whose silent absence would weaken a
//! guarantee the operator asked for (an allow-list, a discovery bootstrap
//! that would otherwise start a cluster of one) are refused when given a
//! value that asks for it.
//!
//! Every flag of etcd 3.5.17 and 3.6.0 (`etcd-flags/*.txt`) is either a
//! [`super::Config`] flag or listed here; the tests below walk both lists.

use std::ffi::OsString;

/// How a flag takes its value, as Go's `flag` package parses it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Takes {
    /// A switch: `--flag` alone, or `--flag=true|false`; never the next argument.
    Switch,
    /// `--flag=value` or `--flag value`.
    Value,
}

/// Whether a value can be ignored safely.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IfSet {
    /// Warn and go on, whatever the value.
    Warn,
    /// Warn when empty (or `*`, "anyone"); otherwise refuse to start: the
    /// value asks for something Hark would silently not do.
    RefuseUnlessEmpty,
}

/// One etcd flag that has no effect in Hark.
pub struct WithoutEffect {
    /// The long name, without dashes.
    pub flag: &'static str,
    pub takes: Takes,
    pub if_set: IfSet,
    /// Why it has no effect (or what Hark does instead).
    pub reason: &'static str,
}

const fn warn(flag: &'static str, takes: Takes, reason: &'static str) -> WithoutEffect {
    WithoutEffect {
        flag,
        takes,
        if_set: IfSet::Warn,
        reason,
    }
}

const fn guarded(flag: &'static str, reason: &'static str) -> WithoutEffect {
    WithoutEffect {
        flag,
        takes: Takes::Value,
        if_set: IfSet::RefuseUnlessEmpty,
        reason,
    }
}

use Takes::{Switch, Value};

const V2: &str = "Hark serves only etcd's v3 API";
const BBOLT: &str = "tunes etcd's bbolt backend; Hark's store is RocksDB";
const TRACING: &str = "Hark exports no OpenTelemetry traces; its logs carry tracing spans";
const DISCOVERY: &str = "Hark has no discovery bootstrap: list the members in --initial-cluster";
const SLOW_LOG: &str =
    "Hark logs no per-request slowness warnings; see the request duration metrics";
pub(super) const LEASE_CHECKPOINT: &str = "Hark does not checkpoint leases' remaining TTLs; a new leader gives each lease its full TTL plus an election timeout";
const IN_PROCESS_GATEWAY: &str =
    "Hark's JSON gateway runs in-process and dials no client connection that would show it";
const PEER_CLIENT_CERT: &str = "Hark shows --peer-cert-file when dialling other members";
const NO_ROTATION: &str =
    "Hark does not rotate its log file; use journald, or logrotate with copytruncate";
const RAFT_TIMEOUTS: &str = "Hark's peer calls have deadlines derived from --election-timeout";
const NO_DOWNGRADE: &str = "Hark has no cluster downgrade";

/// Every etcd 3.5.17 / 3.6.0 flag Hark accepts without acting on it.
pub const WITHOUT_EFFECT: &[WithoutEffect] = &[
    // Member
    warn(
        "initial-election-tick-advance",
        Switch,
        "openraft starts a member's election timer afresh at boot; there are no ticks to advance",
    ),
    warn(
        "max-snapshots",
        Value,
        "Hark keeps one raft snapshot and replaces it; there are no snapshot files to count",
    ),
    warn(
        "max-wals",
        Value,
        "Hark's raft log is purged after each snapshot; there are no WAL files to count",
    ),
    warn("memory-mlock", Switch, BBOLT),
    warn("backend-bbolt-freelist-type", Value, BBOLT),
    warn("backend-batch-interval", Value, BBOLT),
    warn("backend-batch-limit", Value, BBOLT),
    warn(
        "grpc-keepalive-min-time",
        Value,
        "Hark does not police how often clients ping",
    ),
    warn(
        "socket-reuse-port",
        Switch,
        "Hark's listeners bind with SO_REUSEADDR only; two processes cannot share a port",
    ),
    warn(
        "socket-reuse-address",
        Switch,
        "Hark's listeners always bind with SO_REUSEADDR",
    ),
    warn(
        "enable-grpc-gateway",
        Switch,
        "Hark always serves the JSON gateway (on --listen-client-urls, or --listen-client-http-urls when set)",
    ),
    warn("raft-read-timeout", Value, RAFT_TIMEOUTS),
    warn("raft-write-timeout", Value, RAFT_TIMEOUTS),
    // Clustering
    guarded("discovery", DISCOVERY),
    guarded("discovery-srv", DISCOVERY),
    guarded("discovery-endpoints", DISCOVERY),
    warn("discovery-token", Value, DISCOVERY),
    warn("discovery-dial-timeout", Value, DISCOVERY),
    warn("discovery-request-timeout", Value, DISCOVERY),
    warn("discovery-keepalive-time", Value, DISCOVERY),
    warn("discovery-keepalive-timeout", Value, DISCOVERY),
    warn("discovery-insecure-transport", Switch, DISCOVERY),
    warn("discovery-insecure-skip-tls-verify", Switch, DISCOVERY),
    warn("discovery-cert", Value, DISCOVERY),
    warn("discovery-key", Value, DISCOVERY),
    warn("discovery-cacert", Value, DISCOVERY),
    warn("discovery-user", Value, DISCOVERY),
    warn("discovery-password", Value, DISCOVERY),
    warn("discovery-fallback", Value, DISCOVERY),
    warn("discovery-proxy", Value, DISCOVERY),
    warn("discovery-srv-name", Value, DISCOVERY),
    warn("enable-v2", Switch, V2),
    warn("v2-deprecation", Value, V2),
    warn("experimental-enable-v2v3", Value, V2),
    warn(
        "max-learners",
        Value,
        "Hark allows one learner at a time, etcd's default",
    ),
    // Security
    warn("client-cert-file", Value, IN_PROCESS_GATEWAY),
    warn("client-key-file", Value, IN_PROCESS_GATEWAY),
    warn("peer-client-cert-file", Value, PEER_CLIENT_CERT),
    warn("peer-client-key-file", Value, PEER_CLIENT_CERT),
    warn(
        "self-signed-cert-validity",
        Value,
        "--auto-tls and --peer-auto-tls certificates carry rcgen's default validity, not a number of years",
    ),
    guarded(
        "host-whitelist",
        "Hark does not filter HTTP requests by Host header; its gateway answers cross-origin browsers only as --cors allows",
    ),
    // Profiling and monitoring
    warn(
        "enable-pprof",
        Switch,
        "Hark serves no Go pprof; profile it with perf, and read /metrics",
    ),
    warn(
        "metrics",
        Value,
        "Hark exports one set of metrics whatever the level asked for: etcd's extensive set (grpc_server_handling_seconds included)",
    ),
    // Logging
    warn("enable-log-rotation", Switch, NO_ROTATION),
    warn("log-rotation-config-json", Value, NO_ROTATION),
    warn("warning-unary-request-duration", Value, SLOW_LOG),
    warn(
        "experimental-warning-unary-request-duration",
        Value,
        SLOW_LOG,
    ),
    warn("warning-apply-duration", Value, SLOW_LOG),
    warn("experimental-warning-apply-duration", Value, SLOW_LOG),
    // Distributed tracing
    warn("experimental-enable-distributed-tracing", Switch, TRACING),
    warn("enable-distributed-tracing", Switch, TRACING),
    warn("experimental-distributed-tracing-address", Value, TRACING),
    warn("distributed-tracing-address", Value, TRACING),
    warn(
        "experimental-distributed-tracing-service-name",
        Value,
        TRACING,
    ),
    warn("distributed-tracing-service-name", Value, TRACING),
    warn(
        "experimental-distributed-tracing-instance-id",
        Value,
        TRACING,
    ),
    warn("distributed-tracing-instance-id", Value, TRACING),
    warn(
        "experimental-distributed-tracing-sampling-rate",
        Value,
        TRACING,
    ),
    warn("distributed-tracing-sampling-rate", Value, TRACING),
    // v2 proxy
    warn("proxy", Value, V2),
    warn("proxy-failure-wait", Value, V2),
    warn("proxy-refresh-interval", Value, V2),
    warn("proxy-dial-timeout", Value, V2),
    warn("proxy-write-timeout", Value, V2),
    warn("proxy-read-timeout", Value, V2),
    // Experimental
    warn(
        "experimental-enable-lease-checkpoint",
        Switch,
        LEASE_CHECKPOINT,
    ),
    warn(
        "experimental-enable-lease-checkpoint-persist",
        Switch,
        LEASE_CHECKPOINT,
    ),
    warn("experimental-downgrade-check-time", Value, NO_DOWNGRADE),
    warn("downgrade-check-time", Value, NO_DOWNGRADE),
    warn("experimental-memory-mlock", Switch, BBOLT),
    warn(
        "experimental-txn-mode-write-with-shared-buffer",
        Switch,
        BBOLT,
    ),
    warn(
        "experimental-stop-grpc-service-on-defrag",
        Switch,
        "Hark's defragmentation does not stop reads or writes, so clients need not be sent elsewhere",
    ),
];

/// An etcd flag given to Hark that has no effect here.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetAside {
    /// The long name, without dashes.
    pub flag: &'static str,
    pub reason: &'static str,
}

fn without_effect(name: &str) -> Option<&'static WithoutEffect> {
    WITHOUT_EFFECT.iter().find(|w| w.flag == name)
}

/// Go's `strconv.ParseBool`, which etcd's switches use.
pub(super) fn go_bool(s: &str) -> Option<bool> {
    match s {
        "1" | "t" | "T" | "true" | "TRUE" | "True" => Some(true),
        "0" | "f" | "F" | "false" | "FALSE" | "False" => Some(false),
        _ => None,
    }
}

/// Takes the flags of [`WITHOUT_EFFECT`] out of `args` (the program name
/// first), as Go's `flag` package would parse them (`-flag` or `--flag`,
/// `=value` or the next argument, switches only with `=`), and returns the
/// rest for clap with the flags set aside, each once, in the order given.
/// A guarded flag with a value, a switch with a value that is not a Go
/// boolean, or a value missing at the end is an error.
pub fn set_aside(
    args: impl IntoIterator<Item = OsString>,
) -> Result<(Vec<OsString>, Vec<SetAside>), String> {
    let mut kept = Vec::new();
    let mut aside: Vec<SetAside> = Vec::new();
    let mut args = args.into_iter();
    kept.extend(args.next());
    while let Some(arg) = args.next() {
        let Some(text) = arg.to_str() else {
            kept.push(arg);
            continue;
        };
        if text == "--" {
            kept.push(arg);
            kept.extend(args.by_ref());
            break;
        }
        let Some(body) = text.strip_prefix("--").or_else(|| text.strip_prefix('-')) else {
            kept.push(arg);
            continue;
        };
        let (name, inline) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (body, None),
        };
        let Some(known) = without_effect(name) else {
            kept.push(arg);
            continue;
        };
        let value = match (known.takes, inline) {
            (Takes::Switch, None) => String::new(),
            (Takes::Switch, Some(v)) => {
                if go_bool(&v).is_none() {
                    return Err(format!(
                        "invalid boolean value {v:?} for --{name}: parse error"
                    ));
                }
                v
            }
            (Takes::Value, Some(v)) => v,
            (Takes::Value, None) => match args.next() {
                Some(v) => v.to_string_lossy().into_owned(),
                None => return Err(format!("flag needs an argument: --{name}")),
            },
        };
        if known.if_set == IfSet::RefuseUnlessEmpty && !value.is_empty() && value != "*" {
            return Err(format!(
                "--{name}={value:?} is not supported: {}",
                known.reason
            ));
        }
        if !aside.iter().any(|a| a.flag == known.flag) {
            aside.push(SetAside {
                flag: known.flag,
                reason: known.reason,
            });
        }
    }
    Ok((kept, aside))
}

/// The flags named on a command line (before any `--`), as Go's `flag`
/// package reads them: `-name`, `--name`, with or without `=value`.
fn named_on(args: &[OsString]) -> Vec<String> {
    args.iter()
        .skip(1)
        .map_while(|a| a.to_str().filter(|t| *t != "--").map(str::to_string))
        .filter_map(|t| {
            let body = t.strip_prefix("--").or_else(|| t.strip_prefix('-'))?;
            Some(body.split_once('=').map_or(body, |(n, _)| n).to_string())
        })
        .collect()
}

/// `name`'s environment variable with `prefix`: `ETCD_` + `LISTEN_CLIENT_URLS`.
fn variable(prefix: &str, name: &str) -> String {
    format!("{prefix}{}", name.to_ascii_uppercase().replace('-', "_"))
}

/// etcd's environment, as etcd reads it: each flag not on the command line
/// is taken from `ETCD_<FLAG>` when set, unless Hark's own `HARK_<FLAG>` is
/// (clap reads that one), and comes back as `--flag=value` appended to
/// `args`. A flag given on the command line and in `ETCD_<FLAG>` as well is
/// an error, as in etcd. `known` are every flag name Hark takes (its own
/// and those set aside); the `ETCD_*` variables that name none come back
/// too, to be warned about.
pub fn from_environment(
    mut args: Vec<OsString>,
    known: &[String],
    env: impl IntoIterator<Item = (OsString, OsString)>,
) -> Result<(Vec<OsString>, Vec<String>), String> {
    let env: Vec<(String, OsString)> = env
        .into_iter()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v)))
        .collect();
    let set = |name: &str| env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    let on_command_line = named_on(&args);
    let mut unknown = Vec::new();
    for (key, _) in env.iter().filter(|(k, _)| k.starts_with("ETCD_")) {
        if !known.iter().any(|n| variable("ETCD_", n) == *key) {
            unknown.push(key.clone());
        }
    }
    for name in known {
        let Some(value) = set(&variable("ETCD_", name)) else {
            continue;
        };
        if on_command_line.iter().any(|n| n == name) {
            return Err(format!(
                "conflicting environment variable {:?} is shadowed by corresponding \
                 command-line flag (either unset environment variable or disable flag)",
                variable("ETCD_", name)
            ));
        }
        if set(&variable("HARK_", name)).is_some() {
            continue;
        }
        // etcd reads an empty variable as unset: the flag keeps its default.
        if value.is_empty() {
            continue;
        }
        let mut arg = OsString::from(format!("--{name}="));
        arg.push(value);
        args.push(arg);
    }
    Ok((args, unknown))
}

/// Every flag name `hark` takes: [`super::Config`]'s and those set aside.
pub fn known_flags() -> Vec<String> {
    use clap::CommandFactory;
    let mut names: Vec<String> = super::Config::command()
        .get_arguments()
        .flat_map(|a| {
            a.get_long()
                .into_iter()
                .chain(a.get_all_aliases().unwrap_or_default())
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect();
    names.extend(WITHOUT_EFFECT.iter().map(|w| w.flag.to_string()));
    names
}

/// etcd 3.7's own warnings for the flags it deprecates, word for word:
/// operators' log searches and etcd's tests look for them.
const ETCD_DEPRECATIONS: &[(&str, &str)] = &[
    (
        "max-snapshots",
        "--max-snapshots is deprecated in 3.6 and will be decommissioned in 3.8.",
    ),
    (
        "v2-deprecation",
        "--v2-deprecation is deprecated and scheduled for removal in v3.8. The default value is enforced, ignoring user input.",
    ),
];

/// Logs one warning for each flag set aside (and etcd's own deprecation
/// warning before it, where etcd has one).
pub fn warn_about(aside: &[SetAside]) {
    for a in aside {
        if let Some((_, deprecated)) = ETCD_DEPRECATIONS.iter().find(|(f, _)| *f == a.flag) {
            tracing::warn!("{deprecated}");
        }
        tracing::warn!(flag = %format!("--{}", a.flag), reason = a.reason, "etcd flag has no effect in Hark");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn os(args: &[&str]) -> Vec<OsString> {
        args.iter().map(OsString::from).collect()
    }

    /// One etcd version's flags from `etcd-flags/`: (name, takes, example).
    fn etcd_flags(version: &str) -> Vec<(String, Takes, String)> {
        let path = format!("{}/etcd-flags/{version}.txt", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap();
        text.lines()
            .filter(|l| l.starts_with("--"))
            .map(|l| {
                let mut parts = l.splitn(3, ' ');
                let name = parts.next().unwrap().trim_start_matches('-').to_string();
                let takes = match parts.next().unwrap() {
                    "bool" => Takes::Switch,
                    "value" => Takes::Value,
                    other => panic!("{path}: {other:?} in {l:?}"),
                };
                (name, takes, parts.next().unwrap_or("").to_string())
            })
            .collect()
    }

    /// Hark's own long flag names and aliases.
    fn hark_flags() -> Vec<String> {
        let all = known_flags();
        all.into_iter()
            .filter(|n| without_effect(n).is_none())
            .collect()
    }

    /// Each flag of etcd 3.5.17 and 3.6.0 is Hark's own or set aside (never
    /// both), and `hark --flag=<example>` parses: none is refused.
    #[test]
    fn every_flag_of_etcd_3_5_17_and_3_6_0_is_implemented_or_set_aside() {
        let hark = hark_flags();
        for version in ["v3.5.17", "v3.6.0"] {
            let flags = etcd_flags(version);
            assert_eq!(flags.len(), if version == "v3.5.17" { 109 } else { 137 });
            for (name, takes, example) in flags {
                let own = hark.contains(&name);
                let aside = without_effect(&name);
                assert!(
                    own != aside.is_some(),
                    "{version} --{name}: Hark's own: {own}, set aside: {}",
                    aside.is_some()
                );
                if let Some(w) = aside {
                    assert_eq!(w.takes, takes, "{version} --{name}");
                }
                let arg = match takes {
                    Takes::Switch => format!("--{name}"),
                    Takes::Value => format!("--{name}={example}"),
                };
                let (rest, set) = set_aside(os(&["hark", &arg]))
                    .unwrap_or_else(|e| panic!("{version} {arg}: {e}"));
                assert_eq!(set.len(), usize::from(aside.is_some()), "{arg}");
                if let Err(e) = super::super::Config::try_parse_from(rest) {
                    panic!("{version} {arg}: {e}");
                }
            }
        }
    }

    #[test]
    fn every_flag_set_aside_is_one_of_etcds() {
        let all: Vec<String> = ["v3.5.17", "v3.6.0"]
            .into_iter()
            .flat_map(etcd_flags)
            .map(|(name, _, _)| name)
            .collect();
        for w in WITHOUT_EFFECT {
            assert!(
                all.iter().any(|n| n == w.flag),
                "--{} is no etcd flag",
                w.flag
            );
            let same = WITHOUT_EFFECT.iter().filter(|o| o.flag == w.flag).count();
            assert_eq!(same, 1, "--{} listed {same} times", w.flag);
        }
    }

    #[test]
    fn flags_are_parsed_as_gos_flag_package_parses_them() {
        let (rest, set) = set_aside(os(&[
            "hark",
            "--name=a",
            "-memory-mlock",
            "--metrics",
            "extensive",
            "--enable-v2=false",
            "--metrics=basic",
            "--data-dir",
            "d",
        ]))
        .unwrap();
        assert_eq!(rest, os(&["hark", "--name=a", "--data-dir", "d"]));
        let names: Vec<_> = set.iter().map(|s| s.flag).collect();
        assert_eq!(names, ["memory-mlock", "metrics", "enable-v2"], "each once");
        // A switch never takes the next argument.
        let (rest, _) = set_aside(os(&["hark", "--memory-mlock", "--name=b"])).unwrap();
        assert_eq!(rest, os(&["hark", "--name=b"]));
        // After `--`, nothing is a flag.
        let (rest, set) = set_aside(os(&["hark", "--", "--memory-mlock"])).unwrap();
        assert_eq!((rest, set), (os(&["hark", "--", "--memory-mlock"]), vec![]));

        let err = set_aside(os(&["hark", "--memory-mlock=maybe"])).unwrap_err();
        assert!(err.contains("invalid boolean value"), "{err}");
        let err = set_aside(os(&["hark", "--metrics"])).unwrap_err();
        assert_eq!(err, "flag needs an argument: --metrics");
    }

    fn vars(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect()
    }

    #[test]
    fn etcd_variables_fill_the_flags_not_given_as_etcd_reads_them() {
        let known = known_flags();
        let env = vars(&[
            ("ETCD_NAME", "from-etcd-env"),
            ("ETCD_DATA_DIR", "/var/lib/etcd/default"),
            ("ETCD_PRE_VOTE", "true"),
            ("ETCD_MAX_TXN_OPS", "64"),
            ("HARK_MAX_TXN_OPS", "32"),
            ("ETCD_UNSUPPORTED_ARCH", "arm64"),
            ("ETCDCTL_API", "3"),
            ("PATH", "/usr/bin"),
        ]);
        let (args, unknown) =
            from_environment(os(&["hark", "--snapshot-count=5"]), &known, env).unwrap();
        assert_eq!(
            args,
            os(&[
                "hark",
                "--snapshot-count=5",
                "--name=from-etcd-env",
                "--data-dir=/var/lib/etcd/default",
                "--pre-vote=true",
            ]),
            "HARK_MAX_TXN_OPS wins over ETCD_MAX_TXN_OPS (clap reads it)"
        );
        assert_eq!(unknown, ["ETCD_UNSUPPORTED_ARCH"]);
        // Both on the command line and in ETCD_*: etcd's fatal error.
        for given in ["--name=x", "-name", "--name"] {
            let err = from_environment(
                os(&["hark", given, "x"]),
                &known,
                vars(&[("ETCD_NAME", "y")]),
            )
            .unwrap_err();
            assert!(
                err.contains("conflicting environment variable \"ETCD_NAME\""),
                "{err}"
            );
        }
        // After `--` nothing is a flag.
        assert!(
            from_environment(
                os(&["hark", "--", "--name=x"]),
                &known,
                vars(&[("ETCD_NAME", "y")])
            )
            .is_ok()
        );
    }

    #[test]
    fn a_value_hark_would_silently_not_honour_is_refused() {
        for arg in [
            "--discovery=https://discovery.etcd.io/abc",
            "--discovery-srv=example.com",
            "--host-whitelist=example.com",
        ] {
            let err = set_aside(os(&["hark", arg])).unwrap_err();
            assert!(err.contains("is not supported"), "{arg}: {err}");
        }
        // Their defaults (empty, or `*` for anyone) are only warned about.
        for arg in ["--discovery=", "--host-whitelist=*"] {
            let (_, set) = set_aside(os(&["hark", arg])).unwrap();
            assert_eq!(set.len(), 1, "{arg}");
        }
    }
}
