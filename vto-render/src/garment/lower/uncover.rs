//! The legs and floor a shorter lower garment uncovers ([`uncover_legs`]); the feet in front
//! of it and the old garment's colour are [`Feet`]'s.
//!
//! - **What is old clothing** is told by colour: the old lower garment's colour is measured
//!   on the thighs ([`Feet::bottom`]); a pixel near the person is old clothing as far as it
//!   looks like that colour (shading-tolerant, [`garment_likeness`]) or is a mix of it and the
//!   background behind (the antialiased outline, which the soft person mask half-covers and
//!   which otherwise stays as a faint ghost line). Shoes, the floor's contact shadow and the
//!   person's own skin are not, so they stay as they were. When the old garment's colour
//!   cannot be told from the shoes' or from skin, the person mask decides, as before.
//! - **The feet** stay in front: each foot's capsule heel → toe, and (when the old garment's
//!   colour differs from the shoes') every pixel around it that is not the old garment's
//!   colour, so a pose keypoint a few pixels off neither cuts the shoe nor leaves a bit of
//!   the old trouser cuff above it.
//! - **Bare legs** ([`BareLegs`]) are painted in the person's own leg tone: the median of the
//!   visible skin on the legs and feet when there is some, else the face's; shaded as a
//!   cylinder lit from the face's light, over the old clothing only (the photo's own visible
//!   skin stays), blended over a few pixels into the photo's skin where they meet (ankles,
//!   feet, an old hem).

use glam::Vec2;
use image::RgbaImage;
use rayon::prelude::*;

pub use crate::garment::body::feet_over_hems::Feet;
use crate::garment::body::feet_over_hems::{foot_points, garment_likeness, pixel};
use crate::garment::body::frame::BodyFrame;
use crate::garment::body::legs::{BareLegs, Legs, OnLeg};
use crate::garment::colour::{luma, median};
use crate::garment::colour::{skin_likeness, FALLBACK_SKIN};
use crate::garment::geom::neighbours4;
use crate::garment::geom::smoothstep;
use crate::garment::shade::fill::{push_pull, textured};
use crate::garment::shade::skin::{self, FaceLight};
use crate::image_ops::box_blur;

/// The person's own leg tone: the median of the skin in view on the legs (near each leg's
/// centre line, hip to ankle) and the feet, when at least 30 such pixels are seen. On the
/// feet only pixels as light as the face's skin count (brown shoes have a skin's hue).
fn own_leg_tone(
    photo: &RgbaImage,
    person: &[f32],
    model: &BareLegs,
    legs: &Legs,
    bottom: Option<[f32; 3]>,
    face: [f32; 3],
) -> Option<[f32; 3]> {
    let (w, h) = photo.dimensions();
    let on_legs = (0..2).flat_map(|side| {
        (0..=48).flat_map(move |k| {
            let t = 0.1 + 0.9 * k as f32 / 48.0;
            [-0.3, 0.0, 0.3].map(|s| (model.point(side, t, s), false))
        })
    });
    let cs: Vec<[f32; 3]> = on_legs
        .chain(foot_points(legs).into_iter().map(|p| (p, true)))
        .filter(|(p, _)| crate::garment::geom::mask_at(person, (w, h), *p) >= 0.5)
        .filter_map(|(p, foot)| pixel(photo, p).map(|c| (c, foot)))
        .filter(|&(c, foot)| {
            // Brown shoes have a skin's hue: on the feet, only a skin's lightness too.
            let r = luma(c) / luma(face).max(1.0);
            let light = if foot {
                (0.8..1.25).contains(&r)
            } else {
                (0.55..1.45).contains(&r)
            };
            light
                && skin_likeness(c, face) > 0.3
                && bottom.is_none_or(|b| garment_likeness(c, b) < 0.3)
        })
        .map(|(c, _)| c)
        .collect();
    (cs.len() >= 30).then(|| median(cs)).flatten()
}

