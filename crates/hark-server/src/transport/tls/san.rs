//! etcd's check of a dialling peer's certificate against the address it
//! dials from (`checkCertSAN`; off with `--peer-skip-client-san-verification`):
//! a certificate that names IP addresses must name the caller's, else one
//! of its DNS names must resolve to it (forward) or be the name the
//! caller's address resolves to (reverse, wildcards allowed). A
//! certificate that names neither is not checked.

use std::net::IpAddr;

use x509_parser::extensions::GeneralName;

/// The most DNS names of one certificate looked up.
const MAX_LOOKUPS: usize = 16;

/// The SANs of a certificate: its IP addresses and DNS names.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Sans {
    pub ips: Vec<IpAddr>,
    pub dns: Vec<String>,
}

impl Sans {
    pub fn of(der: &[u8]) -> Sans {
        let mut sans = Sans::default();
        let Ok((_, cert)) = x509_parser::parse_x509_certificate(der) else {
            return sans;
        };
        let Ok(Some(ext)) = cert.subject_alternative_name() else {
            return sans;
        };
        for name in &ext.value.general_names {
            match name {
                GeneralName::IPAddress(bytes) => {
                    if let Ok(v4) = <[u8; 4]>::try_from(*bytes) {
                        sans.ips.push(IpAddr::from(v4));
                    } else if let Ok(v6) = <[u8; 16]>::try_from(*bytes) {
                        // An IPv4-mapped address is the IPv4 one, as Go
                        // compares them.
                        sans.ips.push(IpAddr::from(v6).to_canonical());
                    }
                }
                GeneralName::DNSName(dns) => sans.dns.push((*dns).to_string()),
                _ => {}
            }
        }
        sans
    }

    /// Whether the certificate is valid for `host`, as Go's
    /// `Certificate.VerifyHostname`: an IP address among the IP SANs, a
    /// name among the DNS SANs (case aside; `*.` matching one label).
    pub fn names(&self, host: &str) -> bool {
        let host = host.trim_end_matches('.');
        if let Ok(ip) = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>()
        {
            return self.ips.contains(&ip);
        }
        let host = host.to_ascii_lowercase();
        self.dns.iter().any(|pattern| {
            let pattern = pattern.trim_end_matches('.').to_ascii_lowercase();
            match pattern.strip_prefix("*.") {
                Some(suffix) => host
                    .split_once('.')
                    .is_some_and(|(label, rest)| !label.is_empty() && rest == suffix),
                None => pattern == host,
            }
        })
    }

    /// Whether `caller` may present this certificate; the refusal in Go's
    /// (and so etcd's) words.
    pub async fn admit(&self, caller: IpAddr) -> Result<(), String> {
        // A caller on a dual-stack listener arrives IPv4-mapped.
        let caller = caller.to_canonical();
        if self.ips.is_empty() && self.dns.is_empty() {
            return Ok(());
        }
        if self.ips.contains(&caller) {
            return Ok(());
        }
        if self.dns.is_empty() {
            // Go's x509.HostnameError for an IP host.
            let valid: Vec<String> = self.ips.iter().map(IpAddr::to_string).collect();
            return Err(format!(
                "x509: certificate is valid for {}, not {caller}",
                valid.join(", ")
            ));
        }
        if self.dns_names_reach(caller).await {
            return Ok(());
        }
        Err(format!(
            "tls: {:?} does not match any of DNSNames {:?}",
            caller.to_string(),
            self.dns
        ))
    }

    async fn dns_names_reach(&self, caller: IpAddr) -> bool {
        // Reverse: the name the caller's address has.
        if let Some(name) = reverse_name(caller).await {
            let name = name.trim_end_matches('.');
            for dns in &self.dns {
                let matches = match dns.strip_prefix('*') {
                    Some(suffix) if suffix.starts_with('.') => name.ends_with(suffix),
                    _ => dns == name,
                };
                if matches {
                    return true;
                }
            }
        }
        // Forward: the addresses each exact name has (the first
        // MAX_LOOKUPS: a certificate may list many names, and each is a
        // lookup the caller makes this member wait for).
        for dns in self
            .dns
            .iter()
            .filter(|d| !d.starts_with("*."))
            .take(MAX_LOOKUPS)
        {
            if let Ok(addrs) = tokio::net::lookup_host((dns.as_str(), 0)).await
                && addrs.into_iter().any(|a| a.ip().to_canonical() == caller)
            {
                return true;
            }
        }
        false
    }
}

