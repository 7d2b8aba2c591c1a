//! # vto-postgres: vto's storage on PostgreSQL
//!
//! [`PgStore`] implements every storage trait of `vto-core` — [`JobStore`](vto_core::JobStore)
//! and [`JobQueue`](vto_core::JobQueue), [`Ledger`](vto_core::Ledger),
//! [`ApiKeyStore`](vto_core::ApiKeyStore), [`AuthGeneration`](vto_core::AuthGeneration),
//! [`AccountLimitStore`](vto_core::AccountLimitStore),
//! [`IdempotencyStore`](vto_core::idempotency::IdempotencyStore) and
//! [`Outbox`](vto_core::outbox::Outbox) — on one PostgreSQL database, so several vto processes
//! (API servers and workers on different machines) share jobs, money and keys.
//! [`PgWebhookSecrets`] keeps the webhook signing secrets and [`PgRateLimiter`] is a GCRA
//! limiter shared by every instance. The same conformance suites as the memory and SQLite
//! backends run against it (`tests/`).
//!
//! ## Design decisions
//!
//! **Driver: `tokio-postgres` with the `deadpool-postgres` pool**, not `sqlx`. Both are
//! maintained; `tokio-postgres` is the smaller build (no macros, no query checker, no
//! multi-database layers: a fraction of sqlx's compile time on a 2-core build machine), it
//! pipelines statements on one connection, caches prepared statements per pooled connection
//! (`prepare_cached`), and its `Connection::poll_message` gives `LISTEN/NOTIFY` directly.
//! Money goes over the wire as text and is stored as `NUMERIC` (exact), so no extra
//! `rust_decimal` feature is needed.
//!
//! **The state machine stays in Rust.** [`JobStore::apply`](vto_core::JobStore::apply),
//! claims and lease extensions lock the row (`SELECT … FOR UPDATE`), run
//! [`vto_core::job::transition`] and write the job back in one transaction, so a stale worker, a
//! cancel and a deadline can race without corrupting a job. The job is stored as JSON `body`
//! with its indexed fields as columns, and its `summary` (what the status endpoint reads) apart.
//!
//! **Claims** lock the oldest queued job with `FOR UPDATE SKIP LOCKED` in a `MATERIALIZED`
//! CTE that reads the head of the partial index `jobs_queue (created_at, id) WHERE status =
//! 'queued'`: concurrent workers, in any number of processes, skip each other's rows instead
//! of waiting, and never claim the same job. Leases and attempts behave as in SQLite.
//!
//! **Money is captured exactly once.** A capture or release is a conditional update (`… WHERE
//! status = 'open'`): of two racing settlements one changes the hold and the other sees it
//! settled. A unique index allows one settlement ledger entry per request, a second line of
//! defence. A hold locks its account row (`FOR UPDATE`) while it checks the available balance.
//!
//! **Migrations** run at connect in one transaction under `pg_advisory_xact_lock`, recorded in
//! `schema_migrations`: instances starting together apply each migration once.
//!
//! **`LISTEN/NOTIFY` is a wake-up hint, never the queue.** With
//! [`PgOptions::listen_notify`], a job becoming `queued` sends `NOTIFY vto_jobs` in its
//! transaction, and one dedicated connection per store listens, opened by the store's first
//! wait for work (an API-only instance, which runs no workers, never opens it); a worker idle in
//! [`JobQueue::wait_for_work`](vto_core::JobQueue::wait_for_work) wakes at once. A missed or
//! lost notification costs at most one poll interval. Turn it off behind a
//! transaction-pooling proxy (PgBouncer in transaction mode cannot `LISTEN`): workers poll.
//!
//! **The rate limiter** keeps one GCRA theoretical arrival time per (key, endpoint) in an
//! `UNLOGGED` table and decides in one upsert with the caller's clock, giving the same decisions
//! as [`vto_core::MemoryRateLimiter`] (the arithmetic is [`vto_core::ratelimit::gcra_decision`]).
//!
//! ## Main types
//! - [`PgStore`], [`PgOptions`], [`PgError`]
//! - [`PgRateLimiter`], [`PgWebhookSecrets`]

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod, Runtime};
use tokio::sync::Notify;
use tokio_postgres::error::SqlState;
use tokio_postgres::NoTls;

