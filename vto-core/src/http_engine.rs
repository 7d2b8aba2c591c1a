//! [`HttpEngine`]: any category rendered by an external HTTP render service.
//!
//! Shops that run a diffusion try-on model (IDM-VTON- or CatVTON-class) on their own GPU box put
//! it behind a small HTTP service; vto keeps doing everything else (auth, limits, billing, jobs,
//! webhooks, results) and calls the service once per job. The full protocol is in
//! `docs/render-protocol.md`; in short:
//!
//! ## The wire protocol, version 1
//!
//! `POST <url>/render` with header `vto-render-protocol: 1` and a `multipart/form-data` body of
//! three parts, in this order:
//!
//! | part      | content type          | content |
//! |-----------|-----------------------|---------|
//! | `meta`    | `application/json`    | `{"protocol":1, "request_id", "category", "mode", "person":{…}, "product":{…}, "timeout_ms"}` |
//! | `person`  | `image/png\|jpeg\|webp` | the person photo's bytes |
//! | `product` | the product's type    | a garment photo (`image/*`) or a 3D model (`model/gltf-binary`, `model/gltf+json`, `model/obj`) |
//!
//! `person` and `product` in `meta` describe the parts: `content_type`, `bytes`, and for images
//! `width` and `height`. Content types are what vto *sniffed* from the bytes, never what the
//! client's server claimed, and the bytes are what vto fetched: the render service receives
//! the inputs themselves, never the client's URLs, so it needs no internet access. A person
//! photo with an EXIF orientation is sent upright (decoded, rotated, re-encoded as PNG).
//!
//! The service answers `200` with an image body (`image/png`, `image/jpeg` or `image/webp`), or
//! an error status with `{"error":{"code":"…","message":"…"}}`; the message becomes the failed
//! job's `processing_failed` message. `GET <url>/healthz` answering `2xx` means "ready".
//!
//! **Why multipart, not JSON with base64.** The payload is two images of up to 20 MB each:
//! base64 would add a third to every byte sent, cost an encode and a decode of the whole body
//! on each side, and force both sides to hold the whole JSON in memory to parse it. Multipart
//! sends the bytes as they are, each with its own content type, and every server framework
//! (FastAPI's `UploadFile`, Flask's `request.files`, warp's `multipart::form`, Go's
//! `ParseMultipartForm`) reads it with no extra code. The small `meta` part keeps the
//! structured fields as JSON, so the protocol can grow by adding fields.
//!
//! ## Robustness
//!
//! - **Time.** Connections have `connect_timeout_ms`; the whole call, retries and backoff
//!   included, has `timeout_ms` (and the job's own deadline still applies around it). Time
//!   spent waiting for a free slot (see *Concurrency*) is bounded by the job's deadline only.
//! - **Retries** only where resending is safe and likely to help: connection errors (refused,
//!   reset before an answer, connect timeout) and `502`/`503`/`504`, with exponential backoff
//!   and jitter, at most `max_retries` times and never past the timeout. A `500` or a timeout
//!   is not retried: the service may be slow or broken on this very input.
//! - **Size.** The answer is read as a stream and abandoned past `max_response_bytes`.
//! - **Never passed through.** The returned bytes are sniffed, decoded under pixel limits
//!   ([`crate::media`]) and re-encoded by vto as PNG, so a client only ever downloads an image
//!   vto produced itself.
//! - **Concurrency.** At most `max_concurrency` calls are in flight per engine; the rest wait.
//! - **Clean failure.** Every failure becomes [`EngineError::Rejected`] with
//!   `processing_failed` and a clear message that does not leak the service's address; the
//!   detail goes to the log. The service then releases the job's hold: a failed job is never
//!   billed. Bad inputs (an HTML page served as the photo, a pixel bomb) fail before the
//!   service is called, with `unsupported_media` or `input_too_large`.
//!
//! Engine URLs come from the operator's configuration, so unlike client-supplied URLs they may
//! point at private addresses; no address guard applies here, and environment proxies are
//! ignored (render services live next to vto).
//!
//! [`HttpEngine::metrics`] counts calls, failures by kind, retries and a latency histogram for
//! `/metrics`; [`HttpEngine::probe`] checks reachability for `/readyz`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use bytes::Bytes;
use reqwest::multipart::{Form, Part};
use reqwest::StatusCode;
use serde::Serialize;
use tokio::sync::Semaphore;
use tracing::{info, warn};
use url::Url;

