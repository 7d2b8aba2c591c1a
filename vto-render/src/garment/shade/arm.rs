//! The arm a shorter sleeve uncovers: bare (painted as the person's own arm) or layered (the
//! old sleeve kept under the new one), decided per arm ([`ArmsMode`], [`ArmPlan::plan`]).
//!
//! A bare arm is painted from the photo, not as a flat tube:
//! - **Silhouette** ([`Silhouette`]): at stations along the arm's chain (shoulder → elbow →
//!   wrist) the old sleeve's edges are found in the person mask across the arm; the arm is
//!   centred between them and as wide as them, narrowed a little (a sleeve is wider than the
//!   arm in it) and kept between 0.65 and 1.05 of the anatomical radius, smoothed along the
//!   arm. Its outline then follows the person's, not a capsule's straight lines.
//! - **Tone**: the skin of the person's own hand on that arm (its median), else the face's:
//!   the arm joins the hand without a seam of colour.
//! - **Light and folds** ([`folds`]): the old sleeve's luminance, lightly low-passed (its
//!   weave goes, its folds stay) and divided by its mean over the sleeve, compressed
//!   (square root) and clamped, modulates the skin: the photo's light and the sleeve's
//!   folds carry over as the arm's shading.
//!
//! When a painted arm would not convince, the old sleeve stays under the new short sleeve
//! (*layered*, as a long-sleeved top worn under a tee): `auto` chooses it when the hand on
//! that arm shows too little skin to take the tone from (a glove, a hand out of the photo, a
//! pocket), when the forearm lies over the torso (the new garment's outline or the person's
//! own torso, shoulders to hips: an arm across the body, a hand on the belly — the person
//! mask has no outline for it there) or when the mask shows no edge along most of the arm.

use glam::Vec2;
use image::RgbaImage;

use crate::garment::body::frame::{Arm, BodyFrame};
use crate::garment::colour::median;
use crate::garment::geom::{inside, perp, seg_dist, smoothstep};
use crate::image_ops::box_blur;

/// What a new sleeve shorter than the old one does with the arm it uncovers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ArmsMode {
    /// Per arm: bare where a painted arm convinces, else layered (see the module docs).
    #[default]
    Auto,
    /// Always the bare arm, painted.
    Bare,
    /// Always the old sleeve kept under the new one.
    Layered,
}

impl ArmsMode {
    /// The mode's name: `auto`, `bare` or `layered`.
    pub fn as_str(self) -> &'static str {
        match self {
            ArmsMode::Auto => "auto",
            ArmsMode::Bare => "bare",
            ArmsMode::Layered => "layered",
        }
    }
}

impl std::str::FromStr for ArmsMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "auto" => Ok(ArmsMode::Auto),
            "bare" => Ok(ArmsMode::Bare),
            "layered" => Ok(ArmsMode::Layered),
            other => Err(format!(
                "arms must be \"auto\", \"bare\" or \"layered\", not {other:?}"
            )),
        }
    }
}

/// Stations measured along each arm for its [`Silhouette`].
const STATIONS: usize = 24;

/// The arm's outline along its chain: per station, the arc length from the shoulder, the
/// centre's offset across the chain and the half-width (pixels).
#[derive(Debug, Clone, Default)]
pub struct Silhouette {
    stations: Vec<(f32, f32, f32)>,
    chain: [Vec2; 3],
}

/// Where `p` lies along the chain shoulder → elbow → wrist: the arc length of its nearest
/// point and its signed distance across (positive to the chain's right).
fn arm_coords(chain: [Vec2; 3], p: Vec2) -> (f32, f32) {
    let [s, e, w] = chain;
    let (du, tu) = seg_dist(p, s, e);
    let (df, tf) = seg_dist(p, e, w);
    let (a, b, t, base) = if du <= df {
        (s, e, tu, 0.0)
    } else {
        (e, w, tf, s.distance(e))
    };
    let dir = (b - a).normalize_or_zero();
    let axis = a + (b - a) * t;
    (base + t * a.distance(b), (p - axis).dot(perp(dir)))
}

