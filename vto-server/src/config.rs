//! Configuration: embedded defaults (`default.toml`) → a TOML file → `VTO_*` environment
//! variables, merged as TOML tables, then parsed and validated once at start.
//!
//! Every field is documented in `default.toml`, which is compiled in; a config file only
//! carries the keys it changes. An invalid value stops the start with [`ConfigError`], whose
//! message names the field (`workers: must be between 1 and 1024`).

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use vto_core::{
    Category, Currency, Endpoint, FetchLimits, PriceTable, Quota, RateLimits, RequestLimits,
    ServiceConfig,
};

use vto_sqlite::Synchronous;

/// The embedded defaults, every field documented.
pub const DEFAULT_TOML: &str = include_str!("../default.toml");

/// A configuration that could not be loaded; the message names the field.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The config file could not be read.
    #[error("config file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The TOML does not parse or does not fit the schema.
    #[error("config {origin}: {message}")]
    Parse {
        /// Where it came from (the file or "defaults").
        origin: String,
        /// The parser's message, which names the key.
        message: String,
    },
    /// A field has a bad value.
    #[error("{field}: {message}")]
    Invalid {
        /// The field, e.g. `rate_limits.create_try_on.period_secs` or `VTO_WORKERS`.
        field: String,
        /// What is wrong.
        message: String,
    },
}

fn invalid(field: impl Into<String>, message: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        field: field.into(),
        message: message.into(),
    }
}

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

fn d_reconcile() -> u64 {
    300
}
fn d_auto() -> String {
    "auto".into()
}
fn d_true() -> bool {
    true
}
fn d_auth_refresh() -> u64 {
    100
}
fn d_timeout() -> u64 {
    60_000
}
fn d_connect() -> u64 {
    5_000
}
fn d_conc() -> usize {
    4
}
fn d_retries() -> u32 {
    1
}
fn d_resp() -> u64 {
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

/// The server's configuration. See `default.toml` for every field's meaning and default.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Listen address.
    pub listen: String,
    /// Data folder.
    pub data_dir: PathBuf,
    /// Base URL of result links; empty for `http://<listen>`.
    pub public_base_url: String,
    /// Lifetime of result URLs (s).
    pub result_url_ttl_secs: u64,
    /// Worker count.
    pub workers: usize,
    /// Idle worker poll interval (ms).
    pub poll_interval_ms: u64,
    /// Request body limit (bytes).
    pub body_limit_bytes: u64,
    /// Worker lease (s).
    pub lease_secs: u64,
    /// Async job deadline (s); 0 = none.
    pub job_deadline_secs: u64,
    /// Claims per job.
    pub max_attempts: u32,
    /// Age (s) after which maintenance repairs an open hold: settles it and re-sends the
    /// webhook hand-over of a job that finished while the process died (default 300).
    #[serde(default = "d_reconcile")]
    pub reconcile_after_secs: u64,
    /// Where the built-in engines' models are; empty for `<data_dir>/models`.
    #[serde(default)]
    pub models_dir: String,
    /// Whether `vto serve` downloads missing models at start (default true).
    #[serde(default = "d_true")]
    pub fetch_models: bool,
    /// Where the built-in engines run their vision networks: `auto` (default: native CPU
    /// kernels when the wgpu adapter is a CPU device such as lavapipe, WGSL on a real GPU),
    /// `cpu` or `gpu`. Read by the binary that builds the built-in engines.
    #[serde(default = "d_auto")]
    pub vision_backend: String,
    /// Built-in try-ons rendered at once (each holds its own vision networks and scratch
    /// buffers); 0 (default) for half the machine's cores, 1 to 4. Read by the binary that
    /// builds the built-in engines; `/metrics` shows it as `vto_builtin_render_concurrency_limit`.
    #[serde(default)]
    pub render_concurrency: usize,
    /// How often the server checks the store's auth generation, in milliseconds (default
    /// 100): the longest a revocation or a limit change made by another process waits.
    #[serde(default = "d_auth_refresh")]
    pub auth_refresh_ms: u64,
    /// Whether the server serves the playground page at `/playground` (default true; a shop
    /// that wants no browser page in production sets `playground = false`).
    #[serde(default = "d_true")]
    pub playground: bool,
    /// What this process runs.
    #[serde(default)]
    pub role: Role,
    /// SQLite durability.
    pub synchronous: Synchronous,
    /// Where the records live.
    #[serde(default)]
    pub storage: StorageConfig,
    /// Where result images go.
    #[serde(default)]
    pub results: ResultsConfig,
    /// Currency code.
    pub currency: String,
    /// Prices per category.
    pub prices: BTreeMap<String, String>,
    /// Limits per endpoint.
    pub rate_limits: BTreeMap<String, RateLimitConfig>,
    /// Validation bounds.
    pub request_limits: RequestLimitsConfig,
    /// Fetch bounds.
    pub fetch: FetchConfig,
    /// External engines per category.
    #[serde(default)]
    pub engines: BTreeMap<String, EngineConfig>,
    /// Webhook delivery.
    #[serde(default)]
    pub webhooks: WebhookConfig,
}

