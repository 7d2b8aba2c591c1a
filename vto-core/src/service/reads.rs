//! What a caller reads about their try-ons (one, or the latest), and cancelling one: every
//! lookup is scoped to the caller's account, another account's id is `not_found`.

use crate::error::{ApiError, ErrorCode};
use crate::ids::RequestId;
use crate::job::{Job, JobEvent, JobStatus};
use crate::result::{ResultList, ResultObject, MAX_LIST_LIMIT};
use crate::results::ResultStoreError;
use crate::store::StoreError;

use super::{backend, not_found, Caller, TryOnService};

impl TryOnService {
    /// The caller's job as a result object; another account's id is `not_found` too.
    pub async fn get(&self, caller: &Caller, request_id: &str) -> Result<ResultObject, ApiError> {
        let not_found = || not_found(request_id);
        let id: RequestId = request_id.parse().map_err(|_| not_found())?;
        // The summary, not the job: a status read never loads the inputs.
        match self.b.jobs.get_summary(id).await.map_err(backend)? {
            Some(job) if job.account_id == caller.account_id => {
                let url = self
                    .image_url(job.result_key.as_deref())
                    .await
                    .map_err(backend)?;
                Ok(ResultObject::from_summary(&job, url))
            }
            _ => Err(not_found()),
        }
    }

    /// The caller's account's most recent try-ons, newest first: at most `limit` (1–100;
    /// out-of-range values answer `invalid_request` with `param: "limit"`), optionally only
    /// those in `status`. `has_more` says whether older ones exist.
    pub async fn list(
        &self,
        caller: &Caller,
        limit: usize,
        status: Option<JobStatus>,
    ) -> Result<ResultList, ApiError> {
        if !(1..=MAX_LIST_LIMIT).contains(&limit) {
            let mut e = ApiError::new(
                ErrorCode::InvalidRequest,
                format!("limit must be between 1 and {MAX_LIST_LIMIT}"),
            );
            e.param = Some("limit".into());
            return Err(e);
        }
        let mut jobs = self
            .b
            .jobs
            .list(&crate::store::JobFilter {
                account_id: Some(caller.account_id.clone()),
                status,
                limit: limit + 1,
            })
            .await
            .map_err(backend)?;
        let has_more = jobs.len() > limit;
        jobs.truncate(limit);
        let mut data = Vec::with_capacity(jobs.len());
        for job in &jobs {
            data.push(self.result_object(job).await?);
        }
        Ok(ResultList {
            object: "list".into(),
            data,
            has_more,
        })
    }

    async fn find(&self, caller: &Caller, request_id: &str) -> Result<Job, ApiError> {
        let not_found = || not_found(request_id);
        let id: RequestId = request_id.parse().map_err(|_| not_found())?;
        match self.b.jobs.get(id).await.map_err(backend)? {
            Some(job) if job.account_id == caller.account_id => Ok(job),
            _ => Err(not_found()),
        }
    }

    /// Cancels a queued or processing job: `canceled`, hold released, webhook sent. A finished
    /// job answers `not_cancelable`; canceling a canceled job returns it unchanged.
    pub async fn cancel(
        &self,
        caller: &Caller,
        request_id: &str,
    ) -> Result<ResultObject, ApiError> {
        let job = self.find(caller, request_id).await?;
        if job.status == JobStatus::Canceled {
            return self.result_object(&job).await;
        }
        match self
            .b
            .jobs
            .apply(job.id, &JobEvent::Cancel, self.now())
            .await
        {
            Ok(done) => {
                self.finish(&done).await.map_err(backend)?;
                self.result_object(&done).await
            }
            Err(StoreError::Transition(_)) => Err(ApiError::new(
                ErrorCode::NotCancelable,
                format!(
                    "the request has already finished with status {}",
                    job.status
                ),
            )),
            Err(e) => Err(backend(e)),
        }
    }

    /// The result object of a job, with a fresh image URL on success. A result store that
    /// cannot sign the URL is a backend failure (logged, opaque `internal_error`).
    pub async fn result_object(&self, job: &Job) -> Result<ResultObject, ApiError> {
        let url = self
            .image_url(job.result_key.as_deref())
            .await
            .map_err(backend)?;
        Ok(ResultObject::from_job(job, url))
    }

    /// A fresh URL for a result key, if there is one.
    pub(super) async fn image_url(
        &self,
        key: Option<&str>,
    ) -> Result<Option<String>, ResultStoreError> {
        match key {
            Some(k) => self.b.results.url(k, self.now()).await.map(Some),
            None => Ok(None),
        }
    }
}
