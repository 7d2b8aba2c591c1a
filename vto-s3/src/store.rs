//! [`S3ResultStore`]: result images as objects, handed out as presigned GET URLs.

use std::fmt;
use std::time::Duration;

use async_trait::async_trait;
use http::Method;
use object_store::aws::{AmazonS3, AmazonS3Builder};
use object_store::path::Path;
use object_store::signer::Signer;
use object_store::{
    Attribute, Attributes, ClientOptions, ObjectStore, PutOptions, PutPayload, RetryConfig,
};
use vto_core::results::{check_key, content_type_of, result_key, ResultStoreError};
use vto_core::{RequestId, ResultStore, StoredResult, Timestamp};

use crate::options::{S3Location, S3Options, MAX_URL_TTL};

/// Result images in an S3 bucket (or an S3-compatible server's), under a prefix.
///
/// Objects are `<prefix>/<request_id>.<ext>` with the image's `Content-Type`; the URL handed to
/// clients is a SigV4-presigned GET that expires after the configured TTL, so the bucket stays
/// private and the server serves no bytes.
#[derive(Clone)]
pub struct S3ResultStore {
    store: AmazonS3,
    location: S3Location,
    endpoint: Option<String>,
    url_ttl: Duration,
}

impl fmt::Debug for S3ResultStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Not `AmazonS3`'s own Debug: it would print the credentials.
        f.debug_struct("S3ResultStore")
            .field("location", &self.location.to_string())
            .field("endpoint", &self.endpoint)
            .field("url_ttl", &self.url_ttl)
            .finish_non_exhaustive()
    }
}

fn not_configured(what: String) -> ResultStoreError {
    ResultStoreError::NotConfigured(what)
}

impl S3ResultStore {
    /// A store at `url` (`s3://bucket[/prefix]`) with `options`, the AWS environment filling
    /// in what they leave unset. Checks the settings, not the bucket: call
    /// [`S3ResultStore::check`] at start-up to find out whether the bucket answers.
    pub fn from_url(url: &str, options: S3Options) -> Result<Self, ResultStoreError> {
        let location = S3Location::parse(url)?;
        if options.url_ttl.is_zero() || options.url_ttl > MAX_URL_TTL {
            return Err(not_configured(format!(
                "the result URL lifetime must be between 1 s and {} s (7 days), not {:?}",
                MAX_URL_TTL.as_secs(),
                options.url_ttl
            )));
        }
        let mut builder = AmazonS3Builder::from_env()
            .with_bucket_name(&location.bucket)
            .with_virtual_hosted_style_request(!options.path_style)
            .with_client_options(
                ClientOptions::new()
                    .with_timeout(options.request_timeout)
                    .with_connect_timeout(Duration::from_secs(5)),
            )
            // A few quick retries, not object_store's default of ten over three minutes: a
            // worker holding a finished render should fail (and be retried by the queue)
            // rather than stall.
            .with_retry(RetryConfig {
                max_retries: 3,
                retry_timeout: options.request_timeout,
                ..RetryConfig::default()
            });
        if let Some(endpoint) = &options.endpoint {
            let parsed = url::Url::parse(endpoint).map_err(|e| {
                not_configured(format!("the S3 endpoint {endpoint:?} is not a URL: {e}"))
            })?;
            match parsed.scheme() {
                "http" if options.allow_http => builder = builder.with_allow_http(true),
                "http" => {
                    return Err(not_configured(format!(
                        "the S3 endpoint {endpoint:?} is plain http; allow http for a store \
                         on the same host or a private network"
                    )))
                }
                "https" => {}
                other => {
                    return Err(not_configured(format!(
                        "the S3 endpoint {endpoint:?} must be http:// or https://, not {other}://"
                    )))
                }
            }
            builder = builder.with_endpoint(endpoint.trim_end_matches('/'));
        }
        let region = options
            .region
            .clone()
            .or_else(|| std::env::var("AWS_REGION").ok())
            .or_else(|| std::env::var("AWS_DEFAULT_REGION").ok())
            .unwrap_or_else(|| "us-east-1".into());
        builder = builder.with_region(region);
        match (&options.access_key_id, &options.secret_access_key) {
            (Some(id), Some(secret)) => {
                builder = builder
                    .with_access_key_id(id)
                    .with_secret_access_key(secret);
            }
            (None, None) => {}
            _ => {
                return Err(not_configured(
                    "set both the S3 access key id and the secret access key, or neither".into(),
                ))
            }
        }
        if let Some(token) = &options.session_token {
            builder = builder.with_token(token);
        }
        let store = builder
            .build()
            .map_err(|e| not_configured(format!("S3 store for {location}: {e}")))?;
        Ok(Self {
            store,
            location,
            endpoint: options.endpoint,
            url_ttl: options.url_ttl,
        })
    }

