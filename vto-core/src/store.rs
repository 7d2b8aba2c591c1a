//! Where jobs live ([`JobStore`]) and how workers take them ([`JobQueue`]).
//!
//! Every status change goes through [`JobStore::apply`], which runs the state machine
//! ([`crate::job::transition`]) atomically against the stored record, so two workers (or a
//! worker and a cancel) can never both move the same job. The queue is the set of `queued`
//! jobs; [`JobQueue::claim`] moves the oldest one to `processing` with a lease.

use std::collections::HashMap;
use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::backend::BackendError;
use crate::clock::Timestamp;
use crate::ids::{AccountId, RequestId};
use crate::job::{Job, JobEvent, JobStatus, JobSummary, TransitionError};

/// Job store and queue failures.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// No job with this id.
    #[error("job {0} not found")]
    NotFound(RequestId),
    /// A job with this id exists.
    #[error("job {0} already exists")]
    AlreadyExists(RequestId),
    /// The event does not apply to the stored job.
    #[error(transparent)]
    Transition(#[from] TransitionError),
    /// The storage backend failed.
    #[error("job store backend: {0}")]
    Backend(#[source] BackendError),
}

/// Which jobs to list.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobFilter {
    /// Only this account's jobs.
    pub account_id: Option<AccountId>,
    /// Only jobs in this status.
    pub status: Option<JobStatus>,
    /// At most this many (newest first); 0 means 100.
    pub limit: usize,
}

/// Stores job records.
#[async_trait]
pub trait JobStore: Send + Sync {
    /// Stores a new job (in whatever status it was built with).
    async fn insert(&self, job: &Job) -> Result<(), StoreError>;
    /// A job by id.
    async fn get(&self, id: RequestId) -> Result<Option<Job>, StoreError>;
    /// A job's summary by id: what the status endpoint shows. The default reads the whole
    /// job; a store that keeps summaries apart (or caches them) answers without the inputs.
    async fn get_summary(&self, id: RequestId) -> Result<Option<JobSummary>, StoreError> {
        Ok(self.get(id).await?.as_ref().map(JobSummary::from))
    }
    /// Applies an event atomically; returns the updated job.
    async fn apply(
        &self,
        id: RequestId,
        event: &JobEvent,
        now: Timestamp,
    ) -> Result<Job, StoreError>;
    /// Jobs matching a filter, newest first.
    async fn list(&self, filter: &JobFilter) -> Result<Vec<Job>, StoreError>;
    /// How many jobs are in each status.
    async fn count_by_status(&self) -> Result<HashMap<JobStatus, u64>, StoreError>;
}

/// Hands queued jobs to workers under leases.
#[async_trait]
pub trait JobQueue: Send + Sync {
    /// Moves the oldest queued job to `processing` with a lease of `lease`, and returns it.
    async fn claim(&self, now: Timestamp, lease: Duration) -> Result<Option<Job>, StoreError>;
    /// Extends the lease of a job still held by `attempt`; `false` when it is no longer held.
    async fn extend_lease(
        &self,
        id: RequestId,
        attempt: u32,
        until: Timestamp,
    ) -> Result<bool, StoreError>;
    /// Processing jobs whose lease ran out before `now`.
    async fn expired_leases(&self, now: Timestamp) -> Result<Vec<RequestId>, StoreError>;
    /// Unfinished jobs whose deadline is before `now`.
    async fn past_deadline(&self, now: Timestamp) -> Result<Vec<RequestId>, StoreError>;
    /// Waits until work may have arrived, at most `timeout`; an idle worker calls this between
    /// empty claims. The default just sleeps `timeout` (polling); a backend that hears about
    /// new jobs (PostgreSQL's `LISTEN/NOTIFY`) returns as soon as one is queued. A hint only:
    /// returning early or late never loses a job, the next claim decides.
    async fn wait_for_work(&self, timeout: Duration) {
        tokio::time::sleep(timeout).await;
    }
}

/// What a storage backend reports about itself, and the upkeep a server runs for it.
///
/// Servers ask [`StorageHealth::migrations`] for `/readyz` and call [`StorageHealth::refresh`]
/// on a timer; admin tools print [`StorageHealth::describe`].
#[async_trait]
pub trait StorageHealth: Send + Sync {
    /// Where the data lives, for logs and `/readyz`, without credentials
    /// (`sqlite:/var/lib/vto/vto.db`, `postgres://db.internal:5432/vto`).
    fn describe(&self) -> String;
    /// The schema migrations applied, in order; an error when the backend is unreachable.
    async fn migrations(&self) -> Result<Vec<i64>, StoreError>;
    /// Called every few hundred milliseconds by a server: a backend that caches reads in the
    /// process notices other processes' writes here. The default does nothing.
    async fn refresh(&self) -> Result<(), StoreError> {
        Ok(())
    }
}

