//! What the bytes are, and decoding images without trusting them.
//!
//! Inputs arrive with a declared type (a `Content-Type` header, a `data:` URL's type) that vto
//! never trusts: [`sniff`] looks at the bytes themselves and names one of the six formats vto
//! accepts ([`MediaKind`]) or nothing. Images are then opened with [`probe_image`] (header only:
//! format, size, EXIF orientation) and [`decode_image`], which refuses an image whose header
//! claims more pixels than [`ImageLimits`] allow *before* any pixel buffer is allocated, so a
//! 100 000 × 100 000 "decompression bomb" costs a few bytes of parsing, not 40 GB of memory. The
//! decoder also runs under the `image` crate's allocation limit as a second fence.
//!
//! Every failure is a [`MediaError`] whose [`code`](MediaError::code) is one of the API's
//! stable codes: `unsupported_media` for bytes that are not a supported format (HTML served as
//! an image, a truncated or corrupt file) and `input_too_large` for bombs.

use std::io::Cursor;

use image::{DynamicImage, ImageDecoder, ImageFormat, ImageReader};

use crate::error::ErrorCode;

pub use image::metadata::Orientation;

/// A format vto accepts, recognised from the bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MediaKind {
    /// PNG (`\x89PNG\r\n\x1a\n`).
    Png,
    /// JPEG (`FF D8 FF`).
    Jpeg,
    /// WebP (`RIFF….WEBP`).
    Webp,
    /// Binary glTF 2.0 (`glTF` magic, version 2).
    Glb,
    /// glTF 2.0 JSON (an object with `asset.version` "2.x").
    Gltf,
    /// Wavefront OBJ text (only OBJ statements, at least one vertex).
    Obj,
}

impl MediaKind {
    /// The media type vto uses for it.
    pub fn content_type(self) -> &'static str {
        match self {
            MediaKind::Png => "image/png",
            MediaKind::Jpeg => "image/jpeg",
            MediaKind::Webp => "image/webp",
            MediaKind::Glb => "model/gltf-binary",
            MediaKind::Gltf => "model/gltf+json",
            MediaKind::Obj => "model/obj",
        }
    }

    /// A file extension, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            MediaKind::Png => "png",
            MediaKind::Jpeg => "jpg",
            MediaKind::Webp => "webp",
            MediaKind::Glb => "glb",
            MediaKind::Gltf => "gltf",
            MediaKind::Obj => "obj",
        }
    }

    /// Whether it is a raster image (PNG, JPEG, WebP).
    pub fn is_image(self) -> bool {
        matches!(self, MediaKind::Png | MediaKind::Jpeg | MediaKind::Webp)
    }

    /// Whether it is a 3D model (glTF binary or JSON, OBJ).
    pub fn is_model(self) -> bool {
        !self.is_image()
    }

    fn image_format(self) -> Option<ImageFormat> {
        match self {
            MediaKind::Png => Some(ImageFormat::Png),
            MediaKind::Jpeg => Some(ImageFormat::Jpeg),
            MediaKind::Webp => Some(ImageFormat::WebP),
            _ => None,
        }
    }
}

/// Names the format of `bytes` from their content, or `None` when it is none of the six.
pub fn sniff(bytes: &[u8]) -> Option<MediaKind> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        return Some(MediaKind::Png);
    }
    if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        return Some(MediaKind::Jpeg);
    }
    if bytes.len() >= 12 && &bytes[0..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        return Some(MediaKind::Webp);
    }
    if bytes.len() >= 12 && &bytes[0..4] == b"glTF" {
        let version = u32::from_le_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]);
        return (version == 2).then_some(MediaKind::Glb);
    }
    let text = std::str::from_utf8(bytes).ok()?;
    let text = text.trim_start_matches('\u{feff}').trim_start();
    if text.starts_with('{') {
        return is_gltf_json(text).then_some(MediaKind::Gltf);
    }
    is_obj(text).then_some(MediaKind::Obj)
}

fn is_gltf_json(text: &str) -> bool {
    let Ok(serde_json::Value::Object(root)) = serde_json::from_str::<serde_json::Value>(text)
    else {
        return false;
    };
    root.get("asset")
        .and_then(|a| a.get("version"))
        .and_then(|v| v.as_str())
        .is_some_and(|v| v.starts_with("2."))
}

