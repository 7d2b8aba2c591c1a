-- 0003: per-account rate-limit overrides, and the generation number that caches of API keys
-- and limits compare (moved forward in the same transaction as every revocation and every
-- limit change; see vto_core::auth_cache).
CREATE TABLE account_limits (
    account_id  TEXT NOT NULL,
    endpoint    TEXT NOT NULL,
    burst       INTEGER NOT NULL CHECK (burst > 0),
    period_ms   INTEGER NOT NULL CHECK (period_ms > 0),
    PRIMARY KEY (account_id, endpoint)
);

CREATE TABLE auth_generation (
    id     INTEGER PRIMARY KEY CHECK (id = 1),
    value  INTEGER NOT NULL
);
INSERT INTO auth_generation (id, value) VALUES (1, 0);
