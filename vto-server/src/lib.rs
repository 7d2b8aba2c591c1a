//! # vto-server: the try-on API over HTTP
//!
//! A thin frontend over [`vto_core::TryOnService`]: warp routes ([`http`]) authenticate,
//! rate-limit and translate; the service decides; the records (jobs, the queue, accounts, the
//! ledger, API keys, webhook outbox) live where `[storage] url` says ([`storage::Storage`]:
//! one SQLite file `<data_dir>/vto.db` by default, `vto-sqlite`); result images are files in
//! `<data_dir>/results/`, linked with signed expiring URLs ([`SignedResults`]); asynchronous
//! jobs run on an in-process worker pool with leases that survive restarts. `role` splits
//! the API from the workers when several instances share one backend.
//!
//! ## Design decisions
//! - **Backends chosen in one place.** [`storage::Storage::open`] reads `[storage] url`;
//!   nothing else in the server or the CLI names a concrete backend.
//! - **Every reply is built in one place.** Errors become `{"error": {"code", "message",
//!   "param"?}}` through [`http::error_reply`]; unknown routes and wrong methods are answered
//!   by a final catch-all route (404 / 405 with `Allow`), so warp never invents a reply.
//! - **No renderer inside, no fake engines.** vto-server depends on no renderer (no wgpu):
//!   the binary composes. The `vto` binary (vto-cli) builds vto-render's built-in engines and
//!   passes them in as [`Builtins`] (engines plus the built-in categories it could not offer,
//!   with why and the fix); [`build_engines`] adds an external `HttpEngine` per
//!   `[engines.<category>]`. Any other category answers `501 engine_unavailable`, and every
//!   unavailable category is logged in one line at start and listed in `/readyz`
//!   ([`Unavailable`]). Tests register labelled test engines.
//! - **No store read to authenticate.** API keys and per-account limits are served from an
//!   [`AuthCache`] that empties itself when the store's auth generation moves (every
//!   revocation and limit change moves it in the same transaction); a background task reads
//!   that number every `auth_refresh_ms`. Job statuses are served the same way: from a cache
//!   of the job summaries this process read: its own writes remove their job's entry, and the
//!   whole cache empties within `auth_refresh_ms` of any commit by another connection
//!   (`vto_sqlite::summaries`), so `GET /v1/virtual-try-on/{id}` rarely touches SQLite.
//! - **One place per pluggable part**: [`make_fetcher`] (SSRF-guarded input fetching),
//!   [`build_engines`] (engines), [`make_webhook_sender`] and [`make_dispatcher`] (the
//!   persisted outbox and the Standard Webhooks dispatcher).
//!
//! ## Main types
//! - [`Config`] (defaults → TOML → `VTO_*`), [`Builtins`], [`start`] / [`start_with`] →
//!   [`RunningServer`], [`serve`]
//! - [`storage::Storage`], [`SignedResults`], [`metrics::Metrics`]

#![recursion_limit = "512"]

pub mod config;
pub mod http;
mod listener;
pub mod metrics;
pub mod openapi;
pub mod playground;
pub mod results;
pub mod storage;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use vto_core::http_engine::{HttpEngine, HttpEngineConfig};
use vto_core::http_fetch::{AddressPolicy, HttpFetcher};
use vto_core::http_webhook::HttpWebhookTransport;
use vto_core::outbox::{DispatchConfig, Dispatcher, Outbox, OutboxSender};
use vto_core::{
    AuthCache, Backends, Category, Engines, Fetcher, RandomIds, StorageHealth, SystemClock,
    TryOnService, WebhookSender,
};

pub use config::{Config, ConfigError, Role};
pub use results::SignedResults;
pub use storage::Storage;

/// The input fetcher: http(s) behind the SSRF guard (refusing loopback, private, link-local
/// and other internal addresses unless `[fetch] allow` lists them), plus `data:` URLs.
pub fn make_fetcher(config: &Config) -> anyhow::Result<Arc<dyn Fetcher>> {
    let fetcher = HttpFetcher::new(vto_core::http_fetch::FetchConfig {
        allow: config.fetch.allow.clone(),
        ..Default::default()
    })
    .context("building the input fetcher (fetch.allow)")?;
    Ok(Arc::new(fetcher))
}

