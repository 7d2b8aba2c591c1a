//! The old shoes out of the photo: each shod foot's old shoe is cut out and the hole filled
//! by the fill stage ([`crate::fill`]), from the floor and the leg around it, so what the new
//! shoe does not cover shows floor, not the old shoe.
//!
//! - **The hole** of a foot: the person-mask pixels below its ankle (or below where the old
//!   shoe ends up the leg, [`old_shoe_top`]) within [`REACH_CM`] of its heel → toe segment
//!   and nearer that foot than the other, leaving out the other leg above its own cut (a
//!   raised back foot's hole does not take the front shin's jeans); grown by [`GROW_CM`] (the mask's edge is soft and
//!   often misses a pale sole against a pale floor), then up to [`COLOUR_GROW_CM`] further
//!   through pixels whose colour is unlike the floor's palette ([`UNLIKE_FLOOR`]) and
//!   nearer the old shoe's (the slivers of an old white sole the mask left out).
//! - **The fill** ([`super::hole_fill`]) runs once for all the feet's holes: the ground first,
//!   copied only from the ground with its grain, then under each leg's cut the leg continued
//!   down from above it (a sock, an ankle or a trouser hem).
//!
//! The hole is filled whole, also where the new shoe will cover it: the new shoe's outline
//! is anti-aliased over the fill, and a shoe smaller than the old one leaves floor, not
//! the old shoe.

use image::{GrayImage, Luma, RgbaImage};

use super::feet::FootPose;
use super::hole_fill::{self, Cut};
use crate::math::{Vec2, Vec3};
use crate::vision::Mask;

/// How far (cm) from a foot's heel → toe segment its old shoe may reach.
pub const REACH_CM: f32 = 7.0;
/// The person mask's old shoe grown by this much (cm, at least 2 px) into the hole.
pub const GROW_CM: f32 = 0.6;
/// Beyond that, the hole grows up to this much (cm, at least 2 px) through pixels coloured
/// like the old shoe rather than the floor.
pub const COLOUR_GROW_CM: f32 = 1.2;
/// A colour this far (RGB distance) from every colour of the floor's palette is not floor.
pub const UNLIKE_FLOOR: f32 = 40.0;

/// What [`erase_old_feet`] did.
#[derive(Debug, Clone, PartialEq)]
pub struct Erased {
    /// Pixels of each foot's hole (in the order of the feet given; grown holes of two
    /// feet may share pixels).
    pub per_foot: Vec<usize>,
    /// The filled pixels (255) of the whole photo.
    pub mask: GrayImage,
}

impl Erased {
    /// All the filled pixels.
    pub fn total(&self) -> usize {
        self.mask.pixels().filter(|p| p.0[0] == 255).count()
    }
}

/// A small colour palette: the means of the populated cells of a 16-level-per-channel
/// histogram (cells holding at least 2 % of the samples).
fn palette(samples: &[[u8; 3]]) -> Vec<Vec3> {
    let mut cells: std::collections::BTreeMap<u32, (Vec3, u32)> = Default::default();
    for c in samples {
        let key = (u32::from(c[0]) >> 4) << 8 | (u32::from(c[1]) >> 4) << 4 | u32::from(c[2]) >> 4;
        let e = cells.entry(key).or_insert((Vec3::ZERO, 0));
        e.0 += Vec3::new(f32::from(c[0]), f32::from(c[1]), f32::from(c[2]));
        e.1 += 1;
    }
    let least = (samples.len() as u32 / 50).max(1);
    cells
        .into_values()
        .filter(|(_, n)| *n >= least)
        .map(|(sum, n)| sum / n as f32)
        .collect()
}

fn nearest(palette: &[Vec3], c: Vec3) -> f32 {
    palette
        .iter()
        .map(|p| p.distance(c))
        .fold(f32::MAX, f32::min)
}

/// Distance from `p` to the heel → toe segment of `f` (pixels).
fn seg_dist(p: Vec2, f: &FootPose) -> f32 {
    seg_dist_px(p, f.heel_px, f.toe_px)
}

