//! Conformance suites: the contract of each storage trait, as async functions any backend runs.
//!
//! A backend crate calls these from its tests with a factory for fresh, empty instances:
//!
//! ```text
//! #[tokio::test]
//! async fn sqlite_job_store_conforms() {
//!     vto_core::conformance::job_store(|| async { SqliteStore::open_temp().await }).await;
//! }
//! ```
//!
//! Enabled by the `conformance` feature (and always in this crate's own tests). Every
//! assertion applies to every backend: nothing is skipped.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use rust_decimal::Decimal;

use crate::billing::{Account, EntryKind, HoldStatus, Ledger, LedgerError, Settlement};
use crate::category::Category;
use crate::clock::Timestamp;
use crate::error::{ErrorBody, ErrorCode};
use crate::ids::{AccountId, ApiKeyId, IdGen, RequestId, SequentialIds};
use crate::job::{Job, JobEvent, JobStatus, JobSummary};
use crate::keys::{generate_key, ApiKeyStore};
use crate::money::{Currency, Money};
use crate::request::{InputRef, ValidatedRequest};
use crate::store::{JobFilter, JobQueue, JobStore, StoreError};

const T0: Timestamp = Timestamp(1_767_225_600_000);

fn at(ms: i64) -> Timestamp {
    Timestamp(T0.0 + ms)
}

fn usd(s: &str) -> Money {
    Money::parse(s, Currency::USD).expect("decimal")
}

/// A queued job for tests: `n` makes the id, `created_ms` the order.
pub fn sample_job(n: u128, account: &str, category: Category, created_ms: i64) -> Job {
    let url = |u: &str| InputRef::Url {
        url: format!("https://shop.example/{u}"),
    };
    Job::new(
        RequestId(uuid::Uuid::from_u128(n)),
        AccountId::from(account),
        ValidatedRequest {
            category,
            person_image: url("person.jpg"),
            product: InputRef::Data {
                media_type: "image/png".into(),
                bytes: vec![1, 2, 3],
            },
            webhook_url: Some("https://shop.example/hook".into()),
        },
        usd("0.15"),
        at(created_ms),
        Some(at(created_ms + 600_000)),
    )
}

