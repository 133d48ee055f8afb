//! rustls configs built from a listener family's settings: identity,
//! trusted roots, CRLs, versions and cipher suites; the server's and, for
//! peer links, the dialer's.

use std::path::Path;
use std::sync::Arc;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::ServerCertVerifier;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, CertificateRevocationListDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::server::danger::ClientCertVerifier;
use rustls::{
    ClientConfig, RootCertStore, ServerConfig, SupportedCipherSuite, SupportedProtocolVersion,
};

fn read(path: &Path, what: &str) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("cannot read {what} {}: {e}", path.display()))
}

use super::settings::TlsSettings;
use super::verify::{AllowedCn, AllowedNames, RootAsClient, Unverified};

/// etcd's `--tls-min-version` / `--tls-max-version` values rustls has.
fn version(name: &str) -> Result<&'static SupportedProtocolVersion, String> {
    match name {
        "TLS1.2" => Ok(&rustls::version::TLS12),
        "TLS1.3" => Ok(&rustls::version::TLS13),
        "TLS1.0" | "TLS1.1" => Err(format!(
            "{name} is not supported: it is broken, and rustls has only TLS1.2 and TLS1.3"
        )),
        other => Err(format!(
            "unknown TLS version {other:?} (use TLS1.2 or TLS1.3)"
        )),
    }
}

/// A cipher suite by its IANA (Go) name, e.g. `TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256`.
/// Go's constants for the two ChaCha20 suites leave out the `_SHA256` the
/// IANA names end with; etcd takes both spellings, and so does Hark.
fn cipher_suite(provider: &CryptoProvider, name: &str) -> Result<SupportedCipherSuite, String> {
    let name = match name {
        "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305" => "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
        "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305" => "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
        other => other,
    };
    provider
        .cipher_suites
        .iter()
        .copied()
        .find(|s| s.suite().as_str() == Some(name))
        .ok_or_else(|| format!("unsupported cipher suite {name:?}"))
}

/// The certificate chain and key of `--cert-file` / `--key-file`.
type Identity = (Vec<CertificateDer<'static>>, PrivateKeyDer<'static>);

fn identity(s: &TlsSettings) -> Result<Identity, String> {
    let (Some(cert_file), Some(key_file)) = (&s.cert_file, &s.key_file) else {
        return Err(format!(
            "TLS needs both {} and {} (or {})",
            s.flag("cert-file"),
            s.flag("key-file"),
            s.flag("auto-tls")
        ));
    };
    let certs: Vec<CertificateDer<'static>> =
        CertificateDer::pem_slice_iter(&read(cert_file, "certificate")?)
            .collect::<Result<_, _>>()
            .map_err(|e| format!("bad certificate in {}: {e}", cert_file.display()))?;
    if certs.is_empty() {
        return Err(format!("no certificate in {}", cert_file.display()));
    }
    let key = PrivateKeyDer::from_pem_slice(&read(key_file, "key")?)
        .map_err(|e| format!("bad private key in {}: {e}", key_file.display()))?;
    Ok((certs, key))
}

/// The crypto provider with `--cipher-suites`, and the TLS versions between
/// `--tls-min-version` and `--tls-max-version`.
fn protocols(
    s: &TlsSettings,
) -> Result<(Arc<CryptoProvider>, Vec<&'static SupportedProtocolVersion>), String> {
    let mut provider = rustls::crypto::ring::default_provider();
    if !s.cipher_suites.is_empty() {
        provider.cipher_suites = s
            .cipher_suites
            .iter()
            .map(|n| cipher_suite(&provider, n.trim()))
            .collect::<Result<_, _>>()?;
    }
    let min = s.min_version.as_deref().map(version).transpose()?;
    let max = s.max_version.as_deref().map(version).transpose()?;
    let versions: Vec<&'static SupportedProtocolVersion> =
        [&rustls::version::TLS12, &rustls::version::TLS13]
            .into_iter()
            .filter(|v| min.is_none_or(|m| u16::from(v.version) >= u16::from(m.version)))
            .filter(|v| max.is_none_or(|m| u16::from(v.version) <= u16::from(m.version)))
            .collect();
    if versions.is_empty() {
        return Err("--tls-min-version is above --tls-max-version".into());
    }
    Ok((Arc::new(provider), versions))
}