/// Distance from `p` to the segment `a` → `b` (pixels).
fn seg_dist_px(p: Vec2, a: Vec2, b: Vec2) -> f32 {
    let ab = b - a;
    let t = ((p - a).dot(ab) / ab.length_squared().max(1e-6)).clamp(0.0, 1.0);
    p.distance(a + ab * t)
}

/// Where foot `f`'s hole starts up the leg (its row, pixels): the ankle (or the heel, or
/// 2 cm above the toe, when higher), raised to where a high old shoe ends
/// ([`old_shoe_top`]).
fn cut_of(photo: &RgbaImage, mask: &Mask, f: &FootPose, s: f32) -> f32 {
    let top = f.ankle_px.y.min(f.heel_px.y).min(f.toe_px.y - 2.0 * s);
    old_shoe_top(photo, mask, f, s, top)
}

/// One foot's hole and what to fill it with, in photo coordinates.
struct FootHole {
    /// x0, y0, x1, y1 (exclusive) of the work box.
    bx: [usize; 4],
    /// The hole in the box (row-major).
    hole: Vec<bool>,
    /// Where the hole starts up the leg.
    cut: Cut,
}

/// Cuts out the old shoe of each of `feet` in `photo` and fills it (see the module docs).
/// `px_per_cm` is the scale at the feet. A mask of another size than the photo erases
/// nothing.
pub fn erase_old_feet(
    photo: &mut RgbaImage,
    mask: &Mask,
    feet: &[FootPose],
    px_per_cm: f32,
) -> Erased {
    let (w, h) = (photo.width() as usize, photo.height() as usize);
    let mut erased = Erased {
        per_foot: vec![0; feet.len()],
        mask: GrayImage::new(photo.width(), photo.height()),
    };
    if mask.width as usize != w || mask.height as usize != h {
        return erased;
    }
    let s = px_per_cm;
    let cuts: Vec<f32> = feet.iter().map(|f| cut_of(photo, mask, f, s)).collect();
    let holes: Vec<Option<FootHole>> = feet
        .iter()
        .map(|f| foot_hole(photo, mask, feet, &cuts, f, s))
        .collect();
    // One hole for all the feet (filled at once: no seam where two feet's holes meet).
    for (k, fh) in holes.iter().enumerate() {
        let Some(fh) = fh else { continue };
        let [x0, y0, x1, _] = fh.bx;
        let bw = x1 - x0;
        for (i, _) in fh.hole.iter().enumerate().filter(|(_, b)| **b) {
            erased.per_foot[k] += 1;
            let (x, y) = ((x0 + i % bw) as u32, (y0 + i / bw) as u32);
            erased.mask.put_pixel(x, y, Luma([255]));
        }
    }
    let cuts: Vec<Cut> = holes.iter().flatten().map(|fh| fh.cut).collect();
    hole_fill::fill_feet(photo, &erased.mask, mask, &cuts, s);
    erased
}

