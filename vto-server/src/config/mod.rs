//! Configuration: embedded defaults (`default.toml`) → a TOML file → `VTO_*` environment
//! variables, merged as TOML tables, then parsed and validated once at start.
//!
//! Every field is documented in `default.toml`, which is compiled in; a config file only
//! carries the keys it changes. An invalid value stops the start with [`ConfigError`], whose
//! message names the field (`workers: must be between 1 and 1024`).

mod env;
mod sections;
mod validate;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use vto_sqlite::Synchronous;

pub use sections::{
    EngineConfig, EngineKind, FetchConfig, RateLimitConfig, RequestLimitsConfig, ResultsConfig,
    ResultsLocation, Role, StorageConfig, StorageLocation, WebhookConfig,
};

use env::{apply_env, merge};
use sections::{d_auth_refresh, d_auto, d_max_photo_side, d_reconcile, d_sync_wait, d_true};

/// The embedded defaults, every field documented.
pub const DEFAULT_TOML: &str = include_str!("../../default.toml");

/// The models directory when `models_dir` and `VTO_MODELS_DIR` are unset: `./models`, relative
/// to the working directory — where `scripts/quickstart.sh`, `scripts/setup.sh` and
/// `scripts/fetch-models.sh` put the models, so that `vto serve`, `vto try-on`, `vto inspect`
/// and `vto models fetch` run after them find the same files.
pub const DEFAULT_MODELS_DIR: &str = "./models";

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

pub(crate) fn invalid(field: impl Into<String>, message: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        field: field.into(),
        message: message.into(),
    }
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
    /// Where the built-in engines' models are (default and empty: [`DEFAULT_MODELS_DIR`]).
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
    /// A person photo whose longer side exceeds this many pixels is scaled down to it right
    /// after decoding (the result comes out at that size; its metadata says so): each
    /// try-on's memory is bounded by this setting, not by what a client sends. Default 2048;
    /// 0 keeps every photo's size; else 256 to 12000. Read by the binary that builds the
    /// built-in engines.
    #[serde(default = "d_max_photo_side")]
    pub max_photo_side: u32,
    /// How long a synchronous try-on may wait for a free built-in renderer, in seconds
    /// (default 30; 0 waits as long as it takes; at most 3600). Past it the request is
    /// answered `503 service_unavailable` with `Retry-After`, its job failed and not billed.
    /// Read by the binary that builds the built-in engines.
    #[serde(default = "d_sync_wait")]
    pub sync_wait_secs: u64,
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

    /// The built-in engines' models: `models_dir`, else [`DEFAULT_MODELS_DIR`] (not under
    /// `data_dir`: the scripts, the server and every `vto` command share one directory).
    pub fn models_dir(&self) -> PathBuf {
        if self.models_dir.trim().is_empty() {
            PathBuf::from(DEFAULT_MODELS_DIR)
        } else {
            PathBuf::from(&self.models_dir)
        }
    }

    /// The result image folder.
    pub fn results_dir(&self) -> PathBuf {
        self.data_dir.join("results")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vto_core::{Category, Endpoint};

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
    fn the_models_dir_is_the_scripts_one_whatever_the_data_dir_and_follows_vto_models_dir() {
        // Regression: the default was `<data_dir>/models`, so `vto try-on` right after
        // `scripts/quickstart.sh` (models in ./models) said "models directory
        // ./vto-data/models does not exist".
        let c = Config::load(None, env(&[("VTO_DATA_DIR", "/srv/vto")])).unwrap();
        assert_eq!(c.models_dir(), PathBuf::from("./models"));
        let c = Config::load(None, env(&[("VTO_MODELS_DIR", "")])).unwrap();
        assert_eq!(c.models_dir(), PathBuf::from("./models"));
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
    fn the_photo_side_limit_defaults_to_2048_and_is_checked() {
        assert_eq!(Config::load(None, env(&[])).unwrap().max_photo_side, 2048);
        let c = Config::load(None, env(&[("VTO_MAX_PHOTO_SIDE", "0")])).unwrap();
        assert_eq!(c.max_photo_side, 0);
        let c = Config::load(None, env(&[("VTO_MAX_PHOTO_SIDE", "1024")])).unwrap();
        assert_eq!(c.max_photo_side, 1024);
        let c = Config::load(None, env(&[("VTO_SYNC_WAIT_SECS", "0")])).unwrap();
        assert_eq!(c.sync_wait_secs, 0);
        assert_eq!(Config::load(None, env(&[])).unwrap().sync_wait_secs, 30);
        let e = Config::load(None, env(&[("VTO_SYNC_WAIT_SECS", "7200")])).unwrap_err();
        assert!(e.to_string().contains("sync_wait_secs"), "{e}");
        let e = Config::load(None, env(&[("VTO_MAX_PHOTO_SIDE", "100")])).unwrap_err();
        assert!(e.to_string().contains("max_photo_side"), "{e}");
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
