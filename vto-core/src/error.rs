//! Stable error codes and the one API error type every frontend turns into a reply.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::request::{FieldError, ValidationErrors};

/// Every `error.code` vto returns, with its HTTP status. The wire strings never change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ErrorCode {
    /// 400: the body is not valid JSON or a field is wrong (`param` names it).
    InvalidRequest,
    /// 401: no `Authorization: Bearer` header.
    MissingApiKey,
    /// 401: the key is unknown or revoked.
    InvalidApiKey,
    /// 402: the account's available balance does not cover the category's price.
    InsufficientBalance,
    /// 404: no such request for this account (another account's id is also "not found").
    NotFound,
    /// 405: the route exists but not for this method.
    MethodNotAllowed,
    /// 409: the same `Idempotency-Key` was used with a different body.
    IdempotencyConflict,
    /// 409: the job is already finished and cannot be canceled.
    NotCancelable,
    /// 413: the request body is over the size limit.
    PayloadTooLarge,
    /// 415: the body is not `application/json`.
    UnsupportedMediaType,
    /// 422: an input could not be fetched (network error, HTTP error, refused address).
    InputFetchFailed,
    /// 422: an input is not a supported image or model format.
    UnsupportedMedia,
    /// 422: an input is over the byte or pixel limit.
    InputTooLarge,
    /// 429: too many requests to this endpoint for this key.
    RateLimitExceeded,
    /// 500: something failed inside vto; details are in the server log, never in the reply.
    InternalError,
    /// 501: no engine is configured for this category on this server.
    EngineUnavailable,
    /// 503: a backend of the service (its database) is unavailable for now; retry after the
    /// `Retry-After` seconds. Nothing was done: no job, no charge.
    ServiceUnavailable,
    /// In a failed result: the try-on could not be generated from the inputs.
    ProcessingFailed,
    /// In a failed result: the job passed its deadline.
    TimedOut,
    /// In a canceled result: the client canceled the request.
    Canceled,
}

impl ErrorCode {
    /// The wire value.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidRequest => "invalid_request",
            ErrorCode::MissingApiKey => "missing_api_key",
            ErrorCode::InvalidApiKey => "invalid_api_key",
            ErrorCode::InsufficientBalance => "insufficient_balance",
            ErrorCode::NotFound => "not_found",
            ErrorCode::MethodNotAllowed => "method_not_allowed",
            ErrorCode::IdempotencyConflict => "idempotency_conflict",
            ErrorCode::NotCancelable => "not_cancelable",
            ErrorCode::PayloadTooLarge => "payload_too_large",
            ErrorCode::UnsupportedMediaType => "unsupported_media_type",
            ErrorCode::InputFetchFailed => "input_fetch_failed",
            ErrorCode::UnsupportedMedia => "unsupported_media",
            ErrorCode::InputTooLarge => "input_too_large",
            ErrorCode::RateLimitExceeded => "rate_limit_exceeded",
            ErrorCode::InternalError => "internal_error",
            ErrorCode::EngineUnavailable => "engine_unavailable",
            ErrorCode::ServiceUnavailable => "service_unavailable",
            ErrorCode::ProcessingFailed => "processing_failed",
            ErrorCode::TimedOut => "timed_out",
            ErrorCode::Canceled => "canceled",
        }
    }

    /// The HTTP status a reply with this code carries (job-only codes: 200 inside a result).
    pub fn http_status(self) -> u16 {
        match self {
            ErrorCode::InvalidRequest => 400,
            ErrorCode::MissingApiKey | ErrorCode::InvalidApiKey => 401,
            ErrorCode::InsufficientBalance => 402,
            ErrorCode::NotFound => 404,
            ErrorCode::MethodNotAllowed => 405,
            ErrorCode::IdempotencyConflict | ErrorCode::NotCancelable => 409,
            ErrorCode::PayloadTooLarge => 413,
            ErrorCode::UnsupportedMediaType => 415,
            ErrorCode::InputFetchFailed
            | ErrorCode::UnsupportedMedia
            | ErrorCode::InputTooLarge => 422,
            ErrorCode::RateLimitExceeded => 429,
            ErrorCode::InternalError => 500,
            ErrorCode::EngineUnavailable => 501,
            ErrorCode::ServiceUnavailable => 503,
            ErrorCode::ProcessingFailed | ErrorCode::TimedOut | ErrorCode::Canceled => 200,
        }
    }

    /// All codes, for documentation and the OpenAPI document.
    pub const ALL: [ErrorCode; 20] = [
        ErrorCode::InvalidRequest,
        ErrorCode::MissingApiKey,
        ErrorCode::InvalidApiKey,
        ErrorCode::InsufficientBalance,
        ErrorCode::NotFound,
        ErrorCode::MethodNotAllowed,
        ErrorCode::IdempotencyConflict,
        ErrorCode::NotCancelable,
        ErrorCode::PayloadTooLarge,
        ErrorCode::UnsupportedMediaType,
        ErrorCode::InputFetchFailed,
        ErrorCode::UnsupportedMedia,
        ErrorCode::InputTooLarge,
        ErrorCode::RateLimitExceeded,
        ErrorCode::InternalError,
        ErrorCode::EngineUnavailable,
        ErrorCode::ServiceUnavailable,
        ErrorCode::ProcessingFailed,
        ErrorCode::TimedOut,
        ErrorCode::Canceled,
    ];
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `{ "code": …, "message": … }`: the error of a failed job or webhook.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    /// The stable code.
    pub code: ErrorCode,
    /// A sentence for a person.
    pub message: String,
}

