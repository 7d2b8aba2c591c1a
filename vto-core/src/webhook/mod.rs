//! Completion webhooks: the service hands each finished asynchronous job to a [`WebhookSender`].
//!
//! The reliable path, in the order a webhook travels:
//! - [`outbox`]: the [`OutboxSender`](outbox::OutboxSender) writes the event to the persisted
//!   [`Outbox`](outbox::Outbox), with the per-account signing secrets beside it;
//! - [`dispatcher`]: the [`Dispatcher`](dispatcher::Dispatcher) takes due deliveries, signs and
//!   POSTs them through a [`WebhookTransport`](dispatcher::WebhookTransport), and schedules
//!   retries;
//! - `http` (feature `http`): the transport on `reqwest`, behind the SSRF guard.
//!
//! [`MemoryWebhookSender`] records events instead, for tests and embedding examples.

pub mod dispatcher;
#[cfg(feature = "http")]
pub mod http;
pub mod outbox;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::backend::BackendError;
use crate::clock::Timestamp;
use crate::ids::AccountId;
use crate::result::ResultObject;

/// One completion to deliver.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WebhookEvent {
    /// The account (whose signing secret applies).
    pub account_id: AccountId,
    /// Where to POST.
    pub url: String,
    /// The body: the result object, as GET returns it.
    pub payload: ResultObject,
    /// When the job finished.
    pub at: Timestamp,
}

/// Webhook sender failures (accepting the event, not delivering it: delivery retries are the
/// sender's job).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("webhook sender: {0}")]
pub struct WebhookError(#[source] pub BackendError);

/// Accepts completions for delivery.
#[async_trait]
pub trait WebhookSender: Send + Sync {
    /// Queues (or sends) one completion. Must not wait for a slow receiver.
    async fn send(&self, event: WebhookEvent) -> Result<(), WebhookError>;
}

/// Records events in memory (for tests and embedding examples).
#[derive(Debug, Default)]
pub struct MemoryWebhookSender {
    sent: std::sync::Mutex<Vec<WebhookEvent>>,
}

impl MemoryWebhookSender {
    /// Everything sent so far.
    pub fn sent(&self) -> Vec<WebhookEvent> {
        self.sent.lock().expect("webhook lock").clone()
    }
}

#[async_trait]
impl WebhookSender for MemoryWebhookSender {
    async fn send(&self, event: WebhookEvent) -> Result<(), WebhookError> {
        self.sent.lock().expect("webhook lock").push(event);
        Ok(())
    }
}
