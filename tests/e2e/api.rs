//! A black-box walk through every endpoint and every error code of the real `vto serve`, and
//! the operations a shop relies on while it runs: per-account limits set with `vto admin
//! account limits` and a key revoked with `vto admin key revoke`, both applied without a
//! restart.
//!
//! `hats` (synchronous) and `shirt` (asynchronous) go to a TEST DOUBLE render service on
//! loopback that answers every render with a small PNG; webhooks go to a TEST DOUBLE
//! receiver. No models are given, so the built-in glasses engine is unavailable, which
//! `/readyz` must say.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{json, Value};
use vto_tests::{free_port, vto_bin, vto_json, Server};
use warp::Filter;

use crate::doubles::{data_url, data_url_of, png, render_service};

type Hooks = Arc<Mutex<Vec<(HashMap<String, String>, Value)>>>;

/// TEST DOUBLE webhook receiver: keeps each delivery's headers and body.
async fn receiver(seen: Hooks) -> SocketAddr {
    let hook = warp::post()
        .and(warp::header::headers_cloned())
        .and(warp::body::json())
        .map(move |h: warp::http::HeaderMap, body: Value| {
            let headers = h
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or("").to_string()))
                .collect();
            seen.lock().unwrap().push((headers, body));
            warp::reply()
        });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(warp::serve(hook).incoming(listener).run());
    addr
}

struct Api {
    http: reqwest::Client,
    base: String,
}

impl Api {
    async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        key: Option<&str>,
        body: Option<&Value>,
        headers: &[(&str, &str)],
    ) -> (StatusCode, reqwest::header::HeaderMap, Value) {
        let mut rq = self.http.request(method, format!("{}{path}", self.base));
        if let Some(k) = key {
            rq = rq.bearer_auth(k);
        }
        if let Some(b) = body {
            rq = rq.json(b);
        }
        for (k, v) in headers {
            rq = rq.header(*k, *v);
        }
        let r = rq.send().await.expect("request");
        let (status, headers) = (r.status(), r.headers().clone());
        let text = r.text().await.expect("body");
        let v = serde_json::from_str(&text).unwrap_or(Value::String(text));
        (status, headers, v)
    }

    async fn post(
        &self,
        key: &str,
        body: &Value,
    ) -> (StatusCode, reqwest::header::HeaderMap, Value) {
        self.call(
            reqwest::Method::POST,
            "/v1/virtual-try-on",
            Some(key),
            Some(body),
            &[],
        )
        .await
    }

    async fn get(&self, key: &str, path: &str) -> (StatusCode, reqwest::header::HeaderMap, Value) {
        self.call(reqwest::Method::GET, path, Some(key), None, &[])
            .await
    }
}

