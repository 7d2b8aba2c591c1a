//! The HTTP engine against real render services on loopback, through `TryOnService` on the
//! memory backends: the example render service for the happy paths, and a scripted service
//! for every way a render service can fail.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use image::{DynamicImage, Rgb, RgbImage};
use rust_decimal::Decimal;
use vto_core::billing::{EntryKind, HoldStatus};
use vto_core::http_engine::{
    FailureKind, HttpEngine, HttpEngineConfig, PROTOCOL_HEADER, PROTOCOL_VERSION,
};
use vto_core::*;
use warp::http::Response;
use warp::Filter;

#[path = "../../examples/render_service.rs"]
#[allow(dead_code, missing_docs, unreachable_pub)]
mod render_service;

const PERSON_URL: &str = "https://shop.example/person.png";
const GARMENT_URL: &str = "https://shop.example/garment.png";
const MODEL_URL: &str = "https://shop.example/frames.glb";
const PERSON_BG: [u8; 3] = [40, 90, 160];

/// A 96×128 "person": a blue backdrop with a grey figure in the middle.
fn person_png() -> Vec<u8> {
    let img = RgbImage::from_fn(96, 128, |x, y| {
        if (30..66).contains(&x) && y > 20 {
            Rgb([150 + (y / 8) as u8, 150, 150])
        } else {
            Rgb(PERSON_BG)
        }
    });
    media::encode_png(&DynamicImage::ImageRgb8(img)).unwrap()
}

/// A garment photo: a red shirt shape on a white background.
fn garment_png() -> Vec<u8> {
    let img = RgbImage::from_fn(80, 80, |x, y| {
        let body = (20..60).contains(&x) && (15..75).contains(&y);
        let sleeves = (5..75).contains(&x) && (15..35).contains(&y);
        if body || sleeves {
            Rgb([200, 20, 30])
        } else {
            Rgb([255, 255, 255])
        }
    });
    media::encode_png(&DynamicImage::ImageRgb8(img)).unwrap()
}

/// A minimal binary glTF 2.0 header (enough to be sniffed as a model).
fn glb() -> Vec<u8> {
    let json = br#"{"asset":{"version":"2.0"}}  "#;
    let mut v = b"glTF".to_vec();
    v.extend(2u32.to_le_bytes());
    v.extend(((12 + 8 + json.len()) as u32).to_le_bytes());
    v.extend((json.len() as u32).to_le_bytes());
    v.extend(b"JSON");
    v.extend(json);
    v
}

async fn start(
    routes: impl Filter<Extract = (impl warp::Reply,), Error = std::convert::Infallible>
        + Clone
        + Send
        + Sync
        + 'static,
) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(warp::serve(routes).incoming(listener).run());
    format!("http://{addr}")
}

async fn start_example_service() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(render_service::serve(listener));
    format!("http://{addr}")
}

/// What the scripted service does on each call.
#[derive(Clone, Copy, Debug)]
enum Script {
    /// 500 with a plain-text body.
    Plain500,
    /// 500 with a protocol error body.
    Json500,
    /// Sleeps this long, then answers a valid image.
    Slow(Duration),
    /// 200 with bytes that are no image.
    Garbage,
    /// 200 with a body of this many bytes.
    Oversized(usize),
    /// 503 for the first n calls, then an image.
    Unavailable(usize),
    /// A valid JPEG (vto must re-encode it as PNG).
    Jpeg,
}

#[derive(Default)]
struct Seen {
    hits: AtomicUsize,
    protocol: Mutex<Option<String>>,
    token: Mutex<Option<String>>,
    parts: Mutex<Vec<(String, Vec<u8>)>>,
    active: AtomicUsize,
    max_active: AtomicUsize,
}

fn jpeg_answer() -> Vec<u8> {
    let img = RgbImage::from_fn(24, 32, |x, _| Rgb([(x * 10) as u8, 200, 10]));
    let mut out = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 90)
        .encode_image(&img)
        .unwrap();
    out
}

