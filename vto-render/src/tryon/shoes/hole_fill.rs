//! The old shoes' hole filled ([`super::old_shoe`] cuts it out): two passes of the fill
//! stage ([`crate::fill`]) on one crop around all the feet's holes (no seam where two holes
//! meet; the stage's cost follows the hole, not the photo). Deterministic, like the stage.
//!
//! 1. **Ground**: the whole hole, copied only from the ground — pixels the person mask
//!    leaves out (below [`GROUND_MASK`]) and at least 2 px from the hole — keeping all of
//!    the copied texture, and the grain the stage's vote averages away put back
//!    ([`crate::fill::ground`]). Gravel, grass, sand and snow keep their grain.
//!    (Copied from anything but the hole with the stage's default detail, 0.3, the fill was
//!    a smooth grey patch beside the walking woman's small white sneakers, a dark blot under
//!    the dunes woman's feet: 30 % of a fine texture's contrast reads as a smear; and the
//!    other leg, the other person's shoes or the leg above the cut could be copied onto the
//!    floor.)
//! 2. **Leg**: under each leg's cut, the hole's pixels in the leg's column (the person-mask
//!    run across the ankle just above the cut, at most [`LEG_MAX_CM`] wide) and at most
//!    [`LEG_FILL_CM`] below the cut are filled again, from that leg above the cut (up to
//!    12 cm): each column's colour just above the cut continues down over the first half of
//!    [`LEG_FILL_CM`] and fades into the ground of pass 1 over the second (and into it across
//!    the column's edges over 2 px; faded from the cut on, the suit man's trouser hem showed
//!    a white bite of studio floor above his back shoe). A sock, an
//!    ankle or a trouser hem continues down where the new shoe's collar is lower than the
//!    old shoe was, without the ground's grain on it. (The fill stage has no whole patch to
//!    copy on a leg a few pixels wide: on the walking woman's 8 px ankles it filled the
//!    column with a flat dark bar.)

use image::{GrayImage, Luma, RgbImage, RgbaImage};

use crate::fill::ground;
use crate::vision::Mask;

/// A pixel with a person-mask probability below this is ground (a source of pass 1).
pub const GROUND_MASK: f32 = 0.2;
/// How far below a leg's cut (cm) pass 2 continues the leg.
pub const LEG_FILL_CM: f32 = 6.0;
/// A person-mask run across the ankle wider than this (cm) is not one leg (two legs
/// together, a skirt): pass 2 takes the part of it within half that of the ankle. (Skipped,
/// the suit man's trouser hems, his legs together, were filled with the white studio floor.)
pub const LEG_MAX_CM: f32 = 16.0;

/// Where a foot's hole starts: the cut's row (pixels; the hole lies below it) and the ankle
/// keypoint's x, which picks the leg above the cut.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cut {
    /// The cut's row.
    pub y: f32,
    /// The ankle's x.
    pub ankle_x: f32,
}

/// A crop of the photo: x, y, width, height.
type Crop = (u32, u32, u32, u32);

/// Fills the `hole` (255) pixels of `photo` (see the module docs); `mask` is the person mask
/// (the photo's size), `cuts` one per foot, `s` pixels per centimetre at the feet.
pub fn fill_feet(photo: &mut RgbaImage, hole: &GrayImage, mask: &Mask, cuts: &[Cut], s: f32) {
    // Pass 1: the ground.
    let m = |x: u32, y: u32| mask.data[(y * mask.width + x) as usize];
    let Some(mut filled) = ground::fill_ground(photo, hole, |x, y| m(x, y) < GROUND_MASK, false)
    else {
        return;
    };
    let (cx, cy) = (filled.x, filled.y);
    let out = &mut filled.img;
    let (cw, ch) = out.dimensions();
    let crop = (cx, cy, cw, ch);
    let crop_hole = GrayImage::from_fn(cw, ch, |x, y| *hole.get_pixel(cx + x, cy + y));
    // Pass 2: each leg continued below its cut.
    for cut in cuts {
        let Some((leg_hole, leg_src)) = leg_pass(&crop_hole, crop, mask, cut, s) else {
            continue;
        };
        continue_leg(out, &leg_hole, &leg_src, cut.y - cy as f32, s);
    }
    filled.write_into(photo, hole);
}

