//! How a store keeps a job: its **state**, a few hundred bytes rewritten on every transition,
//! apart from its **request**, which holds the inputs (up to megabytes of `data:` URLs) and is
//! written once, at insert.
//!
//! Without the split, every claim, lease extension and finish re-encoded and rewrote the
//! inputs. The SQLite and PostgreSQL stores keep the two parts in two columns, and read a
//! job back with [`decode`] of both.

use serde::{Deserialize, Serialize};

use crate::clock::Timestamp;
use crate::error::ErrorBody;
use crate::ids::{AccountId, RequestId};
use crate::job::{Job, JobStatus};
use crate::money::Money;
use crate::request::ValidatedRequest;
use crate::Category;

/// Every field of [`Job`] except its request, under the same names (a state record is a job
/// record without `request`).
#[derive(Serialize, Deserialize)]
struct State {
    id: RequestId,
    account_id: AccountId,
    category: Category,
    status: JobStatus,
    attempt: u32,
    price: Money,
    created_at: Timestamp,
    updated_at: Timestamp,
    started_at: Option<Timestamp>,
    finished_at: Option<Timestamp>,
    lease_until: Option<Timestamp>,
    deadline: Option<Timestamp>,
    result_key: Option<String>,
    processing_time_ms: Option<u64>,
    error: Option<ErrorBody>,
}

/// The job's state as JSON: everything but the request.
pub fn encode_state(job: &Job) -> Result<String, serde_json::Error> {
    let Job {
        id,
        account_id,
        category,
        status,
        attempt,
        request: _,
        price,
        created_at,
        updated_at,
        started_at,
        finished_at,
        lease_until,
        deadline,
        result_key,
        processing_time_ms,
        error,
    } = job;
    serde_json::to_string(&State {
        id: *id,
        account_id: account_id.clone(),
        category: *category,
        status: *status,
        attempt: *attempt,
        price: *price,
        created_at: *created_at,
        updated_at: *updated_at,
        started_at: *started_at,
        finished_at: *finished_at,
        lease_until: *lease_until,
        deadline: *deadline,
        result_key: result_key.clone(),
        processing_time_ms: *processing_time_ms,
        error: error.clone(),
    })
}

/// The job's request (inputs and webhook) as JSON.
pub fn encode_request(job: &Job) -> Result<String, serde_json::Error> {
    serde_json::to_string(&job.request)
}

/// The job from its two stored parts. A state that still holds its request (a record written
/// whole, before the split) is read as well: its own request is ignored for `request`.
pub fn decode(state: &str, request: &str) -> Result<Job, serde_json::Error> {
    let s: State = serde_json::from_str(state)?;
    let request: ValidatedRequest = serde_json::from_str(request)?;
    Ok(Job {
        id: s.id,
        account_id: s.account_id,
        category: s.category,
        status: s.status,
        attempt: s.attempt,
        request,
        price: s.price,
        created_at: s.created_at,
        updated_at: s.updated_at,
        started_at: s.started_at,
        finished_at: s.finished_at,
        lease_until: s.lease_until,
        deadline: s.deadline,
        result_key: s.result_key,
        processing_time_ms: s.processing_time_ms,
        error: s.error,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conformance::sample_job;
    use crate::job::JobEvent;

    #[test]
    fn a_job_survives_the_split_in_every_state() {
        let mut job = sample_job(7, "acct_a", Category::Dress, 0);
        let request = encode_request(&job).expect("request");
        let mut seen = vec![job.clone()];
        job.apply(
            &JobEvent::Claim {
                lease_until: Timestamp(5_000),
            },
            Timestamp(1_000),
        )
        .expect("claim");
        seen.push(job.clone());
        job.apply(
            &JobEvent::Fail {
                attempt: Some(1),
                error: ErrorBody::new(crate::ErrorCode::ProcessingFailed, "no body"),
            },
            Timestamp(2_000),
        )
        .expect("fail");
        seen.push(job.clone());
        for j in seen {
            let state = encode_state(&j).expect("state");
            assert!(!state.contains("\"request\""), "{state}");
            assert_eq!(decode(&state, &request).expect("decode"), j);
        }
    }

    #[test]
    fn a_whole_record_written_before_the_split_still_reads() {
        let job = sample_job(8, "acct_b", Category::Shirt, 10);
        let whole = serde_json::to_string(&job).expect("whole");
        let request = encode_request(&job).expect("request");
        assert_eq!(decode(&whole, &request).expect("decode"), job);
    }

    #[test]
    fn the_state_does_not_grow_with_the_inputs() {
        let mut job = sample_job(9, "acct_c", Category::Shirt, 0);
        let small = encode_state(&job).expect("state").len();
        job.request.person_image = crate::InputRef::Data {
            media_type: "image/jpeg".into(),
            bytes: vec![7; 1 << 20],
        };
        assert_eq!(encode_state(&job).expect("state").len(), small);
        assert!(encode_request(&job).expect("request").len() > 1 << 20);
    }
}
