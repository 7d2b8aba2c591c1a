//! SQLite backends of the trust features run vto-core's conformance suites unchanged.

use std::sync::Arc;

use vto_core::outbox::WebhookSecrets;
use vto_core::{AccountId, RandomIds};
use vto_sqlite::SqliteStore;
use vto_sqlite::SqliteWebhookSecrets;

fn temp_store() -> (tempfile::TempDir, SqliteStore) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = SqliteStore::open(dir.path().join("vto.db"), Default::default()).expect("open");
    (dir, store)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_outbox_conforms() {
    let dirs = std::sync::Mutex::new(Vec::new());
    vto_core::conformance::outbox(|| async {
        let (d, s) = temp_store();
        dirs.lock().unwrap().push(d);
        s
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_idempotency_store_conforms() {
    let dirs = std::sync::Mutex::new(Vec::new());
    vto_core::conformance::idempotency_store(|| async {
        let (d, s) = temp_store();
        dirs.lock().unwrap().push(d);
        s
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_secrets_persist_and_rotate() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("vto.db");
    let a = AccountId::from("acct_a");
    let first = {
        let s = SqliteStore::open(&path, Default::default()).unwrap();
        let secrets = SqliteWebhookSecrets::new(s, Arc::new(RandomIds));
        let first = secrets.secret(&a).await.unwrap();
        assert_eq!(secrets.secret(&a).await.unwrap(), first, "created once");
        first
    };
    let s = SqliteStore::open(&path, Default::default()).unwrap();
    let secrets = SqliteWebhookSecrets::new(s, Arc::new(RandomIds));
    assert_eq!(
        secrets.secret(&a).await.unwrap(),
        first,
        "survives a reopen"
    );
    let rotated = secrets.rotate(&a).await.unwrap();
    assert_ne!(rotated, first);
    assert_eq!(secrets.secret(&a).await.unwrap(), rotated);
    assert!(rotated.expose().starts_with("whsec_"));
}