/// A category this server cannot render, why, and what fixes it. The server logs all of
/// them in one line at start and lists them in `/readyz`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Unavailable {
    /// The category.
    pub category: Category,
    /// Why it has no engine (e.g. the models are missing, and where they were looked for).
    pub reason: String,
    /// The command or config change that fixes it.
    pub fix: String,
}

/// What the binary brings: the built-in engines it could build (the `vto` binary brings
/// vto-render's eyewear engine) and the built-in categories it could not offer, with why.
/// vto-server itself has no engine of its own and does not depend on any renderer.
pub struct Builtins {
    /// Built-in engines per category.
    pub engines: Engines,
    /// Built-in categories that are unavailable, with the reason and the fix.
    pub unavailable: Vec<Unavailable>,
    /// What the playground offers to try (a portrait, the generated sample products), made
    /// in the background once the server starts.
    pub samples: playground::SampleSource,
}

impl Default for Builtins {
    fn default() -> Self {
        Builtins {
            engines: Engines::default(),
            unavailable: Vec::new(),
            samples: Box::new(Vec::new),
        }
    }
}

impl std::fmt::Debug for Builtins {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Builtins")
            .field("engines", &self.engines)
            .field("unavailable", &self.unavailable)
            .finish_non_exhaustive()
    }
}

/// The engines per category: the caller's `builtin` engines, then one vto-core
/// [`HttpEngine`] per `[engines.<category>]` section (an external render service;
/// operator-configured, so private addresses are allowed), for categories without a
/// built-in engine, or for any category with `override_builtin = true`. A category without
/// an engine answers `501 engine_unavailable`.
pub fn build_engines(config: &Config, builtin: Engines) -> anyhow::Result<Engines> {
    let mut engines = builtin;
    for (cat, e) in &config.engines {
        let category: Category = cat
            .parse()
            .map_err(|_| anyhow::anyhow!("engines.{cat}: unknown category"))?;
        let cfg = HttpEngineConfig {
            url: e.url.clone(),
            timeout_ms: e.timeout_ms,
            connect_timeout_ms: e.connect_timeout_ms,
            headers: e
                .headers
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            max_concurrency: e.max_concurrency,
            max_retries: e.max_retries,
            max_response_bytes: usize::try_from(e.max_response_bytes).unwrap_or(usize::MAX),
        };
        let engine = Arc::new(
            HttpEngine::new(&format!("http:{cat}"), cfg)
                .with_context(|| format!("engines.{cat}"))?,
        );
        if e.override_builtin {
            engines.register(category, engine);
        } else {
            engines.register_if_absent(category, engine);
        }
    }
    Ok(engines)
}

/// Every category without an engine in `engines`: the binary's reason where it gave one
/// (`builtin`), else "no engine configured" with the config section that adds one.
pub fn unavailable_categories(engines: &Engines, builtin: &[Unavailable]) -> Vec<Unavailable> {
    Category::ALL
        .into_iter()
        .filter(|c| engines.get(*c).is_none())
        .map(|c| {
            builtin
                .iter()
                .find(|u| u.category == c)
                .cloned()
                .unwrap_or_else(|| Unavailable {
                    category: c,
                    reason: "no engine is configured for this category".into(),
                    fix: format!(
                        "add an external render service: [engines.{c}] kind = \"http\", url = \"…\" \
                         in the config file (see `vto default-config`)"
                    ),
                })
        })
        .collect()
}

/// Webhook delivery goes through the persisted outbox; the [`Dispatcher`] started by
/// [`start`] (in a process whose role runs workers) delivers it.
pub fn make_webhook_sender(outbox: Arc<dyn Outbox>) -> Arc<dyn WebhookSender> {
    Arc::new(OutboxSender::new(outbox))
}