/// The pixels whose `like` is over one half, 4-connected through such pixels to a seed.
fn connected(like: &[f32], w: usize, h: usize, seeds: &[usize]) -> Vec<bool> {
    let mut seen = vec![false; w * h];
    let mut stack: Vec<usize> = seeds.iter().copied().filter(|&i| like[i] > 0.5).collect();
    for &i in &stack {
        seen[i] = true;
    }
    while let Some(i) = stack.pop() {
        for j in neighbours4(i, w, h) {
            if !seen[j] && like[j] > 0.5 {
                seen[j] = true;
                stack.push(j);
            }
        }
    }
    seen
}

/// A boolean mask grown by `r` pixels (square window): running counts along rows, then
/// along columns, so the cost does not grow with `r`.
fn dilate(m: &[bool], w: usize, h: usize, r: usize) -> Vec<bool> {
    let grow = |line: &mut dyn Iterator<Item = bool>, n: usize, out: &mut Vec<bool>| {
        let v: Vec<bool> = line.collect();
        let mut pre = vec![0u32; n + 1];
        for (k, &on) in v.iter().enumerate() {
            pre[k + 1] = pre[k] + u32::from(on);
        }
        out.clear();
        out.extend((0..n).map(|k| pre[(k + r + 1).min(n)] > pre[k.saturating_sub(r)]));
    };
    let mut rows = vec![false; w * h];
    rows.par_chunks_mut(w).enumerate().for_each(|(y, row)| {
        let mut out = Vec::with_capacity(w);
        grow(&mut m[y * w..(y + 1) * w].iter().copied(), w, &mut out);
        row.copy_from_slice(&out);
    });
    // Columns, transposed so each is contiguous.
    let mut cols = vec![false; w * h];
    cols.par_chunks_mut(h).enumerate().for_each(|(x, col)| {
        let mut out = Vec::with_capacity(h);
        grow(&mut (0..h).map(|y| rows[y * w + x]), h, &mut out);
        col.copy_from_slice(&out);
    });
    (0..w * h)
        .into_par_iter()
        .map(|i| cols[(i % w) * h + i / w])
        .collect()
}

/// Fills the old clothing the new garment leaves bare on the lower body (see the module
/// docs) in `out`, judged on the original `photo`, where `start` holds, not on a foot and not
/// covered (`alpha` under one half): inside a bare leg ([`BareLegs`]) the leg is painted
/// (over the old clothing, not over the person's own visible skin), elsewhere the old
/// clothing becomes the background continued from outside the person.
/// Returns the pixels filled with skin and with background.
pub fn uncover_legs(
    out: &mut RgbaImage,
    b: &Bared<'_>,
    start: impl Fn(Vec2) -> bool + Sync,
) -> (usize, usize) {
    let (w, h) = b.photo.dimensions();
    let face = b.frame.skin.unwrap_or(FALLBACK_SKIN);
    let legs = b.legs;
    let feet = Feet::new(b.photo, legs, face);
    let model = BareLegs::new(legs, b.person, w, h);
    let bottom = feet.bottom();
    let own = own_leg_tone(b.photo, b.person, &model, legs, bottom, face);
    let skin = own.unwrap_or(face);
    let tone = LegTone::new(b.photo, b.frame, skin, skin_grain(b.photo, b.person, skin));
    let old = OldClothing::find(b, &feet, bottom);
    let corr = Correction::measure(b, &model, &tone, skin, &old.edge);
    let background = continued_background(b, &old.near);
    let fills = Uncover {
        b,
        feet: &feet,
        model: &model,
        bounds: model.bounds(),
        tone: &tone,
        corr: &corr,
        skin,
        bottom,
        old: &old,
        background: &background,
    }
    .fills(&start);
    let ground = textured_ground(b, &fills, &old.near, &background);
    let (skin_n, bg_n, painted) = paint_fills(out, &fills, &ground);
    blend_seams(out, b, &painted, skin, &background);
    (skin_n, bg_n)
}

