//! Composing lower-body garments: trousers over the legs, and the legs a shorter garment
//! uncovers.
//!
//! - **Layering** ([`compose_pants`]): the hands and forearms stay in front, the feet (each
//!   foot's capsule heel → toe below the ankle) stay in front of the hems, and the top the
//!   person wears stays over the waistband down to its own hem
//!   ([`crate::garment::body::worn_top`]).
//! - **Shading**: the person's light and folds carried over as for tops
//!   ([`crate::garment::shade::transfer`]).
//! - **Uncovering** ([`super::uncover`]): the person's old clothing that the new garment
//!   leaves bare becomes skin inside each bare leg (the person's own leg
//!   tone, shaded as a lit cylinder) and the background continued from outside the person
//!   elsewhere (between the legs, beside narrower trousers) — never the old garment.

use glam::Vec2;
use image::RgbaImage;
use rayon::prelude::*;

use crate::garment::body::feet_over_hems::Feet;
use crate::garment::body::frame::{BodyFrame, ARM_VISIBLE};
use crate::garment::body::legs::Legs;
use crate::garment::body::worn_top::WornTop;
use crate::garment::colour::hue_dist;
use crate::garment::colour::{skin_likeness, FALLBACK_SKIN};
use crate::garment::geom::seg_dist;
use crate::garment::geom::smoothstep;
use crate::garment::lower::uncover::{uncover_legs, Bared};
use crate::garment::shade::transfer::shading;
use crate::garment::upper::compose::ComposeStats;
use crate::garment::warp::WarpOutput;

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
    /// The worn top ([`crate::garment::body::worn_top::worn_top_hem`]): above its hem its pixels stay in front.
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
