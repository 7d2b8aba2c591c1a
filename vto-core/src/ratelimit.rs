//! Rate limiting per (API key, endpoint) with GCRA, quotas per endpoint and per-account overrides.
//!
//! GCRA (the generic cell rate algorithm) keeps one number per key, the theoretical arrival time
//! (TAT). A quota of `burst` requests per `period` has an emission interval `T = period / burst`;
//! a request at `now` is allowed when `max(TAT, now) + T - period <= now`, and then moves TAT to
//! `max(TAT, now) + T`. That one number gives everything the `RateLimit` headers need: remaining
//! burst, time until the bucket is full again, and when a denied caller may retry.
//!
//! Why not the `governor` crate: governor fixes one quota per limiter, while we pick the quota per
//! call (endpoint default or the account's override), and a decision here must carry remaining,
//! reset and retry-after for the headers, computed from our injected [`Clock`](crate::Clock). The
//! arithmetic is a dozen lines, and the same TAT-per-key state maps onto SQL or Redis backends.

use std::collections::{BTreeMap, HashMap};
use std::num::NonZeroU32;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::backend::BackendError;
use crate::clock::Timestamp;
use crate::ids::AccountId;

/// A rate-limited endpoint. Each has its own budget per key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Endpoint {
    /// `POST /v1/virtual-try-on`.
    CreateTryOn,
    /// `GET /v1/virtual-try-on/{request_id}`.
    GetTryOn,
    /// `POST /v1/virtual-try-on/{request_id}/cancel`.
    CancelTryOn,
    /// `GET /v1/balance`.
    Balance,
}

impl Endpoint {
    /// All endpoints.
    pub const ALL: [Endpoint; 4] = [
        Endpoint::CreateTryOn,
        Endpoint::GetTryOn,
        Endpoint::CancelTryOn,
        Endpoint::Balance,
    ];

    /// The config key, e.g. `create_try_on`.
    pub fn as_str(self) -> &'static str {
        match self {
            Endpoint::CreateTryOn => "create_try_on",
            Endpoint::GetTryOn => "get_try_on",
            Endpoint::CancelTryOn => "cancel_try_on",
            Endpoint::Balance => "balance",
        }
    }
}

/// `burst` requests per `period`, refilled smoothly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Quota {
    /// Requests allowed back to back, and per period.
    pub burst: NonZeroU32,
    /// The period, in milliseconds.
    pub period_ms: u64,
}

impl Quota {
    /// `n` requests per second.
    pub fn per_second(n: NonZeroU32) -> Self {
        Self {
            burst: n,
            period_ms: 1000,
        }
    }
    /// `n` requests per minute.
    pub fn per_minute(n: NonZeroU32) -> Self {
        Self {
            burst: n,
            period_ms: 60_000,
        }
    }
    fn emission_ms(&self) -> f64 {
        self.period_ms as f64 / f64::from(self.burst.get())
    }
}

/// Quotas per endpoint with per-account overrides.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RateLimits {
    /// The default quota of each endpoint.
    pub defaults: HashMap<Endpoint, Quota>,
    /// Account-specific quotas that replace the default.
    pub overrides: HashMap<AccountId, HashMap<Endpoint, Quota>>,
}

impl Default for RateLimits {
    /// POST 10/s, GET 50/s, cancel 10/s, balance 10/s per key.
    fn default() -> Self {
        let n = |v: u32| NonZeroU32::new(v).expect("non-zero");
        let defaults = HashMap::from([
            (Endpoint::CreateTryOn, Quota::per_second(n(10))),
            (Endpoint::GetTryOn, Quota::per_second(n(50))),
            (Endpoint::CancelTryOn, Quota::per_second(n(10))),
            (Endpoint::Balance, Quota::per_second(n(10))),
        ]);
        Self {
            defaults,
            overrides: HashMap::new(),
        }
    }
}

impl RateLimits {
    /// The quota for an account on an endpoint; `None` means unlimited.
    pub fn quota(&self, account: &AccountId, endpoint: Endpoint) -> Option<Quota> {
        self.overrides
            .get(account)
            .and_then(|m| m.get(&endpoint))
            .or_else(|| self.defaults.get(&endpoint))
            .copied()
    }
}

