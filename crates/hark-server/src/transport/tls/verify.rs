//! Certificate verifiers: the chain's verdict plus
//! `--peer-cert-allowed-cn`, and auto TLS's peers, which etcd does not
//! verify.

use std::sync::Arc;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{DigitallySignedStruct, DistinguishedName, SignatureScheme};

use crate::transport::conn::common_name;

/// What the other side's certificate must name beyond a valid chain: one
/// of `--peer-cert-allowed-hostname`'s names in its SANs (as Go's
/// `VerifyHostname`: an IP address among its IP SANs, else a DNS SAN,
/// wildcards allowed) or, without those, one of `--peer-cert-allowed-cn`'s
/// common names, exactly (or the client's twins, from the config file).
#[derive(Debug, Clone)]
pub(super) enum AllowedNames {
    Hostnames(Vec<String>),
    CommonNames(Vec<String>),
}

impl AllowedNames {
    /// What `s` asks for, if anything (both at once are refused earlier,
    /// as etcd refuses them).
    pub(super) fn of(s: &super::settings::TlsSettings) -> Option<AllowedNames> {
        if !s.allowed_hostnames.is_empty() {
            Some(AllowedNames::Hostnames(s.allowed_hostnames.clone()))
        } else if !s.allowed_cns.is_empty() {
            Some(AllowedNames::CommonNames(s.allowed_cns.clone()))
        } else {
            None
        }
    }

    fn admit(&self, end_entity: &CertificateDer<'_>) -> bool {
        match self {
            AllowedNames::CommonNames(cns) => {
                common_name(end_entity).is_some_and(|cn| cns.contains(&cn))
            }
            AllowedNames::Hostnames(hosts) => {
                let sans = super::san::Sans::of(end_entity);
                hosts.iter().any(|host| sans.names(host))
            }
        }
    }
}

/// A verifier that also requires the certificate to name one of
/// [`AllowedNames`], checked on the verified chain's leaf as etcd does.
#[derive(Debug)]
pub(super) struct AllowedCn<V: ?Sized> {
    pub(super) inner: Arc<V>,
    pub(super) names: AllowedNames,
}

impl<V: ?Sized> AllowedCn<V> {
    fn check(&self, end_entity: &CertificateDer<'_>) -> Result<(), rustls::Error> {
        if self.names.admit(end_entity) {
            return Ok(());
        }
        tracing::debug!(
            common_name = ?common_name(end_entity),
            allowed = ?self.names,
            "certificate names none of the allowed"
        );
        // As Go's VerifyPeerCertificate refusal: a bad_certificate alert
        // to the other side, logged here in etcd's words ("client
        // certificate authentication failed", see `super::go_words`).
        Err(rustls::Error::InvalidCertificate(
            rustls::CertificateError::NotValidForName,
        ))
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
pub(super) struct Unverified(pub(super) Arc<CryptoProvider>);

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

/// A client certificate that is byte for byte one of the trusted CAs (a
/// self-signed root used as the client's own certificate, as etcd's own
/// tests do). Go's verifier, and so etcd, accepts a CA as the client's
/// certificate; webpki refuses it (`CaUsedAsEndEntity`), and etcdctl then
/// retried for ever. Accepted only for that refusal, only when the
/// certificate is itself trusted (so no chain is left to check) and only
/// within its validity period; any other verdict of `inner` stands.
#[derive(Debug)]
pub(super) struct RootAsClient {
    pub(super) inner: Arc<dyn ClientCertVerifier>,
    pub(super) roots: Vec<CertificateDer<'static>>,
}

impl RootAsClient {
    fn is_trusted_root_in_validity(&self, cert: &CertificateDer<'_>, now: UnixTime) -> bool {
        if !self.roots.iter().any(|root| root.as_ref() == cert.as_ref()) {
            return false;
        }
        let Ok((_, parsed)) = x509_parser::parse_x509_certificate(cert.as_ref()) else {
            return false;
        };
        let now = i64::try_from(now.as_secs()).unwrap_or(i64::MAX);
        let validity = parsed.validity();
        validity.not_before.timestamp() <= now && now <= validity.not_after.timestamp()
    }
}

impl ClientCertVerifier for RootAsClient {
    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        self.inner.root_hint_subjects()
    }

    fn client_auth_mandatory(&self) -> bool {
        self.inner.client_auth_mandatory()
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        match self
            .inner
            .verify_client_cert(end_entity, intermediates, now)
        {
            Err(rustls::Error::InvalidCertificate(rustls::CertificateError::Other(other)))
                if other.to_string() == "CaUsedAsEndEntity"
                    && self.is_trusted_root_in_validity(end_entity, now) =>
            {
                Ok(ClientCertVerified::assertion())
            }
            verdict => verdict,
        }
    }

    delegate_signatures!();
}
