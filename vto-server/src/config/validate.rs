//! Validation, once at start: every field checked with a message that names it, the storage
//! and results URLs parsed into their locations, and vto-core's [`ServiceConfig`] built.

use std::num::NonZeroU32;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use rust_decimal::Decimal;
use vto_core::{
    Category, Currency, Endpoint, FetchLimits, PriceTable, Quota, RateLimits, RequestLimits,
    ServiceConfig,
};

use super::sections::{ResultsLocation, StorageLocation};
use super::{invalid, Config, ConfigError};

impl Config {
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
        if self.max_photo_side != 0 && !(256..=12_000).contains(&self.max_photo_side) {
            return Err(invalid(
                "max_photo_side",
                "must be 0 (keep every size) or between 256 and 12000",
            ));
        }
        if self.sync_wait_secs > 3600 {
            return Err(invalid(
                "sync_wait_secs",
                "must be 0 (wait as long as it takes) or between 1 and 3600",
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
