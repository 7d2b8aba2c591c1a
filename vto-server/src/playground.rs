//! The playground: one page, embedded in the binary, where a person tries every category in a
//! browser before writing a line of code (`GET /playground`; `GET /` redirects there).
//!
//! The page is a client of the public API and nothing else: it sends the API key the person
//! pastes (kept only in the tab's `sessionStorage`) to `POST /v1/virtual-try-on`, polls
//! `GET /v1/virtual-try-on/{id}` with backoff for asynchronous categories, reads
//! `GET /v1/balance` before and after, and lists the account's recent try-ons with
//! `GET /v1/virtual-try-on?limit=N`. So it shows exactly what an integration would get,
//! including every error's `error.code`, and it offers the request as a `curl` command.
//!
//! What the server adds for it, all without a key (nothing secret):
//! - `/playground/app.js`, `/playground/app.css`: the page's script and style (no inline
//!   script or style, no external CDN or font: the Content-Security-Policy is
//!   `default-src 'none'` plus `'self'` for scripts, styles, images and fetches);
//! - `/playground/config.json`: each category's mode, price, product field and whether an
//!   engine serves it here (and why not);
//! - `/playground/samples` and `/playground/samples/{id}`: the bundled samples the binary hands
//!   in ([`Sample`]: a public-domain portrait and the project's generated products).
//!
//! `playground = false` in the config (env `VTO_PLAYGROUND=false`) turns all of it off: those
//! paths answer `404 not_found` like any unknown path.

use bytes::Bytes;
use serde::Serialize;
use serde_json::json;
use vto_core::{Category, Engines, ServiceConfig};
use warp::http::HeaderValue;
use warp::reply::Response;

use crate::Unavailable;

/// The page.
pub const INDEX_HTML: &str = include_str!("../playground/index.html");
/// The page's script.
pub const APP_JS: &str = include_str!("../playground/app.js");
/// The page's style.
pub const APP_CSS: &str = include_str!("../playground/app.css");

/// The Content-Security-Policy of every playground reply: nothing from elsewhere, no inline
/// script or style, no framing, no form posts (the page sends with `fetch` to its own origin).
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     img-src 'self' data: blob:; connect-src 'self'; base-uri 'none'; form-action 'none'; \
     frame-ancestors 'none'";

/// What a sample is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SampleRole {
    /// A photo of a person (sent as `person_image`).
    Person,
    /// A product (sent as `product_model` or `product_image`, per its categories).
    Product,
}

/// A bundled sample the playground offers, handed to the server by the binary (vto-server
/// has no generator or photo of its own).
#[derive(Debug, Clone)]
pub struct Sample {
    /// URL-safe id (`[a-z0-9-]`), unique among the samples.
    pub id: String,
    /// What the page shows, e.g. "Round glasses, tortoiseshell".
    pub label: String,
    /// Person photo or product.
    pub role: SampleRole,
    /// For products: the categories that take it (empty for a person photo).
    pub categories: Vec<Category>,
    /// Its media type (`image/png`, `model/gltf-binary`, …).
    pub content_type: String,
    /// Its bytes.
    pub bytes: Bytes,
    /// Where it comes from and under what licence (shown beside it).
    pub credit: String,
}

impl Sample {
    /// Whether the id is usable in a URL path as is.
    pub fn id_is_valid(&self) -> bool {
        !self.id.is_empty()
            && self.id.len() <= 64
            && self
                .id
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    }
}

/// The `/playground/samples` listing.
pub fn samples_json(samples: &[Sample]) -> serde_json::Value {
    json!({
        "samples": samples.iter().map(|s| json!({
            "id": s.id,
            "label": s.label,
            "role": s.role,
            "categories": s.categories,
            "content_type": s.content_type,
            "bytes": s.bytes.len(),
            "credit": s.credit,
            "url": format!("/playground/samples/{}", s.id),
        })).collect::<Vec<_>>()
    })
}

