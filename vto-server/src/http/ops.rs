//! The operator's routes: `/readyz` (storage, engines, unavailable categories) and
//! `/metrics`.

use std::sync::atomic::Ordering;

use tracing::error;
use vto_core::{ApiError, JobStatus};
use warp::http::StatusCode;
use warp::reply::Response;

use super::{error_reply, json_reply, set_header, AppState, Ctx};

pub(super) async fn readyz(ctx: Ctx) -> Response {
    if !ctx.ready.load(Ordering::SeqCst) {
        return json_reply(
            StatusCode::SERVICE_UNAVAILABLE,
            &serde_json::json!({"status": "shutting_down"}),
        );
    }
    match ctx.storage.health.migrations().await {
        Ok(v) if !v.is_empty() => {
            // Each engine with something to probe (external render services) is reported; an
            // unreachable one, or a built-in engine that could not start (models missing),
            // makes the server "degraded", still 200: the other categories keep working, so a
            // load balancer should not take the whole server out. Categories without an engine
            // are listed under "unavailable" with the reason and the fix.
            let engines = ctx.service.engines();
            let mut report = serde_json::Map::new();
            let mut degraded = ctx.degraded_builtin;
            for c in engines.categories() {
                if let Some(e) = engines.get(c) {
                    if let Some(r) = e.readiness().await {
                        degraded |= r.is_err();
                        report.insert(
                            c.as_str().into(),
                            match r {
                                Ok(()) => serde_json::json!({"engine": e.name(), "reachable": true}),
                                Err(m) => serde_json::json!({"engine": e.name(), "reachable": false, "error": m}),
                            },
                        );
                    }
                }
            }
            let unavailable: serde_json::Map<String, serde_json::Value> = ctx
                .unavailable
                .iter()
                .map(|u| {
                    (
                        u.category.as_str().to_string(),
                        serde_json::json!({"reason": u.reason, "fix": u.fix}),
                    )
                })
                .collect();
            json_reply(
                StatusCode::OK,
                &serde_json::json!({"status": if degraded { "degraded" } else { "ready" },
                                    "engines": report, "unavailable": unavailable}),
            )
        }
        Ok(_) | Err(_) => json_reply(
            StatusCode::SERVICE_UNAVAILABLE,
            &serde_json::json!({"status": "database_unavailable"}),
        ),
    }
}

pub(super) async fn metrics(ctx: Ctx) -> Response {
    let jobs = match ctx.store_counts().await {
        Ok(j) => j,
        Err(e) => {
            error!(error = %e, "metrics: counting jobs failed");
            return error_reply(&ApiError::internal());
        }
    };
    let engines = ctx.service.engines();
    let mut seen = std::collections::HashSet::new();
    let mut engine_lines = String::new();
    for c in engines.categories() {
        if let Some(e) = engines.get(c) {
            if let (true, Some(lines)) = (seen.insert(e.name().to_string()), e.prometheus()) {
                engine_lines.push_str(&lines);
            }
        }
    }
    let text = ctx.metrics.encode(&jobs, &engine_lines);
    let mut resp = Response::new(text.into());
    set_header(
        &mut resp,
        "content-type",
        crate::metrics::CONTENT_TYPE.into(),
    );
    resp
}

impl AppState {
    async fn store_counts(
        &self,
    ) -> Result<std::collections::HashMap<JobStatus, u64>, vto_core::StoreError> {
        self.storage.jobs.count_by_status().await
    }
}
