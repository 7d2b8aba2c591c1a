//! Completion webhooks end to end: a real receiver on loopback that verifies every delivery
//! with the independent `standardwebhooks` package from PyPI (scripts/webhook_receiver.py),
//! retries with a stable `webhook-id`, delivery across a restart, the SSRF guard on webhook
//! URLs, and `Idempotency-Key` over HTTP.
//!
//! Needs a Python with `standardwebhooks` in `VTO_TEST_PYTHON` (scripts/test.sh sets one up).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use vto_core::outbox::DeliveryStatus;
use vto_core::testing::{data_url, png, EchoEngine};
use vto_core::{Category, Engines};
use vto_server::{Config, RunningServer};

fn engines() -> Engines {
    let mut e = Engines::new();
    e.register(Category::Shirt, Arc::new(EchoEngine::new()));
    e.register(Category::Glasses, Arc::new(EchoEngine::new()));
    e
}

fn config(dir: &Path, allow_loopback: bool) -> Config {
    let toml = dir.join("test.toml");
    std::fs::write(
        &toml,
        "[webhooks]\ntimeout_ms = 2000\nretry_schedule_secs = [1, 1, 1, 1, 1]\npoll_interval_ms = 50\n",
    )
    .unwrap();
    let mut env = vec![
        ("VTO_LISTEN".to_string(), "127.0.0.1:0".to_string()),
        ("VTO_DATA_DIR".to_string(), dir.display().to_string()),
        ("VTO_POLL_INTERVAL_MS".to_string(), "20".to_string()),
    ];
    if allow_loopback {
        env.push(("VTO_OUTBOUND_ALLOW".into(), "127.0.0.1/32".into()));
    }
    Config::load(Some(&toml), env).expect("config")
}