impl Silhouette {
    /// Measures the outline of `arm` in the person mask (`person`, `size`, whose top-left
    /// pixel is `offset` on the photo), `radius(t)` being the anatomical radius at the
    /// fraction `t` of the chain (0 shoulder, 1 wrist). Also returns the share of stations
    /// where the mask showed an edge on neither side.
    pub fn measure(
        arm: &Arm,
        person: &[f32],
        (w, h): (usize, usize),
        offset: Vec2,
        radius: impl Fn(f32) -> f32,
    ) -> (Silhouette, f32) {
        let [s, e, wr, _] = arm.chain;
        let (lu, lf) = (s.distance(e), e.distance(wr));
        let total = (lu + lf).max(1.0);
        let mask = |p: Vec2| {
            let q = p - offset;
            let (x, y) = (q.x.round(), q.y.round());
            if x < 0.0 || y < 0.0 || x as usize >= w || y as usize >= h {
                0.0
            } else {
                person[y as usize * w + x as usize]
            }
        };
        let mut stations = Vec::with_capacity(STATIONS + 1);
        let mut blind = 0usize;
        for k in 0..=STATIONS {
            let arc = total * k as f32 / STATIONS as f32;
            let (a, b, t) = if arc <= lu {
                (s, e, arc / lu.max(1.0))
            } else {
                (e, wr, (arc - lu) / lf.max(1.0))
            };
            let axis = a + (b - a) * t;
            let n = perp((b - a).normalize_or_zero());
            let r = radius(arc / total).max(2.0);
            let edge = |sign: f32| {
                let steps = (1.8 * r).ceil() as usize;
                (0..=steps)
                    .map(|j| j as f32)
                    .find(|&d| mask(axis + n * sign * d) < 0.5)
            };
            let (right, left) = (edge(1.0), edge(-1.0));
            let (centre, half) = match (left, right) {
                (Some(l), Some(rr)) => ((rr - l) * 0.5, (l + rr) * 0.5 * 0.85),
                (Some(l), None) => (0.9 * r - 0.85 * l, 0.9 * r),
                (None, Some(rr)) => (0.85 * rr - 0.9 * r, 0.9 * r),
                (None, None) => {
                    blind += 1;
                    (0.0, 0.9 * r)
                }
            };
            stations.push((
                arc,
                centre.clamp(-0.5 * r, 0.5 * r),
                half.clamp(0.65 * r, 1.05 * r),
            ));
        }
        // Smoothed along the arm: the mask's steps and a hand's bumps are not the arm.
        for _ in 0..2 {
            let prev = stations.clone();
            for k in 1..prev.len().saturating_sub(1) {
                stations[k].1 = (prev[k - 1].1 + 2.0 * prev[k].1 + prev[k + 1].1) * 0.25;
                stations[k].2 = (prev[k - 1].2 + 2.0 * prev[k].2 + prev[k + 1].2) * 0.25;
            }
        }
        (
            Silhouette {
                stations,
                chain: [s, e, wr],
            },
            blind as f32 / (STATIONS + 1) as f32,
        )
    }

    /// Where `p` lies across the arm: its distance from the arm's centre over its half-width
    /// (1 on the outline), signed (for the cylinder's light). `None` before measuring.
    pub fn across(&self, p: Vec2) -> Option<f32> {
        let first = self.stations.first()?;
        let last = self.stations.last()?;
        let (arc, s) = arm_coords(self.chain, p);
        let step = (last.0 - first.0) / (self.stations.len() - 1).max(1) as f32;
        let f = ((arc - first.0) / step.max(1e-3)).clamp(0.0, (self.stations.len() - 1) as f32);
        let k = (f.floor() as usize).min(self.stations.len() - 2);
        let t = f - k as f32;
        let (a, b) = (self.stations[k], self.stations[k + 1]);
        let centre = a.1 + (b.1 - a.1) * t;
        let half = a.2 + (b.2 - a.2) * t;
        Some((s - centre) / half.max(1.0))
    }
}

