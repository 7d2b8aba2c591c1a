//! Reliable webhooks: a persisted outbox, Standard Webhooks signatures and a dispatcher.
//!
//! A finished job's webhook is written to the [`Outbox`] (the [`OutboxSender`] is the
//! service's [`WebhookSender`]); nothing waits for the receiver. The [`Dispatcher`] takes due
//! deliveries under a short lease, POSTs them signed per [Standard Webhooks]
//! (`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64 HMAC-SHA256 of
//! "id.timestamp.body">`, secret `whsec_<base64>` per account), and on a non-2xx answer or a
//! timeout schedules the next try from [`DispatchConfig::schedule`] with jitter. `410 Gone`
//! stops the retries. The `webhook-id` is the same on every try, so receivers deduplicate.
//!
//! Guarantee: at-least-once delivery with a stable id, for as long as the schedule runs
//! (default about 28 hours). A crash during a send repeats that send after the lease.
//!
//! [Standard Webhooks]: https://www.standardwebhooks.com/

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;
use tracing::{info, warn};

use crate::clock::{Clock, Timestamp};
use crate::ids::{AccountId, IdGen, RequestId};
use crate::webhook::{WebhookError, WebhookEvent, WebhookSender};

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
pub struct OutboxError(pub String);

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

/// Sends one HTTP POST. The dispatcher's only contact with the network.
#[async_trait]
pub trait WebhookTransport: Send + Sync {
    /// POSTs `body` with `headers`; the status code, or a transport error as text.
    async fn post(
        &self,
        url: &str,
        headers: &[(String, String)],
        body: &str,
        timeout: Duration,
    ) -> Result<u16, String>;
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
                .ok_or_else(|| OutboxError(format!("no delivery {}", attempt.delivery_id)))?;
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
        let body =
            serde_json::to_string(&event.payload).map_err(|e| WebhookError(e.to_string()))?;
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
            .map_err(|e| WebhookError(e.to_string()))
    }
}

/// Dispatcher settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DispatchConfig {
    /// Waits before the 2nd, 3rd, … try. Default: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h
    /// (about 28 h in all, 8 tries).
    pub schedule: Vec<Duration>,
    /// Per-request timeout (default 10 s).
    pub timeout: Duration,
    /// ± this percentage of each wait is random jitter (default 20).
    pub jitter_percent: u8,
    /// Deliveries taken per round (default 32).
    pub batch: usize,
}

impl Default for DispatchConfig {
    fn default() -> Self {
        let s = Duration::from_secs;
        Self {
            schedule: vec![
                s(5),
                s(300),
                s(1800),
                s(7200),
                s(18_000),
                s(36_000),
                s(36_000),
            ],
            timeout: Duration::from_secs(10),
            jitter_percent: 20,
            batch: 32,
        }
    }
}

/// Sends due deliveries, records every try, schedules retries.
#[derive(Clone)]
pub struct Dispatcher {
    outbox: Arc<dyn Outbox>,
    secrets: Arc<dyn WebhookSecrets>,
    transport: Arc<dyn WebhookTransport>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn IdGen>,
    config: DispatchConfig,
}

impl Dispatcher {
    /// A dispatcher over its parts.
    pub fn new(
        outbox: Arc<dyn Outbox>,
        secrets: Arc<dyn WebhookSecrets>,
        transport: Arc<dyn WebhookTransport>,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn IdGen>,
        config: DispatchConfig,
    ) -> Self {
        Self {
            outbox,
            secrets,
            transport,
            clock,
            ids,
            config,
        }
    }

    /// The headers of one try.
    pub fn headers(
        secret: &WebhookSecret,
        id: &str,
        timestamp_secs: i64,
        body: &str,
    ) -> Vec<(String, String)> {
        vec![
            ("content-type".into(), "application/json".into()),
            ("user-agent".into(), "vto-webhooks/1".into()),
            ("webhook-id".into(), id.to_string()),
            ("webhook-timestamp".into(), timestamp_secs.to_string()),
            (
                "webhook-signature".into(),
                secret.sign(id, timestamp_secs, body),
            ),
        ]
    }

