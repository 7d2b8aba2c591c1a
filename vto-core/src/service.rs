//! [`TryOnService`]: the API's behaviour, built from the pluggable traits.
//!
//! Submit = authenticate → rate limit → validate → engine check → hold → (sync: render now,
//! settle, return the result; async: enqueue, return `queued`). The frontends (HTTP server,
//! CLI, an embedding program) call these methods and only translate in and out.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tracing::{debug, error, info, warn};

use crate::billing::MemoryLedger;
use crate::billing::{HoldStatus, Ledger, LedgerError};
use crate::category::Category;
use crate::clock::{Clock, SystemClock, Timestamp};
use crate::engine::{EngineError, Engines, RenderInput};
use crate::error::{ApiError, ErrorBody, ErrorCode};
use crate::fetch::{FetchLimits, Fetcher, MemoryFetcher};
use crate::idempotency::{Begin, IdempotencyStore, MemoryIdempotencyStore};
use crate::ids::{AccountId, ApiKeyId, IdGen, RandomIds, RequestId};
use crate::job::{Job, JobEvent, JobStatus, TransitionError};
use crate::keys::{hash_key, ApiKeyStore, MemoryKeyStore};
use crate::pricing::PriceTable;
use crate::ratelimit::{
    AccountLimitStore, Decision, Endpoint, MemoryAccountLimits, MemoryRateLimiter, RateLimiter,
    RateLimits,
};
use crate::request::{CreateRequest, RequestLimits};
use crate::result::{ResultList, ResultObject, MAX_LIST_LIMIT};
use crate::results::{MemoryResultStore, ResultStore, ResultStoreError};
use crate::store::{JobQueue, JobStore, MemoryJobStore, StoreError};
use crate::webhook::{MemoryWebhookSender, WebhookEvent, WebhookSender};

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

