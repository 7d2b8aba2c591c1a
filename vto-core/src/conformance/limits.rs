//! The rate limiter contract.

use super::*;

/// The [`crate::ratelimit::RateLimiter`] contract: GCRA with the caller's clock, deciding
/// exactly as [`crate::ratelimit::gcra`] does (allowed, remaining, reset, retry-after), per
/// (key, endpoint), and exactly `burst` of a burst of concurrent checks allowed.
pub async fn rate_limiter<R, F, Fut>(make: F)
where
    R: crate::ratelimit::RateLimiter + 'static,
    F: Fn() -> Fut,
    Fut: Future<Output = R>,
{
    use crate::ratelimit::{gcra, Endpoint, Quota};
    use std::num::NonZeroU32;
    let q = |burst: u32, period_ms: u64| Quota {
        burst: NonZeroU32::new(burst).expect("non-zero"),
        period_ms,
    };

    // A burst is allowed, then denied with retry-after and reset.
    let r = make().await;
    let quota = q(5, 1000);
    for i in 0..5 {
        let d = r
            .check("k", Endpoint::CreateTryOn, quota, at(0))
            .await
            .expect("check");
        assert!(d.allowed, "request {i} of the burst");
        assert_eq!(d.remaining, 4 - i);
        assert_eq!(d.quota, quota);
    }
    let d = r
        .check("k", Endpoint::CreateTryOn, quota, at(0))
        .await
        .expect("check");
    assert!(!d.allowed);
    assert_eq!(
        (d.remaining, d.retry_after_ms, d.reset_ms),
        (0, 200, 1000),
        "denied: retry after one emission interval, full after the period"
    );

    // Tokens refill with the caller's clock, never beyond the burst; keys and endpoints are
    // separate budgets.
    let r = make().await;
    let quota = q(2, 1000);
    for _ in 0..2 {
        assert!(
            r.check("k", Endpoint::GetTryOn, quota, at(0))
                .await
                .expect("check")
                .allowed
        );
    }
    assert!(
        !r.check("k", Endpoint::GetTryOn, quota, at(0))
            .await
            .expect("check")
            .allowed
    );
    assert!(
        !r.check("k", Endpoint::GetTryOn, quota, at(499))
            .await
            .expect("check")
            .allowed
    );
    let d = r
        .check("k", Endpoint::GetTryOn, quota, at(500))
        .await
        .expect("check");
    assert!(
        d.allowed && d.remaining == 0,
        "one token back after T: {d:?}"
    );
    let d = r
        .check("k", Endpoint::GetTryOn, quota, at(10_500))
        .await
        .expect("check");
    assert_eq!(
        d.remaining, 1,
        "a long pause refills to the burst, not beyond"
    );
    let one = q(1, 60_000);
    assert!(
        r.check("a", Endpoint::Balance, one, at(0))
            .await
            .expect("check")
            .allowed
    );
    assert!(
        !r.check("a", Endpoint::Balance, one, at(1))
            .await
            .expect("check")
            .allowed
    );
    assert!(
        r.check("b", Endpoint::Balance, one, at(1))
            .await
            .expect("check")
            .allowed
    );
    assert!(
        r.check("a", Endpoint::CancelTryOn, one, at(1))
            .await
            .expect("check")
            .allowed
    );

    // The same decisions as the reference GCRA over an irregular sequence, with a fractional
    // emission interval (3 per second: T = 333.33 ms) and a quota change midway.
    let r = make().await;
    let mut tat: Option<f64> = None;
    let mut t = 0i64;
    for step in 0..120i64 {
        t += (step * 37) % 211;
        let quota = if step < 80 { q(3, 1000) } else { q(7, 2000) };
        let (want, next) = gcra(tat, quota, at(t));
        if next.is_some() {
            tat = next;
        }
        let got = r
            .check("seq", Endpoint::CreateTryOn, quota, at(t))
            .await
            .expect("check");
        assert_eq!(got, want, "step {step} at +{t} ms");
    }

    // Concurrent checks at one instant: exactly `burst` allowed.
    let r = Arc::new(make().await);
    let quota = q(10, 60_000);
    let mut tasks = Vec::new();
    for _ in 0..40 {
        let r = r.clone();
        tasks.push(tokio::spawn(async move {
            r.check("hot", Endpoint::CreateTryOn, quota, at(5))
                .await
                .expect("check")
                .allowed
        }));
    }
    let mut allowed = 0;
    for t in tasks {
        allowed += usize::from(t.await.expect("task"));
    }
    assert_eq!(allowed, 10, "exactly the burst of 40 concurrent checks");
}
