//! The price table: a configurable price per category, with the spec's defaults.

use std::collections::BTreeMap;

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use crate::category::Category;
use crate::money::{Currency, Money};

/// Prices per category in one currency.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PriceTable {
    currency: Currency,
    prices: BTreeMap<Category, Decimal>,
}

/// A price that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PriceError {
    /// Negative prices would credit the caller.
    #[error("price for {category} must not be negative (got {amount})")]
    Negative {
        /// The category.
        category: Category,
        /// The amount given.
        amount: Decimal,
    },
    /// More decimals than the currency's ledger keeps (we keep 4).
    #[error("price for {category} has more than 4 decimal places ({amount})")]
    TooPrecise {
        /// The category.
        category: Category,
        /// The amount given.
        amount: Decimal,
    },
}

impl Default for PriceTable {
    /// The spec's defaults, in USD.
    fn default() -> Self {
        let cents = |c: i64| Decimal::new(c, 2);
        let prices = Category::ALL
            .into_iter()
            .map(|c| {
                let p = match c {
                    Category::Glasses | Category::Sunglasses | Category::Hats => cents(5),
                    Category::Jewelry => cents(7),
                    Category::Shoes => cents(8),
                    Category::Shirt | Category::Tshirt | Category::Jacket | Category::Pants => {
                        cents(15)
                    }
                    Category::Dress => cents(20),
                    Category::FullOutfit => cents(30),
                };
                (c, p)
            })
            .collect();
        Self {
            currency: Currency::USD,
            prices,
        }
    }
}

impl PriceTable {
    /// The table's currency.
    pub fn currency(&self) -> Currency {
        self.currency
    }

    /// The price of one successful result in `category`.
    pub fn price(&self, category: Category) -> Money {
        Money::new(
            self.prices.get(&category).copied().unwrap_or_default(),
            self.currency,
        )
    }

    /// Sets one category's price.
    pub fn set(&mut self, category: Category, amount: Decimal) -> Result<(), PriceError> {
        if amount.is_sign_negative() && !amount.is_zero() {
            return Err(PriceError::Negative { category, amount });
        }
        if amount.normalize().scale() > 4 {
            return Err(PriceError::TooPrecise { category, amount });
        }
        self.prices.insert(category, amount);
        Ok(())
    }

    /// A copy in another currency (the amounts are kept; set them to match).
    pub fn with_currency(mut self, currency: Currency) -> Self {
        self.currency = currency;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_the_spec_table() {
        let t = PriceTable::default();
        let expect = [
            ("glasses", "0.05"),
            ("sunglasses", "0.05"),
            ("hats", "0.05"),
            ("jewelry", "0.07"),
            ("shoes", "0.08"),
            ("shirt", "0.15"),
            ("tshirt", "0.15"),
            ("jacket", "0.15"),
            ("pants", "0.15"),
            ("dress", "0.20"),
            ("full_outfit", "0.30"),
        ];
        for (c, p) in expect {
            let price = t.price(c.parse().unwrap());
            assert_eq!(price.amount, p.parse::<Decimal>().unwrap(), "{c}");
            assert_eq!(price.currency, Currency::USD);
        }
    }

    #[test]
    fn prices_are_configurable_and_checked() {
        let mut t = PriceTable::default();
        t.set(Category::Dress, Decimal::new(25, 2)).unwrap();
        assert_eq!(t.price(Category::Dress).amount, Decimal::new(25, 2));
        assert!(t.set(Category::Dress, Decimal::new(-1, 2)).is_err());
        assert!(t.set(Category::Dress, Decimal::new(1, 5)).is_err());
        assert_eq!(t.price(Category::Dress).amount, Decimal::new(25, 2));
    }
}
