//! Crash safety of the real binary: `vto serve` is killed with SIGKILL at random moments while a
//! batch of asynchronous jobs runs, restarted on the same data dir, 20 rounds. Afterwards every
//! job finished exactly once, the balance is exact to the cent, each success was captured once,
//! and every completion webhook arrived.
//!
//! The render service and the webhook receiver are TEST DOUBLES in this process, on loopback:
//! the render service answers every render with a small PNG after a short delay.

use std::collections::HashMap;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use vto_tests::{free_port, vto_bin, Server};

use crate::doubles::{data_url, png, receiver, render_service};

struct Env {
    dir: tempfile::TempDir,
    port: u16,
}

impl Env {
    fn cmd(&self) -> Command {
        let mut c = Command::new(vto_bin());
        c.arg("--config")
            .arg(self.dir.path().join("vto.toml"))
            .env("VTO_DATA_DIR", self.dir.path().join("data"))
            .env("VTO_LISTEN", format!("127.0.0.1:{}", self.port))
            .env("VTO_OUTBOUND_ALLOW", "127.0.0.1/32")
            .env("VTO_LEASE_SECS", "2")
            .env("VTO_MAX_ATTEMPTS", "50")
            // Repair crash leftovers (a finished job whose hold and webhook hand-over were cut
            // off by the kill) after 3 s instead of the default 5 min.
            .env("VTO_RECONCILE_AFTER_SECS", "3")
            .env("VTO_RATE_GET_TRY_ON", "100000/1")
            .env("VTO_POLL_INTERVAL_MS", "20")
            .env("VTO_MODELS_DIR", self.dir.path().join("no-models"))
            .env("VTO_FETCH_MODELS", "false")
            .env("RUST_LOG", "error");
        c
    }
    fn admin(&self, args: &[&str]) -> Value {
        let out = self.cmd().arg("--json").args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }
    fn serve(&self) -> Server {
        Server(
            self.cmd()
                .arg("serve")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap(),
        )
    }
}

async fn up(http: &reqwest::Client, port: u16) -> bool {
    for _ in 0..200 {
        if http
            .get(format!("http://127.0.0.1:{port}/healthz"))
            .send()
            .await
            .is_ok()
        {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_at_random_moments_loses_nothing_and_bills_exactly() {
    let render = render_service(png(), Duration::from_millis(30)).await;
    let seen = Arc::new(Mutex::new(HashMap::new()));
    let hooks = receiver(seen.clone()).await;
    let env = Env {
        dir: tempfile::tempdir().unwrap(),
        port: free_port(),
    };
    std::fs::write(
        env.dir.path().join("vto.toml"),
        format!(
            "[engines.shirt]\nkind = \"http\"\nurl = \"http://{render}\"\n\n\
             [webhooks]\ntimeout_ms = 2000\nretry_schedule_secs = [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n\
             poll_interval_ms = 50\n"
        ),
    )
    .unwrap();
    let acct = env.admin(&[
        "admin",
        "account",
        "create",
        "--name",
        "crash",
        "--balance",
        "100.00",
    ]);
    let acct = acct["account"]["id"].as_str().unwrap().to_string();
    let key = env.admin(&["admin", "key", "create", &acct]);
    let key = key["secret"].as_str().unwrap().to_string();

    let http = reqwest::Client::new();
    let body = json!({"category": "shirt", "person_image": data_url(&png()),
                      "product_image": data_url(&png()),
                      "webhook_url": format!("http://{hooks}/hook")});
    let mut accepted: Vec<String> = Vec::new();
    let mut rng = 0x2545_F491_4F6C_DD1Du64;
    let mut next = |m: u64| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng % m
    };
    for round in 0..20 {
        let mut child = env.serve();
        assert!(
            up(&http, env.port).await,
            "round {round}: the server did not start"
        );
        for _ in 0..3 {
            let r = http
                .post(format!("http://127.0.0.1:{}/v1/virtual-try-on", env.port))
                .bearer_auth(&key)
                .json(&body)
                .send()
                .await;
            if let Ok(r) = r {
                if r.status().as_u16() == 202 {
                    let v: Value = r.json().await.unwrap();
                    accepted.push(v["request_id"].as_str().unwrap().to_string());
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(next(300))).await;
        child.kill();
    }
    assert!(accepted.len() >= 55, "accepted only {}", accepted.len());

    // Final run: let everything finish and every webhook arrive.
    let mut child = env.serve();
    assert!(up(&http, env.port).await);
    let mut done = false;
    for _ in 0..600 {
        let mut finished = 0;
        for id in &accepted {
            let v: Value = http
                .get(format!(
                    "http://127.0.0.1:{}/v1/virtual-try-on/{id}",
                    env.port
                ))
                .bearer_auth(&key)
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            if v["status"] == "success" {
                finished += 1;
            } else {
                assert!(
                    v["status"] == "queued" || v["status"] == "processing",
                    "{id}: {v}"
                );
            }
        }
        let hooked = accepted
            .iter()
            .filter(|id| seen.lock().unwrap().contains_key(*id))
            .count();
        if finished == accepted.len() && hooked == accepted.len() {
            done = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    child.kill();
    let missing: Vec<_> = accepted
        .iter()
        .filter(|id| !seen.lock().unwrap().contains_key(*id))
        .collect();
    assert!(
        done,
        "not every job finished and reported its webhook; no webhook for {missing:?}"
    );

    // One stable webhook id per job.
    for id in &accepted {
        assert_eq!(seen.lock().unwrap()[id].len(), 1, "{id}");
    }
    // Billing: exactly one capture per job, the balance exact to the cent.
    let store = vto_sqlite::SqliteStore::open(
        env.dir.path().join("data").join("vto.db"),
        Default::default(),
    )
    .unwrap();
    use vto_core::Ledger;
    let account = vto_core::AccountId(acct);
    let entries = store.entries(&account).await.unwrap();
    let mut captures: HashMap<String, usize> = HashMap::new();
    for e in entries
        .iter()
        .filter(|e| e.kind == vto_core::billing::EntryKind::Capture)
    {
        *captures
            .entry(e.request_id.unwrap().to_string())
            .or_default() += 1;
    }
    assert_eq!(captures.len(), accepted.len());
    assert!(captures.values().all(|n| *n == 1), "{captures:?}");
    let b = store.balance(&account).await.unwrap();
    let expected = rust_decimal::Decimal::new(10_000, 2)
        - rust_decimal::Decimal::new(15, 2) * rust_decimal::Decimal::from(accepted.len() as u64);
    assert_eq!(b.balance, expected);
    assert_eq!(b.held, rust_decimal::Decimal::ZERO);
}
