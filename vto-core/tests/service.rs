//! TryOnService end to end on the memory backends, with a fake clock and a test engine.

use std::sync::Arc;
use std::time::Duration;

use proptest::prelude::*;
use rust_decimal::Decimal;
use serde_json::json;
use vto_core::billing::HoldStatus;
use vto_core::testing::{data_url, EchoEngine};
use vto_core::*;

struct Harness {
    svc: TryOnService,
    mem: MemoryBackends,
    clock: Arc<FakeClock>,
    caller: Caller,
    key: String,
}

async fn harness(funds: &str, config: ServiceConfig) -> Harness {
    let clock = Arc::new(FakeClock::default());
    let mem = Backends::in_memory_with(clock.clone(), Arc::new(SequentialIds::default()));
    let mut engines = Engines::new();
    for c in Category::ALL {
        engines.register(c, Arc::new(EchoEngine::marked()));
    }
    let svc = TryOnService::new(mem.backends.clone(), engines, config);
    let acct = svc.create_account("shop").await.unwrap();
    if funds != "0" {
        svc.add_funds(&acct.id, funds.parse().unwrap(), "top-up")
            .await
            .unwrap();
    }
    let key = svc.create_api_key(&acct.id, "test").await.unwrap();
    let caller = svc.authenticate(Some(&key.secret)).await.unwrap();
    Harness {
        svc,
        mem,
        clock,
        caller,
        key: key.secret,
    }
}

fn body(category: &str, product: &[u8], webhook: bool) -> CreateRequest {
    let field = if category.parse::<Category>().unwrap().is_sync() {
        "product_model"
    } else {
        "product_image"
    };
    let mut v = json!({"category": category, "person_image": data_url("image/png", b"person"), field: data_url("image/png", product)});
    if webhook {
        v["webhook_url"] = json!("https://shop.example/hooks/vto");
    }
    serde_json::from_value(v).unwrap()
}

impl Harness {
    async fn balance(&self) -> Balance {
        self.svc.balance(&self.caller).await.unwrap()
    }

    /// A worker claims the oldest queued job with a lease of `lease_secs` and then dies.
    async fn claim_and_die(&self, lease_secs: u64) -> Job {
        self.mem
            .backends
            .queue
            .claim(self.clock.now(), Duration::from_secs(lease_secs))
            .await
            .unwrap()
            .expect("a queued job")
    }
}

fn dec(s: &str) -> Decimal {
    s.parse().unwrap()
}

#[tokio::test]
async fn sync_success_returns_the_result_and_bills_once() {
    let h = harness("1.00", ServiceConfig::default()).await;
    let created = h
        .svc
        .create(&h.caller, &body("glasses", b"frame", true))
        .await
        .unwrap();
    let Created::Finished(r) = created else {
        panic!("sync must finish")
    };
    assert_eq!(r.status, JobStatus::Success);
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["category"], "glasses");
    assert_eq!(v["cost"], json!({"amount": "0.05", "currency": "USD"}));
    assert!(v["result"]["image_url"]
        .as_str()
        .unwrap()
        .starts_with("memory://"));
    assert!(v["processing_time_ms"].is_u64());
    assert!(v.get("error").is_none());
    let b = h.balance().await;
    assert_eq!((b.balance, b.held), (dec("0.95"), dec("0")));
    // sync categories ignore the webhook.
    assert!(h.mem.webhooks.sent().is_empty());
    // GET returns the same object.
    let got = h
        .svc
        .get(&h.caller, &r.request_id.to_string())
        .await
        .unwrap();
    assert_eq!(got, r);
}

#[tokio::test]
async fn sync_failure_is_a_failed_result_and_not_billed() {
    let h = harness("1.00", ServiceConfig::default()).await;
    let r = h
        .svc
        .create(&h.caller, &body("hats", b"fail", false))
        .await
        .unwrap();
    let r = r.result();
    assert_eq!(r.status, JobStatus::Failed);
    assert_eq!(r.result, None);
    assert_eq!(r.cost, None);
    let e = r.error.as_ref().unwrap();
    assert_eq!(e.code, ErrorCode::ProcessingFailed);
    assert!(e.message.contains("no face"));
    let b = h.balance().await;
    assert_eq!(
        (b.balance, b.held, b.available),
        (dec("1"), dec("0"), dec("1"))
    );
}