/// The hole of foot `f` (see the module docs); `None` when it is empty.
fn foot_hole(
    photo: &RgbaImage,
    mask: &Mask,
    feet: &[FootPose],
    cuts: &[f32],
    f: &FootPose,
    s: f32,
) -> Option<FootHole> {
    let (w, h) = (photo.width() as i64, photo.height() as i64);
    let reach = REACH_CM * s;
    let grow = (GROW_CM * s).round().max(2.0) as i64;
    let colour_grow = (COLOUR_GROW_CM * s).round().max(2.0) as usize;
    let top = cut_of(photo, mask, f, s);
    let pad = reach + (grow + colour_grow as i64) as f32 + 6.0;
    let x0 = (f.heel_px.x.min(f.toe_px.x) - pad).floor().max(0.0) as i64;
    let x1 = (f.heel_px.x.max(f.toe_px.x) + pad).ceil().min(w as f32) as i64;
    let y0 = (top - 4.0).floor().max(0.0) as i64;
    let y1 = (f.heel_px.y.max(f.toe_px.y) + 6.0 * s + pad - reach)
        .ceil()
        .min(h as f32) as i64;
    if x1 <= x0 || y1 <= y0 {
        return None;
    }
    let (bw, bh) = ((x1 - x0) as usize, (y1 - y0) as usize);
    let below = |y: usize| (y0 + y as i64) as f32 >= top;
    let at = |x: usize, y: usize| -> [u8; 3] {
        let p = photo
            .get_pixel((x0 + x as i64) as u32, (y0 + y as i64) as u32)
            .0;
        [p[0], p[1], p[2]]
    };
    let m = |x: usize, y: usize| mask.data[((y0 + y as i64) * w + x0 + x as i64) as usize];
    // Another foot's shin above that foot's cut is that leg, not this foot's old shoe (the
    // walking woman's back foot, raised behind her front leg: its hole took the front leg's
    // jeans, filled as a grey patch, later a white one).
    let axis_dist = |g: &FootPose, p: Vec2| {
        g.knee_px
            .map_or(f32::MAX, |k| seg_dist_px(p, g.ankle_px, k))
    };
    let others_leg = |p: Vec2| {
        feet.iter()
            .zip(cuts)
            .any(|(g, &cut)| !std::ptr::eq(g, f) && p.y < cut && axis_dist(g, p) < axis_dist(f, p))
    };
    let mut base = vec![false; bw * bh];
    for y in 0..bh {
        for x in 0..bw {
            if !below(y) || m(x, y) < 0.35 {
                continue;
            }
            let p = Vec2::new((x0 + x as i64) as f32, (y0 + y as i64) as f32);
            let d = seg_dist(p, f);
            let nearest_foot = feet
                .iter()
                .all(|g| std::ptr::eq(g, f) || seg_dist(p, g) >= d);
            base[y * bw + x] = d <= reach && nearest_foot && !others_leg(p);
        }
    }
    if !base.iter().any(|b| *b) {
        return None;
    }
    // Grown by `grow` (a square), below the cut only.
    let dilate = |hole: &[bool], r: i64| -> Vec<bool> {
        let mut out = hole.to_vec();
        for y in 0..bh as i64 {
            for x in 0..bw as i64 {
                if !hole[(y * bw as i64 + x) as usize] {
                    continue;
                }
                for yy in (y - r).max(0)..(y + r + 1).min(bh as i64) {
                    for xx in (x - r).max(0)..(x + r + 1).min(bw as i64) {
                        if below(yy as usize) {
                            out[(yy * bw as i64 + xx) as usize] = true;
                        }
                    }
                }
            }
        }
        out
    };
    let mut hole = dilate(&base, grow);
    // Nor does the ring grown over the mask's edge take the other shin (the ring grown
    // through the old shoe's colour may: a white sock or collar above that foot's cut).
    for (i, b) in hole.iter_mut().enumerate() {
        let p = Vec2::new((x0 + (i % bw) as i64) as f32, (y0 + (i / bw) as i64) as f32);
        if *b && others_leg(p) {
            *b = false;
        }
    }
    // Then through pixels coloured like the old shoe and unlike the floor. The shoe's
    // palette: the masked pixels, and those of the grown ring unlike the floor (the part of
    // a pale sole the mask's edge took in).
    let reach_zone = dilate(&hole, colour_grow as i64 + 1);
    let floor: Vec<[u8; 3]> = (0..bw * bh)
        .filter(|&i| !reach_zone[i] && below(i / bw) && m(i % bw, i / bw) < 0.2)
        .map(|i| at(i % bw, i / bw))
        .collect();
    let floor = palette(&floor);
    let rgb = |i: usize| {
        let c = at(i % bw, i / bw);
        Vec3::new(f32::from(c[0]), f32::from(c[1]), f32::from(c[2]))
    };
    if !floor.is_empty() {
        let shoe: Vec<[u8; 3]> = (0..bw * bh)
            .filter(|&i| base[i] || (hole[i] && nearest(&floor, rgb(i)) > UNLIKE_FLOOR))
            .map(|i| at(i % bw, i / bw))
            .collect();
        let shoe = palette(&shoe);
        for _ in 0..colour_grow {
            let mut add = Vec::new();
            for y in 0..bh {
                for x in 0..bw {
                    let i = y * bw + x;
                    if hole[i] || !below(y) {
                        continue;
                    }
                    let touches = (x > 0 && hole[i - 1])
                        || (x + 1 < bw && hole[i + 1])
                        || (y > 0 && hole[i - bw])
                        || (y + 1 < bh && hole[i + bw]);
                    let (to_floor, c) = (nearest(&floor, rgb(i)), rgb(i));
                    if touches && to_floor > UNLIKE_FLOOR && nearest(&shoe, c) < to_floor {
                        add.push(i);
                    }
                }
            }
            if add.is_empty() {
                break;
            }
            for i in add {
                hole[i] = true;
            }
        }
    }
    Some(FootHole {
        bx: [x0 as usize, y0 as usize, x1 as usize, y1 as usize],
        hole,
        cut: Cut {
            y: top,
            ankle_x: f.ankle_px.x,
        },
    })
}

