//! `--tls` and `--user`: the servers started with TLS on their client URLs
//! (a CA and a server certificate made here; a cluster's members also talk
//! mutual TLS to each other with it) and with auth enabled (user root), the
//! same for Hark and etcd; every client of the scenarios then connects with
//! the CA and authenticates.

use std::path::Path;
use std::sync::Mutex;

use hark_client::{Client, ConnectOptions, TlsOptions};

/// How the scenarios' clients connect to the server under test.
static OPTIONS: Mutex<Option<ConnectOptions>> = Mutex::new(None);

pub const USER: &str = "root";
pub const PASSWORD: &str = "loadtest";

pub fn set(options: ConnectOptions) {
    *OPTIONS.lock().expect("not poisoned") = Some(options);
}

pub fn options() -> ConnectOptions {
    OPTIONS
        .lock()
        .expect("not poisoned")
        .clone()
        .unwrap_or_default()
}

/// A client of `endpoints` as the scenarios connect.
pub async fn connect(endpoints: &[impl AsRef<str>]) -> Result<Client, hark_client::Error> {
    Client::connect_with(endpoints, options()).await
}

/// A CA and a server certificate for 127.0.0.1 in `dir`: (cert, key, CA PEM).
pub fn certificates(dir: &Path) -> Result<(String, String, Vec<u8>), String> {
    use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
    let err = |e: rcgen::Error| e.to_string();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).map_err(err)?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca =
        CertifiedIssuer::self_signed(ca_params, KeyPair::generate().map_err(err)?).map_err(err)?;
    let key = KeyPair::generate().map_err(err)?;
    let cert = CertificateParams::new(vec!["127.0.0.1".to_string()])
        .map_err(err)?
        .signed_by(&key, &ca)
        .map_err(err)?;
    let (cert_file, key_file) = (dir.join("server.pem"), dir.join("server.key"));
    std::fs::write(&cert_file, cert.pem()).map_err(|e| e.to_string())?;
    std::fs::write(&key_file, key.serialize_pem()).map_err(|e| e.to_string())?;
    Ok((
        cert_file.display().to_string(),
        key_file.display().to_string(),
        ca.pem().into_bytes(),
    ))
}

/// Creates root (with the root role) and enables auth, as an operator would.
pub async fn enable_auth(endpoints: &[String], tls: Option<TlsOptions>) -> Result<(), String> {
    let options = ConnectOptions {
        tls,
        ..Default::default()
    };
    let c = Client::connect_with(endpoints, options)
        .await
        .map_err(|e| e.to_string())?;
    let e = |e: hark_client::Error| e.to_string();
    c.user_add(USER, PASSWORD, false).await.map_err(e)?;
    c.user_grant_role(USER, "root").await.map_err(e)?;
    c.auth_enable().await.map_err(e)?;
    Ok(())
}