/// One arm's plan: layered or bare, why, and (bare) its tone and silhouette.
#[derive(Debug, Clone, Default)]
pub struct ArmPlan {
    /// The old sleeve stays under the new one.
    pub layered: bool,
    /// Why (for the metadata): `"bare"`, `"asked"`, `"no_hand_skin"`, `"over_torso"`,
    /// `"no_outline"`.
    pub reason: &'static str,
    /// The person's own skin on that arm's hand, when enough shows.
    pub tone: Option<[f32; 3]>,
    /// The arm's outline.
    pub shape: Silhouette,
}

/// What [`ArmPlan::plan`] looks at on the photo (a crop whose top-left pixel is `offset`).
#[derive(Debug, Clone, Copy)]
pub struct ArmView<'a> {
    /// The photo (crop).
    pub photo: &'a RgbaImage,
    /// The person mask over the crop.
    pub person: &'a [f32],
    /// How skin-like each pixel of the crop is.
    pub skin_p: &'a [f32],
    /// The crop's top-left pixel on the photo.
    pub offset: Vec2,
    /// The shoulders' width (pixels).
    pub shoulder_width: f32,
    /// The new garment torso's outline (photo coordinates).
    pub torso: &'a [Vec2],
    /// The body frame (the person's own torso: shoulders to hips).
    pub frame: &'a BodyFrame,
}

impl ArmPlan {
    /// Plans `arm` under `mode` (see the module docs); `radius(t)` is the anatomical radius
    /// at the fraction `t` of the chain.
    pub fn plan(
        mode: ArmsMode,
        arm: &Arm,
        v: &ArmView<'_>,
        radius: impl Fn(f32) -> f32,
    ) -> ArmPlan {
        let (w, h) = (v.photo.width() as usize, v.photo.height() as usize);
        let (shape, blind) = Silhouette::measure(arm, v.person, (w, h), v.offset, radius);
        let tone = hand_tone(arm, v);
        let [_, e, wr, _] = arm.chain;
        // Over the torso: inside the new garment's outline or the person's own torso
        // (between the shoulders' and the hips' lines, within 0.4 shoulder widths of its axis).
        let f = v.frame;
        let mid = (f.shoulder[0] + f.shoulder[1]) * 0.5;
        let depth = (f.hips - mid).dot(f.down).max(1.0);
        let on_torso = |p: Vec2| {
            let (d, s) = ((p - mid).dot(f.down), (p - mid).dot(f.across));
            inside(v.torso, p) || (d > 0.0 && d < 1.1 * depth && s.abs() < 0.4 * f.shoulder_width)
        };
        let over = (0..=8)
            .filter(|k| on_torso(e + (wr - e) * (*k as f32 / 8.0)))
            .count();
        let reason = match mode {
            ArmsMode::Bare => "bare",
            ArmsMode::Layered => "asked",
            ArmsMode::Auto if tone.is_none() => "no_hand_skin",
            ArmsMode::Auto if over > 4 => "over_torso",
            ArmsMode::Auto if blind > 0.6 => "no_outline",
            ArmsMode::Auto => "bare",
        };
        ArmPlan {
            layered: reason != "bare",
            reason,
            tone,
            shape,
        }
    }
}

/// The median of the skin-like pixels in the hand's capsule, when at least a few dozen show.
fn hand_tone(arm: &Arm, v: &ArmView<'_>) -> Option<[f32; 3]> {
    let (w, h) = (v.photo.width() as usize, v.photo.height() as usize);
    let [_, _, wr, hand] = arm.chain;
    let tip = hand + (hand - wr) * 0.6;
    let r = 0.14 * v.shoulder_width;
    let lo = (wr.min(tip) - Vec2::splat(r) - v.offset).max(Vec2::ZERO);
    let hi = (wr.max(tip) + Vec2::splat(r) - v.offset).min(Vec2::new(w as f32, h as f32));
    let raw = v.photo.as_raw();
    let mut cs = Vec::new();
    for y in lo.y as usize..hi.y.max(0.0) as usize {
        for x in lo.x as usize..hi.x.max(0.0) as usize {
            let i = y * w + x;
            let p = Vec2::new(x as f32, y as f32) + v.offset;
            if seg_dist(p, wr, tip).0 < r && v.skin_p[i] > 0.6 && v.person[i] > 0.5 {
                cs.push([0, 1, 2].map(|c| f32::from(raw[4 * i + c])));
            }
        }
    }
    let need = ((0.05 * v.shoulder_width).powi(2) as usize).max(30);
    if cs.len() < need {
        return None;
    }
    median(cs)
}