/// Sniffs `bytes` and insists on a self-contained 3D model: GLB, OBJ, or glTF JSON whose
/// buffers and images are embedded (`data:` URIs). A `.gltf` that points at other files is
/// refused, since vto never fetches more than the one URL a client sent.
pub fn sniff_model(bytes: &[u8]) -> Result<MediaKind, MediaError> {
    let kind = match sniff(bytes) {
        Some(k) if k.is_model() => k,
        Some(k) => {
            return Err(MediaError::Unsupported(format!(
                "expected a glTF 2.0 (.glb or .gltf) or OBJ model but got an image ({})",
                k.content_type()
            )))
        }
        None => {
            return Err(MediaError::Unsupported(format!(
                "expected a glTF 2.0 (.glb or .gltf) or OBJ model, but {}",
                describe_unknown(bytes)
            )))
        }
    };
    if kind == MediaKind::Gltf {
        let root: serde_json::Value = serde_json::from_slice(bytes)
            .or_else(|_| {
                let text = std::str::from_utf8(bytes).unwrap_or_default();
                serde_json::from_str(text.trim_start_matches('\u{feff}'))
            })
            .map_err(|e| MediaError::Corrupt(format!("the glTF JSON is invalid: {e}")))?;
        for list in ["buffers", "images"] {
            let items = root.get(list).and_then(|v| v.as_array());
            for (i, item) in items.into_iter().flatten().enumerate() {
                if let Some(uri) = item.get("uri").and_then(|u| u.as_str()) {
                    if !uri.starts_with("data:") {
                        return Err(MediaError::Unsupported(format!(
                            "the glTF references an external file ({list}[{i}].uri = {:?}); \
                             embed it as a data: URI or send a .glb",
                            uri.chars().take(100).collect::<String>()
                        )));
                    }
                }
            }
        }
    }
    Ok(kind)
}

/// OBJ statements vto recognises (geometry, grouping, materials, free-form leftovers).
const OBJ_KEYWORDS: &[&str] = &[
    "v",
    "vt",
    "vn",
    "vp",
    "f",
    "l",
    "p",
    "o",
    "g",
    "s",
    "mtllib",
    "usemtl",
    "cstype",
    "deg",
    "curv",
    "curv2",
    "surf",
    "parm",
    "trim",
    "hole",
    "scrv",
    "sp",
    "end",
    "con",
    "bmat",
    "step",
    "mg",
    "lod",
    "usemap",
    "maplib",
    "shadow_obj",
    "trace_obj",
    "ctech",
    "stech",
    "bevel",
    "c_interp",
    "d_interp",
];

fn is_obj(text: &str) -> bool {
    if text.contains('\0') {
        return false;
    }
    let mut vertices = 0usize;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let keyword = line.split_whitespace().next().unwrap_or_default();
        if !OBJ_KEYWORDS.contains(&keyword) {
            return false;
        }
        if keyword == "v" {
            vertices += 1;
        }
    }
    vertices > 0
}

/// A short description of what non-media bytes look like, for error messages.
fn describe_unknown(bytes: &[u8]) -> &'static str {
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(512)]).to_ascii_lowercase();
    let head = head.trim_start();
    if bytes.is_empty() {
        "it is empty"
    } else if head.starts_with("<!doctype html")
        || head.starts_with("<html")
        || head.contains("<body")
    {
        "it looks like an HTML page"
    } else if head.starts_with('<') {
        "it looks like XML or HTML"
    } else if head.starts_with('{') || head.starts_with('[') {
        "it looks like JSON"
    } else if std::str::from_utf8(bytes).is_ok() {
        "it looks like text"
    } else {
        "its format is not recognised"
    }
}

/// Bounds for decoding one image. Defaults: 12 000 px per side, 40 megapixels, 512 MiB of
/// decoder allocations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageLimits {
    /// Widest accepted image, in pixels.
    pub max_width: u32,
    /// Tallest accepted image, in pixels.
    pub max_height: u32,
    /// Most pixels (width × height).
    pub max_pixels: u64,
    /// Most bytes the decoder may allocate at once.
    pub max_alloc: u64,
}

impl Default for ImageLimits {
    fn default() -> Self {
        Self {
            max_width: 12_000,
            max_height: 12_000,
            max_pixels: 40_000_000,
            max_alloc: 512 * 1024 * 1024,
        }
    }
}

