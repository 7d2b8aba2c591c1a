//! [`ApiKeyStore`], [`AuthGeneration`] and [`AccountLimitStore`] on PostgreSQL. Every revocation
//! and limit change moves the auth generation in the same transaction.

use async_trait::async_trait;
use deadpool_postgres::GenericClient;

use vto_core::keys::{ApiKeyRecord, ApiKeyStore, AuthGeneration, KeyStoreError};
use vto_core::ratelimit::{AccountLimitStore, AccountLimits, Endpoint, Quota, RateLimitError};
use vto_core::{AccountId, ApiKeyId, Timestamp};

use crate::{col, is_unique_violation, pg, PgError, PgStore};

impl From<PgError> for KeyStoreError {
    fn from(e: PgError) -> Self {
        KeyStoreError::Backend(e.0)
    }
}

impl From<PgError> for RateLimitError {
    fn from(e: PgError) -> Self {
        RateLimitError(e.0)
    }
}

const KEY_COLS: &str = "id, account_id, display_prefix, hash, name, created_at, revoked_at";

fn key_from_row(r: &tokio_postgres::Row) -> Result<ApiKeyRecord, PgError> {
    Ok(ApiKeyRecord {
        id: ApiKeyId(col(r, 0)?),
        account_id: AccountId(col(r, 1)?),
        display_prefix: col(r, 2)?,
        hash: col(r, 3)?,
        name: col(r, 4)?,
        created_at: Timestamp(col(r, 5)?),
        revoked_at: col::<Option<i64>>(r, 6)?.map(Timestamp),
    })
}

/// Moves the auth generation forward, inside the caller's transaction.
async fn bump_generation(c: &impl GenericClient) -> Result<(), PgError> {
    c.execute(
        "UPDATE auth_generation SET value = value + 1 WHERE id = 1",
        &[],
    )
    .await
    .map_err(pg("moving the auth generation"))?;
    Ok(())
}

#[async_trait]
impl ApiKeyStore for PgStore {
    async fn insert(&self, k: &ApiKeyRecord) -> Result<(), KeyStoreError> {
        let c = self.conn().await?;
        let r = c
            .execute(
                &format!("INSERT INTO api_keys ({KEY_COLS}) VALUES ($1, $2, $3, $4, $5, $6, $7)"),
                &[
                    &k.id.as_str(),
                    &k.account_id.as_str(),
                    &k.display_prefix,
                    &k.hash,
                    &k.name,
                    &k.created_at.0,
                    &k.revoked_at.map(|t| t.0),
                ],
            )
            .await;
        match r {
            Ok(_) => Ok(()),
            Err(e) if is_unique_violation(&e) => Err(KeyStoreError::Exists),
            Err(e) => Err(PgError::ctx("inserting an API key", e).into()),
        }
    }

    async fn find_by_hash(&self, hash: &str) -> Result<Option<ApiKeyRecord>, KeyStoreError> {
        let c = self.conn().await?;
        let st = c
            .prepare_cached(&format!("SELECT {KEY_COLS} FROM api_keys WHERE hash = $1"))
            .await
            .map_err(pg("preparing a key lookup"))?;
        let row = c
            .query_opt(&st, &[&hash])
            .await
            .map_err(pg("looking up an API key"))?;
        Ok(row.as_ref().map(key_from_row).transpose()?)
    }

    async fn list(&self, account: Option<&AccountId>) -> Result<Vec<ApiKeyRecord>, KeyStoreError> {
        let c = self.conn().await?;
        let rows = match account {
            Some(a) => {
                c.query(
                    &format!(
                        "SELECT {KEY_COLS} FROM api_keys WHERE account_id = $1
                         ORDER BY created_at, seq"
                    ),
                    &[&a.as_str()],
                )
                .await
            }
            None => {
                c.query(
                    &format!("SELECT {KEY_COLS} FROM api_keys ORDER BY created_at, seq"),
                    &[],
                )
                .await
            }
        }
        .map_err(pg("listing API keys"))?;
        Ok(rows.iter().map(key_from_row).collect::<Result<_, _>>()?)
    }

