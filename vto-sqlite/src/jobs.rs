//! [`JobStore`] and [`JobQueue`] on SQLite: a job's state as JSON `body` with its indexed
//! fields as columns, its request apart (`request`), its summary in `job_summaries`
//! ([`crate::summaries`]). Claims, cancels and lease changes read, transition and write the job
//! in one write transaction.

use std::collections::HashMap;
use std::str::FromStr;
use std::time::Duration;

use async_trait::async_trait;
use rusqlite::{params, Connection, OptionalExtension};

use vto_core::{
    Job, JobEvent, JobFilter, JobQueue, JobStatus, JobStore, JobSummary, RequestId, StoreError,
    Timestamp,
};

use crate::{db, is_constraint, summaries, DbError, SqliteStore};

/// A job from its `body` (the state) and `request` columns (see [`vto_core::stored`]).
fn job_from_row(body: &str, request: Option<&str>) -> Result<Job, DbError> {
    let request = request.ok_or_else(|| DbError::msg("corrupt job record: no request"))?;
    vto_core::stored::decode(body, request)
        .map_err(|e| DbError::msg(format!("corrupt job record: {e}")))
}

fn load_job(c: &Connection, id: RequestId) -> Result<Option<Job>, DbError> {
    let row: Option<(String, Option<String>)> = c
        .prepare_cached("SELECT body, request FROM jobs WHERE id = ?1")?
        .query_row([id.to_string()], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    row.map(|(body, request)| job_from_row(&body, request.as_deref()))
        .transpose()
}

/// Writes a job's state back; its request, written at insert, is not touched.
fn save_job(c: &Connection, job: &Job) -> Result<(), DbError> {
    let body =
        vto_core::stored::encode_state(job).map_err(|e| DbError::ctx("encoding a job", e))?;
    c.execute(
        "UPDATE jobs SET status = ?2, lease_until = ?3, deadline = ?4, body = ?5 WHERE id = ?1",
        params![
            job.id.to_string(),
            job.status.as_str(),
            job.lease_until.map(|t| t.0),
            job.deadline.map(|t| t.0),
            body
        ],
    )?;
    summaries::save(c, job)
}

fn ids_from(c: &Connection, sql: &str, now: Timestamp) -> Result<Vec<RequestId>, DbError> {
    let mut st = c.prepare_cached(sql)?;
    let rows = st.query_map([now.0], |r| r.get::<_, String>(0))?;
    let mut out = Vec::new();
    for id in rows {
        let id = id?;
        out.push(
            id.parse()
                .map_err(|_| DbError::msg(format!("corrupt job id {id:?}")))?,
        );
    }
    Ok(out)
}

#[async_trait]
impl JobStore for SqliteStore {
    async fn insert(&self, job: &Job) -> Result<(), StoreError> {
        let (job, id) = (job.clone(), job.id);
        let r = self
            .write(move |c| {
                let encoded = vto_core::stored::encode_state(&job)
                    .and_then(|body| Ok((body, vto_core::stored::encode_request(&job)?)));
                let (body, request) = encoded.map_err(|e| DbError::ctx("encoding a job", e))?;
                c.prepare_cached(
                "INSERT INTO jobs (id, account_id, status, created_at, lease_until, deadline, body,
                                   request)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )
            .and_then(|mut st| {
                st.execute(params![
                    job.id.to_string(),
                    job.account_id.as_str(),
                    job.status.as_str(),
                    job.created_at.0,
                    job.lease_until.map(|t| t.0),
                    job.deadline.map(|t| t.0),
                    body,
                    request
                ])
            })
            .map_err(|e| {
                if is_constraint(&e) {
                    StoreError::AlreadyExists(job.id)
                } else {
                    db(e).into()
                }
            })?;
                summaries::save(c, &job)?;
                Ok(())
            })
            .await;
        self.inner.summaries.forget(id);
        r
    }

    async fn get(&self, id: RequestId) -> Result<Option<Job>, StoreError> {
        self.point_read(move |c| Ok(load_job(c, id)?))
    }

    async fn get_summary(&self, id: RequestId) -> Result<Option<JobSummary>, StoreError> {
        // The status endpoint's one store read: the cache, else a primary-key lookup of the
        // summary row, run inline (the body, with the inputs, only for pre-0004 jobs).
        let epoch = match self.inner.summaries.get(id) {
            Ok(hit) => return Ok(Some(hit)),
            Err(epoch) => epoch,
        };
        let found = self.point_read(move |c| match summaries::load(c, id)? {
            Some(s) => Ok::<_, StoreError>(Some(s)),
            None => Ok(load_job(c, id)?.as_ref().map(JobSummary::from)),
        })?;
        if let Some(s) = &found {
            self.inner.summaries.put(s.clone(), epoch);
        }
        Ok(found)
    }

    async fn apply(
        &self,
        id: RequestId,
        event: &JobEvent,
        now: Timestamp,
    ) -> Result<Job, StoreError> {
        let event = event.clone();
        let r = self
            .write(move |c| {
                let mut job = load_job(c, id)?.ok_or(StoreError::NotFound(id))?;
                job.apply(&event, now)?;
                save_job(c, &job)?;
                Ok(job)
            })
            .await;
        self.inner.summaries.forget(id);
        r
    }

    async fn list(&self, filter: &JobFilter) -> Result<Vec<Job>, StoreError> {
        let filter = filter.clone();
        self.read(move |c| {
            let limit = if filter.limit == 0 { 100 } else { filter.limit } as i64;
            let mut st = c
                .prepare_cached(
                    "SELECT body, request FROM jobs
                     WHERE (?1 IS NULL OR account_id = ?1) AND (?2 IS NULL OR status = ?2)
                     ORDER BY created_at DESC, id DESC LIMIT ?3",
                )
                .map_err(db)?;
            let rows = st
                .query_map(
                    params![
                        filter.account_id.as_ref().map(|a| a.as_str().to_string()),
                        filter.status.map(|s| s.as_str()),
                        limit
                    ],
                    |r| Ok((r.get::<_, String>(0)?, r.get::<_, Option<String>>(1)?)),
                )
                .map_err(db)?;
            let mut out = Vec::new();
            for row in rows {
                let (body, request) = row.map_err(db)?;
                out.push(job_from_row(&body, request.as_deref())?);
            }
            Ok(out)
        })
        .await
    }

    async fn count_by_status(&self) -> Result<HashMap<JobStatus, u64>, StoreError> {
        self.read(|c| {
            let mut st = c
                .prepare_cached("SELECT status, COUNT(*) FROM jobs GROUP BY status")
                .map_err(db)?;
            let rows = st
                .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))
                .map_err(db)?;
            let mut out = HashMap::new();
            for row in rows {
                let (s, n) = row.map_err(db)?;
                let status =
                    JobStatus::from_str(&s).map_err(|e| DbError::ctx("corrupt job status", e))?;
                out.insert(status, n as u64);
            }
            Ok(out)
        })
        .await
    }
}