/// How high up the leg the old shoe reaches above `top` (the ankle's cut), pixels: rows
/// across the ankle (±2.5 cm, person-mask pixels) whose colour is nearer the old shoe's (just
/// under the cut) than the leg's (8–10 cm above it), at most 6 cm up. A boot or a high-top
/// worn in the photo would otherwise show above a low new shoe's collar. Unchanged when the
/// two colours are alike (within 40 of 255: dark trousers over dark shoes).
pub fn old_shoe_top(photo: &RgbaImage, mask: &Mask, f: &FootPose, s: f32, top: f32) -> f32 {
    let Some((shoe, leg)) = ankle_colours(photo, mask, f, s, top) else {
        return top;
    };
    if shoe.distance(leg) < 40.0 {
        return top;
    }
    let mut t = top;
    while t > top - 6.0 * s {
        let Some(c) = row_mean(photo, mask, f, s, t - 1.0) else {
            break;
        };
        if c.distance(shoe) >= c.distance(leg) {
            break;
        }
        t -= 1.0;
    }
    t
}

/// The mean colour of the person-mask pixels of row `y` across foot `f`'s ankle (±2.5 cm);
/// `None` with fewer than two, or a mask of another size than the photo.
fn row_mean(photo: &RgbaImage, mask: &Mask, f: &FootPose, s: f32, y: f32) -> Option<Vec3> {
    let (w, h) = (i64::from(photo.width()), i64::from(photo.height()));
    let yy = y.round() as i64;
    if mask.width as i64 != w || mask.height as i64 != h || yy < 0 || yy >= h {
        return None;
    }
    let half = (2.5 * s).max(2.0);
    let (mut sum, mut n) = (Vec3::ZERO, 0u32);
    let (xa, xb) = (
        (f.ankle_px.x - half).round() as i64,
        (f.ankle_px.x + half).round() as i64,
    );
    for x in xa.max(0)..=xb.min(w - 1) {
        if mask.data[(yy * w + x) as usize] < 0.5 {
            continue;
        }
        let p = photo.get_pixel(x as u32, yy as u32);
        sum += Vec3::new(f32::from(p[0]), f32::from(p[1]), f32::from(p[2]));
        n += 1;
    }
    (n >= 2).then(|| sum / n as f32)
}