/// The background painted where the old clothing goes: the fill stage's ground (the floor's
/// or the wall's own texture, [`textured`]) copied from off the person and off its old
/// clothing (`near_old`), where the leg painted over it does not hide it.
fn textured_ground(
    b: &Bared<'_>,
    fills: &[Option<Fill>],
    near_old: &[bool],
    background: &[[f32; 3]],
) -> Vec<[f32; 3]> {
    textured(
        b.photo,
        background,
        |i| fills[i].is_some_and(|(leg, k)| k > 0.0 && leg.is_none_or(|l| l.1 < 0.99)),
        |i| !near_old[i] && b.person[i] < 0.2,
    )
}

/// The photo's colour at pixel index `i` (sRGB 0–255).
fn px(photo: &RgbaImage, i: usize) -> [f32; 3] {
    let raw = photo.as_raw();
    [0, 1, 2].map(|c| f32::from(raw[4 * i + c]))
}

/// The old lower garment on the photo, told by its colour.
struct OldClothing {
    /// How much each pixel looks like the old garment (0 where it does not hang together
    /// with the old garment on the thighs).
    like: Vec<f32>,
    /// Near the old garment (3 pixels).
    near: Vec<bool>,
    /// The old garment's antialiased edge (2 pixels): painted too, on skin (no dotted old
    /// hem line).
    edge: Vec<bool>,
}

impl OldClothing {
    /// Old clothing by colour near the person (and its antialiased outline next to it), as
    /// far as it hangs together with the old garment on the thighs: the floor's contact
    /// shadow under dark shorts' bare shins is not old clothing.
    fn find(b: &Bared<'_>, feet: &Feet<'_>, bottom: Option<[f32; 3]>) -> OldClothing {
        let (w, h) = b.photo.dimensions();
        let (wu, hu) = (w as usize, h as usize);
        let body: Vec<bool> = b.person.iter().map(|&m| m >= 0.5).collect();
        let near = dilate(&body, wu, hu, 3);
        let like: Vec<f32> = (0..wu * hu)
            .into_par_iter()
            .map(|i| match bottom {
                Some(g) if near[i] => garment_likeness(px(b.photo, i), g),
                _ => 0.0,
            })
            .collect();
        let seeds: Vec<usize> = feet
            .thigh_points()
            .into_iter()
            .filter(|p| p.x >= 0.0 && p.y >= 0.0 && p.x < w as f32 && p.y < h as f32)
            .map(|p| p.y as usize * wu + p.x as usize)
            .collect();
        let solid = connected(&like, wu, hu, &seeds);
        let like: Vec<f32> = like
            .iter()
            .zip(&solid)
            .map(|(&l, &s)| if s { l } else { 0.0 })
            .collect();
        OldClothing {
            like,
            near: dilate(&solid, wu, hu, 3),
            edge: dilate(&solid, wu, hu, 2),
        }
    }
}

/// The background continued (push–pull) from the pixels off the person and off its old
/// clothing (`near_old`).
fn continued_background(b: &Bared<'_>, near_old: &[bool]) -> Vec<[f32; 3]> {
    let (w, h) = b.photo.dimensions();
    let src: Vec<f32> = (0..w as usize * h as usize)
        .map(|i| {
            if near_old[i] || b.person[i] >= 0.2 {
                1.0
            } else {
                0.0
            }
        })
        .collect();
    push_pull(b.photo, &src)
}

/// What [`uncover_legs`] paints with, per pixel.
struct Uncover<'a> {
    b: &'a Bared<'a>,
    feet: &'a Feet<'a>,
    model: &'a BareLegs,
    /// The bare legs' bounding box ([`BareLegs::bounds`]).
    bounds: (Vec2, Vec2),
    tone: &'a LegTone,
    corr: &'a Correction,
    /// The legs' skin colour.
    skin: [f32; 3],
    /// The old lower garment's colour, when it could be measured.
    bottom: Option<[f32; 3]>,
    old: &'a OldClothing,
    background: &'a [[f32; 3]],
}

