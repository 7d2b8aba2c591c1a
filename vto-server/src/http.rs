//! The HTTP layer: warp routes that translate requests into [`TryOnService`] calls and
//! results (or [`ApiError`]s) into replies. No business rule lives here.
//!
//! Order of checks on a limited route, so a 429 is decided before any other processing and
//! never billed: route match → `Authorization` (401) → rate limit (429) → content type (415)
//! → body size (413) → JSON (400) → the service (validation 400, 501, 402, …).
//!
//! Every reply carries `X-Request-Id` (the client's, if it sent a sane one, else a new id),
//! and every request runs in a tracing span with that id.

use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use bytes::{Buf, BytesMut};
use futures::{Stream, StreamExt};
use tracing::{error, info, Instrument};
use warp::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use warp::reply::Response;
use warp::Filter;

use vto_core::{
    ApiError, Caller, CreateRequest, Created, Decision, Endpoint, ErrorCode, JobStatus,
    ResultStore, TryOnService,
};

use crate::metrics::Metrics;
use crate::results::SignedResults;

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
    json_reply(status, &err.body())
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

fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|m| {
            let m = m.trim();
            m.eq_ignore_ascii_case("application/json")
                || (m.len() > 5 && m[..].to_ascii_lowercase().ends_with("+json"))
        })
}

fn too_large(limit: u64) -> ApiError {
    ApiError::new(
        ErrorCode::PayloadTooLarge,
        format!("the request body is larger than {limit} bytes"),
    )
}

/// Reads and discards the rest of a body, up to `cap` bytes, so a client still sending gets
/// the early reply (401, 429, 413, …) rather than a reset connection.
async fn drain<S, B>(mut body: Pin<&mut S>, cap: u64)
where
    S: Stream<Item = Result<B, warp::Error>>,
    B: Buf,
{
    let mut seen = 0u64;
    while seen <= cap {
        match body.next().await {
            Some(Ok(chunk)) => seen += chunk.remaining() as u64,
            _ => break,
        }
    }
}

async fn read_body<S, B>(
    headers: &HeaderMap,
    mut body: Pin<&mut S>,
    limit: u64,
) -> Result<BytesMut, ApiError>
where
    S: Stream<Item = Result<B, warp::Error>>,
    B: Buf,
{
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit) {
        return Err(too_large(limit));
    }
    let mut buf = BytesMut::with_capacity(declared.unwrap_or(1024).min(limit) as usize);
    while let Some(chunk) = body.next().await {
        let mut chunk = chunk.map_err(|e| {
            ApiError::new(
                ErrorCode::InvalidRequest,
                format!("could not read the request body: {e}"),
            )
        })?;
        if buf.len() as u64 + chunk.remaining() as u64 > limit {
            return Err(too_large(limit));
        }
        while chunk.has_remaining() {
            let part = chunk.chunk();
            let n = part.len();
            buf.extend_from_slice(part);
            chunk.advance(n);
        }
    }
    Ok(buf)
}

