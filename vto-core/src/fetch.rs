//! Getting input bytes: URL or `data:` → bytes, under limits.

use std::collections::HashMap;
use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::error::ErrorCode;
use crate::request::InputRef;

/// Bounds for one fetch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FetchLimits {
    /// Largest accepted body in bytes (default 20 MiB).
    pub max_bytes: usize,
    /// Connect timeout in milliseconds (default 5 s).
    pub connect_timeout_ms: u64,
    /// Whole-transfer timeout in milliseconds (default 20 s).
    pub total_timeout_ms: u64,
    /// Redirects followed, each re-checked (default 3).
    pub max_redirects: u8,
}

impl Default for FetchLimits {
    fn default() -> Self {
        Self {
            max_bytes: 20 * 1024 * 1024,
            connect_timeout_ms: 5_000,
            total_timeout_ms: 20_000,
            max_redirects: 3,
        }
    }
}

impl FetchLimits {
    /// The total timeout as a duration.
    pub fn total_timeout(&self) -> Duration {
        Duration::from_millis(self.total_timeout_ms)
    }
}

/// Fetched bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    /// The body.
    pub bytes: Vec<u8>,
    /// What the source declared (a header or the data URL's type). Never trusted: engines sniff.
    pub declared_type: Option<String>,
}

/// Why an input could not be had. Each maps to a stable error code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    /// Network error, HTTP error status, timeout, or a refused address.
    #[error("{0}")]
    Failed(String),
    /// Over the byte limit.
    #[error("input is larger than {limit} bytes")]
    TooLarge {
        /// The limit.
        limit: usize,
    },
}

impl FetchError {
    /// The stable code for this failure.
    pub fn code(&self) -> ErrorCode {
        match self {
            FetchError::Failed(_) => ErrorCode::InputFetchFailed,
            FetchError::TooLarge { .. } => ErrorCode::InputTooLarge,
        }
    }
}

/// Turns an [`InputRef`] into bytes.
#[async_trait]
pub trait Fetcher: Send + Sync {
    /// Fetches one input.
    async fn fetch(&self, input: &InputRef, limits: &FetchLimits) -> Result<Fetched, FetchError>;
}

/// Decodes `data:` inputs; a shared step every fetcher uses first.
pub fn fetch_data(input: &InputRef, limits: &FetchLimits) -> Option<Result<Fetched, FetchError>> {
    match input {
        InputRef::Data { media_type, bytes } => Some(if bytes.len() > limits.max_bytes {
            Err(FetchError::TooLarge {
                limit: limits.max_bytes,
            })
        } else {
            Ok(Fetched {
                bytes: bytes.clone(),
                declared_type: Some(media_type.clone()),
            })
        }),
        InputRef::Url { .. } => None,
    }
}

/// The in-memory fetcher: `data:` inputs, plus URLs registered up front (for tests and
/// embedding). Any other URL fails with `input_fetch_failed`.
#[derive(Debug, Default)]
pub struct MemoryFetcher {
    urls: std::sync::Mutex<HashMap<String, Fetched>>,
}

impl MemoryFetcher {
    /// Serves `bytes` for `url`.
    pub fn insert(&self, url: &str, bytes: Vec<u8>, declared_type: Option<&str>) {
        let parsed = url::Url::parse(url)
            .map(|u| u.to_string())
            .unwrap_or_else(|_| url.to_string());
        self.urls.lock().expect("fetcher lock").insert(
            parsed,
            Fetched {
                bytes,
                declared_type: declared_type.map(str::to_string),
            },
        );
    }
}

#[async_trait]
impl Fetcher for MemoryFetcher {
    async fn fetch(&self, input: &InputRef, limits: &FetchLimits) -> Result<Fetched, FetchError> {
        if let Some(r) = fetch_data(input, limits) {
            return r;
        }
        let InputRef::Url { url } = input else {
            unreachable!("data handled above")
        };
        let found = self.urls.lock().expect("fetcher lock").get(url).cloned();
        match found {
            Some(f) if f.bytes.len() > limits.max_bytes => Err(FetchError::TooLarge {
                limit: limits.max_bytes,
            }),
            Some(f) => Ok(f),
            None => Err(FetchError::Failed(format!(
                "could not fetch {url}: not found"
            ))),
        }
    }
}
