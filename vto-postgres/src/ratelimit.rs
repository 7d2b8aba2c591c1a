//! [`PgRateLimiter`]: GCRA shared by every instance, one upsert per check.

use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;

use vto_core::ratelimit::{
    emission_ms, gcra_decision, Decision, Endpoint, Quota, RateLimitError, RateLimiter,
};
use vto_core::Timestamp;

use crate::{col, pg, PgError, PgStore};

/// Every this many checks, one also deletes the rows whose bucket is full again.
const PURGE_EVERY: u64 = 10_000;

/// The GCRA step in SQL, in one statement: a new key starts at `now + T` (always allowed, as
/// `T <= period`); an existing one moves to `max(tat, now) + T` when
/// `max(tat, now) + T - period <= now + 1e-9` (the same float expression as
/// [`vto_core::ratelimit::gcra_allows`]) and otherwise keeps its TAT. The row is written either
/// way, so `RETURNING` reports the outcome and the TAT the decision needs.
const CHECK: &str = "
INSERT INTO rate_limits AS r (key, endpoint, tat, allowed)
VALUES ($1, $2, $3::float8 + $4::float8, true)
ON CONFLICT (key, endpoint) DO UPDATE SET
    allowed = (GREATEST(r.tat, $3::float8) + $4::float8) - $5::float8 <= $3::float8 + 1e-9,
    tat = CASE WHEN (GREATEST(r.tat, $3::float8) + $4::float8) - $5::float8 <= $3::float8 + 1e-9
               THEN GREATEST(r.tat, $3::float8) + $4::float8
               ELSE GREATEST(r.tat, $3::float8) END
RETURNING allowed, tat";

/// A GCRA rate limiter whose state lives in PostgreSQL (an `UNLOGGED` table), so every vto
/// instance on the database counts against the same budget. The caller's clock decides, as
/// with [`vto_core::MemoryRateLimiter`], and the decisions (remaining, reset, retry-after) are
/// the same. After a database crash the table is empty: some requests are forgiven, none lost.
#[derive(Debug, Clone)]
pub struct PgRateLimiter {
    store: PgStore,
    checks: std::sync::Arc<AtomicU64>,
}

impl PgRateLimiter {
    /// A limiter on `store`'s database (its pool and its `rate_limits` table).
    pub fn new(store: PgStore) -> Self {
        Self {
            store,
            checks: Default::default(),
        }
    }

    /// Deletes the state of buckets that are full again at `now` (they decide exactly as a
    /// missing row does); returns how many. Runs by itself every 10 000 checks.
    pub async fn purge(&self, now: Timestamp) -> Result<u64, RateLimitError> {
        let c = self.store.conn().await?;
        let n = c
            .execute(
                "DELETE FROM rate_limits WHERE tat <= $1",
                &[&(now.millis() as f64)],
            )
            .await
            .map_err(pg("purging rate-limit state"))?;
        Ok(n)
    }
}

#[async_trait]
impl RateLimiter for PgRateLimiter {
    async fn check(
        &self,
        key: &str,
        endpoint: Endpoint,
        quota: Quota,
        now: Timestamp,
    ) -> Result<Decision, RateLimitError> {
        if self.checks.fetch_add(1, Ordering::Relaxed) % PURGE_EVERY == PURGE_EVERY - 1 {
            if let Err(e) = self.purge(now).await {
                tracing::warn!(error = %e, "rate-limit purge failed");
            }
        }
        let c = self.store.conn().await?;
        let st = c
            .prepare_cached(CHECK)
            .await
            .map_err(pg("preparing a rate-limit check"))?;
        let now_ms = now.millis() as f64;
        let row = c
            .query_one(
                &st,
                &[
                    &key,
                    &endpoint.as_str(),
                    &now_ms,
                    &emission_ms(quota),
                    &(quota.period_ms as f64),
                ],
            )
            .await
            .map_err(pg("checking a rate limit"))?;
        let allowed: bool = col(&row, 0)?;
        let tat: f64 = col(&row, 1)?;
        if !tat.is_finite() {
            return Err(PgError::msg(format!("corrupt rate-limit state {tat}")).into());
        }
        Ok(gcra_decision(allowed, tat, quota, now))
    }
}
