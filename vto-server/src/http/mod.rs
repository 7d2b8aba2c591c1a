//! The HTTP layer: warp routes that translate requests into [`TryOnService`] calls and
//! results (or [`ApiError`]s) into replies. No business rule lives here.
//!
//! Order of checks on a limited route, so a 429 is decided before any other processing and
//! never billed: route match → `Authorization` (401) → rate limit (429) → content type (415)
//! → body size (413) → JSON (400) → the service (validation 400, 501, 402, …).
//!
//! Every reply carries `X-Request-Id` (the client's, if it sent a sane one, else a new id),
//! and every request runs in a tracing span with that id.

mod balance;
mod ops;
mod results;
mod try_ons;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

use tracing::{info, Instrument};
use vto_core::{ApiError, Caller, Decision, Endpoint, ErrorCode, TryOnService};
use warp::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use warp::reply::Response;
use warp::Filter;

use crate::metrics::Metrics;
use crate::results::SignedResults;

use balance::balance;
use ops::{metrics, readyz};
use results::result_image;
use try_ons::{cancel, create, get_try_on, list_try_ons};

/// What every handler needs.
pub struct AppState {
    /// The service.
    pub service: TryOnService,
    /// The records' backends (readiness and metrics use them).
    pub storage: crate::storage::Storage,
    /// Whether this process serves the public API (`role` is `all` or `api`); a worker
    /// answers only `/healthz`, `/readyz` and `/metrics`.
    pub serves_api: bool,
    /// The result folder behind `/v1/results/{token}` links; `None` when results are in
    /// object storage (clients download from the store).
    pub signed: Option<Arc<SignedResults>>,
    /// Counters and histograms.
    pub metrics: Arc<Metrics>,
    /// Largest accepted body.
    pub body_limit: u64,
    /// The public base URL (for `Location`).
    pub base_url: String,
    /// The OpenAPI document, serialized once.
    pub openapi: bytes::Bytes,
    /// False once shutdown began (`/readyz` answers 503).
    pub ready: AtomicBool,
    /// Categories without an engine, with why and the fix (listed by `/readyz`).
    pub unavailable: Vec<crate::Unavailable>,
    /// Whether a built-in category the binary offers is unavailable (`/readyz` says
    /// `degraded`).
    pub degraded_builtin: bool,
    /// The playground page and its samples; `None` when `playground = false`.
    pub playground: Option<crate::playground::Playground>,
}

type Ctx = Arc<AppState>;

/// The routes and their methods, for 404 vs 405 (and `Allow`).
const ROUTES: &[(&[&str], &str)] = &[
    (&["v1", "virtual-try-on"], "GET, POST"),
    (&["v1", "virtual-try-on", "*"], "GET"),
    (&["v1", "virtual-try-on", "*", "cancel"], "POST"),
    (&["v1", "results", "*"], "GET"),
    (&["v1", "balance"], "GET"),
    (&["openapi.json"], "GET"),
    (&["healthz"], "GET"),
    (&["readyz"], "GET"),
    (&["metrics"], "GET"),
];

fn allowed_methods(path: &str) -> Option<&'static str> {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    ROUTES.iter().find_map(|(pattern, method)| {
        (pattern.len() == segs.len()
            && pattern
                .iter()
                .zip(&segs)
                .all(|(p, s)| *p == "*" && !s.is_empty() || p == s))
        .then_some(*method)
    })
}

