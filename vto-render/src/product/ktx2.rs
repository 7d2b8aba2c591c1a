//! KTX2 textures (`KHR_texture_basisu`): a Basis Universal payload (ETC1S or UASTC, the two
//! codecs the extension allows) transcoded to RGBA8 by the pure-Rust `basisu` crate. The size
//! is read from the container header and checked against the limits before anything is
//! transcoded; only the base level of a plain 2D texture is used.

use super::{ProductError, Texture};

/// The 12-byte identifier every KTX2 file starts with.
pub(super) const MAGIC: [u8; 12] = *b"\xabKTX 20\xbb\r\n\x1a\n";

/// Decodes a KTX2 file. `admit(width, height)` checks the size against the limits (and counts
/// it) before any pixel is transcoded.
pub(super) fn decode(
    encoded: &[u8],
    admit: impl FnOnce(u32, u32) -> Result<(), ProductError>,
) -> Result<Texture, ProductError> {
    let word = |at: usize| {
        encoded
            .get(at..at + 4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
    };
    let vk_format = word(12).ok_or_else(|| malformed("its header is truncated"))?;
    if vk_format != 0 {
        // A KTX2 file in a GPU format (vkFormat set) is not what KHR_texture_basisu allows.
        return Err(unsupported(&format!(
            "it holds GPU format vkFormat {vk_format}, not Basis Universal (ETC1S or UASTC)"
        )));
    }
    let tex = basisu::Transcoder::new(encoded)
        .map_err(|e| malformed(&format!("not a readable Basis Universal payload ({e:?})")))?;
    if tex.is_video() || tex.face_count() > 1 || tex.layer_count() > 1 {
        return Err(unsupported(
            "it is a video, cube map or texture array, not one 2D image",
        ));
    }
    let target = basisu::TargetFormat::Rgba32;
    if !tex.supports(target) {
        return Err(unsupported(&format!(
            "its codec {:?} does not transcode to 8-bit RGBA (an HDR texture)",
            tex.source_format()
        )));
    }
    let (width, height) = tex.base_dimensions();
    if width == 0 || height == 0 {
        return Err(malformed("its size is zero"));
    }
    admit(width, height)?;
    let rgba = tex
        .transcode(0, target, basisu::DecodeFlags::NONE)
        .map_err(|e| malformed(&format!("its base level does not transcode ({e:?})")))?;
    if rgba.len() != width as usize * height as usize * 4 {
        return Err(malformed("its base level differs from its header's size"));
    }
    Ok(Texture {
        width,
        height,
        rgba,
    })
}

fn malformed(why: &str) -> ProductError {
    ProductError::Malformed(format!("KTX2 texture: {why}"))
}

fn unsupported(why: &str) -> ProductError {
    ProductError::Unsupported(format!("KTX2 texture (KHR_texture_basisu): {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `tests/data/ktx2/make.mjs`'s picture: red, green / blue, half-transparent white.
    fn quadrant(x: u32, y: u32) -> [u8; 4] {
        match (x < 10, y < 6) {
            (true, true) => [255, 0, 0, 255],
            (false, true) => [0, 255, 0, 255],
            (true, false) => [0, 0, 255, 255],
            (false, false) => [255, 255, 255, 128],
        }
    }

    #[test]
    fn etc1s_and_uastc_files_transcode_to_their_picture() {
        for (name, bytes) in [
            (
                "etc1s_mips",
                &include_bytes!("../../tests/data/ktx2/etc1s_mips.ktx2")[..],
            ),
            ("uastc", include_bytes!("../../tests/data/ktx2/uastc.ktx2")),
            (
                "uastc_zstd",
                include_bytes!("../../tests/data/ktx2/uastc_zstd.ktx2"),
            ),
        ] {
            let mut admitted = None;
            let t = decode(bytes, |w, h| {
                admitted = Some((w, h));
                Ok(())
            })
            .unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(admitted, Some((20, 12)), "{name}: the base level's size");
            assert_eq!((t.width, t.height, t.rgba.len()), (20, 12, 20 * 12 * 4));
            // Away from the quadrants' edges (a block straddling two colours is lossy).
            for (x, y) in [(2, 1), (17, 2), (3, 10), (18, 9)] {
                let at = ((y * 20 + x) * 4) as usize;
                let got = &t.rgba[at..at + 4];
                let want = quadrant(x, y);
                for k in 0..4 {
                    assert!(
                        got[k].abs_diff(want[k]) <= 12,
                        "{name} ({x}, {y}): {got:?}, want {want:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_size_is_admitted_before_anything_is_transcoded() {
        let bytes = include_bytes!("../../tests/data/ktx2/uastc.ktx2");
        let e = decode(bytes, |w, h| {
            Err(ProductError::TooLarge {
                what: "texture pixels",
                got: u64::from(w * h),
                limit: 1,
            })
        })
        .unwrap_err();
        assert_eq!(e.code(), "product_too_large");
        // A truncated payload: an error, not a panic.
        let e = decode(&bytes[..bytes.len() - 40], |_, _| Ok(())).unwrap_err();
        assert_eq!(e.code(), "product_malformed", "{e}");
    }
}
