//! Administration: accounts, funds and API keys (the CLI and embedders).

use crate::billing::LedgerError;
use crate::error::{ApiError, ErrorCode};
use crate::ids::AccountId;

use super::{backend, Caller, TryOnService};

/// Administration: accounts, funds and keys. Used by the CLI and by embedders.
impl TryOnService {
    /// Creates an account in the price table's currency.
    pub async fn create_account(&self, name: &str) -> Result<crate::billing::Account, LedgerError> {
        let account = crate::billing::Account {
            id: self.b.ids.account_id(),
            name: name.to_string(),
            currency: self.config.prices.currency(),
            created_at: self.now(),
        };
        self.b.ledger.create_account(&account).await?;
        Ok(account)
    }

    /// Adds funds to an account.
    pub async fn add_funds(
        &self,
        account: &AccountId,
        amount: rust_decimal::Decimal,
        memo: &str,
    ) -> Result<crate::billing::Balance, LedgerError> {
        let money = crate::money::Money::new(amount, self.config.prices.currency());
        self.b.ledger.credit(account, money, memo, self.now()).await
    }

    /// Creates an API key for an account; the secret is in the returned value only.
    pub async fn create_api_key(
        &self,
        account: &AccountId,
        name: &str,
    ) -> Result<crate::keys::NewApiKey, ApiError> {
        if self
            .b
            .ledger
            .account(account)
            .await
            .map_err(backend)?
            .is_none()
        {
            return Err(ApiError::new(
                ErrorCode::NotFound,
                format!("no account {account}"),
            ));
        }
        let key = crate::keys::generate_key(self.b.ids.as_ref(), account, name, self.now());
        self.b.keys.insert(&key.record).await.map_err(backend)?;
        Ok(key)
    }

    /// The caller's balance.
    pub async fn balance(&self, caller: &Caller) -> Result<crate::billing::Balance, ApiError> {
        self.b
            .ledger
            .balance(&caller.account_id)
            .await
            .map_err(backend)
    }
}
