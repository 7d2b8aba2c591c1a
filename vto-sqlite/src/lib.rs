//! vto's embedded storage: [`SqliteStore`] keeps jobs, the queue, accounts and the ledger, API
//! keys, per-account limits, idempotency records and the webhook outbox in one SQLite file;
//! [`SqliteWebhookSecrets`] keeps the signing secrets beside them. Every `vto-core` storage
//! trait is implemented here and passes vto-core's conformance suites (`tests/`).
//!
//! A single machine needs nothing else; several instances share `vto-postgres` instead.
//!
//! ## How it touches SQLite
//! - **One writer thread** owns the only write connection. Async callers send it closures over
//!   a channel and await a oneshot reply, so no write runs on the async runtime. The thread
//!   takes every waiting operation (up to [`MAX_BATCH`]) into one `BEGIN IMMEDIATE`
//!   transaction, runs each inside its own `SAVEPOINT` (an operation that fails is rolled back
//!   alone), commits once, and only then replies: group commit. Every reply is therefore
//!   durable before the caller sees it, and a batch of 200 submits costs one WAL sync.
//! - **Reads** run on tokio's blocking pool with connections from a small pool; WAL lets them
//!   proceed while the writer writes. The one exception is [`JobStore::get`], the status
//!   endpoint's point read by primary key: it runs inline on the calling thread (a few pages
//!   from the page cache cost less than the hand-off to the blocking pool), on connections
//!   with a 50 ms busy timeout.
//! - **Atomicity.** [`JobStore::apply`] reads the job, runs the state machine and writes it back
//!   inside one write transaction; [`Ledger::hold`] checks the available balance and inserts
//!   the hold in one. Because there is one writer per process and `BEGIN IMMEDIATE` takes
//!   SQLite's write lock, two processes on the same file (the server and `vto admin`) are
//!   serialized as well.
//! - **Durability.** `journal_mode=WAL` with `synchronous=NORMAL`: a committed transaction
//!   survives a crash of the process (it is in the WAL file, written before the reply). A
//!   power loss or OS crash may lose the last transactions before the WAL is synced at a
//!   checkpoint; set `synchronous = "full"` in the config for that guarantee, at a cost in
//!   throughput.
//! - **Schema.** Numbered migrations in `migrations/NNNN_name.sql`, embedded in the binary,
//!   recorded in `schema_migrations`, applied at open in one transaction each.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use rusqlite::{params, Connection, OptionalExtension};
use rust_decimal::Decimal;

use vto_core::billing::{
    check_hold, Account, Balance, EntryKind, Hold, HoldStatus, Ledger, LedgerEntry, LedgerError,
    Settlement,
};
use vto_core::keys::{ApiKeyRecord, ApiKeyStore, AuthGeneration, KeyStoreError};
use vto_core::ratelimit::{AccountLimitStore, AccountLimits, Endpoint, Quota, RateLimitError};
use vto_core::{
    AccountId, ApiKeyId, Currency, Job, JobEvent, JobFilter, JobQueue, JobStatus, JobStore,
    JobSummary, Money, RequestId, StorageHealth, StoreError, Timestamp,
};

/// The most operations committed in one transaction.
pub const MAX_BATCH: usize = 256;

/// The schema migrations, in order: (version, name, SQL).
pub const MIGRATIONS: &[(i64, &str, &str)] = &[
    (1, "init", include_str!("../migrations/0001_init.sql")),
    (2, "trust", include_str!("../migrations/0002_trust.sql")),
    (
        3,
        "account_limits",
        include_str!("../migrations/0003_account_limits.sql"),
    ),
    (
        4,
        "job_summaries",
        include_str!("../migrations/0004_job_summaries.sql"),
    ),
    (
        5,
        "job_requests",
        include_str!("../migrations/0005_job_requests.sql"),
    ),
];

pub mod summaries;
mod trust;
pub use trust::SqliteWebhookSecrets;

/// A failure inside the SQLite layer (mapped to each trait's `Backend` variant).
#[derive(Debug, Clone, thiserror::Error)]
#[error("sqlite: {0}")]
pub struct DbError(pub String);

impl From<rusqlite::Error> for DbError {
    fn from(e: rusqlite::Error) -> Self {
        DbError(e.to_string())
    }
}

impl From<DbError> for StoreError {
    fn from(e: DbError) -> Self {
        StoreError::Backend(e.0)
    }
}

impl From<DbError> for LedgerError {
    fn from(e: DbError) -> Self {
        LedgerError::Backend(e.0)
    }
}

impl From<DbError> for RateLimitError {
    fn from(e: DbError) -> Self {
        RateLimitError(e.0)
    }
}

impl From<DbError> for KeyStoreError {
    fn from(e: DbError) -> Self {
        KeyStoreError::Backend(e.0)
    }
}

fn db(e: rusqlite::Error) -> DbError {
    e.into()
}

fn is_constraint(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(f, _) if f.code == rusqlite::ErrorCode::ConstraintViolation)
}

/// How hard SQLite syncs to disk (`PRAGMA synchronous`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Synchronous {
    /// Durable across a process crash; the default under WAL.
    #[default]
    Normal,
    /// Durable across power loss too; slower.
    Full,
}

