//! Submitting a try-on: validate, check the engine, hold the price, then render now
//! (synchronous categories) or enqueue; and the idempotent variant that replays a stored
//! answer for a repeated `Idempotency-Key`.

use tracing::{debug, error, info, warn};

use crate::billing::LedgerError;
use crate::error::{ApiError, ErrorCode};
use crate::idempotency::Begin;
use crate::ids::{AccountId, RequestId};
use crate::job::{Job, JobEvent};
use crate::request::CreateRequest;

use super::{backend, Caller, Created, TryOnService};

impl TryOnService {
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
                    if job.category.is_sync() && !job.status.is_terminal() {
                        // A synchronous job its dead request left unfinished (a worker takes
                        // it over once its lease runs out): answered with its state now, but
                        // not saved, so a later retry answers with the finished result
                        // instead of replaying this one forever. Found by scripts/soak.sh.
                        debug!(request_id = %id, status = %job.status, "idempotency key of a dead synchronous request: its job is not finished yet");
                        return Ok((Created::Accepted(object), true));
                    }
                    let created = if job.category.is_sync() {
                        Created::Finished(object)
                    } else {
                        Created::Accepted(object)
                    };
                    if created.is_busy() {
                        // Its job was refused before it ran: answered, and the key freed as
                        // on the normal path, so the next retry runs.
                        store
                            .abandon(&caller.account_id, key)
                            .await
                            .map_err(backend)?;
                        return Ok((created, true));
                    }
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
            Ok(created) if created.is_busy() => {
                // Refused before it started (every renderer busy): as Stripe does for a
                // request that never ran, nothing is saved, so a retry under the same key
                // runs instead of replaying the refusal.
                self.free_key(&caller.account_id, key).await;
                Ok((created, false))
            }
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
                self.free_key(&caller.account_id, key).await;
                Err(e)
            }
        }
    }

    /// Frees an `Idempotency-Key` whose request saved no response; a failure is logged (the
    /// reservation then goes stale and a later retry takes it over).
    async fn free_key(&self, account: &AccountId, key: &str) {
        if let Err(a) = self.b.idempotency.abandon(account, key).await {
            error!(error = %a, "could not free an idempotency key");
        }
    }
}
