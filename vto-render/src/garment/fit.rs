//! Fitting an upper-body garment to the body frame: the [`Part`]s of a torso and two
//! sleeves.
//!
//! The torso follows a similarity from the garment's shoulder seams to the body's (scaled by
//! the shoulder widths, oriented by the shoulder line and the torso axis), so the garment keeps
//! its own proportions: its length and its sleeves' length are the product's. Each sleeve's
//! spline runs from its root, shared with the torso (shoulder and armpit map the same way, so
//! the seam stays closed), along the arm's chain — shoulder, elbow, wrist — at stations spread
//! over the sleeve's own length; a long sleeve stops at the wrist.

use glam::Vec2;

use super::person::BodyFrame;
use super::product::GarmentLandmarks;
use super::warp::Part;
use super::{label, perp, GarmentError};

/// An upper-body garment fitted to a body.
#[derive(Debug, Clone, PartialEq)]
pub struct UpperFit {
    /// Sleeves first (they lie over the torso), then the torso.
    pub parts: Vec<Part>,
    /// The hem's depth below the shoulder keypoints' midpoint along the torso axis.
    pub hem_depth: f32,
    /// Garment pixels to photo pixels.
    pub scale: f32,
    /// Each sleeve's end on the body (photo pixels), when the garment has sleeves.
    pub cuffs: [Option<Vec2>; 2],
    /// How far each sleeve reaches along its arm from the shoulder keypoint (pixels; 0
    /// without sleeves).
    pub sleeve_reach: [f32; 2],
    /// The torso's outline on the photo (neck, shoulders, armpits, hem corners): inside it
    /// nothing is invented (an open front shows what the person wears).
    pub torso_outline: Vec<Vec2>,
    /// Garment pixels to photo pixels for the torso (what a dress's skirt continues from).
    pub similarity: Similarity,
}

/// The similarity from garment pixels to photo pixels (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Similarity {
    gm: Vec2,
    ug: Vec2,
    vg: Vec2,
    bm: Vec2,
    ub: Vec2,
    vb: Vec2,
    s: f32,
}

impl Similarity {
    /// The photo pixel of garment pixel `p`.
    pub fn apply(&self, p: Vec2) -> Vec2 {
        let d = p - self.gm;
        self.bm + (self.ub * d.dot(self.ug) + self.vb * d.dot(self.vg)) * self.s
    }
}

