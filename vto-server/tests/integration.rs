//! vto-server against real HTTP on loopback.
//!
//! The engines here are TEST DOUBLES, registered by the tests only: [`TintEngine`] decodes the
//! person PNG and tints it (a real image derived from the inputs, so a test can tell a real
//! result from a made-up one), and [`GatedEngine`] waits for the test to open a gate, so the
//! `queued → processing → success` steps are observable.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use reqwest::StatusCode;
use rust_decimal::Decimal;
use serde_json::{json, Value};

use vto_core::billing::EntryKind;
use vto_core::testing::{data_url, png};
use vto_core::{Category, Engine, EngineError, Engines, RenderInput, Rendered, RequestId};
use vto_server::{Config, RunningServer};

// ------------------------------------------------------------------ test engines

/// TEST DOUBLE: tints the person photo red. A 1×1 person photo is "no face found"; a 2×1
/// one is "every renderer stayed busy" (what the built-in renderer answers a synchronous
/// try-on after `sync_wait_secs`).
#[derive(Default)]
struct TintEngine {
    renders: Mutex<HashMap<RequestId, u32>>,
}

fn tint(input: &RenderInput<'_>) -> Result<Rendered, EngineError> {
    let img = image::load_from_memory(&input.person.bytes)
        .map_err(|e| EngineError::processing(format!("person_image is not an image: {e}")))?;
    if img.width() < 2 {
        return Err(EngineError::processing("no face found in person_image"));
    }
    if img.height() < 2 {
        return Err(EngineError::Rejected {
            code: vto_core::ErrorCode::ServiceUnavailable,
            message: "all 1 render pipelines stayed busy for 30 s; retry later".into(),
        });
    }
    let mut rgb = img.to_rgb8();
    for p in rgb.pixels_mut() {
        p.0[0] = p.0[0].saturating_add(100);
    }
    let mut out = std::io::Cursor::new(Vec::new());
    image::DynamicImage::ImageRgb8(rgb)
        .write_to(&mut out, image::ImageFormat::Png)
        .map_err(|e| EngineError::Internal(e.to_string()))?;
    Ok(Rendered {
        image: out.into_inner(),
        content_type: "image/png".into(),
        metadata: json!({}),
    })
}

#[async_trait]
impl Engine for TintEngine {
    fn name(&self) -> &str {
        "test-tint"
    }
    async fn render(&self, input: RenderInput<'_>) -> Result<Rendered, EngineError> {
        *self
            .renders
            .lock()
            .unwrap()
            .entry(input.request_id)
            .or_insert(0) += 1;
        tint(&input)
    }
}

/// TEST DOUBLE: announces each render, then waits until the gate opens, then tints.
struct GatedEngine {
    gate: tokio::sync::watch::Receiver<bool>,
    started: tokio::sync::mpsc::UnboundedSender<RequestId>,
}

#[async_trait]
impl Engine for GatedEngine {
    fn name(&self) -> &str {
        "test-gated"
    }
    async fn render(&self, input: RenderInput<'_>) -> Result<Rendered, EngineError> {
        let _ = self.started.send(input.request_id);
        let mut gate = self.gate.clone();
        while !*gate.borrow() {
            if gate.changed().await.is_err() {
                return Err(EngineError::Internal("gate dropped".into()));
            }
        }
        tint(&input)
    }
}

// ------------------------------------------------------------------ harness

fn config(dir: &Path, extra: &[(&str, &str)]) -> Config {
    let mut env = vec![
        ("VTO_LISTEN".to_string(), "127.0.0.1:0".to_string()),
        ("VTO_DATA_DIR".to_string(), dir.display().to_string()),
        ("VTO_POLL_INTERVAL_MS".to_string(), "20".to_string()),
    ];
    env.extend(extra.iter().map(|(a, b)| (a.to_string(), b.to_string())));
    Config::load(None, env).expect("config")
}

struct Api {
    base: String,
    http: reqwest::Client,
}

impl Api {
    fn new(server: &RunningServer) -> Self {
        Self {
            base: format!("http://{}", server.addr),
            http: reqwest::Client::new(),
        }
    }
    async fn post(
        &self,
        key: &str,
        body: &Value,
    ) -> (StatusCode, reqwest::header::HeaderMap, Value) {
        let r = self
            .http
            .post(format!("{}/v1/virtual-try-on", self.base))
            .bearer_auth(key)
            .json(body)
            .send()
            .await
            .unwrap();
        let (s, h) = (r.status(), r.headers().clone());
        (s, h, r.json().await.unwrap_or(Value::Null))
    }
    async fn get(
        &self,
        key: Option<&str>,
        path: &str,
    ) -> (StatusCode, reqwest::header::HeaderMap, Value) {
        let mut rb = self.http.get(format!("{}{path}", self.base));
        if let Some(k) = key {
            rb = rb.bearer_auth(k);
        }
        let r = rb.send().await.unwrap();
        let (s, h) = (r.status(), r.headers().clone());
        (s, h, r.json().await.unwrap_or(Value::Null))
    }
}

/// A server on the SQLite file under `dir` with only a [`TintEngine`] for glasses.
async fn tint_server(dir: &Path) -> RunningServer {
    let mut engines = Engines::new();
    engines.register(Category::Glasses, Arc::new(TintEngine::default()));
    vto_server::start(config(dir, &[]), engines)
        .await
        .expect("starting the test server")
}

async fn account_with_key(server: &RunningServer, funds: &str) -> (vto_core::AccountId, String) {
    let a = server.service.create_account("shop").await.unwrap();
    if funds != "0" {
        server
            .service
            .add_funds(&a.id, funds.parse().unwrap(), "test")
            .await
            .unwrap();
    }
    let k = server.service.create_api_key(&a.id, "test").await.unwrap();
    (a.id, k.secret)
}

fn glasses(person: &[u8]) -> Value {
    json!({
        "category": "glasses",
        "person_image": data_url("image/png", person),
        "product_model": data_url("model/gltf-binary", b"glTF-test-model"),
    })
}

fn shirt(person: &[u8]) -> Value {
    json!({
        "category": "shirt",
        "person_image": data_url("image/png", person),
        "product_image": data_url("image/png", &png(4, 4, [0, 0, 200])),
        "webhook_url": "https://shop.example/hook",
    })
}

fn err_code(v: &Value) -> &str {
    v["error"]["code"].as_str().unwrap_or("<none>")
}

async fn balance(server: &RunningServer, a: &vto_core::AccountId) -> vto_core::Balance {
    server.storage.ledger.balance(a).await.unwrap()
}

