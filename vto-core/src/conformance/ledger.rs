//! The ledger contracts.

use super::*;

/// The [`Ledger`] contract.
pub async fn ledger<L, F, Fut>(make: F)
where
    L: Ledger,
    F: Fn() -> Fut,
    Fut: Future<Output = L>,
{
    let l = make().await;
    let a = AccountId::from("acct_a");
    let account = Account {
        id: a.clone(),
        name: "Shop A".into(),
        currency: Currency::USD,
        created_at: at(0),
    };
    l.create_account(&account).await.expect("create");
    assert!(matches!(
        l.create_account(&account).await,
        Err(LedgerError::AccountExists(_))
    ));
    assert_eq!(l.account(&a).await.expect("account"), Some(account.clone()));
    assert_eq!(l.accounts().await.expect("accounts"), vec![account]);
    assert!(matches!(
        l.balance(&AccountId::from("acct_zz")).await,
        Err(LedgerError::UnknownAccount(_))
    ));

    let b = l
        .credit(&a, usd("1.00"), "top-up", at(1))
        .await
        .expect("credit");
    assert_eq!(
        (b.balance, b.held, b.available),
        (usd("1").amount, Decimal::ZERO, usd("1").amount)
    );
    assert!(matches!(
        l.credit(&a, usd("0"), "zero", at(1)).await,
        Err(LedgerError::NonPositive(_))
    ));
    let eur = Money::parse("1", "EUR".parse().expect("code")).expect("money");
    assert!(matches!(
        l.credit(&a, eur, "eur", at(1)).await,
        Err(LedgerError::CurrencyMismatch { .. })
    ));

    let r1 = RequestId(uuid::Uuid::from_u128(1));
    let r2 = RequestId(uuid::Uuid::from_u128(2));
    let r3 = RequestId(uuid::Uuid::from_u128(3));
    let h = l.hold(&a, r1, usd("0.30"), at(2)).await.expect("hold");
    assert_eq!(h.status, HoldStatus::Open);
    // the same hold again is the same hold, not a second one.
    assert_eq!(l.hold(&a, r1, usd("0.30"), at(3)).await.expect("hold"), h);
    assert!(matches!(
        l.hold(&a, r1, usd("0.20"), at(3)).await,
        Err(LedgerError::HoldMismatch(_))
    ));
    l.hold(&a, r2, usd("0.70"), at(4)).await.expect("hold");
    let b = l.balance(&a).await.expect("balance");
    assert_eq!(
        (b.balance, b.held, b.available),
        (usd("1").amount, usd("1").amount, Decimal::ZERO)
    );
    match l.hold(&a, r3, usd("0.01"), at(5)).await {
        Err(LedgerError::InsufficientBalance {
            required,
            available,
        }) => {
            assert_eq!(required, usd("0.01"));
            assert_eq!(available.amount, Decimal::ZERO);
        }
        other => panic!("expected InsufficientBalance, got {other:?}"),
    }
    assert_eq!(l.get_hold(r3).await.expect("get"), None);

    // capture once; capture again is a no-op; release after capture is refused.
    assert_eq!(
        l.capture(r1, at(6)).await.expect("capture"),
        Settlement::Captured
    );
    assert_eq!(
        l.capture(r1, at(7)).await.expect("capture"),
        Settlement::AlreadyCaptured
    );
    assert!(matches!(
        l.release(r1, at(7)).await,
        Err(LedgerError::Settled { .. })
    ));
    assert_eq!(
        l.release(r2, at(8)).await.expect("release"),
        Settlement::Released
    );
    assert_eq!(
        l.release(r2, at(9)).await.expect("release"),
        Settlement::AlreadyReleased
    );
    assert!(matches!(
        l.capture(r2, at(9)).await,
        Err(LedgerError::Settled { .. })
    ));
    assert!(matches!(
        l.capture(r3, at(9)).await,
        Err(LedgerError::NoHold(_))
    ));
    let b = l.balance(&a).await.expect("balance");
    assert_eq!(
        (b.balance, b.held, b.available),
        (usd("0.70").amount, Decimal::ZERO, usd("0.70").amount)
    );
    assert_eq!(
        l.get_hold(r1).await.expect("get").map(|h| h.status),
        Some(HoldStatus::Captured)
    );
    assert!(l.open_holds().await.expect("open").is_empty());

    // every movement is an entry, in order, and the entries sum to the balance.
    let entries = l.entries(&a).await.expect("entries");
    let kinds: Vec<_> = entries.iter().map(|e| e.kind).collect();
    assert_eq!(
        kinds,
        vec![
            EntryKind::Credit,
            EntryKind::Hold,
            EntryKind::Hold,
            EntryKind::Capture,
            EntryKind::Release
        ]
    );
    assert!(entries.windows(2).all(|w| w[0].seq < w[1].seq));
    let derived = crate::billing::balance_from_entries(&a, Currency::USD, &entries);
    assert_eq!(derived, b);

    // open holds are listed oldest first.
    l.hold(&a, r3, usd("0.05"), at(10)).await.expect("hold");
    let open = l.open_holds().await.expect("open");
    assert_eq!(
        open.iter().map(|h| h.request_id).collect::<Vec<_>>(),
        vec![r3]
    );
}

/// Concurrent holds on one account never overdraw it.
pub async fn ledger_concurrency<L, F, Fut>(make: F)
where
    L: Ledger + 'static,
    F: Fn() -> Fut,
    Fut: Future<Output = L>,
{
    let l = Arc::new(make().await);
    let a = AccountId::from("acct_c");
    l.create_account(&Account {
        id: a.clone(),
        name: "C".into(),
        currency: Currency::USD,
        created_at: at(0),
    })
    .await
    .expect("create");
    l.credit(&a, usd("3.00"), "", at(0)).await.expect("credit");
    let mut tasks = Vec::new();
    for n in 0..50u128 {
        let (l, a) = (l.clone(), a.clone());
        tasks.push(tokio::spawn(async move {
            l.hold(
                &a,
                RequestId(uuid::Uuid::from_u128(1000 + n)),
                usd("0.10"),
                at(1),
            )
            .await
            .is_ok()
        }));
    }
    let mut ok = 0;
    for t in tasks {
        ok += usize::from(t.await.expect("task"));
    }
    assert_eq!(ok, 30, "exactly 30 holds of 0.10 fit in 3.00");
    let b = l.balance(&a).await.expect("balance");
    assert_eq!(b.available, Decimal::ZERO);
}