type Reply = Box<dyn FnOnce(Result<(), DbError>) + Send>;
type Op = Box<dyn FnOnce(&Connection) -> (bool, Reply) + Send>;

struct Inner {
    path: PathBuf,
    sync: Synchronous,
    writer: Mutex<mpsc::Sender<Op>>,
    readers: Mutex<Vec<Connection>>,
    point: Mutex<Vec<Connection>>,
    /// Job summaries this process has read (see [`summaries`]).
    summaries: summaries::SummaryCache,
    /// The one connection `PRAGMA data_version` is read on (its value is per connection).
    monitor: Mutex<Option<Connection>>,
}

/// Jobs, queue, ledger and keys in one SQLite file. Cheap to clone.
#[derive(Clone)]
pub struct SqliteStore {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore")
            .field("path", &self.inner.path)
            .finish_non_exhaustive()
    }
}

fn open_conn(path: &Path, sync: Synchronous) -> Result<Connection, DbError> {
    let conn = Connection::open(path).map_err(db)?;
    conn.busy_timeout(Duration::from_secs(10)).map_err(db)?;
    conn.pragma_update(None, "journal_mode", "WAL")
        .map_err(db)?;
    conn.pragma_update(
        None,
        "synchronous",
        match sync {
            Synchronous::Normal => "NORMAL",
            Synchronous::Full => "FULL",
        },
    )
    .map_err(db)?;
    conn.pragma_update(None, "foreign_keys", "ON").map_err(db)?;
    Ok(conn)
}

/// Applies the migrations not yet recorded in `schema_migrations`; returns how many ran.
pub fn migrate(conn: &mut Connection) -> Result<usize, DbError> {
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS schema_migrations (
             version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)",
    )
    .map_err(db)?;
    let mut ran = 0;
    for (version, name, sql) in MIGRATIONS {
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(db)?;
        let done: bool = tx
            .query_row(
                "SELECT EXISTS(SELECT 1 FROM schema_migrations WHERE version = ?1)",
                [version],
                |r| r.get(0),
            )
            .map_err(db)?;
        if !done {
            tx.execute_batch(sql)
                .map_err(|e| DbError(format!("migration {version:04}_{name}: {e}")))?;
            tx.execute(
                "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?1, ?2, ?3)",
                params![version, name, now_ms()],
            )
            .map_err(db)?;
            ran += 1;
        }
        tx.commit().map_err(db)?;
    }
    Ok(ran)
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

fn writer_loop(conn: Connection, rx: mpsc::Receiver<Op>) {
    while let Ok(first) = rx.recv() {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match rx.try_recv() {
                Ok(op) => batch.push(op),
                Err(_) => break,
            }
        }
        if let Err(e) = conn.execute_batch("BEGIN IMMEDIATE") {
            tracing::error!(error = %e, "sqlite writer could not begin a transaction");
            // Dropping the operations makes every caller see a backend error.
            continue;
        }
        let mut replies = Vec::with_capacity(batch.len());
        for op in batch {
            if let Err(e) = conn.execute_batch("SAVEPOINT op") {
                tracing::error!(error = %e, "sqlite savepoint failed");
                continue;
            }
            let (ok, reply) = op(&conn);
            let end = if ok {
                conn.execute_batch("RELEASE op")
            } else {
                conn.execute_batch("ROLLBACK TO op; RELEASE op")
            };
            if let Err(e) = end {
                tracing::error!(error = %e, "sqlite savepoint release failed");
            }
            replies.push(reply);
        }
        let committed = conn.execute_batch("COMMIT").map_err(DbError::from);
        if committed.is_err() {
            let _ = conn.execute_batch("ROLLBACK");
        }
        for reply in replies {
            reply(committed.clone());
        }
    }
}

