//! The webhook secret store contract.

use super::*;

/// The [`crate::outbox::WebhookSecrets`] contract: a secret is created on first use and then
/// stable, accounts have different secrets, and rotation replaces it with a new one that is
/// then returned.
pub async fn webhook_secrets<W, F, Fut>(make: F)
where
    W: crate::outbox::WebhookSecrets,
    F: Fn() -> Fut,
    Fut: Future<Output = W>,
{
    let w = make().await;
    let a = AccountId::from("acct_a");
    let b = AccountId::from("acct_b");
    let first = w.secret(&a).await.expect("secret");
    assert!(first.expose().starts_with("whsec_"));
    assert_eq!(w.secret(&a).await.expect("secret"), first, "stable");
    let other = w.secret(&b).await.expect("secret");
    assert_ne!(other, first, "accounts have their own secrets");
    let rotated = w.rotate(&a).await.expect("rotate");
    assert_ne!(rotated, first, "rotation changes the secret");
    assert_eq!(
        w.secret(&a).await.expect("secret"),
        rotated,
        "the new one is kept"
    );
    assert_eq!(
        w.secret(&b).await.expect("secret"),
        other,
        "other accounts keep theirs"
    );
    // Rotating an account that never had a secret creates one.
    let c = AccountId::from("acct_c");
    let fresh = w.rotate(&c).await.expect("rotate");
    assert_eq!(w.secret(&c).await.expect("secret"), fresh);
}
