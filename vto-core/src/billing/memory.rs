//! [`MemoryLedger`]: the [`Ledger`] in memory, a mutex over accounts, holds and entries (the
//! reference the SQLite and PostgreSQL ledgers are tested against).

use async_trait::async_trait;
use rust_decimal::Decimal;

use super::{
    balance_from_entries, check_hold, Account, Balance, EntryKind, Hold, HoldStatus, Ledger,
    LedgerEntry, LedgerError, Settlement,
};
use crate::clock::Timestamp;
use crate::ids::{AccountId, RequestId};
use crate::money::Money;

/// The in-memory ledger: a mutex over accounts, holds and entries.
#[derive(Debug, Default)]
pub struct MemoryLedger {
    inner: std::sync::Mutex<MemoryLedgerState>,
}

#[derive(Debug, Default)]
struct MemoryLedgerState {
    accounts: Vec<Account>,
    holds: std::collections::HashMap<RequestId, Hold>,
    entries: Vec<LedgerEntry>,
}

impl MemoryLedgerState {
    fn account(&self, id: &AccountId) -> Result<&Account, LedgerError> {
        self.accounts
            .iter()
            .find(|a| &a.id == id)
            .ok_or_else(|| LedgerError::UnknownAccount(id.clone()))
    }

    fn balance(&self, id: &AccountId) -> Result<Balance, LedgerError> {
        let acct = self.account(id)?;
        let entries: Vec<_> = self
            .entries
            .iter()
            .filter(|e| &e.account_id == id)
            .cloned()
            .collect();
        Ok(balance_from_entries(id, acct.currency, &entries))
    }

    fn push(
        &mut self,
        account_id: &AccountId,
        kind: EntryKind,
        amount: Decimal,
        request_id: Option<RequestId>,
        memo: &str,
        at: Timestamp,
    ) {
        let seq = self.entries.len() as u64 + 1;
        self.entries.push(LedgerEntry {
            seq,
            account_id: account_id.clone(),
            kind,
            amount,
            request_id,
            memo: memo.to_string(),
            at,
        });
    }

    fn settle(
        &mut self,
        request_id: RequestId,
        capture: bool,
        now: Timestamp,
    ) -> Result<Settlement, LedgerError> {
        let hold = self
            .holds
            .get_mut(&request_id)
            .ok_or(LedgerError::NoHold(request_id))?;
        match (hold.status, capture) {
            (HoldStatus::Captured, true) => return Ok(Settlement::AlreadyCaptured),
            (HoldStatus::Released, false) => return Ok(Settlement::AlreadyReleased),
            (HoldStatus::Open, _) => {}
            (status, _) => return Err(LedgerError::Settled { request_id, status }),
        }
        hold.status = if capture {
            HoldStatus::Captured
        } else {
            HoldStatus::Released
        };
        let (account_id, amount) = (hold.account_id.clone(), hold.amount.amount);
        let kind = if capture {
            EntryKind::Capture
        } else {
            EntryKind::Release
        };
        self.push(&account_id, kind, amount, Some(request_id), "", now);
        Ok(if capture {
            Settlement::Captured
        } else {
            Settlement::Released
        })
    }
}

#[async_trait]
impl Ledger for MemoryLedger {
    async fn create_account(&self, account: &Account) -> Result<(), LedgerError> {
        let mut s = self.inner.lock().expect("ledger lock");
        if s.accounts.iter().any(|a| a.id == account.id) {
            return Err(LedgerError::AccountExists(account.id.clone()));
        }
        s.accounts.push(account.clone());
        Ok(())
    }

    async fn account(&self, id: &AccountId) -> Result<Option<Account>, LedgerError> {
        let s = self.inner.lock().expect("ledger lock");
        Ok(s.accounts.iter().find(|a| &a.id == id).cloned())
    }

    async fn accounts(&self) -> Result<Vec<Account>, LedgerError> {
        Ok(self.inner.lock().expect("ledger lock").accounts.clone())
    }

    async fn balance(&self, id: &AccountId) -> Result<Balance, LedgerError> {
        self.inner.lock().expect("ledger lock").balance(id)
    }

    async fn credit(
        &self,
        id: &AccountId,
        amount: Money,
        memo: &str,
        now: Timestamp,
    ) -> Result<Balance, LedgerError> {
        let mut s = self.inner.lock().expect("ledger lock");
        let acct = s.account(id)?;
        if amount.currency != acct.currency {
            return Err(LedgerError::CurrencyMismatch {
                account: acct.currency,
                got: amount.currency,
            });
        }
        if amount.amount <= Decimal::ZERO {
            return Err(LedgerError::NonPositive(amount.amount));
        }
        s.push(id, EntryKind::Credit, amount.amount, None, memo, now);
        s.balance(id)
    }