impl std::fmt::Display for Quota {
    /// `<burst>/<period secs>`, the form `vto admin account limits` takes (`20/1`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.period_ms % 1000 == 0 {
            write!(f, "{}/{}", self.burst, self.period_ms / 1000)
        } else {
            write!(f, "{}/{}ms", self.burst, self.period_ms)
        }
    }
}

impl std::str::FromStr for Quota {
    type Err = String;

    /// `<burst>/<period_secs>`, e.g. `20/1` (20 per second) or `600/60`; burst ≥ 1, period
    /// 1 to 86400 seconds.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || format!("expected <burst>/<period_secs> like 20/1, got {s:?}");
        let (b, p) = s.trim().split_once('/').ok_or_else(bad)?;
        let burst: u32 = b.trim().parse().map_err(|_| bad())?;
        let period: u64 = p.trim().parse().map_err(|_| bad())?;
        let burst =
            NonZeroU32::new(burst).ok_or_else(|| format!("{s:?}: burst must be at least 1"))?;
        if !(1..=86_400).contains(&period) {
            return Err(format!(
                "{s:?}: the period must be between 1 and 86400 seconds"
            ));
        }
        Ok(Quota {
            burst,
            period_ms: period * 1000,
        })
    }
}

/// One account's quotas, per endpoint; an endpoint not listed keeps the server's default.
pub type AccountLimits = BTreeMap<Endpoint, Quota>;

/// Per-account quota overrides, stored with the account.
///
/// The service asks on every limited request (through a cache in servers, see
/// [`crate::auth_cache::AuthCache`]); a change applies to the next request, without a restart.
/// Implementations move their [`crate::keys::AuthGeneration`] forward with every `set` and
/// `reset`, so caches notice.
#[async_trait]
pub trait AccountLimitStore: Send + Sync {
    /// The account's overrides; `None` when it has none.
    async fn limits(&self, account: &AccountId) -> Result<Option<AccountLimits>, RateLimitError>;
    /// Replaces the account's overrides with `limits` (merged by the caller if wanted).
    async fn set_limits(
        &self,
        account: &AccountId,
        limits: &AccountLimits,
    ) -> Result<(), RateLimitError>;
    /// Removes the account's overrides; `false` when it had none.
    async fn reset_limits(&self, account: &AccountId) -> Result<bool, RateLimitError>;
}

/// The in-memory [`AccountLimitStore`].
#[derive(Debug, Default)]
pub struct MemoryAccountLimits {
    limits: std::sync::Mutex<HashMap<AccountId, AccountLimits>>,
    generation: std::sync::atomic::AtomicU64,
}