    fn next_step(&self, n: u32, status: Option<u16>) -> NextStep {
        match status {
            Some(s) if (200..300).contains(&s) => NextStep::Delivered,
            Some(410) => NextStep::Gone,
            _ => match self.config.schedule.get(n as usize - 1) {
                None => NextStep::GiveUp,
                Some(wait) => {
                    let ms = wait.as_millis() as i64;
                    let span = ms * i64::from(self.config.jitter_percent) / 100;
                    let r = self.ids.secret_bytes(4);
                    let r = u32::from_le_bytes([r[0], r[1], r[2], r[3]]) as i64;
                    let jitter = if span > 0 {
                        r % (2 * span + 1) - span
                    } else {
                        0
                    };
                    NextStep::RetryAt(
                        self.clock
                            .now()
                            .plus(Duration::from_millis((ms + jitter).max(0) as u64)),
                    )
                }
            },
        }
    }

    /// Sends every delivery due now, concurrently; returns how many were tried.
    pub async fn run_once(&self) -> Result<usize, OutboxError> {
        let lease = self.config.timeout * 2 + Duration::from_secs(5);
        let due = self
            .outbox
            .claim_due(self.clock.now(), lease, self.config.batch)
            .await?;
        let n = due.len();
        let mut tasks = tokio::task::JoinSet::new();
        for d in due {
            let me = self.clone();
            tasks.spawn(async move { me.deliver(d).await });
        }
        while let Some(r) = tasks.join_next().await {
            match r {
                Ok(Err(e)) => warn!(error = %e, "recording a webhook try failed"),
                Err(e) => warn!(error = %e, "webhook task failed"),
                Ok(Ok(())) => {}
            }
        }
        Ok(n)
    }

    async fn deliver(&self, d: Delivery) -> Result<(), OutboxError> {
        let secret = self.secrets.secret(&d.account_id).await?;
        let now = self.clock.now();
        let ts = now.millis().div_euclid(1000);
        let headers = Self::headers(&secret, &d.id, ts, &d.body);
        let started = std::time::Instant::now();
        let result = self
            .transport
            .post(&d.url, &headers, &d.body, self.config.timeout)
            .await;
        let n = d.attempts + 1;
        let (http_status, error) = match result {
            Ok(s) => (Some(s), None),
            Err(e) => (None, Some(e)),
        };
        let next = self.next_step(n, http_status);
        info!(webhook_id = %d.id, request_id = %d.request_id, attempt = n, status = ?http_status, error = ?error, next = ?next, "webhook try");
        self.outbox
            .record(
                &DeliveryAttempt {
                    delivery_id: d.id,
                    n,
                    at: now,
                    http_status,
                    error,
                    duration_ms: started.elapsed().as_millis() as u64,
                },
                next,
            )
            .await
    }

