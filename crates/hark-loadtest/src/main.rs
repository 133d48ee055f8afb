//! `hark-loadtest`: load scenarios against any etcd v3 endpoint, or Hark and a
//! real etcd side by side (`--compare-etcd PATH`). Run it as
//! `cargo xtask loadtest <scenario> ...`, which builds it and Hark in release
//! mode first. Every watch scenario checks that each watcher got each event
//! exactly once and in order, and reports lost and duplicated events.

mod attack;
mod harness;
mod http_load;
mod large_range;
mod lean_watch;
mod maintenance;
mod scale;
mod scale_plot;
mod scenarios;
mod secure;
mod servers;
mod stream_watchers;
mod write_stages;

use std::collections::BTreeMap;
use std::process::ExitCode;

use harness::{Combine, Metric, Options};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `hark-loadtest attack ...` is `cargo xtask attack`'s battery.
    if args.first().map(String::as_str) == Some("attack") {
        return attack::main(&args[1..]);
    }
    // `hark-loadtest scale ...`: one member filled to millions of keys.
    if args.first().map(String::as_str) == Some("scale") {
        return scale::main(&args[1..]);
    }
    let opts = match Options::parse(&args) {
        Ok(o) => o,
        Err(e) => e.exit(),
    };
    if opts.scenario != "all" && !scenarios::ALL.contains(&opts.scenario.as_str()) {
        eprintln!(
            "loadtest: unknown scenario {:?}; one of: {}, all",
            opts.scenario,
            scenarios::ALL.join(", ")
        );
        return ExitCode::from(2);
    }
    let runtime = tokio::runtime::Runtime::new().expect("start the tokio runtime");
    match runtime.block_on(run(opts)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("loadtest: {e}");
            ExitCode::FAILURE
        }
    }
}

type Results = BTreeMap<String, Vec<(String, Vec<Metric>)>>;

async fn run(opts: Options) -> Result<(), String> {
    let scenarios: Vec<&str> = if opts.scenario == "all" {
        scenarios::ALL.to_vec()
    } else {
        vec![opts.scenario.as_str()]
    };
    let mut results: Results = BTreeMap::new();
    for scenario in scenarios {
        // Each target's rounds, in the order the targets were first run.
        let mut rounds: Vec<(String, Vec<Vec<Metric>>)> = Vec::new();
        let mut record = |name: &str, metrics: Vec<Metric>| {
            eprintln!("   {}", one_line(&metrics));
            match rounds.iter_mut().find(|(n, _)| n == name) {
                Some((_, runs)) => runs.push(metrics),
                None => rounds.push((name.to_string(), vec![metrics])),
            }
        };
        for round in 1..=opts.rounds {
            let of = format!("round {round}/{}", opts.rounds);
            if opts.compare_etcd.is_some() || opts.hark_alone {
                // Interleaved: Hark, then etcd, each on a fresh server.
                let mut targets = vec![("hark", servers::Kind::Hark)];
                if opts.compare_etcd.is_some() {
                    targets.push(("etcd", servers::Kind::Etcd));
                }
                for (name, kind) in targets {
                    let binary = match kind {
                        servers::Kind::Hark => opts.hark_binary()?,
                        servers::Kind::Etcd => opts.compare_etcd.clone().unwrap_or_default(),
                    };
                    eprintln!("== {scenario} on {name}, {of}");
                    let secure = servers::Secure {
                        tls: opts.tls,
                        user: opts.user,
                    };
                    let extra: &[&str] = match (kind, scenario) {
                        (servers::Kind::Hark, "auto-defrag") => &maintenance::AUTO_DEFRAG_FLAGS,
                        _ => &[],
                    };
                    let server =
                        servers::Server::start(kind, &binary, opts.cluster, secure, extra).await?;
                    harness::set_members(&server.pids);
                    let metrics =
                        scenarios::run(scenario, &opts, &server.endpoints, Some(server.pid)).await;
                    server.stop();
                    record(name, metrics?);
                }
            } else {
                let endpoints = opts
                    .endpoints
                    .clone()
                    .ok_or("give --endpoints or --compare-etcd")?;
                eprintln!("== {scenario}, {of}");
                record(
                    "target",
                    scenarios::run(scenario, &opts, &endpoints, opts.pid).await?,
                );
            }
        }
        results.insert(
            scenario.to_string(),
            rounds
                .into_iter()
                .map(|(name, runs)| (name, combine(runs)))
                .collect(),
        );
    }
    report(&results, opts.json);
    match opts.max_after_ack_p99 {
        Some(bound) => guard(&results, bound),
        None => Ok(()),
    }
}

