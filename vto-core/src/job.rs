//! The job state machine: one status enum, one transition function, and the job record.
//!
//! ```text
//!              claim                complete
//!   queued ───────────▶ processing ───────────▶ success
//!     ▲  │                 │  │ fail / deadline passed
//!     │  │ cancel          │  └──────────────────▶ failed
//!     │  │ fail / deadline │ cancel
//!     │  ▼                 ▼
//!     │  canceled / failed canceled
//!     └─── lease expired (attempt + 1)
//! ```
//!
//! `success`, `failed` and `canceled` are terminal: no event changes them. A job is billed if
//! and only if it ends in `success` (the service captures the hold on that transition only).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::category::Category;
use crate::clock::Timestamp;
use crate::error::{ErrorBody, ErrorCode};
use crate::ids::{AccountId, RequestId};
use crate::money::Money;
use crate::request::ValidatedRequest;

/// Where a job is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum JobStatus {
    /// Waiting for a worker.
    Queued,
    /// A worker holds a lease and is rendering.
    Processing,
    /// Finished with an image; billed.
    Success,
    /// Finished without an image; not billed.
    Failed,
    /// Canceled by the client before it finished; not billed.
    Canceled,
}

impl JobStatus {
    /// All statuses.
    pub const ALL: [JobStatus; 5] = [
        JobStatus::Queued,
        JobStatus::Processing,
        JobStatus::Success,
        JobStatus::Failed,
        JobStatus::Canceled,
    ];

    /// The stored and wire form.
    pub fn as_str(self) -> &'static str {
        match self {
            JobStatus::Queued => "queued",
            JobStatus::Processing => "processing",
            JobStatus::Success => "success",
            JobStatus::Failed => "failed",
            JobStatus::Canceled => "canceled",
        }
    }

    /// Whether no event can change this status.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            JobStatus::Success | JobStatus::Failed | JobStatus::Canceled
        )
    }
}

impl fmt::Display for JobStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A string that is not a status.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown job status {0:?}")]
pub struct UnknownStatus(pub String);

impl FromStr for JobStatus {
    type Err = UnknownStatus;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        JobStatus::ALL
            .into_iter()
            .find(|st| st.as_str() == s)
            .ok_or_else(|| UnknownStatus(s.to_string()))
    }
}

/// What happens to a job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum JobEvent {
    /// A worker takes the job with a lease until the given instant.
    Claim {
        /// When the lease runs out unless the job finishes first.
        lease_until: Timestamp,
    },
    /// The worker holding `attempt` finished with an image.
    Complete {
        /// The attempt that rendered (stale attempts are refused).
        attempt: u32,
        /// Where the image is stored (a result-store key).
        result_key: String,
        /// Render time in milliseconds.
        processing_time_ms: u64,
    },
    /// The job could not be finished.
    Fail {
        /// The worker's attempt, or `None` when the service fails the job itself.
        attempt: Option<u32>,
        /// Why.
        error: ErrorBody,
    },
    /// The client canceled.
    Cancel,
    /// The worker's lease ran out (the worker died or stalled): back to the queue.
    LeaseExpired,
    /// The job's deadline passed: failed with `timed_out`.
    DeadlinePassed,
}

impl JobEvent {
    /// A short name for logs and errors.
    pub fn name(&self) -> &'static str {
        match self {
            JobEvent::Claim { .. } => "claim",
            JobEvent::Complete { .. } => "complete",
            JobEvent::Fail { .. } => "fail",
            JobEvent::Cancel => "cancel",
            JobEvent::LeaseExpired => "lease_expired",
            JobEvent::DeadlinePassed => "deadline_passed",
        }
    }
}

/// An event that does not apply to the job's current state.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TransitionError {
    /// The event is not allowed from this status.
    #[error("event {event} is not allowed in status {from}")]
    Illegal {
        /// The current status.
        from: JobStatus,
        /// The event's name.
        event: &'static str,
    },
    /// A worker whose lease was taken over tried to finish the job.
    #[error("attempt {got} is stale; the job is on attempt {current}")]
    StaleAttempt {
        /// The job's current attempt.
        current: u32,
        /// The attempt the event carried.
        got: u32,
    },
}

