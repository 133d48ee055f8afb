//! etcd's auth rules end to end over a store: changes through the apply
//! path, tokens, and the checks a server makes per request.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use hark_auth::*;
use hark_mvcc::*;

fn auth_with(tokens: TokenKind) -> (Store, AuthStore) {
    let store = Store::in_memory();
    let options = AuthOptions {
        bcrypt_cost: 4,
        token_ttl: Duration::from_secs(60),
        tokens,
    };
    (store.clone(), AuthStore::new(store, options).unwrap())
}

/// Applies a planned change the way the server does.
fn apply(store: &Store, change: RecordsRequest) {
    match store.apply_blocking(WriteRequest::Records(change)).unwrap() {
        WriteResponse::Records(r) => assert!(r.applied, "the guard held"),
        other => panic!("{other:?}"),
    }
}

/// Authenticates the way the server does: a simple token's announcement
/// goes through the apply path before the token is handed out.
fn login(store: &Store, auth: &AuthStore, name: &str, password: &str) -> Result<String, AuthError> {
    let login = auth.authenticate(name, password)?;
    if let Some(announcement) = login.announcement {
        match store.apply_blocking(announcement.into_request()).unwrap() {
            WriteResponse::Records(r) => assert!(r.applied, "the auth store listens"),
            other => panic!("{other:?}"),
        }
    }
    Ok(login.token)
}

fn perm(kind: PermType, key: &str, end: &str) -> Option<PermissionRecord> {
    Some(PermissionRecord {
        perm_type: kind as i32,
        key: Bytes::copy_from_slice(key.as_bytes()),
        range_end: Bytes::copy_from_slice(end.as_bytes()),
    })
}

/// root (with the root role), alice with role `r` (read [a, c), write "w"),
/// auth enabled.
fn enabled() -> (Store, AuthStore, String) {
    enabled_with(TokenKind::Simple)
}

fn enabled_with(tokens: TokenKind) -> (Store, AuthStore, String) {
    let (store, auth) = auth_with(tokens);
    let s = auth.state().unwrap();
    assert_eq!(s.revision(), 1);
    assert_eq!(s.auth_enable().unwrap_err(), AuthError::RootUserNotExist);
    let hash = auth.hash_password("rootpw").unwrap();
    apply(&store, s.user_add("root", hash, false).unwrap());
    let s = auth.state().unwrap();
    assert_eq!(s.auth_enable().unwrap_err(), AuthError::RootRoleNotExist);
    apply(&store, s.user_grant_role("root", ROOT).unwrap().unwrap());
    apply(&store, auth.state().unwrap().role_add("r").unwrap());
    apply(
        &store,
        auth.state()
            .unwrap()
            .role_grant_permission("r", perm(PermType::Read, "a", "c"))
            .unwrap(),
    );
    apply(
        &store,
        auth.state()
            .unwrap()
            .role_grant_permission("r", perm(PermType::Write, "w", ""))
            .unwrap(),
    );
    let hash = auth.hash_password("alicepw").unwrap();
    apply(
        &store,
        auth.state()
            .unwrap()
            .user_add("alice", hash, false)
            .unwrap(),
    );
    apply(
        &store,
        auth.state()
            .unwrap()
            .user_grant_role("alice", "r")
            .unwrap()
            .unwrap(),
    );
    let s = auth.state().unwrap();
    let before = s.revision();
    apply(&store, s.auth_enable().unwrap().unwrap());
    let s = auth.state().unwrap();
    assert!(s.enabled());
    assert_eq!(s.revision(), before, "enabling does not bump the revision");
    let token = login(&store, &auth, "alice", "alicepw").unwrap();
    (store, auth, token)
}

fn as_token<'a>(token: &'a str) -> Credentials<'a> {
    Credentials {
        token: Some(token),
        common_name: None,
    }
}

fn no_lease(_: i64) -> Vec<Bytes> {
    Vec::new()
}