/// Settlement follows the terminal transition by a moment: wait until no hold is open.
async fn settled(server: &RunningServer, a: &vto_core::AccountId) -> vto_core::Balance {
    for _ in 0..500 {
        let b = balance(server, a).await;
        if b.held.is_zero() {
            return b;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("holds of {a} never settled");
}

async fn wait_status(api: &Api, key: &str, id: &str, want: &str) -> Value {
    for _ in 0..500 {
        let (s, _, v) = api
            .get(Some(key), &format!("/v1/virtual-try-on/{id}"))
            .await;
        assert_eq!(s, StatusCode::OK);
        if v["status"] == want {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("{id} never reached {want}");
}

/// Every (path, method, status) the tests below exercise; the OpenAPI test checks each.
const EXERCISED: &[(&str, &str, u16)] = &[
    ("/v1/virtual-try-on", "post", 200),
    ("/v1/virtual-try-on", "post", 202),
    ("/v1/virtual-try-on", "post", 400),
    ("/v1/virtual-try-on", "post", 401),
    ("/v1/virtual-try-on", "post", 402),
    ("/v1/virtual-try-on", "post", 405),
    ("/v1/virtual-try-on", "post", 413),
    ("/v1/virtual-try-on", "post", 415),
    ("/v1/virtual-try-on", "post", 422),
    ("/v1/virtual-try-on", "post", 429),
    ("/v1/virtual-try-on", "post", 500),
    ("/v1/virtual-try-on", "post", 501),
    ("/v1/virtual-try-on", "post", 503),
    ("/v1/virtual-try-on", "get", 200),
    ("/v1/virtual-try-on", "get", 400),
    ("/v1/virtual-try-on", "get", 401),
    ("/v1/virtual-try-on/{request_id}", "get", 200),
    ("/v1/virtual-try-on/{request_id}", "get", 404),
    ("/v1/virtual-try-on/{request_id}", "get", 429),
    ("/v1/virtual-try-on/{request_id}/cancel", "post", 200),
    ("/v1/virtual-try-on/{request_id}/cancel", "post", 409),
    ("/v1/results/{token}", "get", 200),
    ("/v1/results/{token}", "get", 404),
    ("/v1/balance", "get", 200),
    ("/v1/balance", "get", 401),
    ("/openapi.json", "get", 200),
    ("/healthz", "get", 200),
    ("/readyz", "get", 200),
    ("/metrics", "get", 200),
];

// ------------------------------------------------------------------ HTTP tests

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_route_and_error_code_over_http() {
    let dir = tempfile::tempdir().unwrap();
    let tint = Arc::new(TintEngine::default());
    let mut engines = Engines::new();
    engines.register(Category::Glasses, tint.clone());
    let server = vto_server::start(
        config(
            dir.path(),
            &[
                ("VTO_BODY_LIMIT_BYTES", "200000"),
                // only the test reads the auth generation (below): the server's own refresh,
                // every 100 ms by default, could read it first and the test would see no move
                ("VTO_AUTH_REFRESH_MS", "60000"),
            ],
        ),
        engines,
    )
    .await
    .unwrap();
    let api = Api::new(&server);
    let (acct, key) = account_with_key(&server, "1.00").await;
    let person = png(8, 6, [10, 20, 30]);

    // probes
    let (s, h, v) = api.get(None, "/healthz").await;
    assert_eq!((s, v["status"].as_str()), (StatusCode::OK, Some("ok")));
    assert!(h
        .get("x-request-id")
        .unwrap()
        .to_str()
        .unwrap()
        .starts_with("req_"));
    let (s, _, v) = api.get(None, "/readyz").await;
    assert_eq!((s, v["status"].as_str()), (StatusCode::OK, Some("ready")));
    let (s, _, v) = api.get(None, "/openapi.json").await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(v["openapi"], "3.1.0");

    // the client's request id is echoed
    let r = api
        .http
        .get(format!("{}/healthz", api.base))
        .header("x-request-id", "abc-123")
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers()["x-request-id"], "abc-123");

    // 401 without a key, with a bad key; WWW-Authenticate set
    let r = api
        .http
        .post(format!("{}/v1/virtual-try-on", api.base))
        .json(&glasses(&person))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    assert!(r.headers().contains_key("www-authenticate"));
    assert_eq!(err_code(&r.json().await.unwrap()), "missing_api_key");
    let (s, _, v) = api.post("vto_sk_nope", &glasses(&person)).await;
    assert_eq!(
        (s, err_code(&v)),
        (StatusCode::UNAUTHORIZED, "invalid_api_key")
    );

    // sync success: 200, the result object, a fetchable real image, billed at the price
    let (s, h, v) = api.post(&key, &glasses(&person)).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert!(h.contains_key("ratelimit") && h.contains_key("ratelimit-policy"));
    assert_eq!(v["status"], "success");
    assert_eq!(v["category"], "glasses");
    assert_eq!(v["cost"], json!({"amount": "0.05", "currency": "USD"}));
    assert!(v["processing_time_ms"].is_u64());
    assert!(v.get("error").is_none());
    let url = v["result"]["image_url"].as_str().unwrap().to_string();
    assert!(
        url.starts_with(&format!("http://{}/v1/results/", server.addr)),
        "{url}"
    );
    let img = api.http.get(&url).send().await.unwrap();
    assert_eq!(img.status(), StatusCode::OK);
    assert_eq!(img.headers()["content-type"], "image/png");
    let decoded = image::load_from_memory(&img.bytes().await.unwrap())
        .unwrap()
        .to_rgb8();
    assert_eq!((decoded.width(), decoded.height()), (8, 6));
    assert_eq!(
        decoded.get_pixel(3, 3).0,
        [110, 20, 30],
        "the tinted person photo"
    );
    // a tampered or unknown link is 404
    let tampered = format!("{}x", &url[..url.len() - 1]);
    let r = api.http.get(&tampered).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    assert_eq!(err_code(&r.json().await.unwrap()), "not_found");
    let sync_id = v["request_id"].as_str().unwrap().to_string();

    // GET the finished sync job; 404 for unknown and malformed ids
    let (s, _, g) = api
        .get(Some(&key), &format!("/v1/virtual-try-on/{sync_id}"))
        .await;
    assert_eq!((s, g["status"].as_str()), (StatusCode::OK, Some("success")));
    let (s, _, g) = api
        .get(
            Some(&key),
            &format!("/v1/virtual-try-on/{}", uuid::Uuid::new_v4()),
        )
        .await;
    assert_eq!((s, err_code(&g)), (StatusCode::NOT_FOUND, "not_found"));
    let (s, _, g) = api.get(Some(&key), "/v1/virtual-try-on/not-a-uuid").await;
    assert_eq!((s, err_code(&g)), (StatusCode::NOT_FOUND, "not_found"));
    // another account's id is not found either
    let (_, key_b) = account_with_key(&server, "0").await;
    let (s, _, g) = api
        .get(Some(&key_b), &format!("/v1/virtual-try-on/{sync_id}"))
        .await;
    assert_eq!((s, err_code(&g)), (StatusCode::NOT_FOUND, "not_found"));

    // sync failure: 422 with the failed result object, not billed
    let before = balance(&server, &acct).await;
    let (s, _, v) = api.post(&key, &glasses(&png(1, 1, [0, 0, 0]))).await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    assert_eq!(v["status"], "failed");
    assert_eq!(v["error"]["code"], "processing_failed");
    assert!(v["result"].is_null() && v["cost"].is_null());
    assert_eq!(balance(&server, &acct).await.balance, before.balance);

    // 415, 400 (bad JSON; a field at fault with param), 413
    let r = api
        .http
        .post(format!("{}/v1/virtual-try-on", api.base))
        .bearer_auth(&key)
        .header("content-type", "text/plain")
        .body("category=glasses")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert_eq!(err_code(&r.json().await.unwrap()), "unsupported_media_type");
    let r = api
        .http
        .post(format!("{}/v1/virtual-try-on", api.base))
        .bearer_auth(&key)
        .header("content-type", "application/json")
        .body("{\"category\": ")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    assert_eq!(err_code(&r.json().await.unwrap()), "invalid_request");
    // JSON nested 1 000 deep (2 kB, under the body limit): refused at 128 levels
    // (docs/limits.md), not a stack overflow.
    let deep = format!(
        "{{\"category\": {}1{}}}",
        "[".repeat(1_000),
        "]".repeat(1_000)
    );
    let r = api
        .http
        .post(format!("{}/v1/virtual-try-on", api.base))
        .bearer_auth(&key)
        .header("content-type", "application/json")
        .body(deep)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    let v: serde_json::Value = r.json().await.unwrap();
    assert_eq!(err_code(&v), "invalid_request");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("recursion limit"),
        "{v}"
    );
    let (s, _, v) = api
        .post(
            &key,
            &json!({"category": "glasses", "person_image": "https://shop.example/p.jpg"}),
        )
        .await;
    assert_eq!(
        (s, err_code(&v)),
        (StatusCode::BAD_REQUEST, "invalid_request")
    );
    assert_eq!(v["error"]["param"], "product_model");
    let (s, _, v) = api
        .post(
            &key,
            &json!({"category": "hoverboard", "person_image": "https://shop.example/p.jpg"}),
        )
        .await;
    assert_eq!(
        (s, v["error"]["param"].as_str()),
        (StatusCode::BAD_REQUEST, Some("category"))
    );
    let big = json!({"category": "glasses", "person_image": "x".repeat(300_000)});
    let (s, _, v) = api.post(&key, &big).await;
    assert_eq!(
        (s, err_code(&v)),
        (StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large")
    );

    // 501 for a category with no engine
    let (s, _, v) = api
        .post(
            &key,
            &json!({"category": "hats", "person_image": "https://shop.example/p.jpg",
                             "product_model": "https://shop.example/hat.glb"}),
        )
        .await;
    assert_eq!(
        (s, err_code(&v)),
        (StatusCode::NOT_IMPLEMENTED, "engine_unavailable")
    );

    // 402 when the balance is short (fresh account, no funds)
    let (s, _, v) = api.post(&key_b, &glasses(&person)).await;
    assert_eq!(
        (s, err_code(&v)),
        (StatusCode::PAYMENT_REQUIRED, "insufficient_balance")
    );

    // 404 unknown route, 405 with Allow
    let (s, _, v) = api.get(Some(&key), "/v2/nothing").await;
    assert_eq!((s, err_code(&v)), (StatusCode::NOT_FOUND, "not_found"));
    let r = api
        .http
        .put(format!("{}/v1/virtual-try-on", api.base))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    let (s, h) = (r.status(), r.headers().clone());
    let v: Value = r.json().await.unwrap();
    assert_eq!(
        (s, err_code(&v)),
        (StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed")
    );
    assert_eq!(h["allow"], "GET, POST");
    let r = api
        .http
        .delete(format!("{}/v1/balance", api.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::METHOD_NOT_ALLOWED);

    // balance
    let (s, _, v) = api.get(Some(&key), "/v1/balance").await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(
        (v["balance"].as_str(), v["currency"].as_str()),
        (Some("0.95"), Some("USD"))
    );
    let (s, _, v) = api.get(None, "/v1/balance").await;
    assert_eq!(
        (s, err_code(&v)),
        (StatusCode::UNAUTHORIZED, "missing_api_key")
    );

    // cancel: a finished job is not cancelable
    let r = api
        .http
        .post(format!("{}/v1/virtual-try-on/{sync_id}/cancel", api.base))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::CONFLICT);
    assert_eq!(err_code(&r.json().await.unwrap()), "not_cancelable");

    // a revoked key stops working at once
    let extra = server.service.create_api_key(&acct, "temp").await.unwrap();
    let (s, _, _) = api.get(Some(&extra.secret), "/v1/balance").await;
    assert_eq!(s, StatusCode::OK);
    // through the server's key store (its cache): refused at the next request
    vto_core::ApiKeyStore::revoke(&*server.auth, &extra.record.id, server.service.now())
        .await
        .unwrap();
    let (s, _, v) = api.get(Some(&extra.secret), "/v1/balance").await;
    assert_eq!(
        (s, err_code(&v)),
        (StatusCode::UNAUTHORIZED, "invalid_api_key")
    );
    // directly in the SQLite file, as `vto admin key revoke` in another process does:
    // refused once the server has read the moved auth generation (every auth_refresh_ms,
    // a minute in this test; called here directly instead of waiting)
    let other = server.service.create_api_key(&acct, "temp2").await.unwrap();
    let (s, _, _) = api.get(Some(&other.secret), "/v1/balance").await;
    assert_eq!(s, StatusCode::OK);
    server
        .storage
        .keys
        .revoke(&other.record.id, server.service.now())
        .await
        .unwrap();
    assert!(server.auth.refresh().await.unwrap(), "the generation moved");
    let (s, _, v) = api.get(Some(&other.secret), "/v1/balance").await;
    assert_eq!(
        (s, err_code(&v)),
        (StatusCode::UNAUTHORIZED, "invalid_api_key")
    );

    // metrics
    let r = api
        .http
        .get(format!("{}/metrics", api.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let text = r.text().await.unwrap();
    assert!(
        text.contains(
            "vto_http_requests_total{route=\"create_try_on\",method=\"POST\",status=\"200\"} 1"
        ),
        "{text}"
    );
    assert!(text.contains("vto_jobs{status=\"success\"} 1"));
    assert!(text.contains("vto_queue_depth 0"));
    assert!(text
        .contains("vto_render_duration_seconds_count{category=\"glasses\",outcome=\"success\"} 1"));

    server.shutdown().await;
}

/// A synchronous try-on the renderer refused because every pipeline stayed busy past
/// `sync_wait_secs`: 503 with Retry-After and the failed result object, not billed, and the
/// Idempotency-Key not saved (the retry runs again instead of replaying the refusal).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sync_try_on_refused_as_busy_is_a_503_not_billed_and_its_key_stays_free() {
    let dir = tempfile::tempdir().unwrap();
    let server = tint_server(dir.path()).await;
    let api = Api::new(&server);
    let (acct, key) = account_with_key(&server, "1.00").await;
    let before = balance(&server, &acct).await;
    let mut seen = Vec::new();
    for _ in 0..2 {
        let r = api
            .http
            .post(format!("{}/v1/virtual-try-on", api.base))
            .bearer_auth(&key)
            .header("idempotency-key", "busy-1")
            .json(&glasses(&png(2, 1, [0, 0, 0])))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(r.headers()["retry-after"], "1");
        assert!(r.headers().get("idempotent-replayed").is_none());
        let v: Value = r.json().await.unwrap();
        assert_eq!(
            (v["status"].as_str(), err_code(&v)),
            (Some("failed"), "service_unavailable"),
            "{v}"
        );
        assert!(v["result"].is_null() && v["cost"].is_null());
        seen.push(v["request_id"].clone());
    }
    assert_ne!(seen[0], seen[1], "the refusal was replayed, not run again");
    assert_eq!(balance(&server, &acct).await.balance, before.balance);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn internal_errors_are_opaque_500s() {
    let dir = tempfile::tempdir().unwrap();
    let server = tint_server(dir.path()).await;
    let api = Api::new(&server);
    let (_, key) = account_with_key(&server, "1.00").await;
    // Break the database under the server: the jobs table disappears.
    let conn = rusqlite::Connection::open(dir.path().join("vto.db")).unwrap();
    conn.execute_batch("DROP TABLE jobs").unwrap();
    let (s, h, v) = api.post(&key, &glasses(&png(4, 4, [1, 2, 3]))).await;
    assert_eq!(
        (s, err_code(&v)),
        (StatusCode::INTERNAL_SERVER_ERROR, "internal_error")
    );
    let text = v.to_string().to_lowercase();
    for leak in ["sql", "jobs", "table", "vto.db", "/tmp"] {
        assert!(!text.contains(leak), "500 body leaks {leak:?}: {text}");
    }
    assert!(h.contains_key("x-request-id"));
    server.kill();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn clients_dropping_connections_are_counted_not_server_errors() {
    // Regression: warp logged every connection a client dropped mid-request as `ERROR server
    // connection error: hyper::Error(IncompleteMessage)` (391,893 lines in 8 s of `wrk -c
    // 2000`); they are now DEBUG lines and this counter.
    use tokio::io::AsyncWriteExt as _;
    let log = listener_log();
    let dir = tempfile::tempdir().unwrap();
    let server = vto_server::start(config(dir.path(), &[]), Engines::new())
        .await
        .unwrap();
    let api = Api::new(&server);
    let mut half = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    half.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    drop(half);
    let mut garbage = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    garbage
        .write_all(b"\x01\x02 not http\r\n\r\n")
        .await
        .unwrap();
    let mut counted = String::new();
    for _ in 0..100 {
        let text = api
            .http
            .get(format!("{}/metrics", api.base))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        counted = text
            .lines()
            .find(|l| l.starts_with("vto_http_client_connection_errors_total "))
            .unwrap_or("")
            .to_string();
        if counted.ends_with(" 2") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(counted, "vto_http_client_connection_errors_total 2");
    let (s, _, _) = api.get(None, "/healthz").await;
    assert_eq!(s, StatusCode::OK);
    drop(garbage);
    server.shutdown().await;
    // The accept loop's own log: two DEBUG lines, not one ERROR line (other tests of this
    // binary share the log; no connection of theirs may log an ERROR either).
    let lines = log.lock().unwrap().clone();
    let debug = lines
        .iter()
        .filter(|(level, msg)| {
            *level == tracing::Level::DEBUG && msg.contains("client connection error")
        })
        .count();
    assert!(debug >= 2, "{lines:?}");
    assert!(
        !lines
            .iter()
            .any(|(level, _)| *level == tracing::Level::ERROR),
        "{lines:?}"
    );
}

/// The events of `vto_server::listener` (level, message) from every test of this binary:
/// a process-wide subscriber, installed once, that records only that target.
fn listener_log() -> std::sync::Arc<std::sync::Mutex<Vec<(tracing::Level, String)>>> {
    use std::sync::{Arc, Mutex, OnceLock};
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::Layer as _;
    type Log = Arc<Mutex<Vec<(tracing::Level, String)>>>;
    struct Recorder(Log);
    impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Recorder {
        fn on_event(
            &self,
            event: &tracing::Event<'_>,
            _: tracing_subscriber::layer::Context<'_, S>,
        ) {
            struct Message(String);
            impl tracing::field::Visit for Message {
                fn record_debug(&mut self, f: &tracing::field::Field, v: &dyn std::fmt::Debug) {
                    if f.name() == "message" {
                        self.0 = format!("{v:?}");
                    }
                }
            }
            let mut m = Message(String::new());
            event.record(&mut m);
            self.0
                .lock()
                .unwrap()
                .push((*event.metadata().level(), m.0));
        }
    }
    static LOG: OnceLock<Log> = OnceLock::new();
    LOG.get_or_init(|| {
        let log: Log = Arc::default();
        let filter = tracing_subscriber::filter::Targets::new()
            .with_target("vto_server::listener", tracing::Level::DEBUG);
        let subscriber =
            tracing_subscriber::registry().with(Recorder(log.clone()).with_filter(filter));
        tracing::subscriber::set_global_default(subscriber).expect("no other subscriber");
        log
    })
    .clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_burst_on_one_key_limits_only_that_key_and_endpoint_and_is_never_billed() {
    let dir = tempfile::tempdir().unwrap();
    let mut engines = Engines::new();
    engines.register(Category::Glasses, Arc::new(TintEngine::default()));
    let server = vto_server::start(
        config(
            dir.path(),
            &[
                ("VTO_RATE_CREATE_TRY_ON", "3/60"),
                ("VTO_RATE_GET_TRY_ON", "100/1"),
            ],
        ),
        engines,
    )
    .await
    .unwrap();
    let api = Api::new(&server);
    let (acct_a, key_a) = account_with_key(&server, "5.00").await;
    let (_, key_b) = account_with_key(&server, "5.00").await;
    let person = png(4, 4, [50, 50, 50]);
    let mut last_id = String::new();
    for i in 0..3 {
        let (s, h, v) = api.post(&key_a, &glasses(&person)).await;
        assert_eq!(s, StatusCode::OK, "request {i}: {v}");
        assert_eq!(h["ratelimit-policy"], "\"default\";q=3;w=60");
        assert_eq!(
            h["ratelimit"].to_str().unwrap(),
            format!("\"default\";r={};t={}", 2 - i, (i + 1) * 20)
        );
        last_id = v["request_id"].as_str().unwrap().to_string();
    }
    let before = balance(&server, &acct_a).await;
    let jobs_before = server.storage.jobs.count_by_status().await.unwrap();
    for _ in 0..3 {
        let (s, h, v) = api.post(&key_a, &glasses(&person)).await;
        assert_eq!(
            (s, err_code(&v)),
            (StatusCode::TOO_MANY_REQUESTS, "rate_limit_exceeded")
        );
        assert_eq!(h["retry-after"], "20");
        assert_eq!(h["ratelimit"], "\"default\";r=0;t=60");
    }
    // a 429 is decided first: even a broken body gets 429, not 400
    let r = api
        .http
        .post(format!("{}/v1/virtual-try-on", api.base))
        .bearer_auth(&key_a)
        .header("content-type", "text/plain")
        .body("nonsense")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
    // a large body on a limited key still gets a clean 429 (the body is drained, not reset)
    let big = json!({"category": "glasses", "person_image": "x".repeat(3_000_000)});
    for _ in 0..3 {
        let (s, _, v) = api.post(&key_a, &big).await;
        assert_eq!(
            (s, err_code(&v)),
            (StatusCode::TOO_MANY_REQUESTS, "rate_limit_exceeded")
        );
    }
    // never billed, nothing created
    let after = balance(&server, &acct_a).await;
    assert_eq!((after.balance, after.held), (before.balance, before.held));
    assert_eq!(
        server.storage.jobs.count_by_status().await.unwrap(),
        jobs_before
    );
    // key B and GET on key A are unaffected
    let (s, _, _) = api.post(&key_b, &glasses(&person)).await;
    assert_eq!(s, StatusCode::OK);
    let (s, h, _) = api
        .get(Some(&key_a), &format!("/v1/virtual-try-on/{last_id}"))
        .await;
    assert_eq!(s, StatusCode::OK);
    assert!(h["ratelimit-policy"].to_str().unwrap().contains("q=100"));
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn async_jobs_go_queued_processing_success_and_failures_are_not_billed() {
    let dir = tempfile::tempdir().unwrap();
    let (open, gate) = tokio::sync::watch::channel(false);
    let (started_tx, mut started) = tokio::sync::mpsc::unbounded_channel();
    let mut engines = Engines::new();
    engines.register(
        Category::Shirt,
        Arc::new(GatedEngine {
            gate,
            started: started_tx,
        }),
    );
    let server = vto_server::start(
        config(
            dir.path(),
            &[("VTO_WORKERS", "1"), ("VTO_PRICE_SHIRT", "0.12")],
        ),
        engines,
    )
    .await
    .unwrap();
    let api = Api::new(&server);
    let (acct, key) = account_with_key(&server, "1.00").await;

    let (s, h, v) = api.post(&key, &shirt(&png(5, 5, [9, 9, 9]))).await;
    assert_eq!(s, StatusCode::ACCEPTED, "{v}");
    let id = v["request_id"].as_str().unwrap().to_string();
    assert_eq!(
        v,
        json!({"request_id": id, "status": "queued", "category": "shirt", "result": null, "cost": null})
    );
    assert_eq!(
        h["location"].to_str().unwrap(),
        format!("http://{}/v1/virtual-try-on/{id}", server.addr)
    );
    // a second job behind it stays queued while the one worker is busy
    let (_, _, v2) = api.post(&key, &shirt(&png(1, 1, [9, 9, 9]))).await;
    let id2 = v2["request_id"].as_str().unwrap().to_string();
    let first = started.recv().await.unwrap();
    assert_eq!(first.to_string(), id);
    let (_, _, g) = api
        .get(Some(&key), &format!("/v1/virtual-try-on/{id}"))
        .await;
    assert_eq!(g["status"], "processing");
    assert!(g["result"].is_null() && g["cost"].is_null());
    let (_, _, g2) = api
        .get(Some(&key), &format!("/v1/virtual-try-on/{id2}"))
        .await;
    assert_eq!(g2["status"], "queued");
    let b = balance(&server, &acct).await;
    assert_eq!(
        (b.balance, b.held),
        (Decimal::new(100, 2), Decimal::new(24, 2))
    );

    open.send(true).unwrap();
    let done = wait_status(&api, &key, &id, "success").await;
    assert_eq!(done["cost"], json!({"amount": "0.12", "currency": "USD"}));
    assert!(done["processing_time_ms"].is_u64());
    let img = api
        .http
        .get(done["result"]["image_url"].as_str().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(img.status(), StatusCode::OK);
    let failed = wait_status(&api, &key, &id2, "failed").await;
    assert_eq!(failed["error"]["code"], "processing_failed");
    assert!(failed["cost"].is_null());

    // billed once, at the configured price, for the success only
    let b = settled(&server, &acct).await;
    assert_eq!((b.balance, b.held), (Decimal::new(88, 2), Decimal::ZERO));
    let entries = server.storage.ledger.entries(&acct).await.unwrap();
    let captures: Vec<_> = entries
        .iter()
        .filter(|e| e.kind == EntryKind::Capture)
        .collect();
    assert_eq!(captures.len(), 1);
    assert_eq!(captures[0].request_id.unwrap().to_string(), id);

    // cancel: a queued job is canceled and its hold released
    open.send(false).unwrap();
    let (_, _, v3) = api.post(&key, &shirt(&png(5, 5, [1, 1, 1]))).await;
    let id3 = v3["request_id"].as_str().unwrap().to_string();
    let _ = started.recv().await;
    let r = api
        .http
        .post(format!("{}/v1/virtual-try-on/{id3}/cancel", api.base))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let c: Value = r.json().await.unwrap();
    assert_eq!(
        (
            c["status"].as_str(),
            err_code(&json!({"error": c["error"]}))
        ),
        (Some("canceled"), "canceled")
    );
    assert_eq!(settled(&server, &acct).await.held, Decimal::ZERO);
    open.send(true).unwrap();
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_concurrent_submits_with_funds_for_thirty_accept_exactly_thirty() {
    let dir = tempfile::tempdir().unwrap();
    let (open, gate) = tokio::sync::watch::channel(false);
    let (started_tx, _started) = tokio::sync::mpsc::unbounded_channel();
    let mut engines = Engines::new();
    engines.register(
        Category::Shirt,
        Arc::new(GatedEngine {
            gate,
            started: started_tx,
        }),
    );
    let server = vto_server::start(
        config(
            dir.path(),
            &[("VTO_RATE_CREATE_TRY_ON", "1000/1"), ("VTO_WORKERS", "4")],
        ),
        engines,
    )
    .await
    .unwrap();
    let api = Arc::new(Api::new(&server));
    let (acct, key) = account_with_key(&server, "4.50").await;
    let body = shirt(&png(3, 3, [7, 7, 7]));
    let mut tasks = Vec::new();
    for _ in 0..50 {
        let (api, key, body) = (api.clone(), key.clone(), body.clone());
        tasks.push(tokio::spawn(async move { api.post(&key, &body).await }));
    }
    let mut accepted = Vec::new();
    let mut refused = 0;
    for t in tasks {
        let (s, _, v) = t.await.unwrap();
        match s {
            StatusCode::ACCEPTED => accepted.push(v["request_id"].as_str().unwrap().to_string()),
            StatusCode::PAYMENT_REQUIRED => {
                assert_eq!(err_code(&v), "insufficient_balance");
                refused += 1;
            }
            other => panic!("unexpected {other}: {v}"),
        }
    }
    assert_eq!((accepted.len(), refused), (30, 20));
    let b = balance(&server, &acct).await;
    assert_eq!(
        (b.balance, b.held, b.available),
        (Decimal::new(450, 2), Decimal::new(450, 2), Decimal::ZERO)
    );
    open.send(true).unwrap();
    for id in &accepted {
        wait_status(&api, &key, id, "success").await;
    }
    let b = settled(&server, &acct).await;
    assert_eq!((b.balance, b.held), (Decimal::ZERO, Decimal::ZERO));
    let entries = server.storage.ledger.entries(&acct).await.unwrap();
    assert_eq!(
        entries
            .iter()
            .filter(|e| e.kind == EntryKind::Capture)
            .count(),
        30
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_restart_mid_queue_finishes_every_job_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    // Server A: one worker stuck inside the engine; then it "dies".
    let (_never, gate) = tokio::sync::watch::channel(false);
    let (started_tx, mut started) = tokio::sync::mpsc::unbounded_channel();
    let mut engines = Engines::new();
    engines.register(
        Category::Shirt,
        Arc::new(GatedEngine {
            gate,
            started: started_tx,
        }),
    );
    let cfg = config(dir.path(), &[("VTO_WORKERS", "1"), ("VTO_LEASE_SECS", "1")]);
    let a = vto_server::start(cfg.clone(), engines).await.unwrap();
    let api = Api::new(&a);
    let (acct, key) = account_with_key(&a, "10.00").await;
    let mut ids = Vec::new();
    for i in 0..6u8 {
        let (s, _, v) = api.post(&key, &shirt(&png(4, 4, [i, i, i]))).await;
        assert_eq!(s, StatusCode::ACCEPTED);
        ids.push(v["request_id"].as_str().unwrap().to_string());
    }
    let in_hand = started.recv().await.unwrap();
    a.kill();

    // Server B on the same data dir, with a working engine.
    let tint = Arc::new(TintEngine::default());
    let mut engines = Engines::new();
    engines.register(Category::Shirt, tint.clone());
    let b = vto_server::start(cfg, engines).await.unwrap();
    let api = Api::new(&b);
    for id in &ids {
        wait_status(&api, &key, id, "success").await;
    }
    let renders = tint.renders.lock().unwrap().clone();
    assert_eq!(renders.len(), 6, "every job rendered by B");
    assert!(
        renders.values().all(|n| *n == 1),
        "exactly once each: {renders:?}"
    );
    assert!(
        renders.contains_key(&in_hand),
        "the job A died on was re-queued"
    );
    let bal = settled(&b, &acct).await;
    assert_eq!(
        (bal.balance, bal.held),
        (Decimal::new(910, 2), Decimal::ZERO)
    );
    let entries = b.storage.ledger.entries(&acct).await.unwrap();
    assert_eq!(
        entries
            .iter()
            .filter(|e| e.kind == EntryKind::Capture)
            .count(),
        6
    );
    b.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_api_instance_queues_and_a_worker_instance_on_the_same_storage_renders() {
    let dir = tempfile::tempdir().unwrap();
    let front_engine = Arc::new(TintEngine::default());
    let mut engines = Engines::new();
    engines.register(Category::Shirt, front_engine.clone());
    let front = vto_server::start(config(dir.path(), &[("VTO_ROLE", "api")]), engines)
        .await
        .unwrap();
    let api = Api::new(&front);
    let (acct, key) = account_with_key(&front, "1.00").await;
    let mut ids = Vec::new();
    for i in 0..3u8 {
        let (s, _, v) = api.post(&key, &shirt(&png(4, 4, [i, 9, 9]))).await;
        assert_eq!(s, StatusCode::ACCEPTED);
        ids.push(v["request_id"].as_str().unwrap().to_string());
    }
    // No worker runs in an API instance: the jobs wait.
    tokio::time::sleep(Duration::from_millis(300)).await;
    for id in &ids {
        let (_, _, v) = api
            .get(Some(&key), &format!("/v1/virtual-try-on/{id}"))
            .await;
        assert_eq!(v["status"], "queued", "{id}");
    }

    let back_engine = Arc::new(TintEngine::default());
    let mut engines = Engines::new();
    engines.register(Category::Shirt, back_engine.clone());
    let back = vto_server::start(config(dir.path(), &[("VTO_ROLE", "worker")]), engines)
        .await
        .unwrap();
    // The API instance sees the worker's results (its caches notice the other writer).
    for id in &ids {
        let v = wait_status(&api, &key, id, "success").await;
        let url = v["result"]["image_url"].as_str().unwrap().to_string();
        let img = reqwest::get(&url).await.unwrap();
        assert_eq!(img.status(), StatusCode::OK, "{url}");
        assert!(image::load_from_memory(&img.bytes().await.unwrap()).is_ok());
    }
    assert_eq!(back_engine.renders.lock().unwrap().len(), 3);
    assert!(front_engine.renders.lock().unwrap().is_empty());
    let bal = settled(&front, &acct).await;
    assert_eq!(
        bal.balance,
        Decimal::new(55, 2),
        "three shirts at 0.15 captured once each"
    );

    // A worker serves only the operational paths.
    let worker = Api::new(&back);
    let (s, _, v) = worker.post(&key, &shirt(&png(4, 4, [1, 1, 1]))).await;
    assert_eq!((s, err_code(&v)), (StatusCode::NOT_FOUND, "not_found"));
    assert!(
        v["error"]["message"].as_str().unwrap().contains("worker"),
        "{v}"
    );
    for path in ["/healthz", "/readyz", "/metrics"] {
        let r = reqwest::get(format!("{}{path}", worker.base))
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::OK, "{path}");
    }
    let (s, _, _) = worker.get(Some(&key), "/v1/balance").await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    back.shutdown().await;
    front.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openapi_lists_every_route_status_and_error_code_the_server_uses() {
    let dir = tempfile::tempdir().unwrap();
    let server = vto_server::start(config(dir.path(), &[]), Engines::new())
        .await
        .unwrap();
    let api = Api::new(&server);
    let (s, h, doc) = api.get(None, "/openapi.json").await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(h["content-type"], "application/json");
    assert!(doc["openapi"].as_str().unwrap().starts_with("3."));
    for (path, method, status) in EXERCISED {
        assert!(
            doc["paths"][path][method]["responses"][status.to_string()].is_object(),
            "OpenAPI lacks {method} {path} {status}"
        );
    }
    let codes = doc["components"]["schemas"]["Error"]["properties"]["error"]["properties"]["code"]
        ["enum"]
        .as_array()
        .unwrap();
    for c in vto_core::ErrorCode::ALL {
        assert!(codes.contains(&json!(c.as_str())), "{c} missing");
    }
    // every $ref resolves
    let text = doc.to_string();
    for piece in text.split("\"$ref\":\"#/").skip(1) {
        let target = piece.split('"').next().unwrap();
        let mut node = &doc;
        for part in target.split('/') {
            node = &node[part];
        }
        assert!(!node.is_null(), "dangling $ref {target}");
    }
    // with no engines, every category answers 501 (never a made-up image)
    let (_, key) = account_with_key(&server, "1.00").await;
    let (s, _, v) = api.post(&key, &glasses(&png(4, 4, [0, 0, 0]))).await;
    assert_eq!(
        (s, err_code(&v)),
        (StatusCode::NOT_IMPLEMENTED, "engine_unavailable")
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_list_shows_the_accounts_latest_try_ons_only() {
    let dir = tempfile::tempdir().unwrap();
    let server = tint_server(dir.path()).await;
    let api = Api::new(&server);
    let (_, key) = account_with_key(&server, "1.00").await;
    let (_, other) = account_with_key(&server, "1.00").await;
    let mut ids = Vec::new();
    for i in 0..3u8 {
        let (s, _, v) = api.post(&key, &glasses(&png(4, 4, [i, 0, 0]))).await;
        assert_eq!(s, StatusCode::OK);
        ids.push(v["request_id"].as_str().unwrap().to_string());
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let (s, _, v) = api.post(&other, &glasses(&png(4, 4, [9, 9, 9]))).await;
    assert_eq!(s, StatusCode::OK);
    let foreign = v["request_id"].as_str().unwrap().to_string();

    let (s, _, v) = api.get(Some(&key), "/v1/virtual-try-on?limit=2").await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(v["object"], "list");
    assert_eq!(v["has_more"], true);
    let listed: Vec<&str> = v["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["request_id"].as_str().unwrap())
        .collect();
    assert_eq!(listed, [ids[2].as_str(), ids[1].as_str()], "newest first");
    assert_eq!(v["data"][0]["cost"]["amount"], "0.05");
    assert!(v["data"][0]["result"]["image_url"].is_string());

    let (s, _, v) = api
        .get(Some(&key), "/v1/virtual-try-on?status=success")
        .await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(
        v["data"].as_array().unwrap().len(),
        3,
        "the default page holds all three"
    );
    assert_eq!(v["has_more"], false);
    assert!(
        !v.to_string().contains(&foreign),
        "another account's job listed"
    );
    let (_, _, v) = api
        .get(Some(&key), "/v1/virtual-try-on?status=failed")
        .await;
    assert_eq!(v["data"].as_array().unwrap().len(), 0);

    for (query, param) in [
        ("limit=0", "limit"),
        ("limit=101", "limit"),
        ("limit=ten", "limit"),
        ("status=done", "status"),
        ("colour=red", "colour"),
    ] {
        let (s, _, v) = api
            .get(Some(&key), &format!("/v1/virtual-try-on?{query}"))
            .await;
        assert_eq!(
            (s, err_code(&v), v["error"]["param"].as_str()),
            (StatusCode::BAD_REQUEST, "invalid_request", Some(param)),
            "{query}"
        );
    }
    let (s, _, v) = api.get(None, "/v1/virtual-try-on").await;
    assert_eq!(
        (s, err_code(&v)),
        (StatusCode::UNAUTHORIZED, "missing_api_key")
    );
    // The list path takes GET and POST; anything else is 405 naming both.
    let r = api
        .http
        .delete(format!("{}/v1/virtual-try-on", api.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(r.headers()["allow"], "GET, POST");
    server.shutdown().await;
}

/// TEST DOUBLE: answers a 4×4 PNG and records the options each render was given.
#[derive(Default)]
struct OptionsEngine {
    seen: Mutex<Vec<vto_core::RenderOptions>>,
}

#[async_trait]
impl Engine for OptionsEngine {
    fn name(&self) -> &str {
        "test-options"
    }
    async fn render(&self, input: RenderInput<'_>) -> Result<Rendered, EngineError> {
        self.seen.lock().unwrap().push(input.options);
        Ok(Rendered {
            image: png(4, 4, [1, 2, 3]),
            content_type: "image/png".into(),
            metadata: json!({}),
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remove_own_eyewear_is_validated_and_reaches_the_engine() {
    use vto_core::RemoveOwnEyewear;
    let dir = tempfile::tempdir().unwrap();
    let engine = Arc::new(OptionsEngine::default());
    let mut engines = Engines::new();
    engines.register(Category::Glasses, engine.clone());
    let server = vto_server::start(config(dir.path(), &[]), engines)
        .await
        .unwrap();
    let api = Api::new(&server);
    let (_, key) = account_with_key(&server, "1.00").await;
    let person = png(8, 6, [10, 20, 30]);

    // Bad values: 400 with the field named and a stable code; nothing rendered or billed.
    for (bad, code) in [
        (json!("sometimes"), "invalid_value"),
        (json!("Auto"), "invalid_value"),
        (json!(1), "invalid_type"),
    ] {
        let mut body = glasses(&person);
        body["remove_own_eyewear"] = bad.clone();
        let (s, _, v) = api.post(&key, &body).await;
        assert_eq!(
            (s, err_code(&v), v["error"]["param"].as_str()),
            (
                StatusCode::BAD_REQUEST,
                "invalid_request",
                Some("remove_own_eyewear")
            ),
            "{bad}"
        );
        // A single problem is answered without `details` (they list several).
        if let Some(d) = v["error"]["details"].as_array().filter(|d| !d.is_empty()) {
            assert_eq!(d[0]["code"], code, "{bad}");
        }
        assert!(
            v["error"]["message"]
                .as_str()
                .unwrap_or("")
                .contains("remove_own_eyewear"),
            "{v}"
        );
    }
    assert!(engine.seen.lock().unwrap().is_empty());

    // Absent: auto; each value reaches the engine as sent.
    let (s, _, v) = api.post(&key, &glasses(&person)).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    for value in ["never", "always", "auto"] {
        let mut body = glasses(&person);
        body["remove_own_eyewear"] = json!(value);
        let (s, _, v) = api.post(&key, &body).await;
        assert_eq!(s, StatusCode::OK, "{v}");
    }
    assert_eq!(
        engine
            .seen
            .lock()
            .unwrap()
            .iter()
            .map(|o| o.remove_own_eyewear)
            .collect::<Vec<_>>(),
        vec![
            RemoveOwnEyewear::Auto,
            RemoveOwnEyewear::Never,
            RemoveOwnEyewear::Always,
            RemoveOwnEyewear::Auto
        ]
    );
    // The OpenAPI document lists the option and its values.
    let (_, _, doc) = api.get(None, "/openapi.json").await;
    assert_eq!(
        doc["components"]["schemas"]["CreateRequest"]["properties"]["remove_own_eyewear"]["enum"],
        json!(["auto", "never", "always"])
    );
    assert_eq!(
        doc["components"]["schemas"]["CreateRequest"]["properties"]["remove_own_hat"]["enum"],
        json!(["auto", "never", "always"])
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn product_kind_is_validated_per_category_and_reaches_the_engine() {
    use vto_core::ProductKind;
    let dir = tempfile::tempdir().unwrap();
    let engine = Arc::new(OptionsEngine::default());
    let mut engines = Engines::new();
    for c in [Category::Glasses, Category::Jewelry, Category::Hats] {
        engines.register(c, engine.clone());
    }
    let server = vto_server::start(config(dir.path(), &[]), engines)
        .await
        .unwrap();
    let api = Api::new(&server);
    let (_, key) = account_with_key(&server, "1.00").await;
    let person = png(8, 6, [10, 20, 30]);
    let with = |category: &str, kind: Value| {
        let mut body = glasses(&person);
        body["category"] = json!(category);
        body["product_kind"] = kind;
        body
    };

    // A kind of another category, an unknown kind, a wrong type: 400 naming the field, with
    // a stable code; nothing rendered or billed.
    for (category, bad, code) in [
        ("jewelry", json!("cap"), "unsupported_product_kind"),
        ("hats", json!("earrings"), "unsupported_product_kind"),
        ("glasses", json!("ring"), "unsupported_product_kind"),
        ("jewelry", json!("tiara"), "invalid_value"),
        ("jewelry", json!(2), "invalid_type"),
    ] {
        let (s, _, v) = api.post(&key, &with(category, bad.clone())).await;
        assert_eq!(
            (s, err_code(&v), v["error"]["param"].as_str()),
            (
                StatusCode::BAD_REQUEST,
                "invalid_request",
                Some("product_kind")
            ),
            "{category} {bad}"
        );
        if let Some(d) = v["error"]["details"].as_array().filter(|d| !d.is_empty()) {
            assert_eq!(d[0]["code"], code, "{category} {bad}");
        }
        assert!(
            v["error"]["message"]
                .as_str()
                .unwrap_or("")
                .contains("product_kind"),
            "{v}"
        );
    }
    assert!(engine.seen.lock().unwrap().is_empty());

    // Absent: none; a kind of the category reaches the engine as sent.
    for (category, kind) in [
        ("jewelry", None),
        ("jewelry", Some("earrings")),
        ("jewelry", Some("watch")),
        ("hats", Some("brimmed")),
    ] {
        let body = with(category, kind.map_or(Value::Null, |k| json!(k)));
        let (s, _, v) = api.post(&key, &body).await;
        assert_eq!(s, StatusCode::OK, "{category} {kind:?}: {v}");
    }
    assert_eq!(
        engine
            .seen
            .lock()
            .unwrap()
            .iter()
            .map(|o| o.product_kind)
            .collect::<Vec<_>>(),
        vec![
            None,
            Some(ProductKind::Earrings),
            Some(ProductKind::Watch),
            Some(ProductKind::Brimmed)
        ]
    );
    // The OpenAPI document lists the field and every value.
    let (_, _, doc) = api.get(None, "/openapi.json").await;
    assert_eq!(
        doc["components"]["schemas"]["CreateRequest"]["properties"]["product_kind"]["enum"],
        json!(ProductKind::ALL.map(|k| k.as_str()))
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_playground_is_served_with_a_strict_policy_and_can_be_turned_off() {
    use vto_server::playground::{Sample, SampleRole};
    let sample = Sample {
        id: "person-test".into(),
        label: "A test photo".into(),
        role: SampleRole::Person,
        categories: Vec::new(),
        content_type: "image/png".into(),
        bytes: png(4, 4, [1, 2, 3]).into(),
        credit: "made by this test".into(),
    };
    let dir = tempfile::tempdir().unwrap();
    let mut engines = Engines::new();
    engines.register(Category::Glasses, Arc::new(TintEngine::default()));
    let server = vto_server::start_with(config(dir.path(), &[]), engines, &[], {
        let sample = sample.clone();
        Box::new(move || vec![sample])
    })
    .await
    .unwrap();
    let api = Api::new(&server);
    let no_redirect = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let r = no_redirect
        .get(format!("{}/", api.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::SEE_OTHER);
    assert_eq!(r.headers()["location"], "/playground");
    let r = api
        .http
        .get(format!("{}/playground", api.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let csp = r.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(csp.starts_with("default-src 'none'") && csp.contains("script-src 'self'"));
    assert!(r.text().await.unwrap().contains("vto playground"));
    let (s, _, v) = api.get(None, "/playground/config.json").await;
    assert_eq!(s, StatusCode::OK);
    let glasses = v["categories"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["category"] == "glasses")
        .unwrap()
        .clone();
    assert_eq!(
        (glasses["available"].clone(), glasses["price"].clone()),
        (json!(true), json!("0.05"))
    );
    let shirt = v["categories"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["category"] == "shirt")
        .unwrap()
        .clone();
    assert_eq!(shirt["available"], false);
    assert!(shirt["reason"].is_string());
    let (_, _, v) = api.get(None, "/playground/samples").await;
    assert_eq!(v["samples"][0]["id"], "person-test");
    let r = api
        .http
        .get(format!("{}/playground/samples/person-test", api.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers()["content-type"], "image/png");
    assert_eq!(r.bytes().await.unwrap(), sample.bytes);
    let (s, _, v) = api.get(None, "/playground/samples/nothing").await;
    assert_eq!((s, err_code(&v)), (StatusCode::NOT_FOUND, "not_found"));
    server.shutdown().await;

    // Off: every playground path is an unknown path.
    let dir = tempfile::tempdir().unwrap();
    let server = vto_server::start_with(
        config(dir.path(), &[("VTO_PLAYGROUND", "false")]),
        Engines::new(),
        &[],
        Box::new(move || vec![sample]),
    )
    .await
    .unwrap();
    let api = Api::new(&server);
    for path in [
        "/",
        "/playground",
        "/playground/app.js",
        "/playground/samples",
    ] {
        let (s, _, v) = api.get(None, path).await;
        assert_eq!(
            (s, err_code(&v)),
            (StatusCode::NOT_FOUND, "not_found"),
            "{path}"
        );
    }
    server.shutdown().await;
}