/// Continues the leg of `leg_src` (the leg above the cut, 255) down into the `leg_hole`
/// (255) pixels of `img` below the cut at row `cut` (crop coordinates; see the module docs).
fn continue_leg(img: &mut RgbImage, leg_hole: &GrayImage, leg_src: &GrayImage, cut: f32, s: f32) {
    let (w, h) = img.dimensions();
    let depth = (LEG_FILL_CM * s).max(1.0);
    let reach = (2.0 * s).ceil().max(3.0) as u32;
    let top = cut.floor().max(0.0) as u32;
    let on = |g: &GrayImage, x: u32, y: u32| g.get_pixel(x, y).0[0] == 255;
    let base = img.clone();
    // Each column's colour just above the cut: the mean of the lowest three leg rows within
    // `reach` above it, over the column and its two neighbours.
    let colour = |x: u32| -> Option<[f32; 3]> {
        let (mut sum, mut n, mut rows) = ([0.0f32; 3], 0.0f32, 0);
        for y in (top.saturating_sub(reach)..top.min(h)).rev() {
            let mut any = false;
            for xx in x.saturating_sub(1)..(x + 2).min(w) {
                if on(leg_src, xx, y) {
                    let p = base.get_pixel(xx, y).0;
                    for c in 0..3 {
                        sum[c] += f32::from(p[c]);
                    }
                    n += 1.0;
                    any = true;
                }
            }
            rows += usize::from(any);
            if rows == 3 {
                break;
            }
        }
        (n > 0.0).then(|| sum.map(|v| v / n))
    };
    for x in 0..w {
        let column: Vec<u32> = (0..h).filter(|&y| on(leg_hole, x, y)).collect();
        if column.is_empty() {
            continue;
        }
        let Some(leg) = colour(x) else { continue };
        // Across the column: into the ground over 2 px at its edges.
        let edge = |y: u32| {
            let side = |dir: i64| {
                (1..=2i64)
                    .find(|d| {
                        let xx = i64::from(x) + dir * d;
                        xx < 0 || xx >= i64::from(w) || !on(leg_hole, xx as u32, y)
                    })
                    .unwrap_or(3) as f32
            };
            (side(-1).min(side(1)) / 3.0).min(1.0)
        };
        for y in column {
            // The leg's colour whole over the first half, faded over the second.
            let t = ((y as f32 - cut) / depth * 2.0 - 1.0).clamp(0.0, 1.0);
            let a = (1.0 - t * t * (3.0 - 2.0 * t)) * edge(y);
            let g = base.get_pixel(x, y).0;
            let q = std::array::from_fn(|c| {
                (leg[c] * a + f32::from(g[c]) * (1.0 - a))
                    .round()
                    .clamp(0.0, 255.0) as u8
            });
            img.put_pixel(x, y, image::Rgb(q));
        }
    }
}

/// Pass 2's hole and sources for one leg, in crop coordinates (see the module docs);
/// `None` when the leg is not found above the cut or leaves no hole.
fn leg_pass(
    crop_hole: &GrayImage,
    (cx, cy, cw, ch): Crop,
    mask: &Mask,
    cut: &Cut,
    s: f32,
) -> Option<(GrayImage, GrayImage)> {
    let row = cut.y.floor() as i64 - 1;
    // The leg's run across the row: from the masked pixel nearest the ankle (within 2 cm).
    let ax = cut.ankle_x.round() as i64;
    let (l, r) = mask.run_across_row(row, ax, (2.0 * s).ceil() as i64)?;
    // Wider than one leg (two legs together): the part of it within half that of the ankle.
    let half = (LEG_MAX_CM * s / 2.0).round() as i64;
    let (l, r) = (l.max(ax - half), r.min(ax + half));
    let (y_cut, y_end) = (cut.y, cut.y + LEG_FILL_CM * s);
    let y_top = cut.y - 12.0 * s;
    let (gx0, gx1) = (l as f32 - s, r as f32 + s);
    let at = |x: u32, y: u32| ((cx + x) as f32, (cy + y) as f32);
    let leg_hole = GrayImage::from_fn(cw, ch, |x, y| {
        let (px, py) = at(x, y);
        let ok = crop_hole.get_pixel(x, y).0[0] == 255
            && px >= l as f32
            && px <= r as f32
            && py >= y_cut
            && py < y_end;
        Luma([if ok { 255 } else { 0 }])
    });
    let leg_src = GrayImage::from_fn(cw, ch, |x, y| {
        let (px, py) = at(x, y);
        let i = ((cy + y) * mask.width + cx + x) as usize;
        let ok = crop_hole.get_pixel(x, y).0[0] != 255
            && mask.data[i] >= 0.5
            && (gx0..=gx1).contains(&px)
            && py >= y_top
            && py < y_cut;
        Luma([if ok { 255 } else { 0 }])
    });
    let any = |g: &GrayImage| g.pixels().any(|p| p.0[0] == 255);
    (any(&leg_hole) && any(&leg_src)).then_some((leg_hole, leg_src))
}
