//! The webhook outbox ([`Outbox`]) and signing secrets ([`PgWebhookSecrets`]) on
//! PostgreSQL. Deliveries are claimed with `FOR UPDATE SKIP LOCKED`, so dispatchers in several
//! processes never send the same delivery at once.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;

use vto_core::outbox::{
    apply_attempt, Delivery, DeliveryAttempt, NextStep, Outbox, OutboxError, WebhookSecret,
    WebhookSecrets,
};
use vto_core::{AccountId, IdGen, RequestId, Timestamp};

use crate::{col, pg, PgError, PgStore};

impl From<PgError> for OutboxError {
    fn from(e: PgError) -> Self {
        OutboxError(e.0)
    }
}

const DELIVERY_COLUMNS: &str = "id, request_id, account_id, url, body, status, attempts, \
     next_attempt_at, last_status, last_error, created_at";

fn delivery_from_row(r: &tokio_postgres::Row) -> Result<Delivery, PgError> {
    let status: &str = col(r, 5)?;
    let attempts: i64 = col(r, 6)?;
    let last_status: Option<i32> = col(r, 8)?;
    Ok(Delivery {
        id: col(r, 0)?,
        request_id: RequestId(col(r, 1)?),
        account_id: AccountId(col(r, 2)?),
        url: col(r, 3)?,
        body: col(r, 4)?,
        status: status.parse().map_err(PgError::msg)?,
        attempts: u32::try_from(attempts)
            .map_err(|_| PgError::msg(format!("corrupt attempt count {attempts}")))?,
        next_attempt_at: Timestamp(col(r, 7)?),
        last_status: last_status
            .map(|s| u16::try_from(s).map_err(|_| PgError::msg(format!("corrupt status {s}"))))
            .transpose()?,
        last_error: col(r, 9)?,
        created_at: Timestamp(col(r, 10)?),
    })
}

fn deliveries(rows: &[tokio_postgres::Row]) -> Result<Vec<Delivery>, PgError> {
    rows.iter().map(delivery_from_row).collect()
}

