//! The member's log, as etcd writes its own: zap's JSON by default
//! (`{"level":"info","ts":"…","caller":"…","msg":"…",<fields>}`, one object
//! a line, what log pipelines built for etcd parse) or zap's console form
//! (`ts<TAB>level<TAB>caller<TAB>msg<TAB>{fields}`), to the outputs
//! `--log-outputs` names.

use std::fmt::Write as _;

use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::writer::{BoxMakeWriter, MakeWriterExt};
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

use crate::config::{Config, LogFormat};

/// Sets the process's logger from `--log-level`, `--log-format` and
/// `--log-outputs` (`RUST_LOG`, when set, overrides the level: to see h2's
/// own logs, say).
pub fn init(config: &Config) -> Result<(), String> {
    let level = config.log_filter()?;
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new(format!("{level},h2=warn,hyper=warn,tower=warn")));
    let writer = outputs(&config.log_outputs)?;
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer)
        .with_ansi(false)
        .event_format(ZapFormat {
            console: config.log_format == LogFormat::Console,
        })
        .init();
    Ok(())
}

/// etcd's `--log-outputs`: `default` and `stderr` are standard error,
/// `stdout` standard output, anything else a file appended to (created if
/// missing; `/dev/null` discards); several, comma-separated, all get every
/// line.
fn outputs(names: &[String]) -> Result<BoxMakeWriter, String> {
    let mut writer: Option<BoxMakeWriter> = None;
    for name in names {
        let next = match name.as_str() {
            "default" | "stderr" => BoxMakeWriter::new(std::io::stderr),
            "stdout" => BoxMakeWriter::new(std::io::stdout),
            path => {
                let file = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .map_err(|e| format!("--log-outputs: cannot open {path}: {e}"))?;
                BoxMakeWriter::new(std::sync::Mutex::new(file))
            }
        };
        writer = Some(match writer {
            None => next,
            Some(before) => BoxMakeWriter::new(before.and(next)),
        });
    }
    writer.ok_or_else(|| "--log-outputs names no output".to_string())
}

/// zap's encoders, with etcd's settings: lower-case levels, timestamps as
/// `2006-01-02T15:04:05.000000Z`, the caller as `crate/file.rs:line`.
struct ZapFormat {
    console: bool,
}

impl<S, N> FormatEvent<S, N> for ZapFormat
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        _ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> std::fmt::Result {
        let meta = event.metadata();
        let mut fields = Fields::default();
        event.record(&mut fields);
        let ts = chrono::Utc::now().format("%Y-%m-%dT%H:%M:%S%.6fZ");
        let level = meta.level().as_str().to_ascii_lowercase();
        let caller = caller(meta.module_path(), meta.file(), meta.line());
        let mut line = String::with_capacity(160);
        if self.console {
            // One entry a line, whatever the message holds.
            let message = fields.message.replace('\n', "\\n");
            write!(line, "{ts}\t{level}\t{caller}\t{message}")?;
            if !fields.rest.is_empty() {
                line.push_str("\t{");
                for (i, (name, value)) in fields.rest.iter().enumerate() {
                    let comma = if i > 0 { ", " } else { "" };
                    write!(line, "{comma}{}: {value}", json_string(name))?;
                }
                line.push('}');
            }
        } else {
            write!(
                line,
                "{{\"level\":\"{level}\",\"ts\":\"{ts}\",\"caller\":{},\"msg\":{}",
                json_string(&caller),
                json_string(&fields.message)
            )?;
            for (name, value) in &fields.rest {
                write!(line, ",{}:{value}", json_string(name))?;
            }
            line.push('}');
        }
        writeln!(writer, "{line}")
    }
}

/// zap's short caller, `package/file.go:line`, in Rust's terms: the crate
/// and the file's path inside its `src/`.
fn caller(module: Option<&str>, file: Option<&str>, line: Option<u32>) -> String {
    let krate = module.and_then(|m| m.split("::").next()).unwrap_or("?");
    let file = file.unwrap_or("?");
    let inside = file
        .rsplit_once("/src/")
        .map_or_else(|| file.rsplit('/').next().unwrap_or(file), |(_, f)| f);
    format!("{krate}/{inside}:{}", line.unwrap_or(0))
}

fn json_string(s: &str) -> String {
    serde_json::to_string(s).expect("a string always encodes")
}

/// An event's message and its other fields, each already JSON.
#[derive(Default)]
struct Fields {
    message: String,
    rest: Vec<(&'static str, String)>,
}

impl Fields {
    fn add(&mut self, field: &Field, json: String) {
        // The `log` crate's bridge adds these; the caller says the same.
        if !field.name().starts_with("log.") {
            self.rest.push((field.name(), json));
        }
    }
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.message = value.to_string();
        } else {
            self.add(field, json_string(value));
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        let text = format!("{value:?}");
        if field.name() == "message" {
            self.message = text;
        } else {
            self.add(field, json_string(&text));
        }
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.add(field, value.to_string());
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.add(field, value.to_string());
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.add(field, value.to_string());
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        let json = serde_json::Number::from_f64(value)
            .map_or_else(|| json_string(&value.to_string()), |n| n.to_string());
        self.add(field, json);
    }

    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        self.add(field, json_string(&value.to_string()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_caller_is_the_crate_and_the_file_inside_its_src() {
        assert_eq!(
            caller(
                Some("hark_server::server"),
                Some("crates/hark-server/src/server.rs"),
                Some(120)
            ),
            "hark_server/server.rs:120"
        );
        assert_eq!(
            caller(
                Some("openraft::core::raft_core"),
                Some("/root/.cargo/registry/src/index/openraft-0.9.21/src/core/raft_core.rs"),
                Some(7)
            ),
            "openraft/core/raft_core.rs:7"
        );
        assert_eq!(caller(None, None, None), "?/?:0");
    }
}
