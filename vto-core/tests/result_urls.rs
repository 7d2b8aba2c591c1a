//! A result store that cannot sign URLs (an object store whose credentials lapsed): reads
//! answer an opaque `internal_error`, and a finished job keeps its hold open, with no webhook,
//! until maintenance can build the result object; then it is billed once and notified once.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::json;
use vto_core::results::ResultStoreError;
use vto_core::testing::EchoEngine;
use vto_core::*;

/// Test double: the memory store, whose `url` fails while `broken` is set.
#[derive(Default)]
struct FlakySigner {
    inner: MemoryResultStore,
    broken: AtomicBool,
}

#[async_trait]
impl ResultStore for FlakySigner {
    async fn put(
        &self,
        request_id: RequestId,
        bytes: &[u8],
        content_type: &str,
    ) -> Result<String, ResultStoreError> {
        self.inner.put(request_id, bytes, content_type).await
    }

    async fn get(&self, key: &str) -> Result<Option<StoredResult>, ResultStoreError> {
        self.inner.get(key).await
    }

    async fn url(&self, key: &str, now: Timestamp) -> Result<String, ResultStoreError> {
        if self.broken.load(Ordering::SeqCst) {
            return Err(ResultStoreError::Backend {
                context: format!("presigning {key}"),
                source: "no credentials".into(),
            });
        }
        self.inner.url(key, now).await
    }
}

#[tokio::test]
async fn an_unsignable_url_keeps_the_hold_open_until_maintenance_can_notify() {
    let clock = Arc::new(FakeClock::default());
    let mut mem = Backends::in_memory_with(clock.clone(), Arc::new(SequentialIds::default()));
    let results = Arc::new(FlakySigner::default());
    mem.backends.results = results.clone();
    let mut engines = Engines::new();
    engines.register(Category::Dress, Arc::new(EchoEngine::new()));
    let svc = TryOnService::new(mem.backends.clone(), engines, ServiceConfig::default());
    let caller = testing::funded_caller(&svc, "1.00".parse().unwrap()).await;
    let request: CreateRequest = serde_json::from_value(json!({
        "category": "dress",
        "person_image": "data:image/png;base64,cGVyc29u",
        "product_image": "data:image/png;base64,ZHJlc3M=",
        "webhook_url": "https://shop.example/hooks/vto",
    }))
    .unwrap();
    let id = svc
        .create(&caller, &request)
        .await
        .unwrap()
        .result()
        .request_id;

    results.broken.store(true, Ordering::SeqCst);
    assert_eq!(svc.work_one().await.unwrap(), Some(id));
    let err = svc.get(&caller, &id.to_string()).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::InternalError);
    assert!(!err.message.contains("no credentials"), "{}", err.message);
    let err = svc.list(&caller, 10, None).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::InternalError);
    assert!(mem.webhooks.sent().is_empty(), "no webhook without a URL");
    let b = svc.balance(&caller).await.unwrap();
    assert_eq!(b.held.to_string(), "0.20", "the hold stays open");
    assert_eq!(b.balance.to_string(), "1.00");

    results.broken.store(false, Ordering::SeqCst);
    clock.advance(Duration::from_secs(301));
    assert_eq!(svc.maintain().await.unwrap().reconciled, 1);
    let sent = mem.webhooks.sent();
    assert_eq!(sent.len(), 1);
    let image = sent[0].payload.result.as_ref().expect("result on success");
    assert_eq!(image.image_url, format!("memory://results/{id}.png"));
    let b = svc.balance(&caller).await.unwrap();
    assert_eq!(
        (b.balance.to_string(), b.held.to_string()),
        ("0.80".into(), "0.00".into())
    );
    assert_eq!(svc.maintain().await.unwrap().reconciled, 0);
    assert_eq!(mem.webhooks.sent().len(), 1);
    let done = svc.get(&caller, &id.to_string()).await.unwrap();
    assert_eq!(done, sent[0].payload);
}
