//! TLS with rustls on the client and peer listeners, and on the peer links
//! this member dials: etcd's flags (`--cert-file`, `--key-file`,
//! `--trusted-ca-file`, `--client-cert-auth`, `--client-crl-file`,
//! `--auto-tls`, `--tls-min-version`, `--tls-max-version`,
//! `--cipher-suites`, and their `--peer-*` twins with
//! `--peer-cert-allowed-cn`), handshakes off the accept loop under a
//! timeout, and certificates reloaded on SIGHUP or when their files change,
//! so rotation needs no restart.

use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, SystemTime};

use parking_lot::RwLock;
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, CertificateRevocationListDer, PrivateKeyDer};
use rustls::pki_types::{ServerName, UnixTime};
use rustls::server::WebPkiClientVerifier;
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{
    ClientConfig, DigitallySignedStruct, DistinguishedName, RootCertStore, ServerConfig,
    SignatureScheme, SupportedCipherSuite, SupportedProtocolVersion,
};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tonic::transport::server::Connected;

/// How long a client has to finish its TLS handshake (etcd's
/// GHSA-6vch-q96h-7gc3: a client that opens connections and never
/// completes a handshake must not hold the listener up).
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// How often the certificate files are looked at for changes.
const RELOAD_POLL: Duration = Duration::from_secs(2);

/// One listener family's TLS settings (etcd's flags of the same names, or
/// their `--peer-*` twins).
#[derive(Debug, Clone, Default)]
pub struct TlsSettings {
    pub cert_file: Option<PathBuf>,
    pub key_file: Option<PathBuf>,
    pub trusted_ca_file: Option<PathBuf>,
    pub client_cert_auth: bool,
    pub client_crl_file: Option<PathBuf>,
    pub auto_tls: bool,
    pub min_version: Option<String>,
    pub max_version: Option<String>,
    pub cipher_suites: Vec<String>,
    /// `--peer-cert-allowed-cn`: the only common name the other side's
    /// certificate may have.
    pub allowed_cn: Option<String>,
    /// Also dial with these settings (peer links): the certificate is shown
    /// as a client certificate, and the other side's is verified against
    /// the trusted CA (not at all under auto TLS, as etcd).
    pub dials: bool,
}

impl TlsSettings {
    /// Whether any certificate is configured (or generated).
    pub fn is_set(&self) -> bool {
        self.auto_tls || self.cert_file.is_some() || self.key_file.is_some()
    }

    /// The flag `name` as this listener family spells it (`--peer-…`).
    fn flag(&self, name: &str) -> String {
        if self.dials {
            format!("--peer-{name}")
        } else {
            format!("--{name}")
        }
    }
}

/// A listener family's TLS: the current rustls configs, swapped on reload.
pub struct TlsServer {
    settings: TlsSettings,
    current: RwLock<Arc<ServerConfig>>,
    /// The config peer links are dialled with (only with `dials`).
    dialer: RwLock<Option<Arc<ClientConfig>>>,
    /// Modification times of the files the current config was built from.
    stamps: RwLock<Vec<Option<SystemTime>>>,
}

impl TlsServer {
    /// Builds the config; with `--auto-tls` and no certificate, makes a
    /// self-signed one under `auto_dir` (kept there for restarts).
    pub fn new(
        mut settings: TlsSettings,
        auto_dir: &Path,
        hosts: &[String],
    ) -> Result<Arc<TlsServer>, String> {
        if settings.auto_tls {
            if settings.cert_file.is_some() {
                // As etcd: given certificates win, and stay verified.
                tracing::warn!(
                    "ignoring {} since certificates are given",
                    settings.flag("auto-tls")
                );
                settings.auto_tls = false;
            } else {
                let (cert, key) = self_signed(auto_dir, hosts)?;
                settings.cert_file = Some(cert);
                settings.key_file = Some(key);
            }
        }
        let config = build(&settings)?;
        let dialer = settings.dials.then(|| dialer(&settings)).transpose()?;
        let stamps = stamps(&settings);
        Ok(Arc::new(TlsServer {
            settings,
            current: RwLock::new(Arc::new(config)),
            dialer: RwLock::new(dialer.map(Arc::new)),
            stamps: RwLock::new(stamps),
        }))
    }