/// Fits `g` to `f`; `ease` widens the garment beyond the body's seams (1 for a shirt, more
/// for a jacket worn over one).
pub fn fit_upper(g: &GarmentLandmarks, f: &BodyFrame, ease: f32) -> Result<UpperFit, GarmentError> {
    let gw = g.shoulder_width();
    let bw = f.seam[0].distance(f.seam[1]);
    if gw < 1.0 || bw < 1.0 {
        return Err(GarmentError::Degenerate("zero shoulder width".into()));
    }
    let ug = (g.shoulder[1] - g.shoulder[0]) / gw;
    let sim = Similarity {
        gm: (g.shoulder[0] + g.shoulder[1]) * 0.5,
        ug,
        vg: perp(ug),
        bm: (f.seam[0] + f.seam[1]) * 0.5,
        ub: f.across,
        vb: f.down,
        s: bw * ease / gw,
    };
    let sw = f.shoulder_width;
    let hem_mid = (g.hem[0] + g.hem[1]) * 0.5;
    let waist = [
        (g.armpit[0] + g.hem[0]) * 0.5,
        (g.armpit[1] + g.hem[1]) * 0.5,
    ];
    let torso_g = vec![
        g.neck[0],
        g.neck[1],
        g.shoulder[0],
        g.shoulder[1],
        g.armpit[0],
        g.armpit[1],
        waist[0],
        waist[1],
        g.hem[0],
        g.hem[1],
        hem_mid,
        (g.armpit[0] + g.armpit[1] + g.hem[0] + g.hem[1]) * 0.25,
    ];
    let torso_b: Vec<Vec2> = torso_g.iter().map(|p| sim.apply(*p)).collect();
    let mut parts = Vec::new();
    let mut cuffs = [None, None];
    let mut sleeve_reach = [0.0; 2];
    for s in 0..2 {
        let Some(sl) = g.sleeve[s] else { continue };
        let len_g = sl.length();
        let Some(ag) = (sl.cuff - sl.root).try_normalize() else {
            continue;
        };
        // The garment's outer edge is the shoulder's side of the sleeve.
        let ng = perp(ag) * (g.shoulder[s] - sl.root).dot(perp(ag)).signum();
        let arm = &f.arms[s];
        let start = arm.chain[0];
        let (_, dir0) = arm.along(start, 0.0);
        // On the body the outer edge faces away from the torso (and up, for a raised arm).
        let away =
            (start - (f.shoulder[0] + f.shoulder[1]) * 0.5).normalize_or_zero() - f.down * 0.5;
        let out_sign = if perp(dir0).dot(away) >= 0.0 {
            1.0
        } else {
            -1.0
        };
        let to_wrist = start.distance(arm.chain[1]) + arm.chain[1].distance(arm.chain[2]);
        let len_b = (len_g * sim.s).min(to_wrist);
        let stations: &[f32] = if g.long_sleeves {
            &[0.25, 0.5, 0.75, 1.0]
        } else {
            &[0.33, 0.66, 1.0]
        };
        let seam_b = sim.apply(g.shoulder[s]);
        let armpit_b = sim.apply(g.armpit[s]);
        let mut pg = vec![g.shoulder[s], g.armpit[s]];
        let mut pb = vec![seam_b, armpit_b];
        let cuff_out_g = sl.cuff + ng * sl.cuff_half_width;
        let cuff_in_g = sl.cuff - ng * sl.cuff_half_width;
        for &t in stations {
            let (c_b, dir) = arm.along(start, len_b * t);
            let nb = perp(dir) * out_sign;
            let out_g = g.shoulder[s] + (cuff_out_g - g.shoulder[s]) * t;
            let in_g = g.armpit[s] + (cuff_in_g - g.armpit[s]) * t;
            let mid_g = (out_g + in_g) * 0.5;
            // Worn, the flat sleeve's width wraps half way round a tube: seen from the
            // front it is 2/π as wide, the print foreshortened towards its sides
            // (x = R sin θ for the flat position u = θ · 2 hw / π), so a dot at its centre
            // keeps its aspect. Never thinner than the arm under it.
            let hw_g = out_g.distance(in_g) * 0.5;
            let arm_r = if t >= 1.0 && g.long_sleeves {
                0.09
            } else {
                0.13 - 0.03 * t
            } * sw;
            let r_b = (hw_g * sim.s * std::f32::consts::FRAC_2_PI).max(arm_r);
            pg.push(mid_g);
            pb.push(c_b);
            for k in [0.5f32, 1.0] {
                let theta = k * std::f32::consts::FRAC_PI_2;
                pg.push(mid_g + (out_g - mid_g) * k);
                pb.push(c_b + nb * r_b * theta.sin());
            }
            // The inner half where it lies below the armpit (above it, it is folded under
            // the arm and out of sight). An arm hanging close to the body has its whole
            // short sleeve above the armpit: its cuff's inner corner then slides down the arm to
            // just below the armpit (a hanging sleeve's hem slants), else its inner half
            // maps off the sleeve and the arm shows through a slit.
            for k in [0.5f32, 1.0] {
                let theta = k * std::f32::consts::FRAC_PI_2;
                let mut inner = c_b - nb * r_b * theta.sin();
                let below = (inner - armpit_b).dot(f.down);
                if k >= 1.0 && t >= 1.0 && dir.dot(f.down) > 0.7 && below <= 0.05 * sw {
                    inner += dir * ((0.06 * sw - below) / dir.dot(f.down));
                }
                if (inner - armpit_b).dot(f.down) > 0.05 * sw {
                    pg.push(mid_g + (in_g - mid_g) * k);
                    pb.push(inner);
                }
            }
        }
        cuffs[s] = Some(arm.along(start, len_b).0);
        sleeve_reach[s] = len_b;
        parts.push(Part {
            label: if s == 0 {
                label::SLEEVE_LEFT
            } else {
                label::SLEEVE_RIGHT
            },
            region: Part::region_around(&pb, 0.12 * sw),
            garment: pg,
            body: pb,
        });
    }
    parts.push(Part {
        label: label::TORSO,
        region: Part::region_around(&torso_b, 0.15 * sw),
        garment: torso_g,
        body: torso_b,
    });
    let mid = (f.shoulder[0] + f.shoulder[1]) * 0.5;
    let torso_outline = [
        g.neck[0],
        g.shoulder[0],
        g.armpit[0],
        g.hem[0],
        g.hem[1],
        g.armpit[1],
        g.shoulder[1],
        g.neck[1],
        g.neck_centre,
    ]
    .iter()
    .map(|p| sim.apply(*p))
    .collect();
    Ok(UpperFit {
        similarity: sim,
        torso_outline,
        sleeve_reach,
        parts,
        hem_depth: (sim.apply(hem_mid) - mid).dot(f.down),
        scale: sim.s,
        cuffs,
    })
}