#[tokio::test]
async fn async_job_goes_queued_processing_success_with_webhook() {
    let h = harness("1.00", ServiceConfig::default()).await;
    let created = h
        .svc
        .create(&h.caller, &body("dress", b"gown", true))
        .await
        .unwrap();
    let Created::Accepted(r) = created else {
        panic!("async must be accepted")
    };
    assert_eq!(r.status, JobStatus::Queued);
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["result"], json!(null));
    assert_eq!(v["cost"], json!(null));
    // held, not charged.
    let b = h.balance().await;
    assert_eq!((b.balance, b.held), (dec("1"), dec("0.20")));

    let id = r.request_id.to_string();
    assert_eq!(h.svc.work_one().await.unwrap(), Some(r.request_id));
    let done = h.svc.get(&h.caller, &id).await.unwrap();
    assert_eq!(done.status, JobStatus::Success);
    assert_eq!(done.cost.unwrap().amount, dec("0.20"));
    let stored = h
        .mem
        .results
        .get(&format!("{id}.png"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.bytes, b"ECHO:person");
    let b = h.balance().await;
    assert_eq!((b.balance, b.held), (dec("0.80"), dec("0")));

    let sent = h.mem.webhooks.sent();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].url, "https://shop.example/hooks/vto");
    assert_eq!(sent[0].payload, done);
    assert_eq!(h.svc.work_one().await.unwrap(), None);
}

#[tokio::test]
async fn async_failure_is_not_billed_and_webhook_carries_the_error() {
    let h = harness("1.00", ServiceConfig::default()).await;
    let r = h
        .svc
        .create(&h.caller, &body("pants", b"fail", true))
        .await
        .unwrap();
    h.svc.work_one().await.unwrap();
    let got = h
        .svc
        .get(&h.caller, &r.result().request_id.to_string())
        .await
        .unwrap();
    assert_eq!(got.status, JobStatus::Failed);
    let v = serde_json::to_value(&got).unwrap();
    assert_eq!(v["result"], json!(null));
    assert_eq!(v["cost"], json!(null));
    assert_eq!(v["error"]["code"], "processing_failed");
    assert_eq!(h.balance().await.available, dec("1"));
    assert_eq!(h.mem.webhooks.sent()[0].payload.status, JobStatus::Failed);
}

#[tokio::test]
async fn authentication_errors_have_stable_codes() {
    let h = harness("1.00", ServiceConfig::default()).await;
    let code = |r: Result<Caller, ApiError>| r.unwrap_err().code;
    assert_eq!(
        code(h.svc.authenticate(None).await),
        ErrorCode::MissingApiKey
    );
    assert_eq!(
        code(h.svc.authenticate(Some("  ")).await),
        ErrorCode::MissingApiKey
    );
    assert_eq!(
        code(h.svc.authenticate(Some("vto_sk_wrong")).await),
        ErrorCode::InvalidApiKey
    );
    h.mem
        .backends
        .keys
        .revoke(&h.caller.key_id, h.clock.now())
        .await
        .unwrap();
    assert_eq!(
        code(h.svc.authenticate(Some(&h.key)).await),
        ErrorCode::InvalidApiKey
    );
}

#[tokio::test]
async fn another_accounts_request_is_not_found() {
    let h = harness("1.00", ServiceConfig::default()).await;
    let r = h
        .svc
        .create(&h.caller, &body("shirt", b"tee", false))
        .await
        .unwrap();
    let other = h.svc.create_account("other").await.unwrap();
    let k = h.svc.create_api_key(&other.id, "o").await.unwrap();
    let intruder = h.svc.authenticate(Some(&k.secret)).await.unwrap();
    let id = r.result().request_id.to_string();
    let e = h.svc.get(&intruder, &id).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::NotFound);
    let e2 = h
        .svc
        .get(&h.caller, "00000000-0000-0000-0000-00000000ffff")
        .await
        .unwrap_err();
    assert_eq!(e2.code, ErrorCode::NotFound);
    assert_eq!(
        e.message.replace(&id, "X"),
        e2.message
            .replace("00000000-0000-0000-0000-00000000ffff", "X")
    );
    assert_eq!(
        h.svc.get(&h.caller, "../../etc").await.unwrap_err().code,
        ErrorCode::NotFound
    );
}

