//! Taking the wearer's own glasses off: the frame's mask, and the fill that replaces it.
//!
//! The mask is the rims (a band along each traced contour, as wide as the line that answered
//! there), the bridge bar, the temples and, for dark lenses, the lenses' insides. The eyes
//! (their contours, a little grown) are never in the mask of clear glasses: through a clear
//! lens the eye is the wearer's own and stays. The fill ([`crate::fill`]) copies only from
//! the face between the forehead and the nose tip (inside the face oval grown by 10 %; no
//! beard, mouth or background) and never from the eyes.
//!
//! The band is generous (the rim's line width plus 3 px either side, at most 8 % of the
//! eyes' distance): a rim edge left outside the mask would be continued into the fill as a
//! dark smear, while skin filled from skin costs little. Restricting the sources further
//! (e.g. leaving out everything near the frame) made the fill flat and blotchy on the real
//! portraits: the fill needs nearby skin to copy.

use image::{GrayImage, RgbImage, RgbaImage};

use super::detect::{face_sides, inside, seg_dist, Found, BROWS, CHEEKS, FACE_OVAL, P2};
use crate::fill::{self, FillOptions};

/// The frame's mask (255: remove) and the fill's guide (255: may copy from), the photo's size.
#[derive(Debug, Clone, PartialEq)]
pub struct FrameMask {
    /// What the fill replaces.
    pub mask: GrayImage,
    /// Where the fill may copy from.
    pub guide: GrayImage,
    /// The number of masked pixels.
    pub pixels: usize,
}

/// One band of the mask: a polyline and its half width (pixels).
struct Band<'a> {
    points: &'a [P2],
    closed: bool,
    half: f32,
}

impl Band<'_> {
    fn distance(&self, p: P2) -> f32 {
        let n = self.points.len();
        let segs = if self.closed { n } else { n.saturating_sub(1) };
        let mut d = f32::MAX;
        for i in 0..segs {
            d = d.min(seg_dist(p, self.points[i], self.points[(i + 1) % n]));
        }
        if n == 1 {
            d = seg_dist(p, self.points[0], self.points[0]);
        }
        d
    }
}