#[test]
fn passwords_are_bcrypt_in_gos_form_and_never_kept() {
    let (store, auth, _) = enabled();
    let s = auth.state().unwrap();
    let stored = &s.user("alice").unwrap().password;
    assert!(stored.starts_with(b"$2a$04$"), "{stored:?}");
    assert!(!stored.windows(7).any(|w| w == b"alicepw"));
    assert_eq!(
        login(&store, &auth, "alice", "wrong").unwrap_err(),
        AuthError::AuthFailed
    );
    assert_eq!(
        login(&store, &auth, "nobody", "x").unwrap_err(),
        AuthError::AuthFailed
    );
}

#[test]
fn changes_follow_etcds_rules() {
    let (store, auth, _) = enabled();
    let s = auth.state().unwrap();
    assert_eq!(
        s.user_add("", Bytes::new(), false).unwrap_err(),
        AuthError::UserEmpty
    );
    assert_eq!(
        s.user_add("alice", Bytes::new(), false).unwrap_err(),
        AuthError::UserAlreadyExist
    );
    assert_eq!(
        s.user_delete("root").unwrap_err(),
        AuthError::InvalidAuthMgmt
    );
    assert_eq!(
        s.role_delete("root").unwrap_err(),
        AuthError::InvalidAuthMgmt
    );
    assert_eq!(
        s.user_revoke_role("root", "root").unwrap_err(),
        AuthError::InvalidAuthMgmt
    );
    assert_eq!(
        s.user_grant_role("alice", "nope").unwrap_err(),
        AuthError::RoleNotFound
    );
    assert!(
        s.user_grant_role("alice", "r").unwrap().is_none(),
        "already granted"
    );
    assert_eq!(
        s.user_revoke_role("alice", "x").unwrap_err(),
        AuthError::RoleNotGranted
    );
    assert_eq!(s.role_add("").unwrap_err(), AuthError::RoleEmpty);
    assert_eq!(s.role_add("r").unwrap_err(), AuthError::RoleAlreadyExist);
    // Names up to bbolt's key limit, and not a byte more.
    let longest = "n".repeat(hark_auth::MAX_NAME_LEN);
    let longer = "n".repeat(hark_auth::MAX_NAME_LEN + 1);
    assert!(s.role_add(&longest).is_ok());
    assert!(s.user_add(&longest, Bytes::new(), true).is_ok());
    assert_eq!(s.role_add(&longer).unwrap_err(), AuthError::RoleNameTooLong);
    assert_eq!(
        s.user_add(&longer, Bytes::new(), true).unwrap_err(),
        AuthError::UserNameTooLong
    );
    assert_eq!(
        s.role_grant_permission("r", None).unwrap_err(),
        AuthError::PermissionNotGiven
    );
    assert_eq!(
        s.role_grant_permission("r", perm(PermType::Read, "b", "a"))
            .unwrap_err(),
        AuthError::InvalidAuthMgmt
    );
    assert_eq!(
        s.role_revoke_permission("r", b"a", b"b").unwrap_err(),
        AuthError::PermissionNotGranted
    );
    // A change planned from a state that moved on does not apply.
    let stale = s.role_add("x").unwrap();
    apply(&store, s.role_add("y").unwrap());
    match store.apply_blocking(WriteRequest::Records(stale)).unwrap() {
        WriteResponse::Records(r) => assert!(!r.applied),
        other => panic!("{other:?}"),
    }
    assert!(auth.state().unwrap().role("x").is_none());
    // Deleting a role takes it from its users.
    apply(&store, auth.state().unwrap().role_delete("r").unwrap());
    assert!(
        auth.state()
            .unwrap()
            .user("alice")
            .unwrap()
            .roles
            .is_empty()
    );
}

