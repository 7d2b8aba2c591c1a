//! The SQLite backends run vto-core's conformance suites, plus what is SQLite's own: summaries
//! shared by two stores on one file, and the numbered migrations.

use vto_core::Category;
use vto_sqlite::SqliteStore;

fn temp_store() -> SqliteStore {
    let dir = tempfile::tempdir().expect("tempdir").keep();
    SqliteStore::open(dir.join("vto.db"), Default::default()).expect("open")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_job_store_and_queue_conform() {
    vto_core::conformance::job_store(|| async { temp_store() }).await;
    vto_core::conformance::job_queue_concurrency(|| async { temp_store() }).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_ledger_conforms() {
    vto_core::conformance::ledger(|| async { temp_store() }).await;
    vto_core::conformance::ledger_concurrency(|| async { temp_store() }).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_api_key_store_conforms() {
    vto_core::conformance::api_key_store(|| async { temp_store() }).await;
    vto_core::conformance::key_revocation_generation(|| async { temp_store() }).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_account_limit_store_conforms() {
    vto_core::conformance::account_limit_store(|| async { temp_store() }).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_processs_change_is_seen_after_the_next_summary_refresh() {
    use vto_core::{JobEvent, JobStore, Timestamp};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("vto.db");
    // Two stores on one file: as two processes (a server and `vto admin`) would be.
    let server = SqliteStore::open(&path, Default::default()).unwrap();
    let admin = SqliteStore::open(&path, Default::default()).unwrap();
    let job = vto_core::conformance::sample_job(1, "acct_a", Category::Shirt, 10);
    server.insert(&job).await.unwrap();
    server.refresh_summaries().unwrap();
    let seen = server.get_summary(job.id).await.unwrap().unwrap();
    assert_eq!(seen.status, vto_core::JobStatus::Queued);
    assert_eq!(server.cached_summaries(), 1);
    admin
        .apply(job.id, &JobEvent::Cancel, Timestamp(20))
        .await
        .unwrap();
    assert!(
        server.refresh_summaries().unwrap(),
        "the other store's commit was noticed"
    );
    assert_eq!(server.cached_summaries(), 0);
    let seen = server.get_summary(job.id).await.unwrap().unwrap();
    assert_eq!(seen.status, vto_core::JobStatus::Canceled);
    // Its own writes need no refresh.
    let other = vto_core::conformance::sample_job(2, "acct_a", Category::Shirt, 11);
    server.insert(&other).await.unwrap();
    assert_eq!(
        server
            .get_summary(other.id)
            .await
            .unwrap()
            .map(|s| s.status),
        Some(vto_core::JobStatus::Queued)
    );
    server
        .apply(other.id, &JobEvent::Cancel, Timestamp(30))
        .await
        .unwrap();
    assert_eq!(
        server
            .get_summary(other.id)
            .await
            .unwrap()
            .map(|s| s.status),
        Some(vto_core::JobStatus::Canceled)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrations_are_numbered_recorded_and_run_once() {
    let dir = tempfile::tempdir().unwrap();
    let s = SqliteStore::open(dir.path().join("vto.db"), Default::default()).unwrap();
    let all: Vec<i64> = vto_sqlite::MIGRATIONS.iter().map(|m| m.0).collect();
    assert_eq!(
        all,
        (1..=all.len() as i64).collect::<Vec<_>>(),
        "numbered 1, 2, …"
    );
    assert_eq!(s.migrations().await.unwrap(), all);
    drop(s);
    let s = SqliteStore::open(dir.path().join("vto.db"), Default::default()).unwrap();
    assert_eq!(
        s.migrations().await.unwrap(),
        all,
        "a reopen applies nothing twice"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jobs_stored_whole_before_migration_5_are_split_and_read_back() {
    use vto_core::{JobEvent, JobStore, Timestamp};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("vto.db");
    let job = vto_core::conformance::sample_job(3, "acct_a", Category::Dress, 10);
    {
        // A database as a version with migrations 1–4 left it: the job's request in its body.
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(
            "CREATE TABLE schema_migrations (
                 version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)",
        )
        .unwrap();
        for (version, name, sql) in &vto_sqlite::MIGRATIONS[..4] {
            conn.execute_batch(sql).unwrap();
            conn.execute(
                "INSERT INTO schema_migrations VALUES (?1, ?2, 0)",
                rusqlite::params![version, name],
            )
            .unwrap();
        }
        conn.execute(
            "INSERT INTO jobs (id, account_id, status, created_at, body)
             VALUES (?1, 'acct_a', 'queued', 10, ?2)",
            rusqlite::params![job.id.to_string(), serde_json::to_string(&job).unwrap()],
        )
        .unwrap();
    }
    let store = SqliteStore::open(&path, Default::default()).unwrap();
    assert_eq!(store.get(job.id).await.unwrap(), Some(job.clone()));
    let canceled = store
        .apply(job.id, &JobEvent::Cancel, Timestamp(20))
        .await
        .unwrap();
    assert_eq!(
        canceled.request, job.request,
        "a transition keeps the request"
    );
    assert_eq!(store.get(job.id).await.unwrap(), Some(canceled));
    drop(store);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let (body, request): (String, String) = conn
        .query_row("SELECT body, request FROM jobs", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert!(
        !body.contains("person_image"),
        "the body keeps the state only: {body}"
    );
    assert!(request.contains("person_image"), "{request}");
}
