//! `lease grant | revoke | timetolive | list | keep-alive`.

use std::io::Write;
use std::time::Duration;

use clap::Subcommand;

use crate::ctx::Ctx;
use crate::exit::{EXIT_BAD_ARGS, EXIT_BAD_CONNECTION, EXIT_ERROR, Exit, Outcome, go_parse_error};
use crate::kv::parse_lease;

#[derive(Subcommand)]
pub(crate) enum LeaseCommand {
    /// Creates leases
    Grant { args: Vec<String> },
    /// Revokes leases
    Revoke { args: Vec<String> },
    /// Get lease information
    Timetolive {
        args: Vec<String>,
        /// Get keys attached to this lease
        #[arg(long)]
        keys: bool,
    },
    /// List all active leases
    List,
    /// Keeps leases alive (renew)
    KeepAlive {
        args: Vec<String>,
        /// Resets the keep-alive time to its original value and exits immediately
        #[arg(long)]
        once: bool,
    },
}

fn lease_id_arg(args: &[String], usage: &str) -> Result<i64, Exit> {
    let arg = args
        .first()
        .ok_or_else(|| Exit::new(EXIT_BAD_ARGS, usage))?;
    parse_lease(arg).map_err(|e| {
        Exit::new(
            EXIT_BAD_ARGS,
            format!(
                "bad lease ID arg ({}), expecting ID in Hex",
                go_parse_error("ParseInt", arg, &e)
            ),
        )
    })
}

pub(crate) async fn lease(ctx: &Ctx, cmd: LeaseCommand) -> Outcome {
    match cmd {
        LeaseCommand::Grant { args } => {
            let arg = args.first().ok_or_else(|| {
                Exit::new(EXIT_BAD_ARGS, "lease grant command needs TTL argument")
            })?;
            let ttl: i64 = arg.parse().map_err(|e: std::num::ParseIntError| {
                Exit::new(
                    EXIT_BAD_ARGS,
                    format!("bad TTL ({})", go_parse_error("ParseInt", arg, &e)),
                )
            })?;
            let c = ctx.client().await?;
            let resp = ctx.timed(c.lease_grant(ttl, 0)).await.map_err(|e| {
                Exit::new(
                    EXIT_ERROR,
                    format!("failed to grant lease ({})", e.message.unwrap_or_default()),
                )
            })?;
            ctx.format.lease_grant(&resp);
            Ok(())
        }
        LeaseCommand::Revoke { args } => {
            let id = lease_id_arg(&args, "lease revoke command needs 1 argument")?;
            let c = ctx.client().await?;
            let resp = ctx.timed(c.lease_revoke(id)).await.map_err(|e| {
                Exit::new(
                    EXIT_ERROR,
                    format!("failed to revoke lease ({})", e.message.unwrap_or_default()),
                )
            })?;
            ctx.format.lease_revoke(id, &resp);
            Ok(())
        }
        LeaseCommand::Timetolive { args, keys } => {
            let id = lease_id_arg(&args, "lease timetolive command needs lease ID as argument")?;
            let c = ctx.client().await?;
            let resp = c
                .lease_time_to_live(id, keys)
                .await
                .map_err(|e| Exit::new(EXIT_BAD_CONNECTION, e.to_string()))?;
            ctx.format.lease_time_to_live(&resp, keys);
            Ok(())
        }
        LeaseCommand::List => {
            let c = ctx.client().await?;
            let resp = c
                .leases()
                .await
                .map_err(|e| Exit::new(EXIT_BAD_CONNECTION, e.to_string()))?;
            ctx.format.lease_list(&resp);
            Ok(())
        }
        LeaseCommand::KeepAlive { args, once } => {
            let id = lease_id_arg(&args, "lease keep-alive command needs lease ID as argument")?;
            let c = ctx.client().await?;
            loop {
                let reply = c
                    .lease_keep_alive_once(id)
                    .await
                    .map_err(|e| Exit::new(EXIT_BAD_CONNECTION, e.to_string()))?;
                let (ttl, header) = (reply.ttl, reply.header);
                if ttl <= 0 {
                    if once {
                        return Err(Exit::new(
                            EXIT_BAD_CONNECTION,
                            "etcdserver: requested lease not found",
                        ));
                    }
                    ctx.format.lease_expired(id);
                    return Ok(());
                }
                ctx.format.lease_keep_alive(id, ttl, &header);
                let _ = std::io::stdout().flush();
                if once {
                    return Ok(());
                }
                tokio::time::sleep(Duration::from_millis((ttl as u64 * 1000 / 3).max(500))).await;
            }
        }
    }
}
