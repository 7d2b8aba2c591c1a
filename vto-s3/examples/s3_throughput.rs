//! Put, get and presign throughput of `S3ResultStore` against a running S3-compatible server.
//!
//! ```text
//! eval "$(scripts/s3.sh start)"
//! cargo run --release -p vto-s3 --example s3_throughput -- [puts] [image KiB] [concurrency]
//! ```
//!
//! Reads the same `VTO_TEST_S3_*` variables as the tests. Writes under a fresh prefix
//! (`bench/<uuid>`) and reports operations per second and MiB/s for each phase.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use vto_core::{RequestId, ResultStore, Timestamp};
use vto_s3::{S3Options, S3ResultStore};

fn var(name: &str) -> anyhow::Result<String> {
    std::env::var(name).with_context(|| format!("{name} is unset; run scripts/s3.sh start"))
}

fn arg(n: usize, default: usize) -> anyhow::Result<usize> {
    match std::env::args().nth(n) {
        Some(a) => a.parse().with_context(|| format!("argument {n}: {a:?}")),
        None => Ok(default),
    }
}

fn report(phase: &str, ops: usize, bytes: usize, took: Duration) {
    let secs = took.as_secs_f64();
    println!(
        "{phase:<28} {ops:>6} ops in {secs:>7.3} s = {:>9.1} ops/s, {:>7.1} MiB/s, {:>8.3} ms/op",
        ops as f64 / secs,
        bytes as f64 / secs / (1024.0 * 1024.0),
        secs * 1000.0 / ops as f64,
    );
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let puts = arg(1, 200)?;
    let kib = arg(2, 256)?;
    let concurrency = arg(3, 8)?.max(1);
    if puts == 0 {
        bail!("puts must be at least 1");
    }
    let store = Arc::new(S3ResultStore::from_url(
        &format!(
            "s3://{}/bench/{}",
            var("VTO_TEST_S3_BUCKET")?,
            uuid::Uuid::new_v4().simple()
        ),
        S3Options {
            endpoint: Some(var("VTO_TEST_S3_ENDPOINT")?),
            allow_http: true,
            access_key_id: Some(var("VTO_TEST_S3_ACCESS_KEY_ID")?),
            secret_access_key: Some(var("VTO_TEST_S3_SECRET_ACCESS_KEY")?),
            ..S3Options::default()
        },
    )?);
    store.check().await?;
    let image: Arc<Vec<u8>> = Arc::new((0..kib * 1024).map(|i| (i * 31 % 251) as u8).collect());
    println!(
        "{puts} puts of {kib} KiB, concurrency {concurrency}, against {:?}",
        store
    );

    // Sequential puts: one worker storing one result at a time.
    let mut keys = Vec::with_capacity(puts);
    let t = Instant::now();
    for _ in 0..puts {
        let id = RequestId(uuid::Uuid::new_v4());
        keys.push(store.put(id, &image, "image/png").await?);
    }
    report("put, sequential", puts, puts * image.len(), t.elapsed());

    // Concurrent puts: `concurrency` workers finishing at once.
    let t = Instant::now();
    let mut tasks = Vec::new();
    for w in 0..concurrency {
        let (store, image) = (store.clone(), image.clone());
        let n = puts / concurrency + usize::from(w < puts % concurrency);
        tasks.push(tokio::spawn(async move {
            for _ in 0..n {
                let id = RequestId(uuid::Uuid::new_v4());
                store.put(id, &image, "image/png").await?;
            }
            anyhow::Ok(())
        }));
    }
    for task in tasks {
        task.await??;
    }
    report(
        &format!("put, {concurrency} concurrent"),
        puts,
        puts * image.len(),
        t.elapsed(),
    );

    // Sequential gets of what was stored.
    let t = Instant::now();
    for key in &keys {
        let got = store.get(key).await?.context("a stored key is missing")?;
        if got.bytes.len() != image.len() {
            bail!(
                "{key}: {} bytes back, {} stored",
                got.bytes.len(),
                image.len()
            );
        }
    }
    report("get, sequential", puts, puts * image.len(), t.elapsed());

    // Presigning is local (HMAC-SHA256 over the canonical request): no round trip.
    let rounds = 20_000;
    let t = Instant::now();
    let mut total = 0;
    for i in 0..rounds {
        total += store.url(&keys[i % keys.len()], Timestamp(0)).await?.len();
    }
    report("presign (url)", rounds, 0, t.elapsed());
    println!("average presigned URL length: {} bytes", total / rounds);
    Ok(())
}
