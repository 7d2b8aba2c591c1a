//! A request that reserved an `Idempotency-Key` and died (its process killed) does not lock the
//! key for a day: once the reservation is stale, the next retry takes it over. Whether the dead
//! request got as far as its hold, or as far as its job, the retry ends with exactly one job and
//! one hold, under the request id derived from the reservation.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use vto_core::idempotency::{request_id_for, STALE_AFTER};
use vto_core::testing::NeverEngine;
use vto_core::*;

struct Setup {
    clock: Arc<FakeClock>,
    mem: MemoryBackends,
    svc: TryOnService,
    caller: Caller,
    request: CreateRequest,
}

async fn setup() -> Setup {
    // The engine is registered only so the category is accepted; no worker runs in these tests.
    let b = testing::bench(
        Category::Dress,
        Arc::new(NeverEngine),
        "1.00".parse().unwrap(),
    )
    .await;
    let request: CreateRequest = serde_json::from_value(json!({
        "category": "dress",
        "person_image": "data:image/png;base64,cGVyc29u",
        "product_image": "data:image/png;base64,ZHJlc3M=",
    }))
    .unwrap();
    Setup {
        clock: b.clock,
        mem: b.mem,
        svc: b.svc,
        caller: b.caller,
        request,
    }
}

/// The dress price in the default table.
fn price() -> Money {
    Money::parse("0.20", ServiceConfig::default().prices.currency()).unwrap()
}

fn stale() -> Duration {
    STALE_AFTER + Duration::from_secs(1)
}

#[tokio::test]
async fn a_retry_after_a_request_that_died_holding_only_the_hold_makes_the_job_once() {
    let s = setup().await;
    let fp = idempotency::fingerprint(&s.request);
    let t0 = s.clock.now();
    let acct = &s.caller.account_id;
    let id = request_id_for(acct, "order-1", t0);
    // The dead request: reserved the key and held the price, then its process died.
    let store = &s.mem.backends.idempotency;
    assert_eq!(
        store.begin(acct, "order-1", &fp, t0).await.unwrap(),
        idempotency::Begin::New
    );
    s.mem
        .backends
        .ledger
        .hold(acct, id, price(), t0)
        .await
        .unwrap();

    // Before the reservation is stale, a retry is told to wait.
    let err = s
        .svc
        .create_idempotent(&s.caller, Some("order-1"), &s.request)
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::IdempotencyConflict);

    s.clock.advance(stale());
    let (created, replay) = s
        .svc
        .create_idempotent(&s.caller, Some("order-1"), &s.request)
        .await
        .unwrap();
    assert!(!replay, "the job is made by this retry");
    assert_eq!(created.result().request_id, id, "the derived id");
    let b = s.svc.balance(&s.caller).await.unwrap();
    assert_eq!(b.held.to_string(), "0.20", "one hold, not two");
    let (again, replay) = s
        .svc
        .create_idempotent(&s.caller, Some("order-1"), &s.request)
        .await
        .unwrap();
    assert!(replay);
    assert_eq!(again.result().request_id, id);
    let jobs = s.svc.list(&s.caller, 100, None).await.unwrap();
    assert_eq!(jobs.data.len(), 1);
    let hold = s.mem.backends.ledger.get_hold(id).await.unwrap().unwrap();
    assert_eq!(
        hold.status,
        billing::HoldStatus::Open,
        "the job's hold is open"
    );
}

#[tokio::test]
async fn a_retry_after_maintenance_gave_the_dead_requests_hold_back_starts_over() {
    let s = setup().await;
    let fp = idempotency::fingerprint(&s.request);
    let t0 = s.clock.now();
    let acct = &s.caller.account_id;
    let dead = request_id_for(acct, "order-3", t0);
    s.mem
        .backends
        .idempotency
        .begin(acct, "order-3", &fp, t0)
        .await
        .unwrap();
    s.mem
        .backends
        .ledger
        .hold(acct, dead, price(), t0)
        .await
        .unwrap();
    // Much later, maintenance found a hold without a job and released it.
    s.clock.advance(Duration::from_secs(400));
    assert_eq!(s.svc.maintain().await.unwrap().reconciled, 1);
    let (created, replay) = s
        .svc
        .create_idempotent(&s.caller, Some("order-3"), &s.request)
        .await
        .unwrap();
    assert!(!replay);
    let id = created.result().request_id;
    assert_ne!(id, dead, "a fresh reservation, a fresh id");
    let hold = s.mem.backends.ledger.get_hold(id).await.unwrap().unwrap();
    assert_eq!(hold.status, billing::HoldStatus::Open);
    let b = s.svc.balance(&s.caller).await.unwrap();
    assert_eq!(b.held.to_string(), "0.20");
}

