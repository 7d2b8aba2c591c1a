//! Typed identifiers and the injected id/secret generator.

use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// The identifier of a try-on request (a job): a UUID, as the spec's `request_id`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RequestId(pub Uuid);

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.hyphenated().fmt(f)
    }
}

impl FromStr for RequestId {
    type Err = uuid::Error;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Uuid::parse_str(s).map(RequestId)
    }
}

macro_rules! string_id {
    ($(#[$doc:meta])* $name:ident, $prefix:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub String);

        impl $name {
            /// The prefix every generated id of this kind starts with.
            pub const PREFIX: &'static str = $prefix;

            /// The id as a string slice.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<&str> for $name {
            fn from(s: &str) -> Self {
                Self(s.to_string())
            }
        }
    };
}

string_id!(
    /// An account: the unit that holds a balance and owns API keys and jobs (`acct_…`).
    AccountId,
    "acct_"
);
string_id!(
    /// An API key's public identifier (`key_…`); never the secret itself.
    ApiKeyId,
    "key_"
);

/// Source of identifiers and secrets, injected so tests are deterministic.
pub trait IdGen: Send + Sync + fmt::Debug {
    /// A new request id.
    fn request_id(&self) -> RequestId;
    /// `n` bytes of secret randomness (API keys, signing secrets, URL tokens).
    fn secret_bytes(&self, n: usize) -> Vec<u8>;
    /// A new account id (`acct_…`).
    fn account_id(&self) -> AccountId {
        AccountId(format!(
            "{}{}",
            AccountId::PREFIX,
            hex(&self.secret_bytes(8))
        ))
    }
    /// A new API key id (`key_…`).
    fn api_key_id(&self) -> ApiKeyId {
        ApiKeyId(format!(
            "{}{}",
            ApiKeyId::PREFIX,
            hex(&self.secret_bytes(8))
        ))
    }
}

/// Lower-case hex of bytes.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// Ids from the operating system's random source (UUID v4, `getrandom`).
#[derive(Debug, Default, Clone, Copy)]
pub struct RandomIds;

impl IdGen for RandomIds {
    fn request_id(&self) -> RequestId {
        RequestId(Uuid::new_v4())
    }
    fn secret_bytes(&self, n: usize) -> Vec<u8> {
        let mut buf = vec![0u8; n];
        getrandom::fill(&mut buf).expect("the OS random source is available");
        buf
    }
}

/// Deterministic ids for tests: a counter, so runs repeat exactly.
#[derive(Debug, Default)]
pub struct SequentialIds {
    next: AtomicU64,
}

impl IdGen for SequentialIds {
    fn request_id(&self) -> RequestId {
        let n = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        RequestId(Uuid::from_u128(n as u128))
    }
    fn secret_bytes(&self, n: usize) -> Vec<u8> {
        let seed = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..n)
            .map(|_| {
                // xorshift64*: deterministic, not secure; tests only.
                x ^= x >> 12;
                x ^= x << 25;
                x ^= x >> 27;
                (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 56) as u8
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_ids_round_trip_as_uuid_strings() {
        let id = RandomIds.request_id();
        let s = id.to_string();
        assert_eq!(s.len(), 36);
        assert_eq!(s.parse::<RequestId>().unwrap(), id);
        assert!("not-a-uuid".parse::<RequestId>().is_err());
    }

    #[test]
    fn sequential_ids_are_distinct_and_prefixed() {
        let g = SequentialIds::default();
        assert_ne!(g.request_id(), g.request_id());
        assert!(g.account_id().as_str().starts_with("acct_"));
        assert_ne!(g.secret_bytes(16), g.secret_bytes(16));
    }
}
