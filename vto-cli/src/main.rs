//! `vto`: run the server (`vto serve`), administer a data dir (`vto admin …`), fetch the
//! models (`vto models fetch`), look at what the vision stack sees (`vto inspect`) and fill a
//! photo's masked pixels (`vto inpaint`).
//!
//! Every admin command works on the same SQLite file as the server, also while it runs, and
//! prints either a short human summary or, with `--json`, one JSON document for scripts.
//! An API key's secret is printed once, by `vto admin key create`, and never again.
//!
//! The models: `vto serve`, `vto try-on`, `vto inspect` and `vto models fetch` all use one
//! directory, `models_dir` in the config or `VTO_MODELS_DIR`, else `./models` (where
//! `scripts/quickstart.sh` and `scripts/fetch-models.sh` put them).

mod builtin;
mod inpaint;
mod vision;

use std::path::PathBuf;
use std::str::FromStr;

use anyhow::{bail, Context as _};
use clap::{Parser, Subcommand};
use rust_decimal::Decimal;
use serde_json::{json, Value};

use vto_core::{AccountId, ApiKeyId, JobFilter, JobStatus, RequestId};
use vto_core::{AccountLimits, Endpoint, Quota};
use vto_server::Config;

/// vto: self-hosted virtual try-on.
#[derive(Debug, Parser)]
#[command(
    name = "vto",
    version,
    after_help = "Models: `serve`, `try-on`, `inspect` and `models fetch` use one models \
                  directory: `models_dir` in the config or VTO_MODELS_DIR, else ./models \
                  (where scripts/quickstart.sh puts them)."
)]
struct Cli {
    /// A TOML config file (else `VTO_CONFIG`, else the embedded defaults).
    #[arg(long, global = true)]
    config: Option<PathBuf>,
    /// The data dir (overrides the config and `VTO_DATA_DIR`).
    #[arg(long, global = true)]
    data_dir: Option<PathBuf>,
    /// Print one JSON document instead of text.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the HTTP server with the built-in engines and the configured render services.
    /// Missing models are fetched first (`fetch_models`, default on).
    Serve {
        /// What this process runs: `all` (the API and the workers), `api` (the API and
        /// synchronous renders) or `worker` (asynchronous jobs and webhooks). Overrides the
        /// config's `role` (env `VTO_ROLE`).
        #[arg(long, value_parser = ["all", "api", "worker"])]
        role: Option<String>,
    },
    /// Accounts, keys and jobs in the data dir.
    Admin {
        #[command(subcommand)]
        what: Admin,
    },
    /// Print the embedded default configuration (every field documented).
    DefaultConfig,
    /// The MediaPipe models the vision stack runs.
    Models {
        #[command(subcommand)]
        cmd: ModelsCmd,
    },
    /// One try-on on this machine, with no server: writes the result image. Models from
    /// `models_dir` / `VTO_MODELS_DIR`, else `./models`.
    TryOn(TryOnArgs),
    /// Run the vision stack on a photo: faces, landmarks, head pose, body keypoints, masks.
    /// Models from `models_dir` / `VTO_MODELS_DIR`, else `./models`.
    Inspect {
        /// The photo (PNG, JPEG or WebP).
        photo: PathBuf,
        /// Also write an overlay image (landmarks, boxes, skeleton, mask) here.
        #[arg(long)]
        overlay: Option<PathBuf>,
    },
    /// Fill a photo's masked pixels from the rest of the photo (the try-ons' fill stage on
    /// its own): white in the mask (≥ 128) is filled, every other pixel is kept.
    Inpaint {
        /// The photo (PNG, JPEG or WebP).
        #[arg(long)]
        photo: PathBuf,
        /// The mask, the photo's size: white (≥ 128) = fill.
        #[arg(long)]
        mask: PathBuf,
        /// Optional: where the fill may copy from, the photo's size (white = may copy).
        #[arg(long)]
        guide: Option<PathBuf>,
        /// Where to write the result (format from the extension, e.g. .png).
        #[arg(short, long)]
        output: PathBuf,
    },
}

