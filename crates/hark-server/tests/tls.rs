//! TLS as users meet it: etcdctl 3.4 and 3.5 over mutual TLS (certificates
//! made here with rcgen), the client certificate's common name as the user
//! under auth (a token wins), refusals (no certificate, a revoked one,
//! plaintext against the TLS port), a stalled handshake that holds up
//! nobody, certificate rotation without a restart, and --auto-tls; three
//! `hark` processes over mutual peer TLS (and over --peer-auto-tls), with
//! plaintext, certificate-less and wrong-name dialers refused at a peer port;
//! and the same set up by the TLS blocks of an etcd YAML `--config-file`;
//! and a member started with kubeadm's etcd arguments (3.5 and 3.6 forms).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use rcgen::{
    BasicConstraints, CertificateParams, CertificateRevocationListParams, CertifiedIssuer, DnType,
    ExtendedKeyUsagePurpose, IsCa, KeyIdMethod, KeyPair, KeyUsagePurpose, RevokedCertParams,
    SerialNumber, date_time_ymd,
};

struct Pki {
    dir: tempfile::TempDir,
}

impl Pki {
    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn path_str(&self, name: &str) -> String {
        self.path(name).display().to_string()
    }
}

fn write(path: &Path, body: &str) {
    std::fs::write(path, body).unwrap();
}

/// A CA, a server certificate for 127.0.0.1 (`server.pem`, and a second
/// one, `server2.pem`, for rotation), client certificates for root, alice
/// and mallory, a CRL revoking mallory's, and peer certificates (server and
/// client) named "hark peer" and "stranger".
fn pki() -> Pki {
    let dir = tempfile::tempdir().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "hark test CA");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
    write(&dir.path().join("ca.pem"), &ca.pem());
    let leaf = |name: &str, cn: &str, serial: u64, server: bool| {
        let sans = if server {
            vec!["127.0.0.1".to_string(), "localhost".to_string()]
        } else {
            vec![]
        };
        let mut params = CertificateParams::new(sans).unwrap();
        params.distinguished_name.push(DnType::CommonName, cn);
        params.serial_number = Some(SerialNumber::from(serial));
        params.extended_key_usages = vec![if server {
            ExtendedKeyUsagePurpose::ServerAuth
        } else {
            ExtendedKeyUsagePurpose::ClientAuth
        }];
        let key = KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &ca).unwrap();
        write(&dir.path().join(format!("{name}.pem")), &cert.pem());
        write(
            &dir.path().join(format!("{name}.key")),
            &key.serialize_pem(),
        );
    };
    leaf("server", "server one", 1, true);
    leaf("server2", "server two", 2, true);
    leaf("root", "root", 3, false);
    leaf("alice", "alice", 4, false);
    leaf("mallory", "mallory", 5, false);
    // Peer certificates serve and dial, so they carry both usages.
    for (name, cn, serial) in [("peer", "hark peer", 6), ("stranger", "stranger", 7)] {
        let mut params =
            CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".to_string()]).unwrap();
        params.distinguished_name.push(DnType::CommonName, cn);
        params.serial_number = Some(SerialNumber::from(serial));
        params.extended_key_usages = vec![
            ExtendedKeyUsagePurpose::ServerAuth,
            ExtendedKeyUsagePurpose::ClientAuth,
        ];
        let key = KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &ca).unwrap();
        write(&dir.path().join(format!("{name}.pem")), &cert.pem());
        write(
            &dir.path().join(format!("{name}.key")),
            &key.serialize_pem(),
        );
    }
    let crl = CertificateRevocationListParams {
        this_update: date_time_ymd(2020, 1, 1),
        next_update: date_time_ymd(2099, 1, 1),
        crl_number: SerialNumber::from(1u64),
        issuing_distribution_point: None,
        revoked_certs: vec![RevokedCertParams {
            serial_number: SerialNumber::from(5u64),
            revocation_time: date_time_ymd(2021, 1, 1),
            reason_code: None,
            invalidity_date: None,
        }],
        key_identifier_method: KeyIdMethod::Sha256,
    }
    .signed_by(&ca)
    .unwrap();
    write(&dir.path().join("crl.pem"), &crl.pem().unwrap());
    // The same CRL in DER, the form CAs publish (etcd's fixtures are DER).
    std::fs::write(dir.path().join("crl.der"), crl.der()).unwrap();
    write(&dir.path().join("not-a-crl"), "not a CRL\n");
    // Self-signed CAs named "root" used as clients' own certificates (as
    // etcd's e2e fixture CommonName-root.crt is): one trusted, one not.
    for name in ["root-ca", "rogue-ca"] {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.distinguished_name.push(DnType::CommonName, "root");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.extended_key_usages = vec![
            ExtendedKeyUsagePurpose::ServerAuth,
            ExtendedKeyUsagePurpose::ClientAuth,
        ];
        let key = KeyPair::generate().unwrap();
        let cert = params.self_signed(&key).unwrap();
        write(&dir.path().join(format!("{name}.pem")), &cert.pem());
        write(
            &dir.path().join(format!("{name}.key")),
            &key.serialize_pem(),
        );
    }
    let bundle = std::fs::read_to_string(dir.path().join("ca.pem")).unwrap()
        + &std::fs::read_to_string(dir.path().join("root-ca.pem")).unwrap();
    write(&dir.path().join("ca-and-root-ca.pem"), &bundle);
    Pki { dir }
}

