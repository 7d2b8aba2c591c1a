-- 0004: each job's summary (the fields of its result object, a few hundred bytes) apart from
-- its body, which holds the inputs (up to megabytes of `data:` URLs): the status endpoint
-- reads only this table. Written in the same transaction as the job. Jobs stored before this
-- migration have no row here; their status is read from the body, as before.
CREATE TABLE job_summaries (
    id       TEXT PRIMARY KEY,
    summary  TEXT NOT NULL
) WITHOUT ROWID;
