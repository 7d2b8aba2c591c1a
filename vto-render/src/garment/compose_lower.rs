//! Composing lower-body garments: trousers over the legs, and the legs a shorter garment
//! uncovers.
//!
//! - **Layering** ([`compose_pants`]): the hands and forearms stay in front, the feet (each
//!   foot's capsule heel → toe below the ankle) stay in front of the hems, and the top the
//!   person wears stays over the waistband down to its own hem ([`worn_top_hem`]).
//! - **Shading**: the person's light and folds carried over as for tops
//!   ([`super::compose`]'s shading ratio).
//! - **Uncovering** ([`uncover_legs`], in [`super::uncover`]): the person's old clothing
//!   that the new garment leaves bare becomes skin inside each bare leg (the person's own leg
//!   tone, shaded as a lit cylinder) and the background continued from outside the person
//!   elsewhere (between the legs, beside narrower trousers) — never the old garment.

use glam::Vec2;
use image::RgbaImage;
use rayon::prelude::*;

use super::compose::{shading, ComposeStats, ARM_VISIBLE};
use super::legs::Legs;
use super::person::BodyFrame;
use super::skin::{skin_likeness, FALLBACK_SKIN};
use super::smoothstep;
pub use super::uncover::{uncover_legs, Bared, Feet};
use super::warp::WarpOutput;
use super::{hue_dist, seg_dist};

/// Whether a pixel at `p` stays in front of new trousers: on a visible forearm (skin or
/// sleeve), or on a hand's capsule where `hand` says it is the hand. The capsule is wider
/// than the fingers: the old trousers showing between them go.
pub fn arm_in_front(frame: &BodyFrame, p: Vec2, hand: bool) -> bool {
    let sw = frame.shoulder_width;
    frame.arms.iter().any(|a| {
        if a.visibility < ARM_VISIBLE {
            return false;
        }
        let [_, e, w, h] = a.chain;
        let tip = h + (h - w) * 0.6;
        seg_dist(p, e, w).0 < 0.12 * sw || (hand && seg_dist(p, w, tip).0 < 0.14 * sw)
    })
}

/// The top the person wears, as far as it hangs over the hips.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WornTop {
    /// Its hem's depth below the hips' midpoint along the legs' `down`.
    pub hem: f32,
    /// Its colour (sRGB, the median on the chest).
    pub colour: [f32; 3],
    /// The lower garment's colour (sRGB, the median on the thighs).
    pub bottom: [f32; 3],
    /// Whether the two colours are far enough apart to tell a pixel's garment by its
    /// colour; when not, every pixel of the person above the hem is the top's.
    pub distinct: bool,
}

impl WornTop {
    /// Whether a pixel of colour `c` above the hem is the top's (rather than the lower
    /// garment's, showing beside it).
    pub fn is_top(&self, c: [f32; 3]) -> bool {
        !self.distinct || dist(c, self.colour) < dist(c, self.bottom)
    }
}

fn dist(a: [f32; 3], b: [f32; 3]) -> f32 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
}

/// Colours this far apart (sRGB distance) tell the top from the lower garment.
const DISTINCT: f32 = 30.0;