/// etcdctl with TLS flags for `who` (a client certificate name, or none).
fn ctl(bin: &Path, endpoint: &str, pki: &Pki, who: Option<&str>, args: &[&str]) -> (bool, String) {
    let mut cmd = Command::new(bin);
    cmd.env("ETCDCTL_API", "3")
        .arg(format!("--endpoints={endpoint}"))
        .arg(format!("--cacert={}", pki.path_str("ca.pem")))
        .arg("--dial-timeout=2s")
        .arg("--command-timeout=3s");
    if let Some(who) = who {
        cmd.arg(format!("--cert={}", pki.path_str(&format!("{who}.pem"))))
            .arg(format!("--key={}", pki.path_str(&format!("{who}.key"))));
    }
    let out = cmd.args(args).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned()
        + &String::from_utf8_lossy(&out.stderr)
            .lines()
            .filter(|l| !l.starts_with("{\"level\""))
            .collect::<Vec<_>>()
            .join("\n");
    (out.status.success(), text)
}

/// The server's https:// endpoint (the common start also listens on http).
fn https(server: &common::TestServer) -> String {
    server
        .server
        .endpoints()
        .into_iter()
        .find(|e| e.starts_with("https://"))
        .expect("an https:// listener")
}

fn start_args(pki: &Pki) -> Vec<String> {
    vec![
        "--listen-client-urls=https://127.0.0.1:0".into(),
        format!("--cert-file={}", pki.path_str("server.pem")),
        format!("--key-file={}", pki.path_str("server.key")),
        format!("--trusted-ca-file={}", pki.path_str("ca.pem")),
        "--client-cert-auth".into(),
        format!("--client-crl-file={}", pki.path_str("crl.pem")),
    ]
}

async fn start_tls(pki: &Pki) -> common::TestServer {
    let args = start_args(pki);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    common::start(&args).await
}

#[test]
fn etcdctl_over_mutual_tls_with_the_certificate_as_the_user() {
    let ctls: Vec<PathBuf> = ["etcdctl", "etcdctl-3.5"]
        .into_iter()
        .filter_map(common::etcd::tool)
        .collect();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let pki = pki();
    let server = rt.block_on(start_tls(&pki));
    let endpoint = https(&server);
    for bin in &ctls {
        let run = |who, args: &[&str]| ctl(bin, &endpoint, &pki, who, args);
        assert_eq!(
            run(Some("alice"), &["put", "k", "v"]),
            (true, "OK\n".into())
        );
        assert_eq!(run(Some("alice"), &["get", "k"]), (true, "k\nv\n".into()));
        // No certificate, a revoked one, and plaintext: refused.
        assert!(!run(None, &["get", "k"]).0);
        assert!(!run(Some("mallory"), &["get", "k"]).0);
        let plain = endpoint.replace("https://", "http://");
        assert!(!ctl(bin, &plain, &pki, Some("alice"), &["get", "k"]).0);
    }
    // Auth over TLS: the certificate's common name is the user.
    let bin = ctls.last().expect("an etcdctl");
    let run = |who, args: &[&str]| ctl(bin, &endpoint, &pki, who, args);
    for step in [
        &["user", "add", "root:rootpw"][..],
        &["role", "add", "root"],
        &["user", "grant-role", "root", "root"],
        &["user", "add", "alice:alicepw"],
        &["role", "add", "r"],
        &["role", "grant-permission", "r", "read", "k"],
        &["user", "grant-role", "alice", "r"],
        &["auth", "enable"],
    ] {
        let (ok, out) = run(Some("root"), step);
        assert!(ok, "{step:?}: {out}");
    }
    // root by certificate, with no password anywhere.
    assert_eq!(
        run(Some("root"), &["put", "secret", "s"]),
        (true, "OK\n".into())
    );
    assert_eq!(run(Some("alice"), &["get", "k"]), (true, "k\nv\n".into()));
    let (ok, out) = run(Some("alice"), &["get", "secret"]);
    assert!(
        !ok && out.contains("etcdserver: permission denied"),
        "{out}"
    );
    let (ok, out) = run(Some("alice"), &["user", "list"]);
    assert!(
        !ok && out.contains("etcdserver: permission denied"),
        "{out}"
    );
    // A token wins over the certificate.
    assert_eq!(
        run(Some("alice"), &["--user", "root:rootpw", "get", "secret"]),
        (true, "secret\ns\n".into())
    );
    rt.block_on(server.server.shutdown());
}

