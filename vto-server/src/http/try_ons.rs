//! `/v1/virtual-try-on`: create (with the body read under the size limit), get, list and
//! cancel.

use std::pin::Pin;

use bytes::{Buf, BytesMut};
use futures::{Stream, StreamExt};
use vto_core::{ApiError, CreateRequest, Created, Endpoint, ErrorCode, JobStatus};
use warp::http::{header, HeaderMap, StatusCode};
use warp::reply::Response;

use super::{authorize, finish, json_reply, set_header, unavailable_reply, Ctx};

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

pub(super) async fn create<S, B>(ctx: Ctx, headers: HeaderMap, body: S) -> Response
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
            Created::Finished(_) if created.is_busy() => {
                // Every renderer stayed busy for `sync_wait`: not the client's fault; retry.
                unavailable_reply(created.result())
            }
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

pub(super) async fn get_try_on(ctx: Ctx, id: String, headers: HeaderMap) -> Response {
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
pub(super) async fn list_try_ons(ctx: Ctx, query: String, headers: HeaderMap) -> Response {
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

pub(super) async fn cancel(ctx: Ctx, id: String, headers: HeaderMap) -> Response {
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