impl ImageLimits {
    fn check(&self, width: u32, height: u32) -> Result<(), MediaError> {
        let pixels = u64::from(width) * u64::from(height);
        if width == 0 || height == 0 {
            return Err(MediaError::Corrupt(format!(
                "the image header claims an empty image ({width}×{height})"
            )));
        }
        if width > self.max_width || height > self.max_height || pixels > self.max_pixels {
            return Err(MediaError::TooLarge(format!(
                "the image is {width}×{height} pixels; the limit is {}×{} and {} megapixels",
                self.max_width,
                self.max_height,
                self.max_pixels / 1_000_000
            )));
        }
        Ok(())
    }

    /// The `image` crate's limits: only the allocation cap, so that the size check with its
    /// precise message ([`Self::check`]) runs on the header right after it is parsed.
    fn decoder_limits(&self) -> image::Limits {
        let mut l = image::Limits::default();
        l.max_image_width = None;
        l.max_image_height = None;
        l.max_alloc = Some(self.max_alloc);
        l
    }
}

/// Why bytes could not be used as media.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MediaError {
    /// Not a supported format (wrong kind, unknown bytes).
    #[error("{0}")]
    Unsupported(String),
    /// Truncated or corrupt data of a supported format.
    #[error("{0}")]
    Corrupt(String),
    /// Over the pixel or allocation limits.
    #[error("{0}")]
    TooLarge(String),
}

impl MediaError {
    /// The stable API code: `input_too_large` for limits, `unsupported_media` otherwise.
    pub fn code(&self) -> ErrorCode {
        match self {
            MediaError::TooLarge(_) => ErrorCode::InputTooLarge,
            MediaError::Unsupported(_) | MediaError::Corrupt(_) => ErrorCode::UnsupportedMedia,
        }
    }
}

fn from_image_error(e: image::ImageError) -> MediaError {
    match e {
        image::ImageError::Limits(l) => {
            MediaError::TooLarge(format!("the image is over the decoding limits: {l}"))
        }
        image::ImageError::Unsupported(u) => {
            MediaError::Unsupported(format!("the image uses an unsupported feature: {u}"))
        }
        other => MediaError::Corrupt(format!("the image is truncated or corrupt: {other}")),
    }
}

/// What an image's header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageInfo {
    /// The format, from the bytes.
    pub kind: MediaKind,
    /// Width as stored.
    pub width: u32,
    /// Height as stored.
    pub height: u32,
    /// The EXIF orientation (`NoTransforms` when there is none).
    pub orientation: Orientation,
}

impl ImageInfo {
    /// Width and height once the orientation is applied (what a viewer shows).
    pub fn oriented_dimensions(&self) -> (u32, u32) {
        match self.orientation {
            Orientation::Rotate90
            | Orientation::Rotate270
            | Orientation::Rotate90FlipH
            | Orientation::Rotate270FlipH => (self.height, self.width),
            _ => (self.width, self.height),
        }
    }
}

/// Sniffs `bytes` and insists on a raster image.
pub fn sniff_image(bytes: &[u8]) -> Result<MediaKind, MediaError> {
    match sniff(bytes) {
        Some(k) if k.is_image() => Ok(k),
        Some(k) => Err(MediaError::Unsupported(format!(
            "expected a PNG, JPEG or WebP image but got a 3D model ({})",
            k.content_type()
        ))),
        None => Err(MediaError::Unsupported(format!(
            "expected a PNG, JPEG or WebP image, but {}",
            describe_unknown(bytes)
        ))),
    }
}

fn open<'a>(
    bytes: &'a [u8],
    limits: &ImageLimits,
) -> Result<(MediaKind, impl ImageDecoder + 'a), MediaError> {
    let kind = sniff_image(bytes)?;
    let mut reader = ImageReader::new(Cursor::new(bytes));
    reader.set_format(kind.image_format().expect("sniff_image returns images"));
    reader.limits(limits.decoder_limits());
    let decoder = reader.into_decoder().map_err(from_image_error)?;
    Ok((kind, decoder))
}

