//! The SQLite webhook secrets run vto-core's `webhook_secrets` conformance suite unchanged.

use std::sync::Arc;

use vto_core::RandomIds;
use vto_sqlite::{SqliteStore, SqliteWebhookSecrets};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_webhook_secrets_conform() {
    let dirs = std::sync::Mutex::new(Vec::new());
    vto_core::conformance::webhook_secrets(|| async {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = SqliteStore::open(dir.path().join("vto.db"), Default::default()).expect("open");
        dirs.lock().expect("dirs").push(dir);
        SqliteWebhookSecrets::new(store, Arc::new(RandomIds))
    })
    .await;
}
