//! The API key and per-account limit contracts.

use super::*;

/// The [`ApiKeyStore`] contract.
pub async fn api_key_store<K, F, Fut>(make: F)
where
    K: ApiKeyStore,
    F: Fn() -> Fut,
    Fut: Future<Output = K>,
{
    let k = make().await;
    let ids = SequentialIds::default();
    let a = AccountId::from("acct_a");
    let key = generate_key(&ids, &a, "prod", at(0));
    k.insert(&key.record).await.expect("insert");
    assert!(k.insert(&key.record).await.is_err(), "duplicate refused");
    let found = k
        .find_by_hash(&crate::keys::hash_key(&key.secret))
        .await
        .expect("find");
    assert_eq!(found, Some(key.record.clone()));
    assert_eq!(k.find_by_hash("0000").await.expect("find"), None);
    let other = generate_key(&ids, &AccountId::from("acct_b"), "b", at(1));
    k.insert(&other.record).await.expect("insert");
    assert_eq!(
        k.list(Some(&a)).await.expect("list"),
        vec![key.record.clone()]
    );
    assert_eq!(k.list(None).await.expect("list").len(), 2);
    assert!(k.revoke(&key.record.id, at(5)).await.expect("revoke"));
    assert!(k.revoke(&key.record.id, at(9)).await.expect("revoke"));
    let revoked = k
        .find_by_hash(&key.record.hash)
        .await
        .expect("find")
        .expect("key");
    assert_eq!(
        revoked.revoked_at,
        Some(at(5)),
        "the first revocation time is kept"
    );
    assert!(!k
        .revoke(&ApiKeyId::from("key_nope"), at(9))
        .await
        .expect("revoke"));
    let _ = ids.request_id();
}

/// The [`crate::keys::AuthGeneration`] contract for a key store: a revocation moves the
/// generation forward (a repeated revocation may or may not; an unknown key need not).
pub async fn key_revocation_generation<K, F, Fut>(make: F)
where
    K: ApiKeyStore + crate::keys::AuthGeneration,
    F: Fn() -> Fut,
    Fut: Future<Output = K>,
{
    let k = make().await;
    let ids = SequentialIds::default();
    let key = generate_key(&ids, &AccountId::from("acct_a"), "prod", at(0));
    k.insert(&key.record).await.expect("insert");
    let g0 = k.auth_generation().await.expect("generation");
    assert!(k.revoke(&key.record.id, at(1)).await.expect("revoke"));
    let g1 = k.auth_generation().await.expect("generation");
    assert!(g1 > g0, "a revocation moves the generation ({g0} -> {g1})");
}

/// The [`crate::ratelimit::AccountLimitStore`] contract, with its
/// [`crate::keys::AuthGeneration`]: set replaces, reset removes, each moves the generation.
pub async fn account_limit_store<L, F, Fut>(make: F)
where
    L: crate::ratelimit::AccountLimitStore + crate::keys::AuthGeneration,
    F: Fn() -> Fut,
    Fut: Future<Output = L>,
{
    use crate::ratelimit::{AccountLimits, Endpoint, Quota};
    let l = make().await;
    let a = AccountId::from("acct_a");
    let b = AccountId::from("acct_b");
    let q = |s: &str| s.parse::<Quota>().expect("quota");
    assert_eq!(l.limits(&a).await.expect("limits"), None);
    let g0 = l.auth_generation().await.expect("generation");
    let first = AccountLimits::from([
        (Endpoint::CreateTryOn, q("20/1")),
        (Endpoint::GetTryOn, q("100/1")),
    ]);
    l.set_limits(&a, &first).await.expect("set");
    let g1 = l.auth_generation().await.expect("generation");
    assert!(g1 > g0, "set moves the generation");
    assert_eq!(l.limits(&a).await.expect("limits"), Some(first));
    assert_eq!(
        l.limits(&b).await.expect("limits"),
        None,
        "accounts are separate"
    );
    let second = AccountLimits::from([(Endpoint::Balance, q("600/60"))]);
    l.set_limits(&a, &second).await.expect("set");
    assert_eq!(
        l.limits(&a).await.expect("limits"),
        Some(second),
        "set replaces the whole set"
    );
    assert!(l.reset_limits(&a).await.expect("reset"));
    let g2 = l.auth_generation().await.expect("generation");
    assert!(g2 > g1, "reset moves the generation");
    assert_eq!(l.limits(&a).await.expect("limits"), None);
    assert!(
        !l.reset_limits(&a).await.expect("reset"),
        "nothing left to reset"
    );
}
