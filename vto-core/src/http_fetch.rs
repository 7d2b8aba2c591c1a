//! [`HttpFetcher`]: fetching client-supplied URLs without becoming a proxy into the network.
//!
//! A try-on request names its inputs by URL, so without care anyone with an API key could make
//! vto fetch `http://169.254.169.254/` (cloud credentials), `http://localhost:6379/` or a
//! router's admin page. The guard here follows three rules:
//!
//! 1. **Check the address actually connected to, not the name.** Hostnames are resolved by
//!    [`GuardedResolver`], a `reqwest` DNS resolver that drops every forbidden address from
//!    the answer (and fails when none is left). The connection can only use addresses the
//!    guard has seen, so a DNS-rebinding server that answers "public" for a first lookup and
//!    "127.0.0.1" for the next has no gap to slip through. URLs whose host is an IP literal
//!    never reach a resolver, so they are checked before each request; and the peer address of
//!    every response is checked once more as a last fence.
//! 2. **Every hop is a new request.** Redirects are followed by hand, at most
//!    [`FetchLimits::max_redirects`], each target re-checked (scheme and address) exactly like
//!    the first URL. Proxies from the environment are ignored, since connecting to a proxy
//!    would hide the real destination from the guard.
//! 3. **Refuse by class, allow by exception.** [`is_forbidden`] covers loopback, RFC 1918,
//!    link-local (including the metadata address 169.254.169.254), CGNAT `100.64.0.0/10`,
//!    multicast, unspecified, broadcast and reserved IPv4; IPv6 loopback, unspecified,
//!    unique-local `fc00::/7`, link-local `fe80::/10`, site-local, multicast; and the IPv4
//!    address inside IPv4-mapped, IPv4-compatible, NAT64 and 6to4 forms. Local development
//!    and tests list CIDRs in [`FetchConfig::allow`].
//!
//! Bodies are read as a stream and abandoned the moment they pass the byte cap, so an endless
//! response costs at most `max_bytes`; the whole fetch (every hop and the body) runs under the
//! total timeout, each connection under the connect timeout. Content types sent by the server
//! are kept only as a hint ([`Fetched::declared_type`]); engines sniff the bytes
//! ([`crate::media::sniff`]). Responses are never decompressed, so `Content-Encoding` cannot
//! smuggle a bomb past the cap.
//!
//! The same [`AddressPolicy`] (and its resolver) is meant for every outbound request whose
//! destination a client chose, webhooks included: build a client with
//! [`AddressPolicy::client_builder`].

use std::collections::HashMap;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use ipnet::IpNet;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use url::Url;

use crate::fetch::{fetch_data, FetchError, FetchLimits, Fetched, Fetcher};
use crate::request::InputRef;

/// Why an address is refused, or `None` when it is a public unicast address.
///
/// IPv6 forms that embed an IPv4 address (mapped `::ffff:a.b.c.d`, compatible `::a.b.c.d`,
/// NAT64 `64:ff9b::a.b.c.d`, 6to4 `2002:aabb:ccdd::`) are judged by the IPv4 address inside.
pub fn forbidden_reason(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => forbidden_v4(v4),
        IpAddr::V6(v6) => forbidden_v6(v6),
    }
}

/// Whether vto refuses to connect to `ip` on a client's behalf (see [`forbidden_reason`]).
pub fn is_forbidden(ip: IpAddr) -> bool {
    forbidden_reason(ip).is_some()
}

fn forbidden_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    Some(match () {
        _ if ip.is_broadcast() => "broadcast",
        _ if a == 0 => "unspecified (0.0.0.0/8)",
        _ if ip.is_loopback() => "loopback",
        _ if a == 10 || (a == 172 && (16..32).contains(&b)) || (a == 192 && b == 168) => {
            "private (RFC 1918)"
        }
        _ if ip.is_link_local() => "link-local (169.254.0.0/16, cloud metadata)",
        _ if a == 100 && (64..128).contains(&b) => "shared address space (CGNAT 100.64.0.0/10)",
        _ if ip.is_multicast() => "multicast",
        _ if a >= 240 => "reserved (240.0.0.0/4)",
        _ if a == 192 && b == 0 && c == 0 => "IETF protocol assignments (192.0.0.0/24)",
        _ if a == 198 && (18..20).contains(&b) => "benchmarking (198.18.0.0/15)",
        _ => return None,
    })
}

