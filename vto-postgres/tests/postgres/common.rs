//! A fresh database per store on the test cluster (`scripts/pg.sh start`).

use tokio_postgres::NoTls;
use vto_postgres::{PgOptions, PgStore};

/// The cluster's URL, or `None` (with the reason printed) when the tests should skip.
/// Panics when `VTO_REQUIRE_POSTGRES=1` and there is no cluster.
pub fn cluster_url() -> Option<String> {
    match std::env::var("VTO_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            assert!(
                std::env::var("VTO_REQUIRE_POSTGRES").as_deref() != Ok("1"),
                "VTO_REQUIRE_POSTGRES=1 but VTO_TEST_POSTGRES_URL is unset: run \
                 `eval \"$(scripts/pg.sh start)\"` first"
            );
            eprintln!(
                "skipped: VTO_TEST_POSTGRES_URL is unset (start a cluster with \
                 `eval \"$(scripts/pg.sh start)\"`)"
            );
            None
        }
    }
}

/// `url` with its database name replaced by `db`.
fn with_database(url: &str, db: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (url, None),
    };
    let scheme_end = base.find("://").map(|i| i + 3).unwrap_or(0);
    let authority_end = base[scheme_end..]
        .find('/')
        .map(|i| scheme_end + i)
        .unwrap_or(base.len());
    let mut out = format!("{}/{db}", &base[..authority_end]);
    if let Some(q) = query {
        out.push('?');
        out.push_str(q);
    }
    out
}

/// Drops the test databases of earlier test processes that are gone (their names carry the
/// process id), so repeated runs on one cluster do not fill its disk. A database still in use
/// is refused by `DROP DATABASE` and left alone.
async fn drop_stale_databases(client: &tokio_postgres::Client) {
    let Ok(rows) = client
        .query(
            "SELECT datname FROM pg_database WHERE datname LIKE 'vto\\_test\\_%'",
            &[],
        )
        .await
    else {
        return;
    };
    let me = std::process::id();
    for row in rows {
        let name: String = row.get(0);
        let pid = name.split('_').nth(2).and_then(|p| p.parse::<u32>().ok());
        let Some(pid) = pid else { continue };
        if pid == me || std::path::Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        let _ = client
            .batch_execute(&format!("DROP DATABASE IF EXISTS {name}"))
            .await;
    }
}

/// Creates an empty database on the cluster and returns its URL.
pub async fn fresh_database(cluster: &str) -> String {
    static CLEANED: tokio::sync::OnceCell<()> = tokio::sync::OnceCell::const_new();
    let (client, conn) = tokio_postgres::connect(cluster, NoTls)
        .await
        .expect("connect to the test cluster");
    let driver = tokio::spawn(conn);
    CLEANED.get_or_init(|| drop_stale_databases(&client)).await;
    let name = format!(
        "vto_test_{}_{}",
        std::process::id(),
        uuid::Uuid::new_v4().simple()
    );
    client
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .await
        .expect("create a test database");
    drop(client);
    let _ = driver.await;
    with_database(cluster, &name)
}

/// Test options: a small pool, notifications on.
pub fn options() -> PgOptions {
    PgOptions {
        pool_size: 8,
        ..PgOptions::default()
    }
}

/// The service's backends with every record on `store` (and the results in memory).
pub fn backends_on(store: PgStore) -> vto_core::Backends {
    let mut b = vto_core::Backends::in_memory().backends;
    let s = std::sync::Arc::new(store.clone());
    b.jobs = s.clone();
    b.queue = s.clone();
    b.ledger = s.clone();
    b.keys = s.clone();
    b.limits = s.clone();
    b.idempotency = s;
    b.limiter = std::sync::Arc::new(vto_postgres::PgRateLimiter::new(store));
    b
}

/// A store on a new, empty database.
pub async fn fresh_store(cluster: &str) -> PgStore {
    let url = fresh_database(cluster).await;
    PgStore::connect(&url, options()).await.expect("connect")
}

#[test]
fn database_names_are_replaced_in_urls() {
    assert_eq!(
        with_database("postgres://u@h:5/postgres", "x"),
        "postgres://u@h:5/x"
    );
    assert_eq!(
        with_database("postgres://u@h:5/postgres?sslmode=disable", "x"),
        "postgres://u@h:5/x?sslmode=disable"
    );
    assert_eq!(with_database("postgres://u@h", "x"), "postgres://u@h/x");
}
