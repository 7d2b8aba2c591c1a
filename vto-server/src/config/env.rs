//! The `VTO_*` environment variables: which key each sets and how its text is typed, merged
//! over the defaults and the file as TOML.

use std::str::FromStr;

use vto_core::Category;

use super::{invalid, ConfigError};

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
    ("VTO_MAX_PHOTO_SIDE", &["max_photo_side"], Kind::Int),
    ("VTO_SYNC_WAIT_SECS", &["sync_wait_secs"], Kind::Int),
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

pub(super) fn merge(base: &mut toml::Table, over: toml::Table) {
    for (k, v) in over {
        match (base.get_mut(&k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge(b, o),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

pub(super) fn apply_env(
    table: &mut toml::Table,
    name: &str,
    value: &str,
) -> Result<(), ConfigError> {
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