/// The `/playground/config.json` document: per category its mode, price, the request field
/// its product goes in, and whether this server can render it (with the reason and the fix
/// when not).
pub fn config_json(
    config: &ServiceConfig,
    engines: &Engines,
    unavailable: &[Unavailable],
) -> serde_json::Value {
    let categories: Vec<_> = Category::ALL
        .iter()
        .map(|&c| {
            let missing = unavailable.iter().find(|u| u.category == c);
            let available = engines.get(c).is_some();
            json!({
                "category": c,
                "mode": if c.is_sync() { "sync" } else { "async" },
                "price": config.prices.price(c).amount.to_string(),
                "product_field": c.product_input().field(),
                "available": available,
                "reason": (!available).then(|| missing.map_or_else(
                    || "no engine is configured for this category on this server".to_string(),
                    |u| u.reason.clone(),
                )),
            })
        })
        .collect();
    json!({
        "currency": config.prices.currency(),
        "max_data_bytes": config.request_limits.max_data_bytes,
        "categories": categories,
    })
}

/// Makes the samples: called once, on a blocking thread, when the server starts (the
/// generators take a moment; the server does not wait for them to listen).
pub type SampleSource = Box<dyn FnOnce() -> Vec<Sample> + Send>;

/// The samples with URL-safe, unique ids and their listing, built once.
#[derive(Debug, Default)]
struct SampleSet {
    samples: Vec<Sample>,
    listing: Bytes,
}

impl SampleSet {
    fn new(mut samples: Vec<Sample>) -> Self {
        let mut seen = std::collections::HashSet::new();
        samples.retain(|s| {
            let ok = s.id_is_valid() && seen.insert(s.id.clone());
            if !ok {
                tracing::warn!(id = %s.id, "playground sample dropped: id not URL-safe or repeated");
            }
            ok
        });
        let listing = serde_json::to_vec(&samples_json(&samples)).unwrap_or_default();
        SampleSet {
            samples,
            listing: listing.into(),
        }
    }
}

/// The playground as the server holds it: the config document (built at start) and the
/// samples (made once, off the async threads; requests for them wait until they are made).
pub struct Playground {
    source: std::sync::Mutex<Option<SampleSource>>,
    samples: tokio::sync::OnceCell<SampleSet>,
    config_json: Bytes,
}

impl std::fmt::Debug for Playground {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Playground")
            .field("samples", &self.samples.get().map(|s| s.samples.len()))
            .finish_non_exhaustive()
    }
}

impl Playground {
    /// The playground over `source` (see [`SampleSource`]). Samples with an id that is not
    /// URL-safe or not unique are dropped with a warning (they come from the binary, not from
    /// a client).
    pub fn new(
        source: SampleSource,
        config: &ServiceConfig,
        engines: &Engines,
        unavailable: &[Unavailable],
    ) -> Self {
        let config_json =
            serde_json::to_vec(&config_json(config, engines, unavailable)).unwrap_or_default();
        Playground {
            source: std::sync::Mutex::new(Some(source)),
            samples: tokio::sync::OnceCell::new(),
            config_json: config_json.into(),
        }
    }

    /// The samples, made on first call (on the blocking pool).
    async fn sample_set(&self) -> &SampleSet {
        self.samples
            .get_or_init(|| async {
                let source = self.source.lock().ok().and_then(|mut s| s.take());
                let made =
                    tokio::task::spawn_blocking(move || source.map(|f| f()).unwrap_or_default())
                        .await
                        .unwrap_or_else(|e| {
                            tracing::error!(error = %e, "making the playground samples failed");
                            Vec::new()
                        });
                SampleSet::new(made)
            })
            .await
    }

    /// Makes the samples now (the server calls this at start, in the background).
    pub async fn prepare(&self) -> usize {
        self.sample_set().await.samples.len()
    }

