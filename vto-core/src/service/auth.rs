//! Authentication and rate limiting: a bearer token to a [`Caller`], and the per-key,
//! per-endpoint limit decision (with the account's own limits when it has some).

use tracing::error;

use crate::error::{ApiError, ErrorCode};
use crate::keys::hash_key;
use crate::ratelimit::{Decision, Endpoint};

use super::{backend, Caller, TryOnService};

impl TryOnService {
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
    /// ([`AccountLimitStore`](crate::AccountLimitStore)) if it has one for this endpoint, else the configured quota.
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
}
