//! The worker: claim a queued job, render it under its deadline, apply the outcome through
//! the state machine, then settle the hold and hand the webhook over ([`TryOnService::run_workers`]
//! runs the pool and the maintenance loop).

use std::time::{Duration, Instant};

use tracing::{error, info, warn};

use crate::category::Category;
use crate::engine::{EngineError, RenderInput};
use crate::error::{ErrorBody, ErrorCode};
use crate::ids::RequestId;
use crate::job::{Job, JobEvent, JobStatus};
use crate::result::ResultObject;
use crate::store::StoreError;
use crate::webhook::WebhookEvent;

use super::TryOnService;

impl TryOnService {
    /// Claims and processes one queued job; `None` when the queue is empty.
    pub async fn work_one(&self) -> Result<Option<RequestId>, StoreError> {
        let Some(job) = self.b.queue.claim(self.now(), self.config.lease).await? else {
            return Ok(None);
        };
        let id = job.id;
        self.process(job).await?;
        Ok(Some(id))
    }

    /// Renders a claimed (processing) job and settles it. A stale worker's outcome is dropped.
    pub(super) async fn process(&self, job: Job) -> Result<Job, StoreError> {
        let started = Instant::now();
        let outcome = match job.deadline {
            Some(deadline) => {
                let left = Duration::from_millis(deadline.since(self.now()));
                match tokio::time::timeout(left, self.render(&job)).await {
                    Ok(r) => r,
                    Err(_) => {
                        return self
                            .apply_and_finish(job.id, &JobEvent::DeadlinePassed)
                            .await;
                    }
                }
            }
            None => self.render(&job).await,
        };
        let event = match outcome {
            Ok(result_key) => JobEvent::Complete {
                attempt: job.attempt,
                result_key,
                processing_time_ms: started.elapsed().as_millis() as u64,
            },
            Err(error) => JobEvent::Fail {
                attempt: Some(job.attempt),
                error,
            },
        };
        match self.apply_and_finish(job.id, &event).await {
            Err(StoreError::Transition(e)) => {
                // Another attempt owns the job now (our lease expired), or it was canceled.
                warn!(request_id = %job.id, error = %e, "outcome of a stale attempt dropped");
                self.b
                    .jobs
                    .get(job.id)
                    .await?
                    .ok_or(StoreError::NotFound(job.id))
            }
            other => other,
        }
    }

    /// Fetches the inputs, runs the engine and stores the image; returns the result key.
    async fn render(&self, job: &Job) -> Result<String, ErrorBody> {
        let limits = &self.config.fetch_limits;
        let fetch = |input| async move {
            self.b
                .fetcher
                .fetch(input, limits)
                .await
                .map_err(|e| ErrorBody::new(e.code(), e.to_string()))
        };
        let person = fetch(&job.request.person_image).await?;
        let product = fetch(&job.request.product).await?;
        let engine = self.engines.get(job.category).ok_or_else(|| {
            ErrorBody::new(
                ErrorCode::ProcessingFailed,
                format!("no engine for category {}", job.category),
            )
        })?;
        let rendered = engine
            .render(RenderInput {
                request_id: job.id,
                category: job.category,
                person: &person,
                product: &product,
                options: job.request.options,
            })
            .await
            .map_err(|e| match e {
                EngineError::Rejected { code, message } => ErrorBody::new(code, message),
                EngineError::Internal(detail) => {
                    error!(request_id = %job.id, engine = engine.name(), %detail, "engine failed");
                    ErrorBody::new(
                        ErrorCode::ProcessingFailed,
                        "the try-on could not be generated",
                    )
                }
            })?;
        self.b
            .results
            .put(job.id, &rendered.image, &rendered.content_type)
            .await
            .map_err(|e| {
                error!(request_id = %job.id, error = %e, "result store failed");
                ErrorBody::new(
                    ErrorCode::ProcessingFailed,
                    "the result could not be stored",
                )
            })
    }

    pub(super) async fn apply_and_finish(
        &self,
        id: RequestId,
        event: &JobEvent,
    ) -> Result<Job, StoreError> {
        let job = self.b.jobs.apply(id, event, self.now()).await?;
        self.finish(&job).await?;
        Ok(job)
    }

    /// After a terminal transition: hand the webhook over, then capture or release the hold.
    ///
    /// The order matters for crash safety: an open hold on a finished job is what
    /// [`TryOnService::maintain`] looks for, and it calls this again, so a crash anywhere after
    /// the transition still ends with the hold settled and the webhook handed over (the outbox
    /// keeps one delivery per request id).
    pub(super) async fn finish(&self, job: &Job) -> Result<(), StoreError> {
        let now = self.now();
        if let (false, Some(url)) = (job.category.is_sync(), &job.request.webhook_url) {
            let image_url = match self.image_url(job.result_key.as_deref()).await {
                Ok(u) => u,
                Err(e) => {
                    error!(request_id = %job.id, error = %e, "no result URL for the webhook");
                    // As for a failed hand-over: the open hold makes maintenance retry.
                    return Ok(());
                }
            };
            let event = WebhookEvent {
                account_id: job.account_id.clone(),
                url: url.clone(),
                payload: ResultObject::from_job(job, image_url),
                at: now,
            };
            if let Err(e) = self.b.webhooks.send(event).await {
                error!(request_id = %job.id, error = %e, "webhook hand-over failed");
                // Leave the hold open so that maintenance retries the hand-over.
                return Ok(());
            }
        }
        let settled = match job.status {
            JobStatus::Success => self.b.ledger.capture(job.id, now).await,
            JobStatus::Failed | JobStatus::Canceled => self.b.ledger.release(job.id, now).await,
            _ => return Ok(()),
        };
        if let Err(e) = settled {
            // The job's outcome stands; reconciliation settles the hold later.
            error!(request_id = %job.id, error = %e, "settling the hold failed");
        }
        info!(request_id = %job.id, status = %job.status, "try-on finished");
        Ok(())
    }

    /// Runs `concurrency` workers and a maintenance loop until `shutdown` turns true. Workers
    /// finish the job in hand before they stop.
    pub async fn run_workers(
        &self,
        concurrency: usize,
        poll: Duration,
        mut shutdown: tokio::sync::watch::Receiver<bool>,
    ) {
        let mut tasks = tokio::task::JoinSet::new();
        for _ in 0..concurrency.max(1) {
            let svc = self.clone();
            let mut stop = shutdown.clone();
            tasks.spawn(async move {
                while !*stop.borrow() {
                    match svc.work_one().await {
                        Ok(Some(_)) => continue,
                        Ok(None) => {}
                        Err(e) => error!(error = %e, "worker step failed"),
                    }
                    tokio::select! {
                        _ = svc.b.queue.wait_for_work(poll) => {}
                        _ = stop.changed() => {}
                    }
                }
            });
        }
        let svc = self.clone();
        let mut stop = shutdown.clone();
        tasks.spawn(async move {
            while !*stop.borrow() {
                if let Err(e) = svc.maintain().await {
                    error!(error = %e, "maintenance failed");
                }
                tokio::select! {
                    _ = tokio::time::sleep(poll.max(Duration::from_millis(500))) => {}
                    _ = stop.changed() => {}
                }
            }
        });
        let _ = shutdown.changed().await;
        while tasks.join_next().await.is_some() {}
    }

    /// Whether the category has an engine here.
    pub fn supports(&self, category: Category) -> bool {
        self.engines.get(category).is_some()
    }
}
