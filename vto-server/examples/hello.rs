//! The baseline for `scripts/bench-server.sh`: the smallest warp server (`GET /hello` → "ok"),
//! on the same runtime settings as vto-server, so the benchmark shows what vto's own work costs.

use warp::Filter;

#[tokio::main]
async fn main() {
    let addr: std::net::SocketAddr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:8099".into())
        .parse()
        .expect("an address like 127.0.0.1:8099");
    let hello = warp::path!("hello").and(warp::get()).map(|| "ok");
    let listener = tokio::net::TcpListener::bind(addr).await.expect("bind");
    warp::serve(hello).incoming(listener).run().await;
}