/// Where the top the person wears ends: walking down the body's centre line from the chest.
/// When the top's colour differs from the lower garment's (sampled on the thighs), the hem
/// is where the colour becomes the lower garment's for several steps; when the two are
/// alike (navy on blue), it is the sharpest colour step between the waist and the upper
/// thighs (a hem is an edge even between similar colours), if one stands out. `None` when
/// nothing marks a hem (a tucked or one-piece look).
pub fn worn_top_hem(photo: &RgbaImage, frame: &BodyFrame, legs: &Legs) -> Option<WornTop> {
    let (w, h) = photo.dimensions();
    let at = |p: Vec2| -> Option<[f32; 3]> {
        let (x, y) = (p.x.round() as i64, p.y.round() as i64);
        if x < 0 || y < 0 || x >= i64::from(w) || y >= i64::from(h) {
            return None;
        }
        let c = photo.get_pixel(x as u32, y as u32).0;
        Some([f32::from(c[0]), f32::from(c[1]), f32::from(c[2])])
    };
    let median = |pts: &[Vec2]| -> Option<[f32; 3]> {
        let mut cs: Vec<[f32; 3]> = pts.iter().filter_map(|p| at(*p)).collect();
        if cs.len() < 3 {
            return None;
        }
        let mut out = [0.0; 3];
        for (c, o) in out.iter_mut().enumerate() {
            cs.sort_by(|a, b| a[c].total_cmp(&b[c]));
            *o = cs[cs.len() / 2][c];
        }
        Some(out)
    };
    let strip = |centre: Vec2| -> Vec<Vec2> {
        (-3..=3)
            .map(|k| centre + legs.across * legs.hip_width * 0.09 * k as f32)
            .collect()
    };
    let mid = (frame.shoulder[0] + frame.shoulder[1]) * 0.5;
    let torso = (legs.hips_mid - mid).length();
    let top = median(&strip(mid + (legs.hips_mid - mid) * 0.45))?;
    let thighs: Vec<Vec2> = legs
        .legs
        .iter()
        .flat_map(|l| {
            let (c, _) = l.along(0.45 * l.chain[0].distance(l.chain[1]));
            [
                c - legs.across * 0.04 * legs.hip_width,
                c,
                c + legs.across * 0.04 * legs.hip_width,
            ]
        })
        .collect();
    let bottom = median(&thighs)?;
    let step = (torso / 60.0).max(1.0);
    let thigh = legs.legs[0].chain[0].distance(legs.legs[0].chain[1]);
    if dist(top, bottom) < DISTINCT {
        // The sharpest step between a third of the torso above the hips and a third of
        // the thigh below them, the top's colour above it.
        let ts: Vec<f32> = (0..)
            .map(|k| -0.35 * torso + k as f32 * step)
            .take_while(|t| *t < 0.35 * thigh)
            .collect();
        let cs: Vec<[f32; 3]> = ts
            .iter()
            .map(|t| median(&strip(legs.hips_mid + legs.down * *t)))
            .collect::<Option<_>>()?;
        let mean = |s: &[[f32; 3]]| {
            let n = s.len().max(1) as f32;
            [0, 1, 2].map(|c| s.iter().map(|v| v[c]).sum::<f32>() / n)
        };
        let best = (3..cs.len().saturating_sub(3))
            .map(|k| {
                let (above, below) = (mean(&cs[k - 3..k]), mean(&cs[k + 1..k + 4]));
                let toward_top = dist(above, top) < dist(below, top);
                (if toward_top { dist(above, below) } else { 0.0 }, k)
            })
            .max_by(|a, b| a.0.total_cmp(&b.0))?;
        return (best.0 >= 10.0).then_some(WornTop {
            hem: ts[best.1],
            colour: top,
            bottom,
            distinct: false,
        });
    }
    let mut t = -0.5 * torso;
    let mut run = 0;
    let limit = thigh * 0.8;
    while t < limit {
        let c = median(&strip(legs.hips_mid + legs.down * t))?;
        if dist(c, bottom) < dist(c, top) {
            run += 1;
            if run >= 3 {
                return Some(WornTop {
                    hem: t - 2.0 * step,
                    colour: top,
                    bottom,
                    distinct: true,
                });
            }
        } else {
            run = 0;
        }
        t += step;
    }
    Some(WornTop {
        hem: limit,
        colour: top,
        bottom,
        distinct: true,
    })
}

/// The inputs of [`compose_pants`].
#[derive(Debug)]
pub struct PantsLayers<'a> {
    /// The person photo.
    pub photo: &'a RgbaImage,
    /// The person mask at the photo's size (0–1).
    pub person: &'a [f32],
    /// The upper body's frame (arms, face, skin colour).
    pub frame: &'a BodyFrame,
    /// The legs.
    pub legs: &'a Legs,
    /// The warped trousers.
    pub warped: &'a WarpOutput,
    /// The worn top ([`worn_top_hem`]): above its hem its pixels stay in front.
    pub top: Option<WornTop>,
    /// The worn top when it is replaced too (an outfit): its pixels above its hem do not
    /// shade the trousers (its light boundary at its hem would show through).
    pub replaced_top: Option<WornTop>,
    /// The waistband's centre on the photo: nothing above it is uncovered.
    pub waist_centre: Vec2,
    /// How far along each leg from its hip the trousers' hem lies (pixels).
    pub hem_reach: [f32; 2],
}

