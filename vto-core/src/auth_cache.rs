//! [`AuthCache`]: API-key records and per-account limits kept in memory, so an authenticated
//! request does not touch the store, while a revocation or a limit change still applies at once.
//!
//! ## How it stays correct
//! The store keeps a generation number ([`AuthGeneration`]) that it moves forward in the same
//! transaction as every revocation and every limit change. The cache remembers the generation
//! it was filled under; [`AuthCache::refresh`] (the server calls it every
//! `auth_refresh_ms`, 100 ms by default) reads that one number and empties the cache when it
//! moved. A change made through this cache (its `revoke`, `set_limits`, `reset_limits`)
//! empties it immediately.
//!
//! Why a generation number in the store rather than a TTL or an in-process invalidation:
//! revocations come from another process (`vto admin key revoke`) and, later, from other
//! server instances on the same database. An in-process signal would not reach them, and a
//! TTL alone would let a revoked key work for the whole TTL. With the generation, every
//! process notices within one refresh interval, the cost is one tiny read per interval
//! instead of one per request, and `vto admin key revoke` waits that interval before it
//! returns, so when the command says "revoked", the key no longer works anywhere.
//!
//! What is cached: keys that exist (active or revoked: a revoked key never comes back) and
//! every account's limits, including "no overrides". Unknown keys are not cached, so a key
//! created by another process works on its first request. If the generation cannot be read,
//! the cache empties itself and every lookup goes to the store until it can.
//!
//! A lookup that started before an invalidation cannot put a stale answer back: entries are
//! stamped with the cache's epoch at the start of the lookup and dropped if it changed.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use async_trait::async_trait;

use crate::clock::Timestamp;
use crate::ids::{AccountId, ApiKeyId};
use crate::keys::{ApiKeyRecord, ApiKeyStore, AuthGeneration, KeyStoreError};
use crate::ratelimit::{AccountLimitStore, AccountLimits, RateLimitError};

/// The most entries of each kind kept; a full map is emptied and refilled on demand.
pub const MAX_ENTRIES: usize = 100_000;

#[derive(Debug, Default)]
struct State {
    /// The store's generation the entries belong to (`None`: not read yet, or unreadable).
    seen: Option<u64>,
    /// Moves on every invalidation; lookups stamp their inserts with it.
    epoch: u64,
    keys: HashMap<String, ApiKeyRecord>,
    limits: HashMap<AccountId, Option<AccountLimits>>,
}

impl State {
    fn invalidate(&mut self) {
        self.epoch = self.epoch.wrapping_add(1);
        self.keys.clear();
        self.limits.clear();
    }
}

/// A caching [`ApiKeyStore`] and [`AccountLimitStore`] over any store that keeps an
/// [`AuthGeneration`]. See the module docs for the consistency argument.
pub struct AuthCache {
    keys: Arc<dyn ApiKeyStore>,
    limits: Arc<dyn AccountLimitStore>,
    generation: Arc<dyn AuthGeneration>,
    state: RwLock<State>,
}

impl std::fmt::Debug for AuthCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.state.read().ok();
        f.debug_struct("AuthCache")
            .field("generation", &s.as_ref().and_then(|s| s.seen))
            .field("keys", &s.as_ref().map(|s| s.keys.len()))
            .field("limits", &s.as_ref().map(|s| s.limits.len()))
            .finish()
    }
}

impl AuthCache {
    /// A cache over `keys` and `limits`, invalidated when `generation` moves.
    pub fn new(
        keys: Arc<dyn ApiKeyStore>,
        limits: Arc<dyn AccountLimitStore>,
        generation: Arc<dyn AuthGeneration>,
    ) -> Self {
        Self {
            keys,
            limits,
            generation,
            state: RwLock::new(State::default()),
        }
    }

    /// Reads the store's generation and empties the cache if it moved (or cannot be read).
    /// Returns whether the cache was emptied.
    pub async fn refresh(&self) -> Result<bool, KeyStoreError> {
        let epoch = self.epoch();
        let read = self.generation.auth_generation().await;
        let mut s = self.state.write().unwrap_or_else(|p| p.into_inner());
        match read {
            Ok(g) if s.seen == Some(g) => Ok(false),
            Ok(g) => {
                s.invalidate();
                // Entries may only be kept under `g` if no invalidation raced this read.
                s.seen = (s.epoch == epoch.wrapping_add(1)).then_some(g);
                Ok(true)
            }
            Err(e) => {
                s.invalidate();
                s.seen = None;
                Err(e)
            }
        }
    }

    /// Empties the cache now (after a change made through this process).
    pub fn invalidate(&self) {
        let mut s = self.state.write().unwrap_or_else(|p| p.into_inner());
        s.invalidate();
        s.seen = None;
    }

