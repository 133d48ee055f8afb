//! etcd's simple tokens: `<16 random letters>.<n>`, known to the member that
//! issued them, valid for a TTL that each use starts again.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use bytes::Bytes;
use rand::Rng;

struct Issued {
    user: String,
    /// The user's password hash when issued: a changed password voids it.
    password: Bytes,
    /// The auth revision when issued: a token older than the last enable is void.
    revision: u64,
    expires: Instant,
}

pub(crate) struct SimpleTokens {
    ttl: Duration,
    issued: HashMap<String, Issued>,
    counter: u64,
}

/// What a token names, if it is still live.
pub(crate) struct TokenOwner {
    pub user: String,
    pub password: Bytes,
    pub revision: u64,
}

impl SimpleTokens {
    pub fn new(ttl: Duration) -> SimpleTokens {
        SimpleTokens {
            ttl,
            issued: HashMap::new(),
            counter: 0,
        }
    }

    pub fn issue(&mut self, user: &str, password: Bytes, revision: u64, now: Instant) -> String {
        self.sweep(now);
        self.counter += 1;
        let letters: String = rand::rng()
            .sample_iter(rand::distr::Alphabetic)
            .take(16)
            .map(char::from)
            .collect();
        let token = format!("{letters}.{}", self.counter);
        self.issued.insert(
            token.clone(),
            Issued {
                user: user.to_owned(),
                password,
                revision,
                expires: now + self.ttl,
            },
        );
        token
    }

    /// The token's owner, its TTL started again; `None` if unknown or expired.
    pub fn use_token(&mut self, token: &str, now: Instant) -> Option<TokenOwner> {
        let issued = self.issued.get_mut(token)?;
        if issued.expires <= now {
            self.issued.remove(token);
            return None;
        }
        issued.expires = now + self.ttl;
        Some(TokenOwner {
            user: issued.user.clone(),
            password: issued.password.clone(),
            revision: issued.revision,
        })
    }

    pub fn revoke(&mut self, token: &str) {
        self.issued.remove(token);
    }

    /// Forgets expired tokens when the table reaches a power of two (from
    /// 1024 on), so sweeping costs O(1) amortized per issue and the table
    /// holds at most twice the live tokens (expired ones are also dropped
    /// when used). Live tokens are bounded only by logins within a TTL, as
    /// in etcd.
    fn sweep(&mut self, now: Instant) {
        if self.issued.len() >= 1024 && self.issued.len().is_power_of_two() {
            self.issued.retain(|_, t| t.expires > now);
        }
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.issued.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_lives_for_its_ttl_from_its_last_use() {
        let t0 = Instant::now();
        let mut tokens = SimpleTokens::new(Duration::from_secs(10));
        let token = tokens.issue("alice", Bytes::new(), 1, t0);
        let (letters, n) = token.split_once('.').unwrap();
        assert_eq!(letters.len(), 16);
        assert!(letters.chars().all(|c| c.is_ascii_alphabetic()));
        assert_eq!(n, "1");
        assert!(
            tokens
                .use_token(&token, t0 + Duration::from_secs(9))
                .is_some()
        );
        assert!(
            tokens
                .use_token(&token, t0 + Duration::from_secs(18))
                .is_some()
        );
        assert!(
            tokens
                .use_token(&token, t0 + Duration::from_secs(29))
                .is_none()
        );
        assert_eq!(tokens.len(), 0);
        assert!(tokens.use_token("nope.1", t0).is_none());
    }
}