impl Uncover<'_> {
    /// Per pixel where `start` holds: the leg's colour and cover, and how much old clothing
    /// to replace.
    fn fills(&self, start: &(impl Fn(Vec2) -> bool + Sync)) -> Vec<Option<Fill>> {
        let (w, h) = self.b.photo.dimensions();
        let wu = w as usize;
        (0..wu * h as usize)
            .into_par_iter()
            .map(|i| {
                let (x, y) = (i % wu, i / wu);
                let p = Vec2::new(x as f32, y as f32);
                let a = self.b.alpha[i];
                let c = px(self.b.photo, i);
                if a >= 0.5 || !start(p) || self.feet.kept(p, c) {
                    return None;
                }
                let skin_like = skin_likeness(c, self.skin);
                let old = self.old_share(i, c, a, skin_like);
                let leg = self.bare_leg(i, p, a, skin_like);
                if leg.is_none() && old < 0.3 {
                    return None;
                }
                Some((leg, smoothstep(0.0, 0.6, old)))
            })
            .collect()
    }

    /// How much of pixel `i` (colour `c`, under the new garment's cover `a`) is old
    /// clothing: like the old garment's colour, or a mix of it and the background behind;
    /// without the old garment's colour, the person mask off skin.
    fn old_share(&self, i: usize, c: [f32; 3], a: f32, skin_like: f32) -> f32 {
        match self.bottom {
            Some(g) => {
                // A mix of the old garment and the background behind it.
                let bg = self.background[i];
                let d = [0, 1, 2].map(|k| g[k] - bg[k]);
                let d2 = d.iter().map(|v| v * v).sum::<f32>();
                let mix = if self.old.near[i] && d2 > 900.0 {
                    let e = [0, 1, 2].map(|k| c[k] - bg[k]);
                    let f = (e[0] * d[0] + e[1] * d[1] + e[2] * d[2]) / d2;
                    let r = [0, 1, 2].map(|k| e[k] - f * d[k]);
                    let res = (r[0] * r[0] + r[1] * r[1] + r[2] * r[2]).sqrt();
                    smoothstep(0.06, 0.3, f) * (1.0 - smoothstep(10.0, 22.0, res))
                } else {
                    0.0
                };
                // The old garment's outline ring (a photo's sharpening halo, a JPEG's ringing:
                // neither the garment's colour nor a mix of it and the background) goes
                // with it, or a dotted line of the old silhouette stays beside the new one.
                let rim = if self.old.edge[i] && skin_like < 0.5 {
                    1.0
                } else {
                    0.0
                };
                self.old.like[i].max(mix).max(rim) * (1.0 - a)
            }
            None => self.b.person[i] * (1.0 - skin_like) * (1.0 - a),
        }
    }

    /// The bare leg at pixel `i` (point `p`, under the new garment's cover `a`), when one is
    /// there below the new garment's hems: its colour (with a soft contact shadow under the
    /// hem) and its cover (less where the photo already shows the person's own skin).
    fn bare_leg(&self, i: usize, p: Vec2, a: f32, skin_like: f32) -> Option<([f32; 3], f32)> {
        let b = self.b;
        let (w, h) = b.photo.dimensions();
        let wu = w as usize;
        let hw = b.legs.hip_width;
        let (lo, hi) = self.bounds;
        let leg = (p.cmpge(lo).all() && p.cmple(hi).all())
            .then(|| self.model.at(p))
            .flatten()
            .filter(|on| {
                // Inside the new garment's legs down to its hems nothing is bare.
                b.skin_from
                    .is_none_or(|r| on.reach > r[on.side.min(1)] - 0.06 * hw)
            });
        leg.map(|on| {
            // A soft contact shadow under the new garment's hem.
            let mut gap = 0.09 * hw;
            let mut q = p;
            let mut d = 0.0;
            while d < 0.09 * hw {
                q -= b.legs.down;
                d += 1.0;
                let (qx, qy) = (q.x.round() as i64, q.y.round() as i64);
                if qx < 0 || qy < 0 || qx >= w as i64 || qy >= h as i64 {
                    break;
                }
                if b.alpha[qy as usize * wu + qx as usize] >= 0.5 {
                    gap = d;
                    break;
                }
            }
            let occl = 1.0 - 0.28 * (-gap / (0.025 * hw)).exp();
            let own = if self.old.edge[i] {
                0.0
            } else {
                smoothstep(0.8, 0.95, skin_like) * b.person[i]
            };
            let k = self.corr.at(on);
            let col = self.tone.colour(on, (i % wu) as u32, (i / wu) as u32);
            let col = [0, 1, 2].map(|j| col[j] * occl * k[j]);
            (col, on.cover * (1.0 - a) * (1.0 - own))
        })
    }
}