    /// How many keys and account limits are cached (for tests and debugging).
    pub fn len(&self) -> (usize, usize) {
        let s = self.state.read().unwrap_or_else(|p| p.into_inner());
        (s.keys.len(), s.limits.len())
    }

    /// Whether nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == (0, 0)
    }

    fn epoch(&self) -> u64 {
        self.state.read().unwrap_or_else(|p| p.into_inner()).epoch
    }

    /// Caching is on only while the generation is known: before the first successful
    /// [`AuthCache::refresh`] (or after a failed one) every lookup goes to the store.
    fn usable(&self) -> Option<u64> {
        let s = self.state.read().unwrap_or_else(|p| p.into_inner());
        s.seen.map(|_| s.epoch)
    }
}

#[async_trait]
impl ApiKeyStore for AuthCache {
    async fn insert(&self, record: &ApiKeyRecord) -> Result<(), KeyStoreError> {
        self.keys.insert(record).await
    }

    async fn find_by_hash(&self, hash: &str) -> Result<Option<ApiKeyRecord>, KeyStoreError> {
        let Some(epoch) = self.usable() else {
            return self.keys.find_by_hash(hash).await;
        };
        if let Some(r) = self
            .state
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .keys
            .get(hash)
        {
            return Ok(Some(r.clone()));
        }
        let found = self.keys.find_by_hash(hash).await?;
        if let Some(r) = &found {
            let mut s = self.state.write().unwrap_or_else(|p| p.into_inner());
            if s.epoch == epoch {
                if s.keys.len() >= MAX_ENTRIES {
                    s.keys.clear();
                }
                s.keys.insert(hash.to_string(), r.clone());
            }
        }
        Ok(found)
    }

    async fn list(&self, account: Option<&AccountId>) -> Result<Vec<ApiKeyRecord>, KeyStoreError> {
        self.keys.list(account).await
    }

    async fn revoke(&self, id: &ApiKeyId, now: Timestamp) -> Result<bool, KeyStoreError> {
        let r = self.keys.revoke(id, now).await;
        self.invalidate();
        r
    }
}

#[async_trait]
impl AccountLimitStore for AuthCache {
    async fn limits(&self, account: &AccountId) -> Result<Option<AccountLimits>, RateLimitError> {
        let Some(epoch) = self.usable() else {
            return self.limits.limits(account).await;
        };
        if let Some(l) = self
            .state
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .limits
            .get(account)
        {
            return Ok(l.clone());
        }
        let found = self.limits.limits(account).await?;
        let mut s = self.state.write().unwrap_or_else(|p| p.into_inner());
        if s.epoch == epoch {
            if s.limits.len() >= MAX_ENTRIES {
                s.limits.clear();
            }
            s.limits.insert(account.clone(), found.clone());
        }
        Ok(found)
    }

    async fn set_limits(
        &self,
        account: &AccountId,
        limits: &AccountLimits,
    ) -> Result<(), RateLimitError> {
        let r = self.limits.set_limits(account, limits).await;
        self.invalidate();
        r
    }

