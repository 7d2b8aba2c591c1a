//! The image operations the vision pipelines need, on the CPU, for when the networks run
//! there too: the crop into a model input and the mask warp back onto the image.
//!
//! They compute exactly what the WGSL kernels and their references in [`crate::image_ops`]
//! compute (same sampling, rounding and quantization; the tests compare against those
//! references), with rows split over `rayon`'s pool.

use image::RgbaImage;
use rayon::prelude::*;

use crate::image_ops::{Affine2, Border, ImageOpsError, TensorSpec};
use crate::tflite::simd::{simd, simd_kernel};

/// Output rows per parallel chunk (each chunk runs vectorised through [`simd`]).
const CHUNK_ROWS: usize = 16;

fn check_size(what: &str, w: u32, h: u32) -> Result<(), ImageOpsError> {
    if w == 0 || h == 0 || w > 16384 || h > 16384 {
        return Err(ImageOpsError::BadSize(format!(
            "{what} is {w}x{h}; sides must be 1..=16384"
        )));
    }
    Ok(())
}

#[inline]
fn lerp(a: f32, b: f32, t: f32) -> f32 {
    a + (b - a) * t
}

/// [`crate::image_ops::ImageOps::crop_to_tensor`] on the CPU.
pub(crate) fn crop_to_tensor(
    src: &RgbaImage,
    to_source: &Affine2,
    spec: &TensorSpec,
) -> Result<Vec<f32>, ImageOpsError> {
    check_size("tensor", spec.width, spec.height)?;
    check_size("image", src.width(), src.height())?;
    let w = spec.width as usize;
    let mut out = vec![0.0f32; w * spec.height as usize * 3];
    out.par_chunks_mut(w * 3 * CHUNK_ROWS)
        .enumerate()
        .for_each(|(ci, rows)| {
            simd(CropRows((rows, ci * CHUNK_ROWS, w, src, to_source, spec)));
        });
    Ok(out)
}

simd_kernel!(CropRows => crop_rows((
    &'a mut [f32],
    usize,
    usize,
    &'a RgbaImage,
    &'a Affine2,
    &'a TensorSpec,
)));

/// Rows `y0..` of [`crop_to_tensor`] (`w` pixels of 3 values each).
#[inline(always)]
#[allow(clippy::type_complexity)]
fn crop_rows(
    (rows, y0, w, src, to_source, spec): (
        &mut [f32],
        usize,
        usize,
        &RgbaImage,
        &Affine2,
        &TensorSpec,
    ),
) {
    let (sw, sh) = (src.width() as i32, src.height() as i32);
    let raw = src.as_raw();
    let zero_border = spec.border == Border::Zero;
    let texel = |x: i32, y: i32, c: usize| -> f32 {
        if zero_border && (x < 0 || y < 0 || x >= sw || y >= sh) {
            return 0.0;
        }
        let (x, y) = (x.clamp(0, sw - 1) as usize, y.clamp(0, sh - 1) as usize);
        f32::from(raw[(y * sw as usize + x) * 4 + c])
    };
    let scale = (spec.range_max - spec.range_min) / 255.0;
    let offset = spec.range_min;
    for (r, row) in rows.chunks_exact_mut(w * 3).enumerate() {
        let oy = y0 + r;
        for (ox, px) in row.chunks_exact_mut(3).enumerate() {
            let (sx, sy) = to_source.apply(ox as f32, oy as f32);
            let (sx, sy) = ((sx * 32.0).round() / 32.0, (sy * 32.0).round() / 32.0);
            let (x0, y0) = (sx.floor(), sy.floor());
            let (fx, fy) = (sx - x0, sy - y0);
            let (ix, iy) = (x0 as i32, y0 as i32);
            for (c, p) in px.iter_mut().enumerate() {
                let top = lerp(texel(ix, iy, c), texel(ix + 1, iy, c), fx);
                let bottom = lerp(texel(ix, iy + 1, c), texel(ix + 1, iy + 1, c), fx);
                *p = lerp(top, bottom, fy).round() * scale + offset;
            }
        }
    }
}

