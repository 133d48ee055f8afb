//! etcdctl's cluster commands: `member add|remove|update|list|promote` and
//! `move-leader`, printed as etcdctl 3.5 prints them.

use clap::Subcommand;
use hark_client::pb;

use crate::ctx::Ctx;
use crate::exit::{EXIT_BAD_ARGS, EXIT_ERROR, Exit, Outcome, go_parse_error};
use crate::json::{self, Obj};
use crate::print::{Format, fields_header, go_quote, print_table, unsupported};

#[derive(Subcommand)]
pub enum MemberCommand {
    /// Adds a member into the cluster
    Add {
        args: Vec<String>,
        /// comma separated peer URLs for the new member.
        #[arg(long, default_value = "")]
        peer_urls: String,
        /// indicates if the new member is raft learner
        #[arg(long)]
        learner: bool,
    },
    /// Removes a member from the cluster
    Remove { args: Vec<String> },
    /// Updates a member in the cluster
    Update {
        args: Vec<String>,
        /// comma separated peer URLs for the updated member.
        #[arg(long, default_value = "")]
        peer_urls: String,
    },
    /// Lists all members in the cluster
    List,
    /// Promotes a non-voting member in the cluster
    Promote { args: Vec<String> },
}

pub async fn member(ctx: &Ctx, command: MemberCommand) -> Outcome {
    match command {
        MemberCommand::Add {
            args,
            peer_urls,
            learner,
        } => {
            let name = match args.as_slice() {
                [] => return Err(Exit::new(EXIT_BAD_ARGS, "member name not provided")),
                [name] => name.clone(),
                _ => {
                    let mut why = String::from("too many arguments");
                    for a in args.iter().filter(|a| a.to_lowercase().starts_with("http")) {
                        why.push_str(&format!(", did you mean --peer-urls={a}"));
                    }
                    return Err(Exit::new(EXIT_BAD_ARGS, why));
                }
            };
            if peer_urls.is_empty() {
                return Err(Exit::new(EXIT_BAD_ARGS, "member peer urls not provided"));
            }
            let urls = peer_urls.split(',').map(String::from).collect();
            let c = ctx.client().await?;
            let r = ctx.timed(c.member_add(urls, learner)).await?;
            ctx.format.member_add(&r, &name, &peer_urls)
        }
        MemberCommand::Remove { args } => {
            let id = member_id(&args)?;
            let c = ctx.client().await?;
            let r = ctx.timed(c.member_remove(id)).await?;
            ctx.format
                .member_changed(id, "removed from", &r.header, &r.members)
        }
        MemberCommand::Update { args, peer_urls } => {
            let id = member_id(&args)?;
            if peer_urls.is_empty() {
                return Err(Exit::new(EXIT_BAD_ARGS, "member peer urls not provided"));
            }
            let urls = peer_urls.split(',').map(String::from).collect();
            let c = ctx.client().await?;
            let r = ctx.timed(c.member_update(id, urls)).await?;
            ctx.format
                .member_changed(id, "updated in", &r.header, &r.members)
        }
        MemberCommand::Promote { args } => {
            let id = member_id(&args)?;
            let c = ctx.client().await?;
            let r = ctx.timed(c.member_promote(id)).await?;
            match ctx.format {
                // etcdctl 3.5 has no JSON printer for it.
                Format::Simple { .. } => {
                    println!(
                        "Member {id:16x} promoted in cluster {:16x}",
                        cluster(&r.header)
                    );
                    Ok(())
                }
                Format::Json => Err(unsupported("json")),
                Format::Fields => Err(unsupported("fields")),
                Format::Table => Err(unsupported("table")),
            }
        }
        MemberCommand::List => {
            let c = ctx.client().await?;
            // clientv3 3.5 asks for the list the leader confirmed.
            let r = ctx.timed(c.member_list(true)).await?;
            ctx.format.member_list(&r, ctx.hex)
        }
    }
}