fn i64_of(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

#[async_trait]
impl Outbox for PgStore {
    async fn enqueue(&self, d: &Delivery) -> Result<bool, OutboxError> {
        let c = self.conn().await?;
        let n = c
            .execute(
                &format!(
                    "INSERT INTO webhook_deliveries ({DELIVERY_COLUMNS})
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
                     ON CONFLICT (id) DO NOTHING"
                ),
                &[
                    &d.id,
                    &d.request_id.0,
                    &d.account_id.as_str(),
                    &d.url,
                    &d.body,
                    &d.status.as_str(),
                    &i64::from(d.attempts),
                    &d.next_attempt_at.0,
                    &d.last_status.map(i32::from),
                    &d.last_error,
                    &d.created_at.0,
                ],
            )
            .await
            .map_err(pg("enqueueing a webhook delivery"))?;
        Ok(n == 1)
    }

    async fn claim_due(
        &self,
        now: Timestamp,
        lease: Duration,
        limit: usize,
    ) -> Result<Vec<Delivery>, OutboxError> {
        let until = now.plus(lease).0;
        let c = self.conn().await?;
        // Returns the deliveries as they were (the lease only moves next_attempt_at).
        let rows = c
            .query(
                &format!(
                    "WITH due AS MATERIALIZED (
                         SELECT {DELIVERY_COLUMNS} FROM webhook_deliveries
                         WHERE status = 'pending' AND next_attempt_at <= $1
                         ORDER BY next_attempt_at, created_at LIMIT $2
                         FOR UPDATE SKIP LOCKED),
                     leased AS (
                         UPDATE webhook_deliveries w SET next_attempt_at = $3
                         FROM due WHERE w.id = due.id)
                     SELECT {DELIVERY_COLUMNS} FROM due ORDER BY next_attempt_at, created_at"
                ),
                &[&now.0, &i64_of(limit), &until],
            )
            .await
            .map_err(pg("claiming webhook deliveries"))?;
        Ok(deliveries(&rows)?)
    }

    async fn record(&self, attempt: &DeliveryAttempt, next: NextStep) -> Result<(), OutboxError> {
        let mut c = self.conn().await?;
        let tx = c
            .transaction()
            .await
            .map_err(pg("beginning a delivery record"))?;
        let row = tx
            .query_opt(
                &format!(
                    "SELECT {DELIVERY_COLUMNS} FROM webhook_deliveries WHERE id = $1 FOR UPDATE"
                ),
                &[&attempt.delivery_id],
            )
            .await
            .map_err(pg("locking a webhook delivery"))?
            .ok_or_else(|| {
                OutboxError(vto_core::BackendError::msg(format!(
                    "no delivery {}",
                    attempt.delivery_id
                )))
            })?;
        let mut d = delivery_from_row(&row)?;
        apply_attempt(&mut d, attempt, next);
        tx.execute(
            "UPDATE webhook_deliveries SET status = $2, attempts = $3, next_attempt_at = $4,
             last_status = $5, last_error = $6 WHERE id = $1",
            &[
                &d.id,
                &d.status.as_str(),
                &i64::from(d.attempts),
                &d.next_attempt_at.0,
                &d.last_status.map(i32::from),
                &d.last_error,
            ],
        )
        .await
        .map_err(pg("updating a webhook delivery"))?;
        tx.execute(
            "INSERT INTO webhook_attempts (delivery_id, n, at, http_status, error, duration_ms)
             VALUES ($1, $2, $3, $4, $5, $6)
             ON CONFLICT (delivery_id, n) DO UPDATE SET at = excluded.at,
                 http_status = excluded.http_status, error = excluded.error,
                 duration_ms = excluded.duration_ms",
            &[
                &attempt.delivery_id,
                &i64::from(attempt.n),
                &attempt.at.0,
                &attempt.http_status.map(i32::from),
                &attempt.error,
                &i64::try_from(attempt.duration_ms).unwrap_or(i64::MAX),
            ],
        )
        .await
        .map_err(pg("recording a webhook attempt"))?;
        tx.commit()
            .await
            .map_err(pg("committing a delivery record"))?;
        Ok(())
    }

    async fn get(&self, id: &str) -> Result<Option<Delivery>, OutboxError> {
        let c = self.conn().await?;
        let row = c
            .query_opt(
                &format!("SELECT {DELIVERY_COLUMNS} FROM webhook_deliveries WHERE id = $1"),
                &[&id],
            )
            .await
            .map_err(pg("reading a webhook delivery"))?;
        Ok(row.as_ref().map(delivery_from_row).transpose()?)
    }

    async fn list(
        &self,
        account: Option<&AccountId>,
        limit: usize,
    ) -> Result<Vec<Delivery>, OutboxError> {
        let c = self.conn().await?;
        let rows = match account {
            Some(a) => {
                c.query(
                    &format!(
                        "SELECT {DELIVERY_COLUMNS} FROM webhook_deliveries WHERE account_id = $1
                         ORDER BY created_at DESC, id DESC LIMIT $2"
                    ),
                    &[&a.as_str(), &i64_of(limit)],
                )
                .await
            }
            None => {
                c.query(
                    &format!(
                        "SELECT {DELIVERY_COLUMNS} FROM webhook_deliveries
                         ORDER BY created_at DESC, id DESC LIMIT $1"
                    ),
                    &[&i64_of(limit)],
                )
                .await
            }
        }
        .map_err(pg("listing webhook deliveries"))?;
        Ok(deliveries(&rows)?)
    }

    async fn attempts(&self, id: &str) -> Result<Vec<DeliveryAttempt>, OutboxError> {
        let c = self.conn().await?;
        let rows = c
            .query(
                "SELECT delivery_id, n, at, http_status, error, duration_ms
                 FROM webhook_attempts WHERE delivery_id = $1 ORDER BY n",
                &[&id],
            )
            .await
            .map_err(pg("listing webhook attempts"))?;
        let mut out = Vec::with_capacity(rows.len());
        for r in &rows {
            let n: i64 = col(r, 1)?;
            let status: Option<i32> = col(r, 3)?;
            let duration: i64 = col(r, 5)?;
            out.push(DeliveryAttempt {
                delivery_id: col(r, 0)?,
                n: u32::try_from(n).map_err(|_| PgError::msg(format!("corrupt attempt {n}")))?,
                at: Timestamp(col(r, 2)?),
                http_status: status
                    .map(|s| {
                        u16::try_from(s).map_err(|_| PgError::msg(format!("corrupt status {s}")))
                    })
                    .transpose()?,
                error: col(r, 4)?,
                duration_ms: u64::try_from(duration).unwrap_or(0),
            });
        }
        Ok(out)
    }
}

