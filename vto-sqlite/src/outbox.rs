//! The webhook outbox ([`Outbox`]) and the signing secrets ([`SqliteWebhookSecrets`]) on
//! SQLite (tables of migration 0002). Same writer thread and read pool as the rest of
//! [`SqliteStore`].

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use rusqlite::{params, Connection, OptionalExtension};

use vto_core::outbox::{
    apply_attempt, Delivery, DeliveryAttempt, NextStep, Outbox, OutboxError, WebhookSecret,
    WebhookSecrets,
};
use vto_core::{AccountId, BackendError, IdGen, Timestamp};

use super::{DbError, SqliteStore};

impl From<DbError> for OutboxError {
    fn from(e: DbError) -> Self {
        OutboxError(e.0)
    }
}

const DELIVERY_COLUMNS: &str = "id, request_id, account_id, url, body, status, attempts, \
     next_attempt_at, last_status, last_error, created_at";

fn delivery_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Delivery> {
    let bad = |i: usize, msg: String| {
        rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, msg.into())
    };
    let request_id: String = r.get(1)?;
    let status: String = r.get(5)?;
    Ok(Delivery {
        id: r.get(0)?,
        request_id: request_id
            .parse()
            .map_err(|_| bad(1, format!("corrupt request id {request_id:?}")))?,
        account_id: AccountId(r.get(2)?),
        url: r.get(3)?,
        body: r.get(4)?,
        status: status.parse().map_err(|e: String| bad(5, e))?,
        attempts: r.get(6)?,
        next_attempt_at: Timestamp(r.get(7)?),
        last_status: r.get(8)?,
        last_error: r.get(9)?,
        created_at: Timestamp(r.get(10)?),
    })
}

fn load_delivery(c: &Connection, id: &str) -> Result<Option<Delivery>, DbError> {
    Ok(c.query_row(
        &format!("SELECT {DELIVERY_COLUMNS} FROM webhook_deliveries WHERE id = ?1"),
        [id],
        delivery_from_row,
    )
    .optional()?)
}

#[async_trait]
impl Outbox for SqliteStore {
    async fn enqueue(&self, d: &Delivery) -> Result<bool, OutboxError> {
        let d = d.clone();
        self.write(move |c| {
            let n = c
                .execute(
                    "INSERT OR IGNORE INTO webhook_deliveries (id, request_id, account_id, url, \
                     body, status, attempts, next_attempt_at, last_status, last_error, created_at) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                    params![
                        d.id,
                        d.request_id.to_string(),
                        d.account_id.as_str(),
                        d.url,
                        d.body,
                        d.status.as_str(),
                        d.attempts,
                        d.next_attempt_at.0,
                        d.last_status,
                        d.last_error,
                        d.created_at.0
                    ],
                )
                .map_err(DbError::from)?;
            Ok(n == 1)
        })
        .await
    }

    async fn claim_due(
        &self,
        now: Timestamp,
        lease: Duration,
        limit: usize,
    ) -> Result<Vec<Delivery>, OutboxError> {
        let until = now.plus(lease).0;
        self.write(move |c| {
            let mut st = c
                .prepare_cached(&format!(
                    "SELECT {DELIVERY_COLUMNS} FROM webhook_deliveries \
                     WHERE status = 'pending' AND next_attempt_at <= ?1 \
                     ORDER BY next_attempt_at, created_at LIMIT ?2"
                ))
                .map_err(DbError::from)?;
            let due = st
                .query_map(params![now.0, limit as i64], delivery_from_row)
                .map_err(DbError::from)?
                .collect::<Result<Vec<_>, _>>()
                .map_err(DbError::from)?;
            for d in &due {
                c.execute(
                    "UPDATE webhook_deliveries SET next_attempt_at = ?2 WHERE id = ?1",
                    params![d.id, until],
                )
                .map_err(DbError::from)?;
            }
            Ok(due)
        })
        .await
    }

    async fn record(&self, attempt: &DeliveryAttempt, next: NextStep) -> Result<(), OutboxError> {
        let attempt = attempt.clone();
        self.write(move |c| {
            let mut d = load_delivery(c, &attempt.delivery_id)?.ok_or_else(|| {
                OutboxError(BackendError::msg(format!(
                    "no delivery {}",
                    attempt.delivery_id
                )))
            })?;
            apply_attempt(&mut d, &attempt, next);
            c.execute(
                "UPDATE webhook_deliveries SET status = ?2, attempts = ?3, next_attempt_at = ?4, \
                 last_status = ?5, last_error = ?6 WHERE id = ?1",
                params![
                    d.id,
                    d.status.as_str(),
                    d.attempts,
                    d.next_attempt_at.0,
                    d.last_status,
                    d.last_error
                ],
            )
            .map_err(DbError::from)?;
            c.execute(
                "INSERT OR REPLACE INTO webhook_attempts (delivery_id, n, at, http_status, error, \
                 duration_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    attempt.delivery_id,
                    attempt.n,
                    attempt.at.0,
                    attempt.http_status,
                    attempt.error,
                    attempt.duration_ms as i64
                ],
            )
            .map_err(DbError::from)?;
            Ok(())
        })
        .await
    }

    async fn get(&self, id: &str) -> Result<Option<Delivery>, OutboxError> {
        let id = id.to_string();
        self.read(move |c| Ok(load_delivery(c, &id)?)).await
    }

    async fn list(
        &self,
        account: Option<&AccountId>,
        limit: usize,
    ) -> Result<Vec<Delivery>, OutboxError> {
        let account = account.cloned();
        self.read(move |c| {
            let mut st = c
                .prepare_cached(&format!(
                    "SELECT {DELIVERY_COLUMNS} FROM webhook_deliveries \
                     WHERE (?1 IS NULL OR account_id = ?1) ORDER BY created_at DESC, id DESC LIMIT ?2"
                ))
                .map_err(DbError::from)?;
            let v = st
                .query_map(
                    params![account.as_ref().map(|a| a.as_str()), limit as i64],
                    delivery_from_row,
                )
                .map_err(DbError::from)?
                .collect::<Result<Vec<_>, _>>()
                .map_err(DbError::from)?;
            Ok(v)
        })
        .await
    }

    async fn attempts(&self, id: &str) -> Result<Vec<DeliveryAttempt>, OutboxError> {
        let id = id.to_string();
        self.read(move |c| {
            let mut st = c
                .prepare_cached(
                    "SELECT delivery_id, n, at, http_status, error, duration_ms \
                     FROM webhook_attempts WHERE delivery_id = ?1 ORDER BY n",
                )
                .map_err(DbError::from)?;
            let v = st
                .query_map([id], |r| {
                    Ok(DeliveryAttempt {
                        delivery_id: r.get(0)?,
                        n: r.get(1)?,
                        at: Timestamp(r.get(2)?),
                        http_status: r.get(3)?,
                        error: r.get(4)?,
                        duration_ms: r.get::<_, i64>(5)? as u64,
                    })
                })
                .map_err(DbError::from)?
                .collect::<Result<Vec<_>, _>>()
                .map_err(DbError::from)?;
            Ok(v)
        })
        .await
    }
}