#[async_trait]
impl JobQueue for SqliteStore {
    async fn claim(&self, now: Timestamp, lease: Duration) -> Result<Option<Job>, StoreError> {
        let r = self
            .write(move |c| {
                let id: Option<String> = c
                .prepare_cached(
                    "SELECT id FROM jobs WHERE status = 'queued' ORDER BY created_at, id LIMIT 1",
                )
                .and_then(|mut st| st.query_row([], |r| r.get(0)).optional())
                .map_err(db)?;
                let Some(id) = id else { return Ok(None) };
                let id: RequestId = id
                    .parse()
                    .map_err(|_| DbError::msg(format!("corrupt job id {id:?}")))?;
                let mut job = load_job(c, id)?.ok_or(StoreError::NotFound(id))?;
                job.apply(
                    &JobEvent::Claim {
                        lease_until: now.plus(lease),
                    },
                    now,
                )?;
                save_job(c, &job)?;
                Ok(Some(job))
            })
            .await;
        match &r {
            Ok(Some(job)) => self.inner.summaries.forget(job.id),
            Ok(None) => {}
            Err(_) => self.inner.summaries.forget_all(),
        }
        r
    }

    async fn extend_lease(
        &self,
        id: RequestId,
        attempt: u32,
        until: Timestamp,
    ) -> Result<bool, StoreError> {
        let r = self
            .write(move |c| match load_job(c, id)? {
                Some(mut j) if j.status == JobStatus::Processing && j.attempt == attempt => {
                    j.lease_until = Some(until);
                    save_job(c, &j)?;
                    Ok(true)
                }
                _ => Ok(false),
            })
            .await;
        self.inner.summaries.forget(id);
        r
    }

    async fn expired_leases(&self, now: Timestamp) -> Result<Vec<RequestId>, StoreError> {
        self.read(move |c| {
            Ok(ids_from(
                c,
                "SELECT id FROM jobs WHERE status = 'processing' AND lease_until < ?1",
                now,
            )?)
        })
        .await
    }

    async fn past_deadline(&self, now: Timestamp) -> Result<Vec<RequestId>, StoreError> {
        self.read(move |c| {
            Ok(ids_from(
                c,
                "SELECT id FROM jobs WHERE status IN ('queued', 'processing') AND deadline < ?1",
                now,
            )?)
        })
        .await
    }
}
