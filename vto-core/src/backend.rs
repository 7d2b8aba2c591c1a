//! [`BackendError`]: the one type every trait's `Backend` failure carries.
//!
//! A storage or transport backend (SQLite, PostgreSQL, S3, a webhook receiver's connection)
//! fails for its own reasons; the service cannot act on them, only log them and answer an
//! opaque `500 internal_error` ([`crate::ApiError::internal`]). So each backend maps its
//! driver's error once, into a [`BackendError`] that keeps it as the
//! [`source`](std::error::Error::source) — a log or a test can still walk down to the
//! `rusqlite::Error` or `tokio_postgres::Error` — and every trait's error enum wraps that.
//!
//! One distinction the service does act on: a backend that is **unavailable** (the database
//! restarting, its connections refused or cut, the pool timing out) rather than broken. The
//! backend marks those ([`BackendError::unavailable`]); the service answers them `503
//! service_unavailable` with `Retry-After`, which a client retries, instead of a 500.

use std::error::Error as StdError;
use std::fmt;
use std::sync::Arc;

/// A backend's failure: what it was doing, and the driver's error when there is one.
///
/// `Display` shows the context and the cause's whole chain on one line (what the logs print:
/// `tokio_postgres::Error` alone says only "db error"); [`source`](std::error::Error::source)
/// returns the cause itself. Cheap to clone (the cause is
/// shared); two values are equal when they read the same.
#[derive(Clone)]
pub struct BackendError {
    context: String,
    source: Option<Arc<dyn StdError + Send + Sync + 'static>>,
    unavailable: bool,
}

impl BackendError {
    /// A failure with no underlying error (a corrupt record, a stopped writer thread).
    pub fn msg(context: impl Into<String>) -> Self {
        Self {
            context: context.into(),
            source: None,
            unavailable: false,
        }
    }

    /// `source` failed while the backend was doing `context`. Any error type works (kept as
    /// itself, so [`source`](StdError::source) downcasts to it), and so does a `String` for a
    /// cause that is only text.
    pub fn new(
        context: impl Into<String>,
        source: impl Into<Box<dyn StdError + Send + Sync + 'static>>,
    ) -> Self {
        Self {
            context: context.into(),
            source: Some(Arc::from(source.into())),
            unavailable: false,
        }
    }

    /// Marks the failure as the backend being unavailable for now (a restart, a refused or cut
    /// connection, a pool timeout): the request may succeed when retried.
    pub fn unavailable(mut self) -> Self {
        self.unavailable = true;
        self
    }

    /// Whether the backend was unavailable (see [`BackendError::unavailable`]).
    pub fn is_unavailable(&self) -> bool {
        self.unavailable
    }

    /// What the backend was doing.
    pub fn context(&self) -> &str {
        &self.context
    }
}

impl fmt::Debug for BackendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BackendError")
            .field("context", &self.context)
            .field("source", &self.source.as_ref().map(|s| s.to_string()))
            .field("unavailable", &self.unavailable)
            .finish()
    }
}

impl fmt::Display for BackendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.context)?;
        let mut cause = self
            .source
            .as_deref()
            .map(|s| s as &(dyn StdError + 'static));
        while let Some(c) = cause {
            write!(f, ": {c}")?;
            cause = c.source();
        }
        Ok(())
    }
}

impl StdError for BackendError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.source
            .as_deref()
            .map(|s| s as &(dyn StdError + 'static))
    }
}

impl PartialEq for BackendError {
    fn eq(&self, other: &Self) -> bool {
        self.to_string() == other.to_string()
    }
}

impl Eq for BackendError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cause_is_kept_as_the_source_and_shown_after_the_context() {
        let io = std::io::Error::new(std::io::ErrorKind::StorageFull, "disk full");
        let e = BackendError::new("writing a job", io);
        assert_eq!(e.to_string(), "writing a job: disk full");
        let source = e.source().expect("a source");
        let io = source
            .downcast_ref::<std::io::Error>()
            .expect("the io::Error");
        assert_eq!(io.kind(), std::io::ErrorKind::StorageFull);
        assert_eq!(e.clone(), e);
        assert!(BackendError::msg("corrupt record").source().is_none());
    }
}