#[test]
fn requests_are_checked_per_kind() {
    let (store, auth, token) = enabled();
    let alice = auth.caller(as_token(&token)).unwrap();
    assert_eq!(alice.user(), Some("alice"));
    assert!(alice.range(&RangeRequest::range("a", "c")).is_ok());
    assert_eq!(
        alice.range(&RangeRequest::range("a", "d")).unwrap_err(),
        AuthError::PermissionDenied
    );
    let put = |key: &str, prev_kv| {
        let mut p = PutRequest::new(key.to_string(), "v");
        p.prev_kv = prev_kv;
        WriteRequest::Put(p)
    };
    assert!(alice.write(&put("w", false), &no_lease).is_ok());
    assert_eq!(
        alice.write(&put("w", true), &no_lease).unwrap_err(),
        AuthError::PermissionDenied,
        "prev_kv needs READ too"
    );
    // A forbidden write hidden in a nested branch refuses the whole txn.
    let nested = TxnRequest {
        compare: vec![],
        success: vec![],
        failure: vec![RequestOp::Txn(TxnRequest {
            compare: vec![],
            success: vec![RequestOp::Put(PutRequest::new("secret", "x"))],
            failure: vec![],
        })],
    };
    assert_eq!(
        alice
            .write(&WriteRequest::Txn(nested), &no_lease)
            .unwrap_err(),
        AuthError::PermissionDenied
    );
    // A compare reads.
    let compare = TxnRequest {
        compare: vec![Compare {
            key: Bytes::from_static(b"z"),
            range_end: Bytes::new(),
            result: CompareResult::Equal,
            target: CompareTarget::Version(0),
        }],
        success: vec![],
        failure: vec![],
    };
    assert!(alice.write(&WriteRequest::Txn(compare), &no_lease).is_err());
    // A put onto a lease holding a key outside the user's permission.
    let mut leased = PutRequest::new("w", "v");
    leased.lease = 7;
    let lease_keys = |id: i64| {
        if id == 7 {
            vec![Bytes::from_static(b"secret")]
        } else {
            vec![]
        }
    };
    assert_eq!(
        alice
            .write(&WriteRequest::Put(leased), &lease_keys)
            .unwrap_err(),
        AuthError::PermissionDenied
    );
    assert_eq!(
        alice
            .write(
                &WriteRequest::LeaseRevoke(LeaseRevokeRequest { id: 7 }),
                &lease_keys
            )
            .unwrap_err(),
        AuthError::PermissionDenied
    );
    assert!(
        alice
            .write(
                &WriteRequest::LeaseGrant(LeaseGrantRequest { id: 1, ttl: 5 }),
                &no_lease
            )
            .is_ok()
    );
    let compact = WriteRequest::Compact(CompactRequest {
        revision: 1,
        physical: false,
    });
    assert_eq!(
        alice.write(&compact, &no_lease).unwrap_err(),
        AuthError::PermissionDenied
    );
    // Watches: a read grant on one key does not cover a from-key watch.
    assert!(alice.watch(b"a", b"c").is_ok());
    assert_eq!(
        alice.watch(b"b", b"\0").unwrap_err(),
        AuthError::PermissionDenied
    );

    let root_token = login(&store, &auth, "root", "rootpw").unwrap();
    let root = auth.caller(as_token(&root_token)).unwrap();
    assert!(root.write(&compact, &no_lease).is_ok());
    assert!(root.watch(b"\0", b"\0").is_ok());

    let anonymous = auth.caller(Credentials::default()).unwrap();
    assert_eq!(
        anonymous.range(&RangeRequest::key("a")).unwrap_err(),
        AuthError::UserEmpty
    );
    assert_eq!(anonymous.admin().unwrap_err(), AuthError::UserEmpty);
    assert_eq!(
        auth.caller(as_token("forged.1")).err(),
        Some(AuthError::InvalidAuthToken)
    );
    // A client certificate's common name names the user when no token is sent.
    let by_cert = auth
        .caller(Credentials {
            token: None,
            common_name: Some("alice"),
        })
        .unwrap();
    assert_eq!(by_cert.user(), Some("alice"));
}

#[test]
fn a_write_checked_before_a_revoke_is_refused_at_apply() {
    let (store, auth, token) = enabled();
    let alice = auth.caller(as_token(&token)).unwrap();
    let put = WriteRequest::Put(PutRequest::new("w", "v"));
    alice.write(&put, &no_lease).unwrap();
    let guarded = alice.guarded(put);
    apply(
        &store,
        auth.state()
            .unwrap()
            .role_revoke_permission("r", b"w", b"")
            .unwrap(),
    );
    assert!(matches!(
        store.apply_blocking(guarded),
        Err(Error::GuardFailed)
    ));
    assert_eq!(store.current_revision(), 1);
}

