//! The ground behind something a try-on removes — the floor under an old shoe, the sand or
//! wall beside an old skirt or a loose old sleeve — filled by the stage ([`super::fill_with`])
//! on one crop around the hole, copied only from the ground.
//!
//! - **Sources**: pixels the caller calls ground (off the person) and at least 2 px from the
//!   hole (a hole's antialiased edge is neither).
//! - **All the copied texture** is kept ([`GROUND_DETAIL`]) and the grain the stage's vote
//!   averages away is put back ([`super::grain`]): gravel, grass, sand and snow keep their
//!   grain. (With the stage's default detail, 0.3, a fill beside the walking woman's small
//!   white sneakers was a smooth grey patch: 30 % of a fine texture's contrast reads as a
//!   smear; a push–pull continuation of the background left a flat pale block where the
//!   dunes woman's wide skirt had been.)
//! - **No ground in the crop** (a person filling it): copied from anything but the hole, at
//!   the stage's default detail.
//! - **The crop** is the hole's box plus the stage's own margin (half the hole's size, at
//!   least eight patches), so the stage sees what it would on the whole photo and its cost
//!   follows the hole, not the photo.

use image::{GrayImage, Luma, RgbImage, RgbaImage};

use super::{dilate, fill_with, grain, FillOptions};

/// How much of the copied texture the ground keeps (the stage's [`FillOptions::detail`]).
pub const GROUND_DETAIL: f32 = 1.0;

/// A crop of the photo with its hole filled.
#[derive(Debug, Clone)]
pub struct FilledCrop {
    /// The crop's left column in the photo.
    pub x: u32,
    /// The crop's top row in the photo.
    pub y: u32,
    /// The crop's pixels: the photo's, the hole's filled.
    pub img: RgbImage,
}

impl FilledCrop {
    /// The crop's colour at photo pixel (`x`, `y`), `None` outside the crop.
    pub fn at(&self, x: u32, y: u32) -> Option<[u8; 3]> {
        let (cx, cy) = (x.checked_sub(self.x)?, y.checked_sub(self.y)?);
        (cx < self.img.width() && cy < self.img.height()).then(|| self.img.get_pixel(cx, cy).0)
    }

    /// Writes the crop's pixels into `photo` where `hole` (the photo's size) is 255; alpha is
    /// kept. Every hole pixel lies in the crop ([`fill_ground`] frames the hole's box).
    pub fn write_into(&self, photo: &mut RgbaImage, hole: &GrayImage) {
        for (x, y, p) in self.img.enumerate_pixels() {
            if hole.get_pixel(self.x + x, self.y + y).0[0] == 255 {
                photo.get_pixel_mut(self.x + x, self.y + y).0[..3].copy_from_slice(&p.0);
            }
        }
    }
}

/// Fills the `hole` (255) pixels of `photo` from the ground: the pixels for which
/// `ground(x, y)` holds (photo coordinates) and at least 2 px from the hole (see the module
/// docs), the stage's [`FillOptions::rimless_keep_vote`] as given (with the 2 px kept off,
/// no part of the hole has a rim). `None` for an empty hole or when nothing in the crop can
/// be copied from.
pub fn fill_ground(
    photo: &RgbaImage,
    hole: &GrayImage,
    ground: impl Fn(u32, u32) -> bool,
    rimless_keep_vote: bool,
) -> Option<FilledCrop> {
    let (cx, cy, cw, ch) = crop_of(photo, hole)?;
    let opts = FillOptions {
        rimless_keep_vote,
        ..FillOptions::default()
    };
    let rgb = RgbImage::from_fn(cw, ch, |x, y| {
        let p = photo.get_pixel(cx + x, cy + y).0;
        image::Rgb([p[0], p[1], p[2]])
    });
    let crop_hole = GrayImage::from_fn(cw, ch, |x, y| *hole.get_pixel(cx + x, cy + y));
    let near_hole = dilate(
        &crop_hole
            .pixels()
            .map(|p| p.0[0] == 255)
            .collect::<Vec<_>>(),
        cw as usize,
        ch as usize,
        2,
    );
    let sources = GrayImage::from_fn(cw, ch, |x, y| {
        let ok = !near_hole[(y * cw + x) as usize] && ground(cx + x, cy + y);
        Luma([if ok { 255 } else { 0 }])
    });
    let any = GrayImage::from_fn(cw, ch, |x, y| {
        Luma([if near_hole[(y * cw + x) as usize] {
            0
        } else {
            255
        }])
    });
    let ground_opts = FillOptions {
        detail: GROUND_DETAIL,
        ..opts.clone()
    };
    let img = match fill_with(&rgb, &crop_hole, Some(&sources), &ground_opts) {
        Ok(mut out) => {
            grain::restore(&mut out, &crop_hole, &sources, opts.seed);
            out
        }
        Err(_) => fill_with(&rgb, &crop_hole, Some(&any), &opts).ok()?,
    };
    Some(FilledCrop { x: cx, y: cy, img })
}

