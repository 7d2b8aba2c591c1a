//! The [`ResultStore`] contract: what the memory, file and object-storage stores all do.

use std::future::Future;

use crate::clock::Timestamp;
use crate::ids::RequestId;
use crate::results::{ResultStore, ResultStoreError};

const NOW: Timestamp = Timestamp(1_767_225_600_000);

/// A fresh request id: random, so that a store backed by a shared bucket never sees an id an
/// earlier run stored.
fn fresh_id() -> RequestId {
    RequestId(uuid::Uuid::new_v4())
}

/// `n` bytes that differ from position to position (and from `seed` to `seed`).
fn pattern(n: usize, seed: u8) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

/// Keys no store may accept: they could leave a folder or prefix, or were never issued.
const INVALID_KEYS: &[&str] = &[
    "",
    "../secret.png",
    "a/b.png",
    ".hidden.png",
    "key with space.png",
    "x%2F..png",
    "0123456789012345678901234567890123456789012345678901234567890123456789.png",
];

/// Runs the result store contract against fresh stores from `make`.
///
/// - `put` returns `<request_id>.<ext>` (`png`, `jpg`, `webp` by content type) and `get` gives
///   back the same bytes and content type, for small and larger (512 KiB) images;
/// - a well-formed key that was never stored is `Ok(None)`;
/// - malformed keys (empty, `..`, `/`, leading dot, other characters, too long) are
///   [`ResultStoreError::InvalidKey`] from both `get` and `url`;
/// - `url` for a stored key is an absolute URL, different per key;
/// - a second `put` for the same request id and type replaces the image under the same key;
///   another type adds a second key beside it;
/// - concurrent puts of different requests all land.
pub async fn result_store<S, F, Fut>(make: F)
where
    S: ResultStore + 'static,
    F: Fn() -> Fut,
    Fut: Future<Output = S>,
{
    round_trip(&make().await).await;
    unknown_and_invalid_keys(&make().await).await;
    urls(&make().await).await;
    same_request_twice(&make().await).await;
    concurrent_puts(make().await).await;
}

async fn round_trip(store: &impl ResultStore) {
    for (content_type, ext, len) in [
        ("image/png", "png", 1_000),
        ("image/jpeg", "jpg", 512 * 1024),
        ("image/webp", "webp", 1),
    ] {
        let id = fresh_id();
        let bytes = pattern(len, 7);
        let key = store
            .put(id, &bytes, content_type)
            .await
            .unwrap_or_else(|e| panic!("put {content_type}: {e}"));
        assert_eq!(key, format!("{id}.{ext}"), "key for {content_type}");
        let got = store
            .get(&key)
            .await
            .unwrap_or_else(|e| panic!("get {key}: {e}"))
            .unwrap_or_else(|| panic!("{key} was just stored"));
        assert_eq!(got.bytes.len(), len, "length of {key}");
        assert!(got.bytes == bytes, "bytes of {key} differ");
        assert_eq!(got.content_type, content_type, "content type of {key}");
    }
}

async fn unknown_and_invalid_keys(store: &impl ResultStore) {
    let unknown = format!("{}.png", fresh_id());
    assert!(
        store.get(&unknown).await.expect("get unknown").is_none(),
        "a key never stored is None"
    );
    // Storing one image must not make a sibling key appear.
    let id = fresh_id();
    store.put(id, b"x", "image/png").await.expect("put");
    assert!(store
        .get(&format!("{id}.jpg"))
        .await
        .expect("get sibling")
        .is_none());
    for key in INVALID_KEYS {
        assert!(
            matches!(store.get(key).await, Err(ResultStoreError::InvalidKey(_))),
            "get({key:?}) must be InvalidKey"
        );
        assert!(
            matches!(
                store.url(key, NOW).await,
                Err(ResultStoreError::InvalidKey(_))
            ),
            "url({key:?}) must be InvalidKey"
        );
    }
}

async fn urls(store: &impl ResultStore) {
    let a = store
        .put(fresh_id(), b"a", "image/png")
        .await
        .expect("put a");
    let b = store
        .put(fresh_id(), b"b", "image/png")
        .await
        .expect("put b");
    let url_a = store.url(&a, NOW).await.expect("url a");
    let url_b = store.url(&b, NOW).await.expect("url b");
    let parsed = url::Url::parse(&url_a).unwrap_or_else(|e| panic!("{url_a:?} is no URL: {e}"));
    assert!(!parsed.scheme().is_empty() && !parsed.cannot_be_a_base());
    assert_ne!(url_a, url_b, "different keys get different URLs");
}

async fn same_request_twice(store: &impl ResultStore) {
    let id = fresh_id();
    let first = store
        .put(id, &pattern(300, 1), "image/png")
        .await
        .expect("first put");
    let second = store
        .put(id, &pattern(200, 2), "image/png")
        .await
        .expect("second put");
    assert_eq!(first, second, "same request and type, same key");
    let got = store.get(&second).await.expect("get").expect("stored");
    assert_eq!(
        got.bytes,
        pattern(200, 2),
        "the second put replaces the first"
    );
    let jpeg = store
        .put(id, &pattern(100, 3), "image/jpeg")
        .await
        .expect("jpeg put");
    assert_eq!(jpeg, format!("{id}.jpg"));
    assert_eq!(
        store.get(&jpeg).await.expect("get jpg").expect("jpg").bytes,
        pattern(100, 3)
    );
    assert_eq!(
        store
            .get(&first)
            .await
            .expect("get png")
            .expect("png")
            .bytes,
        pattern(200, 2),
        "another type does not touch the first key"
    );
}

async fn concurrent_puts<S: ResultStore + 'static>(store: S) {
    let store = std::sync::Arc::new(store);
    let mut tasks = Vec::new();
    for n in 0..8u8 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            let id = fresh_id();
            let key = store
                .put(id, &pattern(4_096, n), "image/png")
                .await
                .expect("concurrent put");
            (key, n)
        }));
    }
    for task in tasks {
        let (key, n) = task.await.expect("task");
        let got = store.get(&key).await.expect("get").expect("stored");
        assert_eq!(got.bytes, pattern(4_096, n), "{key}");
    }
}

#[cfg(test)]
mod tests {
    use crate::results::{FsResultStore, MemoryResultStore};

    #[tokio::test]
    async fn memory_result_store_conforms() {
        super::result_store(|| async { MemoryResultStore::default() }).await;
    }

    #[tokio::test]
    async fn fs_result_store_conforms() {
        let root = std::env::temp_dir().join(format!("vto-fs-results-{}", std::process::id()));
        let n = std::sync::atomic::AtomicUsize::new(0);
        super::result_store(|| {
            let dir = root.join(
                n.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
                    .to_string(),
            );
            async move { FsResultStore::new(dir).expect("temp dir") }
        })
        .await;
        let _ = std::fs::remove_dir_all(&root);
    }
}