#[tokio::test]
async fn insufficient_balance_creates_nothing() {
    let h = harness("0.10", ServiceConfig::default()).await;
    let e = h
        .svc
        .create(&h.caller, &body("full_outfit", b"x", false))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InsufficientBalance);
    assert_eq!(e.http_status(), 402);
    let jobs = h
        .mem
        .backends
        .jobs
        .list(&JobFilter::default())
        .await
        .unwrap();
    assert!(jobs.is_empty());
    assert_eq!(h.balance().await.available, dec("0.10"));
}

#[tokio::test]
async fn a_category_without_engine_is_refused_before_any_hold() {
    let clock = Arc::new(FakeClock::default());
    let mem = Backends::in_memory_with(clock, Arc::new(SequentialIds::default()));
    let svc = TryOnService::new(
        mem.backends.clone(),
        Engines::new(),
        ServiceConfig::default(),
    );
    let acct = svc.create_account("s").await.unwrap();
    svc.add_funds(&acct.id, dec("1"), "").await.unwrap();
    let k = svc.create_api_key(&acct.id, "k").await.unwrap();
    let caller = svc.authenticate(Some(&k.secret)).await.unwrap();
    let e = svc
        .create(&caller, &body("jacket", b"j", false))
        .await
        .unwrap_err();
    assert_eq!(
        (e.code, e.http_status()),
        (ErrorCode::EngineUnavailable, 501)
    );
    assert!(mem.backends.ledger.open_holds().await.unwrap().is_empty());
}

#[tokio::test]
async fn validation_errors_name_the_field() {
    let h = harness("1.00", ServiceConfig::default()).await;
    let bad: CreateRequest =
        serde_json::from_value(json!({"category": "glasses", "person_image": "ftp://x/y.png", "product_image": "https://x/y.png"}))
            .unwrap();
    let e = h.svc.create(&h.caller, &bad).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidRequest);
    assert_eq!(e.param.as_deref(), Some("person_image"));
    let params: Vec<_> = e.details.iter().map(|d| d.param.as_str()).collect();
    assert_eq!(
        params,
        vec!["person_image", "product_image", "product_model"]
    );
    assert_eq!(h.balance().await.held, dec("0"));
}

#[tokio::test]
async fn a_lost_worker_lease_requeues_and_the_job_finishes_once() {
    let h = harness("1.00", ServiceConfig::default()).await;
    let r = h
        .svc
        .create(&h.caller, &body("tshirt", b"tee", true))
        .await
        .unwrap();
    let id = r.result().request_id;
    // A worker claims it and dies.
    let claimed = h.claim_and_die(120).await;
    assert_eq!(claimed.attempt, 1);
    h.clock.advance(Duration::from_secs(60));
    assert_eq!(
        h.svc.maintain().await.unwrap().requeued,
        0,
        "lease still valid"
    );
    h.clock.advance(Duration::from_secs(61));
    assert_eq!(h.svc.maintain().await.unwrap().requeued, 1);
    let job = h.mem.backends.jobs.get(id).await.unwrap().unwrap();
    assert_eq!((job.status, job.attempt), (JobStatus::Queued, 2));
    h.svc.work_one().await.unwrap();
    // The dead worker's late result is refused.
    let late = h
        .mem
        .backends
        .jobs
        .apply(
            id,
            &JobEvent::Complete {
                attempt: 1,
                result_key: "stale.png".into(),
                processing_time_ms: 1,
            },
            h.clock.now(),
        )
        .await;
    assert!(late.is_err());
    let b = h.balance().await;
    assert_eq!((b.balance, b.held), (dec("0.85"), dec("0")));
    assert_eq!(h.mem.webhooks.sent().len(), 1);
}

#[tokio::test]
async fn a_job_that_keeps_losing_its_worker_fails_unbilled() {
    let config = ServiceConfig {
        max_attempts: 2,
        ..Default::default()
    };
    let h = harness("1.00", config).await;
    let r = h
        .svc
        .create(&h.caller, &body("jacket", b"j", false))
        .await
        .unwrap();
    for _ in 0..2 {
        h.claim_and_die(120).await;
        h.clock.advance(Duration::from_secs(121));
        h.svc.maintain().await.unwrap();
    }
    let got = h
        .svc
        .get(&h.caller, &r.result().request_id.to_string())
        .await
        .unwrap();
    assert_eq!(got.status, JobStatus::Failed);
    assert_eq!(got.error.unwrap().code, ErrorCode::ProcessingFailed);
    assert_eq!(h.balance().await.available, dec("1"));
}

