//! A synchronous try-on that could not start in time (every renderer busy past the
//! renderer's `sync_wait`: the engine answers `service_unavailable`) is not the client's
//! fault: its job fails unbilled, and its `Idempotency-Key` is not saved, so a retry under the
//! same key runs instead of replaying the refusal (Stripe saves no result for a request that
//! never ran).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::json;
use vto_core::*;

/// TEST DOUBLE: busy for its first `busy_for` calls, then "renders" the person photo.
#[derive(Debug)]
struct BusyThenEcho {
    busy_for: usize,
    calls: AtomicUsize,
}

#[async_trait]
impl Engine for BusyThenEcho {
    fn name(&self) -> &str {
        "busy-then-echo-test-engine"
    }

    async fn render(&self, input: RenderInput<'_>) -> Result<Rendered, EngineError> {
        if self.calls.fetch_add(1, Ordering::SeqCst) < self.busy_for {
            return Err(EngineError::Rejected {
                code: ErrorCode::ServiceUnavailable,
                message: "all 1 render pipelines stayed busy for 30 s; retry later".into(),
            });
        }
        Ok(Rendered {
            image: input.person.bytes.to_vec(),
            content_type: "image/png".into(),
            metadata: json!({}),
        })
    }
}

struct Setup {
    clock: Arc<FakeClock>,
    mem: MemoryBackends,
    svc: TryOnService,
    caller: Caller,
    request: CreateRequest,
}

/// A funded account on a service whose glasses engine is busy once, then renders; a sync
/// glasses request.
async fn setup() -> Setup {
    let b = testing::bench(
        Category::Glasses,
        Arc::new(BusyThenEcho {
            busy_for: 1,
            calls: AtomicUsize::new(0),
        }),
        "1.00".parse().unwrap(),
    )
    .await;
    let request: CreateRequest = serde_json::from_value(json!({
        "category": "glasses",
        "person_image": testing::data_url("image/png", &testing::png(4, 4, [200, 150, 120])),
        "product_model": "data:model/gltf-binary;base64,Z2xURg==",
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

#[tokio::test]
async fn a_busy_sync_try_on_is_not_billed_and_its_idempotency_key_stays_free_for_the_retry() {
    let Setup {
        clock,
        mem: _,
        svc,
        caller,
        request,
    } = setup().await;
    let before = svc.balance(&caller).await.unwrap();

    let (first, replayed) = svc
        .create_idempotent(&caller, Some("order-7"), &request)
        .await
        .unwrap();
    assert!(!replayed);
    assert!(first.is_busy(), "{first:?}");
    assert_eq!(first.result().status, JobStatus::Failed);
    assert!(first.result().cost.is_none());
    assert_eq!(
        svc.balance(&caller).await.unwrap(),
        before,
        "a busy refusal is not billed"
    );

    // The client waits Retry-After (1 s), then retries under the same key: it runs (the
    // refusal was not saved) and succeeds, once.
    clock.advance(std::time::Duration::from_secs(1));
    let (second, replayed) = svc
        .create_idempotent(&caller, Some("order-7"), &request)
        .await
        .unwrap();
    assert!(!replayed, "the busy refusal was replayed instead of run");
    assert_eq!(second.result().status, JobStatus::Success);
    assert_ne!(second.result().request_id, first.result().request_id);
    let (third, replayed) = svc
        .create_idempotent(&caller, Some("order-7"), &request)
        .await
        .unwrap();
    assert!(replayed);
    assert_eq!(third.result().request_id, second.result().request_id);
    let after = svc.balance(&caller).await.unwrap();
    assert_ne!(after, before, "the success was billed");
}

#[tokio::test]
async fn a_retry_taking_over_the_key_of_a_dead_busy_request_does_not_save_the_refusal() {
    let Setup {
        clock,
        mem,
        svc,
        caller,
        request,
    } = setup().await;
    let t0 = clock.now();
    let (first, _) = svc
        .create_idempotent(&caller, Some("order-9"), &request)
        .await
        .unwrap();
    assert!(first.is_busy());
    // As if that request had died after its job was refused and before it freed the key:
    // the key is reserved again at the same instant, so it points at the refused job.
    let fp = idempotency::fingerprint(&request);
    assert_eq!(
        mem.backends
            .idempotency
            .begin(&caller.account_id, "order-9", &fp, t0)
            .await
            .unwrap(),
        idempotency::Begin::New
    );
    clock.advance(idempotency::STALE_AFTER + std::time::Duration::from_secs(1));
    // The retry that takes the key over answers with the refused job ...
    let (taken_over, replayed) = svc
        .create_idempotent(&caller, Some("order-9"), &request)
        .await
        .unwrap();
    assert!(replayed);
    assert_eq!(taken_over.result().request_id, first.result().request_id);
    assert!(taken_over.is_busy());
    // ... without saving it: the next retry runs and succeeds.
    clock.advance(std::time::Duration::from_secs(1));
    let (next, replayed) = svc
        .create_idempotent(&caller, Some("order-9"), &request)
        .await
        .unwrap();
    assert!(!replayed, "the refusal was saved and replayed");
    assert_eq!(next.result().status, JobStatus::Success);
}
