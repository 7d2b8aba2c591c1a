//! The config file's sections as typed structs: `[rate_limits]`, `[request_limits]`,
//! `[fetch]`, `[webhooks]`, `[engines.<category>]`, `[storage]`, `[results]`, and `role`, with
//! their serde defaults.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::{invalid, ConfigError};

/// One endpoint's rate limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RateLimitConfig {
    /// Requests allowed back to back and per period; 0 turns the limit off.
    pub burst: u32,
    /// The period in seconds.
    pub period_secs: u64,
}

/// Input validation bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestLimitsConfig {
    /// Longest accepted http(s) URL.
    pub max_url_len: usize,
    /// Largest decoded `data:` payload in bytes.
    pub max_data_bytes: usize,
}

/// Input fetching bounds and the outbound address guard.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FetchConfig {
    /// CIDRs exempt from the SSRF guard for inputs and webhooks (default none; e.g.
    /// `["127.0.0.1/32"]` for local development). Env: `VTO_OUTBOUND_ALLOW`, comma-separated.
    #[serde(default)]
    pub allow: Vec<String>,
    /// Largest input in bytes.
    pub max_bytes: usize,
    /// Connect timeout (ms).
    pub connect_timeout_ms: u64,
    /// Whole-transfer timeout (ms).
    pub total_timeout_ms: u64,
    /// Redirects followed.
    pub max_redirects: u8,
}

/// `[webhooks]`: delivery of completion webhooks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebhookConfig {
    /// Per-request timeout in milliseconds (default 10000).
    pub timeout_ms: u64,
    /// Waits before each retry, in seconds (default 5, 300, 1800, 7200, 18000, 36000, 36000:
    /// about 28 hours, 8 tries in all).
    pub retry_schedule_secs: Vec<u64>,
    /// How often the dispatcher looks for due deliveries, in milliseconds (default 500).
    pub poll_interval_ms: u64,
}

impl Default for WebhookConfig {
    fn default() -> Self {
        Self {
            timeout_ms: 10_000,
            retry_schedule_secs: vec![5, 300, 1800, 7200, 18_000, 36_000, 36_000],
            poll_interval_ms: 500,
        }
    }
}

/// The kind of an external engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EngineKind {
    /// An HTTP render service (vto-core's `HttpEngine`).
    Http,
}

pub(super) fn d_reconcile() -> u64 {
    300
}
pub(super) fn d_auto() -> String {
    "auto".into()
}
pub(super) fn d_true() -> bool {
    true
}
pub(super) fn d_auth_refresh() -> u64 {
    100
}
/// `vto_render::engine::DEFAULT_MAX_PHOTO_SIDE` (this crate does not depend on the renderer).
pub(super) fn d_max_photo_side() -> u32 {
    2048
}
/// `vto_render::engine::DEFAULT_SYNC_WAIT`, in seconds.
pub(super) fn d_sync_wait() -> u64 {
    30
}
pub(super) fn d_timeout() -> u64 {
    60_000
}
pub(super) fn d_connect() -> u64 {
    5_000
}
pub(super) fn d_conc() -> usize {
    4
}
pub(super) fn d_retries() -> u32 {
    1
}
pub(super) fn d_resp() -> u64 {
    32 * 1024 * 1024
}

/// `[engines.<category>]`: an external render service for one category.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineConfig {
    /// `http`.
    pub kind: EngineKind,
    /// The service's render URL (http or https).
    pub url: String,
    /// Whole-call timeout in milliseconds (default 60000).
    #[serde(default = "d_timeout")]
    pub timeout_ms: u64,
    /// Connect timeout in milliseconds (default 5000).
    #[serde(default = "d_connect")]
    pub connect_timeout_ms: u64,
    /// Extra request headers, e.g. an `Authorization` for the service.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Calls in flight at once (default 4).
    #[serde(default = "d_conc")]
    pub max_concurrency: usize,
    /// Retries of a failed call (default 1).
    #[serde(default = "d_retries")]
    pub max_retries: u32,
    /// Largest accepted response body in bytes (default 32 MiB).
    #[serde(default = "d_resp")]
    pub max_response_bytes: u64,
    /// Use this service even though vto has a built-in engine for the category. Default
    /// false: built-in engines take precedence.
    #[serde(default)]
    pub override_builtin: bool,
}

/// What a `vto serve` process runs (`role`, env `VTO_ROLE`, `vto serve --role`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The HTTP API and the workers (one machine).
    #[default]
    All,
    /// The HTTP API and synchronous renders; no job workers and no webhook dispatcher.
    Api,
    /// Asynchronous jobs, webhook delivery and maintenance; HTTP serves only `/healthz`,
    /// `/readyz` and `/metrics`.
    Worker,
}

impl Role {
    /// Whether this process serves the public API.
    pub fn serves_api(self) -> bool {
        matches!(self, Role::All | Role::Api)
    }
    /// Whether this process runs job workers, the webhook dispatcher and maintenance.
    pub fn runs_workers(self) -> bool {
        matches!(self, Role::All | Role::Worker)
    }
    /// The config spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::All => "all",
            Role::Api => "api",
            Role::Worker => "worker",
        }
    }
}

impl FromStr for Role {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "all" => Ok(Role::All),
            "api" => Ok(Role::Api),
            "worker" => Ok(Role::Worker),
            _ => Err(invalid("role", "must be \"all\", \"api\" or \"worker\"")),
        }
    }
}

/// `[storage]`: where the service's records live.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StorageConfig {
    /// Empty for `<data_dir>/vto.db`; `sqlite://…` or `postgres://…`.
    pub url: String,
    /// PostgreSQL connections per instance.
    pub pool_size: usize,
    /// Whether PostgreSQL `LISTEN/NOTIFY` wakes idle workers.
    pub listen_notify: bool,
}

impl Default for StorageConfig {
    fn default() -> Self {
        Self {
            url: String::new(),
            pool_size: 16,
            listen_notify: true,
        }
    }
}

/// `[results]`: where result images go.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ResultsConfig {
    /// Empty for `<data_dir>/results`; `file://…` or `s3://bucket/prefix`.
    pub url: String,
    /// The S3 endpoint (empty for AWS).
    pub endpoint: String,
    /// The S3 region.
    pub region: String,
    /// The S3 access key id (empty: `AWS_ACCESS_KEY_ID`).
    pub access_key_id: String,
    /// The S3 secret (empty: `AWS_SECRET_ACCESS_KEY`).
    pub secret_access_key: String,
    /// Whether a plain-http endpoint is allowed.
    pub allow_http: bool,
}

impl Default for ResultsConfig {
    fn default() -> Self {
        Self {
            url: String::new(),
            endpoint: String::new(),
            region: "us-east-1".to_string(),
            access_key_id: String::new(),
            secret_access_key: String::new(),
            allow_http: false,
        }
    }
}

/// Where the records live, parsed from `[storage] url`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StorageLocation {
    /// One SQLite file.
    Sqlite(PathBuf),
    /// A PostgreSQL database (the URL as given, credentials included).
    Postgres(String),
}

/// Where result images go, parsed from `[results] url`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResultsLocation {
    /// A folder served by this server at signed links.
    File(PathBuf),
    /// An S3 bucket and key prefix (may be empty).
    S3 {
        /// The bucket.
        bucket: String,
        /// The key prefix, without leading or trailing `/`.
        prefix: String,
    },
}