impl Default for Config {
    fn default() -> Self {
        let table: toml::Table = toml::from_str(DEFAULT_TOML).expect("embedded defaults parse");
        table.try_into().expect("embedded defaults fit the schema")
    }
}

/// Which environment variables map to which top-level or nested key, and their type.
#[derive(Clone, Copy)]
enum Kind {
    Str,
    Int,
    Bool,
    List,
}

const ENV_KEYS: &[(&str, &[&str], Kind)] = &[
    ("VTO_LISTEN", &["listen"], Kind::Str),
    ("VTO_DATA_DIR", &["data_dir"], Kind::Str),
    ("VTO_PUBLIC_BASE_URL", &["public_base_url"], Kind::Str),
    (
        "VTO_RESULT_URL_TTL_SECS",
        &["result_url_ttl_secs"],
        Kind::Int,
    ),
    ("VTO_WORKERS", &["workers"], Kind::Int),
    ("VTO_POLL_INTERVAL_MS", &["poll_interval_ms"], Kind::Int),
    ("VTO_BODY_LIMIT_BYTES", &["body_limit_bytes"], Kind::Int),
    ("VTO_LEASE_SECS", &["lease_secs"], Kind::Int),
    ("VTO_JOB_DEADLINE_SECS", &["job_deadline_secs"], Kind::Int),
    ("VTO_MAX_ATTEMPTS", &["max_attempts"], Kind::Int),
    (
        "VTO_RECONCILE_AFTER_SECS",
        &["reconcile_after_secs"],
        Kind::Int,
    ),
    ("VTO_MODELS_DIR", &["models_dir"], Kind::Str),
    ("VTO_FETCH_MODELS", &["fetch_models"], Kind::Bool),
    ("VTO_VISION_BACKEND", &["vision_backend"], Kind::Str),
    ("VTO_RENDER_CONCURRENCY", &["render_concurrency"], Kind::Int),
    ("VTO_AUTH_REFRESH_MS", &["auth_refresh_ms"], Kind::Int),
    ("VTO_PLAYGROUND", &["playground"], Kind::Bool),
    ("VTO_SYNCHRONOUS", &["synchronous"], Kind::Str),
    ("VTO_ROLE", &["role"], Kind::Str),
    ("VTO_STORAGE_URL", &["storage", "url"], Kind::Str),
    (
        "VTO_STORAGE_POOL_SIZE",
        &["storage", "pool_size"],
        Kind::Int,
    ),
    (
        "VTO_STORAGE_LISTEN_NOTIFY",
        &["storage", "listen_notify"],
        Kind::Bool,
    ),
    ("VTO_RESULTS_URL", &["results", "url"], Kind::Str),
    ("VTO_S3_ENDPOINT", &["results", "endpoint"], Kind::Str),
    ("VTO_S3_REGION", &["results", "region"], Kind::Str),
    (
        "VTO_S3_ACCESS_KEY_ID",
        &["results", "access_key_id"],
        Kind::Str,
    ),
    (
        "VTO_S3_SECRET_ACCESS_KEY",
        &["results", "secret_access_key"],
        Kind::Str,
    ),
    ("VTO_S3_ALLOW_HTTP", &["results", "allow_http"], Kind::Bool),
    ("VTO_CURRENCY", &["currency"], Kind::Str),
    (
        "VTO_MAX_URL_LEN",
        &["request_limits", "max_url_len"],
        Kind::Int,
    ),
    (
        "VTO_MAX_DATA_BYTES",
        &["request_limits", "max_data_bytes"],
        Kind::Int,
    ),
    ("VTO_FETCH_MAX_BYTES", &["fetch", "max_bytes"], Kind::Int),
    ("VTO_OUTBOUND_ALLOW", &["fetch", "allow"], Kind::List),
    (
        "VTO_WEBHOOK_TIMEOUT_MS",
        &["webhooks", "timeout_ms"],
        Kind::Int,
    ),
];

