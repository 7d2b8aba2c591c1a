//! Money: exact decimal amounts with a currency code, serialized as decimal strings.

use std::fmt;
use std::str::FromStr;

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

/// An ISO-4217-style currency code: three upper-case ASCII letters (`USD`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Currency([u8; 3]);

impl Currency {
    /// US dollars, the spec's default currency.
    pub const USD: Currency = Currency(*b"USD");

    /// The code as a string slice.
    pub fn as_str(&self) -> &str {
        // Constructed only from ASCII upper-case letters.
        std::str::from_utf8(&self.0).unwrap_or("???")
    }
}

/// A currency code that is not three upper-case letters.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid currency code {0:?}: expected three upper-case letters such as USD")]
pub struct InvalidCurrency(pub String);

impl FromStr for Currency {
    type Err = InvalidCurrency;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let b = s.as_bytes();
        if b.len() == 3 && b.iter().all(u8::is_ascii_uppercase) {
            Ok(Currency([b[0], b[1], b[2]]))
        } else {
            Err(InvalidCurrency(s.to_string()))
        }
    }
}

impl fmt::Display for Currency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Currency {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Currency {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// An amount of money: `{ "amount": "0.05", "currency": "USD" }` on the wire.
///
/// Amounts are exact decimals (`rust_decimal`), never floats; they serialize as strings so no
/// client parses them into a binary float by accident.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Money {
    /// The amount, e.g. `0.05`.
    #[serde(with = "rust_decimal::serde::str")]
    pub amount: Decimal,
    /// The currency code.
    pub currency: Currency,
}

/// Two amounts in different currencies were combined.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("currency mismatch: {left} vs {right}")]
pub struct CurrencyMismatch {
    /// The left operand's currency.
    pub left: Currency,
    /// The right operand's currency.
    pub right: Currency,
}

impl Money {
    /// An amount in a currency.
    pub fn new(amount: Decimal, currency: Currency) -> Self {
        Self { amount, currency }
    }

    /// Zero in a currency.
    pub fn zero(currency: Currency) -> Self {
        Self::new(Decimal::ZERO, currency)
    }

    /// Parses a decimal string such as `"0.05"` in a currency.
    pub fn parse(amount: &str, currency: Currency) -> Result<Self, rust_decimal::Error> {
        Ok(Self::new(Decimal::from_str(amount.trim())?, currency))
    }

    /// `self + other`, refusing mixed currencies.
    pub fn checked_add(self, other: Money) -> Result<Money, CurrencyMismatch> {
        self.same_currency(other)?;
        Ok(Money::new(self.amount + other.amount, self.currency))
    }

    /// `self - other`, refusing mixed currencies.
    pub fn checked_sub(self, other: Money) -> Result<Money, CurrencyMismatch> {
        self.same_currency(other)?;
        Ok(Money::new(self.amount - other.amount, self.currency))
    }

    fn same_currency(self, other: Money) -> Result<(), CurrencyMismatch> {
        if self.currency == other.currency {
            Ok(())
        } else {
            Err(CurrencyMismatch {
                left: self.currency,
                right: other.currency,
            })
        }
    }

    /// Whether the amount is below zero.
    pub fn is_negative(&self) -> bool {
        self.amount.is_sign_negative() && !self.amount.is_zero()
    }
}

impl fmt::Display for Money {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.amount.normalize(), self.currency)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_serialize_as_decimal_strings() {
        let m = Money::parse("0.05", Currency::USD).unwrap();
        assert_eq!(
            serde_json::to_string(&m).unwrap(),
            r#"{"amount":"0.05","currency":"USD"}"#
        );
        let back: Money = serde_json::from_str(r#"{"amount":"0.30","currency":"USD"}"#).unwrap();
        assert_eq!(back.amount, Decimal::new(30, 2));
    }

    #[test]
    fn decimal_arithmetic_is_exact() {
        let mut total = Money::zero(Currency::USD);
        let dime = Money::parse("0.1", Currency::USD).unwrap();
        for _ in 0..10 {
            total = total.checked_add(dime).unwrap();
        }
        assert_eq!(total.amount, Decimal::ONE);
    }

    #[test]
    fn mixed_currencies_are_refused() {
        let usd = Money::parse("1", Currency::USD).unwrap();
        let eur = Money::parse("1", "EUR".parse().unwrap()).unwrap();
        assert!(usd.checked_add(eur).is_err());
        assert!("usd".parse::<Currency>().is_err());
        assert!("USDT".parse::<Currency>().is_err());
    }
}
