//! The legs and floor a shorter lower garment uncovers ([`uncover_legs`]), and the feet kept
//! in front of it ([`Feet`]).
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

use super::compose::{push_pull, skin_likeness};
use super::compose_lower::{on_foot, FALLBACK_SKIN};
use super::legs::{BareLegs, Legs, OnLeg};
use super::person::BodyFrame;
use super::skin::{self, FaceLight};

fn smoothstep(e0: f32, e1: f32, x: f32) -> f32 {
    let t = ((x - e0) / (e1 - e0)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

fn luma(c: [f32; 3]) -> f32 {
    0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2]
}

/// How much colour `c` looks like a garment of colour `g` (0–1), tolerant of shading: the
/// chromaticity must match (a small offset keeps near-black stable) and the luminance lie
/// within about half to twice the garment's.
pub fn garment_likeness(c: [f32; 3], g: [f32; 3]) -> f32 {
    let chroma = |v: [f32; 3]| {
        let s = v[0] + v[1] + v[2] + 30.0;
        [(v[0] + 10.0) / s, (v[1] + 10.0) / s, (v[2] + 10.0) / s]
    };
    let (a, b) = (chroma(c), chroma(g));
    let dc = ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt();
    let r = (luma(c) + 4.0) / (luma(g) + 4.0);
    (1.0 - smoothstep(0.035, 0.07, dc)) * smoothstep(0.4, 0.55, r) * (1.0 - smoothstep(1.7, 2.2, r))
}

fn median(mut cs: Vec<[f32; 3]>) -> Option<[f32; 3]> {
    if cs.is_empty() {
        return None;
    }
    let mut out = [0.0; 3];
    for (c, o) in out.iter_mut().enumerate() {
        cs.sort_by(|a, b| a[c].total_cmp(&b[c]));
        *o = cs[cs.len() / 2][c];
    }
    Some(out)
}

fn pixel(photo: &RgbaImage, p: Vec2) -> Option<[f32; 3]> {
    let (x, y) = (p.x.round() as i64, p.y.round() as i64);
    if x < 0 || y < 0 || x >= i64::from(photo.width()) || y >= i64::from(photo.height()) {
        return None;
    }
    let c = photo.get_pixel(x as u32, y as u32).0;
    Some([f32::from(c[0]), f32::from(c[1]), f32::from(c[2])])
}

/// Points on each foot: along heel → toe and a little either side.
fn foot_points(legs: &Legs) -> Vec<Vec2> {
    let hw = legs.hip_width;
    legs.legs
        .iter()
        .flat_map(|l| {
            (0..=16).flat_map(move |k| {
                let c = l.heel + (l.toe - l.heel) * (k as f32 / 16.0);
                (-2..=2).map(move |j| c + legs.across * (0.03 * hw * j as f32))
            })
        })
        .collect()
}

/// The feet in front of a lower garment, and the old lower garment's colour.
#[derive(Debug, Clone, Copy)]
pub struct Feet<'a> {
    legs: &'a Legs,
    /// The old lower garment's colour (median on the thighs), unless it is skin-like.
    bottom: Option<[f32; 3]>,
    /// Whether the old garment's colour differs from the shoes'.
    distinct: bool,
}

/// Points on the thighs, where the old lower garment's colour is measured.
fn thigh_points(legs: &Legs) -> Vec<Vec2> {
    let hw = legs.hip_width;
    legs.legs
        .iter()
        .flat_map(|l| {
            let thigh = l.chain[0].distance(l.chain[1]);
            (0..8).flat_map(move |k| {
                let (c, _) = l.along(thigh * (0.3 + 0.04 * k as f32));
                (-2..=2).map(move |j| c + legs.across * (0.03 * hw * j as f32))
            })
        })
        .collect()
}