impl SqliteStore {
    /// Opens (creating if needed) the database file, applies migrations and starts the writer.
    pub fn open(path: impl Into<PathBuf>, sync: Synchronous) -> Result<Self, DbError> {
        let path = path.into();
        let mut conn = open_conn(&path, sync)?;
        migrate(&mut conn)?;
        let (tx, rx) = mpsc::channel::<Op>();
        std::thread::Builder::new()
            .name("vto-sqlite-writer".into())
            .spawn(move || writer_loop(conn, rx))
            .map_err(|e| DbError(format!("could not start the writer thread: {e}")))?;
        Ok(Self {
            inner: Arc::new(Inner {
                path,
                sync,
                writer: Mutex::new(tx),
                readers: Mutex::new(Vec::new()),
                point: Mutex::new(Vec::new()),
                summaries: summaries::SummaryCache::default(),
                monitor: Mutex::new(None),
            }),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Applied migration versions, in order.
    pub async fn migrations(&self) -> Result<Vec<i64>, DbError> {
        self.read(|c| {
            let mut st = c.prepare("SELECT version FROM schema_migrations ORDER BY version")?;
            let v = st
                .query_map([], |r| r.get(0))?
                .collect::<Result<Vec<i64>, _>>()?;
            Ok(v)
        })
        .await
    }

    /// Empties the job-summary cache if another process changed the database since the last
    /// call (`PRAGMA data_version` on a dedicated connection); the server calls this every
    /// `auth_refresh_ms`. Returns whether the cache was emptied.
    pub fn refresh_summaries(&self) -> Result<bool, DbError> {
        let mut monitor = self
            .inner
            .monitor
            .lock()
            .map_err(|_| DbError("the monitor connection lock is poisoned".into()))?;
        if monitor.is_none() {
            *monitor = Some(open_conn(&self.inner.path, self.inner.sync)?);
        }
        let conn = monitor.as_ref().expect("opened above");
        let version: i64 = conn.query_row("PRAGMA data_version", [], |r| r.get(0))?;
        Ok(self.inner.summaries.notice_data_version(version))
    }

    /// Empties the job-summary cache.
    pub fn forget_summaries(&self) {
        self.inner.summaries.forget_all();
    }

    /// How many job summaries are cached in this process.
    pub fn cached_summaries(&self) -> usize {
        self.inner.summaries.len()
    }

    /// Runs `f` in the writer's transaction; the result arrives after the commit.
    async fn write<T, E, F>(&self, f: F) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<DbError> + Send + 'static,
        F: FnOnce(&Connection) -> Result<T, E> + Send + 'static,
    {
        let (tx, rx) = tokio::sync::oneshot::channel::<Result<T, E>>();
        let op: Op = Box::new(move |conn| {
            let r = f(conn);
            let ok = r.is_ok();
            let reply: Reply = Box::new(move |commit| {
                let _ = tx.send(match commit {
                    Ok(()) => r,
                    Err(e) => Err(E::from(e)),
                });
            });
            (ok, reply)
        });
        self.inner
            .writer
            .lock()
            .map_err(|_| E::from(DbError("writer lock poisoned".into())))?
            .send(op)
            .map_err(|_| E::from(DbError("the writer thread has stopped".into())))?;
        rx.await
            .map_err(|_| E::from(DbError("the write was dropped".into())))?
    }

    /// Runs `f` on a pooled read connection on the calling thread, without the hand-off to
    /// the blocking pool. Only for point reads by primary key (a few B-tree pages, in the page
    /// cache: microseconds, less than the hand-off itself); WAL readers never wait for the
    /// writer. Their connections have a short busy timeout, so even the rare WAL-recovery
    /// wait cannot hold a runtime thread for long. Scans and writes keep to [`Self::read`] and
    /// the writer thread.
    fn point_read<T, E, F>(&self, f: F) -> Result<T, E>
    where
        E: From<DbError>,
        F: FnOnce(&Connection) -> Result<T, E>,
    {
        let pooled = self.inner.point.lock().ok().and_then(|mut p| p.pop());
        let conn = match pooled {
            Some(c) => c,
            None => {
                let c = open_conn(&self.inner.path, self.inner.sync)?;
                c.busy_timeout(Duration::from_millis(50)).map_err(db)?;
                c
            }
        };
        let r = f(&conn);
        if let Ok(mut p) = self.inner.point.lock() {
            if p.len() < 16 {
                p.push(conn);
            }
        }
        r
    }

    /// Runs `f` on a pooled read connection on the blocking pool.
    async fn read<T, E, F>(&self, f: F) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<DbError> + Send + 'static,
        F: FnOnce(&Connection) -> Result<T, E> + Send + 'static,
    {
        let inner = self.inner.clone();
        tokio::task::spawn_blocking(move || {
            let pooled = inner.readers.lock().ok().and_then(|mut p| p.pop());
            let conn = match pooled {
                Some(c) => c,
                None => open_conn(&inner.path, inner.sync)?,
            };
            let r = f(&conn);
            if let Ok(mut p) = inner.readers.lock() {
                if p.len() < 16 {
                    p.push(conn);
                }
            }
            r
        })
        .await
        .map_err(|e| E::from(DbError(format!("read task failed: {e}"))))?
    }
}

#[async_trait]
impl StorageHealth for SqliteStore {
    fn describe(&self) -> String {
        format!("sqlite:{}", self.inner.path.display())
    }

    async fn migrations(&self) -> Result<Vec<i64>, StoreError> {
        Ok(SqliteStore::migrations(self).await?)
    }

    /// Notices other processes' commits (see [`SqliteStore::refresh_summaries`]); when the
    /// check fails, the summary cache is emptied so that nothing stale is served.
    async fn refresh(&self) -> Result<(), StoreError> {
        if let Err(e) = self.refresh_summaries() {
            self.forget_summaries();
            return Err(e.into());
        }
        Ok(())
    }
}

// ---------------------------------------------------------------- jobs

/// A job from its `body` (the state) and `request` columns (see [`vto_core::stored`]).
fn job_from_row(body: &str, request: Option<&str>) -> Result<Job, DbError> {
    let request = request.ok_or_else(|| DbError("corrupt job record: no request".into()))?;
    vto_core::stored::decode(body, request).map_err(|e| DbError(format!("corrupt job record: {e}")))
}

fn load_job(c: &Connection, id: RequestId) -> Result<Option<Job>, DbError> {
    let row: Option<(String, Option<String>)> = c
        .prepare_cached("SELECT body, request FROM jobs WHERE id = ?1")?
        .query_row([id.to_string()], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    row.map(|(body, request)| job_from_row(&body, request.as_deref()))
        .transpose()
}

/// Writes a job's state back; its request, written at insert, is not touched.
fn save_job(c: &Connection, job: &Job) -> Result<(), DbError> {
    let body = vto_core::stored::encode_state(job).map_err(|e| DbError(e.to_string()))?;
    c.execute(
        "UPDATE jobs SET status = ?2, lease_until = ?3, deadline = ?4, body = ?5 WHERE id = ?1",
        params![
            job.id.to_string(),
            job.status.as_str(),
            job.lease_until.map(|t| t.0),
            job.deadline.map(|t| t.0),
            body
        ],
    )?;
    summaries::save(c, job)
}

fn ids_from(c: &Connection, sql: &str, now: Timestamp) -> Result<Vec<RequestId>, DbError> {
    let mut st = c.prepare_cached(sql)?;
    let rows = st.query_map([now.0], |r| r.get::<_, String>(0))?;
    let mut out = Vec::new();
    for id in rows {
        let id = id?;
        out.push(
            id.parse()
                .map_err(|_| DbError(format!("corrupt job id {id:?}")))?,
        );
    }
    Ok(out)
}

#[async_trait]
impl JobStore for SqliteStore {
    async fn insert(&self, job: &Job) -> Result<(), StoreError> {
        let (job, id) = (job.clone(), job.id);
        let r = self
            .write(move |c| {
                let encoded = vto_core::stored::encode_state(&job)
                    .and_then(|body| Ok((body, vto_core::stored::encode_request(&job)?)));
                let (body, request) = encoded.map_err(|e| DbError(e.to_string()))?;
                c.prepare_cached(
                "INSERT INTO jobs (id, account_id, status, created_at, lease_until, deadline, body,
                                   request)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )
            .and_then(|mut st| {
                st.execute(params![
                    job.id.to_string(),
                    job.account_id.as_str(),
                    job.status.as_str(),
                    job.created_at.0,
                    job.lease_until.map(|t| t.0),
                    job.deadline.map(|t| t.0),
                    body,
                    request
                ])
            })
            .map_err(|e| {
                if is_constraint(&e) {
                    StoreError::AlreadyExists(job.id)
                } else {
                    db(e).into()
                }
            })?;
                summaries::save(c, &job)?;
                Ok(())
            })
            .await;
        self.inner.summaries.forget(id);
        r
    }

    async fn get(&self, id: RequestId) -> Result<Option<Job>, StoreError> {
        self.point_read(move |c| Ok(load_job(c, id)?))
    }

    async fn get_summary(&self, id: RequestId) -> Result<Option<JobSummary>, StoreError> {
        // The status endpoint's one store read: the cache, else a primary-key lookup of the
        // summary row, run inline (the body, with the inputs, only for pre-0004 jobs).
        let epoch = match self.inner.summaries.get(id) {
            Ok(hit) => return Ok(Some(hit)),
            Err(epoch) => epoch,
        };
        let found = self.point_read(move |c| match summaries::load(c, id)? {
            Some(s) => Ok::<_, StoreError>(Some(s)),
            None => Ok(load_job(c, id)?.as_ref().map(JobSummary::from)),
        })?;
        if let Some(s) = &found {
            self.inner.summaries.put(s.clone(), epoch);
        }
        Ok(found)
    }

    async fn apply(
        &self,
        id: RequestId,
        event: &JobEvent,
        now: Timestamp,
    ) -> Result<Job, StoreError> {
        let event = event.clone();
        let r = self
            .write(move |c| {
                let mut job = load_job(c, id)?.ok_or(StoreError::NotFound(id))?;
                job.apply(&event, now)?;
                save_job(c, &job)?;
                Ok(job)
            })
            .await;
        self.inner.summaries.forget(id);
        r
    }

    async fn list(&self, filter: &JobFilter) -> Result<Vec<Job>, StoreError> {
        let filter = filter.clone();
        self.read(move |c| {
            let limit = if filter.limit == 0 { 100 } else { filter.limit } as i64;
            let mut st = c
                .prepare_cached(
                    "SELECT body, request FROM jobs
                     WHERE (?1 IS NULL OR account_id = ?1) AND (?2 IS NULL OR status = ?2)
                     ORDER BY created_at DESC, id DESC LIMIT ?3",
                )
                .map_err(db)?;
            let rows = st
                .query_map(
                    params![
                        filter.account_id.as_ref().map(|a| a.as_str().to_string()),
                        filter.status.map(|s| s.as_str()),
                        limit
                    ],
                    |r| Ok((r.get::<_, String>(0)?, r.get::<_, Option<String>>(1)?)),
                )
                .map_err(db)?;
            let mut out = Vec::new();
            for row in rows {
                let (body, request) = row.map_err(db)?;
                out.push(job_from_row(&body, request.as_deref())?);
            }
            Ok(out)
        })
        .await
    }

    async fn count_by_status(&self) -> Result<HashMap<JobStatus, u64>, StoreError> {
        self.read(|c| {
            let mut st = c
                .prepare_cached("SELECT status, COUNT(*) FROM jobs GROUP BY status")
                .map_err(db)?;
            let rows = st
                .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))
                .map_err(db)?;
            let mut out = HashMap::new();
            for row in rows {
                let (s, n) = row.map_err(db)?;
                let status = JobStatus::from_str(&s).map_err(|e| DbError(e.to_string()))?;
                out.insert(status, n as u64);
            }
            Ok(out)
        })
        .await
    }
}

#[async_trait]
impl JobQueue for SqliteStore {
    async fn claim(&self, now: Timestamp, lease: Duration) -> Result<Option<Job>, StoreError> {
        let r = self
            .write(move |c| {
                let id: Option<String> = c
                .prepare_cached(
                    "SELECT id FROM jobs WHERE status = 'queued' ORDER BY created_at, id LIMIT 1",
                )
                .and_then(|mut st| st.query_row([], |r| r.get(0)).optional())
                .map_err(db)?;
                let Some(id) = id else { return Ok(None) };
                let id: RequestId = id
                    .parse()
                    .map_err(|_| DbError(format!("corrupt job id {id:?}")))?;
                let mut job = load_job(c, id)?.ok_or(StoreError::NotFound(id))?;
                job.apply(
                    &JobEvent::Claim {
                        lease_until: now.plus(lease),
                    },
                    now,
                )?;
                save_job(c, &job)?;
                Ok(Some(job))
            })
            .await;
        match &r {
            Ok(Some(job)) => self.inner.summaries.forget(job.id),
            Ok(None) => {}
            Err(_) => self.inner.summaries.forget_all(),
        }
        r
    }

