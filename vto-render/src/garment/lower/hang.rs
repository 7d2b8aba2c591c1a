//! A skirt on its own ([`SkirtLandmarks`]) hung from the body's waist.
//!
//! - **The waist** lies a quarter of the torso (shoulder keypoints to hip keypoints) above
//!   the hip keypoints ([`WAIST_ABOVE_HIPS`]: an adult's natural waist is 13–17 cm above the
//!   hip joints on a 52–55 cm torso; skirts sit at it or a little lower), across the body as
//!   wide as [`WAIST_OF_HIPS`] of the hips seen.
//! - **Widths**: the waistband's flat width maps onto that waist; the skirt's own edges
//!   below scale with it, never narrower than the body they hang over: between the waist
//!   and the hip keypoints they widen towards the hips' half-width (plus a little ease), and
//!   below the hips a skirt is at least as wide as a dress's.
//! - **Length**: the skirt's length in waistband widths ([`SkirtLandmarks::length_ratio`])
//!   is mapped through a standard body's hips, knees and ankles below the waist
//!   ([`SKIRT_DEPTHS`]) onto the person's own ([`depth_on`]), so a knee-length skirt ends at
//!   the knees of a tall or a short person alike. It hangs from the waist along the mean of
//!   the photo's vertical, the body's axis and the direction to the ankles' midpoint (a
//!   skirt hangs; a wide stance alone must not swing it sideways), flaring from the hips
//!   rather than following each leg.

use glam::Vec2;

use crate::garment::body::frame::BodyFrame;
use crate::garment::body::legs::Legs;
use crate::garment::cutout::skirt::SkirtLandmarks;
use crate::garment::error::GarmentError;
use crate::garment::geom::perp;
use crate::garment::label;
use crate::garment::lower::fit::depth_on;
use crate::garment::warp::Part;

/// Depths below the natural waist of a standard adult's hip joints, knees and ankles, in
/// waistband flat widths ([`crate::garment::cutout::skirt::WAISTBAND_CM`], 36 cm: 17, 57
/// and 96 cm).
pub const SKIRT_DEPTHS: [f32; 3] = [0.47, 1.58, 2.67];

/// How far above the hip keypoints the waist lies, in torso lengths (shoulder keypoints to
/// hip keypoints).
pub const WAIST_ABOVE_HIPS: f32 = 0.25;

/// The body's width at the waist, in the widths of its hips seen in the photo.
pub const WAIST_OF_HIPS: f32 = 0.9;

/// Below the hip keypoints a skirt's half-width is at least this many hip widths (as a
/// dress's skirt, [`crate::garment::lower::fit::fit_skirt`]).
pub const MIN_HALF_WIDTH_BELOW_HIPS: f32 = 0.52;

/// A skirt hung on the body.
#[derive(Debug, Clone, PartialEq)]
pub struct HungSkirt {
    /// The skirt's part.
    pub part: Part,
    /// Garment pixels to photo pixels (at the waist).
    pub scale: f32,
    /// The waistband's centre on the photo.
    pub waist_centre: Vec2,
    /// The hem's centre on the photo.
    pub hem_centre: Vec2,
    /// How far along each leg from its hip keypoint the hem lies (pixels).
    pub hem_reach: [f32; 2],
    /// The skirt's outline on the photo.
    pub outline: Vec<Vec2>,
}

/// Hangs the skirt `g` from the waist of the body `frame`, `legs` (see the module docs).
pub fn hang_skirt(
    g: &SkirtLandmarks,
    frame: &BodyFrame,
    legs: &Legs,
) -> Result<HungSkirt, GarmentError> {
    let down = legs.down;
    let shoulders = (frame.shoulder[0] + frame.shoulder[1]) * 0.5;
    let torso = (legs.hips_mid - shoulders)
        .dot(down)
        .max(0.5 * legs.hip_width);
    let waist_centre = legs.hips_mid - down * WAIST_ABOVE_HIPS * torso;
    let depth = |p: Vec2| (p - waist_centre).dot(down);
    let waist_w = WAIST_OF_HIPS * legs.hip_width;
    let s = waist_w / g.waist_width().max(1.0);
    let anchors = [
        depth(legs.hips_mid),
        legs.depth_of(1, waist_centre, down),
        legs.depth_of(2, waist_centre, down),
    ];
    let hem_depth = depth_on(g.length_ratio(), SKIRT_DEPTHS, anchors);
    // A skirt hangs: down the photo, the body and towards the ankles' midpoint alike (the
    // ankles alone swing it sideways under a wide stance).
    let ankles = (legs.legs[0].chain[2] + legs.legs[1].chain[2]) * 0.5;
    let to_ankles = (ankles - waist_centre).try_normalize().unwrap_or(down);
    let axis = (Vec2::Y + down + to_ankles).try_normalize().unwrap_or(down);
    let drop = hem_depth / axis.dot(down).max(0.3);
    if drop <= 0.0 {
        return Err(GarmentError::HemAboveWaist);
    }
    let mut side = perp(axis);
    if side.dot(legs.across) < 0.0 {
        side = -side;
    }
    let hip_depth = anchors[0].max(1.0);
    let hip_half = MIN_HALF_WIDTH_BELOW_HIPS * legs.hip_width;
    let waist_g = g.waist_centre();
    let hem_g = g.hem_centre();
    let span_g = (hem_g.y - waist_g.y).max(1.0);
    let waist_b = [
        waist_centre - side * waist_w * 0.5,
        waist_centre + side * waist_w * 0.5,
    ];
    let mut pg = vec![g.waist[0], g.waist[1], waist_g];
    let mut pb = vec![waist_b[0], waist_b[1], waist_centre];
    let (mut left, mut right) = (Vec::new(), Vec::new());
    for (lg, rg) in g.edges {
        let t = ((lg.y - waist_g.y) / span_g).clamp(0.0, 1.0);
        let c = waist_centre + axis * drop * t;
        // Never narrower than the body: from the waist's half-width to the hips'.
        let k = (depth(c) / hip_depth).clamp(0.0, 1.0);
        let body_half = waist_w * 0.5 + (hip_half - waist_w * 0.5) * k;
        let hw = ((rg.x - lg.x) * 0.5 * s).max(body_half);
        pg.extend([lg, rg]);
        pb.extend([c - side * hw, c + side * hw]);
        left.push(c - side * hw);
        right.push(c + side * hw);
    }
    let hem_centre = waist_centre + axis * drop;
    pg.push(hem_g);
    pb.push(hem_centre);
    let hem_reach = legs.legs.map(|leg| {
        // The first point along the leg as deep as the hem.
        let len = leg.length() * 1.3;
        let mut r = 0.0;
        while r < len && depth(leg.along(r).0) < hem_depth {
            r += 1.0;
        }
        r
    });
    let mut outline = vec![waist_b[0]];
    outline.extend(&left);
    outline.extend(right.iter().rev());
    outline.push(waist_b[1]);
    Ok(HungSkirt {
        part: Part {
            label: label::SKIRT,
            region: Part::region_around(&pb, 0.1 * legs.hip_width),
            garment: pg,
            body: pb,
            tube: None,
        },
        scale: s,
        waist_centre,
        hem_centre,
        hem_reach,
        outline,
    })
}
