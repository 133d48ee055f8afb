//! `user`, `role` and `auth`: etcdctl's auth commands, their argument
//! rules and their simple output, byte for byte.

use std::io::BufRead;

use clap::Subcommand;
use hark_client::{Client, PermissionType, pb};

use crate::ctx::Ctx;
use crate::exit::{EXIT_BAD_ARGS, EXIT_ERROR, Exit, Outcome};
use crate::json::{self, Obj};
use crate::print::Format;

/// etcdctl prints auth answers in simple and json only (and `role get` in
/// fields too): the other formats are refused before anything is sent.
fn check_format(ctx: &Ctx, fields_too: bool) -> Result<(), Exit> {
    match ctx.format {
        Format::Table => Err(crate::print::unsupported("table")),
        Format::Fields if !fields_too => Err(crate::print::unsupported("fields")),
        _ => Ok(()),
    }
}

/// Prints an answer: `-w json` as etcdctl's JSON printer writes the
/// response (its header, then `fields`), otherwise etcdctl's simple line(s).
fn show(
    ctx: &Ctx,
    header: &Option<pb::ResponseHeader>,
    fields: impl FnOnce(Obj) -> Obj,
    simple: impl FnOnce(),
) {
    match ctx.format {
        Format::Json => {
            let o = Obj::new().opt("header", json::header(header));
            println!("{}", fields(o).end());
        }
        _ => simple(),
    }
}

fn strings(v: &[String]) -> Vec<String> {
    v.iter().map(|s| json::string(s)).collect()
}

#[derive(Subcommand)]
pub enum UserCommand {
    /// Adds a new user
    Add {
        args: Vec<String>,
        /// Read password from stdin instead of interactive terminal
        #[arg(long, num_args = 0..=1, default_missing_value = "true", action = clap::ArgAction::Set, default_value_t = true)]
        interactive: bool,
        /// Supply password from the command line flag
        #[arg(long)]
        new_user_password: Option<String>,
        /// Create a user without password (CN based auth only)
        #[arg(long)]
        no_password: bool,
    },
    /// Deletes a user
    Delete { args: Vec<String> },
    /// Gets detailed information of a user
    Get {
        args: Vec<String>,
        /// Show permissions of roles granted to the user
        #[arg(long)]
        detail: bool,
    },
    /// Lists all users
    List,
    /// Changes password of user
    Passwd {
        args: Vec<String>,
        /// If true, read password from stdin instead of interactive terminal
        #[arg(long, num_args = 0..=1, default_missing_value = "true", action = clap::ArgAction::Set, default_value_t = true)]
        interactive: bool,
    },
    /// Grants a role to a user
    GrantRole { args: Vec<String> },
    /// Revokes a role from a user
    RevokeRole { args: Vec<String> },
}

#[derive(Subcommand)]
pub enum RoleCommand {
    /// Adds a new role
    Add { args: Vec<String> },
    /// Deletes a role
    Delete { args: Vec<String> },
    /// Gets detailed information of a role
    Get { args: Vec<String> },
    /// Lists all roles
    List,
    /// Grants a key to a role
    GrantPermission {
        args: Vec<String>,
        /// Grant a prefix permission
        #[arg(long)]
        prefix: bool,
        /// Grant a permission of keys that are greater than or equal to the given key using byte compare
        #[arg(long)]
        from_key: bool,
    },
    /// Revokes a key from a role
    RevokePermission {
        args: Vec<String>,
        /// Revoke a prefix permission
        #[arg(long)]
        prefix: bool,
        /// Revoke a permission of keys that are greater than or equal to the given key using byte compare
        #[arg(long)]
        from_key: bool,
    },
}

#[derive(Subcommand)]
pub enum AuthCommand {
    /// Enables authentication
    Enable,
    /// Disables authentication
    Disable,
    /// Returns authentication status
    Status,
}

fn bad_args(message: &str) -> Exit {
    Exit::new(EXIT_BAD_ARGS, message)
}