/// `--max-after-ack-p99`: Hark's (or the endpoint's) watch-latency figures
/// against the bound; every event must have come exactly once.
fn guard(results: &Results, bound: f64) -> Result<(), String> {
    let runs = results
        .get("watch-latency")
        .ok_or("--max-after-ack-p99 needs the watch-latency scenario")?;
    let (target, metrics) = runs
        .iter()
        .find(|(name, _)| name != "etcd")
        .ok_or("no Hark run to judge")?;
    let value = |name: &str| metrics.iter().find(|m| m.name == name).map(|m| m.value);
    let p99 = value(scenarios::AFTER_ACK_P99).ok_or("--max-after-ack-p99 needs --etcd-client")?;
    let lost = value("events lost").unwrap_or(0.0);
    let duplicated = value("events duplicated").unwrap_or(0.0);
    let mut misses = Vec::new();
    if p99 > bound {
        misses.push(format!("event after ack p99 {p99:.2} ms > {bound} ms"));
    }
    if lost > 0.0 || duplicated > 0.0 {
        misses.push(format!("{lost} events lost, {duplicated} duplicated"));
    }
    if misses.is_empty() {
        eprintln!(
            "guard: {target} event after ack p99 {p99:.2} ms <= {bound} ms, no event lost or duplicated"
        );
        Ok(())
    } else {
        Err(format!("guard: {target}: {}", misses.join("; ")))
    }
}

/// One figure per metric out of several rounds of the same scenario and target.
fn combine(runs: Vec<Vec<Metric>>) -> Vec<Metric> {
    let mut out = runs[0].clone();
    for (i, m) in out.iter_mut().enumerate() {
        let mut values: Vec<f64> = runs
            .iter()
            .filter_map(|r| r.get(i))
            .map(|m| m.value)
            .collect();
        values.sort_by(f64::total_cmp);
        m.value = match m.combine {
            Combine::Median => values[values.len() / 2],
            Combine::Sum => values.iter().sum(),
            Combine::Min => values[0],
        };
    }
    out
}

fn one_line(metrics: &[Metric]) -> String {
    metrics
        .iter()
        .map(|m| format!("{} {:.2}", m.name, m.value))
        .collect::<Vec<_>>()
        .join(", ")
}

fn report(results: &Results, json: bool) {
    if json {
        let doc: serde_json::Map<String, serde_json::Value> = results
            .iter()
            .map(|(scenario, runs)| {
                let runs: serde_json::Map<String, serde_json::Value> = runs
                    .iter()
                    .map(|(target, metrics)| {
                        let m: serde_json::Map<String, serde_json::Value> = metrics
                            .iter()
                            .map(|m| {
                                (
                                    m.name.clone(),
                                    serde_json::json!({"value": m.value, "unit": m.unit}),
                                )
                            })
                            .collect();
                        (target.clone(), m.into())
                    })
                    .collect();
                (scenario.clone(), runs.into())
            })
            .collect();
        println!("{}", serde_json::Value::Object(doc));
        return;
    }
    for (scenario, runs) in results {
        println!("\n{scenario}");
        let names: Vec<&str> = runs.iter().map(|(n, _)| n.as_str()).collect();
        if names.len() == 2 {
            println!(
                "  {:<34} {:>14} {:>14} {:>9}",
                "metric", names[0], names[1], "ratio"
            );
        }
        let first = &runs[0].1;
        for (i, m) in first.iter().enumerate() {
            let label = format!("{} ({})", m.name, m.unit);
            match runs.get(1).and_then(|(_, other)| other.get(i)) {
                Some(o) => {
                    let ratio = if o.value != 0.0 {
                        format!("{:.2}x", m.value / o.value)
                    } else {
                        "-".into()
                    };
                    println!(
                        "  {label:<34} {:>14.2} {:>14.2} {ratio:>9}",
                        m.value, o.value
                    );
                }
                None => println!("  {label:<34} {:>14.2}", m.value),
            }
        }
    }
}
