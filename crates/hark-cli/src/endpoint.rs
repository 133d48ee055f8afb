//! `endpoint status | health | hashkv` (`--cluster`: every member's client
//! URLs).

use std::time::Instant;

use clap::Subcommand;
use hark_client::Client;

use crate::ctx::Ctx;
use crate::exit::{EXIT_ERROR, Exit, Outcome};

#[derive(Subcommand)]
pub(crate) enum EndpointCommand {
    /// Checks the healthiness of endpoints specified in `--endpoints` flag
    Health {
        /// use all endpoints from the cluster member list
        #[arg(long)]
        cluster: bool,
    },
    /// Prints out the status of endpoints specified in `--endpoints` flag
    Status {
        /// use all endpoints from the cluster member list
        #[arg(long)]
        cluster: bool,
    },
    /// Prints the KV history hash for each endpoint in --endpoints
    Hashkv {
        /// use all endpoints from the cluster member list
        #[arg(long)]
        cluster: bool,
        /// maximum revision to hash (default: latest revision)
        #[arg(long, default_value_t = 0)]
        rev: i64,
    },
}

pub(crate) async fn endpoint_hashkv(ctx: &Ctx, rev: i64) -> Outcome {
    let mut hashes = Vec::new();
    // As etcdctl: each failure on stderr as it happens, the hashes taken,
    // then the last failure as the command's error.
    let mut last_error = None;
    for ep in &ctx.endpoints {
        let result = match ctx.connect(&[ep]).await {
            Ok(c) => ctx.timed(c.hash_kv(rev)).await,
            Err(e) => Err(e),
        };
        match result {
            Ok(h) => hashes.push((ep.clone(), h)),
            Err(e) => {
                let message = e.message.unwrap_or_default();
                eprintln!("Failed to get the hash of endpoint {ep} ({message})");
                last_error = Some(message);
            }
        }
    }
    ctx.format.endpoint_hashkv(&hashes)?;
    match last_error {
        Some(message) => Err(Exit::new(EXIT_ERROR, message)),
        None => Ok(()),
    }
}

pub(crate) async fn endpoint_status(ctx: &Ctx) -> Outcome {
    let mut statuses = Vec::new();
    let mut failed = false;
    for ep in &ctx.endpoints {
        let result = match ctx.connect(&[ep]).await {
            Ok(c) => ctx.timed(c.status()).await,
            Err(e) => Err(e),
        };
        match result {
            Ok(s) => statuses.push((ep.clone(), s)),
            Err(e) => {
                failed = true;
                eprintln!(
                    "Failed to get the status of endpoint {ep} ({})",
                    e.message.unwrap_or_default()
                );
            }
        }
    }
    ctx.format.endpoint_status(&statuses)?;
    if failed {
        return Err(Exit::silent(EXIT_ERROR));
    }
    Ok(())
}

pub(crate) async fn endpoint_health(ctx: &Ctx) -> Outcome {
    let mut results = Vec::new();
    for ep in &ctx.endpoints {
        let start = Instant::now();
        let probe = async {
            let c = Client::connect_with([ep], ctx.options.clone()).await?;
            match c.get("health").await {
                Ok(_) => {}
                Err(hark_client::Error::Status(s))
                    if s.message() == "etcdserver: permission denied" => {}
                Err(e) => return Err(e),
            }
            let took = start.elapsed();
            let alarms = c.status().await.map(|_| ());
            Ok::<_, hark_client::Error>((took, alarms))
        };
        let outcome = tokio::time::timeout(ctx.command_timeout, probe).await;
        let took = start.elapsed();
        let result = match outcome {
            Ok(Ok((took, Ok(())))) => crate::print::Health {
                endpoint: ep.clone(),
                healthy: true,
                took,
                error: String::new(),
            },
            Ok(Ok((took, Err(_)))) => crate::print::Health {
                endpoint: ep.clone(),
                healthy: false,
                took,
                error: "Unable to fetch the alarm list".into(),
            },
            Ok(Err(e)) => crate::print::Health {
                endpoint: ep.clone(),
                healthy: false,
                took,
                error: e.to_string(),
            },
            Err(_) => crate::print::Health {
                endpoint: ep.clone(),
                healthy: false,
                took,
                error: "context deadline exceeded".into(),
            },
        };
        results.push(result);
    }
    ctx.format.endpoint_health(&results)?;
    if results.iter().any(|h| !h.healthy) {
        return Err(Exit::new(EXIT_ERROR, "unhealthy cluster"));
    }
    Ok(())
}