impl ErrorBody {
    /// A code with a message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

/// An error answered to an API caller: `{"error": {"code", "message", "param"?, "details"?}}`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct ApiError {
    /// The stable code.
    pub code: ErrorCode,
    /// A sentence for a person; never internal details.
    pub message: String,
    /// The request field at fault, when there is one.
    pub param: Option<String>,
    /// Every validation problem, when there were several.
    pub details: Vec<FieldError>,
}

impl ApiError {
    /// An error with a code and a message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            param: None,
            details: Vec::new(),
        }
    }

    /// The opaque 500 reply. Log the cause with the request id before returning this.
    pub fn internal() -> Self {
        Self::new(
            ErrorCode::InternalError,
            "an internal error occurred; it has been logged",
        )
    }

    /// `503 service_unavailable`: a backend is unavailable for now (the reply carries
    /// `Retry-After`).
    pub fn unavailable() -> Self {
        Self::new(
            ErrorCode::ServiceUnavailable,
            "the service is briefly unavailable; retry the request shortly",
        )
    }

    /// The HTTP status.
    pub fn http_status(&self) -> u16 {
        self.code.http_status()
    }

    /// The JSON reply body.
    pub fn body(&self) -> serde_json::Value {
        let mut e = serde_json::json!({ "code": self.code, "message": self.message });
        if let Some(p) = &self.param {
            e["param"] = p.clone().into();
        }
        if !self.details.is_empty() {
            e["details"] = serde_json::to_value(&self.details).unwrap_or_default();
        }
        serde_json::json!({ "error": e })
    }
}

impl From<ValidationErrors> for ApiError {
    fn from(v: ValidationErrors) -> Self {
        let first = v.errors.first().cloned();
        ApiError {
            code: ErrorCode::InvalidRequest,
            message: v.to_string(),
            param: first.map(|f| f.param),
            details: if v.errors.len() > 1 {
                v.errors
            } else {
                Vec::new()
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_serialize_to_their_wire_strings() {
        for c in ErrorCode::ALL {
            assert_eq!(serde_json::to_value(c).unwrap(), c.as_str());
        }
        assert_eq!(ErrorCode::RateLimitExceeded.http_status(), 429);
        assert_eq!(ErrorCode::InsufficientBalance.http_status(), 402);
    }

    #[test]
    fn internal_errors_reveal_nothing() {
        let body = ApiError::internal().body().to_string();
        assert!(body.contains("internal_error"));
        assert!(!body.to_lowercase().contains("sql"));
    }
}
