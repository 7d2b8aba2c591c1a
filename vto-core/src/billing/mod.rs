//! Accounts, balances and the ledger: holds on submit, capture on success, release otherwise.
//!
//! Every movement is a [`LedgerEntry`]. The settled balance is credits minus captures; the held
//! amount is holds minus their releases and captures; what a caller may spend is
//! `available = balance - held`. A hold is keyed by its `request_id`, and settling it (capture
//! or release) happens at most once: a second capture of the same request is a no-op that
//! reports [`Settlement::AlreadyCaptured`], never a second charge.

mod memory;

pub use memory::MemoryLedger;

use async_trait::async_trait;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use crate::backend::BackendError;
use crate::clock::Timestamp;
use crate::ids::{AccountId, RequestId};
use crate::money::{Currency, Money};

/// An account: holds a balance in one currency, owns API keys and jobs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Account {
    /// The id (`acct_…`).
    pub id: AccountId,
    /// A human name, e.g. the shop's.
    pub name: String,
    /// The balance's currency; it must match the price table's.
    pub currency: Currency,
    /// When it was created.
    pub created_at: Timestamp,
}

/// An account's money at one instant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Balance {
    /// The account.
    pub account_id: AccountId,
    /// The currency.
    pub currency: Currency,
    /// Credits minus captures.
    #[serde(with = "rust_decimal::serde::str")]
    pub balance: Decimal,
    /// Open holds.
    #[serde(with = "rust_decimal::serde::str")]
    pub held: Decimal,
    /// `balance - held`: what new requests may hold.
    #[serde(with = "rust_decimal::serde::str")]
    pub available: Decimal,
}

/// The kind of a ledger movement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryKind {
    /// Funds added (raises the balance).
    Credit,
    /// A request's price reserved (raises `held`).
    Hold,
    /// A hold dropped: the request failed or was canceled (lowers `held`).
    Release,
    /// A hold charged: the request succeeded (lowers `held` and the balance).
    Capture,
}

impl EntryKind {
    /// The stored form.
    pub fn as_str(self) -> &'static str {
        match self {
            EntryKind::Credit => "credit",
            EntryKind::Hold => "hold",
            EntryKind::Release => "release",
            EntryKind::Capture => "capture",
        }
    }
}

impl std::str::FromStr for EntryKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        [
            EntryKind::Credit,
            EntryKind::Hold,
            EntryKind::Release,
            EntryKind::Capture,
        ]
        .into_iter()
        .find(|k| k.as_str() == s)
        .ok_or_else(|| format!("unknown ledger entry kind {s:?}"))
    }
}

/// One movement of money.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LedgerEntry {
    /// Order within the ledger (strictly increasing).
    pub seq: u64,
    /// The account.
    pub account_id: AccountId,
    /// What happened.
    pub kind: EntryKind,
    /// Always positive; the kind says the direction.
    #[serde(with = "rust_decimal::serde::str")]
    pub amount: Decimal,
    /// The request a hold, release or capture belongs to.
    pub request_id: Option<RequestId>,
    /// A note (e.g. "top-up").
    pub memo: String,
    /// When.
    pub at: Timestamp,
}

/// The state of a request's hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HoldStatus {
    /// Reserved, not settled.
    Open,
    /// Charged.
    Captured,
    /// Dropped.
    Released,
}

impl HoldStatus {
    /// Every status, in lifecycle order.
    pub const ALL: [HoldStatus; 3] = [HoldStatus::Open, HoldStatus::Captured, HoldStatus::Released];

    /// The stored form (the same as the serde form): `open`, `captured` or `released`.
    pub fn as_str(self) -> &'static str {
        match self {
            HoldStatus::Open => "open",
            HoldStatus::Captured => "captured",
            HoldStatus::Released => "released",
        }
    }
}

impl std::fmt::Display for HoldStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for HoldStatus {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        HoldStatus::ALL
            .into_iter()
            .find(|h| h.as_str() == s)
            .ok_or_else(|| format!("unknown hold status {s:?}"))
    }
}

/// A request's hold.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hold {
    /// The request.
    pub request_id: RequestId,
    /// The account.
    pub account_id: AccountId,
    /// The amount.
    pub amount: Money,
    /// Open, captured or released.
    pub status: HoldStatus,
    /// When it was placed.
    pub created_at: Timestamp,
}

/// What a capture or release did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Settlement {
    /// The hold was charged now.
    Captured,
    /// It had been charged before; nothing changed.
    AlreadyCaptured,
    /// The hold was dropped now.
    Released,
    /// It had been dropped before; nothing changed.
    AlreadyReleased,
}

