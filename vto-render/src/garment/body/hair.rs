//! The hair in the photo, kept in front of every new garment ([`find_hair`]).
//!
//! No permissively licensed hair-segmentation model ships in a registry we reach (see
//! `RENDERING.md`), so the hair is found from the photo itself, the way an interactive
//! segmentation (GrabCut) starts:
//! 1. **Colour models.** The hair's colours are sampled in a band just outside the face's
//!    upper oval (above the forehead and beside the temples), inside the person mask and not
//!    skin-like; they are summarised by a few k-means centres. What is *not* hair is
//!    summarised the same way from the clothing on the chest's centre line, the background
//!    around the person (where it does not look like the hair) and the face's skin.
//! 2. **Growing.** From those samples, the hair grows (4-connected flood) through pixels whose
//!    colour is nearer the hair's centres than the others' (and near enough to them), inside
//!    the person mask, outside the face, down to a few face heights below the chin: long
//!    hair over the shoulders is reached only through hair beside the face.
//! 3. **Soft edges.** A guided filter (He, Sun and Tang 2010) with the photo's luminance as
//!    the guide turns the grown region into an alpha that follows the strands' edges.
//!
//! Without a face, or without enough hair-coloured samples around it (a bald head, a tight
//! cap, a hood), no hair is found and nothing changes.

use glam::Vec2;
use image::RgbaImage;
use rayon::prelude::*;

use crate::garment::body::frame::BodyFrame;
use crate::garment::colour::{skin_likeness, FALLBACK_SKIN};
use crate::garment::geom::{inside, neighbours4};
use crate::image_ops::box_blur;

/// Fewest hair samples around the face for a hair model (a few dozen pixels of hair around
/// a small face still make one; a bald head or a tight cap gives almost none).
const MIN_SAMPLES: usize = 24;

/// How near the face's skin colour (in [`feature`] units) a sample is taken for skin.
const SKIN_RADIUS: f32 = 16.0;

/// How far below the chin hair may reach, in face heights.
const REACH_BELOW_CHIN: f32 = 3.0;

/// The hair found in a photo (or a crop of it).
#[derive(Debug, Clone, Default)]
pub struct Hair {
    /// Per pixel (row-major, the crop's size): how much the pixel is hair (0–1).
    pub alpha: Vec<f32>,
    /// How many colour samples taught the hair model.
    pub samples: usize,
}

impl Hair {
    /// Whether any hair was found.
    pub fn is_empty(&self) -> bool {
        self.samples == 0
    }

    /// The hair alpha at pixel `i` (0 when none was found).
    pub fn at(&self, i: usize) -> f32 {
        self.alpha.get(i).copied().unwrap_or(0.0)
    }

    /// The hair's own colour near each pixel: the photo averaged over the pixels that are
    /// all hair within 2 % of the shoulders' width `sw` (normalised convolution); the photo
    /// where no such pixel is near. `None` when no hair was found. At a strand's soft edge
    /// this, not the photo (the strand mixed with the old top behind it), goes over the new
    /// garment.
    pub fn strand_colour(&self, photo: &RgbaImage, sw: f32) -> Option<Vec<[f32; 3]>> {
        if self.is_empty() {
            return None;
        }
        let (wu, hu) = (photo.width() as usize, photo.height() as usize);
        let r = ((0.02 * sw) as usize).clamp(2, 10);
        let weight: Vec<f32> = (0..wu * hu)
            .map(|i| if self.at(i) > 0.9 { 1.0 } else { 0.0 })
            .collect();
        let wsum = box_blur(&weight, wu, hu, r);
        let chans: Vec<Vec<f32>> = (0..3)
            .map(|ch| {
                let v: Vec<f32> = (0..wu * hu)
                    .map(|i| colour(photo, i)[ch] * weight[i])
                    .collect();
                box_blur(&v, wu, hu, r)
            })
            .collect();
        Some(
            (0..wu * hu)
                .map(|i| {
                    if wsum[i] > 1e-3 {
                        [0, 1, 2].map(|ch| chans[ch][i] / wsum[i])
                    } else {
                        colour(photo, i)
                    }
                })
                .collect(),
        )
    }
}