/// The one place an [`ApiError`] becomes a reply: `{"error": {"code", "message", "param"?}}`
/// with the code's status.
pub fn error_reply(err: &ApiError) -> Response {
    let status =
        StatusCode::from_u16(err.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    if status == StatusCode::SERVICE_UNAVAILABLE {
        // A backend is unavailable for now (vto_core::ErrorCode::ServiceUnavailable).
        return unavailable_reply(&err.body());
    }
    json_reply(status, &err.body())
}

/// `Retry-After` of a `503 service_unavailable`: a database restart or failover, or a
/// renderer freeing up, takes seconds.
const UNAVAILABLE_RETRY_AFTER_SECS: u32 = 1;

/// A `503 service_unavailable` with `Retry-After` and `value` as its body (the error body,
/// or the failed result object of a synchronous try-on refused as busy).
fn unavailable_reply(value: &impl serde::Serialize) -> Response {
    let mut resp = json_reply(StatusCode::SERVICE_UNAVAILABLE, value);
    set_header(
        &mut resp,
        "retry-after",
        UNAVAILABLE_RETRY_AFTER_SECS.to_string(),
    );
    resp
}

fn json_reply(status: StatusCode, value: &impl serde::Serialize) -> Response {
    let body = serde_json::to_vec(value).unwrap_or_else(|_| b"{}".to_vec());
    let mut resp = Response::new(body.into());
    *resp.status_mut() = status;
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    resp
}

fn set_header(resp: &mut Response, name: &'static str, value: String) {
    if let Ok(v) = HeaderValue::from_str(&value) {
        resp.headers_mut().insert(name, v);
    }
}

/// `RateLimit-Policy` and `RateLimit` (draft-ietf-httpapi-ratelimit-headers, structured
/// fields), plus `Retry-After` when denied.
fn rate_headers(resp: &mut Response, d: &Decision) {
    let window = d.quota.period_ms.div_ceil(1000);
    set_header(
        resp,
        "ratelimit-policy",
        format!("\"default\";q={};w={window}", d.quota.burst),
    );
    set_header(
        resp,
        "ratelimit",
        format!("\"default\";r={};t={}", d.remaining, d.reset_secs()),
    );
    if !d.allowed {
        set_header(resp, "retry-after", d.retry_after_secs().max(1).to_string());
    }
}

fn request_id(headers: &HeaderMap) -> String {
    headers
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .filter(|s| {
            !s.is_empty()
                && s.len() <= 128
                && s.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(&b))
        })
        .map(str::to_string)
        .unwrap_or_else(|| format!("req_{}", uuid::Uuid::new_v4().simple()))
}

/// Runs a handler in a span, then stamps the request id and counts the reply.
async fn run(
    ctx: &Ctx,
    route: &'static str,
    method: &Method,
    headers: &HeaderMap,
    handler: impl std::future::Future<Output = Response>,
) -> Response {
    let rid = request_id(headers);
    let started = Instant::now();
    let span = tracing::info_span!("request", request_id = %rid, method = %method, route);
    let mut resp = handler.instrument(span.clone()).await;
    let status = resp.status().as_u16();
    let took = started.elapsed();
    span.in_scope(|| info!(status, took_ms = took.as_secs_f64() * 1000.0, "answered"));
    set_header(&mut resp, "x-request-id", rid);
    ctx.metrics.request(route, method.as_str(), status, took);
    resp
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    let v = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = v.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then_some(token.trim())
}

/// Authenticates and counts the request against the caller's quota.
async fn authorize(
    ctx: &Ctx,
    headers: &HeaderMap,
    endpoint: Endpoint,
) -> Result<(Caller, Option<Decision>), Response> {
    let caller = ctx
        .service
        .authenticate(bearer(headers))
        .await
        .map_err(|e| {
            let mut r = error_reply(&e);
            r.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"vto\""),
            );
            r
        })?;
    match ctx.service.rate_limit(&caller, endpoint).await {
        Ok(d) => Ok((caller, d)),
        Err((e, d)) => {
            let mut r = error_reply(&e);
            rate_headers(&mut r, &d);
            Err(r)
        }
    }
}

fn finish(result: Result<Response, ApiError>, decision: Option<Decision>) -> Response {
    let mut resp = result.unwrap_or_else(|e| error_reply(&e));
    if let Some(d) = decision {
        rate_headers(&mut resp, &d);
    }
    resp
}

async fn fallback(method: Method, path: warp::path::FullPath) -> Response {
    match allowed_methods(path.as_str()) {
        Some(allow) if !allow.split(", ").any(|m| m == method.as_str()) => {
            let mut r = error_reply(&ApiError::new(
                ErrorCode::MethodNotAllowed,
                format!("{} does not accept {method}; use {allow}", path.as_str()),
            ));
            set_header(&mut r, "allow", allow.to_string());
            r
        }
        _ => error_reply(&ApiError::new(
            ErrorCode::NotFound,
            format!("no route {method} {}", path.as_str()),
        )),
    }
}