/// The one hex member id argument of remove, update and promote.
fn member_id(args: &[String]) -> Result<u64, Exit> {
    let [arg] = args else {
        return Err(Exit::new(EXIT_BAD_ARGS, "member ID is not provided"));
    };
    u64::from_str_radix(arg, 16).map_err(|e| {
        Exit::new(
            EXIT_BAD_ARGS,
            format!(
                "bad member ID arg ({}), expecting ID in Hex",
                go_parse_error("ParseUint", arg, &e)
            ),
        )
    })
}

/// etcdctl's `move-leader`: finds the leader among the endpoints (asking
/// each in turn), then asks it to hand over to `target`.
pub async fn move_leader(ctx: &Ctx, args: &[String]) -> Outcome {
    let [arg] = args else {
        return Err(Exit::new(
            EXIT_BAD_ARGS,
            "move-leader command needs 1 argument",
        ));
    };
    let target = u64::from_str_radix(arg, 16)
        .map_err(|e| Exit::new(EXIT_BAD_ARGS, go_parse_error("ParseUint", arg, &e)))?;
    let deadline = tokio::time::Instant::now() + ctx.command_timeout;
    let mut leader = None;
    for ep in &ctx.endpoints {
        let c = ctx.connect(&[ep]).await?;
        let status = match tokio::time::timeout_at(deadline, c.status()).await {
            Ok(s) => s?,
            Err(_) => return Err(Exit::new(EXIT_ERROR, "context deadline exceeded")),
        };
        let own = status.header.as_ref().map_or(0, |h| h.member_id);
        if own == status.leader {
            leader = Some((c, own));
            break;
        }
    }
    let Some((c, leader_id)) = leader else {
        return Err(Exit::new(
            EXIT_BAD_ARGS,
            format!("no leader endpoint given at [{}]", ctx.endpoints.join(" ")),
        ));
    };
    let r = match tokio::time::timeout_at(deadline, c.move_leader(target)).await {
        Ok(r) => r?,
        Err(_) => return Err(Exit::new(EXIT_ERROR, "context deadline exceeded")),
    };
    match ctx.format {
        Format::Simple { .. } => {
            println!("Leadership transferred from {leader_id:x} to {target:x}");
            Ok(())
        }
        Format::Json => {
            println!(
                "{}",
                Obj::new().opt("header", json::header(&r.header)).end()
            );
            Ok(())
        }
        Format::Fields => Err(unsupported("fields")),
        Format::Table => Err(unsupported("table")),
    }
}

fn cluster(header: &Option<pb::ResponseHeader>) -> u64 {
    header.as_ref().map_or(0, |h| h.cluster_id)
}

/// etcdctl's rows: ID, status, name, peer URLs, client URLs, learner.
fn member_rows(members: &[pb::Member]) -> Vec<Vec<String>> {
    members
        .iter()
        .map(|m| {
            vec![
                format!("{:x}", m.id),
                // A member added but never started has no name yet.
                if m.name.is_empty() {
                    "unstarted"
                } else {
                    "started"
                }
                .to_string(),
                m.name.clone(),
                m.peer_ur_ls.join(","),
                m.client_ur_ls.join(","),
                m.is_learner.to_string(),
            ]
        })
        .collect()
}

fn member_json(m: &pb::Member) -> String {
    let urls = |v: &[String]| v.iter().map(|u| json::string(u)).collect();
    Obj::new()
        .int_nz("ID", m.id)
        .str_nz("name", &m.name)
        .list_nz("peerURLs", urls(&m.peer_ur_ls))
        .list_nz("clientURLs", urls(&m.client_ur_ls))
        .bool_nz("isLearner", m.is_learner)
        .end()
}

impl Format {
    fn member_list(&self, r: &pb::MemberListResponse, hex: bool) -> Outcome {
        match self {
            Format::Simple { .. } => {
                for row in member_rows(&r.members) {
                    println!("{}", row.join(", "));
                }
            }
            Format::Table => print_table(
                &[
                    "ID",
                    "Status",
                    "Name",
                    "Peer Addrs",
                    "Client Addrs",
                    "Is Learner",
                ],
                &member_rows(&r.members),
            ),
            Format::Fields => {
                fields_header(&r.header);
                for m in &r.members {
                    println!("\"ID\" : {}", m.id);
                    println!("\"Name\" : {}", go_quote(m.name.as_bytes()));
                    for u in &m.peer_ur_ls {
                        println!("\"PeerURL\" : {}", go_quote(u.as_bytes()));
                    }
                    for u in &m.client_ur_ls {
                        println!("\"ClientURL\" : {}", go_quote(u.as_bytes()));
                    }
                    println!("\"IsLearner\" : {}", m.is_learner);
                    println!();
                }
            }
            Format::Json if hex => println!("{}", member_list_hex_json(r)),
            Format::Json => println!(
                "{}",
                Obj::new()
                    .opt("header", json::header(&r.header))
                    .list_nz("members", r.members.iter().map(member_json).collect())
                    .end()
            ),
        }
        Ok(())
    }

