//! [`Ledger`] on PostgreSQL: accounts with running totals, holds, and an append-only entry log.
//!
//! Amounts travel as text and are stored as `NUMERIC`. A hold locks its account row while it
//! checks the available balance, so concurrent holds never overdraw. A capture or release is a
//! conditional update of the hold (`WHERE status = 'open'`): exactly one of two racing
//! settlements changes it; a unique index allows one settlement entry per request.

use std::str::FromStr;

use async_trait::async_trait;
use deadpool_postgres::GenericClient;
use rust_decimal::Decimal;

use vto_core::billing::{
    check_hold, Account, Balance, EntryKind, Hold, HoldStatus, Ledger, LedgerEntry, LedgerError,
    Settlement,
};
use vto_core::{AccountId, Currency, Money, RequestId, Timestamp};

use crate::{col, is_unique_violation, pg, PgError, PgStore};

impl From<PgError> for LedgerError {
    fn from(e: PgError) -> Self {
        LedgerError::Backend(e.0)
    }
}

fn dec(s: &str) -> Result<Decimal, PgError> {
    Decimal::from_str(s).map_err(|e| PgError::msg(format!("corrupt amount {s:?}: {e}")))
}

fn cur(s: &str) -> Result<Currency, PgError> {
    s.parse()
        .map_err(|e: vto_core::money::InvalidCurrency| PgError::ctx("corrupt currency", e))
}

struct AccountRow {
    account: Account,
    balance: Decimal,
    held: Decimal,
}

impl AccountRow {
    fn balance(&self) -> Balance {
        Balance {
            account_id: self.account.id.clone(),
            currency: self.account.currency,
            balance: self.balance,
            held: self.held,
            available: self.balance - self.held,
        }
    }
}

/// Reads an account; with `lock`, locks its row for the rest of the transaction.
async fn load_account(
    c: &impl GenericClient,
    id: &AccountId,
    lock: bool,
) -> Result<Option<AccountRow>, PgError> {
    let sql = if lock {
        "SELECT name, currency, created_at, balance::text, held::text FROM accounts
         WHERE id = $1 FOR UPDATE"
    } else {
        "SELECT name, currency, created_at, balance::text, held::text FROM accounts WHERE id = $1"
    };
    let st = c
        .prepare_cached(sql)
        .await
        .map_err(pg("preparing an account read"))?;
    let Some(r) = c
        .query_opt(&st, &[&id.as_str()])
        .await
        .map_err(pg("reading an account"))?
    else {
        return Ok(None);
    };
    Ok(Some(AccountRow {
        account: Account {
            id: id.clone(),
            name: col(&r, 0)?,
            currency: cur(col(&r, 1)?)?,
            created_at: Timestamp(col(&r, 2)?),
        },
        balance: dec(col(&r, 3)?)?,
        held: dec(col(&r, 4)?)?,
    }))
}

async fn need_account(
    c: &impl GenericClient,
    id: &AccountId,
    lock: bool,
) -> Result<AccountRow, LedgerError> {
    load_account(c, id, lock)
        .await?
        .ok_or_else(|| LedgerError::UnknownAccount(id.clone()))
}

async fn push_entry(
    c: &impl GenericClient,
    account: &AccountId,
    kind: EntryKind,
    amount: Decimal,
    request_id: Option<RequestId>,
    memo: &str,
    at: Timestamp,
) -> Result<(), PgError> {
    let st = c
        .prepare_cached(
            "INSERT INTO ledger_entries (account_id, kind, amount, request_id, memo, at)
             VALUES ($1, $2, $3::text::numeric, $4, $5, $6)",
        )
        .await
        .map_err(pg("preparing a ledger entry"))?;
    c.execute(
        &st,
        &[
            &account.as_str(),
            &kind.as_str(),
            &amount.to_string(),
            &request_id.map(|r| r.0),
            &memo,
            &at.0,
        ],
    )
    .await
    .map_err(pg("writing a ledger entry"))?;
    Ok(())
}

/// Adds to the running totals (inside the caller's transaction).
async fn add_totals(
    c: &impl GenericClient,
    id: &AccountId,
    balance: Decimal,
    held: Decimal,
) -> Result<(), PgError> {
    let st = c
        .prepare_cached(
            "UPDATE accounts SET balance = balance + $2::text::numeric,
             held = held + $3::text::numeric WHERE id = $1",
        )
        .await
        .map_err(pg("preparing a totals update"))?;
    c.execute(
        &st,
        &[&id.as_str(), &balance.to_string(), &held.to_string()],
    )
    .await
    .map_err(pg("updating account totals"))?;
    Ok(())
}

fn hold_status(s: &str) -> Result<HoldStatus, PgError> {
    s.parse()
        .map_err(|e: String| PgError::msg(format!("corrupt hold: {e}")))
}

const HOLD_COLS: &str = "request_id, account_id, amount::text, currency, status, created_at";

