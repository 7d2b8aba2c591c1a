//! The [`Fetcher`] contract: `data:` inputs, URLs, byte limits and stable error codes.

use crate::error::ErrorCode;
use crate::fetch::{FetchError, FetchLimits, Fetcher};
use crate::request::InputRef;

/// The body [`FetchFixture::ok_url`] must serve, declared as `image/png`.
pub fn fixture_body() -> Vec<u8> {
    let mut body = b"\x89PNG\r\n\x1a\n".to_vec();
    body.extend((0..10_000u32).map(|i| (i % 251) as u8));
    body
}

/// How many bytes [`FetchFixture::big_url`] must serve (any content).
pub const BIG_LEN: usize = 300 * 1024;

/// A fetcher and the URLs its harness prepared (a registered URL for the memory fetcher, a
/// route of a loopback server for the HTTP one).
#[derive(Debug)]
pub struct FetchFixture<F> {
    /// The fetcher under test.
    pub fetcher: F,
    /// Serves [`fixture_body`] with the declared type `image/png`.
    pub ok_url: String,
    /// Serves [`BIG_LEN`] bytes.
    pub big_url: String,
    /// Serves nothing (not registered; 404).
    pub missing_url: String,
}

fn url(u: &str) -> InputRef {
    InputRef::Url { url: u.to_string() }
}

fn limits(max_bytes: usize) -> FetchLimits {
    FetchLimits {
        max_bytes,
        ..FetchLimits::default()
    }
}

/// Runs the fetcher contract against `fx`.
///
/// - `data:` inputs come back as they are, with their media type as the declared type, up to
///   and including `max_bytes`; one byte more is [`FetchError::TooLarge`] with the limit;
/// - a URL's body comes back whole with the declared type it was served with, at any limit
///   from its length up; below its length it is `TooLarge` (`input_too_large`);
/// - a body several times the limit is refused the same way;
/// - a URL that serves nothing, and a URL of a scheme no fetcher speaks, are
///   [`FetchError::Failed`] (`input_fetch_failed`) with a message naming the URL.
pub async fn fetcher<F: Fetcher>(fx: &FetchFixture<F>) {
    let f = &fx.fetcher;
    let data = InputRef::Data {
        media_type: "image/webp".into(),
        bytes: vec![5; 64],
    };
    let got = f
        .fetch(&data, &limits(64))
        .await
        .expect("data at the limit");
    assert_eq!(got.bytes, vec![5; 64]);
    assert_eq!(got.declared_type.as_deref(), Some("image/webp"));
    let err = f.fetch(&data, &limits(63)).await.expect_err("data over");
    assert_eq!(err, FetchError::TooLarge { limit: 63 });
    assert_eq!(err.code(), ErrorCode::InputTooLarge);

    let body = fixture_body();
    for max in [body.len(), FetchLimits::default().max_bytes] {
        let got = f
            .fetch(&url(&fx.ok_url), &limits(max))
            .await
            .unwrap_or_else(|e| panic!("{} with max_bytes {max}: {e}", fx.ok_url));
        assert!(got.bytes == body, "body of {} differs", fx.ok_url);
        assert_eq!(got.declared_type.as_deref(), Some("image/png"));
    }
    let err = f
        .fetch(&url(&fx.ok_url), &limits(body.len() - 1))
        .await
        .expect_err("one byte over");
    assert_eq!(
        err,
        FetchError::TooLarge {
            limit: body.len() - 1
        }
    );
    assert_eq!(err.code(), ErrorCode::InputTooLarge);

    let got = f
        .fetch(&url(&fx.big_url), &limits(BIG_LEN))
        .await
        .expect("big at its size");
    assert_eq!(got.bytes.len(), BIG_LEN);
    let err = f
        .fetch(&url(&fx.big_url), &limits(BIG_LEN / 5))
        .await
        .expect_err("big over");
    assert_eq!(err, FetchError::TooLarge { limit: BIG_LEN / 5 });

    for bad in [fx.missing_url.as_str(), "gopher://example.invalid/x.png"] {
        let err = f
            .fetch(&url(bad), &FetchLimits::default())
            .await
            .expect_err(bad);
        assert_eq!(err.code(), ErrorCode::InputFetchFailed, "{bad}: {err}");
        assert!(
            matches!(&err, FetchError::Failed(m) if m.contains(bad)),
            "the message names the URL: {err}"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::{fetcher, fixture_body, FetchFixture, BIG_LEN};
    use crate::fetch::MemoryFetcher;

    #[tokio::test]
    async fn memory_fetcher_conforms() {
        let f = MemoryFetcher::default();
        let ok = "https://shop.example/person.png";
        let big = "https://shop.example/big.bin";
        f.insert(ok, fixture_body(), Some("image/png"));
        f.insert(big, vec![1; BIG_LEN], None);
        fetcher(&FetchFixture {
            fetcher: f,
            ok_url: ok.into(),
            big_url: big.into(),
            missing_url: "https://shop.example/missing.png".into(),
        })
        .await;
    }

    /// `HttpFetcher` against a warp server on loopback (allowed by the fetcher's allow-list).
    #[cfg(feature = "http")]
    #[tokio::test]
    async fn http_fetcher_conforms() {
        use crate::http_fetch::{FetchConfig, HttpFetcher};
        use warp::Filter;

        let ok = warp::path("ok.png").map(|| {
            warp::http::Response::builder()
                .header("content-type", "image/png")
                .body(fixture_body())
                .expect("response")
        });
        let big = warp::path("big.bin").map(|| vec![1u8; BIG_LEN]);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("address");
        tokio::spawn(warp::serve(ok.or(big)).incoming(listener).run());
        let base = format!("http://{addr}");
        let f = HttpFetcher::new(FetchConfig {
            allow: vec!["127.0.0.1/32".into()],
            ..FetchConfig::default()
        })
        .expect("fetcher");
        fetcher(&FetchFixture {
            fetcher: f,
            ok_url: format!("{base}/ok.png"),
            big_url: format!("{base}/big.bin"),
            missing_url: format!("{base}/missing.png"),
        })
        .await;
    }
}