#[test]
fn a_trusted_ca_alone_requires_a_client_certificate_but_names_no_user() {
    let Some(bin) = common::etcd::tool("etcdctl-3.5") else {
        return;
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let pki = pki();
    let server = rt.block_on(common::start(&[
        "--listen-client-urls=https://127.0.0.1:0",
        &format!("--cert-file={}", pki.path_str("server.pem")),
        &format!("--key-file={}", pki.path_str("server.key")),
        &format!("--trusted-ca-file={}", pki.path_str("ca.pem")),
    ]));
    let endpoint = https(&server);
    let run = |who, args: &[&str]| ctl(&bin, &endpoint, &pki, who, args);
    assert!(!run(None, &["get", "k"]).0, "no certificate, as in etcd");
    for step in [
        &["user", "add", "root:rootpw"][..],
        &["user", "grant-role", "root", "root"],
        &["auth", "enable"],
    ] {
        let (ok, out) = run(Some("alice"), step);
        assert!(ok, "{step:?}: {out}");
    }
    // Without --client-cert-auth the certificate's name is not the user
    // (etcd's ClientCertAuthEnabled): root's certificate alone gets nothing.
    let (ok, out) = run(Some("root"), &["get", "k"]);
    assert!(
        !ok && out.contains("etcdserver: user name is empty"),
        "{out}"
    );
    assert_eq!(
        run(Some("root"), &["--user", "root:rootpw", "put", "k", "v"]),
        (true, "OK\n".into())
    );
    rt.block_on(server.server.shutdown());
}

/// A CRL file in DER (as etcd's own fixtures and most CAs publish it)
/// revokes as the PEM one does. It was read as no CRL at all before: every
/// revoked certificate got in.
#[test]
fn a_der_crl_revokes_as_a_pem_one_does() {
    let Some(bin) = common::etcd::tool("etcdctl-3.5") else {
        return;
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let pki = pki();
    let mut args = start_args(&pki);
    args.pop();
    args.push(format!("--client-crl-file={}", pki.path_str("crl.der")));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let server = rt.block_on(common::start(&args));
    let endpoint = https(&server);
    let run = |who, args: &[&str]| ctl(&bin, &endpoint, &pki, who, args);
    assert_eq!(
        run(Some("alice"), &["put", "k", "v"]),
        (true, "OK\n".into())
    );
    let (ok, out) = run(Some("mallory"), &["get", "k"]);
    assert!(!ok, "a revoked certificate got in: {out}");
    rt.block_on(server.server.shutdown());
}

/// A trusted CA's own certificate as the client's certificate: Go's
/// verifier, and so etcd, accepts it (etcd's e2e suite logs in with one);
/// webpki alone refused it as a CA used as an end entity. An untrusted one
/// is still refused.
#[test]
fn a_trusted_cas_own_certificate_is_accepted_as_a_clients() {
    let Some(bin) = common::etcd::tool("etcdctl-3.5") else {
        return;
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let pki = pki();
    let server = rt.block_on(common::start(&[
        "--listen-client-urls=https://127.0.0.1:0",
        &format!("--cert-file={}", pki.path_str("server.pem")),
        &format!("--key-file={}", pki.path_str("server.key")),
        &format!("--trusted-ca-file={}", pki.path_str("ca-and-root-ca.pem")),
        "--client-cert-auth",
    ]));
    let endpoint = https(&server);
    let run = |who, args: &[&str]| ctl(&bin, &endpoint, &pki, who, args);
    for step in [
        &["user", "add", "root:rootpw"][..],
        &["user", "grant-role", "root", "root"],
        &["auth", "enable"],
    ] {
        let (ok, out) = run(Some("root-ca"), step);
        assert!(ok, "{step:?}: {out}");
    }
    // The certificate's name is the user, as for any client certificate.
    assert_eq!(
        run(Some("root-ca"), &["put", "k", "v"]),
        (
            true,
            "OK
"
            .into()
        )
    );
    let (ok, out) = run(Some("rogue-ca"), &["get", "k"]);
    assert!(!ok, "an untrusted self-signed CA got in: {out}");
    rt.block_on(server.server.shutdown());
}

/// The certificate a TLS server presents.
async fn served_certificate(addr: &str, pki: &Pki) -> Vec<u8> {
    use rustls::pki_types::{CertificateDer, ServerName, pem::PemObject};
    let mut roots = rustls::RootCertStore::empty();
    let ca = std::fs::read(pki.path("ca.pem")).unwrap();
    roots
        .add(CertificateDer::from_pem_slice(&ca).unwrap())
        .unwrap();
    let client_cert = CertificateDer::pem_file_iter(pki.path("alice.pem"))
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let key = rustls::pki_types::PrivateKeyDer::from_pem_file(pki.path("alice.key")).unwrap();
    let config = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_client_auth_cert(client_cert, key)
    .unwrap();
    let connector = tokio_rustls::TlsConnector::from(std::sync::Arc::new(config));
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let name = ServerName::try_from("127.0.0.1").unwrap();
    let tls = connector.connect(name, tcp).await.unwrap();
    tls.get_ref().1.peer_certificates().unwrap()[0].to_vec()
}

fn pem_der(path: &Path) -> Vec<u8> {
    use rustls::pki_types::{CertificateDer, pem::PemObject};
    CertificateDer::from_pem_file(path).unwrap().to_vec()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn certificates_rotate_without_a_restart_and_stalled_handshakes_block_nobody() {
    let pki = pki();
    let server = start_tls(&pki).await;
    let addr = https(&server).trim_start_matches("https://").to_string();
    assert_eq!(
        served_certificate(&addr, &pki).await,
        pem_der(&pki.path("server.pem"))
    );

    // A client that connects and never says a word.
    let stalled = tokio::net::TcpStream::connect(&addr).await.unwrap();
    // Others are served meanwhile.
    assert_eq!(
        served_certificate(&addr, &pki).await,
        pem_der(&pki.path("server.pem"))
    );

    // Rotation: new files in place; new connections get the new certificate.
    std::fs::copy(pki.path("server2.pem"), pki.path("server.pem")).unwrap();
    std::fs::copy(pki.path("server2.key"), pki.path("server.key")).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if served_certificate(&addr, &pki).await == pem_der(&pki.path("server2.pem")) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the new certificate was not served"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    // The stalled connection is closed once the handshake timeout passes.
    use tokio::io::AsyncReadExt;
    let mut stalled = stalled;
    let mut buf = [0u8; 16];
    let read = tokio::time::timeout(Duration::from_secs(15), stalled.read(&mut buf)).await;
    assert!(matches!(read, Ok(Ok(0)) | Ok(Err(_))), "{read:?}");
    server.server.shutdown().await;
}

#[test]
fn auto_tls_serves_a_self_signed_certificate() {
    let Some(bin) = common::etcd::tool("etcdctl-3.5") else {
        return;
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = rt.block_on(common::start(&[
        "--listen-client-urls=https://127.0.0.1:0",
        "--listen-metrics-urls=https://127.0.0.1:0",
        "--auto-tls",
    ]));
    // The metrics URL is served with the client certificate, as etcd does.
    let metrics = format!("https://{}/metrics", server.server.metrics_addrs[0]);
    let scrape = Command::new("curl")
        .args(["-sk", &metrics])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&scrape.stdout).contains("etcd_server_has_leader 1"),
        "{metrics}"
    );
    let plain = Command::new("curl")
        .args(["-s", &metrics.replace("https://", "http://")])
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&plain.stdout).contains("etcd_server_has_leader"));
    let endpoint = https(&server);
    let out = Command::new(&bin)
        .args([
            format!("--endpoints={endpoint}"),
            // etcdctl skips verification only with transport security on.
            "--insecure-skip-tls-verify".into(),
            "--insecure-transport=false".into(),
            "put".into(),
            "k".into(),
            "v".into(),
        ])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "OK\n");
    assert!(server.dir.path().join("fixtures/client/cert.pem").exists());
    rt.block_on(server.server.shutdown());
}