mod idempotency;
mod jobs;
mod keys;
mod ledger;
mod notify;
mod outbox;
mod ratelimit;

pub use outbox::PgWebhookSecrets;
pub use ratelimit::PgRateLimiter;

/// The schema migrations, in order: (version, name, SQL).
pub const MIGRATIONS: &[(i64, &str, &str)] = &[
    (1, "init", include_str!("../migrations/0001_init.sql")),
    (
        2,
        "job_requests",
        include_str!("../migrations/0002_job_requests.sql"),
    ),
];

/// The advisory lock key migrations run under (`"vto_migr"` as an integer).
const MIGRATION_LOCK: i64 = 0x7674_6f5f_6d69_6772;

/// The channel a job becoming `queued` is announced on.
pub const JOBS_CHANNEL: &str = "vto_jobs";

/// A failure in the PostgreSQL layer: what was being done, with the driver's error (or the
/// decoder's) kept as the source. Mapped once to each trait's `Backend` variant, which carries
/// the inner [`BackendError`](vto_core::BackendError).
#[derive(Debug, Clone, thiserror::Error)]
#[error("postgres: {0}")]
pub struct PgError(#[source] pub vto_core::BackendError);

impl PgError {
    /// A failure with no underlying error (a corrupt record).
    pub(crate) fn msg(message: impl Into<String>) -> Self {
        PgError(vto_core::BackendError::msg(message))
    }

    /// A driver (or decoding) error with what was being done; marked
    /// [unavailable](vto_core::BackendError::unavailable) when it says the database could not
    /// be reached or went away ([`connection_lost`]).
    pub(crate) fn ctx(
        what: &str,
        e: impl Into<Box<dyn std::error::Error + Send + Sync + 'static>>,
    ) -> Self {
        let e = e.into();
        let lost = connection_lost(&*e);
        let b = vto_core::BackendError::new(what, e);
        PgError(if lost { b.unavailable() } else { b })
    }
}

/// Whether `e` (or an error in its chain) says the database is unavailable for now rather
/// than that the statement failed: a closed connection, a refused or reset socket, a pool
/// timeout, or a server answering with SQLSTATE class 08 (connection exception), 57P01–57P03
/// (shutting down, crashed, starting up) or 53300 (too many connections). Those are what a
/// PostgreSQL restart or failover looks like from here; retried a moment later, the request
/// can succeed.
pub(crate) fn connection_lost(e: &(dyn std::error::Error + 'static)) -> bool {
    use std::io::ErrorKind as K;
    let mut cur = Some(e);
    while let Some(c) = cur {
        if let Some(pg) = c.downcast_ref::<tokio_postgres::Error>() {
            if pg.is_closed() {
                return true;
            }
            if let Some(code) = pg.code().map(SqlState::code) {
                if code.starts_with("08") || matches!(code, "57P01" | "57P02" | "57P03" | "53300") {
                    return true;
                }
            }
        }
        if let Some(p) = c.downcast_ref::<deadpool_postgres::PoolError>() {
            match p {
                deadpool_postgres::PoolError::Timeout(_) | deadpool_postgres::PoolError::Closed => {
                    return true
                }
                deadpool_postgres::PoolError::Backend(pg) if connection_lost(pg) => return true,
                _ => {}
            }
        }
        if let Some(io) = c.downcast_ref::<std::io::Error>() {
            if matches!(
                io.kind(),
                K::ConnectionRefused
                    | K::ConnectionReset
                    | K::ConnectionAborted
                    | K::NotConnected
                    | K::BrokenPipe
                    | K::TimedOut
                    | K::UnexpectedEof
            ) {
                return true;
            }
        }
        cur = c.source();
    }
    false
}

/// `map_err` helper: a driver error with context.
pub(crate) fn pg<E: Into<Box<dyn std::error::Error + Send + Sync + 'static>>>(
    what: &'static str,
) -> impl Fn(E) -> PgError {
    move |e| PgError::ctx(what, e)
}

/// Column `i` of a row as `T`; a type mismatch or an unexpected NULL is an error, not a panic.
pub(crate) fn col<'a, T: tokio_postgres::types::FromSql<'a>>(
    r: &'a tokio_postgres::Row,
    i: usize,
) -> Result<T, PgError> {
    r.try_get(i).map_err(|e| {
        let name = r.columns().get(i).map(|c| c.name()).unwrap_or("?");
        PgError::ctx(&format!("reading column {name}"), e)
    })
}

pub(crate) fn is_unique_violation(e: &tokio_postgres::Error) -> bool {
    e.code() == Some(&SqlState::UNIQUE_VIOLATION)
}

/// How a [`PgStore`] connects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgOptions {
    /// Connections in the pool (each instance; PostgreSQL's `max_connections` bounds the sum).
    pub pool_size: usize,
    /// Send `NOTIFY` when a job is queued and keep one extra connection `LISTEN`ing, so idle
    /// workers wake at once. Turn off behind a transaction-pooling proxy; workers then poll.
    pub listen_notify: bool,
    /// How long to wait for a new connection.
    pub connect_timeout: Duration,
    /// How long a caller waits for a pooled connection before failing.
    pub acquire_timeout: Duration,
}