fn backend(e: impl std::fmt::Display) -> ApiError {
    error!(error = %e, "backend failure");
    ApiError::internal()
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

    /// Resolves a bearer token to a caller: `missing_api_key` without one, `invalid_api_key`
    /// for an unknown or revoked key.
    pub async fn authenticate(&self, token: Option<&str>) -> Result<Caller, ApiError> {
        let token = token
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .ok_or_else(|| {
                ApiError::new(
                    ErrorCode::MissingApiKey,
                    "send your API key as `Authorization: Bearer <API_KEY>`",
                )
            })?;
        let record = self
            .b
            .keys
            .find_by_hash(&hash_key(token))
            .await
            .map_err(backend)?;
        match record {
            Some(r) if r.revoked_at.is_none() => Ok(Caller {
                account_id: r.account_id,
                key_id: r.id,
            }),
            _ => Err(ApiError::new(
                ErrorCode::InvalidApiKey,
                "the API key is not valid or has been revoked",
            )),
        }
    }

    /// Counts a request against the caller's quota on `endpoint`: the account's override
    /// ([`AccountLimitStore`]) if it has one for this endpoint, else the configured quota.
    /// `Ok(None)` means the endpoint is unlimited; a denial is `Err` with code
    /// `rate_limit_exceeded` plus the decision for the `Retry-After` and `RateLimit` headers.
    pub async fn rate_limit(
        &self,
        caller: &Caller,
        endpoint: Endpoint,
    ) -> Result<Option<Decision>, (ApiError, Decision)> {
        let stored = match self.b.limits.limits(&caller.account_id).await {
            Ok(l) => l.and_then(|l| l.get(&endpoint).copied()),
            Err(e) => {
                // The configured quota still applies; the failure is logged.
                error!(error = %e, "reading the account's limits failed; using the defaults");
                None
            }
        };
        let Some(quota) =
            stored.or_else(|| self.config.rate_limits.quota(&caller.account_id, endpoint))
        else {
            return Ok(None);
        };
        let decision = match self
            .b
            .limiter
            .check(caller.key_id.as_str(), endpoint, quota, self.now())
            .await
        {
            Ok(d) => d,
            Err(e) => {
                // Fail open: a broken limiter must not take the API down; it is logged.
                error!(error = %e, "rate limiter failed; allowing the request");
                return Ok(None);
            }
        };
        if decision.allowed {
            Ok(Some(decision))
        } else {
            Err((
                ApiError::new(
                    ErrorCode::RateLimitExceeded,
                    format!(
                        "too many requests; retry after {} s",
                        decision.retry_after_secs()
                    ),
                ),
                decision,
            ))
        }
    }

    /// Creates a try-on. Validates, checks the engine and holds the price before any work.
    pub async fn create(&self, caller: &Caller, body: &CreateRequest) -> Result<Created, ApiError> {
        self.create_as(caller, body, self.b.ids.request_id()).await
    }

    /// [`TryOnService::create`] with the request id given (derived from the idempotency key
    /// for an idempotent create).
    async fn create_as(
        &self,
        caller: &Caller,
        body: &CreateRequest,
        id: RequestId,
    ) -> Result<Created, ApiError> {
        let req = body.validate(&self.config.request_limits)?;
        if self.engines.get(req.category).is_none() {
            return Err(ApiError::new(
                ErrorCode::EngineUnavailable,
                format!(
                    "no engine is configured for category {} on this server",
                    req.category
                ),
            ));
        }
        let price = self.config.prices.price(req.category);
        let now = self.now();
        self.b
            .ledger
            .hold(&caller.account_id, id, price, now)
            .await
            .map_err(|e| match e {
                LedgerError::InsufficientBalance {
                    required,
                    available,
                } => ApiError::new(
                    ErrorCode::InsufficientBalance,
                    format!("this request costs {required}; the account has {available} available"),
                ),
                other => backend(other),
            })?;
        let category = req.category;
        let deadline = self.config.job_deadline.map(|d| now.plus(d));
        let mut job = Job::new(id, caller.account_id.clone(), req, price, now, deadline);
        if category.is_sync() {
            // Recorded as processing before it is stored, so no worker can claim it.
            job.apply(
                &JobEvent::Claim {
                    lease_until: now.plus(self.config.lease),
                },
                now,
            )
            .map_err(backend)?;
        }
        if let Err(e) = self.b.jobs.insert(&job).await {
            // Nothing half-written: undo the hold.
            if let Err(r) = self.b.ledger.release(id, now).await {
                error!(request_id = %id, error = %r, "could not release hold after insert failure");
            }
            return Err(backend(e));
        }
        info!(request_id = %id, category = %category, "try-on created");
        if category.is_sync() {
            let done = self.process(job).await.map_err(backend)?;
            Ok(Created::Finished(self.result_object(&done).await?))
        } else {
            Ok(Created::Accepted(self.result_object(&job).await?))
        }
    }

    /// [`TryOnService::create`] under an `Idempotency-Key` (Stripe's semantics, see
    /// [`crate::idempotency`]). Returns the response and whether it is a replay.
    pub async fn create_idempotent(
        &self,
        caller: &Caller,
        key: Option<&str>,
        body: &CreateRequest,
    ) -> Result<(Created, bool), ApiError> {
        let Some(key) = key else {
            return self.create(caller, body).await.map(|c| (c, false));
        };
        if !crate::idempotency::valid_key(key) {
            let mut e = ApiError::new(
                ErrorCode::InvalidRequest,
                "Idempotency-Key must be 1 to 255 printable ASCII characters",
            );
            e.param = Some("Idempotency-Key".into());
            return Err(e);
        }
        let store = &self.b.idempotency;
        let fp = crate::idempotency::fingerprint(body);
        let reserved_at = self.now();
        let mut id = crate::idempotency::request_id_for(&caller.account_id, key, reserved_at);
        match store
            .begin(&caller.account_id, key, &fp, reserved_at)
            .await
            .map_err(backend)?
        {
            Begin::New => {}
            Begin::Resume { reserved_at } => {
                // The request that reserved the key died before saving its response. Its job,
                // if it got that far, has this id: answer with it. Otherwise make it now,
                // after freeing a hold it may have left without a job.
                id = crate::idempotency::request_id_for(&caller.account_id, key, reserved_at);
                if let Some(job) = self.b.jobs.get(id).await.map_err(backend)? {
                    let object = self.result_object(&job).await?;
                    let created = if job.category.is_sync() && job.status.is_terminal() {
                        Created::Finished(object)
                    } else {
                        Created::Accepted(object)
                    };
                    let saved = serde_json::to_string(&created).map_err(backend)?;
                    store
                        .finish(&caller.account_id, key, &saved)
                        .await
                        .map_err(backend)?;
                    warn!(request_id = %id, "idempotency key taken over from a request that died; answered with its job");
                    return Ok((created, true));
                }
                // An open hold it left is reused (a hold is idempotent per request id). One
                // that maintenance already gave back cannot carry a job: start over under a
                // fresh reservation, so a fresh id.
                let settled = self
                    .b
                    .ledger
                    .get_hold(id)
                    .await
                    .map_err(backend)?
                    .is_some_and(|h| h.status != crate::billing::HoldStatus::Open);
                if settled {
                    store
                        .abandon(&caller.account_id, key)
                        .await
                        .map_err(backend)?;
                    let now = self.now();
                    match store
                        .begin(&caller.account_id, key, &fp, now)
                        .await
                        .map_err(backend)?
                    {
                        Begin::New => {
                            id = crate::idempotency::request_id_for(&caller.account_id, key, now)
                        }
                        _ => {
                            return Err(ApiError::new(
                                ErrorCode::IdempotencyConflict,
                                "a request with this Idempotency-Key is still being processed; retry later",
                            ))
                        }
                    }
                }
                debug!(request_id = %id, "idempotency key taken over from a request that died");
            }
            Begin::Replay(saved) => {
                let created: Created = serde_json::from_str(&saved).map_err(backend)?;
                return Ok((created, true));
            }
            Begin::Conflict => {
                return Err(ApiError::new(
                    ErrorCode::IdempotencyConflict,
                    "this Idempotency-Key was used with a different request body",
                ))
            }
            Begin::InProgress => {
                return Err(ApiError::new(
                    ErrorCode::IdempotencyConflict,
                    "a request with this Idempotency-Key is still being processed; retry later",
                ))
            }
        }
        match self.create_as(caller, body, id).await {
            Ok(created) => {
                let saved = serde_json::to_string(&created).map_err(backend)?;
                store
                    .finish(&caller.account_id, key, &saved)
                    .await
                    .map_err(backend)?;
                Ok((created, false))
            }
            Err(e) => {
                // Nothing started (validation, balance, engine): the key stays free to reuse.
                if let Err(a) = store.abandon(&caller.account_id, key).await {
                    error!(error = %a, "could not free an idempotency key");
                }
                Err(e)
            }
        }
    }

    /// The caller's job as a result object; another account's id is `not_found` too.
    pub async fn get(&self, caller: &Caller, request_id: &str) -> Result<ResultObject, ApiError> {
        let not_found = || not_found(request_id);
        let id: RequestId = request_id.parse().map_err(|_| not_found())?;
        // The summary, not the job: a status read never loads the inputs.
        match self.b.jobs.get_summary(id).await.map_err(backend)? {
            Some(job) if job.account_id == caller.account_id => {
                let url = self
                    .image_url(job.result_key.as_deref())
                    .await
                    .map_err(backend)?;
                Ok(ResultObject::from_summary(&job, url))
            }
            _ => Err(not_found()),
        }
    }

    /// The caller's account's most recent try-ons, newest first: at most `limit` (1–100;
    /// out-of-range values answer `invalid_request` with `param: "limit"`), optionally only
    /// those in `status`. `has_more` says whether older ones exist.
    pub async fn list(
        &self,
        caller: &Caller,
        limit: usize,
        status: Option<JobStatus>,
    ) -> Result<ResultList, ApiError> {
        if !(1..=MAX_LIST_LIMIT).contains(&limit) {
            let mut e = ApiError::new(
                ErrorCode::InvalidRequest,
                format!("limit must be between 1 and {MAX_LIST_LIMIT}"),
            );
            e.param = Some("limit".into());
            return Err(e);
        }
        let mut jobs = self
            .b
            .jobs
            .list(&crate::store::JobFilter {
                account_id: Some(caller.account_id.clone()),
                status,
                limit: limit + 1,
            })
            .await
            .map_err(backend)?;
        let has_more = jobs.len() > limit;
        jobs.truncate(limit);
        let mut data = Vec::with_capacity(jobs.len());
        for job in &jobs {
            data.push(self.result_object(job).await?);
        }
        Ok(ResultList {
            object: "list".into(),
            data,
            has_more,
        })
    }

    async fn find(&self, caller: &Caller, request_id: &str) -> Result<Job, ApiError> {
        let not_found = || not_found(request_id);
        let id: RequestId = request_id.parse().map_err(|_| not_found())?;
        match self.b.jobs.get(id).await.map_err(backend)? {
            Some(job) if job.account_id == caller.account_id => Ok(job),
            _ => Err(not_found()),
        }
    }

    /// Cancels a queued or processing job: `canceled`, hold released, webhook sent. A finished
    /// job answers `not_cancelable`; canceling a canceled job returns it unchanged.
    pub async fn cancel(
        &self,
        caller: &Caller,
        request_id: &str,
    ) -> Result<ResultObject, ApiError> {
        let job = self.find(caller, request_id).await?;
        if job.status == JobStatus::Canceled {
            return self.result_object(&job).await;
        }
        match self
            .b
            .jobs
            .apply(job.id, &JobEvent::Cancel, self.now())
            .await
        {
            Ok(done) => {
                self.finish(&done).await.map_err(backend)?;
                self.result_object(&done).await
            }
            Err(StoreError::Transition(_)) => Err(ApiError::new(
                ErrorCode::NotCancelable,
                format!(
                    "the request has already finished with status {}",
                    job.status
                ),
            )),
            Err(e) => Err(backend(e)),
        }
    }

    /// The result object of a job, with a fresh image URL on success. A result store that
    /// cannot sign the URL is a backend failure (logged, opaque `internal_error`).
    pub async fn result_object(&self, job: &Job) -> Result<ResultObject, ApiError> {
        let url = self
            .image_url(job.result_key.as_deref())
            .await
            .map_err(backend)?;
        Ok(ResultObject::from_job(job, url))
    }

    /// A fresh URL for a result key, if there is one.
    async fn image_url(&self, key: Option<&str>) -> Result<Option<String>, ResultStoreError> {
        match key {
            Some(k) => self.b.results.url(k, self.now()).await.map(Some),
            None => Ok(None),
        }
    }

    /// Claims and processes one queued job; `None` when the queue is empty.
    pub async fn work_one(&self) -> Result<Option<RequestId>, StoreError> {
        let Some(job) = self.b.queue.claim(self.now(), self.config.lease).await? else {
            return Ok(None);
        };
        let id = job.id;
        self.process(job).await?;
        Ok(Some(id))
    }

    /// Renders a claimed (processing) job and settles it. A stale worker's outcome is dropped.
    async fn process(&self, job: Job) -> Result<Job, StoreError> {
        let started = Instant::now();
        let outcome = match job.deadline {
            Some(deadline) => {
                let left = Duration::from_millis(deadline.since(self.now()));
                match tokio::time::timeout(left, self.render(&job)).await {
                    Ok(r) => r,
                    Err(_) => {
                        return self
                            .apply_and_finish(job.id, &JobEvent::DeadlinePassed)
                            .await;
                    }
                }
            }
            None => self.render(&job).await,
        };
        let event = match outcome {
            Ok(result_key) => JobEvent::Complete {
                attempt: job.attempt,
                result_key,
                processing_time_ms: started.elapsed().as_millis() as u64,
            },
            Err(error) => JobEvent::Fail {
                attempt: Some(job.attempt),
                error,
            },
        };
        match self.apply_and_finish(job.id, &event).await {
            Err(StoreError::Transition(e)) => {
                // Another attempt owns the job now (our lease expired), or it was canceled.
                warn!(request_id = %job.id, error = %e, "outcome of a stale attempt dropped");
                self.b
                    .jobs
                    .get(job.id)
                    .await?
                    .ok_or(StoreError::NotFound(job.id))
            }
            other => other,
        }
    }

    /// Fetches the inputs, runs the engine and stores the image; returns the result key.
    async fn render(&self, job: &Job) -> Result<String, ErrorBody> {
        let limits = &self.config.fetch_limits;
        let fetch = |input| async move {
            self.b
                .fetcher
                .fetch(input, limits)
                .await
                .map_err(|e| ErrorBody::new(e.code(), e.to_string()))
        };
        let person = fetch(&job.request.person_image).await?;
        let product = fetch(&job.request.product).await?;
        let engine = self.engines.get(job.category).ok_or_else(|| {
            ErrorBody::new(
                ErrorCode::ProcessingFailed,
                format!("no engine for category {}", job.category),
            )
        })?;
        let rendered = engine
            .render(RenderInput {
                request_id: job.id,
                category: job.category,
                person: &person,
                product: &product,
            })
            .await
            .map_err(|e| match e {
                EngineError::Rejected { code, message } => ErrorBody::new(code, message),
                EngineError::Internal(detail) => {
                    error!(request_id = %job.id, engine = engine.name(), %detail, "engine failed");
                    ErrorBody::new(
                        ErrorCode::ProcessingFailed,
                        "the try-on could not be generated",
                    )
                }
            })?;
        self.b
            .results
            .put(job.id, &rendered.image, &rendered.content_type)
            .await
            .map_err(|e| {
                error!(request_id = %job.id, error = %e, "result store failed");
                ErrorBody::new(
                    ErrorCode::ProcessingFailed,
                    "the result could not be stored",
                )
            })
    }

    async fn apply_and_finish(&self, id: RequestId, event: &JobEvent) -> Result<Job, StoreError> {
        let job = self.b.jobs.apply(id, event, self.now()).await?;
        self.finish(&job).await?;
        Ok(job)
    }

    /// After a terminal transition: hand the webhook over, then capture or release the hold.
    ///
    /// The order matters for crash safety: an open hold on a finished job is what
    /// [`TryOnService::maintain`] looks for, and it calls this again, so a crash anywhere after
    /// the transition still ends with the hold settled and the webhook handed over (the outbox
    /// keeps one delivery per request id).
    async fn finish(&self, job: &Job) -> Result<(), StoreError> {
        let now = self.now();
        if let (false, Some(url)) = (job.category.is_sync(), &job.request.webhook_url) {
            let image_url = match self.image_url(job.result_key.as_deref()).await {
                Ok(u) => u,
                Err(e) => {
                    error!(request_id = %job.id, error = %e, "no result URL for the webhook");
                    // As for a failed hand-over: the open hold makes maintenance retry.
                    return Ok(());
                }
            };
            let event = WebhookEvent {
                account_id: job.account_id.clone(),
                url: url.clone(),
                payload: ResultObject::from_job(job, image_url),
                at: now,
            };
            if let Err(e) = self.b.webhooks.send(event).await {
                error!(request_id = %job.id, error = %e, "webhook hand-over failed");
                // Leave the hold open so that maintenance retries the hand-over.
                return Ok(());
            }
        }
        let settled = match job.status {
            JobStatus::Success => self.b.ledger.capture(job.id, now).await,
            JobStatus::Failed | JobStatus::Canceled => self.b.ledger.release(job.id, now).await,
            _ => return Ok(()),
        };
        if let Err(e) = settled {
            // The job's outcome stands; reconciliation settles the hold later.
            error!(request_id = %job.id, error = %e, "settling the hold failed");
        }
        info!(request_id = %job.id, status = %job.status, "try-on finished");
        Ok(())
    }

    /// Re-queues jobs whose worker died, fails jobs past their deadline or out of attempts,
    /// and settles holds left open by a crash (capture for `success`, release otherwise).
    pub async fn maintain(&self) -> Result<Maintenance, StoreError> {
        let mut m = Maintenance::default();
        let now = self.now();
        for id in self.b.queue.past_deadline(now).await? {
            match self.apply_and_finish(id, &JobEvent::DeadlinePassed).await {
                Ok(_) => m.timed_out += 1,
                Err(StoreError::Transition(_)) => {}
                Err(e) => return Err(e),
            }
        }
        for id in self.b.queue.expired_leases(now).await? {
            let Some(job) = self.b.jobs.get(id).await? else {
                continue;
            };
            let result = if job.attempt >= self.config.max_attempts {
                let error = ErrorBody::new(
                    ErrorCode::ProcessingFailed,
                    format!("processing was interrupted {} times", job.attempt),
                );
                self.apply_and_finish(
                    id,
                    &JobEvent::Fail {
                        attempt: Some(job.attempt),
                        error,
                    },
                )
                .await
                .map(|_| m.abandoned += 1)
            } else {
                self.b
                    .jobs
                    .apply(id, &JobEvent::LeaseExpired, now)
                    .await
                    .map(|_| m.requeued += 1)
            };
            match result {
                Ok(())
                | Err(StoreError::Transition(TransitionError::Illegal { .. }))
                | Err(StoreError::Transition(TransitionError::StaleAttempt { .. })) => {}
                Err(e) => return Err(e),
            }
        }
        m.reconciled = self.reconcile_holds(now).await?;
        let cutoff = Timestamp(now.millis() - crate::idempotency::RETENTION.as_millis() as i64);
        if let Err(e) = self.b.idempotency.purge_before(cutoff).await {
            warn!(error = %e, "purging idempotency keys failed");
        }
        Ok(m)
    }

    async fn reconcile_holds(&self, now: Timestamp) -> Result<usize, StoreError> {
        let holds = self
            .b
            .ledger
            .open_holds()
            .await
            .map_err(|e| StoreError::Backend(e.to_string()))?;
        let mut n = 0;
        let grace = self.config.orphan_hold_grace.as_millis() as u64;
        for hold in holds {
            debug_assert_eq!(hold.status, HoldStatus::Open);
            // Open holds of jobs still in flight are normal; only a hold older than the grace
            // period can be a crash's leftover. Holds come oldest first, so stop at the first
            // young one: a queue backlog must not cost a job read per queued job every pass.
            if now.since(hold.created_at) <= grace {
                break;
            }
            match self.b.jobs.get(hold.request_id).await? {
                // A crash between a job's end and its settlement: finish it again (webhook
                // hand-over, then capture or release).
                Some(job) if job.status.is_terminal() => {
                    self.finish(&job).await?;
                    n += 1;
                }
                Some(_) => {}
                // A hold whose job was never written.
                None => match self.b.ledger.release(hold.request_id, now).await {
                    Ok(_) => n += 1,
                    Err(e) => warn!(request_id = %hold.request_id, error = %e, "reconcile failed"),
                },
            }
        }
        Ok(n)
    }

    /// Runs `concurrency` workers and a maintenance loop until `shutdown` turns true. Workers
    /// finish the job in hand before they stop.
    pub async fn run_workers(
        &self,
        concurrency: usize,
        poll: Duration,
        mut shutdown: tokio::sync::watch::Receiver<bool>,
    ) {
        let mut tasks = tokio::task::JoinSet::new();
        for _ in 0..concurrency.max(1) {
            let svc = self.clone();
            let mut stop = shutdown.clone();
            tasks.spawn(async move {
                while !*stop.borrow() {
                    match svc.work_one().await {
                        Ok(Some(_)) => continue,
                        Ok(None) => {}
                        Err(e) => error!(error = %e, "worker step failed"),
                    }
                    tokio::select! {
                        _ = svc.b.queue.wait_for_work(poll) => {}
                        _ = stop.changed() => {}
                    }
                }
            });
        }
        let svc = self.clone();
        let mut stop = shutdown.clone();
        tasks.spawn(async move {
            while !*stop.borrow() {
                if let Err(e) = svc.maintain().await {
                    error!(error = %e, "maintenance failed");
                }
                tokio::select! {
                    _ = tokio::time::sleep(poll.max(Duration::from_millis(500))) => {}
                    _ = stop.changed() => {}
                }
            }
        });
        let _ = shutdown.changed().await;
        while tasks.join_next().await.is_some() {}
    }

    /// Whether the category has an engine here.
    pub fn supports(&self, category: Category) -> bool {
        self.engines.get(category).is_some()
    }
}