/// The crop a fill runs on: the hole's box plus the stage's own margin (half the hole's
/// size, at least eight patches), as x, y, width, height; `None` for an empty hole.
fn crop_of(photo: &RgbaImage, hole: &GrayImage) -> Option<(u32, u32, u32, u32)> {
    let (w, h) = (photo.width() as usize, photo.height() as usize);
    let (mut hx0, mut hy0, mut hx1, mut hy1) = (usize::MAX, usize::MAX, 0, 0);
    for (x, y, p) in hole.enumerate_pixels() {
        if p.0[0] == 255 {
            let (x, y) = (x as usize, y as usize);
            hx0 = hx0.min(x);
            hy0 = hy0.min(y);
            hx1 = hx1.max(x + 1);
            hy1 = hy1.max(y + 1);
        }
    }
    if hx1 == 0 {
        return None;
    }
    let patch = 2 * FillOptions::default().patch_radius as usize + 1;
    let margin = ((hx1 - hx0).max(hy1 - hy0) / 2).max(8 * patch) + 1;
    let (cx0, cy0) = (hx0.saturating_sub(margin), hy0.saturating_sub(margin));
    let (cx1, cy1) = ((hx1 + margin).min(w), (hy1 + margin).min(h));
    Some((
        cx0 as u32,
        cy0 as u32,
        (cx1 - cx0) as u32,
        (cy1 - cy0) as u32,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ground of fine vertical stripes with a square hole: the fill copies the stripes
    /// (not a flat mean) and leaves everything outside the hole as it was.
    #[test]
    fn the_ground_keeps_its_texture_and_nothing_else_changes() {
        let (w, h) = (96u32, 96u32);
        let photo = RgbaImage::from_fn(w, h, |x, _| {
            let v = if x % 4 < 2 { 60 } else { 200 };
            image::Rgba([v, v, v, 255])
        });
        let hole = GrayImage::from_fn(w, h, |x, y| {
            Luma([if (36..60).contains(&x) && (36..60).contains(&y) {
                255
            } else {
                0
            }])
        });
        let filled = fill_ground(&photo, &hole, |_, _| true, true).expect("a hole and ground");
        let mut spread = Vec::new();
        for y in 0..h {
            for x in 0..w {
                let c = filled.at(x, y);
                if hole.get_pixel(x, y).0[0] == 255 {
                    spread.push(f32::from(c.expect("the hole is in the crop")[0]));
                } else if let Some(c) = c {
                    assert_eq!(c[0], photo.get_pixel(x, y).0[0], "({x}, {y}) changed");
                }
            }
        }
        let mean = spread.iter().sum::<f32>() / spread.len() as f32;
        let sd =
            (spread.iter().map(|v| (v - mean).powi(2)).sum::<f32>() / spread.len() as f32).sqrt();
        assert!(sd > 40.0, "the hole's stripes have a spread of {sd} (flat)");
        assert!(fill_ground(&photo, &GrayImage::new(w, h), |_, _| true, true).is_none());
    }

    /// Thin holes between a person (not ground) and the ground's 2-px exclusion ring have no
    /// pixel around them to anchor the stage's Poisson pass: the fill stays within the
    /// ground's colours (it drifted to white and yellow beside the couple's new jeans).
    #[test]
    fn slivers_beside_the_person_stay_within_the_grounds_colours() {
        let (w, h) = (120u32, 120u32);
        let person = |x: u32, y: u32| (50..70).contains(&x) && (10..110).contains(&y);
        let sliver = |x: u32, y: u32| {
            ((46..50).contains(&x) || (70..74).contains(&x)) && (20..100).contains(&y)
        };
        let photo = RgbaImage::from_fn(w, h, |x, y| {
            if person(x, y) {
                return image::Rgba([20, 30, 90, 255]);
            }
            // A ground of diagonal ripples, with the person's light old trousers in the slivers.
            if sliver(x, y) {
                return image::Rgba([170, 190, 220, 255]);
            }
            let v = 120.0 + 25.0 * (((x + 2 * y) as f32) * 0.7).sin();
            image::Rgba([v as u8, (v * 0.9) as u8, (v * 0.7) as u8, 255])
        });
        let hole = GrayImage::from_fn(w, h, |x, y| Luma([if sliver(x, y) { 255 } else { 0 }]));
        let filled =
            fill_ground(&photo, &hole, |x, y| !person(x, y), true).expect("a hole and ground");
        for y in 0..h {
            for x in 0..w {
                if sliver(x, y) {
                    let c = filled.at(x, y).expect("in the crop");
                    // The ground spans 95–145 (red), 85–131 (green), 66–102 (blue).
                    assert!(
                        (65..=175).contains(&c[0]) && (36..=132).contains(&c[2]),
                        "({x}, {y}) filled with {c:?}, off the ground's colours"
                    );
                }
            }
        }
    }
}