    async fn extend_lease(
        &self,
        id: RequestId,
        attempt: u32,
        until: Timestamp,
    ) -> Result<bool, StoreError> {
        let r = self
            .write(move |c| match load_job(c, id)? {
                Some(mut j) if j.status == JobStatus::Processing && j.attempt == attempt => {
                    j.lease_until = Some(until);
                    save_job(c, &j)?;
                    Ok(true)
                }
                _ => Ok(false),
            })
            .await;
        self.inner.summaries.forget(id);
        r
    }

    async fn expired_leases(&self, now: Timestamp) -> Result<Vec<RequestId>, StoreError> {
        self.read(move |c| {
            Ok(ids_from(
                c,
                "SELECT id FROM jobs WHERE status = 'processing' AND lease_until < ?1",
                now,
            )?)
        })
        .await
    }

    async fn past_deadline(&self, now: Timestamp) -> Result<Vec<RequestId>, StoreError> {
        self.read(move |c| {
            Ok(ids_from(
                c,
                "SELECT id FROM jobs WHERE status IN ('queued', 'processing') AND deadline < ?1",
                now,
            )?)
        })
        .await
    }
}

// ---------------------------------------------------------------- ledger

fn dec(s: &str) -> Result<Decimal, DbError> {
    Decimal::from_str(s).map_err(|e| DbError(format!("corrupt amount {s:?}: {e}")))
}

fn cur(s: &str) -> Result<Currency, DbError> {
    s.parse()
        .map_err(|e: vto_core::money::InvalidCurrency| DbError(e.to_string()))
}

struct AccountRow {
    account: Account,
    balance: Decimal,
    held: Decimal,
}

impl AccountRow {
    fn balance(&self) -> Balance {
        Balance {
            account_id: self.account.id.clone(),
            currency: self.account.currency,
            balance: self.balance,
            held: self.held,
            available: self.balance - self.held,
        }
    }
}

fn load_account(c: &Connection, id: &AccountId) -> Result<Option<AccountRow>, DbError> {
    let row = c
        .prepare_cached(
            "SELECT name, currency, created_at, balance, held FROM accounts WHERE id = ?1",
        )?
        .query_row([id.as_str()], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, String>(4)?,
            ))
        })
        .optional()?;
    row.map(|(name, currency, created_at, balance, held)| {
        Ok(AccountRow {
            account: Account {
                id: id.clone(),
                name,
                currency: cur(&currency)?,
                created_at: Timestamp(created_at),
            },
            balance: dec(&balance)?,
            held: dec(&held)?,
        })
    })
    .transpose()
}