    /// The bucket and prefix.
    pub fn location(&self) -> &S3Location {
        &self.location
    }

    /// How long presigned URLs stay valid.
    pub fn url_ttl(&self) -> Duration {
        self.url_ttl
    }

    /// Writes a two-byte probe object, `<prefix>/.vto-check`: `Ok` when the bucket exists
    /// and takes writes with our credentials, [`ResultStoreError::Denied`] for wrong
    /// credentials or no write permission, [`ResultStoreError::NotConfigured`] for a missing
    /// bucket, `Backend` when the server is unreachable. For start-up, so that a wrong secret
    /// shows there and not at the first finished job. (A write, because S3's list API errors
    /// reach us without their status, and a read cannot tell a missing bucket from a missing
    /// object.)
    pub async fn check(&self) -> Result<(), ResultStoreError> {
        let probe = self.path(".vto-check")?;
        match self.store.put(&probe, PutPayload::from_static(b"ok")).await {
            Ok(_) => Ok(()),
            Err(object_store::Error::NotFound { .. }) => Err(not_configured(format!(
                "the bucket {:?} does not exist at {}",
                self.location.bucket,
                self.endpoint.as_deref().unwrap_or("AWS S3")
            ))),
            Err(e) => Err(self.failed("writing the probe", &probe, e)),
        }
    }

    /// `<prefix>/<key>`; `key` is checked first (the check accepts only `[A-Za-z0-9-.]` and
    /// no leading dot; the internal probe name is built here and never comes from a client).
    fn object(&self, key: &str) -> Result<Path, ResultStoreError> {
        self.path(check_key(key)?)
    }

    fn path(&self, name: &str) -> Result<Path, ResultStoreError> {
        let part = object_store::path::PathPart::parse(name)
            .map_err(|_| ResultStoreError::InvalidKey(name.to_string()))?;
        Ok(self.location.prefix.child(part))
    }

    fn failed(&self, doing: &str, path: &Path, e: object_store::Error) -> ResultStoreError {
        let context = format!("{doing} s3://{}/{path}", self.location.bucket);
        match e {
            object_store::Error::PermissionDenied { .. }
            | object_store::Error::Unauthenticated { .. } => ResultStoreError::Denied {
                context,
                source: Box::new(e),
            },
            e => ResultStoreError::Backend {
                context,
                source: Box::new(e),
            },
        }
    }
}

#[async_trait]
impl ResultStore for S3ResultStore {
    async fn put(
        &self,
        request_id: RequestId,
        bytes: &[u8],
        content_type: &str,
    ) -> Result<String, ResultStoreError> {
        let key = result_key(request_id, content_type);
        let path = self.object(&key)?;
        let mut attributes = Attributes::new();
        attributes.insert(Attribute::ContentType, content_type.to_string().into());
        let opts = PutOptions {
            attributes,
            ..PutOptions::default()
        };
        self.store
            .put_opts(&path, PutPayload::from(bytes.to_vec()), opts)
            .await
            .map_err(|e| self.failed("writing", &path, e))?;
        Ok(key)
    }

    async fn get(&self, key: &str) -> Result<Option<StoredResult>, ResultStoreError> {
        let path = self.object(key)?;
        let result = match self.store.get(&path).await {
            Ok(r) => r,
            Err(object_store::Error::NotFound { .. }) => return Ok(None),
            Err(e) => return Err(self.failed("reading", &path, e)),
        };
        let content_type = result
            .attributes
            .get(&Attribute::ContentType)
            .map(|v| v.to_string())
            .unwrap_or_else(|| content_type_of(key).to_string());
        let bytes = result
            .bytes()
            .await
            .map_err(|e| self.failed("reading the body of", &path, e))?;
        Ok(Some(StoredResult {
            bytes: bytes.to_vec(),
            content_type,
        }))
    }

    /// A presigned GET URL valid for the store's TTL. The signature's start time is the
    /// machine's clock (SigV4 signs the wall-clock time; `object_store` offers no other), so
    /// `now` is not used.
    async fn url(&self, key: &str, _now: Timestamp) -> Result<String, ResultStoreError> {
        let path = self.object(key)?;
        let url = self
            .store
            .signed_url(Method::GET, &path, self.url_ttl)
            .await
            .map_err(|e| self.failed("presigning", &path, e))?;
        Ok(url.into())
    }
}
