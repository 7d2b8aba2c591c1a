//! [`SqliteStore`]: the one writer thread and its group commit, the read connection pools,
//! and the schema migrations applied at open.

use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use rusqlite::{params, Connection};

use vto_core::{StorageHealth, StoreError};

use crate::{db, summaries, DbError, Synchronous, MAX_BATCH, MIGRATIONS};

type Reply = Box<dyn FnOnce(Result<(), DbError>) + Send>;
type Op = Box<dyn FnOnce(&Connection) -> (bool, Reply) + Send>;

pub(crate) struct Inner {
    path: PathBuf,
    sync: Synchronous,
    writer: Mutex<mpsc::Sender<Op>>,
    readers: Mutex<Vec<Connection>>,
    point: Mutex<Vec<Connection>>,
    /// Job summaries this process has read (see [`summaries`]).
    pub(crate) summaries: summaries::SummaryCache,
    /// The one connection `PRAGMA data_version` is read on (its value is per connection).
    monitor: Mutex<Option<Connection>>,
}

/// Jobs, queue, ledger and keys in one SQLite file. Cheap to clone.
#[derive(Clone)]
pub struct SqliteStore {
    pub(crate) inner: Arc<Inner>,
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
                .map_err(|e| DbError::msg(format!("migration {version:04}_{name}: {e}")))?;
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
            .map_err(|e| DbError::msg(format!("could not start the writer thread: {e}")))?;
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
            .map_err(|_| DbError::msg("the monitor connection lock is poisoned"))?;
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
    pub(crate) async fn write<T, E, F>(&self, f: F) -> Result<T, E>
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
            .map_err(|_| E::from(DbError::msg("writer lock poisoned")))?
            .send(op)
            .map_err(|_| E::from(DbError::msg("the writer thread has stopped")))?;
        rx.await
            .map_err(|_| E::from(DbError::msg("the write was dropped")))?
    }

    /// Runs `f` on a pooled read connection on the calling thread, without the hand-off to
    /// the blocking pool. Only for point reads by primary key (a few B-tree pages, in the page
    /// cache: microseconds, less than the hand-off itself); WAL readers never wait for the
    /// writer. Their connections have a short busy timeout, so even the rare WAL-recovery
    /// wait cannot hold a runtime thread for long. Scans and writes keep to [`Self::read`] and
    /// the writer thread.
    pub(crate) fn point_read<T, E, F>(&self, f: F) -> Result<T, E>
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
    pub(crate) async fn read<T, E, F>(&self, f: F) -> Result<T, E>
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
        .map_err(|e| E::from(DbError::msg(format!("read task failed: {e}"))))?
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