/// The state machine: the status after `event`, or why the event does not apply.
pub fn transition(from: JobStatus, event: &JobEvent) -> Result<JobStatus, TransitionError> {
    use JobStatus::*;
    let to = match (from, event) {
        (Queued, JobEvent::Claim { .. }) => Processing,
        (Processing, JobEvent::Complete { .. }) => Success,
        (Queued | Processing, JobEvent::Fail { .. }) => Failed,
        (Queued | Processing, JobEvent::Cancel) => Canceled,
        (Processing, JobEvent::LeaseExpired) => Queued,
        (Queued | Processing, JobEvent::DeadlinePassed) => Failed,
        _ => {
            return Err(TransitionError::Illegal {
                from,
                event: event.name(),
            })
        }
    };
    Ok(to)
}

/// A try-on request and everything that happened to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Job {
    /// The request id.
    pub id: RequestId,
    /// The owning account.
    pub account_id: AccountId,
    /// The category.
    pub category: Category,
    /// Where the job is.
    pub status: JobStatus,
    /// Starts at 1; each expired lease adds 1. A worker's result counts only for the current one.
    pub attempt: u32,
    /// The validated inputs and webhook.
    pub request: ValidatedRequest,
    /// The price held at submit and captured on success.
    pub price: Money,
    /// When the job was created.
    pub created_at: Timestamp,
    /// When it last changed.
    pub updated_at: Timestamp,
    /// When a worker last claimed it.
    pub started_at: Option<Timestamp>,
    /// When it reached a terminal state.
    pub finished_at: Option<Timestamp>,
    /// Until when the current worker's lease runs (processing only).
    pub lease_until: Option<Timestamp>,
    /// After this instant the job fails with `timed_out`.
    pub deadline: Option<Timestamp>,
    /// The result-store key of the image (success only).
    pub result_key: Option<String>,
    /// Render time (success only).
    pub processing_time_ms: Option<u64>,
    /// Why it failed (failed only).
    pub error: Option<ErrorBody>,
}

/// What a client sees of a job (the fields of its result object), without its inputs: what
/// the status endpoint reads. A job's inputs can be megabytes of `data:` URLs; its summary is a
/// few hundred bytes, so a store can keep it apart and a status read never touches the inputs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobSummary {
    /// The request id.
    pub id: RequestId,
    /// The owning account.
    pub account_id: AccountId,
    /// The category.
    pub category: Category,
    /// Where the job is.
    pub status: JobStatus,
    /// The price held at submit and captured on success.
    pub price: Money,
    /// The result-store key of the image (success only).
    pub result_key: Option<String>,
    /// Render time (success only).
    pub processing_time_ms: Option<u64>,
    /// Why it failed (failed only).
    pub error: Option<ErrorBody>,
}

impl From<&Job> for JobSummary {
    fn from(job: &Job) -> Self {
        JobSummary {
            id: job.id,
            account_id: job.account_id.clone(),
            category: job.category,
            status: job.status,
            price: job.price,
            result_key: job.result_key.clone(),
            processing_time_ms: job.processing_time_ms,
            error: job.error.clone(),
        }
    }
}

impl Job {
    /// A new queued job.
    pub fn new(
        id: RequestId,
        account_id: AccountId,
        request: ValidatedRequest,
        price: Money,
        now: Timestamp,
        deadline: Option<Timestamp>,
    ) -> Self {
        Self {
            id,
            account_id,
            category: request.category,
            status: JobStatus::Queued,
            attempt: 1,
            request,
            price,
            created_at: now,
            updated_at: now,
            started_at: None,
            finished_at: None,
            lease_until: None,
            deadline,
            result_key: None,
            processing_time_ms: None,
            error: None,
        }
    }

