//! The webhook dispatcher: sends the outbox's due deliveries, signed, and schedules retries.
//!
//! A finished job's webhook waits in the [`Outbox`] (see [`super::outbox`]). The [`Dispatcher`] takes due
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
use tracing::{info, warn};

use crate::backend::BackendError;
use crate::clock::Clock;
use crate::ids::IdGen;
use crate::webhook::outbox::{
    Delivery, DeliveryAttempt, NextStep, Outbox, OutboxError, WebhookSecret, WebhookSecrets,
};

/// Sends one HTTP POST. The dispatcher's only contact with the network.
#[async_trait]
pub trait WebhookTransport: Send + Sync {
    /// POSTs `body` with `headers`; the status code, or why no answer came (recorded as the
    /// try's `error`).
    async fn post(
        &self,
        url: &str,
        headers: &[(String, String)],
        body: &str,
        timeout: Duration,
    ) -> Result<u16, BackendError>;
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
            Err(e) => (None, Some(e.to_string())),
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
    use crate::clock::Timestamp;
    use crate::ids::SequentialIds;
    use crate::ids::{AccountId, RequestId};
    use crate::webhook::outbox::*;

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
        answers: std::sync::Mutex<Vec<Result<u16, BackendError>>>,
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
        ) -> Result<u16, BackendError> {
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
        answers: Vec<Result<u16, BackendError>>,
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
        let (d, outbox, transport, clock) = setup(vec![
            Ok(500),
            Err(BackendError::msg("timed out")),
            Ok(503),
            Ok(204),
        ]);
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