#[test]
fn tokens_die_with_a_password_change_a_user_delete_and_a_disable() {
    let (store, auth, token) = enabled();
    let hash = auth.hash_password("new").unwrap();
    apply(
        &store,
        auth.state()
            .unwrap()
            .user_change_password("alice", hash)
            .unwrap(),
    );
    assert_eq!(
        auth.caller(as_token(&token)).err(),
        Some(AuthError::InvalidAuthToken)
    );
    let token = login(&store, &auth, "alice", "new").unwrap();
    assert!(auth.caller(as_token(&token)).is_ok());

    let root_token = login(&store, &auth, "root", "rootpw").unwrap();
    apply(
        &store,
        auth.state().unwrap().auth_disable().unwrap().unwrap(),
    );
    // Disabled: credentials are not looked at.
    assert!(auth.caller(as_token("forged.1")).unwrap().admin().is_ok());
    apply(
        &store,
        auth.state().unwrap().auth_enable().unwrap().unwrap(),
    );
    assert_eq!(
        auth.caller(as_token(&root_token)).err(),
        Some(AuthError::InvalidAuthToken)
    );
    assert_eq!(
        auth.caller(as_token(&token)).err(),
        Some(AuthError::InvalidAuthToken)
    );

    let token = login(&store, &auth, "alice", "new").unwrap();
    let root_token = login(&store, &auth, "root", "rootpw").unwrap();
    assert!(auth.caller(as_token(&root_token)).unwrap().admin().is_ok());
    apply(&store, auth.state().unwrap().user_delete("alice").unwrap());
    assert_eq!(
        auth.caller(as_token(&token)).err(),
        Some(AuthError::InvalidAuthToken)
    );
}

/// A key pair for `alg` (PKCS#8 private key, SPKI public key), made by rcgen.
fn key_pair(alg: &'static rcgen::SignatureAlgorithm) -> (String, String) {
    let key = rcgen::KeyPair::generate_for(alg).unwrap();
    (key.serialize_pem(), key.public_key_pem())
}

fn jwt(method: &str, public: Option<&str>, private: Option<&str>, ttl: u64) -> Arc<JwtTokens> {
    Arc::new(
        JwtTokens::new(
            method,
            public.map(str::as_bytes),
            private.map(str::as_bytes),
            Duration::from_secs(ttl),
        )
        .unwrap(),
    )
}

/// A token's claims, read without checking its signature.
fn claims(token: &str) -> serde_json::Value {
    let mut validation = jsonwebtoken::Validation::default();
    validation.insecure_disable_signature_validation();
    jsonwebtoken::decode::<serde_json::Value>(
        token,
        &jsonwebtoken::DecodingKey::from_secret(b""),
        &validation,
    )
    .unwrap()
    .claims
}

#[test]
fn jwt_tokens_carry_etcds_claims_and_a_verify_only_member_takes_them() {
    for (method, alg) in [
        ("ES256", &rcgen::PKCS_ECDSA_P256_SHA256),
        ("ES384", &rcgen::PKCS_ECDSA_P384_SHA384),
        ("EdDSA", &rcgen::PKCS_ED25519),
    ] {
        let (private, public) = key_pair(alg);
        let signer = jwt(method, Some(&public), Some(&private), 300);
        let (store, auth, token) = enabled_with(TokenKind::Jwt(signer));
        let c = claims(&token);
        assert_eq!(c["username"], "alice", "{method}");
        let revision = auth.state().unwrap().revision();
        assert_eq!(c["revision"], revision, "{method}");
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let exp = c["exp"].as_u64().unwrap();
        assert!(
            (now + 299..=now + 301).contains(&exp),
            "{method}: {exp} vs {now}"
        );
        assert!(
            auth.caller(as_token(&token))
                .unwrap()
                .range(&RangeRequest::key("a"))
                .is_ok()
        );

        // Another member with the public key only: it takes the token (no
        // shared table) but cannot issue one (etcd's verify-only mode).
        let verifier = AuthStore::new(
            store.clone(),
            AuthOptions {
                bcrypt_cost: 4,
                token_ttl: Duration::from_secs(60),
                tokens: TokenKind::Jwt(jwt(method, Some(&public), None, 300)),
            },
        )
        .unwrap();
        assert!(
            verifier
                .caller(as_token(&token))
                .unwrap()
                .range(&RangeRequest::key("a"))
                .is_ok()
        );
        assert_eq!(
            login(&store, &verifier, "alice", "alicepw").err(),
            Some(AuthError::VerifyOnly)
        );
        // A private key alone verifies too (its public half is derived).
        let derived = AuthStore::new(
            store.clone(),
            AuthOptions {
                bcrypt_cost: 4,
                token_ttl: Duration::from_secs(60),
                tokens: TokenKind::Jwt(jwt(method, None, Some(&private), 300)),
            },
        )
        .unwrap();
        assert!(derived.caller(as_token(&token)).is_ok(), "{method}");

        // An auth change makes the token old: the client authenticates again.
        apply(&store, auth.state().unwrap().role_add("other").unwrap());
        assert_eq!(
            auth.caller(as_token(&token)).err(),
            Some(AuthError::AuthOldRevision),
            "{method}"
        );
        let fresh = login(&store, &auth, "alice", "alicepw").unwrap();
        assert!(auth.caller(as_token(&fresh)).is_ok());
    }
}