#[derive(Debug, clap::Args)]
struct TryOnArgs {
    /// The category: any of the eleven (`glasses`, `sunglasses`, `hats`, `jewelry`, `shoes`,
    /// `shirt`, `tshirt`, `jacket`, `pants`, `dress`, `full_outfit`).
    #[arg(long)]
    category: String,
    /// The person photo: a path, an http(s) URL or a data: URL.
    #[arg(long)]
    person: String,
    /// The product: a 3D model (.glb, .gltf, .obj), or a product photo for garment
    /// categories (shirt, tshirt, jacket, pants, dress, full_outfit), as a path or URL.
    #[arg(long)]
    product: String,
    /// Where to write the PNG.
    #[arg(short, long)]
    output: PathBuf,
    /// Glasses and sunglasses: take off the person's own glasses first — `auto` (when
    /// detected), `never` or `always` (the API's `remove_own_eyewear`).
    #[arg(long, default_value = "auto")]
    remove_own_eyewear: String,
    /// Hats: take off the person's own hat first — `auto` (when detected), `never` or
    /// `always` (the API's `remove_own_hat`).
    #[arg(long, default_value = "auto")]
    remove_own_hat: String,
    /// Jewelry, hats and dress: what the product is, overriding what the model or photo says
    /// (the API's `product_kind`): `ring`, `earrings`, `stud`, `hoop`, `drop`, `necklace`,
    /// `bracelet`, `watch` (jewelry); `cap`, `brimmed`, `beanie` (hats); `dress`, `skirt`
    /// (dress).
    #[arg(long)]
    product_kind: Option<String>,
}

#[derive(Debug, Subcommand)]
enum ModelsCmd {
    /// Download mediapipe==0.10.14 with pip, extract the eight models into the models dir
    /// (`models_dir` in the config or `VTO_MODELS_DIR`, else `./models`) and check
    /// their SHA-256. Idempotent.
    Fetch,
}

#[derive(Debug, Subcommand)]
enum Admin {
    /// Accounts and funds.
    Account {
        #[command(subcommand)]
        cmd: AccountCmd,
    },
    /// API keys.
    Key {
        #[command(subcommand)]
        cmd: KeyCmd,
    },
    /// Try-on jobs.
    Jobs {
        #[command(subcommand)]
        cmd: JobsCmd,
    },
    /// Webhook signing secrets and deliveries.
    Webhooks {
        #[command(subcommand)]
        cmd: WebhooksCmd,
    },
}

#[derive(Debug, Subcommand)]
enum WebhooksCmd {
    /// Show an account's signing secret (`whsec_…`), created on first use.
    Secret {
        /// The account id (`acct_…`).
        account: String,
        /// Replace it with a new one (receivers must switch to the new secret).
        #[arg(long)]
        rotate: bool,
    },
    /// List deliveries, newest first.
    List {
        /// Only this account's deliveries.
        #[arg(long)]
        account: Option<String>,
        /// At most this many.
        #[arg(long, default_value_t = 50)]
        limit: usize,
    },
    /// Show one delivery with every attempt.
    Show {
        /// The webhook id (`msg_…`).
        id: String,
    },
}

#[derive(Debug, Subcommand)]
enum AccountCmd {
    /// Create an account, optionally with a starting balance.
    Create {
        /// A name, e.g. the shop's.
        #[arg(long)]
        name: String,
        /// Starting balance (decimal, in the configured currency).
        #[arg(long)]
        balance: Option<String>,
    },
    /// Add funds to an account.
    Credit {
        /// The account id (`acct_…`).
        account: String,
        /// The amount (decimal, > 0).
        amount: String,
        /// A note kept in the ledger.
        #[arg(long, default_value = "top-up")]
        memo: String,
    },
    /// List accounts with their balances.
    List,
    /// Show one account: balance, rate limits (its own and the defaults) and keys.
    Show {
        /// The account id (`acct_…`).
        account: String,
    },
    /// Set the account's own rate limits, `<burst>/<period_secs>` per endpoint (e.g.
    /// `--create 20/1 --get 100/1`). Endpoints not given keep their current value; `--reset`
    /// first drops every override (alone, it restores the defaults). Running servers apply
    /// the change within `auth_refresh_ms`, without a restart.
    Limits {
        /// The account id (`acct_…`).
        account: String,
        /// `POST /v1/virtual-try-on`.
        #[arg(long, value_name = "BURST/SECS")]
        create: Option<Quota>,
        /// `GET /v1/virtual-try-on/{id}`.
        #[arg(long, value_name = "BURST/SECS")]
        get: Option<Quota>,
        /// `POST /v1/virtual-try-on/{id}/cancel`.
        #[arg(long, value_name = "BURST/SECS")]
        cancel: Option<Quota>,
        /// `GET /v1/balance`.
        #[arg(long, value_name = "BURST/SECS")]
        balance: Option<Quota>,
        /// Drop the account's overrides (before applying any given above).
        #[arg(long)]
        reset: bool,
    },
}

