//! Fitting lower-body garments: trousers' two halves along the legs, a dress's skirt from
//! the waist to its own hem length.
//!
//! - **Trousers** ([`fit_pants`]): the waistband and the crotch follow a similarity scaled
//!   from the garment's hips to the body's (the person mask's width at the hip keypoints);
//!   the crotch sits a third of the rise below the hip keypoints. Each half's spline then
//!   runs down its leg's chain, hip → knee → ankle, with stations at a third, two thirds and
//!   the hem of the garment's own leg, so a bent knee bends the trouser leg. The hem lies at
//!   the product's length fraction ([`PantsLandmarks::length_fraction`]) of the leg from the
//!   crotch to just past the ankle (full-length trousers break over the shoe).
//! - **Skirts** ([`fit_skirt`]): the skirt continues the bodice's similarity at the waist
//!   (the seam stays closed) and hangs along the axis from the waist towards the ankles'
//!   midpoint — it flares from the hips rather than following each leg — with the garment's
//!   own widths. Its hem depth maps the dress's length in shoulder widths onto the person's
//!   own hips, knees and ankles ([`STANDARD_DEPTHS`]), so a knee dress ends at the knees of
//!   a tall or a short person alike.

use glam::Vec2;

use crate::garment::body::frame::BodyFrame;
use crate::garment::body::legs::Legs;
use crate::garment::cutout::lower::{DressLandmarks, PantsLandmarks};
use crate::garment::error::GarmentError;
use crate::garment::geom::{mask_at, perp};
use crate::garment::label;
use crate::garment::upper::fit::UpperFit;
use crate::garment::warp::Part;

/// Depths below the shoulder seams of an adult's hip joints, knees and ankles, in seam-to-
/// seam shoulder widths (40 cm: 50, 96 and 138 cm).
pub const STANDARD_DEPTHS: [f32; 3] = [1.25, 2.4, 3.45];

/// How far past the ankle (a fraction of the leg) full-length trousers reach.
pub const BREAK: f32 = 0.05;

/// Trousers fitted to the legs.
#[derive(Debug, Clone, PartialEq)]
pub struct PantsFit {
    /// The two halves (left, right).
    pub parts: Vec<Part>,
    /// Garment pixels to photo pixels.
    pub scale: f32,
    /// The waistband's centre on the photo.
    pub waist_centre: Vec2,
    /// Each leg's hem centre on the photo.
    pub hems: [Vec2; 2],
    /// How far along each leg from the hip keypoint the hem lies (pixels).
    pub hem_reach: [f32; 2],
    /// The garment's outline on the photo.
    pub outline: Vec<Vec2>,
}

/// The waistband's corners pulled in to the body's outline at the waist (plus an ease of 3%
/// of the hip width `hip_width`; `mask` is the person mask of a `w`×`h` photo) where the trousers' own proportions put them beside the body:
/// straight-cut trousers scaled by the hips' width are wider than a waist (seen on rendered
/// full-body subjects: the waistband's corners stuck out beside the top). `None` when the
/// corners already lie on the body or the waist's centre is not on the person mask.
pub fn waist_on_body(
    fit: &PantsFit,
    mask: &[f32],
    (w, h): (u32, u32),
    hip_width: f32,
) -> Option<[Vec2; 2]> {
    let at = |p: Vec2| mask_at(mask, (w, h), p);
    let (&left, &right) = (fit.outline.first()?, fit.outline.last()?);
    let c = fit.waist_centre;
    if at(c) < 0.5 {
        return None;
    }
    let ease = 0.03 * hip_width;
    let pull = |corner: Vec2| -> Vec2 {
        let len = corner.distance(c);
        let Some(u) = (corner - c).try_normalize() else {
            return corner;
        };
        let mut t = 0.0;
        while t < len && at(c + u * (t + 1.0)) >= 0.5 {
            t += 1.0;
        }
        if t + ease < len {
            c + u * (t + ease)
        } else {
            corner
        }
    };
    let pulled = [pull(left), pull(right)];
    (pulled != [left, right]).then_some(pulled)
}

