//! What the end-to-end tests send and talk to: a tiny PNG, `data:` URLs, and TEST DOUBLE
//! render service and webhook receiver on loopback.

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use warp::Filter;

/// A valid 1×1 PNG.
pub fn png() -> Vec<u8> {
    vec![
        0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44,
        0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F,
        0x15, 0xC4, 0x89, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0xF8,
        0xCF, 0xC0, 0xF0, 0x1F, 0x00, 0x05, 0x00, 0x01, 0xFF, 0x89, 0x99, 0x3D, 0x1D, 0x00, 0x00,
        0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82,
    ]
}

/// `bytes` as a PNG `data:` URL.
pub fn data_url(bytes: &[u8]) -> String {
    data_url_of("image/png", bytes)
}

/// `bytes` as a `data:` URL of type `mime`.
pub fn data_url_of(mime: &str, bytes: &[u8]) -> String {
    use base64::Engine as _;
    format!(
        "data:{mime};base64,{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    )
}

/// TEST DOUBLE render service: answers every render with 200 and [`png`] after `delay`, and
/// `GET /healthz` with 200.
pub async fn render_service(delay: Duration) -> SocketAddr {
    let render = warp::post()
        .and(warp::path("render"))
        .and(warp::body::bytes())
        .then(move |_body: bytes::Bytes| async move {
            tokio::time::sleep(delay).await;
            warp::http::Response::builder()
                .header("content-type", "image/png")
                .body(png())
                .unwrap()
        });
    let health = warp::get().and(warp::path("healthz")).map(warp::reply);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(warp::serve(render.or(health)).incoming(listener).run());
    addr
}

/// TEST DOUBLE webhook receiver: records, per request id, the webhook ids it was sent with.
pub async fn receiver(seen: Arc<Mutex<HashMap<String, HashSet<String>>>>) -> SocketAddr {
    let hook = warp::post()
        .and(warp::header::<String>("webhook-id"))
        .and(warp::body::json())
        .map(move |id: String, body: serde_json::Value| {
            let rid = body["request_id"].as_str().unwrap_or_default().to_string();
            seen.lock().unwrap().entry(rid).or_default().insert(id);
            warp::reply()
        });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(warp::serve(hook).incoming(listener).run());
    addr
}
