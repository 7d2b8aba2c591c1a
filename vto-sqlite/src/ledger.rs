//! [`Ledger`] on SQLite: accounts with their balance and held totals, holds, and the
//! append-only ledger entries. A hold checks the available balance and inserts itself in one
//! write transaction; a capture or release settles an open hold once.

use std::str::FromStr;

use async_trait::async_trait;
use rusqlite::{params, Connection, OptionalExtension};
use rust_decimal::Decimal;

use vto_core::billing::{
    check_hold, Account, Balance, EntryKind, Hold, HoldStatus, Ledger, LedgerEntry, LedgerError,
    Settlement,
};
use vto_core::{AccountId, Currency, Money, RequestId, Timestamp};

use crate::{db, is_constraint, DbError, SqliteStore};

fn dec(s: &str) -> Result<Decimal, DbError> {
    Decimal::from_str(s).map_err(|e| DbError::msg(format!("corrupt amount {s:?}: {e}")))
}

fn cur(s: &str) -> Result<Currency, DbError> {
    s.parse()
        .map_err(|e: vto_core::money::InvalidCurrency| DbError::ctx("corrupt currency", e))
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

fn load_account(c: &Connection, id: &AccountId) -> Result<Option<AccountRow>, DbError> {
    let row = c
        .prepare_cached(
            "SELECT name, currency, created_at, balance, held FROM accounts WHERE id = ?1",
        )?
        .query_row([id.as_str()], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, String>(4)?,
            ))
        })
        .optional()?;
    row.map(|(name, currency, created_at, balance, held)| {
        Ok(AccountRow {
            account: Account {
                id: id.clone(),
                name,
                currency: cur(&currency)?,
                created_at: Timestamp(created_at),
            },
            balance: dec(&balance)?,
            held: dec(&held)?,
        })
    })
    .transpose()
}

fn need_account(c: &Connection, id: &AccountId) -> Result<AccountRow, LedgerError> {
    load_account(c, id)?.ok_or_else(|| LedgerError::UnknownAccount(id.clone()))
}

fn push_entry(
    c: &Connection,
    account: &AccountId,
    kind: EntryKind,
    amount: Decimal,
    request_id: Option<RequestId>,
    memo: &str,
    at: Timestamp,
) -> Result<(), DbError> {
    c.prepare_cached(
        "INSERT INTO ledger_entries (account_id, kind, amount, request_id, memo, at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        account.as_str(),
        kind.as_str(),
        amount.to_string(),
        request_id.map(|r| r.to_string()),
        memo,
        at.0
    ])?;
    Ok(())
}

fn set_totals(
    c: &Connection,
    id: &AccountId,
    balance: Decimal,
    held: Decimal,
) -> Result<(), DbError> {
    c.prepare_cached("UPDATE accounts SET balance = ?2, held = ?3 WHERE id = ?1")?
        .execute(params![id.as_str(), balance.to_string(), held.to_string()])?;
    Ok(())
}

fn hold_status(s: &str) -> Result<HoldStatus, DbError> {
    s.parse()
        .map_err(|e: String| DbError::msg(format!("corrupt hold: {e}")))
}

const HOLD_COLS: &str = "request_id, account_id, amount, currency, status, created_at";

type HoldRow = (String, String, String, String, String, i64);

fn hold_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<HoldRow> {
    Ok((
        r.get(0)?,
        r.get(1)?,
        r.get(2)?,
        r.get(3)?,
        r.get(4)?,
        r.get(5)?,
    ))
}

fn hold_from_cols(row: HoldRow) -> Result<Hold, DbError> {
    let (request_id, account_id, amount, currency, status, created_at) = row;
    Ok(Hold {
        request_id: request_id
            .parse()
            .map_err(|_| DbError::msg(format!("corrupt request id {request_id:?}")))?,
        account_id: AccountId(account_id),
        amount: Money::new(dec(&amount)?, cur(&currency)?),
        status: hold_status(&status)?,
        created_at: Timestamp(created_at),
    })
}