#[tokio::test]
async fn bad_tls_settings_are_refused_at_start() {
    let pki = pki();
    let dir = tempfile::tempdir().unwrap();
    let start = |extra: Vec<String>| {
        let mut args = vec![
            "hark".to_string(),
            "--listen-client-urls=https://127.0.0.1:0".into(),
            "--listen-peer-urls=http://127.0.0.1:0".into(),
            format!("--data-dir={}", dir.path().display()),
        ];
        args.extend(extra);
        <hark_server::Config as clap::Parser>::try_parse_from(args).unwrap()
    };
    let cert = format!("--cert-file={}", pki.path_str("server.pem"));
    let key = format!("--key-file={}", pki.path_str("server.key"));
    for (extra, expected) in [
        (vec![], "need --cert-file and --key-file"),
        (
            vec![cert.clone(), key.clone(), "--client-cert-auth".into()],
            "needs --trusted-ca-file",
        ),
        (
            vec![cert.clone(), key.clone(), "--tls-min-version=TLS1.0".into()],
            "not supported",
        ),
        (
            vec![
                cert.clone(),
                format!("--key-file={}", pki.path_str("alice.key")),
            ],
            "do not fit",
        ),
        (
            vec![
                cert.clone(),
                key.clone(),
                "--cipher-suites=TLS_RSA_WITH_RC4_128_SHA".into(),
            ],
            "unsupported cipher suite",
        ),
        (
            // A CRL read as empty would revoke nothing: refused.
            vec![
                cert.clone(),
                key.clone(),
                format!("--trusted-ca-file={}", pki.path_str("ca.pem")),
                format!("--client-crl-file={}", pki.path_str("not-a-crl")),
            ],
            "neither PEM nor DER",
        ),
    ] {
        let err = match hark_server::start(&start(extra.clone())).await {
            Ok(_) => panic!("{extra:?} started"),
            Err(e) => e,
        };
        assert!(err.contains(expected), "{extra:?}: {err}");
    }
    // Peer TLS.
    let peer_cert = format!("--peer-cert-file={}", pki.path_str("peer.pem"));
    let peer_key = format!("--peer-key-file={}", pki.path_str("peer.key"));
    let https_peers = "--listen-peer-urls=https://127.0.0.1:0".to_string();
    for (extra, expected) in [
        (
            vec![https_peers.clone()],
            "https:// peer URLs need --peer-cert-file",
        ),
        (
            vec![
                https_peers.clone(),
                peer_cert.clone(),
                peer_key.clone(),
                "--peer-cert-allowed-cn=hark peer".into(),
            ],
            "--peer-cert-allowed-cn needs --peer-trusted-ca-file",
        ),
    ] {
        let mut extra = extra;
        extra.extend([cert.clone(), key.clone()]);
        let err = match hark_server::start(&start(extra.clone())).await {
            Ok(_) => panic!("{extra:?} started"),
            Err(e) => e,
        };
        assert!(err.contains(expected), "{extra:?}: {err}");
    }
    // Without a CA file the other members are checked against the system's
    // CA certificates, as etcd (Go) checks them: the member starts. Auto TLS
    // given beside certificates changes nothing.
    for auto in [None, Some("--peer-auto-tls".to_string())] {
        let mut extra = vec![https_peers.clone(), peer_cert.clone(), peer_key.clone()];
        extra.extend(auto);
        extra.extend([cert.clone(), key.clone()]);
        match hark_server::start(&start(extra.clone())).await {
            Ok(server) => server.shutdown().await,
            Err(e) => panic!("{extra:?}: {e}"),
        }
    }
}