/// The [`JobStore`] + [`JobQueue`] contract.
pub async fn job_store<S, F, Fut>(make: F)
where
    S: JobStore + JobQueue,
    F: Fn() -> Fut,
    Fut: Future<Output = S>,
{
    // insert / get round-trip every field; duplicates refused.
    let s = make().await;
    let job = sample_job(1, "acct_a", Category::Shirt, 0);
    s.insert(&job).await.expect("insert");
    assert_eq!(s.get(job.id).await.expect("get"), Some(job.clone()));
    assert!(matches!(
        s.insert(&job).await,
        Err(StoreError::AlreadyExists(_))
    ));
    assert_eq!(
        s.get(RequestId(uuid::Uuid::from_u128(99)))
            .await
            .expect("get"),
        None
    );

    // claim takes the oldest queued job, with a lease; an empty queue gives None.
    let s = make().await;
    let newer = sample_job(2, "acct_a", Category::Dress, 10);
    let older = sample_job(3, "acct_a", Category::Pants, 5);
    s.insert(&newer).await.expect("insert");
    s.insert(&older).await.expect("insert");
    let c = s
        .claim(at(100), Duration::from_secs(30))
        .await
        .expect("claim")
        .expect("a job");
    assert_eq!(c.id, older.id);
    assert_eq!(
        s.get_summary(newer.id)
            .await
            .expect("summary")
            .map(|j| j.status),
        Some(JobStatus::Queued)
    );
    assert_eq!(c.status, JobStatus::Processing);
    assert_eq!(c.lease_until, Some(at(30_100)));
    assert_eq!(c.started_at, Some(at(100)));
    assert_eq!(
        s.get(older.id).await.expect("get").expect("job").status,
        JobStatus::Processing
    );
    let c2 = s
        .claim(at(100), Duration::from_secs(30))
        .await
        .expect("claim")
        .expect("a job");
    assert_eq!(c2.id, newer.id);
    assert!(s
        .claim(at(100), Duration::from_secs(30))
        .await
        .expect("claim")
        .is_none());

    // expired leases are found; a lease extension by the current attempt counts, a stale one not.
    assert!(s
        .expired_leases(at(30_000))
        .await
        .expect("expired")
        .is_empty());
    assert!(s
        .extend_lease(older.id, 1, at(60_100))
        .await
        .expect("extend"));
    assert!(!s
        .extend_lease(older.id, 7, at(90_000))
        .await
        .expect("extend"));
    let mut expired = s.expired_leases(at(40_000)).await.expect("expired");
    expired.sort();
    assert_eq!(expired, vec![newer.id]);
    let requeued = s
        .apply(newer.id, &JobEvent::LeaseExpired, at(40_000))
        .await
        .expect("apply");
    assert_eq!((requeued.status, requeued.attempt), (JobStatus::Queued, 2));
    let again = s
        .claim(at(40_001), Duration::from_secs(30))
        .await
        .expect("claim")
        .expect("job");
    assert_eq!((again.id, again.attempt), (newer.id, 2));
    // A status read right after a claim sees it (a summary cache must follow every write).
    assert_eq!(
        s.get_summary(newer.id)
            .await
            .expect("summary")
            .map(|j| j.status),
        Some(JobStatus::Processing)
    );

    // a stale attempt cannot complete; the current one can, once.
    let stale = JobEvent::Complete {
        attempt: 1,
        result_key: "x.png".into(),
        processing_time_ms: 5,
    };
    assert!(matches!(
        s.apply(newer.id, &stale, at(40_002)).await,
        Err(StoreError::Transition(_))
    ));
    let done = JobEvent::Complete {
        attempt: 2,
        result_key: "x.png".into(),
        processing_time_ms: 5,
    };
    let finished = s
        .apply(newer.id, &done, at(40_003))
        .await
        .expect("complete");
    assert_eq!(finished.status, JobStatus::Success);
    assert_eq!(finished.result_key.as_deref(), Some("x.png"));
    assert_eq!(finished.processing_time_ms, Some(5));
    assert_eq!(finished.finished_at, Some(at(40_003)));
    assert_eq!(s.get(newer.id).await.expect("get"), Some(finished.clone()));
    assert_eq!(
        s.get_summary(newer.id).await.expect("summary"),
        Some(JobSummary::from(&finished))
    );
    // terminal states never change.
    for e in [
        JobEvent::Cancel,
        JobEvent::DeadlinePassed,
        JobEvent::LeaseExpired,
        done,
    ] {
        assert!(matches!(
            s.apply(newer.id, &e, at(40_004)).await,
            Err(StoreError::Transition(_))
        ));
    }
    assert_eq!(s.get(newer.id).await.expect("get"), Some(finished));
    assert!(matches!(
        s.apply(
            RequestId(uuid::Uuid::from_u128(77)),
            &JobEvent::Cancel,
            at(1)
        )
        .await,
        Err(StoreError::NotFound(_))
    ));

    // fail keeps the error; deadlines are found for unfinished jobs only.
    let fail = JobEvent::Fail {
        attempt: Some(1),
        error: ErrorBody::new(ErrorCode::ProcessingFailed, "no face"),
    };
    let failed = s.apply(older.id, &fail, at(50_000)).await.expect("fail");
    assert_eq!(
        failed.error.as_ref().map(|e| e.code),
        Some(ErrorCode::ProcessingFailed)
    );
    let late = sample_job(4, "acct_b", Category::Shirt, 1_000);
    s.insert(&late).await.expect("insert");
    assert_eq!(
        s.past_deadline(at(700_000)).await.expect("deadline"),
        vec![late.id]
    );
    let timed = s
        .apply(late.id, &JobEvent::DeadlinePassed, at(700_000))
        .await
        .expect("apply");
    assert_eq!(timed.error.map(|e| e.code), Some(ErrorCode::TimedOut));
    assert!(s
        .past_deadline(at(700_000))
        .await
        .expect("deadline")
        .is_empty());

    // Summaries follow every change: each equals the summary of the job as stored now.
    for id in [older.id, newer.id, late.id] {
        let job = s.get(id).await.expect("get").expect("stored");
        assert_eq!(
            s.get_summary(id).await.expect("summary"),
            Some(JobSummary::from(&job))
        );
    }
    assert_eq!(
        s.get_summary(RequestId(uuid::Uuid::from_u128(77)))
            .await
            .expect("summary"),
        None
    );

    // list filters by account and status, newest first; counts per status add up.
    let all = s.list(&JobFilter::default()).await.expect("list");
    assert_eq!(
        all.iter().map(|j| j.id).collect::<Vec<_>>(),
        vec![late.id, newer.id, older.id]
    );
    let b = s
        .list(&JobFilter {
            account_id: Some(AccountId::from("acct_b")),
            ..Default::default()
        })
        .await
        .expect("list");
    assert_eq!(b.len(), 1);
    let ok = s
        .list(&JobFilter {
            status: Some(JobStatus::Success),
            limit: 10,
            ..Default::default()
        })
        .await
        .expect("list");
    assert_eq!(ok.len(), 1);
    let counts = s.count_by_status().await.expect("counts");
    assert_eq!(counts.get(&JobStatus::Success), Some(&1));
    assert_eq!(counts.get(&JobStatus::Failed), Some(&2));
    assert_eq!(counts.values().sum::<u64>(), 3);
}

