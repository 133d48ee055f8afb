//! Go's `time.ParseDuration`: the duration syntax etcd's flags, etcdctl's
//! timeouts and Consul's `?wait` are written in (`500ms`, `1m30s`, `1.5h`).
//! One implementation for the server, the HTTP APIs and harkctl.

use std::time::Duration;

/// Parses `text` as Go does: `0`, or a sequence of decimal numbers each
/// with a unit (`ns`, `us`/`µs`, `ms`, `s`, `m`, `h`), with an optional `+`.
/// Negative durations and ones beyond `Duration`'s range are refused (Go
/// refuses past ~292 years too). The error is Go's text.
pub fn parse(text: &str) -> Result<Duration, String> {
    let bad = || format!("time: invalid duration {text:?}");
    let mut rest = text.strip_prefix('+').unwrap_or(text);
    if rest == "0" {
        return Ok(Duration::ZERO);
    }
    if rest.is_empty() {
        return Err(bad());
    }
    let mut seconds = 0f64;
    while !rest.is_empty() {
        let number_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(|| format!("time: missing unit in duration {text:?}"))?;
        if number_end == 0 {
            return Err(bad());
        }
        let number: f64 = rest[..number_end].parse().map_err(|_| bad())?;
        rest = &rest[number_end..];
        let unit_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_end] {
            "ns" => 1e-9,
            "us" | "µs" | "μs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            unit => return Err(format!("time: unknown unit {unit:?} in duration {text:?}")),
        };
        seconds += number * scale;
        rest = &rest[unit_end..];
    }
    // Go's Duration is an int64 of nanoseconds.
    if seconds > i64::MAX as f64 / 1e9 {
        return Err(bad());
    }
    Duration::try_from_secs_f64(seconds).map_err(|_| bad())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gos_forms() {
        let ok = |t: &str| parse(t).unwrap();
        assert_eq!(ok("0"), Duration::ZERO);
        assert_eq!(ok("10m"), Duration::from_secs(600));
        assert_eq!(ok("1h30m"), Duration::from_secs(5400));
        assert_eq!(ok("1m30s"), Duration::from_secs(90));
        assert_eq!(ok("500ms"), Duration::from_millis(500));
        assert_eq!(ok("1.5s"), Duration::from_millis(1500));
        assert_eq!(ok("1.5h"), Duration::from_secs(5400));
        assert_eq!(ok("+2s"), Duration::from_secs(2));
        assert_eq!(ok("3µs"), Duration::from_micros(3));
        assert_eq!(ok("3us"), Duration::from_micros(3));
        assert_eq!(ok("7ns"), Duration::from_nanos(7));
    }

    #[test]
    fn what_go_refuses() {
        for bad in ["", "10", "5d", "5x", "-1s", "s", ".s", "1..5s", "1h-2m"] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            parse("10").unwrap_err(),
            r#"time: missing unit in duration "10""#
        );
        assert_eq!(parse("x").unwrap_err(), r#"time: invalid duration "x""#);
        // Past Go's range (an int64 of nanoseconds, ~292 years): refused,
        // never a panic.
        assert!(parse("2562047h").is_ok());
        assert!(parse("2562048h").is_err());
        assert!(parse(&format!("{}h", "9".repeat(400))).is_err());
    }
}