/// A password from the terminal (or from stdin, which is what a harness
/// or a pipe gives): etcdctl asks twice when it asks interactively.
fn read_password(name: &str, interactive: bool) -> Result<String, Exit> {
    let stdin = std::io::stdin();
    let line = || -> Result<String, Exit> {
        let mut s = String::new();
        stdin
            .lock()
            .read_line(&mut s)
            .map_err(|e| Exit::new(EXIT_ERROR, e.to_string()))?;
        Ok(s.trim_end_matches(['\n', '\r']).to_string())
    };
    if !interactive {
        return line();
    }
    eprint!("Password of {name}: ");
    let first = line()?;
    if first.is_empty() {
        return Err(Exit::new(EXIT_ERROR, "empty password"));
    }
    eprint!("Type password of {name} again for confirmation: ");
    if line()? != first {
        return Err(Exit::new(EXIT_ERROR, "given passwords are different"));
    }
    Ok(first)
}

pub async fn user(ctx: &Ctx, command: UserCommand) -> Outcome {
    check_format(ctx, false)?;
    match command {
        UserCommand::Add {
            args,
            interactive,
            new_user_password,
            no_password,
        } => {
            let [spec] = args.as_slice() else {
                return Err(bad_args(
                    "user add command requires user name as its argument",
                ));
            };
            let (name, password) = match spec.split_once(':') {
                Some(("", _)) => {
                    return Err(bad_args("empty user name is not allowed"));
                }
                Some((name, password)) => (name.to_string(), password.to_string()),
                None if no_password => (spec.clone(), String::new()),
                None => match new_user_password {
                    Some(p) => (spec.clone(), p),
                    None => (spec.clone(), read_password(spec, interactive)?),
                },
            };
            let c = ctx.client().await?;
            let r = ctx.timed(c.user_add(&name, &password, no_password)).await?;
            show(ctx, &r.header, |o| o, || println!("User {name} created"));
        }
        UserCommand::Delete { args } => {
            let [name] = args.as_slice() else {
                return Err(bad_args(
                    "user delete command requires user name as its argument",
                ));
            };
            let c = ctx.client().await?;
            let r = ctx.timed(c.user_delete(name)).await?;
            show(ctx, &r.header, |o| o, || println!("User {name} deleted"));
        }
        UserCommand::Get { args, detail } => {
            let [name] = args.as_slice() else {
                return Err(bad_args(
                    "user get command requires user name as its argument",
                ));
            };
            let c = ctx.client().await?;
            let user = ctx.timed(c.user_get(name)).await?;
            if matches!(ctx.format, Format::Json) {
                show(
                    ctx,
                    &user.header,
                    |o| o.list_nz("roles", strings(&user.roles)),
                    || {},
                );
                return Ok(());
            }
            println!("User: {name}");
            if detail {
                for role in &user.roles {
                    println!();
                    let perms = ctx.timed(c.role_get(role)).await?;
                    print_role(role, &perms);
                }
            } else {
                let roles: String = user.roles.iter().map(|r| format!(" {r}")).collect();
                println!("Roles:{roles}");
            }
        }
        UserCommand::List => {
            let c = ctx.client().await?;
            let r = ctx.timed(c.user_list()).await?;
            show(
                ctx,
                &r.header,
                |o| o.list_nz("users", strings(&r.users)),
                || {
                    for user in &r.users {
                        println!("{user}");
                    }
                },
            );
        }
        UserCommand::Passwd { args, interactive } => {
            let [name] = args.as_slice() else {
                return Err(bad_args(
                    "user passwd command requires user name as its argument",
                ));
            };
            let password = read_password(name, interactive)?;
            let c = ctx.client().await?;
            let r = ctx.timed(c.user_change_password(name, &password)).await?;
            show(ctx, &r.header, |o| o, || println!("Password updated"));
        }
        UserCommand::GrantRole { args } => {
            let [user, role] = args.as_slice() else {
                return Err(bad_args(
                    "user grant command requires user name and role name as its argument",
                ));
            };
            let c = ctx.client().await?;
            let r = ctx.timed(c.user_grant_role(user, role)).await?;
            show(
                ctx,
                &r.header,
                |o| o,
                || println!("Role {role} is granted to user {user}"),
            );
        }
        UserCommand::RevokeRole { args } => {
            let [user, role] = args.as_slice() else {
                return Err(bad_args(
                    "user revoke-role requires user name and role name as its argument",
                ));
            };
            let c = ctx.client().await?;
            let r = ctx.timed(c.user_revoke_role(user, role)).await?;
            show(
                ctx,
                &r.header,
                |o| o,
                || println!("Role {role} is revoked from user {user}"),
            );
        }
    }
    Ok(())
}