fn load_hold(c: &Connection, request_id: RequestId) -> Result<Option<Hold>, DbError> {
    let row = c
        .prepare_cached(&format!(
            "SELECT {HOLD_COLS} FROM holds WHERE request_id = ?1"
        ))?
        .query_row([request_id.to_string()], hold_from_row)
        .optional()?;
    row.map(hold_from_cols).transpose()
}

fn settle(
    c: &Connection,
    request_id: RequestId,
    capture: bool,
    now: Timestamp,
) -> Result<Settlement, LedgerError> {
    let hold = load_hold(c, request_id)?.ok_or(LedgerError::NoHold(request_id))?;
    match (hold.status, capture) {
        (HoldStatus::Captured, true) => return Ok(Settlement::AlreadyCaptured),
        (HoldStatus::Released, false) => return Ok(Settlement::AlreadyReleased),
        (HoldStatus::Open, _) => {}
        (status, _) => return Err(LedgerError::Settled { request_id, status }),
    }
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
    c.prepare_cached("UPDATE holds SET status = ?2 WHERE request_id = ?1")
        .and_then(|mut st| st.execute(params![request_id.to_string(), status.as_str()]))
        .map_err(db)?;
    let acct = need_account(c, &hold.account_id)?;
    let amount = hold.amount.amount;
    push_entry(c, &hold.account_id, kind, amount, Some(request_id), "", now)?;
    let balance = if capture {
        acct.balance - amount
    } else {
        acct.balance
    };
    set_totals(c, &hold.account_id, balance, acct.held - amount)?;
    Ok(settlement)
}

#[async_trait]
impl Ledger for SqliteStore {
    async fn create_account(&self, account: &Account) -> Result<(), LedgerError> {
        let account = account.clone();
        self.write(move |c| {
            c.execute(
                "INSERT INTO accounts (id, name, currency, created_at) VALUES (?1, ?2, ?3, ?4)",
                params![
                    account.id.as_str(),
                    account.name,
                    account.currency.as_str(),
                    account.created_at.0
                ],
            )
            .map_err(|e| {
                if is_constraint(&e) {
                    LedgerError::AccountExists(account.id.clone())
                } else {
                    db(e).into()
                }
            })?;
            Ok(())
        })
        .await
    }

    async fn account(&self, id: &AccountId) -> Result<Option<Account>, LedgerError> {
        let id = id.clone();
        self.read(move |c| Ok(load_account(c, &id)?.map(|r| r.account)))
            .await
    }

