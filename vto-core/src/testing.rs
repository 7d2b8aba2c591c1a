//! Test doubles and helpers shared by the workspace's tests (feature `testing`; production code
//! never imports it): engines that echo the person photo or never finish, a render service on
//! loopback for the HTTP engine, and small valid PNGs and `data:` URLs to send as inputs.
//!
//! Every double says what it is in its [`Engine::name`], so a log or a metric line from a test
//! never looks like a real renderer's.

use std::io::Cursor;
use std::net::SocketAddr;
use std::time::Duration;

use async_trait::async_trait;
use base64::Engine as _;
use warp::Filter as _;

use crate::engine::{Engine, EngineError, RenderInput, Rendered};

/// TEST DOUBLE: "renders" by returning the person photo's bytes, optionally behind the
/// marker `ECHO:` (so a test can tell a rendered result from its input). A product whose
/// bytes are `fail` is rejected as a photo without a face (`processing_failed`); one whose
/// bytes are `busy` as a renderer too busy to start it (`service_unavailable`).
#[derive(Debug, Clone, Default)]
pub struct EchoEngine {
    marked: bool,
}

impl EchoEngine {
    /// Returns the person photo unchanged (a valid image whenever the input is one).
    pub fn new() -> Self {
        Self { marked: false }
    }

    /// Returns `ECHO:` followed by the person photo's bytes.
    pub fn marked() -> Self {
        Self { marked: true }
    }
}

#[async_trait]
impl Engine for EchoEngine {
    fn name(&self) -> &str {
        "echo-test-engine"
    }

    async fn render(&self, input: RenderInput<'_>) -> Result<Rendered, EngineError> {
        if input.product.bytes == b"fail" {
            return Err(EngineError::processing("no face found in person_image"));
        }
        if input.product.bytes == b"busy" {
            return Err(EngineError::Rejected {
                code: crate::error::ErrorCode::ServiceUnavailable,
                message: "all 1 render pipelines stayed busy for 30 s; retry later".into(),
            });
        }
        let mut image = if self.marked {
            b"ECHO:".to_vec()
        } else {
            Vec::new()
        };
        image.extend_from_slice(&input.person.bytes);
        Ok(Rendered {
            image,
            content_type: "image/png".into(),
            metadata: serde_json::json!({}),
        })
    }
}

/// TEST DOUBLE: a render that never finishes (jobs stay `processing` until their deadline or
/// a cancel; a benchmark of the API path keeps every job queued behind it).
#[derive(Debug, Clone, Copy, Default)]
pub struct NeverEngine;

#[async_trait]
impl Engine for NeverEngine {
    fn name(&self) -> &str {
        "never-test-engine"
    }

    async fn render(&self, _input: RenderInput<'_>) -> Result<Rendered, EngineError> {
        std::future::pending().await
    }
}

/// TEST DOUBLE render service on loopback (the render protocol's two routes): answers every
/// `POST /render` with 200 and `reply` as `image/png` after `delay`, and `GET /healthz` with
/// 200. Returns the address it listens on; it serves until the test's runtime ends.
pub async fn render_service(reply: Vec<u8>, delay: Duration) -> SocketAddr {
    let render = warp::post()
        .and(warp::path("render"))
        .and(warp::body::bytes())
        .then(move |_body: bytes::Bytes| {
            let reply = reply.clone();
            async move {
                tokio::time::sleep(delay).await;
                warp::http::Response::builder()
                    .header("content-type", "image/png")
                    .body(reply)
                    .expect("a static response")
            }
        });
    let health = warp::get().and(warp::path("healthz")).map(warp::reply);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("binding a loopback port");
    let addr = listener.local_addr().expect("a bound listener's address");
    tokio::spawn(warp::serve(render.or(health)).incoming(listener).run());
    addr
}

/// `(file name, bytes)` of every input the fuzz target `target` found and the workspace keeps
/// (`fuzz/regressions/TARGET/`), sorted by name; none when the folder is missing. Each file's
/// name starts with the outcome it must have ([`regression_outcome`]).
pub fn regression_inputs(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/regressions")
        .join(target);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut files: Vec<(String, Vec<u8>)> = entries
        .map(|e| {
            let path = e.expect("a readable regressions folder").path();
            let name = path
                .file_name()
                .expect("a file name")
                .to_string_lossy()
                .into_owned();
            let bytes = std::fs::read(&path).expect("a readable regression input");
            (name, bytes)
        })
        .collect();
    files.sort();
    files
}