use crate::category::ProductInput;
use crate::engine::{Engine, EngineError, RenderInput, Rendered};
use crate::error::ErrorCode;
use crate::fetch::Fetched;
use crate::http_fetch::{read_capped, ReadError};
use crate::media::{self, ImageLimits, MediaKind, Orientation};

/// The protocol version vto speaks.
pub const PROTOCOL_VERSION: u32 = 1;
/// The header carrying [`PROTOCOL_VERSION`] on requests (and, optionally, answers).
pub const PROTOCOL_HEADER: &str = "vto-render-protocol";
/// Largest error body read from a failing service.
const MAX_ERROR_BODY: usize = 64 * 1024;
/// First retry delay; doubled per retry, capped at [`MAX_BACKOFF`].
const BASE_BACKOFF: Duration = Duration::from_millis(200);
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// Configuration of one HTTP engine. Every field has a documented default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpEngineConfig {
    /// The service's base URL; vto calls `POST <url>/render` and `GET <url>/healthz`.
    pub url: String,
    /// Budget for one render call, retries and backoff included (default 120 s).
    pub timeout_ms: u64,
    /// Budget for establishing a connection (default 3 s).
    pub connect_timeout_ms: u64,
    /// Static headers sent on every request, e.g. the render service's own token.
    pub headers: Vec<(String, String)>,
    /// Most calls in flight at once (default 4).
    pub max_concurrency: usize,
    /// Most retries after the first attempt, for connection errors and 502/503/504 (default 2).
    pub max_retries: u32,
    /// Largest accepted answer in bytes (default 32 MiB).
    pub max_response_bytes: usize,
}

impl Default for HttpEngineConfig {
    fn default() -> Self {
        Self {
            url: "http://127.0.0.1:9100".to_string(),
            timeout_ms: 120_000,
            connect_timeout_ms: 3_000,
            headers: Vec::new(),
            max_concurrency: 4,
            max_retries: 2,
            max_response_bytes: 32 * 1024 * 1024,
        }
    }
}

/// An HTTP engine that cannot be built from its configuration.
#[derive(Debug, thiserror::Error)]
pub enum HttpEngineError {
    /// The URL does not parse or is not http(s).
    #[error("invalid render service URL {url:?}: {reason}")]
    InvalidUrl {
        /// The URL.
        url: String,
        /// What is wrong.
        reason: String,
    },
    /// A configured header name or value is not valid HTTP.
    #[error("invalid header {name:?} for the render service")]
    InvalidHeader {
        /// The header name.
        name: String,
    },
    /// A numeric setting is out of range.
    #[error("invalid render service setting: {0}")]
    InvalidConfig(String),
    /// The HTTP client could not be built.
    #[error("could not build the HTTP client: {0}")]
    Client(#[from] reqwest::Error),
}

/// Why a call failed, for metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// The inputs were refused before calling the service (not an image, too large…).
    BadInput,
    /// No connection, or it broke before an answer.
    Connect,
    /// No complete answer within the timeout.
    Timeout,
    /// An error status without a protocol error body.
    Status,
    /// The service answered with a protocol error (`{"error":{…}}`).
    Rejected,
    /// The answer was not a readable image.
    BadResponse,
    /// The answer was over `max_response_bytes`.
    TooLarge,
}

