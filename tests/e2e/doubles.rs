//! What the end-to-end tests send and talk to: a tiny PNG, `data:` URLs and the render service
//! double (all from `vto_core::testing`), and a TEST DOUBLE webhook receiver on loopback.

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use warp::Filter;

pub use vto_core::testing::{data_url as data_url_of, render_service};

/// The 1×1 white PNG the end-to-end requests send (and the render service double answers).
pub fn png() -> Vec<u8> {
    vto_core::testing::png(1, 1, [255, 255, 255])
}

/// `bytes` as a PNG `data:` URL.
pub fn data_url(bytes: &[u8]) -> String {
    data_url_of("image/png", bytes)
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
