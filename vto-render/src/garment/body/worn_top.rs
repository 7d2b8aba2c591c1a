//! The top the person wears now, as far as it hangs over the hips: where its hem lies and
//! whether a pixel above the hem is the top's or the lower garment's beside it. New trousers
//! go under it ([`crate::garment::lower::compose`]).

use glam::Vec2;
use image::RgbaImage;

use crate::garment::body::frame::BodyFrame;
use crate::garment::body::legs::Legs;
use crate::garment::colour;
use crate::garment::geom::mask_at;

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

/// A silhouette's outer edge that moves this far in (a fraction of the hip width) within
/// [`EDGE_STEP_SPAN`] of the torso's length, and stays in, marks a hem
/// ([`silhouette_hem`]).
pub const EDGE_STEP: f32 = 0.1;

/// How abrupt an edge's step must be, as a fraction of the torso's length: a hem is a
/// step, the thighs' taper is not.
pub const EDGE_STEP_SPAN: f32 = 0.06;

/// Where the top the person wears ends: walking down the body's centre line from the chest.
/// When the top's colour differs from the lower garment's (sampled on the thighs), the hem
/// is where the colour becomes the lower garment's for several steps; when the two are
/// alike (navy on blue, a black coat over black trousers), it is where the silhouette's
/// outer edge steps in below the hips ([`silhouette_hem`]: a coat wider than the legs),
/// else the sharpest colour step between the waist and the upper thighs (a hem is an edge
/// even between similar colours), if one stands out. `None` when nothing marks a hem (a
/// tucked or one-piece look). `mask` is the person mask at the photo's size.
pub fn worn_top_hem(
    photo: &RgbaImage,
    mask: &[f32],
    frame: &BodyFrame,
    legs: &Legs,
) -> Option<WornTop> {
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
        let cs: Vec<[f32; 3]> = pts.iter().filter_map(|p| at(*p)).collect();
        (cs.len() >= 3).then(|| colour::median(cs)).flatten()
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
        if let Some(hem) = silhouette_hem(mask, photo.dimensions(), frame, legs, torso, thigh) {
            return Some(WornTop {
                hem,
                colour: top,
                bottom,
                distinct: false,
            });
        }
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

/// How far down the top the person wears reaches when the legs cannot be seen (a half-body
/// photo): walking the torso's centre line down from its middle, the depth (below the
/// shoulder keypoints' midpoint along [`BodyFrame::down`]) where the colour leaves the
/// chest's for several steps or the person ends — or the photo's edge when the top runs out
/// of it. `None` when the chest cannot be sampled. A new top that is not cropped hangs at
/// least this far (the tops' renderer caps it a tunic's length below the hips: an old top
/// running out of the photo shows no hem), so the old top does not show below it.
pub fn worn_top_reach(photo: &RgbaImage, mask: &[f32], frame: &BodyFrame) -> Option<f32> {
    let (w, h) = photo.dimensions();
    let mid = (frame.shoulder[0] + frame.shoulder[1]) * 0.5;
    let torso = (frame.hips - mid).dot(frame.down).max(frame.shoulder_width);
    let sw = frame.shoulder_width;
    let inside = |p: Vec2| p.x >= 0.0 && p.y >= 0.0 && p.x < w as f32 && p.y < h as f32;
    let median = |centre: Vec2| -> Option<[f32; 3]> {
        let cs: Vec<[f32; 3]> = (-3..=3)
            .map(|k| centre + frame.across * sw * 0.04 * k as f32)
            .filter(|&p| inside(p) && mask_at(mask, (w, h), p) >= 0.5)
            .map(|p| {
                let c = photo.get_pixel(p.x as u32, p.y as u32).0;
                [f32::from(c[0]), f32::from(c[1]), f32::from(c[2])]
            })
            .collect();
        (cs.len() >= 4).then(|| colour::median(cs)).flatten()
    };
    let chest = median(mid + frame.down * 0.45 * torso)?;
    let step = (torso / 60.0).max(1.0);
    let mut t = 0.45 * torso;
    let mut run = 0;
    loop {
        let p = mid + frame.down * t;
        if !inside(p) {
            return Some(t - step);
        }
        match median(p) {
            Some(c) if dist(c, chest) < DISTINCT => run = 0,
            _ => run += 1,
        }
        if run >= 3 {
            return Some(t - 3.0 * step);
        }
        t += step;
    }
}

/// Where the person's silhouette steps in below the hips: the hem of a top wider than the
/// legs under it (a coat, a long jacket), found on the mask where colours cannot tell it
/// (black on black). Walking down each leg from just above the hips (0.05 of the torso) to
/// 0.8 of the thigh, the outer edge (the mask's run outwards from the leg's axis, within
/// 0.8 hip widths) must move in by [`EDGE_STEP`] hip widths within [`EDGE_STEP_SPAN`] of
/// the torso and stay in for as long again. A side with a hand near its edge is not read
/// (fingertips end the same way); legs apart move the outer edges out, not in. The
/// lower step of the two sides (the old top must not show below the new one), as a depth
/// below the hips' midpoint like [`WornTop::hem`].
pub fn silhouette_hem(
    mask: &[f32],
    size: (u32, u32),
    frame: &BodyFrame,
    legs: &Legs,
    torso: f32,
    thigh: f32,
) -> Option<f32> {
    let hw = legs.hip_width;
    let step = (torso / 80.0).max(1.0);
    let ts: Vec<f32> = (0..)
        .map(|k| -0.05 * torso + k as f32 * step)
        .take_while(|t| *t < 0.8 * thigh)
        .collect();
    let span = ((EDGE_STEP_SPAN * torso / step).ceil() as usize).max(1);
    let mut best: Option<f32> = None;
    for (side, leg) in legs.legs.iter().enumerate() {
        let out = if side == 0 { -legs.across } else { legs.across };
        // The leg's axis at depth t below the hips (the hip keypoint above the hips).
        let axis = |t: f32| {
            let (hip, knee) = (leg.chain[0], leg.chain[1]);
            let along = (knee - hip).dot(legs.down).max(1.0);
            hip + (knee - hip) * (t / along).max(0.0) + legs.down * t.min(0.0)
        };
        let edge: Vec<f32> = ts
            .iter()
            .map(|&t| {
                let a = axis(t);
                let mut r = 0.0;
                while r < 0.8 * hw && mask_at(mask, size, a + out * (r + 1.0)) >= 0.5 {
                    r += 1.0;
                }
                r
            })
            .collect();
        let hand_near = |t: f32| {
            frame.arms.iter().any(|arm| {
                let edge_at = axis(t) + out * 0.3 * hw;
                arm.chain[2..]
                    .iter()
                    .any(|h| h.distance(edge_at) < 0.45 * hw)
            })
        };
        for k in 0..ts.len().saturating_sub(2 * span) {
            let above = edge[k];
            let below = edge[k + span..=k + 2 * span]
                .iter()
                .copied()
                .fold(f32::MIN, f32::max);
            if above - below >= EDGE_STEP * hw && above > 0.0 && !hand_near(ts[k]) {
                // The hem: the last sample still out before the edge steps in.
                let j = (k..k + span)
                    .rev()
                    .find(|&j| edge[j] - below >= EDGE_STEP * hw)
                    .unwrap_or(k);
                let hem = ts[j];
                best = Some(best.map_or(hem, |b: f32| b.max(hem)));
                break;
            }
        }
    }
    best
}
