//! etcd's YAML configuration file (`--config-file`, `etcd.conf.yml.sample`),
//! read as the command line it stands for: each key is a flag's name, so a
//! file goes through the same flag handling as `--flag=value` would.
//!
//! As etcd reads it: keys are flag names; URL lists are comma-separated
//! strings; durations are integers of nanoseconds (Go's `time.Duration`
//! through JSON), though Hark also takes `5s`; a null or empty value leaves
//! the default. The TLS settings sit in `client-transport-security` and
//! `peer-transport-security` blocks whose keys drop the `peer-` prefix.
//! etcd ignores keys it does not know; Hark returns them to be warned about.

use std::ffi::OsString;
use std::io::Read;
use std::path::Path;

use yaml_rust2::parser::{Event, Parser};
use yaml_rust2::{Yaml, YamlLoader};

/// Larger than any real configuration by far; a bigger file is refused
/// before it is parsed.
pub const MAX_FILE_BYTES: u64 = 1 << 20;

/// Deeper than etcd's schema (three levels, in `discovery-config`) needs.
const MAX_DEPTH: usize = 8;

/// The flags etcd declares as Go `time.Duration`, which its YAML takes as
/// integers of nanoseconds.
const DURATIONS: &[&str] = &[
    "backend-batch-interval",
    "grpc-keepalive-min-time",
    "grpc-keepalive-interval",
    "grpc-keepalive-timeout",
    "experimental-corrupt-check-time",
    "corrupt-check-time",
    "experimental-compact-hash-check-time",
    "compact-hash-check-time",
    "experimental-compaction-sleep-interval",
    "compaction-sleep-interval",
    "experimental-watch-progress-notify-interval",
    "watch-progress-notify-interval",
    "experimental-warning-apply-duration",
    "warning-apply-duration",
    "experimental-warning-unary-request-duration",
    "warning-unary-request-duration",
    "experimental-downgrade-check-time",
    "downgrade-check-time",
    "discovery-dial-timeout",
    "discovery-request-timeout",
    "discovery-keepalive-time",
    "discovery-keepalive-timeout",
];

/// What a configuration file says.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct FromFile {
    /// `--flag=value` for each key with a value, in the file's order.
    pub args: Vec<OsString>,
    /// Keys that name no flag (dotted inside a block), to be warned about.
    pub unknown_keys: Vec<String>,
}