    async fn hold(
        &self,
        id: &AccountId,
        request_id: RequestId,
        amount: Money,
        now: Timestamp,
    ) -> Result<Hold, LedgerError> {
        let mut s = self.inner.lock().expect("ledger lock");
        if let Some(existing) = s.holds.get(&request_id) {
            return if &existing.account_id == id && existing.amount == amount {
                Ok(existing.clone())
            } else {
                Err(LedgerError::HoldMismatch(request_id))
            };
        }
        let acct = s.account(id)?.clone();
        let current = s.balance(id)?;
        check_hold(&acct, &current, amount)?;
        let hold = Hold {
            request_id,
            account_id: id.clone(),
            amount,
            status: HoldStatus::Open,
            created_at: now,
        };
        s.holds.insert(request_id, hold.clone());
        s.push(
            id,
            EntryKind::Hold,
            amount.amount,
            Some(request_id),
            "",
            now,
        );
        Ok(hold)
    }

    async fn capture(
        &self,
        request_id: RequestId,
        now: Timestamp,
    ) -> Result<Settlement, LedgerError> {
        self.inner
            .lock()
            .expect("ledger lock")
            .settle(request_id, true, now)
    }

    async fn release(
        &self,
        request_id: RequestId,
        now: Timestamp,
    ) -> Result<Settlement, LedgerError> {
        self.inner
            .lock()
            .expect("ledger lock")
            .settle(request_id, false, now)
    }

    async fn get_hold(&self, request_id: RequestId) -> Result<Option<Hold>, LedgerError> {
        Ok(self
            .inner
            .lock()
            .expect("ledger lock")
            .holds
            .get(&request_id)
            .cloned())
    }

    async fn open_holds(&self) -> Result<Vec<Hold>, LedgerError> {
        let s = self.inner.lock().expect("ledger lock");
        let mut v: Vec<_> = s
            .holds
            .values()
            .filter(|h| h.status == HoldStatus::Open)
            .cloned()
            .collect();
        v.sort_by_key(|h| (h.created_at, h.request_id));
        Ok(v)
    }

    async fn entries(&self, id: &AccountId) -> Result<Vec<LedgerEntry>, LedgerError> {
        let s = self.inner.lock().expect("ledger lock");
        s.account(id)?;
        Ok(s.entries
            .iter()
            .filter(|e| &e.account_id == id)
            .cloned()
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::money::Currency;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Op {
        Credit(i64),
        Hold(u8, i64),
        Capture(u8),
        Release(u8),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (1i64..500).prop_map(Op::Credit),
            (0u8..12, 0i64..80).prop_map(|(r, c)| Op::Hold(r, c)),
            (0u8..12).prop_map(Op::Capture),
            (0u8..12).prop_map(Op::Release),
        ]
    }

    fn rid(n: u8) -> RequestId {
        RequestId(uuid::Uuid::from_u128(u128::from(n) + 1))
    }

    proptest! {
        /// Available balance never goes negative, the entries always sum to the reported
        /// balance, and each request is charged at most once however often capture is called.
        #[test]
        fn ledger_invariants_hold_under_random_operations(ops in proptest::collection::vec(op(), 1..60)) {
            let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
            rt.block_on(async {
                let l = MemoryLedger::default();
                let a = AccountId::from("acct_p");
                l.create_account(&Account { id: a.clone(), name: "p".into(), currency: Currency::USD, created_at: Timestamp(0) }).await.unwrap();
                let cents = |c: i64| Money::new(Decimal::new(c, 2), Currency::USD);
                let mut captured = std::collections::HashSet::new();
                let mut charged = Decimal::ZERO;
                let mut credited = Decimal::ZERO;
                for (i, o) in ops.iter().enumerate() {
                    let now = Timestamp(i as i64);
                    match *o {
                        Op::Credit(c) => { l.credit(&a, cents(c), "", now).await.unwrap(); credited += cents(c).amount; }
                        Op::Hold(r, c) => { let _ = l.hold(&a, rid(r), cents(c), now).await; }
                        Op::Capture(r) => {
                            if let Ok(Settlement::Captured) = l.capture(rid(r), now).await {
                                prop_assert!(captured.insert(r), "request {} captured twice", r);
                                charged += l.get_hold(rid(r)).await.unwrap().unwrap().amount.amount;
                            }
                        }
                        Op::Release(r) => { let _ = l.release(rid(r), now).await; }
                    }
                    let b = l.balance(&a).await.unwrap();
                    prop_assert!(b.available >= Decimal::ZERO, "available {} < 0", b.available);
                    prop_assert!(b.held >= Decimal::ZERO);
                    let entries = l.entries(&a).await.unwrap();
                    prop_assert_eq!(balance_from_entries(&a, Currency::USD, &entries), b.clone());
                    prop_assert_eq!(b.balance, credited - charged);
                }
                Ok(())
            })?;
        }
    }
}