/// Fits trousers to `legs`; `waist` replaces the waistband's corners (a jumpsuit's waist
/// seam, placed by its bodice).
pub fn fit_pants(
    g: &PantsLandmarks,
    legs: &Legs,
    waist: Option<[Vec2; 2]>,
) -> Result<PantsFit, GarmentError> {
    let hip_g = g.hip[0].distance(g.hip[1]);
    if hip_g < 4.0 {
        return Err(GarmentError::ZeroWidth("hip"));
    }
    let s = legs.hip_width / hip_g;
    let rise = (g.crotch.y - g.waist_centre.y).max(1.0) * s;
    let crotch_b = legs.hips_mid + legs.down * 0.35 * rise;
    let map = |p: Vec2| {
        crotch_b + legs.across * (p.x - g.crotch.x) * s + legs.down * (p.y - g.crotch.y) * s
    };
    let waist_b = waist.unwrap_or([map(g.waist[0]), map(g.waist[1])]);
    let waist_centre_b = match waist {
        Some(w) => (w[0] + w[1]) * 0.5,
        None => map(g.waist_centre),
    };
    let frac = g.length_fraction().clamp(0.08, 1.1);
    let mut parts = Vec::new();
    let mut hems = [Vec2::ZERO; 2];
    let mut hem_reach = [0.0; 2];
    let mut edges: [Vec<(Vec2, Vec2)>; 2] = [Vec::new(), Vec::new()];
    for k in 0..2 {
        let leg = &legs.legs[k];
        let d0 = (leg.chain[1] - leg.chain[0]).normalize_or_zero();
        let s_c = (crotch_b - leg.chain[0]).dot(d0).max(0.0);
        let s_full = leg.length() * (1.0 + BREAK);
        let s_hem = s_c + frac * (s_full - s_c);
        let out_sign = if k == 0 { -1.0 } else { 1.0 };
        let mid_seam = (g.waist_centre + g.crotch) * 0.5;
        let mut pg = vec![g.waist_centre, g.waist[k], g.hip[k], g.crotch, mid_seam];
        let mut pb = vec![
            waist_centre_b,
            waist_b[k],
            map(g.hip[k]),
            crotch_b,
            (waist_centre_b + crotch_b) * 0.5,
        ];
        for (j, t) in [1.0f32 / 3.0, 2.0 / 3.0, 1.0].iter().enumerate() {
            let (outer_g, inner_g) = g.legs[k][j];
            let (c, dir) = leg.along(s_c + t * (s_hem - s_c));
            let mut n = perp(dir);
            if n.dot(legs.across) * out_sign < 0.0 {
                n = -n;
            }
            let hw = outer_g.distance(inner_g) * 0.5 * s;
            let (ob, ib) = (c + n * hw, c - n * hw);
            pg.extend([outer_g, inner_g]);
            pb.extend([ob, ib]);
            edges[k].push((ob, ib));
            if j == 2 {
                hems[k] = c;
            }
        }
        hem_reach[k] = s_hem;
        parts.push(Part {
            label: if k == 0 {
                label::LEG_LEFT
            } else {
                label::LEG_RIGHT
            },
            region: Part::region_around(&pb, 0.08 * legs.hip_width),
            garment: pg,
            body: pb,
            tube: None,
        });
    }
    let mut outline = vec![waist_b[0], map(g.hip[0])];
    outline.extend(edges[0].iter().map(|e| e.0));
    outline.extend(edges[0].iter().rev().map(|e| e.1));
    outline.push(crotch_b);
    outline.extend(edges[1].iter().map(|e| e.1));
    outline.extend(edges[1].iter().rev().map(|e| e.0));
    outline.extend([map(g.hip[1]), waist_b[1]]);
    Ok(PantsFit {
        parts,
        scale: s,
        waist_centre: waist_centre_b,
        hems,
        hem_reach,
        outline,
    })
}

/// A dress's skirt fitted below its bodice.
#[derive(Debug, Clone, PartialEq)]
pub struct SkirtFit {
    /// The skirt's part.
    pub part: Part,
    /// The hem's depth below the shoulder keypoints' midpoint along the torso axis.
    pub hem_depth: f32,
    /// The hem's centre on the photo.
    pub hem_centre: Vec2,
    /// The dress's outline on the photo (bodice and skirt).
    pub outline: Vec<Vec2>,
}

/// The person's depth for a garment length of `ratio` shoulder widths, through
/// [`STANDARD_DEPTHS`] onto `anchors` (the person's hips, knees, ankles).
pub fn depth_for(ratio: f32, anchors: [f32; 3]) -> f32 {
    depth_on(ratio, STANDARD_DEPTHS, anchors)
}

/// The person's depth for a garment length of `ratio` units, where a standard body has its
/// hips, knees and ankles `standard` units down and this person `anchors` pixels down
/// (piecewise linear from the garment's top, extended past the ankles).
pub fn depth_on(ratio: f32, standard: [f32; 3], anchors: [f32; 3]) -> f32 {
    let xs = [0.0, standard[0], standard[1], standard[2]];
    let ys = [0.0, anchors[0], anchors[1], anchors[2]];
    let k = if ratio <= xs[1] {
        0
    } else if ratio <= xs[2] {
        1
    } else {
        2
    };
    ys[k] + (ratio - xs[k]) * (ys[k + 1] - ys[k]) / (xs[k + 1] - xs[k])
}