fn forbidden_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let s = ip.segments();
    if ip.is_unspecified() {
        return Some("unspecified (::)");
    }
    if ip.is_loopback() {
        return Some("loopback (::1)");
    }
    let embedded = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    // IPv4-mapped ::ffff:a.b.c.d: the IPv4 address is what is reached.
    if s[0..6] == [0, 0, 0, 0, 0, 0xffff] {
        return forbidden_v4(embedded);
    }
    // IPv4-compatible ::a.b.c.d: deprecated (RFC 4291), never a legitimate destination.
    if s[0..6] == [0; 6] {
        return Some(forbidden_v4(embedded).unwrap_or("IPv4-compatible (deprecated ::/96)"));
    }
    // NAT64 well-known prefix 64:ff9b::/96 reaches the embedded IPv4 address.
    if s[0..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return forbidden_v4(embedded);
    }
    // 6to4 2002:V4ADDR::/48.
    if s[0] == 0x2002 {
        let v4 = Ipv4Addr::new((s[1] >> 8) as u8, s[1] as u8, (s[2] >> 8) as u8, s[2] as u8);
        return forbidden_v4(v4);
    }
    match s[0] {
        x if x & 0xfe00 == 0xfc00 => Some("unique local (fc00::/7)"),
        x if x & 0xffc0 == 0xfe80 => Some("link-local (fe80::/10)"),
        x if x & 0xffc0 == 0xfec0 => Some("site-local (fec0::/10)"),
        x if x & 0xff00 == 0xff00 => Some("multicast (ff00::/8)"),
        _ => None,
    }
}

/// An address the guard refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ForbiddenAddress {
    /// The host as named in the URL.
    pub host: String,
    /// The address class.
    pub reason: &'static str,
}

impl fmt::Display for ForbiddenAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let verb = if self.host.parse::<IpAddr>().is_ok() {
            "is"
        } else {
            "resolves to"
        };
        write!(
            f,
            "{} {verb} a {} address, which vto does not connect to",
            self.host, self.reason
        )
    }
}

/// Invalid fetcher configuration.
#[derive(Debug, thiserror::Error)]
pub enum FetchConfigError {
    /// An allow-list entry is not a CIDR (`127.0.0.1/32`) or an address.
    #[error("invalid allow-list entry {entry:?}: expected a CIDR like 127.0.0.0/8 or an address")]
    InvalidCidr {
        /// The entry.
        entry: String,
    },
    /// The HTTP client could not be built.
    #[error("could not build the HTTP client: {0}")]
    Client(#[from] reqwest::Error),
}

/// Which destination addresses outbound requests may use: everything public, plus an explicit
/// allow-list.
#[derive(Debug, Clone, Default)]
pub struct AddressPolicy {
    allow: Vec<IpNet>,
}

impl AddressPolicy {
    /// A policy with the given allow-list (CIDRs or single addresses).
    pub fn new(allow: impl IntoIterator<Item = impl AsRef<str>>) -> Result<Self, FetchConfigError> {
        let allow = allow
            .into_iter()
            .map(|s| {
                let s = s.as_ref().trim();
                s.parse::<IpNet>()
                    .or_else(|_| s.parse::<IpAddr>().map(IpNet::from))
                    .map_err(|_| FetchConfigError::InvalidCidr {
                        entry: s.to_string(),
                    })
            })
            .collect::<Result<_, _>>()?;
        Ok(Self { allow })
    }