impl FailureKind {
    /// Every kind, in a fixed order.
    pub const ALL: [FailureKind; 7] = [
        FailureKind::BadInput,
        FailureKind::Connect,
        FailureKind::Timeout,
        FailureKind::Status,
        FailureKind::Rejected,
        FailureKind::BadResponse,
        FailureKind::TooLarge,
    ];

    /// The label value used in metrics.
    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::BadInput => "bad_input",
            FailureKind::Connect => "connect",
            FailureKind::Timeout => "timeout",
            FailureKind::Status => "status",
            FailureKind::Rejected => "rejected",
            FailureKind::BadResponse => "bad_response",
            FailureKind::TooLarge => "too_large",
        }
    }
}

/// Upper bounds (milliseconds) of the latency histogram's buckets; a last `+Inf` bucket
/// follows.
pub const LATENCY_BUCKETS_MS: [u64; 12] = [
    50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000, 120_000, 300_000,
];

/// A snapshot of one engine's counters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EngineMetrics {
    /// The engine's name.
    pub engine: String,
    /// Render calls started. `calls - successes - failures - in_flight` were abandoned
    /// half-way (the job's deadline or a cancel dropped them).
    pub calls: u64,
    /// Calls that produced an image.
    pub successes: u64,
    /// Failed calls by kind (every kind listed, zeros included).
    pub failures: Vec<(FailureKind, u64)>,
    /// HTTP requests sent, retries included.
    pub attempts: u64,
    /// Retries (attempts after the first of a call).
    pub retries: u64,
    /// Calls in progress now (waiting for a slot or talking to the service).
    pub in_flight: u64,
    /// Cumulative latency counts: `latency_buckets[i]` calls took at most
    /// `LATENCY_BUCKETS_MS[i]` ms; the last entry counts every finished call (`+Inf`).
    pub latency_buckets: Vec<u64>,
    /// Sum of finished calls' latencies in milliseconds.
    pub latency_sum_ms: u64,
}

impl EngineMetrics {
    /// Failed calls of one kind.
    pub fn failures_of(&self, kind: FailureKind) -> u64 {
        self.failures
            .iter()
            .find(|(k, _)| *k == kind)
            .map_or(0, |(_, n)| *n)
    }

    /// Failed calls of every kind.
    pub fn total_failures(&self) -> u64 {
        self.failures.iter().map(|(_, n)| n).sum()
    }

    /// The counters in Prometheus text format (samples only; the caller writes one `# TYPE`
    /// line per family when it combines several engines): `vto_engine_calls_total`,
    /// `vto_engine_successes_total`, `vto_engine_failures_total{kind}`,
    /// `vto_engine_attempts_total`, `vto_engine_retries_total`, `vto_engine_in_flight`,
    /// `vto_engine_latency_ms_bucket{le}`, `_sum`, `_count`, each labelled `engine`.
    pub fn to_prometheus(&self) -> String {
        use std::fmt::Write as _;
        let e = self.engine.replace('\\', "\\\\").replace('"', "\\\"");
        let mut s = String::new();
        let _ = writeln!(s, "vto_engine_calls_total{{engine=\"{e}\"}} {}", self.calls);
        let _ = writeln!(
            s,
            "vto_engine_successes_total{{engine=\"{e}\"}} {}",
            self.successes
        );
        for (kind, n) in &self.failures {
            let _ = writeln!(
                s,
                "vto_engine_failures_total{{engine=\"{e}\",kind=\"{}\"}} {n}",
                kind.as_str()
            );
        }
        let _ = writeln!(
            s,
            "vto_engine_attempts_total{{engine=\"{e}\"}} {}",
            self.attempts
        );
        let _ = writeln!(
            s,
            "vto_engine_retries_total{{engine=\"{e}\"}} {}",
            self.retries
        );
        let _ = writeln!(
            s,
            "vto_engine_in_flight{{engine=\"{e}\"}} {}",
            self.in_flight
        );
        for (i, n) in self.latency_buckets.iter().enumerate() {
            let le = LATENCY_BUCKETS_MS
                .get(i)
                .map_or("+Inf".to_string(), |b| b.to_string());
            let _ = writeln!(
                s,
                "vto_engine_latency_ms_bucket{{engine=\"{e}\",le=\"{le}\"}} {n}"
            );
        }
        let count = self.latency_buckets.last().copied().unwrap_or(0);
        let _ = writeln!(
            s,
            "vto_engine_latency_ms_sum{{engine=\"{e}\"}} {}",
            self.latency_sum_ms
        );
        let _ = writeln!(s, "vto_engine_latency_ms_count{{engine=\"{e}\"}} {count}");
        s
    }
}