impl MemoryAccountLimits {
    fn bump(&self) {
        self.generation
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

#[async_trait]
impl AccountLimitStore for MemoryAccountLimits {
    async fn limits(&self, account: &AccountId) -> Result<Option<AccountLimits>, RateLimitError> {
        Ok(self
            .limits
            .lock()
            .expect("limits lock")
            .get(account)
            .cloned())
    }

    async fn set_limits(
        &self,
        account: &AccountId,
        limits: &AccountLimits,
    ) -> Result<(), RateLimitError> {
        self.limits
            .lock()
            .expect("limits lock")
            .insert(account.clone(), limits.clone());
        self.bump();
        Ok(())
    }

    async fn reset_limits(&self, account: &AccountId) -> Result<bool, RateLimitError> {
        let had = self
            .limits
            .lock()
            .expect("limits lock")
            .remove(account)
            .is_some();
        self.bump();
        Ok(had)
    }
}

#[async_trait]
impl crate::keys::AuthGeneration for MemoryAccountLimits {
    async fn auth_generation(&self) -> Result<u64, crate::keys::KeyStoreError> {
        Ok(self.generation.load(std::sync::atomic::Ordering::SeqCst))
    }
}

/// The outcome of one check, with what the `RateLimit` headers report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decision {
    /// Whether the request may proceed.
    pub allowed: bool,
    /// The quota that applied.
    pub quota: Quota,
    /// Requests still allowed right now after this one.
    pub remaining: u32,
    /// Milliseconds until the full burst is available again.
    pub reset_ms: u64,
    /// Milliseconds until a denied request may be retried (0 when allowed).
    pub retry_after_ms: u64,
}

impl Decision {
    /// `Retry-After` in whole seconds, rounded up (at least 1 when denied).
    pub fn retry_after_secs(&self) -> u64 {
        self.retry_after_ms.div_ceil(1000)
    }
    /// `reset` in whole seconds, rounded up.
    pub fn reset_secs(&self) -> u64 {
        self.reset_ms.div_ceil(1000)
    }
}

/// Rate limiter failures (backend only: a denial is a [`Decision`], not an error).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("rate limiter backend: {0}")]
pub struct RateLimitError(#[source] pub BackendError);

/// Counts requests per key and endpoint.
#[async_trait]
pub trait RateLimiter: Send + Sync {
    /// Counts one request for `key` on `endpoint` under `quota` at `now`, if allowed.
    async fn check(
        &self,
        key: &str,
        endpoint: Endpoint,
        quota: Quota,
        now: Timestamp,
    ) -> Result<Decision, RateLimitError>;
}

/// The GCRA step: from the stored TAT (ms, fractional) to a decision and the new TAT.
pub fn gcra(tat: Option<f64>, quota: Quota, now: Timestamp) -> (Decision, Option<f64>) {
    let now_ms = now.millis() as f64;
    let tat = tat.unwrap_or(now_ms).max(now_ms);
    let new_tat = gcra_next_tat(tat, quota);
    if gcra_allows(new_tat, quota, now) {
        (gcra_decision(true, new_tat, quota, now), Some(new_tat))
    } else {
        (gcra_decision(false, tat, quota, now), None)
    }
}

/// The emission interval `T = period / burst`, in milliseconds.
pub fn emission_ms(quota: Quota) -> f64 {
    quota.emission_ms()
}

/// The TAT after one more request, from `tat` already raised to `now` (`max(TAT, now)`).
pub fn gcra_next_tat(tat: f64, quota: Quota) -> f64 {
    tat + quota.emission_ms()
}

/// Whether a request whose TAT would become `new_tat` is allowed at `now`:
/// `new_tat - period <= now` (with a 1e-9 ms tolerance for the fractional arithmetic). A store
/// that runs GCRA in SQL evaluates this same expression.
pub fn gcra_allows(new_tat: f64, quota: Quota, now: Timestamp) -> bool {
    new_tat - quota.period_ms as f64 <= now.millis() as f64 + 1e-9
}

/// The decision (remaining, reset, retry-after) once the outcome is known: `tat` is the new TAT
/// when `allowed`, else the stored TAT raised to `now`. Every limiter builds its decisions
/// here, so they agree to the millisecond.
pub fn gcra_decision(allowed: bool, tat: f64, quota: Quota, now: Timestamp) -> Decision {
    let now = now.millis() as f64;
    let t = quota.emission_ms();
    let period = quota.period_ms as f64;
    if allowed {
        let remaining = ((period - (tat - now)) / t + 1e-9).floor().max(0.0) as u32;
        Decision {
            allowed: true,
            quota,
            remaining,
            reset_ms: (tat - now).ceil().max(0.0) as u64,
            retry_after_ms: 0,
        }
    } else {
        let allow_at = tat + t - period;
        Decision {
            allowed: false,
            quota,
            remaining: 0,
            reset_ms: (tat - now).ceil().max(0.0) as u64,
            retry_after_ms: (allow_at - now).ceil().max(1.0) as u64,
        }
    }
}

/// The in-memory GCRA limiter: one TAT per (key, endpoint).
#[derive(Debug, Default)]
pub struct MemoryRateLimiter {
    tats: std::sync::Mutex<HashMap<(String, Endpoint), f64>>,
}

#[async_trait]
impl RateLimiter for MemoryRateLimiter {
    async fn check(
        &self,
        key: &str,
        endpoint: Endpoint,
        quota: Quota,
        now: Timestamp,
    ) -> Result<Decision, RateLimitError> {
        let mut tats = self.tats.lock().expect("limiter lock");
        let slot = (key.to_string(), endpoint);
        let (decision, new_tat) = gcra(tats.get(&slot).copied(), quota, now);
        if let Some(t) = new_tat {
            tats.insert(slot, t);
        }
        // Keep memory bounded: drop keys whose buckets are full again.
        if tats.len() > 100_000 {
            let now_ms = now.millis() as f64;
            tats.retain(|_, tat| *tat > now_ms);
        }
        Ok(decision)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::{Clock, FakeClock};
    use std::time::Duration;

    fn q(burst: u32, period_ms: u64) -> Quota {
        Quota {
            burst: NonZeroU32::new(burst).unwrap(),
            period_ms,
        }
    }

    #[tokio::test]
    async fn a_burst_is_allowed_then_denied_with_retry_after() {
        let clock = FakeClock::default();
        let rl = MemoryRateLimiter::default();
        let quota = q(5, 1000);
        for i in 0..5 {
            let d = rl
                .check("k", Endpoint::CreateTryOn, quota, clock.now())
                .await
                .unwrap();
            assert!(d.allowed, "request {i}");
            assert_eq!(d.remaining, 4 - i);
        }
        let d = rl
            .check("k", Endpoint::CreateTryOn, quota, clock.now())
            .await
            .unwrap();
        assert!(!d.allowed);
        assert_eq!(d.remaining, 0);
        assert_eq!(d.retry_after_ms, 200);
        assert_eq!(d.retry_after_secs(), 1);
        assert_eq!(d.reset_ms, 1000);
    }

    #[tokio::test]
    async fn tokens_refill_over_time() {
        let clock = FakeClock::default();
        let rl = MemoryRateLimiter::default();
        let quota = q(2, 1000);
        for _ in 0..2 {
            assert!(
                rl.check("k", Endpoint::GetTryOn, quota, clock.now())
                    .await
                    .unwrap()
                    .allowed
            );
        }
        assert!(
            !rl.check("k", Endpoint::GetTryOn, quota, clock.now())
                .await
                .unwrap()
                .allowed
        );
        clock.advance(Duration::from_millis(499));
        assert!(
            !rl.check("k", Endpoint::GetTryOn, quota, clock.now())
                .await
                .unwrap()
                .allowed
        );
        clock.advance(Duration::from_millis(1));
        let d = rl
            .check("k", Endpoint::GetTryOn, quota, clock.now())
            .await
            .unwrap();
        assert!(d.allowed);
        assert_eq!(d.remaining, 0);
        clock.advance(Duration::from_secs(10));
        let d = rl
            .check("k", Endpoint::GetTryOn, quota, clock.now())
            .await
            .unwrap();
        assert_eq!(
            d.remaining, 1,
            "a long pause refills to the burst, not beyond"
        );
    }

    #[tokio::test]
    async fn keys_and_endpoints_are_isolated() {
        let clock = FakeClock::default();
        let rl = MemoryRateLimiter::default();
        let quota = q(1, 60_000);
        assert!(
            rl.check("a", Endpoint::CreateTryOn, quota, clock.now())
                .await
                .unwrap()
                .allowed
        );
        assert!(
            !rl.check("a", Endpoint::CreateTryOn, quota, clock.now())
                .await
                .unwrap()
                .allowed
        );
        assert!(
            rl.check("b", Endpoint::CreateTryOn, quota, clock.now())
                .await
                .unwrap()
                .allowed
        );
        assert!(
            rl.check("a", Endpoint::GetTryOn, quota, clock.now())
                .await
                .unwrap()
                .allowed
        );
    }

    #[test]
    fn quotas_parse_and_print_as_burst_slash_seconds() {
        let quota: Quota = "20/1".parse().unwrap();
        assert_eq!(quota, q(20, 1000));
        assert_eq!(quota.to_string(), "20/1");
        assert_eq!("600/60".parse::<Quota>().unwrap(), q(600, 60_000));
        for bad in ["0/1", "5/0", "5/86401", "five/1", "5", ""] {
            assert!(bad.parse::<Quota>().is_err(), "{bad:?} must be refused");
        }
    }

    #[test]
    fn account_overrides_replace_the_endpoint_default() {
        let mut limits = RateLimits::default();
        let vip = AccountId::from("acct_vip");
        limits.overrides.insert(
            vip.clone(),
            HashMap::from([(Endpoint::CreateTryOn, q(100, 1000))]),
        );
        assert_eq!(
            limits.quota(&vip, Endpoint::CreateTryOn),
            Some(q(100, 1000))
        );
        assert_eq!(
            limits.quota(&vip, Endpoint::GetTryOn),
            limits.defaults.get(&Endpoint::GetTryOn).copied()
        );
        assert_eq!(
            limits.quota(&AccountId::from("acct_x"), Endpoint::CreateTryOn),
            Some(q(10, 1000))
        );
    }
}
