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
            options: Default::default(),
        },
        usd("0.15"),
        at(created_ms),
        Some(at(created_ms + 600_000)),
    )
}

mod idempotency;
mod jobs;
mod keys;
mod ledger;
mod limits;
mod outbox;
mod secrets;

pub use idempotency::idempotency_store;
pub use jobs::{job_queue_concurrency, job_store};
pub use keys::{account_limit_store, api_key_store, key_revocation_generation};
pub use ledger::{ledger, ledger_concurrency};
pub use limits::rate_limiter;
pub use outbox::outbox;
pub use secrets::webhook_secrets;

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
