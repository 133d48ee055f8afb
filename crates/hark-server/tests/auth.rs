//! Authentication and permissions as users meet them.
//!
//! * etcdctl 3.4 and 3.5 run one auth script against etcd 3.5.1 and
//!   against Hark; their output (stdout, stderr without clientv3's JSON
//!   log lines, exit codes) must be the same bytes.
//! * An attacker battery over raw gRPC: each of etcd's auth advisories and
//!   each permission rule, refused with etcd's error while the server keeps
//!   serving everyone else.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use hark_proto::etcdserverpb as pb;
use pb::{
    auth_client::AuthClient, kv_client::KvClient, lease_client::LeaseClient,
    maintenance_client::MaintenanceClient, watch_client::WatchClient,
};
use tonic::transport::Channel;

/// One etcdctl command: args and stdin.
type Step = (&'static [&'static str], &'static str);

/// The auth script; `{R}` is root's `--user`, `{A}` alice's. It leaves out
/// what etcd 3.5.1 still allowed and later etcd (and Hark) refuse: a
/// non-root compaction (3.5.28) and an inverted permission range; the
/// attacker battery below covers those.
const SCRIPT: &[Step] = &[
    (&["user", "add", "root:rootpw"], ""),
    (&["auth", "enable"], ""),
    (&["role", "add", "root"], ""),
    (&["user", "grant-role", "root", "root"], ""),
    (&["auth", "enable"], ""),
    (&["get", "a"], ""),
    (&["{R}", "put", "a", "1"], ""),
    (&["{R}", "user", "add", "alice:alicepw"], ""),
    (&["{R}", "user", "add", "alice:again"], ""),
    (&["{R}", "role", "add", "r"], ""),
    (
        &["{R}", "role", "grant-permission", "r", "read", "a", "c"],
        "",
    ),
    (
        &[
            "{R}",
            "role",
            "grant-permission",
            "--prefix",
            "r",
            "readwrite",
            "w",
        ],
        "",
    ),
    (
        &[
            "{R}",
            "role",
            "grant-permission",
            "--from-key",
            "r",
            "read",
            "z",
        ],
        "",
    ),
    (&["{R}", "role", "grant-permission", "r", "write", "p"], ""),
    (
        &["{R}", "role", "grant-permission", "nope", "read", "b"],
        "",
    ),
    (&["{R}", "user", "grant-role", "alice", "r"], ""),
    (&["{R}", "user", "grant-role", "alice", "nope"], ""),
    (&["{R}", "role", "get", "r"], ""),
    (&["{R}", "user", "get", "alice"], ""),
    (&["{R}", "user", "get", "--detail", "alice"], ""),
    (&["{R}", "user", "list"], ""),
    (&["{R}", "role", "list"], ""),
    (&["{A}", "get", "a"], ""),
    (&["{A}", "put", "a", "2"], ""),
    (&["{A}", "put", "w1", "2"], ""),
    (&["{A}", "get", "--prefix", "w"], ""),
    (&["{A}", "get", "--from-key", "z"], ""),
    (&["{A}", "get", "--from-key", "y"], ""),
    (&["{A}", "get", "--prefix", ""], ""),
    (&["{A}", "put", "p", "x"], ""),
    (&["{A}", "put", "--prev-kv", "p", "y"], ""),
    (&["{A}", "del", "--prev-kv", "w1"], ""),
    (&["{A}", "user", "list"], ""),
    (&["{A}", "user", "get", "alice"], ""),
    (&["{A}", "role", "get", "r"], ""),
    (&["{A}", "role", "get", "root"], ""),
    (&["--user", "alice:wrong", "get", "a"], ""),
    (&["--user", "nobody:x", "get", "a"], ""),
    (&["{R}", "role", "revoke-permission", "r", "a", "c"], ""),
    (&["{R}", "role", "revoke-permission", "r", "a", "c"], ""),
    (
        &["{R}", "role", "revoke-permission", "--prefix", "r", "w"],
        "",
    ),
    (&["{R}", "role", "get", "r"], ""),
    (
        &["{R}", "user", "passwd", "alice", "--interactive=false"],
        "newpw\n",
    ),
    (&["--user", "alice:alicepw", "get", "a"], ""),
    (&["--user", "alice:newpw", "get", "a"], ""),
    (&["{R}", "user", "revoke-role", "alice", "r"], ""),
    (&["{R}", "user", "revoke-role", "alice", "r"], ""),
    (&["{R}", "user", "get", "alice"], ""),
    (&["{R}", "user", "delete", "root"], ""),
    (&["{R}", "role", "delete", "root"], ""),
    (&["{R}", "user", "revoke-role", "root", "root"], ""),
    (&["{R}", "user", "delete", "alice"], ""),
    (&["{R}", "user", "delete", "alice"], ""),
    (&["{R}", "role", "delete", "r"], ""),
    (&["{R}", "role", "delete", "r"], ""),
    (&["{R}", "auth", "disable"], ""),
    (&["get", "a"], ""),
    (&["user", "list"], ""),
];

/// Steps only etcdctl 3.5 has.
const SCRIPT_35: &[Step] = &[
    (&["auth", "status"], ""),
    (&["auth", "enable"], ""),
    (&["{R}", "auth", "status"], ""),
    (&["{R}", "auth", "disable"], ""),
];

