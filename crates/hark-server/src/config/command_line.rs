//! From `hark`'s command line and environment to a [`Config`], as etcd
//! reads its own: with `--config-file` (or `ETCD_CONFIG_FILE` /
//! `HARK_CONFIG_FILE`) the file alone configures the member and every other
//! flag and variable is ignored; otherwise `ETCD_*` variables fill the flags
//! not given. Either way etcd's flags that Hark does not act on are set
//! aside before clap sees the rest.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{CommandFactory, FromArgMatches};

use super::Config;
use super::config_file;
use super::etcd_flags::{self, SetAside};

/// What to tell the operator once logging is up.
#[derive(Debug, Default)]
pub struct Notices {
    pub set_aside: Vec<SetAside>,
    pub unknown_variables: Vec<String>,
    /// The configuration file read, and its keys that name no flag.
    pub config_file: Option<(PathBuf, Vec<String>)>,
}

impl Notices {
    pub fn log(&self) {
        if let Some((path, unknown_keys)) = &self.config_file {
            tracing::info!(
                path = %path.display(),
                "loaded server configuration, other configuration command line flags and \
                 environment variables will be ignored if provided"
            );
            for key in unknown_keys {
                tracing::warn!(key = %key, path = %path.display(), "unrecognized configuration file key");
            }
        }
        etcd_flags::warn_about(&self.set_aside);
        for name in &self.unknown_variables {
            tracing::warn!(variable = %name, "unrecognized environment variable");
        }
    }
}

#[derive(Debug)]
pub enum Error {
    /// clap's own (usage errors, and `--help` / `--version`): print and exit with it.
    Clap(clap::Error),
    Other(String),
}

impl From<String> for Error {
    fn from(e: String) -> Error {
        Error::Other(e)
    }
}

/// `args` (the program name first) and `env`, read as etcd reads them.
pub fn read(
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
) -> Result<(Config, Notices), Error> {
    // An empty flag is no flag: an `ETCD_*` variable may still set it.
    let args = without_empty_values(args);
    let known = etcd_flags::known_flags();
    let mut notices = Notices::default();
    let from_file = match config_file_named(&args, &env) {
        Some(path) => {
            let file = config_file::read(&path, &known)?;
            notices.config_file = Some((path, file.unknown_keys));
            Some(file.args)
        }
        None => None,
    };
    let args = match from_file {
        Some(file_args) => args.into_iter().take(1).chain(file_args).collect(),
        None => {
            let (args, unknown) = etcd_flags::from_environment(args, &known, env)?;
            notices.unknown_variables = unknown;
            args
        }
    };
    // A config file's empty settings mean their defaults too.
    let args = without_empty_values(args);
    let (args, set_aside) = etcd_flags::set_aside(args)?;
    notices.set_aside = set_aside;
    let mut command = Config::command();
    if notices.config_file.is_some() {
        // HARK_* variables too are ignored when a file configures the member.
        command = command.mut_args(|a| a.env(None));
    }
    let matches = command.try_get_matches_from(args).map_err(Error::Clap)?;
    let config = Config::from_arg_matches(&matches).map_err(Error::Clap)?;
    Ok((config, notices))
}

/// `args` without the flags given an empty value (`--cert-file=`, or
/// `--cert-file ""`): as in etcd, where an empty value (a templated unit's
/// `--wal-dir=${WAL_DIR}`, a Helm chart's empty setting) leaves the flag at
/// its default rather than stopping the start.
fn without_empty_values(args: Vec<OsString>) -> Vec<OsString> {
    let mut kept = Vec::with_capacity(args.len());
    let mut rest = args.into_iter();
    kept.extend(rest.next()); // the program
    let mut rest = rest.peekable();
    while let Some(arg) = rest.next() {
        let Some(text) = arg.to_str() else {
            kept.push(arg);
            continue;
        };
        if text == "--" {
            kept.push(arg);
            kept.extend(rest);
            break;
        }
        let is_flag = text.starts_with('-') && text.len() > 1;
        if is_flag
            && let Some((name, "")) = text.split_once('=')
            && !name.trim_start_matches('-').is_empty()
        {
            continue; // `--flag=`
        }
        if is_flag && !text.contains('=') && rest.peek().is_some_and(|next| next.is_empty()) {
            rest.next(); // `--flag ""`
            continue;
        }
        kept.push(arg);
    }
    kept
}

