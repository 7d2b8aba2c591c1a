//! Result images in a local folder, handed out as signed, expiring HTTP URLs.
//!
//! A URL is `<public_base_url>/v1/results/<token>` with
//! `token = base64url(key) "." expires_unix_secs "." base64url(HMAC-SHA256(secret, key "\n" expires))`.
//! It needs no API key (an `<img src>` can use it), cannot be guessed or altered without the
//! server's secret, and stops working at `expires`. The secret is 32 random bytes kept in
//! `<data_dir>/url-signing.key` (created on first start, mode 0600), so URLs survive restarts;
//! deleting the file invalidates every URL handed out.

use std::path::Path;

use async_trait::async_trait;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use sha2::Sha256;

use vto_core::results::ResultStoreError;
use vto_core::{FsResultStore, RequestId, ResultStore, StoredResult, Timestamp};

type HmacSha256 = Hmac<Sha256>;

/// Why a token was refused (all answer 404 to the client).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    /// Not three well-formed parts.
    #[error("malformed token")]
    Malformed,
    /// The signature does not match.
    #[error("bad signature")]
    BadSignature,
    /// Past its expiry.
    #[error("expired")]
    Expired,
}

/// An [`FsResultStore`] whose URLs are signed links to this server.
#[derive(Clone)]
pub struct SignedResults {
    inner: FsResultStore,
    base_url: String,
    secret: Vec<u8>,
    ttl_secs: u64,
}

impl std::fmt::Debug for SignedResults {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SignedResults")
            .field("dir", &self.inner.dir())
            .field("base_url", &self.base_url)
            .field("ttl_secs", &self.ttl_secs)
            .finish_non_exhaustive()
    }
}

/// Reads the URL-signing secret from `path`, creating it (32 random bytes, hex) if missing.
pub fn load_or_create_secret(path: &Path) -> std::io::Result<Vec<u8>> {
    match std::fs::read_to_string(path) {
        Ok(s) if s.trim().len() >= 32 => return Ok(s.trim().as_bytes().to_vec()),
        Ok(_) => {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("{} is too short to be a signing secret", path.display()),
            ))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| std::io::Error::other(e.to_string()))?;
    let hex = vto_core::ids::hex(&bytes);
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, &hex)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o600))?;
    }
    std::fs::rename(&tmp, path)?;
    Ok(hex.into_bytes())
}

impl SignedResults {
    /// Results in `dir`, linked under `base_url` (no trailing slash), valid `ttl_secs`.
    pub fn new(inner: FsResultStore, base_url: String, secret: Vec<u8>, ttl_secs: u64) -> Self {
        Self {
            inner,
            base_url,
            secret,
            ttl_secs,
        }
    }

    fn mac(&self, key: &str, expires: i64) -> HmacSha256 {
        let mut mac = HmacSha256::new_from_slice(&self.secret).expect("HMAC takes any key length");
        mac.update(key.as_bytes());
        mac.update(b"\n");
        mac.update(expires.to_string().as_bytes());
        mac
    }

    /// The token for `key`, valid until `expires` (Unix seconds).
    pub fn token(&self, key: &str, expires: i64) -> String {
        let sig = self.mac(key, expires).finalize().into_bytes();
        format!(
            "{}.{expires}.{}",
            URL_SAFE_NO_PAD.encode(key),
            URL_SAFE_NO_PAD.encode(sig)
        )
    }

    /// The result key a token grants, if it is authentic and not expired at `now`.
    pub fn verify(&self, token: &str, now: Timestamp) -> Result<String, TokenError> {
        let mut parts = token.split('.');
        let (Some(k), Some(e), Some(s), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(TokenError::Malformed);
        };
        let key = URL_SAFE_NO_PAD
            .decode(k)
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
            .ok_or(TokenError::Malformed)?;
        let expires: i64 = e.parse().map_err(|_| TokenError::Malformed)?;
        let sig = URL_SAFE_NO_PAD
            .decode(s)
            .map_err(|_| TokenError::Malformed)?;
        self.mac(&key, expires)
            .verify_slice(&sig)
            .map_err(|_| TokenError::BadSignature)?;
        if now.millis() / 1000 >= expires {
            return Err(TokenError::Expired);
        }
        Ok(key)
    }
}

#[async_trait]
impl ResultStore for SignedResults {
    async fn put(
        &self,
        request_id: RequestId,
        bytes: &[u8],
        content_type: &str,
    ) -> Result<String, ResultStoreError> {
        self.inner.put(request_id, bytes, content_type).await
    }

    async fn get(&self, key: &str) -> Result<Option<StoredResult>, ResultStoreError> {
        self.inner.get(key).await
    }

    async fn url(&self, key: &str, now: Timestamp) -> Result<String, ResultStoreError> {
        let key = vto_core::results::check_key(key)?;
        let expires = now.millis() / 1000 + self.ttl_secs as i64;
        Ok(format!(
            "{}/v1/results/{}",
            self.base_url,
            self.token(key, expires)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> SignedResults {
        let dir = std::env::temp_dir().join(format!("vto-res-{}", std::process::id()));
        SignedResults::new(
            FsResultStore::new(dir).unwrap(),
            "https://x.example".into(),
            b"0123456789abcdef0123456789abcdef".to_vec(),
            60,
        )
    }

    #[tokio::test]
    async fn signed_results_conform() {
        let root = std::env::temp_dir().join(format!("vto-signed-{}", std::process::id()));
        let n = std::sync::atomic::AtomicUsize::new(0);
        vto_core::conformance::result_store(|| {
            let dir = root.join(
                n.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
                    .to_string(),
            );
            async move {
                SignedResults::new(
                    FsResultStore::new(dir).unwrap(),
                    "https://x.example".into(),
                    b"0123456789abcdef0123456789abcdef".to_vec(),
                    60,
                )
            }
        })
        .await;
        let _ = std::fs::remove_dir_all(&root);
    }

    #[tokio::test]
    async fn tokens_verify_until_they_expire_and_resist_tampering() {
        let s = store();
        let now = Timestamp(1_767_225_600_000);
        let url = s.url("abc.png", now).await.unwrap();
        let token = url.rsplit('/').next().unwrap();
        assert_eq!(s.verify(token, now).unwrap(), "abc.png");
        assert_eq!(
            s.verify(token, Timestamp(now.0 + 60_000)),
            Err(TokenError::Expired)
        );
        let forged = s.token("other.png", now.0 / 1000 + 60);
        let mut parts: Vec<&str> = token.split('.').collect();
        let other_sig = forged.split('.').nth(2).unwrap();
        parts[2] = other_sig;
        assert_eq!(
            s.verify(&parts.join("."), now),
            Err(TokenError::BadSignature)
        );
        let later = s.token("abc.png", now.0 / 1000 + 9999);
        let extended = format!(
            "{}.{}.{}",
            parts[0],
            now.0 / 1000 + 9999,
            token.split('.').nth(2).unwrap()
        );
        assert_ne!(extended, later);
        assert_eq!(s.verify(&extended, now), Err(TokenError::BadSignature));
        assert_eq!(s.verify("nope", now), Err(TokenError::Malformed));
    }
}