fn run_script(ctl: &Path, endpoint: &str, steps: &[Step]) -> String {
    let mut transcript = String::new();
    for (args, stdin) in steps {
        let args: Vec<&str> = args
            .iter()
            .flat_map(|a| match *a {
                "{R}" => vec!["--user", "root:rootpw"],
                "{A}" => vec!["--user", "alice:alicepw"],
                other => vec![other],
            })
            .collect();
        let mut child = Command::new(ctl)
            .env("ETCDCTL_API", "3")
            .arg(format!("--endpoints={endpoint}"))
            .args(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let stderr: String = String::from_utf8_lossy(&out.stderr)
            .lines()
            .filter(|l| !l.starts_with("{\"level\""))
            .map(|l| format!("{l}\n"))
            .collect();
        transcript += &format!(
            "$ {}\n{}{}[exit {}]\n",
            args.join(" "),
            String::from_utf8_lossy(&out.stdout),
            stderr,
            out.status.code().unwrap_or(-1)
        );
    }
    transcript
}

#[test]
fn etcdctl_auth_flow_matches_etcd() {
    let Some(etcd_bin) = common::etcd::tool("etcd-3.5") else {
        return;
    };
    let ctls: Vec<_> = ["etcdctl", "etcdctl-3.5"]
        .into_iter()
        .filter_map(|name| common::etcd::tool(name).map(|p| (name, p)))
        .collect();
    let rt = tokio::runtime::Runtime::new().unwrap();
    for (name, ctl) in ctls {
        let mut steps = SCRIPT.to_vec();
        if name == "etcdctl-3.5" {
            steps.extend_from_slice(SCRIPT_35);
        }
        let etcd = common::etcd::Etcd::start(&etcd_bin);
        let want = run_script(&ctl, &etcd.endpoint, &steps);
        drop(etcd);
        let hark = rt.block_on(common::start(&[]));
        let got = run_script(&ctl, &hark.endpoint(), &steps);
        rt.block_on(hark.server.shutdown());
        if got != want {
            let diff: Vec<String> = want
                .lines()
                .zip(got.lines())
                .filter(|(w, g)| w != g)
                .map(|(w, g)| format!("etcd: {w}\nhark: {g}"))
                .take(10)
                .collect();
            panic!(
                "{name}: Hark's transcript differs from etcd's:\n{}\n\n--- etcd\n{want}\n--- hark\n{got}",
                diff.join("\n")
            );
        }
        assert!(want.contains("Authentication Enabled"), "{want}");
    }
}

// ---- the attacker battery ----

const ROOT_PW: &str = "rootpw";

struct Battery {
    channel: Channel,
    root: String,
    alice: String,
}

fn with_token<T>(message: T, token: &str) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    if !token.is_empty() {
        request
            .metadata_mut()
            .insert("token", token.parse().unwrap());
    }
    request
}

async fn authenticate(
    channel: &Channel,
    name: &str,
    password: &str,
) -> Result<String, tonic::Status> {
    let resp = AuthClient::new(channel.clone())
        .authenticate(pb::AuthenticateRequest {
            name: name.into(),
            password: password.into(),
        })
        .await?;
    Ok(resp.into_inner().token)
}

fn perm(kind: i32, key: &str, end: &str) -> Option<hark_proto::authpb::Permission> {
    Some(hark_proto::authpb::Permission {
        perm_type: kind,
        key: key.as_bytes().to_vec().into(),
        range_end: end.as_bytes().to_vec().into(),
    })
}

/// root; alice with role `r`: read [a, c), read "p" only, readwrite prefix "w".
async fn setup(endpoint: &str) -> Battery {
    let channel = Channel::from_shared(endpoint.to_string())
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut auth = AuthClient::new(channel.clone());
    auth.user_add(pb::AuthUserAddRequest {
        name: "root".into(),
        password: ROOT_PW.into(),
        ..Default::default()
    })
    .await
    .unwrap();
    auth.user_grant_role(pb::AuthUserGrantRoleRequest {
        user: "root".into(),
        role: "root".into(),
    })
    .await
    .unwrap();
    auth.auth_enable(pb::AuthEnableRequest {}).await.unwrap();
    let root = authenticate(&channel, "root", ROOT_PW).await.unwrap();
    let as_root = |m| with_token(m, &root);
    auth.user_add(as_root(pb::AuthUserAddRequest {
        name: "alice".into(),
        password: "alicepw".into(),
        ..Default::default()
    }))
    .await
    .unwrap();
    auth.role_add(with_token(
        pb::AuthRoleAddRequest { name: "r".into() },
        &root,
    ))
    .await
    .unwrap();
    for p in [perm(0, "a", "c"), perm(0, "p", ""), perm(2, "w", "x")] {
        auth.role_grant_permission(with_token(
            pb::AuthRoleGrantPermissionRequest {
                name: "r".into(),
                perm: p,
            },
            &root,
        ))
        .await
        .unwrap();
    }
    auth.user_grant_role(with_token(
        pb::AuthUserGrantRoleRequest {
            user: "alice".into(),
            role: "r".into(),
        },
        &root,
    ))
    .await
    .unwrap();
    let alice = authenticate(&channel, "alice", "alicepw").await.unwrap();
    Battery {
        channel,
        root,
        alice,
    }
}