    async fn reset_limits(&self, account: &AccountId) -> Result<bool, RateLimitError> {
        let r = self.limits.reset_limits(account).await;
        self.invalidate();
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::{generate_key, hash_key, MemoryKeyStore};
    use crate::ratelimit::{Endpoint, MemoryAccountLimits, Quota};
    use crate::SequentialIds;
    use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

    /// TEST DOUBLE: a store shared with "another process" (the test), counting lookups, with a
    /// generation the test moves by hand and can make fail.
    #[derive(Default)]
    struct Shared {
        keys: MemoryKeyStore,
        limits: MemoryAccountLimits,
        lookups: AtomicUsize,
        generation: AtomicU64,
        broken: AtomicBool,
    }

    #[async_trait]
    impl ApiKeyStore for Shared {
        async fn insert(&self, r: &ApiKeyRecord) -> Result<(), KeyStoreError> {
            self.keys.insert(r).await
        }
        async fn find_by_hash(&self, h: &str) -> Result<Option<ApiKeyRecord>, KeyStoreError> {
            self.lookups.fetch_add(1, Ordering::SeqCst);
            self.keys.find_by_hash(h).await
        }
        async fn list(&self, a: Option<&AccountId>) -> Result<Vec<ApiKeyRecord>, KeyStoreError> {
            self.keys.list(a).await
        }
        async fn revoke(&self, id: &ApiKeyId, now: Timestamp) -> Result<bool, KeyStoreError> {
            let r = self.keys.revoke(id, now).await;
            self.generation.fetch_add(1, Ordering::SeqCst);
            r
        }
    }

    #[async_trait]
    impl AccountLimitStore for Shared {
        async fn limits(&self, a: &AccountId) -> Result<Option<AccountLimits>, RateLimitError> {
            self.lookups.fetch_add(1, Ordering::SeqCst);
            self.limits.limits(a).await
        }
        async fn set_limits(&self, a: &AccountId, l: &AccountLimits) -> Result<(), RateLimitError> {
            self.generation.fetch_add(1, Ordering::SeqCst);
            self.limits.set_limits(a, l).await
        }
        async fn reset_limits(&self, a: &AccountId) -> Result<bool, RateLimitError> {
            self.generation.fetch_add(1, Ordering::SeqCst);
            self.limits.reset_limits(a).await
        }
    }

    #[async_trait]
    impl AuthGeneration for Shared {
        async fn auth_generation(&self) -> Result<u64, KeyStoreError> {
            if self.broken.load(Ordering::SeqCst) {
                return Err(KeyStoreError::Backend(crate::BackendError::msg("down")));
            }
            Ok(self.generation.load(Ordering::SeqCst))
        }
    }

    fn cache(shared: &Arc<Shared>) -> AuthCache {
        AuthCache::new(shared.clone(), shared.clone(), shared.clone())
    }

    #[tokio::test]
    async fn hits_skip_the_store_and_a_revocation_elsewhere_applies_at_the_next_refresh() {
        let shared = Arc::new(Shared::default());
        let c = cache(&shared);
        let key = generate_key(
            &SequentialIds::default(),
            &AccountId::from("acct_a"),
            "k",
            Timestamp(0),
        );
        c.insert(&key.record).await.unwrap();
        let hash = hash_key(&key.secret);
        c.refresh().await.unwrap();
        for _ in 0..5 {
            let r = c.find_by_hash(&hash).await.unwrap().unwrap();
            assert!(r.revoked_at.is_none());
        }
        assert_eq!(
            shared.lookups.load(Ordering::SeqCst),
            1,
            "one store read for 5 lookups"
        );

        // "Another process" revokes the key directly in the store.
        shared.revoke(&key.record.id, Timestamp(5)).await.unwrap();
        assert!(c.refresh().await.unwrap(), "the generation moved: emptied");
        let r = c.find_by_hash(&hash).await.unwrap().unwrap();
        assert_eq!(r.revoked_at, Some(Timestamp(5)));
        assert!(!c.refresh().await.unwrap(), "nothing moved: kept");
    }

    #[tokio::test]
    async fn changes_through_the_cache_apply_at_once_and_no_overrides_is_cached_too() {
        let shared = Arc::new(Shared::default());
        let c = cache(&shared);
        c.refresh().await.unwrap();
        let a = AccountId::from("acct_a");
        assert_eq!(c.limits(&a).await.unwrap(), None);
        assert_eq!(c.limits(&a).await.unwrap(), None);
        assert_eq!(shared.lookups.load(Ordering::SeqCst), 1);
        let l = AccountLimits::from([(Endpoint::CreateTryOn, "20/1".parse::<Quota>().unwrap())]);
        c.set_limits(&a, &l).await.unwrap();
        assert_eq!(c.limits(&a).await.unwrap(), Some(l));
        assert!(c.reset_limits(&a).await.unwrap());
        assert_eq!(c.limits(&a).await.unwrap(), None);
    }

    #[tokio::test]
    async fn unknown_keys_are_not_cached_and_an_unreadable_generation_disables_the_cache() {
        let shared = Arc::new(Shared::default());
        let c = cache(&shared);
        c.refresh().await.unwrap();
        assert_eq!(c.find_by_hash("nope").await.unwrap(), None);
        let key = generate_key(
            &SequentialIds::default(),
            &AccountId::from("acct_a"),
            "k",
            Timestamp(0),
        );
        // Created by another process after the miss: found on the next request.
        shared.insert(&key.record).await.unwrap();
        assert!(c.find_by_hash(&key.record.hash).await.unwrap().is_some());
        assert_eq!(c.len().0, 1);

        shared.broken.store(true, Ordering::SeqCst);
        assert!(c.refresh().await.is_err());
        assert!(c.is_empty(), "emptied when the generation cannot be read");
        let before = shared.lookups.load(Ordering::SeqCst);
        c.find_by_hash(&key.record.hash).await.unwrap();
        c.find_by_hash(&key.record.hash).await.unwrap();
        assert_eq!(
            shared.lookups.load(Ordering::SeqCst),
            before + 2,
            "every lookup goes to the store until the generation is readable again"
        );
    }
}