/// The in-memory backends are always ready: no schema, nothing to refresh.
#[async_trait]
impl StorageHealth for MemoryJobStore {
    fn describe(&self) -> String {
        "memory".to_string()
    }

    async fn migrations(&self) -> Result<Vec<i64>, StoreError> {
        Ok(Vec::new())
    }
}

/// In-memory jobs: implements both [`JobStore`] and [`JobQueue`] over one mutex.
#[derive(Debug, Default)]
pub struct MemoryJobStore {
    jobs: std::sync::Mutex<HashMap<RequestId, Job>>,
}

impl MemoryJobStore {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, Job>> {
        self.jobs.lock().expect("job store lock")
    }
}

#[async_trait]
impl JobStore for MemoryJobStore {
    async fn insert(&self, job: &Job) -> Result<(), StoreError> {
        let mut jobs = self.lock();
        if jobs.contains_key(&job.id) {
            return Err(StoreError::AlreadyExists(job.id));
        }
        jobs.insert(job.id, job.clone());
        Ok(())
    }

    async fn get(&self, id: RequestId) -> Result<Option<Job>, StoreError> {
        Ok(self.lock().get(&id).cloned())
    }

    async fn apply(
        &self,
        id: RequestId,
        event: &JobEvent,
        now: Timestamp,
    ) -> Result<Job, StoreError> {
        let mut jobs = self.lock();
        let job = jobs.get_mut(&id).ok_or(StoreError::NotFound(id))?;
        let mut next = job.clone();
        next.apply(event, now)?;
        *job = next.clone();
        Ok(next)
    }

    async fn list(&self, filter: &JobFilter) -> Result<Vec<Job>, StoreError> {
        let jobs = self.lock();
        let mut v: Vec<Job> = jobs
            .values()
            .filter(|j| {
                filter
                    .account_id
                    .as_ref()
                    .is_none_or(|a| &j.account_id == a)
            })
            .filter(|j| filter.status.is_none_or(|s| j.status == s))
            .cloned()
            .collect();
        v.sort_by_key(|j| std::cmp::Reverse((j.created_at, j.id)));
        v.truncate(if filter.limit == 0 { 100 } else { filter.limit });
        Ok(v)
    }

    async fn count_by_status(&self) -> Result<HashMap<JobStatus, u64>, StoreError> {
        let mut out = HashMap::new();
        for j in self.lock().values() {
            *out.entry(j.status).or_insert(0) += 1;
        }
        Ok(out)
    }
}

#[async_trait]
impl JobQueue for MemoryJobStore {
    async fn claim(&self, now: Timestamp, lease: Duration) -> Result<Option<Job>, StoreError> {
        let mut jobs = self.lock();
        let next = jobs
            .values()
            .filter(|j| j.status == JobStatus::Queued)
            .min_by_key(|j| (j.created_at, j.id))
            .map(|j| j.id);
        let Some(id) = next else { return Ok(None) };
        let job = jobs.get_mut(&id).ok_or(StoreError::NotFound(id))?;
        job.apply(
            &JobEvent::Claim {
                lease_until: now.plus(lease),
            },
            now,
        )?;
        Ok(Some(job.clone()))
    }

    async fn extend_lease(
        &self,
        id: RequestId,
        attempt: u32,
        until: Timestamp,
    ) -> Result<bool, StoreError> {
        let mut jobs = self.lock();
        match jobs.get_mut(&id) {
            Some(j) if j.status == JobStatus::Processing && j.attempt == attempt => {
                j.lease_until = Some(until);
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    async fn expired_leases(&self, now: Timestamp) -> Result<Vec<RequestId>, StoreError> {
        Ok(self
            .lock()
            .values()
            .filter(|j| j.status == JobStatus::Processing && j.lease_until.is_some_and(|l| l < now))
            .map(|j| j.id)
            .collect())
    }

    async fn past_deadline(&self, now: Timestamp) -> Result<Vec<RequestId>, StoreError> {
        Ok(self
            .lock()
            .values()
            .filter(|j| !j.status.is_terminal() && j.deadline.is_some_and(|d| d < now))
            .map(|j| j.id)
            .collect())
    }
}