struct Receiver {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn receiver(dir: &Path, secret: &str, fail_first: u32) -> Receiver {
    let python = std::env::var("VTO_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/webhook_receiver.py");
    let log = dir.join(format!("receiver-{fail_first}.jsonl"));
    let mut child = Command::new(&python)
        .arg(&script)
        .args(["--secret", secret, "--log"])
        .arg(&log)
        .args(["--fail-first", &fail_first.to_string()])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{python}: {e}; set VTO_TEST_PYTHON to a Python with standardwebhooks (scripts/test.sh does)"));
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line.trim().parse().unwrap_or_else(|_| {
        panic!("the receiver did not start ({line:?}); is standardwebhooks installed for {python}?")
    });
    Receiver { child, port, log }
}

fn log_lines(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

async fn account(server: &RunningServer) -> (vto_core::AccountId, String, String) {
    let a = server.service.create_account("hooks").await.unwrap();
    server
        .service
        .add_funds(&a.id, "10".parse().unwrap(), "t")
        .await
        .unwrap();
    let k = server.service.create_api_key(&a.id, "t").await.unwrap();
    let secrets = server.storage.secrets.clone();
    let secret = secrets.secret(&a.id).await.unwrap().expose();
    (a.id, k.secret, secret)
}

async fn submit(
    server: &RunningServer,
    key: &str,
    body: &Value,
    idem: Option<&str>,
) -> (u16, Value, bool) {
    let mut rb = reqwest::Client::new()
        .post(format!("http://{}/v1/virtual-try-on", server.addr))
        .bearer_auth(key)
        .json(body);
    if let Some(k) = idem {
        rb = rb.header("Idempotency-Key", k);
    }
    let r = rb.send().await.unwrap();
    let replayed = r.headers().get("idempotent-replayed").is_some();
    (r.status().as_u16(), r.json().await.unwrap(), replayed)
}

async fn wait_for(mut f: impl FnMut() -> bool, what: &str) {
    for _ in 0..300 {
        if f() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("timed out waiting for {what}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhooks_are_signed_retried_with_a_stable_id_and_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let server = vto_server::start(config(dir.path(), true), engines())
        .await
        .unwrap();
    let (_acct, key, secret) = account(&server).await;
    let rx = receiver(dir.path(), &secret, 2);
    let hook = format!("http://127.0.0.1:{}/hooks/vto", rx.port);

    let body = json!({"category": "shirt", "person_image": data_url("image/png", &png(4, 4, [10, 20, 30])),
                      "product_image": data_url("image/png", &png(4, 4, [10, 20, 30])), "webhook_url": hook});
    let (status, created, _) = submit(&server, &key, &body, None).await;
    assert_eq!(status, 202);
    let id = created["request_id"].as_str().unwrap().to_string();

    // The receiver answers 500 twice; the first try arrives, then we kill the server.
    wait_for(|| !log_lines(&rx.log).is_empty(), "the first webhook try").await;
    let store = server.storage.clone();
    server.kill();
    drop(store);

    // Restart on the same data dir: the outbox carries on.
    let server = vto_server::start(config(dir.path(), true), engines())
        .await
        .unwrap();
    wait_for(
        || log_lines(&rx.log).iter().any(|l| l["status"] == 204),
        "a 2xx delivery after the restart",
    )
    .await;
    let lines = log_lines(&rx.log);
    assert!(lines.len() >= 3, "{lines:?}");
    assert!(
        lines.iter().all(|l| l["verified"] == true),
        "every try verifies: {lines:?}"
    );
    let ids: Vec<_> = lines.iter().map(|l| l["webhook_id"].clone()).collect();
    assert!(
        ids.iter().all(|i| *i == ids[0]),
        "stable webhook-id: {ids:?}"
    );
    let last = lines.last().unwrap();
    assert_eq!(last["payload"]["request_id"], id.as_str());
    assert_eq!(last["payload"]["status"], "success");
    assert_eq!(last["payload"]["cost"]["amount"], "0.15");
    let statuses: Vec<_> = lines
        .iter()
        .map(|l| l["status"].as_i64().unwrap())
        .collect();
    assert_eq!(&statuses[..2], &[500, 500]);

    let msg = ids[0].as_str().unwrap().to_string();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let d = server.storage.outbox.get(&msg).await.unwrap().unwrap();
    assert_eq!(d.status, DeliveryStatus::Delivered);
    let tries = server.storage.outbox.attempts(&msg).await.unwrap();
    assert_eq!(tries.last().unwrap().http_status, Some(204));
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhooks_to_internal_addresses_are_refused_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let server = vto_server::start(config(dir.path(), false), engines())
        .await
        .unwrap();
    let (_acct, key, secret) = account(&server).await;
    let rx = receiver(dir.path(), &secret, 0);
    for hook in [
        format!("http://127.0.0.1:{}/hook", rx.port),
        format!("http://localhost:{}/hook", rx.port),
        "http://169.254.169.254/latest/meta-data".to_string(),
        "http://10.1.2.3/hook".to_string(),
        "http://[::ffff:127.0.0.1]/hook".to_string(),
    ] {
        let body = json!({"category": "shirt", "person_image": data_url("image/png", &png(4, 4, [10, 20, 30])),
                          "product_image": data_url("image/png", &png(4, 4, [10, 20, 30])), "webhook_url": hook});
        let (status, created, _) = submit(&server, &key, &body, None).await;
        assert_eq!(status, 202);
        let msg = format!(
            "msg_{}",
            created["request_id"].as_str().unwrap().replace('-', "")
        );
        let store = server.storage.clone();
        let mut tried = false;
        for _ in 0..200 {
            if !store.outbox.attempts(&msg).await.unwrap().is_empty() {
                tried = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        assert!(tried, "{hook}: no try recorded");
        let a = &store.outbox.attempts(&msg).await.unwrap()[0];
        assert_eq!(a.http_status, None, "{hook}");
        assert!(
            a.error
                .as_deref()
                .unwrap_or("")
                .contains("vto does not connect to"),
            "{hook}: {:?}",
            a.error
        );
    }
    assert!(
        log_lines(&rx.log).is_empty(),
        "nothing reached the loopback receiver"
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idempotency_key_replays_over_http() {
    let dir = tempfile::tempdir().unwrap();
    let server = vto_server::start(config(dir.path(), true), engines())
        .await
        .unwrap();
    let (acct, key, _) = account(&server).await;
    let body = json!({"category": "glasses", "person_image": data_url("image/png", &png(4, 4, [10, 20, 30])),
                      "product_model": data_url("image/png", b"glTF")});
    let (s1, r1, rep1) = submit(&server, &key, &body, Some("order-1")).await;
    let (s2, r2, rep2) = submit(&server, &key, &body, Some("order-1")).await;
    assert_eq!((s1, s2), (200, 200));
    assert_eq!(r1, r2);
    assert!(!rep1 && rep2);
    let b = server
        .service
        .backends()
        .ledger
        .balance(&acct)
        .await
        .unwrap();
    assert_eq!(b.balance, "9.95".parse().unwrap(), "charged once");
    let other = json!({"category": "glasses", "person_image": data_url("image/png", &png(4, 4, [10, 20, 30])),
                       "product_model": data_url("image/png", b"glTF2")});
    let (s3, r3, _) = submit(&server, &key, &other, Some("order-1")).await;
    assert_eq!(s3, 409);
    assert_eq!(r3["error"]["code"], "idempotency_conflict");
    server.shutdown().await;
}
