//! Texture images: which image a glTF texture shows (`EXT_texture_webp`'s source first, then
//! the core `source`, then `KHR_texture_basisu`'s KTX2 source), and decoding it (PNG, JPEG,
//! WebP through the `image` crate; KTX2 / Basis Universal transcoded to RGBA by the pure-Rust
//! `basisu` crate) with its size checked from the header **before** the pixels are allocated,
//! and the total over all textures against [`Limits`].

use serde_json::Value;

use super::{ktx2, Limits, ProductError, Texture};

fn malformed(e: impl std::fmt::Display) -> ProductError {
    ProductError::Malformed(e.to_string())
}

/// The image index texture `texture` shows.
pub(super) fn image_of(json: &Value, texture: usize) -> Result<usize, ProductError> {
    let t = &json["textures"][texture];
    if !t.is_object() {
        return Err(malformed(format!(
            "material names a missing texture {texture}"
        )));
    }
    if let Some(i) = t["extensions"]["EXT_texture_webp"]["source"].as_u64() {
        return Ok(i as usize);
    }
    if let Some(i) = t["source"].as_u64() {
        return Ok(i as usize);
    }
    if let Some(i) = t["extensions"]["KHR_texture_basisu"]["source"].as_u64() {
        return Ok(i as usize);
    }
    Err(malformed(format!("texture {texture} has no image")))
}

/// Decodes one encoded image, adding its pixels to `total_px` and checking both limits
/// from the header first.
pub(super) fn decode(
    encoded: &[u8],
    limits: &Limits,
    total_px: &mut u64,
) -> Result<Texture, ProductError> {
    if encoded.starts_with(&ktx2::MAGIC) {
        return ktx2::decode(encoded, |w, h| count(w, h, limits, total_px));
    }
    let reader = image::ImageReader::new(std::io::Cursor::new(encoded))
        .with_guessed_format()
        .map_err(malformed)?;
    let (w, h) = reader
        .into_dimensions()
        .map_err(|e| malformed(format!("texture: {e}")))?;
    count(w, h, limits, total_px)?;
    let img = image::load_from_memory(encoded)
        .map_err(|e| malformed(format!("texture: {e}")))?
        .to_rgba8();
    if (img.width(), img.height()) != (w, h) {
        return Err(malformed("texture size differs from its header"));
    }
    Ok(Texture {
        width: img.width(),
        height: img.height(),
        rgba: img.into_raw(),
    })
}

/// Checks a `w` × `h` texture against the side limit and adds its pixels to `total_px`,
/// checked against the total limit: called from the header, before any pixel is decoded.
fn count(w: u32, h: u32, limits: &Limits, total_px: &mut u64) -> Result<(), ProductError> {
    if w.max(h) > limits.max_texture_side {
        return Err(ProductError::TooLarge {
            what: "texture side",
            got: u64::from(w.max(h)),
            limit: u64::from(limits.max_texture_side),
        });
    }
    *total_px += u64::from(w) * u64::from(h);
    if *total_px > limits.max_texture_pixels {
        return Err(ProductError::TooLarge {
            what: "texture pixels",
            got: *total_px,
            limit: limits.max_texture_pixels,
        });
    }
    Ok(())
}

/// The mean linear specular RGB and glossiness of a specular-glossiness texture.
pub(super) fn mean_spec_gloss(t: &Texture) -> ([f32; 3], f32) {
    let n = (t.rgba.len() / 4).max(1) as f64;
    let mut sum = [0.0f64; 4];
    for p in t.rgba.chunks_exact(4) {
        for k in 0..3 {
            sum[k] += f64::from(srgb_to_linear(p[k]));
        }
        sum[3] += f64::from(p[3]) / 255.0;
    }
    (
        [
            (sum[0] / n) as f32,
            (sum[1] / n) as f32,
            (sum[2] / n) as f32,
        ],
        (sum[3] / n) as f32,
    )
}

fn srgb_to_linear(c: u8) -> f32 {
    let c = f32::from(c) / 255.0;
    if c <= 0.04045 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn webp_source_wins_and_a_basisu_source_is_used_when_it_is_the_only_one() {
        let doc = json!({"textures": [
            {"source": 0, "extensions": {"EXT_texture_webp": {"source": 1}}},
            {"extensions": {"KHR_texture_basisu": {"source": 2}}},
            {"source": 3, "extensions": {"KHR_texture_basisu": {"source": 2}}},
            {"sampler": 0}]});
        assert_eq!(image_of(&doc, 0).unwrap(), 1);
        assert_eq!(image_of(&doc, 1).unwrap(), 2, "the KTX2 image");
        assert_eq!(image_of(&doc, 2).unwrap(), 3, "a PNG fallback is used");
        assert_eq!(image_of(&doc, 3).unwrap_err().code(), "product_malformed");
    }

    /// A KTX2 header (no payload) with the given vkFormat and size.
    fn ktx2_header(vk_format: u32, w: u32, h: u32) -> Vec<u8> {
        let mut b = ktx2::MAGIC.to_vec();
        for v in [vk_format, 1, w, h, 0, 0, 1, 1, 0] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        b
    }

    #[test]
    fn ktx2_files_that_are_not_basis_universal_are_refused_with_a_reason() {
        // vkFormat 37 = R8G8B8A8_UNORM: a GPU format, which KHR_texture_basisu does not allow.
        let e = decode(&ktx2_header(37, 4, 4), &Limits::default(), &mut 0).unwrap_err();
        assert_eq!(e.code(), "product_unsupported", "{e}");
        assert!(e.to_string().contains("vkFormat 37"), "{e}");
        // A Basis header with no payload: malformed, not a panic.
        let e = decode(&ktx2_header(0, 4, 4), &Limits::default(), &mut 0).unwrap_err();
        assert_eq!(e.code(), "product_malformed", "{e}");
        assert_eq!(
            decode(&ktx2::MAGIC[..10], &Limits::default(), &mut 0)
                .unwrap_err()
                .code(),
            "product_malformed"
        );
    }

    #[test]
    fn a_webp_texture_decodes() {
        let mut img = image::RgbaImage::new(4, 2);
        img.put_pixel(1, 1, image::Rgba([200, 10, 20, 255]));
        let mut webp = Vec::new();
        image::DynamicImage::ImageRgba8(img)
            .write_to(
                &mut std::io::Cursor::new(&mut webp),
                image::ImageFormat::WebP,
            )
            .unwrap();
        let mut px = 0;
        let t = decode(&webp, &Limits::default(), &mut px).unwrap();
        assert_eq!((t.width, t.height, px), (4, 2, 8));
        assert_eq!(&t.rgba[(4 + 1) * 4..(4 + 1) * 4 + 3], &[200, 10, 20]);
        let small = Limits {
            max_texture_pixels: 7,
            ..Limits::default()
        };
        assert_eq!(
            decode(&webp, &small, &mut 0).unwrap_err().code(),
            "product_too_large"
        );
    }
}