/// The old sleeve's light and folds as a luminance modulation per pixel of the crop: the
/// photo's luminance, low-passed over a radius of 1 % of the shoulders' width, over its mean
/// on each arm's `sleeve` pixels (`side[i]` the arm of pixel `i`), square-rooted and clamped
/// to 0.7–1.25; 1 where a pixel is on no sleeve.
pub fn folds(photo: &RgbaImage, sleeve: &[bool], side: &[u8], sw: f32) -> Vec<f32> {
    let (w, h) = (photo.width() as usize, photo.height() as usize);
    let raw = photo.as_raw();
    let luma: Vec<f32> = (0..w * h)
        .map(|i| {
            0.299 * f32::from(raw[4 * i])
                + 0.587 * f32::from(raw[4 * i + 1])
                + 0.114 * f32::from(raw[4 * i + 2])
        })
        .collect();
    let low = box_blur(&luma, w, h, ((0.01 * sw) as usize).max(1));
    let mut sum = [0.0f64; 2];
    let mut n = [0usize; 2];
    for i in 0..w * h {
        if sleeve[i] && side[i] < 2 {
            sum[side[i] as usize] += f64::from(low[i]);
            n[side[i] as usize] += 1;
        }
    }
    let mean = [0, 1].map(|k| (sum[k] / n[k].max(1) as f64) as f32);
    (0..w * h)
        .map(|i| {
            if !sleeve[i] || side[i] > 1 || mean[side[i] as usize] < 1.0 {
                return 1.0;
            }
            (low[i] / mean[side[i] as usize])
                .max(0.0)
                .sqrt()
                .clamp(0.7, 1.25)
        })
        .collect()
}

/// The fraction of the arm's edge softness: 1 inside the silhouette, 0 past its outline.
pub fn inside_outline(across: f32) -> f32 {
    1.0 - smoothstep(0.85, 1.08, across.abs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_silhouette_follows_an_off_centre_sleeve_in_the_mask() {
        // A vertical arm whose sleeve in the mask spans x 40..=70 while the chain runs at x 50.
        let (w, h) = (100usize, 120usize);
        let person: Vec<f32> = (0..w * h)
            .map(|i| {
                if (40..=70).contains(&(i % w)) {
                    1.0
                } else {
                    0.0
                }
            })
            .collect();
        let arm = Arm {
            chain: [
                Vec2::new(50.0, 10.0),
                Vec2::new(50.0, 60.0),
                Vec2::new(50.0, 110.0),
                Vec2::new(50.0, 118.0),
            ],
            visibility: 1.0,
        };
        let (shape, blind) = Silhouette::measure(&arm, &person, (w, h), Vec2::ZERO, |_| 14.0);
        assert_eq!(blind, 0.0);
        // The arm's centre sits at x 55.5 (between the edges), not at the chain's 50.
        let c = shape.across(Vec2::new(55.5, 60.0)).unwrap();
        assert!(c.abs() < 0.1, "{c}");
        assert!(shape.across(Vec2::new(42.0, 60.0)).unwrap().abs() > 0.9);
    }

    #[test]
    fn arms_mode_parses_its_three_names_and_refuses_others() {
        for m in [ArmsMode::Auto, ArmsMode::Bare, ArmsMode::Layered] {
            assert_eq!(m.as_str().parse::<ArmsMode>(), Ok(m));
        }
        assert!("sleeves".parse::<ArmsMode>().unwrap_err().contains("auto"));
    }
}
