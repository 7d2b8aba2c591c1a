//! [`IdempotencyStore`] on SQLite: one row per (account, key) with the request's fingerprint
//! and, once answered, the response to replay.

use async_trait::async_trait;
use rusqlite::{params, OptionalExtension};

use vto_core::idempotency::{unfinished, Begin, IdempotencyError, IdempotencyStore};
use vto_core::{AccountId, Timestamp};

use crate::{DbError, SqliteStore};

impl From<DbError> for IdempotencyError {
    fn from(e: DbError) -> Self {
        IdempotencyError(e.0)
    }
}

#[async_trait]
impl IdempotencyStore for SqliteStore {
    async fn begin(
        &self,
        account: &AccountId,
        key: &str,
        fingerprint: &str,
        now: Timestamp,
    ) -> Result<Begin, IdempotencyError> {
        let (account, key, fp) = (account.clone(), key.to_string(), fingerprint.to_string());
        self.write(move |c| {
            let row: Option<(String, Option<String>, i64)> = c
                .query_row(
                    "SELECT fingerprint, response, created_at FROM idempotency_keys \
                     WHERE account_id = ?1 AND key = ?2",
                    params![account.as_str(), key],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                )
                .optional()
                .map_err(DbError::from)?;
            Ok(match row {
                None => {
                    c.execute(
                        "INSERT INTO idempotency_keys (account_id, key, fingerprint, response, \
                         created_at) VALUES (?1, ?2, ?3, NULL, ?4)",
                        params![account.as_str(), key, fp, now.0],
                    )
                    .map_err(DbError::from)?;
                    Begin::New
                }
                Some((stored, _, _)) if stored != fp => Begin::Conflict,
                Some((_, Some(response), _)) => Begin::Replay(response),
                Some((_, None, reserved)) => unfinished(Timestamp(reserved), now),
            })
        })
        .await
    }

    async fn finish(
        &self,
        account: &AccountId,
        key: &str,
        response: &str,
    ) -> Result<(), IdempotencyError> {
        let (account, key, response) = (account.clone(), key.to_string(), response.to_string());
        self.write(move |c| {
            c.execute(
                "UPDATE idempotency_keys SET response = ?3 WHERE account_id = ?1 AND key = ?2",
                params![account.as_str(), key, response],
            )
            .map_err(DbError::from)?;
            Ok(())
        })
        .await
    }

    async fn abandon(&self, account: &AccountId, key: &str) -> Result<(), IdempotencyError> {
        let (account, key) = (account.clone(), key.to_string());
        self.write(move |c| {
            c.execute(
                "DELETE FROM idempotency_keys \
                 WHERE account_id = ?1 AND key = ?2 AND response IS NULL",
                params![account.as_str(), key],
            )
            .map_err(DbError::from)?;
            Ok(())
        })
        .await
    }

    async fn purge_before(&self, cutoff: Timestamp) -> Result<usize, IdempotencyError> {
        self.write(move |c| {
            Ok(c.execute(
                "DELETE FROM idempotency_keys WHERE created_at < ?1",
                [cutoff.0],
            )
            .map_err(DbError::from)?)
        })
        .await
    }
}
