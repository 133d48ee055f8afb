//! Sizes as etcd and its tools print them.

/// go-humanize's `Bytes`, which etcd and its tools print sizes with: SI units, one
/// decimal below 10 (`20 kB`, `1.6 GB`).
pub fn si_bytes(n: u64) -> String {
    const UNITS: [&str; 7] = ["B", "kB", "MB", "GB", "TB", "PB", "EB"];
    if n < 10 {
        return format!("{n} B");
    }
    let exp = ((n as f64).ln() / 1000f64.ln()).floor() as usize;
    let exp = exp.min(UNITS.len() - 1);
    let value = ((n as f64 / 1000f64.powi(exp as i32)) * 10.0 + 0.5).floor() / 10.0;
    if value < 10.0 {
        format!("{value:.1} {}", UNITS[exp])
    } else {
        format!("{value:.0} {}", UNITS[exp])
    }
}

#[cfg(test)]
mod tests {
    use super::si_bytes;

    #[test]
    fn sizes_read_as_go_humanize_writes_them() {
        let cases = [
            (0, "0 B"),
            (9, "9 B"),
            (10, "10 B"),
            (999, "999 B"),
            (1000, "1.0 kB"),
            (20_480, "20 kB"),
            (1_550_000, "1.6 MB"),
            (1_600_000_000, "1.6 GB"),
            (12_345_678_901, "12 GB"),
        ];
        for (n, want) in cases {
            assert_eq!(si_bytes(n), want, "{n}");
        }
    }
}