/// One `hark` process of a three-member cluster on https:// peer URLs.
struct Member {
    client: String,
    child: std::process::Child,
}

impl Drop for Member {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Three members on https:// peer URLs, each with `peer_flags`; returns
/// them with their peer addresses.
async fn tls_cluster(cwd: &Path, peer_flags: &[String]) -> (Vec<Member>, Vec<String>) {
    let ports: Vec<(u16, u16)> = (0..3)
        .map(|_| (common::free_port(), common::free_port()))
        .collect();
    let initial: Vec<String> = ports
        .iter()
        .enumerate()
        .map(|(i, (_, peer))| format!("m{i}=https://127.0.0.1:{peer}"))
        .collect();
    let mut members = Vec::new();
    for (i, (client, peer)) in ports.iter().enumerate() {
        let mut args: Vec<String> = vec![
            format!("--name=m{i}"),
            format!("--data-dir=m{i}.hark"),
            format!("--listen-client-urls=http://127.0.0.1:{client}"),
            format!("--listen-peer-urls=https://127.0.0.1:{peer}"),
            format!("--initial-advertise-peer-urls=https://127.0.0.1:{peer}"),
            format!("--initial-cluster={}", initial.join(",")),
            "--heartbeat-interval=50".into(),
            "--election-timeout=500".into(),
        ];
        args.extend_from_slice(peer_flags);
        members.push(Member {
            client: format!("http://127.0.0.1:{client}"),
            child: common::spawn_exactly(cwd, &args, &[]),
        });
    }
    for m in &mut members {
        common::ready(&m.client, &mut m.child).await;
    }
    let peers = ports
        .iter()
        .map(|(_, p)| format!("127.0.0.1:{p}"))
        .collect();
    (members, peers)
}

/// A write on each member is read on every member (linearizable reads go
/// through the leader): the peer links carry the log.
async fn writes_replicate(members: &[Member], cwd: &Path) {
    for (i, writer) in members.iter().enumerate() {
        let mut c = common::client(&writer.client).await;
        c.put(format!("k{i}"), format!("v{i}"), None)
            .await
            .unwrap_or_else(|e| panic!("put on m{i}: {e}\n{}", common::logs(cwd)));
        for (j, reader) in members.iter().enumerate() {
            let got = common::client(&reader.client)
                .await
                .get(format!("k{i}"), None)
                .await
                .unwrap();
            assert_eq!(
                got.kvs().first().map(|kv| kv.value().to_vec()),
                Some(format!("v{i}").into_bytes()),
                "k{i} written on m{i}, read on m{j}"
            );
        }
    }
}

/// What a peer port answers an HTTP/2 client preface sent by `who` (a
/// certificate of the test PKI) over TLS, or in plaintext (`None`): true
/// when the peer's own HTTP/2 SETTINGS frame comes back, i.e. the peer
/// serves that dialer.
async fn peer_serves(addr: &str, pki: &Pki, who: Option<&str>) -> bool {
    use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, pem::PemObject};
    use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
    async fn settings_back(mut s: impl AsyncRead + AsyncWrite + Unpin) -> bool {
        // The client preface, then an empty SETTINGS frame.
        let mut hello = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
        hello.extend_from_slice(&[0, 0, 0, 4, 0, 0, 0, 0, 0]);
        if s.write_all(&hello).await.is_err() || s.flush().await.is_err() {
            return false;
        }
        let mut frame = [0u8; 9];
        match tokio::time::timeout(Duration::from_secs(5), s.read_exact(&mut frame)).await {
            Ok(Ok(_)) => frame[3] == 4,
            _ => false,
        }
    }
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let Some(who) = who else {
        return settings_back(tcp).await;
    };
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_file(pki.path("ca.pem")).unwrap())
        .unwrap();
    let builder = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots);
    let mut config = if who == "no certificate" {
        builder.with_no_client_auth()
    } else {
        let chain = CertificateDer::pem_file_iter(pki.path(&format!("{who}.pem")))
            .unwrap()
            .collect::<Result<Vec<_>, _>>()
            .unwrap();
        let key = PrivateKeyDer::from_pem_file(pki.path(&format!("{who}.key"))).unwrap();
        builder.with_client_auth_cert(chain, key).unwrap()
    };
    config.alpn_protocols = vec![b"h2".to_vec()];
    let connector = tokio_rustls::TlsConnector::from(std::sync::Arc::new(config));
    match connector
        .connect(ServerName::try_from("127.0.0.1").unwrap(), tcp)
        .await
    {
        Ok(tls) => settings_back(tls).await,
        Err(_) => false,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_members_over_mutual_peer_tls_refuse_other_dialers() {
    let pki = pki();
    let cwd = tempfile::tempdir().unwrap();
    // No --peer-client-cert-auth: as in etcd, the trusted CA alone
    // requires the dialer's certificate.
    let flags = vec![
        format!("--peer-cert-file={}", pki.path_str("peer.pem")),
        format!("--peer-key-file={}", pki.path_str("peer.key")),
        format!("--peer-trusted-ca-file={}", pki.path_str("ca.pem")),
        "--peer-cert-allowed-cn=hark peer".into(),
    ];
    let (members, peers) = tls_cluster(cwd.path(), &flags).await;
    writes_replicate(&members, cwd.path()).await;

    if let Some(bin) = common::etcd::tool("etcdctl-3.5") {
        let out = Command::new(bin)
            .args([
                format!("--endpoints={}", members[0].client),
                "member".into(),
                "list".into(),
            ])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        for peer in &peers {
            assert!(text.contains(&format!("https://{peer}")), "{text}");
        }
    }

    // The members' own certificate is served; any other dialer is not: a
    // plaintext one, one without a certificate, and one whose certificate
    // is signed by the trusted CA but has another common name.
    for peer in &peers {
        assert!(peer_serves(peer, &pki, Some("peer")).await, "{peer}");
        assert!(!peer_serves(peer, &pki, None).await, "plaintext to {peer}");
        assert!(
            !peer_serves(peer, &pki, Some("no certificate")).await,
            "no certificate to {peer}"
        );
        assert!(
            !peer_serves(peer, &pki, Some("stranger")).await,
            "a stranger's certificate to {peer}"
        );
    }
    // And the cluster still serves.
    writes_replicate(&members, cwd.path()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_members_over_peer_auto_tls() {
    let cwd = tempfile::tempdir().unwrap();
    let (members, peers) = tls_cluster(cwd.path(), &["--peer-auto-tls".to_string()]).await;
    writes_replicate(&members, cwd.path()).await;
    for i in 0..3 {
        assert!(
            cwd.path()
                .join(format!("m{i}.hark/fixtures/peer/cert.pem"))
                .exists()
        );
    }
    // Encrypted: a plaintext dialer gets no HTTP/2 from a peer port.
    let pki = pki();
    assert!(!peer_serves(&peers[0], &pki, None).await);
}

/// etcd logs "rejected connection from <addr>" with the reason; so does
/// Hark. A client certificate in X.509 v1 form (what `openssl x509 -req`
/// makes without extensions, and etcd accepts) is refused by rustls, which
/// takes only v3: the log says so, rather than nothing.
#[test]
fn a_refused_handshake_is_logged_with_the_client_and_the_reason() {
    let pki = pki();
    let openssl = |args: &[&str]| {
        let out = Command::new("openssl")
            .current_dir(pki.dir.path())
            .args(args)
            .output()
            .expect("openssl (Debian's openssl package)");
        assert!(out.status.success(), "openssl {args:?}: {out:?}");
    };
    openssl(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ca2.key",
        "-out",
        "ca2.pem",
        "-subj",
        "/CN=second CA",
        "-days",
        "30",
    ]);
    openssl(&[
        "req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", "v1.key", "-out", "v1.csr",
        "-subj", "/CN=root",
    ]);
    openssl(&[
        "x509",
        "-req",
        "-in",
        "v1.csr",
        "-CA",
        "ca2.pem",
        "-CAkey",
        "ca2.key",
        "-CAcreateserial",
        "-out",
        "v1.pem",
        "-days",
        "30",
    ]);
    // Both CAs are trusted: the v1 certificate is refused for its form.
    let cas = std::fs::read_to_string(pki.path("ca.pem")).unwrap()
        + &std::fs::read_to_string(pki.path("ca2.pem")).unwrap();
    write(&pki.path("cas.pem"), &cas);
    let port = common::free_port();
    let cwd = tempfile::tempdir().unwrap();
    let mut child = common::spawn(
        cwd.path(),
        &[
            format!("--listen-client-urls=https://127.0.0.1:{port}"),
            format!("--cert-file={}", pki.path_str("server.pem")),
            format!("--key-file={}", pki.path_str("server.key")),
            format!("--trusted-ca-file={}", pki.path_str("cas.pem")),
            "--client-cert-auth".into(),
            format!("--data-dir={}", cwd.path().join("data").display()),
        ],
        &[],
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "{}", common::logs(cwd.path()));
        std::thread::sleep(Duration::from_millis(100));
    }
    let s_client = |cert: Option<&str>| {
        let mut cmd = Command::new("openssl");
        cmd.args(["s_client", "-connect", &format!("127.0.0.1:{port}")])
            .arg("-CAfile")
            .arg(pki.path("ca.pem"));
        if let Some(cert) = cert {
            cmd.arg("-cert")
                .arg(pki.path(&format!("{cert}.pem")))
                .arg("-key")
                .arg(pki.path(&format!("{cert}.key")));
        }
        let _ = cmd
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status();
    };
    s_client(Some("v1"));
    s_client(None);
    let deadline = Instant::now() + Duration::from_secs(10);
    let logs = loop {
        let logs = common::logs(cwd.path());
        if logs.matches("rejected connection").count() >= 2 || Instant::now() > deadline {
            break logs;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let _ = child.kill();
    let _ = child.wait();
    let rejected: Vec<&str> = logs
        .lines()
        .filter(|l| l.contains("rejected connection"))
        .collect();
    assert!(
        rejected
            .iter()
            .any(|l| l.contains("UnsupportedCertVersion") && l.contains("127.0.0.1:")),
        "{logs}"
    );
    assert!(
        rejected
            .iter()
            .any(|l| l.contains("no certificate") || l.contains("NoCertificates")),
        "{logs}"
    );
}

/// etcd's YAML `--config-file` with its two TLS blocks: the client block
/// serves mutual TLS to etcdctl, the peer block (whose keys drop `peer-`)
/// serves the peer port to the allowed common name only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_config_files_transport_security_blocks_serve_tls() {
    let Some(bin) = common::etcd::tool("etcdctl-3.5") else {
        return;
    };
    let pki = pki();
    let cwd = tempfile::tempdir().unwrap();
    let (client, peer) = (common::free_port(), common::free_port());
    let config = format!(
        "name: from-file
data-dir: data
listen-client-urls: https://127.0.0.1:{client}
advertise-client-urls: https://127.0.0.1:{client}
listen-peer-urls: https://127.0.0.1:{peer}
initial-advertise-peer-urls: https://127.0.0.1:{peer}
initial-cluster: from-file=https://127.0.0.1:{peer}
client-transport-security:
  cert-file: {server_pem}
  key-file: {server_key}
  client-cert-auth: true
  trusted-ca-file: {ca}
  auto-tls: false
  allowed-cn: [alice, root]
peer-transport-security:
  cert-file: {peer_pem}
  key-file: {peer_key}
  client-cert-auth: true
  trusted-ca-file: {ca}
  allowed-cn: [someone else, hark peer]
",
        server_pem = pki.path_str("server.pem"),
        server_key = pki.path_str("server.key"),
        peer_pem = pki.path_str("peer.pem"),
        peer_key = pki.path_str("peer.key"),
        ca = pki.path_str("ca.pem"),
    );
    std::fs::write(cwd.path().join("tls.yml"), config).unwrap();
    let mut child = common::spawn_exactly(cwd.path(), &["--config-file=tls.yml".to_string()], &[]);
    let endpoint = format!("https://127.0.0.1:{client}");
    let run = |who, args: &[&str]| ctl(&bin, &endpoint, &pki, who, args);
    let deadline = Instant::now() + Duration::from_secs(60);
    while !run(Some("alice"), &["endpoint", "health"]).0 {
        assert!(
            child.try_wait().unwrap().is_none() && Instant::now() < deadline,
            "not serving\n{}",
            common::logs(cwd.path())
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(
        run(Some("alice"), &["put", "k", "v"]),
        (true, "OK\n".into())
    );
    assert_eq!(run(Some("alice"), &["get", "k"]), (true, "k\nv\n".into()));
    assert!(!run(None, &["get", "k"]).0, "no client certificate");
    // allowed-cn is enforced on the client port: a certificate signed by
    // the same CA with another common name is refused at the handshake;
    // each listed name gets in.
    assert!(!run(Some("mallory"), &["get", "k"]).0, "allowed-cn");
    assert!(run(Some("root"), &["get", "k"]).0, "the second allowed CN");
    let (ok, members) = run(Some("alice"), &["member", "list"]);
    assert!(
        ok && members.contains(&format!("https://127.0.0.1:{peer}")),
        "{members}"
    );
    let peer = format!("127.0.0.1:{peer}");
    assert!(peer_serves(&peer, &pki, Some("peer")).await);
    assert!(
        !peer_serves(&peer, &pki, Some("stranger")).await,
        "allowed-cn"
    );
    assert!(!peer_serves(&peer, &pki, None).await, "plaintext");
    common::stop_cleanly(&mut child, cwd.path());
}

/// The argument list kubeadm writes into its etcd static pod manifest, for
/// etcd 3.5 and for 3.6 (`--feature-gates` and the un-prefixed progress
/// flag), with this test's certificates, ports and a second loopback
/// address standing in for the node's: the member serves etcdctl over
/// mutual TLS, and the kubelet's probes on the metrics URL.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubeadms_etcd_arguments_start_a_member_etcdctl_can_use() {
    let Some(bin) = common::etcd::tool("etcdctl-3.5") else {
        return;
    };
    let pki = pki();
    for version in ["3.5", "3.6"] {
        let cwd = tempfile::tempdir().unwrap();
        let (client, peer, metrics) = (
            common::free_port(),
            common::free_port(),
            common::free_port(),
        );
        let (corrupt_check, progress) = if version == "3.5" {
            (
                "--experimental-initial-corrupt-check=true",
                "--experimental-watch-progress-notify-interval=5s",
            )
        } else {
            (
                "--feature-gates=InitialCorruptCheck=true",
                "--watch-progress-notify-interval=5s",
            )
        };
        let node = "127.0.0.2";
        let args: Vec<String> = vec![
            format!("--advertise-client-urls=https://{node}:{client}"),
            format!("--cert-file={}", pki.path_str("server.pem")),
            "--client-cert-auth=true".into(),
            "--data-dir=var/lib/etcd".into(),
            corrupt_check.into(),
            progress.into(),
            format!("--initial-advertise-peer-urls=https://{node}:{peer}"),
            format!("--initial-cluster=node1=https://{node}:{peer}"),
            format!("--key-file={}", pki.path_str("server.key")),
            format!("--listen-client-urls=https://127.0.0.1:{client},https://{node}:{client}"),
            format!("--listen-metrics-urls=http://127.0.0.1:{metrics}"),
            format!("--listen-peer-urls=https://{node}:{peer}"),
            "--name=node1".into(),
            format!("--peer-cert-file={}", pki.path_str("peer.pem")),
            "--peer-client-cert-auth=true".into(),
            format!("--peer-key-file={}", pki.path_str("peer.key")),
            format!("--peer-trusted-ca-file={}", pki.path_str("ca.pem")),
            "--snapshot-count=10000".into(),
            format!("--trusted-ca-file={}", pki.path_str("ca.pem")),
        ];
        let mut child = common::spawn_exactly(cwd.path(), &args, &[]);
        let endpoint = format!("https://127.0.0.1:{client}");
        let run = |args: &[&str]| ctl(&bin, &endpoint, &pki, Some("root"), args);
        let deadline = Instant::now() + Duration::from_secs(60);
        while !run(&["endpoint", "health"]).0 {
            assert!(
                child.try_wait().unwrap().is_none() && Instant::now() < deadline,
                "{version}: not serving\n{}",
                common::logs(cwd.path())
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        assert_eq!(run(&["put", "/registry/k", "v"]), (true, "OK\n".into()));
        assert_eq!(
            run(&["get", "/registry/k", "--print-value-only"]),
            (true, "v\n".into())
        );
        let (ok, members) = run(&["member", "list"]);
        assert!(
            ok && members.contains("node1")
                && members.contains(&format!("https://{node}:{client}")),
            "{version}: {members}"
        );
        let probes: std::net::SocketAddr = format!("127.0.0.1:{metrics}").parse().unwrap();
        for probe in ["/livez", "/readyz", "/health"] {
            let (code, body) = common::http_get(probes, probe);
            assert_eq!(code, 200, "{version} {probe}: {body}");
        }
        let log = common::logs(cwd.path());
        assert!(
            log.contains("initial corruption checking passed"),
            "{version}: {log}"
        );
        common::stop_cleanly(&mut child, cwd.path());
    }
}
