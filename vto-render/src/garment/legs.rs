//! The legs, as a lower-body garment sees them: each leg's chain hip → knee → ankle from the
//! pose keypoints 23–28, the feet (heels 29/30, toes 31/32) that stay in front of a hem, and
//! the hips' width read from the person mask.
//!
//! Index 0 is the side on the image's left, as in [`super::person::BodyFrame`].

use glam::Vec2;

use super::{perp, GarmentError};
use crate::tryon::Person;
use crate::vision::pose::PoseKeypoint;

/// Least visibility of a hip, knee or ankle keypoint for a lower-body garment.
pub const LEG_VISIBLE: f32 = 0.5;

/// One leg.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Leg {
    /// Hip, knee, ankle.
    pub chain: [Vec2; 3],
    /// The heel keypoint.
    pub heel: Vec2,
    /// The toe (foot index) keypoint.
    pub toe: Vec2,
}

impl Leg {
    /// Hip to knee to ankle, in pixels.
    pub fn length(&self) -> f32 {
        self.chain[0].distance(self.chain[1]) + self.chain[1].distance(self.chain[2])
    }

    /// The point `s` pixels along the chain from the hip (past the ankle along the shin),
    /// and the unit direction there.
    pub fn along(&self, s: f32) -> (Vec2, Vec2) {
        let [h, k, a] = self.chain;
        let thigh = h.distance(k);
        let d0 = (k - h).try_normalize().unwrap_or(Vec2::Y);
        let d1 = (a - k).try_normalize().unwrap_or(d0);
        if s <= thigh {
            (h + d0 * s.max(0.0), d0)
        } else {
            (k + d1 * (s - thigh), d1)
        }
    }
}

/// Both legs and the hips.
#[derive(Debug, Clone, PartialEq)]
pub struct Legs {
    /// The legs (image left, right).
    pub legs: [Leg; 2],
    /// The hip keypoints' midpoint.
    pub hips_mid: Vec2,
    /// Unit vector from the left hip to the right.
    pub across: Vec2,
    /// Unit vector down the body at the hips (square to `across`, towards the feet).
    pub down: Vec2,
    /// The body's width at the hip keypoints, from the person mask (outline to outline).
    pub hip_width: f32,
    /// Whether `hip_width` was measured on the mask (else estimated from the keypoints).
    pub hip_width_measured: bool,
}

fn kp(k: &[PoseKeypoint], i: usize) -> Option<(Vec2, f32)> {
    k.get(i)
        .map(|p| (Vec2::new(p.x, p.y), p.visibility.min(p.presence)))
}

impl Legs {
    /// The legs of `person` (`mask`: the person mask at the photo's size), or why a lower-body garment
    /// cannot be fitted: hips, knees and ankles must be inside the photo and visible.
    pub fn new(person: &Person, mask: &[f32]) -> Result<Legs, GarmentError> {
        let hidden = |what: &str| {
            GarmentError::NoBody(format!(
                "the legs are not visible in the person photo ({what}); pants, dresses and \
                 outfits need a full-length photo with the hips, knees and ankles in view"
            ))
        };
        let body = person
            .body
            .as_ref()
            .ok_or_else(|| hidden("no body was found"))?;
        let k = &body.keypoints;
        let (w, h) = person.photo.dimensions();
        let inside = |p: Vec2| p.x >= 0.0 && p.y >= 0.0 && p.x < w as f32 && p.y < h as f32 * 1.02;
        let mut pts = [[Vec2::ZERO; 5]; 2];
        let names = ["hip", "knee", "ankle", "heel", "toe"];
        for (side, ids) in [[23, 25, 27, 29, 31], [24, 26, 28, 30, 32]]
            .iter()
            .enumerate()
        {
            for (j, &i) in ids.iter().enumerate() {
                let (p, v) = kp(k, i).ok_or_else(|| hidden("missing keypoints"))?;
                if j < 3 && !inside(p) {
                    return Err(hidden(&format!("a {} is outside the photo", names[j])));
                }
                if j < 3 && v < LEG_VISIBLE {
                    return Err(hidden(&format!("a {} is hidden", names[j])));
                }
                pts[side][j] = p;
            }
        }
        if pts[0][0].x > pts[1][0].x {
            pts.swap(0, 1);
        }
        let legs = pts.map(|p| Leg {
            chain: [p[0], p[1], p[2]],
            heel: p[3],
            toe: p[4],
        });
        let hw = legs[0].chain[0].distance(legs[1].chain[0]);
        let lens = legs.map(|l| l.length());
        if hw < 4.0 || lens[0].min(lens[1]) < hw {
            return Err(hidden("the legs are too short to fit"));
        }
        let across = (legs[1].chain[0] - legs[0].chain[0]) / hw;
        let mut down = perp(across);
        let feet = (legs[0].chain[2] + legs[1].chain[2]) * 0.5;
        let hips_mid = (legs[0].chain[0] + legs[1].chain[0]) * 0.5;
        if down.dot(feet - hips_mid) < 0.0 {
            down = -down;
        }
        let (hip_width, measured) = match mask_width(mask, w, h, hips_mid, across, hw) {
            Some(m) => (m, true),
            None => (1.8 * hw, false),
        };
        Ok(Legs {
            legs,
            hips_mid,
            across,
            down,
            hip_width,
            hip_width_measured: measured,
        })
    }

    /// The mean depth of the knees (or ankles, `joint` 2) below `from` along `down`.
    pub fn depth_of(&self, joint: usize, from: Vec2, down: Vec2) -> f32 {
        let j = joint.min(2);
        ((self.legs[0].chain[j] + self.legs[1].chain[j]) * 0.5 - from).dot(down)
    }
}

/// The person mask's width along `across` through `mid` (outline to outline), when it is
/// plausible for hips `hw` apart.
fn mask_width(mask: &[f32], w: u32, h: u32, mid: Vec2, across: Vec2, hw: f32) -> Option<f32> {
    let at = |p: Vec2| -> f32 {
        let (x, y) = (p.x.round() as i64, p.y.round() as i64);
        if x < 0 || y < 0 || x >= i64::from(w) || y >= i64::from(h) {
            return 0.0;
        }
        mask.get(y as usize * w as usize + x as usize)
            .copied()
            .unwrap_or(0.0)
    };
    if at(mid) < 0.5 {
        return None;
    }
    let reach = |dir: f32| {
        let mut t = 0.0;
        while t < 1.6 * hw && at(mid + across * dir * (t + 1.0)) >= 0.5 {
            t += 1.0;
        }
        t
    };
    let width = reach(-1.0) + reach(1.0);
    (width > 1.2 * hw && width < 2.8 * hw).then_some(width)
}