/// The webhook dispatcher over the storage's outbox and secrets.
pub fn make_dispatcher(config: &Config, storage: &Storage) -> anyhow::Result<Dispatcher> {
    let policy = AddressPolicy::new(&config.fetch.allow).context("fetch.allow")?;
    let transport = HttpWebhookTransport::new(policy).context("building the webhook client")?;
    let ids: Arc<dyn vto_core::IdGen> = Arc::new(RandomIds);
    Ok(Dispatcher::new(
        storage.outbox.clone(),
        storage.secrets.clone(),
        Arc::new(transport),
        Arc::new(SystemClock),
        ids,
        DispatchConfig {
            schedule: config
                .webhooks
                .retry_schedule_secs
                .iter()
                .map(|s| Duration::from_secs(*s))
                .collect(),
            timeout: Duration::from_millis(config.webhooks.timeout_ms),
            ..Default::default()
        },
    ))
}

/// A started server: its address, service and store, and how to stop it.
pub struct RunningServer {
    /// The bound address (useful with port 0).
    pub addr: SocketAddr,
    /// The base URL clients see.
    pub base_url: String,
    /// The service (tests and embedders may call it directly).
    pub service: TryOnService,
    /// The records' backends.
    pub storage: Storage,
    /// The cache of API keys and account limits in front of the store.
    pub auth: Arc<AuthCache>,
    state: Arc<http::AppState>,
    stop: watch::Sender<bool>,
    server: JoinHandle<()>,
    workers: JoinHandle<()>,
}

impl std::fmt::Debug for RunningServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunningServer")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl RunningServer {
    /// Graceful stop: `/readyz` turns 503, the listener closes after in-flight requests, and
    /// workers finish the job in hand.
    pub async fn shutdown(self) {
        self.state.ready.store(false, Ordering::SeqCst);
        let _ = self.stop.send(true);
        let _ = self.server.await;
        let _ = self.workers.await;
    }

    /// Abrupt stop, as if the process died: tasks are dropped mid-work and claimed jobs keep
    /// their leases (for crash-recovery tests).
    pub fn kill(self) {
        self.server.abort();
        self.workers.abort();
    }
}

/// Opens the data dir, binds, and starts the HTTP server and the workers with `engines`
/// (production passes [`build_engines`]); every category without an engine is reported as
/// "no engine configured". See [`start_with`].
pub async fn start(config: Config, engines: Engines) -> anyhow::Result<RunningServer> {
    start_with(config, engines, &[], Box::new(Vec::new)).await
}