    async fn accounts(&self) -> Result<Vec<Account>, LedgerError> {
        self.read(|c| {
            let mut st = c
                .prepare_cached(
                    "SELECT id, name, currency, created_at FROM accounts ORDER BY created_at, rowid",
                )
                .map_err(db)?;
            let rows = st
                .query_map([], |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, i64>(3)?,
                    ))
                })
                .map_err(db)?;
            let mut out = Vec::new();
            for row in rows {
                let (id, name, currency, created_at) = row.map_err(db)?;
                out.push(Account {
                    id: AccountId(id),
                    name,
                    currency: cur(&currency)?,
                    created_at: Timestamp(created_at),
                });
            }
            Ok(out)
        })
        .await
    }

    async fn balance(&self, id: &AccountId) -> Result<Balance, LedgerError> {
        let id = id.clone();
        self.read(move |c| Ok(need_account(c, &id)?.balance()))
            .await
    }

    async fn credit(
        &self,
        id: &AccountId,
        amount: Money,
        memo: &str,
        now: Timestamp,
    ) -> Result<Balance, LedgerError> {
        let (id, memo) = (id.clone(), memo.to_string());
        self.write(move |c| {
            let mut acct = need_account(c, &id)?;
            if amount.currency != acct.account.currency {
                return Err(LedgerError::CurrencyMismatch {
                    account: acct.account.currency,
                    got: amount.currency,
                });
            }
            if amount.amount <= Decimal::ZERO {
                return Err(LedgerError::NonPositive(amount.amount));
            }
            push_entry(c, &id, EntryKind::Credit, amount.amount, None, &memo, now)?;
            acct.balance += amount.amount;
            set_totals(c, &id, acct.balance, acct.held)?;
            Ok(acct.balance())
        })
        .await
    }

    async fn hold(
        &self,
        id: &AccountId,
        request_id: RequestId,
        amount: Money,
        now: Timestamp,
    ) -> Result<Hold, LedgerError> {
        let id = id.clone();
        self.write(move |c| {
            if let Some(existing) = load_hold(c, request_id)? {
                return if existing.account_id == id && existing.amount == amount {
                    Ok(existing)
                } else {
                    Err(LedgerError::HoldMismatch(request_id))
                };
            }
            let mut acct = need_account(c, &id)?;
            check_hold(&acct.account, &acct.balance(), amount)?;
            c.prepare_cached(&format!(
                "INSERT INTO holds ({HOLD_COLS}) VALUES (?1, ?2, ?3, ?4, 'open', ?5)"
            ))
            .and_then(|mut st| {
                st.execute(params![
                    request_id.to_string(),
                    id.as_str(),
                    amount.amount.to_string(),
                    amount.currency.as_str(),
                    now.0
                ])
            })
            .map_err(db)?;
            push_entry(
                c,
                &id,
                EntryKind::Hold,
                amount.amount,
                Some(request_id),
                "",
                now,
            )?;
            acct.held += amount.amount;
            set_totals(c, &id, acct.balance, acct.held)?;
            Ok(Hold {
                request_id,
                account_id: id,
                amount,
                status: HoldStatus::Open,
                created_at: now,
            })
        })
        .await
    }

    async fn capture(
        &self,
        request_id: RequestId,
        now: Timestamp,
    ) -> Result<Settlement, LedgerError> {
        self.write(move |c| settle(c, request_id, true, now)).await
    }

    async fn release(
        &self,
        request_id: RequestId,
        now: Timestamp,
    ) -> Result<Settlement, LedgerError> {
        self.write(move |c| settle(c, request_id, false, now)).await
    }

    async fn get_hold(&self, request_id: RequestId) -> Result<Option<Hold>, LedgerError> {
        self.read(move |c| Ok(load_hold(c, request_id)?)).await
    }

    async fn open_holds(&self) -> Result<Vec<Hold>, LedgerError> {
        self.read(|c| {
            let mut st = c
                .prepare_cached(&format!(
                    "SELECT {HOLD_COLS} FROM holds WHERE status = 'open'
                     ORDER BY created_at, request_id"
                ))
                .map_err(db)?;
            let rows = st.query_map([], hold_from_row).map_err(db)?;
            let mut out = Vec::new();
            for row in rows {
                out.push(hold_from_cols(row.map_err(db)?)?);
            }
            Ok(out)
        })
        .await
    }

    async fn entries(&self, id: &AccountId) -> Result<Vec<LedgerEntry>, LedgerError> {
        let id = id.clone();
        self.read(move |c| {
            need_account(c, &id)?;
            let mut st = c
                .prepare_cached(
                    "SELECT seq, kind, amount, request_id, memo, at FROM ledger_entries
                     WHERE account_id = ?1 ORDER BY seq",
                )
                .map_err(db)?;
            let rows = st
                .query_map([id.as_str()], |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, Option<String>>(3)?,
                        r.get::<_, String>(4)?,
                        r.get::<_, i64>(5)?,
                    ))
                })
                .map_err(db)?;
            let mut out = Vec::new();
            for row in rows {
                let (seq, kind, amount, request_id, memo, at) = row.map_err(db)?;
                out.push(LedgerEntry {
                    seq: seq as u64,
                    account_id: id.clone(),
                    kind: kind.parse().map_err(DbError::msg)?,
                    amount: dec(&amount)?,
                    request_id: request_id
                        .map(|r| {
                            r.parse()
                                .map_err(|_| DbError::msg(format!("corrupt id {r:?}")))
                        })
                        .transpose()?,
                    memo,
                    at: Timestamp(at),
                });
            }
            Ok(out)
        })
        .await
    }
}
