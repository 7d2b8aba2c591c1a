//! Reading a render service's answer (`docs/render-protocol.md`, "Response"): a protocol
//! error body (`{"error":{"code","message"}}`) or an image, which is sniffed, decoded under
//! the pixel limits and re-encoded as PNG. No I/O here: the HTTP engine hands in the bytes it
//! read (under its byte cap), and the fuzz target `render_reply` hands in arbitrary ones.

use std::fmt;

use crate::media::{self, ImageLimits, MediaError, MediaKind};

/// A service's `{"error":{…}}` body, with its strings made safe to show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    /// `error.code`, cleaned; `None` when absent or not a string.
    pub code: Option<String>,
    /// `error.message`, cleaned (no control characters, at most 300 characters).
    pub message: String,
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.code {
            Some(c) if !c.is_empty() => write!(
                f,
                "the render service could not process the request: {} ({c})",
                self.message
            ),
            _ => write!(
                f,
                "the render service could not process the request: {}",
                self.message
            ),
        }
    }
}

/// A successful answer: the service's image, re-encoded by vto.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplyImage {
    /// The image as PNG, encoded by vto (the service's bytes are never passed through).
    pub png: Vec<u8>,
    /// The format the service returned.
    pub returned: Option<MediaKind>,
    /// Width in pixels, as decoded (EXIF orientation applied).
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
}

/// Why a `2xx` answer is not a usable image.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplyError {
    /// The body is a protocol error (a `200` carrying `{"error":{…}}`).
    #[error("{0}")]
    Rejected(Rejection),
    /// Not a decodable image within the limits.
    #[error("the render service returned an unusable image: {0}")]
    Unusable(MediaError),
}

/// `{"error":{"code","message"}}` → the service's words; `None` for any other body.
pub fn rejection(body: &[u8]) -> Option<Rejection> {
    let v: serde_json::Value = serde_json::from_slice(body).ok()?;
    let err = v.get("error")?;
    let message = clean(err.get("message")?.as_str()?);
    let code = err.get("code").and_then(|c| c.as_str()).map(clean);
    Some(Rejection { code, message })
}

/// Reads the body of a `2xx` answer: a protocol error if it is one (and not an image),
/// else the image decoded under `limits` and re-encoded as PNG. CPU-bound: call it off the
/// async runtime.
pub fn read_image(body: &[u8], limits: &ImageLimits) -> Result<ReplyImage, ReplyError> {
    let returned = media::sniff(body);
    if returned.is_none_or(|k| !k.is_image()) {
        if let Some(r) = rejection(body) {
            return Err(ReplyError::Rejected(r));
        }
    }
    let img = media::decode_image(body, limits).map_err(ReplyError::Unusable)?;
    let png = media::encode_png(&img).map_err(ReplyError::Unusable)?;
    Ok(ReplyImage {
        png,
        returned,
        width: img.width(),
        height: img.height(),
    })
}

/// A service-supplied string made safe to show: no control characters, at most 300 chars.
fn clean(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_control())
        .take(300)
        .collect::<String>()
        .trim()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_body_is_a_rejection_even_with_a_200() {
        let body = br#"{"error":{"code":"no_person","message":"no person\nfound"}}"#;
        let e = read_image(body, &ImageLimits::default()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the render service could not process the request: no personfound (no_person)"
        );
        assert!(rejection(b"<html>oops</html>").is_none());
    }

    #[test]
    fn an_image_is_reencoded_as_png_and_junk_is_unusable() {
        let img = image::DynamicImage::new_rgb8(3, 2);
        let png = media::encode_png(&img).unwrap();
        let r = read_image(&png, &ImageLimits::default()).unwrap();
        assert_eq!(
            (r.width, r.height, r.returned),
            (3, 2, Some(MediaKind::Png))
        );
        assert!(r.png.starts_with(b"\x89PNG"));
        let e = read_image(b"\x89PNG\r\n\x1a\n\0\0", &ImageLimits::default()).unwrap_err();
        assert!(matches!(e, ReplyError::Unusable(_)), "{e:?}");
    }
}