/// Administration: accounts, funds and keys. Used by the CLI and by embedders.
impl TryOnService {
    /// Creates an account in the price table's currency.
    pub async fn create_account(&self, name: &str) -> Result<crate::billing::Account, LedgerError> {
        let account = crate::billing::Account {
            id: self.b.ids.account_id(),
            name: name.to_string(),
            currency: self.config.prices.currency(),
            created_at: self.now(),
        };
        self.b.ledger.create_account(&account).await?;
        Ok(account)
    }

    /// Adds funds to an account.
    pub async fn add_funds(
        &self,
        account: &AccountId,
        amount: rust_decimal::Decimal,
        memo: &str,
    ) -> Result<crate::billing::Balance, LedgerError> {
        let money = crate::money::Money::new(amount, self.config.prices.currency());
        self.b.ledger.credit(account, money, memo, self.now()).await
    }

    /// Creates an API key for an account; the secret is in the returned value only.
    pub async fn create_api_key(
        &self,
        account: &AccountId,
        name: &str,
    ) -> Result<crate::keys::NewApiKey, ApiError> {
        if self
            .b
            .ledger
            .account(account)
            .await
            .map_err(backend)?
            .is_none()
        {
            return Err(ApiError::new(
                ErrorCode::NotFound,
                format!("no account {account}"),
            ));
        }
        let key = crate::keys::generate_key(self.b.ids.as_ref(), account, name, self.now());
        self.b.keys.insert(&key.record).await.map_err(backend)?;
        Ok(key)
    }

    /// The caller's balance.
    pub async fn balance(&self, caller: &Caller) -> Result<crate::billing::Balance, ApiError> {
        self.b
            .ledger
            .balance(&caller.account_id)
            .await
            .map_err(backend)
    }
}

/// The `404 not_found` of a request id that is malformed, unknown, or another account's.
fn not_found(request_id: &str) -> ApiError {
    ApiError::new(
        ErrorCode::NotFound,
        format!("no try-on request with id {request_id:?}"),
    )
}