/// Reads and parses the file at `path`; `known` are the flag names `hark`
/// takes.
pub fn read(path: &Path, known: &[String]) -> Result<FromFile, String> {
    let failed = |e: std::io::Error| format!("--config-file {}: {e}", path.display());
    let mut text = String::new();
    std::fs::File::open(path)
        .map_err(failed)?
        .take(MAX_FILE_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(failed)?;
    if text.len() as u64 > MAX_FILE_BYTES {
        return Err(format!(
            "--config-file {}: larger than {MAX_FILE_BYTES} bytes",
            path.display()
        ));
    }
    parse(&text, known).map_err(|e| format!("--config-file {}: {e}", path.display()))
}

/// Parses a configuration file's text.
pub fn parse(text: &str, known: &[String]) -> Result<FromFile, String> {
    refuse_aliases_and_depth(text)?;
    let docs = YamlLoader::load_from_str(text).map_err(|e| e.to_string())?;
    let mut out = FromFile::default();
    match docs.as_slice() {
        [] | [Yaml::Null] => return Ok(out),
        [Yaml::Hash(top)] => {
            for (key, value) in top {
                let key = key_text(key)?;
                out.add(&[key], value, known)?;
            }
        }
        [_] => return Err("the top level is not a mapping of keys to values".into()),
        _ => return Err("more than one YAML document".into()),
    }
    Ok(out)
}

/// YAML aliases would be expanded by copying (a few hundred bytes can stand
/// for gigabytes), and etcd's schema has no use for them or for deep nesting.
fn refuse_aliases_and_depth(text: &str) -> Result<(), String> {
    let mut parser = Parser::new_from_str(text);
    let mut depth = 0usize;
    loop {
        let (event, mark) = parser.next_token().map_err(|e| e.to_string())?;
        match event {
            Event::StreamEnd => return Ok(()),
            Event::Alias(_) => {
                return Err(format!(
                    "line {}: YAML aliases are not supported",
                    mark.line()
                ));
            }
            Event::MappingStart(..) | Event::SequenceStart(..) => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Err(format!(
                        "line {}: nested deeper than {MAX_DEPTH} levels",
                        mark.line()
                    ));
                }
            }
            Event::MappingEnd | Event::SequenceEnd => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
}

fn key_text(key: &Yaml) -> Result<&str, String> {
    key.as_str()
        .ok_or_else(|| format!("key {key:?} is not a string"))
}

/// The flag a key stands for; `path` is the key with the blocks it sits in.
fn flag_for(path: &[&str]) -> String {
    match path {
        [key] => key.to_string(),
        ["client-transport-security", key] => match *key {
            "allowed-cn" => "client-cert-allowed-cn".into(),
            "allowed-hostname" => "client-cert-allowed-hostname".into(),
            other => other.to_string(),
        },
        ["peer-transport-security", key] => match *key {
            "allowed-cn" => "peer-cert-allowed-cn".into(),
            "allowed-hostname" => "peer-cert-allowed-hostname".into(),
            "skip-client-san-verification" => {
                "experimental-peer-skip-client-san-verification".into()
            }
            other => format!("peer-{other}"),
        },
        ["socket-options", key] => format!("socket-{key}"),
        // etcd 3.6's v3 discovery client: `discovery-config.client.endpoints`
        // is `--discovery-endpoints`, and so on.
        ["discovery-config", .., key] => format!("discovery-{key}"),
        _ => path.join("."),
    }
}

/// Whether a mapping under these keys is a block of settings.
fn is_block(path: &[&str]) -> bool {
    matches!(
        path,
        ["client-transport-security"]
            | ["peer-transport-security"]
            | ["socket-options"]
            | ["discovery-config", ..]
    )
}

impl FromFile {
    fn add(&mut self, path: &[&str], value: &Yaml, known: &[String]) -> Result<(), String> {
        let dotted = path.join(".");
        if let Yaml::Hash(block) = value {
            if !is_block(path) {
                return Err(format!("{dotted}: a mapping where a value was expected"));
            }
            for (key, value) in block {
                let mut inner = path.to_vec();
                inner.push(key_text(key)?);
                self.add(&inner, value, known)?;
            }
            return Ok(());
        }
        if is_block(path) && !matches!(value, Yaml::Null) {
            return Err(format!("{dotted}: a value where a mapping was expected"));
        }
        if matches!(value, Yaml::Null) {
            return Ok(());
        }
        let flag = flag_for(path);
        if !known.contains(&flag) {
            // A security setting Hark would not act on is refused: warned
            // about and ignored, it would leave the member open where the
            // file asked for it closed (an `allowed-cn` misspelled, say).
            if matches!(
                path,
                ["client-transport-security" | "peer-transport-security", _]
            ) {
                return Err(format!(
                    "{dotted}: not a setting Hark knows; security settings are not ignored"
                ));
            }
            self.unknown_keys.push(dotted);
            return Ok(());
        }
        let text = match value {
            Yaml::Array(items) => items
                .iter()
                .map(|item| {
                    scalar(&flag, item).ok_or_else(|| format!("{dotted}: {item:?} in a list"))
                })
                .collect::<Result<Vec<_>, _>>()?
                .join(","),
            other => scalar(&flag, other).ok_or_else(|| format!("{dotted}: {other:?}"))?,
        };
        if !text.is_empty() {
            self.args.push(format!("--{flag}={text}").into());
        }
        Ok(())
    }
}

/// A scalar as a flag's value; null is empty (the default).
fn scalar(flag: &str, value: &Yaml) -> Option<String> {
    Some(match value {
        Yaml::Null => String::new(),
        Yaml::Boolean(b) => b.to_string(),
        Yaml::Integer(n) if DURATIONS.contains(&flag) => format!("{n}ns"),
        Yaml::Integer(n) => n.to_string(),
        Yaml::Real(r) => r.clone(),
        // YAML 1.1's booleans, which Go's YAML reads as true and false.
        Yaml::String(s) => match s.as_str() {
            "yes" | "Yes" | "YES" | "on" | "On" | "ON" => "true".into(),
            "no" | "No" | "NO" | "off" | "Off" | "OFF" => "false".into(),
            _ => s.clone(),
        },
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known() -> Vec<String> {
        super::super::etcd_flags::known_flags()
    }

    fn args(f: &FromFile) -> Vec<String> {
        f.args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn keys_are_flags_and_blocks_are_flattened_as_etcd_reads_them() {
        let text = "\
name: 'infra0'
data-dir:
snapshot-count: 10000
listen-client-urls: http://10.0.1.10:2379,http://127.0.0.1:2379
strict-reconfig-check: false
log-outputs: [stderr]
cipher-suites: [TLS_AES_128_GCM_SHA256, TLS_AES_256_GCM_SHA384]
grpc-keepalive-timeout: 20000000000
experimental-watch-progress-notify-interval: 5s
client-transport-security:
  cert-file: /etc/etcd/server.crt
  client-cert-auth: yes
  allowed-cn:
peer-transport-security:
  trusted-ca-file: /etc/etcd/ca.crt
  auto-tls: false
  allowed-cn: peer0
socket-options:
  reuse-address: true
no-such-key: 1
client-transport-security-typo: x
";
        let f = parse(text, &known()).unwrap();
        assert_eq!(
            args(&f),
            [
                "--name=infra0",
                "--snapshot-count=10000",
                "--listen-client-urls=http://10.0.1.10:2379,http://127.0.0.1:2379",
                "--strict-reconfig-check=false",
                "--log-outputs=stderr",
                "--cipher-suites=TLS_AES_128_GCM_SHA256,TLS_AES_256_GCM_SHA384",
                "--grpc-keepalive-timeout=20000000000ns",
                "--experimental-watch-progress-notify-interval=5s",
                "--cert-file=/etc/etcd/server.crt",
                "--client-cert-auth=true",
                "--peer-trusted-ca-file=/etc/etcd/ca.crt",
                "--peer-auto-tls=false",
                "--peer-cert-allowed-cn=peer0",
                "--socket-reuse-address=true",
            ]
        );
        assert_eq!(
            f.unknown_keys,
            ["no-such-key", "client-transport-security-typo"]
        );
    }

    #[test]
    fn an_empty_file_says_nothing() {
        for text in ["", "# only a comment\n", "---\n"] {
            assert_eq!(
                parse(text, &known()).unwrap(),
                FromFile::default(),
                "{text:?}"
            );
        }
    }

    #[test]
    fn hostile_or_malformed_files_are_refused_before_expansion() {
        let laughs = "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a]\nc: [*b, *b, *b, *b, *b, *b, *b, *b]\n";
        let deep = format!("name: {}x{}\n", "[".repeat(20), "]".repeat(20));
        for (text, want) in [
            (laughs, "aliases are not supported"),
            (deep.as_str(), "nested deeper"),
            ("- a\n- b\n", "not a mapping"),
            ("name: a\n---\nname: b\n", "more than one YAML document"),
            ("name: [a\n", "line"),
            (
                "name: {first: a}\n",
                "name: a mapping where a value was expected",
            ),
            (
                "peer-transport-security: yes\n",
                "a value where a mapping was expected",
            ),
            ("log-outputs: [[stderr]]\n", "in a list"),
            (
                "client-transport-security:\n  alowed-cn: admin\n",
                "client-transport-security.alowed-cn: not a setting Hark knows",
            ),
            (
                "peer-transport-security:\n  client-cert-auth-typo: true\n",
                "peer-transport-security.client-cert-auth-typo: not a setting",
            ),
        ] {
            let err = parse(text, &known()).unwrap_err();
            assert!(err.contains(want), "{text:?}: {err}");
        }
    }

    #[test]
    fn a_file_too_large_is_refused_before_it_is_parsed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("etcd.conf.yml");
        std::fs::write(&path, "#".repeat(MAX_FILE_BYTES as usize + 1)).unwrap();
        let err = read(&path, &known()).unwrap_err();
        assert!(err.contains("larger than"), "{err}");
        let err = read(&dir.path().join("missing.yml"), &known()).unwrap_err();
        assert!(err.contains("missing.yml"), "{err}");
    }
}
