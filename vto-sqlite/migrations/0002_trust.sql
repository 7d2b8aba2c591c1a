-- Webhook outbox, per-account signing secrets, idempotency keys.
CREATE TABLE webhook_deliveries (
    id              TEXT PRIMARY KEY,
    request_id      TEXT NOT NULL,
    account_id      TEXT NOT NULL,
    url             TEXT NOT NULL,
    body            TEXT NOT NULL,
    status          TEXT NOT NULL,
    attempts        INTEGER NOT NULL,
    next_attempt_at INTEGER NOT NULL,
    last_status     INTEGER,
    last_error      TEXT,
    created_at      INTEGER NOT NULL
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (status, next_attempt_at);
CREATE INDEX webhook_deliveries_account ON webhook_deliveries (account_id, created_at);

CREATE TABLE webhook_attempts (
    delivery_id TEXT NOT NULL REFERENCES webhook_deliveries (id),
    n           INTEGER NOT NULL,
    at          INTEGER NOT NULL,
    http_status INTEGER,
    error       TEXT,
    duration_ms INTEGER NOT NULL,
    PRIMARY KEY (delivery_id, n)
);

CREATE TABLE webhook_secrets (
    account_id TEXT PRIMARY KEY,
    secret     TEXT NOT NULL,
    rotated_at INTEGER NOT NULL
);

CREATE TABLE idempotency_keys (
    account_id  TEXT NOT NULL,
    key         TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    response    TEXT,
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (account_id, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