/// Concurrent claims never hand the same job to two workers.
pub async fn job_queue_concurrency<S, F, Fut>(make: F)
where
    S: JobStore + JobQueue + 'static,
    F: Fn() -> Fut,
    Fut: Future<Output = S>,
{
    let s = Arc::new(make().await);
    for n in 0..40u128 {
        s.insert(&sample_job(100 + n, "acct_a", Category::Tshirt, n as i64))
            .await
            .expect("insert");
    }
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let s = s.clone();
        tasks.push(tokio::spawn(async move {
            let mut got = Vec::new();
            while let Some(j) = s
                .claim(at(1_000), Duration::from_secs(60))
                .await
                .expect("claim")
            {
                got.push(j.id);
            }
            got
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.expect("task"));
    }
    all.sort();
    let before = all.len();
    all.dedup();
    assert_eq!(before, 40, "every job claimed");
    assert_eq!(all.len(), 40, "no job claimed twice");
}

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

/// The [`crate::ratelimit::RateLimiter`] contract: GCRA with the caller's clock, deciding
/// exactly as [`crate::ratelimit::gcra`] does (allowed, remaining, reset, retry-after), per
/// (key, endpoint), and exactly `burst` of a burst of concurrent checks allowed.
pub async fn rate_limiter<R, F, Fut>(make: F)
where
    R: crate::ratelimit::RateLimiter + 'static,
    F: Fn() -> Fut,
    Fut: Future<Output = R>,
{
    use crate::ratelimit::{gcra, Endpoint, Quota};
    use std::num::NonZeroU32;
    let q = |burst: u32, period_ms: u64| Quota {
        burst: NonZeroU32::new(burst).expect("non-zero"),
        period_ms,
    };

    // A burst is allowed, then denied with retry-after and reset.
    let r = make().await;
    let quota = q(5, 1000);
    for i in 0..5 {
        let d = r
            .check("k", Endpoint::CreateTryOn, quota, at(0))
            .await
            .expect("check");
        assert!(d.allowed, "request {i} of the burst");
        assert_eq!(d.remaining, 4 - i);
        assert_eq!(d.quota, quota);
    }
    let d = r
        .check("k", Endpoint::CreateTryOn, quota, at(0))
        .await
        .expect("check");
    assert!(!d.allowed);
    assert_eq!(
        (d.remaining, d.retry_after_ms, d.reset_ms),
        (0, 200, 1000),
        "denied: retry after one emission interval, full after the period"
    );

    // Tokens refill with the caller's clock, never beyond the burst; keys and endpoints are
    // separate budgets.
    let r = make().await;
    let quota = q(2, 1000);
    for _ in 0..2 {
        assert!(
            r.check("k", Endpoint::GetTryOn, quota, at(0))
                .await
                .expect("check")
                .allowed
        );
    }
    assert!(
        !r.check("k", Endpoint::GetTryOn, quota, at(0))
            .await
            .expect("check")
            .allowed
    );
    assert!(
        !r.check("k", Endpoint::GetTryOn, quota, at(499))
            .await
            .expect("check")
            .allowed
    );
    let d = r
        .check("k", Endpoint::GetTryOn, quota, at(500))
        .await
        .expect("check");
    assert!(
        d.allowed && d.remaining == 0,
        "one token back after T: {d:?}"
    );
    let d = r
        .check("k", Endpoint::GetTryOn, quota, at(10_500))
        .await
        .expect("check");
    assert_eq!(
        d.remaining, 1,
        "a long pause refills to the burst, not beyond"
    );
    let one = q(1, 60_000);
    assert!(
        r.check("a", Endpoint::Balance, one, at(0))
            .await
            .expect("check")
            .allowed
    );
    assert!(
        !r.check("a", Endpoint::Balance, one, at(1))
            .await
            .expect("check")
            .allowed
    );
    assert!(
        r.check("b", Endpoint::Balance, one, at(1))
            .await
            .expect("check")
            .allowed
    );
    assert!(
        r.check("a", Endpoint::CancelTryOn, one, at(1))
            .await
            .expect("check")
            .allowed
    );

    // The same decisions as the reference GCRA over an irregular sequence, with a fractional
    // emission interval (3 per second: T = 333.33 ms) and a quota change midway.
    let r = make().await;
    let mut tat: Option<f64> = None;
    let mut t = 0i64;
    for step in 0..120i64 {
        t += (step * 37) % 211;
        let quota = if step < 80 { q(3, 1000) } else { q(7, 2000) };
        let (want, next) = gcra(tat, quota, at(t));
        if next.is_some() {
            tat = next;
        }
        let got = r
            .check("seq", Endpoint::CreateTryOn, quota, at(t))
            .await
            .expect("check");
        assert_eq!(got, want, "step {step} at +{t} ms");
    }

    // Concurrent checks at one instant: exactly `burst` allowed.
    let r = Arc::new(make().await);
    let quota = q(10, 60_000);
    let mut tasks = Vec::new();
    for _ in 0..40 {
        let r = r.clone();
        tasks.push(tokio::spawn(async move {
            r.check("hot", Endpoint::CreateTryOn, quota, at(5))
                .await
                .expect("check")
                .allowed
        }));
    }
    let mut allowed = 0;
    for t in tasks {
        allowed += usize::from(t.await.expect("task"));
    }
    assert_eq!(allowed, 10, "exactly the burst of 40 concurrent checks");
}

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

// ---- Result stores and fetchers (issue 16, object storage) ----

mod fetcher;
mod result_store;

pub use fetcher::{fetcher, fixture_body, FetchFixture, BIG_LEN};
pub use result_store::result_store;

#[cfg(test)]
mod tests {
    use crate::billing::MemoryLedger;
    use crate::keys::MemoryKeyStore;
    use crate::store::MemoryJobStore;

    #[tokio::test]
    async fn memory_job_store_conforms() {
        super::job_store(|| async { MemoryJobStore::default() }).await;
        super::job_queue_concurrency(|| async { MemoryJobStore::default() }).await;
    }

    #[tokio::test]
    async fn memory_ledger_conforms() {
        super::ledger(|| async { MemoryLedger::default() }).await;
        super::ledger_concurrency(|| async { MemoryLedger::default() }).await;
    }

    #[tokio::test]
    async fn memory_idempotency_store_conforms() {
        super::idempotency_store(|| async {
            crate::idempotency::MemoryIdempotencyStore::default()
        })
        .await;
    }

    #[tokio::test]
    async fn memory_outbox_conforms() {
        super::outbox(|| async { crate::outbox::MemoryOutbox::default() }).await;
    }

    #[tokio::test]
    async fn memory_key_store_conforms() {
        super::api_key_store(|| async { MemoryKeyStore::default() }).await;
        super::key_revocation_generation(|| async { MemoryKeyStore::default() }).await;
    }

    #[tokio::test]
    async fn memory_account_limits_conform() {
        super::account_limit_store(|| async { crate::ratelimit::MemoryAccountLimits::default() })
            .await;
    }

    #[tokio::test]
    async fn memory_rate_limiter_conforms() {
        super::rate_limiter(|| async { crate::ratelimit::MemoryRateLimiter::default() }).await;
    }

    #[tokio::test]
    async fn memory_webhook_secrets_conform() {
        super::webhook_secrets(|| async {
            crate::outbox::MemoryWebhookSecrets::new(std::sync::Arc::new(crate::ids::RandomIds))
        })
        .await;
    }
}
