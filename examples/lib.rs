//! Shared helpers for vto's examples.

use base64::Engine as _;

/// A `data:` URL for bytes of a media type.
pub fn data_url(media_type: &str, bytes: &[u8]) -> String {
    format!(
        "data:{media_type};base64,{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    )
}

/// A PNG-encoded RGBA image.
pub fn png(img: &image::RgbaImage) -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Png)
        .expect("encoding a PNG in memory cannot fail");
    out.into_inner()
}