/// Per-account webhook signing secrets in the SQLite file.
#[derive(Clone)]
pub struct SqliteWebhookSecrets {
    store: SqliteStore,
    ids: Arc<dyn IdGen>,
}

impl std::fmt::Debug for SqliteWebhookSecrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteWebhookSecrets")
            .finish_non_exhaustive()
    }
}

impl SqliteWebhookSecrets {
    /// Secrets stored in `store`, new ones drawn from `ids`.
    pub fn new(store: SqliteStore, ids: Arc<dyn IdGen>) -> Self {
        Self { store, ids }
    }

    async fn put(&self, account: &AccountId, replace: bool) -> Result<WebhookSecret, OutboxError> {
        let fresh = WebhookSecret::generate(self.ids.as_ref()).expose();
        let account = account.clone();
        let exposed: String = self
            .store
            .write(move |c| {
                let sql = if replace {
                    "INSERT OR REPLACE INTO webhook_secrets (account_id, secret, rotated_at) \
                     VALUES (?1, ?2, strftime('%s','now') * 1000)"
                } else {
                    "INSERT OR IGNORE INTO webhook_secrets (account_id, secret, rotated_at) \
                     VALUES (?1, ?2, strftime('%s','now') * 1000)"
                };
                c.execute(sql, params![account.as_str(), fresh])
                    .map_err(DbError::from)?;
                let s: String = c
                    .query_row(
                        "SELECT secret FROM webhook_secrets WHERE account_id = ?1",
                        [account.as_str()],
                        |r| r.get(0),
                    )
                    .map_err(DbError::from)?;
                Ok::<_, OutboxError>(s)
            })
            .await?;
        WebhookSecret::parse(&exposed)
            .map_err(|e| OutboxError(BackendError::new("corrupt webhook secret", e.to_string())))
    }
}

#[async_trait]
impl WebhookSecrets for SqliteWebhookSecrets {
    async fn secret(&self, account: &AccountId) -> Result<WebhookSecret, OutboxError> {
        let acct = account.clone();
        let existing: Option<String> = self
            .store
            .read(move |c| {
                Ok::<_, OutboxError>(
                    c.query_row(
                        "SELECT secret FROM webhook_secrets WHERE account_id = ?1",
                        [acct.as_str()],
                        |r| r.get(0),
                    )
                    .optional()
                    .map_err(DbError::from)?,
                )
            })
            .await?;
        match existing {
            Some(s) => WebhookSecret::parse(&s).map_err(|e| {
                OutboxError(BackendError::new("corrupt webhook secret", e.to_string()))
            }),
            None => self.put(account, false).await,
        }
    }

    async fn rotate(&self, account: &AccountId) -> Result<WebhookSecret, OutboxError> {
        self.put(account, true).await
    }
}
