//! The legs, as a lower-body garment sees them: each leg's chain hip → knee → ankle from the
//! pose keypoints 23–28, the feet (heels 29/30, toes 31/32) that stay in front of a hem, and
//! the hips' width read from the person mask.
//!
//! Index 0 is the side on the image's left, as in [`crate::garment::body::frame::BodyFrame`].

use glam::Vec2;

use crate::garment::error::GarmentError;
use crate::garment::geom::smoothstep;
use crate::garment::geom::{mask_at, perp, seg_dist};
use crate::vision::pose::PoseKeypoint;
use crate::vision::Person;

/// Least visibility of an ankle (or heel, toe) keypoint to be taken as seen; a less visible
/// ankle is estimated ([`estimate_ankle`]).
pub const LEG_VISIBLE: f32 = 0.5;

/// Least visibility of a hip or knee keypoint for a lower-body garment. Lower than
/// [`LEG_VISIBLE`]: a knee under a long skirt or a wide trouser leg is covered, not out of
/// the photo, and the pose model still places it; below this it is guessing.
pub const HIP_KNEE_VISIBLE: f32 = 0.2;

/// Where a hidden ankle is put from the leg the photo shows: `hip`, `knee`, the pose model's
/// own (hidden or out-of-photo) `ankle`, and the heel and toe keypoints each with whether it
/// is seen.
/// - A seen heel (else toe) below the knee: the ankle lies a tenth (an eighth from the toe)
///   of the way from it up to the knee.
/// - Else along the model's knee → ankle direction when its shin is 0.6–1.4 thighs long,
///   at 0.85–1.05 of the thigh's length (the shin of a standing adult, knee to ankle
///   keypoint, is about 0.95 of hip to knee).
/// - Else straight on along the thigh, 0.95 of its length.
pub fn estimate_ankle(hip: Vec2, knee: Vec2, ankle: Vec2, foot: [(Vec2, bool); 2]) -> Vec2 {
    let thigh = hip.distance(knee).max(1.0);
    let down = (knee - hip).try_normalize().unwrap_or(Vec2::Y);
    for ((p, seen), share) in foot.into_iter().zip([0.1, 0.125]) {
        let below = (p - knee).dot(down);
        if seen && below > 0.4 * thigh && below < 1.6 * thigh {
            return p + (knee - p) * share;
        }
    }
    let shin = ankle - knee;
    let len = shin.length();
    match shin.try_normalize() {
        Some(d) if len > 0.6 * thigh && len < 1.4 * thigh => {
            knee + d * len.clamp(0.85 * thigh, 1.05 * thigh)
        }
        _ => knee + down * 0.95 * thigh,
    }
}

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
    /// Per leg: whether the ankle was estimated ([`estimate_ankle`]) rather than seen.
    pub ankles_estimated: [bool; 2],
}

fn kp(k: &[PoseKeypoint], i: usize) -> Option<(Vec2, f32)> {
    k.get(i)
        .map(|p| (Vec2::new(p.x, p.y), p.visibility.min(p.presence)))
}