#[tokio::test]
async fn a_job_past_its_deadline_times_out_unbilled() {
    let h = harness("1.00", ServiceConfig::default()).await;
    let r = h
        .svc
        .create(&h.caller, &body("shirt", b"s", true))
        .await
        .unwrap();
    h.clock.advance(Duration::from_secs(15 * 60 + 1));
    assert_eq!(h.svc.maintain().await.unwrap().timed_out, 1);
    let got = h
        .svc
        .get(&h.caller, &r.result().request_id.to_string())
        .await
        .unwrap();
    assert_eq!(got.status, JobStatus::Failed);
    assert_eq!(got.error.unwrap().code, ErrorCode::TimedOut);
    assert_eq!(h.balance().await.available, dec("1"));
    assert_eq!(h.mem.webhooks.sent().len(), 1);
    assert_eq!(h.svc.work_one().await.unwrap(), None);
}

#[tokio::test]
async fn cancel_releases_the_hold_and_finished_jobs_refuse() {
    let h = harness("1.00", ServiceConfig::default()).await;
    let r = h
        .svc
        .create(&h.caller, &body("dress", b"d", true))
        .await
        .unwrap();
    let id = r.result().request_id.to_string();
    let c = h.svc.cancel(&h.caller, &id).await.unwrap();
    assert_eq!(c.status, JobStatus::Canceled);
    assert_eq!(c.error.unwrap().code, ErrorCode::Canceled);
    assert_eq!(h.balance().await.available, dec("1"));
    assert_eq!(h.mem.webhooks.sent().len(), 1);
    // idempotent
    assert_eq!(
        h.svc.cancel(&h.caller, &id).await.unwrap().status,
        JobStatus::Canceled
    );
    assert_eq!(h.svc.work_one().await.unwrap(), None);

    let s = h
        .svc
        .create(&h.caller, &body("glasses", b"g", false))
        .await
        .unwrap();
    let e = h
        .svc
        .cancel(&h.caller, &s.result().request_id.to_string())
        .await
        .unwrap_err();
    assert_eq!((e.code, e.http_status()), (ErrorCode::NotCancelable, 409));
}

#[tokio::test]
async fn reconciliation_captures_a_success_whose_capture_was_lost() {
    let h = harness("1.00", ServiceConfig::default()).await;
    let r = h
        .svc
        .create(&h.caller, &body("shirt", b"s", false))
        .await
        .unwrap();
    let id = r.result().request_id;
    // Simulate a crash between the job's completion and the capture.
    let claimed = h.claim_and_die(60).await;
    h.mem
        .backends
        .jobs
        .apply(
            id,
            &JobEvent::Complete {
                attempt: claimed.attempt,
                result_key: format!("{id}.png"),
                processing_time_ms: 3,
            },
            h.clock.now(),
        )
        .await
        .unwrap();
    assert_eq!(h.balance().await.held, dec("0.15"));
    assert_eq!(
        h.svc.maintain().await.unwrap().reconciled,
        0,
        "within the grace period"
    );
    h.clock.advance(Duration::from_secs(301));
    assert_eq!(h.svc.maintain().await.unwrap().reconciled, 1);
    let b = h.balance().await;
    assert_eq!((b.balance, b.held), (dec("0.85"), dec("0")));
    assert_eq!(h.svc.maintain().await.unwrap().reconciled, 0);
    let hold = h.mem.backends.ledger.get_hold(id).await.unwrap().unwrap();
    assert_eq!(hold.status, HoldStatus::Captured);
}