/// A colour as the hair model compares it: luminance, weighted down (hair in light and in
/// shade is the same hair), and the `(r, g)` chromaticity, scaled up and damped in the dark
/// (a strand of red-brown hair in shadow keeps its hue, which tells it from a black top).
fn feature(c: [f32; 3]) -> [f32; 3] {
    let y = 0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2];
    let s = c[0] + c[1] + c[2] + 30.0;
    [
        0.25 * y,
        300.0 * ((c[0] + 10.0) / s - 1.0 / 3.0),
        300.0 * ((c[1] + 10.0) / s - 1.0 / 3.0),
    ]
}

fn dist2(a: [f32; 3], b: [f32; 3]) -> f32 {
    (a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)
}

/// `k` k-means centres of `xs` (deterministic: started at luminance quantiles, 8 rounds).
fn kmeans(xs: &[[f32; 3]], k: usize) -> Vec<[f32; 3]> {
    if xs.is_empty() {
        return Vec::new();
    }
    let mut sorted = xs.to_vec();
    sorted.sort_by(|a, b| a[0].total_cmp(&b[0]));
    let k = k.min(xs.len());
    let mut centres: Vec<[f32; 3]> = (0..k)
        .map(|j| sorted[(2 * j + 1) * sorted.len() / (2 * k)])
        .collect();
    for _ in 0..8 {
        let mut acc = vec![([0.0f32; 3], 0usize); k];
        for x in xs {
            let j = nearest(&centres, *x).0;
            for (sum, v) in acc[j].0.iter_mut().zip(x) {
                *sum += v;
            }
            acc[j].1 += 1;
        }
        for (centre, (sum, n)) in centres.iter_mut().zip(&acc) {
            if *n > 0 {
                *centre = sum.map(|v| v / *n as f32);
            }
        }
    }
    centres
}

