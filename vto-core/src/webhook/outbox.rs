//! The persisted webhook outbox: a finished job's webhook is written to the [`Outbox`] (the
//! [`OutboxSender`] is the service's [`WebhookSender`]); nothing waits for the receiver. Each
//! [`Delivery`] keeps its tries; the signing secrets are [`WebhookSecrets`] (`whsec_<base64>`
//! per account, [`WebhookSecret::sign`] per Standard Webhooks). The
//! [`Dispatcher`] sends what is due.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

use crate::backend::BackendError;
use crate::clock::Timestamp;
use crate::ids::{AccountId, IdGen, RequestId};
use crate::webhook::{WebhookError, WebhookEvent, WebhookSender};

// Kept at this path for the crate's users (`vto_core::outbox::Dispatcher`, …).
pub use super::dispatcher::{DispatchConfig, Dispatcher, WebhookTransport};

/// A per-account signing secret, shown as `whsec_<base64>`.
#[derive(Clone, PartialEq, Eq)]
pub struct WebhookSecret(Vec<u8>);

impl std::fmt::Debug for WebhookSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WebhookSecret(whsec_…)")
    }
}

/// A string that is not a `whsec_…` secret.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid webhook secret: expected whsec_<base64>")]
pub struct InvalidSecret;

impl WebhookSecret {
    /// 24 random bytes.
    pub fn generate(ids: &dyn IdGen) -> Self {
        Self(ids.secret_bytes(24))
    }
    /// Parses `whsec_<base64>`.
    pub fn parse(s: &str) -> Result<Self, InvalidSecret> {
        let b64 = s.strip_prefix("whsec_").ok_or(InvalidSecret)?;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .map_err(|_| InvalidSecret)?;
        if bytes.is_empty() {
            return Err(InvalidSecret);
        }
        Ok(Self(bytes))
    }
    /// The `whsec_<base64>` form, to show the account owner.
    pub fn expose(&self) -> String {
        format!(
            "whsec_{}",
            base64::engine::general_purpose::STANDARD.encode(&self.0)
        )
    }

    /// The `webhook-signature` value for a message: `v1,<base64 HMAC-SHA256>`.
    pub fn sign(&self, msg_id: &str, timestamp_secs: i64, body: &str) -> String {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.0).expect("HMAC takes any key length");
        mac.update(msg_id.as_bytes());
        mac.update(b".");
        mac.update(timestamp_secs.to_string().as_bytes());
        mac.update(b".");
        mac.update(body.as_bytes());
        format!(
            "v1,{}",
            base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
        )
    }
}

/// Where a delivery stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeliveryStatus {
    /// Not yet acknowledged; will be tried at `next_attempt_at`.
    Pending,
    /// The receiver answered 2xx.
    Delivered,
    /// The schedule ran out.
    Failed,
    /// The receiver answered 410 Gone: no more tries.
    Gone,
}

impl DeliveryStatus {
    /// The stored form.
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryStatus::Pending => "pending",
            DeliveryStatus::Delivered => "delivered",
            DeliveryStatus::Failed => "failed",
            DeliveryStatus::Gone => "gone",
        }
    }
}

impl std::str::FromStr for DeliveryStatus {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        [
            DeliveryStatus::Pending,
            DeliveryStatus::Delivered,
            DeliveryStatus::Failed,
            DeliveryStatus::Gone,
        ]
        .into_iter()
        .find(|d| d.as_str() == s)
        .ok_or_else(|| format!("unknown delivery status {s:?}"))
    }
}

/// One webhook message and its delivery state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Delivery {
    /// The `webhook-id`, stable across retries: `msg_<request id without dashes>`.
    pub id: String,
    /// The job.
    pub request_id: RequestId,
    /// The account whose secret signs it.
    pub account_id: AccountId,
    /// Where to POST.
    pub url: String,
    /// The JSON body, fixed at enqueue time.
    pub body: String,
    /// Where it stands.
    pub status: DeliveryStatus,
    /// Tries so far.
    pub attempts: u32,
    /// When to try next (pending only).
    pub next_attempt_at: Timestamp,
    /// The last HTTP status, if any.
    pub last_status: Option<u16>,
    /// The last transport error, if any.
    pub last_error: Option<String>,
    /// When it was enqueued.
    pub created_at: Timestamp,
}

