//! etcd's simple tokens: `<16 random letters>.<n>`, valid for a TTL that
//! each use starts again. The member that checks the password makes one up
//! and announces it through the log; every member learns it when it applies
//! that announcement (etcd replicates its simple tokens through raft the
//! same way), so a client may send it to any member. Each member keeps its
//! own TTL clock, as in etcd.

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

/// Whether `token` has a simple token's shape, `<16 letters>.<n>`.
pub(crate) fn shaped_like_simple_token(token: &str) -> bool {
    token.split_once('.').is_some_and(|(letters, n)| {
        letters.len() == 16
            && letters.bytes().all(|b| b.is_ascii_alphabetic())
            && !n.is_empty()
            && n.len() <= 20
            && n.bytes().all(|b| b.is_ascii_digit())
    })
}

/// A simple token as announced through the log (protobuf, so that a later
/// build may add fields and still read an older member's).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct AnnouncedToken {
    #[prost(string, tag = "1")]
    pub token: String,
    #[prost(string, tag = "2")]
    pub user: String,
    /// The user's password hash when the password was checked.
    #[prost(bytes = "bytes", tag = "3")]
    pub password: Bytes,
    /// The auth revision the password was checked at.
    #[prost(uint64, tag = "4")]
    pub revision: u64,
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

    /// A new token, not yet valid anywhere: [`SimpleTokens::learn`] makes it so.
    pub fn make_up(&mut self) -> String {
        self.counter += 1;
        let letters: String = rand::rng()
            .sample_iter(rand::distr::Alphabetic)
            .take(16)
            .map(char::from)
            .collect();
        format!("{letters}.{}", self.counter)
    }

    /// Makes `token` name `user` (with the password hash and auth revision
    /// it was issued under) for a TTL from `now`.
    pub fn learn(
        &mut self,
        token: String,
        user: String,
        password: Bytes,
        revision: u64,
        now: Instant,
    ) {
        self.sweep(now);
        self.issued.insert(
            token,
            Issued {
                user,
                password,
                revision,
                expires: now + self.ttl,
            },
        );
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

    /// Whether `token` is live here (its TTL untouched).
    pub fn knows(&self, token: &str, now: Instant) -> bool {
        self.issued.get(token).is_some_and(|t| t.expires > now)
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
        let token = tokens.make_up();
        assert!(tokens.use_token(&token, t0).is_none(), "not learned yet");
        tokens.learn(token.clone(), "alice".into(), Bytes::new(), 1, t0);
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
