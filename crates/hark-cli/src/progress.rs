//! Progress of long commands (`snapshot save | restore`, `defrag`, `check
//! perf`): a bar on standard error when it is a terminal; otherwise the zap
//! JSON lines etcdctl and etcdutl write there (`{"level":"info","ts":…,
//! "caller":…,"msg":…,<fields>}`), so scripts and log pipelines that read
//! etcdctl's keep working.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use crate::json::{Obj, string};

/// One long command's progress report.
pub(crate) struct Progress {
    /// `None` when standard error is not a terminal: log lines instead.
    bar: Option<ProgressBar>,
    /// The source file logged as `caller` (etcd's is `file.go:line`).
    caller: &'static str,
}

impl Progress {
    /// A report for a command whose size is `total` bytes, when known.
    pub(crate) fn bytes(caller: &'static str, total: Option<u64>) -> Progress {
        Progress::with_bar(caller, || {
            match total {
            Some(total) => ProgressBar::new(total).with_style(
                ProgressStyle::with_template(
                    "{msg} [{elapsed_precise}] {wide_bar} {binary_bytes}/{binary_total_bytes} ({binary_bytes_per_sec}, {eta})",
                )
                .expect("a valid template"),
            ),
            None => ProgressBar::new_spinner().with_style(
                ProgressStyle::with_template("{spinner} {msg} [{elapsed_precise}] {binary_bytes}")
                    .expect("a valid template"),
            ),
        }
        })
    }

    /// A report for a command that runs `total` seconds.
    pub(crate) fn seconds(caller: &'static str, total: u64) -> Progress {
        Progress::with_bar(caller, || {
            ProgressBar::new(total).with_style(
                ProgressStyle::with_template("{msg} {wide_bar} {pos}/{len} s")
                    .expect("a valid template"),
            )
        })
    }

    /// A report for a command that counts no bytes: a spinner with the
    /// time taken and a message.
    pub(crate) fn spinner(caller: &'static str) -> Progress {
        Progress::with_bar(caller, || {
            ProgressBar::new_spinner().with_style(
                ProgressStyle::with_template("{spinner} {msg} [{elapsed_precise}]")
                    .expect("a valid template"),
            )
        })
    }

    fn with_bar(caller: &'static str, bar: impl FnOnce() -> ProgressBar) -> Progress {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = bar();
            bar.enable_steady_tick(Duration::from_millis(200));
            bar
        });
        Progress { bar, caller }
    }

    /// Whether a bar is shown (else log lines are written).
    pub(crate) fn on_terminal(&self) -> bool {
        self.bar.is_some()
    }

    pub(crate) fn set_message(&self, message: impl Into<String>) {
        if let Some(bar) = &self.bar {
            bar.set_message(message.into());
        }
    }

    pub(crate) fn set_length(&self, total: u64) {
        if let Some(bar) = &self.bar {
            bar.set_length(total);
        }
    }

    pub(crate) fn set_position(&self, done: u64) {
        if let Some(bar) = &self.bar {
            bar.set_position(done);
        }
    }

    /// Writes an info line with `fields` (values are strings, as etcd's
    /// are in these lines) when no bar is shown.
    pub(crate) fn log(&self, msg: &str, fields: &[(&str, String)]) {
        if self.bar.is_some() {
            return;
        }
        let mut line = Obj::new()
            .raw("level", "\"info\"")
            .raw(
                "ts",
                &string(
                    &chrono::Utc::now()
                        .format("%Y-%m-%dT%H:%M:%S%.6fZ")
                        .to_string(),
                ),
            )
            .raw("caller", &string(self.caller))
            .raw("msg", &string(msg));
        for (key, value) in fields {
            line = line.raw(key, &string(value));
        }
        let _ = writeln!(std::io::stderr(), "{}", line.end());
    }

    /// Clears the bar (what the command prints next stands alone).
    pub(crate) fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

pub(crate) use hark_snapshot::si_bytes;

/// go-humanize's `Time` of a moment in the past, as etcdctl logs `took`:
/// `now`, `1 second ago`, `16 seconds ago`, `1 minute ago`, `3 minutes ago`.
pub(crate) fn ago(since: Instant) -> String {
    let secs = since.elapsed().as_secs();
    match secs {
        0 => "now".to_string(),
        1 => "1 second ago".to_string(),
        2..=59 => format!("{secs} seconds ago"),
        60..=119 => "1 minute ago".to_string(),
        120..=3599 => format!("{} minutes ago", secs / 60),
        3600..=7199 => "1 hour ago".to_string(),
        _ => format!("{} hours ago", secs / 3600),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elapsed_times_read_as_go_humanize_writes_them() {
        let at = |secs| Instant::now() - Duration::from_secs(secs);
        assert_eq!(ago(Instant::now()), "now");
        assert_eq!(ago(at(1)), "1 second ago");
        assert_eq!(ago(at(16)), "16 seconds ago");
        assert_eq!(ago(at(61)), "1 minute ago");
        assert_eq!(ago(at(185)), "3 minutes ago");
        assert_eq!(ago(at(7300)), "2 hours ago");
    }
}
