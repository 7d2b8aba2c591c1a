//! [`TryOnService`]: the API's behaviour, built from the pluggable traits.
//!
//! Submit = authenticate → rate limit → validate → engine check → hold → (sync: render now,
//! settle, return the result; async: enqueue, return `queued`). The frontends (HTTP server,
//! CLI, an embedding program) call these methods and only translate in and out.

mod admin;
mod auth;
mod maintenance;
mod reads;
mod submit;
mod worker;

use std::sync::Arc;
use std::time::Duration;

use tracing::{error, warn};

use crate::billing::{Ledger, MemoryLedger};
use crate::clock::{Clock, SystemClock, Timestamp};
use crate::engine::Engines;
use crate::error::{ApiError, ErrorCode};
use crate::fetch::{FetchLimits, Fetcher, MemoryFetcher};
use crate::idempotency::{IdempotencyStore, MemoryIdempotencyStore};
use crate::ids::{AccountId, ApiKeyId, IdGen, RandomIds};
use crate::keys::{ApiKeyStore, MemoryKeyStore};
use crate::pricing::PriceTable;
use crate::ratelimit::{
    AccountLimitStore, MemoryAccountLimits, MemoryRateLimiter, RateLimiter, RateLimits,
};
use crate::request::RequestLimits;
use crate::result::ResultObject;
use crate::results::{MemoryResultStore, ResultStore};
use crate::store::{JobQueue, JobStore, MemoryJobStore};
use crate::webhook::{MemoryWebhookSender, WebhookSender};

/// Tunables of the service. Every field has a documented default.
#[derive(Debug, Clone)]
pub struct ServiceConfig {
    /// Prices per category (default: the spec's table, USD).
    pub prices: PriceTable,
    /// URL and `data:` size bounds at validation.
    pub request_limits: RequestLimits,
    /// Bounds for fetching inputs.
    pub fetch_limits: FetchLimits,
    /// Quotas per endpoint and per-account overrides.
    pub rate_limits: RateLimits,
    /// How long a worker's claim lasts before the job is re-queued (default 120 s).
    pub lease: Duration,
    /// How long an asynchronous job may take from submit before it fails with `timed_out`
    /// (default 15 min; `None` for no deadline).
    pub job_deadline: Option<Duration>,
    /// How many claims a job gets before a lost worker fails it (default 3).
    pub max_attempts: u32,
    /// Reconciliation looks only at holds older than this (a backlog of young holds costs
    /// nothing), settling them by their job's state and releasing those with no job (default 5 min).
    pub orphan_hold_grace: Duration,
}

impl Default for ServiceConfig {
    fn default() -> Self {
        Self {
            prices: PriceTable::default(),
            request_limits: RequestLimits::default(),
            fetch_limits: FetchLimits::default(),
            rate_limits: RateLimits::default(),
            lease: Duration::from_secs(120),
            job_deadline: Some(Duration::from_secs(15 * 60)),
            max_attempts: 3,
            orphan_hold_grace: Duration::from_secs(300),
        }
    }
}

/// The backends the service runs on. [`Backends::in_memory`] gives a complete set.
#[derive(Clone)]
pub struct Backends {
    /// Job records.
    pub jobs: Arc<dyn JobStore>,
    /// The work queue.
    pub queue: Arc<dyn JobQueue>,
    /// Accounts and money.
    pub ledger: Arc<dyn Ledger>,
    /// API keys.
    pub keys: Arc<dyn ApiKeyStore>,
    /// Rate limits.
    pub limiter: Arc<dyn RateLimiter>,
    /// Per-account quota overrides (stored with the account; checked on every limited request).
    pub limits: Arc<dyn AccountLimitStore>,
    /// Result images.
    pub results: Arc<dyn ResultStore>,
    /// Input fetching.
    pub fetcher: Arc<dyn Fetcher>,
    /// Completion webhooks.
    pub webhooks: Arc<dyn WebhookSender>,
    /// Time.
    pub clock: Arc<dyn Clock>,
    /// Ids and secrets.
    pub ids: Arc<dyn IdGen>,
    /// Saved responses for `Idempotency-Key`.
    pub idempotency: Arc<dyn IdempotencyStore>,
}

/// The in-memory backends, with handles to the parts tests and examples look into.
pub struct MemoryBackends {
    /// The set to build a service from.
    pub backends: Backends,
    /// The fetcher, to register URLs.
    pub fetcher: Arc<MemoryFetcher>,
    /// The webhook recorder.
    pub webhooks: Arc<MemoryWebhookSender>,
    /// The result store.
    pub results: Arc<MemoryResultStore>,
}