/// All routes, each answering a complete reply (errors included), so nothing is rejected.
pub fn routes(
    ctx: Ctx,
) -> impl Filter<Extract = (Response,), Error = std::convert::Infallible> + Clone {
    let with = {
        let ctx = ctx.clone();
        warp::any().map(move || ctx.clone())
    };
    let headers = warp::header::headers_cloned();

    let create_r = warp::path!("v1" / "virtual-try-on")
        .and(warp::post())
        .and(with.clone())
        .and(headers)
        .and(warp::body::stream())
        .then(|ctx: Ctx, h: HeaderMap, body| async move {
            let c = ctx.clone();
            run(
                &c,
                "create_try_on",
                &Method::POST,
                &h.clone(),
                create(ctx, h, body),
            )
            .await
        });
    let list_r = warp::path!("v1" / "virtual-try-on")
        .and(warp::get())
        .and(warp::query::raw().or(warp::any().map(String::new)).unify())
        .and(with.clone())
        .and(headers)
        .then(|query: String, ctx: Ctx, h: HeaderMap| async move {
            let c = ctx.clone();
            run(
                &c,
                "list_try_ons",
                &Method::GET,
                &h.clone(),
                list_try_ons(ctx, query, h),
            )
            .await
        });
    let playground_r = warp::get()
        .and(warp::path("playground"))
        .and(warp::path::tail())
        .and(with.clone())
        .and(headers)
        .and_then(
            |tail: warp::path::Tail, ctx: Ctx, h: HeaderMap| async move {
                let reply = match &ctx.playground {
                    Some(p) => p.reply(tail.as_str()).await,
                    None => None,
                };
                match reply {
                    Some(r) => Ok(run(&ctx, "playground", &Method::GET, &h, async { r }).await),
                    None => Err(warp::reject::not_found()),
                }
            },
        );
    let root_r = warp::get()
        .and(warp::path::end())
        .and(with.clone())
        .and_then(|ctx: Ctx| async move {
            if ctx.playground.is_none() {
                return Err(warp::reject::not_found());
            }
            let mut r = Response::new("".into());
            *r.status_mut() = StatusCode::SEE_OTHER;
            set_header(&mut r, "location", "/playground".into());
            Ok(r)
        });
    let get_r = warp::path!("v1" / "virtual-try-on" / String)
        .and(warp::get())
        .and(with.clone())
        .and(headers)
        .then(|id: String, ctx: Ctx, h: HeaderMap| async move {
            let c = ctx.clone();
            run(
                &c,
                "get_try_on",
                &Method::GET,
                &h.clone(),
                get_try_on(ctx, id, h),
            )
            .await
        });
    let cancel_r = warp::path!("v1" / "virtual-try-on" / String / "cancel")
        .and(warp::post())
        .and(with.clone())
        .and(headers)
        .then(|id: String, ctx: Ctx, h: HeaderMap| async move {
            let c = ctx.clone();
            run(
                &c,
                "cancel_try_on",
                &Method::POST,
                &h.clone(),
                cancel(ctx, id, h),
            )
            .await
        });
    let results_r = warp::path!("v1" / "results" / String)
        .and(warp::get())
        .and(with.clone())
        .and(headers)
        .then(|token: String, ctx: Ctx, h: HeaderMap| async move {
            let c = ctx.clone();
            run(
                &c,
                "result_image",
                &Method::GET,
                &h,
                result_image(ctx, token),
            )
            .await
        });
    let balance_r = warp::path!("v1" / "balance")
        .and(warp::get())
        .and(with.clone())
        .and(headers)
        .then(|ctx: Ctx, h: HeaderMap| async move {
            let c = ctx.clone();
            run(&c, "balance", &Method::GET, &h.clone(), balance(ctx, h)).await
        });
    let openapi_r = warp::path!("openapi.json")
        .and(warp::get())
        .and(with.clone())
        .and(headers)
        .then(|ctx: Ctx, h: HeaderMap| async move {
            let body = ctx.openapi.clone();
            run(&ctx, "openapi", &Method::GET, &h, async move {
                let mut r = Response::new(body.into());
                set_header(&mut r, "content-type", "application/json".into());
                r
            })
            .await
        });
    let healthz_r = warp::path!("healthz")
        .and(warp::get())
        .and(with.clone())
        .and(headers)
        .then(|ctx: Ctx, h: HeaderMap| async move {
            run(&ctx, "healthz", &Method::GET, &h, async {
                json_reply(StatusCode::OK, &serde_json::json!({"status": "ok"}))
            })
            .await
        });
    let readyz_r = warp::path!("readyz")
        .and(warp::get())
        .and(with.clone())
        .and(headers)
        .then(|ctx: Ctx, h: HeaderMap| async move {
            let c = ctx.clone();
            run(&c, "readyz", &Method::GET, &h, readyz(ctx)).await
        });
    let metrics_r = warp::path!("metrics")
        .and(warp::get())
        .and(with.clone())
        .and(headers)
        .then(|ctx: Ctx, h: HeaderMap| async move {
            let c = ctx.clone();
            run(&c, "metrics", &Method::GET, &h, metrics(ctx)).await
        });
    // A worker instance serves only the three operational paths above; anything else gets a
    // 404 that says which role this is (a load balancer should not send API traffic here).
    let worker_r = warp::method()
        .and(warp::path::full())
        .and(with.clone())
        .and(headers)
        .and_then(
            |m: Method, p: warp::path::FullPath, ctx: Ctx, h: HeaderMap| async move {
                if ctx.serves_api || matches!(p.as_str(), "/healthz" | "/readyz" | "/metrics") {
                    return Err(warp::reject::not_found());
                }
                Ok(run(&ctx, "unmatched", &m, &h, async {
                    error_reply(&ApiError::new(
                        ErrorCode::NotFound,
                        "this vto instance runs role \"worker\": it serves only /healthz, /readyz and /metrics; send API requests to an instance with role \"api\" or \"all\"",
                    ))
                })
                .await)
            },
        );
    let fallback_r = warp::method()
        .and(warp::path::full())
        .and(with)
        .and(headers)
        .then(
            |m: Method, p: warp::path::FullPath, ctx: Ctx, h: HeaderMap| async move {
                run(&ctx, "unmatched", &m.clone(), &h, fallback(m, p)).await
            },
        );

    worker_r
        .or(create_r)
        .unify()
        .or(list_r)
        .unify()
        .or(get_r)
        .unify()
        .or(playground_r)
        .unify()
        .or(root_r)
        .unify()
        .or(cancel_r)
        .unify()
        .or(results_r)
        .unify()
        .or(balance_r)
        .unify()
        .or(openapi_r)
        .unify()
        .or(healthz_r)
        .unify()
        .or(readyz_r)
        .unify()
        .or(metrics_r)
        .unify()
        .or(fallback_r)
        .unify()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_backend_unavailable_is_a_503_with_retry_after_and_other_errors_have_none() {
        let r = error_reply(&ApiError::unavailable());
        assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(r.headers()["retry-after"], "1");
        let r = error_reply(&ApiError::internal());
        assert_eq!(r.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert!(r.headers().get("retry-after").is_none());
    }

    #[test]
    fn known_paths_give_their_method_unknown_paths_none() {
        assert_eq!(allowed_methods("/v1/virtual-try-on"), Some("GET, POST"));
        assert_eq!(allowed_methods("/v1/virtual-try-on/abc"), Some("GET"));
        assert_eq!(
            allowed_methods("/v1/virtual-try-on/abc/cancel"),
            Some("POST")
        );
        assert_eq!(allowed_methods("/v1/balance"), Some("GET"));
        assert_eq!(allowed_methods("/v1/nothing"), None);
        assert_eq!(allowed_methods("/v1/virtual-try-on//cancel"), None);
    }

    #[test]
    fn rate_headers_use_the_structured_draft_form() {
        let d = Decision {
            allowed: false,
            quota: vto_core::Quota::per_second(std::num::NonZeroU32::new(5).unwrap()),
            remaining: 0,
            reset_ms: 1000,
            retry_after_ms: 200,
        };
        let mut r = Response::new("".into());
        rate_headers(&mut r, &d);
        assert_eq!(r.headers()["ratelimit-policy"], "\"default\";q=5;w=1");
        assert_eq!(r.headers()["ratelimit"], "\"default\";r=0;t=1");
        assert_eq!(r.headers()["retry-after"], "1");
    }
}
