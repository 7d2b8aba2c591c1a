//! [`ApiKeyStore`], [`AuthGeneration`] and [`AccountLimitStore`] on SQLite. Every revocation
//! and limit change moves the auth generation in the same transaction.

use async_trait::async_trait;
use rusqlite::{params, Connection, OptionalExtension};

use vto_core::keys::{ApiKeyRecord, ApiKeyStore, AuthGeneration, KeyStoreError};
use vto_core::ratelimit::{AccountLimitStore, AccountLimits, Endpoint, Quota, RateLimitError};
use vto_core::{AccountId, ApiKeyId, Timestamp};

use crate::{db, is_constraint, DbError, SqliteStore};

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
                    .ok_or_else(|| {
                        DbError::msg(format!("account_limits: unknown endpoint {ep:?}"))
                    })?;
                let burst = u32::try_from(burst)
                    .ok()
                    .and_then(std::num::NonZeroU32::new)
                    .ok_or_else(|| DbError::msg(format!("account_limits: bad burst {burst}")))?;
                let period_ms = u64::try_from(period_ms)
                    .map_err(|_| DbError::msg(format!("account_limits: bad period {period_ms}")))?;
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