    async fn revoke(&self, id: &ApiKeyId, now: Timestamp) -> Result<bool, KeyStoreError> {
        let mut c = self.conn().await?;
        let tx = c
            .transaction()
            .await
            .map_err(pg("beginning a revocation"))?;
        let n = tx
            .execute(
                "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $2) WHERE id = $1",
                &[&id.as_str(), &now.0],
            )
            .await
            .map_err(pg("revoking an API key"))?;
        if n > 0 {
            bump_generation(&tx).await?;
        }
        tx.commit().await.map_err(pg("committing a revocation"))?;
        Ok(n > 0)
    }
}

#[async_trait]
impl AuthGeneration for PgStore {
    async fn auth_generation(&self) -> Result<u64, KeyStoreError> {
        let c = self.conn().await?;
        let st = c
            .prepare_cached("SELECT value FROM auth_generation WHERE id = 1")
            .await
            .map_err(pg("preparing the auth generation read"))?;
        let row = c
            .query_one(&st, &[])
            .await
            .map_err(pg("reading the auth generation"))?;
        let v: i64 = col(&row, 0)?;
        Ok(u64::try_from(v).unwrap_or(0))
    }
}

#[async_trait]
impl AccountLimitStore for PgStore {
    async fn limits(&self, account: &AccountId) -> Result<Option<AccountLimits>, RateLimitError> {
        let c = self.conn().await?;
        let st = c
            .prepare_cached(
                "SELECT endpoint, burst, period_ms FROM account_limits WHERE account_id = $1",
            )
            .await
            .map_err(pg("preparing an account limits read"))?;
        let rows = c
            .query(&st, &[&account.as_str()])
            .await
            .map_err(pg("reading account limits"))?;
        let mut out = AccountLimits::new();
        for r in &rows {
            let ep: &str = col(r, 0)?;
            let burst: i64 = col(r, 1)?;
            let period_ms: i64 = col(r, 2)?;
            let endpoint = Endpoint::ALL
                .into_iter()
                .find(|e| e.as_str() == ep)
                .ok_or_else(|| PgError::msg(format!("account_limits: unknown endpoint {ep:?}")))?;
            let burst = u32::try_from(burst)
                .ok()
                .and_then(std::num::NonZeroU32::new)
                .ok_or_else(|| PgError::msg(format!("account_limits: bad burst {burst}")))?;
            let period_ms = u64::try_from(period_ms)
                .map_err(|_| PgError::msg(format!("account_limits: bad period {period_ms}")))?;
            out.insert(endpoint, Quota { burst, period_ms });
        }
        Ok((!out.is_empty()).then_some(out))
    }

    async fn set_limits(
        &self,
        account: &AccountId,
        limits: &AccountLimits,
    ) -> Result<(), RateLimitError> {
        let mut c = self.conn().await?;
        let tx = c
            .transaction()
            .await
            .map_err(pg("beginning a limits change"))?;
        tx.execute(
            "DELETE FROM account_limits WHERE account_id = $1",
            &[&account.as_str()],
        )
        .await
        .map_err(pg("clearing account limits"))?;
        for (endpoint, q) in limits {
            tx.execute(
                "INSERT INTO account_limits (account_id, endpoint, burst, period_ms)
                 VALUES ($1, $2, $3, $4)",
                &[
                    &account.as_str(),
                    &endpoint.as_str(),
                    &i64::from(q.burst.get()),
                    &i64::try_from(q.period_ms).unwrap_or(i64::MAX),
                ],
            )
            .await
            .map_err(pg("writing account limits"))?;
        }
        bump_generation(&tx).await?;
        tx.commit()
            .await
            .map_err(pg("committing a limits change"))?;
        Ok(())
    }

    async fn reset_limits(&self, account: &AccountId) -> Result<bool, RateLimitError> {
        let mut c = self.conn().await?;
        let tx = c
            .transaction()
            .await
            .map_err(pg("beginning a limits reset"))?;
        let n = tx
            .execute(
                "DELETE FROM account_limits WHERE account_id = $1",
                &[&account.as_str()],
            )
            .await
            .map_err(pg("resetting account limits"))?;
        bump_generation(&tx).await?;
        tx.commit().await.map_err(pg("committing a limits reset"))?;
        Ok(n > 0)
    }
}