/// The name `ip` resolves to (a PTR record, or /etc/hosts), if any.
async fn reverse_name(ip: IpAddr) -> Option<String> {
    tokio::task::spawn_blocking(move || {
        let addr = std::net::SocketAddr::new(ip, 0);
        let sock = socket2_addr(&addr);
        let mut host = [0 as libc::c_char; 1025];
        // SAFETY: `sock` is a valid sockaddr of the given length, `host` a
        // writable buffer of the given length; no service is asked for.
        let rc = unsafe {
            libc::getnameinfo(
                sock.0.as_ptr().cast(),
                sock.1,
                host.as_mut_ptr(),
                host.len() as libc::socklen_t,
                std::ptr::null_mut(),
                0,
                libc::NI_NAMEREQD,
            )
        };
        if rc != 0 {
            return None;
        }
        // SAFETY: getnameinfo wrote a NUL-terminated string into `host`.
        let name = unsafe { std::ffi::CStr::from_ptr(host.as_ptr()) };
        name.to_str().ok().map(str::to_owned)
    })
    .await
    .ok()
    .flatten()
}

/// `addr` as the bytes of a `sockaddr_in` / `sockaddr_in6` and their length.
fn socket2_addr(addr: &std::net::SocketAddr) -> (Vec<u8>, libc::socklen_t) {
    match addr {
        std::net::SocketAddr::V4(v4) => {
            // SAFETY: sockaddr_in is plain data; all-zero is a valid value.
            let mut sin: libc::sockaddr_in = unsafe { std::mem::zeroed() };
            sin.sin_family = libc::AF_INET as libc::sa_family_t;
            sin.sin_addr.s_addr = u32::from_ne_bytes(v4.ip().octets());
            let len = std::mem::size_of::<libc::sockaddr_in>();
            // SAFETY: reading the struct's bytes.
            let bytes =
                unsafe { std::slice::from_raw_parts((&raw const sin).cast::<u8>(), len) }.to_vec();
            (bytes, len as libc::socklen_t)
        }
        std::net::SocketAddr::V6(v6) => {
            // SAFETY: sockaddr_in6 is plain data; all-zero is a valid value.
            let mut sin6: libc::sockaddr_in6 = unsafe { std::mem::zeroed() };
            sin6.sin6_family = libc::AF_INET6 as libc::sa_family_t;
            sin6.sin6_addr.s6_addr = v6.ip().octets();
            let len = std::mem::size_of::<libc::sockaddr_in6>();
            // SAFETY: reading the struct's bytes.
            let bytes =
                unsafe { std::slice::from_raw_parts((&raw const sin6).cast::<u8>(), len) }.to_vec();
            (bytes, len as libc::socklen_t)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sans(ips: &[&str], dns: &[&str]) -> Sans {
        Sans {
            ips: ips.iter().map(|s| s.parse().unwrap()).collect(),
            dns: dns.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[tokio::test]
    async fn an_address_the_certificate_names_or_no_names_at_all_is_admitted() {
        let caller: IpAddr = "127.0.0.1".parse().unwrap();
        sans(&[], &[]).admit(caller).await.unwrap();
        sans(&["10.0.0.9", "127.0.0.1"], &[])
            .admit(caller)
            .await
            .unwrap();
        // localhost resolves to 127.0.0.1 (forward, /etc/hosts).
        sans(&["10.0.0.9"], &["localhost"])
            .admit(caller)
            .await
            .unwrap();
    }

    #[test]
    fn host_names_match_as_gos_verify_hostname() {
        let cert = sans(&["127.0.0.1"], &["localhost", "*.example.com"]);
        assert!(cert.names("localhost"));
        assert!(cert.names("LOCALHOST"));
        assert!(cert.names("127.0.0.1"));
        assert!(cert.names("a.example.com"));
        assert!(!cert.names("a.b.example.com"));
        assert!(!cert.names("example.com"));
        assert!(!cert.names("10.0.0.1"));
        assert!(!cert.names("example2.com"));
    }

    #[tokio::test]
    async fn another_address_is_refused_in_gos_words() {
        let caller: IpAddr = "10.1.2.3".parse().unwrap();
        let err = sans(&["127.0.0.1"], &[]).admit(caller).await.unwrap_err();
        assert_eq!(
            err,
            "x509: certificate is valid for 127.0.0.1, not 10.1.2.3"
        );
        let err = sans(&["127.0.0.1", "::1"], &[])
            .admit(caller)
            .await
            .unwrap_err();
        assert_eq!(
            err,
            "x509: certificate is valid for 127.0.0.1, ::1, not 10.1.2.3"
        );
        let err = sans(&[], &["localhost"]).admit(caller).await.unwrap_err();
        assert_eq!(
            err,
            r#"tls: "10.1.2.3" does not match any of DNSNames ["localhost"]"#
        );
    }
}
