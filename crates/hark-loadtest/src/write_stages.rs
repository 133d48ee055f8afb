//! Where a put waits, read off Hark's `/metrics` around a put run: the
//! `hark_raft_write_stage_seconds` histograms (`hark-raft`'s `stages.rs`
//! names the stages) of every member, before and after, as the mean time
//! per occurrence on the leader and the followers' mean synced append.
//! etcd has no such series: nothing is reported for it.

use std::collections::BTreeMap;

use crate::harness::{Metric, metric};
use crate::http_load::{gauge, get_text};

const SERIES: &str = "hark_raft_write_stage_seconds";

/// Stage → (sum of seconds, count).
type Stages = BTreeMap<String, (f64, u64)>;

/// One member's stage histograms.
#[derive(Default, Clone, Debug, PartialEq)]
pub(crate) struct MemberStages {
    leader: bool,
    stages: Stages,
}

/// Every member's stages now (a member that does not answer is left out).
pub(crate) async fn read(endpoints: &[String]) -> Vec<MemberStages> {
    let mut out = Vec::new();
    for endpoint in endpoints {
        if let Ok(body) = get_text(endpoint, "/metrics").await {
            out.push(parse(&body));
        }
    }
    out
}

fn parse(body: &str) -> MemberStages {
    let mut m = MemberStages {
        leader: gauge(body, "etcd_server_is_leader") == Some(1.0),
        ..Default::default()
    };
    for line in body.lines() {
        let Some(rest) = line.strip_prefix(SERIES) else {
            continue;
        };
        let (is_sum, rest) = match (rest.strip_prefix("_sum{"), rest.strip_prefix("_count{")) {
            (Some(r), _) => (true, r),
            (_, Some(r)) => (false, r),
            _ => continue,
        };
        let Some((labels, value)) = rest.split_once("} ") else {
            continue;
        };
        let Some(stage) = labels
            .split(',')
            .find_map(|l| l.strip_prefix("stage=\""))
            .and_then(|s| s.strip_suffix('"'))
        else {
            continue;
        };
        let Ok(value) = value.trim().parse::<f64>() else {
            continue;
        };
        let entry = m.stages.entry(stage.to_string()).or_default();
        if is_sum {
            entry.0 = value;
        } else {
            entry.1 = value as u64;
        }
    }
    m
}

/// The breakdown of what happened between `before` and `after` (the same
/// members in the same order): the leader's mean per stage, its writes per
/// log entry, and the followers' mean synced append.
pub(crate) fn breakdown(before: &[MemberStages], after: &[MemberStages]) -> Vec<Metric> {
    // etcd (no such series), or members that did not all answer.
    if before.len() != after.len() || after.iter().all(|m| m.stages.is_empty()) {
        return Vec::new();
    }
    let deltas: Vec<(bool, Stages)> = before
        .iter()
        .zip(after)
        .map(|(b, a)| {
            let stages = a
                .stages
                .iter()
                .map(|(stage, &(sum, count))| {
                    let (s0, c0) = b.stages.get(stage).copied().unwrap_or_default();
                    (stage.clone(), (sum - s0, count.saturating_sub(c0)))
                })
                .collect();
            (a.leader, stages)
        })
        .collect();
    let mean_ms = |(sum, count): (f64, u64)| (count > 0).then(|| sum * 1000.0 / count as f64);
    let mut out = Vec::new();
    if let Some((_, leader)) = deltas.iter().find(|(leads, _)| *leads) {
        for stage in [
            "write",
            "queue",
            "batch",
            "log_write",
            "replicate",
            "durable_wait",
            "apply",
        ] {
            // Every row in every round (0: none happened), so the rounds'
            // medians line up row by row.
            let ms = leader.get(stage).copied().and_then(mean_ms);
            out.push(metric(
                &format!("leader {stage} mean"),
                ms.unwrap_or(0.0),
                "ms",
            ));
        }
        let count = |stage: &str| leader.get(stage).map_or(0, |&(_, c)| c);
        out.push(metric(
            "leader writes per log entry",
            match count("batch") {
                0 => 0.0,
                batches => count("queue") as f64 / batches as f64,
            },
            "x",
        ));
        // Writes whose client was connected to the leader (the others were
        // forwarded by a follower).
        out.push(metric(
            "writes proposed on the leader",
            count("write") as f64,
            "n",
        ));
    }
    let follower_appends = deltas
        .iter()
        .filter(|(leads, _)| !leads)
        .filter_map(|(_, s)| s.get("log_write").copied())
        .fold((0.0, 0), |(s, c), (sum, count)| (s + sum, c + count));
    if let Some(ms) = mean_ms(follower_appends) {
        out.push(metric("follower synced append mean", ms, "ms"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(leader: bool, queue: (f64, u64), log_write: (f64, u64)) -> String {
        format!(
            "# TYPE {SERIES} histogram\n\
             {SERIES}_bucket{{stage=\"queue\",le=\"0.001\"}} 3\n\
             {SERIES}_sum{{stage=\"queue\"}} {}\n\
             {SERIES}_count{{stage=\"queue\"}} {}\n\
             {SERIES}_sum{{stage=\"batch\"}} 0.5\n\
             {SERIES}_count{{stage=\"batch\"}} 2\n\
             {SERIES}_sum{{stage=\"log_write\"}} {}\n\
             {SERIES}_count{{stage=\"log_write\"}} {}\n\
             etcd_server_is_leader {}\n",
            queue.0,
            queue.1,
            log_write.0,
            log_write.1,
            u8::from(leader)
        )
    }

    #[test]
    fn the_breakdown_is_the_mean_of_what_happened_between_the_two_reads() {
        let before = vec![
            parse(&body(true, (1.0, 10), (0.0, 0))),
            parse(&body(false, (0.0, 0), (0.010, 5))),
        ];
        let after = vec![
            parse(&body(true, (1.004, 14), (0.0, 0))),
            parse(&body(false, (0.0, 0), (0.016, 8))),
        ];
        let got: Vec<(String, f64)> = breakdown(&before, &after)
            .into_iter()
            .map(|m| (m.name, m.value))
            .collect();
        let near = |name: &str, want: f64| {
            let (_, v) = got
                .iter()
                .find(|(n, _)| n == name)
                .unwrap_or_else(|| panic!("{name} missing from {got:?}"));
            assert!((v - want).abs() < 1e-9, "{name}: {v} != {want}");
        };
        near("leader queue mean", 1.0);
        near("follower synced append mean", 2.0);
        // No batch between the reads: the row is there, at zero, so rounds
        // line up.
        near("leader batch mean", 0.0);
        near("leader writes per log entry", 0.0);
        near("writes proposed on the leader", 0.0);
    }

    #[test]
    fn etcds_metrics_give_no_rows() {
        let etcd = parse("etcd_server_is_leader 1\netcd_disk_wal_fsync_duration_seconds_sum 1\n");
        let same = std::slice::from_ref(&etcd);
        assert!(breakdown(same, same).is_empty());
    }
}
