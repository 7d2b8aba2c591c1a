//! [`JobStore`] and [`JobQueue`] on PostgreSQL.

use std::collections::HashMap;
use std::str::FromStr;
use std::time::Duration;

use async_trait::async_trait;
use deadpool_postgres::GenericClient;
use tokio_postgres::types::ToSql;

use vto_core::{
    Job, JobEvent, JobFilter, JobQueue, JobStatus, JobStore, JobSummary, RequestId, StoreError,
    Timestamp,
};

use crate::{col, is_unique_violation, pg, PgError, PgStore, JOBS_CHANNEL};

impl From<PgError> for StoreError {
    fn from(e: PgError) -> Self {
        StoreError::Backend(e.0)
    }
}

/// A job from a row whose first two columns are `body` (the state) and `request` (see
/// [`vto_core::stored`]).
fn job_from_row(r: &tokio_postgres::Row) -> Result<Job, PgError> {
    let request: Option<&str> = col(r, 1)?;
    let request = request.ok_or_else(|| PgError::msg("corrupt job record: no request"))?;
    vto_core::stored::decode(col(r, 0)?, request).map_err(|e| PgError::ctx("corrupt job record", e))
}

/// A job's state (`body`) and summary: what every write stores. The request is written once,
/// by the insert.
fn encode(job: &Job) -> Result<(String, String), PgError> {
    let body =
        vto_core::stored::encode_state(job).map_err(|e| PgError::ctx("encoding a job", e))?;
    let summary = serde_json::to_string(&JobSummary::from(job))
        .map_err(|e| PgError::ctx("encoding a job summary", e))?;
    Ok((body, summary))
}

/// Locks a job row for the rest of the transaction and reads it.
async fn lock_job(c: &impl GenericClient, id: RequestId) -> Result<Option<Job>, PgError> {
    let st = c
        .prepare_cached("SELECT body, request FROM jobs WHERE id = $1 FOR UPDATE")
        .await
        .map_err(pg("preparing a job lock"))?;
    let row = c
        .query_opt(&st, &[&id.0])
        .await
        .map_err(pg("locking a job"))?;
    row.map(|r| job_from_row(&r)).transpose()
}

/// Writes a job back (inside the caller's transaction); a job that became `queued` is
/// announced on [`JOBS_CHANNEL`] at commit when `notify` is on.
async fn save_job(c: &impl GenericClient, job: &Job, notify: bool) -> Result<(), PgError> {
    let (body, summary) = encode(job)?;
    let st = c
        .prepare_cached(
            "UPDATE jobs SET status = $2, lease_until = $3, deadline = $4, body = $5,
             summary = $6 WHERE id = $1",
        )
        .await
        .map_err(pg("preparing a job update"))?;
    c.execute(
        &st,
        &[
            &job.id.0,
            &job.status.as_str(),
            &job.lease_until.map(|t| t.0),
            &job.deadline.map(|t| t.0),
            &body,
            &summary,
        ],
    )
    .await
    .map_err(pg("updating a job"))?;
    if notify && job.status == JobStatus::Queued {
        c.execute("SELECT pg_notify($1, '')", &[&JOBS_CHANNEL])
            .await
            .map_err(pg("notifying a queued job"))?;
    }
    Ok(())
}

fn parse_ids(rows: &[tokio_postgres::Row]) -> Result<Vec<RequestId>, PgError> {
    rows.iter().map(|r| Ok(RequestId(col(r, 0)?))).collect()
}

impl PgStore {
    async fn ids_before(&self, sql: &str, now: Timestamp) -> Result<Vec<RequestId>, StoreError> {
        let c = self.conn().await?;
        let st = c
            .prepare_cached(sql)
            .await
            .map_err(pg("preparing a job scan"))?;
        let rows = c.query(&st, &[&now.0]).await.map_err(pg("scanning jobs"))?;
        Ok(parse_ids(&rows)?)
    }
}