    /// Whether `ip` may be connected to: public, or inside the allow-list.
    pub fn check(&self, host: &str, ip: IpAddr) -> Result<(), ForbiddenAddress> {
        let Some(reason) = forbidden_reason(ip) else {
            return Ok(());
        };
        let canonical = ip.to_canonical();
        if self
            .allow
            .iter()
            .any(|net| net.contains(&ip) || net.contains(&canonical))
        {
            return Ok(());
        }
        Err(ForbiddenAddress {
            host: host.to_string(),
            reason,
        })
    }

    /// Keeps the allowed addresses of a resolution; an error when none is left.
    pub fn filter(
        &self,
        host: &str,
        addrs: impl IntoIterator<Item = SocketAddr>,
    ) -> Result<Vec<SocketAddr>, ForbiddenAddress> {
        let mut first_refusal = None;
        let kept: Vec<SocketAddr> = addrs
            .into_iter()
            .filter(|a| match self.check(host, a.ip()) {
                Ok(()) => true,
                Err(e) => {
                    first_refusal.get_or_insert(e);
                    false
                }
            })
            .collect();
        match (kept.is_empty(), first_refusal) {
            (true, Some(e)) => Err(e),
            _ => Ok(kept),
        }
    }

    /// Checks a URL before a request: http(s) only, and an IP-literal host must be allowed
    /// (hostnames are checked by the resolver when connecting).
    pub fn check_url(&self, url: &Url) -> Result<(), String> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(format!(
                "only http and https URLs can be fetched, not {}:",
                url.scheme()
            ));
        }
        let ip = match url.host() {
            Some(url::Host::Ipv4(v4)) => IpAddr::V4(v4),
            Some(url::Host::Ipv6(v6)) => IpAddr::V6(v6),
            Some(url::Host::Domain(_)) => return Ok(()),
            None => return Err("the URL has no host".to_string()),
        };
        self.check(&ip.to_string(), ip).map_err(|e| e.to_string())
    }

    /// The DNS resolver that enforces this policy.
    pub fn resolver(&self) -> Arc<GuardedResolver> {
        Arc::new(GuardedResolver {
            policy: self.clone(),
        })
    }

    /// A `reqwest` client builder with the guard installed: the filtering resolver, no
    /// environment proxies, no automatic redirects (follow them with [`Self::check_url`]).
    pub fn client_builder(&self) -> reqwest::ClientBuilder {
        reqwest::Client::builder()
            .dns_resolver(self.resolver())
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
    }
}

/// A DNS resolver that removes forbidden addresses from every answer (see the module docs).
#[derive(Debug, Clone)]
pub struct GuardedResolver {
    policy: AddressPolicy,
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let policy = self.policy.clone();
        Box::pin(async move {
            let host = name.as_str().to_string();
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let kept = policy.filter(&host, found)?;
            if kept.is_empty() {
                return Err(format!("{host} did not resolve to any address").into());
            }
            let addrs: Addrs = Box::new(kept.into_iter());
            Ok::<Addrs, Box<dyn std::error::Error + Send + Sync>>(addrs)
        })
    }
}

/// Configuration of [`HttpFetcher`]. Per-fetch bounds come from [`FetchLimits`].
#[derive(Debug, Clone)]
pub struct FetchConfig {
    /// CIDRs (or addresses) exempt from the guard, e.g. `["127.0.0.1/32"]` for local
    /// development and tests. Empty by default: never list these in production.
    pub allow: Vec<String>,
    /// The `User-Agent` header (default `vto/<version> (+input fetcher)`).
    pub user_agent: String,
}

impl Default for FetchConfig {
    fn default() -> Self {
        Self {
            allow: Vec::new(),
            user_agent: format!("vto/{} (+input fetcher)", env!("CARGO_PKG_VERSION")),
        }
    }
}

/// Fetches `http(s)` and `data:` inputs behind the address guard (see the module docs).
pub struct HttpFetcher {
    policy: AddressPolicy,
    user_agent: String,
    /// One client per connect timeout (reqwest sets it per client); in practice one.
    clients: Mutex<HashMap<u64, reqwest::Client>>,
}

impl fmt::Debug for HttpFetcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpFetcher")
            .field("policy", &self.policy)
            .field("user_agent", &self.user_agent)
            .finish_non_exhaustive()
    }
}