fn need_account(c: &Connection, id: &AccountId) -> Result<AccountRow, LedgerError> {
    load_account(c, id)?.ok_or_else(|| LedgerError::UnknownAccount(id.clone()))
}

fn push_entry(
    c: &Connection,
    account: &AccountId,
    kind: EntryKind,
    amount: Decimal,
    request_id: Option<RequestId>,
    memo: &str,
    at: Timestamp,
) -> Result<(), DbError> {
    c.prepare_cached(
        "INSERT INTO ledger_entries (account_id, kind, amount, request_id, memo, at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        account.as_str(),
        kind.as_str(),
        amount.to_string(),
        request_id.map(|r| r.to_string()),
        memo,
        at.0
    ])?;
    Ok(())
}

fn set_totals(
    c: &Connection,
    id: &AccountId,
    balance: Decimal,
    held: Decimal,
) -> Result<(), DbError> {
    c.prepare_cached("UPDATE accounts SET balance = ?2, held = ?3 WHERE id = ?1")?
        .execute(params![id.as_str(), balance.to_string(), held.to_string()])?;
    Ok(())
}

fn hold_status(s: &str) -> Result<HoldStatus, DbError> {
    match s {
        "open" => Ok(HoldStatus::Open),
        "captured" => Ok(HoldStatus::Captured),
        "released" => Ok(HoldStatus::Released),
        other => Err(DbError(format!("corrupt hold status {other:?}"))),
    }
}

