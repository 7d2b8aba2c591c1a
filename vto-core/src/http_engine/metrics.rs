//! An engine's counters: calls, failures by kind, attempts, retries, calls in flight and a
//! latency histogram ([`EngineMetrics`], Prometheus text for `/metrics`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde::Serialize;

/// Why a call failed, for metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// The inputs were refused before calling the service (not an image, too large…).
    BadInput,
    /// No connection, or it broke before an answer.
    Connect,
    /// No complete answer within the timeout.
    Timeout,
    /// An error status without a protocol error body.
    Status,
    /// The service answered with a protocol error (`{"error":{…}}`).
    Rejected,
    /// The answer was not a readable image.
    BadResponse,
    /// The answer was over `max_response_bytes`.
    TooLarge,
}

impl FailureKind {
    /// Every kind, in a fixed order.
    pub const ALL: [FailureKind; 7] = [
        FailureKind::BadInput,
        FailureKind::Connect,
        FailureKind::Timeout,
        FailureKind::Status,
        FailureKind::Rejected,
        FailureKind::BadResponse,
        FailureKind::TooLarge,
    ];

    /// The label value used in metrics.
    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::BadInput => "bad_input",
            FailureKind::Connect => "connect",
            FailureKind::Timeout => "timeout",
            FailureKind::Status => "status",
            FailureKind::Rejected => "rejected",
            FailureKind::BadResponse => "bad_response",
            FailureKind::TooLarge => "too_large",
        }
    }
}

/// Upper bounds (milliseconds) of the latency histogram's buckets; a last `+Inf` bucket
/// follows.
pub const LATENCY_BUCKETS_MS: [u64; 12] = [
    50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000, 120_000, 300_000,
];

/// A snapshot of one engine's counters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EngineMetrics {
    /// The engine's name.
    pub engine: String,
    /// Render calls started. `calls - successes - failures - in_flight` were abandoned
    /// half-way (the job's deadline or a cancel dropped them).
    pub calls: u64,
    /// Calls that produced an image.
    pub successes: u64,
    /// Failed calls by kind (every kind listed, zeros included).
    pub failures: Vec<(FailureKind, u64)>,
    /// HTTP requests sent, retries included.
    pub attempts: u64,
    /// Retries (attempts after the first of a call).
    pub retries: u64,
    /// Calls in progress now (waiting for a slot or talking to the service).
    pub in_flight: u64,
    /// Cumulative latency counts: `latency_buckets[i]` calls took at most
    /// `LATENCY_BUCKETS_MS[i]` ms; the last entry counts every finished call (`+Inf`).
    pub latency_buckets: Vec<u64>,
    /// Sum of finished calls' latencies in milliseconds.
    pub latency_sum_ms: u64,
}

impl EngineMetrics {
    /// Failed calls of one kind.
    pub fn failures_of(&self, kind: FailureKind) -> u64 {
        self.failures
            .iter()
            .find(|(k, _)| *k == kind)
            .map_or(0, |(_, n)| *n)
    }

    /// Failed calls of every kind.
    pub fn total_failures(&self) -> u64 {
        self.failures.iter().map(|(_, n)| n).sum()
    }

    /// The counters in Prometheus text format (samples only; the caller writes one `# TYPE`
    /// line per family when it combines several engines): `vto_engine_calls_total`,
    /// `vto_engine_successes_total`, `vto_engine_failures_total{kind}`,
    /// `vto_engine_attempts_total`, `vto_engine_retries_total`, `vto_engine_in_flight`,
    /// `vto_engine_latency_ms_bucket{le}`, `_sum`, `_count`, each labelled `engine`.
    pub fn to_prometheus(&self) -> String {
        use std::fmt::Write as _;
        let e = self.engine.replace('\\', "\\\\").replace('"', "\\\"");
        let mut s = String::new();
        let _ = writeln!(s, "vto_engine_calls_total{{engine=\"{e}\"}} {}", self.calls);
        let _ = writeln!(
            s,
            "vto_engine_successes_total{{engine=\"{e}\"}} {}",
            self.successes
        );
        for (kind, n) in &self.failures {
            let _ = writeln!(
                s,
                "vto_engine_failures_total{{engine=\"{e}\",kind=\"{}\"}} {n}",
                kind.as_str()
            );
        }
        let _ = writeln!(
            s,
            "vto_engine_attempts_total{{engine=\"{e}\"}} {}",
            self.attempts
        );
        let _ = writeln!(
            s,
            "vto_engine_retries_total{{engine=\"{e}\"}} {}",
            self.retries
        );
        let _ = writeln!(
            s,
            "vto_engine_in_flight{{engine=\"{e}\"}} {}",
            self.in_flight
        );
        for (i, n) in self.latency_buckets.iter().enumerate() {
            let le = LATENCY_BUCKETS_MS
                .get(i)
                .map_or("+Inf".to_string(), |b| b.to_string());
            let _ = writeln!(
                s,
                "vto_engine_latency_ms_bucket{{engine=\"{e}\",le=\"{le}\"}} {n}"
            );
        }
        let count = self.latency_buckets.last().copied().unwrap_or(0);
        let _ = writeln!(
            s,
            "vto_engine_latency_ms_sum{{engine=\"{e}\"}} {}",
            self.latency_sum_ms
        );
        let _ = writeln!(s, "vto_engine_latency_ms_count{{engine=\"{e}\"}} {count}");
        s
    }
}

#[derive(Debug, Default)]
pub(super) struct Counters {
    pub(super) calls: AtomicU64,
    pub(super) successes: AtomicU64,
    pub(super) failures: [AtomicU64; FailureKind::ALL.len()],
    pub(super) attempts: AtomicU64,
    pub(super) retries: AtomicU64,
    pub(super) in_flight: AtomicU64,
    /// Non-cumulative per-bucket counts, `+Inf` last.
    pub(super) buckets: [AtomicU64; LATENCY_BUCKETS_MS.len() + 1],
    pub(super) latency_sum_ms: AtomicU64,
}

impl Counters {
    pub(super) fn finish(&self, elapsed: Duration, outcome: Result<(), FailureKind>) {
        let ms = elapsed.as_millis() as u64;
        let i = LATENCY_BUCKETS_MS
            .iter()
            .position(|b| ms <= *b)
            .unwrap_or(LATENCY_BUCKETS_MS.len());
        self.buckets[i].fetch_add(1, Ordering::Relaxed);
        self.latency_sum_ms.fetch_add(ms, Ordering::Relaxed);
        match outcome {
            Ok(()) => self.successes.fetch_add(1, Ordering::Relaxed),
            Err(kind) => {
                let i = FailureKind::ALL
                    .iter()
                    .position(|k| *k == kind)
                    .expect("every kind is listed");
                self.failures[i].fetch_add(1, Ordering::Relaxed)
            }
        };
    }
}

/// Counts a call in flight until dropped, so a call abandoned mid-way (the job's deadline
/// dropped the future) does not stay "in flight" forever.
pub(super) struct InFlight<'a>(&'a AtomicU64);

impl<'a> InFlight<'a> {
    pub(super) fn enter(gauge: &'a AtomicU64) -> Self {
        gauge.fetch_add(1, Ordering::Relaxed);
        Self(gauge)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}