async fn create<S, B>(ctx: Ctx, headers: HeaderMap, body: S) -> Response
where
    S: Stream<Item = Result<B, warp::Error>>,
    B: Buf,
{
    let mut body = std::pin::pin!(body);
    let drain_cap = ctx.body_limit.saturating_mul(2);
    let (caller, decision) = match authorize(&ctx, &headers, Endpoint::CreateTryOn).await {
        Ok(x) => x,
        Err(r) => {
            drain(body.as_mut(), drain_cap).await;
            return r;
        }
    };
    let result = async {
        if !is_json(&headers) {
            return Err(ApiError::new(
                ErrorCode::UnsupportedMediaType,
                "send the body as JSON with `Content-Type: application/json`",
            ));
        }
        let bytes = read_body(&headers, body.as_mut(), ctx.body_limit).await?;
        let req: CreateRequest = serde_json::from_slice(&bytes).map_err(|e| {
            ApiError::new(
                ErrorCode::InvalidRequest,
                format!("the body is not a valid JSON object: {e}"),
            )
        })?;
        let idempotency_key = match headers.get("idempotency-key") {
            None => None,
            Some(v) => Some(v.to_str().map_err(|_| {
                let mut e = ApiError::new(
                    ErrorCode::InvalidRequest,
                    "Idempotency-Key must be printable ASCII",
                );
                e.param = Some("Idempotency-Key".into());
                e
            })?),
        };
        let (created, replayed) = ctx
            .service
            .create_idempotent(&caller, idempotency_key, &req)
            .await?;
        let mut resp = match created {
            Created::Finished(r) => {
                let status = if r.status == JobStatus::Success {
                    StatusCode::OK
                } else {
                    StatusCode::UNPROCESSABLE_ENTITY
                };
                json_reply(status, &r)
            }
            Created::Accepted(r) => {
                let mut resp = json_reply(StatusCode::ACCEPTED, &r);
                set_header(
                    &mut resp,
                    "location",
                    format!("{}/v1/virtual-try-on/{}", ctx.base_url, r.request_id),
                );
                resp
            }
        };
        if replayed {
            set_header(&mut resp, "idempotent-replayed", "true".to_string());
        }
        Ok(resp)
    }
    .await;
    // A no-op after a full read; after an early error it lets the client finish sending.
    drain(body.as_mut(), drain_cap).await;
    finish(result, decision)
}

async fn get_try_on(ctx: Ctx, id: String, headers: HeaderMap) -> Response {
    let (caller, decision) = match authorize(&ctx, &headers, Endpoint::GetTryOn).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    let result = ctx
        .service
        .get(&caller, &id)
        .await
        .map(|r| json_reply(StatusCode::OK, &r));
    finish(result, decision)
}

/// `GET /v1/virtual-try-on?limit=N&status=S`: the account's latest try-ons (counted against
/// the `get_try_on` limit). Unknown parameters are refused, as a typo should not pass silently.
async fn list_try_ons(ctx: Ctx, query: String, headers: HeaderMap) -> Response {
    let (caller, decision) = match authorize(&ctx, &headers, Endpoint::GetTryOn).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    let result = async {
        let (limit, status) = list_params(&query)?;
        let list = ctx.service.list(&caller, limit, status).await?;
        Ok(json_reply(StatusCode::OK, &list))
    }
    .await;
    finish(result, decision)
}

/// The default page size of the list.
const DEFAULT_LIST_LIMIT: usize = 10;

fn list_params(query: &str) -> Result<(usize, Option<JobStatus>), ApiError> {
    let bad = |param: &str, message: String| {
        let mut e = ApiError::new(ErrorCode::InvalidRequest, message);
        e.param = Some(param.into());
        e
    };
    let (mut limit, mut status) = (DEFAULT_LIST_LIMIT, None);
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        match name {
            "limit" => {
                limit = value.parse().map_err(|_| {
                    bad(
                        "limit",
                        format!(
                            "limit must be a whole number from 1 to {}",
                            vto_core::MAX_LIST_LIMIT
                        ),
                    )
                })?
            }
            "status" => {
                status = Some(value.parse().map_err(|_| {
                    bad(
                        "status",
                        "status must be queued, processing, success, failed or canceled".into(),
                    )
                })?)
            }
            other => {
                return Err(bad(
                    other,
                    format!("unknown query parameter {other:?}; use limit and status"),
                ))
            }
        }
    }
    Ok((limit, status))
}

async fn cancel(ctx: Ctx, id: String, headers: HeaderMap) -> Response {
    let (caller, decision) = match authorize(&ctx, &headers, Endpoint::CancelTryOn).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    let result = ctx
        .service
        .cancel(&caller, &id)
        .await
        .map(|r| json_reply(StatusCode::OK, &r));
    finish(result, decision)
}

async fn balance(ctx: Ctx, headers: HeaderMap) -> Response {
    let (caller, decision) = match authorize(&ctx, &headers, Endpoint::Balance).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    let result = ctx
        .service
        .balance(&caller)
        .await
        .map(|b| json_reply(StatusCode::OK, &b));
    finish(result, decision)
}

