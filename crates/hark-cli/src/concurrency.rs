//! `lock` and `elect`, as etcdctl's: a session lease kept alive while the
//! command runs, the lock or the leadership held until SIGINT or SIGTERM
//! (or, for `lock`, until a given command exits), then given up. The
//! waiting is done by the server's lock and election services.

use clap::Args;
use hark_client::Client;
use hark_proto::etcdserverpb as pb;
use tokio::signal::unix::{SignalKind, signal};

use crate::ctx::Ctx;
use crate::exit::{EXIT_BAD_ARGS, EXIT_ERROR, Exit, Outcome};

/// etcdctl's `lock --ttl` default, in seconds.
const LOCK_TTL: i64 = 10;

/// clientv3's session TTL, which `elect` uses.
const ELECT_TTL: i64 = 60;

#[derive(Args)]
pub(crate) struct LockArgs {
    // Flags are read anywhere, as etcdctl reads them, so a command with
    // flags of its own follows `--`.
    #[arg(help = "<lockname> [exec-command arg1 arg2 ...]")]
    pub(crate) args: Vec<String>,
    /// timeout for session
    #[arg(long, default_value_t = LOCK_TTL)]
    pub(crate) ttl: i64,
}

#[derive(Args)]
pub(crate) struct ElectArgs {
    #[arg(help = "<election-name> [proposal]")]
    pub(crate) args: Vec<String>,
    /// observation mode
    #[arg(short, long)]
    pub(crate) listen: bool,
}

/// Resolves on the first SIGINT or SIGTERM.
async fn interrupted() {
    let mut int = signal(SignalKind::interrupt()).expect("install a SIGINT handler");
    let mut term = signal(SignalKind::terminate()).expect("install a SIGTERM handler");
    tokio::select! {
        _ = int.recv() => {}
        _ = term.recv() => {}
    }
}

/// A lease kept alive for the command's life; revoked when it ends, so
/// that a wait given up leaves no key behind.
struct Session {
    client: Client,
    lease: i64,
    alive: hark_client::KeepAlive,
}

impl Session {
    async fn start(ctx: &Ctx, client: &Client, ttl: i64) -> Result<Session, Exit> {
        let lease = ctx.timed(client.lease_grant(ttl, 0)).await?.id;
        let alive = ctx.timed(client.keep_alive(lease)).await?;
        Ok(Session {
            client: client.clone(),
            lease,
            alive,
        })
    }

    /// Resolves once the lease is gone (a renewal said so).
    async fn expired(&self) {
        while self.alive.ttl() > 0 {
            tokio::time::sleep(std::time::Duration::from_millis(250)).await;
        }
    }

    async fn close(self, ctx: &Ctx) {
        drop(self.alive);
        let _ = ctx.timed(self.client.lease_revoke(self.lease)).await;
    }
}

pub(crate) async fn lock(ctx: &Ctx, a: LockArgs) -> Outcome {
    let Some((name, command)) = a.args.split_first() else {
        return Err(Exit::new(
            EXIT_BAD_ARGS,
            "lock takes a lock name argument and an optional command to execute",
        ));
    };
    let client = ctx.client().await?;
    let session = Session::start(ctx, &client, a.ttl).await?;
    let held = tokio::select! {
        held = client.lock(name.clone(), session.lease) => held,
        () = interrupted() => {
            session.close(ctx).await;
            return Err(Exit::new(EXIT_ERROR, "context canceled"));
        }
    };
    let held = match held {
        Ok(held) => held,
        Err(e) => {
            session.close(ctx).await;
            return Err(e.into());
        }
    };
    let key = held.key.clone();
    if let Some((program, args)) = command.split_first() {
        let revision = held.header.map_or(0, |h| h.revision);
        let status = tokio::process::Command::new(program)
            .args(args)
            .env("ETCD_LOCK_KEY", String::from_utf8_lossy(&key).as_ref())
            .env("ETCD_LOCK_REV", revision.to_string())
            .status()
            .await;
        let unlocked = ctx.timed(client.unlock(key)).await;
        session.close(ctx).await;
        let status = status.map_err(|e| Exit::new(EXIT_ERROR, e.to_string()))?;
        if !status.success() {
            // etcdctl exits with the command's status, silently.
            return Err(Exit::silent(status.code().unwrap_or(EXIT_ERROR)));
        }
        return unlocked.map(|_| ());
    }
    let shown = ctx.timed(client.get(key.clone())).await?;
    if shown.kvs.is_empty() {
        session.close(ctx).await;
        return Err(Exit::new(EXIT_ERROR, "lock lost on init"));
    }
    ctx.format.range(&shown, false)?;
    flush();
    tokio::select! {
        () = interrupted() => {
            let unlocked = ctx.timed(client.unlock(key)).await;
            session.close(ctx).await;
            unlocked.map(|_| ())
        }
        () = session.expired() => Err(Exit::new(EXIT_ERROR, "session expired")),
    }
}

pub(crate) async fn elect(ctx: &Ctx, a: ElectArgs) -> Outcome {
    match (a.args.as_slice(), a.listen) {
        ([name], true) => observe(ctx, name).await,
        ([_], false) => Err(Exit::new(
            EXIT_BAD_ARGS,
            "no proposal argument but -l not set",
        )),
        ([_, _], true) => Err(Exit::new(EXIT_BAD_ARGS, "proposal given but -l is set")),
        ([name, proposal], false) => campaign(ctx, name, proposal).await,
        _ => Err(Exit::new(
            EXIT_BAD_ARGS,
            "elect takes one election name argument and an optional proposal argument",
        )),
    }
}

/// Prints the leader's key and value at each change until interrupted.
async fn observe(ctx: &Ctx, name: &str) -> Outcome {
    let client = ctx.client().await?;
    let mut leaders = client.observe(name.to_string()).await?;
    let shown = async {
        while let Ok(Some(leader)) = leaders.message().await {
            let read = pb::RangeResponse {
                header: leader.header,
                kvs: leader.kv.into_iter().collect(),
                count: 1,
                ..Default::default()
            };
            ctx.format.range(&read, false)?;
            flush();
        }
        Err(Exit::new(EXIT_ERROR, "elect: observer lost"))
    };
    tokio::select! {
        () = interrupted() => Ok(()),
        lost = shown => lost,
    }
}

/// Campaigns, prints the leader key and value once leading, and resigns
/// when interrupted.
async fn campaign(ctx: &Ctx, name: &str, proposal: &str) -> Outcome {
    let client = ctx.client().await?;
    let session = Session::start(ctx, &client, ELECT_TTL).await?;
    let won = tokio::select! {
        won = client.campaign(name.to_string(), proposal.to_string(), session.lease) => won,
        () = interrupted() => {
            session.close(ctx).await;
            return Err(Exit::new(EXIT_ERROR, "context canceled"));
        }
    };
    let leader = match won {
        Ok(won) => won.leader.unwrap_or_default(),
        Err(e) => {
            session.close(ctx).await;
            return Err(e.into());
        }
    };
    let shown = ctx.timed(client.get(leader.key.clone())).await?;
    ctx.format.range(&shown, false)?;
    flush();
    tokio::select! {
        () = interrupted() => {
            let resigned = ctx.timed(client.resign(leader)).await;
            session.close(ctx).await;
            resigned.map(|_| ())
        }
        () = session.expired() => Err(Exit::new(EXIT_ERROR, "elect: session expired")),
    }
}

fn flush() {
    use std::io::Write;
    let _ = std::io::stdout().flush();
}