fn hold_status_str(s: HoldStatus) -> &'static str {
    match s {
        HoldStatus::Open => "open",
        HoldStatus::Captured => "captured",
        HoldStatus::Released => "released",
    }
}

const HOLD_COLS: &str = "request_id, account_id, amount, currency, status, created_at";

type HoldRow = (String, String, String, String, String, i64);

fn hold_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<HoldRow> {
    Ok((
        r.get(0)?,
        r.get(1)?,
        r.get(2)?,
        r.get(3)?,
        r.get(4)?,
        r.get(5)?,
    ))
}

fn hold_from_cols(row: HoldRow) -> Result<Hold, DbError> {
    let (request_id, account_id, amount, currency, status, created_at) = row;
    Ok(Hold {
        request_id: request_id
            .parse()
            .map_err(|_| DbError(format!("corrupt request id {request_id:?}")))?,
        account_id: AccountId(account_id),
        amount: Money::new(dec(&amount)?, cur(&currency)?),
        status: hold_status(&status)?,
        created_at: Timestamp(created_at),
    })
}

fn load_hold(c: &Connection, request_id: RequestId) -> Result<Option<Hold>, DbError> {
    let row = c
        .prepare_cached(&format!(
            "SELECT {HOLD_COLS} FROM holds WHERE request_id = ?1"
        ))?
        .query_row([request_id.to_string()], hold_from_row)
        .optional()?;
    row.map(hold_from_cols).transpose()
}

fn settle(
    c: &Connection,
    request_id: RequestId,
    capture: bool,
    now: Timestamp,
) -> Result<Settlement, LedgerError> {
    let hold = load_hold(c, request_id)?.ok_or(LedgerError::NoHold(request_id))?;
    match (hold.status, capture) {
        (HoldStatus::Captured, true) => return Ok(Settlement::AlreadyCaptured),
        (HoldStatus::Released, false) => return Ok(Settlement::AlreadyReleased),
        (HoldStatus::Open, _) => {}
        (status, _) => return Err(LedgerError::Settled { request_id, status }),
    }
    let (status, kind, settlement) = if capture {
        (
            HoldStatus::Captured,
            EntryKind::Capture,
            Settlement::Captured,
        )
    } else {
        (
            HoldStatus::Released,
            EntryKind::Release,
            Settlement::Released,
        )
    };
    c.prepare_cached("UPDATE holds SET status = ?2 WHERE request_id = ?1")
        .and_then(|mut st| st.execute(params![request_id.to_string(), hold_status_str(status)]))
        .map_err(db)?;
    let acct = need_account(c, &hold.account_id)?;
    let amount = hold.amount.amount;
    push_entry(c, &hold.account_id, kind, amount, Some(request_id), "", now)?;
    let balance = if capture {
        acct.balance - amount
    } else {
        acct.balance
    };
    set_totals(c, &hold.account_id, balance, acct.held - amount)?;
    Ok(settlement)
}

#[async_trait]
impl Ledger for SqliteStore {
    async fn create_account(&self, account: &Account) -> Result<(), LedgerError> {
        let account = account.clone();
        self.write(move |c| {
            c.execute(
                "INSERT INTO accounts (id, name, currency, created_at) VALUES (?1, ?2, ?3, ?4)",
                params![
                    account.id.as_str(),
                    account.name,
                    account.currency.as_str(),
                    account.created_at.0
                ],
            )
            .map_err(|e| {
                if is_constraint(&e) {
                    LedgerError::AccountExists(account.id.clone())
                } else {
                    db(e).into()
                }
            })?;
            Ok(())
        })
        .await
    }

    async fn account(&self, id: &AccountId) -> Result<Option<Account>, LedgerError> {
        let id = id.clone();
        self.read(move |c| Ok(load_account(c, &id)?.map(|r| r.account)))
            .await
    }