fn code(v: &Value) -> &str {
    v["error"]["code"].as_str().unwrap_or("<none>")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_endpoint_and_error_code_of_the_real_binary() {
    let render = render_service(png(), Duration::ZERO).await;
    let hooks: Hooks = Arc::default();
    let hook_addr = receiver(hooks.clone()).await;
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    std::fs::write(
        dir.path().join("vto.toml"),
        format!(
            "[engines.hats]\nkind = \"http\"\nurl = \"http://{render}\"\n\n\
             [engines.shirt]\nkind = \"http\"\nurl = \"http://{render}\"\n\n\
             [webhooks]\nretry_schedule_secs = [1, 1, 1]\npoll_interval_ms = 50\n"
        ),
    )
    .unwrap();
    let envs: Vec<(&str, String)> = vec![
        (
            "VTO_DATA_DIR",
            dir.path().join("data").display().to_string(),
        ),
        ("VTO_LISTEN", format!("127.0.0.1:{port}")),
        ("VTO_OUTBOUND_ALLOW", "127.0.0.1/32".into()),
        (
            "VTO_MODELS_DIR",
            dir.path().join("no-models").display().to_string(),
        ),
        ("VTO_FETCH_MODELS", "false".into()),
        ("VTO_BODY_LIMIT_BYTES", "65536".into()),
        ("VTO_RATE_BALANCE", "3/60".into()),
        ("VTO_POLL_INTERVAL_MS", "20".into()),
        ("RUST_LOG", "warn".into()),
    ];
    let cfg = dir.path().join("vto.toml").display().to_string();
    let admin = |args: &[&str]| {
        let mut a = vec!["--config", cfg.as_str()];
        a.extend_from_slice(args);
        vto_json(&envs, &a)
    };
    let acct = admin(&[
        "admin",
        "account",
        "create",
        "--name",
        "Walk",
        "--balance",
        "5.00",
    ]);
    let acct = acct["account"]["id"].as_str().unwrap().to_string();
    let key = admin(&["admin", "key", "create", &acct, "--name", "walk"])["secret"]
        .as_str()
        .unwrap()
        .to_string();
    let poor = admin(&[
        "admin",
        "account",
        "create",
        "--name",
        "Poor",
        "--balance",
        "0.01",
    ]);
    let poor = poor["account"]["id"].as_str().unwrap().to_string();
    let poor_key = admin(&["admin", "key", "create", &poor])["secret"]
        .as_str()
        .unwrap()
        .to_string();

    let mut server = Server(
        Command::new(vto_bin())
            .args(["--config", &cfg, "serve"])
            .envs(envs.iter().map(|(k, v)| (*k, v.as_str())))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    assert!(
        server.wait_up(port, Duration::from_secs(30)),
        "vto serve did not start"
    );
    let api = Api {
        http: reqwest::Client::new(),
        base: format!("http://127.0.0.1:{port}"),
    };
    use reqwest::Method;

    // Probes and the API description.
    let (s, h, v) = api.call(Method::GET, "/healthz", None, None, &[]).await;
    assert_eq!((s, &v["status"]), (StatusCode::OK, &json!("ok")));
    assert!(h["x-request-id"].to_str().unwrap().starts_with("req_"));
    let (s, _, v) = api.call(Method::GET, "/readyz", None, None, &[]).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["status"], "degraded", "a built-in engine is missing: {v}");
    let glasses = &v["unavailable"]["glasses"];
    assert!(
        glasses["fix"]
            .as_str()
            .unwrap()
            .contains("vto models fetch"),
        "{v}"
    );
    // Every category has a built-in engine now; without the models each says how to get them.
    assert!(
        v["unavailable"]["pants"]["fix"]
            .as_str()
            .unwrap()
            .contains("vto models fetch"),
        "{v}"
    );
    assert!(
        v["unavailable"].get("hats").is_none(),
        "hats has an engine: {v}"
    );
    let (s, _, v) = api
        .call(Method::GET, "/openapi.json", None, None, &[])
        .await;
    assert_eq!(s, StatusCode::OK);
    assert!(v["openapi"].as_str().unwrap().starts_with("3.1"), "{v}");

    // A GLB header is all the sniffing needs; the TEST DOUBLE service never parses it.
    let hats = json!({"category": "hats", "person_image": data_url(&png()),
                      "product_model": data_url_of("model/gltf-binary", b"glTF\x02\0\0\0\x0c\0\0\0")});
    // 401 missing, 401 invalid.
    let (s, h, v) = api
        .call(Method::POST, "/v1/virtual-try-on", None, Some(&hats), &[])
        .await;
    assert_eq!((s, code(&v)), (StatusCode::UNAUTHORIZED, "missing_api_key"));
    assert!(h.contains_key("www-authenticate"));
    let (s, _, v) = api.post("vto_sk_not_a_real_key", &hats).await;
    assert_eq!((s, code(&v)), (StatusCode::UNAUTHORIZED, "invalid_api_key"));
    // 415, 413, 400 (bad JSON; a missing field named by `param`).
    let r = api
        .http
        .post(format!("{}/v1/virtual-try-on", api.base))
        .bearer_auth(&key)
        .header("content-type", "text/plain")
        .body("category=hats")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let v: Value = r.json().await.unwrap();
    assert_eq!(code(&v), "unsupported_media_type");
    let big = json!({"category": "hats", "person_image": "x".repeat(100_000)});
    let (s, _, v) = api.post(&key, &big).await;
    assert_eq!(
        (s, code(&v)),
        (StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large")
    );
    let r = api
        .http
        .post(format!("{}/v1/virtual-try-on", api.base))
        .bearer_auth(&key)
        .header("content-type", "application/json")
        .body("{")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    assert_eq!(code(&r.json().await.unwrap()), "invalid_request");
    let (s, _, v) = api
        .post(
            &key,
            &json!({"category": "hats", "person_image": "https://shop.example/p.jpg"}),
        )
        .await;
    assert_eq!((s, code(&v)), (StatusCode::BAD_REQUEST, "invalid_request"));
    assert_eq!(v["error"]["param"], "product_model", "{v}");
    // 501 for a category whose engine cannot run here (its models are missing).
    let (s, _, v) = api
        .post(
            &key,
            &json!({"category": "pants", "person_image": data_url(&png()),
                    "product_image": data_url(&png())}),
        )
        .await;
    assert_eq!(
        (s, code(&v)),
        (StatusCode::NOT_IMPLEMENTED, "engine_unavailable")
    );
    // 402 for a balance short of the price.
    let (s, _, v) = api.post(&poor_key, &hats).await;
    assert_eq!(
        (s, code(&v)),
        (StatusCode::PAYMENT_REQUIRED, "insufficient_balance")
    );

    // Synchronous success, its image, and 409 not_cancelable on the finished job.
    let (s, h, v) = api.post(&key, &hats).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["status"], "success");
    assert_eq!(v["cost"]["amount"], "0.05");
    assert!(h.contains_key("ratelimit-policy"));
    let sync_id = v["request_id"].as_str().unwrap().to_string();
    let img = api
        .http
        .get(v["result"]["image_url"].as_str().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(img.status(), StatusCode::OK);
    assert_eq!(img.headers()["content-type"], "image/png");
    let (s, _, v) = api
        .call(
            Method::POST,
            &format!("/v1/virtual-try-on/{sync_id}/cancel"),
            Some(&key),
            None,
            &[],
        )
        .await;
    assert_eq!((s, code(&v)), (StatusCode::CONFLICT, "not_cancelable"));
    let (s, _, v) = api.get(&key, "/v1/results/not-a-token").await;
    assert_eq!((s, code(&v)), (StatusCode::NOT_FOUND, "not_found"));

    // Asynchronous: 202 + Location, GET until success, a signed webhook.
    let shirt = json!({"category": "shirt", "person_image": data_url(&png()),
                       "product_image": data_url(&png()),
                       "webhook_url": format!("http://{hook_addr}/hook")});
    let (s, h, v) = api.post(&key, &shirt).await;
    assert_eq!(s, StatusCode::ACCEPTED, "{v}");
    assert_eq!(v["status"], "queued");
    let id = v["request_id"].as_str().unwrap().to_string();
    assert!(h["location"]
        .to_str()
        .unwrap()
        .ends_with(&format!("/v1/virtual-try-on/{id}")));
    let mut done = Value::Null;
    for _ in 0..400 {
        let (s, _, v) = api.get(&key, &format!("/v1/virtual-try-on/{id}")).await;
        assert_eq!(s, StatusCode::OK);
        done = v;
        if done["status"] == "success" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(done["status"], "success", "{done}");
    assert_eq!(done["cost"]["amount"], "0.15");
    let mut delivered = None;
    for _ in 0..400 {
        delivered = hooks
            .lock()
            .unwrap()
            .iter()
            .find(|(_, b)| b["request_id"] == id.as_str())
            .cloned();
        if delivered.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let (headers, body) = delivered.expect("the completion webhook arrived");
    assert_eq!(body["status"], "success");
    assert!(
        headers["webhook-signature"].starts_with("v1,"),
        "{headers:?}"
    );
    assert!(headers.contains_key("webhook-id") && headers.contains_key("webhook-timestamp"));

    // 404 unknown id, 405 wrong method (with Allow), 404 unknown route.
    let (s, _, v) = api
        .get(
            &key,
            "/v1/virtual-try-on/00000000-0000-4000-8000-000000000000",
        )
        .await;
    assert_eq!((s, code(&v)), (StatusCode::NOT_FOUND, "not_found"));
    let r = api
        .http
        .delete(format!("{}/v1/virtual-try-on", api.base))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    let (s, h) = (r.status(), r.headers().clone());
    let v: Value = r.json().await.unwrap_or(Value::Null);
    assert_eq!(
        (s, code(&v)),
        (StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed")
    );
    assert_eq!(h["allow"], "GET, POST");
    // GET on the collection lists the account's try-ons, newest first.
    let (s, _, v) = api.get(&key, "/v1/virtual-try-on?limit=1").await;
    assert_eq!((s, v["object"].as_str()), (StatusCode::OK, Some("list")));
    assert_eq!(v["data"].as_array().map(Vec::len), Some(1));
    let (s, _, v) = api.get(&key, "/v2/nothing").await;
    assert_eq!((s, code(&v)), (StatusCode::NOT_FOUND, "not_found"));

    // Idempotency: a replay, then 409 idempotency_conflict for another body.
    let idem = [("idempotency-key", "walk-1")];
    let plain = json!({"category": "shirt", "person_image": data_url(&png()),
                       "product_image": data_url(&png())});
    let (s1, _, v1) = api
        .call(
            Method::POST,
            "/v1/virtual-try-on",
            Some(&key),
            Some(&plain),
            &idem,
        )
        .await;
    let (s2, h2, v2) = api
        .call(
            Method::POST,
            "/v1/virtual-try-on",
            Some(&key),
            Some(&plain),
            &idem,
        )
        .await;
    assert_eq!(
        (s1, s2),
        (StatusCode::ACCEPTED, StatusCode::ACCEPTED),
        "{v1} {v2}"
    );
    assert_eq!(v1["request_id"], v2["request_id"]);
    assert_eq!(h2["idempotent-replayed"], "true");
    let (s, _, v) = api
        .call(
            Method::POST,
            "/v1/virtual-try-on",
            Some(&key),
            Some(&shirt),
            &idem,
        )
        .await;
    assert_eq!(
        (s, code(&v)),
        (StatusCode::CONFLICT, "idempotency_conflict")
    );

    // Balance, and 429 with its headers once the configured 3/60 is used up.
    for i in 0..3 {
        let (s, h, v) = api.get(&key, "/v1/balance").await;
        assert_eq!(s, StatusCode::OK, "request {i}: {v}");
        assert_eq!(h["ratelimit-policy"], "\"default\";q=3;w=60");
        assert_eq!(v["account_id"], acct.as_str());
    }
    let (s, h, v) = api.get(&key, "/v1/balance").await;
    assert_eq!(
        (s, code(&v)),
        (StatusCode::TOO_MANY_REQUESTS, "rate_limit_exceeded")
    );
    assert!(h["retry-after"].to_str().unwrap().parse::<u64>().unwrap() >= 1);
    assert!(h["ratelimit"].to_str().unwrap().contains("r=0"), "{h:?}");

    // Per-account limits, set while the server runs: applied at the next request.
    let fresh = admin(&["admin", "key", "create", &acct, "--name", "limits"])["secret"]
        .as_str()
        .unwrap()
        .to_string();
    let set = admin(&[
        "admin", "account", "limits", &acct, "--create", "1/60", "--get", "100/1",
    ]);
    assert_eq!(set["limits"]["create_try_on"]["limit"], "1/60");
    let shown = admin(&["admin", "account", "show", &acct]);
    assert_eq!(shown["limits"]["create_try_on"]["source"], "account");
    assert_eq!(shown["limits"]["get_try_on"]["limit"], "100/1");
    assert_eq!(shown["limits"]["balance"]["source"], "default");
    let (s, h, v) = api.post(&fresh, &plain).await;
    assert_eq!(s, StatusCode::ACCEPTED, "{v}");
    assert_eq!(h["ratelimit-policy"], "\"default\";q=1;w=60");
    let (s, _, v) = api.post(&fresh, &plain).await;
    assert_eq!(
        (s, code(&v)),
        (StatusCode::TOO_MANY_REQUESTS, "rate_limit_exceeded")
    );
    let (_, h, _) = api.get(&fresh, &format!("/v1/virtual-try-on/{id}")).await;
    assert_eq!(h["ratelimit-policy"], "\"default\";q=100;w=1");
    admin(&["admin", "account", "limits", &acct, "--reset"]);
    let (_, h, _) = api.get(&fresh, &format!("/v1/virtual-try-on/{id}")).await;
    assert_eq!(
        h["ratelimit-policy"], "\"default\";q=50;w=1",
        "back to the default"
    );

    // Revocation from another process applies by the time the command returns.
    let (s, _, _) = api.get(&fresh, &format!("/v1/virtual-try-on/{id}")).await;
    assert_eq!(s, StatusCode::OK);
    let keys = admin(&["admin", "key", "list", "--account", &acct]);
    let fresh_id = keys
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["name"] == "limits")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    admin(&["admin", "key", "revoke", &fresh_id]);
    let (s, _, v) = api.get(&fresh, &format!("/v1/virtual-try-on/{id}")).await;
    assert_eq!((s, code(&v)), (StatusCode::UNAUTHORIZED, "invalid_api_key"));

    // Metrics count what happened.
    let (s, h, text) = api.call(Method::GET, "/metrics", None, None, &[]).await;
    assert_eq!(s, StatusCode::OK);
    assert!(h["content-type"]
        .to_str()
        .unwrap()
        .contains("openmetrics-text"));
    let text = text.as_str().unwrap();
    for series in [
        "vto_http_requests_total{route=\"create_try_on\",method=\"POST\",status=\"200\"} 1",
        "vto_http_requests_total{route=\"create_try_on\",method=\"POST\",status=\"501\"} 1",
        "vto_render_duration_seconds_count{category=\"hats\",outcome=\"success\"} 1",
        "vto_engine_calls_total{engine=\"http:shirt\"}",
    ] {
        assert!(text.contains(series), "missing {series}:\n{text}");
    }
    let successes: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("vto_jobs{status=\"success\"} "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0);
    assert!(
        successes >= 2,
        "vto_jobs{{status=\"success\"}} = {successes}:\n{text}"
    );
    server.kill();
}
