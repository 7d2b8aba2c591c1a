//! `/metrics` in the Prometheus text format (0.0.4), without a metrics crate: a few counters
//! and one histogram behind mutexes, plus job counts read from the store at scrape time.
//!
//! - `vto_http_requests_total{route, method, status}`
//! - `vto_http_request_duration_seconds` (histogram, by route)
//! - `vto_jobs{status}` — jobs in each state; `vto_queue_depth` — queued jobs
//! - `vto_render_duration_seconds{category, outcome}` — engine render time (histogram)

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;

use vto_core::{Category, Engine, EngineError, Engines, JobStatus, RenderInput, Rendered};

const REQUEST_BUCKETS: [f64; 10] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0, 5.0];
const RENDER_BUCKETS: [f64; 11] = [0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0];

#[derive(Debug, Clone, Default)]
struct Histogram {
    counts: Vec<u64>,
    sum: f64,
    count: u64,
}

impl Histogram {
    fn observe(&mut self, buckets: &[f64], secs: f64) {
        if self.counts.is_empty() {
            self.counts = vec![0; buckets.len()];
        }
        for (i, b) in buckets.iter().enumerate() {
            if secs <= *b {
                self.counts[i] += 1;
            }
        }
        self.sum += secs;
        self.count += 1;
    }

    fn write(&self, out: &mut String, name: &str, labels: &str, buckets: &[f64]) {
        let sep = if labels.is_empty() { "" } else { "," };
        for (i, b) in buckets.iter().enumerate() {
            let n = self.counts.get(i).copied().unwrap_or(0);
            let _ = writeln!(out, "{name}_bucket{{{labels}{sep}le=\"{b}\"}} {n}");
        }
        let _ = writeln!(
            out,
            "{name}_bucket{{{labels}{sep}le=\"+Inf\"}} {}",
            self.count
        );
        let _ = writeln!(out, "{name}_sum{{{labels}}} {}", self.sum);
        let _ = writeln!(out, "{name}_count{{{labels}}} {}", self.count);
    }
}

/// The server's metrics.
#[derive(Debug, Default)]
pub struct Metrics {
    requests: Mutex<BTreeMap<(&'static str, String, u16), u64>>,
    durations: Mutex<BTreeMap<&'static str, Histogram>>,
    renders: Mutex<BTreeMap<(Category, &'static str), Histogram>>,
}

impl Metrics {
    /// Counts one answered request.
    pub fn request(&self, route: &'static str, method: &str, status: u16, took: Duration) {
        if let Ok(mut m) = self.requests.lock() {
            *m.entry((route, method.to_string(), status)).or_insert(0) += 1;
        }
        if let Ok(mut m) = self.durations.lock() {
            m.entry(route)
                .or_default()
                .observe(&REQUEST_BUCKETS, took.as_secs_f64());
        }
    }

    /// Records one engine render.
    pub fn render(&self, category: Category, ok: bool, took: Duration) {
        if let Ok(mut m) = self.renders.lock() {
            m.entry((category, if ok { "success" } else { "failed" }))
                .or_default()
                .observe(&RENDER_BUCKETS, took.as_secs_f64());
        }
    }

    /// The exposition text, with job counts from the store.
    pub fn render_text(&self, jobs: &HashMap<JobStatus, u64>) -> String {
        let mut out = String::new();
        out.push_str(
            "# HELP vto_http_requests_total HTTP requests answered, by route, method and status.\n",
        );
        out.push_str("# TYPE vto_http_requests_total counter\n");
        if let Ok(m) = self.requests.lock() {
            for ((route, method, status), n) in m.iter() {
                let _ = writeln!(
                    out,
                    "vto_http_requests_total{{route=\"{route}\",method=\"{method}\",status=\"{status}\"}} {n}"
                );
            }
        }
        out.push_str(
            "# HELP vto_http_request_duration_seconds Time to answer a request, by route.\n",
        );
        out.push_str("# TYPE vto_http_request_duration_seconds histogram\n");
        if let Ok(m) = self.durations.lock() {
            for (route, h) in m.iter() {
                h.write(
                    &mut out,
                    "vto_http_request_duration_seconds",
                    &format!("route=\"{route}\""),
                    &REQUEST_BUCKETS,
                );
            }
        }
        out.push_str("# HELP vto_jobs Try-on jobs in each state.\n# TYPE vto_jobs gauge\n");
        for s in JobStatus::ALL {
            let _ = writeln!(
                out,
                "vto_jobs{{status=\"{s}\"}} {}",
                jobs.get(&s).copied().unwrap_or(0)
            );
        }
        out.push_str("# HELP vto_queue_depth Asynchronous jobs waiting for a worker.\n# TYPE vto_queue_depth gauge\n");
        let _ = writeln!(
            out,
            "vto_queue_depth {}",
            jobs.get(&JobStatus::Queued).copied().unwrap_or(0)
        );
        out.push_str(
            "# HELP vto_render_duration_seconds Engine render time, by category and outcome.\n",
        );
        out.push_str("# TYPE vto_render_duration_seconds histogram\n");
        if let Ok(m) = self.renders.lock() {
            for ((cat, outcome), h) in m.iter() {
                h.write(
                    &mut out,
                    "vto_render_duration_seconds",
                    &format!("category=\"{cat}\",outcome=\"{outcome}\""),
                    &RENDER_BUCKETS,
                );
            }
        }
        out
    }
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
        let text = m.render_text(&HashMap::from([(JobStatus::Queued, 4)]));
        assert!(text.contains(
            "vto_http_requests_total{route=\"get_try_on\",method=\"GET\",status=\"200\"} 2"
        ));
        assert!(text.contains(
            "vto_http_request_duration_seconds_bucket{route=\"get_try_on\",le=\"0.005\"} 1"
        ));
        assert!(text.contains("vto_http_request_duration_seconds_count{route=\"get_try_on\"} 2"));
        assert!(text.contains("vto_queue_depth 4"));
        assert!(text.contains("vto_jobs{status=\"success\"} 0"));
        assert!(text.contains(
            "vto_render_duration_seconds_bucket{category=\"shirt\",outcome=\"success\",le=\"1\"} 1"
        ));
    }
}
