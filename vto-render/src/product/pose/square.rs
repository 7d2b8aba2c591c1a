//! Squaring a product turned between the file's axes: a frame exported yawed by 45° (its
//! front along the X/Z diagonal) has no axis along its width, so no choice among the 24 axis
//! rotations ([`super::infer`]) can put it straight, and its diagonal box makes it look half
//! again as wide as it is.
//!
//! The rule: about the file's axis of the product's smallest extent (a frame is lower than
//! it is wide or deep, however it is turned about its vertical; a frame without temples is
//! shallowest front to back), the turn (within ±45°) whose bounding rectangle of the
//! product, seen along that axis, is smallest in area. A turn of at least [`MIN_TURN_DEG`]
//! whose rectangle is at most [`MAX_AREA_RATIO`] of the file's own is a product turned
//! between the axes, and it is turned back by that much before its up and front are read.
//! Other turns (a frame pitched about its width) are not squared: a frame seen from the side
//! is no box (drooping temples, a tilted front), so its smallest rectangle is no evidence. A product lying along the
//! file's axes (the glTF convention, or any of the 24 axis rotations of it) has its smallest
//! rectangle there, and is left alone. Rectangles are measured on the triangle centroids of
//! [`Cloud`], so the result is independent of units and origin.

use crate::math::{Mat3, Vec3};
use crate::product::Product;

use super::shape::Cloud;
use super::Dir;

/// The least turn (degrees) that is squared: below it the file's axes are kept.
pub const MIN_TURN_DEG: f32 = 5.0;
/// The squared rectangle must be at most this fraction of the file's: a footprint that
/// barely shrinks (a round product) is not taken for a turned one.
pub const MAX_AREA_RATIO: f32 = 0.85;

/// A turn about one of the file's axes that takes the product back onto its axes.
#[derive(Debug, Clone, PartialEq)]
pub struct Squaring {
    /// The file's axis it turns about (positive direction).
    pub axis: Dir,
    /// The turn (degrees, right-handed about `axis`) that squares the product.
    pub angle_deg: f32,
    /// The squared rectangle's area over the file's (at most [`MAX_AREA_RATIO`]).
    pub area_ratio: f32,
}

impl Squaring {
    /// The rotation (file frame → squared file frame).
    pub fn rotation(&self) -> Mat3 {
        Mat3::from_axis_angle(self.axis.vec(), self.angle_deg.to_radians())
    }

    /// Why, for the metadata.
    pub fn why(&self) -> String {
        format!(
            "the model lies turned {:.0}° about the file's {} axis: turned by that much, its \
             bounding rectangle is {:.0} % of the file's",
            -self.angle_deg,
            self.axis.as_str(),
            100.0 * self.area_ratio
        )
    }

    /// `product` turned by [`Squaring::rotation`].
    pub fn apply(&self, product: &Product) -> Product {
        super::turned(product, self.rotation())
    }
}

/// The area of the bounding rectangle of `points` turned by `angle` (radians) about `axis`.
fn area(points: &[Vec3], axis: usize, angle: f32) -> f32 {
    let (a, b) = ((axis + 1) % 3, (axis + 2) % 3);
    let (s, c) = angle.sin_cos();
    let (mut lo, mut hi) = ([f32::MAX; 2], [f32::MIN; 2]);
    for p in points {
        // Right-handed about `axis`: a → b.
        let q = [c * p[a] - s * p[b], s * p[a] + c * p[b]];
        for k in 0..2 {
            lo[k] = lo[k].min(q[k]);
            hi[k] = hi[k].max(q[k]);
        }
    }
    (hi[0] - lo[0]) * (hi[1] - lo[1])
}

/// The turn that squares `cloud` (see the module docs), `None` when it lies on its axes.
pub fn squaring(cloud: &Cloud) -> Option<Squaring> {
    let points = &cloud.c;
    if points.len() < 3 {
        return None;
    }
    let size = cloud.hi - cloud.lo;
    let axis = (0..3)
        .min_by(|a, b| size[*a].total_cmp(&size[*b]))
        .unwrap_or(1);
    let own = area(points, axis, 0.0);
    if own.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
        return None;
    }
    // Whole degrees over ±45°, then tenths around the best.
    let at = |deg: f32| area(points, axis, deg.to_radians());
    let coarse = (-45..45)
        .map(|d| d as f32)
        .min_by(|x, y| at(*x).total_cmp(&at(*y)))
        .unwrap_or(0.0);
    let fine = (-10..=10)
        .map(|t| coarse + t as f32 / 10.0)
        .min_by(|x, y| at(*x).total_cmp(&at(*y)))
        .unwrap_or(coarse);
    let ratio = at(fine) / own;
    (fine.abs() >= MIN_TURN_DEG && ratio <= MAX_AREA_RATIO).then(|| Squaring {
        axis: Dir::along(axis, 1.0),
        angle_deg: fine,
        area_ratio: ratio,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A U-shaped frame footprint: a 14 × 1 bar and two 1 × 13 temples behind it, in the
    /// X–Z plane, 4 high.
    fn frame() -> Vec<Vec3> {
        let mut out = Vec::new();
        for i in 0..=140 {
            let x = -7.0 + i as f32 / 10.0;
            for y in [0.0, 4.0] {
                out.push(Vec3::new(x, y, 0.0));
                out.push(Vec3::new(x, y, -1.0));
            }
        }
        for i in 0..=130 {
            let z = -i as f32 / 10.0;
            for x in [-7.0, -6.0, 6.0, 7.0] {
                out.push(Vec3::new(x, 2.0, z));
            }
        }
        out
    }

    fn cloud(points: Vec<Vec3>) -> Cloud {
        Cloud::of_points(points)
    }

    #[test]
    fn a_frame_turned_about_any_axis_is_turned_back_and_one_on_its_axes_is_left_alone() {
        assert_eq!(squaring(&cloud(frame())), None);
        for (axis, deg) in [(1usize, 45.0f32), (1, -30.0), (1, 12.0)] {
            let r = Mat3::from_axis_angle(Dir::along(axis, 1.0).vec(), deg.to_radians());
            let turned: Vec<Vec3> = frame().into_iter().map(|p| r * p).collect();
            let s = squaring(&cloud(turned.clone())).expect("turned between the axes");
            assert_eq!(s.axis.axis(), axis, "{axis} {deg}");
            // Back onto the axes: a multiple of 90° from undoing the turn exactly.
            let left = (s.angle_deg + deg).rem_euclid(90.0);
            assert!(left.min(90.0 - left) < 0.6, "{axis} {deg}: {s:?}");
            assert!(s.why().contains(s.axis.as_str()));
        }
        // A turn under MIN_TURN_DEG is kept as it is.
        let r = Mat3::from_rotation_y(3f32.to_radians());
        let slight: Vec<Vec3> = frame().into_iter().map(|p| r * p).collect();
        assert_eq!(squaring(&cloud(slight)), None);
        // A round footprint (a ring of points) is never squared.
        let ring: Vec<Vec3> = (0..360)
            .map(|d| {
                let t = (d as f32).to_radians();
                Vec3::new(5.0 * t.cos(), 0.3 * (d % 2) as f32, 5.0 * t.sin())
            })
            .collect();
        assert_eq!(squaring(&cloud(ring)), None);
    }
}