    /// Applies an event through [`transition`], updating the record's fields. On error the
    /// record is unchanged.
    pub fn apply(&mut self, event: &JobEvent, now: Timestamp) -> Result<(), TransitionError> {
        let check_attempt = |got: u32| {
            if got == self.attempt {
                Ok(())
            } else {
                Err(TransitionError::StaleAttempt {
                    current: self.attempt,
                    got,
                })
            }
        };
        let to = transition(self.status, event)?;
        match event {
            JobEvent::Complete { attempt, .. } => check_attempt(*attempt)?,
            JobEvent::Fail {
                attempt: Some(a), ..
            } => check_attempt(*a)?,
            _ => {}
        }
        match event {
            JobEvent::Claim { lease_until } => {
                self.started_at = Some(now);
                self.lease_until = Some(*lease_until);
            }
            JobEvent::Complete {
                result_key,
                processing_time_ms,
                ..
            } => {
                self.result_key = Some(result_key.clone());
                self.processing_time_ms = Some(*processing_time_ms);
            }
            JobEvent::Fail { error, .. } => self.error = Some(error.clone()),
            JobEvent::Cancel => {}
            JobEvent::LeaseExpired => self.attempt += 1,
            JobEvent::DeadlinePassed => {
                self.error = Some(ErrorBody::new(
                    ErrorCode::TimedOut,
                    "the job did not finish before its deadline",
                ))
            }
        }
        if to != JobStatus::Processing {
            self.lease_until = None;
        }
        if to.is_terminal() {
            self.finished_at = Some(now);
        }
        self.status = to;
        self.updated_at = now;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn fail() -> JobEvent {
        JobEvent::Fail {
            attempt: None,
            error: ErrorBody::new(ErrorCode::ProcessingFailed, "x"),
        }
    }

    #[test]
    fn the_happy_path_and_the_failure_paths() {
        use JobStatus::*;
        let claim = JobEvent::Claim {
            lease_until: Timestamp(1),
        };
        let done = JobEvent::Complete {
            attempt: 1,
            result_key: "k".into(),
            processing_time_ms: 5,
        };
        assert_eq!(transition(Queued, &claim), Ok(Processing));
        assert_eq!(transition(Processing, &done), Ok(Success));
        assert_eq!(transition(Processing, &fail()), Ok(Failed));
        assert_eq!(transition(Processing, &JobEvent::LeaseExpired), Ok(Queued));
        assert_eq!(transition(Queued, &JobEvent::DeadlinePassed), Ok(Failed));
        assert_eq!(transition(Queued, &JobEvent::Cancel), Ok(Canceled));
        assert!(transition(Queued, &done).is_err());
        assert!(transition(Queued, &JobEvent::LeaseExpired).is_err());
        assert!(transition(Processing, &claim).is_err());
    }

    #[test]
    fn status_strings_round_trip() {
        for s in JobStatus::ALL {
            assert_eq!(s.as_str().parse::<JobStatus>().unwrap(), s);
            assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
        }
        assert!("done".parse::<JobStatus>().is_err());
    }

    fn any_event() -> impl Strategy<Value = JobEvent> {
        prop_oneof![
            (0i64..1000).prop_map(|t| JobEvent::Claim {
                lease_until: Timestamp(t)
            }),
            (1u32..4).prop_map(|a| JobEvent::Complete {
                attempt: a,
                result_key: "k".into(),
                processing_time_ms: 1
            }),
            proptest::option::of(1u32..4).prop_map(|a| JobEvent::Fail {
                attempt: a,
                error: ErrorBody::new(ErrorCode::ProcessingFailed, "x")
            }),
            Just(JobEvent::Cancel),
            Just(JobEvent::LeaseExpired),
            Just(JobEvent::DeadlinePassed),
        ]
    }

    fn new_job() -> Job {
        use crate::request::InputRef;
        let url = InputRef::Url {
            url: "https://x/y".into(),
        };
        Job::new(
            RequestId(uuid::Uuid::from_u128(1)),
            AccountId::from("acct_1"),
            ValidatedRequest {
                category: Category::Shirt,
                person_image: url.clone(),
                product: url,
                webhook_url: None,
                options: Default::default(),
            },
            Money::zero(crate::money::Currency::USD),
            Timestamp(0),
            None,
        )
    }

    proptest! {
        /// Terminal states never change, illegal moves leave the record untouched, and the
        /// result key (what gets billed) exists if and only if the job ended in success.
        #[test]
        fn random_event_sequences_keep_the_invariants(events in proptest::collection::vec(any_event(), 0..40)) {
            let mut job = new_job();
            let mut terminal: Option<Job> = None;
            for (i, e) in events.iter().enumerate() {
                let before = job.clone();
                match job.apply(e, Timestamp(i as i64 + 1)) {
                    Ok(()) => prop_assert!(!before.status.is_terminal(), "terminal {:?} changed by {:?}", before.status, e),
                    Err(_) => prop_assert_eq!(&job, &before),
                }
                if let Some(t) = &terminal {
                    prop_assert_eq!(&job, t);
                }
                if job.status.is_terminal() && terminal.is_none() {
                    terminal = Some(job.clone());
                }
                prop_assert_eq!(job.result_key.is_some(), job.status == JobStatus::Success);
                prop_assert_eq!(job.lease_until.is_some(), job.status == JobStatus::Processing);
                prop_assert_eq!(job.finished_at.is_some(), job.status.is_terminal());
            }
        }
    }
}