    /// The reply to `GET /playground/<tail>` (`tail` empty for the page itself); `None` for a
    /// path the playground does not have.
    pub async fn reply(&self, tail: &str) -> Option<Response> {
        let (body, content_type): (Bytes, String) = match tail {
            "" => (
                Bytes::from_static(INDEX_HTML.as_bytes()),
                "text/html; charset=utf-8".into(),
            ),
            "app.js" => (
                Bytes::from_static(APP_JS.as_bytes()),
                "text/javascript; charset=utf-8".into(),
            ),
            "app.css" => (
                Bytes::from_static(APP_CSS.as_bytes()),
                "text/css; charset=utf-8".into(),
            ),
            "config.json" => (self.config_json.clone(), "application/json".into()),
            "samples" => (
                self.sample_set().await.listing.clone(),
                "application/json".into(),
            ),
            _ => {
                let id = tail.strip_prefix("samples/")?;
                let set = self.sample_set().await;
                let s = set.samples.iter().find(|s| s.id == id)?;
                (s.bytes.clone(), s.content_type.clone())
            }
        };
        let mut resp = Response::new(body.into());
        let h = resp.headers_mut();
        let mut set = |name: &'static str, value: &str| {
            if let Ok(v) = HeaderValue::from_str(value) {
                h.insert(name, v);
            }
        };
        set("content-type", &content_type);
        set("content-security-policy", CSP);
        set("x-content-type-options", "nosniff");
        set("referrer-policy", "no-referrer");
        set("x-frame-options", "DENY");
        set("cache-control", "no-cache");
        Some(resp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(id: &str) -> Sample {
        Sample {
            id: id.into(),
            label: "x".into(),
            role: SampleRole::Product,
            categories: vec![Category::Glasses],
            content_type: "model/gltf-binary".into(),
            bytes: Bytes::from_static(b"glTF"),
            credit: "generated".into(),
        }
    }

    #[tokio::test]
    async fn serves_the_page_its_assets_and_samples_with_a_strict_policy() {
        let p = Playground::new(
            Box::new(|| vec![sample("one"), sample("one"), sample("Bad/id")]),
            &ServiceConfig::default(),
            &Engines::new(),
            &[],
        );
        let page = p.reply("").await.unwrap();
        assert_eq!(page.headers()["content-type"], "text/html; charset=utf-8");
        assert_eq!(page.headers()["content-security-policy"], CSP);
        assert_eq!(page.headers()["x-frame-options"], "DENY");
        assert!(p.reply("app.js").await.is_some() && p.reply("app.css").await.is_some());
        assert_eq!(
            p.reply("samples/one").await.unwrap().headers()["content-type"],
            "model/gltf-binary"
        );
        assert!(p.reply("samples/Bad/id").await.is_none());
        assert!(p.reply("samples/two").await.is_none());
        assert!(p.reply("nothing").await.is_none());
        assert_eq!(p.prepare().await, 1, "repeats and bad ids dropped");
        let listed: serde_json::Value =
            serde_json::from_slice(&p.sample_set().await.listing).unwrap();
        assert_eq!(listed["samples"].as_array().unwrap().len(), 1);
        assert_eq!(listed["samples"][0]["url"], "/playground/samples/one");
    }

    #[test]
    fn sample_ids_must_be_url_safe() {
        assert!(sample("glasses-round-2").id_is_valid());
        for bad in ["", "a/b", "A", "a b", "..", &"x".repeat(65)] {
            assert!(!sample(bad).id_is_valid(), "{bad:?}");
        }
    }

    #[test]
    fn config_lists_every_category_with_its_field_and_price() {
        let doc = config_json(&ServiceConfig::default(), &Engines::new(), &[]);
        let cats = doc["categories"].as_array().unwrap();
        assert_eq!(cats.len(), 11);
        let glasses = &cats[0];
        assert_eq!(glasses["category"], "glasses");
        assert_eq!(glasses["mode"], "sync");
        assert_eq!(glasses["product_field"], "product_model");
        assert_eq!(glasses["price"], "0.05");
        assert_eq!(glasses["available"], false);
        let dress = cats.iter().find(|c| c["category"] == "dress").unwrap();
        assert_eq!(dress["mode"], "async");
        assert_eq!(dress["product_field"], "product_image");
    }

    #[test]
    fn the_page_loads_nothing_from_elsewhere_and_has_no_inline_script() {
        for text in [INDEX_HTML, APP_JS, APP_CSS] {
            assert!(!text.contains("http://") && !text.contains("https://"));
        }
        assert!(INDEX_HTML.contains(r#"<script src="/playground/app.js" defer></script>"#));
        assert_eq!(INDEX_HTML.matches("<script").count(), 1);
        assert!(!INDEX_HTML.contains(" style="));
        assert!(!INDEX_HTML.contains(" onclick="));
        // The key lives in sessionStorage only.
        assert!(APP_JS.contains("sessionStorage"));
        assert!(!APP_JS.contains("localStorage"));
    }
}