fn hold_from_row(r: &tokio_postgres::Row) -> Result<Hold, PgError> {
    Ok(Hold {
        request_id: RequestId(col(r, 0)?),
        account_id: AccountId(col(r, 1)?),
        amount: Money::new(dec(col(r, 2)?)?, cur(col(r, 3)?)?),
        status: hold_status(col(r, 4)?)?,
        created_at: Timestamp(col(r, 5)?),
    })
}

async fn load_hold(c: &impl GenericClient, request_id: RequestId) -> Result<Option<Hold>, PgError> {
    let st = c
        .prepare_cached(&format!(
            "SELECT {HOLD_COLS} FROM holds WHERE request_id = $1"
        ))
        .await
        .map_err(pg("preparing a hold read"))?;
    c.query_opt(&st, &[&request_id.0])
        .await
        .map_err(pg("reading a hold"))?
        .as_ref()
        .map(hold_from_row)
        .transpose()
}

/// The same hold again is that hold; another amount or account for the request is a mismatch.
fn same_hold(existing: Hold, id: &AccountId, amount: Money) -> Result<Hold, LedgerError> {
    if &existing.account_id == id && existing.amount == amount {
        Ok(existing)
    } else {
        Err(LedgerError::HoldMismatch(existing.request_id))
    }
}

async fn settle(
    store: &PgStore,
    request_id: RequestId,
    capture: bool,
    now: Timestamp,
) -> Result<Settlement, LedgerError> {
    let (status, kind, settlement) = if capture {
        (
            HoldStatus::Captured,
            EntryKind::Capture,
            Settlement::Captured,
        )
    } else {
        (
            HoldStatus::Released,
            EntryKind::Release,
            Settlement::Released,
        )
    };
    let status = status.as_str();
    let mut c = store.conn().await?;
    let tx = c
        .transaction()
        .await
        .map_err(pg("beginning a settlement"))?;
    // The conditional update is the decision: only one settlement finds the hold open.
    let st = tx
        .prepare_cached(
            "UPDATE holds SET status = $2 WHERE request_id = $1 AND status = 'open'
             RETURNING account_id, amount::text",
        )
        .await
        .map_err(pg("preparing a settlement"))?;
    let Some(row) = tx
        .query_opt(&st, &[&request_id.0, &status])
        .await
        .map_err(pg("settling a hold"))?
    else {
        drop(tx);
        let hold = load_hold(&c, request_id)
            .await?
            .ok_or(LedgerError::NoHold(request_id))?;
        return match (hold.status, capture) {
            (HoldStatus::Captured, true) => Ok(Settlement::AlreadyCaptured),
            (HoldStatus::Released, false) => Ok(Settlement::AlreadyReleased),
            (status, _) => Err(LedgerError::Settled { request_id, status }),
        };
    };
    let account = AccountId(col(&row, 0)?);
    let amount = dec(col(&row, 1)?)?;
    push_entry(&tx, &account, kind, amount, Some(request_id), "", now)
        .await
        .map_err(|e| {
            LedgerError::Backend(vto_core::BackendError::new(
                format!("a second settlement of {request_id}?"),
                e,
            ))
        })?;
    let balance_change = if capture { -amount } else { Decimal::ZERO };
    add_totals(&tx, &account, balance_change, -amount).await?;
    tx.commit().await.map_err(pg("committing a settlement"))?;
    Ok(settlement)
}

#[async_trait]
impl Ledger for PgStore {
    async fn create_account(&self, account: &Account) -> Result<(), LedgerError> {
        let c = self.conn().await?;
        let st = c
            .prepare_cached(
                "INSERT INTO accounts (id, name, currency, created_at) VALUES ($1, $2, $3, $4)",
            )
            .await
            .map_err(pg("preparing an account insert"))?;
        match c
            .execute(
                &st,
                &[
                    &account.id.as_str(),
                    &account.name,
                    &account.currency.as_str(),
                    &account.created_at.0,
                ],
            )
            .await
        {
            Ok(_) => Ok(()),
            Err(e) if is_unique_violation(&e) => {
                Err(LedgerError::AccountExists(account.id.clone()))
            }
            Err(e) => Err(PgError::ctx("creating an account", e).into()),
        }
    }

    async fn account(&self, id: &AccountId) -> Result<Option<Account>, LedgerError> {
        let c = self.conn().await?;
        Ok(load_account(&c, id, false).await?.map(|r| r.account))
    }

    async fn accounts(&self) -> Result<Vec<Account>, LedgerError> {
        let c = self.conn().await?;
        let rows = c
            .query(
                "SELECT id, name, currency, created_at FROM accounts ORDER BY created_at, seq",
                &[],
            )
            .await
            .map_err(pg("listing accounts"))?;
        let mut out = Vec::with_capacity(rows.len());
        for r in &rows {
            out.push(Account {
                id: AccountId(col(r, 0)?),
                name: col(r, 1)?,
                currency: cur(col(r, 2)?)?,
                created_at: Timestamp(col(r, 3)?),
            });
        }
        Ok(out)
    }

