//! [`HttpEngineConfig`] and why one cannot be built ([`HttpEngineError`]).

/// Configuration of one HTTP engine. Every field has a documented default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpEngineConfig {
    /// The service's base URL; vto calls `POST <url>/render` and `GET <url>/healthz`.
    pub url: String,
    /// Budget for one render call, retries and backoff included (default 120 s).
    pub timeout_ms: u64,
    /// Budget for establishing a connection (default 3 s).
    pub connect_timeout_ms: u64,
    /// Static headers sent on every request, e.g. the render service's own token.
    pub headers: Vec<(String, String)>,
    /// Most calls in flight at once (default 4).
    pub max_concurrency: usize,
    /// Most retries after the first attempt, for connection errors and 502/503/504 (default 2).
    pub max_retries: u32,
    /// Largest accepted answer in bytes (default 32 MiB).
    pub max_response_bytes: usize,
}

impl Default for HttpEngineConfig {
    fn default() -> Self {
        Self {
            url: "http://127.0.0.1:9100".to_string(),
            timeout_ms: 120_000,
            connect_timeout_ms: 3_000,
            headers: Vec::new(),
            max_concurrency: 4,
            max_retries: 2,
            max_response_bytes: 32 * 1024 * 1024,
        }
    }
}

/// An HTTP engine that cannot be built from its configuration.
#[derive(Debug, thiserror::Error)]
pub enum HttpEngineError {
    /// The URL does not parse or is not http(s).
    #[error("invalid render service URL {url:?}: {reason}")]
    InvalidUrl {
        /// The URL.
        url: String,
        /// What is wrong.
        reason: String,
    },
    /// A configured header name or value is not valid HTTP.
    #[error("invalid header {name:?} for the render service")]
    InvalidHeader {
        /// The header name.
        name: String,
    },
    /// A numeric setting is out of range.
    #[error("invalid render service setting: {0}")]
    InvalidConfig(String),
    /// The HTTP client could not be built.
    #[error("could not build the HTTP client: {0}")]
    Client(#[from] reqwest::Error),
}