    async fn accounts(&self) -> Result<Vec<Account>, LedgerError> {
        self.read(|c| {
            let mut st = c
                .prepare_cached(
                    "SELECT id, name, currency, created_at FROM accounts ORDER BY created_at, rowid",
                )
                .map_err(db)?;
            let rows = st
                .query_map([], |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, i64>(3)?,
                    ))
                })
                .map_err(db)?;
            let mut out = Vec::new();
            for row in rows {
                let (id, name, currency, created_at) = row.map_err(db)?;
                out.push(Account {
                    id: AccountId(id),
                    name,
                    currency: cur(&currency)?,
                    created_at: Timestamp(created_at),
                });
            }
            Ok(out)
        })
        .await
    }

    async fn balance(&self, id: &AccountId) -> Result<Balance, LedgerError> {
        let id = id.clone();
        self.read(move |c| Ok(need_account(c, &id)?.balance()))
            .await
    }

    async fn credit(
        &self,
        id: &AccountId,
        amount: Money,
        memo: &str,
        now: Timestamp,
    ) -> Result<Balance, LedgerError> {
        let (id, memo) = (id.clone(), memo.to_string());
        self.write(move |c| {
            let mut acct = need_account(c, &id)?;
            if amount.currency != acct.account.currency {
                return Err(LedgerError::CurrencyMismatch {
                    account: acct.account.currency,
                    got: amount.currency,
                });
            }
            if amount.amount <= Decimal::ZERO {
                return Err(LedgerError::NonPositive(amount.amount));
            }
            push_entry(c, &id, EntryKind::Credit, amount.amount, None, &memo, now)?;
            acct.balance += amount.amount;
            set_totals(c, &id, acct.balance, acct.held)?;
            Ok(acct.balance())
        })
        .await
    }

    async fn hold(
        &self,
        id: &AccountId,
        request_id: RequestId,
        amount: Money,
        now: Timestamp,
    ) -> Result<Hold, LedgerError> {
        let id = id.clone();
        self.write(move |c| {
            if let Some(existing) = load_hold(c, request_id)? {
                return if existing.account_id == id && existing.amount == amount {
                    Ok(existing)
                } else {
                    Err(LedgerError::HoldMismatch(request_id))
                };
            }
            let mut acct = need_account(c, &id)?;
            check_hold(&acct.account, &acct.balance(), amount)?;
            c.prepare_cached(&format!(
                "INSERT INTO holds ({HOLD_COLS}) VALUES (?1, ?2, ?3, ?4, 'open', ?5)"
            ))
            .and_then(|mut st| {
                st.execute(params![
                    request_id.to_string(),
                    id.as_str(),
                    amount.amount.to_string(),
                    amount.currency.as_str(),
                    now.0
                ])
            })
            .map_err(db)?;
            push_entry(
                c,
                &id,
                EntryKind::Hold,
                amount.amount,
                Some(request_id),
                "",
                now,
            )?;
            acct.held += amount.amount;
            set_totals(c, &id, acct.balance, acct.held)?;
            Ok(Hold {
                request_id,
                account_id: id,
                amount,
                status: HoldStatus::Open,
                created_at: now,
            })
        })
        .await
    }

    async fn capture(
        &self,
        request_id: RequestId,
        now: Timestamp,
    ) -> Result<Settlement, LedgerError> {
        self.write(move |c| settle(c, request_id, true, now)).await
    }

    async fn release(
        &self,
        request_id: RequestId,
        now: Timestamp,
    ) -> Result<Settlement, LedgerError> {
        self.write(move |c| settle(c, request_id, false, now)).await
    }

    async fn get_hold(&self, request_id: RequestId) -> Result<Option<Hold>, LedgerError> {
        self.read(move |c| Ok(load_hold(c, request_id)?)).await
    }

    async fn open_holds(&self) -> Result<Vec<Hold>, LedgerError> {
        self.read(|c| {
            let mut st = c
                .prepare_cached(&format!(
                    "SELECT {HOLD_COLS} FROM holds WHERE status = 'open'
                     ORDER BY created_at, request_id"
                ))
                .map_err(db)?;
            let rows = st.query_map([], hold_from_row).map_err(db)?;
            let mut out = Vec::new();
            for row in rows {
                out.push(hold_from_cols(row.map_err(db)?)?);
            }
            Ok(out)
        })
        .await
    }

    async fn entries(&self, id: &AccountId) -> Result<Vec<LedgerEntry>, LedgerError> {
        let id = id.clone();
        self.read(move |c| {
            need_account(c, &id)?;
            let mut st = c
                .prepare_cached(
                    "SELECT seq, kind, amount, request_id, memo, at FROM ledger_entries
                     WHERE account_id = ?1 ORDER BY seq",
                )
                .map_err(db)?;
            let rows = st
                .query_map([id.as_str()], |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, Option<String>>(3)?,
                        r.get::<_, String>(4)?,
                        r.get::<_, i64>(5)?,
                    ))
                })
                .map_err(db)?;
            let mut out = Vec::new();
            for row in rows {
                let (seq, kind, amount, request_id, memo, at) = row.map_err(db)?;
                out.push(LedgerEntry {
                    seq: seq as u64,
                    account_id: id.clone(),
                    kind: kind.parse().map_err(DbError)?,
                    amount: dec(&amount)?,
                    request_id: request_id
                        .map(|r| r.parse().map_err(|_| DbError(format!("corrupt id {r:?}"))))
                        .transpose()?,
                    memo,
                    at: Timestamp(at),
                });
            }
            Ok(out)
        })
        .await
    }
}

// ---------------------------------------------------------------- keys

const KEY_COLS: &str = "id, account_id, display_prefix, hash, name, created_at, revoked_at";

fn key_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<ApiKeyRecord> {
    Ok(ApiKeyRecord {
        id: ApiKeyId(r.get(0)?),
        account_id: AccountId(r.get(1)?),
        display_prefix: r.get(2)?,
        hash: r.get(3)?,
        name: r.get(4)?,
        created_at: Timestamp(r.get(5)?),
        revoked_at: r.get::<_, Option<i64>>(6)?.map(Timestamp),
    })
}

#[async_trait]
impl ApiKeyStore for SqliteStore {
    async fn insert(&self, record: &ApiKeyRecord) -> Result<(), KeyStoreError> {
        let k = record.clone();
        self.write(move |c| {
            c.execute(
                &format!("INSERT INTO api_keys ({KEY_COLS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"),
                params![
                    k.id.as_str(),
                    k.account_id.as_str(),
                    k.display_prefix,
                    k.hash,
                    k.name,
                    k.created_at.0,
                    k.revoked_at.map(|t| t.0)
                ],
            )
            .map_err(|e| {
                if is_constraint(&e) {
                    KeyStoreError::Exists
                } else {
                    db(e).into()
                }
            })?;
            Ok(())
        })
        .await
    }

