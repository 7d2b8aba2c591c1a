//! `Idempotency-Key` with Stripe's semantics.
//!
//! The first request with a key runs and its response is saved; a retry with the same key and
//! the same body gets the saved response again, with no second job or charge; the same key
//! with a different body is `409 idempotency_conflict`, and so is a retry that arrives while the
//! first is still running. Responses are saved only once the request started executing: a
//! validation error, a 401, 402 or 429 is not saved, so a corrected retry may reuse the key.
//! Keys are per account and kept at least 24 hours.
//!
//! **A request whose process died.** A reservation that has saved no response
//! [`STALE_AFTER`] after it began is taken over by the next retry ([`Begin::Resume`]) instead of
//! answering 409 until the key expires. No second job can come of it: the request id of an
//! idempotent create is derived from the account, the key and the reservation's time
//! ([`request_id_for`]), so the retry finds the job the dead request made (and answers with
//! it) or makes that same job itself.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::backend::BackendError;
use crate::clock::Timestamp;
use crate::ids::{hex, AccountId, RequestId};

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
    /// The first request with this key began at `reserved_at`, more than [`STALE_AFTER`] ago,
    /// and saved nothing: its process died. The caller takes the reservation over.
    Resume {
        /// When the key was reserved (what [`request_id_for`] derives the id from).
        reserved_at: Timestamp,
    },
}

/// How long a reservation that saved no response counts as running (see [`Begin::Resume`]).
/// The window that matters is between reserving the key and storing the job, milliseconds;
/// a slow render after that is harmless, because a retry then finds the job.
pub const STALE_AFTER: std::time::Duration = std::time::Duration::from_secs(30);

/// What `begin` answers for an unfinished reservation made at `reserved_at`, at `now`.
pub fn unfinished(reserved_at: Timestamp, now: Timestamp) -> Begin {
    if now.millis() - reserved_at.millis() > STALE_AFTER.as_millis() as i64 {
        Begin::Resume { reserved_at }
    } else {
        Begin::InProgress
    }
}

/// The request id of the create made under `key`, reserved at `reserved_at`, by `account`: the
/// same for a retry that resumes the reservation, different after the key expired and was
/// reserved anew. A UUID (version 4 layout) from SHA-256 of the three.
pub fn request_id_for(account: &AccountId, key: &str, reserved_at: Timestamp) -> RequestId {
    let mut h = Sha256::new();
    h.update(account.as_str().as_bytes());
    h.update([0]);
    h.update(key.as_bytes());
    h.update([0]);
    h.update(reserved_at.millis().to_be_bytes());
    let digest = h.finalize();
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    RequestId(uuid::Builder::from_random_bytes(bytes).into_uuid())
}

/// Idempotency store failures.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("idempotency store backend: {0}")]
pub struct IdempotencyError(#[source] pub BackendError);

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
            Some(e) => unfinished(e.created_at, now),
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