/// Composes warped trousers over the photo (see the module docs).
pub fn compose_pants(l: &PantsLayers<'_>) -> (RgbaImage, ComposeStats) {
    let (w, h) = l.photo.dimensions();
    let (wu, hu) = (w as usize, h as usize);
    let skin = l.frame.skin.unwrap_or(FALLBACK_SKIN);
    let raw = l.photo.as_raw();
    let px = |i: usize| [0, 1, 2].map(|c| f32::from(raw[4 * i + c]));
    let skin_p: Vec<f32> = (0..wu * hu)
        .into_par_iter()
        .map(|i| skin_likeness(px(i), skin))
        .collect();
    let legs = l.legs;
    let mut stats = ComposeStats::default();
    let feet = Feet::new(l.photo, legs, skin);
    let keep: Vec<bool> = (0..wu * hu)
        .into_par_iter()
        .map(|i| {
            let p = Vec2::new((i % wu) as f32, (i / wu) as f32);
            // A hand's pixel: of a hue nearer the skin's than the old trousers' (where they
            // are known), else skin-like at all.
            let c = px(i);
            let hand = l.top.or(l.replaced_top).map_or(skin_p[i] > 0.3, |t| {
                hue_dist(c, skin) <= hue_dist(c, t.bottom)
            });
            feet.in_front(p, c) || arm_in_front(l.frame, p, hand)
        })
        .collect();
    let alpha: Vec<f32> = (0..wu * hu)
        .map(|i| {
            let a = f32::from(l.warped.rgba[i][3]) / 255.0;
            if a <= 0.0 {
                return 0.0;
            }
            if keep[i] {
                stats.kept_in_front += 1;
                return 0.0;
            }
            match l.top {
                // Above the worn top's hem the top hangs in front: over its own pixels
                // and beside it (the waistband's corners do not poke out past the top).
                Some(top) if top.is_top(px(i)) || l.person[i] < 0.5 => {
                    let p = Vec2::new((i % wu) as f32, (i / wu) as f32);
                    let depth = (p - legs.hips_mid).dot(legs.down);
                    let k = smoothstep(top.hem - 1.5, top.hem + 1.5, depth);
                    if k < 1.0 {
                        stats.kept_in_front += 1;
                    }
                    a * k
                }
                _ => a,
            }
        })
        .collect();
    stats.covered = alpha.iter().filter(|&&a| a > 0.5).count();
    let unshading: Vec<bool> = match l.top.or(l.replaced_top) {
        Some(top) => (0..wu * hu)
            .into_par_iter()
            .map(|i| {
                let p = Vec2::new((i % wu) as f32, (i / wu) as f32);
                keep[i] || ((p - legs.hips_mid).dot(legs.down) < top.hem && top.is_top(px(i)))
            })
            .collect(),
        None => keep.clone(),
    };
    let ratio = shading(
        l.photo,
        l.person,
        &unshading,
        &skin_p,
        &alpha,
        l.frame.shoulder_width,
    );
    let mut out = l.photo.clone();
    {
        let o = out.as_mut();
        for i in 0..wu * hu {
            let a = alpha[i];
            if a <= 0.0 {
                continue;
            }
            let g = l.warped.rgba[i];
            let ga = f32::from(g[3]).max(1.0);
            let c = px(i);
            for ch in 0..3 {
                let col = f32::from(g[ch]) / ga * 255.0 * ratio[i];
                o[4 * i + ch] = (c[ch] * (1.0 - a) + col * a).round().clamp(0.0, 255.0) as u8;
            }
        }
    }
    let waist = (l.waist_centre - legs.hips_mid).dot(legs.down);
    let start = |p: Vec2| {
        // Below the waistband's top, and below the worn top's hem or beside the top.
        let depth = (p - legs.hips_mid).dot(legs.down);
        let i = (p.y as usize) * wu + p.x as usize;
        depth > waist && !keep[i] && l.top.is_none_or(|t| depth > t.hem || !t.is_top(px(i)))
    };
    let bared = Bared {
        photo: l.photo,
        person: l.person,
        alpha: &alpha,
        legs,
        frame: l.frame,
        skin_from: Some(l.hem_reach),
    };
    let (s, b) = uncover_legs(&mut out, &bared, start);
    stats.skin_filled = s;
    stats.background_filled = b;
    (out, stats)
}