/// `--config-file` on the command line, else `HARK_CONFIG_FILE`, else
/// `ETCD_CONFIG_FILE`.
fn config_file_named(args: &[OsString], env: &[(OsString, OsString)]) -> Option<PathBuf> {
    let mut rest = args.iter().skip(1);
    while let Some(arg) = rest.next() {
        let Some(text) = arg.to_str() else { continue };
        if text == "--" {
            break;
        }
        let Some(body) = text.strip_prefix("--").or_else(|| text.strip_prefix('-')) else {
            continue;
        };
        match body.split_once('=') {
            Some(("config-file", path)) => {
                return Some(path.into()).filter(|p: &PathBuf| !p.as_os_str().is_empty());
            }
            None if body == "config-file" => {
                return rest.next().filter(|p| !p.is_empty()).map(PathBuf::from);
            }
            _ => {}
        }
    }
    ["HARK_CONFIG_FILE", "ETCD_CONFIG_FILE"]
        .iter()
        .find_map(|name| {
            env.iter()
                .find(|(k, v)| k == name && !v.is_empty())
                .map(|(_, v)| PathBuf::from(v))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(args: &[&str]) -> Vec<OsString> {
        args.iter().map(OsString::from).collect()
    }

    fn vars(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect()
    }

    fn file(text: &str) -> (tempfile::TempDir, String) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("etcd.conf.yml");
        std::fs::write(&path, text).unwrap();
        let path = path.display().to_string();
        (dir, path)
    }

    #[test]
    fn a_config_file_alone_configures_the_member() {
        let (_dir, path) =
            file("name: from-file\nsnapshot-count: 77\nenable-pprof: true\nunknown: 1\n");
        for (args, env) in [
            (
                os(&["hark", &format!("--config-file={path}"), "--name=flag"]),
                vec![],
            ),
            (
                os(&["hark", "-config-file", &path]),
                vars(&[("ETCD_NAME", "env")]),
            ),
            (os(&["hark"]), vars(&[("ETCD_CONFIG_FILE", &path)])),
            (
                os(&["hark", "--max-txn-ops=3"]),
                vars(&[("HARK_CONFIG_FILE", &path)]),
            ),
        ] {
            let (config, notices) = read(args.clone(), env).unwrap();
            assert_eq!(config.name, "from-file", "{args:?}");
            assert_eq!(config.snapshot_count, 77);
            assert_eq!(config.max_txn_ops, 128, "the default, not the ignored flag");
            let (read_from, unknown) = notices.config_file.unwrap();
            assert_eq!(read_from.display().to_string(), path);
            assert_eq!(unknown, ["unknown"]);
            let aside: Vec<_> = notices.set_aside.iter().map(|s| s.flag).collect();
            assert_eq!(aside, ["enable-pprof"]);
        }
    }

    #[test]
    fn without_a_file_flags_then_etcd_variables_configure_it() {
        let (config, notices) = read(
            os(&["hark", "--name=flag", "--enable-pprof"]),
            vars(&[("ETCD_SNAPSHOT_COUNT", "9"), ("ETCD_NO_SUCH", "x")]),
        )
        .unwrap();
        assert_eq!((config.name.as_str(), config.snapshot_count), ("flag", 9));
        assert!(notices.config_file.is_none());
        assert_eq!(notices.unknown_variables, ["ETCD_NO_SUCH"]);
        assert_eq!(notices.set_aside.len(), 1);
    }

    /// The flag walk for empty values: every flag hark takes, given empty
    /// as `--flag=`, `--flag ""` or an empty `ETCD_*` variable, leaves the
    /// configuration exactly as without it.
    #[test]
    fn an_empty_value_leaves_every_flag_at_its_default() {
        let (default, _) = read(os(&["hark"]), vec![]).unwrap();
        let default = format!("{default:?}");
        let known = etcd_flags::known_flags();
        assert!(known.len() > 100, "{} flags", known.len());
        for flag in &known {
            let variable = format!("ETCD_{}", flag.to_uppercase().replace('-', "_"));
            for (args, env) in [
                (os(&["hark", &format!("--{flag}=")]), vec![]),
                (os(&["hark", &format!("-{flag}=")]), vec![]),
                (os(&["hark", &format!("--{flag}"), ""]), vec![]),
                (os(&["hark"]), vars(&[(&variable, "")])),
            ] {
                let (config, notices) = read(args.clone(), env.clone())
                    .unwrap_or_else(|e| panic!("{args:?} {env:?}: {e:?}"));
                assert_eq!(format!("{config:?}"), default, "{args:?} {env:?}");
                assert!(notices.set_aside.is_empty(), "{args:?}: nothing was set");
            }
        }
        // An empty value says nothing, so it conflicts with nothing; a real
        // one still wins, and a following flag is not taken for a value.
        let (config, _) = read(
            os(&[
                "hark",
                "--wal-dir=",
                "--name",
                "",
                "--snapshot-count=5",
                "--cert-file=",
                "--initial-cluster-token=ends-with=",
            ]),
            vars(&[("ETCD_NAME", "from-env"), ("ETCD_WAL_DIR", "")]),
        )
        .unwrap();
        assert_eq!(config.name, "from-env");
        assert_eq!(config.snapshot_count, 5);
        assert_eq!(config.wal_dir, None);
        assert_eq!(config.initial_cluster_token, "ends-with=");
    }

    #[test]
    fn a_bad_file_or_bad_value_in_it_is_an_error() {
        let (_dir, path) = file("snapshot-count: many\n");
        match read(os(&["hark", &format!("--config-file={path}")]), vec![]) {
            Err(Error::Clap(e)) => assert!(e.to_string().contains("many"), "{e}"),
            other => panic!("{other:?}"),
        }
        let (_dir, path) = file("discovery: https://discovery.etcd.io/x\n");
        match read(os(&["hark", &format!("--config-file={path}")]), vec![]) {
            Err(Error::Other(e)) => assert!(e.contains("is not supported"), "{e}"),
            other => panic!("{other:?}"),
        }
        match read(os(&["hark", "--config-file=/nonexistent/etcd.yml"]), vec![]) {
            Err(Error::Other(e)) => assert!(e.contains("/nonexistent/etcd.yml"), "{e}"),
            other => panic!("{other:?}"),
        }
    }
}
