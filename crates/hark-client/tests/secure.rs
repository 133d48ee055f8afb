//! The client over TLS with a user: it authenticates at connect, renews a
//! dead token by itself for calls and for watches (etcd#12385: a long-lived
//! watch must outlive its token), and refuses a wrong password.

mod common;

use std::time::Duration;

use hark_client::{Client, ConnectOptions, TlsOptions, pb};
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};

/// A CA and a server certificate for 127.0.0.1, written to `dir`.
fn certificates(dir: &std::path::Path) -> Vec<u8> {
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
    let key = KeyPair::generate().unwrap();
    let cert = CertificateParams::new(vec!["127.0.0.1".to_string()])
        .unwrap()
        .signed_by(&key, &ca)
        .unwrap();
    std::fs::write(dir.join("server.pem"), cert.pem()).unwrap();
    std::fs::write(dir.join("server.key"), key.serialize_pem()).unwrap();
    ca.pem().into_bytes()
}

async fn enable_auth(plain: &str) {
    use pb::auth_client::AuthClient;
    let channel = tonic::transport::Channel::from_shared(plain.to_string())
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut auth = AuthClient::new(channel);
    auth.user_add(pb::AuthUserAddRequest {
        name: "root".into(),
        password: "rootpw".into(),
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
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_and_a_user_with_tokens_renewed_for_calls_and_watches() {
    let pki = tempfile::tempdir().unwrap();
    let ca = certificates(pki.path());
    let cert = format!("--cert-file={}", pki.path().join("server.pem").display());
    let key = format!("--key-file={}", pki.path().join("server.key").display());
    let (server, _dir) = common::server(&[
        "--listen-client-urls=https://127.0.0.1:0",
        &cert,
        &key,
        "--auth-token-ttl=1",
        "--bcrypt-cost=4",
    ])
    .await;
    let endpoints = server.endpoints();
    let plain = endpoints.iter().find(|e| e.starts_with("http://")).unwrap();
    let https = endpoints
        .iter()
        .find(|e| e.starts_with("https://"))
        .unwrap();
    enable_auth(plain).await;

    let tls = TlsOptions {
        ca_pem: Some(ca),
        ..Default::default()
    };
    let options = |password: &str| ConnectOptions {
        user: Some(("root".into(), password.into())),
        tls: Some(tls.clone()),
        ..Default::default()
    };
    let wrong = Client::connect_with([https], options("wrong")).await;
    let message = wrong.err().expect("a wrong password fails").to_string();
    assert!(message.contains("authentication failed"), "{message}");

    let client = Client::connect_with([https], options("rootpw"))
        .await
        .unwrap();
    client.put("a", "1").await.unwrap();
    let mut first = client.watch("k", Default::default()).await.unwrap();
    // The token dies (TTL 1 s from its last use); calls renew it by themselves.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let got = client.get("a").await.unwrap();
    assert_eq!(&got.kvs[0].value[..], b"1");

    // Let it die again, then create a watch on the same stream: the stream's
    // token is refused, the client renews it and opens a new stream, every
    // watch created again from where it stopped: nothing lost, nothing twice.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    // From the next revision: its create may land after the puts below.
    let next = got.header.unwrap().revision + 1;
    let from_next = hark_client::WatchOptions::default().from_revision(next);
    let mut second = client.watch("k", from_next).await.unwrap();
    for v in ["x", "y"] {
        client.put("k", v).await.unwrap();
    }
    for watch in [&mut first, &mut second] {
        let mut values = Vec::new();
        while values.len() < 2 {
            let update = tokio::time::timeout(Duration::from_secs(10), watch.next())
                .await
                .unwrap_or_else(|_| panic!("events arrive; got {values:?}"))
                .expect("the watch lives")
                .unwrap();
            values.extend(
                update
                    .events
                    .iter()
                    .map(|e| e.kv.as_ref().unwrap().value.to_vec()),
            );
        }
        assert_eq!(values, vec![b"x".to_vec(), b"y".to_vec()]);
    }

    // insecure_skip_verify reaches the server with no CA at all.
    let skip = ConnectOptions {
        user: Some(("root".into(), "rootpw".into())),
        tls: Some(TlsOptions {
            insecure_skip_verify: true,
            ..Default::default()
        }),
        ..Default::default()
    };
    let unverified = Client::connect_with([https], skip).await.unwrap();
    unverified.get("a").await.unwrap();
    // Without TLS options an https:// endpoint still needs a CA.
    let err = Client::connect_with([https], ConnectOptions::default()).await;
    assert!(err.err().unwrap().to_string().contains("CA"));
    server.shutdown().await;
}