    pub fn config(&self) -> Arc<ServerConfig> {
        self.current.read().clone()
    }

    /// Whether client certificates name users (`--client-cert-auth`).
    pub fn cert_user(&self) -> CertUser {
        if self.settings.client_cert_auth {
            CertUser::Named
        } else {
            CertUser::Ignored
        }
    }

    /// How peer links are dialled: the TLS client handshake over a fresh
    /// TCP connection, with the config current at the time.
    pub fn peer_tls(self: &Arc<Self>) -> Option<hark_raft::PeerTls> {
        self.dialer.read().as_ref()?;
        let tls = self.clone();
        Some(hark_raft::PeerTls::new(move |host, tcp| {
            let config = tls.dialer.read().clone();
            Box::pin(async move {
                let config = config.ok_or_else(|| io::Error::other("no peer TLS"))?;
                let name = ServerName::try_from(host)
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
                let stream = tokio_rustls::TlsConnector::from(config)
                    .connect(name, tcp)
                    .await?;
                Ok(Box::new(stream) as Box<dyn hark_raft::PeerStream>)
            })
        }))
    }

    /// Rebuilds the configs from the files; on failure the old ones stay.
    pub fn reload(&self) -> Result<(), String> {
        let config = build(&self.settings)?;
        let dialer = self
            .settings
            .dials
            .then(|| dialer(&self.settings))
            .transpose()?;
        *self.current.write() = Arc::new(config);
        *self.dialer.write() = dialer.map(Arc::new);
        *self.stamps.write() = stamps(&self.settings);
        Ok(())
    }

    fn changed(&self) -> bool {
        *self.stamps.read() != stamps(&self.settings)
    }

    /// Reloads on SIGHUP and when a file changes, until `shutdown`.
    pub fn watch_files(self: &Arc<Self>, mut shutdown: tokio::sync::watch::Receiver<bool>) {
        let tls = self.clone();
        tokio::spawn(async move {
            #[cfg(unix)]
            let mut hup =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()).ok();
            loop {
                #[cfg(unix)]
                let hangup = async {
                    match hup.as_mut() {
                        Some(s) => s.recv().await.is_some(),
                        None => std::future::pending().await,
                    }
                };
                #[cfg(not(unix))]
                let hangup = std::future::pending::<bool>();
                let forced = tokio::select! {
                    _ = crate::shutdown::shutting_down(&mut shutdown) => return,
                    got = hangup => got,
                    _ = tokio::time::sleep(RELOAD_POLL) => false,
                };
                if forced || tls.changed() {
                    match tls.reload() {
                        Ok(()) => tracing::info!("TLS certificates reloaded"),
                        Err(e) => {
                            tracing::error!(error = %e, "reloading TLS certificates failed; the old ones stay");
                            // Not again until the files change once more.
                            *tls.stamps.write() = stamps(&tls.settings);
                        }
                    }
                }
            }
        });
    }
}

fn stamps(s: &TlsSettings) -> Vec<Option<SystemTime>> {
    [
        &s.cert_file,
        &s.key_file,
        &s.trusted_ca_file,
        &s.client_crl_file,
    ]
    .into_iter()
    .map(|f| {
        f.as_ref()
            .and_then(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok())
    })
    .collect()
}

fn read(path: &Path, what: &str) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("cannot read {what} {}: {e}", path.display()))
}

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
fn cipher_suite(provider: &CryptoProvider, name: &str) -> Result<SupportedCipherSuite, String> {
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
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(&read(ca, "trusted CA")?) {
        let cert = cert.map_err(|e| format!("bad CA certificate in {}: {e}", ca.display()))?;
        roots
            .add(cert)
            .map_err(|e| format!("bad CA certificate in {}: {e}", ca.display()))?;
    }
    Ok(Arc::new(roots))
}

