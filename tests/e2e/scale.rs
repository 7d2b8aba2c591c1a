//! Scale-out with the real binary: two `vto serve` processes on one PostgreSQL database and one
//! S3-compatible bucket. 1,000 asynchronous jobs are submitted across both by 50 concurrent
//! clients while one instance is killed with SIGKILL and restarted. Afterwards every job ended
//! once, the balance is exact to the cent, each webhook arrived with one stable id, and every
//! result URL serves its image whichever instance handed it out. A burst on one key spread over
//! both instances gets as many 429s as the same burst on one.
//!
//! Needs the servers `scripts/test.sh` starts (`scripts/pg.sh`, `scripts/s3.sh`): without
//! `VTO_TEST_POSTGRES_URL` and `VTO_TEST_S3_ENDPOINT` it prints why and passes, unless
//! `VTO_REQUIRE_POSTGRES=1` or `VTO_REQUIRE_S3=1` (as in the project's scripts) makes that a
//! failure. The render service and the webhook receiver are TEST DOUBLES on loopback.

use std::collections::{HashMap, HashSet};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use vto_tests::{free_port, vto_bin, Server};

use crate::doubles::{data_url, png, receiver, render_service};

const JOBS: usize = 1_000;
const CLIENTS: usize = 50;

/// The external servers, from the environment the project's scripts set.
struct External {
    postgres: String,
    s3: Vec<(&'static str, String)>,
}

fn external() -> Option<External> {
    let pg = std::env::var("VTO_TEST_POSTGRES_URL").ok();
    let s3 = std::env::var("VTO_TEST_S3_ENDPOINT").ok();
    let required = |v: &str| std::env::var(v).is_ok_and(|v| v == "1");
    match (pg, s3) {
        (Some(pg), Some(endpoint)) => {
            let var = |name: &str| {
                std::env::var(name)
                    .unwrap_or_else(|_| panic!("{name} is unset beside VTO_TEST_S3_ENDPOINT"))
            };
            Some(External {
                postgres: pg,
                s3: vec![
                    ("VTO_S3_ENDPOINT", endpoint),
                    ("VTO_S3_ALLOW_HTTP", "true".into()),
                    ("VTO_S3_REGION", "us-east-1".into()),
                    ("VTO_S3_ACCESS_KEY_ID", var("VTO_TEST_S3_ACCESS_KEY_ID")),
                    (
                        "VTO_S3_SECRET_ACCESS_KEY",
                        var("VTO_TEST_S3_SECRET_ACCESS_KEY"),
                    ),
                    (
                        "VTO_RESULTS_URL",
                        format!(
                            "s3://{}/scale-{}",
                            var("VTO_TEST_S3_BUCKET"),
                            std::process::id()
                        ),
                    ),
                ],
            })
        }
        _ => {
            assert!(
                !required("VTO_REQUIRE_POSTGRES") && !required("VTO_REQUIRE_S3"),
                "VTO_TEST_POSTGRES_URL and VTO_TEST_S3_ENDPOINT must be set (scripts/test.sh starts both servers)"
            );
            eprintln!("skipped: the two-instance test needs PostgreSQL and an S3 server; run it through scripts/test.sh");
            None
        }
    }
}

/// A fresh database on the test cluster, by `psql` (which comes with the server package).
fn fresh_database(admin_url: &str) -> String {
    let name = format!("vto_scale_{}", std::process::id());
    let psql = ["psql", "/usr/lib/postgresql/15/bin/psql"]
        .into_iter()
        .find(|p| Command::new(p).arg("--version").output().is_ok())
        .expect("psql (postgresql-client) on PATH");
    for sql in [
        format!("DROP DATABASE IF EXISTS {name}"),
        format!("CREATE DATABASE {name}"),
    ] {
        let out = Command::new(psql)
            .args([admin_url, "-v", "ON_ERROR_STOP=1", "-c", &sql])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{sql}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let mut url = url::Url::parse(admin_url).expect("VTO_TEST_POSTGRES_URL is a URL");
    url.set_path(&name);
    url.to_string()
}

struct Cluster {
    dir: tempfile::TempDir,
    env: Vec<(&'static str, String)>,
    ports: [u16; 2],
}

impl Cluster {
    fn cmd(&self, instance: usize) -> Command {
        let mut c = Command::new(vto_bin());
        c.arg("--config")
            .arg(self.dir.path().join("vto.toml"))
            .env_remove("VTO_CONFIG")
            .env(
                "VTO_DATA_DIR",
                self.dir.path().join(format!("data-{instance}")),
            )
            .env("VTO_LISTEN", format!("127.0.0.1:{}", self.ports[instance]))
            .env("VTO_OUTBOUND_ALLOW", "127.0.0.1/32")
            .env("VTO_LEASE_SECS", "2")
            .env("VTO_MAX_ATTEMPTS", "50")
            .env("VTO_RECONCILE_AFTER_SECS", "3")
            .env("VTO_RATE_CREATE_TRY_ON", "100000/1")
            .env("VTO_RATE_GET_TRY_ON", "100000/1")
            .env("VTO_POLL_INTERVAL_MS", "50")
            .env("VTO_STORAGE_POOL_SIZE", "8")
            .env("VTO_MODELS_DIR", self.dir.path().join("no-models"))
            .env("VTO_FETCH_MODELS", "false")
            .env("VTO_PLAYGROUND", "false")
            .env("RUST_LOG", "error");
        for (k, v) in &self.env {
            c.env(k, v);
        }
        c
    }
    fn admin(&self, args: &[&str]) -> Value {
        let out = self.cmd(0).arg("--json").args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }
    fn serve(&self, instance: usize) -> Server {
        let log =
            std::fs::File::create(self.dir.path().join(format!("serve-{instance}.log"))).unwrap();
        let mut s = Server(
            self.cmd(instance)
                .arg("serve")
                .stdout(Stdio::null())
                .stderr(log)
                .spawn()
                .unwrap(),
        );
        assert!(
            s.wait_up(self.ports[instance], Duration::from_secs(30)),
            "instance {instance} did not start: {}",
            self.log(instance)
        );
        s
    }
    fn log(&self, instance: usize) -> String {
        std::fs::read_to_string(self.dir.path().join(format!("serve-{instance}.log")))
            .unwrap_or_default()
    }
    fn base(&self, instance: usize) -> String {
        format!("http://127.0.0.1:{}", self.ports[instance])
    }
    fn account(&self, name: &str, balance: &str) -> (String, String) {
        let a = self.admin(&[
            "admin",
            "account",
            "create",
            "--name",
            name,
            "--balance",
            balance,
        ]);
        let id = a["account"]["id"].as_str().unwrap().to_string();
        let k = self.admin(&["admin", "key", "create", &id]);
        (id, k["secret"].as_str().unwrap().to_string())
    }
}

/// Submits job `i` until one instance accepts it, trying the other instance after a
/// connection failure or a 5xx (the same `Idempotency-Key` every time, so a retry after a
/// lost reply returns the first job instead of making a second).
async fn submit(
    http: &reqwest::Client,
    bases: &[String; 2],
    key: &str,
    body: &Value,
    i: usize,
) -> String {
    // Up to 90 s: a reservation whose instance died is taken over after 30 s
    // (vto_core::idempotency::STALE_AFTER).
    for attempt in 0..900 {
        let base = &bases[(i + attempt) % 2];
        let r = http
            .post(format!("{base}/v1/virtual-try-on"))
            .bearer_auth(key)
            .header("idempotency-key", format!("scale-{i}"))
            .json(body)
            .timeout(Duration::from_secs(10))
            .send()
            .await;
        match r {
            Ok(r) if r.status().as_u16() == 202 => {
                let v: Value = r.json().await.unwrap();
                return v["request_id"].as_str().unwrap().to_string();
            }
            // 409: the first try is still being answered, or its instance died holding the
            // key (taken over once stale): try again shortly.
            Ok(r) if r.status().is_server_error() || r.status().as_u16() == 409 => {}
            Ok(r) => panic!(
                "job {i}: {} {}",
                r.status(),
                r.text().await.unwrap_or_default()
            ),
            Err(_) => {}
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("job {i} was never accepted");
}

/// Sends `n` creates on `key`, alternating over `bases`; returns (202s, 429s).
async fn burst(
    http: &reqwest::Client,
    bases: &[String],
    key: &str,
    body: &Value,
    n: usize,
) -> (usize, usize) {
    let (mut ok, mut limited) = (0, 0);
    for i in 0..n {
        let r = http
            .post(format!("{}/v1/virtual-try-on", bases[i % bases.len()]))
            .bearer_auth(key)
            .json(body)
            .send()
            .await
            .unwrap();
        match r.status().as_u16() {
            202 => ok += 1,
            429 => limited += 1,
            s => panic!("burst: {s} {}", r.text().await.unwrap_or_default()),
        }
    }
    (ok, limited)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_instances_on_postgres_and_s3_survive_a_kill_and_bill_exactly() {
    let Some(ext) = external() else { return };
    let render = render_service(png(), Duration::from_millis(20)).await;
    let seen = Arc::new(Mutex::new(HashMap::new()));
    let hooks = receiver(seen.clone()).await;
    let mut env = ext.s3.clone();
    env.push(("VTO_STORAGE_URL", fresh_database(&ext.postgres)));
    let cluster = Cluster {
        dir: tempfile::tempdir().unwrap(),
        env,
        ports: [free_port(), free_port()],
    };
    std::fs::write(
        cluster.dir.path().join("vto.toml"),
        format!(
            "[engines.shirt]\nkind = \"http\"\nurl = \"http://{render}\"\n\n\
             [webhooks]\ntimeout_ms = 2000\nretry_schedule_secs = [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n\
             poll_interval_ms = 50\n"
        ),
    )
    .unwrap();
    let (acct, key) = cluster.account("scale", "1000.00");
    let a = cluster.serve(0);
    let b = Arc::new(Mutex::new(Some(cluster.serve(1))));
    let bases = [cluster.base(0), cluster.base(1)];
    let http = reqwest::Client::new();
    let body = json!({"category": "shirt", "person_image": data_url(&png()),
                      "product_image": data_url(&png()),
                      "webhook_url": format!("http://{hooks}/hook")});

    // 50 clients take job numbers from one counter; the killer SIGKILLs instance 1 after 400
    // submits and starts it again a second later.
    let next = Arc::new(AtomicUsize::new(0));
    let submitted = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let mut clients = tokio::task::JoinSet::new();
    for _ in 0..CLIENTS {
        let (http, bases, key, body) = (http.clone(), bases.clone(), key.clone(), body.clone());
        let (next, submitted) = (next.clone(), submitted.clone());
        clients.spawn(async move {
            let mut ids = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= JOBS {
                    return ids;
                }
                ids.push(submit(&http, &bases, &key, &body, i).await);
                submitted.fetch_add(1, Ordering::SeqCst);
            }
        });
    }
    let killer = {
        let (b, submitted) = (b.clone(), submitted.clone());
        let cmd = cluster.cmd(1);
        let port = cluster.ports[1];
        tokio::task::spawn_blocking(move || {
            while submitted.load(Ordering::SeqCst) < 400 {
                std::thread::sleep(Duration::from_millis(5));
            }
            b.lock().unwrap().take().expect("instance 1").kill();
            std::thread::sleep(Duration::from_secs(1));
            let mut cmd = cmd;
            let mut s = Server(
                cmd.arg("serve")
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .unwrap(),
            );
            assert!(
                s.wait_up(port, Duration::from_secs(30)),
                "instance 1 did not restart"
            );
            *b.lock().unwrap() = Some(s);
        })
    };
    let mut ids = Vec::new();
    while let Some(r) = clients.join_next().await {
        ids.extend(r.unwrap());
    }
    let submit_secs = started.elapsed().as_secs_f64();
    killer.await.unwrap();
    let unique: HashSet<&String> = ids.iter().collect();
    assert_eq!(ids.len(), JOBS);
    assert_eq!(unique.len(), JOBS, "every job number made exactly one job");
    eprintln!("{JOBS} submits over two instances (one killed mid-run) in {submit_secs:.1} s");

    // Every job ends in success, seen from either instance, and its webhook arrives.
    let deadline = Instant::now() + Duration::from_secs(240);
    let mut pending: Vec<&String> = unique.iter().copied().collect();
    let mut urls: HashMap<String, [String; 2]> = HashMap::new();
    while !pending.is_empty() {
        assert!(
            Instant::now() < deadline,
            "{} jobs never finished: {:?}\n{}",
            pending.len(),
            &pending[..pending.len().min(5)],
            cluster.log(0)
        );
        let mut still = Vec::new();
        for id in pending {
            let mut got = Vec::new();
            for base in &bases {
                let v: Value = http
                    .get(format!("{base}/v1/virtual-try-on/{id}"))
                    .bearer_auth(&key)
                    .send()
                    .await
                    .unwrap()
                    .json()
                    .await
                    .unwrap();
                got.push(v);
            }
            if got.iter().all(|v| v["status"] == "success") {
                let url = |v: &Value| v["result"]["image_url"].as_str().unwrap().to_string();
                urls.insert(id.clone(), [url(&got[0]), url(&got[1])]);
            } else {
                for v in &got {
                    assert!(
                        ["queued", "processing", "success"]
                            .contains(&v["status"].as_str().unwrap()),
                        "{id}: {v}"
                    );
                }
                still.push(id);
            }
        }
        pending = still;
        if !pending.is_empty() {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    while unique
        .iter()
        .any(|id| !seen.lock().unwrap().contains_key(*id))
    {
        assert!(Instant::now() < deadline, "webhooks missing");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for id in &unique {
        assert_eq!(
            seen.lock().unwrap()[*id].len(),
            1,
            "{id}: one stable webhook id"
        );
    }

    // Every result URL, from either instance, serves the image from the store.
    for (id, pair) in &urls {
        for url in pair {
            let r = http.get(url).send().await.unwrap();
            assert_eq!(r.status().as_u16(), 200, "{id}: {url}");
            assert_eq!(r.headers()["content-type"], "image/png", "{id}");
            // The render service's 1×1 PNG (re-encoded by the server): signature and IHDR size.
            let bytes = r.bytes().await.unwrap();
            assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "{id}: not a PNG");
            assert_eq!(&bytes[16..24], &[0, 0, 0, 1, 0, 0, 0, 1], "{id}: 1×1");
        }
    }

    // Billing: exact to the cent, no hold left open, no job twice.
    let deadline = Instant::now() + Duration::from_secs(30);
    let shown = loop {
        let shown = cluster.admin(&["admin", "account", "show", &acct]);
        let held = shown["balance"]["held"].as_str().unwrap_or_default();
        if held
            .parse::<rust_decimal::Decimal>()
            .is_ok_and(|h| h.is_zero())
            || Instant::now() > deadline
        {
            break shown;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let balance: rust_decimal::Decimal = shown["balance"]["balance"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let held: rust_decimal::Decimal = shown["balance"]["held"].as_str().unwrap().parse().unwrap();
    assert_eq!(held, rust_decimal::Decimal::ZERO, "{shown}");
    assert_eq!(
        balance,
        rust_decimal::Decimal::new(100_000, 2)
            - rust_decimal::Decimal::new(15, 2) * rust_decimal::Decimal::from(JOBS as u64),
        "{shown}"
    );
    let jobs = cluster.admin(&[
        "admin",
        "jobs",
        "list",
        "--account",
        &acct,
        "--limit",
        "5000",
    ]);
    assert_eq!(
        jobs.as_array().unwrap().len(),
        JOBS,
        "no duplicate job was made"
    );

    // One key's limit holds across both instances: the same burst spread over the two is
    // limited exactly as on one.
    let (_, spread_key) = cluster.account("spread", "10.00");
    let (_, single_key) = cluster.account("single", "10.00");
    let limit_of = |name: &str| {
        let list = cluster.admin(&["admin", "account", "list"]);
        list.as_array()
            .unwrap()
            .iter()
            .find(|r| r["account"]["name"] == name)
            .unwrap()["account"]["id"]
            .as_str()
            .unwrap()
            .to_string()
    };
    for name in ["spread", "single"] {
        cluster.admin(&[
            "admin",
            "account",
            "limits",
            &limit_of(name),
            "--create",
            "20/600",
        ]);
    }
    let both = burst(&http, &bases, &spread_key, &body, 40).await;
    let one = burst(&http, &bases[..1], &single_key, &body, 40).await;
    assert_eq!(one, (20, 20), "one instance: 20 allowed, 20 limited");
    assert_eq!(both, one, "two instances share one limit");

    drop(a);
    drop(b.lock().unwrap().take());
}
