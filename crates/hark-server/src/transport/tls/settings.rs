//! One listener family's TLS flags.

use std::path::PathBuf;

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
    /// `--peer-cert-allowed-cn` (or the client's, from the config file):
    /// the common names the other side's certificate may have; empty: any.
    pub allowed_cns: Vec<String>,
    /// `--peer-cert-allowed-hostname` (or the client's): names one of which
    /// the other side's certificate must be valid for; set, it replaces
    /// the common-name check (as etcd).
    pub allowed_hostnames: Vec<String>,
    /// Also dial with these settings (peer links): the certificate is shown
    /// as a client certificate, and the other side's is verified against
    /// the trusted CA (not at all under auto TLS, as etcd).
    pub dials: bool,
    /// Check a caller's certificate against the address it connects from
    /// (etcd does on its peer listeners; see `san.rs`).
    pub check_caller_san: bool,
}

impl TlsSettings {
    /// Whether any certificate is configured (or generated).
    pub fn is_set(&self) -> bool {
        self.auto_tls || self.cert_file.is_some() || self.key_file.is_some()
    }

    /// The flag `name` as this listener family spells it (`--peer-…`).
    pub(super) fn flag(&self, name: &str) -> String {
        if self.dials {
            format!("--peer-{name}")
        } else {
            format!("--{name}")
        }
    }
}