#[derive(Debug, Default)]
struct Counters {
    calls: AtomicU64,
    successes: AtomicU64,
    failures: [AtomicU64; FailureKind::ALL.len()],
    attempts: AtomicU64,
    retries: AtomicU64,
    in_flight: AtomicU64,
    /// Non-cumulative per-bucket counts, `+Inf` last.
    buckets: [AtomicU64; LATENCY_BUCKETS_MS.len() + 1],
    latency_sum_ms: AtomicU64,
}

impl Counters {
    fn finish(&self, elapsed: Duration, outcome: Result<(), FailureKind>) {
        let ms = elapsed.as_millis() as u64;
        let i = LATENCY_BUCKETS_MS
            .iter()
            .position(|b| ms <= *b)
            .unwrap_or(LATENCY_BUCKETS_MS.len());
        self.buckets[i].fetch_add(1, Ordering::Relaxed);
        self.latency_sum_ms.fetch_add(ms, Ordering::Relaxed);
        match outcome {
            Ok(()) => self.successes.fetch_add(1, Ordering::Relaxed),
            Err(kind) => {
                let i = FailureKind::ALL
                    .iter()
                    .position(|k| *k == kind)
                    .expect("every kind is listed");
                self.failures[i].fetch_add(1, Ordering::Relaxed)
            }
        };
    }
}

/// Counts a call in flight until dropped, so a call abandoned mid-way (the job's deadline
/// dropped the future) does not stay "in flight" forever.
struct InFlight<'a>(&'a AtomicU64);

