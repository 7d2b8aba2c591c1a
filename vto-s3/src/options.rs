//! [`S3Options`] and the `s3://bucket/prefix` location they go with.

use std::fmt;
use std::time::Duration;

use object_store::path::Path;
use vto_core::results::ResultStoreError;

/// The longest a presigned S3 URL may live (SigV4 allows at most seven days).
pub const MAX_URL_TTL: Duration = Duration::from_secs(7 * 24 * 3600);

/// How to reach the bucket. Every field left `None` falls back to the standard AWS
/// environment (`AWS_ENDPOINT`, `AWS_REGION`, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
/// `AWS_SESSION_TOKEN`, web identity and instance credentials, as `object_store` reads them).
#[derive(Clone)]
pub struct S3Options {
    /// The endpoint of an S3-compatible server, e.g. `http://127.0.0.1:8333` (SeaweedFS,
    /// MinIO, Garage, Ceph RGW) or `https://<account>.r2.cloudflarestorage.com`. `None`: AWS.
    /// Must be `https://`, or `http://` with [`S3Options::allow_http`].
    pub endpoint: Option<String>,
    /// Allow a plain-`http://` endpoint (a store on the same host or private network).
    /// Default `false`.
    pub allow_http: bool,
    /// The region (`us-east-1` when neither this nor `AWS_REGION` is set; most S3-compatible
    /// servers accept any).
    pub region: Option<String>,
    /// The access key id.
    pub access_key_id: Option<String>,
    /// The secret access key (never printed by `Debug`).
    pub secret_access_key: Option<String>,
    /// A session token for temporary credentials (never printed by `Debug`).
    pub session_token: Option<String>,
    /// Path-style addressing (`<endpoint>/<bucket>/<key>`), what S3-compatible servers expect;
    /// `false` for virtual-hosted style (`<bucket>.<endpoint>/<key>`). Default `true`.
    pub path_style: bool,
    /// How long a presigned result URL stays valid: more than zero, at most [`MAX_URL_TTL`].
    /// Default one hour.
    pub url_ttl: Duration,
    /// Per-request timeout for puts and gets. Default 30 s.
    pub request_timeout: Duration,
}

impl Default for S3Options {
    fn default() -> Self {
        Self {
            endpoint: None,
            allow_http: false,
            region: None,
            access_key_id: None,
            secret_access_key: None,
            session_token: None,
            path_style: true,
            url_ttl: Duration::from_secs(3600),
            request_timeout: Duration::from_secs(30),
        }
    }
}

impl fmt::Debug for S3Options {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let redacted = |s: &Option<String>| s.as_ref().map(|_| "<redacted>");
        f.debug_struct("S3Options")
            .field("endpoint", &self.endpoint)
            .field("allow_http", &self.allow_http)
            .field("region", &self.region)
            .field("access_key_id", &self.access_key_id)
            .field("secret_access_key", &redacted(&self.secret_access_key))
            .field("session_token", &redacted(&self.session_token))
            .field("path_style", &self.path_style)
            .field("url_ttl", &self.url_ttl)
            .field("request_timeout", &self.request_timeout)
            .finish()
    }
}

/// A bucket and the prefix results go under, from `s3://bucket` or `s3://bucket/a/b`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct S3Location {
    /// The bucket name.
    pub bucket: String,
    /// The prefix (empty for the bucket's root); results are `<prefix>/<request_id>.<ext>`.
    pub prefix: Path,
}

impl S3Location {
    /// Parses `s3://bucket[/prefix]`. Credentials in the URL are refused (they would end up in
    /// logs and config dumps): pass them in [`S3Options`] or the environment.
    pub fn parse(url: &str) -> Result<Self, ResultStoreError> {
        let bad =
            |why: &str| ResultStoreError::NotConfigured(format!("results URL {url:?}: {why}"));
        let parsed = url::Url::parse(url).map_err(|e| bad(&e.to_string()))?;
        if parsed.scheme() != "s3" {
            return Err(bad("the scheme must be s3://"));
        }
        if !parsed.username().is_empty() || parsed.password().is_some() {
            return Err(bad(
                "credentials do not belong in the URL; set the access key and secret instead",
            ));
        }
        if parsed.query().is_some() || parsed.fragment().is_some() || parsed.port().is_some() {
            return Err(bad("no port, query or fragment: s3://bucket/prefix"));
        }
        let bucket = parsed
            .host_str()
            .filter(|b| !b.is_empty())
            .ok_or_else(|| bad("no bucket name"))?
            .to_string();
        let prefix = parsed.path().trim_matches('/');
        let prefix = Path::parse(prefix).map_err(|e| bad(&format!("bad prefix: {e}")))?;
        Ok(Self { bucket, prefix })
    }
}

impl fmt::Display for S3Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.prefix.as_ref().is_empty() {
            write!(f, "s3://{}", self.bucket)
        } else {
            write!(f, "s3://{}/{}", self.bucket, self.prefix)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_parse_and_bad_ones_say_why() {
        let l = S3Location::parse("s3://vto-results/prod/eu").unwrap();
        assert_eq!(l.bucket, "vto-results");
        assert_eq!(l.prefix.as_ref(), "prod/eu");
        assert_eq!(l.to_string(), "s3://vto-results/prod/eu");
        let root = S3Location::parse("s3://b/").unwrap();
        assert_eq!(root.prefix.as_ref(), "");
        assert_eq!(root.to_string(), "s3://b");
        for (url, why) in [
            ("https://b/x", "scheme"),
            ("s3:///x", "bucket"),
            ("s3://key:secret@b/x", "credentials"),
            ("s3://b/x?y=1", "query"),
            ("s3://b/a//c", "prefix"),
            ("not a url", "relative URL"),
        ] {
            let e = S3Location::parse(url).unwrap_err();
            assert!(
                matches!(&e, ResultStoreError::NotConfigured(m) if m.contains(why)),
                "{url}: {e}"
            );
        }
    }

    #[test]
    fn debug_never_shows_secrets() {
        let o = S3Options {
            access_key_id: Some("AKIAEXAMPLE".into()),
            secret_access_key: Some("wJalrXUtnFEMI".into()),
            session_token: Some("FwoGZXIvYXdzE".into()),
            ..S3Options::default()
        };
        let d = format!("{o:?}");
        assert!(d.contains("AKIAEXAMPLE"));
        assert!(
            !d.contains("wJalrXUtnFEMI") && !d.contains("FwoGZXIvYXdzE"),
            "{d}"
        );
    }
}
