//! One render call: the inputs checked and described (`meta`), the multipart form, the
//! request with retries and backoff under the time budget, and the answer read back as an
//! image or a protocol error.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use bytes::Bytes;
use reqwest::multipart::{Form, Part};
use reqwest::StatusCode;
use tracing::warn;

use crate::category::ProductInput;
use crate::engine::{RenderInput, Rendered};
use crate::error::ErrorCode;
use crate::fetch::Fetched;
use crate::http_fetch::{read_capped, ReadError};
use crate::media;
use crate::media::{MediaKind, Orientation};
use crate::render_reply::{self, Rejection, ReplyError, ReplyImage};

use super::metrics::FailureKind;
use super::HttpEngine;
use super::{chain, PROTOCOL_HEADER, PROTOCOL_VERSION};

/// Largest error body read from a failing service.
const MAX_ERROR_BODY: usize = 64 * 1024;
/// First retry delay; doubled per retry, capped at [`MAX_BACKOFF`].
pub(super) const BASE_BACKOFF: Duration = Duration::from_millis(200);
pub(super) const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// A failed call: a kind for metrics, a client-facing message, a detail for the log.
#[derive(Debug)]
pub(super) struct Failure {
    pub(super) kind: FailureKind,
    pub(super) code: ErrorCode,
    pub(super) message: String,
    pub(super) detail: String,
}

impl Failure {
    pub(super) fn new(
        kind: FailureKind,
        message: impl Into<String>,
        detail: impl Into<String>,
    ) -> Self {
        Self {
            kind,
            code: ErrorCode::ProcessingFailed,
            message: message.into(),
            detail: detail.into(),
        }
    }
}

/// One prepared input part.
#[derive(Debug, Clone)]
pub(super) struct PartData {
    bytes: Bytes,
    pub(super) kind: MediaKind,
    meta: serde_json::Value,
}

impl HttpEngine {
    /// Sniffs and checks one input, and describes it for `meta`.
    async fn prepare(
        &self,
        what: &str,
        input: &Fetched,
        want: ProductInput,
    ) -> Result<PartData, Failure> {
        let bad = |e: media::MediaError| Failure {
            kind: FailureKind::BadInput,
            code: e.code(),
            message: format!("{what}: {e}"),
            detail: String::new(),
        };
        if want == ProductInput::Model {
            let kind = media::sniff_model(&input.bytes).map_err(bad)?;
            return Ok(PartData {
                bytes: Bytes::copy_from_slice(&input.bytes),
                kind,
                meta: serde_json::json!({
                    "content_type": kind.content_type(),
                    "bytes": input.bytes.len(),
                }),
            });
        }
        let info = media::probe_image(&input.bytes, &self.image_limits).map_err(bad)?;
        let (kind, bytes) = if info.orientation == Orientation::NoTransforms {
            (info.kind, Bytes::copy_from_slice(&input.bytes))
        } else {
            // Send it upright: the render service should not have to know EXIF.
            let owned = input.bytes.clone();
            let limits = self.image_limits;
            let png = tokio::task::spawn_blocking(move || {
                media::decode_image(&owned, &limits).and_then(|img| media::encode_png(&img))
            })
            .await
            .map_err(|e| {
                Failure::new(
                    FailureKind::BadInput,
                    "the input could not be decoded",
                    e.to_string(),
                )
            })?
            .map_err(bad)?;
            (MediaKind::Png, Bytes::from(png))
        };
        let (width, height) = info.oriented_dimensions();
        Ok(PartData {
            meta: serde_json::json!({
                "content_type": kind.content_type(),
                "bytes": bytes.len(),
                "width": width,
                "height": height,
            }),
            bytes,
            kind,
        })
    }

    fn form(&self, meta: &str, person: &PartData, product: &PartData) -> Result<Form, Failure> {
        let part = |data: &PartData, name: &str| {
            Part::stream_with_length(
                reqwest::Body::from(data.bytes.clone()),
                data.bytes.len() as u64,
            )
            .file_name(format!("{name}.{}", data.kind.extension()))
            .mime_str(data.kind.content_type())
        };
        let internal = |e: reqwest::Error| {
            Failure::new(
                FailureKind::BadInput,
                "the request to the render service could not be built",
                e.to_string(),
            )
        };
        Ok(Form::new()
            .part(
                "meta",
                Part::text(meta.to_string())
                    .mime_str("application/json")
                    .map_err(internal)?,
            )
            .part("person", part(person, "person").map_err(internal)?)
            .part("product", part(product, "product").map_err(internal)?))
    }

