-- 0001: the whole schema of vto on PostgreSQL (the SQLite migrations 0001-0004 in one).
-- Money is NUMERIC (exact). Times are Unix milliseconds (BIGINT), the caller's clock.

CREATE TABLE accounts (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    currency    TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    -- Running totals, changed in the same transaction as every ledger entry.
    balance     NUMERIC NOT NULL DEFAULT 0,
    held        NUMERIC NOT NULL DEFAULT 0,
    seq         BIGINT GENERATED ALWAYS AS IDENTITY
);

CREATE TABLE ledger_entries (
    seq         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id  TEXT NOT NULL REFERENCES accounts (id),
    kind        TEXT NOT NULL CHECK (kind IN ('credit', 'hold', 'release', 'capture')),
    amount      NUMERIC NOT NULL,
    request_id  UUID,
    memo        TEXT NOT NULL,
    at          BIGINT NOT NULL
);
CREATE INDEX ledger_entries_by_account ON ledger_entries (account_id, seq);
-- At most one hold entry and one settlement (capture or release) per request: a second
-- capture cannot be written even by a buggy caller.
CREATE UNIQUE INDEX ledger_entries_one_hold ON ledger_entries (request_id) WHERE kind = 'hold';
CREATE UNIQUE INDEX ledger_entries_one_settlement ON ledger_entries (request_id)
    WHERE kind IN ('capture', 'release');

CREATE TABLE holds (
    request_id  UUID PRIMARY KEY,
    account_id  TEXT NOT NULL REFERENCES accounts (id),
    amount      NUMERIC NOT NULL,
    currency    TEXT NOT NULL,
    status      TEXT NOT NULL CHECK (status IN ('open', 'captured', 'released')),
    created_at  BIGINT NOT NULL
);
CREATE INDEX holds_open ON holds (created_at, request_id) WHERE status = 'open';

CREATE TABLE api_keys (
    id              TEXT PRIMARY KEY,
    account_id      TEXT NOT NULL,
    display_prefix  TEXT NOT NULL,
    hash            TEXT NOT NULL UNIQUE,
    name            TEXT NOT NULL,
    created_at      BIGINT NOT NULL,
    revoked_at      BIGINT,
    seq             BIGINT GENERATED ALWAYS AS IDENTITY
);
CREATE INDEX api_keys_by_account ON api_keys (account_id, created_at, seq);

CREATE TABLE account_limits (
    account_id  TEXT NOT NULL,
    endpoint    TEXT NOT NULL,
    burst       BIGINT NOT NULL CHECK (burst > 0),
    period_ms   BIGINT NOT NULL CHECK (period_ms > 0),
    PRIMARY KEY (account_id, endpoint)
);

-- Moved forward in the same transaction as every revocation and limit change.
CREATE TABLE auth_generation (
    id     INTEGER PRIMARY KEY CHECK (id = 1),
    value  BIGINT NOT NULL
);
INSERT INTO auth_generation (id, value) VALUES (1, 0);

-- The indexed fields are columns; the whole record is the JSON `body`, and `summary` is what
-- the status endpoint shows (a few hundred bytes; the body, with the inputs, is TOASTed apart).
CREATE TABLE jobs (
    id           UUID PRIMARY KEY,
    account_id   TEXT NOT NULL,
    status       TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    lease_until  BIGINT,
    deadline     BIGINT,
    body         TEXT NOT NULL,
    summary      TEXT NOT NULL
);
-- Exactly the claim's predicate and order, so a claim reads the head of this index.
CREATE INDEX jobs_queue ON jobs (created_at, id) WHERE status = 'queued';
CREATE INDEX jobs_leases ON jobs (lease_until) WHERE status = 'processing';
CREATE INDEX jobs_deadlines ON jobs (deadline) WHERE status IN ('queued', 'processing');
CREATE INDEX jobs_by_account ON jobs (account_id, created_at DESC, id DESC);
CREATE INDEX jobs_by_status ON jobs (status, created_at DESC, id DESC);
CREATE INDEX jobs_by_time ON jobs (created_at DESC, id DESC);

CREATE TABLE webhook_deliveries (
    id              TEXT PRIMARY KEY,
    request_id      UUID NOT NULL,
    account_id      TEXT NOT NULL,
    url             TEXT NOT NULL,
    body            TEXT NOT NULL,
    status          TEXT NOT NULL,
    attempts        BIGINT NOT NULL,
    next_attempt_at BIGINT NOT NULL,
    last_status     INTEGER,
    last_error      TEXT,
    created_at      BIGINT NOT NULL
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at, created_at)
    WHERE status = 'pending';
CREATE INDEX webhook_deliveries_account ON webhook_deliveries (account_id, created_at);

CREATE TABLE webhook_attempts (
    delivery_id TEXT NOT NULL REFERENCES webhook_deliveries (id),
    n           BIGINT NOT NULL,
    at          BIGINT NOT NULL,
    http_status INTEGER,
    error       TEXT,
    duration_ms BIGINT NOT NULL,
    PRIMARY KEY (delivery_id, n)
);

CREATE TABLE webhook_secrets (
    account_id TEXT PRIMARY KEY,
    secret     TEXT NOT NULL,
    rotated_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE idempotency_keys (
    account_id  TEXT NOT NULL,
    key         TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    response    TEXT,
    created_at  BIGINT NOT NULL,
    PRIMARY KEY (account_id, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

-- The shared rate limiter's GCRA state: one theoretical arrival time per (key, endpoint).
-- UNLOGGED: not WAL-logged (fast), emptied after a crash, which only forgives some requests.
CREATE UNLOGGED TABLE rate_limits (
    key       TEXT NOT NULL,
    endpoint  TEXT NOT NULL,
    tat       DOUBLE PRECISION NOT NULL,
    allowed   BOOLEAN NOT NULL,
    PRIMARY KEY (key, endpoint)
);