impl HttpFetcher {
    /// A fetcher; fails on a malformed allow-list entry.
    pub fn new(config: FetchConfig) -> Result<Self, FetchConfigError> {
        let me = Self {
            policy: AddressPolicy::new(&config.allow)?,
            user_agent: config.user_agent,
            clients: Mutex::new(HashMap::new()),
        };
        // Build the default client now, so a TLS setup problem shows at start-up.
        me.client(FetchLimits::default().connect_timeout_ms)?;
        Ok(me)
    }

    /// The address policy in force.
    pub fn policy(&self) -> &AddressPolicy {
        &self.policy
    }

    fn client(&self, connect_timeout_ms: u64) -> Result<reqwest::Client, reqwest::Error> {
        let mut clients = self.clients.lock().expect("client cache lock");
        if let Some(c) = clients.get(&connect_timeout_ms) {
            return Ok(c.clone());
        }
        let client = self
            .policy
            .client_builder()
            .connect_timeout(Duration::from_millis(connect_timeout_ms))
            .user_agent(self.user_agent.clone())
            .build()?;
        clients.insert(connect_timeout_ms, client.clone());
        Ok(client)
    }

    async fn fetch_url(&self, original: &str, limits: &FetchLimits) -> Result<Fetched, FetchError> {
        let fail = |why: String| FetchError::Failed(format!("could not fetch {original}: {why}"));
        let mut url = Url::parse(original).map_err(|e| fail(format!("invalid URL ({e})")))?;
        let client = self
            .client(limits.connect_timeout_ms)
            .map_err(|e| fail(format!("HTTP client unavailable ({e})")))?;
        let mut hops = 0u8;
        loop {
            self.policy.check_url(&url).map_err(fail)?;
            let resp = client
                .get(url.clone())
                .header(reqwest::header::ACCEPT, "image/*, model/*, */*;q=0.5")
                .send()
                .await
                .map_err(|e| fail(describe_send_error(&e)))?;
            if let Some(peer) = resp.remote_addr() {
                let host = url.host_str().unwrap_or_default().to_string();
                self.policy
                    .check(&host, peer.ip())
                    .map_err(|e| fail(e.to_string()))?;
            }
            let status = resp.status();
            if status.is_redirection() {
                let Some(location) = resp
                    .headers()
                    .get(reqwest::header::LOCATION)
                    .and_then(|l| l.to_str().ok())
                else {
                    return Err(fail(format!("HTTP {status} without a Location header")));
                };
                if hops >= limits.max_redirects {
                    return Err(fail(format!(
                        "more than {} redirects",
                        limits.max_redirects
                    )));
                }
                hops += 1;
                url = url
                    .join(location)
                    .map_err(|e| fail(format!("invalid redirect target ({e})")))?;
                continue;
            }
            if !status.is_success() {
                return Err(fail(format!(
                    "the server answered HTTP {}",
                    status.as_u16()
                )));
            }
            let declared_type = resp
                .headers()
                .get(reqwest::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string);
            let bytes = read_capped(resp, limits.max_bytes)
                .await
                .map_err(|e| match e {
                    ReadError::TooLarge => FetchError::TooLarge {
                        limit: limits.max_bytes,
                    },
                    ReadError::Transport(e) => fail(describe_send_error(&e)),
                })?;
            return Ok(Fetched {
                bytes,
                declared_type,
            });
        }
    }
}

#[async_trait]
impl Fetcher for HttpFetcher {
    async fn fetch(&self, input: &InputRef, limits: &FetchLimits) -> Result<Fetched, FetchError> {
        if let Some(r) = fetch_data(input, limits) {
            return r;
        }
        let InputRef::Url { url } = input else {
            unreachable!("data inputs are handled above")
        };
        match tokio::time::timeout(limits.total_timeout(), self.fetch_url(url, limits)).await {
            Ok(r) => r,
            Err(_) => Err(FetchError::Failed(format!(
                "could not fetch {url}: no complete answer within {} ms",
                limits.total_timeout_ms
            ))),
        }
    }
}