/// Reads an image's header only: format, size (checked against `limits`) and orientation.
pub fn probe_image(bytes: &[u8], limits: &ImageLimits) -> Result<ImageInfo, MediaError> {
    let (kind, mut decoder) = open(bytes, limits)?;
    let (width, height) = decoder.dimensions();
    limits.check(width, height)?;
    let orientation = decoder.orientation().unwrap_or(Orientation::NoTransforms);
    Ok(ImageInfo {
        kind,
        width,
        height,
        orientation,
    })
}

/// Decodes an image under `limits`, with its EXIF orientation applied. The size in the header
/// is checked before any pixel is decoded.
pub fn decode_image(bytes: &[u8], limits: &ImageLimits) -> Result<DynamicImage, MediaError> {
    let (_, mut decoder) = open(bytes, limits)?;
    let (width, height) = decoder.dimensions();
    limits.check(width, height)?;
    let orientation = decoder.orientation().unwrap_or(Orientation::NoTransforms);
    let mut img = DynamicImage::from_decoder(decoder).map_err(from_image_error)?;
    img.apply_orientation(orientation);
    Ok(img)
}

/// Encodes an image as PNG.
pub fn encode_png(img: &DynamicImage) -> Result<Vec<u8>, MediaError> {
    let mut out = Cursor::new(Vec::new());
    // PNG has no 32-bit float or 16-bit-with-alpha-float variants: normalise exotic formats.
    let img = match img {
        DynamicImage::ImageRgb32F(_) | DynamicImage::ImageRgba32F(_) => {
            DynamicImage::ImageRgba8(img.to_rgba8())
        }
        _ => img.clone(),
    };
    img.write_to(&mut out, ImageFormat::Png)
        .map_err(|e| MediaError::Corrupt(format!("the image could not be encoded: {e}")))?;
    Ok(out.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(w: u32, h: u32) -> Vec<u8> {
        let img = DynamicImage::ImageRgb8(image::RgbImage::from_fn(w, h, |x, y| {
            image::Rgb([x as u8, y as u8, 7])
        }));
        encode_png(&img).unwrap()
    }

    #[test]
    fn sniffs_each_format_from_its_bytes() {
        assert_eq!(sniff(&png(2, 2)), Some(MediaKind::Png));
        assert_eq!(
            sniff(&[0xFF, 0xD8, 0xFF, 0xE0, 0, 0]),
            Some(MediaKind::Jpeg)
        );
        assert_eq!(sniff(b"RIFF\x10\0\0\0WEBPVP8 "), Some(MediaKind::Webp));
        let mut glb = b"glTF".to_vec();
        glb.extend(2u32.to_le_bytes());
        glb.extend(12u32.to_le_bytes());
        assert_eq!(sniff(&glb), Some(MediaKind::Glb));
        glb[4] = 1;
        assert_eq!(sniff(&glb), None, "glTF 1.0 binary is not accepted");
        assert_eq!(
            sniff(br#" {"asset":{"version":"2.0"},"buffers":[]}"#),
            Some(MediaKind::Gltf)
        );
        assert_eq!(sniff(br#"{"asset":{"version":"1.0"}}"#), None);
        assert_eq!(
            sniff(b"# cube\nmtllib a.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n"),
            Some(MediaKind::Obj)
        );
        assert_eq!(sniff(b"<!DOCTYPE html><html><body>hi</body></html>"), None);
        assert_eq!(sniff(b"hello world"), None);
        assert_eq!(sniff(b""), None);
    }

    #[test]
    fn models_must_be_self_contained() {
        let embedded = br#"{"asset":{"version":"2.0"},"buffers":[{"byteLength":3,"uri":"data:application/octet-stream;base64,AAAA"}]}"#;
        assert_eq!(sniff_model(embedded), Ok(MediaKind::Gltf));
        let external = br#"{"asset":{"version":"2.0"},"images":[{"uri":"textures/frame.png"}]}"#;
        let e = sniff_model(external).unwrap_err();
        assert_eq!(e.code(), ErrorCode::UnsupportedMedia);
        assert!(e.to_string().contains("images[0].uri"), "{e}");
        assert!(sniff_model(b"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n").is_ok());
        let e = sniff_model(b"<html></html>").unwrap_err();
        assert!(e.to_string().contains("HTML"), "{e}");
        let e = sniff_model(&png(2, 2)).unwrap_err();
        assert!(e.to_string().contains("got an image"), "{e}");
    }

    #[test]
    fn html_served_as_an_image_is_unsupported_media() {
        let e = decode_image(
            b"<!doctype html><html><body>Not found</body></html>",
            &ImageLimits::default(),
        )
        .unwrap_err();
        assert_eq!(e.code(), ErrorCode::UnsupportedMedia);
        assert!(e.to_string().contains("HTML"), "{e}");
    }

    #[test]
    fn a_model_is_not_an_image() {
        let e = probe_image(b"v 0 0 0\nf 1 1 1\n", &ImageLimits::default()).unwrap_err();
        assert_eq!(e.code(), ErrorCode::UnsupportedMedia);
        assert!(e.to_string().contains("3D model"), "{e}");
    }

    #[test]
    fn decodes_and_round_trips_a_png() {
        let bytes = png(5, 3);
        let info = probe_image(&bytes, &ImageLimits::default()).unwrap();
        assert_eq!((info.kind, info.width, info.height), (MediaKind::Png, 5, 3));
        let img = decode_image(&bytes, &ImageLimits::default()).unwrap();
        assert_eq!((img.width(), img.height()), (5, 3));
        assert_eq!(img.to_rgb8().get_pixel(4, 2).0, [4, 2, 7]);
    }

    #[test]
    fn pixel_limits_apply_before_decoding() {
        let limits = ImageLimits {
            max_pixels: 10,
            ..ImageLimits::default()
        };
        let e = decode_image(&png(4, 4), &limits).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InputTooLarge, "{e}");
    }

    #[test]
    fn truncated_png_is_a_clear_unsupported_media_error() {
        let bytes = png(64, 64);
        let cut = &bytes[..bytes.len() / 2];
        let e = decode_image(cut, &ImageLimits::default()).unwrap_err();
        assert_eq!(e.code(), ErrorCode::UnsupportedMedia, "{e}");
        assert!(e.to_string().contains("truncated or corrupt"), "{e}");
    }

    /// A 4×2 JPEG whose left half is white and right half black, with an EXIF APP1 segment
    /// saying "rotate 90° clockwise to display" (orientation 6).
    fn jpeg_with_orientation_6() -> Vec<u8> {
        let img = image::RgbImage::from_fn(16, 8, |x, _| {
            if x < 8 {
                image::Rgb([255, 255, 255])
            } else {
                image::Rgb([0, 0, 0])
            }
        });
        let mut jpeg = Vec::new();
        image::codecs::jpeg::JpegEncoder::new_with_quality(&mut jpeg, 95)
            .encode_image(&img)
            .unwrap();
        // TIFF, big-endian: header, one IFD entry (0x0112 Orientation, SHORT, 1, value 6).
        let mut exif = b"Exif\0\0MM\0\x2a\0\0\0\x08".to_vec();
        exif.extend([0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, 6, 0, 0, 0, 0, 0, 0]);
        let mut out = vec![0xFF, 0xD8, 0xFF, 0xE1];
        out.extend(((exif.len() + 2) as u16).to_be_bytes());
        out.extend(exif);
        out.extend(&jpeg[2..]);
        out
    }

    #[test]
    fn jpeg_exif_orientation_is_applied() {
        let bytes = jpeg_with_orientation_6();
        let info = probe_image(&bytes, &ImageLimits::default()).unwrap();
        assert_eq!(info.kind, MediaKind::Jpeg);
        assert_eq!(info.orientation, Orientation::Rotate90);
        assert_eq!(info.oriented_dimensions(), (8, 16));
        let img = decode_image(&bytes, &ImageLimits::default())
            .unwrap()
            .to_rgb8();
        assert_eq!((img.width(), img.height()), (8, 16));
        // Rotated 90° clockwise: the white left half is now the top half.
        assert!(img.get_pixel(4, 3).0[0] > 200, "{:?}", img.get_pixel(4, 3));
        assert!(img.get_pixel(4, 12).0[0] < 60, "{:?}", img.get_pixel(4, 12));
    }

    #[test]
    fn oriented_dimensions_swap_for_quarter_turns() {
        let info = ImageInfo {
            kind: MediaKind::Jpeg,
            width: 4,
            height: 3,
            orientation: Orientation::Rotate90,
        };
        assert_eq!(info.oriented_dimensions(), (3, 4));
    }
}