#[derive(Debug, Subcommand)]
enum KeyCmd {
    /// Create an API key; its secret is shown once.
    Create {
        /// The account id (`acct_…`).
        account: String,
        /// A label.
        #[arg(long, default_value = "default")]
        name: String,
    },
    /// List keys (never their secrets).
    List {
        /// Only this account's keys.
        #[arg(long)]
        account: Option<String>,
    },
    /// Revoke a key. The command returns once running servers have noticed (after
    /// `auth_refresh_ms`): from then on the key is refused everywhere.
    Revoke {
        /// The key id (`key_…`).
        key: String,
    },
}

#[derive(Debug, Subcommand)]
enum JobsCmd {
    /// List jobs, newest first.
    List {
        /// Only this account's jobs.
        #[arg(long)]
        account: Option<String>,
        /// Only jobs in this status (queued, processing, success, failed, canceled).
        #[arg(long)]
        status: Option<String>,
        /// At most this many.
        #[arg(long, default_value_t = 50)]
        limit: usize,
    },
    /// Show one job in full.
    Show {
        /// The request id.
        request_id: String,
    },
}

fn decimal(s: &str, what: &str) -> anyhow::Result<Decimal> {
    Decimal::from_str(s.trim()).with_context(|| format!("{what}: {s:?} is not a decimal amount"))
}

/// A job as JSON with inline `data:` bytes replaced by their length.
fn job_json(job: &vto_core::Job) -> Value {
    let mut v = serde_json::to_value(job).unwrap_or(Value::Null);
    if let Some(req) = v.get_mut("request").and_then(Value::as_object_mut) {
        for field in ["person_image", "product"] {
            if let Some(input) = req.get_mut(field).and_then(Value::as_object_mut) {
                if let Some(Value::String(b)) = input.remove("bytes") {
                    input.insert("bytes_len".into(), json!(b.len() * 3 / 4));
                }
            }
        }
    }
    v
}

/// Every endpoint's effective quota for an account: its own, else the configured default.
fn limits_json(config: &Config, own: Option<&AccountLimits>) -> anyhow::Result<Value> {
    let defaults = config.service_config()?.rate_limits.defaults;
    let mut out = serde_json::Map::new();
    for ep in Endpoint::ALL {
        let (quota, source) = match own.and_then(|l| l.get(&ep)) {
            Some(q) => (Some(*q), "account"),
            None => (defaults.get(&ep).copied(), "default"),
        };
        out.insert(
            ep.as_str().into(),
            json!({
                "limit": quota.map_or("unlimited".to_string(), |q| q.to_string()),
                "source": source,
            }),
        );
    }
    Ok(Value::Object(out))
}

fn limits_text(limits: &Value) -> String {
    let mut s = String::new();
    if let Some(m) = limits.as_object() {
        for (ep, v) in m {
            s.push_str(&format!(
                "\n  {:<14} {:>10}  ({})",
                ep,
                v["limit"].as_str().unwrap_or("?"),
                v["source"].as_str().unwrap_or("?")
            ));
        }
    }
    s
}

fn print(json_mode: bool, value: &Value, text: impl FnOnce() -> String) {
    if json_mode {
        println!(
            "{}",
            serde_json::to_string_pretty(value).unwrap_or_default()
        );
    } else {
        println!("{}", text());
    }
}

