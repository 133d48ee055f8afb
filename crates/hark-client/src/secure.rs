//! TLS and authentication for the client: a rustls connector (CA, client
//! certificate, or no verification for development), and credentials that
//! put the token on every call and authenticate again when the server says
//! the token is invalid or stale (as etcd's clientv3 does).

use std::sync::Arc;

use parking_lot::RwLock;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use tonic::metadata::{Ascii, MetadataValue};
use tonic::transport::Channel;

use crate::pb;

/// How to reach the server securely ([`crate::Client::connect_with`]).
#[derive(Debug, Clone, Default)]
pub struct ConnectOptions {
    /// `(user, password)`: authenticate, and again whenever the token dies.
    pub user: Option<(String, String)>,
    /// TLS for every endpoint (also implied by an `https://` endpoint).
    pub tls: Option<TlsOptions>,
    /// How long making a connection may take, TLS handshake included
    /// (etcd's `--dial-timeout`) [default: 2 s, etcd's].
    pub dial_timeout: Option<std::time::Duration>,
    /// How long a call keeps being retried across unavailable endpoints (a
    /// leader change, a member down) before its error is returned
    /// [default: 5 s, etcdctl's command timeout]. Only calls that cannot
    /// apply twice are retried; see [`crate::Client`].
    pub retry_for: Option<std::time::Duration>,
}

/// How long calls are retried unless [`ConnectOptions::retry_for`] says.
pub(crate) const DEFAULT_RETRY_FOR: std::time::Duration = std::time::Duration::from_secs(5);

/// etcd clientv3's (and etcdctl's) default dial timeout.
pub(crate) const DEFAULT_DIAL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

/// TLS settings for [`ConnectOptions::tls`]: which server certificates to
/// trust, and a client certificate for servers that ask for one
/// (`--client-cert-auth`).
#[derive(Debug, Clone, Default)]
pub struct TlsOptions {
    /// PEM CA certificates the server's certificate must chain to.
    pub ca_pem: Option<Vec<u8>>,
    /// PEM client certificate (chain) and key, for mutual TLS.
    pub identity: Option<(Vec<u8>, Vec<u8>)>,
    /// Accept any server certificate (development only).
    pub insecure_skip_verify: bool,
}

impl TlsOptions {
    pub(crate) fn client_config(&self) -> Result<Arc<rustls::ClientConfig>, String> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?;
        let builder = if self.insecure_skip_verify {
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(NoVerification(provider)))
        } else {
            let ca = self
                .ca_pem
                .as_ref()
                .ok_or("TLS needs a CA certificate (or insecure_skip_verify)")?;
            let mut roots = rustls::RootCertStore::empty();
            for cert in CertificateDer::pem_slice_iter(ca) {
                roots
                    .add(cert.map_err(|e| format!("bad CA certificate: {e}"))?)
                    .map_err(|e| format!("bad CA certificate: {e}"))?;
            }
            builder.with_root_certificates(roots)
        };
        let mut config = match &self.identity {
            Some((cert, key)) => {
                let chain = CertificateDer::pem_slice_iter(cert)
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| format!("bad client certificate: {e}"))?;
                let key = PrivateKeyDer::from_pem_slice(key)
                    .map_err(|e| format!("bad client key: {e}"))?;
                builder
                    .with_client_auth_cert(chain, key)
                    .map_err(|e| format!("client certificate and key do not fit: {e}"))?
            }
            None => builder.with_no_client_auth(),
        };
        config.alpn_protocols = vec![b"h2".to_vec()];
        Ok(Arc::new(config))
    }
}

/// `insecure_skip_verify`: signatures are still checked, the chain is not.
#[derive(Debug)]
struct NoVerification(Arc<rustls::crypto::CryptoProvider>);