/// Fits the skirt of `g` below its bodice's fit `upper` (see the module docs).
pub fn fit_skirt(
    g: &DressLandmarks,
    upper: &UpperFit,
    frame: &BodyFrame,
    legs: &Legs,
) -> Result<SkirtFit, GarmentError> {
    let sim = &upper.similarity;
    let b = &g.bodice;
    let mid = (frame.shoulder[0] + frame.shoulder[1]) * 0.5;
    let depth = |p: Vec2| (p - mid).dot(frame.down);
    let anchors = [
        depth(legs.hips_mid),
        legs.depth_of(1, mid, frame.down),
        legs.depth_of(2, mid, frame.down),
    ];
    // The seams sit a little above the shoulder keypoints: measure from them.
    let seam_depth = depth((frame.seam[0] + frame.seam[1]) * 0.5);
    let hem_depth = seam_depth + depth_for(g.length_ratio(), anchors.map(|a| a - seam_depth));
    let waist_b = [sim.apply(b.hem[0]), sim.apply(b.hem[1])];
    let waist_mid = (waist_b[0] + waist_b[1]) * 0.5;
    let ankles = (legs.legs[0].chain[2] + legs.legs[1].chain[2]) * 0.5;
    let axis = (ankles - waist_mid).try_normalize().unwrap_or(frame.down);
    let drop = (hem_depth - depth(waist_mid)) / axis.dot(frame.down).max(0.3);
    if drop <= 0.0 {
        return Err(GarmentError::HemAboveWaist);
    }
    let hem_centre = waist_mid + axis * drop;
    let mut side = perp(axis);
    if side.dot(frame.across) < 0.0 {
        side = -side;
    }
    let waist_g = (b.hem[0] + b.hem[1]) * 0.5;
    let hem_g = (g.skirt[3].0 + g.skirt[3].1) * 0.5;
    let span_g = (hem_g.y - waist_g.y).max(1.0);
    let s = upper.scale;
    let hip_depth = depth(legs.hips_mid);
    let mut pg = vec![b.hem[0], b.hem[1], waist_g];
    let mut pb = vec![waist_b[0], waist_b[1], waist_mid];
    let mut left = Vec::new();
    let mut right = Vec::new();
    for (lg, rg) in g.skirt {
        let t = ((lg.y - waist_g.y) / span_g).clamp(0.0, 1.0);
        let c = waist_mid + axis * drop * t;
        let mut hw = (rg.x - lg.x) * 0.5 * s;
        if depth(c) > hip_depth {
            hw = hw.max(0.52 * legs.hip_width);
        }
        pg.extend([lg, rg]);
        pb.extend([c - side * hw, c + side * hw]);
        left.push(c - side * hw);
        right.push(c + side * hw);
    }
    pg.push(hem_g);
    pb.push(hem_centre);
    let mut outline: Vec<Vec2> = [b.neck[0], b.shoulder[0], b.armpit[0], b.hem[0]]
        .iter()
        .map(|p| sim.apply(*p))
        .collect();
    outline.extend(&left);
    outline.extend(right.iter().rev());
    outline.extend(
        [
            b.hem[1],
            b.armpit[1],
            b.shoulder[1],
            b.neck[1],
            b.neck_centre,
        ]
        .iter()
        .map(|p| sim.apply(*p)),
    );
    Ok(SkirtFit {
        part: Part {
            label: label::SKIRT,
            region: Part::region_around(&pb, 0.1 * frame.shoulder_width),
            garment: pg,
            body: pb,
            tube: None,
        },
        hem_depth,
        hem_centre,
        outline,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The standard body's joints map onto the person's own.
    #[test]
    fn lengths_map_onto_the_persons_joints() {
        let anchors = [300.0, 560.0, 820.0];
        assert!((depth_for(1.25, anchors) - 300.0).abs() < 1e-3);
        assert!((depth_for(2.4, anchors) - 560.0).abs() < 1e-3);
        assert!((depth_for(3.45, anchors) - 820.0).abs() < 1e-3);
        assert!(depth_for(3.8, anchors) > 820.0);
        assert!(depth_for(2.0, anchors) > 300.0 && depth_for(2.0, anchors) < 560.0);
    }
}
