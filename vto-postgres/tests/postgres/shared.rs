//! Every conformance suite on PostgreSQL, and what several instances on one database must get
//! right: claims, captures, migrations, secrets and rate limits across pools, and wake-ups.

use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

use rust_decimal::Decimal;
use vto_core::billing::{Account, EntryKind, Ledger, Settlement};
use vto_core::conformance;
use vto_core::ratelimit::{Endpoint, Quota, RateLimiter};
use vto_core::{
    AccountId, Category, Currency, JobQueue, JobStore, MemoryRateLimiter, Money, RandomIds,
    RequestId, StorageHealth, Timestamp,
};
use vto_postgres::{PgOptions, PgRateLimiter, PgStore, PgWebhookSecrets, MIGRATIONS};

use crate::common::{cluster_url, fresh_database, fresh_store, options};

/// Runs a conformance suite on fresh stores, or returns when there is no cluster.
macro_rules! conforms {
    ($name:ident, $($suite:ident),+) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $name() {
            let Some(cluster) = cluster_url() else { return };
            $(conformance::$suite(|| fresh_store(&cluster)).await;)+
        }
    };
}

conforms!(job_store_conforms, job_store, job_queue_concurrency);
conforms!(ledger_conforms, ledger, ledger_concurrency);
conforms!(key_store_conforms, api_key_store, key_revocation_generation);
conforms!(account_limits_conform, account_limit_store);
conforms!(outbox_conforms, outbox);
conforms!(idempotency_store_conforms, idempotency_store);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limiter_conforms() {
    let Some(cluster) = cluster_url() else { return };
    conformance::rate_limiter(|| async { PgRateLimiter::new(fresh_store(&cluster).await) }).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_secrets_conform() {
    let Some(cluster) = cluster_url() else { return };
    conformance::webhook_secrets(|| async {
        PgWebhookSecrets::new(fresh_store(&cluster).await, Arc::new(RandomIds))
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_secrets_are_shared_between_instances() {
    let Some(cluster) = cluster_url() else { return };
    let url = fresh_database(&cluster).await;
    let one = PgStore::connect(&url, options()).await.expect("connect");
    let two = PgStore::connect(&url, options()).await.expect("connect");
    let (one, two) = (
        PgWebhookSecrets::new(one, Arc::new(RandomIds)),
        PgWebhookSecrets::new(two, Arc::new(RandomIds)),
    );
    use vto_core::outbox::WebhookSecrets;
    let a = AccountId::from("acct_a");
    let created = one.secret(&a).await.expect("secret");
    assert_eq!(two.secret(&a).await.expect("secret"), created);
    let rotated = two.rotate(&a).await.expect("rotate");
    assert_eq!(one.secret(&a).await.expect("secret"), rotated);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_never_claim_the_same_job() {
    let Some(cluster) = cluster_url() else { return };
    let url = fresh_database(&cluster).await;
    let stores = [
        PgStore::connect(&url, options()).await.expect("connect"),
        PgStore::connect(&url, options()).await.expect("connect"),
    ];
    for n in 0..80u128 {
        let job = conformance::sample_job(500 + n, "acct_a", Category::Tshirt, n as i64);
        stores[(n % 2) as usize].insert(&job).await.expect("insert");
    }
    let mut tasks = Vec::new();
    for w in 0..8 {
        let s = stores[w % 2].clone();
        tasks.push(tokio::spawn(async move {
            let mut got = Vec::new();
            while let Some(j) = s
                .claim(Timestamp(1_000_000), Duration::from_secs(60))
                .await
                .expect("claim")
            {
                assert_eq!(j.attempt, 1);
                got.push(j.id);
            }
            got
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.expect("worker"));
    }
    all.sort();
    let claimed = all.len();
    all.dedup();
    assert_eq!(claimed, 80, "every job claimed");
    assert_eq!(all.len(), 80, "no job claimed twice");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn racing_captures_across_instances_charge_once() {
    let Some(cluster) = cluster_url() else { return };
    let url = fresh_database(&cluster).await;
    let one = PgStore::connect(&url, options()).await.expect("connect");
    let two = PgStore::connect(&url, options()).await.expect("connect");
    let a = AccountId::from("acct_pay");
    one.create_account(&Account {
        id: a.clone(),
        name: "Pay".into(),
        currency: Currency::USD,
        created_at: Timestamp(0),
    })
    .await
    .expect("account");
    let usd = |s: &str| Money::parse(s, Currency::USD).expect("money");
    one.credit(&a, usd("5.00"), "top-up", Timestamp(1))
        .await
        .expect("credit");
    let mut captured = 0;
    for n in 0..10u128 {
        let r = RequestId(uuid::Uuid::from_u128(9_000 + n));
        one.hold(&a, r, usd("0.25"), Timestamp(2))
            .await
            .expect("hold");
        let mut tasks = Vec::new();
        for k in 0..6 {
            let s = if k % 2 == 0 { one.clone() } else { two.clone() };
            tasks.push(tokio::spawn(async move {
                s.capture(r, Timestamp(3)).await.expect("capture")
            }));
        }
        let mut outcomes = Vec::new();
        for t in tasks {
            outcomes.push(t.await.expect("task"));
        }
        let now = outcomes
            .iter()
            .filter(|o| **o == Settlement::Captured)
            .count();
        assert_eq!(now, 1, "one capture charges: {outcomes:?}");
        assert!(outcomes
            .iter()
            .all(|o| matches!(o, Settlement::Captured | Settlement::AlreadyCaptured)));
        captured += now;
    }
    let b = two.balance(&a).await.expect("balance");
    assert_eq!(b.balance, Decimal::new(250, 2), "5.00 - 10 x 0.25");
    assert_eq!(b.held, Decimal::ZERO);
    let entries = one.entries(&a).await.expect("entries");
    let captures = entries
        .iter()
        .filter(|e| e.kind == EntryKind::Capture)
        .count();
    assert_eq!((captured, captures), (10, 10));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_instances_starting_together_migrate_once() {
    let Some(cluster) = cluster_url() else { return };
    let url = fresh_database(&cluster).await;
    let mut starts = Vec::new();
    for _ in 0..4 {
        let url = url.clone();
        starts.push(tokio::spawn(async move {
            PgStore::connect(&url, options()).await
        }));
    }
    let mut stores = Vec::new();
    for s in starts {
        stores.push(s.await.expect("task").expect("every instance starts"));
    }
    let want: Vec<i64> = MIGRATIONS.iter().map(|m| m.0).collect();
    for s in &stores {
        assert_eq!(s.migrations().await.expect("migrations"), want);
    }
    // The schema works: one instance writes, another reads.
    let job = conformance::sample_job(1, "acct_a", Category::Shirt, 0);
    stores[0].insert(&job).await.expect("insert");
    assert_eq!(stores[3].get(job.id).await.expect("get"), Some(job));
    // A later start finds nothing to do; readiness reports the same, and the description
    // shows where, never who (a password in the URL stays out of logs and /readyz).
    let with_password = url.replacen("postgres://postgres@", "postgres://postgres:s3cret@", 1);
    assert_ne!(with_password, url, "the test URL names a user");
    let again = PgStore::connect(&with_password, options())
        .await
        .expect("restart");
    assert_eq!(
        StorageHealth::migrations(&again).await.expect("ready"),
        want
    );
    let shown = StorageHealth::describe(&again);
    assert!(
        shown.starts_with("postgres://") && shown.ends_with(url.rsplit('/').next().unwrap_or("?")),
        "{shown}"
    );
    assert!(!shown.contains("s3cret") && !shown.contains('@'), "{shown}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notify_wakes_an_idle_worker_in_another_instance() {
    let Some(cluster) = cluster_url() else { return };
    let url = fresh_database(&cluster).await;
    let worker = PgStore::connect(&url, options()).await.expect("connect");
    let api = PgStore::connect(&url, options()).await.expect("connect");
    // The worker waits up to 10 minutes; only a notification can end the wait within 30 s.
    let waiting = {
        let worker = worker.clone();
        tokio::spawn(async move { worker.wait_for_work(Duration::from_secs(600)).await })
    };
    // Let the waiter register before the job is queued.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!waiting.is_finished(), "nothing queued yet");
    let job = conformance::sample_job(7, "acct_a", Category::Shirt, 0);
    api.insert(&job).await.expect("insert");
    tokio::time::timeout(Duration::from_secs(30), waiting)
        .await
        .expect("the NOTIFY of the insert woke the worker")
        .expect("waiter");
    let claimed = worker
        .claim(Timestamp(1_000), Duration::from_secs(30))
        .await
        .expect("claim")
        .expect("the queued job");
    assert_eq!(claimed.id, job.id);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn polling_finds_work_with_listen_notify_off() {
    let Some(cluster) = cluster_url() else { return };
    let url = fresh_database(&cluster).await;
    let off = PgOptions {
        listen_notify: false,
        ..options()
    };
    let worker = PgStore::connect(&url, off.clone()).await.expect("connect");
    let api = PgStore::connect(&url, off).await.expect("connect");
    let job = conformance::sample_job(8, "acct_a", Category::Shirt, 0);
    let producer = {
        let job = job.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(200)).await;
            api.insert(&job).await.expect("insert");
        })
    };
    // The worker loop of TryOnService::run_workers: claim, else wait (here: poll).
    let mut found = None;
    for _ in 0..300 {
        if let Some(j) = worker
            .claim(Timestamp(1_000), Duration::from_secs(30))
            .await
            .expect("claim")
        {
            found = Some(j.id);
            break;
        }
        worker.wait_for_work(Duration::from_millis(50)).await;
    }
    producer.await.expect("producer");
    assert_eq!(found, Some(job.id), "a polling worker claims the job");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_limiter_shared_by_two_instances_denies_as_one_does() {
    let Some(cluster) = cluster_url() else { return };
    let url = fresh_database(&cluster).await;
    let one = PgRateLimiter::new(PgStore::connect(&url, options()).await.expect("connect"));
    let two = PgRateLimiter::new(PgStore::connect(&url, options()).await.expect("connect"));
    let quota = Quota {
        burst: NonZeroU32::new(12).expect("non-zero"),
        period_ms: 60_000,
    };
    // 60 requests at each of three instants, half through each instance, all concurrent.
    let mut shared_denials = 0;
    let memory = MemoryRateLimiter::default();
    let mut memory_denials = 0;
    for t in [0i64, 10_000, 25_000] {
        let mut tasks = Vec::new();
        for n in 0..60 {
            let l = if n % 2 == 0 { one.clone() } else { two.clone() };
            tasks.push(tokio::spawn(async move {
                l.check("key_1", Endpoint::CreateTryOn, quota, Timestamp(t))
                    .await
                    .expect("check")
                    .allowed
            }));
        }
        for task in tasks {
            shared_denials += usize::from(!task.await.expect("task"));
        }
        for _ in 0..60 {
            memory_denials += usize::from(
                !memory
                    .check("key_1", Endpoint::CreateTryOn, quota, Timestamp(t))
                    .await
                    .expect("check")
                    .allowed,
            );
        }
    }
    // 12 at t=0, 2 refilled by 10 s, 3 more by 25 s: 17 allowed of 180.
    assert_eq!(memory_denials, 180 - 17);
    assert_eq!(shared_denials, memory_denials);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn purging_full_buckets_changes_no_decision() {
    let Some(cluster) = cluster_url() else { return };
    let limiter = PgRateLimiter::new(fresh_store(&cluster).await);
    let memory = MemoryRateLimiter::default();
    let quota = Quota {
        burst: NonZeroU32::new(2).expect("non-zero"),
        period_ms: 1000,
    };
    for key in ["a", "b", "c"] {
        for _ in 0..3 {
            let pg = limiter
                .check(key, Endpoint::Balance, quota, Timestamp(0))
                .await
                .expect("check");
            let mem = memory
                .check(key, Endpoint::Balance, quota, Timestamp(0))
                .await
                .expect("check");
            assert_eq!(pg, mem);
        }
    }
    // Each bucket is full again at t = 1000 (TAT 1000): nothing to purge before.
    assert_eq!(limiter.purge(Timestamp(999)).await.expect("purge"), 0);
    assert_eq!(limiter.purge(Timestamp(1000)).await.expect("purge"), 3);
    for t in [1000, 1001, 1400] {
        let pg = limiter
            .check("a", Endpoint::Balance, quota, Timestamp(t))
            .await
            .expect("check");
        let mem = memory
            .check("a", Endpoint::Balance, quota, Timestamp(t))
            .await
            .expect("check");
        assert_eq!(pg, mem, "at {t}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_listener_reconnects_after_its_connection_is_killed() {
    let Some(cluster) = cluster_url() else { return };
    let url = fresh_database(&cluster).await;
    let worker = PgStore::connect(&url, options()).await.expect("connect");
    let api = PgStore::connect(&url, options()).await.expect("connect");
    let (admin, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .expect("admin connection");
    tokio::spawn(conn);
    let listeners = "SELECT pid FROM pg_stat_activity
                     WHERE datname = current_database() AND query = 'LISTEN vto_jobs'";
    let count =
        |rows: Vec<tokio_postgres::Row>| rows.iter().map(|r| r.get(0)).collect::<Vec<i32>>();
    let idle = count(admin.query(listeners, &[]).await.expect("listeners"));
    assert!(
        idle.is_empty(),
        "a store that has not waited for work (an API instance) does not LISTEN: {idle:?}"
    );
    // The first wait for work opens each store's LISTEN connection.
    worker.wait_for_work(Duration::from_millis(10)).await;
    api.wait_for_work(Duration::from_millis(10)).await;
    let mut before = Vec::new();
    for _ in 0..200 {
        before = count(admin.query(listeners, &[]).await.expect("listeners"));
        if before.len() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        before.len(),
        2,
        "one LISTEN connection per store that waited"
    );
    for pid in &before {
        admin
            .execute("SELECT pg_terminate_backend($1)", &[pid])
            .await
            .expect("terminate");
    }
    // Both stores reconnect (within their backoff, well under this bound).
    let mut after = Vec::new();
    for _ in 0..200 {
        after = admin
            .query(listeners, &[])
            .await
            .expect("listeners")
            .iter()
            .map(|r| r.get::<_, i32>(0))
            .collect();
        // pg_terminate_backend only signals: the old backends linger for a moment.
        if after.len() == 2 && after.iter().all(|p| !before.contains(p)) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(after.len(), 2, "both listeners are back: {after:?}");
    assert!(after.iter().all(|p| !before.contains(p)), "new connections");
    // And a notification wakes the worker again.
    let waiting = {
        let worker = worker.clone();
        tokio::spawn(async move { worker.wait_for_work(Duration::from_secs(600)).await })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    api.insert(&conformance::sample_job(9, "acct_a", Category::Shirt, 0))
        .await
        .expect("insert");
    tokio::time::timeout(Duration::from_secs(30), waiting)
        .await
        .expect("the reconnected listener woke the worker")
        .expect("waiter");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jobs_stored_whole_before_migration_2_are_split_and_read_back() {
    let Some(cluster) = cluster_url() else { return };
    let url = fresh_database(&cluster).await;
    let job = conformance::sample_job(4, "acct_a", Category::Dress, 0);
    let (admin, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .expect("admin connection");
    tokio::spawn(conn);
    // A database as migration 1 left it: the job's request inside its body.
    admin
        .batch_execute(&format!(
            "CREATE TABLE schema_migrations (version BIGINT PRIMARY KEY, name TEXT NOT NULL,
                 applied_at TIMESTAMPTZ NOT NULL DEFAULT now());
             {}
             INSERT INTO schema_migrations (version, name) VALUES (1, 'init');",
            MIGRATIONS[0].2
        ))
        .await
        .expect("version 1");
    let whole = serde_json::to_string(&job).expect("job");
    let summary = serde_json::to_string(&vto_core::JobSummary::from(&job)).expect("summary");
    admin
        .execute(
            "INSERT INTO jobs (id, account_id, status, created_at, body, summary)
             VALUES ($1, 'acct_a', 'queued', 0, $2, $3)",
            &[&job.id.0, &whole, &summary],
        )
        .await
        .expect("a whole job");
    let store = PgStore::connect(&url, options()).await.expect("migrate");
    assert_eq!(store.get(job.id).await.expect("get"), Some(job.clone()));
    let claimed = store
        .claim(Timestamp(1_000), Duration::from_secs(30))
        .await
        .expect("claim")
        .expect("the job");
    assert_eq!(
        claimed.request, job.request,
        "a transition keeps the request"
    );
    let row = admin
        .query_one("SELECT body, request FROM jobs", &[])
        .await
        .expect("row");
    let (body, request): (String, String) = (row.get(0), row.get(1));
    assert!(
        !body.contains("person_image"),
        "the body keeps the state only: {body}"
    );
    assert!(request.contains("person_image"), "{request}");
}