impl rustls::client::danger::ServerCertVerifier for NoVerification {
    fn verify_server_cert(
        &self,
        _: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        _: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
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
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// A lazily connected channel that speaks TLS to `host:port`.
pub(crate) fn tls_channel(
    endpoint: tonic::transport::Endpoint,
    config: Arc<rustls::ClientConfig>,
    dial_timeout: std::time::Duration,
) -> Channel {
    let connector = tower::service_fn(move |uri: http::Uri| {
        let config = config.clone();
        let dial = async move {
            let host = uri.host().unwrap_or("localhost").to_string();
            let port = uri.port_u16().unwrap_or(2379);
            let tcp = tokio::net::TcpStream::connect((host.as_str(), port)).await?;
            tcp.set_nodelay(true)?;
            let bare = host.trim_matches(['[', ']']).to_string();
            let name = ServerName::try_from(bare)
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
            let tls = tokio_rustls::TlsConnector::from(config)
                .connect(name, tcp)
                .await?;
            Ok::<_, std::io::Error>(hyper_util::rt::TokioIo::new(tls))
        };
        // A server that takes the connection but never finishes the
        // handshake must not hold the caller past its dial timeout.
        async move {
            tokio::time::timeout(dial_timeout, dial)
                .await
                .map_err(|_| std::io::Error::new(std::io::ErrorKind::TimedOut, "dial timed out"))?
        }
    });
    endpoint.connect_with_connector_lazy(connector)
}

/// The token every call carries, and how to get a new one.
#[derive(Clone, Default)]
pub(crate) struct Credentials {
    inner: Arc<CredentialsInner>,
}

#[derive(Default)]
struct CredentialsInner {
    user: Option<(String, String)>,
    token: RwLock<Option<MetadataValue<Ascii>>>,
    refreshing: tokio::sync::Mutex<()>,
}

impl Credentials {
    /// Credentials for `user` (`(name, password)`), with no token yet;
    /// `None`: calls carry no token.
    pub fn new(user: Option<(String, String)>) -> Credentials {
        Credentials {
            inner: Arc::new(CredentialsInner {
                user,
                ..Default::default()
            }),
        }
    }

    /// Whether `status` means the token must be renewed (and can be).
    pub fn renewable(&self, status: &tonic::Status) -> bool {
        self.inner.user.is_some() && token_died(status.message())
    }

    /// Whether a watch canceled for `reason` can be created again after a
    /// renewal (etcd#12385: a long-lived watch outlives its token).
    pub fn renewable_reason(&self, reason: &str) -> bool {
        self.inner.user.is_some() && token_died(reason)
    }

    /// Authenticates again over `channel` (once for concurrent callers
    /// that saw the same dead token).
    pub async fn renew(&self, channel: Channel) -> Result<(), tonic::Status> {
        let Some((name, password)) = &self.inner.user else {
            return Ok(());
        };
        let seen = self.inner.token.read().clone();
        let _one = self.inner.refreshing.lock().await;
        if *self.inner.token.read() != seen {
            return Ok(());
        }
        let resp = pb::auth_client::AuthClient::new(channel)
            .authenticate(pb::AuthenticateRequest {
                name: name.clone(),
                password: password.clone(),
            })
            .await?
            .into_inner();
        let token = resp
            .token
            .parse()
            .map_err(|_| tonic::Status::internal("the server sent a token that is not ASCII"))?;
        *self.inner.token.write() = Some(token);
        Ok(())
    }
}

/// etcd's errors after which clientv3 authenticates again.
pub(crate) fn token_died(message: &str) -> bool {
    message.contains("etcdserver: invalid auth token")
        || message.contains("etcdserver: revision of auth store is old")
}

impl tonic::service::Interceptor for Credentials {
    fn call(
        &mut self,
        mut request: tonic::Request<()>,
    ) -> Result<tonic::Request<()>, tonic::Status> {
        if let Some(token) = self.inner.token.read().clone() {
            request.metadata_mut().insert("token", token);
        }
        Ok(request)
    }
}