fn revocations(s: &TlsSettings) -> Result<Vec<CertificateRevocationListDer<'static>>, String> {
    let Some(crl) = &s.client_crl_file else {
        return Ok(Vec::new());
    };
    CertificateRevocationListDer::pem_slice_iter(&read(crl, "CRL")?)
        .collect::<Result<_, _>>()
        .map_err(|e| format!("bad CRL in {}: {e}", crl.display()))
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
    if s.allowed_cn.is_some() && s.trusted_ca_file.is_none() {
        return Err("--peer-cert-allowed-cn needs --peer-trusted-ca-file".into());
    }
    // As etcd: a trusted CA alone already requires client certificates.
    let builder = match &s.trusted_ca_file {
        Some(ca) => {
            let verifier =
                WebPkiClientVerifier::builder_with_provider(trusted_roots(ca)?, provider)
                    .with_crls(revocations(s)?)
                    .build()
                    .map_err(|e| format!("cannot verify client certificates: {e}"))?;
            match &s.allowed_cn {
                Some(cn) => builder.with_client_cert_verifier(Arc::new(AllowedCn {
                    inner: verifier,
                    cn: cn.clone(),
                })),
                None => builder.with_client_cert_verifier(verifier),
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
/// client certificate; the peer's verified against the trusted CA (with
/// the CRL and the allowed CN), or not at all under auto TLS without a CA.
fn dialer(s: &TlsSettings) -> Result<ClientConfig, String> {
    let (certs, key) = identity(s)?;
    let (provider, versions) = protocols(s)?;
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&versions)
        .map_err(|e| format!("TLS versions and cipher suites do not fit: {e}"))?;
    let verifier: Arc<dyn ServerCertVerifier> = match &s.trusted_ca_file {
        Some(ca) => {
            let webpki =
                WebPkiServerVerifier::builder_with_provider(trusted_roots(ca)?, provider.clone())
                    .with_crls(revocations(s)?)
                    .build()
                    .map_err(|e| format!("cannot verify peer certificates: {e}"))?;
            match &s.allowed_cn {
                Some(cn) => Arc::new(AllowedCn {
                    inner: webpki,
                    cn: cn.clone(),
                }),
                None => webpki,
            }
        }
        None if s.auto_tls => Arc::new(Unverified(provider)),
        None => {
            return Err(
                "peer TLS needs --peer-trusted-ca-file to verify the other members \
                 (or --peer-auto-tls, which does not verify them)"
                    .into(),
            );
        }
    };
    let mut config = builder
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_client_auth_cert(certs, key)
        .map_err(|e| format!("the certificate and key do not fit: {e}"))?;
    config.alpn_protocols = vec![b"h2".to_vec()];
    Ok(config)
}

/// A verifier that also requires the certificate's common name to be
/// `--peer-cert-allowed-cn` (etcd checks it on the verified chain's leaf).
#[derive(Debug)]
struct AllowedCn<V: ?Sized> {
    inner: Arc<V>,
    cn: String,
}

impl<V: ?Sized> AllowedCn<V> {
    fn check(&self, end_entity: &CertificateDer<'_>) -> Result<(), rustls::Error> {
        match common_name(end_entity) {
            Some(cn) if cn == self.cn => Ok(()),
            found => Err(rustls::Error::General(format!(
                "certificate common name {found:?} is not the allowed {:?}",
                self.cn
            ))),
        }
    }
}

/// The signature checks of a verifier that only adds to `inner`'s
/// certificate check: `inner`'s own.
macro_rules! delegate_signatures {
    () => {
        fn verify_tls12_signature(
            &self,
            message: &[u8],
            cert: &CertificateDer<'_>,
            dss: &DigitallySignedStruct,
        ) -> Result<HandshakeSignatureValid, rustls::Error> {
            self.inner.verify_tls12_signature(message, cert, dss)
        }

        fn verify_tls13_signature(
            &self,
            message: &[u8],
            cert: &CertificateDer<'_>,
            dss: &DigitallySignedStruct,
        ) -> Result<HandshakeSignatureValid, rustls::Error> {
            self.inner.verify_tls13_signature(message, cert, dss)
        }

        fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
            self.inner.supported_verify_schemes()
        }
    };
}

impl ClientCertVerifier for AllowedCn<dyn ClientCertVerifier> {
    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        self.inner.root_hint_subjects()
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        let verified = self
            .inner
            .verify_client_cert(end_entity, intermediates, now)?;
        self.check(end_entity)?;
        Ok(verified)
    }

    delegate_signatures!();
}

impl ServerCertVerifier for AllowedCn<WebPkiServerVerifier> {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let verified =
            self.inner
                .verify_server_cert(end_entity, intermediates, server_name, ocsp, now)?;
        self.check(end_entity)?;
        Ok(verified)
    }

    delegate_signatures!();
}

