//! External render engines from the config: routed by `[engines.<category>]`, their
//! reachability in `/readyz` and their counters in `/metrics`. The render service is a TEST
//! DOUBLE on loopback that answers every render with the person photo.

use std::time::Duration;

use base64::Engine as _;
use serde_json::{json, Value};
use vto_core::testing::{png, render_service};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configured_render_services_are_routed_probed_and_counted() {
    let up = render_service(png(8, 8, [200, 100, 50]), Duration::ZERO).await;
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let toml = dir.path().join("vto.toml");
    std::fs::write(
        &toml,
        format!(
            "[engines.shirt]\nkind = \"http\"\nurl = \"http://{up}\"\n\n\
             [engines.dress]\nkind = \"http\"\nurl = \"http://{closed}\"\ntimeout_ms = 1000\n"
        ),
    )
    .unwrap();
    let env = vec![
        ("VTO_LISTEN".to_string(), "127.0.0.1:0".to_string()),
        (
            "VTO_DATA_DIR".to_string(),
            dir.path().join("data").display().to_string(),
        ),
        (
            "VTO_MODELS_DIR".to_string(),
            dir.path().join("none").display().to_string(),
        ),
        ("VTO_POLL_INTERVAL_MS".to_string(), "20".to_string()),
    ];
    let config = vto_server::Config::load(Some(&toml), env).unwrap();
    let engines = vto_server::build_engines(&config, vto_core::Engines::new()).unwrap();
    // Built-in engines (glasses, sunglasses) may be there too when the models are present.
    for (c, name) in [
        (vto_core::Category::Shirt, "http:shirt"),
        (vto_core::Category::Dress, "http:dress"),
    ] {
        assert_eq!(
            engines.get(c).map(|e| e.name().to_string()),
            Some(name.into())
        );
    }
    assert!(engines.get(vto_core::Category::Pants).is_none());
    let server = vto_server::start(config, engines).await.unwrap();
    let base = format!("http://{}", server.addr);
    let http = reqwest::Client::new();

    let ready: Value = http
        .get(format!("{base}/readyz"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(ready["status"], "degraded", "{ready}");
    assert_eq!(ready["engines"]["shirt"]["reachable"], true, "{ready}");
    assert_eq!(ready["engines"]["dress"]["reachable"], false, "{ready}");

    let acct = server.service.create_account("e").await.unwrap();
    server
        .service
        .add_funds(&acct.id, "1".parse().unwrap(), "t")
        .await
        .unwrap();
    let key = server
        .service
        .create_api_key(&acct.id, "k")
        .await
        .unwrap()
        .secret;
    let url = format!(
        "data:image/png;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(png(8, 8, [200, 100, 50]))
    );
    let r: Value = http
        .post(format!("{base}/v1/virtual-try-on"))
        .bearer_auth(&key)
        .json(&json!({"category": "shirt", "person_image": url, "product_image": url}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = r["request_id"].as_str().unwrap().to_string();
    let mut done = Value::Null;
    for _ in 0..200 {
        done = http
            .get(format!("{base}/v1/virtual-try-on/{id}"))
            .bearer_auth(&key)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if done["status"] == "success" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(done["status"], "success", "{done}");

    let metrics = http
        .get(format!("{base}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains("vto_engine_calls_total{engine=\"http:shirt\"} 1"),
        "{metrics}"
    );
    assert!(
        metrics.contains("vto_engine_calls_total{engine=\"http:dress\"} 0"),
        "{metrics}"
    );
    server.shutdown().await;
}