/// etcdctl's `role get` body: reads, then writes, one line per permission.
fn print_role(name: &str, r: &pb::AuthRoleGetResponse) {
    println!("Role {name}");
    let line = |p: &hark_client::Permission| {
        let key = String::from_utf8_lossy(&p.key);
        if p.range_end.is_empty() {
            return format!("\t{key}");
        }
        let mut s = if p.range_end.as_ref() == b"\0" {
            format!("\t[{key}, <open ended>")
        } else {
            format!("\t[{key}, {})", String::from_utf8_lossy(&p.range_end))
        };
        if hark_client::prefix_end(&p.key) == p.range_end.as_ref() {
            s.push_str(&format!(" (prefix {key})"));
        }
        s
    };
    let of = |read: bool| {
        r.perm.iter().filter(move |p| {
            let kind = PermissionType::try_from(p.perm_type).unwrap_or(PermissionType::Read);
            match kind {
                PermissionType::Readwrite => true,
                PermissionType::Read => read,
                PermissionType::Write => !read,
            }
        })
    };
    println!("KV Read:");
    for p in of(true) {
        println!("{}", line(p));
    }
    println!("KV Write:");
    for p in of(false) {
        println!("{}", line(p));
    }
}

/// etcdctl's key and range end of a permission command.
fn permission_range(
    key: &str,
    end: Option<&String>,
    prefix: bool,
    from_key: bool,
) -> Result<(Vec<u8>, Vec<u8>), Exit> {
    if prefix && from_key {
        return Err(bad_args(
            "--from-key and --prefix flags are mutually exclusive",
        ));
    }
    if end.is_some() && prefix {
        return Err(bad_args("unexpected endkey argument with --prefix flag"));
    }
    if end.is_some() && from_key {
        return Err(bad_args("unexpected endkey argument with --from-key flag"));
    }
    if key.is_empty() {
        let end = if prefix || from_key {
            vec![0]
        } else {
            Vec::new()
        };
        return Ok((vec![0], end));
    }
    let key = key.as_bytes().to_vec();
    let end = if prefix {
        let end = hark_client::prefix_end(&key);
        if end.is_empty() { vec![0] } else { end }
    } else if from_key {
        vec![0]
    } else {
        end.map(|e| e.as_bytes().to_vec()).unwrap_or_default()
    };
    Ok((key, end))
}

