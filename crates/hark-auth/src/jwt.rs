//! etcd's JWT tokens (`--auth-token jwt,...`): signed, so any member with
//! the key verifies them and none keeps a table. The claims are etcd's:
//! `username`, `revision` (the auth revision at issue; an older one than
//! the store's is refused with `revision of auth store is old`, and clients
//! authenticate again) and `exp`. With only a public key a member verifies
//! tokens and issues none (etcd's verify-only mode).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use ring::signature::{self, KeyPair};
use serde::{Deserialize, Serialize};

use crate::error::AuthError;

/// The claims of etcd's tokens (Go's `jwt.MapClaims` of the same names).
#[derive(Debug, Serialize, Deserialize)]
struct Claims {
    username: String,
    revision: u64,
    exp: u64,
}

/// A token signer and verifier.
pub struct JwtTokens {
    algorithm: Algorithm,
    signing: Option<EncodingKey>,
    verifying: DecodingKey,
    /// Built once: every request with a token is checked against it.
    validation: Validation,
    ttl: Duration,
}

impl std::fmt::Debug for JwtTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtTokens")
            .field("algorithm", &self.algorithm)
            .field("verify_only", &self.signing.is_none())
            .field("ttl", &self.ttl)
            .finish()
    }
}

impl JwtTokens {
    /// etcd's options: `sign-method` (RS256/384/512, PS256/384/512,
    /// ES256/384, EdDSA, HS256/384/512), the PEM contents of `pub-key` and
    /// `priv-key` (the HMAC secret for HS*), and `ttl`. Errors name the
    /// problem (etcd's texts where it has one).
    pub fn new(
        sign_method: &str,
        public_pem: Option<&[u8]>,
        private_pem: Option<&[u8]>,
        ttl: Duration,
    ) -> Result<JwtTokens, String> {
        let algorithm: Algorithm = sign_method.parse().map_err(|_| {
            format!("auth: invalid auth signature method {sign_method:?} (etcd's sign-method)")
        })?;
        let missing = || "auth: missing key data (pub-key or priv-key)".to_string();
        let bad = |which: &str, e: &dyn std::fmt::Display| format!("auth: bad {which}: {e}");
        let (signing, verifying) = match algorithm {
            Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512 => {
                let secret = private_pem.ok_or_else(missing)?;
                (
                    Some(EncodingKey::from_secret(secret)),
                    DecodingKey::from_secret(secret),
                )
            }
            _ => {
                let signing = private_pem
                    .map(|pem| signing_key(algorithm, pem))
                    .transpose()
                    .map_err(|e| bad("priv-key", &e))?;
                let verifying = match (public_pem, private_pem) {
                    (Some(pem), _) => {
                        verifying_key(algorithm, pem).map_err(|e| bad("pub-key", &e))?
                    }
                    (None, Some(pem)) => {
                        public_of(algorithm, pem).map_err(|e| bad("priv-key", &e))?
                    }
                    (None, None) => return Err(missing()),
                };
                (signing, verifying)
            }
        };
        let mut validation = Validation::new(algorithm);
        // etcd (golang-jwt) allows no clock leeway.
        validation.leeway = 0;
        validation.set_required_spec_claims(&["exp"]);
        let tokens = JwtTokens {
            algorithm,
            signing,
            verifying,
            validation,
            ttl,
        };
        // Both keys given: they must be a pair (etcd's ErrKeyMismatch).
        // The probe's expiry is not checked: a TTL under a second may
        // already have passed.
        if tokens.signing.is_some() {
            let probe = tokens.issue("probe", 0).map_err(|e| e.to_string())?;
            let mut unexpired = tokens.validation.clone();
            unexpired.validate_exp = false;
            if tokens.decode(&probe, &unexpired).is_none() {
                return Err("auth: public and private keys don't match".into());
            }
        }
        Ok(tokens)
    }

    /// A token for `user` at auth revision `revision`, valid for the TTL.
    pub fn issue(&self, user: &str, revision: u64) -> Result<String, AuthError> {
        let key = self.signing.as_ref().ok_or(AuthError::VerifyOnly)?;
        let claims = Claims {
            username: user.to_owned(),
            revision,
            exp: (now() + self.ttl).as_secs(),
        };
        jsonwebtoken::encode(&Header::new(self.algorithm), &claims, key)
            .map_err(|e| AuthError::Signing(e.to_string()))
    }