fn median(mut v: Vec<f32>) -> f32 {
    v.sort_by(f32::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

/// The mask of the frame `found` describes on `photo`, with the face's landmarks `lm`.
pub fn frame_mask(photo: &RgbaImage, found: &Found, lm: &[[f32; 3]]) -> FrameMask {
    let (width, height) = photo.dimensions();
    let f = &found.frame;
    let ipd = f.ipd;
    let half_of = |w: f32| (w + 3.0).clamp(3.0, (0.08 * ipd).max(3.0));
    let rim_half = half_of(median(
        found
            .rims
            .iter()
            .flat_map(|r| r.width.iter().copied())
            .collect(),
    ));
    let mut bands: Vec<Band> = found
        .rims
        .iter()
        .map(|r| Band {
            points: &r.points,
            closed: true,
            half: rim_half,
        })
        .collect();
    // The bridge: from the image-left rim's nose-side point to the other's, at the bar's height.
    let bridge_pts;
    if found.bridge.strength >= 20.0 {
        let k_left = 0; // angle 0: toward the image right, i.e. the nose for the left eye
        let k_right = found.rims[1].points.len() / 2;
        let ua = f.to_face(found.rims[0].points[k_left])[0];
        let ub = f.to_face(found.rims[1].points[k_right])[0];
        bridge_pts = vec![
            f.to_image(ua, found.bridge.v),
            f.to_image(ub, found.bridge.v),
        ];
        bands.push(Band {
            points: &bridge_pts,
            closed: false,
            half: half_of(found.bridge.width),
        });
    }
    for (pts, w) in &found.temples {
        if !pts.is_empty() {
            bands.push(Band {
                points: pts,
                closed: false,
                half: half_of(*w),
            });
        }
    }
    let protect = (0.03 * ipd).max(2.0);
    let oval: Vec<P2> = {
        let pts: Vec<P2> = FACE_OVAL.iter().map(|&i| [lm[i][0], lm[i][1]]).collect();
        let c = pts
            .iter()
            .fold([0.0, 0.0], |a, p| [a[0] + p[0], a[1] + p[1]]);
        let c = [c[0] / pts.len() as f32, c[1] / pts.len() as f32];
        pts.iter()
            .map(|p| [c[0] + 1.1 * (p[0] - c[0]), c[1] + 1.1 * (p[1] - c[1])])
            .collect()
    };
    let mut mask = GrayImage::new(width, height);
    let (w, h) = (width as i64, height as i64);
    // Stamps `f` over the pixels of the box `lo`–`hi` (clamped to the photo).
    let each = |lo: P2, hi: P2, f: &mut dyn FnMut(u32, u32, P2)| {
        let (x0, y0) = ((lo[0].floor() as i64).max(0), (lo[1].floor() as i64).max(0));
        let (x1, y1) = (
            (hi[0].ceil() as i64 + 1).min(w),
            (hi[1].ceil() as i64 + 1).min(h),
        );
        for y in y0..y1 {
            for x in x0..x1 {
                f(x as u32, y as u32, [x as f32 + 0.5, y as f32 + 0.5]);
            }
        }
    };
    let bbox = |pts: &[P2], g: f32| {
        let lo = pts
            .iter()
            .fold([f32::MAX; 2], |a, p| [a[0].min(p[0]), a[1].min(p[1])]);
        let hi = pts
            .iter()
            .fold([f32::MIN; 2], |a, p| [a[0].max(p[0]), a[1].max(p[1])]);
        ([lo[0] - g, lo[1] - g], [hi[0] + g, hi[1] + g])
    };
    for b in &bands {
        let n = b.points.len();
        let segs = if b.closed { n } else { n.saturating_sub(1) }.max(1);
        for i in 0..segs {
            let (p, q) = (b.points[i % n], b.points[(i + 1) % n]);
            let (lo, hi) = bbox(&[p, q], b.half);
            each(lo, hi, &mut |x, y, c| {
                if seg_dist(c, p, q) <= b.half {
                    mask.put_pixel(x, y, image::Luma([255]));
                }
            });
        }
    }
    if found.tinted {
        for r in &found.rims {
            let (lo, hi) = bbox(&r.points, 1.0);
            each(lo, hi, &mut |x, y, c| {
                if inside(&r.points, c) {
                    mask.put_pixel(x, y, image::Luma([255]));
                }
            });
        }
    }
    grow_by_colour(photo, found, lm, &mut mask);
    // The guide: the face between the forehead and the nose tip (no beard, no mouth),
    // never the eyes.
    let mut guide = GrayImage::new(width, height);
    let (lo, hi) = bbox(&oval, 0.0);
    each(lo, hi, &mut |x, y, c| {
        let v = f.to_face(c)[1];
        if (-1.0..=0.9).contains(&v) && inside(&oval, c) {
            guide.put_pixel(x, y, image::Luma([255]));
        }
    });
    for c in &f.contours {
        let ring = Band {
            points: c,
            closed: true,
            half: 0.0,
        };
        let (lo, hi) = bbox(c, protect + 1.0);
        each(lo, hi, &mut |x, y, p| {
            if inside(c, p) || ring.distance(p) < protect {
                guide.put_pixel(x, y, image::Luma([0]));
                if !found.tinted {
                    mask.put_pixel(x, y, image::Luma([0]));
                }
            }
        });
    }
    let pixels = mask.as_raw().iter().filter(|&&v| v >= 128).count();
    FrameMask {
        mask,
        guide,
        pixels,
    }
}

/// The frame's colours (a 16-level RGB histogram) from the masked pixels unlike the skin.
struct Palette {
    bins: Vec<bool>,
    skin: [f32; 3],
}

/// A pixel this far (RGB distance) from the skin may be frame.
const UNLIKE_SKIN: f32 = 45.0;

impl Palette {
    fn bin(c: [u8; 3]) -> usize {
        (usize::from(c[0] >> 4) << 8) | (usize::from(c[1] >> 4) << 4) | usize::from(c[2] >> 4)
    }

    fn unlike_skin(&self, c: [u8; 3]) -> bool {
        let d = (0..3)
            .map(|k| (f32::from(c[k]) - self.skin[k]).powi(2))
            .sum::<f32>()
            .sqrt();
        d > UNLIKE_SKIN
    }

    fn frame_like(&self, c: [u8; 3]) -> bool {
        self.unlike_skin(c) && self.bins[Self::bin(c)]
    }
}

/// Grows the rim bands over the frame's own colour: masked pixels unlike the skin give the
/// frame's palette, and neighbouring pixels of that palette join the mask (what a band left
/// of a thick rim, the nose pads, the temples toward the ears), within the face's width and
/// from a little above the brows to the cheeks, never into the eyes or the brows.
fn grow_by_colour(photo: &RgbaImage, found: &Found, lm: &[[f32; 3]], mask: &mut GrayImage) {
    let f = &found.frame;
    let (w, h) = (photo.width() as i64, photo.height() as i64);
    let rgb = |x: i64, y: i64| {
        let p = photo.get_pixel(x as u32, y as u32).0;
        [p[0], p[1], p[2]]
    };
    // The skin: the median colour around the cheek landmarks.
    let r = (0.03 * f.ipd).max(2.0) as i64;
    let mut samples: [Vec<u8>; 3] = Default::default();
    for &i in &CHEEKS {
        let (cx, cy) = (lm[i][0] as i64, lm[i][1] as i64);
        for y in (cy - r).max(0)..(cy + r + 1).min(h) {
            for x in (cx - r).max(0)..(cx + r + 1).min(w) {
                let c = rgb(x, y);
                for k in 0..3 {
                    samples[k].push(c[k]);
                }
            }
        }
    }
    if samples[0].is_empty() {
        return;
    }
    let skin = samples.map(|mut v| {
        v.sort_unstable();
        f32::from(v[v.len() / 2])
    });
    let mut palette = Palette {
        bins: vec![false; 4096],
        skin,
    };
    let sides = face_sides(f, lm).map(|p| f.to_face(p)[0]);
    let (u0, u1) = (sides[0].min(sides[1]) - 0.02, sides[0].max(sides[1]) + 0.02);
    let brows: Vec<Vec<P2>> = BROWS
        .iter()
        .map(|b| b.iter().map(|&i| [lm[i][0], lm[i][1]]).collect())
        .collect();
    let protect = (0.03 * f.ipd).max(2.0);
    let allowed = |x: i64, y: i64| {
        let c = [x as f32 + 0.5, y as f32 + 0.5];
        let q = f.to_face(c);
        if q[0] < u0 || q[0] > u1 || q[1] < -0.5 || q[1] > 0.4 {
            return false;
        }
        if brows.iter().any(|b| inside(b, c)) {
            return false;
        }
        !f.contours.iter().any(|e| {
            inside(e, c) || (0..e.len()).any(|i| seg_dist(c, e[i], e[(i + 1) % e.len()]) < protect)
        })
    };
    // The palette: colours much more common in the bands than in the rest of the zone.
    let mut seeds = Vec::new();
    let (mut inside_band, mut outside) = (vec![0u32; 4096], vec![0u32; 4096]);
    let (mut n_in, mut n_out) = (0u32, 0u32);
    for y in 0..h {
        for x in 0..w {
            let c = rgb(x, y);
            if mask.get_pixel(x as u32, y as u32).0[0] >= 128 {
                seeds.push((x, y));
                inside_band[Palette::bin(c)] += 1;
                n_in += 1;
            } else if allowed(x, y) {
                outside[Palette::bin(c)] += 1;
                n_out += 1;
            }
        }
    }
    let mut n = 0u32;
    for b in 0..4096 {
        let share_in = inside_band[b] as f32 / n_in.max(1) as f32;
        let share_out = outside[b] as f32 / n_out.max(1) as f32;
        if inside_band[b] >= 3 && share_in > 4.0 * share_out {
            palette.bins[b] = true;
            n += inside_band[b];
        }
    }
    if n < 30 {
        return;
    }
    let mut queue: std::collections::VecDeque<(i64, i64)> = seeds.into_iter().collect();
    let mut added = Vec::new();
    while let Some((x, y)) = queue.pop_front() {
        for (dx, dy) in [
            (1, 0),
            (-1, 0),
            (0, 1),
            (0, -1),
            (1, 1),
            (-1, -1),
            (1, -1),
            (-1, 1),
        ] {
            let (nx, ny) = (x + dx, y + dy);
            if nx < 0 || ny < 0 || nx >= w || ny >= h {
                continue;
            }
            if mask.get_pixel(nx as u32, ny as u32).0[0] >= 128 {
                continue;
            }
            if palette.frame_like(rgb(nx, ny)) && allowed(nx, ny) {
                mask.put_pixel(nx as u32, ny as u32, image::Luma([255]));
                added.push((nx, ny));
                queue.push_back((nx, ny));
            }
        }
    }
    // The grown parts' soft edges: one pixel more around them.
    for (x, y) in added {
        for (dx, dy) in [(1, 0), (-1, 0), (0, 1), (0, -1)] {
            let (nx, ny) = (x + dx, y + dy);
            if nx >= 0 && ny >= 0 && nx < w && ny < h && allowed(nx, ny) {
                mask.put_pixel(nx as u32, ny as u32, image::Luma([255]));
            }
        }
    }
}

/// `photo` with the masked pixels filled from the face (the guide), the alpha channel kept.
/// Falls back to an unguided fill when the guide leaves nothing to copy from.
pub fn remove(photo: &RgbaImage, m: &FrameMask) -> Result<RgbaImage, fill::FillError> {
    let rgb = RgbImage::from_fn(photo.width(), photo.height(), |x, y| {
        let p = photo.get_pixel(x, y).0;
        image::Rgb([p[0], p[1], p[2]])
    });
    let opts = FillOptions::default();
    let filled = fill::fill_with(&rgb, &m.mask, Some(&m.guide), &opts)
        .or_else(|_| fill::fill_with(&rgb, &m.mask, None, &opts))?;
    let mut out = photo.clone();
    for (x, y, p) in out.enumerate_pixels_mut() {
        if m.mask.get_pixel(x, y).0[0] >= fill::THRESHOLD {
            p.0[..3].copy_from_slice(&filled.get_pixel(x, y).0);
        }
    }
    Ok(out)
}