/// A send error in words, naming a guard refusal when that is the cause.
pub(crate) fn describe_send_error(e: &reqwest::Error) -> String {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if let Some(f) = s.downcast_ref::<ForbiddenAddress>() {
            return f.to_string();
        }
        source = s.source();
    }
    if e.is_timeout() {
        "the connection timed out".to_string()
    } else if e.is_connect() {
        let mut detail = String::new();
        let mut source = std::error::Error::source(e);
        while let Some(s) = source {
            detail = s.to_string();
            source = s.source();
        }
        format!("could not connect ({detail})")
    } else if e.is_body() || e.is_decode() {
        "the connection broke while reading the body".to_string()
    } else {
        "the request failed".to_string()
    }
}

/// Why a capped read stopped.
#[derive(Debug)]
pub(crate) enum ReadError {
    /// Past the cap.
    TooLarge,
    /// The transport failed.
    Transport(reqwest::Error),
}

/// Reads a body chunk by chunk and gives up as soon as it passes `cap` bytes.
pub(crate) async fn read_capped(
    mut resp: reqwest::Response,
    cap: usize,
) -> Result<Vec<u8>, ReadError> {
    if resp.content_length().is_some_and(|n| n > cap as u64) {
        return Err(ReadError::TooLarge);
    }
    let initial = resp.content_length().unwrap_or(0).min(cap as u64) as usize;
    let mut body = Vec::with_capacity(initial);
    while let Some(chunk) = resp.chunk().await.map_err(ReadError::Transport)? {
        if body.len() + chunk.len() > cap {
            return Err(ReadError::TooLarge);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allow_list_parses_cidrs_and_addresses() {
        let p = AddressPolicy::new(["127.0.0.1/32", "10.1.0.0/16", "::1"]).unwrap();
        assert!(p.check("h", "127.0.0.1".parse().unwrap()).is_ok());
        assert!(p.check("h", "10.1.2.3".parse().unwrap()).is_ok());
        assert!(p.check("h", "::1".parse().unwrap()).is_ok());
        assert!(p.check("h", "10.2.0.1".parse().unwrap()).is_err());
        assert!(p.check("h", "127.0.0.2".parse().unwrap()).is_err());
        // The mapped form of an allowed IPv4 address is allowed too.
        assert!(p.check("h", "::ffff:127.0.0.1".parse().unwrap()).is_ok());
        assert!(matches!(
            AddressPolicy::new(["not-a-cidr"]),
            Err(FetchConfigError::InvalidCidr { .. })
        ));
    }

    #[test]
    fn resolver_filter_drops_forbidden_answers_and_fails_when_none_is_left() {
        let p = AddressPolicy::default();
        let public: SocketAddr = "93.184.216.34:0".parse().unwrap();
        let private: SocketAddr = "10.0.0.7:0".parse().unwrap();
        let meta: SocketAddr = "169.254.169.254:0".parse().unwrap();
        assert_eq!(p.filter("mixed", [private, public]).unwrap(), vec![public]);
        let e = p.filter("rebind", [meta, private]).unwrap_err();
        assert_eq!(e.host, "rebind");
        assert!(e.reason.contains("link-local"), "{e}");
    }

    #[test]
    fn urls_are_checked_for_scheme_and_literal_addresses() {
        let p = AddressPolicy::default();
        let check = |u: &str| p.check_url(&Url::parse(u).unwrap());
        assert!(check("https://example.com/a.png").is_ok());
        assert!(check("ftp://example.com/a.png")
            .unwrap_err()
            .contains("http"));
        assert!(check("file:///etc/passwd").is_err());
        assert!(check("http://127.0.0.1/").unwrap_err().contains("loopback"));
        // WHATWG parsing turns these spellings into 127.0.0.1 before the check.
        assert!(check("http://2130706433/").is_err());
        assert!(check("http://0x7f.1/").is_err());
        assert!(check("http://[::ffff:7f00:1]/").is_err());
        assert!(check("http://[fd00::1]/").is_err());
    }
}
