//! Engines: what renders one category (person + product → image).

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;

use crate::category::Category;
use crate::error::ErrorCode;
use crate::fetch::Fetched;
use crate::ids::RequestId;
use crate::request::RenderOptions;

/// What an engine gets.
#[derive(Debug, Clone, Copy)]
pub struct RenderInput<'a> {
    /// The request.
    pub request_id: RequestId,
    /// The category.
    pub category: Category,
    /// The person photo's bytes (not yet decoded).
    pub person: &'a Fetched,
    /// The product's bytes: a 3D model or a photo, per the category.
    pub product: &'a Fetched,
    /// The request's rendering options.
    pub options: RenderOptions,
}

/// What an engine returns.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    /// The encoded image.
    pub image: Vec<u8>,
    /// Its media type (`image/png`, `image/jpeg`, `image/webp`).
    pub content_type: String,
    /// Engine notes (e.g. "auto-fit: model did not follow the asset conventions").
    pub metadata: serde_json::Value,
}

/// Why an engine produced no image.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    /// The inputs cannot make a try-on (no face found, unreadable image…). The job fails with
    /// `code` (usually `processing_failed`) and this message, shown to the client.
    #[error("{message}")]
    Rejected {
        /// The client-facing code.
        code: ErrorCode,
        /// The client-facing message.
        message: String,
    },
    /// Something broke inside the engine. The job fails with `processing_failed` and a generic
    /// message; the detail goes to the log only.
    #[error("engine internal error: {0}")]
    Internal(String),
}

impl EngineError {
    /// A `processing_failed` rejection.
    pub fn processing(message: impl Into<String>) -> Self {
        EngineError::Rejected {
            code: ErrorCode::ProcessingFailed,
            message: message.into(),
        }
    }
}

/// Renders try-ons. Heavy work belongs on a blocking thread or the GPU, not the async runtime.
#[async_trait]
pub trait Engine: Send + Sync {
    /// A name for logs and metrics, e.g. `glasses-raster`.
    fn name(&self) -> &str;
    /// Renders one try-on.
    async fn render(&self, input: RenderInput<'_>) -> Result<Rendered, EngineError>;

    /// Capability: whether the engine can serve now (an external service answers its health
    /// check). `None` for engines with nothing to probe. Reported by the server's `/readyz`.
    async fn readiness(&self) -> Option<Result<(), String>> {
        None
    }

    /// Capability: Prometheus sample lines about this engine (no `# TYPE` lines), for the
    /// server's `/metrics`. `None` for engines that keep no counters.
    fn prometheus(&self) -> Option<String> {
        None
    }
}

/// The engine for each category. A category without one is refused at submit with
/// `engine_unavailable` (501), never answered with a made-up image.
#[derive(Clone, Default)]
pub struct Engines {
    map: HashMap<Category, Arc<dyn Engine>>,
}

impl fmt::Debug for Engines {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut m = f.debug_map();
        for (c, e) in &self.map {
            m.entry(&c.as_str(), &e.name());
        }
        m.finish()
    }
}

impl Engines {
    /// No engines.
    pub fn new() -> Self {
        Self::default()
    }
    /// Routes `category` to `engine`, replacing any previous one.
    pub fn register(&mut self, category: Category, engine: Arc<dyn Engine>) -> &mut Self {
        self.map.insert(category, engine);
        self
    }
    /// Routes `category` to `engine` unless one is registered already (built-ins first).
    pub fn register_if_absent(&mut self, category: Category, engine: Arc<dyn Engine>) -> &mut Self {
        self.map.entry(category).or_insert(engine);
        self
    }
    /// The engine for a category.
    pub fn get(&self, category: Category) -> Option<&Arc<dyn Engine>> {
        self.map.get(&category)
    }
    /// Categories with an engine.
    pub fn categories(&self) -> Vec<Category> {
        let mut v: Vec<_> = self.map.keys().copied().collect();
        v.sort();
        v
    }
}