impl Legs {
    /// The legs of `person` (`mask`: the person mask at the photo's size), or why a lower-body
    /// garment cannot be fitted: the hips and knees must be inside the photo and seen by the
    /// pose model. An ankle hidden (under a long garment) or outside the photo is estimated
    /// ([`estimate_ankle`]).
    pub fn new(person: &Person, mask: &[f32]) -> Result<Legs, GarmentError> {
        let hidden = |what: &str| GarmentError::LegsHidden(what.to_string());
        let body = person
            .body
            .as_ref()
            .ok_or_else(|| hidden("no body was found"))?;
        let k = &body.keypoints;
        let (w, h) = person.photo.dimensions();
        let inside = |p: Vec2| p.x >= 0.0 && p.y >= 0.0 && p.x < w as f32 && p.y < h as f32 * 1.02;
        let mut pts = [[Vec2::ZERO; 5]; 2];
        let mut estimated = [false; 2];
        let names = ["hip", "knee"];
        for (side, ids) in [[23, 25, 27, 29, 31], [24, 26, 28, 30, 32]]
            .iter()
            .enumerate()
        {
            let mut seen = [false; 5];
            for (j, &i) in ids.iter().enumerate() {
                let (p, v) = kp(k, i).ok_or_else(|| hidden("missing keypoints"))?;
                if j < 2 && !inside(p) {
                    return Err(hidden(&format!("a {} is outside the photo", names[j])));
                }
                if j < 2 && v < HIP_KNEE_VISIBLE {
                    return Err(hidden(&format!("a {} is hidden", names[j])));
                }
                seen[j] = inside(p) && v >= LEG_VISIBLE;
                pts[side][j] = p;
            }
            if !seen[2] {
                let [hip, knee, ankle, heel, toe] = pts[side];
                let foot = [(heel, seen[3]), (toe, seen[4])];
                pts[side][2] = estimate_ankle(hip, knee, ankle, foot);
                estimated[side] = true;
            }
        }
        if pts[0][0].x > pts[1][0].x {
            pts.swap(0, 1);
            estimated.swap(0, 1);
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
            ankles_estimated: estimated,
        })
    }

    /// The mean depth of the knees (or ankles, `joint` 2) below `from` along `down`.
    pub fn depth_of(&self, joint: usize, from: Vec2, down: Vec2) -> f32 {
        let j = joint.min(2);
        ((self.legs[0].chain[j] + self.legs[1].chain[j]) * 0.5 - from).dot(down)
    }
}

/// Whether `p` is on a foot: within the capsule heel → toe, below the ankle. The capsule is
/// at least a shoe's half-width across (0.16 × the hip width, about 5–6 cm): a foot pointing
/// at the camera spans only a few pixels heel → toe, and a capsule scaled by that alone let
/// the skin of uncovered legs eat into the shoes (seen on rendered full-body subjects).
pub fn on_foot(legs: &Legs, p: Vec2) -> bool {
    legs.legs.iter().any(|l| {
        let len = l.heel.distance(l.toe).max(0.12 * legs.hip_width);
        let below = (p - l.chain[2]).dot(legs.down) > -0.05 * len;
        let radius = (0.45 * len).max(0.16 * legs.hip_width);
        below && seg_dist(p, l.heel, l.toe).0 < radius
    })
}

/// The person mask's width along `across` through `mid` (outline to outline), when it is
/// plausible for hips `hw` apart.
fn mask_width(mask: &[f32], w: u32, h: u32, mid: Vec2, across: Vec2, hw: f32) -> Option<f32> {
    let at = |p: Vec2| mask_at(mask, (w, h), p);
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

/// How many cross-sections [`BareLegs`] measures along each leg.
const SECTIONS: usize = 96;

/// A leg's half-width (a fraction of the hip width) at `t` along hip → ankle (0–1) with
/// the knee at `tk`: the thigh tapering to the knee, a slight narrowing at the knee, the
/// calf's bulge below it, the ankle slimmest.
pub fn leg_profile(t: f32, tk: f32) -> f32 {
    let tk = tk.clamp(0.3, 0.7);
    let knee = 0.008 * (-((t - tk) / 0.035).powi(2)).exp();
    if t <= tk {
        let u = (t / tk).clamp(0.0, 1.0);
        0.26 - 0.095 * u.powf(0.8) - knee
    } else {
        let u = ((t - tk) / (1.0 - tk)).clamp(0.0, 1.2);
        let taper = smoothstep(0.2, 1.0, u);
        0.165 - 0.07 * taper + 0.022 * (-((u - 0.3) / 0.2).powi(2)).exp() - knee
    }
}

/// Where a pixel lies on a bared leg ([`BareLegs::at`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OnLeg {
    /// Signed position across the leg, −1 to 1 at its outline, positive on the side of
    /// [`Legs::across`] (image right).
    pub s: f32,
    /// How far along the leg, 0 at the hip, 1 at the ankle.
    pub t: f32,
    /// Where the knee is along the leg (same scale as `t`).
    pub knee: f32,
    /// How much of the pixel the leg covers (0–1): a soft edge about 1.5 px wide.
    pub cover: f32,
    /// Which leg (0: the image's left).
    pub side: usize,
    /// How far along the leg from the hip (pixels).
    pub reach: f32,
}