/// `--peer-auto-tls` without a CA: self-signed peers cannot be verified,
/// so they are not (etcd does the same); the link is still encrypted.
/// Signatures are still checked, so the handshake proves key possession.
#[derive(Debug)]
struct Unverified(Arc<CryptoProvider>);

impl ServerCertVerifier for Unverified {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// `--auto-tls`: a self-signed certificate for the listen hosts, made once
/// and kept in `dir` (etcd keeps its own under the data dir too).
fn self_signed(dir: &Path, hosts: &[String]) -> Result<(PathBuf, PathBuf), String> {
    let cert = dir.join("cert.pem");
    let key = dir.join("key.pem");
    if cert.exists() && key.exists() {
        return Ok((cert, key));
    }
    let mut names: Vec<String> = hosts.to_vec();
    names.extend(["localhost".to_string(), "127.0.0.1".to_string()]);
    names.sort();
    names.dedup();
    let generated = rcgen::generate_simple_self_signed(names)
        .map_err(|e| format!("cannot make a self-signed certificate: {e}"))?;
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let write = |path: &Path, body: String| {
        std::fs::write(path, body).map_err(|e| format!("cannot write {}: {e}", path.display()))
    };
    write(&key, generated.signing_key.serialize_pem())?;
    write(&cert, generated.cert.pem())?;
    tracing::warn!(dir = %dir.display(), "--auto-tls: serving a self-signed certificate (development only)");
    Ok((cert, key))
}

/// A client connection: plain or TLS.
pub enum Conn {
    Plain(TcpStream),
    Tls(Box<tokio_rustls::server::TlsStream<TcpStream>>, CertUser),
}

/// Whether a TLS connection's client certificate names the request's user:
/// only under `--client-cert-auth` (etcd's ClientCertAuthEnabled), not
/// when a trusted CA merely requires a certificate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CertUser {
    Named,
    Ignored,
}

/// What a request learns of its connection.
#[derive(Debug, Clone)]
pub struct ConnInfo {
    /// The verified client certificate's common name, under
    /// `--client-cert-auth` (the user when a request has no token).
    pub common_name: Option<String>,
    /// The client's address, to name its watch stream in reports.
    pub remote: Option<std::net::SocketAddr>,
}

/// The subject common name of a DER certificate.
pub fn common_name(der: &[u8]) -> Option<String> {
    let (_, cert) = x509_parser::parse_x509_certificate(der).ok()?;
    // Go's pkix.Name (what etcd compares) keeps the last one.
    let cn = cert.subject().iter_common_name().last()?;
    cn.as_str().ok().map(str::to_owned)
}

impl Connected for Conn {
    type ConnectInfo = ConnInfo;

    fn connect_info(&self) -> ConnInfo {
        let common_name = match self {
            Conn::Plain(_) => None,
            Conn::Tls(_, CertUser::Ignored) => None,
            Conn::Tls(t, CertUser::Named) => t
                .get_ref()
                .1
                .peer_certificates()
                .and_then(|chain| chain.first())
                .and_then(|c| common_name(c)),
        };
        let remote = match self {
            Conn::Plain(tcp) => tcp.peer_addr().ok(),
            Conn::Tls(t, _) => t.get_ref().0.peer_addr().ok(),
        };
        ConnInfo {
            common_name,
            remote,
        }
    }
}

impl AsyncRead for Conn {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Conn::Plain(t) => Pin::new(t).poll_read(cx, buf),
            Conn::Tls(t, _) => Pin::new(t.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Conn {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Conn::Plain(t) => Pin::new(t).poll_write(cx, buf),
            Conn::Tls(t, _) => Pin::new(t.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Conn::Plain(t) => Pin::new(t).poll_write_vectored(cx, bufs),
            Conn::Tls(t, _) => Pin::new(t.as_mut()).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Conn::Plain(t) => t.is_write_vectored(),
            Conn::Tls(t, _) => t.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Conn::Plain(t) => Pin::new(t).poll_flush(cx),
            Conn::Tls(t, _) => Pin::new(t.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Conn::Plain(t) => Pin::new(t).poll_shutdown(cx),
            Conn::Tls(t, _) => Pin::new(t.as_mut()).poll_shutdown(cx),
        }
    }
}