fn trusted_roots(ca: &Path) -> Result<Arc<RootCertStore>, String> {
    root_store(trusted_certificates(ca)?, ca)
}

/// The system's CA certificates (`SSL_CERT_FILE`, `SSL_CERT_DIR`, else the
/// distribution's bundle), as Go finds them.
fn system_roots() -> Result<Arc<RootCertStore>, String> {
    let found = rustls_native_certs::load_native_certs();
    let mut roots = RootCertStore::empty();
    let (added, _unparsable) = roots.add_parsable_certificates(found.certs);
    if added == 0 {
        let why: Vec<String> = found.errors.iter().map(|e| e.to_string()).collect();
        return Err(format!(
            "peer TLS without --peer-trusted-ca-file checks the other members against \
             the system's CA certificates, and none were found ({}); give \
             --peer-trusted-ca-file",
            if why.is_empty() {
                "no bundle".to_string()
            } else {
                why.join("; ")
            }
        ));
    }
    Ok(Arc::new(roots))
}

/// `certs`, read from `ca`, as the roots a verifier trusts.
fn root_store(
    certs: Vec<CertificateDer<'static>>,
    ca: &Path,
) -> Result<Arc<RootCertStore>, String> {
    let mut roots = RootCertStore::empty();
    for cert in certs {
        roots
            .add(cert)
            .map_err(|e| format!("bad CA certificate in {}: {e}", ca.display()))?;
    }
    Ok(Arc::new(roots))
}

/// The certificates of `--trusted-ca-file`, as they are.
fn trusted_certificates(ca: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    CertificateDer::pem_slice_iter(&read(ca, "trusted CA")?)
        .collect::<Result<_, _>>()
        .map_err(|e| format!("bad CA certificate in {}: {e}", ca.display()))
}

fn revocations(s: &TlsSettings) -> Result<Vec<CertificateRevocationListDer<'static>>, String> {
    let Some(crl) = &s.client_crl_file else {
        return Ok(Vec::new());
    };
    let bytes = read(crl, "CRL")?;
    let pem: Vec<CertificateRevocationListDer<'static>> =
        CertificateRevocationListDer::pem_slice_iter(&bytes)
            .collect::<Result<_, _>>()
            .map_err(|e| format!("bad CRL in {}: {e}", crl.display()))?;
    if !pem.is_empty() {
        return Ok(pem);
    }
    // As etcd (Go's x509.ParseRevocationList), a CRL file may be DER, the
    // form CAs publish. Not PEM and not a DER CRL is refused: a CRL read as
    // empty would revoke nothing, silently.
    x509_parser::parse_x509_crl(&bytes)
        .map_err(|e| format!("bad CRL in {}: neither PEM nor DER ({e})", crl.display()))?;
    Ok(vec![CertificateRevocationListDer::from(bytes)])
}

/// gRPC over h2; the JSON gateway and /metrics also over HTTP/1.1.
fn alpn() -> Vec<Vec<u8>> {
    vec![b"h2".to_vec(), b"http/1.1".to_vec()]
}