/// The index of the centre nearest `x`, and the squared distance to it.
fn nearest(centres: &[[f32; 3]], x: [f32; 3]) -> (usize, f32) {
    centres
        .iter()
        .enumerate()
        .map(|(j, c)| (j, dist2(*c, x)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap_or((0, f32::MAX))
}

fn colour(photo: &RgbaImage, i: usize) -> [f32; 3] {
    let p = &photo.as_raw()[4 * i..4 * i + 3];
    [f32::from(p[0]), f32::from(p[1]), f32::from(p[2])]
}

/// Finds the hair in `photo`, a crop of the person photo whose top-left pixel is `offset`
/// on it (`person` is the person mask over the crop; the body frame is in the photo's
/// coordinates). See the module docs.
pub fn find_hair(photo: &RgbaImage, person: &[f32], f: &BodyFrame, offset: Vec2) -> Hair {
    let (w, h) = photo.dimensions();
    let (wu, hu) = (w as usize, h as usize);
    let oval: Vec<Vec2> = f.face_oval.iter().map(|p| *p - offset).collect();
    if oval.len() < 8 || person.len() != wu * hu {
        return Hair::default();
    }
    let centre = oval.iter().copied().sum::<Vec2>() / oval.len() as f32;
    let along = |p: Vec2| (p - centre).dot(f.down);
    let lo = oval.iter().map(|p| along(*p)).fold(f32::MAX, f32::min);
    let hi = oval.iter().map(|p| along(*p)).fold(f32::MIN, f32::max);
    let fh = (hi - lo).max(8.0);
    let skin = f.skin.unwrap_or(FALLBACK_SKIN);
    let at = |p: Vec2| -> Option<usize> {
        let (x, y) = (p.x.round(), p.y.round());
        (x >= 0.0 && y >= 0.0 && (x as usize) < wu && (y as usize) < hu)
            .then(|| y as usize * wu + x as usize)
    };

    // 1. The hair's samples: outside the upper oval, along its outward normal.
    let skin_f = [
        feature(skin),
        feature(skin.map(|v| v * 0.75)),
        feature(skin.map(|v| v * 0.55)),
    ];
    let mut seeds = Vec::new();
    // The oval's points and the midpoints between them.
    let rim = (0..oval.len()).flat_map(|j| {
        let (a, b) = (oval[j], oval[(j + 1) % oval.len()]);
        [a, (a + b) * 0.5]
    });
    for p in rim {
        if along(p) > lo + 0.55 * fh {
            continue;
        }
        let n = (p - centre).normalize_or_zero();
        for k in 1..=8 {
            let q = p + n * (0.04 * k as f32 * fh);
            let Some(i) = at(q) else { continue };
            if person[i] < 0.7 || inside(&oval, q) {
                continue;
            }
            // Skin (a temple, an ear) is no hair; measured on the hair's own feature, so
            // red-brown hair is not taken for skin (the garment's skin likeness would).
            let x = feature(colour(photo, i));
            if skin_f
                .iter()
                .any(|f| dist2(*f, x) < SKIN_RADIUS * SKIN_RADIUS)
            {
                continue;
            }
            seeds.push(i);
        }
    }
    seeds.sort_unstable();
    seeds.dedup();
    if seeds.len() < MIN_SAMPLES {
        return Hair::default();
    }
    let hair_x: Vec<[f32; 3]> = seeds.iter().map(|&i| feature(colour(photo, i))).collect();
    let hair_c = kmeans(&hair_x, 4);
    // How far from its centres the hair's own samples lie: the hair's spread.
    let mut spread: Vec<f32> = hair_x.iter().map(|x| nearest(&hair_c, *x).1).collect();
    spread.sort_by(f32::total_cmp);
    let tau = (spread[spread.len() * 9 / 10] * 2.25).max(18.0 * 18.0);

    // What is not hair: the chest's clothing, the background near the head, the skin.
    let mid = (f.shoulder[0] + f.shoulder[1]) * 0.5 - offset;
    let sw = f.shoulder_width;
    let mut other = vec![feature(skin), feature(skin.map(|v| v * 0.75))];
    for a in 0..=10 {
        for s in [-0.12f32, 0.0, 0.12] {
            let q = mid + f.down * (0.25 + 0.08 * a as f32) * sw + f.across * s * sw;
            if let Some(i) = at(q) {
                if person[i] > 0.8 && skin_likeness(colour(photo, i), skin) < 0.5 {
                    other.push(feature(colour(photo, i)));
                }
            }
        }
    }
    // The background only where it does not look like the hair: dark hair against a dark
    // wall is told apart by the person mask, not by colour.
    let step = ((wu * hu) as f32 / 4000.0).sqrt().max(1.0) as usize;
    for y in (0..hu).step_by(step) {
        for x in (0..wu).step_by(step) {
            let i = y * wu + x;
            let c = feature(colour(photo, i));
            if person[i] < 0.05 && nearest(&hair_c, c).1 > tau {
                other.push(c);
            }
        }
    }
    let other_c = kmeans(&other, 8);

    // 2. Growing through hair-like pixels in the zone hair may be in.
    let chin = hi;
    let hairlike: Vec<bool> = (0..wu * hu)
        .into_par_iter()
        .map(|i| {
            if person[i] < 0.5 {
                return false;
            }
            let p = Vec2::new((i % wu) as f32, (i / wu) as f32);
            if along(p) > chin + REACH_BELOW_CHIN * fh
                || along(p) < lo - 0.8 * fh
                || (p - centre).dot(f.across).abs() > 1.2 * sw
                || inside(&oval, p)
            {
                return false;
            }
            let x = feature(colour(photo, i));
            let dh = nearest(&hair_c, x).1;
            let doth = nearest(&other_c, x).1;
            dh < tau && dh.sqrt() < 0.8 * doth.sqrt()
        })
        .collect();
    let mut grown = vec![0.0f32; wu * hu];
    let mut stack: Vec<usize> = seeds.iter().copied().filter(|&i| hairlike[i]).collect();
    for &i in &stack {
        grown[i] = 1.0;
    }
    while let Some(i) = stack.pop() {
        for j in neighbours4(i, wu, hu) {
            if grown[j] == 0.0 && hairlike[j] {
                grown[j] = 1.0;
                stack.push(j);
            }
        }
    }

    // 3. Soft edges that follow the strands.
    let luma: Vec<f32> = (0..wu * hu)
        .map(|i| {
            let c = colour(photo, i);
            (0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2]) / 255.0
        })
        .collect();
    let r = ((0.02 * fh) as usize).clamp(2, 8);
    let soft = guided_filter(&luma, &grown, wu, hu, r, 0.004);
    let alpha: Vec<f32> = (0..wu * hu)
        .map(|i| {
            let p = Vec2::new((i % wu) as f32, (i / wu) as f32);
            if inside(&oval, p) {
                0.0
            } else {
                (soft[i].clamp(0.0, 1.0) * (person[i] * 1.5).min(1.0)).clamp(0.0, 1.0)
            }
        })
        .collect();
    Hair {
        alpha,
        samples: seeds.len(),
    }
}

/// The guided filter of `p` with the grey guide `g` (radius `r`, regulariser `eps`): an
/// edge-preserving smoothing whose output follows `g`'s edges.
fn guided_filter(g: &[f32], p: &[f32], w: usize, h: usize, r: usize, eps: f32) -> Vec<f32> {
    let mean_g = box_blur(g, w, h, r);
    let mean_p = box_blur(p, w, h, r);
    let gg: Vec<f32> = g.iter().map(|v| v * v).collect();
    let gp: Vec<f32> = g.iter().zip(p).map(|(a, b)| a * b).collect();
    let corr_gg = box_blur(&gg, w, h, r);
    let corr_gp = box_blur(&gp, w, h, r);
    let mut a = vec![0.0f32; w * h];
    let mut b = vec![0.0f32; w * h];
    for i in 0..w * h {
        let var = corr_gg[i] - mean_g[i] * mean_g[i];
        let cov = corr_gp[i] - mean_g[i] * mean_p[i];
        a[i] = cov / (var + eps);
        b[i] = mean_p[i] - a[i] * mean_g[i];
    }
    let ma = box_blur(&a, w, h, r);
    let mb = box_blur(&b, w, h, r);
    (0..w * h).map(|i| ma[i] * g[i] + mb[i]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::garment::body::frame::Arm;
    use image::Rgba;

    /// A drawn portrait: a skin-coloured face oval (centre 100, 80; radii 30 × 40), dark
    /// brown hair around it falling in two locks beside the neck down over a light blue top
    /// (the person is the face, the hair, the neck and the top).
    fn portrait() -> (RgbaImage, Vec<f32>, BodyFrame) {
        let (w, h) = (200u32, 260u32);
        let (c, rx, ry) = (Vec2::new(100.0, 80.0), 30.0, 40.0);
        let face = |p: Vec2| ((p.x - c.x) / rx).powi(2) + ((p.y - c.y) / ry).powi(2) < 1.0;
        let hair = |p: Vec2| {
            let head = ((p.x - c.x) / (rx + 14.0)).powi(2)
                + ((p.y - c.y + 6.0) / (ry + 14.0)).powi(2)
                < 1.0;
            let lock = (p.y > 80.0 && p.y < 210.0)
                && ((p.x - c.x).abs() > 30.0 && (p.x - c.x).abs() < 44.0);
            head || lock
        };
        let top = |p: Vec2| p.y > 140.0 && (p.x - c.x).abs() < 80.0;
        let neck = |p: Vec2| p.y > 110.0 && p.y <= 140.0 && (p.x - c.x).abs() < 16.0;
        let mut img = RgbaImage::from_pixel(w, h, Rgba([235, 235, 228, 255]));
        let mut person = vec![0.0f32; (w * h) as usize];
        for y in 0..h {
            for x in 0..w {
                let p = Vec2::new(x as f32, y as f32);
                // A little texture so the guided filter has something to follow.
                let n = ((x * 7 + y * 13) % 9) as u8;
                let col = if face(p) || neck(p) {
                    Some([205 + n, 160 + n, 140 + n])
                } else if hair(p) {
                    Some([70 + n, 45 + n, 30 + n])
                } else if top(p) {
                    Some([150 + n, 180 + n, 220 + n])
                } else {
                    None
                };
                if let Some(col) = col {
                    img.put_pixel(x, y, Rgba([col[0], col[1], col[2], 255]));
                    person[(y * w + x) as usize] = 1.0;
                }
            }
        }
        let oval: Vec<Vec2> = (0..36)
            .map(|k| {
                let a = k as f32 / 36.0 * std::f32::consts::TAU;
                c + Vec2::new(rx * a.sin(), -ry * a.cos())
            })
            .collect();
        let arm = Arm {
            chain: [Vec2::ZERO; 4],
            visibility: 0.0,
        };
        let frame = BodyFrame {
            shoulder_width: 130.0,
            shoulder: [Vec2::new(35.0, 150.0), Vec2::new(165.0, 150.0)],
            seam: [Vec2::new(35.0, 150.0), Vec2::new(165.0, 150.0)],
            across: Vec2::X,
            down: Vec2::Y,
            hips: Vec2::new(100.0, 300.0),
            hips_seen: false,
            arms: [arm, arm],
            face_oval: oval,
            skin: Some([210.0, 165.0, 145.0]),
            tone: None,
        };
        (img, person, frame)
    }

    #[test]
    fn long_hair_over_a_top_is_found_and_the_top_is_not() {
        let (img, person, frame) = portrait();
        let hair = find_hair(&img, &person, &frame, Vec2::ZERO);
        assert!(hair.samples >= MIN_SAMPLES, "{}", hair.samples);
        let at = |x: usize, y: usize| hair.at(y * 200 + x);
        // The locks below the chin (y 120) over the top, on both sides.
        for (x, y) in [(63, 150), (137, 150), (62, 190), (138, 200)] {
            assert!(at(x, y) > 0.8, "hair at ({x}, {y}): {}", at(x, y));
        }
        // The top, the face, the background.
        for (x, y) in [(100, 180), (40, 230), (100, 80), (10, 10)] {
            assert!(at(x, y) < 0.2, "no hair at ({x}, {y}): {}", at(x, y));
        }
    }

    #[test]
    fn without_a_face_or_hair_around_it_nothing_is_found() {
        let (img, person, mut frame) = portrait();
        // A bald head: the hair drawn as skin.
        let mut bald = img.clone();
        for p in bald.pixels_mut() {
            if p.0[0] < 100 {
                *p = Rgba([207, 162, 142, 255]);
            }
        }
        assert!(find_hair(&bald, &person, &frame, Vec2::ZERO).is_empty());
        frame.face_oval.clear();
        assert!(find_hair(&img, &person, &frame, Vec2::ZERO).is_empty());
    }

    #[test]
    fn kmeans_finds_two_clusters() {
        let xs: Vec<[f32; 3]> = (0..40)
            .map(|i| {
                if i % 2 == 0 {
                    [10.0, 0.0, 0.0]
                } else {
                    [100.0, 5.0, 5.0]
                }
            })
            .collect();
        let mut c = kmeans(&xs, 2);
        c.sort_by(|a, b| a[0].total_cmp(&b[0]));
        assert!(
            (c[0][0] - 10.0).abs() < 1e-3 && (c[1][0] - 100.0).abs() < 1e-3,
            "{c:?}"
        );
    }

    #[test]
    fn the_guided_filter_keeps_a_step_on_a_guide_edge() {
        let (w, h) = (20, 4);
        let g: Vec<f32> = (0..w * h)
            .map(|i| if i % w < 10 { 0.1 } else { 0.9 })
            .collect();
        let out = guided_filter(
            &g,
            &g.iter()
                .map(|&v| if v > 0.5 { 1.0 } else { 0.0 })
                .collect::<Vec<_>>(),
            w,
            h,
            3,
            0.001,
        );
        assert!(
            out[w + 8] < 0.1 && out[w + 11] > 0.9,
            "{:?}",
            &out[w..2 * w]
        );
    }
}
