//! Where result images go: bytes in, a key and a URL out, and back.
//!
//! Keys are `<request_id>.<ext>` (see [`result_key`]); a store may put them under a prefix of
//! its own, but hands out and accepts only the bare key. [`ResultStore::url`] is async and
//! fallible because an object store signs URLs with credentials it may have to fetch (an
//! instance role, a web identity token) and that can fail; the memory and file stores never do.

use std::path::{Path, PathBuf};

use async_trait::async_trait;

use crate::clock::Timestamp;
use crate::ids::RequestId;

/// A stored result image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredResult {
    /// The image bytes.
    pub bytes: Vec<u8>,
    /// Its media type, e.g. `image/png`.
    pub content_type: String,
}

/// Result store failures.
#[derive(Debug, thiserror::Error)]
pub enum ResultStoreError {
    /// A key that this store never issued (or that is malformed).
    #[error("invalid result key {0:?}")]
    InvalidKey(String),
    /// Reading or writing failed.
    #[error("result store I/O: {0}")]
    Io(#[from] std::io::Error),
    /// The store is missing a setting or was given one it cannot use (e.g. an `s3://` URL
    /// without a bucket); says which and why.
    #[error("result store not configured: {0}")]
    NotConfigured(String),
    /// The backend refused our credentials (wrong access key or secret, expired token, no
    /// permission on the bucket).
    #[error("result store refused access while {context}: {source}")]
    Denied {
        /// What the store was doing, e.g. `writing results/<key>`.
        context: String,
        /// The backend's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// Any other backend failure (network, server error, unexpected reply).
    #[error("result store backend failed while {context}: {source}")]
    Backend {
        /// What the store was doing.
        context: String,
        /// The backend's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// Stores result images.
#[async_trait]
pub trait ResultStore: Send + Sync {
    /// Stores an image for a request and returns its key.
    async fn put(
        &self,
        request_id: RequestId,
        bytes: &[u8],
        content_type: &str,
    ) -> Result<String, ResultStoreError>;
    /// The image under a key.
    async fn get(&self, key: &str) -> Result<Option<StoredResult>, ResultStoreError>;
    /// The URL a client downloads the image from (may embed a signature that expires some
    /// time after `now`). Fails for a malformed key, or when the backend cannot sign.
    async fn url(&self, key: &str, now: Timestamp) -> Result<String, ResultStoreError>;
}

/// The key for a request's result: `<request_id>.<ext>`.
pub fn result_key(request_id: RequestId, content_type: &str) -> String {
    format!("{request_id}.{}", extension(content_type))
}

/// Checks a key's shape: `[A-Za-z0-9-.]`, at most 64 bytes, not starting with a dot, so it can
/// never name a path outside a store's folder or prefix.
pub fn check_key(key: &str) -> Result<&str, ResultStoreError> {
    let ok = !key.is_empty()
        && key.len() <= 64
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.')
        && !key.starts_with('.');
    if ok {
        Ok(key)
    } else {
        Err(ResultStoreError::InvalidKey(key.to_string()))
    }
}

/// Results in memory; URLs are `memory://results/<key>`.
#[derive(Debug, Default)]
pub struct MemoryResultStore {
    items: std::sync::Mutex<std::collections::HashMap<String, StoredResult>>,
}

#[async_trait]
impl ResultStore for MemoryResultStore {
    async fn put(
        &self,
        request_id: RequestId,
        bytes: &[u8],
        content_type: &str,
    ) -> Result<String, ResultStoreError> {
        let key = result_key(request_id, content_type);
        self.items.lock().expect("results lock").insert(
            key.clone(),
            StoredResult {
                bytes: bytes.to_vec(),
                content_type: content_type.to_string(),
            },
        );
        Ok(key)
    }

    async fn get(&self, key: &str) -> Result<Option<StoredResult>, ResultStoreError> {
        let key = check_key(key)?;
        Ok(self.items.lock().expect("results lock").get(key).cloned())
    }

    async fn url(&self, key: &str, _now: Timestamp) -> Result<String, ResultStoreError> {
        Ok(format!("memory://results/{}", check_key(key)?))
    }
}

/// Results as files in a folder: `<dir>/<request_id>.<ext>`, written atomically (temp file +
/// rename). URLs are `file://` paths; the server wraps this store to serve signed HTTP URLs.
#[derive(Debug, Clone)]
pub struct FsResultStore {
    dir: PathBuf,
}

impl FsResultStore {
    /// A store in `dir`, created if missing.
    pub fn new(dir: impl Into<PathBuf>) -> std::io::Result<Self> {
        let dir = dir.into();
        std::fs::create_dir_all(&dir)?;
        Ok(Self { dir })
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, key: &str) -> Result<PathBuf, ResultStoreError> {
        // Keys are `<uuid>.<ext>`: refuse anything that could leave the folder.
        Ok(self.dir.join(check_key(key)?))
    }
}

#[async_trait]
impl ResultStore for FsResultStore {
    async fn put(
        &self,
        request_id: RequestId,
        bytes: &[u8],
        content_type: &str,
    ) -> Result<String, ResultStoreError> {
        let key = result_key(request_id, content_type);
        let path = self.path(&key)?;
        // A temp name of its own per write (process id and a counter): a stale worker and the
        // worker that took its job over may finish the same request at once, even from two
        // processes on a shared folder; each renames its own complete file into place.
        static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tmp = self
            .dir
            .join(format!(".{key}.{}.{n}.tmp", std::process::id()));
        tokio::fs::write(&tmp, bytes).await?;
        tokio::fs::rename(&tmp, &path).await?;
        Ok(key)
    }

    async fn get(&self, key: &str) -> Result<Option<StoredResult>, ResultStoreError> {
        let path = self.path(key)?;
        match tokio::fs::read(&path).await {
            Ok(bytes) => Ok(Some(StoredResult {
                bytes,
                content_type: content_type_of(key).to_string(),
            })),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    async fn url(&self, key: &str, _now: Timestamp) -> Result<String, ResultStoreError> {
        Ok(format!("file://{}", self.path(key)?.display()))
    }
}

/// The file extension for a result media type.
pub fn extension(content_type: &str) -> &'static str {
    match content_type {
        "image/jpeg" => "jpg",
        "image/webp" => "webp",
        _ => "png",
    }
}

/// The media type for a result key's extension.
pub fn content_type_of(key: &str) -> &'static str {
    match key.rsplit('.').next() {
        Some("jpg") => "image/jpeg",
        Some("webp") => "image/webp",
        _ => "image/png",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn concurrent_puts_of_one_request_all_land_whole() {
        let dir = std::env::temp_dir().join(format!("vto-fs-results-{}", std::process::id()));
        let store = std::sync::Arc::new(FsResultStore::new(&dir).unwrap());
        let id = RequestId(uuid::Uuid::from_u128(7));
        let tasks: Vec<_> = (0..16u8)
            .map(|i| {
                let store = store.clone();
                tokio::spawn(async move { store.put(id, &[i; 4096], "image/png").await })
            })
            .collect();
        for t in tasks {
            assert!(t.await.unwrap().is_ok(), "every put succeeds");
        }
        let got = store
            .get(&result_key(id, "image/png"))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(got.bytes.len(), 4096);
        assert!(
            got.bytes.iter().all(|b| *b == got.bytes[0]),
            "one write, whole"
        );
        let left: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(left.is_empty(), "no temp file left behind");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