pub async fn role(ctx: &Ctx, command: RoleCommand) -> Outcome {
    check_format(ctx, matches!(command, RoleCommand::Get { .. }))?;
    match command {
        RoleCommand::Add { args } => {
            let [name] = args.as_slice() else {
                return Err(bad_args(
                    "role add command requires role name as its argument",
                ));
            };
            let c = ctx.client().await?;
            let r = ctx.timed(c.role_add(name)).await?;
            show(ctx, &r.header, |o| o, || println!("Role {name} created"));
        }
        RoleCommand::Delete { args } => {
            let [name] = args.as_slice() else {
                return Err(bad_args(
                    "role delete command requires role name as its argument",
                ));
            };
            let c = ctx.client().await?;
            let r = ctx.timed(c.role_delete(name)).await?;
            show(ctx, &r.header, |o| o, || println!("Role {name} deleted"));
        }
        RoleCommand::Get { args } => {
            let [name] = args.as_slice() else {
                return Err(bad_args(
                    "role get command requires role name as its argument",
                ));
            };
            let c = ctx.client().await?;
            let r = ctx.timed(c.role_get(name)).await?;
            let perms: Vec<String> = r
                .perm
                .iter()
                .map(|p| {
                    Obj::new()
                        .int_nz("permType", i64::from(p.perm_type))
                        .bytes_nz("key", &p.key)
                        .bytes_nz("range_end", &p.range_end)
                        .end()
                })
                .collect();
            if matches!(ctx.format, Format::Fields) {
                crate::print::fields_header(&r.header);
                for p in &r.perm {
                    let kind = PermissionType::try_from(p.perm_type)
                        .map(|t| t.as_str_name().to_string())
                        .unwrap_or_else(|_| p.perm_type.to_string());
                    println!("\"PermType\" :  {kind}");
                    println!("\"Key\" : {}", crate::print::go_quote(&p.key));
                    println!("\"RangeEnd\" : {}", crate::print::go_quote(&p.range_end));
                }
                return Ok(());
            }
            show(
                ctx,
                &r.header,
                |o| o.list_nz("perm", perms),
                || print_role(name, &r),
            );
        }
        RoleCommand::List => {
            let c = ctx.client().await?;
            let r = ctx.timed(c.role_list()).await?;
            show(
                ctx,
                &r.header,
                |o| o.list_nz("roles", strings(&r.roles)),
                || {
                    for role in &r.roles {
                        println!("{role}");
                    }
                },
            );
        }
        RoleCommand::GrantPermission {
            args,
            prefix,
            from_key,
        } => {
            if args.len() < 3 || args.len() > 4 {
                return Err(bad_args(
                    "role grant command requires role name, permission type, and key [endkey] as its argument",
                ));
            }
            let kind = match args[1].to_ascii_lowercase().as_str() {
                "read" => PermissionType::Read,
                "write" => PermissionType::Write,
                "readwrite" => PermissionType::Readwrite,
                _ => {
                    return Err(bad_args(&format!("invalid permission type: {}", args[1])));
                }
            };
            let (key, end) = permission_range(&args[2], args.get(3), prefix, from_key)?;
            let c = ctx.client().await?;
            let r = ctx
                .timed(c.role_grant_permission(&args[0], kind, key, end))
                .await?;
            show(
                ctx,
                &r.header,
                |o| o,
                || println!("Role {} updated", args[0]),
            );
        }
        RoleCommand::RevokePermission {
            args,
            prefix,
            from_key,
        } => {
            if args.len() < 2 || args.len() > 3 {
                return Err(bad_args(
                    "role revoke-permission command requires role name and key [endkey] as its argument",
                ));
            }
            let (key, end) = permission_range(&args[1], args.get(2), prefix, from_key)?;
            let c = ctx.client().await?;
            let r = ctx
                .timed(c.role_revoke_permission(&args[0], key, end.clone()))
                .await?;
            let role = &args[0];
            let shown = &args[1];
            if matches!(ctx.format, Format::Json) {
                show(ctx, &r.header, |o| o, || {});
            } else if end.is_empty() {
                println!("Permission of key {shown} is revoked from role {role}");
            } else if end == [0] {
                println!("Permission of range [{shown}, <open ended> is revoked from role {role}");
            } else {
                println!(
                    "Permission of range [{shown}, {}) is revoked from role {role}",
                    String::from_utf8_lossy(&end)
                );
            }
        }
    }
    Ok(())
}

pub async fn auth(ctx: &Ctx, command: AuthCommand) -> Outcome {
    check_format(ctx, false)?;
    let c = ctx.client().await?;
    match command {
        AuthCommand::Enable => {
            let header = enable(ctx, &c).await?;
            show(ctx, &header, |o| o, || println!("Authentication Enabled"));
        }
        AuthCommand::Disable => {
            let r = ctx.timed(c.auth_disable()).await?;
            show(
                ctx,
                &r.header,
                |o| o,
                || println!("Authentication Disabled"),
            );
        }
        AuthCommand::Status => {
            let s = ctx.timed(c.auth_status()).await?;
            show(
                ctx,
                &s.header,
                |o| {
                    o.bool_nz("enabled", s.enabled)
                        .int_nz("authRevision", s.auth_revision)
                },
                || {
                    println!("Authentication Status: {}", s.enabled);
                    println!("AuthRevision: {}", s.auth_revision);
                },
            );
        }
    }
    Ok(())
}

/// etcdctl's enable: when root lacks the root role, it makes the role,
/// grants it, and tries again.
async fn enable(ctx: &Ctx, c: &Client) -> Result<Option<pb::ResponseHeader>, Exit> {
    match ctx.timed(c.auth_enable()).await {
        Err(e) if e.message.as_deref() == Some("etcdserver: root user does not have root role") => {
            match ctx.timed(c.role_add("root")).await {
                Err(e) if e.message.as_deref() != Some("etcdserver: role name already exists") => {
                    return Err(e);
                }
                _ => {}
            }
            ctx.timed(c.user_grant_role("root", "root")).await?;
            Ok(ctx.timed(c.auth_enable()).await?.header)
        }
        other => other.map(|r| r.header),
    }
}