/// Paints `fills` into `out`: the background continued over the old clothing's share, then
/// the leg over it by its cover. Returns the pixels painted with skin and with background,
/// and which pixels are mostly the painted leg.
fn paint_fills(
    out: &mut RgbaImage,
    fills: &[Option<Fill>],
    background: &[[f32; 3]],
) -> (usize, usize, Vec<bool>) {
    let (mut skin_n, mut bg_n) = (0, 0);
    let mut painted = vec![false; fills.len()];
    let o = out.as_mut();
    for (i, fill) in fills.iter().enumerate() {
        let Some((leg, k)) = *fill else { continue };
        let cur = [0, 1, 2].map(|c| f32::from(o[4 * i + c]));
        let bg = background[i];
        let base: [f32; 3] = [0, 1, 2].map(|c| cur[c] * (1.0 - k) + bg[c] * k);
        let col = match leg {
            Some((c, cover)) if cover > 0.0 => {
                skin_n += 1;
                painted[i] = cover > 0.5;
                [0, 1, 2].map(|j| base[j] * (1.0 - cover) + c[j] * cover)
            }
            _ => {
                if k <= 0.0 {
                    continue;
                }
                bg_n += 1;
                base
            }
        };
        for c in 0..3 {
            o[4 * i + c] = col[c].round().clamp(0.0, 255.0) as u8;
        }
    }
    (skin_n, bg_n, painted)
}

/// Radius (pixels) over which painted skin blends into the photo's own skin it meets.
const SEAM: i64 = 10;

/// How far (RGB distance) the photo's own skin lies from the background continued behind
/// it, at least, for [`blend_seams`] to blend towards it.
const SKIN_OFF_BACKGROUND: f32 = 25.0;