#[tokio::test]
async fn workers_run_until_shutdown() {
    let h = harness("5.00", ServiceConfig::default()).await;
    for _ in 0..5 {
        h.svc
            .create(&h.caller, &body("tshirt", b"t", false))
            .await
            .unwrap();
    }
    let (tx, rx) = tokio::sync::watch::channel(false);
    let svc = h.svc.clone();
    let run = tokio::spawn(async move { svc.run_workers(2, Duration::from_millis(5), rx).await });
    for _ in 0..200 {
        if h.balance().await.held == dec("0") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    tx.send(true).unwrap();
    run.await.unwrap();
    assert_eq!(h.balance().await.balance, dec("4.25"));
}

#[derive(Debug, Clone)]
enum Op {
    Submit { category: usize, fail: bool },
    Work,
    Cancel(usize),
    Advance(u64),
    ClaimAndDie,
    Maintain,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0usize..11, any::<bool>()).prop_map(|(category, fail)| Op::Submit { category, fail }),
        Just(Op::Work),
        (0usize..20).prop_map(Op::Cancel),
        (1u64..400).prop_map(Op::Advance),
        Just(Op::ClaimAndDie),
        Just(Op::Maintain),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// Over random sequences of submits, work, cancels, dead workers and clock jumps, once
    /// everything settles: every job is terminal, billed if and only if it succeeded, at its
    /// price, once; the account never went below zero available.
    #[test]
    fn billed_if_and_only_if_success(ops in proptest::collection::vec(op(), 1..40)) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let config = ServiceConfig { job_deadline: Some(Duration::from_secs(900)), ..Default::default() };
            let h = harness("2.00", config).await;
            let mut ids = Vec::new();
            for o in &ops {
                match o {
                    Op::Submit { category, fail } => {
                        let c = Category::ALL[*category];
                        if let Ok(r) = h.svc.create(&h.caller, &body(c.as_str(), if *fail { b"fail" } else { b"ok" }, true)).await {
                            ids.push(r.result().request_id);
                        }
                    }
                    Op::Work => { h.svc.work_one().await.unwrap(); }
                    Op::Cancel(i) => if let Some(id) = ids.get(*i) { let _ = h.svc.cancel(&h.caller, &id.to_string()).await; },
                    Op::Advance(s) => h.clock.advance(Duration::from_secs(*s)),
                    Op::ClaimAndDie => { h.mem.backends.queue.claim(h.clock.now(), Duration::from_secs(120)).await.unwrap(); }
                    Op::Maintain => { h.svc.maintain().await.unwrap(); }
                }
                prop_assert!(h.balance().await.available >= Decimal::ZERO);
            }
            // Let everything settle: leases run out, workers drain the queue.
            for _ in 0..10 {
                h.clock.advance(Duration::from_secs(121));
                h.svc.maintain().await.unwrap();
                while h.svc.work_one().await.unwrap().is_some() {}
            }
            let mut expected = Decimal::ZERO;
            let mut successes = 0;
            for id in &ids {
                let job = h.mem.backends.jobs.get(*id).await.unwrap().unwrap();
                prop_assert!(job.status.is_terminal(), "{} is {}", id, job.status);
                let hold = h.mem.backends.ledger.get_hold(*id).await.unwrap().unwrap();
                let billed = hold.status == HoldStatus::Captured;
                prop_assert_eq!(billed, job.status == JobStatus::Success, "job {} {}", id, job.status);
                if billed { expected += job.price.amount; successes += 1; }
            }
            let b = h.balance().await;
            prop_assert_eq!(b.held, Decimal::ZERO);
            prop_assert_eq!(b.balance, dec("2.00") - expected);
            let captures = h.mem.backends.ledger.entries(&h.caller.account_id).await.unwrap()
                .iter().filter(|e| e.kind == vto_core::billing::EntryKind::Capture).count();
            prop_assert_eq!(captures, successes, "one capture per successful job");
            Ok(())
        })?;
    }
}