#[test]
fn forged_expired_and_confused_jwts_are_refused() {
    let (private, public) = key_pair(&rcgen::PKCS_ECDSA_P256_SHA256);
    let (_store, auth, token) = enabled_with(TokenKind::Jwt(jwt(
        "ES256",
        Some(&public),
        Some(&private),
        300,
    )));
    assert!(auth.caller(as_token(&token)).is_ok());
    let revision = auth.state().unwrap().revision();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let sign = |alg, key: &jsonwebtoken::EncodingKey, user: &str, exp: u64| {
        jsonwebtoken::encode(
            &jsonwebtoken::Header::new(alg),
            &serde_json::json!({"username": user, "revision": revision, "exp": exp}),
            key,
        )
        .unwrap()
    };
    let ours = jsonwebtoken::EncodingKey::from_ec_pem(private.as_bytes()).unwrap();
    // The control: our key, our algorithm, live: taken, as root even.
    let root = sign(jsonwebtoken::Algorithm::ES256, &ours, "root", now + 60);
    assert!(auth.caller(as_token(&root)).unwrap().admin().is_ok());

    let (other_private, _) = key_pair(&rcgen::PKCS_ECDSA_P256_SHA256);
    let theirs = jsonwebtoken::EncodingKey::from_ec_pem(other_private.as_bytes()).unwrap();
    let forged = sign(jsonwebtoken::Algorithm::ES256, &theirs, "root", now + 60);
    let expired = sign(jsonwebtoken::Algorithm::ES256, &ours, "root", now - 2);
    // Algorithm confusion: HMAC keyed with the public key's PEM.
    let confused = sign(
        jsonwebtoken::Algorithm::HS256,
        &jsonwebtoken::EncodingKey::from_secret(public.as_bytes()),
        "root",
        now + 60,
    );
    // alg "none": the header and claims with an empty signature.
    let unsigned = {
        let mut parts = root.split('.');
        let _ = parts.next();
        let payload = parts.next().unwrap();
        // {"alg":"none","typ":"JWT"}
        format!("eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.{payload}.")
    };
    let tampered = {
        // alice's token with its claims swapped for root's.
        let alice: Vec<&str> = token.split('.').collect();
        let root: Vec<&str> = root.split('.').collect();
        format!("{}.{}.{}", alice[0], root[1], alice[2])
    };
    for (what, t) in [
        ("forged", forged),
        ("expired", expired),
        ("confused", confused),
        ("unsigned", unsigned),
        ("tampered", tampered),
        ("garbage", "a.b.c".to_string()),
    ] {
        assert_eq!(
            auth.caller(as_token(&t)).err(),
            Some(AuthError::InvalidAuthToken),
            "{what}"
        );
    }
}

