//! The webhook outbox contract.

use super::*;

/// The [`crate::outbox::Outbox`] contract.
pub async fn outbox<O, F, Fut>(make: F)
where
    O: crate::outbox::Outbox,
    F: Fn() -> Fut,
    Fut: Future<Output = O>,
{
    use crate::outbox::{Delivery, DeliveryAttempt, DeliveryStatus, NextStep};
    let o = make().await;
    let mk = |n: u128, account: &str, created: i64| Delivery {
        id: Delivery::id_for(RequestId(uuid::Uuid::from_u128(n))),
        request_id: RequestId(uuid::Uuid::from_u128(n)),
        account_id: AccountId::from(account),
        url: "https://shop.example/hook".into(),
        body: format!("{{\"n\":{n}}}"),
        status: DeliveryStatus::Pending,
        attempts: 0,
        next_attempt_at: at(created),
        last_status: None,
        last_error: None,
        created_at: at(created),
    };
    let a = mk(1, "acct_a", 0);
    let b = mk(2, "acct_b", 10);
    assert!(o.enqueue(&a).await.expect("enqueue"));
    assert!(!o.enqueue(&a).await.expect("enqueue"), "same id kept once");
    assert!(o.enqueue(&b).await.expect("enqueue"));
    assert_eq!(o.get(&a.id).await.expect("get"), Some(a.clone()));
    // claim_due takes due ones, oldest first, and leases them.
    let due = o
        .claim_due(at(5), Duration::from_secs(30), 10)
        .await
        .expect("claim");
    assert_eq!(
        due.iter().map(|d| d.id.clone()).collect::<Vec<_>>(),
        vec![a.id.clone()]
    );
    assert!(
        o.claim_due(at(20), Duration::from_secs(30), 10)
            .await
            .expect("claim")
            .iter()
            .all(|d| d.id != a.id),
        "leased"
    );
    let retry = DeliveryAttempt {
        delivery_id: a.id.clone(),
        n: 1,
        at: at(6),
        http_status: Some(500),
        error: None,
        duration_ms: 3,
    };
    o.record(&retry, NextStep::RetryAt(at(100)))
        .await
        .expect("record");
    let got = o.get(&a.id).await.expect("get").expect("delivery");
    assert_eq!(
        (
            got.status,
            got.attempts,
            got.last_status,
            got.next_attempt_at
        ),
        (DeliveryStatus::Pending, 1, Some(500), at(100))
    );
    assert!(o
        .claim_due(at(99), Duration::from_secs(1), 10)
        .await
        .expect("claim")
        .is_empty());
    let again = o
        .claim_due(at(100), Duration::from_secs(30), 10)
        .await
        .expect("claim");
    assert_eq!(again.len(), 1);
    let ok = DeliveryAttempt {
        delivery_id: a.id.clone(),
        n: 2,
        at: at(101),
        http_status: Some(204),
        error: None,
        duration_ms: 2,
    };
    o.record(&ok, NextStep::Delivered).await.expect("record");
    assert_eq!(
        o.get(&a.id).await.expect("get").expect("d").status,
        DeliveryStatus::Delivered
    );
    assert!(o
        .claim_due(at(1_000_000), Duration::from_secs(30), 10)
        .await
        .expect("claim")
        .iter()
        .all(|d| d.id != a.id));
    assert_eq!(o.attempts(&a.id).await.expect("attempts"), vec![retry, ok]);
    let gone = DeliveryAttempt {
        delivery_id: b.id.clone(),
        n: 1,
        at: at(50),
        http_status: Some(410),
        error: None,
        duration_ms: 1,
    };
    o.record(&gone, NextStep::Gone).await.expect("record");
    assert_eq!(
        o.get(&b.id).await.expect("get").expect("d").status,
        DeliveryStatus::Gone
    );
    let listed = o.list(None, 10).await.expect("list");
    assert_eq!(
        listed.iter().map(|d| d.id.clone()).collect::<Vec<_>>(),
        vec![b.id.clone(), a.id.clone()]
    );
    assert_eq!(
        o.list(Some(&AccountId::from("acct_a")), 10)
            .await
            .expect("list")
            .len(),
        1
    );
}
