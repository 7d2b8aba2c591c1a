//! Two vto instances on one PostgreSQL database, the way #16 deploys them: an API instance
//! takes submissions, a worker instance (another pool, its own `LISTEN` connection) renders.
//! The worker's poll interval is ten minutes, so the jobs finish only if the `NOTIFY` of each
//! submit wakes it through `TryOnService::run_workers` → `JobQueue::wait_for_work`.

use std::sync::Arc;
use std::time::Duration;

use rust_decimal::Decimal;
use vto_core::testing::EchoEngine;
use vto_core::{
    Category, CreateRequest, Created, Engines, JobStatus, MemoryResultStore, ServiceConfig,
    TryOnService,
};
use vto_postgres::PgStore;

use crate::common::{backends_on, cluster_url, fresh_database, options};

/// An instance: every record on PostgreSQL, results in a store shared by the test.
async fn instance(url: &str, results: Arc<MemoryResultStore>) -> TryOnService {
    let store = PgStore::connect(url, options()).await.expect("connect");
    let mut b = backends_on(store);
    b.results = results;
    let mut engines = Engines::new();
    for c in Category::ALL {
        engines.register(c, Arc::new(EchoEngine::marked()));
    }
    TryOnService::new(b, engines, ServiceConfig::default())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_worker_instance_is_woken_by_submits_to_an_api_instance() {
    let Some(cluster) = cluster_url() else { return };
    let url = fresh_database(&cluster).await;
    let results = Arc::new(MemoryResultStore::default());
    let api = instance(&url, results.clone()).await;
    let worker = instance(&url, results).await;

    let acct = api.create_account("shop").await.expect("account");
    api.add_funds(&acct.id, "1.00".parse().expect("amount"), "top-up")
        .await
        .expect("funds");
    let key = api.create_api_key(&acct.id, "test").await.expect("key");
    let caller = api.authenticate(Some(&key.secret)).await.expect("auth");

    let (stop, rx) = tokio::sync::watch::channel(false);
    let run = {
        let worker = worker.clone();
        tokio::spawn(async move { worker.run_workers(2, Duration::from_secs(600), rx).await })
    };
    // Let both workers find the queue empty and start waiting.
    tokio::time::sleep(Duration::from_millis(500)).await;

    let body: CreateRequest = serde_json::from_value(serde_json::json!({
        "category": "tshirt",
        "person_image": "data:image/png;base64,cGVyc29u",
        "product_image": "data:image/png;base64,dA==",
    }))
    .expect("request");
    let mut ids = Vec::new();
    for _ in 0..5 {
        match api.create(&caller, &body).await.expect("submit") {
            Created::Accepted(r) => ids.push(r.request_id.to_string()),
            Created::Finished(r) => panic!("tshirt is asynchronous, got {r:?}"),
        }
    }
    // Generous bound: with polling alone nothing would happen for ten minutes.
    let mut statuses = Vec::new();
    for _ in 0..600 {
        statuses.clear();
        for id in &ids {
            statuses.push(api.get(&caller, id).await.expect("status").status);
        }
        if statuses.iter().all(|s| *s == JobStatus::Success) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    stop.send(true).expect("stop");
    run.await.expect("workers");
    assert!(
        statuses.iter().all(|s| *s == JobStatus::Success),
        "the worker instance rendered every job: {statuses:?}"
    );
    let b = api.balance(&caller).await.expect("balance");
    assert_eq!(
        (b.balance, b.held),
        (Decimal::new(25, 2), Decimal::ZERO),
        "five tshirts at 0.15 captured once each"
    );
}