/// [`start`], with the reasons the binary gives for the built-in categories it could not
/// offer (`builtin`, from [`Builtins::unavailable`]) and the samples the playground offers
/// ([`Builtins::samples`]). Every category without an engine is logged in one line and
/// listed in `/readyz` with the fix.
pub async fn start_with(
    config: Config,
    engines: Engines,
    builtin: &[Unavailable],
    samples: playground::SampleSource,
) -> anyhow::Result<RunningServer> {
    config.validate()?;
    std::fs::create_dir_all(&config.data_dir)
        .with_context(|| format!("creating data_dir {}", config.data_dir.display()))?;
    let storage = Storage::open(&config, Arc::new(RandomIds)).await?;
    let listener = tokio::net::TcpListener::bind(config.listen_addr()?)
        .await
        .with_context(|| format!("binding {}", config.listen))?;
    let addr = listener.local_addr()?;
    let base_url = if config.public_base_url.trim().is_empty() {
        format!("http://{addr}")
    } else {
        config.base_url()?
    };
    let (results, signed) = storage::open_results(&config, &base_url).await?;
    let metrics = Arc::new(metrics::Metrics::default());
    let service_config = config.service_config()?;
    let openapi = serde_json::to_vec_pretty(&openapi::document(&service_config))?;
    let auth = Arc::new(AuthCache::new(
        storage.keys.clone(),
        storage.limits.clone(),
        storage.generation.clone(),
    ));
    auth.refresh()
        .await
        .context("reading the auth generation from the store")?;
    let backends = Backends {
        jobs: storage.jobs.clone(),
        queue: storage.queue.clone(),
        ledger: storage.ledger.clone(),
        keys: auth.clone(),
        idempotency: storage.idempotency.clone(),
        limiter: storage.limiter.clone(),
        limits: auth.clone(),
        results,
        fetcher: make_fetcher(&config)?,
        webhooks: make_webhook_sender(storage.outbox.clone()),
        clock: Arc::new(SystemClock),
        ids: Arc::new(RandomIds),
    };
    let service = TryOnService::new(
        backends,
        metrics::metered(&engines, &metrics),
        service_config,
    );
    let unavailable = unavailable_categories(&engines, builtin);
    let degraded_builtin = unavailable
        .iter()
        .any(|u| builtin.iter().any(|b| b.category == u.category));
    if !unavailable.is_empty() {
        let mut by_fix: Vec<(String, Vec<&str>)> = Vec::new();
        for u in &unavailable {
            let key = format!("{} → {}", u.reason, u.fix);
            match by_fix.iter_mut().find(|(k, _)| *k == key) {
                Some((_, cats)) => cats.push(u.category.as_str()),
                None => by_fix.push((key, vec![u.category.as_str()])),
            }
        }
        let summary = by_fix
            .iter()
            .map(|(k, cats)| format!("{}: {k}", cats.join(", ")))
            .collect::<Vec<_>>()
            .join("; ");
        if degraded_builtin {
            tracing::warn!("categories unavailable (501 engine_unavailable): {summary}");
        } else {
            tracing::info!("categories unavailable (501 engine_unavailable): {summary}");
        }
    }
    let state = Arc::new(http::AppState {
        service: service.clone(),
        storage: storage.clone(),
        serves_api: config.role.serves_api(),
        signed,
        metrics,
        body_limit: config.body_limit_bytes,
        base_url: base_url.clone(),
        openapi: openapi.into(),
        ready: AtomicBool::new(true),
        playground: config.playground.then(|| {
            playground::Playground::new(samples, service.config(), service.engines(), &unavailable)
        }),
        unavailable,
        degraded_builtin,
    });
    if state.playground.is_some() {
        let state = state.clone();
        tokio::spawn(async move {
            if let Some(p) = &state.playground {
                let started = std::time::Instant::now();
                let n = p.prepare().await;
                tracing::info!(
                    samples = n,
                    took_ms = started.elapsed().as_millis() as u64,
                    "playground samples ready"
                );
            }
        });
    }
    let (stop, stop_rx) = watch::channel(false);
    let workers = {
        let svc = service.clone();
        let rx = stop_rx.clone();
        let (n, poll) = (
            config.workers,
            Duration::from_millis(config.poll_interval_ms),
        );
        let dispatcher = make_dispatcher(&config, &storage)?;
        let dispatch_poll = Duration::from_millis(config.webhooks.poll_interval_ms);
        let drx = stop_rx.clone();
        let arx = stop_rx.clone();
        let cache = auth.clone();
        let health = storage.health.clone();
        let refresh = Duration::from_millis(config.auth_refresh_ms);
        let role = config.role;
        tokio::spawn(async move {
            // Workers, the webhook dispatcher and the auth cache refresher stop together; the
            // outbox keeps whatever is still pending for the next start. An API-only process
            // runs just the refresher: another instance renders the jobs and sends webhooks.
            let background = async {
                if role.runs_workers() {
                    tokio::join!(
                        svc.run_workers(n, poll, rx),
                        dispatcher.run(dispatch_poll, drx)
                    );
                }
            };
            tokio::join!(background, refresh_auth(cache, health, refresh, arx));
        })
    };
    let server = {
        let routes = warp::Filter::boxed(http::routes(state.clone()));
        tokio::spawn(listener::serve(
            listener,
            routes,
            stop_rx,
            state.metrics.clone(),
        ))
    };
    tracing::info!(
        %addr,
        %base_url,
        role = config.role.as_str(),
        storage = %storage.health.describe(),
        workers = if config.role.runs_workers() { config.workers } else { 0 },
        engines = ?service.engines(),
        "vto-server listening"
    );
    Ok(RunningServer {
        addr,
        base_url,
        service,
        storage,
        auth,
        state,
        stop,
        server,
        workers,
    })
}