async fn admin(config: &Config, json_mode: bool, what: Admin) -> anyhow::Result<()> {
    let (svc, storage) = vto_server::open_admin(config).await?;
    match what {
        Admin::Account { cmd } => match cmd {
            AccountCmd::Create { name, balance } => {
                let amount = balance
                    .as_deref()
                    .map(|b| decimal(b, "--balance"))
                    .transpose()?;
                let account = svc.create_account(&name).await?;
                let bal = match amount {
                    Some(a) if a > Decimal::ZERO => {
                        svc.add_funds(&account.id, a, "initial balance").await?
                    }
                    Some(a) if a < Decimal::ZERO => bail!("--balance must not be negative"),
                    _ => storage.ledger.balance(&account.id).await?,
                };
                let v = json!({ "account": account, "balance": bal });
                print(json_mode, &v, || {
                    format!(
                        "created account {} ({}) with balance {} {}",
                        account.id, account.name, bal.balance, bal.currency
                    )
                });
            }
            AccountCmd::Credit {
                account,
                amount,
                memo,
            } => {
                let a = decimal(&amount, "amount")?;
                let bal = svc.add_funds(&AccountId(account), a, &memo).await?;
                let v = serde_json::to_value(&bal)?;
                print(json_mode, &v, || {
                    format!(
                        "{}: balance {} {} ({} held, {} available)",
                        bal.account_id, bal.balance, bal.currency, bal.held, bal.available
                    )
                });
            }
            AccountCmd::Show { account } => {
                let id = AccountId(account);
                let acct = storage
                    .ledger
                    .account(&id)
                    .await?
                    .with_context(|| format!("no account {id}"))?;
                let bal = storage.ledger.balance(&id).await?;
                let own = storage.limits.limits(&id).await?;
                let limits = limits_json(config, own.as_ref())?;
                let keys = storage.keys.list(Some(&id)).await?;
                let v = json!({ "account": acct, "balance": bal, "limits": limits, "keys": keys });
                print(json_mode, &v, || {
                    format!(
                        "{} ({})\nbalance {} {} ({} held, {} available)\nrate limits (burst/seconds):{}\nkeys: {} ({} active)",
                        acct.id,
                        acct.name,
                        bal.balance,
                        bal.currency,
                        bal.held,
                        bal.available,
                        limits_text(&limits),
                        keys.len(),
                        keys.iter().filter(|k| k.revoked_at.is_none()).count()
                    )
                });
            }
            AccountCmd::Limits {
                account,
                create,
                get,
                cancel,
                balance,
                reset,
            } => {
                let id = AccountId(account);
                if storage.ledger.account(&id).await?.is_none() {
                    bail!("no account {id}");
                }
                let given: Vec<(Endpoint, Quota)> = [
                    (Endpoint::CreateTryOn, create),
                    (Endpoint::GetTryOn, get),
                    (Endpoint::CancelTryOn, cancel),
                    (Endpoint::Balance, balance),
                ]
                .into_iter()
                .filter_map(|(e, q)| q.map(|q| (e, q)))
                .collect();
                if given.is_empty() && !reset {
                    bail!("give at least one of --create, --get, --cancel, --balance (BURST/SECS, e.g. 20/1), or --reset");
                }
                let mut own = if reset {
                    AccountLimits::new()
                } else {
                    storage.limits.limits(&id).await?.unwrap_or_default()
                };
                own.extend(given);
                if own.is_empty() {
                    storage.limits.reset_limits(&id).await?;
                } else {
                    storage.limits.set_limits(&id, &own).await?;
                }
                // Running servers notice within one refresh interval.
                std::thread::sleep(std::time::Duration::from_millis(
                    config.auth_refresh_ms + 50,
                ));
                let limits = limits_json(config, Some(&own))?;
                let v = json!({ "account_id": id, "limits": limits });
                print(json_mode, &v, || {
                    format!("{id}: rate limits (burst/seconds):{}", limits_text(&limits))
                });
            }
            AccountCmd::List => {
                let mut rows = Vec::new();
                for a in storage.ledger.accounts().await? {
                    let b = storage.ledger.balance(&a.id).await?;
                    rows.push((a, b));
                }
                let v = json!(rows
                    .iter()
                    .map(|(a, b)| json!({ "account": a, "balance": b }))
                    .collect::<Vec<_>>());
                print(json_mode, &v, || {
                    let mut s = format!(
                        "{:<28} {:<24} {:>12} {:>10} CUR",
                        "ID", "NAME", "BALANCE", "HELD"
                    );
                    for (a, b) in &rows {
                        s.push_str(&format!(
                            "\n{:<28} {:<24} {:>12} {:>10} {}",
                            a.id.as_str(),
                            a.name,
                            b.balance.to_string(),
                            b.held.to_string(),
                            b.currency
                        ));
                    }
                    s
                });
            }
        },
        Admin::Key { cmd } => match cmd {
            KeyCmd::Create { account, name } => {
                let key = svc
                    .create_api_key(&AccountId(account), &name)
                    .await
                    .map_err(|e| anyhow::anyhow!("{}", e.message))?;
                let v = json!({ "key": key.record, "secret": key.secret });
                print(json_mode, &v, || {
                    format!(
                        "created key {} for {}\nsecret (shown once, store it now): {}",
                        key.record.id, key.record.account_id, key.secret
                    )
                });
            }
            KeyCmd::List { account } => {
                let keys = storage.keys.list(account.map(AccountId).as_ref()).await?;
                let v = serde_json::to_value(&keys)?;
                print(json_mode, &v, || {
                    let mut s = format!(
                        "{:<24} {:<28} {:<12} {:<16} STATUS",
                        "ID", "ACCOUNT", "PREFIX", "NAME"
                    );
                    for k in &keys {
                        s.push_str(&format!(
                            "\n{:<24} {:<28} {:<12} {:<16} {}",
                            k.id.as_str(),
                            k.account_id.as_str(),
                            k.display_prefix,
                            k.name,
                            if k.revoked_at.is_some() {
                                "revoked"
                            } else {
                                "active"
                            }
                        ));
                    }
                    s
                });
            }
            KeyCmd::Revoke { key } => {
                let id = ApiKeyId(key);
                if !storage.keys.revoke(&id, svc.now()).await? {
                    bail!("no key {id}");
                }
                // Running servers empty their key cache within one refresh interval; return
                // only then, so "revoked" means refused everywhere.
                std::thread::sleep(std::time::Duration::from_millis(
                    config.auth_refresh_ms + 50,
                ));
                let v = json!({ "revoked": id });
                print(json_mode, &v, || format!("revoked {id}"));
            }
        },
        Admin::Webhooks { cmd } => match cmd {
            WebhooksCmd::Secret { account, rotate } => {
                let secrets = &storage.secrets;
                let id = AccountId(account);
                if storage.ledger.account(&id).await?.is_none() {
                    bail!("no account {id}");
                }
                let s = if rotate {
                    secrets.rotate(&id).await?
                } else {
                    secrets.secret(&id).await?
                };
                let v = json!({ "account_id": id, "secret": s.expose(), "rotated": rotate });
                print(json_mode, &v, || s.expose());
            }
            WebhooksCmd::List { account, limit } => {
                let acct = account.map(AccountId);
                let rows = storage.outbox.list(acct.as_ref(), limit).await?;
                let v = serde_json::to_value(&rows)?;
                print(json_mode, &v, || {
                    let mut out = format!(
                        "{:<38} {:<10} {:>8} {:>6}  URL",
                        "WEBHOOK ID", "STATUS", "ATTEMPTS", "LAST"
                    );
                    for d in &rows {
                        out.push_str(&format!(
                            "\n{:<38} {:<10} {:>8} {:>6}  {}",
                            d.id,
                            d.status.as_str(),
                            d.attempts,
                            d.last_status.map(|s| s.to_string()).unwrap_or("-".into()),
                            d.url
                        ));
                    }
                    out
                });
            }
            WebhooksCmd::Show { id } => {
                let Some(d) = storage.outbox.get(&id).await? else {
                    bail!("no webhook delivery {id}");
                };
                let attempts = storage.outbox.attempts(&id).await?;
                let v = json!({ "delivery": d, "attempts": attempts });
                print(json_mode, &v, || {
                    serde_json::to_string_pretty(&v).unwrap_or_default()
                });
            }
        },
        Admin::Jobs { cmd } => match cmd {
            JobsCmd::List {
                account,
                status,
                limit,
            } => {
                let status = status
                    .as_deref()
                    .map(JobStatus::from_str)
                    .transpose()
                    .map_err(|e| anyhow::anyhow!("--status: {e}"))?;
                let jobs = storage
                    .jobs
                    .list(&JobFilter {
                        account_id: account.map(AccountId),
                        status,
                        limit,
                    })
                    .await?;
                let v = json!(jobs.iter().map(job_json).collect::<Vec<_>>());
                print(json_mode, &v, || {
                    let mut s = format!(
                        "{:<38} {:<12} {:<12} {:<28} CREATED",
                        "REQUEST_ID", "CATEGORY", "STATUS", "ACCOUNT"
                    );
                    for j in &jobs {
                        s.push_str(&format!(
                            "\n{:<38} {:<12} {:<12} {:<28} {}",
                            j.id.to_string(),
                            j.category.as_str(),
                            j.status.as_str(),
                            j.account_id.as_str(),
                            j.created_at
                        ));
                    }
                    s
                });
            }
            JobsCmd::Show { request_id } => {
                let id: RequestId = request_id
                    .parse()
                    .map_err(|_| anyhow::anyhow!("{request_id:?} is not a request id"))?;
                let job = storage
                    .jobs
                    .get(id)
                    .await?
                    .with_context(|| format!("no job {id}"))?;
                let v = job_json(&job);
                print(json_mode, &v, || {
                    serde_json::to_string_pretty(&v).unwrap_or_default()
                });
            }
        },
    }
    Ok(())
}

