//! `AuthStore`: the auth state of one member, over its store's records.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use hark_mvcc::Store;
use parking_lot::{Mutex, RwLock};

use crate::caller::Caller;
use crate::error::AuthError;
use crate::jwt::JwtTokens;
use crate::state::AuthState;
use crate::tokens::{AnnouncedToken, SimpleTokens, shaped_like_simple_token};

/// The announcement topic of simple tokens (see [`Login::announcement`]).
pub const SIMPLE_TOKEN_TOPIC: &str = "auth/simple-token";

/// A password that checked out.
#[derive(Debug, Clone)]
pub struct Login {
    /// The token to give the client.
    pub token: String,
    /// For a simple token: what to write through the log (its
    /// [`hark_mvcc::Announcement::into_request`]) before answering the client.
    /// The token is valid on a member once that member has applied it, so
    /// every member of a cluster knows it, as in etcd. `None` for a JWT,
    /// which any member verifies by its signature.
    pub announcement: Option<hark_mvcc::Announcement>,
}

/// etcd's `--auth-token` kinds.
#[derive(Debug, Clone, Default)]
pub enum TokenKind {
    /// Random tokens this member remembers (`--auth-token-ttl` from last use).
    #[default]
    Simple,
    /// Signed tokens any member with the key verifies.
    Jwt(Arc<JwtTokens>),
}

#[derive(Debug, Clone)]
pub struct AuthOptions {
    /// bcrypt's cost for new passwords (etcd's `--bcrypt-cost`, 4..=31).
    pub bcrypt_cost: u32,
    /// A simple token's life since its last use (etcd's `--auth-token-ttl`).
    pub token_ttl: Duration,
    pub tokens: TokenKind,
}

impl Default for AuthOptions {
    fn default() -> Self {
        AuthOptions {
            bcrypt_cost: 10,
            token_ttl: Duration::from_secs(300),
            tokens: TokenKind::Simple,
        }
    }
}

/// Who a request comes from, as it says.
#[derive(Debug, Clone, Copy, Default)]
pub struct Credentials<'a> {
    /// The token from `token` / `authorization` metadata (`Bearer ` removed).
    pub token: Option<&'a str>,
    /// The verified client certificate's common name, under `--client-cert-auth`.
    pub common_name: Option<&'a str>,
}

/// Users, roles and tokens of one member. Cheap to clone.
#[derive(Clone)]
pub struct AuthStore {
    inner: Arc<Inner>,
}

struct Inner {
    store: Store,
    options: AuthOptions,
    /// Read by every request: shared, rebuilt only when the records change.
    state: RwLock<Arc<AuthState>>,
    tokens: Tokens,
}

impl Inner {
    /// Takes a simple token any member announced (on the store's committer
    /// thread, in log order).
    fn learn_token(&self, body: &Bytes) {
        let Tokens::Simple(tokens) = &self.tokens else {
            return;
        };
        match <AnnouncedToken as prost::Message>::decode(body.clone()) {
            Ok(t) => tokens
                .lock()
                .learn(t.token, t.user, t.password, t.revision, Instant::now()),
            // Every member drops it alike; the client's token is refused.
            Err(e) => tracing::warn!(error = %e, "an undecodable simple-token announcement"),
        }
    }
}

enum Tokens {
    Simple(Mutex<SimpleTokens>),
    Jwt(Arc<JwtTokens>),
}

impl AuthStore {
    pub fn new(store: Store, options: AuthOptions) -> Result<AuthStore, AuthError> {
        let state = AuthState::load(&store, store.records_generation())?;
        let auth = AuthStore {
            inner: Arc::new(Inner {
                tokens: match &options.tokens {
                    TokenKind::Simple => {
                        Tokens::Simple(Mutex::new(SimpleTokens::new(options.token_ttl)))
                    }
                    TokenKind::Jwt(jwt) => Tokens::Jwt(jwt.clone()),
                },
                state: RwLock::new(Arc::new(state)),
                store,
                options,
            }),
        };
        if matches!(auth.inner.tokens, Tokens::Simple(_)) {
            // Weak: the store holds the listener, and this holds the store.
            let weak = Arc::downgrade(&auth.inner);
            auth.inner.store.listen(
                SIMPLE_TOKEN_TOPIC,
                Arc::new(move |body| {
                    if let Some(inner) = weak.upgrade() {
                        inner.learn_token(body);
                    }
                }),
            );
        }
        Ok(auth)
    }

    /// The current state (decoded again only when the records changed).
    pub fn state(&self) -> Result<Arc<AuthState>, AuthError> {
        let generation = self.inner.store.records_generation();
        {
            let cached = self.inner.state.read();
            if cached.generation == generation {
                return Ok(cached.clone());
            }
        }
        let mut cached = self.inner.state.write();
        if cached.generation != generation {
            *cached = Arc::new(AuthState::load(&self.inner.store, generation)?);
        }
        Ok(cached.clone())
    }

