-- 0002: a job's request (its inputs, up to megabytes of `data:` URLs) in a column of its own,
-- written once at insert and left in its TOAST table by every later update; `body` keeps the
-- job's state only (a few hundred bytes), which every transition rewrites. Existing jobs are
-- split in place.
ALTER TABLE jobs ADD COLUMN request TEXT;
UPDATE jobs SET request = (body::jsonb -> 'request')::text, body = (body::jsonb - 'request')::text;
