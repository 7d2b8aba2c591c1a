//! Taking the wearer's own hat off: the hat's mask, grown, filled in two parts.
//!
//! 1. **Beyond the head's outline** (the skull and its hair, projected: [`super::outline`])
//!    the hat covered background: that part is filled from the background only (outside the
//!    person mask and the hat), so a brim becomes wall, sky or street again — by the fill
//!    stage's ground ([`fill::ground`]), which copies the background's texture whole and puts
//!    its grain back: a wire-grid window behind a three-quarter man's black brim goes on as a
//!    grid (the stage's default smooth fill left a blurred block there).
//! 2. **Inside the outline** the hat covered the head top. What was under it is not in the
//!    photo; the head keeps its outline and is filled from the person's hair and skin near
//!    the head (the hair where some shows, else the scalp's colour), never from the hat.
//!
//! The whole hat is filled, not only what the new hat will leave uncovered: the new hat's
//! coverage is only known once it is drawn (its back is hidden by the head, its edges are
//! soft), and a part of the old hat left under a soft edge or behind the head would show
//! through. The mask is grown by [`GROW_PER_FACE`] × the face height (at least 2 px): the
//! hat's soft edge left outside would be continued into the fill as a dark or light rim.

use image::{GrayImage, RgbImage, RgbaImage};

use super::detect::{inside, skin_like, Found, HAIR_BIN_SHARE, MIN_HAIR_SAMPLES, P2};
use crate::fill::{self, FillOptions};
use crate::vision::Mask;

/// The mask is grown by this share of the face height (at least 2 px).
pub const GROW_PER_FACE: f32 = 0.015;

/// The masks of one removal, the photo's size (255: set).
#[derive(Debug, Clone, PartialEq)]
pub struct HatMask {
    /// Everything the removal replaces.
    pub mask: GrayImage,
    /// The part beyond the head's outline (filled from the background).
    pub beyond: GrayImage,
    /// The part inside it (filled from the hair and the skin).
    pub head: GrayImage,
    /// The number of masked pixels.
    pub pixels: usize,
}

/// The removal's mask of the hat `found` traced: grown, and split by the head's `outline`.
pub fn hat_mask(found: &Found, outline: &[P2], width: u32, height: u32) -> HatMask {
    let r = &found.hat;
    let g = (GROW_PER_FACE * found.frame.height).max(2.0).round() as i64;
    let mut mask = GrayImage::new(width, height);
    let mut beyond = GrayImage::new(width, height);
    let mut head = GrayImage::new(width, height);
    let (w, h) = (i64::from(width), i64::from(height));
    let mut pixels = 0;
    // Grown by a square of half side g: a box filter over the region's pixels.
    let x_lo = i64::from(r.x0) - g;
    let y_lo = i64::from(r.y0) - g;
    let x_hi = i64::from(r.x0 + r.w) + g;
    let y_hi = i64::from(r.y0 + r.h) + g;
    // Row-wise then column-wise dilation on the box.
    let (bw, bh) = ((x_hi - x_lo) as usize, (y_hi - y_lo) as usize);
    let mut rows = vec![false; bw * bh];
    let set = |y: usize, bx: usize| {
        let x = bx as i64 - g;
        x >= 0 && x < i64::from(r.w) && r.on[y * r.w as usize + x as usize]
    };
    for y in 0..r.h as usize {
        let by = y + g as usize;
        // Distance to the nearest set pixel along the row, both ways.
        let near = nearest(bw, |bx| set(y, bx));
        for (cell, &d) in rows[by * bw..(by + 1) * bw].iter_mut().zip(&near) {
            *cell = d <= g;
        }
    }
    for bx in 0..bw {
        let near = nearest(bh, |by| rows[by * bw + bx]);
        for (by, &d) in near.iter().enumerate() {
            let (x, y) = (x_lo + bx as i64, y_lo + by as i64);
            if d > g || x < 0 || y < 0 || x >= w || y >= h {
                continue;
            }
            let (x, y) = (x as u32, y as u32);
            mask.put_pixel(x, y, image::Luma([255]));
            pixels += 1;
            if inside(outline, [x as f32 + 0.5, y as f32 + 0.5]) {
                head.put_pixel(x, y, image::Luma([255]));
            } else {
                beyond.put_pixel(x, y, image::Luma([255]));
            }
        }
    }
    HatMask {
        mask,
        beyond,
        head,
        pixels,
    }
}