/// Ledger failures.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LedgerError {
    /// No such account.
    #[error("unknown account {0}")]
    UnknownAccount(AccountId),
    /// The account exists already.
    #[error("account {0} already exists")]
    AccountExists(AccountId),
    /// The available balance is short.
    #[error("insufficient balance: {required} required, {available} available")]
    InsufficientBalance {
        /// The price.
        required: Money,
        /// What the account has available.
        available: Money,
    },
    /// An amount in another currency than the account's.
    #[error("amount in {got}, account is in {account}")]
    CurrencyMismatch {
        /// The account's currency.
        account: Currency,
        /// The amount's currency.
        got: Currency,
    },
    /// Credits must be positive.
    #[error("amount must be positive, got {0}")]
    NonPositive(Decimal),
    /// No hold for this request.
    #[error("no hold for request {0}")]
    NoHold(RequestId),
    /// The hold was settled the other way (captured vs released): a bug upstream.
    #[error("hold for request {request_id} is already {status:?}")]
    Settled {
        /// The request.
        request_id: RequestId,
        /// How it was settled.
        status: HoldStatus,
    },
    /// A hold for this request exists with another amount or account.
    #[error("a different hold exists for request {0}")]
    HoldMismatch(RequestId),
    /// The storage backend failed.
    #[error("ledger backend: {0}")]
    Backend(#[source] BackendError),
}

/// Accounts and their ledger.
#[async_trait]
pub trait Ledger: Send + Sync {
    /// Creates an account with a zero balance.
    async fn create_account(&self, account: &Account) -> Result<(), LedgerError>;
    /// An account by id.
    async fn account(&self, id: &AccountId) -> Result<Option<Account>, LedgerError>;
    /// All accounts, oldest first.
    async fn accounts(&self) -> Result<Vec<Account>, LedgerError>;
    /// The account's balance now.
    async fn balance(&self, id: &AccountId) -> Result<Balance, LedgerError>;
    /// Adds funds (amount > 0).
    async fn credit(
        &self,
        id: &AccountId,
        amount: Money,
        memo: &str,
        now: Timestamp,
    ) -> Result<Balance, LedgerError>;
    /// Reserves `amount` for a request, atomically checking the available balance. Placing the
    /// same hold again (same request, account and amount) returns it unchanged.
    async fn hold(
        &self,
        id: &AccountId,
        request_id: RequestId,
        amount: Money,
        now: Timestamp,
    ) -> Result<Hold, LedgerError>;
    /// Charges a request's hold, at most once.
    async fn capture(
        &self,
        request_id: RequestId,
        now: Timestamp,
    ) -> Result<Settlement, LedgerError>;
    /// Drops a request's hold, at most once.
    async fn release(
        &self,
        request_id: RequestId,
        now: Timestamp,
    ) -> Result<Settlement, LedgerError>;
    /// A request's hold.
    async fn get_hold(&self, request_id: RequestId) -> Result<Option<Hold>, LedgerError>;
    /// Holds not yet settled, oldest first (for reconciliation after a crash).
    async fn open_holds(&self) -> Result<Vec<Hold>, LedgerError>;
    /// The account's entries, in order.
    async fn entries(&self, id: &AccountId) -> Result<Vec<LedgerEntry>, LedgerError>;
}

/// Computes a balance from entries: the one definition every backend must agree with.
pub fn balance_from_entries(
    account_id: &AccountId,
    currency: Currency,
    entries: &[LedgerEntry],
) -> Balance {
    let mut balance = Decimal::ZERO;
    let mut held = Decimal::ZERO;
    for e in entries {
        match e.kind {
            EntryKind::Credit => balance += e.amount,
            EntryKind::Hold => held += e.amount,
            EntryKind::Release => held -= e.amount,
            EntryKind::Capture => {
                held -= e.amount;
                balance -= e.amount;
            }
        }
    }
    Balance {
        account_id: account_id.clone(),
        currency,
        balance,
        held,
        available: balance - held,
    }
}

/// Shared checks for `hold`, so every backend decides the same way.
pub fn check_hold(account: &Account, current: &Balance, amount: Money) -> Result<(), LedgerError> {
    if amount.currency != account.currency {
        return Err(LedgerError::CurrencyMismatch {
            account: account.currency,
            got: amount.currency,
        });
    }
    if amount.is_negative() {
        return Err(LedgerError::NonPositive(amount.amount));
    }
    if current.available < amount.amount {
        return Err(LedgerError::InsufficientBalance {
            required: amount,
            available: Money::new(current.available, account.currency),
        });
    }
    Ok(())
}