#[async_trait]
impl JobStore for PgStore {
    async fn insert(&self, job: &Job) -> Result<(), StoreError> {
        let (body, summary) = encode(job)?;
        let request = vto_core::stored::encode_request(job)
            .map_err(|e| PgError::ctx("encoding a job request", e))?;
        let c = self.conn().await?;
        // With notifications on, one statement inserts and announces a queued job (delivered
        // at its commit); without, a plain insert.
        let sql = if self.notifies() {
            "WITH ins AS (
                 INSERT INTO jobs (id, account_id, status, created_at, lease_until, deadline,
                                   body, summary, request)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING status)
             SELECT pg_notify('vto_jobs', '') FROM ins WHERE status = 'queued'"
        } else {
            "INSERT INTO jobs (id, account_id, status, created_at, lease_until, deadline,
                               body, summary, request)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
        };
        let st = c
            .prepare_cached(sql)
            .await
            .map_err(pg("preparing a job insert"))?;
        let params: [&(dyn ToSql + Sync); 9] = [
            &job.id.0,
            &job.account_id.as_str(),
            &job.status.as_str(),
            &job.created_at.0,
            &job.lease_until.map(|t| t.0),
            &job.deadline.map(|t| t.0),
            &body,
            &summary,
            &request,
        ];
        match c.query(&st, &params).await {
            Ok(_) => Ok(()),
            Err(e) if is_unique_violation(&e) => Err(StoreError::AlreadyExists(job.id)),
            Err(e) => Err(PgError::ctx("inserting a job", e).into()),
        }
    }

    async fn get(&self, id: RequestId) -> Result<Option<Job>, StoreError> {
        let c = self.conn().await?;
        let st = c
            .prepare_cached("SELECT body, request FROM jobs WHERE id = $1")
            .await
            .map_err(pg("preparing a job read"))?;
        let row = c
            .query_opt(&st, &[&id.0])
            .await
            .map_err(pg("reading a job"))?;
        Ok(row.map(|r| job_from_row(&r)).transpose()?)
    }

    async fn get_summary(&self, id: RequestId) -> Result<Option<JobSummary>, StoreError> {
        // Reads only the summary column: the body (with the inputs) stays in its TOAST table.
        let c = self.conn().await?;
        let st = c
            .prepare_cached("SELECT summary FROM jobs WHERE id = $1")
            .await
            .map_err(pg("preparing a summary read"))?;
        let row = c
            .query_opt(&st, &[&id.0])
            .await
            .map_err(pg("reading a job summary"))?;
        Ok(row
            .map(|r| {
                serde_json::from_str(col(&r, 0)?)
                    .map_err(|e| PgError::ctx("corrupt job summary", e))
            })
            .transpose()?)
    }

    async fn apply(
        &self,
        id: RequestId,
        event: &JobEvent,
        now: Timestamp,
    ) -> Result<Job, StoreError> {
        let mut c = self.conn().await?;
        let tx = c.transaction().await.map_err(pg("beginning apply"))?;
        let mut job = lock_job(&tx, id).await?.ok_or(StoreError::NotFound(id))?;
        job.apply(event, now)?;
        save_job(&tx, &job, self.notifies()).await?;
        tx.commit().await.map_err(pg("committing apply"))?;
        Ok(job)
    }

    async fn list(&self, filter: &JobFilter) -> Result<Vec<Job>, StoreError> {
        let limit = if filter.limit == 0 { 100 } else { filter.limit };
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let account = filter.account_id.as_ref().map(|a| a.as_str());
        let status = filter.status.map(|s| s.as_str());
        // One statement per filter shape, so each plan uses its index.
        let mut sql = String::from("SELECT body, request FROM jobs");
        let mut params: Vec<&(dyn ToSql + Sync)> = Vec::new();
        let mut clauses = Vec::new();
        if let Some(a) = &account {
            params.push(a);
            clauses.push(format!("account_id = ${}", params.len()));
        }
        if let Some(s) = &status {
            params.push(s);
            clauses.push(format!("status = ${}", params.len()));
        }
        if !clauses.is_empty() {
            sql.push_str(" WHERE ");
            sql.push_str(&clauses.join(" AND "));
        }
        params.push(&limit);
        sql.push_str(&format!(
            " ORDER BY created_at DESC, id DESC LIMIT ${}",
            params.len()
        ));
        let c = self.conn().await?;
        let st = c
            .prepare_cached(&sql)
            .await
            .map_err(pg("preparing a job list"))?;
        let rows = c.query(&st, &params).await.map_err(pg("listing jobs"))?;
        let mut out = Vec::with_capacity(rows.len());
        for r in &rows {
            out.push(job_from_row(r)?);
        }
        Ok(out)
    }

    async fn count_by_status(&self) -> Result<HashMap<JobStatus, u64>, StoreError> {
        let c = self.conn().await?;
        let rows = c
            .query("SELECT status, COUNT(*) FROM jobs GROUP BY status", &[])
            .await
            .map_err(pg("counting jobs"))?;
        let mut out = HashMap::new();
        for r in &rows {
            let s: &str = col(r, 0)?;
            let n: i64 = col(r, 1)?;
            let status =
                JobStatus::from_str(s).map_err(|e| PgError::ctx("corrupt job status", e))?;
            out.insert(status, u64::try_from(n).unwrap_or(0));
        }
        Ok(out)
    }
}

