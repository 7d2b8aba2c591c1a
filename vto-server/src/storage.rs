//! The one place where backends are chosen from the config: `[storage] url` picks the records'
//! backend (SQLite by default, PostgreSQL for several instances: `vto-postgres`). Everything else in the server
//! and the CLI sees only vto-core's traits, through [`Storage`].
//!
//! PostgreSQL and S3 are cargo features (`postgres`, `s3`, both on by default). An embedder
//! that builds without one gets a start-up error naming the feature if the config asks for it.

use std::sync::Arc;

use anyhow::Context as _;
use vto_core::billing::Ledger;
use vto_core::idempotency::IdempotencyStore;
use vto_core::keys::{ApiKeyStore, AuthGeneration};
use vto_core::outbox::{Outbox, WebhookSecrets};
use vto_core::ratelimit::{AccountLimitStore, RateLimiter};
use vto_core::{
    FsResultStore, IdGen, JobQueue, JobStore, MemoryRateLimiter, ResultStore, StorageHealth,
};
#[cfg(feature = "postgres")]
use vto_postgres::{PgOptions, PgRateLimiter, PgStore, PgWebhookSecrets};
#[cfg(feature = "s3")]
use vto_s3::{S3Options, S3ResultStore};
use vto_sqlite::{SqliteStore, SqliteWebhookSecrets};

use crate::config::{Config, ResultsLocation, StorageLocation};
use crate::results::{load_or_create_secret, SignedResults};

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
            #[cfg(not(feature = "postgres"))]
            StorageLocation::Postgres(_) => anyhow::bail!(
                "storage.url names PostgreSQL, but this build has no PostgreSQL support \
                 (vto-server's `postgres` feature)"
            ),
            #[cfg(feature = "postgres")]
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
    #[cfg(feature = "postgres")]
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

/// The result store `[results] url` names, and, for a folder, the signed-link front this
/// server serves at `/v1/results/{token}` (`None` for S3: clients download from the store at
/// presigned URLs, so every instance hands out links that work).
pub async fn open_results(
    config: &Config,
    base_url: &str,
) -> anyhow::Result<(Arc<dyn ResultStore>, Option<Arc<SignedResults>>)> {
    match config.results_location()? {
        ResultsLocation::File(dir) => {
            let secret = load_or_create_secret(&config.data_dir.join("url-signing.key"))
                .context("loading the URL-signing secret")?;
            let store = FsResultStore::new(&dir)
                .with_context(|| format!("creating the results folder {}", dir.display()))?;
            let signed = Arc::new(SignedResults::new(
                store,
                base_url.to_string(),
                secret,
                config.result_url_ttl_secs,
            ));
            Ok((signed.clone(), Some(signed)))
        }
        #[cfg(not(feature = "s3"))]
        ResultsLocation::S3 { .. } => anyhow::bail!(
            "results.url names S3, but this build has no S3 support (vto-server's `s3` feature)"
        ),
        #[cfg(feature = "s3")]
        ResultsLocation::S3 { bucket, prefix } => {
            let r = &config.results;
            let given = |v: &str| Some(v.trim().to_string()).filter(|v| !v.is_empty());
            let options = S3Options {
                endpoint: given(&r.endpoint),
                allow_http: r.allow_http,
                region: given(&r.region),
                access_key_id: given(&r.access_key_id),
                secret_access_key: given(&r.secret_access_key),
                url_ttl: std::time::Duration::from_secs(config.result_url_ttl_secs),
                ..S3Options::default()
            };
            let url = if prefix.is_empty() {
                format!("s3://{bucket}")
            } else {
                format!("s3://{bucket}/{prefix}")
            };
            let store = S3ResultStore::from_url(&url, options)
                .with_context(|| format!("results.url {url}"))?;
            // A wrong key, a missing bucket or an unreachable endpoint stops the start here,
            // not at the first finished job.
            store
                .check()
                .await
                .with_context(|| format!("checking results.url {url}"))?;
            Ok((Arc::new(store), None))
        }
    }
}