    fn member_add(&self, r: &pb::MemberAddResponse, name: &str, peer_urls: &str) -> Outcome {
        let added = r.member.clone().unwrap_or_default();
        match self {
            Format::Simple { .. } => {
                // etcdctl 3.5 says the same for a learner.
                println!(
                    "Member {:16x} added to cluster {:16x}",
                    added.id,
                    cluster(&r.header)
                );
                // What the new member's environment needs to join.
                let mut initial = Vec::new();
                for m in &r.members {
                    let n = if m.id == added.id { name } else { &m.name };
                    initial.extend(m.peer_ur_ls.iter().map(|u| format!("{n}={u}")));
                }
                println!();
                println!("ETCD_NAME={}", go_quote(name.as_bytes()));
                println!(
                    "ETCD_INITIAL_CLUSTER={}",
                    go_quote(initial.join(",").as_bytes())
                );
                println!(
                    "ETCD_INITIAL_ADVERTISE_PEER_URLS={}",
                    go_quote(peer_urls.as_bytes())
                );
                println!("ETCD_INITIAL_CLUSTER_STATE=\"existing\"");
            }
            Format::Json => println!(
                "{}",
                Obj::new()
                    .opt("header", json::header(&r.header))
                    .opt("member", r.member.as_ref().map(member_json))
                    .list_nz("members", r.members.iter().map(member_json).collect())
                    .end()
            ),
            Format::Fields => return Err(unsupported("fields")),
            Format::Table => return Err(unsupported("table")),
        }
        Ok(())
    }

    /// `member remove` and `member update`.
    fn member_changed(
        &self,
        id: u64,
        what: &str,
        header: &Option<pb::ResponseHeader>,
        members: &[pb::Member],
    ) -> Outcome {
        match self {
            Format::Simple { .. } => {
                println!("Member {id:16x} {what} cluster {:16x}", cluster(header));
            }
            Format::Json => println!(
                "{}",
                Obj::new()
                    .opt("header", json::header(header))
                    .list_nz("members", members.iter().map(member_json).collect())
                    .end()
            ),
            Format::Fields => return Err(unsupported("fields")),
            Format::Table => return Err(unsupported("table")),
        }
        Ok(())
    }
}

/// etcdctl's `member list -w json --hex`, written by hand there: ids in hex
/// strings, the raft term in bare hex, `clientURLS`, no learner flag.
fn member_list_hex_json(r: &pb::MemberListResponse) -> String {
    let h = r.header.unwrap_or_default();
    let mut out = format!(
        "{{\"header\":{{\"cluster_id\":\"{:x}\",\"member_id\":\"{:x}\",\"raft_term\":{:x}}}",
        h.cluster_id, h.member_id, h.raft_term
    );
    let urls = |v: &[String]| {
        let items: Vec<String> = v.iter().map(|u| json::string(u)).collect();
        if v.is_empty() {
            "null".to_string()
        } else {
            format!("[{}]", items.join(","))
        }
    };
    for (i, m) in r.members.iter().enumerate() {
        out.push_str(if i == 0 { ",\"members\":[" } else { "," });
        out.push_str(&format!(
            "{{\"ID\":\"{:x}\",\"name\":\"{}\",\"peerURLs\":{},\"clientURLS\":{}}}",
            m.id,
            m.name,
            urls(&m.peer_ur_ls),
            urls(&m.client_ur_ls)
        ));
        if i + 1 == r.members.len() {
            out.push(']');
        }
    }
    out.push('}');
    out
}