    /// The user and auth revision a token names, if it is signed by our key
    /// with our algorithm and not expired.
    pub fn verify(&self, token: &str) -> Option<(String, u64)> {
        self.decode(token, &self.validation)
    }

    fn decode(&self, token: &str, validation: &Validation) -> Option<(String, u64)> {
        let data = jsonwebtoken::decode::<Claims>(token, &self.verifying, validation).ok()?;
        Some((data.claims.username, data.claims.revision))
    }
}

fn now() -> Duration {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
}

fn is_rsa(algorithm: Algorithm) -> bool {
    matches!(
        algorithm,
        Algorithm::RS256
            | Algorithm::RS384
            | Algorithm::RS512
            | Algorithm::PS256
            | Algorithm::PS384
            | Algorithm::PS512
    )
}

fn signing_key(algorithm: Algorithm, pem: &[u8]) -> Result<EncodingKey, String> {
    let key = match algorithm {
        a if is_rsa(a) => EncodingKey::from_rsa_pem(pem),
        Algorithm::ES256 | Algorithm::ES384 => {
            refuse_sec1(pem)?;
            EncodingKey::from_ec_pem(pem)
        }
        Algorithm::EdDSA => EncodingKey::from_ed_pem(pem),
        other => return Err(format!("{other:?} takes no key pair")),
    };
    key.map_err(|e| e.to_string())
}

fn verifying_key(algorithm: Algorithm, pem: &[u8]) -> Result<DecodingKey, String> {
    let key = match algorithm {
        a if is_rsa(a) => DecodingKey::from_rsa_pem(pem),
        Algorithm::ES256 | Algorithm::ES384 => DecodingKey::from_ec_pem(pem),
        Algorithm::EdDSA => DecodingKey::from_ed_pem(pem),
        other => return Err(format!("{other:?} takes no key pair")),
    };
    key.map_err(|e| e.to_string())
}

/// The public half of a private key (etcd verifies with it when no
/// `pub-key` is given).
fn public_of(algorithm: Algorithm, pem: &[u8]) -> Result<DecodingKey, String> {
    let block = pem::parse(pem).map_err(|e| e.to_string())?;
    let der = block.contents();
    let rng = ring::rand::SystemRandom::new();
    match algorithm {
        a if is_rsa(a) => {
            let pair = match block.tag() {
                "RSA PRIVATE KEY" => signature::RsaKeyPair::from_der(der),
                _ => signature::RsaKeyPair::from_pkcs8(der),
            }
            .map_err(|e| e.to_string())?;
            // ring gives the DER RSAPublicKey, which verification takes.
            Ok(DecodingKey::from_rsa_der(pair.public().as_ref()))
        }
        Algorithm::ES256 | Algorithm::ES384 => {
            refuse_sec1(pem)?;
            let curve = if algorithm == Algorithm::ES256 {
                &signature::ECDSA_P256_SHA256_FIXED_SIGNING
            } else {
                &signature::ECDSA_P384_SHA384_FIXED_SIGNING
            };
            let pair =
                signature::EcdsaKeyPair::from_pkcs8(curve, der, &rng).map_err(|e| e.to_string())?;
            Ok(DecodingKey::from_ec_der(pair.public_key().as_ref()))
        }
        Algorithm::EdDSA => {
            let pair = signature::Ed25519KeyPair::from_pkcs8_maybe_unchecked(der)
                .map_err(|e| e.to_string())?;
            Ok(DecodingKey::from_ed_der(pair.public_key().as_ref()))
        }
        other => Err(format!("{other:?} takes no key pair")),
    }
}

/// ring reads EC private keys in PKCS#8 only; say how to convert OpenSSL's
/// traditional form rather than fail with a parse error.
fn refuse_sec1(pem: &[u8]) -> Result<(), String> {
    if std::str::from_utf8(pem).is_ok_and(|s| s.contains("BEGIN EC PRIVATE KEY")) {
        return Err("EC private keys must be PKCS#8 (BEGIN PRIVATE KEY); \
                    convert with `openssl pkcs8 -topk8 -nocrypt`"
            .into());
    }
    Ok(())
}
