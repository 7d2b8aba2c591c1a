//! The HTTP side of webhook delivery: a [`WebhookTransport`] on `reqwest` behind the same SSRF
//! guard as input fetching ([`AddressPolicy`]): private, loopback, link-local and other
//! internal addresses are refused unless allow-listed, checked on the address actually
//! connected to; redirects are not followed (a receiver answers, it does not redirect).

use std::time::Duration;

use async_trait::async_trait;

use crate::backend::BackendError;
use crate::http_fetch::{AddressPolicy, FetchConfigError};
use crate::outbox::WebhookTransport;

/// POSTs webhooks with `reqwest`, refusing internal addresses.
#[derive(Debug, Clone)]
pub struct HttpWebhookTransport {
    client: reqwest::Client,
    policy: AddressPolicy,
}

impl HttpWebhookTransport {
    /// A transport that refuses what `policy` refuses.
    pub fn new(policy: AddressPolicy) -> Result<Self, FetchConfigError> {
        let client = policy
            .client_builder()
            .connect_timeout(Duration::from_secs(5))
            .user_agent(concat!("vto-webhooks/", env!("CARGO_PKG_VERSION")))
            .build()?;
        Ok(Self { client, policy })
    }
}

#[async_trait]
impl WebhookTransport for HttpWebhookTransport {
    async fn post(
        &self,
        url: &str,
        headers: &[(String, String)],
        body: &str,
        timeout: Duration,
    ) -> Result<u16, BackendError> {
        let parsed =
            url::Url::parse(url).map_err(|e| BackendError::new("invalid webhook URL", e))?;
        self.policy.check_url(&parsed).map_err(BackendError::msg)?;
        let mut req = self
            .client
            .post(parsed)
            .timeout(timeout)
            .body(body.to_string());
        for (k, v) in headers {
            req = req.header(k, v);
        }
        let resp = req.send().await.map_err(|e| {
            if e.is_timeout() {
                return BackendError::msg("timed out");
            }
            // The guard's refusal sits deep in the source chain of a connect error; the
            // error's Display shows the whole chain.
            BackendError::new("sending the webhook", e)
        })?;
        if let Some(addr) = resp.remote_addr() {
            self.policy
                .check(url, addr.ip())
                .map_err(|e| BackendError::msg(e.to_string()))?;
        }
        Ok(resp.status().as_u16())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn internal_addresses_are_refused_for_webhooks() {
        let t = HttpWebhookTransport::new(AddressPolicy::default()).unwrap();
        for url in [
            "http://127.0.0.1:9/hook",
            "http://169.254.169.254/latest/meta-data",
            "http://10.0.0.1/hook",
            "http://192.168.1.1/hook",
            "http://[::1]/hook",
            "http://[::ffff:127.0.0.1]/hook",
            "http://localhost:9/hook",
        ] {
            let err = t
                .post(url, &[], "{}", Duration::from_secs(2))
                .await
                .unwrap_err();
            // Refused by the guard, not by a failed connection attempt.
            assert!(
                err.to_string().contains("vto does not connect to"),
                "{url}: {err}"
            );
        }
    }
}