async fn start_scripted(script: Script) -> (String, Arc<Seen>) {
    let seen = Arc::new(Seen::default());
    let s = seen.clone();
    let routes = warp::post()
        .and(warp::path!("render"))
        .and(warp::header::optional::<String>(PROTOCOL_HEADER))
        .and(warp::header::optional::<String>("authorization"))
        .and(warp::multipart::form().max_length(64 << 20))
        .then(move |proto, token, form| {
            let s = s.clone();
            async move {
                let n = s.hits.fetch_add(1, Ordering::SeqCst);
                *s.protocol.lock().unwrap() = proto;
                *s.token.lock().unwrap() = token;
                if let Ok(parts) = render_service::read_form(form).await {
                    *s.parts.lock().unwrap() = parts;
                }
                let image = |bytes: Vec<u8>, ct: &str| {
                    Response::builder()
                        .status(200)
                        .header("content-type", ct)
                        .body(bytes)
                        .unwrap()
                };
                let status = |code: u16, ct: &str, body: &str| {
                    Response::builder()
                        .status(code)
                        .header("content-type", ct)
                        .body(body.as_bytes().to_vec())
                        .unwrap()
                };
                match script {
                    Script::Plain500 => status(500, "text/plain", "Traceback: CUDA out of memory"),
                    Script::Json500 => status(
                        500,
                        "application/json",
                        r#"{"error":{"code":"no_person","message":"no person detected in the photo"}}"#,
                    ),
                    Script::Slow(d) => {
                        let now = s.active.fetch_add(1, Ordering::SeqCst) + 1;
                        s.max_active.fetch_max(now, Ordering::SeqCst);
                        tokio::time::sleep(d).await;
                        s.active.fetch_sub(1, Ordering::SeqCst);
                        image(jpeg_answer(), "image/jpeg")
                    }
                    Script::Garbage => image(b"\x89PNG but not really, just garbage".to_vec(), "image/png"),
                    Script::Oversized(n) => image(vec![0xAB; n], "image/png"),
                    Script::Unavailable(k) if n < k => status(503, "text/plain", "warming up"),
                    Script::Unavailable(_) | Script::Jpeg => image(jpeg_answer(), "image/jpeg"),
                }
            }
        });
    let health = warp::get().and(warp::path!("healthz")).map(|| "ok");
    let url = start(
        health
            .map(warp::Reply::into_response)
            .or(routes.map(warp::Reply::into_response))
            .unify()
            .recover(|_r| async {
                Ok::<_, std::convert::Infallible>(warp::Reply::into_response(
                    warp::http::StatusCode::NOT_FOUND,
                ))
            })
            .unify(),
    )
    .await;
    (url, seen)
}

/// Holds each render until the test lets it go, so `processing` can be observed.
struct Gated {
    inner: Arc<HttpEngine>,
    started: tokio::sync::mpsc::UnboundedSender<()>,
    go: tokio::sync::Mutex<tokio::sync::mpsc::UnboundedReceiver<()>>,
}

#[async_trait]
impl Engine for Gated {
    fn name(&self) -> &str {
        self.inner.name()
    }
    async fn render(&self, input: RenderInput<'_>) -> Result<Rendered, EngineError> {
        let _ = self.started.send(());
        self.go.lock().await.recv().await;
        self.inner.render(input).await
    }
}

struct Harness {
    svc: TryOnService,
    mem: MemoryBackends,
    caller: Caller,
    account: AccountId,
    funds: Decimal,
}

async fn harness(engines: Engines) -> Harness {
    let mem = Backends::in_memory();
    mem.fetcher
        .insert(PERSON_URL, person_png(), Some("image/png"));
    mem.fetcher
        .insert(GARMENT_URL, garment_png(), Some("image/png"));
    mem.fetcher
        .insert(MODEL_URL, glb(), Some("application/octet-stream"));
    let svc = TryOnService::new(mem.backends.clone(), engines, ServiceConfig::default());
    let funds: Decimal = "10.00".parse().unwrap();
    let caller = testing::funded_caller(&svc, funds).await;
    Harness {
        svc,
        mem,
        account: caller.account_id.clone(),
        caller,
        funds,
    }
}

fn engine(url: &str, tweak: impl FnOnce(&mut HttpEngineConfig)) -> Arc<HttpEngine> {
    let mut cfg = HttpEngineConfig {
        url: url.to_string(),
        timeout_ms: 10_000,
        connect_timeout_ms: 1_000,
        max_retries: 2,
        ..HttpEngineConfig::default()
    };
    tweak(&mut cfg);
    Arc::new(HttpEngine::new("test-http", cfg).unwrap())
}

fn routed(category: Category, engine: Arc<dyn Engine>) -> Engines {
    let mut e = Engines::new();
    e.register(category, engine);
    e
}

fn dress_request() -> CreateRequest {
    serde_json::from_value(serde_json::json!({
        "category": "dress",
        "person_image": PERSON_URL,
        "product_image": GARMENT_URL,
    }))
    .unwrap()
}

