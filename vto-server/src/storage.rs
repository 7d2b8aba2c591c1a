//! The one place where backends are chosen from the config: `[storage] url` picks the records'
//! backend (SQLite by default, PostgreSQL for several instances: `vto-postgres`). Everything else in the server
//! and the CLI sees only vto-core's traits, through [`Storage`].

use std::sync::Arc;

use anyhow::Context as _;
use vto_core::billing::Ledger;
use vto_core::idempotency::IdempotencyStore;
use vto_core::keys::{ApiKeyStore, AuthGeneration};
use vto_core::outbox::{Outbox, WebhookSecrets};
use vto_core::ratelimit::{AccountLimitStore, RateLimiter};
use vto_core::{IdGen, JobQueue, JobStore, MemoryRateLimiter, StorageHealth};
use vto_postgres::{PgOptions, PgRateLimiter, PgStore, PgWebhookSecrets};
use vto_sqlite::{SqliteStore, SqliteWebhookSecrets};

use crate::config::{Config, StorageLocation};

/// Every record backend the service needs, as traits, from one storage location.
#[derive(Clone)]
pub struct Storage {
    /// Job records.
    pub jobs: Arc<dyn JobStore>,
    /// The work queue.
    pub queue: Arc<dyn JobQueue>,
    /// Accounts and money.
    pub ledger: Arc<dyn Ledger>,
    /// API keys.
    pub keys: Arc<dyn ApiKeyStore>,
    /// Moves whenever keys or limits change (what the auth cache watches).
    pub generation: Arc<dyn AuthGeneration>,
    /// Per-account quota overrides.
    pub limits: Arc<dyn AccountLimitStore>,
    /// Saved responses for `Idempotency-Key`.
    pub idempotency: Arc<dyn IdempotencyStore>,
    /// Persisted webhook deliveries.
    pub outbox: Arc<dyn Outbox>,
    /// Webhook signing secrets.
    pub secrets: Arc<dyn WebhookSecrets>,
    /// The rate limiter: shared by every instance on a shared backend, in this process's
    /// memory on SQLite (one machine).
    pub limiter: Arc<dyn RateLimiter>,
    /// Readiness, description and upkeep.
    pub health: Arc<dyn StorageHealth>,
}

impl std::fmt::Debug for Storage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Storage")
            .field("backend", &self.health.describe())
            .finish_non_exhaustive()
    }
}

impl Storage {
    /// Opens the records' backend that `[storage] url` names (creating the SQLite file's
    /// folder, running migrations).
    pub async fn open(config: &Config, ids: Arc<dyn IdGen>) -> anyhow::Result<Storage> {
        match config.storage_location()? {
            StorageLocation::Sqlite(path) => {
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir)
                        .with_context(|| format!("creating {}", dir.display()))?;
                }
                let sync = config.synchronous;
                let shown = path.display().to_string();
                let store = tokio::task::spawn_blocking(move || SqliteStore::open(path, sync))
                    .await?
                    .with_context(|| format!("opening {shown}"))?;
                Ok(Storage::sqlite(store, ids))
            }
            StorageLocation::Postgres(url) => {
                let options = PgOptions {
                    pool_size: config.storage.pool_size,
                    listen_notify: config.storage.listen_notify,
                    ..PgOptions::default()
                };
                let store = PgStore::connect(&url, options)
                    .await
                    .context("connecting to PostgreSQL (storage.url)")?;
                Ok(Storage::postgres(store, ids))
            }
        }
    }

    /// Every backend on one PostgreSQL store, the rate limiter included: every instance on the
    /// database shares each key's limit.
    pub fn postgres(store: PgStore, ids: Arc<dyn IdGen>) -> Storage {
        let s = Arc::new(store.clone());
        Storage {
            jobs: s.clone(),
            queue: s.clone(),
            ledger: s.clone(),
            keys: s.clone(),
            generation: s.clone(),
            limits: s.clone(),
            idempotency: s.clone(),
            outbox: s.clone(),
            secrets: Arc::new(PgWebhookSecrets::new(store.clone(), ids)),
            limiter: Arc::new(PgRateLimiter::new(store)),
            health: s,
        }
    }

    /// Every backend on one SQLite store; the rate limiter in this process's memory.
    pub fn sqlite(store: SqliteStore, ids: Arc<dyn IdGen>) -> Storage {
        let s = Arc::new(store.clone());
        Storage {
            jobs: s.clone(),
            queue: s.clone(),
            ledger: s.clone(),
            keys: s.clone(),
            generation: s.clone(),
            limits: s.clone(),
            idempotency: s.clone(),
            outbox: s.clone(),
            secrets: Arc::new(SqliteWebhookSecrets::new(store, ids)),
            limiter: Arc::new(MemoryRateLimiter::default()),
            health: s,
        }
    }
}
