//! Where result images go: bytes in, a key and a URL out, and back.

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
    /// The URL a client downloads the image from (may embed an expiring signature).
    fn url(&self, key: &str, now: Timestamp) -> String;
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
        let key = format!("{request_id}.{}", extension(content_type));
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
        Ok(self.items.lock().expect("results lock").get(key).cloned())
    }

    fn url(&self, key: &str, _now: Timestamp) -> String {
        format!("memory://results/{key}")
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
        let ok = !key.is_empty()
            && key.len() <= 64
            && key
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.')
            && !key.starts_with('.');
        if ok {
            Ok(self.dir.join(key))
        } else {
            Err(ResultStoreError::InvalidKey(key.to_string()))
        }
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
        let key = format!("{request_id}.{}", extension(content_type));
        let path = self.path(&key)?;
        let tmp = self.dir.join(format!(".{key}.tmp"));
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

    fn url(&self, key: &str, _now: Timestamp) -> String {
        format!("file://{}", self.dir.join(key).display())
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