fn glasses_request() -> CreateRequest {
    serde_json::from_value(serde_json::json!({
        "category": "glasses",
        "person_image": PERSON_URL,
        "product_model": MODEL_URL,
    }))
    .unwrap()
}

impl Harness {
    /// Submits an async dress job, runs it, and returns the finished result.
    async fn run_dress(&self) -> ResultObject {
        let created = self
            .svc
            .create(&self.caller, &dress_request())
            .await
            .unwrap();
        let Created::Accepted(queued) = created else {
            panic!("dress is asynchronous")
        };
        assert_eq!(queued.status, JobStatus::Queued);
        assert_eq!(self.svc.work_one().await.unwrap(), Some(queued.request_id));
        self.svc
            .get(&self.caller, &queued.request_id.to_string())
            .await
            .unwrap()
    }

    async fn balance(&self) -> Balance {
        self.svc.balance(&self.caller).await.unwrap()
    }

    async fn captures(&self) -> usize {
        let entries = self
            .mem
            .backends
            .ledger
            .entries(&self.account)
            .await
            .unwrap();
        entries
            .iter()
            .filter(|e| e.kind == EntryKind::Capture)
            .count()
    }

    /// A failed job: `processing_failed`, the hold released, nothing charged.
    async fn assert_failed_unbilled(&self, r: &ResultObject, expect: &str) {
        assert_eq!(r.status, JobStatus::Failed, "{r:?}");
        let err = r.error.as_ref().expect("a failed job has an error");
        assert_eq!(err.code, ErrorCode::ProcessingFailed, "{err:?}");
        assert!(
            err.message.contains(expect),
            "message {:?} lacks {expect:?}",
            err.message
        );
        assert!(
            !err.message.contains("127.0.0.1"),
            "the service address leaked: {}",
            err.message
        );
        assert!(r.result.is_none() && r.cost.is_none());
        let b = self.balance().await;
        assert_eq!(
            (b.balance, b.held, b.available),
            (self.funds, Decimal::ZERO, self.funds)
        );
        assert_eq!(self.captures().await, 0);
        let hold = self
            .mem
            .backends
            .ledger
            .get_hold(r.request_id)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(hold.status, HoldStatus::Released);
    }
}