impl<'a> Feet<'a> {
    /// Measures the old lower garment on the thighs of `photo` and the shoes on the feet.
    pub fn new(photo: &RgbaImage, legs: &'a Legs, face_skin: [f32; 3]) -> Feet<'a> {
        let thighs: Vec<[f32; 3]> = thigh_points(legs)
            .into_iter()
            .filter_map(|p| pixel(photo, p))
            .collect();
        let bottom = median(thighs).filter(|b| skin_likeness(*b, face_skin) < 0.5);
        let shoes = median(
            foot_points(legs)
                .into_iter()
                .filter(|p| on_foot(legs, *p))
                .filter_map(|p| pixel(photo, p))
                .collect(),
        );
        let distinct = match (bottom, shoes) {
            (Some(b), Some(s)) => garment_likeness(s, b) < 0.3,
            _ => false,
        };
        Feet {
            legs,
            bottom,
            distinct,
        }
    }

    /// The points on the thighs where the old lower garment's colour was measured.
    pub fn thigh_points(&self) -> Vec<Vec2> {
        thigh_points(self.legs)
    }

    /// The old lower garment's colour, when it is not skin-like.
    pub fn bottom(&self) -> Option<[f32; 3]> {
        self.bottom
    }

    /// Whether a pixel at `p` of colour `c` on the photo is a foot kept in front of the
    /// trousers' hems: inside a foot's capsule ([`on_foot`]) and, when the old garment's
    /// colour differs from the shoes', not that colour.
    pub fn in_front(&self, p: Vec2, c: [f32; 3]) -> bool {
        on_foot(self.legs, p) && !self.is_old(c)
    }

    /// Whether a pixel at `p` of colour `c` is a foot that uncovered legs and the filled
    /// background leave as it is: [`Self::in_front`], or near a foot (a keypoint a few
    /// pixels off) and not the old garment's colour.
    pub fn kept(&self, p: Vec2, c: [f32; 3]) -> bool {
        if self.in_front(p, c) {
            return true;
        }
        if !self.distinct || self.is_old(c) {
            return false;
        }
        let hw = self.legs.hip_width;
        self.legs.legs.iter().any(|l| {
            let len = l.heel.distance(l.toe).max(0.12 * hw);
            let below = (p - l.chain[2]).dot(self.legs.down) > -0.1 * len;
            let ab = l.toe - l.heel;
            let t = ((p - l.heel).dot(ab) / ab.length_squared().max(1e-6)).clamp(0.0, 1.0);
            below && p.distance(l.heel + ab * t) < (0.7 * len).max(0.26 * hw)
        })
    }

    fn is_old(&self, c: [f32; 3]) -> bool {
        self.distinct && self.bottom.is_some_and(|b| garment_likeness(c, b) > 0.5)
    }
}

/// The person's own leg tone: the median of the skin in view on the legs (near each leg's
/// centre line, hip to ankle) and the feet, when at least 30 such pixels are seen.
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
            [-0.3, 0.0, 0.3].map(|s| model.point(side, t, s))
        })
    });
    let cs: Vec<[f32; 3]> = on_legs
        .chain(foot_points(legs))
        .filter(|p| super::mask_at(person, (w, h), *p) >= 0.5)
        .filter_map(|p| pixel(photo, p))
        .filter(|c| {
            skin_likeness(*c, face) > 0.3 && bottom.is_none_or(|b| garment_likeness(*c, b) < 0.3)
        })
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
        let (x, y) = (i % w, i / w);
        let around = [
            (x > 0).then(|| i - 1),
            (x + 1 < w).then(|| i + 1),
            (y > 0).then(|| i - w),
            (y + 1 < h).then(|| i + w),
        ];
        for j in around.into_iter().flatten() {
            if !seen[j] && like[j] > 0.5 {
                seen[j] = true;
                stack.push(j);
            }
        }
    }
    seen
}

