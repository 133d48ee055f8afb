//! TLS with rustls on the client and peer listeners, and on the peer links
//! this member dials: etcd's flags (`--cert-file`, `--key-file`,
//! `--trusted-ca-file`, `--client-cert-auth`, `--client-crl-file`,
//! `--auto-tls`, `--tls-min-version`, `--tls-max-version`,
//! `--cipher-suites`, and their `--peer-*` twins with
//! `--peer-cert-allowed-cn`), handshakes off the accept loop under a
//! timeout, and certificates reloaded on SIGHUP or when their files change,
//! so rotation needs no restart.
//!
//! Rooms: `settings.rs` (the flags of one listener family), `config.rs`
//! (rustls configs built from them), `verify.rs` (the allowed common name,
//! and auto TLS's unverified peers), `auto.rs` (`--auto-tls`'s self-signed
//! certificate); this file holds the listener family's current configs and
//! their reloading. What a connection says of its caller is in
//! `transport/conn.rs`.

mod auto;
mod config;
mod san;
mod settings;
mod verify;

use std::io;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use parking_lot::RwLock;
use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ServerConfig};

use crate::transport::conn::CertUser;
use auto::self_signed;
use config::{build, dialer};

pub use san::Sans;
pub use settings::TlsSettings;

/// How long a client has to finish its TLS handshake (etcd's
/// GHSA-6vch-q96h-7gc3: a client that opens connections and never
/// completes a handshake must not hold the listener up).
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// How often the certificate files are looked at for changes.
const RELOAD_POLL: Duration = Duration::from_secs(2);

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

    /// Whether a caller's certificate must name the address it connects
    /// from (peer listeners, as etcd).
    pub fn checks_caller_san(&self) -> bool {
        self.settings.check_caller_san
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

    /// Reloads on SIGHUP and when a file changes; runs until dropped.
    pub async fn watch_files(self: Arc<Self>) {
        let tls = self;
        #[cfg(unix)]
        let mut hup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()).ok();
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

/// A failed handshake in the words etcd (Go's crypto/tls) logs it with:
/// `remote error: tls: bad certificate` when the other side refused ours,
/// `client certificate authentication failed` for a common name not
/// allowed; rustls' own words otherwise.
pub fn go_words(e: &io::Error) -> String {
    use rustls::{AlertDescription as A, CertificateError, Error};
    let Some(tls) = e.get_ref().and_then(|inner| inner.downcast_ref::<Error>()) else {
        return e.to_string();
    };
    match tls {
        Error::AlertReceived(alert) => {
            let name = match alert {
                A::CloseNotify => "close notify".to_string(),
                A::UnexpectedMessage => "unexpected message".to_string(),
                A::BadRecordMac => "bad record MAC".to_string(),
                A::RecordOverflow => "record overflow".to_string(),
                A::HandshakeFailure => "handshake failure".to_string(),
                A::BadCertificate => "bad certificate".to_string(),
                A::UnsupportedCertificate => "unsupported certificate".to_string(),
                A::CertificateRevoked => "revoked certificate".to_string(),
                A::CertificateExpired => "expired certificate".to_string(),
                A::CertificateUnknown => "unknown certificate".to_string(),
                A::IllegalParameter => "illegal parameter".to_string(),
                A::UnknownCA => "unknown certificate authority".to_string(),
                A::AccessDenied => "access denied".to_string(),
                A::DecodeError => "error decoding message".to_string(),
                A::DecryptError => "error decrypting message".to_string(),
                A::ProtocolVersion => "protocol version not supported".to_string(),
                A::InsufficientSecurity => "insufficient security level".to_string(),
                A::InternalError => "internal error".to_string(),
                A::UserCanceled => "user canceled".to_string(),
                A::NoApplicationProtocol => "no application protocol".to_string(),
                A::CertificateRequired => "certificate required".to_string(),
                other => format!("alert({})", u8::from(*other)),
            };
            format!("remote error: tls: {name}")
        }
        Error::InvalidCertificate(CertificateError::NotValidForName) => {
            "client certificate authentication failed".to_string()
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod go_words_tests {
    use super::go_words;
    use std::io;

    #[test]
    fn refusals_read_as_etcd_logs_them() {
        let wrap = |e: rustls::Error| io::Error::new(io::ErrorKind::InvalidData, e);
        assert_eq!(
            go_words(&wrap(rustls::Error::AlertReceived(
                rustls::AlertDescription::BadCertificate
            ))),
            "remote error: tls: bad certificate"
        );
        assert_eq!(
            go_words(&wrap(rustls::Error::InvalidCertificate(
                rustls::CertificateError::NotValidForName
            ))),
            "client certificate authentication failed"
        );
        let plain = io::Error::new(io::ErrorKind::UnexpectedEof, "eof");
        assert_eq!(go_words(&plain), "eof");
    }
}