impl Backends {
    /// Every backend in memory, with the system clock and random ids.
    pub fn in_memory() -> MemoryBackends {
        Self::in_memory_with(Arc::new(SystemClock), Arc::new(RandomIds))
    }

    /// Every backend in memory, with the given clock and ids.
    pub fn in_memory_with(clock: Arc<dyn Clock>, ids: Arc<dyn IdGen>) -> MemoryBackends {
        let jobs = Arc::new(MemoryJobStore::default());
        let fetcher = Arc::new(MemoryFetcher::default());
        let webhooks = Arc::new(MemoryWebhookSender::default());
        let results = Arc::new(MemoryResultStore::default());
        MemoryBackends {
            backends: Backends {
                jobs: jobs.clone(),
                queue: jobs,
                ledger: Arc::new(MemoryLedger::default()),
                keys: Arc::new(MemoryKeyStore::default()),
                limiter: Arc::new(MemoryRateLimiter::default()),
                limits: Arc::new(MemoryAccountLimits::default()),
                results: results.clone(),
                fetcher: fetcher.clone(),
                webhooks: webhooks.clone(),
                clock,
                ids,
                idempotency: Arc::new(MemoryIdempotencyStore::default()),
            },
            fetcher,
            webhooks,
            results,
        }
    }
}

/// Who is calling: the account and key behind a valid bearer token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// The account.
    pub account_id: AccountId,
    /// The key used.
    pub key_id: ApiKeyId,
}

/// What a POST produced.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", content = "result", rename_all = "snake_case")]
pub enum Created {
    /// A synchronous category finished: the result object (success or failed).
    Finished(ResultObject),
    /// An asynchronous job was queued: the `queued` result object.
    Accepted(ResultObject),
}

impl Created {
    /// The result object either way.
    pub fn result(&self) -> &ResultObject {
        match self {
            Created::Finished(r) | Created::Accepted(r) => r,
        }
    }

    /// A synchronous try-on refused because the service was too busy to start it in time
    /// (`service_unavailable`: nothing billed, the client retries later; HTTP 503).
    pub fn is_busy(&self) -> bool {
        matches!(self, Created::Finished(r)
            if r.error.as_ref().is_some_and(|e| e.code == ErrorCode::ServiceUnavailable))
    }
}

/// What one round of maintenance did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Maintenance {
    /// Jobs put back in the queue after a lost lease.
    pub requeued: usize,
    /// Jobs failed after too many lost leases.
    pub abandoned: usize,
    /// Jobs failed with `timed_out`.
    pub timed_out: usize,
    /// Holds captured or released by reconciliation.
    pub reconciled: usize,
}

/// The try-on service.
#[derive(Clone)]
pub struct TryOnService {
    b: Backends,
    engines: Engines,
    config: Arc<ServiceConfig>,
}

impl std::fmt::Debug for TryOnService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TryOnService")
            .field("engines", &self.engines)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// A backend's failure as the API answers it: `503 service_unavailable` when a
/// [`BackendError`](crate::BackendError) in its chain says the backend is unavailable for now
/// (logged as a warning: a database restart is not a bug), else an opaque `500`.
fn backend(e: impl std::error::Error + 'static) -> ApiError {
    if unavailable(&e) {
        warn!(error = %e, "backend unavailable");
        return ApiError::unavailable();
    }
    error!(error = %e, "backend failure");
    ApiError::internal()
}

/// Whether `e` or an error in its source chain is a [`BackendError`](crate::BackendError)
/// marked unavailable.
pub(crate) fn unavailable(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cur = Some(e);
    while let Some(c) = cur {
        if c.downcast_ref::<crate::BackendError>()
            .is_some_and(crate::BackendError::is_unavailable)
        {
            return true;
        }
        cur = c.source();
    }
    false
}

impl TryOnService {
    /// A service over `backends` with `engines`.
    pub fn new(backends: Backends, engines: Engines, config: ServiceConfig) -> Self {
        Self {
            b: backends,
            engines,
            config: Arc::new(config),
        }
    }

    /// The backends.
    pub fn backends(&self) -> &Backends {
        &self.b
    }

    /// The configuration.
    pub fn config(&self) -> &ServiceConfig {
        &self.config
    }

    /// The engines.
    pub fn engines(&self) -> &Engines {
        &self.engines
    }

    /// The clock's now.
    pub fn now(&self) -> Timestamp {
        self.b.clock.now()
    }
}

/// The `404 not_found` of a request id that is malformed, unknown, or another account's.
fn not_found(request_id: &str) -> ApiError {
    ApiError::new(
        ErrorCode::NotFound,
        format!("no try-on request with id {request_id:?}"),
    )
}