/// Every `every` until `stop`: checks the store's auth generation (see [`AuthCache`]) and
/// lets the storage notice other processes' writes ([`StorageHealth::refresh`]: SQLite's
/// job-summary cache empties then).
async fn refresh_auth(
    cache: Arc<AuthCache>,
    health: Arc<dyn StorageHealth>,
    every: Duration,
    mut stop: watch::Receiver<bool>,
) {
    let mut failing = false;
    loop {
        tokio::select! {
            _ = tokio::time::sleep(every) => {}
            _ = stop.changed() => {}
        }
        if *stop.borrow() {
            return;
        }
        if let Err(e) = health.refresh().await {
            // The store reads through until the check works again.
            tracing::warn!(error = %e, "cannot check the storage for other processes' writes; job summaries are read through until it can");
        }
        match cache.refresh().await {
            Ok(_) if failing => {
                failing = false;
                tracing::info!("auth generation readable again; caching keys and limits");
            }
            Ok(_) => {}
            Err(e) if !failing => {
                failing = true;
                tracing::error!(error = %e, "cannot read the auth generation; keys and limits are read from the store on every request");
            }
            Err(_) => {}
        }
    }
}

/// Starts logging (`RUST_LOG`, default `info`; `VTO_LOG_FORMAT=json` for JSON lines).
pub fn init_tracing() {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let json = std::env::var("VTO_LOG_FORMAT").is_ok_and(|v| v == "json");
    let builder = tracing_subscriber::fmt().with_env_filter(filter);
    let _ = if json {
        builder.json().try_init()
    } else {
        builder.try_init()
    };
}

/// Runs the server until Ctrl-C / SIGTERM with the binary's built-in engines plus the
/// configured render services: what `vto serve` does.
pub async fn serve(config: Config, builtins: Builtins) -> anyhow::Result<()> {
    let engines = build_engines(&config, builtins.engines)?;
    let server = start_with(config, engines, &builtins.unavailable, builtins.samples).await?;
    shutdown_signal().await;
    tracing::info!("shutdown requested; finishing in-flight work");
    server.shutdown().await;
    Ok(())
}

/// Runs the server until Ctrl-C / SIGTERM with exactly the given engines (for embedders and
/// the benchmark).
pub async fn serve_with(config: Config, engines: Engines) -> anyhow::Result<()> {
    let server = start(config, engines).await?;
    shutdown_signal().await;
    tracing::info!("shutdown requested; finishing in-flight work");
    server.shutdown().await;
    Ok(())
}

async fn shutdown_signal() {
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(s) => s,
                Err(_) => {
                    let _ = tokio::signal::ctrl_c().await;
                    return;
                }
            };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// A service over the configured storage, with no engines, workers or HTTP: what `vto admin`
/// uses to create accounts and keys and read jobs while servers may be running (the backend
/// serializes the processes' writes). Everything it touches is a trait in [`Storage`].
pub async fn open_admin(config: &Config) -> anyhow::Result<(TryOnService, Storage)> {
    std::fs::create_dir_all(&config.data_dir)
        .with_context(|| format!("creating data_dir {}", config.data_dir.display()))?;
    let storage = Storage::open(config, Arc::new(RandomIds)).await?;
    let backends = Backends {
        jobs: storage.jobs.clone(),
        queue: storage.queue.clone(),
        ledger: storage.ledger.clone(),
        keys: storage.keys.clone(),
        idempotency: storage.idempotency.clone(),
        limiter: storage.limiter.clone(),
        limits: storage.limits.clone(),
        results: Arc::new(vto_core::MemoryResultStore::default()),
        fetcher: make_fetcher(config)?,
        webhooks: make_webhook_sender(storage.outbox.clone()),
        clock: Arc::new(SystemClock),
        ids: Arc::new(RandomIds),
    };
    let service = TryOnService::new(backends, Engines::new(), config.service_config()?);
    Ok((service, storage))
}