#[test]
fn jwt_keys_are_checked_at_start() {
    let (private, public) = key_pair(&rcgen::PKCS_ECDSA_P256_SHA256);
    let (_, other_public) = key_pair(&rcgen::PKCS_ECDSA_P256_SHA256);
    let new = |method: &str, public: Option<&str>, private: Option<&str>| {
        JwtTokens::new(
            method,
            public.map(str::as_bytes),
            private.map(str::as_bytes),
            Duration::from_secs(60),
        )
        .err()
        .unwrap_or_default()
    };
    assert!(new("ES256", Some(&other_public), Some(&private)).contains("don't match"));
    assert!(new("ES256", None, None).contains("missing key data"));
    assert!(new("HS256", None, None).contains("missing key data"));
    assert!(new("XS256", Some(&public), None).contains("invalid auth signature method"));
    assert!(new("ES256", Some("not a key"), None).contains("bad pub-key"));
    // OpenSSL's traditional EC key form gets a conversion hint.
    let sec1 = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n-----END EC PRIVATE KEY-----\n";
    assert!(new("ES256", None, Some(sec1)).contains("openssl pkcs8 -topk8"));
    // A TTL under a second still starts (the pair check ignores expiry).
    assert!(
        JwtTokens::new(
            "ES256",
            Some(public.as_bytes()),
            Some(private.as_bytes()),
            Duration::ZERO
        )
        .is_ok()
    );
    // HMAC: the secret is the priv-key file's bytes.
    let hmac = jwt("HS256", None, Some("a shared secret"), 60);
    let token = hmac.issue("alice", 3).unwrap();
    assert_eq!(hmac.verify(&token), Some(("alice".to_string(), 3)));
}

/// A simple token made up on one member is valid on every member that has
/// applied its announcement (the log carries it to all, as etcd's raft
/// carries its Authenticate entry), and on none before; a password changed
/// since voids it on every member alike.
#[test]
fn a_simple_token_is_valid_on_every_member_that_applied_its_announcement() {
    let members: Vec<(Store, AuthStore)> = (0..3).map(|_| auth_with(TokenKind::Simple)).collect();
    let apply_all = |req: WriteRequest| {
        for (store, _) in &members {
            store.apply_blocking(req.clone()).unwrap();
        }
    };
    let issuer = &members[0].1;
    let hash = issuer.hash_password("rootpw").unwrap();
    let s = issuer.state().unwrap();
    apply_all(WriteRequest::Records(
        s.user_add("root", hash, false).unwrap(),
    ));
    let s = issuer.state().unwrap();
    apply_all(WriteRequest::Records(
        s.user_grant_role("root", ROOT).unwrap().unwrap(),
    ));
    apply_all(WriteRequest::Records(
        issuer.state().unwrap().auth_enable().unwrap().unwrap(),
    ));

    let login = issuer.authenticate("root", "rootpw").unwrap();
    let announcement = login.announcement.expect("a simple token is announced");
    assert_eq!(announcement.topic, SIMPLE_TOKEN_TOPIC);
    for (_, auth) in &members {
        assert_eq!(
            auth.caller(as_token(&login.token)).err(),
            Some(AuthError::InvalidAuthToken),
            "valid before its announcement was applied"
        );
        // A server lets such a request wait for the log to catch up.
        assert!(auth.awaits_token(&login.token));
        assert!(!auth.awaits_token("not-a-simple-token"));
        assert!(!auth.awaits_token("abcdefghijklmnop.x1"));
    }
    apply_all(announcement.into_request());
    for (_, auth) in &members {
        assert!(!auth.awaits_token(&login.token), "known: no wait");
        auth.caller(as_token(&login.token))
            .unwrap()
            .admin()
            .expect("root's token, on every member");
    }

    let hash = issuer.hash_password("newpw").unwrap();
    let s = issuer.state().unwrap();
    apply_all(WriteRequest::Records(
        s.user_change_password("root", hash).unwrap(),
    ));
    for (_, auth) in &members {
        assert_eq!(
            auth.caller(as_token(&login.token)).err(),
            Some(AuthError::InvalidAuthToken)
        );
    }
    // A store without a listener for the topic drops an announcement.
    let bare = Store::in_memory();
    let heard = match bare
        .apply_blocking(
            Announcement {
                topic: "nobody/listens".into(),
                body: Bytes::new(),
            }
            .into_request(),
        )
        .unwrap()
    {
        WriteResponse::Records(r) => r.applied,
        other => panic!("{other:?}"),
    };
    assert!(!heard);
}