    async fn find_by_hash(&self, hash: &str) -> Result<Option<ApiKeyRecord>, KeyStoreError> {
        let hash = hash.to_string();
        self.read(move |c| {
            Ok(
                c.prepare_cached(&format!("SELECT {KEY_COLS} FROM api_keys WHERE hash = ?1"))
                    .map_err(db)?
                    .query_row([hash], key_from_row)
                    .optional()
                    .map_err(db)?,
            )
        })
        .await
    }

    async fn list(&self, account: Option<&AccountId>) -> Result<Vec<ApiKeyRecord>, KeyStoreError> {
        let account = account.map(|a| a.as_str().to_string());
        self.read(move |c| {
            let mut st = c
                .prepare_cached(&format!(
                    "SELECT {KEY_COLS} FROM api_keys WHERE (?1 IS NULL OR account_id = ?1)
                     ORDER BY created_at, rowid"
                ))
                .map_err(db)?;
            let rows = st.query_map([account], key_from_row).map_err(db)?;
            Ok(rows.collect::<Result<Vec<_>, _>>().map_err(db)?)
        })
        .await
    }

    async fn revoke(&self, id: &ApiKeyId, now: Timestamp) -> Result<bool, KeyStoreError> {
        let id = id.clone();
        self.write(move |c| {
            let n = c
                .execute(
                    "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?2) WHERE id = ?1",
                    params![id.as_str(), now.0],
                )
                .map_err(db)?;
            if n > 0 {
                bump_generation(c)?;
            }
            Ok(n > 0)
        })
        .await
    }
}

// ---------------------------------------------------------------- account limits

/// Moves the auth generation forward, inside the caller's transaction.
fn bump_generation(c: &Connection) -> Result<(), DbError> {
    c.execute(
        "UPDATE auth_generation SET value = value + 1 WHERE id = 1",
        [],
    )?;
    Ok(())
}

#[async_trait]
impl AuthGeneration for SqliteStore {
    async fn auth_generation(&self) -> Result<u64, KeyStoreError> {
        self.read(|c| {
            let v: i64 = c
                .prepare_cached("SELECT value FROM auth_generation WHERE id = 1")
                .map_err(db)?
                .query_row([], |r| r.get(0))
                .map_err(db)?;
            Ok(u64::try_from(v).unwrap_or(0))
        })
        .await
    }
}

#[async_trait]
impl AccountLimitStore for SqliteStore {
    async fn limits(&self, account: &AccountId) -> Result<Option<AccountLimits>, RateLimitError> {
        let account = account.as_str().to_string();
        self.read(move |c| {
            let mut st = c
                .prepare_cached(
                    "SELECT endpoint, burst, period_ms FROM account_limits WHERE account_id = ?1",
                )
                .map_err(db)?;
            let rows = st
                .query_map([account], |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, i64>(1)?,
                        r.get::<_, i64>(2)?,
                    ))
                })
                .map_err(db)?;
            let mut out = AccountLimits::new();
            for row in rows {
                let (ep, burst, period_ms) = row.map_err(db)?;
                let endpoint = Endpoint::ALL
                    .into_iter()
                    .find(|e| e.as_str() == ep)
                    .ok_or_else(|| DbError(format!("account_limits: unknown endpoint {ep:?}")))?;
                let burst = u32::try_from(burst)
                    .ok()
                    .and_then(std::num::NonZeroU32::new)
                    .ok_or_else(|| DbError(format!("account_limits: bad burst {burst}")))?;
                let period_ms = u64::try_from(period_ms)
                    .map_err(|_| DbError(format!("account_limits: bad period {period_ms}")))?;
                out.insert(endpoint, Quota { burst, period_ms });
            }
            Ok((!out.is_empty()).then_some(out))
        })
        .await
    }

    async fn set_limits(
        &self,
        account: &AccountId,
        limits: &AccountLimits,
    ) -> Result<(), RateLimitError> {
        let account = account.as_str().to_string();
        let limits = limits.clone();
        self.write(move |c| {
            c.execute(
                "DELETE FROM account_limits WHERE account_id = ?1",
                [&account],
            )
            .map_err(db)?;
            for (endpoint, q) in &limits {
                c.execute(
                    "INSERT INTO account_limits (account_id, endpoint, burst, period_ms)
                     VALUES (?1, ?2, ?3, ?4)",
                    params![
                        account,
                        endpoint.as_str(),
                        q.burst.get(),
                        i64::try_from(q.period_ms).unwrap_or(i64::MAX)
                    ],
                )
                .map_err(db)?;
            }
            bump_generation(c)?;
            Ok(())
        })
        .await
    }

    async fn reset_limits(&self, account: &AccountId) -> Result<bool, RateLimitError> {
        let account = account.as_str().to_string();
        self.write(move |c| {
            let n = c
                .execute(
                    "DELETE FROM account_limits WHERE account_id = ?1",
                    [&account],
                )
                .map_err(db)?;
            bump_generation(c)?;
            Ok(n > 0)
        })
        .await
    }
}