/// A private `XDG_RUNTIME_DIR` for commands that open the GPU, when the environment has none.
///
/// Creating the wgpu instance makes the Vulkan driver's window-system code call
/// libwayland-client, which prints `error: XDG_RUNTIME_DIR is invalid or not set in the
/// environment.` (twice) to stderr when the variable is unset or not absolute — on a server or
/// in a container, on every successful `vto try-on` and `vto inspect`. With an empty private
/// directory (mode 0700, removed when `main` returns) it finds no display, quietly. Called
/// first in `main`, before any thread exists, so setting the variable races with nothing.
fn private_runtime_dir() -> Option<tempfile::TempDir> {
    if std::env::var_os("XDG_RUNTIME_DIR").is_some_and(|d| std::path::Path::new(&d).is_absolute()) {
        return None;
    }
    let dir = tempfile::Builder::new()
        .prefix("vto-runtime-")
        .tempdir()
        .ok()?;
    std::env::set_var("XDG_RUNTIME_DIR", dir.path());
    Some(dir)
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    if let Command::DefaultConfig = cli.command {
        print!("{}", vto_server::config::DEFAULT_TOML);
        return Ok(());
    }
    let _runtime_dir = match cli.command {
        Command::Serve { .. } | Command::TryOn(_) | Command::Inspect { .. } => {
            private_runtime_dir()
        }
        _ => None,
    };
    let mut env: Vec<(String, String)> = std::env::vars().collect();
    if let Some(d) = &cli.data_dir {
        env.push(("VTO_DATA_DIR".into(), d.display().to_string()));
    }
    let file = cli
        .config
        .clone()
        .or_else(|| std::env::var_os("VTO_CONFIG").map(PathBuf::from));
    let mut config = Config::load(file.as_deref(), env)?;
    if let Command::Serve {
        role: Some(role), ..
    } = &cli.command
    {
        config.role = role.parse()?;
    }
    let backend: vto_render::vision::VisionBackend = config.vision_backend.parse()?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    match cli.command {
        Command::Serve { .. } => {
            vto_server::init_tracing();
            let models = config.models_dir();
            if config.fetch_models && !vision::models_present(&models) {
                tracing::info!(models = %models.display(), "models missing: fetching them (vto models fetch; turn off with fetch_models = false)");
                if let Err(e) = vision::fetch(&models, false) {
                    tracing::warn!(error = %format!("{e:#}"), "fetching the models failed");
                }
            }
            let (engines, unavailable) = builtin::builtin_engines(
                &models,
                vto_render::engine::RendererConfig {
                    backend,
                    concurrency: match config.render_concurrency {
                        0 => vto_render::engine::default_concurrency(),
                        n => n,
                    },
                    max_photo_side: config.max_photo_side,
                    sync_wait: (config.sync_wait_secs > 0)
                        .then(|| std::time::Duration::from_secs(config.sync_wait_secs)),
                },
            );
            let samples: vto_server::playground::SampleSource = if config.playground {
                let models = models.clone();
                Box::new(move || builtin::playground_samples(&models))
            } else {
                Box::new(Vec::new)
            };
            rt.block_on(vto_server::serve(
                config,
                vto_server::Builtins {
                    engines,
                    unavailable,
                    samples,
                },
            ))
        }
        Command::Admin { what } => rt.block_on(admin(&config, cli.json, what)),
        Command::DefaultConfig => Ok(()),
        Command::Models {
            cmd: ModelsCmd::Fetch,
        } => vision::fetch(&config.models_dir(), cli.json),
        Command::TryOn(a) => vision::try_on(
            &a.category,
            &a.person,
            &a.product,
            &a.remove_own_eyewear,
            &a.remove_own_hat,
            a.product_kind.as_deref(),
            &a.output,
            &config.models_dir(),
            backend,
            cli.json,
        ),
        Command::Inspect { photo, overlay } => vision::inspect(
            &config.models_dir(),
            backend,
            &photo,
            overlay.as_deref(),
            cli.json,
        ),
        Command::Inpaint {
            photo,
            mask,
            guide,
            output,
        } => inpaint::inpaint(&photo, &mask, guide.as_deref(), &output, cli.json),
    }
}
