//! Shading transfer: the person's light and big folds carried onto the new garment.
//!
//! The photo's luminance over the clothing the person wears now (person mask, minus face,
//! hair and skin), low-passed by normalised convolution and divided by its mean under the new
//! garment, multiplies the garment: the person's light and big folds carry over, the old
//! garment's colour does not. Pixels far from the clothing's typical lightness under the new
//! garment (a white shirt under a dark jacket, badges, a helmet) weigh little, so they leave
//! no ghost.

use image::RgbaImage;

use crate::image_ops::box_blur;

/// The shading ratio per pixel (see the module docs): the low-passed luminance of the
/// clothing the person wears now (`person` mask, minus `excluded` pixels and skin), over its
/// mean under the garment's `alpha`; 1 where no clothing is near.
pub(crate) fn shading(
    photo: &RgbaImage,
    person: &[f32],
    excluded: &[bool],
    skin_p: &[f32],
    alpha: &[f32],
    sw: f32,
) -> Vec<f32> {
    let (wu, hu) = (photo.width() as usize, photo.height() as usize);
    let raw = photo.as_raw();
    let clothing: Vec<f32> = (0..wu * hu)
        .map(|i| {
            if excluded[i] {
                0.0
            } else {
                person[i] * (1.0 - skin_p[i])
            }
        })
        .collect();
    let luma: Vec<f32> = (0..wu * hu)
        .map(|i| {
            let p = &raw[4 * i..4 * i + 3];
            let p = [f32::from(p[0]), f32::from(p[1]), f32::from(p[2])];
            (0.299 * p[0] + 0.587 * p[1] + 0.114 * p[2]) / 255.0
        })
        .collect();
    // The clothing's typical lightness under the new garment; pixels far from it (a white
    // shirt under a dark jacket, badges, a helmet) weigh little, so they leave no ghost.
    let median = {
        let mut v: Vec<f32> = (0..wu * hu)
            .filter(|&i| alpha[i] > 0.5 && clothing[i] > 0.5)
            .map(|i| luma[i])
            .collect();
        if v.is_empty() {
            0.5
        } else {
            let k = v.len() / 2;
            *v.select_nth_unstable_by(k, f32::total_cmp).1
        }
    }
    .max(0.02);
    let clothing: Vec<f32> = clothing
        .iter()
        .zip(&luma)
        .map(|(&c, &y)| {
            let d = (y.max(0.005) / median).ln();
            c * (-d * d / (2.0 * 0.3 * 0.3)).exp()
        })
        .collect();
    let r = ((sw / 10.0) as usize).clamp(2, 96);
    let lc: Vec<f32> = luma.iter().zip(&clothing).map(|(a, b)| a * b).collect();
    let num = box_blur(&box_blur(&lc, wu, hu, r), wu, hu, r);
    let den = box_blur(&box_blur(&clothing, wu, hu, r), wu, hu, r);
    let low: Vec<f32> = num
        .iter()
        .zip(&den)
        .map(|(n, d)| if *d > 0.02 { n / d } else { -1.0 })
        .collect();
    let (mut sum, mut n) = (0.0f64, 0.0f64);
    for i in 0..wu * hu {
        if alpha[i] > 0.5 && low[i] > 0.0 && clothing[i] > 0.5 {
            sum += f64::from(low[i]);
            n += 1.0;
        }
    }
    let reference = if n > 0.0 { (sum / n) as f32 } else { 0.5 };
    let ratio: Vec<f32> = low
        .iter()
        .map(|&v| {
            if v < 0.0 {
                1.0
            } else {
                (v / reference.max(0.02)).powf(0.6).clamp(0.6, 1.2)
            }
        })
        .collect();
    ratio
}
