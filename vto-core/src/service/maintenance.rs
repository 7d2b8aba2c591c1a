//! Maintenance: re-queue jobs whose worker died, fail jobs past their deadline or out of
//! attempts, and settle holds a crash left open.

use tracing::warn;

use crate::billing::HoldStatus;
use crate::clock::Timestamp;
use crate::error::{ErrorBody, ErrorCode};
use crate::job::{JobEvent, TransitionError};
use crate::store::StoreError;

use super::{Maintenance, TryOnService};
use crate::backend::BackendError;

impl TryOnService {
    /// Re-queues jobs whose worker died, fails jobs past their deadline or out of attempts,
    /// and settles holds left open by a crash (capture for `success`, release otherwise).
    pub async fn maintain(&self) -> Result<Maintenance, StoreError> {
        let mut m = Maintenance::default();
        let now = self.now();
        for id in self.b.queue.past_deadline(now).await? {
            match self.apply_and_finish(id, &JobEvent::DeadlinePassed).await {
                Ok(_) => m.timed_out += 1,
                Err(StoreError::Transition(_)) => {}
                Err(e) => return Err(e),
            }
        }
        for id in self.b.queue.expired_leases(now).await? {
            let Some(job) = self.b.jobs.get(id).await? else {
                continue;
            };
            let result = if job.attempt >= self.config.max_attempts {
                let error = ErrorBody::new(
                    ErrorCode::ProcessingFailed,
                    format!("processing was interrupted {} times", job.attempt),
                );
                self.apply_and_finish(
                    id,
                    &JobEvent::Fail {
                        attempt: Some(job.attempt),
                        error,
                    },
                )
                .await
                .map(|_| m.abandoned += 1)
            } else {
                self.b
                    .jobs
                    .apply(id, &JobEvent::LeaseExpired, now)
                    .await
                    .map(|_| m.requeued += 1)
            };
            match result {
                Ok(())
                | Err(StoreError::Transition(TransitionError::Illegal { .. }))
                | Err(StoreError::Transition(TransitionError::StaleAttempt { .. })) => {}
                Err(e) => return Err(e),
            }
        }
        m.reconciled = self.reconcile_holds(now).await?;
        let cutoff = Timestamp(now.millis() - crate::idempotency::RETENTION.as_millis() as i64);
        if let Err(e) = self.b.idempotency.purge_before(cutoff).await {
            warn!(error = %e, "purging idempotency keys failed");
        }
        Ok(m)
    }

    async fn reconcile_holds(&self, now: Timestamp) -> Result<usize, StoreError> {
        let holds = self
            .b
            .ledger
            .open_holds()
            .await
            .map_err(|e| StoreError::Backend(BackendError::new("listing open holds", e)))?;
        let mut n = 0;
        let grace = self.config.orphan_hold_grace.as_millis() as u64;
        for hold in holds {
            debug_assert_eq!(hold.status, HoldStatus::Open);
            // Open holds of jobs still in flight are normal; only a hold older than the grace
            // period can be a crash's leftover. Holds come oldest first, so stop at the first
            // young one: a queue backlog must not cost a job read per queued job every pass.
            if now.since(hold.created_at) <= grace {
                break;
            }
            match self.b.jobs.get(hold.request_id).await? {
                // A crash between a job's end and its settlement: finish it again (webhook
                // hand-over, then capture or release).
                Some(job) if job.status.is_terminal() => {
                    self.finish(&job).await?;
                    n += 1;
                }
                Some(_) => {}
                // A hold whose job was never written.
                None => match self.b.ledger.release(hold.request_id, now).await {
                    Ok(_) => n += 1,
                    Err(e) => warn!(request_id = %hold.request_id, error = %e, "reconcile failed"),
                },
            }
        }
        Ok(n)
    }
}