/// The outcome a regression input's file name promises: the part before its first `-` (an
/// error code, or `ok`).
pub fn regression_outcome(name: &str) -> &str {
    name.split('-').next().unwrap_or(name)
}

/// A `w`×`h` PNG of one colour.
pub fn png(w: u32, h: u32, rgb: [u8; 3]) -> Vec<u8> {
    let img = image::RgbImage::from_pixel(w, h, image::Rgb(rgb));
    let mut out = Cursor::new(Vec::new());
    image::DynamicImage::ImageRgb8(img)
        .write_to(&mut out, image::ImageFormat::Png)
        .expect("encoding a PNG in memory");
    out.into_inner()
}

/// `bytes` as a base64 `data:` URL of media type `mime`.
pub fn data_url(mime: &str, bytes: &[u8]) -> String {
    format!(
        "data:{mime};base64,{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    )
}

/// A new account on `svc` named `shop` with `funds` credited (none when zero) and one API key,
/// authenticated: the caller most service tests start from.
pub async fn funded_caller(
    svc: &crate::service::TryOnService,
    funds: rust_decimal::Decimal,
) -> crate::service::Caller {
    let acct = svc
        .create_account("shop")
        .await
        .expect("creating a test account");
    if !funds.is_zero() {
        svc.add_funds(&acct.id, funds, "top-up")
            .await
            .expect("crediting a test account");
    }
    let key = svc
        .create_api_key(&acct.id, "test")
        .await
        .expect("creating a test API key");
    svc.authenticate(Some(&key.secret))
        .await
        .expect("authenticating with a fresh key")
}

/// A service on in-memory backends with a [`crate::FakeClock`] and sequential ids, one engine
/// registered for one category, and a caller funded by [`funded_caller`]: the world the
/// service's integration tests start from.
pub struct Bench {
    /// The clock the backends and the service read.
    pub clock: std::sync::Arc<crate::FakeClock>,
    /// The in-memory backends (their store and queue, to look into).
    pub mem: crate::MemoryBackends,
    /// The service.
    pub svc: crate::service::TryOnService,
    /// A funded, authenticated caller.
    pub caller: crate::service::Caller,
}

/// A [`Bench`] whose only engine is `engine` for `category`, its caller funded with `funds`,
/// the service configured by default.
pub async fn bench(
    category: crate::Category,
    engine: std::sync::Arc<dyn Engine>,
    funds: rust_decimal::Decimal,
) -> Bench {
    let clock = std::sync::Arc::new(crate::FakeClock::default());
    let mem = crate::Backends::in_memory_with(
        clock.clone(),
        std::sync::Arc::new(crate::SequentialIds::default()),
    );
    let mut engines = crate::Engines::new();
    engines.register(category, engine);
    let svc = crate::service::TryOnService::new(
        mem.backends.clone(),
        engines,
        crate::ServiceConfig::default(),
    );
    let caller = funded_caller(&svc, funds).await;
    Bench {
        clock,
        mem,
        svc,
        caller,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_png_decodes_to_its_size_and_colour_and_the_data_url_round_trips() {
        let bytes = png(3, 2, [1, 2, 3]);
        let img = image::load_from_memory(&bytes).unwrap().to_rgb8();
        assert_eq!((img.width(), img.height()), (3, 2));
        assert_eq!(img.get_pixel(2, 1).0, [1, 2, 3]);
        let url = data_url("image/png", &bytes);
        let b64 = url.strip_prefix("data:image/png;base64,").unwrap();
        let back = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .unwrap();
        assert_eq!(back, bytes);
    }

    #[tokio::test]
    async fn the_render_service_answers_renders_with_its_reply_and_health_with_ok() {
        let addr = render_service(b"reply".to_vec(), Duration::ZERO).await;
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        let got = exchange(
            &mut stream,
            "POST /render HTTP/1.1\r\nhost: x\r\ncontent-length: 1\r\nconnection: close\r\n\r\nx",
        )
        .await;
        assert!(got.starts_with("HTTP/1.1 200"), "{got}");
        assert!(got.contains("content-type: image/png"), "{got}");
        assert!(got.ends_with("reply"), "{got}");
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        let got = exchange(
            &mut stream,
            "GET /healthz HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n",
        )
        .await;
        assert!(got.starts_with("HTTP/1.1 200"), "{got}");
    }

    async fn exchange(stream: &mut tokio::net::TcpStream, request: &str) -> String {
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut out = String::new();
        stream.read_to_string(&mut out).await.unwrap();
        out
    }
}