pub fn build(s: &TlsSettings) -> Result<ServerConfig, String> {
    let (certs, key) = identity(s)?;
    let (provider, versions) = protocols(s)?;
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&versions)
        .map_err(|e| format!("TLS versions and cipher suites do not fit: {e}"))?;
    if !s.allowed_cns.is_empty() && !s.allowed_hostnames.is_empty() {
        // etcd's words: it refuses the pair rather than check one.
        return Err(format!(
            "AllowedCNs and AllowedHostnames are mutually exclusive (cns={:?}, hostnames={:?})",
            s.allowed_cns, s.allowed_hostnames
        ));
    }
    if s.trusted_ca_file.is_none() {
        let side = if s.dials { "peer" } else { "client" };
        if !s.allowed_cns.is_empty() {
            return Err(format!(
                "--{side}-cert-allowed-cn needs {}",
                s.flag("trusted-ca-file")
            ));
        }
        if !s.allowed_hostnames.is_empty() {
            return Err(format!(
                "--{side}-cert-allowed-hostname needs {}",
                s.flag("trusted-ca-file")
            ));
        }
    }
    // As etcd: a trusted CA alone already requires client certificates.
    let builder = match &s.trusted_ca_file {
        Some(ca) => {
            let certs = trusted_certificates(ca)?;
            let roots = root_store(certs.clone(), ca)?;
            let verifier = WebPkiClientVerifier::builder_with_provider(roots, provider)
                .with_crls(revocations(s)?)
                .build()
                .map_err(|e| format!("cannot verify client certificates: {e}"))?;
            let verifier: Arc<dyn ClientCertVerifier> = Arc::new(RootAsClient {
                inner: verifier,
                roots: certs,
            });
            match AllowedNames::of(s) {
                None => builder.with_client_cert_verifier(verifier),
                Some(names) => builder.with_client_cert_verifier(Arc::new(AllowedCn {
                    inner: verifier,
                    names,
                })),
            }
        }
        None if s.client_cert_auth => {
            return Err(format!(
                "{} needs {}",
                s.flag("client-cert-auth"),
                s.flag("trusted-ca-file")
            ));
        }
        None => builder.with_no_client_auth(),
    };
    let mut config = builder
        .with_single_cert(certs, key)
        .map_err(|e| format!("the certificate and key do not fit: {e}"))?;
    config.alpn_protocols = alpn();
    Ok(config)
}

/// The config this member dials its peers with: its certificate as the
/// client certificate; the peer's verified against the trusted CA, else
/// the system's CAs (with the CRL and the allowed CN), or not at all under
/// auto TLS without a CA.
pub(super) fn dialer(s: &TlsSettings) -> Result<ClientConfig, String> {
    let (certs, key) = identity(s)?;
    let (provider, versions) = protocols(s)?;
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&versions)
        .map_err(|e| format!("TLS versions and cipher suites do not fit: {e}"))?;
    let roots = match &s.trusted_ca_file {
        Some(ca) => Some(trusted_roots(ca)?),
        None if s.auto_tls => None,
        // As etcd (Go's TLS): without a CA file, the other members'
        // certificates are checked against the system's CA certificates.
        None => Some(system_roots()?),
    };
    let verifier: Arc<dyn ServerCertVerifier> = match roots {
        Some(roots) => {
            let webpki = WebPkiServerVerifier::builder_with_provider(roots, provider.clone())
                .with_crls(revocations(s)?)
                .build()
                .map_err(|e| format!("cannot verify peer certificates: {e}"))?;
            match AllowedNames::of(s) {
                None => webpki,
                Some(names) => Arc::new(AllowedCn {
                    inner: webpki,
                    names,
                }),
            }
        }
        None => Arc::new(Unverified(provider)),
    };
    let mut config = builder
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_client_auth_cert(certs, key)
        .map_err(|e| format!("the certificate and key do not fit: {e}"))?;
    config.alpn_protocols = vec![b"h2".to_vec()];
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::cipher_suite;

    #[test]
    fn takes_gos_and_ianas_names_for_a_suite() {
        let provider = rustls::crypto::ring::default_provider();
        for (go, iana) in [
            (
                "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305",
                "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
            ),
            (
                "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305",
                "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
            ),
        ] {
            let by_go = cipher_suite(&provider, go).unwrap().suite();
            assert_eq!(by_go, cipher_suite(&provider, iana).unwrap().suite());
            assert_eq!(by_go.as_str(), Some(iana));
        }
        let err = cipher_suite(&provider, "TLS_RSA_WITH_RC4_128_SHA").unwrap_err();
        assert!(err.contains("unsupported cipher suite"), "{err}");
    }
}