fn set_path(table: &mut toml::Table, path: &[&str], value: toml::Value) {
    let (last, parents) = path.split_last().expect("non-empty path");
    let mut t = table;
    for p in parents {
        t = t
            .entry(p.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()))
            .as_table_mut()
            .expect("config sections are tables");
    }
    t.insert(last.to_string(), value);
}

fn merge(base: &mut toml::Table, over: toml::Table) {
    for (k, v) in over {
        match (base.get_mut(&k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge(b, o),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

impl Config {
    /// Loads defaults → `file` (if any) → the `VTO_*` variables in `env`, and validates.
    pub fn load(
        file: Option<&Path>,
        env: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Config, ConfigError> {
        let mut table: toml::Table =
            toml::from_str(DEFAULT_TOML).map_err(|e| ConfigError::Parse {
                origin: "defaults".into(),
                message: e.to_string(),
            })?;
        if let Some(path) = file {
            let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
                path: path.to_path_buf(),
                source,
            })?;
            let over: toml::Table = toml::from_str(&text).map_err(|e| ConfigError::Parse {
                origin: path.display().to_string(),
                message: e.to_string(),
            })?;
            merge(&mut table, over);
        }
        for (name, value) in env {
            apply_env(&mut table, &name, &value)?;
        }
        let origin = file
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "(defaults + environment)".into());
        let config: Config = table
            .try_into()
            .map_err(|e: toml::de::Error| ConfigError::Parse {
                origin,
                message: e.to_string().trim().to_string(),
            })?;
        config.validate()?;
        Ok(config)
    }

    /// Loads with the process environment and `VTO_CONFIG` as the file when `file` is `None`.
    pub fn from_env(file: Option<&Path>) -> Result<Config, ConfigError> {
        let from_var = std::env::var_os("VTO_CONFIG").map(PathBuf::from);
        let file = file.map(Path::to_path_buf).or(from_var);
        Config::load(file.as_deref(), std::env::vars())
    }

    /// Checks every field; the first problem is returned, naming its field.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.listen_addr()?;
        self.base_url()?;
        if !(1..=1024).contains(&self.workers) {
            return Err(invalid("workers", "must be between 1 and 1024"));
        }
        if self.poll_interval_ms == 0 || self.poll_interval_ms > 60_000 {
            return Err(invalid("poll_interval_ms", "must be between 1 and 60000"));
        }
        if self.body_limit_bytes < 1024 {
            return Err(invalid("body_limit_bytes", "must be at least 1024"));
        }
        if self.result_url_ttl_secs == 0 {
            return Err(invalid("result_url_ttl_secs", "must be positive"));
        }
        if self.lease_secs == 0 {
            return Err(invalid("lease_secs", "must be positive"));
        }
        if self.max_attempts == 0 {
            return Err(invalid("max_attempts", "must be at least 1"));
        }
        if self.request_limits.max_url_len < 16 {
            return Err(invalid("request_limits.max_url_len", "must be at least 16"));
        }
        if self.fetch.max_bytes == 0 {
            return Err(invalid("fetch.max_bytes", "must be positive"));
        }
        if let Err(e) = vto_core::http_fetch::AddressPolicy::new(&self.fetch.allow) {
            return Err(invalid("fetch.allow", e.to_string()));
        }
        if !["auto", "cpu", "gpu"]
            .contains(&self.vision_backend.trim().to_ascii_lowercase().as_str())
        {
            return Err(invalid(
                "vision_backend",
                "must be \"auto\", \"cpu\" or \"gpu\"",
            ));
        }
        if self.render_concurrency > 64 {
            return Err(invalid(
                "render_concurrency",
                "must be between 0 (auto) and 64",
            ));
        }
        if self.auth_refresh_ms == 0 || self.auth_refresh_ms > 60_000 {
            return Err(invalid("auth_refresh_ms", "must be between 1 and 60000"));
        }
        if self.webhooks.timeout_ms == 0 {
            return Err(invalid("webhooks.timeout_ms", "must be positive"));
        }
        if !(1..=1024).contains(&self.storage.pool_size) {
            return Err(invalid("storage.pool_size", "must be between 1 and 1024"));
        }
        self.storage_location()?;
        if let ResultsLocation::S3 { .. } = self.results_location()? {
            if let Some(e) = Some(self.results.endpoint.trim()).filter(|e| !e.is_empty()) {
                match url::Url::parse(e) {
                    Ok(u) if u.scheme() == "https" && u.host().is_some() => {}
                    Ok(u) if u.scheme() == "http" && u.host().is_some() => {
                        if !self.results.allow_http {
                            return Err(invalid(
                                "results.endpoint",
                                "is plain http; set results.allow_http = true for a store on a private network",
                            ));
                        }
                    }
                    _ => {
                        return Err(invalid(
                            "results.endpoint",
                            "must be an http(s) URL with a host",
                        ))
                    }
                }
            }
            if self.result_url_ttl_secs > 7 * 24 * 3600 {
                return Err(invalid(
                    "result_url_ttl_secs",
                    "must be at most 604800 (7 days, the longest an S3 presigned URL lives) with s3:// results",
                ));
            }
            if self.results.region.trim().is_empty() {
                return Err(invalid(
                    "results.region",
                    "must not be empty with s3:// results",
                ));
            }
        }
        self.service_config()?;
        for (cat, e) in &self.engines {
            let field = |f: &str| format!("engines.{cat}.{f}");
            Category::from_str(cat).map_err(|_| {
                invalid(
                    format!("engines.{cat}"),
                    format!(
                        "unknown category; expected one of {}",
                        Category::ALL.map(Category::as_str).join(", ")
                    ),
                )
            })?;
            match url::Url::parse(&e.url) {
                Ok(u) if matches!(u.scheme(), "http" | "https") && u.host().is_some() => {}
                _ => return Err(invalid(field("url"), "must be an http(s) URL with a host")),
            }
            if e.timeout_ms == 0 {
                return Err(invalid(field("timeout_ms"), "must be positive"));
            }
            if e.connect_timeout_ms == 0 {
                return Err(invalid(field("connect_timeout_ms"), "must be positive"));
            }
            if e.max_concurrency == 0 {
                return Err(invalid(field("max_concurrency"), "must be at least 1"));
            }
            if e.max_response_bytes == 0 {
                return Err(invalid(field("max_response_bytes"), "must be positive"));
            }
            for name in e.headers.keys() {
                if name.is_empty()
                    || !name
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"-_".contains(&b))
                {
                    return Err(invalid(
                        format!("engines.{cat}.headers.{name}"),
                        "not a valid header name",
                    ));
                }
            }
        }
        Ok(())
    }

    /// The parsed listen address.
    pub fn listen_addr(&self) -> Result<SocketAddr, ConfigError> {
        self.listen.parse().map_err(|_| {
            invalid(
                "listen",
                format!("{:?} is not an address like 127.0.0.1:8080", self.listen),
            )
        })
    }

    /// The public base URL without a trailing slash (`http://<listen>` when empty).
    pub fn base_url(&self) -> Result<String, ConfigError> {
        if self.public_base_url.trim().is_empty() {
            return Ok(format!("http://{}", self.listen));
        }
        match url::Url::parse(&self.public_base_url) {
            Ok(u)
                if matches!(u.scheme(), "http" | "https")
                    && u.host().is_some()
                    && u.query().is_none()
                    && u.fragment().is_none() =>
            {
                Ok(self.public_base_url.trim_end_matches('/').to_string())
            }
            _ => Err(invalid(
                "public_base_url",
                "must be an http(s) URL with a host and no query, e.g. https://tryon.shop.example",
            )),
        }
    }

    /// The default SQLite file, `<data_dir>/vto.db`.
    pub fn db_path(&self) -> PathBuf {
        self.data_dir.join("vto.db")
    }

    /// Where the records live: `[storage] url`, or the default SQLite file.
    pub fn storage_location(&self) -> Result<StorageLocation, ConfigError> {
        let url = self.storage.url.trim();
        if url.is_empty() {
            return Ok(StorageLocation::Sqlite(self.db_path()));
        }
        if let Some(path) = url.strip_prefix("sqlite://") {
            let path = path.split('?').next().unwrap_or_default();
            if path.is_empty() {
                return Err(invalid(
                    "storage.url",
                    "sqlite:// needs a file path, e.g. sqlite:///var/lib/vto/vto.db",
                ));
            }
            return Ok(StorageLocation::Sqlite(PathBuf::from(path)));
        }
        match url::Url::parse(url) {
            Ok(u) if matches!(u.scheme(), "postgres" | "postgresql") => {
                Ok(StorageLocation::Postgres(url.to_string()))
            }
            _ => Err(invalid(
                "storage.url",
                "must be empty, sqlite://<path> or postgres://user:password@host:port/database",
            )),
        }
    }

    /// Where result images go: `[results] url`, or `<data_dir>/results`.
    pub fn results_location(&self) -> Result<ResultsLocation, ConfigError> {
        let url = self.results.url.trim();
        if url.is_empty() {
            return Ok(ResultsLocation::File(self.results_dir()));
        }
        if let Some(path) = url.strip_prefix("file://") {
            if path.is_empty() {
                return Err(invalid(
                    "results.url",
                    "file:// needs a folder, e.g. file:///var/lib/vto/results",
                ));
            }
            return Ok(ResultsLocation::File(PathBuf::from(path)));
        }
        if let Some(rest) = url.strip_prefix("s3://") {
            let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
            let valid_bucket = (3..=63).contains(&bucket.len())
                && bucket
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-.".contains(&b));
            if !valid_bucket {
                return Err(invalid("results.url", format!("{bucket:?} is not an S3 bucket name (3–63 lowercase letters, digits, '-' or '.')")));
            }
            return Ok(ResultsLocation::S3 {
                bucket: bucket.to_string(),
                prefix: prefix.trim_matches('/').to_string(),
            });
        }
        Err(invalid(
            "results.url",
            "must be empty, file://<folder> or s3://bucket/prefix",
        ))
    }

    /// The built-in engines' models: `models_dir`, else `<data_dir>/models`.
    pub fn models_dir(&self) -> PathBuf {
        if self.models_dir.trim().is_empty() {
            self.data_dir.join("models")
        } else {
            PathBuf::from(&self.models_dir)
        }
    }

    /// The result image folder.
    pub fn results_dir(&self) -> PathBuf {
        self.data_dir.join("results")
    }

    /// vto-core's service settings from this config.
    pub fn service_config(&self) -> Result<ServiceConfig, ConfigError> {
        let currency =
            Currency::from_str(&self.currency).map_err(|e| invalid("currency", e.to_string()))?;
        let mut prices = PriceTable::default().with_currency(currency);
        for (cat, amount) in &self.prices {
            let field = format!("prices.{cat}");
            let c = Category::from_str(cat).map_err(|_| invalid(&field, "unknown category"))?;
            let d = Decimal::from_str(amount.trim())
                .map_err(|_| invalid(&field, format!("{amount:?} is not a decimal amount")))?;
            prices
                .set(c, d)
                .map_err(|e| invalid(&field, e.to_string()))?;
        }
        let mut rate_limits = RateLimits::default();
        rate_limits.defaults.clear();
        for (ep, rl) in &self.rate_limits {
            let endpoint = Endpoint::ALL
                .into_iter()
                .find(|e| e.as_str() == ep)
                .ok_or_else(|| {
                    invalid(
                        format!("rate_limits.{ep}"),
                        format!(
                            "unknown endpoint; expected one of {}",
                            Endpoint::ALL.map(Endpoint::as_str).join(", ")
                        ),
                    )
                })?;
            let Some(burst) = NonZeroU32::new(rl.burst) else {
                continue; // 0 = unlimited
            };
            if rl.period_secs == 0 || rl.period_secs > 86_400 {
                return Err(invalid(
                    format!("rate_limits.{ep}.period_secs"),
                    "must be between 1 and 86400",
                ));
            }
            rate_limits.defaults.insert(
                endpoint,
                Quota {
                    burst,
                    period_ms: rl.period_secs * 1000,
                },
            );
        }
        Ok(ServiceConfig {
            prices,
            request_limits: RequestLimits {
                max_url_len: self.request_limits.max_url_len,
                max_data_bytes: self.request_limits.max_data_bytes,
            },
            fetch_limits: FetchLimits {
                max_bytes: self.fetch.max_bytes,
                connect_timeout_ms: self.fetch.connect_timeout_ms,
                total_timeout_ms: self.fetch.total_timeout_ms,
                max_redirects: self.fetch.max_redirects,
            },
            rate_limits,
            lease: Duration::from_secs(self.lease_secs),
            job_deadline: (self.job_deadline_secs > 0)
                .then(|| Duration::from_secs(self.job_deadline_secs)),
            max_attempts: self.max_attempts,
            orphan_hold_grace: Duration::from_secs(self.reconcile_after_secs),
        })
    }
}

