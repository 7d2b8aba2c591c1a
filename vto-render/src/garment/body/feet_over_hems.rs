//! The feet kept in front of a lower garment's hems, and the old lower garment's colour
//! ([`Feet`]), told apart by colour: the old garment's colour is measured on the thighs, the
//! shoes' in each foot's capsule heel → toe; when the two differ, the pixels around a foot
//! that are not the old garment's colour are the foot (a pose keypoint a few pixels off
//! neither cuts the shoe nor leaves a bit of the old trouser cuff above it).

use glam::Vec2;
use image::RgbaImage;

use crate::garment::body::legs::{on_foot, Legs};
use crate::garment::colour::{luma, median, skin_likeness};
use crate::garment::geom::smoothstep;

/// How much colour `c` looks like a garment of colour `g` (0–1), tolerant of shading: the
/// chromaticity must match (a small offset keeps near-black stable) and the luminance lie
/// within about half to twice the garment's. A very dark garment's chromaticity is mostly
/// JPEG noise: below a luma of [`DARK_LUMA`] the chromaticity may stray up to three times
/// as far (navy jeans measured (13, 13, 29) on the thighs are (14, 11, 18) on the calves).
pub fn garment_likeness(c: [f32; 3], g: [f32; 3]) -> f32 {
    let chroma = |v: [f32; 3]| {
        let s = v[0] + v[1] + v[2] + 30.0;
        [(v[0] + 10.0) / s, (v[1] + 10.0) / s, (v[2] + 10.0) / s]
    };
    let (a, b) = (chroma(c), chroma(g));
    let dc = ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt();
    let r = (luma(c) + 4.0) / (luma(g) + 4.0);
    let slack = 1.0 + 2.0 * (1.0 - smoothstep(0.5 * DARK_LUMA, DARK_LUMA, luma(g)));
    (1.0 - smoothstep(0.035 * slack, 0.07 * slack, dc))
        * smoothstep(0.4, 0.55, r)
        * (1.0 - smoothstep(1.7, 2.2, r))
}

/// A garment darker than this luma (0–255) has its chromaticity judged loosely
/// ([`garment_likeness`]).
pub const DARK_LUMA: f32 = 30.0;

pub(crate) fn pixel(photo: &RgbaImage, p: Vec2) -> Option<[f32; 3]> {
    let (x, y) = (p.x.round() as i64, p.y.round() as i64);
    if x < 0 || y < 0 || x >= i64::from(photo.width()) || y >= i64::from(photo.height()) {
        return None;
    }
    let c = photo.get_pixel(x as u32, y as u32).0;
    Some([f32::from(c[0]), f32::from(c[1]), f32::from(c[2])])
}

/// Points on each foot: along heel → toe and a little either side.
pub(crate) fn foot_points(legs: &Legs) -> Vec<Vec2> {
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
        // Very dark: the chromaticity strays with the JPEG's noise, not a dark red edge.
        let jeans = [13.0, 13.0, 29.0];
        assert!(garment_likeness([14.0, 11.0, 18.0], jeans) > 0.9);
        assert!(garment_likeness([38.0, 3.0, 9.0], jeans) < 0.1);
        assert!(garment_likeness([63.0, 60.0, 52.0], jeans) < 0.1);
    }
}
