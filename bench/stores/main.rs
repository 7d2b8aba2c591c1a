//! Throughput of the stores on the paths that matter for scale-out, PostgreSQL and SQLite in
//! the same run:
//!
//! - **submit**: what an async `POST /v1/virtual-try-on` with an `Idempotency-Key` writes —
//!   reserve the key, hold the price, insert the queued job, save the response — each step a
//!   durable transaction, `--concurrency` submits at a time;
//! - **status**: `get_summary` point reads of those jobs (the status endpoint);
//! - **limit**: rate-limiter checks (PostgreSQL's shared limiter; the memory one for SQLite).
//!
//! ```text
//! eval "$(scripts/pg.sh start)"
//! cargo run --release -p vto-bench-stores -- [submits] [concurrency] [accounts]
//! ```
//!
//! Defaults: 4000 submits, 32 at a time, over 16 accounts. PostgreSQL runs on a fresh database
//! of the cluster at `VTO_TEST_POSTGRES_URL`; SQLite in a temporary file.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use vto_core::billing::{Account, Ledger};
use vto_core::conformance::sample_job;
use vto_core::idempotency::IdempotencyStore;
use vto_core::ratelimit::{Endpoint, Quota, RateLimiter};
use vto_core::{
    AccountId, Category, Currency, JobStore, MemoryRateLimiter, Money, RequestId, Timestamp,
};
use vto_postgres::{PgOptions, PgRateLimiter, PgStore};

#[derive(Clone)]
struct Stores {
    jobs: Arc<dyn JobStore>,
    ledger: Arc<dyn Ledger>,
    idem: Arc<dyn IdempotencyStore>,
    limiter: Arc<dyn RateLimiter>,
}

struct Args {
    submits: usize,
    concurrency: usize,
    accounts: usize,
}

fn usd(s: &str) -> Money {
    Money::parse(s, Currency::USD).expect("amount")
}

/// Runs `total` operations, `concurrency` at a time; returns operations per second.
async fn rate<F, Fut>(total: usize, concurrency: usize, op: F) -> f64
where
    F: Fn(usize) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let op = Arc::new(op);
    let next = Arc::new(AtomicUsize::new(0));
    let start = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..concurrency {
        let (op, next) = (op.clone(), next.clone());
        tasks.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= total {
                    break;
                }
                op(i).await;
            }
        }));
    }
    for t in tasks {
        t.await.expect("bench task");
    }
    total as f64 / start.elapsed().as_secs_f64()
}

async fn run(name: &str, s: Stores, args: &Args) {
    let accounts: Vec<AccountId> = (0..args.accounts)
        .map(|i| AccountId::from(format!("acct_{i}").as_str()))
        .collect();
    for a in &accounts {
        s.ledger
            .create_account(&Account {
                id: a.clone(),
                name: a.as_str().into(),
                currency: Currency::USD,
                created_at: Timestamp(0),
            })
            .await
            .expect("account");
        s.ledger
            .credit(a, usd("1000000"), "bench", Timestamp(0))
            .await
            .expect("credit");
    }
    let accounts = Arc::new(accounts);
    let submit = {
        let (s, accounts) = (s.clone(), accounts.clone());
        move |i: usize| {
            let (s, accounts) = (s.clone(), accounts.clone());
            async move {
                let a = &accounts[i % accounts.len()];
                let mut job = sample_job(1_000_000 + i as u128, a.as_str(), Category::Shirt, 0);
                job.account_id = a.clone();
                let key = format!("key-{i}");
                let now = Timestamp(1_000 + i as i64);
                s.idem.begin(a, &key, "fp", now).await.expect("begin");
                s.ledger
                    .hold(a, job.id, job.price, now)
                    .await
                    .expect("hold");
                s.jobs.insert(&job).await.expect("insert");
                s.idem.finish(a, &key, "{}").await.expect("finish");
            }
        }
    };
    let submits = rate(args.submits, args.concurrency, submit).await;
    let reads = {
        let s = s.clone();
        let n = args.submits;
        move |i: usize| {
            let s = s.clone();
            async move {
                let id = RequestId(uuid::Uuid::from_u128(1_000_000 + ((i * 7919) % n) as u128));
                let found = s.jobs.get_summary(id).await.expect("summary");
                assert!(found.is_some(), "every submitted job is found");
            }
        }
    };
    let status = rate(args.submits * 5, args.concurrency, reads).await;
    let quota = Quota {
        burst: std::num::NonZeroU32::new(100).expect("non-zero"),
        period_ms: 1000,
    };
    let checks = {
        let s = s.clone();
        move |i: usize| {
            let s = s.clone();
            async move {
                let key = format!("key_{}", i % 64);
                s.limiter
                    .check(&key, Endpoint::GetTryOn, quota, Timestamp(i as i64))
                    .await
                    .expect("check");
            }
        }
    };
    let limits = rate(args.submits * 5, args.concurrency, checks).await;
    println!("{name:<10} submit {submits:>8.0}/s   status {status:>8.0}/s   limit {limits:>8.0}/s");
}

fn arg(n: usize, default: usize) -> usize {
    std::env::args()
        .nth(n)
        .and_then(|a| a.parse().ok())
        .unwrap_or(default)
}

#[tokio::main]
async fn main() {
    let args = Args {
        submits: arg(1, 4000),
        concurrency: arg(2, 32),
        accounts: arg(3, 16).max(1),
    };
    println!(
        "{} submits, {} at a time, {} accounts; status reads and limit checks: 5x that",
        args.submits, args.concurrency, args.accounts
    );
    match std::env::var("VTO_TEST_POSTGRES_URL") {
        Ok(cluster) => {
            let (client, conn) = tokio_postgres::connect(&cluster, tokio_postgres::NoTls)
                .await
                .expect("connect to the cluster");
            tokio::spawn(conn);
            let db = format!("vto_bench_{}", uuid::Uuid::new_v4().simple());
            client
                .batch_execute(&format!("CREATE DATABASE {db}"))
                .await
                .expect("create the bench database");
            let url = match cluster.rsplit_once('/') {
                Some((base, _)) => format!("{base}/{db}"),
                None => panic!("VTO_TEST_POSTGRES_URL has no database name: {cluster}"),
            };
            let store = PgStore::connect(
                &url,
                PgOptions {
                    pool_size: args.concurrency,
                    ..PgOptions::default()
                },
            )
            .await
            .expect("connect");
            let stores = Stores {
                jobs: Arc::new(store.clone()),
                ledger: Arc::new(store.clone()),
                idem: Arc::new(store.clone()),
                limiter: Arc::new(PgRateLimiter::new(store)),
            };
            run("postgres", stores, &args).await;
            // The pools are gone with `stores`; FORCE ends the LISTEN connection too.
            if let Err(e) = client
                .batch_execute(&format!("DROP DATABASE {db} WITH (FORCE)"))
                .await
            {
                eprintln!("could not drop the bench database {db}: {e}");
            }
        }
        Err(_) => println!("postgres   skipped: VTO_TEST_POSTGRES_URL is unset"),
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let sqlite = vto_sqlite::SqliteStore::open(dir.path().join("bench.db"), Default::default())
        .expect("open sqlite");
    let stores = Stores {
        jobs: Arc::new(sqlite.clone()),
        ledger: Arc::new(sqlite.clone()),
        idem: Arc::new(sqlite),
        limiter: Arc::new(MemoryRateLimiter::default()),
    };
    run("sqlite", stores, &args).await;
}