impl Delivery {
    /// The `webhook-id` for a request's completion.
    pub fn id_for(request_id: RequestId) -> String {
        format!("msg_{}", request_id.0.simple())
    }
}

/// What one try did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeliveryAttempt {
    /// The delivery.
    pub delivery_id: String,
    /// 1 for the first try.
    pub n: u32,
    /// When.
    pub at: Timestamp,
    /// The receiver's status code, when it answered.
    pub http_status: Option<u16>,
    /// The transport error (timeout, refused…), when it did not.
    pub error: Option<String>,
    /// How long the try took.
    pub duration_ms: u64,
}

/// What to do after a try.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NextStep {
    /// Done: 2xx.
    Delivered,
    /// Try again at this instant.
    RetryAt(Timestamp),
    /// The schedule is exhausted.
    GiveUp,
    /// 410 Gone.
    Gone,
}

/// Outbox failures.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("outbox backend: {0}")]
pub struct OutboxError(#[source] pub BackendError);

/// Persisted webhook deliveries.
#[async_trait]
pub trait Outbox: Send + Sync {
    /// Adds a delivery; a delivery with the same id is kept as it is (`false`).
    async fn enqueue(&self, delivery: &Delivery) -> Result<bool, OutboxError>;
    /// Takes up to `limit` pending deliveries due at `now`, and pushes their next try to
    /// `now + lease` so that no other dispatcher takes them meanwhile.
    async fn claim_due(
        &self,
        now: Timestamp,
        lease: Duration,
        limit: usize,
    ) -> Result<Vec<Delivery>, OutboxError>;
    /// Records a try and what follows.
    async fn record(&self, attempt: &DeliveryAttempt, next: NextStep) -> Result<(), OutboxError>;
    /// A delivery by id.
    async fn get(&self, id: &str) -> Result<Option<Delivery>, OutboxError>;
    /// Deliveries, newest first, optionally for one account.
    async fn list(
        &self,
        account: Option<&AccountId>,
        limit: usize,
    ) -> Result<Vec<Delivery>, OutboxError>;
    /// A delivery's tries, in order.
    async fn attempts(&self, id: &str) -> Result<Vec<DeliveryAttempt>, OutboxError>;
}

/// Signing secrets per account.
#[async_trait]
pub trait WebhookSecrets: Send + Sync {
    /// The account's secret, created on first use.
    async fn secret(&self, account: &AccountId) -> Result<WebhookSecret, OutboxError>;
    /// Replaces the account's secret and returns the new one.
    async fn rotate(&self, account: &AccountId) -> Result<WebhookSecret, OutboxError>;
}

/// In-memory outbox.
#[derive(Debug, Default)]
pub struct MemoryOutbox {
    state: std::sync::Mutex<(Vec<Delivery>, Vec<DeliveryAttempt>)>,
}

#[async_trait]
impl Outbox for MemoryOutbox {
    async fn enqueue(&self, delivery: &Delivery) -> Result<bool, OutboxError> {
        let mut s = self.state.lock().expect("outbox lock");
        if s.0.iter().any(|d| d.id == delivery.id) {
            return Ok(false);
        }
        s.0.push(delivery.clone());
        Ok(true)
    }

    async fn claim_due(
        &self,
        now: Timestamp,
        lease: Duration,
        limit: usize,
    ) -> Result<Vec<Delivery>, OutboxError> {
        let mut s = self.state.lock().expect("outbox lock");
        let mut due: Vec<&mut Delivery> =
            s.0.iter_mut()
                .filter(|d| d.status == DeliveryStatus::Pending && d.next_attempt_at <= now)
                .collect();
        due.sort_by_key(|d| (d.next_attempt_at, d.created_at));
        Ok(due
            .into_iter()
            .take(limit)
            .map(|d| {
                let out = d.clone();
                d.next_attempt_at = now.plus(lease);
                out
            })
            .collect())
    }

    async fn record(&self, attempt: &DeliveryAttempt, next: NextStep) -> Result<(), OutboxError> {
        let mut s = self.state.lock().expect("outbox lock");
        let d =
            s.0.iter_mut()
                .find(|d| d.id == attempt.delivery_id)
                .ok_or_else(|| {
                    OutboxError(BackendError::msg(format!(
                        "no delivery {}",
                        attempt.delivery_id
                    )))
                })?;
        apply_attempt(d, attempt, next);
        s.1.push(attempt.clone());
        Ok(())
    }

    async fn get(&self, id: &str) -> Result<Option<Delivery>, OutboxError> {
        let s = self.state.lock().expect("outbox lock");
        Ok(s.0.iter().find(|d| d.id == id).cloned())
    }

    async fn list(
        &self,
        account: Option<&AccountId>,
        limit: usize,
    ) -> Result<Vec<Delivery>, OutboxError> {
        let s = self.state.lock().expect("outbox lock");
        let mut v: Vec<_> =
            s.0.iter()
                .filter(|d| account.is_none_or(|a| &d.account_id == a))
                .cloned()
                .collect();
        v.sort_by_key(|d| std::cmp::Reverse(d.created_at));
        v.truncate(limit);
        Ok(v)
    }

    async fn attempts(&self, id: &str) -> Result<Vec<DeliveryAttempt>, OutboxError> {
        let s = self.state.lock().expect("outbox lock");
        Ok(s.1
            .iter()
            .filter(|a| a.delivery_id == id)
            .cloned()
            .collect())
    }
}

/// Applies a try's outcome to a delivery record: the one rule every outbox backend uses.
pub fn apply_attempt(d: &mut Delivery, attempt: &DeliveryAttempt, next: NextStep) {
    d.attempts = d.attempts.max(attempt.n);
    d.last_status = attempt.http_status;
    d.last_error = attempt.error.clone();
    match next {
        NextStep::Delivered => d.status = DeliveryStatus::Delivered,
        NextStep::RetryAt(t) => {
            d.status = DeliveryStatus::Pending;
            d.next_attempt_at = t;
        }
        NextStep::GiveUp => d.status = DeliveryStatus::Failed,
        NextStep::Gone => d.status = DeliveryStatus::Gone,
    }
}

/// In-memory signing secrets.
#[derive(Debug)]
pub struct MemoryWebhookSecrets {
    ids: Arc<dyn IdGen>,
    secrets: std::sync::Mutex<std::collections::HashMap<AccountId, WebhookSecret>>,
}

impl MemoryWebhookSecrets {
    /// Secrets generated from `ids`.
    pub fn new(ids: Arc<dyn IdGen>) -> Self {
        Self {
            ids,
            secrets: Default::default(),
        }
    }
}

#[async_trait]
impl WebhookSecrets for MemoryWebhookSecrets {
    async fn secret(&self, account: &AccountId) -> Result<WebhookSecret, OutboxError> {
        let mut m = self.secrets.lock().expect("secrets lock");
        Ok(m.entry(account.clone())
            .or_insert_with(|| WebhookSecret::generate(self.ids.as_ref()))
            .clone())
    }
    async fn rotate(&self, account: &AccountId) -> Result<WebhookSecret, OutboxError> {
        let s = WebhookSecret::generate(self.ids.as_ref());
        self.secrets
            .lock()
            .expect("secrets lock")
            .insert(account.clone(), s.clone());
        Ok(s)
    }
}

/// The service's [`WebhookSender`] when webhooks must be reliable: it writes to the outbox.
pub struct OutboxSender {
    outbox: Arc<dyn Outbox>,
}

impl OutboxSender {
    /// A sender writing to `outbox`.
    pub fn new(outbox: Arc<dyn Outbox>) -> Self {
        Self { outbox }
    }
}

#[async_trait]
impl WebhookSender for OutboxSender {
    async fn send(&self, event: WebhookEvent) -> Result<(), WebhookError> {
        let body = serde_json::to_string(&event.payload)
            .map_err(|e| WebhookError(BackendError::new("encoding the webhook body", e)))?;
        let delivery = Delivery {
            id: Delivery::id_for(event.payload.request_id),
            request_id: event.payload.request_id,
            account_id: event.account_id,
            url: event.url,
            body,
            status: DeliveryStatus::Pending,
            attempts: 0,
            next_attempt_at: event.at,
            last_status: None,
            last_error: None,
            created_at: event.at,
        };
        self.outbox
            .enqueue(&delivery)
            .await
            .map(|_| ())
            .map_err(|e| WebhookError(BackendError::new("writing the delivery to the outbox", e)))
    }
}