/// For each of `n` cells, the distance to the nearest cell where `on` holds (`i64::MAX`
/// when none does).
fn nearest(n: usize, on: impl Fn(usize) -> bool) -> Vec<i64> {
    let mut near = vec![i64::MAX; n];
    let mut last: Option<usize> = None;
    for (i, d) in near.iter_mut().enumerate() {
        if on(i) {
            last = Some(i);
        }
        if let Some(l) = last {
            *d = (i - l) as i64;
        }
    }
    last = None;
    for (i, d) in near.iter_mut().enumerate().rev() {
        if on(i) {
            last = Some(i);
        }
        if let Some(l) = last {
            *d = (*d).min((l - i) as i64);
        }
    }
    near
}

fn to_rgb(photo: &RgbaImage) -> RgbImage {
    RgbImage::from_fn(photo.width(), photo.height(), |x, y| {
        let p = photo.get_pixel(x, y).0;
        image::Rgb([p[0], p[1], p[2]])
    })
}

/// Fills `part` of `img` from where `guide` allows (unguided when the guide leaves nothing),
/// in place.
fn fill_part(
    img: &mut RgbaImage,
    part: &GrayImage,
    guide: &GrayImage,
) -> Result<(), fill::FillError> {
    if !part.as_raw().iter().any(|&v| v >= fill::THRESHOLD) {
        return Ok(());
    }
    let rgb = to_rgb(img);
    let opts = FillOptions::default();
    let filled = fill::fill_with(&rgb, part, Some(guide), &opts)
        .or_else(|_| fill::fill_with(&rgb, part, None, &opts))?;
    for (x, y, p) in img.enumerate_pixels_mut() {
        if part.get_pixel(x, y).0[0] >= fill::THRESHOLD {
            p.0[..3].copy_from_slice(&filled.get_pixel(x, y).0);
        }
    }
    Ok(())
}

/// Fills the hat's part beyond the head, `part`, from the `background` with the fill stage's
/// ground ([`fill::ground::fill_ground`]): the wall's, window's or street's texture is copied
/// whole and its grain put back, not a smooth patch; the stage's default fill when the
/// ground finds nothing to copy from.
fn fill_beyond(
    img: &mut RgbaImage,
    part: &GrayImage,
    background: &GrayImage,
) -> Result<(), fill::FillError> {
    // `part` is a [`HatMask`] part: 255 where set, 0 elsewhere, as the ground takes it.
    let ground = |x: u32, y: u32| background.get_pixel(x, y).0[0] >= fill::THRESHOLD;
    let Some(crop) = fill::ground::fill_ground(img, part, ground, true) else {
        return fill_part(img, part, background);
    };
    crop.write_into(img, part);
    Ok(())
}

/// `photo` with the hat `m` masks filled: the part beyond the head from the background (the
/// person `mask` says where that is), then the head's part from the hair and skin around it.
/// The alpha channel is kept.
pub fn remove(
    photo: &RgbaImage,
    found: &Found,
    m: &HatMask,
    mask: &Mask,
) -> Result<RgbaImage, fill::FillError> {
    let (w, h) = photo.dimensions();
    let person = |x: u32, y: u32| {
        mask.data
            .get((y * mask.width + x) as usize)
            .copied()
            .unwrap_or(0.0)
    };
    let masked = |x: u32, y: u32| m.mask.get_pixel(x, y).0[0] >= fill::THRESHOLD;
    let mut out = photo.clone();
    // The background: outside the person and the hat.
    let bg = GrayImage::from_fn(w, h, |x, y| {
        image::Luma([if !masked(x, y) && person(x, y) < 0.3 {
            255
        } else {
            0
        }])
    });
    fill_beyond(&mut out, &m.beyond, &bg)?;
    // The head: the person's hair- and skin-like pixels near the head, not the hat.
    let hair = &found.hair;
    let near = |x: u32, y: u32| {
        let q = found.frame.to_frame([x as f32 + 0.5, y as f32 + 0.5]);
        q[0] > -0.6 && q[0] < 1.6 && q[1].abs() < 1.2
    };
    let head_src = GrayImage::from_fn(w, h, |x, y| {
        let on = !masked(x, y) && person(x, y) >= 0.5 && near(x, y) && {
            let p = photo.get_pixel(x, y).0;
            let c = [p[0], p[1], p[2]];
            if hair.samples >= MIN_HAIR_SAMPLES {
                hair.holds(c, HAIR_BIN_SHARE, MIN_HAIR_SAMPLES)
            } else {
                skin_like(&found.skin, c)
            }
        };
        image::Luma([if on { 255 } else { 0 }])
    });
    fill_part(&mut out, &m.head, &head_src)?;
    Ok(out)
}