    /// Runs rounds every `poll` until `shutdown` turns true.
    pub async fn run(&self, poll: Duration, mut shutdown: tokio::sync::watch::Receiver<bool>) {
        while !*shutdown.borrow() {
            if let Err(e) = self.run_once().await {
                warn!(error = %e, "webhook dispatch round failed");
            }
            tokio::select! {
                _ = tokio::time::sleep(poll) => {}
                _ = shutdown.changed() => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::FakeClock;
    use crate::ids::SequentialIds;

    #[test]
    fn signature_matches_the_standard_webhooks_example() {
        // The example from the Standard Webhooks specification.
        let secret = WebhookSecret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        let sig = secret.sign(
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            1614265330,
            r#"{"test": 2432232314}"#,
        );
        assert_eq!(sig, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
        assert_eq!(secret.expose(), "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
        assert!(WebhookSecret::parse("sk_abc").is_err());
    }

    /// Test double: answers from a script of statuses, recording what it got.
    #[derive(Default)]
    struct Scripted {
        answers: std::sync::Mutex<Vec<Result<u16, String>>>,
        seen: std::sync::Mutex<Vec<Vec<(String, String)>>>,
    }

    #[async_trait]
    impl WebhookTransport for Scripted {
        async fn post(
            &self,
            _url: &str,
            headers: &[(String, String)],
            _body: &str,
            _timeout: Duration,
        ) -> Result<u16, String> {
            self.seen.lock().unwrap().push(headers.to_vec());
            let mut a = self.answers.lock().unwrap();
            if a.is_empty() {
                Ok(200)
            } else {
                a.remove(0)
            }
        }
    }

    fn delivery(at: Timestamp) -> Delivery {
        Delivery {
            id: Delivery::id_for(RequestId(uuid::Uuid::from_u128(7))),
            request_id: RequestId(uuid::Uuid::from_u128(7)),
            account_id: AccountId::from("acct_1"),
            url: "https://shop.example/hook".into(),
            body: "{}".into(),
            status: DeliveryStatus::Pending,
            attempts: 0,
            next_attempt_at: at,
            last_status: None,
            last_error: None,
            created_at: at,
        }
    }

    fn setup(
        answers: Vec<Result<u16, String>>,
    ) -> (Dispatcher, Arc<MemoryOutbox>, Arc<Scripted>, Arc<FakeClock>) {
        let clock = Arc::new(FakeClock::default());
        let ids: Arc<dyn IdGen> = Arc::new(SequentialIds::default());
        let outbox = Arc::new(MemoryOutbox::default());
        let transport = Arc::new(Scripted {
            answers: std::sync::Mutex::new(answers),
            ..Default::default()
        });
        let d = Dispatcher::new(
            outbox.clone(),
            Arc::new(MemoryWebhookSecrets::new(ids.clone())),
            transport.clone(),
            clock.clone(),
            ids,
            DispatchConfig::default(),
        );
        (d, outbox, transport, clock)
    }

    #[tokio::test]
    async fn retries_follow_the_schedule_with_a_stable_id() {
        let (d, outbox, transport, clock) =
            setup(vec![Ok(500), Err("timed out".into()), Ok(503), Ok(204)]);
        let msg = delivery(clock.now());
        assert!(outbox.enqueue(&msg).await.unwrap());
        assert!(
            !outbox.enqueue(&msg).await.unwrap(),
            "enqueue is idempotent"
        );
        assert_eq!(d.run_once().await.unwrap(), 1);
        assert_eq!(
            d.run_once().await.unwrap(),
            0,
            "not due before the first wait"
        );
        for wait in [6, 400, 2400] {
            clock.advance(Duration::from_secs(wait));
            assert_eq!(d.run_once().await.unwrap(), 1);
        }
        let got = outbox.get(&msg.id).await.unwrap().unwrap();
        assert_eq!(got.status, DeliveryStatus::Delivered);
        assert_eq!(got.attempts, 4);
        let tries = outbox.attempts(&msg.id).await.unwrap();
        assert_eq!(
            tries.iter().map(|a| a.http_status).collect::<Vec<_>>(),
            vec![Some(500), None, Some(503), Some(204)]
        );
        let ids: Vec<_> = transport
            .seen
            .lock()
            .unwrap()
            .iter()
            .map(|h| h.iter().find(|(k, _)| k == "webhook-id").unwrap().1.clone())
            .collect();
        assert_eq!(ids, vec![msg.id.clone(); 4]);
    }

    #[tokio::test]
    async fn gone_stops_and_an_exhausted_schedule_gives_up() {
        let (d, outbox, _, clock) = setup(vec![Ok(410)]);
        outbox.enqueue(&delivery(clock.now())).await.unwrap();
        d.run_once().await.unwrap();
        let id = Delivery::id_for(RequestId(uuid::Uuid::from_u128(7)));
        assert_eq!(
            outbox.get(&id).await.unwrap().unwrap().status,
            DeliveryStatus::Gone
        );
        clock.advance(Duration::from_secs(86_400 * 3));
        assert_eq!(d.run_once().await.unwrap(), 0);

        let (d, outbox, _, clock) = setup(vec![Ok(500); 20]);
        outbox.enqueue(&delivery(clock.now())).await.unwrap();
        let mut tries = 0;
        for _ in 0..20 {
            tries += d.run_once().await.unwrap();
            clock.advance(Duration::from_secs(13 * 3600));
        }
        assert_eq!(tries, 8, "1 try + 7 retries");
        assert_eq!(
            outbox.get(&id).await.unwrap().unwrap().status,
            DeliveryStatus::Failed
        );
    }

    #[test]
    fn the_default_schedule_reaches_about_a_day() {
        let total: Duration = DispatchConfig::default().schedule.iter().sum();
        assert!(total >= Duration::from_secs(24 * 3600) && total <= Duration::from_secs(36 * 3600));
    }
}
