//! `S3ResultStore` against a real S3-compatible server (`scripts/s3.sh start` runs SeaweedFS
//! and prints the environment these tests read):
//!
//! - `VTO_TEST_S3_ENDPOINT`, `VTO_TEST_S3_BUCKET`, `VTO_TEST_S3_ACCESS_KEY_ID`,
//!   `VTO_TEST_S3_SECRET_ACCESS_KEY` (and optionally `VTO_TEST_S3_REGION`).
//!
//! Without them each test prints why and returns, unless `VTO_REQUIRE_S3=1` (set by
//! `scripts/test.sh`), when it fails instead.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use vto_core::results::ResultStoreError;
use vto_core::{RequestId, ResultStore, Timestamp};
use vto_s3::{S3Options, S3ResultStore};

struct Env {
    endpoint: String,
    bucket: String,
    access_key: String,
    secret_key: String,
    region: Option<String>,
}

/// The server's settings, or `None` (after saying why) when the tests should skip.
fn env(test: &str) -> Option<Env> {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let names = [
        "VTO_TEST_S3_ENDPOINT",
        "VTO_TEST_S3_BUCKET",
        "VTO_TEST_S3_ACCESS_KEY_ID",
        "VTO_TEST_S3_SECRET_ACCESS_KEY",
    ];
    let missing: Vec<&str> = names.iter().copied().filter(|n| var(n).is_none()).collect();
    if !missing.is_empty() {
        let why = format!(
            "{test}: no S3 server ({} unset); run `eval \"$(scripts/s3.sh start)\"` first",
            missing.join(", ")
        );
        if var("VTO_REQUIRE_S3").as_deref() == Some("1") {
            panic!("VTO_REQUIRE_S3=1 but {why}");
        }
        eprintln!("skipped {why}");
        return None;
    }
    Some(Env {
        endpoint: var("VTO_TEST_S3_ENDPOINT")?,
        bucket: var("VTO_TEST_S3_BUCKET")?,
        access_key: var("VTO_TEST_S3_ACCESS_KEY_ID")?,
        secret_key: var("VTO_TEST_S3_SECRET_ACCESS_KEY")?,
        region: var("VTO_TEST_S3_REGION"),
    })
}

static PREFIXES: AtomicUsize = AtomicUsize::new(0);

/// A store under a prefix no other test or earlier run uses.
fn store_with(env: &Env, secret: &str, ttl: Duration) -> S3ResultStore {
    let prefix = format!(
        "tests/{}-{}-{}",
        std::process::id(),
        uuid::Uuid::new_v4().simple(),
        PREFIXES.fetch_add(1, Ordering::SeqCst)
    );
    S3ResultStore::from_url(
        &format!("s3://{}/{prefix}", env.bucket),
        S3Options {
            endpoint: Some(env.endpoint.clone()),
            allow_http: true,
            region: env.region.clone(),
            access_key_id: Some(env.access_key.clone()),
            secret_access_key: Some(secret.to_string()),
            url_ttl: ttl,
            ..S3Options::default()
        },
    )
    .expect("store")
}

fn store(env: &Env) -> S3ResultStore {
    store_with(env, &env.secret_key, Duration::from_secs(600))
}

fn png_bytes() -> Vec<u8> {
    let mut b = b"\x89PNG\r\n\x1a\n".to_vec();
    b.extend((0..50_000u32).map(|i| (i * 7 % 256) as u8));
    b
}

#[tokio::test]
async fn s3_result_store_conforms() {
    let Some(env) = env("s3_result_store_conforms") else {
        return;
    };
    store(&env).check().await.expect("the bucket answers");
    vto_core::conformance::result_store(|| async { store(&env) }).await;
}

#[tokio::test]
async fn a_presigned_url_serves_the_image_to_a_plain_client() {
    let Some(env) = env("a_presigned_url_serves_the_image_to_a_plain_client") else {
        return;
    };
    let s = store(&env);
    let bytes = png_bytes();
    let id = RequestId(uuid::Uuid::new_v4());
    let key = s.put(id, &bytes, "image/png").await.expect("put");
    let url = s.url(&key, Timestamp(0)).await.expect("presign");
    assert!(url.starts_with(&env.endpoint), "{url}");
    assert!(url.contains("X-Amz-Signature="), "{url}");
    let resp = reqwest::get(&url).await.expect("GET the presigned URL");
    assert_eq!(resp.status(), reqwest::StatusCode::OK);
    assert_eq!(
        resp.headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok()),
        Some("image/png")
    );
    let body = resp.bytes().await.expect("body");
    assert!(body.as_ref() == bytes.as_slice(), "the served bytes differ");

    // The signature covers the object: the same query on another key is refused.
    let other = s
        .put(RequestId(uuid::Uuid::new_v4()), b"other", "image/png")
        .await
        .expect("put other");
    let swapped = url.replace(&key, &other);
    assert_ne!(swapped, url);
    let resp = reqwest::get(&swapped).await.expect("GET the altered URL");
    assert_eq!(resp.status(), reqwest::StatusCode::FORBIDDEN);

    // Without any signature the bucket is private.
    let bare = url.split('?').next().unwrap_or(&url).to_string();
    let resp = reqwest::get(&bare).await.expect("GET without signature");
    assert!(
        resp.status() == reqwest::StatusCode::FORBIDDEN
            || resp.status() == reqwest::StatusCode::UNAUTHORIZED,
        "an unsigned GET got {}",
        resp.status()
    );
}