/// A boolean mask grown by `r` pixels (square window).
fn dilate(m: &[bool], w: usize, h: usize, r: usize) -> Vec<bool> {
    let rows: Vec<bool> = (0..w * h)
        .into_par_iter()
        .map(|i| {
            let (x, y) = (i % w, i / w);
            (x.saturating_sub(r)..(x + r + 1).min(w)).any(|xx| m[y * w + xx])
        })
        .collect();
    (0..w * h)
        .into_par_iter()
        .map(|i| {
            let (x, y) = (i % w, i / w);
            (y.saturating_sub(r)..(y + r + 1).min(h)).any(|yy| rows[yy * w + x])
        })
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
    let (wu, hu) = (w as usize, h as usize);
    let raw = b.photo.as_raw();
    let px = |i: usize| [0, 1, 2].map(|c| f32::from(raw[4 * i + c]));
    let face = b.frame.skin.unwrap_or(FALLBACK_SKIN);
    let legs = b.legs;
    let feet = Feet::new(b.photo, legs, face);
    let model = BareLegs::new(legs, b.person, w, h);
    let bottom = feet.bottom();
    let own = own_leg_tone(b.photo, b.person, &model, legs, bottom, face);
    let skin = own.unwrap_or(face);
    let tone = LegTone::new(b.photo, b.frame, skin);
    let hw = legs.hip_width;
    // Old clothing by colour, near the person (and its antialiased outline next to it).
    let body: Vec<bool> = b.person.iter().map(|&m| m >= 0.5).collect();
    let near = dilate(&body, wu, hu, 3);
    let like: Vec<f32> = (0..wu * hu)
        .into_par_iter()
        .map(|i| match bottom {
            Some(g) if near[i] => garment_likeness(px(i), g),
            _ => 0.0,
        })
        .collect();
    // Only what hangs together with the old garment on the thighs is old clothing: the
    // floor's contact shadow under dark shorts' bare shins is not.
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
    let near_old = dilate(&solid, wu, hu, 3);
    // The background is continued from pixels off the person and off its old clothing.
    let src: Vec<f32> = (0..wu * hu)
        .map(|i| {
            if near_old[i] || b.person[i] >= 0.2 {
                1.0
            } else {
                0.0
            }
        })
        .collect();
    let background = push_pull(b.photo, &src);
    // Per pixel: (the leg's colour and cover, how much old clothing to replace).
    let fills: Vec<Option<Fill>> = (0..wu * hu)
        .into_par_iter()
        .map(|i| {
            let (x, y) = (i % wu, i / wu);
            let p = Vec2::new(x as f32, y as f32);
            let a = b.alpha[i];
            let c = px(i);
            if a >= 0.5 || !start(p) || feet.kept(p, c) {
                return None;
            }
            let skin_like = skin_likeness(c, skin);
            let old = match bottom {
                Some(g) => {
                    // A mix of the old garment and the background behind it.
                    let bg = background[i];
                    let d = [0, 1, 2].map(|k| g[k] - bg[k]);
                    let d2 = d.iter().map(|v| v * v).sum::<f32>();
                    let mix = if near_old[i] && d2 > 900.0 {
                        let e = [0, 1, 2].map(|k| c[k] - bg[k]);
                        let f = (e[0] * d[0] + e[1] * d[1] + e[2] * d[2]) / d2;
                        let r = [0, 1, 2].map(|k| e[k] - f * d[k]);
                        let res = (r[0] * r[0] + r[1] * r[1] + r[2] * r[2]).sqrt();
                        smoothstep(0.06, 0.3, f) * (1.0 - smoothstep(10.0, 22.0, res))
                    } else {
                        0.0
                    };
                    like[i].max(mix) * (1.0 - a)
                }
                None => b.person[i] * (1.0 - skin_like) * (1.0 - a),
            };
            let leg = model.at(p).filter(|on| {
                // Inside the new garment's legs down to its hems nothing is bare.
                b.skin_from
                    .is_none_or(|r| on.reach > r[on.side.min(1)] - 0.06 * hw)
            });
            let leg = leg.map(|on| {
                // A soft contact shadow under the new garment's hem.
                let mut gap = 0.09 * hw;
                let mut q = p;
                let mut d = 0.0;
                while d < 0.09 * hw {
                    q -= legs.down;
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
                let own = smoothstep(0.8, 0.95, skin_like) * b.person[i];
                let col = tone.colour(on, x as u32, y as u32).map(|v| v * occl);
                (col, on.cover * (1.0 - a) * (1.0 - own))
            });
            if leg.is_none() && old < 0.3 {
                return None;
            }
            Some((leg, smoothstep(0.0, 0.6, old)))
        })
        .collect();
    let (mut skin_n, mut bg_n) = (0, 0);
    let mut painted = vec![false; wu * hu];
    {
        let o = out.as_mut();
        for i in 0..wu * hu {
            let Some((leg, k)) = fills[i] else { continue };
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
    }
    blend_seams(out, b, &painted, skin);
    (skin_n, bg_n)
}

/// Radius (pixels) over which painted skin blends into the photo's own skin it meets.
const SEAM: i64 = 10;

/// Painted leg pixels within [`SEAM`] pixels of the photo's own skin (a bare foot, an ankle,
/// a knee below an old hem) are shifted by the step between the two there (the mean of the
/// photo's skin nearby minus the mean of the painted skin nearby), fading with the distance,
/// so the two meet without a step.
fn blend_seams(out: &mut RgbaImage, b: &Bared<'_>, painted: &[bool], skin: [f32; 3]) {
    let (w, h) = out.dimensions();
    let (wu, hu) = (w as usize, h as usize);
    let raw = b.photo.as_raw();
    let px = |i: usize| [0, 1, 2].map(|c| f32::from(raw[4 * i + c]));
    let real: Vec<bool> = (0..wu * hu)
        .into_par_iter()
        .map(|i| !painted[i] && b.person[i] >= 0.5 && skin_likeness(px(i), skin) > 0.85)
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
            for dy in (-SEAM..=SEAM).step_by(2) {
                for dx in (-SEAM..=SEAM).step_by(2) {
                    let (xx, yy) = (x + dx, y + dy);
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
/// a shade under it, and a faint grain.
struct LegTone {
    skin: [f32; 3],
    light: Vec2,
    /// Whether the light's across axis runs the other way from the image's x.
    flip: bool,
}

impl LegTone {
    fn new(photo: &RgbaImage, frame: &BodyFrame, skin: [f32; 3]) -> LegTone {
        let face = frame.skin.unwrap_or(FALLBACK_SKIN);
        let light = FaceLight::measure(photo, Vec2::ZERO, frame, face)
            .map_or(Vec2::new(0.35, 0.94), |l| l.direction());
        LegTone {
            skin,
            light,
            flip: frame.across.x < 0.0,
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
        let g = skin::grain(x, y) * 1.5;
        self.skin.map(|v| v * shade + g)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The old garment's colour in shade and light is like it; the floor's shadow, the
    /// background and skin are not.
    #[test]
    fn garment_likeness_tolerates_shading_not_other_colours() {
        let navy = [62.0, 80.0, 118.0];
        assert!(garment_likeness(navy, navy) > 0.99);
        assert!(garment_likeness(navy.map(|v| v * 0.6), navy) > 0.9);
        assert!(garment_likeness(navy.map(|v| v * 1.5), navy) > 0.9);
        assert!(garment_likeness([80.0, 60.0, 45.0], navy) < 0.1);
        assert!(garment_likeness([234.0, 196.0, 170.0], navy) < 0.1);
        let black = [34.0, 34.0, 40.0];
        assert!(garment_likeness([64.0, 63.0, 65.0], black) > 0.5);
        assert!(garment_likeness([179.0, 174.0, 183.0], black) < 0.1);
        assert!(garment_likeness([70.0, 58.0, 50.0], black) < 0.1);
    }
}