/// [`crate::image_ops::ImageOps::warp_mask`] on the CPU (values quantized to n / 255).
pub(crate) fn warp_mask(
    mask: &[f32],
    (mask_w, mask_h): (u32, u32),
    to_mask: &Affine2,
    (width, height): (u32, u32),
) -> Result<Vec<f32>, ImageOpsError> {
    check_size("mask", mask_w, mask_h)?;
    check_size("warp target", width, height)?;
    if mask.len() != (mask_w * mask_h) as usize {
        return Err(ImageOpsError::BadSize(format!(
            "mask has {} values, expected {mask_w}x{mask_h}",
            mask.len()
        )));
    }
    let width = width as usize;
    let mut out = vec![0.0f32; width * height as usize];
    let dims = (mask_w as i32, mask_h as i32);
    out.par_chunks_mut(width * CHUNK_ROWS)
        .enumerate()
        .for_each(|(ci, rows)| {
            simd(WarpRows((
                rows,
                ci * CHUNK_ROWS,
                width,
                mask,
                dims,
                to_mask,
            )));
        });
    Ok(out)
}

simd_kernel!(WarpRows => warp_rows((
    &'a mut [f32],
    usize,
    usize,
    &'a [f32],
    (i32, i32),
    &'a Affine2,
)));

/// Rows `y0..` of [`warp_mask`] (`width` values each).
#[inline(always)]
#[allow(clippy::type_complexity)]
fn warp_rows(
    (rows, y0, width, mask, (mw, mh), to_mask): (
        &mut [f32],
        usize,
        usize,
        &[f32],
        (i32, i32),
        &Affine2,
    ),
) {
    let texel = |x: i32, y: i32| -> f32 {
        if x < 0 || y < 0 || x >= mw || y >= mh {
            0.0
        } else {
            mask[(y * mw + x) as usize]
        }
    };
    for (r, row) in rows.chunks_exact_mut(width).enumerate() {
        let oy = y0 + r;
        for (ox, o) in row.iter_mut().enumerate() {
            let (sx, sy) = to_mask.apply(ox as f32, oy as f32);
            // Entirely outside the mask (and its one-pixel bilinear fringe): zero.
            if !(sx > -1.0 && sy > -1.0 && sx < mw as f32 && sy < mh as f32) {
                continue;
            }
            let (x0, y0) = (sx.floor(), sy.floor());
            let (fx, fy) = (sx - x0, sy - y0);
            let (ix, iy) = (x0 as i32, y0 as i32);
            let top = lerp(texel(ix, iy), texel(ix + 1, iy), fx);
            let bottom = lerp(texel(ix, iy + 1), texel(ix + 1, iy + 1), fx);
            let v = (lerp(top, bottom, fy).clamp(0.0, 1.0) * 255.0).round();
            *o = v / 255.0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::image_ops::{cpu_crop_to_tensor, cpu_warp_mask};

    fn photo() -> RgbaImage {
        RgbaImage::from_fn(97, 61, |x, y| {
            image::Rgba([
                (x * 7 % 256) as u8,
                (y * 13 % 256) as u8,
                ((x * y) % 251) as u8,
                255,
            ])
        })
    }

    #[test]
    fn crop_matches_the_reference_for_both_borders_and_a_rotation() {
        let img = photo();
        // A rotated, scaled map that reaches past every edge of the photo.
        let (c, s) = (0.6f32.cos() * 0.9, 0.6f32.sin() * 0.9);
        let to_source = Affine2 {
            m: [c, -s, -12.3, s, c, -20.7],
        };
        for border in [Border::Zero, Border::Replicate] {
            let spec = TensorSpec {
                width: 40,
                height: 33,
                range_min: -1.0,
                range_max: 1.0,
                border,
            };
            let ours = crop_to_tensor(&img, &to_source, &spec).unwrap();
            let reference = cpu_crop_to_tensor(&img, &to_source, &spec);
            assert_eq!(ours.len(), reference.len());
            let worst = ours
                .iter()
                .zip(&reference)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0f32, f32::max);
            assert!(worst <= 1e-6, "{border:?}: max |diff| {worst}");
        }
    }

    #[test]
    fn mask_warp_matches_the_reference_inside_and_outside_the_mask() {
        let (mw, mh) = (23u32, 17u32);
        let mask: Vec<f32> = (0..mw * mh)
            .map(|i| ((i * 37 % 101) as f32 / 100.0).clamp(0.0, 1.0))
            .collect();
        let to_mask = Affine2 {
            m: [0.31, 0.05, -4.2, -0.04, 0.29, -2.9],
        };
        let ours = warp_mask(&mask, (mw, mh), &to_mask, (120, 90)).unwrap();
        let reference = cpu_warp_mask(&mask, (mw, mh), &to_mask, (120, 90));
        assert_eq!(ours, reference);
        assert!(ours.contains(&0.0) && ours.iter().any(|&v| v > 0.2));
        assert!(warp_mask(&mask[1..], (mw, mh), &to_mask, (120, 90)).is_err());
    }
}
