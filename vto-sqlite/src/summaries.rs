//! Job summaries for the status endpoint: stored apart from the jobs' bodies (migration 0004)
//! and cached in memory.
//!
//! `GET /v1/virtual-try-on/{id}` is the route clients hammer while they wait. It needs a job's
//! summary ([`JobSummary`]: status, category, price, result key, error), never its inputs. So
//! every job write also writes the summary row, in the same transaction, and a status read
//! loads only that row; and this process keeps the summaries it has read in a bounded cache:
//!
//! - every job write this process makes removes that job's entry **after** its commit, and
//!   moves the cache's epoch; a read that raced with a write (it began before the write's
//!   removal) does not put what it read into the cache, because the epoch moved under it. So
//!   this process always reads its own writes;
//! - writes by other processes (`vto admin`, other instances on the same file) are noticed by
//!   [`SummaryCache::notice_data_version`], which the server calls every `auth_refresh_ms`
//!   with SQLite's `PRAGMA data_version` from a dedicated connection: when it moved (any
//!   other connection's commit moves it, this process's writer's too), the cache empties. A
//!   status changed by another process is seen at most that long after its commit.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use rusqlite::{Connection, OptionalExtension};
use vto_core::{Job, JobSummary, RequestId};

use super::DbError;

/// The most summaries the cache keeps (about 300 bytes each); the oldest cached go first.
pub const CAPACITY: usize = 20_000;

/// Writes `job`'s summary row (insert or replace), in the caller's transaction.
pub(crate) fn save(c: &Connection, job: &Job) -> Result<(), DbError> {
    let summary = serde_json::to_string(&JobSummary::from(job))
        .map_err(|e| DbError::ctx("encoding a job summary", e))?;
    c.prepare_cached("INSERT OR REPLACE INTO job_summaries (id, summary) VALUES (?1, ?2)")?
        .execute([job.id.to_string(), summary])?;
    Ok(())
}

/// Reads a job's summary row; `Ok(None)` when there is none (no such job, or a job stored
/// before migration 0004: the caller falls back to the body).
pub(crate) fn load(c: &Connection, id: RequestId) -> Result<Option<JobSummary>, DbError> {
    let text: Option<String> = c
        .prepare_cached("SELECT summary FROM job_summaries WHERE id = ?1")?
        .query_row([id.to_string()], |r| r.get(0))
        .optional()?;
    text.map(|t| {
        serde_json::from_str(&t).map_err(|e| DbError::msg(format!("corrupt job summary: {e}")))
    })
    .transpose()
}

#[derive(Debug, Default)]
struct Entries {
    map: HashMap<RequestId, JobSummary>,
    order: VecDeque<RequestId>,
    epoch: u64,
    data_version: Option<i64>,
}

/// The in-memory summary cache (see the module docs).
#[derive(Debug, Default)]
pub struct SummaryCache {
    entries: Mutex<Entries>,
}

impl SummaryCache {
    fn lock(&self) -> std::sync::MutexGuard<'_, Entries> {
        // A panic while holding this lock cannot leave the map inconsistent with the store
        // (entries are only ever dropped or replaced whole), so a poisoned lock is usable.
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The cached summary, or the epoch to pass to [`SummaryCache::put`] after reading it
    /// from the store.
    pub fn get(&self, id: RequestId) -> Result<JobSummary, u64> {
        let e = self.lock();
        e.map.get(&id).cloned().ok_or(e.epoch)
    }

    /// Caches `summary`, read from the store when the epoch was `epoch`, unless a write has
    /// been noticed since.
    pub fn put(&self, summary: JobSummary, epoch: u64) {
        let mut e = self.lock();
        if e.epoch != epoch {
            return;
        }
        let id = summary.id;
        if e.map.insert(id, summary).is_none() {
            e.order.push_back(id);
        }
        while e.map.len() > CAPACITY {
            match e.order.pop_front() {
                Some(old) => {
                    e.map.remove(&old);
                }
                None => break,
            }
        }
        if e.order.len() > 2 * CAPACITY {
            // Ids whose entries were removed by writes linger in `order`; rebuild it.
            let live: Vec<RequestId> = e
                .order
                .iter()
                .copied()
                .filter(|id| e.map.contains_key(id))
                .collect();
            e.order = live.into();
        }
    }

    /// This process wrote job `id` (called after the commit).
    pub fn forget(&self, id: RequestId) {
        let mut e = self.lock();
        e.map.remove(&id);
        e.epoch += 1;
    }

    /// Empties the cache (a write whose job is unknown, or another process's write).
    pub fn forget_all(&self) {
        let mut e = self.lock();
        e.map.clear();
        e.order.clear();
        e.epoch += 1;
    }

    /// Compares `version` (`PRAGMA data_version` on one dedicated connection) with the last
    /// one seen, and empties the cache when the database changed. Returns whether it did.
    pub fn notice_data_version(&self, version: i64) -> bool {
        let changed = {
            let mut e = self.lock();
            let changed = e.data_version.is_some_and(|v| v != version);
            e.data_version = Some(version);
            changed
        };
        if changed {
            self.forget_all();
        }
        changed
    }

    /// How many summaries are cached.
    pub fn len(&self) -> usize {
        self.lock().map.len()
    }

    /// Whether nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vto_core::{Category, JobStatus, Money};

    fn summary(n: u128, status: JobStatus) -> JobSummary {
        JobSummary {
            id: RequestId(uuid::Uuid::from_u128(n)),
            account_id: "acct".into(),
            category: Category::Shirt,
            status,
            price: Money::parse("0.15", vto_core::Currency::USD).unwrap(),
            result_key: None,
            processing_time_ms: None,
            error: None,
        }
    }

    #[test]
    fn a_read_that_raced_a_write_is_not_cached() {
        let c = SummaryCache::default();
        let s = summary(1, JobStatus::Queued);
        let epoch = c.get(s.id).unwrap_err();
        c.forget(s.id); // a write committed while the read was in flight
        c.put(s.clone(), epoch);
        assert!(c.get(s.id).is_err(), "the possibly stale read stayed out");
        let epoch = c.get(s.id).unwrap_err();
        c.put(s.clone(), epoch);
        assert_eq!(c.get(s.id), Ok(s.clone()));
        c.forget(s.id);
        assert!(c.get(s.id).is_err());
    }

    #[test]
    fn another_processs_commit_empties_the_cache_and_size_is_bounded() {
        let c = SummaryCache::default();
        assert!(
            !c.notice_data_version(7),
            "the first version is only remembered"
        );
        for n in 0..(CAPACITY as u128 + 10) {
            let epoch = c.get(summary(n, JobStatus::Queued).id).unwrap_err();
            c.put(summary(n, JobStatus::Queued), epoch);
        }
        assert_eq!(c.len(), CAPACITY);
        assert!(
            c.get(summary(0, JobStatus::Queued).id).is_err(),
            "oldest evicted"
        );
        assert!(!c.notice_data_version(7));
        assert_eq!(c.len(), CAPACITY);
        assert!(c.notice_data_version(8));
        assert!(c.is_empty());
    }
}