/// Foot `f`'s old shoe colour just under the ankle's cut at `top` (0.5–2 cm below) and its
/// leg's 8–10 cm above it, each the mean of [`row_mean`] over five rows.
fn ankle_colours(
    photo: &RgbaImage,
    mask: &Mask,
    f: &FootPose,
    s: f32,
    top: f32,
) -> Option<(Vec3, Vec3)> {
    let band = |a: f32, b: f32| -> Option<Vec3> {
        let v: Vec<Vec3> = (0..5)
            .filter_map(|i| row_mean(photo, mask, f, s, a + (b - a) * i as f32 / 4.0))
            .collect();
        (!v.is_empty()).then(|| v.iter().sum::<Vec3>() / v.len() as f32)
    };
    Some((
        band(top + 0.5 * s, top + 2.0 * s)?,
        band(top - 10.0 * s, top - 8.0 * s)?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tryon::shoes::feet::Side;

    fn foot(heel: Vec2, toe: Vec2, ankle: Vec2) -> FootPose {
        FootPose {
            side: Side::Left,
            heel: Vec3::ZERO,
            heading: Vec3::Z,
            length_cm: 25.0,
            visibility: 1.0,
            confidence: 1.0,
            ankle_px: ankle,
            heel_px: heel,
            toe_px: toe,
            knee_px: None,
            leg_shift_px: Vec2::ZERO,
            toe: Vec3::Z,
            pitch_deg: 0.0,
            heel_raise_cm: 0.0,
            heading_weight: 1.0,
        }
    }

    /// A textured floor (a diagonal weave) with a dark shoe whose white sole the person mask
    /// left out: the hole takes the sole, the fill leaves neither shoe nor sole colour, and
    /// nothing outside the filled mask changes.
    #[test]
    fn the_old_shoe_and_its_unmasked_sole_are_filled_from_the_floor() {
        let (w, h) = (160u32, 120u32);
        let floor = |x: u32, y: u32| {
            let v = 120 + ((x * 5 + y * 3) % 17) as u8 * 2;
            [v, v - 10, v - 25]
        };
        let shoe = |x: u32, y: u32| (40..110).contains(&x) && (60..84).contains(&y);
        let sole = |x: u32, y: u32| (38..112).contains(&x) && (84..90).contains(&y);
        let photo = RgbaImage::from_fn(w, h, |x, y| {
            let c = if shoe(x, y) {
                [60, 30, 90]
            } else if sole(x, y) {
                [250, 250, 250]
            } else {
                floor(x, y)
            };
            image::Rgba([c[0], c[1], c[2], 255])
        });
        let data = (0..w * h)
            .map(|i| if shoe(i % w, i / w) { 1.0 } else { 0.0 })
            .collect();
        let mask = Mask {
            width: w,
            height: h,
            data,
        };
        let f = foot(
            Vec2::new(45.0, 75.0),
            Vec2::new(105.0, 75.0),
            Vec2::new(50.0, 58.0),
        );
        let mut out = photo.clone();
        let erased = erase_old_feet(&mut out, &mask, &[f], 4.0);
        assert!(erased.total() > 70 * 24, "{}", erased.total());
        let (mut shoe_left, mut sole_left) = (0, 0);
        for (x, y, p) in out.enumerate_pixels() {
            let c = p.0;
            if erased.mask.get_pixel(x, y).0[0] == 0 {
                assert_eq!(
                    c,
                    photo.get_pixel(x, y).0,
                    "unfilled pixel changed at {x},{y}"
                );
                continue;
            }
            shoe_left += usize::from(c[2] > c[0] + 10 && c[0] < 100);
            sole_left += usize::from(c[0] > 225 && c[1] > 225 && c[2] > 225);
        }
        assert_eq!((shoe_left, sole_left), (0, 0));
        // Deterministic.
        let mut again = photo.clone();
        erase_old_feet(
            &mut again,
            &mask,
            &[foot(
                Vec2::new(45.0, 75.0),
                Vec2::new(105.0, 75.0),
                Vec2::new(50.0, 58.0),
            )],
            4.0,
        );
        assert_eq!(again.as_raw(), out.as_raw());
    }

    #[test]
    fn a_mask_of_another_size_erases_nothing() {
        let mut photo = RgbaImage::new(20, 20);
        let mask = Mask {
            width: 10,
            height: 10,
            data: vec![1.0; 100],
        };
        let f = foot(
            Vec2::new(5.0, 10.0),
            Vec2::new(15.0, 10.0),
            Vec2::new(5.0, 5.0),
        );
        let e = erase_old_feet(&mut photo, &mask, &[f], 1.0);
        assert_eq!(e.total(), 0);
    }
}
