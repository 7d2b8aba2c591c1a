//! `/metrics`: the server's series on the `prometheus-client` crate (the Prometheus
//! project's Rust client), exposed in the OpenMetrics text format, plus job counts read from
//! the store at scrape time.
//!
//! - `vto_http_requests_total{route, method, status}`
//! - `vto_http_request_duration_seconds` (histogram, by route)
//! - `vto_jobs{status}` — jobs in each state; `vto_queue_depth` — queued jobs
//! - `vto_render_duration_seconds{category, outcome}` — engine render time (histogram)
//! - `vto_http_client_connection_errors_total` — connections the client closed mid-request,
//!   reset or spoke no HTTP on (logged at `DEBUG` only)
//!
//! External render engines report their own counters as sample lines
//! ([`vto_core::Engine::prometheus`]); [`Metrics::encode`] appends them, grouped by family,
//! before the final `# EOF`.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

use vto_core::{Category, Engine, EngineError, Engines, JobStatus, RenderInput, Rendered};

/// The content type of [`Metrics::encode`]'s output.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

const REQUEST_BUCKETS: [f64; 10] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0, 5.0];
const RENDER_BUCKETS: [f64; 11] = [0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0];

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    route: &'static str,
    method: String,
    status: u16,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    route: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RenderLabels {
    category: &'static str,
    outcome: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StatusLabels {
    status: &'static str,
}

fn request_histogram() -> Histogram {
    Histogram::new(REQUEST_BUCKETS)
}

fn render_histogram() -> Histogram {
    Histogram::new(RENDER_BUCKETS)
}

/// The server's metrics, in one `prometheus-client` registry.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    durations: Family<RouteLabels, Histogram, fn() -> Histogram>,
    renders: Family<RenderLabels, Histogram, fn() -> Histogram>,
    jobs: Family<StatusLabels, Gauge>,
    queue_depth: Gauge,
    client_connection_errors: Counter,
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::default();
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register(
            "vto_http_requests",
            "HTTP requests answered, by route, method and status",
            requests.clone(),
        );
        let durations = Family::<RouteLabels, Histogram, fn() -> Histogram>::new_with_constructor(
            request_histogram,
        );
        registry.register(
            "vto_http_request_duration_seconds",
            "Time to answer a request, by route",
            durations.clone(),
        );
        let jobs = Family::<StatusLabels, Gauge>::default();
        registry.register("vto_jobs", "Try-on jobs in each state", jobs.clone());
        let queue_depth = Gauge::default();
        registry.register(
            "vto_queue_depth",
            "Asynchronous jobs waiting for a worker",
            queue_depth.clone(),
        );
        let renders = Family::<RenderLabels, Histogram, fn() -> Histogram>::new_with_constructor(
            render_histogram,
        );
        registry.register(
            "vto_render_duration_seconds",
            "Engine render time, by category and outcome",
            renders.clone(),
        );
        let client_connection_errors = Counter::default();
        registry.register(
            "vto_http_client_connection_errors",
            "Connections that ended on the client's side: closed mid-request, reset, or not HTTP",
            client_connection_errors.clone(),
        );
        Self {
            registry,
            requests,
            durations,
            renders,
            jobs,
            queue_depth,
            client_connection_errors,
        }
    }
}

impl Metrics {
    /// Counts one answered request.
    pub fn request(&self, route: &'static str, method: &str, status: u16, took: Duration) {
        self.requests
            .get_or_create(&RequestLabels {
                route,
                method: method.to_string(),
                status,
            })
            .inc();
        self.durations
            .get_or_create(&RouteLabels { route })
            .observe(took.as_secs_f64());
    }

    /// Counts one connection that ended in an error on the client's side.
    pub fn client_connection_error(&self) {
        self.client_connection_errors.inc();
    }

    /// Records one engine render.
    pub fn render(&self, category: Category, ok: bool, took: Duration) {
        self.renders
            .get_or_create(&RenderLabels {
                category: category.as_str(),
                outcome: if ok { "success" } else { "failed" },
            })
            .observe(took.as_secs_f64());
    }

