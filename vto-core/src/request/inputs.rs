//! The URL fields: `person_image`, `product_image` / `product_model` as an http(s) URL or a
//! `data:` URL (decoded and size-checked here), and `webhook_url`.

use base64::Engine as _;

use super::{FieldError, InputRef, RequestLimits, ValidationCode};

pub(super) fn parse_input(
    s: &str,
    param: &str,
    limits: &RequestLimits,
    errors: &mut Vec<FieldError>,
) -> Option<InputRef> {
    let s = s.trim();
    if let Some(rest) = strip_prefix_ci(s, "data:") {
        return parse_data_url(rest, param, limits, errors);
    }
    parse_http_url(s, param, limits, errors).map(|url| InputRef::Url { url })
}

pub(super) fn parse_webhook(
    s: &str,
    limits: &RequestLimits,
    errors: &mut Vec<FieldError>,
) -> Option<String> {
    let s = s.trim();
    if strip_prefix_ci(s, "data:").is_some() {
        errors.push(FieldError::new(
            ValidationCode::UnsupportedScheme,
            "webhook_url",
            "webhook_url must be an https or http URL",
        ));
        return None;
    }
    parse_http_url(s, "webhook_url", limits, errors)
}

fn parse_http_url(
    s: &str,
    param: &str,
    limits: &RequestLimits,
    errors: &mut Vec<FieldError>,
) -> Option<String> {
    if s.len() > limits.max_url_len {
        errors.push(FieldError::new(
            ValidationCode::TooLarge,
            param,
            format!("{param} is longer than {} bytes", limits.max_url_len),
        ));
        return None;
    }
    match url::Url::parse(s) {
        Ok(u) if matches!(u.scheme(), "http" | "https") => {
            if u.host_str().is_none_or(str::is_empty) {
                errors.push(FieldError::new(
                    ValidationCode::InvalidUrl,
                    param,
                    format!("{param} has no host"),
                ));
                None
            } else if !u.username().is_empty() || u.password().is_some() {
                errors.push(FieldError::new(
                    ValidationCode::InvalidUrl,
                    param,
                    format!("{param} must not carry credentials"),
                ));
                None
            } else {
                Some(u.to_string())
            }
        }
        Ok(u) => {
            errors.push(FieldError::new(
                ValidationCode::UnsupportedScheme,
                param,
                format!(
                    "{param} has scheme {:?}; use https, http or data",
                    u.scheme()
                ),
            ));
            None
        }
        Err(e) => {
            errors.push(FieldError::new(
                ValidationCode::InvalidUrl,
                param,
                format!("{param} is not a valid URL: {e}"),
            ));
            None
        }
    }
}

/// `data:[<media type>][;base64],<data>` per RFC 2397; only base64 payloads are accepted.
fn parse_data_url(
    rest: &str,
    param: &str,
    limits: &RequestLimits,
    errors: &mut Vec<FieldError>,
) -> Option<InputRef> {
    let Some((meta, payload)) = rest.split_once(',') else {
        errors.push(FieldError::new(
            ValidationCode::InvalidUrl,
            param,
            format!("{param} is a data URL without a comma"),
        ));
        return None;
    };
    let Some(media_type) = meta.strip_suffix(";base64") else {
        errors.push(FieldError::new(
            ValidationCode::InvalidUrl,
            param,
            format!("{param} must be a base64 data URL (data:<type>;base64,<data>)"),
        ));
        return None;
    };
    // base64 grows data by 4/3: reject before decoding anything too large.
    if payload.len() / 4 * 3 > limits.max_data_bytes + 3 {
        errors.push(FieldError::new(
            ValidationCode::TooLarge,
            param,
            format!(
                "{param} decodes to more than {} bytes",
                limits.max_data_bytes
            ),
        ));
        return None;
    }
    let cleaned: String = payload.chars().filter(|c| !c.is_whitespace()).collect();
    match base64::engine::general_purpose::STANDARD.decode(cleaned.as_bytes()) {
        Ok(bytes) if bytes.len() > limits.max_data_bytes => {
            errors.push(FieldError::new(
                ValidationCode::TooLarge,
                param,
                format!(
                    "{param} decodes to more than {} bytes",
                    limits.max_data_bytes
                ),
            ));
            None
        }
        Ok(bytes) if bytes.is_empty() => {
            errors.push(FieldError::new(
                ValidationCode::InvalidUrl,
                param,
                format!("{param} is an empty data URL"),
            ));
            None
        }
        Ok(bytes) => Some(InputRef::Data {
            media_type: if media_type.is_empty() {
                "application/octet-stream".into()
            } else {
                media_type.to_ascii_lowercase()
            },
            bytes,
        }),
        Err(_) => {
            errors.push(FieldError::new(
                ValidationCode::InvalidUrl,
                param,
                format!("{param} has invalid base64 data"),
            ));
            None
        }
    }
}

/// `s` without `prefix` (ASCII, any case). `get` rather than indexing: `s`'s first
/// `prefix.len()` bytes may end inside a multi-byte character (`"http\u{b6}://…"` panicked
/// here; found by the `data_url` fuzz target).
pub(super) fn strip_prefix_ci<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    match (s.get(..prefix.len()), s.get(prefix.len()..)) {
        (Some(head), Some(rest)) if head.eq_ignore_ascii_case(prefix) => Some(rest),
        _ => None,
    }
}