/// The bare legs a shorter garment uncovers, as solids: each leg's centre line and
/// half-width per cross-section, tapering thigh → knee → calf → ankle ([`leg_profile`])
/// and following the person mask's outline where it is plausible for a bare leg (the mask
/// of baggy trousers is wider: the profile caps it).
#[derive(Debug, Clone)]
pub struct BareLegs {
    legs: [Leg; 2],
    /// Per leg and cross-section: (the centre's offset from the keypoint chain across the
    /// leg, the half-width), pixels.
    sections: [Vec<(f32, f32)>; 2],
    across: Vec2,
}

impl BareLegs {
    /// The bare legs of `legs` measured on the person `mask` (`w` × `h`).
    pub fn new(legs: &Legs, mask: &[f32], w: u32, h: u32) -> BareLegs {
        let at = |p: Vec2| mask_at(mask, (w, h), p);
        let hw = legs.hip_width;
        let sections = legs.legs.map(|leg| {
            let len = leg.length().max(1.0);
            let tk = leg.chain[0].distance(leg.chain[1]) / len;
            let raw: Vec<(f32, f32)> = (0..SECTIONS)
                .map(|i| {
                    let t = i as f32 / (SECTIONS - 1) as f32;
                    let (c, d) = leg.along(t * len);
                    let mut n = perp(d);
                    if n.dot(legs.across) < 0.0 {
                        n = -n;
                    }
                    let prof = leg_profile(t, tk) * hw;
                    if at(c) < 0.5 {
                        return (0.0, prof);
                    }
                    let reach = |dir: f32| {
                        let mut e = 0.0;
                        while e < 1.4 * prof && at(c + n * dir * (e + 1.0)) >= 0.5 {
                            e += 1.0;
                        }
                        e.clamp(0.5 * prof, 1.35 * prof)
                    };
                    let (plus, minus) = (reach(1.0), reach(-1.0));
                    let half = (0.5 * (plus + minus)).clamp(0.75 * prof, 1.15 * prof);
                    let off = (0.5 * (plus - minus)).clamp(-0.35 * prof, 0.35 * prof);
                    (off, half)
                })
                .collect();
            // Smoothed along the leg: the mask's steps and the other leg's touch are not
            // the leg's shape.
            (0..SECTIONS)
                .map(|i| {
                    let lo = i.saturating_sub(4);
                    let hi = (i + 5).min(SECTIONS);
                    let n = (hi - lo) as f32;
                    let (o, r) = raw[lo..hi]
                        .iter()
                        .fold((0.0, 0.0), |a, v| (a.0 + v.0, a.1 + v.1));
                    (o / n, r / n)
                })
                .collect()
        });
        BareLegs {
            legs: legs.legs,
            sections,
            across: legs.across,
        }
    }

    fn section(&self, side: usize, t: f32) -> (f32, f32) {
        let s = &self.sections[side];
        let f = t.clamp(0.0, 1.0) * (SECTIONS - 1) as f32;
        let i = (f as usize).min(SECTIONS - 2);
        let k = f - i as f32;
        let (a, b) = (s[i], s[i + 1]);
        (a.0 + (b.0 - a.0) * k, a.1 + (b.1 - a.1) * k)
    }