/// A watch stream opened with `token`: its request sender and responses.
async fn watch_stream(
    b: &Battery,
    token: &str,
) -> (
    tokio::sync::mpsc::Sender<pb::WatchRequest>,
    tonic::Streaming<pb::WatchResponse>,
) {
    let (tx, rx) = tokio::sync::mpsc::channel(8);
    let stream = WatchClient::new(b.channel.clone())
        .watch(with_token(
            tokio_stream::wrappers::ReceiverStream::new(rx),
            token,
        ))
        .await
        .unwrap()
        .into_inner();
    (tx, stream)
}

#[track_caller]
fn refused<T: std::fmt::Debug>(result: Result<T, tonic::Status>, code: tonic::Code, message: &str) {
    let status = result.expect_err("refused");
    assert_eq!((status.code(), status.message()), (code, message));
}

const DENIED: &str = "etcdserver: permission denied";

async fn put(b: &Battery, token: &str, key: &str) -> Result<pb::PutResponse, tonic::Status> {
    KvClient::new(b.channel.clone())
        .put(with_token(
            pb::PutRequest {
                key: key.as_bytes().to_vec().into(),
                value: b"v".to_vec().into(),
                ..Default::default()
            },
            token,
        ))
        .await
        .map(|r| r.into_inner())
}

