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
//!
//! ## Files
//! - `store.rs`: [`SqliteStore`] itself — the writer thread, the read pools, [`migrate`]
//! - `jobs.rs`: [`JobStore`] and [`JobQueue`]; `summaries.rs`: the job-summary rows and cache
//! - `ledger.rs`: [`Ledger`] (accounts, holds, entries)
//! - `keys.rs`: [`ApiKeyStore`](vto_core::ApiKeyStore),
//!   [`AuthGeneration`](vto_core::AuthGeneration) and
//!   [`AccountLimitStore`](vto_core::AccountLimitStore)
//! - `outbox.rs`: [`Outbox`](vto_core::outbox::Outbox) and [`SqliteWebhookSecrets`];
//!   `idempotency.rs`: [`IdempotencyStore`](vto_core::idempotency::IdempotencyStore)

use vto_core::billing::LedgerError;
use vto_core::keys::KeyStoreError;
use vto_core::ratelimit::RateLimitError;
use vto_core::{BackendError, StoreError};
#[cfg(doc)]
use vto_core::{JobQueue, JobStore, Ledger};

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

mod idempotency;
mod jobs;
mod keys;
mod ledger;
mod outbox;
mod store;
pub mod summaries;

pub use outbox::SqliteWebhookSecrets;
pub use store::{migrate, SqliteStore};

/// A failure inside the SQLite layer: what was being done, with SQLite's own error (or the
/// decoder's) kept as the source. Mapped once to each trait's `Backend` variant, which carries
/// the inner [`BackendError`].
#[derive(Debug, Clone, thiserror::Error)]
#[error("sqlite: {0}")]
pub struct DbError(#[source] pub BackendError);

impl DbError {
    /// A failure with no underlying error (a corrupt record, a stopped writer thread).
    pub fn msg(message: impl Into<String>) -> Self {
        DbError(BackendError::msg(message))
    }

    /// `source` failed while doing `context`.
    pub fn ctx(
        context: impl Into<String>,
        source: impl Into<Box<dyn std::error::Error + Send + Sync + 'static>>,
    ) -> Self {
        DbError(BackendError::new(context, source))
    }
}

impl From<rusqlite::Error> for DbError {
    fn from(e: rusqlite::Error) -> Self {
        DbError::ctx("statement failed", e)
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
