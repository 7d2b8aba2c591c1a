-- 0005: a job's request (its inputs, up to megabytes of `data:` URLs) in a column of its own,
-- written once at insert; `body` keeps the job's state only (a few hundred bytes), which every
-- transition rewrites. Existing jobs are split in place.
ALTER TABLE jobs ADD COLUMN request TEXT;
UPDATE jobs SET request = json_extract(body, '$.request'), body = json_remove(body, '$.request');