#[tokio::test]
async fn an_expired_url_is_refused() {
    let Some(env) = env("an_expired_url_is_refused") else {
        return;
    };
    let s = store_with(&env, &env.secret_key, Duration::from_secs(1));
    let key = s
        .put(RequestId(uuid::Uuid::new_v4()), &png_bytes(), "image/png")
        .await
        .expect("put");
    let url = s.url(&key, Timestamp(0)).await.expect("presign");
    assert!(url.contains("X-Amz-Expires=1"), "{url}");
    // SigV4 signs the wall-clock time, so expiry is only observable by letting it pass.
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    let resp = reqwest::get(&url).await.expect("GET the expired URL");
    assert_eq!(resp.status(), reqwest::StatusCode::FORBIDDEN);
    let body = resp.text().await.unwrap_or_default();
    assert!(
        body.contains("AccessDenied") || body.contains("xpired"),
        "{body}"
    );
    // A fresh URL for the same key works again.
    let fresh = s.url(&key, Timestamp(0)).await.expect("presign again");
    let resp = reqwest::get(&fresh).await.expect("GET the fresh URL");
    assert_eq!(resp.status(), reqwest::StatusCode::OK);
}

#[tokio::test]
async fn wrong_credentials_and_a_missing_bucket_are_clear_errors() {
    let Some(env) = env("wrong_credentials_and_a_missing_bucket_are_clear_errors") else {
        return;
    };
    let wrong = store_with(&env, "not-the-secret", Duration::from_secs(60));
    let err = wrong.check().await.expect_err("check with a wrong secret");
    assert!(matches!(err, ResultStoreError::Denied { .. }), "{err:?}");
    let missing = S3ResultStore::from_url(
        &format!("s3://no-such-bucket-{}/x", uuid::Uuid::new_v4().simple()),
        S3Options {
            endpoint: Some(env.endpoint.clone()),
            allow_http: true,
            access_key_id: Some(env.access_key.clone()),
            secret_access_key: Some(env.secret_key.clone()),
            ..S3Options::default()
        },
    )
    .expect("settings");
    let err = missing.check().await.expect_err("check a missing bucket");
    assert!(
        matches!(&err, ResultStoreError::NotConfigured(m) if m.contains("does not exist")),
        "{err:?}"
    );
    let id = RequestId(uuid::Uuid::new_v4());
    let err = wrong
        .put(id, b"x", "image/png")
        .await
        .expect_err("put with a wrong secret");
    let msg = err.to_string();
    assert!(matches!(err, ResultStoreError::Denied { .. }), "{err:?}");
    assert!(msg.contains("refused access"), "{msg}");
    assert!(
        msg.contains(&format!("writing s3://{}/", env.bucket)) && msg.contains(&id.to_string()),
        "the error names the object: {msg}"
    );
    assert!(!msg.contains("not-the-secret"), "the secret leaks: {msg}");
    let err = wrong
        .get(&format!("{id}.png"))
        .await
        .expect_err("get with a wrong secret");
    assert!(matches!(err, ResultStoreError::Denied { .. }), "{err:?}");

    // A URL presigned with the wrong secret is refused by the server.
    let good = store(&env);
    let key = good.put(id, b"y", "image/png").await.expect("put");
    let url = wrong
        .url(&key, Timestamp(0))
        .await
        .expect("presigning is local");
    let resp = reqwest::get(&url).await.expect("GET");
    assert_eq!(resp.status(), reqwest::StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn bad_settings_are_not_configured_errors() {
    let opts = |f: fn(&mut S3Options)| {
        let mut o = S3Options {
            endpoint: Some("http://127.0.0.1:9".into()),
            allow_http: true,
            access_key_id: Some("k".into()),
            secret_access_key: Some("s".into()),
            ..S3Options::default()
        };
        f(&mut o);
        o
    };
    for (url, o, why) in [
        ("s3://b/p", opts(|o| o.url_ttl = Duration::ZERO), "lifetime"),
        (
            "s3://b/p",
            opts(|o| o.url_ttl = Duration::from_secs(8 * 24 * 3600)),
            "lifetime",
        ),
        (
            "s3://b/p",
            opts(|o| o.endpoint = Some("ftp://x".into())),
            "http:// or https://",
        ),
        ("s3://b/p", opts(|o| o.allow_http = false), "plain http"),
        (
            "s3://b/p",
            opts(|o| o.secret_access_key = None),
            "both the S3 access key id and the secret",
        ),
        ("gs://b/p", opts(|_| {}), "scheme"),
    ] {
        let err = S3ResultStore::from_url(url, o).expect_err(why);
        assert!(
            matches!(&err, ResultStoreError::NotConfigured(m) if m.contains(why)),
            "{url}: {err}"
        );
    }
    // Nothing listens on port 9: an unreachable server is a backend error, not a panic.
    let s = S3ResultStore::from_url(
        "s3://b/p",
        opts(|o| o.request_timeout = Duration::from_secs(2)),
    )
    .expect("settings are fine");
    assert_eq!(s.location().bucket, "b");
    assert!(format!("{s:?}").contains("s3://b/p"));
    let err = s.check().await.expect_err("nothing listens");
    assert!(
        matches!(&err, ResultStoreError::Backend { context, .. } if context.contains("s3://b/p")),
        "{err:?}"
    );
}