    /// The exposition (OpenMetrics text, [`CONTENT_TYPE`]) with job counts from the store
    /// and the engines' own sample lines.
    pub fn encode(&self, jobs: &HashMap<JobStatus, u64>, engine_lines: &str) -> String {
        let count =
            |s: JobStatus| i64::try_from(jobs.get(&s).copied().unwrap_or(0)).unwrap_or(i64::MAX);
        for s in JobStatus::ALL {
            self.jobs
                .get_or_create(&StatusLabels { status: s.as_str() })
                .set(count(s));
        }
        self.queue_depth.set(count(JobStatus::Queued));
        let mut out = String::new();
        if prometheus_client::encoding::text::encode(&mut out, &self.registry).is_err() {
            out.clear();
        }
        let body = out.strip_suffix("# EOF\n").unwrap_or(&out).to_string();
        let mut out = body;
        out.push_str(&group_by_family(engine_lines));
        out.push_str("# EOF\n");
        out
    }
}

/// Sample lines reordered so each family's samples are contiguous (OpenMetrics requires it;
/// engines write theirs engine by engine), keeping the order within a family.
fn group_by_family(lines: &str) -> String {
    let mut families: Vec<(&str, Vec<&str>)> = Vec::new();
    for line in lines
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        let name = line.split(['{', ' ']).next().unwrap_or(line);
        match families.iter_mut().find(|(n, _)| *n == name) {
            Some((_, v)) => v.push(line),
            None => families.push((name, vec![line])),
        }
    }
    let mut out = String::new();
    for (_, v) in families {
        for l in v {
            out.push_str(l);
            out.push('\n');
        }
    }
    out
}

/// An engine wrapper that times every render into [`Metrics`].
struct Metered {
    inner: Arc<dyn Engine>,
    metrics: Arc<Metrics>,
}

#[async_trait]
impl Engine for Metered {
    fn name(&self) -> &str {
        self.inner.name()
    }

    async fn render(&self, input: RenderInput<'_>) -> Result<Rendered, EngineError> {
        let started = Instant::now();
        let r = self.inner.render(input).await;
        self.metrics
            .render(input.category, r.is_ok(), started.elapsed());
        r
    }

    async fn readiness(&self) -> Option<Result<(), String>> {
        self.inner.readiness().await
    }

    fn prometheus(&self) -> Option<String> {
        self.inner.prometheus()
    }
}

/// Wraps every engine so its renders are timed.
pub fn metered(engines: &Engines, metrics: &Arc<Metrics>) -> Engines {
    let mut out = Engines::new();
    for c in engines.categories() {
        if let Some(e) = engines.get(c) {
            out.register(
                c,
                Arc::new(Metered {
                    inner: e.clone(),
                    metrics: metrics.clone(),
                }),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exposition_has_counters_histograms_and_job_gauges() {
        let m = Metrics::default();
        m.request("get_try_on", "GET", 200, Duration::from_millis(3));
        m.request("get_try_on", "GET", 200, Duration::from_millis(30));
        m.render(Category::Shirt, true, Duration::from_millis(700));
        let text = m.encode(
            &HashMap::from([(JobStatus::Queued, 4)]),
            "vto_engine_calls_total{engine=\"a\"} 1\nvto_engine_in_flight{engine=\"a\"} 0\n\
             vto_engine_calls_total{engine=\"b\"} 2\n",
        );
        assert!(
            text.contains(
                "vto_http_requests_total{route=\"get_try_on\",method=\"GET\",status=\"200\"} 2"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "vto_http_request_duration_seconds_bucket{le=\"0.005\",route=\"get_try_on\"} 1"
            ),
            "{text}"
        );
        assert!(
            text.contains("vto_http_request_duration_seconds_count{route=\"get_try_on\"} 2"),
            "{text}"
        );
        assert!(text.contains("vto_queue_depth 4"), "{text}");
        assert!(text.contains("vto_jobs{status=\"success\"} 0"), "{text}");
        assert!(
            text.contains(
                "vto_render_duration_seconds_bucket{le=\"1.0\",category=\"shirt\",outcome=\"success\"} 1"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "vto_engine_calls_total{engine=\"a\"} 1\nvto_engine_calls_total{engine=\"b\"} 2\n"
            ),
            "an engine family's samples are contiguous: {text}"
        );
        assert!(text.ends_with("# EOF\n"), "{text}");
    }
}
