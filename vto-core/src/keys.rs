//! API keys: `vto_sk_…` secrets, stored only as SHA-256 hashes, looked up by hash.
//!
//! The secret is shown once, at creation. A key's record keeps a short display prefix
//! (`vto_sk_AbCd…`) so an operator can tell keys apart, and a leaked key is recognizable by
//! secret scanners from its `vto_sk_` prefix.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::backend::BackendError;
use crate::clock::Timestamp;
use crate::ids::{hex, AccountId, ApiKeyId, IdGen};

/// The prefix of every secret key.
pub const KEY_PREFIX: &str = "vto_sk_";

const ALPHABET: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// A stored API key (never the secret).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiKeyRecord {
    /// The key's id (`key_…`).
    pub id: ApiKeyId,
    /// The account it acts for.
    pub account_id: AccountId,
    /// The first characters of the secret, for display (`vto_sk_AbCd`).
    pub display_prefix: String,
    /// SHA-256 of the secret, hex.
    pub hash: String,
    /// A label.
    pub name: String,
    /// When it was created.
    pub created_at: Timestamp,
    /// When it was revoked; a revoked key authenticates nothing.
    pub revoked_at: Option<Timestamp>,
}

/// A newly created key: the secret, shown once, and its record.
#[derive(Debug, Clone)]
pub struct NewApiKey {
    /// The secret to hand to the client.
    pub secret: String,
    /// What is stored.
    pub record: ApiKeyRecord,
}

/// Makes a new key for an account (not yet stored).
pub fn generate_key(
    ids: &dyn IdGen,
    account_id: &AccountId,
    name: &str,
    now: Timestamp,
) -> NewApiKey {
    // 32 characters of base62: ~190 bits. Modulo bias over 256/62 is negligible for this use
    // but avoided anyway by rejecting bytes >= 248 (4 × 62).
    let mut body = String::with_capacity(32);
    while body.len() < 32 {
        for b in ids.secret_bytes(48) {
            if b < 248 && body.len() < 32 {
                body.push(ALPHABET[(b % 62) as usize] as char);
            }
        }
    }
    let secret = format!("{KEY_PREFIX}{body}");
    let record = ApiKeyRecord {
        id: ids.api_key_id(),
        account_id: account_id.clone(),
        display_prefix: secret[..KEY_PREFIX.len() + 4].to_string(),
        hash: hash_key(&secret),
        name: name.to_string(),
        created_at: now,
        revoked_at: None,
    };
    NewApiKey { secret, record }
}

/// SHA-256 of a secret, hex. Keys are long random strings, so a fast hash is enough (no
/// password-style stretching needed).
pub fn hash_key(secret: &str) -> String {
    hex(&Sha256::digest(secret.as_bytes()))
}

/// Key store failures.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyStoreError {
    /// A key with this id or hash exists.
    #[error("api key already exists")]
    Exists,
    /// The storage backend failed.
    #[error("key store backend: {0}")]
    Backend(#[source] BackendError),
}

/// Stores API keys.
#[async_trait]
pub trait ApiKeyStore: Send + Sync {
    /// Stores a new key.
    async fn insert(&self, record: &ApiKeyRecord) -> Result<(), KeyStoreError>;
    /// The key with this hash, revoked or not.
    async fn find_by_hash(&self, hash: &str) -> Result<Option<ApiKeyRecord>, KeyStoreError>;
    /// An account's keys, oldest first; all keys when `account` is `None`.
    async fn list(&self, account: Option<&AccountId>) -> Result<Vec<ApiKeyRecord>, KeyStoreError>;
    /// Revokes a key; `false` when there is no such key. Revoking twice keeps the first time.
    async fn revoke(&self, id: &ApiKeyId, now: Timestamp) -> Result<bool, KeyStoreError>;
}

/// A counter a store moves forward, in the same transaction, with every change a cache of
/// authentication data must not outlive: a key revoked, an account's limits set or reset.
///
/// Caches ([`crate::auth_cache::AuthCache`]) compare it instead of re-reading every key and
/// limit: one small read per refresh rather than one per request. Because it lives in the
/// store, every process on the same store (the server, `vto admin`, later several servers
/// on one database) sees the same counter.
#[async_trait]
pub trait AuthGeneration: Send + Sync {
    /// The current generation. It only grows.
    async fn auth_generation(&self) -> Result<u64, KeyStoreError>;
}

/// The in-memory key store.
#[derive(Debug, Default)]
pub struct MemoryKeyStore {
    keys: std::sync::Mutex<Vec<ApiKeyRecord>>,
    generation: std::sync::atomic::AtomicU64,
}

#[async_trait]
impl AuthGeneration for MemoryKeyStore {
    async fn auth_generation(&self) -> Result<u64, KeyStoreError> {
        Ok(self.generation.load(std::sync::atomic::Ordering::SeqCst))
    }
}

#[async_trait]
impl ApiKeyStore for MemoryKeyStore {
    async fn insert(&self, record: &ApiKeyRecord) -> Result<(), KeyStoreError> {
        let mut keys = self.keys.lock().expect("keys lock");
        if keys
            .iter()
            .any(|k| k.id == record.id || k.hash == record.hash)
        {
            return Err(KeyStoreError::Exists);
        }
        keys.push(record.clone());
        Ok(())
    }

    async fn find_by_hash(&self, hash: &str) -> Result<Option<ApiKeyRecord>, KeyStoreError> {
        let keys = self.keys.lock().expect("keys lock");
        Ok(keys.iter().find(|k| k.hash == hash).cloned())
    }

    async fn list(&self, account: Option<&AccountId>) -> Result<Vec<ApiKeyRecord>, KeyStoreError> {
        let keys = self.keys.lock().expect("keys lock");
        Ok(keys
            .iter()
            .filter(|k| account.is_none_or(|a| &k.account_id == a))
            .cloned()
            .collect())
    }

    async fn revoke(&self, id: &ApiKeyId, now: Timestamp) -> Result<bool, KeyStoreError> {
        let mut keys = self.keys.lock().expect("keys lock");
        match keys.iter_mut().find(|k| &k.id == id) {
            Some(k) => {
                k.revoked_at.get_or_insert(now);
                self.generation
                    .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                Ok(true)
            }
            None => Ok(false),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::SequentialIds;

    #[test]
    fn keys_are_prefixed_long_and_stored_hashed() {
        let ids = SequentialIds::default();
        let k = generate_key(&ids, &AccountId::from("acct_1"), "test", Timestamp(0));
        assert!(k.secret.starts_with("vto_sk_"));
        assert_eq!(k.secret.len(), 7 + 32);
        assert!(k.secret[7..].bytes().all(|b| b.is_ascii_alphanumeric()));
        assert_eq!(k.record.hash, hash_key(&k.secret));
        assert_eq!(k.record.hash.len(), 64);
        assert!(!k.record.hash.contains(&k.secret[7..]));
        let k2 = generate_key(&ids, &AccountId::from("acct_1"), "test", Timestamp(0));
        assert_ne!(k.secret, k2.secret);
    }
}