    async fn balance(&self, id: &AccountId) -> Result<Balance, LedgerError> {
        let c = self.conn().await?;
        Ok(need_account(&c, id, false).await?.balance())
    }

    async fn credit(
        &self,
        id: &AccountId,
        amount: Money,
        memo: &str,
        now: Timestamp,
    ) -> Result<Balance, LedgerError> {
        let mut c = self.conn().await?;
        let tx = c.transaction().await.map_err(pg("beginning a credit"))?;
        let mut acct = need_account(&tx, id, true).await?;
        if amount.currency != acct.account.currency {
            return Err(LedgerError::CurrencyMismatch {
                account: acct.account.currency,
                got: amount.currency,
            });
        }
        if amount.amount <= Decimal::ZERO {
            return Err(LedgerError::NonPositive(amount.amount));
        }
        push_entry(&tx, id, EntryKind::Credit, amount.amount, None, memo, now).await?;
        add_totals(&tx, id, amount.amount, Decimal::ZERO).await?;
        tx.commit().await.map_err(pg("committing a credit"))?;
        acct.balance += amount.amount;
        Ok(acct.balance())
    }

    async fn hold(
        &self,
        id: &AccountId,
        request_id: RequestId,
        amount: Money,
        now: Timestamp,
    ) -> Result<Hold, LedgerError> {
        let mut c = self.conn().await?;
        if let Some(existing) = load_hold(&c, request_id).await? {
            return same_hold(existing, id, amount);
        }
        let tx = c.transaction().await.map_err(pg("beginning a hold"))?;
        let acct = need_account(&tx, id, true).await?;
        // A racing hold for the same request committed while we waited for the lock?
        if let Some(existing) = load_hold(&tx, request_id).await? {
            return same_hold(existing, id, amount);
        }
        check_hold(&acct.account, &acct.balance(), amount)?;
        let st = tx
            .prepare_cached(
                "INSERT INTO holds (request_id, account_id, amount, currency, status, created_at)
                 VALUES ($1, $2, $3::text::numeric, $4, 'open', $5)",
            )
            .await
            .map_err(pg("preparing a hold"))?;
        tx.execute(
            &st,
            &[
                &request_id.0,
                &id.as_str(),
                &amount.amount.to_string(),
                &amount.currency.as_str(),
                &now.0,
            ],
        )
        .await
        .map_err(pg("placing a hold"))?;
        push_entry(
            &tx,
            id,
            EntryKind::Hold,
            amount.amount,
            Some(request_id),
            "",
            now,
        )
        .await?;
        add_totals(&tx, id, Decimal::ZERO, amount.amount).await?;
        tx.commit().await.map_err(pg("committing a hold"))?;
        Ok(Hold {
            request_id,
            account_id: id.clone(),
            amount,
            status: HoldStatus::Open,
            created_at: now,
        })
    }

    async fn capture(
        &self,
        request_id: RequestId,
        now: Timestamp,
    ) -> Result<Settlement, LedgerError> {
        settle(self, request_id, true, now).await
    }

    async fn release(
        &self,
        request_id: RequestId,
        now: Timestamp,
    ) -> Result<Settlement, LedgerError> {
        settle(self, request_id, false, now).await
    }

    async fn get_hold(&self, request_id: RequestId) -> Result<Option<Hold>, LedgerError> {
        let c = self.conn().await?;
        Ok(load_hold(&c, request_id).await?)
    }

    async fn open_holds(&self) -> Result<Vec<Hold>, LedgerError> {
        let c = self.conn().await?;
        let rows = c
            .query(
                &format!(
                    "SELECT {HOLD_COLS} FROM holds WHERE status = 'open'
                     ORDER BY created_at, request_id"
                ),
                &[],
            )
            .await
            .map_err(pg("listing open holds"))?;
        Ok(rows
            .iter()
            .map(hold_from_row)
            .collect::<Result<Vec<_>, _>>()?)
    }

    async fn entries(&self, id: &AccountId) -> Result<Vec<LedgerEntry>, LedgerError> {
        let c = self.conn().await?;
        need_account(&c, id, false).await?;
        let rows = c
            .query(
                "SELECT seq, kind, amount::text, request_id, memo, at FROM ledger_entries
                 WHERE account_id = $1 ORDER BY seq",
                &[&id.as_str()],
            )
            .await
            .map_err(pg("listing ledger entries"))?;
        let mut out = Vec::with_capacity(rows.len());
        for r in &rows {
            let seq: i64 = col(r, 0)?;
            let kind: &str = col(r, 1)?;
            out.push(LedgerEntry {
                seq: u64::try_from(seq).map_err(|_| PgError::msg(format!("corrupt seq {seq}")))?,
                account_id: id.clone(),
                kind: kind.parse().map_err(PgError::msg)?,
                amount: dec(col(r, 2)?)?,
                request_id: col::<Option<uuid::Uuid>>(r, 3)?.map(RequestId),
                memo: col(r, 4)?,
                at: Timestamp(col(r, 5)?),
            });
        }
        Ok(out)
    }
}
