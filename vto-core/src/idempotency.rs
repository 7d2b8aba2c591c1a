//! `Idempotency-Key` with Stripe's semantics.
//!
//! The first request with a key runs and its response is saved; a retry with the same key and
//! the same body gets the saved response again, with no second job or charge; the same key
//! with a different body is `409 idempotency_conflict`, and so is a retry that arrives while the
//! first is still running. Responses are saved only once the request started executing: a
//! validation error, a 401, 402 or 429 is not saved, so a corrected retry may reuse the key.
//! Keys are per account and kept at least 24 hours.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::clock::Timestamp;
use crate::ids::{hex, AccountId};

/// Longest accepted key.
pub const MAX_KEY_LEN: usize = 255;

/// How long keys are kept (24 h).
pub const RETENTION: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// What `begin` found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Begin {
    /// A new key: run the request, then `finish` (or `abandon`).
    New,
    /// The saved response of the first request with this key and body.
    Replay(String),
    /// The key was used with another body.
    Conflict,
    /// The first request with this key is still running.
    InProgress,
}

/// Idempotency store failures.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("idempotency store backend: {0}")]
pub struct IdempotencyError(pub String);

/// Saved responses per (account, key).
#[async_trait]
pub trait IdempotencyStore: Send + Sync {
    /// Reserves the key for a request with `fingerprint`, or reports what it holds.
    async fn begin(
        &self,
        account: &AccountId,
        key: &str,
        fingerprint: &str,
        now: Timestamp,
    ) -> Result<Begin, IdempotencyError>;
    /// Saves the response of the request that reserved the key.
    async fn finish(
        &self,
        account: &AccountId,
        key: &str,
        response: &str,
    ) -> Result<(), IdempotencyError>;
    /// Frees a reserved key whose request saved nothing (so a retry may run).
    async fn abandon(&self, account: &AccountId, key: &str) -> Result<(), IdempotencyError>;
    /// Deletes keys created before `cutoff`; returns how many.
    async fn purge_before(&self, cutoff: Timestamp) -> Result<usize, IdempotencyError>;
}

/// The fingerprint of a request body: SHA-256 of its canonical JSON.
pub fn fingerprint(body: &impl Serialize) -> String {
    let canonical = serde_json::to_string(body).unwrap_or_default();
    hex(&Sha256::digest(canonical.as_bytes()))
}

/// Whether a key is acceptable: 1–255 printable ASCII characters.
pub fn valid_key(key: &str) -> bool {
    !key.is_empty() && key.len() <= MAX_KEY_LEN && key.bytes().all(|b| (0x20..0x7f).contains(&b))
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Entry {
    fingerprint: String,
    response: Option<String>,
    created_at: Timestamp,
}

/// In-memory idempotency store.
#[derive(Debug, Default)]
pub struct MemoryIdempotencyStore {
    entries: std::sync::Mutex<std::collections::HashMap<(AccountId, String), Entry>>,
}

#[async_trait]
impl IdempotencyStore for MemoryIdempotencyStore {
    async fn begin(
        &self,
        account: &AccountId,
        key: &str,
        fingerprint: &str,
        now: Timestamp,
    ) -> Result<Begin, IdempotencyError> {
        let mut m = self.entries.lock().expect("idempotency lock");
        let slot = (account.clone(), key.to_string());
        Ok(match m.get(&slot) {
            None => {
                m.insert(
                    slot,
                    Entry {
                        fingerprint: fingerprint.to_string(),
                        response: None,
                        created_at: now,
                    },
                );
                Begin::New
            }
            Some(e) if e.fingerprint != fingerprint => Begin::Conflict,
            Some(Entry {
                response: Some(r), ..
            }) => Begin::Replay(r.clone()),
            Some(_) => Begin::InProgress,
        })
    }

    async fn finish(
        &self,
        account: &AccountId,
        key: &str,
        response: &str,
    ) -> Result<(), IdempotencyError> {
        let mut m = self.entries.lock().expect("idempotency lock");
        if let Some(e) = m.get_mut(&(account.clone(), key.to_string())) {
            e.response = Some(response.to_string());
        }
        Ok(())
    }

    async fn abandon(&self, account: &AccountId, key: &str) -> Result<(), IdempotencyError> {
        let mut m = self.entries.lock().expect("idempotency lock");
        let slot = (account.clone(), key.to_string());
        if m.get(&slot).is_some_and(|e| e.response.is_none()) {
            m.remove(&slot);
        }
        Ok(())
    }

    async fn purge_before(&self, cutoff: Timestamp) -> Result<usize, IdempotencyError> {
        let mut m = self.entries.lock().expect("idempotency lock");
        let before = m.len();
        m.retain(|_, e| e.created_at >= cutoff);
        Ok(before - m.len())
    }
}