    /// The box (top-left, bottom-right) outside which no pixel is on a leg.
    pub fn bounds(&self) -> (Vec2, Vec2) {
        let (mut lo, mut hi) = (Vec2::splat(f32::MAX), Vec2::splat(f32::MIN));
        for (side, leg) in self.legs.iter().enumerate() {
            let reach = self.sections[side]
                .iter()
                .map(|&(o, r)| o.abs() + r)
                .fold(0.0f32, f32::max)
                + 2.0;
            for p in leg.chain {
                lo = lo.min(p - Vec2::splat(reach));
                hi = hi.max(p + Vec2::splat(reach));
            }
        }
        (lo, hi)
    }

    /// The point at `t` along leg `side` (0 at the hip, 1 at the ankle) and `s` across it
    /// (−1 to 1 at its outline, positive towards [`Legs::across`]).
    pub fn point(&self, side: usize, t: f32, s: f32) -> Vec2 {
        let leg = &self.legs[side.min(1)];
        let (c, d) = leg.along(t.clamp(0.0, 1.0) * leg.length().max(1.0));
        let mut n = perp(d);
        if n.dot(self.across) < 0.0 {
            n = -n;
        }
        let (off, half) = self.section(side.min(1), t);
        c + n * (off + s * half)
    }

    /// Where `p` lies on the nearer bare leg, if on one (the ankle's end rounded; nothing
    /// above the hips).
    pub fn at(&self, p: Vec2) -> Option<OnLeg> {
        let mut best: Option<OnLeg> = None;
        for (side, leg) in self.legs.iter().enumerate() {
            let len = leg.length().max(1.0);
            let thigh = leg.chain[0].distance(leg.chain[1]);
            let tk = thigh / len;
            for (j, (a, b)) in [(0, 1), (1, 2)].into_iter().enumerate() {
                let (a, b) = (leg.chain[a], leg.chain[b]);
                let ab = b - a;
                let l2 = ab.length_squared().max(1e-6);
                let u = (p - a).dot(ab) / l2;
                let seg = l2.sqrt();
                let t_raw = (if j == 0 { 0.0 } else { thigh } + u * seg) / len;
                if t_raw < 0.0 {
                    continue;
                }
                let t = t_raw.min(1.0);
                let mut n = perp(ab / seg);
                if n.dot(self.across) < 0.0 {
                    n = -n;
                }
                let (off, half) = self.section(side, t);
                let half = half.max(1.0);
                let on_axis = a + ab * u.clamp(0.0, 1.0);
                let s = ((p - on_axis).dot(n) - off) / half;
                // Past the segment's ends: round (the ankle) or the other segment's (knee).
                let past = if u > 1.0 {
                    (u - 1.0) * seg / half
                } else if u < 0.0 {
                    -u * seg / half
                } else {
                    0.0
                };
                let r = (s * s + past * past).sqrt();
                let soft = 1.5 / half;
                let cover = 1.0 - smoothstep(1.0 - soft, 1.0 + 0.5 * soft, r);
                if cover <= 0.0 {
                    continue;
                }
                if best.is_none_or(|b| cover > b.cover || (cover == b.cover && s.abs() < b.s.abs()))
                {
                    best = Some(OnLeg {
                        s: s.clamp(-1.0, 1.0),
                        t,
                        knee: tk,
                        cover,
                        side,
                        reach: t_raw * len,
                    });
                }
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn straight_legs() -> Legs {
        let leg = |x: f32| Leg {
            chain: [
                Vec2::new(x, 100.0),
                Vec2::new(x, 300.0),
                Vec2::new(x, 500.0),
            ],
            heel: Vec2::new(x, 520.0),
            toe: Vec2::new(x, 540.0),
        };
        Legs {
            legs: [leg(100.0), leg(220.0)],
            hips_mid: Vec2::new(160.0, 100.0),
            across: Vec2::X,
            down: Vec2::Y,
            hip_width: 200.0,
            hip_width_measured: true,
            ankles_estimated: [false; 2],
        }
    }

    /// A hidden ankle: from the heel when the foot shows, else along the model's shin when
    /// it is plausible, else straight on along the thigh.
    #[test]
    fn a_hidden_ankle_is_estimated_from_the_foot_the_shin_or_the_thigh() {
        let (hip, knee) = (Vec2::new(100.0, 100.0), Vec2::new(100.0, 300.0));
        let heel = Vec2::new(120.0, 500.0);
        let far = Vec2::new(400.0, 900.0);
        let a = estimate_ankle(hip, knee, far, [(heel, true), (far, false)]);
        assert!(a.distance(Vec2::new(118.0, 480.0)) < 0.5, "{a}");
        // The foot unseen: the model's ankle, a shin of 149 px bent outwards (kept, its
        // length raised to 0.85 of the thigh).
        let bent = Vec2::new(150.0, 440.0);
        let a = estimate_ankle(hip, knee, bent, [(heel, false), (heel, false)]);
        assert!((a.distance(knee) - 170.0).abs() < 0.5, "{a}");
        assert!(a.x > 140.0, "follows the model's direction: {a}");
        // A model's ankle 3 thighs away is nonsense: straight on along the thigh.
        let a = estimate_ankle(hip, knee, far, [(far, false), (far, false)]);
        assert!(a.distance(Vec2::new(100.0, 490.0)) < 0.5, "{a}");
    }

    /// The bare leg's outline: its width tapers thigh → ankle, its centre follows the
    /// person mask's outline, its edge is soft (partly covered pixels between the inside
    /// and the outside), and nothing is a leg above the hips.
    #[test]
    fn bare_legs_taper_follow_the_mask_and_have_soft_edges() {
        let legs = straight_legs();
        let (w, h) = (320u32, 600u32);
        // The left leg's shin drawn 6 px to the right of its keypoints.
        let mut mask = vec![0.0f32; (w * h) as usize];
        for y in 100..520u32 {
            for x in 0..w {
                let t = (y as f32 - 100.0) / 400.0;
                let half = 200.0 * leg_profile(t, 0.5);
                let shift = if y > 300 { 6.0 } else { 0.0 };
                let on =
                    ((x as f32 - 100.0 - shift).abs() < half) || ((x as f32 - 220.0).abs() < half);
                mask[(y * w + x) as usize] = if on { 1.0 } else { 0.0 };
            }
        }
        let bare = BareLegs::new(&legs, &mask, w, h);
        let width = |y: f32, x0: f32| {
            let xs: Vec<f32> = (0..200)
                .map(|i| x0 - 100.0 + i as f32)
                .filter(|x| {
                    bare.at(Vec2::new(*x, y))
                        .is_some_and(|o| o.side == 0 && o.cover > 0.5)
                })
                .collect();
            let lo = xs.iter().copied().fold(f32::MAX, f32::min);
            let hi = xs.iter().copied().fold(f32::MIN, f32::max);
            (hi - lo, 0.5 * (hi + lo))
        };
        let (thigh, _) = width(130.0, 100.0);
        let (knee, _) = width(300.0, 100.0);
        let (calf, calf_mid) = width(370.0, 100.0);
        let (ankle, _) = width(490.0, 100.0);
        assert!(thigh > knee + 10.0, "thigh {thigh}, knee {knee}");
        assert!(calf > knee, "calf {calf}, knee {knee}");
        assert!(knee > ankle + 10.0, "knee {knee}, ankle {ankle}");
        assert!(
            (calf_mid - 106.0).abs() < 2.5,
            "the calf's centre {calf_mid} follows the mask (106)"
        );
        // A soft edge: between fully covered and uncovered, partly covered pixels.
        let covers: Vec<f32> = (0..240)
            .map(|i| {
                bare.at(Vec2::new(106.0 + i as f32 * 0.25, 370.0))
                    .map_or(0.0, |o| o.cover)
            })
            .collect();
        assert!(covers.iter().any(|c| *c > 0.1 && *c < 0.9));
        assert!(covers[0] > 0.99 && *covers.last().unwrap_or(&1.0) < 0.01);
        assert!(bare.at(Vec2::new(100.0, 90.0)).is_none());
    }
}
