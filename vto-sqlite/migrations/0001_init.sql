-- 0001: accounts and their ledger, holds, API keys, jobs.
-- Money is stored as decimal TEXT (exact, never REAL). Times are Unix milliseconds (INTEGER).

CREATE TABLE accounts (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    currency    TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    -- Running totals, kept in the same transaction as every ledger entry; they always equal
    -- what the entries add up to (credits - captures, holds - releases - captures).
    balance     TEXT NOT NULL DEFAULT '0',
    held        TEXT NOT NULL DEFAULT '0'
);

CREATE TABLE ledger_entries (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id  TEXT NOT NULL REFERENCES accounts(id),
    kind        TEXT NOT NULL CHECK (kind IN ('credit', 'hold', 'release', 'capture')),
    amount      TEXT NOT NULL,
    request_id  TEXT,
    memo        TEXT NOT NULL,
    at          INTEGER NOT NULL
);
CREATE INDEX ledger_entries_by_account ON ledger_entries (account_id, seq);

CREATE TABLE holds (
    request_id  TEXT PRIMARY KEY,
    account_id  TEXT NOT NULL REFERENCES accounts(id),
    amount      TEXT NOT NULL,
    currency    TEXT NOT NULL,
    status      TEXT NOT NULL CHECK (status IN ('open', 'captured', 'released')),
    created_at  INTEGER NOT NULL
);
CREATE INDEX holds_open ON holds (created_at, request_id) WHERE status = 'open';

CREATE TABLE api_keys (
    id              TEXT PRIMARY KEY,
    account_id      TEXT NOT NULL,
    display_prefix  TEXT NOT NULL,
    hash            TEXT NOT NULL UNIQUE,
    name            TEXT NOT NULL,
    created_at      INTEGER NOT NULL,
    revoked_at      INTEGER
);
CREATE INDEX api_keys_by_account ON api_keys (account_id, created_at);

-- The indexed fields are columns; the whole record (including them) is the JSON `body`.
CREATE TABLE jobs (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL,
    status       TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    lease_until  INTEGER,
    deadline     INTEGER,
    body         TEXT NOT NULL
);
CREATE INDEX jobs_queue ON jobs (created_at, id) WHERE status = 'queued';
CREATE INDEX jobs_leases ON jobs (lease_until) WHERE status = 'processing';
CREATE INDEX jobs_deadlines ON jobs (deadline) WHERE status IN ('queued', 'processing');
CREATE INDEX jobs_by_account ON jobs (account_id, created_at);
CREATE INDEX jobs_by_status ON jobs (status, created_at);
CREATE INDEX jobs_by_time ON jobs (created_at, id);