/// Painted leg pixels within [`SEAM`] pixels of the photo's own skin (a bare foot, an ankle,
/// a knee below an old hem) are shifted by the step between the two there (the mean of the
/// photo's skin nearby minus the mean of the painted skin nearby), fading with the distance,
/// so the two meet without a step.
fn blend_seams(
    out: &mut RgbaImage,
    b: &Bared<'_>,
    painted: &[bool],
    skin: [f32; 3],
    background: &[[f32; 3]],
) {
    let (w, h) = out.dimensions();
    let (wu, hu) = (w as usize, h as usize);
    let raw = b.photo.as_raw();
    let px = |i: usize| [0, 1, 2].map(|c| f32::from(raw[4 * i + c]));
    // The photo's own skin: skin-like on the person, and not the background continued there
    // (a warm wall inside the soft mask's edge is no skin to blend towards).
    let real: Vec<bool> = (0..wu * hu)
        .into_par_iter()
        .map(|i| {
            let c = px(i);
            let off_bg = (0..3)
                .map(|k| (c[k] - background[i][k]).powi(2))
                .sum::<f32>()
                .sqrt()
                > SKIN_OFF_BACKGROUND;
            !painted[i] && b.person[i] >= 0.5 && skin_likeness(c, skin) > 0.85 && off_bg
        })
        .collect();
    let near = dilate(&real, wu, hu, SEAM as usize);
    let now = out.as_raw();
    let at = |i: usize| [0, 1, 2].map(|c| f32::from(now[4 * i + c]));
    let idx: Vec<usize> = (0..wu * hu).filter(|&i| painted[i] && near[i]).collect();
    let shifted: Vec<(usize, [f32; 3])> = idx
        .par_iter()
        .filter_map(|&i| {
            let (x, y) = ((i % wu) as i64, (i / wu) as i64);
            let (mut sr, mut nr, mut sp, mut np) = ([0.0f32; 3], 0.0f32, [0.0f32; 3], 0.0f32);
            let mut best = f32::MAX;
            // Every other pixel of the photo's own grid (the same samples for neighbouring
            // pixels: a grid relative to each pixel painted a 2 × 2 lattice of steps).
            for yy in ((y - SEAM) & !1..=y + SEAM).step_by(2) {
                for xx in ((x - SEAM) & !1..=x + SEAM).step_by(2) {
                    let (dx, dy) = (xx - x, yy - y);
                    if xx < 0 || yy < 0 || xx >= w as i64 || yy >= h as i64 {
                        continue;
                    }
                    let d = ((dx * dx + dy * dy) as f32).sqrt();
                    if d > SEAM as f32 {
                        continue;
                    }
                    let j = yy as usize * wu + xx as usize;
                    if real[j] {
                        let c = px(j);
                        (0..3).for_each(|k| sr[k] += c[k]);
                        nr += 1.0;
                        best = best.min(d);
                    } else if painted[j] {
                        let c = at(j);
                        (0..3).for_each(|k| sp[k] += c[k]);
                        np += 1.0;
                    }
                }
            }
            if nr < 2.0 || np < 2.0 {
                return None;
            }
            let fade = (1.0 - best / SEAM as f32).clamp(0.0, 1.0).powi(2);
            let c = at(i);
            Some((
                i,
                [0, 1, 2].map(|k| c[k] + (sr[k] / nr - sp[k] / np) * fade),
            ))
        })
        .collect();
    let o = out.as_mut();
    for (i, c) in shifted {
        for k in 0..3 {
            o[4 * i + k] = c[k].round().clamp(0.0, 255.0) as u8;
        }
    }
}

/// Bins across a leg for [`Correction`].
const BINS: usize = 8;

/// The painted leg's colour matched to the person's own skin on the same leg: per leg and
/// position across it, the ratio of the photo's skin to the painted model's colour, measured
/// on the skin in view just below the old garment (a knee below old shorts).
struct Correction {
    /// Per leg and bin across it (−1 → 1): per channel gain.
    gain: [[[f32; 3]; BINS]; 2],
}