#[tokio::test]
async fn idempotency_key_replays_without_a_second_job_or_charge() {
    let h = harness("1.00", ServiceConfig::default()).await;
    let b = body("glasses", b"frame", false);
    let (first, replayed) = h
        .svc
        .create_idempotent(&h.caller, Some("order-42"), &b)
        .await
        .unwrap();
    assert!(!replayed);
    let (second, replayed) = h
        .svc
        .create_idempotent(&h.caller, Some("order-42"), &b)
        .await
        .unwrap();
    assert!(replayed);
    assert_eq!(first, second);
    assert_eq!(h.balance().await.balance, dec("0.95"), "charged once");
    assert_eq!(
        h.mem
            .backends
            .jobs
            .list(&JobFilter::default())
            .await
            .unwrap()
            .len(),
        1
    );

    let other = body("glasses", b"another frame", false);
    let e = h
        .svc
        .create_idempotent(&h.caller, Some("order-42"), &other)
        .await
        .unwrap_err();
    assert_eq!(
        (e.code, e.http_status()),
        (ErrorCode::IdempotencyConflict, 409)
    );

    // An invalid request saves nothing: the key can be used once the body is fixed.
    let bad: CreateRequest = serde_json::from_value(json!({"category": "glasses"})).unwrap();
    assert_eq!(
        h.svc
            .create_idempotent(&h.caller, Some("order-43"), &bad)
            .await
            .unwrap_err()
            .code,
        ErrorCode::InvalidRequest
    );
    let (_, replayed) = h
        .svc
        .create_idempotent(&h.caller, Some("order-43"), &b)
        .await
        .unwrap();
    assert!(!replayed);
    assert_eq!(
        h.svc
            .create_idempotent(&h.caller, Some(""), &b)
            .await
            .unwrap_err()
            .param
            .as_deref(),
        Some("Idempotency-Key")
    );
    // Kept 24 h, then purged by maintenance.
    h.clock.advance(Duration::from_secs(24 * 3600 + 1));
    h.svc.maintain().await.unwrap();
    let (_, replayed) = h
        .svc
        .create_idempotent(&h.caller, Some("order-42"), &other)
        .await
        .unwrap();
    assert!(!replayed);
}

#[tokio::test]
async fn a_crash_after_the_transition_still_sends_the_webhook_and_settles() {
    let h = harness("1.00", ServiceConfig::default()).await;
    let r = h
        .svc
        .create(&h.caller, &body("dress", b"d", true))
        .await
        .unwrap();
    let id = r.result().request_id;
    // The job failed, then the process died before finish() ran.
    h.mem
        .backends
        .jobs
        .apply(
            id,
            &JobEvent::Fail {
                attempt: None,
                error: ErrorBody::new(ErrorCode::ProcessingFailed, "boom"),
            },
            h.clock.now(),
        )
        .await
        .unwrap();
    assert!(h.mem.webhooks.sent().is_empty());
    h.clock.advance(Duration::from_secs(301));
    assert_eq!(h.svc.maintain().await.unwrap().reconciled, 1);
    let sent = h.mem.webhooks.sent();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].payload.status, JobStatus::Failed);
    assert_eq!(h.balance().await.available, dec("1"));
    assert_eq!(h.svc.maintain().await.unwrap().reconciled, 0);
}

#[tokio::test]
async fn stored_account_limits_replace_the_default_at_the_next_request_and_reset_restores_it() {
    let h = harness("1.00", ServiceConfig::default()).await;
    let limits = &h.mem.backends.limits;
    let quota = |h: &Harness| {
        let svc = h.svc.clone();
        let caller = h.caller.clone();
        async move {
            match svc.rate_limit(&caller, Endpoint::CreateTryOn).await {
                Ok(Some(d)) => d.quota,
                Ok(None) => panic!("limited by default"),
                Err((_, d)) => d.quota,
            }
        }
    };
    assert_eq!(
        quota(&h).await.to_string(),
        "10/1",
        "the configured default"
    );
    limits
        .set_limits(
            &h.caller.account_id,
            &AccountLimits::from([(Endpoint::CreateTryOn, "2/60".parse().unwrap())]),
        )
        .await
        .unwrap();
    // No restart: the next request sees the account's quota, and it is enforced.
    h.clock.advance(Duration::from_secs(60));
    let mut allowed = 0;
    for _ in 0..5 {
        match h.svc.rate_limit(&h.caller, Endpoint::CreateTryOn).await {
            Ok(Some(d)) => {
                assert_eq!(d.quota.to_string(), "2/60");
                allowed += 1;
            }
            Ok(None) => panic!("limited"),
            Err((e, d)) => {
                assert_eq!(e.code, ErrorCode::RateLimitExceeded);
                assert_eq!(d.quota.to_string(), "2/60");
            }
        }
    }
    assert_eq!(allowed, 2, "the account's burst of 2, not the default 10");
    assert_eq!(
        h.svc
            .rate_limit(&h.caller, Endpoint::GetTryOn)
            .await
            .unwrap()
            .unwrap()
            .quota
            .to_string(),
        "50/1",
        "endpoints the account does not override keep the default"
    );
    assert!(limits.reset_limits(&h.caller.account_id).await.unwrap());
    assert_eq!(quota(&h).await.to_string(), "10/1");
}