impl Default for PgOptions {
    /// 16 connections, `LISTEN/NOTIFY` on, 10 s to connect, 30 s to get a connection.
    fn default() -> Self {
        Self {
            pool_size: 16,
            listen_notify: true,
            connect_timeout: Duration::from_secs(10),
            acquire_timeout: Duration::from_secs(30),
        }
    }
}

struct Inner {
    pool: Pool,
    /// `postgres://host:port/db`, without credentials.
    described: String,
    options: PgOptions,
    /// Where the `LISTEN` connection connects (the pool's configuration).
    config: tokio_postgres::Config,
    /// Woken by the listener on every `NOTIFY vto_jobs`.
    wake: Arc<Notify>,
    /// The listener task, started by the first wait for work.
    listener: OnceLock<tokio::task::AbortHandle>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let Some(l) = self.listener.get() {
            l.abort();
        }
    }
}

/// Every vto storage trait on one PostgreSQL database. Cheap to clone (one pool).
#[derive(Clone)]
pub struct PgStore {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("options", &self.inner.options)
            .finish_non_exhaustive()
    }
}

fn parse_url(url: &str, options: &PgOptions) -> Result<tokio_postgres::Config, PgError> {
    let mut config: tokio_postgres::Config = url
        .parse()
        .map_err(|e| PgError::ctx("invalid PostgreSQL URL", e))?;
    config.connect_timeout(options.connect_timeout);
    if config.get_application_name().is_none() {
        config.application_name("vto");
    }
    Ok(config)
}

/// `postgres://host:port/db` for logs and `/readyz`: no user, no password.
fn describe(config: &tokio_postgres::Config) -> String {
    use tokio_postgres::config::Host;
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let host = match h {
                Host::Tcp(name) => name.clone(),
                Host::Unix(path) => path.display().to_string(),
            };
            match config.get_ports().get(i).or(config.get_ports().first()) {
                Some(port) => format!("{host}:{port}"),
                None => host,
            }
        })
        .collect();
    format!(
        "postgres://{}/{}",
        hosts.join(","),
        config.get_dbname().unwrap_or("")
    )
}