impl Correction {
    fn measure(
        b: &Bared<'_>,
        model: &BareLegs,
        tone: &LegTone,
        skin: [f32; 3],
        edge_old: &[bool],
    ) -> Correction {
        let (w, h) = b.photo.dimensions();
        let mut gain = [[[1.0f32; 3]; BINS]; 2];
        for (side, g) in gain.iter_mut().enumerate() {
            // (t, bin, ratio) of the skin in view on this leg.
            let mut real: Vec<(f32, usize, [f32; 3])> = Vec::new();
            for k in 0..=240 {
                let t = k as f32 / 240.0;
                for j in 0..=18 {
                    let s = -0.9 + 0.1 * j as f32;
                    let p = model.point(side, t, s);
                    let (x, y) = (p.x.round() as i64, p.y.round() as i64);
                    if x < 0 || y < 0 || x >= i64::from(w) || y >= i64::from(h) {
                        continue;
                    }
                    let i = y as usize * w as usize + x as usize;
                    if edge_old[i] || b.person[i] < 0.5 || b.alpha[i] > 0.0 {
                        continue;
                    }
                    let c = b.photo.get_pixel(x as u32, y as u32).0;
                    let c = [0, 1, 2].map(|q| f32::from(c[q]));
                    if skin_likeness(c, skin) < 0.85 {
                        continue;
                    }
                    let Some(on) = model.at(p).filter(|o| o.side == side && o.cover > 0.9) else {
                        continue;
                    };
                    let m = tone.colour(on, x as u32, y as u32);
                    let bin = (((on.s + 1.0) * 0.5 * BINS as f32) as usize).min(BINS - 1);
                    real.push((on.t, bin, [0, 1, 2].map(|q| c[q] / m[q].max(1.0))));
                }
            }
            let Some(top) = real.iter().map(|r| r.0).reduce(f32::min) else {
                continue;
            };
            let band: Vec<&(f32, usize, [f32; 3])> =
                real.iter().filter(|r| r.0 <= top + 0.15).collect();
            if band.len() < 20 {
                continue;
            }
            let mean = |rs: &[&(f32, usize, [f32; 3])]| {
                let n = rs.len().max(1) as f32;
                [0, 1, 2].map(|q| (rs.iter().map(|r| r.2[q]).sum::<f32>() / n).clamp(0.7, 1.3))
            };
            let all = mean(&band);
            for (bin, gb) in g.iter_mut().enumerate() {
                let here: Vec<&(f32, usize, [f32; 3])> =
                    band.iter().copied().filter(|r| r.1 == bin).collect();
                *gb = if here.len() >= 3 { mean(&here) } else { all };
            }
        }
        Correction { gain }
    }

    /// The gain at a point on a leg (interpolated across it).
    fn at(&self, on: OnLeg) -> [f32; 3] {
        let g = &self.gain[on.side.min(1)];
        let f = ((on.s + 1.0) * 0.5 * BINS as f32 - 0.5).clamp(0.0, (BINS - 1) as f32);
        let i = (f as usize).min(BINS - 2);
        let k = f - i as f32;
        [0, 1, 2].map(|q| g[i][q] * (1.0 - k) + g[i + 1][q] * k)
    }
}

/// A pixel to fill: the leg's colour and cover if on one, and how much old clothing to
/// replace with the background.
type Fill = (Option<([f32; 3], f32)>, f32);

/// The inputs of [`uncover_legs`].
#[derive(Debug, Clone, Copy)]
pub struct Bared<'a> {
    /// The person photo as it was (before the new garment).
    pub photo: &'a RgbaImage,
    /// The person mask at the photo's size (0–1).
    pub person: &'a [f32],
    /// The new garment's cover per pixel (0–1).
    pub alpha: &'a [f32],
    /// The legs.
    pub legs: &'a Legs,
    /// The upper body's frame (the face's skin colour and light).
    pub frame: &'a BodyFrame,
    /// How far along each leg from its hip the new garment's hem lies (pixels), when the
    /// garment has legs of its own: no skin above it.
    pub skin_from: Option<[f32; 2]>,
}

/// The colour of bare leg skin: the person's leg tone, shaded as a cylinder lit from the
/// face's light ([`skin::cylinder`], [`FaceLight`]), a soft highlight on the knee cap and
/// a shade under it, and the grain of the photo's own skin ([`skin_grain`]).
struct LegTone {
    skin: [f32; 3],
    light: Vec2,
    /// Whether the light's across axis runs the other way from the image's x.
    flip: bool,
    /// The grain's amplitude (levels): uniform noise in ± this.
    grain: f32,
}

/// The painted skin's grain (levels) where the photo shows too little skin to measure its own.
const DEFAULT_GRAIN: f32 = 1.5;

