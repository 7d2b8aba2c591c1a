//! # vto-s3: result images in S3 or an S3-compatible object store
//!
//! [`S3ResultStore`] implements [`vto_core::ResultStore`] on a bucket, so that any number of
//! API servers and workers share results without a shared disk, and clients download images
//! straight from the bucket.
//!
//! ## Design decisions
//!
//! **`object_store`, not the AWS SDK.** The Apache Arrow project's `object_store` crate speaks
//! S3 (and S3-compatible servers: SeaweedFS, MinIO, Garage, Ceph RGW, R2) over the `reqwest`
//! client vto already uses, reads the standard AWS credential chain (environment, web identity,
//! instance metadata), retries transient failures with backoff, and presigns URLs
//! ([`object_store::signer::Signer`]). The AWS SDK would add its own HTTP stack and about a
//! hundred crates for the three calls a result store makes.
//!
//! **The bucket stays private; URLs are presigned.** [`ResultStore::url`](vto_core::ResultStore::url)
//! returns a SigV4 presigned GET that expires after [`S3Options::url_ttl`] (default one hour,
//! at most seven days). A client that needs the image later GETs the try-on again for a fresh
//! link, exactly as with the file store's signed links.
//!
//! **Keys are the file store's keys.** Objects are `<prefix>/<request_id>.<ext>` with the
//! image's `Content-Type`; keys are checked with [`vto_core::results::check_key`] before any
//! request, so no client-supplied string can name another object.
//!
//! **Errors say what was being done and to which object.** Refused credentials are
//! [`ResultStoreError::Denied`](vto_core::results::ResultStoreError::Denied), other failures
//! `Backend`, bad settings `NotConfigured`; [`S3ResultStore::check`] finds a wrong secret or a
//! missing bucket at start-up instead of at the first finished job.
//!
//! ## Main types
//! - [`S3ResultStore`]: the store; [`S3ResultStore::from_url`] builds it from
//!   `s3://bucket/prefix` and [`S3Options`].
//! - [`S3Options`]: endpoint, region, credentials, addressing style, URL lifetime.
//! - [`S3Location`]: a parsed `s3://bucket/prefix`.

mod options;
mod store;

pub use options::{S3Location, S3Options, MAX_URL_TTL};
pub use store::S3ResultStore;