fn apply_env(table: &mut toml::Table, name: &str, value: &str) -> Result<(), ConfigError> {
    if let Some((_, path, kind)) = ENV_KEYS.iter().find(|(n, _, _)| *n == name) {
        let v = match kind {
            Kind::Str => toml::Value::String(value.to_string()),
            Kind::List => toml::Value::Array(
                value
                    .split(',')
                    .map(str::trim)
                    .filter(|v| !v.is_empty())
                    .map(|v| toml::Value::String(v.to_string()))
                    .collect(),
            ),
            Kind::Bool => toml::Value::Boolean(match value.trim() {
                "1" | "true" | "yes" | "on" => true,
                "0" | "false" | "no" | "off" => false,
                _ => {
                    return Err(invalid(
                        name,
                        format!("expected true or false, got {value:?}"),
                    ))
                }
            }),
            Kind::Int => toml::Value::Integer(
                value
                    .trim()
                    .parse::<i64>()
                    .map_err(|_| invalid(name, format!("expected an integer, got {value:?}")))?,
            ),
        };
        set_path(table, path, v);
    } else if let Some(cat) = name.strip_prefix("VTO_PRICE_") {
        let cat = cat.to_ascii_lowercase();
        Category::from_str(&cat).map_err(|_| invalid(name, "unknown category"))?;
        set_path(
            table,
            &["prices", &cat],
            toml::Value::String(value.to_string()),
        );
    } else if let Some(ep) = name.strip_prefix("VTO_RATE_") {
        let ep = ep.to_ascii_lowercase();
        let (burst, period) = value
            .split_once('/')
            .and_then(|(b, p)| Some((b.trim().parse::<u32>().ok()?, p.trim().parse::<u64>().ok()?)))
            .ok_or_else(|| {
                invalid(
                    name,
                    format!("expected <burst>/<period_secs> like 10/1, got {value:?}"),
                )
            })?;
        let mut t = toml::Table::new();
        t.insert("burst".into(), toml::Value::Integer(i64::from(burst)));
        t.insert(
            "period_secs".into(),
            toml::Value::Integer(i64::try_from(period).unwrap_or(i64::MAX)),
        );
        set_path(table, &["rate_limits", &ep], toml::Value::Table(t));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(v: &[(&str, &str)]) -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn defaults_are_the_spec_prices_and_validate() {
        let c = Config::load(None, env(&[])).unwrap();
        let s = c.service_config().unwrap();
        assert_eq!(
            s.prices.price(Category::FullOutfit).amount.to_string(),
            "0.30"
        );
        assert_eq!(s.prices.price(Category::Jewelry).amount.to_string(), "0.07");
        assert_eq!(c.base_url().unwrap(), "http://127.0.0.1:8080");
        assert_eq!(c, Config::default());
    }

    #[test]
    fn file_then_env_override_in_order() {
        let dir = std::env::temp_dir().join(format!("vto-cfg-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("c.toml");
        std::fs::write(&f, "workers = 7\n[prices]\ndress = \"0.25\"\n[rate_limits.get_try_on]\nburst = 3\nperiod_secs = 2\n").unwrap();
        let c = Config::load(
            Some(&f),
            env(&[
                ("VTO_WORKERS", "9"),
                ("VTO_PRICE_SHOES", "0.11"),
                ("VTO_RATE_CREATE_TRY_ON", "5/60"),
            ]),
        )
        .unwrap();
        assert_eq!(c.workers, 9);
        let s = c.service_config().unwrap();
        assert_eq!(s.prices.price(Category::Dress).amount.to_string(), "0.25");
        assert_eq!(s.prices.price(Category::Shoes).amount.to_string(), "0.11");
        let q = s.rate_limits.defaults[&Endpoint::CreateTryOn];
        assert_eq!((q.burst.get(), q.period_ms), (5, 60_000));
        let q = s.rate_limits.defaults[&Endpoint::GetTryOn];
        assert_eq!((q.burst.get(), q.period_ms), (3, 2_000));
    }

    #[test]
    fn errors_name_the_field() {
        let e = |v: &[(&str, &str)]| Config::load(None, env(v)).unwrap_err().to_string();
        assert!(e(&[("VTO_WORKERS", "0")]).starts_with("workers:"));
        assert!(e(&[("VTO_WORKERS", "many")]).starts_with("VTO_WORKERS:"));
        assert!(e(&[("VTO_LISTEN", "nowhere")]).starts_with("listen:"));
        assert!(e(&[("VTO_PRICE_DRESS", "-1")]).starts_with("prices.dress:"));
        assert!(e(&[("VTO_PRICE_HOVERBOARD", "1")]).starts_with("VTO_PRICE_HOVERBOARD:"));
        assert!(e(&[("VTO_RATE_GET_TRY_ON", "fast")]).starts_with("VTO_RATE_GET_TRY_ON:"));
        assert!(e(&[("VTO_PUBLIC_BASE_URL", "ftp://x")]).starts_with("public_base_url:"));
        assert!(e(&[("VTO_CURRENCY", "usd")]).starts_with("currency:"));
        assert!(e(&[("VTO_FETCH_MODELS", "maybe")]).starts_with("VTO_FETCH_MODELS:"));
        assert!(e(&[("VTO_AUTH_REFRESH_MS", "0")]).starts_with("auth_refresh_ms:"));
    }

    #[test]
    fn the_models_dir_defaults_under_the_data_dir_and_follows_vto_models_dir() {
        let c = Config::load(None, env(&[("VTO_DATA_DIR", "/srv/vto")])).unwrap();
        assert_eq!(c.models_dir(), PathBuf::from("/srv/vto/models"));
        assert!(c.fetch_models);
        let c = Config::load(
            None,
            env(&[
                ("VTO_DATA_DIR", "/srv/vto"),
                ("VTO_MODELS_DIR", "/opt/models"),
                ("VTO_FETCH_MODELS", "false"),
            ]),
        )
        .unwrap();
        assert_eq!(c.models_dir(), PathBuf::from("/opt/models"));
        assert!(!c.fetch_models);
    }

    #[test]
    fn the_vision_backend_defaults_to_auto_and_is_checked() {
        let c = Config::load(None, env(&[])).unwrap();
        assert_eq!(c.vision_backend, "auto");
        let c = Config::load(None, env(&[("VTO_VISION_BACKEND", "cpu")])).unwrap();
        assert_eq!(c.vision_backend, "cpu");
        let e = Config::load(None, env(&[("VTO_VISION_BACKEND", "tpu")])).unwrap_err();
        assert!(e.to_string().contains("vision_backend"), "{e}");
        assert_eq!(c.render_concurrency, 0);
        let c = Config::load(None, env(&[("VTO_RENDER_CONCURRENCY", "3")])).unwrap();
        assert_eq!(c.render_concurrency, 3);
        let e = Config::load(None, env(&[("VTO_RENDER_CONCURRENCY", "500")])).unwrap_err();
        assert!(e.to_string().contains("render_concurrency"), "{e}");
    }

    #[test]
    fn storage_and_results_default_to_the_data_dir_and_parse_their_urls() {
        let c = Config::load(None, env(&[("VTO_DATA_DIR", "/srv/vto")])).unwrap();
        assert_eq!(
            c.storage_location().unwrap(),
            StorageLocation::Sqlite(PathBuf::from("/srv/vto/vto.db"))
        );
        assert_eq!(
            c.results_location().unwrap(),
            ResultsLocation::File(PathBuf::from("/srv/vto/results"))
        );
        assert_eq!(c.role, Role::All);
        let c = Config::load(
            None,
            env(&[
                ("VTO_STORAGE_URL", "postgres://vto:pw@db.internal:5432/vto"),
                ("VTO_STORAGE_POOL_SIZE", "32"),
                ("VTO_STORAGE_LISTEN_NOTIFY", "false"),
                ("VTO_RESULTS_URL", "s3://shop-results/tryon/"),
                ("VTO_S3_ENDPOINT", "http://10.0.0.5:8333"),
                ("VTO_S3_ALLOW_HTTP", "true"),
                ("VTO_ROLE", "worker"),
            ]),
        )
        .unwrap();
        assert_eq!(
            c.storage_location().unwrap(),
            StorageLocation::Postgres("postgres://vto:pw@db.internal:5432/vto".into())
        );
        assert_eq!((c.storage.pool_size, c.storage.listen_notify), (32, false));
        assert_eq!(
            c.results_location().unwrap(),
            ResultsLocation::S3 {
                bucket: "shop-results".into(),
                prefix: "tryon".into()
            }
        );
        assert_eq!(c.role, Role::Worker);
        assert!(c.role.runs_workers() && !c.role.serves_api());
        let c = Config::load(
            None,
            env(&[("VTO_STORAGE_URL", "sqlite:///var/lib/vto/a.db")]),
        )
        .unwrap();
        assert_eq!(
            c.storage_location().unwrap(),
            StorageLocation::Sqlite(PathBuf::from("/var/lib/vto/a.db"))
        );
    }

    #[test]
    fn bad_storage_results_and_role_values_name_their_field() {
        let e = |vars: &[(&str, &str)]| Config::load(None, env(vars)).unwrap_err().to_string();
        assert!(e(&[("VTO_STORAGE_URL", "mysql://x/y")]).starts_with("storage.url:"));
        assert!(e(&[("VTO_STORAGE_URL", "sqlite://")]).starts_with("storage.url:"));
        assert!(e(&[("VTO_STORAGE_POOL_SIZE", "0")]).starts_with("storage.pool_size:"));
        assert!(e(&[("VTO_RESULTS_URL", "s3://A_Bucket")]).starts_with("results.url:"));
        assert!(e(&[("VTO_RESULTS_URL", "ftp://x")]).starts_with("results.url:"));
        let plain_http = e(&[
            ("VTO_RESULTS_URL", "s3://bucket"),
            ("VTO_S3_ENDPOINT", "http://10.0.0.5:8333"),
        ]);
        assert!(plain_http.starts_with("results.endpoint:"), "{plain_http}");
        let role = e(&[("VTO_ROLE", "scheduler")]);
        assert!(role.contains("role"), "{role}");
        assert_eq!("API".parse::<Role>().unwrap(), Role::Api);
        assert!("scheduler".parse::<Role>().is_err());
    }

    #[test]
    fn engine_sections_are_parsed_and_validated() {
        let dir = std::env::temp_dir().join(format!("vto-cfg-e-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("e.toml");
        std::fs::write(&f, "[engines.shirt]\nkind = \"http\"\nurl = \"https://render.internal/v1\"\ntimeout_ms = 1000\n").unwrap();
        let c = Config::load(Some(&f), env(&[])).unwrap();
        assert_eq!(c.engines["shirt"].timeout_ms, 1000);
        assert_eq!(c.engines["shirt"].max_concurrency, 4);
        std::fs::write(
            &f,
            "[engines.shirt]\nkind = \"http\"\nurl = \"not a url\"\n",
        )
        .unwrap();
        let err = Config::load(Some(&f), env(&[])).unwrap_err().to_string();
        assert!(err.starts_with("engines.shirt.url:"), "{err}");
        std::fs::write(
            &f,
            "[engines.hoverboard]\nkind = \"http\"\nurl = \"https://x.example\"\n",
        )
        .unwrap();
        let err = Config::load(Some(&f), env(&[])).unwrap_err().to_string();
        assert!(err.starts_with("engines.hoverboard:"), "{err}");
        std::fs::write(&f, "wokers = 3\n").unwrap();
        let err = Config::load(Some(&f), env(&[])).unwrap_err().to_string();
        assert!(err.contains("wokers"), "{err}");
    }
}