async fn range(
    b: &Battery,
    token: &str,
    key: &str,
    range_end: &str,
) -> Result<pb::RangeResponse, tonic::Status> {
    KvClient::new(b.channel.clone())
        .range(with_token(
            pb::RangeRequest {
                key: key.as_bytes().to_vec().into(),
                range_end: range_end.as_bytes().to_vec().into(),
                ..Default::default()
            },
            token,
        ))
        .await
        .map(|r| r.into_inner())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credentials_are_required_and_checked() {
    let server = common::start(&["--auth-token-ttl=2"]).await;
    let b = setup(&server.endpoint()).await;
    use tonic::Code;
    // No token.
    refused(
        range(&b, "", "a", "").await,
        Code::InvalidArgument,
        "etcdserver: user name is empty",
    );
    refused(
        put(&b, "", "w1").await,
        Code::InvalidArgument,
        "etcdserver: user name is empty",
    );
    // Naming a user through the server's internal certificate metadata
    // does nothing: only a verified client certificate sets it.
    let mut spoof = tonic::Request::new(pb::RangeRequest {
        key: b"a".to_vec().into(),
        ..Default::default()
    });
    spoof
        .metadata_mut()
        .insert("hark-internal-client-cn", "root".parse().unwrap());
    refused(
        KvClient::new(b.channel.clone()).range(spoof).await,
        Code::InvalidArgument,
        "etcdserver: user name is empty",
    );
    // A forged token, a wrong password, an unknown user.
    refused(
        range(&b, "abcdefghijklmnop.1", "a", "").await,
        Code::Unauthenticated,
        "etcdserver: invalid auth token",
    );
    let failed = "etcdserver: authentication failed, invalid user ID or password";
    refused(
        authenticate(&b.channel, "alice", "wrong").await,
        Code::InvalidArgument,
        failed,
    );
    refused(
        authenticate(&b.channel, "mallory", "x").await,
        Code::InvalidArgument,
        failed,
    );
    // `Bearer ` in `authorization` works as the bare token does.
    let mut bearer = tonic::Request::new(pb::RangeRequest {
        key: b"a".to_vec().into(),
        ..Default::default()
    });
    bearer.metadata_mut().insert(
        "authorization",
        format!("Bearer {}", b.alice).parse().unwrap(),
    );
    KvClient::new(b.channel.clone())
        .range(bearer)
        .await
        .unwrap();
    // An expired token: its TTL (2 s) runs from its last use.
    tokio::time::sleep(Duration::from_millis(1200)).await;
    range(&b, &b.alice, "a", "").await.unwrap();
    tokio::time::sleep(Duration::from_millis(1200)).await;
    range(&b, &b.alice, "a", "")
        .await
        .expect("each use starts the TTL again");
    tokio::time::sleep(Duration::from_millis(2500)).await;
    refused(
        range(&b, &b.alice, "a", "").await,
        Code::Unauthenticated,
        "etcdserver: invalid auth token",
    );
    refused(
        range(&b, &b.root, "a", "").await,
        Code::Unauthenticated,
        "etcdserver: invalid auth token",
    );
    // The server still serves a fresh login.
    let alice = authenticate(&b.channel, "alice", "alicepw").await.unwrap();
    range(&b, &alice, "a", "").await.unwrap();
    server.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn key_permissions_hold_for_every_request_kind() {
    let server = common::start(&[]).await;
    let b = setup(&server.endpoint()).await;
    use tonic::Code;
    let mut kv = KvClient::new(b.channel.clone());
    put(&b, &b.root, "secret").await.unwrap();
    // Reads: within [a, c) yes; a range past it, a prefix over a point
    // grant, a from-key over a point grant: no.
    range(&b, &b.alice, "a", "c").await.unwrap();
    refused(
        range(&b, &b.alice, "a", "d").await,
        Code::PermissionDenied,
        DENIED,
    );
    range(&b, &b.alice, "p", "").await.unwrap();
    refused(
        range(&b, &b.alice, "p", "q").await,
        Code::PermissionDenied,
        DENIED,
    );
    refused(
        range(&b, &b.alice, "p", "\0").await,
        Code::PermissionDenied,
        DENIED,
    );
    refused(
        range(&b, &b.alice, "\0", "\0").await,
        Code::PermissionDenied,
        DENIED,
    );
    // Writes, and prev_kv reads what it returns.
    put(&b, &b.alice, "w1").await.unwrap();
    refused(put(&b, &b.alice, "a").await, Code::PermissionDenied, DENIED);
    // A forbidden write hidden in a nested txn branch refuses the whole txn.
    let before = range(&b, &b.root, "secret", "")
        .await
        .unwrap()
        .header
        .unwrap()
        .revision;
    let forbidden = pb::RequestOp {
        request: Some(pb::request_op::Request::RequestPut(pb::PutRequest {
            key: b"secret".to_vec().into(),
            value: b"stolen".to_vec().into(),
            ..Default::default()
        })),
    };
    let nested = pb::TxnRequest {
        compare: vec![],
        success: vec![],
        failure: vec![pb::RequestOp {
            request: Some(pb::request_op::Request::RequestTxn(pb::TxnRequest {
                success: vec![forbidden],
                ..Default::default()
            })),
        }],
    };
    refused(
        kv.txn(with_token(nested, &b.alice)).await,
        Code::PermissionDenied,
        DENIED,
    );
    // A compare reads its key.
    let compare = pb::TxnRequest {
        compare: vec![pb::Compare {
            key: b"secret".to_vec().into(),
            target: pb::compare::CompareTarget::Version as i32,
            target_union: Some(pb::compare::TargetUnion::Version(0)),
            ..Default::default()
        }],
        ..Default::default()
    };
    refused(
        kv.txn(with_token(compare, &b.alice)).await,
        Code::PermissionDenied,
        DENIED,
    );
    let after = range(&b, &b.root, "secret", "").await.unwrap();
    assert_eq!(
        after.header.unwrap().revision,
        before,
        "nothing was written"
    );
    assert_eq!(&after.kvs[0].value[..], b"v");
    server.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watches_are_checked_at_create_against_the_range_as_sent() {
    let server = common::start(&[]).await;
    let b = setup(&server.endpoint()).await;
    let (tx, mut stream) = watch_stream(&b, &b.alice).await;
    let create = |key: &str, end: &str| pb::WatchRequest {
        request_union: Some(pb::watch_request::RequestUnion::CreateRequest(
            pb::WatchCreateRequest {
                key: key.as_bytes().to_vec().into(),
                range_end: end.as_bytes().to_vec().into(),
                ..Default::default()
            },
        )),
    };
    let reason = "rpc error: code = PermissionDenied desc = etcdserver: permission denied";
    // GHSA-xg4h-6gfc-h4m8: read on "p" alone does not allow watching from "p".
    for (key, end) in [("p", "\0"), ("p", "q"), ("", "\0"), ("a", "d")] {
        tx.send(create(key, end)).await.unwrap();
        let r = stream.message().await.unwrap().unwrap();
        assert!(r.created && r.canceled, "{key:?}..{end:?}: {r:?}");
        assert_eq!((r.watch_id, r.cancel_reason.as_str()), (-1, reason));
    }
    // A permitted create still gets the stream's first id.
    tx.send(create("p", "")).await.unwrap();
    let r = stream.message().await.unwrap().unwrap();
    assert!(r.created && !r.canceled, "{r:?}");
    assert_eq!(r.watch_id, 0);
    put(&b, &b.root, "p").await.unwrap();
    let r = stream.message().await.unwrap().unwrap();
    assert_eq!(&r.events[0].kv.as_ref().unwrap().key[..], b"p");
    server.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leases_and_admin_calls_need_their_permissions() {
    let server = common::start(&[]).await;
    let b = setup(&server.endpoint()).await;
    use tonic::Code;
    let mut lease = LeaseClient::new(b.channel.clone());
    let id = lease
        .lease_grant(with_token(
            pb::LeaseGrantRequest { ttl: 60, id: 0 },
            &b.root,
        ))
        .await
        .unwrap()
        .into_inner()
        .id;
    let mut kv = KvClient::new(b.channel.clone());
    kv.put(with_token(
        pb::PutRequest {
            key: b"secret".to_vec().into(),
            value: b"v".to_vec().into(),
            lease: id,
            ..Default::default()
        },
        &b.root,
    ))
    .await
    .unwrap();
    // Any user may grant a lease of its own.
    lease
        .lease_grant(with_token(
            pb::LeaseGrantRequest { ttl: 60, id: 0 },
            &b.alice,
        ))
        .await
        .unwrap();
    // Lease calls on a lease holding a key outside alice's permission.
    refused(
        lease
            .lease_revoke(with_token(pb::LeaseRevokeRequest { id }, &b.alice))
            .await,
        Code::PermissionDenied,
        DENIED,
    );
    refused(
        lease
            .lease_time_to_live(with_token(
                pb::LeaseTimeToLiveRequest { id, keys: true },
                &b.alice,
            ))
            .await,
        Code::PermissionDenied,
        DENIED,
    );
    refused(
        lease
            .lease_leases(with_token(pb::LeaseLeasesRequest {}, &b.alice))
            .await,
        Code::PermissionDenied,
        DENIED,
    );
    refused(
        kv.put(with_token(
            pb::PutRequest {
                key: b"w1".to_vec().into(),
                value: b"v".to_vec().into(),
                lease: id,
                ..Default::default()
            },
            &b.alice,
        ))
        .await,
        Code::PermissionDenied,
        DENIED,
    );
    let (tx, rx) = tokio::sync::mpsc::channel(1);
    tx.send(pb::LeaseKeepAliveRequest { id }).await.unwrap();
    let mut keep = lease
        .lease_keep_alive(with_token(
            tokio_stream::wrappers::ReceiverStream::new(rx),
            &b.alice,
        ))
        .await
        .unwrap()
        .into_inner();
    refused(keep.message().await, Code::PermissionDenied, DENIED);
    // Without keys, TimeToLive needs only a user.
    lease
        .lease_time_to_live(with_token(
            pb::LeaseTimeToLiveRequest { id, keys: false },
            &b.alice,
        ))
        .await
        .unwrap();

    // Admin-only calls, refused to alice.
    let mut m = MaintenanceClient::new(b.channel.clone());
    refused(
        kv.compact(with_token(
            pb::CompactionRequest {
                revision: 1,
                physical: false,
            },
            &b.alice,
        ))
        .await,
        Code::PermissionDenied,
        DENIED,
    );
    refused(
        m.defragment(with_token(pb::DefragmentRequest {}, &b.alice))
            .await,
        Code::PermissionDenied,
        DENIED,
    );
    refused(
        m.hash(with_token(pb::HashRequest {}, &b.alice)).await,
        Code::PermissionDenied,
        DENIED,
    );
    refused(
        m.hash_kv(with_token(pb::HashKvRequest { revision: 0 }, &b.alice))
            .await,
        Code::PermissionDenied,
        DENIED,
    );
    refused(
        m.snapshot(with_token(pb::SnapshotRequest {}, &b.alice))
            .await,
        Code::PermissionDenied,
        DENIED,
    );
    refused(
        m.move_leader(with_token(pb::MoveLeaderRequest { target_id: 1 }, &b.alice))
            .await,
        Code::PermissionDenied,
        DENIED,
    );
    let activate = pb::AlarmRequest {
        action: pb::alarm_request::AlarmAction::Activate as i32,
        member_id: 1,
        alarm: pb::AlarmType::Nospace as i32,
    };
    refused(
        m.alarm(with_token(activate, &b.alice)).await,
        Code::PermissionDenied,
        DENIED,
    );
    let mut cluster = pb::cluster_client::ClusterClient::new(b.channel.clone());
    refused(
        cluster
            .member_add(with_token(
                pb::MemberAddRequest {
                    peer_ur_ls: vec!["http://127.0.0.1:1".into()],
                    is_learner: true,
                },
                &b.alice,
            ))
            .await,
        Code::PermissionDenied,
        DENIED,
    );
    let mut auth = AuthClient::new(b.channel.clone());
    // etcd 3.7 tells anyone whether auth is on (3.5 wanted root).
    let status = auth
        .auth_status(with_token(pb::AuthStatusRequest {}, &b.alice))
        .await
        .unwrap()
        .into_inner();
    assert!(status.enabled);
    refused(
        auth.user_list(with_token(pb::AuthUserListRequest {}, &b.alice))
            .await,
        Code::PermissionDenied,
        DENIED,
    );
    refused(
        auth.role_grant_permission(with_token(
            pb::AuthRoleGrantPermissionRequest {
                name: "r".into(),
                perm: perm(2, "\0", "\0"),
            },
            &b.alice,
        ))
        .await,
        Code::PermissionDenied,
        DENIED,
    );
    // Any authenticated user: Status, MemberList, alarm listing.
    m.status(with_token(pb::StatusRequest {}, &b.alice))
        .await
        .unwrap();
    cluster
        .member_list(with_token(
            pb::MemberListRequest {
                linearizable: false,
            },
            &b.alice,
        ))
        .await
        .unwrap();
    let get = pb::AlarmRequest {
        action: pb::alarm_request::AlarmAction::Get as i32,
        ..Default::default()
    };
    m.alarm(with_token(get, &b.alice)).await.unwrap();
    refused(
        m.status(with_token(pb::StatusRequest {}, "")).await,
        Code::InvalidArgument,
        "etcdserver: user name is empty",
    );
    // Root may do all of it, and the server kept serving throughout.
    kv.compact(with_token(
        pb::CompactionRequest {
            revision: 1,
            physical: false,
        },
        &b.root,
    ))
    .await
    .unwrap();
    m.hash_kv(with_token(pb::HashKvRequest { revision: 0 }, &b.root))
        .await
        .unwrap();
    auth.auth_status(with_token(pb::AuthStatusRequest {}, &b.root))
        .await
        .unwrap();
    range(&b, &b.alice, "a", "").await.unwrap();
    server.server.shutdown().await;
}

/// One JSON gateway call with curl: (HTTP status, body).
fn gateway_raw(endpoint: &str, path: &str, body: &str, token: Option<&str>) -> (String, String) {
    let mut cmd = Command::new("curl");
    cmd.args(["-s", "-w", "\n%{http_code}", "-X", "POST"])
        .arg(format!("{endpoint}{path}"))
        .args(["-d", body]);
    if let Some(token) = token {
        cmd.args(["-H", &format!("Authorization: {token}")]);
    }
    let out = String::from_utf8(cmd.output().unwrap().stdout).unwrap();
    let (body, code) = out.rsplit_once('\n').unwrap();
    (code.to_string(), body.to_string())
}

/// [`gateway_raw`] with the header and the token masked, for comparing.
fn gateway(endpoint: &str, path: &str, body: &str, token: Option<&str>) -> (String, String) {
    let (code, body) = gateway_raw(endpoint, path, body, token);
    let header = regex::Regex::new(r#""header":\{[^}]*\}"#).unwrap();
    let token = regex::Regex::new(r#""token":"[^"]*""#).unwrap();
    let body = header.replace_all(&body, r#""header":{}"#);
    let body = token.replace_all(&body, r#""token":"<token>""#);
    (code, body.into_owned())
}

fn token_of(body: &str) -> String {
    let v: serde_json::Value = serde_json::from_str(body).unwrap();
    v["token"].as_str().unwrap().to_string()
}

#[test]
fn the_json_gateway_authenticates_like_etcds() {
    let Some(etcd_bin) = common::etcd::tool("etcd-3.5") else {
        return;
    };
    if common::find_on_path("curl").is_none() {
        assert!(
            std::env::var("HARK_REQUIRE_ETCDCTL").as_deref() != Ok("1"),
            "want curl"
        );
        return;
    }
    let script = |endpoint: &str| -> Vec<(String, String)> {
        let mut out = Vec::new();
        let mut call = |path: &str, body: &str, token: Option<&str>| {
            let r = gateway(endpoint, path, body, token);
            out.push(r.clone());
            r
        };
        call(
            "/v3/auth/user/add",
            r#"{"name":"root","password":"pw"}"#,
            None,
        );
        call(
            "/v3/auth/user/grant",
            r#"{"user":"root","role":"root"}"#,
            None,
        );
        call("/v3/auth/enable", "{}", None);
        call("/v3/kv/range", r#"{"key":"YQ=="}"#, None);
        call(
            "/v3/auth/authenticate",
            r#"{"name":"root","password":"bad"}"#,
            None,
        );
        let (_, body) = gateway_raw(
            endpoint,
            "/v3/auth/authenticate",
            r#"{"name":"root","password":"pw"}"#,
            None,
        );
        let token = token_of(&body);
        call(
            "/v3/kv/put",
            r#"{"key":"YQ==","value":"MQ=="}"#,
            Some(&token),
        );
        call("/v3/kv/range", r#"{"key":"YQ=="}"#, Some(&token));
        call("/v3/kv/range", r#"{"key":"YQ=="}"#, Some("forged.1"));
        call("/v3/auth/status", "{}", Some(&token));
        call("/v3/auth/user/list", "{}", Some(&token));
        out
    };
    let etcd = common::etcd::Etcd::start(&etcd_bin);
    let want = script(&etcd.endpoint);
    drop(etcd);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let hark = rt.block_on(common::start(&[]));
    let got = script(&hark.endpoint());
    rt.block_on(hark.server.shutdown());
    for (i, (w, g)) in want.iter().zip(&got).enumerate() {
        assert_eq!(w, g, "step {i}");
    }
}

/// The claims of a JWT (its middle part), unverified.
fn jwt_claims(token: &str) -> serde_json::Value {
    use base64::Engine;
    let payload = token.split('.').nth(1).expect("a JWT");
    let json = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .unwrap();
    serde_json::from_slice(&json).unwrap()
}

#[test]
fn jwt_tokens_from_etcd_work_on_hark_and_back() {
    let Some(etcd_bin) = common::etcd::tool("etcd-3.5") else {
        return;
    };
    let Some(ctl) = common::etcd::tool("etcdctl-3.5") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let private = tmp.path().join("jwt.key");
    let public = tmp.path().join("jwt.pub");
    let openssl = |args: &[&str]| {
        let out = Command::new("openssl")
            .args(args)
            .output()
            .expect("openssl");
        assert!(out.status.success(), "{args:?}");
    };
    openssl(&["genrsa", "-out", private.to_str().unwrap(), "2048"]);
    openssl(&[
        "rsa",
        "-in",
        private.to_str().unwrap(),
        "-pubout",
        "-out",
        public.to_str().unwrap(),
    ]);
    let flag = format!(
        "--auth-token=jwt,pub-key={},priv-key={},sign-method=RS256,ttl=10m",
        public.display(),
        private.display()
    );
    let etcd = common::etcd::Etcd::start_with(&etcd_bin, std::slice::from_ref(&flag));
    let rt = tokio::runtime::Runtime::new().unwrap();
    let hark = rt.block_on(common::start(&[&flag]));
    let endpoints = [etcd.endpoint.clone(), hark.endpoint()];
    let mut alice_tokens = Vec::new();
    for endpoint in &endpoints {
        for (path, body) in [
            ("/v3/auth/user/add", r#"{"name":"root","password":"pw"}"#),
            ("/v3/auth/user/grant", r#"{"user":"root","role":"root"}"#),
            (
                "/v3/auth/user/add",
                r#"{"name":"alice","password":"alicepw"}"#,
            ),
            ("/v3/auth/role/add", r#"{"name":"r"}"#),
            (
                "/v3/auth/role/grant",
                r#"{"name":"r","perm":{"permType":"READ","key":"YQ=="}}"#,
            ),
            ("/v3/auth/user/grant", r#"{"user":"alice","role":"r"}"#),
            ("/v3/auth/enable", "{}"),
        ] {
            let (code, out) = gateway(endpoint, path, body, None);
            assert_eq!(code, "200", "{endpoint}{path}: {out}");
        }
        let (_, out) = gateway_raw(
            endpoint,
            "/v3/auth/authenticate",
            r#"{"name":"root","password":"pw"}"#,
            None,
        );
        let root = token_of(&out);
        let (code, out) = gateway(
            endpoint,
            "/v3/kv/put",
            r#"{"key":"YQ==","value":"MQ=="}"#,
            Some(&root),
        );
        assert_eq!(code, "200", "{out}");
        let (_, out) = gateway_raw(
            endpoint,
            "/v3/auth/authenticate",
            r#"{"name":"alice","password":"alicepw"}"#,
            None,
        );
        alice_tokens.push(token_of(&out));
    }
    // The same claims from both (the auth revisions agree), each signed.
    let (etcd_claims, hark_claims) = (jwt_claims(&alice_tokens[0]), jwt_claims(&alice_tokens[1]));
    assert_eq!(etcd_claims["username"], "alice");
    assert_eq!(hark_claims["username"], "alice");
    assert_eq!(etcd_claims["revision"], hark_claims["revision"]);
    let ttl = hark_claims["exp"].as_i64().unwrap() - etcd_claims["exp"].as_i64().unwrap();
    assert!(
        ttl.abs() <= 5,
        "both expire in 10m: {etcd_claims} {hark_claims}"
    );

    // Each token works on both servers: etcd verifies Hark's signature and
    // Hark verifies etcd's. Alice reads "a" and nothing else.
    for endpoint in &endpoints {
        for token in &alice_tokens {
            let (code, out) = gateway(endpoint, "/v3/kv/range", r#"{"key":"YQ=="}"#, Some(token));
            assert!(
                code == "200" && out.contains("MQ=="),
                "{endpoint}: {code} {out}"
            );
            let (code, out) = gateway(endpoint, "/v3/kv/range", r#"{"key":"Yg=="}"#, Some(token));
            assert!(
                code == "403" && out.contains("etcdserver: permission denied"),
                "{endpoint}: {code} {out}"
            );
        }
    }
    // etcdctl authenticates and gets a JWT from Hark like from etcd.
    for endpoint in &endpoints {
        let out = Command::new(&ctl)
            .args([
                &format!("--endpoints={endpoint}"),
                "--user=alice:alicepw",
                "get",
                "a",
            ])
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "a\n1\n", "{endpoint}");
    }
    // An auth change on Hark: etcd's token (and Hark's) is now old there.
    let (_, out) = gateway_raw(
        &endpoints[1],
        "/v3/auth/authenticate",
        r#"{"name":"root","password":"pw"}"#,
        None,
    );
    let (code, _) = gateway(
        &endpoints[1],
        "/v3/auth/role/add",
        r#"{"name":"x"}"#,
        Some(&token_of(&out)),
    );
    assert_eq!(code, "200");
    for token in &alice_tokens {
        let (code, out) = gateway(
            &endpoints[1],
            "/v3/kv/range",
            r#"{"key":"YQ=="}"#,
            Some(token),
        );
        assert!(
            code == "400" && out.contains("revision of auth store is old"),
            "{code} {out}"
        );
    }
    drop(etcd);
    rt.block_on(hark.server.shutdown());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn response_headers_carry_the_auth_revision_while_auth_is_enabled() {
    let server = common::start(&[]).await;
    let endpoint = server.endpoint();
    // Disabled: 0, so the header encodes exactly as etcd's.
    let mut plain = common::client(&endpoint).await;
    let header = plain.put("k", "v", None).await.unwrap().header().cloned();
    let channel = Channel::from_shared(endpoint.clone())
        .unwrap()
        .connect()
        .await
        .unwrap();
    let before = KvClient::new(channel.clone())
        .range(pb::RangeRequest {
            key: b"k".to_vec().into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(before.header.unwrap().hark_auth_revision, 0, "{header:?}");

    let b = setup(&endpoint).await;
    let status = AuthClient::new(b.channel.clone())
        .auth_status(with_token(pb::AuthStatusRequest {}, &b.root))
        .await
        .unwrap()
        .into_inner();
    let revision = status.auth_revision;
    assert!(revision > 1, "{status:?}");
    assert_eq!(status.header.unwrap().hark_auth_revision, revision);
    let read = range(&b, &b.alice, "a", "").await.unwrap();
    assert_eq!(read.header.unwrap().hark_auth_revision, revision);
    let write = put(&b, &b.root, "z").await.unwrap();
    assert_eq!(write.header.unwrap().hark_auth_revision, revision);

    // A permission change raises it; the next answer says so.
    AuthClient::new(b.channel.clone())
        .role_add(with_token(
            pb::AuthRoleAddRequest { name: "x".into() },
            &b.root,
        ))
        .await
        .unwrap();
    let read = range(&b, &b.alice, "a", "").await.unwrap();
    assert_eq!(read.header.unwrap().hark_auth_revision, revision + 1);

    // Watch responses carry it too.
    let (tx, mut stream) = watch_stream(&b, &b.alice).await;
    tx.send(pb::WatchRequest {
        request_union: Some(pb::watch_request::RequestUnion::CreateRequest(
            pb::WatchCreateRequest {
                key: b"a".to_vec().into(),
                ..Default::default()
            },
        )),
    })
    .await
    .unwrap();
    let created = stream.message().await.unwrap().unwrap();
    assert!(created.created, "{created:?}");
    assert_eq!(created.header.unwrap().hark_auth_revision, revision + 1);
    drop(tx);
    server.server.shutdown().await;
}

/// curl against the Consul API: (HTTP status, body).
fn consul(method: &str, url: &str, headers: &[String], body: Option<&str>) -> (String, String) {
    let mut cmd = Command::new("curl");
    cmd.args(["-s", "-w", "\n%{http_code}", "-X", method, url]);
    for h in headers {
        cmd.args(["-H", h]);
    }
    if let Some(body) = body {
        cmd.args(["--data-binary", body]);
    }
    let out = String::from_utf8(cmd.output().unwrap().stdout).unwrap();
    let (body, code) = out.rsplit_once('\n').unwrap();
    (code.to_string(), body.to_string())
}

/// The member's watchers, from /metrics.
fn watchers(addr: std::net::SocketAddr) -> String {
    let (_, metrics) = common::http_get(addr, "/metrics");
    metrics
        .lines()
        .find(|l| l.starts_with("etcd_debugging_mvcc_watcher_total "))
        .unwrap_or_default()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_consul_api_takes_consul_tokens_under_auth() {
    if common::find_on_path("curl").is_none() {
        assert!(
            std::env::var("HARK_REQUIRE_ETCDCTL").as_deref() != Ok("1"),
            "want curl"
        );
        return;
    }
    let server = common::start(&[]).await;
    let endpoint = server.endpoint();
    let addr = server.server.client_addrs[0];
    let b = setup(&endpoint).await;
    let alice = b.alice.clone();
    let url = |path: &str| format!("{endpoint}{path}");
    let as_header = vec![format!("X-Consul-Token: {alice}")];
    let as_bearer = vec![format!("Authorization: Bearer {alice}")];

    // Anonymous: refused, as the gRPC call it makes would be.
    let (code, body) = tokio::task::spawn_blocking({
        let u = url("/v1/kv/w1");
        move || consul("PUT", &u, &[], Some("v1"))
    })
    .await
    .unwrap();
    assert!(
        code != "200" && body.contains("user name is empty"),
        "{code} {body}"
    );
    // Alice's token, three ways; within her permissions and outside them.
    let (code, body) = tokio::task::spawn_blocking({
        let (u, h) = (url("/v1/kv/w1"), as_header.clone());
        move || consul("PUT", &u, &h, Some("v1"))
    })
    .await
    .unwrap();
    assert_eq!((code.as_str(), body.as_str()), ("200", "true"));
    let (code, body) = tokio::task::spawn_blocking({
        let (u, h) = (url("/v1/kv/w1?raw"), as_bearer.clone());
        move || consul("GET", &u, &h, None)
    })
    .await
    .unwrap();
    assert_eq!((code.as_str(), body.as_str()), ("200", "v1"));
    let (code, body) = tokio::task::spawn_blocking({
        let u = url(&format!("/v1/kv/w1?raw&token={alice}"));
        move || consul("GET", &u, &[], None)
    })
    .await
    .unwrap();
    assert_eq!((code.as_str(), body.as_str()), ("200", "v1"));
    for (method, path) in [
        ("PUT", "/v1/kv/z"),
        ("GET", "/v1/kv/z"),
        ("GET", "/v1/kv/?recurse"),
    ] {
        let (code, body) = tokio::task::spawn_blocking({
            let (u, h) = (url(path), as_header.clone());
            move || consul(method, &u, &h, Some("x"))
        })
        .await
        .unwrap();
        assert!(
            code == "403" && body.contains("permission denied"),
            "{method} {path}: {code} {body}"
        );
    }
    let (code, body) = tokio::task::spawn_blocking({
        let (u, h) = (url("/v1/txn"), as_header.clone());
        move || {
            consul(
                "PUT",
                &u,
                &h,
                Some(r#"[{"KV":{"Verb":"set","Key":"w2","Value":"dg=="}},{"KV":{"Verb":"set","Key":"z","Value":"dg=="}}]"#),
            )
        }
    })
    .await
    .unwrap();
    assert!(
        code == "403" && body.contains("permission denied"),
        "{code} {body}"
    );

    // A blocking query parks with Alice's token and wakes at a change.
    let index = put(&b, &b.root, "w1")
        .await
        .unwrap()
        .header
        .unwrap()
        .revision;
    let parked = tokio::task::spawn_blocking({
        let (u, h) = (
            url(&format!("/v1/kv/w1?index={index}&wait=20s")),
            as_header.clone(),
        );
        move || {
            let started = std::time::Instant::now();
            (consul("GET", &u, &h, None), started.elapsed())
        }
    });
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while watchers(addr) != "etcd_debugging_mvcc_watcher_total 1" {
        assert!(
            std::time::Instant::now() < deadline && !parked.is_finished(),
            "the query did not park: {}",
            watchers(addr)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    put(&b, &b.root, "w1").await.unwrap();
    let ((code, _), took) = parked.await.unwrap();
    assert_eq!(code, "200");
    assert!(took < Duration::from_secs(10), "woken by the put: {took:?}");
    // Its stream closed with its last request.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while watchers(addr) != "etcd_debugging_mvcc_watcher_total 0" {
        assert!(std::time::Instant::now() < deadline, "{}", watchers(addr));
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // A blocking query outside her permissions is refused at once.
    let (code, _) = tokio::task::spawn_blocking({
        let (u, h) = (
            url(&format!("/v1/kv/z?index={index}&wait=20s")),
            as_header.clone(),
        );
        move || consul("GET", &u, &h, None)
    })
    .await
    .unwrap();
    assert_eq!(code, "403");
    server.server.shutdown().await;
}
