//! The result object: the body of GET, of a synchronous POST and of the webhook.

use serde::{Deserialize, Serialize};

use crate::category::Category;
use crate::error::ErrorBody;
use crate::ids::RequestId;
use crate::job::{Job, JobStatus, JobSummary};
use crate::money::Money;

/// `{ "image_url": … }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResultImage {
    /// Where to download the image.
    pub image_url: String,
}

/// The spec's result object. `result` and `cost` are always present (null until success);
/// `processing_time_ms` only on success; `error` only on failure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResultObject {
    /// The job id.
    pub request_id: RequestId,
    /// `queued`, `processing`, `success`, `failed` or `canceled`.
    pub status: JobStatus,
    /// The category.
    pub category: Category,
    /// The image on success, else null.
    pub result: Option<ResultImage>,
    /// The charge on success, else null.
    pub cost: Option<Money>,
    /// Render time on success.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub processing_time_ms: Option<u64>,
    /// Why it failed (failed and canceled jobs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorBody>,
}

/// The most a list of try-ons returns in one page.
pub const MAX_LIST_LIMIT: usize = 100;

/// A page of try-ons (`GET /v1/virtual-try-on`), newest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultList {
    /// Always `"list"`.
    pub object: String,
    /// The try-ons, newest first.
    pub data: Vec<ResultObject>,
    /// Whether older try-ons exist beyond this page.
    pub has_more: bool,
}

impl ResultObject {
    /// Builds the object from a job; `image_url` is the result's URL when the job succeeded.
    pub fn from_job(job: &Job, image_url: Option<String>) -> Self {
        Self::from_summary(&JobSummary::from(job), image_url)
    }

    /// Builds the object from a job's summary; `image_url` as in [`ResultObject::from_job`].
    pub fn from_summary(job: &JobSummary, image_url: Option<String>) -> Self {
        let success = job.status == JobStatus::Success;
        Self {
            request_id: job.id,
            status: job.status,
            category: job.category,
            result: image_url
                .filter(|_| success)
                .map(|image_url| ResultImage { image_url }),
            cost: success.then_some(job.price),
            processing_time_ms: job.processing_time_ms.filter(|_| success),
            error: match job.status {
                JobStatus::Failed => job.error.clone(),
                JobStatus::Canceled => Some(job.error.clone().unwrap_or_else(|| {
                    ErrorBody::new(crate::ErrorCode::Canceled, "the request was canceled")
                })),
                _ => None,
            },
        }
    }
}