/// Per-account webhook signing secrets in PostgreSQL, shared by every instance.
#[derive(Clone)]
pub struct PgWebhookSecrets {
    store: PgStore,
    ids: Arc<dyn IdGen>,
}

impl std::fmt::Debug for PgWebhookSecrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgWebhookSecrets").finish_non_exhaustive()
    }
}

impl PgWebhookSecrets {
    /// Secrets stored in `store`'s database, new ones drawn from `ids`.
    pub fn new(store: PgStore, ids: Arc<dyn IdGen>) -> Self {
        Self { store, ids }
    }
}

fn parse_secret(s: &str) -> Result<WebhookSecret, OutboxError> {
    WebhookSecret::parse(s).map_err(|e| {
        OutboxError(vto_core::BackendError::msg(format!(
            "stored webhook secret: {e}"
        )))
    })
}

#[async_trait]
impl WebhookSecrets for PgWebhookSecrets {
    async fn secret(&self, account: &AccountId) -> Result<WebhookSecret, OutboxError> {
        let c = self.store.conn().await?;
        let existing = c
            .query_opt(
                "SELECT secret FROM webhook_secrets WHERE account_id = $1",
                &[&account.as_str()],
            )
            .await
            .map_err(pg("reading a webhook secret"))?;
        if let Some(r) = existing {
            return parse_secret(col(&r, 0)?);
        }
        // First use: instances racing here all end up with the one secret that was stored.
        let fresh = WebhookSecret::generate(self.ids.as_ref()).expose();
        let row = c
            .query_opt(
                "WITH ins AS (
                     INSERT INTO webhook_secrets (account_id, secret) VALUES ($1, $2)
                     ON CONFLICT (account_id) DO NOTHING RETURNING secret)
                 SELECT secret FROM ins
                 UNION ALL
                 SELECT secret FROM webhook_secrets WHERE account_id = $1
                     AND NOT EXISTS (SELECT 1 FROM ins)",
                &[&account.as_str(), &fresh],
            )
            .await
            .map_err(pg("creating a webhook secret"))?;
        if let Some(r) = row {
            return parse_secret(col(&r, 0)?);
        }
        // Another instance stored one after this statement's snapshot: read it now.
        let r = c
            .query_one(
                "SELECT secret FROM webhook_secrets WHERE account_id = $1",
                &[&account.as_str()],
            )
            .await
            .map_err(pg("reading a webhook secret"))?;
        parse_secret(col(&r, 0)?)
    }

    async fn rotate(&self, account: &AccountId) -> Result<WebhookSecret, OutboxError> {
        let fresh = WebhookSecret::generate(self.ids.as_ref()).expose();
        let c = self.store.conn().await?;
        let row = c
            .query_one(
                "INSERT INTO webhook_secrets (account_id, secret) VALUES ($1, $2)
                 ON CONFLICT (account_id) DO UPDATE SET secret = excluded.secret,
                     rotated_at = now()
                 RETURNING secret",
                &[&account.as_str(), &fresh],
            )
            .await
            .map_err(pg("rotating a webhook secret"))?;
        parse_secret(col(&row, 0)?)
    }
}