    /// The auth revision while auth is enabled, else 0 (what Hark puts in
    /// response headers). A failed read of the state counts as disabled:
    /// the request it is for reports that failure itself.
    pub fn header_revision(&self) -> u64 {
        let of = |s: &AuthState| if s.enabled() { s.revision() } else { 0 };
        // Every response asks: the cached state, without an Arc clone.
        {
            let cached = self.inner.state.read();
            if cached.generation == self.inner.store.records_generation() {
                return of(&cached);
            }
        }
        self.state().map_or(0, |s| of(&s))
    }

    /// The caller of a request. With auth disabled every caller is let
    /// through and credentials are not looked at (as etcd).
    pub fn caller(&self, credentials: Credentials<'_>) -> Result<Caller, AuthError> {
        let state = self.state()?;
        if !state.enabled() {
            return Ok(Caller::new(state, None));
        }
        if let Some(token) = credentials.token {
            let user = match &self.inner.tokens {
                Tokens::Simple(tokens) => {
                    let owner = tokens
                        .lock()
                        .use_token(token, Instant::now())
                        .ok_or(AuthError::InvalidAuthToken)?;
                    let live = state
                        .user(&owner.user)
                        .is_some_and(|u| u.password == owner.password)
                        && owner.revision >= state.enabled_at();
                    if !live {
                        tokens.lock().revoke(token);
                        return Err(AuthError::InvalidAuthToken);
                    }
                    owner.user
                }
                // As etcd: a JWT says its auth revision; any auth change
                // since makes it old, and the client authenticates again.
                Tokens::Jwt(jwt) => {
                    let (user, revision) = jwt.verify(token).ok_or(AuthError::InvalidAuthToken)?;
                    if revision < state.revision() {
                        return Err(AuthError::AuthOldRevision);
                    }
                    user
                }
            };
            return Ok(Caller::new(state, Some(user)));
        }
        let user = credentials.common_name.map(str::to_owned);
        Ok(Caller::new(state, user))
    }

    /// Whether a request carrying `token` should wait for this member to
    /// catch up with the log before it is judged: auth is on, simple tokens
    /// are in use, and `token` has their shape but is unknown here. The
    /// client may have been given it by another member a moment ago, and
    /// this member has not applied its announcement yet (etcd waits for the
    /// raft index its token names for the same reason).
    pub fn awaits_token(&self, token: &str) -> bool {
        let Tokens::Simple(tokens) = &self.inner.tokens else {
            return false;
        };
        // A known token (nearly every request) costs one lookup.
        shaped_like_simple_token(token)
            && !tokens.lock().knows(token, Instant::now())
            && self.state().is_ok_and(|s| s.enabled())
    }

    /// etcd's Authenticate: checks the password (bcrypt: slow on purpose;
    /// call it off the async runtime) and makes up a token. A simple token
    /// is valid only once its [`Login::announcement`] is applied.
    pub fn authenticate(&self, name: &str, password: &str) -> Result<Login, AuthError> {
        let state = self.state()?;
        if !state.enabled() {
            return Err(AuthError::AuthNotEnabled);
        }
        let user = state.user(name).ok_or(AuthError::AuthFailed)?;
        if user.no_password() {
            return Err(AuthError::NoPasswordUser);
        }
        let hash = std::str::from_utf8(&user.password).map_err(|_| AuthError::AuthFailed)?;
        if !bcrypt::verify(password, hash).unwrap_or(false) {
            return Err(AuthError::AuthFailed);
        }
        match &self.inner.tokens {
            Tokens::Simple(tokens) => {
                let token = tokens.lock().make_up();
                let announced = AnnouncedToken {
                    token: token.clone(),
                    user: name.to_owned(),
                    password: user.password.clone(),
                    revision: state.revision(),
                };
                Ok(Login {
                    token,
                    announcement: Some(hark_mvcc::Announcement {
                        topic: SIMPLE_TOKEN_TOPIC.to_owned(),
                        body: Bytes::from(prost::Message::encode_to_vec(&announced)),
                    }),
                })
            }
            Tokens::Jwt(jwt) => Ok(Login {
                token: jwt.issue(name, state.revision())?,
                announcement: None,
            }),
        }
    }

    /// A password's bcrypt hash at the configured cost, in Go's `$2a$` form
    /// (what etcd stores, so snapshots move both ways). Slow on purpose.
    pub fn hash_password(&self, password: &str) -> Result<Bytes, AuthError> {
        let hashed = bcrypt::hash_with_result(password, self.inner.options.bcrypt_cost)
            .map_err(|e| AuthError::Hashing(e.to_string()))?;
        Ok(Bytes::from(
            hashed.format_for_version(bcrypt::Version::TwoA),
        ))
    }
}