async fn result_image(ctx: Ctx, token: String) -> Response {
    let not_found = || {
        error_reply(&ApiError::new(
            ErrorCode::NotFound,
            "no such result, or the link has expired; GET the try-on again for a fresh link",
        ))
    };
    // With results in object storage, links point at the store itself: nothing is served here.
    let Some(signed) = &ctx.signed else {
        return not_found();
    };
    let now = ctx.service.now();
    let Ok(key) = signed.verify(&token, now) else {
        return not_found();
    };
    match signed.get(&key).await {
        Ok(Some(img)) => {
            let mut resp = Response::new(img.bytes.into());
            set_header(&mut resp, "content-type", img.content_type);
            set_header(&mut resp, "cache-control", "private, max-age=3600".into());
            resp
        }
        Ok(None) | Err(vto_core::results::ResultStoreError::InvalidKey(_)) => not_found(),
        Err(e) => {
            error!(error = %e, "reading a result image failed");
            error_reply(&ApiError::internal())
        }
    }
}

async fn readyz(ctx: Ctx) -> Response {
    if !ctx.ready.load(Ordering::SeqCst) {
        return json_reply(
            StatusCode::SERVICE_UNAVAILABLE,
            &serde_json::json!({"status": "shutting_down"}),
        );
    }
    match ctx.storage.health.migrations().await {
        Ok(v) if !v.is_empty() => {
            // Each engine with something to probe (external render services) is reported; an
            // unreachable one, or a built-in engine that could not start (models missing),
            // makes the server "degraded", still 200: the other categories keep working, so a
            // load balancer should not take the whole server out. Categories without an engine
            // are listed under "unavailable" with the reason and the fix.
            let engines = ctx.service.engines();
            let mut report = serde_json::Map::new();
            let mut degraded = ctx.degraded_builtin;
            for c in engines.categories() {
                if let Some(e) = engines.get(c) {
                    if let Some(r) = e.readiness().await {
                        degraded |= r.is_err();
                        report.insert(
                            c.as_str().into(),
                            match r {
                                Ok(()) => serde_json::json!({"engine": e.name(), "reachable": true}),
                                Err(m) => serde_json::json!({"engine": e.name(), "reachable": false, "error": m}),
                            },
                        );
                    }
                }
            }
            let unavailable: serde_json::Map<String, serde_json::Value> = ctx
                .unavailable
                .iter()
                .map(|u| {
                    (
                        u.category.as_str().to_string(),
                        serde_json::json!({"reason": u.reason, "fix": u.fix}),
                    )
                })
                .collect();
            json_reply(
                StatusCode::OK,
                &serde_json::json!({"status": if degraded { "degraded" } else { "ready" },
                                    "engines": report, "unavailable": unavailable}),
            )
        }
        Ok(_) | Err(_) => json_reply(
            StatusCode::SERVICE_UNAVAILABLE,
            &serde_json::json!({"status": "database_unavailable"}),
        ),
    }
}

async fn metrics(ctx: Ctx) -> Response {
    let jobs = match ctx.store_counts().await {
        Ok(j) => j,
        Err(e) => {
            error!(error = %e, "metrics: counting jobs failed");
            return error_reply(&ApiError::internal());
        }
    };
    let engines = ctx.service.engines();
    let mut seen = std::collections::HashSet::new();
    let mut engine_lines = String::new();
    for c in engines.categories() {
        if let Some(e) = engines.get(c) {
            if let (true, Some(lines)) = (seen.insert(e.name().to_string()), e.prometheus()) {
                engine_lines.push_str(&lines);
            }
        }
    }
    let text = ctx.metrics.encode(&jobs, &engine_lines);
    let mut resp = Response::new(text.into());
    set_header(
        &mut resp,
        "content-type",
        crate::metrics::CONTENT_TYPE.into(),
    );
    resp
}

impl AppState {
    async fn store_counts(
        &self,
    ) -> Result<std::collections::HashMap<JobStatus, u64>, vto_core::StoreError> {
        self.storage.jobs.count_by_status().await
    }
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
