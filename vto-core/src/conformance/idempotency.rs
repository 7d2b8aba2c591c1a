//! The idempotency store contract.

use super::*;

/// The [`crate::idempotency::IdempotencyStore`] contract.
pub async fn idempotency_store<I, F, Fut>(make: F)
where
    I: crate::idempotency::IdempotencyStore,
    F: Fn() -> Fut,
    Fut: Future<Output = I>,
{
    use crate::idempotency::Begin;
    let s = make().await;
    let a = AccountId::from("acct_a");
    let b = AccountId::from("acct_b");
    assert_eq!(
        s.begin(&a, "k1", "fp1", at(0)).await.expect("begin"),
        Begin::New
    );
    assert_eq!(
        s.begin(&a, "k1", "fp1", at(1)).await.expect("begin"),
        Begin::InProgress
    );
    assert_eq!(
        s.begin(&a, "k1", "fp2", at(1)).await.expect("begin"),
        Begin::Conflict
    );
    assert_eq!(
        s.begin(&b, "k1", "fp2", at(1)).await.expect("begin"),
        Begin::New,
        "keys are per account"
    );
    s.finish(&a, "k1", "{\"saved\":1}").await.expect("finish");
    assert_eq!(
        s.begin(&a, "k1", "fp1", at(2)).await.expect("begin"),
        Begin::Replay("{\"saved\":1}".into())
    );
    assert_eq!(
        s.begin(&a, "k1", "fp9", at(2)).await.expect("begin"),
        Begin::Conflict
    );
    // abandon frees an unfinished key, never a finished one.
    s.abandon(&b, "k1").await.expect("abandon");
    assert_eq!(
        s.begin(&b, "k1", "fp3", at(3)).await.expect("begin"),
        Begin::New
    );
    s.abandon(&a, "k1").await.expect("abandon");
    assert!(matches!(
        s.begin(&a, "k1", "fp1", at(3)).await.expect("begin"),
        Begin::Replay(_)
    ));
    // A reservation that saved nothing is taken over once it is stale: the process that made
    // it died. Until then it is in progress; a different body is still a conflict.
    let (t, stale) = (
        at(10_000),
        crate::idempotency::STALE_AFTER.as_millis() as i64,
    );
    assert_eq!(
        s.begin(&b, "k2", "fp1", t).await.expect("begin"),
        Begin::New
    );
    assert_eq!(
        s.begin(&b, "k2", "fp1", Timestamp(t.0 + stale))
            .await
            .expect("begin"),
        Begin::InProgress
    );
    assert_eq!(
        s.begin(&b, "k2", "fp1", Timestamp(t.0 + stale + 1))
            .await
            .expect("begin"),
        Begin::Resume { reserved_at: t },
        "the original reservation time, from which the request id is derived"
    );
    assert_eq!(
        s.begin(&b, "k2", "fp2", Timestamp(t.0 + stale + 1))
            .await
            .expect("begin"),
        Begin::Conflict
    );
    s.finish(&b, "k2", "{\"saved\":2}").await.expect("finish");
    assert_eq!(
        s.begin(&b, "k2", "fp1", Timestamp(t.0 + stale + 2))
            .await
            .expect("begin"),
        Begin::Replay("{\"saved\":2}".into())
    );
    // purge drops keys created before the cutoff.
    assert_eq!(s.purge_before(at(1)).await.expect("purge"), 1);
    assert_eq!(
        s.begin(&a, "k1", "fp5", at(4)).await.expect("begin"),
        Begin::New
    );
}
