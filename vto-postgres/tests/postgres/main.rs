//! vto-postgres against a real PostgreSQL (`eval "$(scripts/pg.sh start)"`): every conformance
//! suite of vto-core, then what only a shared database has to get right — claims, captures,
//! migrations and rate limits across instances, and `LISTEN/NOTIFY` wake-ups. Each store gets a
//! database of its own, so the tests run in parallel. Without `VTO_TEST_POSTGRES_URL` they skip
//! (with a message), unless `VTO_REQUIRE_POSTGRES=1`.

mod common;
mod instances;
mod shared;
mod unavailable;