fn decode_png(bytes: &[u8]) -> RgbImage {
    assert_eq!(
        media::sniff(bytes),
        Some(media::MediaKind::Png),
        "results are PNG"
    );
    media::decode_image(bytes, &media::ImageLimits::default())
        .unwrap()
        .to_rgb8()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn async_category_succeeds_end_to_end_with_the_example_service_and_is_billed_once() {
    let url = start_example_service().await;
    let http = engine(&url, |_| {});
    let (started_tx, mut started) = tokio::sync::mpsc::unbounded_channel();
    let (go, go_rx) = tokio::sync::mpsc::unbounded_channel();
    let gated = Arc::new(Gated {
        inner: http.clone(),
        started: started_tx,
        go: tokio::sync::Mutex::new(go_rx),
    });
    let h = harness(routed(Category::Dress, gated)).await;
    assert!(http.probe().await.is_ok());

    let Created::Accepted(queued) = h.svc.create(&h.caller, &dress_request()).await.unwrap() else {
        panic!("dress is asynchronous")
    };
    let id = queued.request_id.to_string();
    assert_eq!(queued.status, JobStatus::Queued);
    assert_eq!(
        h.svc.get(&h.caller, &id).await.unwrap().status,
        JobStatus::Queued
    );
    let held = h.balance().await;
    assert_eq!(
        held.held,
        Decimal::new(20, 2),
        "the dress price (0.20) is held"
    );

    let worker = {
        let svc = h.svc.clone();
        tokio::spawn(async move { svc.work_one().await })
    };
    started.recv().await.unwrap();
    assert_eq!(
        h.svc.get(&h.caller, &id).await.unwrap().status,
        JobStatus::Processing
    );
    go.send(()).unwrap();
    worker.await.unwrap().unwrap();

    let done = h.svc.get(&h.caller, &id).await.unwrap();
    assert_eq!(done.status, JobStatus::Success, "{done:?}");
    let image_url = done.result.as_ref().unwrap().image_url.clone();
    let key = image_url.strip_prefix("memory://results/").unwrap();
    let stored = h.mem.results.get(key).await.unwrap().unwrap();
    assert_eq!(stored.content_type, "image/png");
    let out = decode_png(&stored.bytes);
    assert_eq!(out.dimensions(), (96, 128), "the person photo's size");
    // The backdrop is untouched; the torso now shows the red garment.
    assert_eq!(out.get_pixel(2, 2).0, PERSON_BG);
    let torso = out.get_pixel(48, 60).0;
    assert!(
        torso[0] > 120 && torso[1] < 90,
        "torso pixel {torso:?} is not garment red"
    );

    // Billed exactly once, the price of a dress.
    assert_eq!(done.cost.as_ref().unwrap().amount, Decimal::new(20, 2));
    let b = h.balance().await;
    assert_eq!(
        (b.balance, b.held),
        (h.funds - Decimal::new(20, 2), Decimal::ZERO)
    );
    assert_eq!(h.captures().await, 1);
    // Settling again (maintenance) does not charge twice.
    h.svc.maintain().await.unwrap();
    assert_eq!(h.captures().await, 1);

    let m = http.metrics();
    assert_eq!((m.calls, m.successes, m.attempts, m.retries), (1, 1, 1, 0));
    assert_eq!(m.total_failures(), 0);
    assert_eq!(*m.latency_buckets.last().unwrap(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sync_category_routed_to_a_service_gets_bytes_not_urls() {
    let (url, seen) = start_scripted(Script::Jpeg).await;
    let http = engine(&url, |c| {
        c.headers = vec![("authorization".into(), "Bearer render-token".into())]
    });
    let h = harness(routed(Category::Glasses, http.clone())).await;
    let Created::Finished(r) = h.svc.create(&h.caller, &glasses_request()).await.unwrap() else {
        panic!("glasses are synchronous")
    };
    assert_eq!(r.status, JobStatus::Success, "{r:?}");
    let key = r.result.unwrap().image_url.replace("memory://results/", "");
    let out = decode_png(&h.mem.results.get(&key).await.unwrap().unwrap().bytes);
    assert_eq!(
        out.dimensions(),
        (24, 32),
        "the service's JPEG, re-encoded as PNG"
    );
    assert_eq!(h.captures().await, 1);

    assert_eq!(seen.protocol.lock().unwrap().as_deref(), Some("1"));
    assert_eq!(
        seen.token.lock().unwrap().as_deref(),
        Some("Bearer render-token")
    );
    let parts = seen.parts.lock().unwrap().clone();
    let names: Vec<&str> = parts.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["meta", "person", "product"]);
    let meta: serde_json::Value = serde_json::from_slice(&parts[0].1).unwrap();
    assert_eq!(meta["protocol"], PROTOCOL_VERSION);
    assert_eq!(meta["request_id"], r.request_id.to_string());
    assert_eq!(meta["category"], "glasses");
    assert_eq!(meta["mode"], "synchronous");
    assert_eq!(meta["person"]["content_type"], "image/png");
    assert_eq!(
        (
            meta["person"]["width"].as_u64(),
            meta["person"]["height"].as_u64()
        ),
        (Some(96), Some(128))
    );
    // Sniffed, not the declared application/octet-stream.
    assert_eq!(meta["product"]["content_type"], "model/gltf-binary");
    assert_eq!(parts[1].1, person_png());
    assert_eq!(parts[2].1, glb());
    assert!(
        !String::from_utf8_lossy(&parts[0].1).contains("shop.example"),
        "no client URLs are sent"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_500_fails_the_job_cleanly_without_retry_or_charge() {
    let (url, seen) = start_scripted(Script::Plain500).await;
    let http = engine(&url, |_| {});
    let h = harness(routed(Category::Dress, http.clone())).await;
    let r = h.run_dress().await;
    h.assert_failed_unbilled(&r, "the render service failed (HTTP 500)")
        .await;
    assert!(
        !r.error.unwrap().message.contains("CUDA"),
        "raw service output is not shown"
    );
    assert_eq!(seen.hits.load(Ordering::SeqCst), 1, "a 500 is not retried");
    let m = http.metrics();
    assert_eq!((m.calls, m.failures_of(FailureKind::Status)), (1, 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_protocol_error_becomes_the_jobs_message() {
    let (url, _) = start_scripted(Script::Json500).await;
    let http = engine(&url, |_| {});
    let h = harness(routed(Category::Dress, http.clone())).await;
    let r = h.run_dress().await;
    h.assert_failed_unbilled(&r, "no person detected in the photo (no_person)")
        .await;
    assert_eq!(http.metrics().failures_of(FailureKind::Rejected), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_service_times_out() {
    let (url, seen) = start_scripted(Script::Slow(Duration::from_secs(5))).await;
    let http = engine(&url, |c| c.timeout_ms = 400);
    let h = harness(routed(Category::Dress, http.clone())).await;
    let r = h.run_dress().await;
    h.assert_failed_unbilled(&r, "did not answer within 400 ms")
        .await;
    assert_eq!(
        seen.hits.load(Ordering::SeqCst),
        1,
        "a timeout is not retried"
    );
    assert_eq!(http.metrics().failures_of(FailureKind::Timeout), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_bytes_are_not_passed_through() {
    let (url, _) = start_scripted(Script::Garbage).await;
    let http = engine(&url, |_| {});
    let h = harness(routed(Category::Dress, http.clone())).await;
    let r = h.run_dress().await;
    h.assert_failed_unbilled(&r, "unusable image").await;
    assert_eq!(http.metrics().failures_of(FailureKind::BadResponse), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_answer_is_cut_off() {
    let (url, _) = start_scripted(Script::Oversized(3 << 20)).await;
    let http = engine(&url, |c| c.max_response_bytes = 1 << 20);
    let h = harness(routed(Category::Dress, http.clone())).await;
    let r = h.run_dress().await;
    h.assert_failed_unbilled(&r, "exceeded the 1048576-byte limit")
        .await;
    assert_eq!(http.metrics().failures_of(FailureKind::TooLarge), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_service_that_is_down_fails_the_job_after_bounded_retries() {
    // A port that was just free: connections are refused.
    let url = {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        format!("http://{}", l.local_addr().unwrap())
    };
    let http = engine(&url, |c| c.max_retries = 2);
    let h = harness(routed(Category::Dress, http.clone())).await;
    assert!(
        http.probe().await.is_err(),
        "readiness reports the service down"
    );
    let r = h.run_dress().await;
    h.assert_failed_unbilled(&r, "the render service is unavailable")
        .await;
    let m = http.metrics();
    assert_eq!((m.calls, m.attempts, m.retries), (1, 3, 2), "{m:?}");
    assert_eq!(m.failures_of(FailureKind::Connect), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_503_is_retried_until_the_service_answers() {
    let (url, seen) = start_scripted(Script::Unavailable(2)).await;
    let http = engine(&url, |c| c.max_retries = 3);
    let h = harness(routed(Category::Dress, http.clone())).await;
    let r = h.run_dress().await;
    assert_eq!(r.status, JobStatus::Success, "{r:?}");
    assert_eq!(seen.hits.load(Ordering::SeqCst), 3);
    assert_eq!(h.captures().await, 1);
    let m = http.metrics();
    assert_eq!(
        (m.calls, m.successes, m.attempts, m.retries),
        (1, 1, 3, 2),
        "{m:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retries_stop_at_max_retries() {
    let (url, seen) = start_scripted(Script::Unavailable(usize::MAX)).await;
    let http = engine(&url, |c| c.max_retries = 1);
    let h = harness(routed(Category::Dress, http.clone())).await;
    let r = h.run_dress().await;
    h.assert_failed_unbilled(&r, "HTTP 503").await;
    assert_eq!(seen.hits.load(Ordering::SeqCst), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn html_instead_of_a_person_photo_is_refused_before_calling_the_service() {
    let (url, seen) = start_scripted(Script::Jpeg).await;
    let http = engine(&url, |_| {});
    let h = harness(routed(Category::Dress, http.clone())).await;
    h.mem.fetcher.insert(
        PERSON_URL,
        b"<!DOCTYPE html><html><body>404</body></html>".to_vec(),
        Some("image/png"),
    );
    let r = h.run_dress().await;
    assert_eq!(r.status, JobStatus::Failed);
    let err = r.error.unwrap();
    assert_eq!(err.code, ErrorCode::UnsupportedMedia, "{err:?}");
    assert!(err.message.contains("HTML"), "{}", err.message);
    assert_eq!(seen.hits.load(Ordering::SeqCst), 0);
    assert_eq!(h.captures().await, 0);
    assert_eq!(http.metrics().failures_of(FailureKind::BadInput), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_example_service_rejects_a_3d_model_with_a_protocol_error() {
    let url = start_example_service().await;
    let http = engine(&url, |_| {});
    let h = harness(routed(Category::Glasses, http)).await;
    let Created::Finished(r) = h.svc.create(&h.caller, &glasses_request()).await.unwrap() else {
        panic!("glasses are synchronous")
    };
    h.assert_failed_unbilled(&r, "renders garment photos only")
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrency_is_bounded_per_engine() {
    let (url, seen) = start_scripted(Script::Slow(Duration::from_millis(300))).await;
    let http = engine(&url, |c| c.max_concurrency = 1);
    let h = harness(routed(Category::Dress, http.clone())).await;
    for _ in 0..2 {
        h.svc.create(&h.caller, &dress_request()).await.unwrap();
    }
    let (a, b) = tokio::join!(h.svc.work_one(), h.svc.work_one());
    assert!(a.unwrap().is_some() && b.unwrap().is_some());
    assert_eq!(seen.hits.load(Ordering::SeqCst), 2);
    assert_eq!(
        seen.max_active.load(Ordering::SeqCst),
        1,
        "calls were serialised"
    );
    assert_eq!(http.metrics().successes, 2);
}

/// A 16×8 JPEG with EXIF orientation 6 ("rotate 90° clockwise to display").
fn jpeg_rotated() -> Vec<u8> {
    let img = RgbImage::from_fn(
        16,
        8,
        |x, _| if x < 8 { Rgb([255; 3]) } else { Rgb([0; 3]) },
    );
    let mut jpeg = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut jpeg, 95)
        .encode_image(&img)
        .unwrap();
    let mut exif = b"Exif\0\0MM\0\x2a\0\0\0\x08".to_vec();
    exif.extend([0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, 6, 0, 0, 0, 0, 0, 0]);
    let mut out = vec![0xFF, 0xD8, 0xFF, 0xE1];
    out.extend(((exif.len() + 2) as u16).to_be_bytes());
    out.extend(exif);
    out.extend(&jpeg[2..]);
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_photo_with_exif_orientation_is_sent_upright() {
    let (url, seen) = start_scripted(Script::Jpeg).await;
    let http = engine(&url, |_| {});
    let h = harness(routed(Category::Dress, http)).await;
    h.mem
        .fetcher
        .insert(PERSON_URL, jpeg_rotated(), Some("image/jpeg"));
    let r = h.run_dress().await;
    assert_eq!(r.status, JobStatus::Success, "{r:?}");
    let parts = seen.parts.lock().unwrap().clone();
    let meta: serde_json::Value = serde_json::from_slice(&parts[0].1).unwrap();
    assert_eq!(meta["person"]["content_type"], "image/png");
    assert_eq!(meta["person"]["width"], 8);
    assert_eq!(meta["person"]["height"], 16);
    let sent = decode_png(&parts[1].1);
    assert_eq!(sent.dimensions(), (8, 16));
    assert!(
        sent.get_pixel(4, 2).0[0] > 200,
        "the white half is on top once upright"
    );
    assert!(sent.get_pixel(4, 13).0[0] < 60);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_job_deadline_ends_a_hanging_call_and_nothing_stays_in_flight() {
    let (url, _) = start_scripted(Script::Slow(Duration::from_secs(30))).await;
    let http = engine(&url, |c| c.timeout_ms = 60_000);
    let mem = Backends::in_memory();
    mem.fetcher.insert(PERSON_URL, person_png(), None);
    mem.fetcher.insert(GARMENT_URL, garment_png(), None);
    let config = ServiceConfig {
        job_deadline: Some(Duration::from_millis(500)),
        ..ServiceConfig::default()
    };
    let svc = TryOnService::new(
        mem.backends.clone(),
        routed(Category::Dress, http.clone()),
        config,
    );
    let caller = testing::funded_caller(&svc, "1.00".parse().unwrap()).await;
    let created = svc.create(&caller, &dress_request()).await.unwrap();
    svc.work_one().await.unwrap();
    let r = svc
        .get(&caller, &created.result().request_id.to_string())
        .await
        .unwrap();
    assert_eq!(r.status, JobStatus::Failed);
    assert_eq!(r.error.unwrap().code, ErrorCode::TimedOut);
    let b = svc.balance(&caller).await.unwrap();
    assert_eq!(
        (b.held, b.available),
        (Decimal::ZERO, "1.00".parse().unwrap())
    );
    let m = http.metrics();
    assert_eq!(
        (m.calls, m.in_flight, m.successes, m.total_failures()),
        (1, 0, 0, 0)
    );
}