    pub(super) async fn call(&self, input: RenderInput<'_>) -> Result<(Rendered, u32), Failure> {
        let person = self
            .prepare("person_image", input.person, ProductInput::Image)
            .await?;
        let product = self
            .prepare(
                input.category.product_input().field(),
                input.product,
                input.category.product_input(),
            )
            .await?;
        let meta = serde_json::json!({
            "protocol": PROTOCOL_VERSION,
            "request_id": input.request_id.to_string(),
            "category": input.category.as_str(),
            "mode": if input.category.is_sync() { "synchronous" } else { "asynchronous" },
            "person": person.meta,
            "product": product.meta,
            "timeout_ms": self.config.timeout_ms,
        })
        .to_string();

        let _slot = self.slots.acquire().await.map_err(|e| {
            Failure::new(
                FailureKind::Connect,
                "the render service is unavailable",
                e.to_string(),
            )
        })?;
        let deadline = Instant::now() + Duration::from_millis(self.config.timeout_ms);
        let timeout_failure = |detail: String| {
            Failure::new(
                FailureKind::Timeout,
                format!(
                    "the render service did not answer within {} ms",
                    self.config.timeout_ms
                ),
                detail,
            )
        };
        let mut attempt = 0u32;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(timeout_failure("budget spent before the attempt".into()));
            }
            attempt += 1;
            self.counters.attempts.fetch_add(1, Ordering::Relaxed);
            if attempt > 1 {
                self.counters.retries.fetch_add(1, Ordering::Relaxed);
            }
            let form = self.form(&meta, &person, &product)?;
            let sent = self
                .client
                .post(self.render_url.clone())
                .timeout(left)
                .multipart(form)
                .send()
                .await;
            let failure = match sent {
                Err(e) if e.is_connect() => Failure::new(
                    FailureKind::Connect,
                    "the render service is unavailable",
                    chain(&e),
                ),
                Err(e) if e.is_timeout() => return Err(timeout_failure(chain(&e))),
                Err(e) => {
                    return Err(Failure::new(
                        FailureKind::Connect,
                        "the connection to the render service broke",
                        chain(&e),
                    ))
                }
                Ok(resp) => {
                    let status = resp.status();
                    if status.is_success() {
                        return self
                            .read_image(resp, &timeout_failure)
                            .await
                            .map(|r| (r, attempt));
                    }
                    let failure = self.read_error(status, resp).await;
                    if !matches!(
                        status,
                        StatusCode::BAD_GATEWAY
                            | StatusCode::SERVICE_UNAVAILABLE
                            | StatusCode::GATEWAY_TIMEOUT
                    ) {
                        return Err(failure);
                    }
                    failure
                }
            };
            // Retryable: a connection error or 502/503/504.
            if attempt > self.config.max_retries {
                return Err(failure);
            }
            let backoff = backoff(attempt);
            if deadline.saturating_duration_since(Instant::now()) <= backoff {
                return Err(failure);
            }
            warn!(engine = %self.name, attempt, detail = %failure.detail, "render service failed; retrying");
            tokio::time::sleep(backoff).await;
        }
    }

    async fn read_image(
        &self,
        resp: reqwest::Response,
        timeout_failure: &(dyn Fn(String) -> Failure + Sync),
    ) -> Result<Rendered, Failure> {
        if let Some(v) = resp.headers().get(PROTOCOL_HEADER) {
            if v.to_str().ok().and_then(|s| s.trim().parse::<u32>().ok()) != Some(PROTOCOL_VERSION)
            {
                return Err(Failure::new(
                    FailureKind::BadResponse,
                    "the render service speaks another protocol version",
                    format!("{PROTOCOL_HEADER}: {v:?}"),
                ));
            }
        }
        let cap = self.config.max_response_bytes;
        let body = match read_capped(resp, cap).await {
            Ok(b) => b,
            Err(ReadError::TooLarge) => {
                return Err(Failure::new(
                    FailureKind::TooLarge,
                    format!("the render service's answer exceeded the {cap}-byte limit"),
                    String::new(),
                ))
            }
            Err(ReadError::Transport(e)) if e.is_timeout() => {
                return Err(timeout_failure(chain(&e)))
            }
            Err(ReadError::Transport(e)) => {
                return Err(Failure::new(
                    FailureKind::Connect,
                    "the connection to the render service broke while reading its answer",
                    chain(&e),
                ))
            }
        };
        let limits = self.image_limits;
        let read = tokio::task::spawn_blocking(move || render_reply::read_image(&body, &limits))
            .await
            .map_err(|e| {
                Failure::new(
                    FailureKind::BadResponse,
                    "the render service's image could not be read",
                    e.to_string(),
                )
            })?;
        let ReplyImage {
            png,
            returned: kind,
            width,
            height,
        } = read.map_err(|e| match &e {
            ReplyError::Rejected(r) => rejected(r),
            ReplyError::Unusable(m) => {
                Failure::new(FailureKind::BadResponse, e.to_string(), m.to_string())
            }
        })?;
        Ok(Rendered {
            image: png,
            content_type: "image/png".to_string(),
            metadata: serde_json::json!({
                "engine": self.name,
                "engine_kind": "http",
                "returned_format": kind.map(MediaKind::content_type),
                "width": width,
                "height": height,
            }),
        })
    }

    async fn read_error(&self, status: StatusCode, resp: reqwest::Response) -> Failure {
        let body = read_capped(resp, MAX_ERROR_BODY).await.unwrap_or_default();
        protocol_error(&body).unwrap_or_else(|| {
            Failure::new(
                FailureKind::Status,
                format!("the render service failed (HTTP {})", status.as_u16()),
                String::from_utf8_lossy(&body[..body.len().min(300)]).into_owned(),
            )
        })
    }
}

/// `{"error":{"code","message"}}` → a rejection carrying the service's words.
pub(super) fn protocol_error(body: &[u8]) -> Option<Failure> {
    render_reply::rejection(body).map(|r| rejected(&r))
}

fn rejected(r: &Rejection) -> Failure {
    Failure::new(FailureKind::Rejected, r.to_string(), String::new())
}

/// Delay before retry number `attempt` (1-based): 200 ms × 2^(attempt−1), capped at 5 s, minus
/// up to a quarter of random jitter so that engines recovering together are not hit in step.
pub(super) fn backoff(attempt: u32) -> Duration {
    let base = BASE_BACKOFF
        .saturating_mul(1u32 << (attempt - 1).min(10))
        .min(MAX_BACKOFF);
    let jitter = getrandom::u64().unwrap_or(0) % (base.as_millis() as u64 / 4 + 1);
    base - Duration::from_millis(jitter)
}
