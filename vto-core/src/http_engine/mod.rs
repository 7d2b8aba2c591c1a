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

mod call;
mod config;
mod metrics;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use tokio::sync::Semaphore;
use tracing::{info, warn};
use url::Url;

use crate::engine::{Engine, EngineError, RenderInput, Rendered};
use crate::media::ImageLimits;

pub use config::{HttpEngineConfig, HttpEngineError};
pub use metrics::{EngineMetrics, FailureKind, LATENCY_BUCKETS_MS};

use metrics::{Counters, InFlight};

/// The protocol version vto speaks.
pub const PROTOCOL_VERSION: u32 = 1;
/// The header carrying [`PROTOCOL_VERSION`] on requests (and, optionally, answers).
pub const PROTOCOL_HEADER: &str = "vto-render-protocol";

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
    use super::call::{backoff, protocol_error, BASE_BACKOFF, MAX_BACKOFF};
    use super::*;
    use crate::error::ErrorCode;

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