impl PgStore {
    /// Connects a pool to `url` (`postgres://user@host:port/db`), applies the migrations not
    /// yet applied (once, even when several instances start together). With
    /// [`PgOptions::listen_notify`], the first wait for work opens the `LISTEN` connection.
    pub async fn connect(url: &str, options: PgOptions) -> Result<PgStore, PgError> {
        let config = parse_url(url, &options)?;
        let manager = Manager::from_config(
            config.clone(),
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(options.pool_size.max(1))
            .runtime(Runtime::Tokio1)
            .create_timeout(Some(options.connect_timeout))
            .wait_timeout(Some(options.acquire_timeout))
            .build()
            .map_err(pg("building the connection pool"))?;
        {
            let mut client = pool.get().await.map_err(pg("connecting to PostgreSQL"))?;
            migrate(&mut client).await?;
        }
        let described = describe(&config);
        Ok(PgStore {
            inner: Arc::new(Inner {
                described,
                pool,
                options,
                config,
                wake: Arc::new(Notify::new()),
                listener: OnceLock::new(),
            }),
        })
    }

    /// The options it was connected with.
    pub fn options(&self) -> &PgOptions {
        &self.inner.options
    }

    /// Where it is connected, without credentials (`postgres://db.internal:5432/vto`).
    pub fn describe(&self) -> &str {
        &self.inner.described
    }

    /// Applied migration versions, in order.
    pub async fn migrations(&self) -> Result<Vec<i64>, PgError> {
        let c = self.conn().await?;
        let rows = c
            .query(
                "SELECT version FROM schema_migrations ORDER BY version",
                &[],
            )
            .await
            .map_err(pg("reading schema_migrations"))?;
        rows.iter().map(|r| col(r, 0)).collect()
    }

    /// A pooled connection.
    pub(crate) async fn conn(&self) -> Result<Object, PgError> {
        self.inner
            .pool
            .get()
            .await
            .map_err(pg("getting a pooled connection"))
    }

    /// Whether job transactions send `NOTIFY`.
    pub(crate) fn notifies(&self) -> bool {
        self.inner.options.listen_notify
    }

    /// Starts the `LISTEN` connection unless it runs already; wakes come through `wake`.
    pub(crate) fn listen(&self) -> &Notify {
        self.inner.listener.get_or_init(|| {
            notify::spawn_listener(self.inner.config.clone(), self.inner.wake.clone())
        });
        &self.inner.wake
    }
}

/// Readiness for `/readyz`: the applied migrations (an error when the database is
/// unreachable). Nothing to refresh: no reads are cached in the process.
#[async_trait::async_trait]
impl vto_core::StorageHealth for PgStore {
    fn describe(&self) -> String {
        self.inner.described.clone()
    }

    async fn migrations(&self) -> Result<Vec<i64>, vto_core::StoreError> {
        Ok(PgStore::migrations(self).await?)
    }
}

/// Applies the migrations not yet recorded in `schema_migrations`, all in one transaction
/// under an advisory lock; returns how many ran.
pub async fn migrate(client: &mut tokio_postgres::Client) -> Result<usize, PgError> {
    let tx = client
        .transaction()
        .await
        .map_err(pg("beginning the migration transaction"))?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await
        .map_err(pg("taking the migration lock"))?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (
             version BIGINT PRIMARY KEY, name TEXT NOT NULL,
             applied_at TIMESTAMPTZ NOT NULL DEFAULT now())",
    )
    .await
    .map_err(pg("creating schema_migrations"))?;
    let done: Vec<i64> = tx
        .query("SELECT version FROM schema_migrations", &[])
        .await
        .map_err(pg("reading schema_migrations"))?
        .iter()
        .map(|r| col(r, 0))
        .collect::<Result<_, _>>()?;
    let mut ran = 0;
    for (version, name, sql) in MIGRATIONS {
        if done.contains(version) {
            continue;
        }
        tx.batch_execute(sql)
            .await
            .map_err(|e| PgError::ctx(&format!("migration {version:04}_{name}"), e))?;
        tx.execute(
            "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)",
            &[version, name],
        )
        .await
        .map_err(pg("recording a migration"))?;
        ran += 1;
    }
    tx.commit().await.map_err(pg("committing the migrations"))?;
    Ok(ran)
}