#[async_trait]
impl JobQueue for PgStore {
    async fn claim(&self, now: Timestamp, lease: Duration) -> Result<Option<Job>, StoreError> {
        let mut c = self.conn().await?;
        let tx = c.transaction().await.map_err(pg("beginning a claim"))?;
        // The head of the partial index `jobs_queue`, skipping rows other claimers hold.
        let st = tx
            .prepare_cached(
                "WITH next AS MATERIALIZED (
                     SELECT id FROM jobs WHERE status = 'queued'
                     ORDER BY created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED)
                 SELECT j.body, j.request FROM jobs j JOIN next ON j.id = next.id",
            )
            .await
            .map_err(pg("preparing a claim"))?;
        let Some(row) = tx.query_opt(&st, &[]).await.map_err(pg("claiming a job"))? else {
            return Ok(None);
        };
        let mut job = job_from_row(&row)?;
        job.apply(
            &JobEvent::Claim {
                lease_until: now.plus(lease),
            },
            now,
        )?;
        save_job(&tx, &job, false).await?;
        tx.commit().await.map_err(pg("committing a claim"))?;
        Ok(Some(job))
    }

    async fn extend_lease(
        &self,
        id: RequestId,
        attempt: u32,
        until: Timestamp,
    ) -> Result<bool, StoreError> {
        let mut c = self.conn().await?;
        let tx = c
            .transaction()
            .await
            .map_err(pg("beginning a lease extension"))?;
        match lock_job(&tx, id).await? {
            Some(mut j) if j.status == JobStatus::Processing && j.attempt == attempt => {
                j.lease_until = Some(until);
                save_job(&tx, &j, false).await?;
                tx.commit()
                    .await
                    .map_err(pg("committing a lease extension"))?;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    async fn expired_leases(&self, now: Timestamp) -> Result<Vec<RequestId>, StoreError> {
        self.ids_before(
            "SELECT id FROM jobs WHERE status = 'processing' AND lease_until < $1",
            now,
        )
        .await
    }

    async fn past_deadline(&self, now: Timestamp) -> Result<Vec<RequestId>, StoreError> {
        self.ids_before(
            "SELECT id FROM jobs WHERE status IN ('queued', 'processing') AND deadline < $1",
            now,
        )
        .await
    }

    async fn wait_for_work(&self, timeout: Duration) {
        if self.notifies() {
            // A notification or the timeout, whichever comes first: polling stays the fallback.
            let _ = tokio::time::timeout(timeout, self.listen().notified()).await;
        } else {
            tokio::time::sleep(timeout).await;
        }
    }
}