#[tokio::test]
async fn a_retry_after_a_request_that_died_after_making_its_job_answers_with_that_job() {
    let s = setup().await;
    let fp = idempotency::fingerprint(&s.request);
    let t0 = s.clock.now();
    let acct = &s.caller.account_id;
    let id = request_id_for(acct, "order-2", t0);
    // The dead request got as far as its hold and its job, not as far as saving the response.
    let store = &s.mem.backends.idempotency;
    store.begin(acct, "order-2", &fp, t0).await.unwrap();
    let price = price();
    s.mem
        .backends
        .ledger
        .hold(acct, id, price, t0)
        .await
        .unwrap();
    let req = s.request.validate(&RequestLimits::default()).unwrap();
    let job = Job::new(id, acct.clone(), req, price, t0, None);
    s.mem.backends.jobs.insert(&job).await.unwrap();

    s.clock.advance(stale());
    let (created, replay) = s
        .svc
        .create_idempotent(&s.caller, Some("order-2"), &s.request)
        .await
        .unwrap();
    assert!(replay, "answered with the dead request's job");
    assert!(matches!(created, Created::Accepted(_)));
    assert_eq!(created.result().request_id, id);
    assert_eq!(created.result().status, JobStatus::Queued);
    let b = s.svc.balance(&s.caller).await.unwrap();
    assert_eq!(b.held.to_string(), "0.20");
    let jobs = s.svc.list(&s.caller, 100, None).await.unwrap();
    assert_eq!(jobs.data.len(), 1, "no second job");
    // A different body under the same key is still a conflict.
    let other: CreateRequest = serde_json::from_value(json!({
        "category": "dress",
        "person_image": "data:image/png;base64,b3RoZXI=",
        "product_image": "data:image/png;base64,ZHJlc3M=",
    }))
    .unwrap();
    let err = s
        .svc
        .create_idempotent(&s.caller, Some("order-2"), &other)
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::IdempotencyConflict);
}

#[tokio::test]
async fn a_retry_of_a_dead_synchronous_request_answers_its_job_and_its_result_once_finished() {
    // The dead request made its synchronous job (stored as processing, its render under way)
    // and died. A retry answers with the unfinished job — and must not save that answer: the
    // soak's clients got `processing` replayed for a job that had long succeeded.
    let s = setup().await;
    let glasses: CreateRequest = serde_json::from_value(json!({
        "category": "glasses",
        "person_image": "data:image/png;base64,cGVyc29u",
        "product_model": "data:model/gltf-binary;base64,Z2xURg==",
    }))
    .unwrap();
    let mut engines = Engines::new();
    engines.register(Category::Glasses, Arc::new(NeverEngine));
    let svc = TryOnService::new(s.mem.backends.clone(), engines, ServiceConfig::default());
    let fp = idempotency::fingerprint(&glasses);
    let t0 = s.clock.now();
    let acct = &s.caller.account_id;
    let id = request_id_for(acct, "sync-1", t0);
    let store = &s.mem.backends.idempotency;
    store.begin(acct, "sync-1", &fp, t0).await.unwrap();
    let price = ServiceConfig::default().prices.price(Category::Glasses);
    s.mem
        .backends
        .ledger
        .hold(acct, id, price, t0)
        .await
        .unwrap();
    let req = glasses.validate(&RequestLimits::default()).unwrap();
    let mut job = Job::new(id, acct.clone(), req, price, t0, None);
    job.apply(
        &JobEvent::Claim {
            lease_until: t0.plus(Duration::from_secs(60)),
        },
        t0,
    )
    .unwrap();
    s.mem.backends.jobs.insert(&job).await.unwrap();

    s.clock.advance(stale());
    let (created, _) = svc
        .create_idempotent(&s.caller, Some("sync-1"), &glasses)
        .await
        .unwrap();
    assert_eq!(created.result().request_id, id);
    assert_eq!(created.result().status, JobStatus::Processing);

    // A worker finishes the job (here: it fails, which is final too).
    let now = s.clock.now();
    s.mem
        .backends
        .jobs
        .apply(
            id,
            &JobEvent::Fail {
                attempt: Some(1),
                error: ErrorBody::new(ErrorCode::ProcessingFailed, "no face"),
            },
            now,
        )
        .await
        .unwrap();
    let (created, replay) = svc
        .create_idempotent(&s.caller, Some("sync-1"), &glasses)
        .await
        .unwrap();
    assert!(replay);
    assert!(matches!(created, Created::Finished(_)), "{created:?}");
    assert_eq!(created.result().status, JobStatus::Failed);
    let jobs = svc.list(&s.caller, 100, None).await.unwrap();
    assert_eq!(jobs.data.len(), 1, "no second job");
}

#[test]
fn derived_ids_differ_by_account_key_and_reservation_time() {
    let a = AccountId::from("acct_a");
    let b = AccountId::from("acct_b");
    let t = Timestamp(1_000);
    let id = request_id_for(&a, "k", t);
    assert_eq!(id, request_id_for(&a, "k", t));
    assert_ne!(id, request_id_for(&b, "k", t));
    assert_ne!(id, request_id_for(&a, "k2", t));
    assert_ne!(id, request_id_for(&a, "k", Timestamp(1_001)));
    assert_eq!(id.0.get_version_num(), 4);
}