impl<'a> InFlight<'a> {
    fn enter(gauge: &'a AtomicU64) -> Self {
        gauge.fetch_add(1, Ordering::Relaxed);
        Self(gauge)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A failed call: a kind for metrics, a client-facing message, a detail for the log.
#[derive(Debug)]
struct Failure {
    kind: FailureKind,
    code: ErrorCode,
    message: String,
    detail: String,
}

impl Failure {
    fn new(kind: FailureKind, message: impl Into<String>, detail: impl Into<String>) -> Self {
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
struct PartData {
    bytes: Bytes,
    kind: MediaKind,
    meta: serde_json::Value,
}

/// An [`Engine`] that calls an external render service (see the module docs).
#[derive(Debug)]
pub struct HttpEngine {
    name: String,
    config: HttpEngineConfig,
    render_url: Url,
    health_url: Url,
    client: reqwest::Client,
    slots: Arc<Semaphore>,
    image_limits: ImageLimits,
    counters: Counters,
}

impl HttpEngine {
    /// An engine named `name` (for logs and metrics) calling the service at `cfg.url`.
    pub fn new(name: &str, cfg: HttpEngineConfig) -> Result<HttpEngine, HttpEngineError> {
        let invalid = |reason: &str| HttpEngineError::InvalidUrl {
            url: cfg.url.clone(),
            reason: reason.to_string(),
        };
        let mut base = Url::parse(&cfg.url).map_err(|e| invalid(&e.to_string()))?;
        if !matches!(base.scheme(), "http" | "https") {
            return Err(invalid("the scheme must be http or https"));
        }
        if base.query().is_some() || base.fragment().is_some() {
            return Err(invalid("the URL must not have a query or fragment"));
        }
        if !base.path().ends_with('/') {
            let path = format!("{}/", base.path());
            base.set_path(&path);
        }
        let render_url = base.join("render").map_err(|e| invalid(&e.to_string()))?;
        let health_url = base.join("healthz").map_err(|e| invalid(&e.to_string()))?;
        if cfg.max_concurrency == 0 {
            return Err(HttpEngineError::InvalidConfig(
                "max_concurrency must be at least 1".into(),
            ));
        }
        if cfg.timeout_ms == 0 || cfg.connect_timeout_ms == 0 {
            return Err(HttpEngineError::InvalidConfig(
                "timeouts must be positive".into(),
            ));
        }
        if cfg.max_response_bytes == 0 {
            return Err(HttpEngineError::InvalidConfig(
                "max_response_bytes must be positive".into(),
            ));
        }
        let mut headers = reqwest::header::HeaderMap::new();
        for (name, value) in &cfg.headers {
            let invalid = || HttpEngineError::InvalidHeader { name: name.clone() };
            let n =
                reqwest::header::HeaderName::from_bytes(name.as_bytes()).map_err(|_| invalid())?;
            let mut v = reqwest::header::HeaderValue::from_str(value).map_err(|_| invalid())?;
            v.set_sensitive(true);
            headers.append(n, v);
        }
        headers.insert(
            PROTOCOL_HEADER,
            reqwest::header::HeaderValue::from(PROTOCOL_VERSION),
        );
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_millis(cfg.connect_timeout_ms))
            .default_headers(headers)
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(format!("vto/{}", env!("CARGO_PKG_VERSION")))
            .build()?;
        Ok(HttpEngine {
            name: name.to_string(),
            slots: Arc::new(Semaphore::new(cfg.max_concurrency)),
            config: cfg,
            render_url,
            health_url,
            client,
            image_limits: ImageLimits::default(),
            counters: Counters::default(),
        })
    }

    /// Replaces the pixel limits applied to inputs and to the service's answers.
    pub fn with_image_limits(mut self, limits: ImageLimits) -> Self {
        self.image_limits = limits;
        self
    }

    /// The configuration.
    pub fn config(&self) -> &HttpEngineConfig {
        &self.config
    }

    /// Whether the service is reachable: `GET <url>/healthz` answers 2xx within the connect
    /// timeout plus 2 s. The error is for operators (`/readyz`), not clients.
    pub async fn probe(&self) -> Result<(), String> {
        let budget = Duration::from_millis(self.config.connect_timeout_ms) + Duration::from_secs(2);
        match self
            .client
            .get(self.health_url.clone())
            .timeout(budget)
            .send()
            .await
        {
            Ok(r) if r.status().is_success() => Ok(()),
            Ok(r) => Err(format!(
                "{} answered HTTP {}",
                self.health_url,
                r.status().as_u16()
            )),
            Err(e) if e.is_timeout() => Err(format!(
                "{} did not answer within {} ms",
                self.health_url,
                budget.as_millis()
            )),
            Err(e) => Err(format!("{} is unreachable: {}", self.health_url, chain(&e))),
        }
    }

    /// A snapshot of the counters.
    pub fn metrics(&self) -> EngineMetrics {
        let c = &self.counters;
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let mut cumulative = 0;
        let latency_buckets = c
            .buckets
            .iter()
            .map(|b| {
                cumulative += load(b);
                cumulative
            })
            .collect();
        EngineMetrics {
            engine: self.name.clone(),
            calls: load(&c.calls),
            successes: load(&c.successes),
            failures: FailureKind::ALL
                .iter()
                .zip(&c.failures)
                .map(|(k, n)| (*k, load(n)))
                .collect(),
            attempts: load(&c.attempts),
            retries: load(&c.retries),
            in_flight: load(&c.in_flight),
            latency_buckets,
            latency_sum_ms: load(&c.latency_sum_ms),
        }
    }

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

    async fn call(&self, input: RenderInput<'_>) -> Result<(Rendered, u32), Failure> {
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
        if media::sniff(&body).is_none_or(|k| !k.is_image()) {
            if let Some(err) = protocol_error(&body) {
                return Err(err);
            }
        }
        let limits = self.image_limits;
        let decoded = tokio::task::spawn_blocking(move || {
            let img = media::decode_image(&body, &limits)?;
            let kind = media::sniff(&body);
            let png = media::encode_png(&img)?;
            Ok::<_, media::MediaError>((png, kind, img.width(), img.height()))
        })
        .await
        .map_err(|e| {
            Failure::new(
                FailureKind::BadResponse,
                "the render service's image could not be read",
                e.to_string(),
            )
        })?;
        let (png, kind, width, height) = decoded.map_err(|e| {
            Failure::new(
                FailureKind::BadResponse,
                format!("the render service returned an unusable image: {e}"),
                e.to_string(),
            )
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
fn protocol_error(body: &[u8]) -> Option<Failure> {
    let v: serde_json::Value = serde_json::from_slice(body).ok()?;
    let err = v.get("error")?;
    let message = clean(err.get("message")?.as_str()?);
    let code = err.get("code").and_then(|c| c.as_str()).map(clean);
    let text = match &code {
        Some(c) if !c.is_empty() => {
            format!("the render service could not process the request: {message} ({c})")
        }
        _ => format!("the render service could not process the request: {message}"),
    };
    Some(Failure::new(FailureKind::Rejected, text, String::new()))
}

/// A service-supplied string made safe to show: no control characters, at most 300 chars.
fn clean(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_control())
        .take(300)
        .collect::<String>()
        .trim()
        .to_string()
}

/// Delay before retry number `attempt` (1-based): 200 ms × 2^(attempt−1), capped at 5 s, minus
/// up to a quarter of random jitter so that engines recovering together are not hit in step.
fn backoff(attempt: u32) -> Duration {
    let base = BASE_BACKOFF
        .saturating_mul(1u32 << (attempt - 1).min(10))
        .min(MAX_BACKOFF);
    let jitter = getrandom::u64().unwrap_or(0) % (base.as_millis() as u64 / 4 + 1);
    base - Duration::from_millis(jitter)
}

/// An error with its causes, for logs.
fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut source = e.source();
    while let Some(c) = source {
        s.push_str(": ");
        s.push_str(&c.to_string());
        source = c.source();
    }
    s
}

#[async_trait]
impl Engine for HttpEngine {
    fn name(&self) -> &str {
        &self.name
    }

    async fn readiness(&self) -> Option<Result<(), String>> {
        Some(HttpEngine::probe(self).await)
    }

    fn prometheus(&self) -> Option<String> {
        Some(self.metrics().to_prometheus())
    }

    async fn render(&self, input: RenderInput<'_>) -> Result<Rendered, EngineError> {
        let started = Instant::now();
        self.counters.calls.fetch_add(1, Ordering::Relaxed);
        let _in_flight = InFlight::enter(&self.counters.in_flight);
        let outcome = self.call(input).await;
        self.counters.finish(
            started.elapsed(),
            outcome.as_ref().map(|_| ()).map_err(|f| f.kind),
        );
        match outcome {
            Ok((mut rendered, attempts)) => {
                rendered.metadata["attempts"] = attempts.into();
                info!(request_id = %input.request_id, engine = %self.name, attempts, "render service answered");
                Ok(rendered)
            }
            Err(f) => {
                warn!(
                    request_id = %input.request_id,
                    engine = %self.name,
                    kind = f.kind.as_str(),
                    detail = %f.detail,
                    "render service call failed: {}", f.message
                );
                Err(EngineError::Rejected {
                    code: f.code,
                    message: f.message,
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_derived_from_the_base() {
        let e = HttpEngine::new(
            "t",
            HttpEngineConfig {
                url: "http://10.0.0.5:9000/vton".into(),
                ..HttpEngineConfig::default()
            },
        )
        .unwrap();
        assert_eq!(e.render_url.as_str(), "http://10.0.0.5:9000/vton/render");
        assert_eq!(e.health_url.as_str(), "http://10.0.0.5:9000/vton/healthz");
    }

    #[test]
    fn bad_configs_are_refused() {
        let with = |f: fn(&mut HttpEngineConfig)| {
            let mut c = HttpEngineConfig::default();
            f(&mut c);
            HttpEngine::new("t", c).err()
        };
        assert!(matches!(
            with(|c| c.url = "ftp://x/".into()),
            Some(HttpEngineError::InvalidUrl { .. })
        ));
        assert!(matches!(
            with(|c| c.url = "not a url".into()),
            Some(HttpEngineError::InvalidUrl { .. })
        ));
        assert!(matches!(
            with(|c| c.max_concurrency = 0),
            Some(HttpEngineError::InvalidConfig(_))
        ));
        assert!(matches!(
            with(|c| c.headers = vec![("bad header".into(), "x".into())]),
            Some(HttpEngineError::InvalidHeader { .. })
        ));
        assert!(
            with(|c| c.headers = vec![("authorization".into(), "Bearer s3cret".into())]).is_none()
        );
    }

    #[test]
    fn backoff_doubles_is_capped_and_jittered_down_only() {
        for attempt in 1..=12 {
            let b = backoff(attempt);
            let base = BASE_BACKOFF
                .saturating_mul(1 << (attempt - 1).min(10))
                .min(MAX_BACKOFF);
            assert!(
                b <= base && b >= base * 3 / 4,
                "attempt {attempt}: {b:?} vs {base:?}"
            );
        }
        assert!(backoff(20) <= MAX_BACKOFF);
    }

    #[test]
    fn protocol_errors_become_clean_messages() {
        let f = protocol_error(br#"{"error":{"code":"no_person","message":"no person\nfound"}}"#)
            .unwrap();
        assert_eq!(f.kind, FailureKind::Rejected);
        assert_eq!(f.code, ErrorCode::ProcessingFailed);
        assert_eq!(
            f.message,
            "the render service could not process the request: no personfound (no_person)"
        );
        assert!(protocol_error(b"<html>oops</html>").is_none());
        assert!(protocol_error(br#"{"detail":"x"}"#).is_none());
    }

    #[test]
    fn prometheus_text_has_every_family() {
        let e = HttpEngine::new("dress-http", HttpEngineConfig::default()).unwrap();
        e.counters.calls.fetch_add(1, Ordering::Relaxed);
        let gauge = InFlight::enter(&e.counters.in_flight);
        assert_eq!(e.metrics().in_flight, 1);
        e.counters
            .finish(Duration::from_millis(120), Err(FailureKind::Timeout));
        drop(gauge);
        let m = e.metrics();
        assert_eq!(m.failures_of(FailureKind::Timeout), 1);
        assert_eq!(m.latency_buckets[1], 0, "120 ms is not <= 100 ms");
        assert_eq!(m.latency_buckets[2], 1);
        assert_eq!(*m.latency_buckets.last().unwrap(), 1);
        let text = m.to_prometheus();
        assert!(
            text.contains("vto_engine_calls_total{engine=\"dress-http\"} 1"),
            "{text}"
        );
        assert!(
            text.contains("vto_engine_failures_total{engine=\"dress-http\",kind=\"timeout\"} 1")
        );
        assert!(text.contains("vto_engine_latency_ms_bucket{engine=\"dress-http\",le=\"+Inf\"} 1"));
        assert!(text.contains("vto_engine_in_flight{engine=\"dress-http\"} 0"));
    }
}