/// Skin pixels (their whole 5 × 5 neighbourhood skin) the photo must show for its grain to
/// be measured.
const MIN_GRAIN_SAMPLES: usize = 200;

/// The grain of the photo's own skin, as the amplitude of uniform noise with the same 30th
/// percentile of the absolute high-pass (each pixel's luma less its 5 × 5 mean: the camera's
/// noise and the skin's fine texture) over the skin the photo shows (on the `person` mask, like `skin`,
/// away from its edges). A painted leg as smooth as plastic beside a grainy photo gives the
/// composite away (what compositors match as grain). [`DEFAULT_GRAIN`] when under
/// [`MIN_GRAIN_SAMPLES`] such pixels show.
fn skin_grain(photo: &RgbaImage, person: &[f32], skin: [f32; 3]) -> f32 {
    let (w, h) = (photo.width() as usize, photo.height() as usize);
    let luma: Vec<f32> = (0..w * h).map(|i| luma(px(photo, i))).collect();
    let mean = box_blur(&luma, w, h, 2);
    let not_skin: Vec<bool> = (0..w * h)
        .into_par_iter()
        .map(|i| person[i] < 0.5 || skin_likeness(px(photo, i), skin) < 0.85)
        .collect();
    let near_other = dilate(&not_skin, w, h, 2);
    let mut res: Vec<f32> = (0..w * h)
        .filter(|&i| !near_other[i])
        .map(|i| (luma[i] - mean[i]).abs())
        .collect();
    if res.len() < MIN_GRAIN_SAMPLES {
        return DEFAULT_GRAIN;
    }
    // The lower quantiles are the grain (the face's brows, lashes and lips, and the shading's
    // edges, lie in the upper ones); uniform noise in ±a has its absolute values' q-quantile
    // at q·a.
    let k = res.len() * 3 / 10;
    let low = *res.select_nth_unstable_by(k, f32::total_cmp).1;
    (low / 0.3).clamp(DEFAULT_GRAIN, 12.0)
}

impl LegTone {
    fn new(photo: &RgbaImage, frame: &BodyFrame, skin: [f32; 3], grain: f32) -> LegTone {
        let face = frame.skin.unwrap_or(FALLBACK_SKIN);
        let light = FaceLight::measure(photo, Vec2::ZERO, frame, face)
            .map_or(Vec2::new(0.35, 0.94), |l| l.direction());
        LegTone {
            skin,
            light,
            flip: frame.across.x < 0.0,
            grain,
        }
    }

    fn colour(&self, on: OnLeg, x: u32, y: u32) -> [f32; 3] {
        let s = if self.flip { -on.s } else { on.s };
        let centre = skin::cylinder(0.0, self.light);
        let mut shade = skin::cylinder(s, self.light) / centre;
        let across = (1.0 - on.s * on.s).max(0.0);
        let dk = on.t - on.knee;
        shade *= 1.0 + 0.06 * across * (-((dk + 0.012) / 0.022).powi(2)).exp()
            - 0.05 * across * (-((dk - 0.035) / 0.02).powi(2)).exp();
        let g = skin::grain(x, y) * self.grain;
        self.skin.map(|v| v * shade + g)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Growing a mask by `r` marks exactly the pixels within `r` (square window) of a set one.
    #[test]
    fn dilate_grows_by_the_radius() {
        let (w, h) = (13, 9);
        let mut m = vec![false; w * h];
        m[4 * w + 6] = true;
        m[8 * w + 12] = true;
        let d = dilate(&m, w, h, 2);
        for y in 0..h {
            for x in 0..w {
                let want = (x.abs_diff(6) <= 2 && y.abs_diff(4) <= 2)
                    || (x.abs_diff(12) <= 2 && y.abs_diff(8) <= 2);
                assert_eq!(d[y * w + x], want, "({x}, {y})");
            }
        }
    }
}
