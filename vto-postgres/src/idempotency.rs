//! [`IdempotencyStore`] on PostgreSQL: one row per (account, key) with the request's
//! fingerprint and, once answered, the response to replay; instances share it.

use async_trait::async_trait;

use vto_core::idempotency::{unfinished, Begin, IdempotencyError, IdempotencyStore};
use vto_core::{AccountId, Timestamp};

use crate::{col, pg, PgError, PgStore};

impl From<PgError> for IdempotencyError {
    fn from(e: PgError) -> Self {
        IdempotencyError(e.0)
    }
}

#[async_trait]
impl IdempotencyStore for PgStore {
    async fn begin(
        &self,
        account: &AccountId,
        key: &str,
        fingerprint: &str,
        now: Timestamp,
    ) -> Result<Begin, IdempotencyError> {
        let c = self.conn().await?;
        let insert = c
            .prepare_cached(
                "INSERT INTO idempotency_keys (account_id, key, fingerprint, response, created_at)
                 VALUES ($1, $2, $3, NULL, $4) ON CONFLICT (account_id, key) DO NOTHING",
            )
            .await
            .map_err(pg("preparing an idempotency key insert"))?;
        let read = c
            .prepare_cached(
                "SELECT fingerprint, response, created_at FROM idempotency_keys
                 WHERE account_id = $1 AND key = $2",
            )
            .await
            .map_err(pg("preparing an idempotency key read"))?;
        // Inserted: new. Present: what it holds. Gone in between (abandoned): try again.
        for _ in 0..3 {
            let n = c
                .execute(&insert, &[&account.as_str(), &key, &fingerprint, &now.0])
                .await
                .map_err(pg("reserving an idempotency key"))?;
            if n == 1 {
                return Ok(Begin::New);
            }
            let row = c
                .query_opt(&read, &[&account.as_str(), &key])
                .await
                .map_err(pg("reading an idempotency key"))?;
            if let Some(r) = row {
                let stored: &str = col(&r, 0)?;
                let response: Option<String> = col(&r, 1)?;
                let reserved: i64 = col(&r, 2)?;
                return Ok(match response {
                    _ if stored != fingerprint => Begin::Conflict,
                    Some(saved) => Begin::Replay(saved),
                    None => unfinished(Timestamp(reserved), now),
                });
            }
        }
        Err(IdempotencyError(vto_core::BackendError::msg(format!(
            "idempotency key {key:?} keeps appearing and disappearing"
        ))))
    }

    async fn finish(
        &self,
        account: &AccountId,
        key: &str,
        response: &str,
    ) -> Result<(), IdempotencyError> {
        let c = self.conn().await?;
        c.execute(
            "UPDATE idempotency_keys SET response = $3 WHERE account_id = $1 AND key = $2",
            &[&account.as_str(), &key, &response],
        )
        .await
        .map_err(pg("saving an idempotent response"))?;
        Ok(())
    }

    async fn abandon(&self, account: &AccountId, key: &str) -> Result<(), IdempotencyError> {
        let c = self.conn().await?;
        c.execute(
            "DELETE FROM idempotency_keys
             WHERE account_id = $1 AND key = $2 AND response IS NULL",
            &[&account.as_str(), &key],
        )
        .await
        .map_err(pg("abandoning an idempotency key"))?;
        Ok(())
    }

    async fn purge_before(&self, cutoff: Timestamp) -> Result<usize, IdempotencyError> {
        let c = self.conn().await?;
        let n = c
            .execute(
                "DELETE FROM idempotency_keys WHERE created_at < $1",
                &[&cutoff.0],
            )
            .await
            .map_err(pg("purging idempotency keys"))?;
        Ok(usize::try_from(n).unwrap_or(usize::MAX))
    }
}
