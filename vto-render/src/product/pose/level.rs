//! Levelling a band (a ring, a bangle, a watch) exported tilted on all axes: its hole's
//! axis lies along no axis of the file, so no choice among the 24 axis rotations
//! ([`super::infer`]) puts the finger or the wrist through it, and the band is worn across
//! the wrist instead of round it.
//!
//! The hole's axis is the direction of least spread of the band's surface: the principal
//! axis with the smallest variance of the area-weighted triangle centroids (a loop spreads
//! round its hole, far less along its width). When it lies at least [`MIN_TILT_DEG`] from
//! every file axis, and is clearly the least (its variance at most [`MAX_SPREAD_RATIO`] of
//! the next), the band is turned by the shortest arc that takes it onto the nearest file
//! axis, then about that axis so that its second principal axis (toward the case or the
//! setting, which makes the loop longer one way) lies on a file axis too. The categories'
//! reading of up and front ([`super::shape`]) then runs on the levelled band.

use crate::math::{symmetric_eigen, Mat3, Quat, Vec3};

use super::shape::Cloud;
use super::Dir;
use crate::product::Product;

/// The least tilt (degrees) of the hole's axis from the nearest file axis that is levelled.
pub const MIN_TILT_DEG: f32 = 8.0;
/// The hole's axis must spread at most this fraction of the next principal axis.
pub const MAX_SPREAD_RATIO: f32 = 0.5;

/// A turn that takes a band's hole's axis onto a file axis.
#[derive(Debug, Clone, PartialEq)]
pub struct Levelling {
    /// The hole's axis in the file's frame (unit).
    pub axis: Vec3,
    /// The file axis it is turned onto.
    pub onto: Dir,
    /// The rotation (file frame → levelled file frame).
    pub rotation: Mat3,
    /// The tilt undone (degrees between `axis` and `onto`).
    pub tilt_deg: f32,
}

impl Levelling {
    /// Why, for the metadata.
    pub fn why(&self) -> String {
        format!(
            "the band's hole runs along ({:.2}, {:.2}, {:.2}) in the file, {:.0}° from its {} \
             axis: the band was turned onto it",
            self.axis.x,
            self.axis.y,
            self.axis.z,
            self.tilt_deg,
            self.onto.as_str()
        )
    }
}

impl Levelling {
    /// `product` turned by [`Levelling::rotation`].
    pub fn apply(&self, product: &Product) -> Product {
        super::turned(product, self.rotation)
    }
}

/// The file axis nearest `d` (either sign) and the angle (degrees) between them.
fn nearest_axis(d: Vec3) -> (Dir, f32) {
    let axis = (0..3)
        .max_by(|&a, &b| d[a].abs().total_cmp(&d[b].abs()))
        .unwrap_or(1);
    let dir = Dir::along(axis, d[axis]);
    let cos = d.dot(dir.vec()).clamp(-1.0, 1.0);
    (dir, cos.acos().to_degrees())
}

/// The turn that levels the band `cloud` (see the module docs), `None` when its hole's
/// axis already lies along a file axis or is not clear.
pub fn levelling(cloud: &Cloud) -> Option<Levelling> {
    let total: f64 = cloud.a.iter().map(|a| f64::from(*a)).sum();
    if cloud.c.len() < 6 || total <= 0.0 {
        return None;
    }
    let mean = cloud.c.iter().zip(&cloud.a).fold([0.0f64; 3], |m, (p, a)| {
        let w = f64::from(*a) / total;
        [
            m[0] + w * f64::from(p.x),
            m[1] + w * f64::from(p.y),
            m[2] + w * f64::from(p.z),
        ]
    });
    let mut cov = [[0.0f64; 3]; 3];
    for (p, a) in cloud.c.iter().zip(&cloud.a) {
        let w = f64::from(*a) / total;
        let d = [
            f64::from(p.x) - mean[0],
            f64::from(p.y) - mean[1],
            f64::from(p.z) - mean[2],
        ];
        for (i, row) in cov.iter_mut().enumerate() {
            for (j, c) in row.iter_mut().enumerate() {
                *c += w * d[i] * d[j];
            }
        }
    }
    let (values, vectors) = symmetric_eigen(cov);
    if values[1] <= 0.0 || values[0] > f64::from(MAX_SPREAD_RATIO) * values[1] {
        return None;
    }
    let vec = |v: [f64; 3]| Vec3::new(v[0] as f32, v[1] as f32, v[2] as f32).normalize_or_zero();
    let axis = vec(vectors[0]);
    let (onto, tilt) = nearest_axis(axis);
    if tilt < MIN_TILT_DEG {
        return None;
    }
    let arc = Mat3::from_quat(Quat::from_rotation_arc(axis, onto.vec()));
    // Then about `onto`: the second principal axis onto the nearest file axis across it.
    let second = arc * vec(vectors[1]);
    let across = second - onto.vec() * second.dot(onto.vec());
    let turn = if across.length() > 1e-6 {
        let across = across.normalize();
        let candidates = (0..3).filter(|&a| a != onto.axis());
        let target = candidates
            .map(|a| Dir::along(a, across[a]))
            .max_by(|x, y| across.dot(x.vec()).total_cmp(&across.dot(y.vec())))
            .unwrap_or(onto);
        Mat3::from_quat(Quat::from_rotation_arc(across, target.vec()))
    } else {
        Mat3::IDENTITY
    };
    Some(Levelling {
        axis,
        onto,
        rotation: turn * arc,
        tilt_deg: tilt,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A watch: a loop of radius 3 and width 2 round +Y, and a case (a 4 × 1 × 4 block)
    /// on its +Z side.
    fn watch() -> Vec<Vec3> {
        let mut out = Vec::new();
        for d in 0..360 {
            let t = (d as f32).to_radians();
            for w in [-1.0, 0.0, 1.0] {
                out.push(Vec3::new(3.0 * t.sin(), w, 3.0 * t.cos()));
            }
        }
        for i in 0..=8 {
            for j in 0..=8 {
                let (x, y) = (-2.0 + i as f32 / 2.0, -2.0 + j as f32 / 2.0);
                out.push(Vec3::new(x, y, 3.5));
                out.push(Vec3::new(x, y, 3.0));
            }
        }
        out
    }

    fn cloud(points: Vec<Vec3>) -> Cloud {
        Cloud::of_points(points)
    }

    #[test]
    fn the_eigensolver_finds_the_axes_of_a_turned_diagonal_matrix() {
        let r = Mat3::from_euler(glam::EulerRot::XYZ, 0.4, -0.7, 1.1);
        let m = r * Mat3::from_diagonal(Vec3::new(5.0, 1.0, 3.0)) * r.transpose();
        let a = m.to_cols_array_2d();
        let m64 = [0, 1, 2].map(|i| [0, 1, 2].map(|j| f64::from(a[j][i])));
        let (values, vectors) = symmetric_eigen(m64);
        assert!((values[0] - 1.0).abs() < 1e-4 && (values[2] - 5.0).abs() < 1e-4);
        let least = Vec3::new(
            vectors[0][0] as f32,
            vectors[0][1] as f32,
            vectors[0][2] as f32,
        );
        assert!(least.dot(r * Vec3::Y).abs() > 0.9999, "{least:?}");
    }

    #[test]
    fn a_watch_tilted_on_all_axes_is_levelled_and_one_on_its_axes_is_left_alone() {
        assert_eq!(levelling(&cloud(watch())), None);
        for (x, y, z) in [(0.5f32, 0.3, -0.8), (-1.0, 0.9, 0.2), (0.25, -0.35, 0.6)] {
            let r = Mat3::from_euler(glam::EulerRot::XYZ, x, y, z);
            let tilted: Vec<Vec3> = watch().into_iter().map(|p| r * p).collect();
            let l = levelling(&cloud(tilted.clone())).expect("tilted between the axes");
            // The wrist's direction (+Y of the watch) ends on a file axis, and so does the
            // case's (+Z): the levelled watch is one of the 24 axis rotations of the original.
            let back = l.rotation * r;
            for v in [Vec3::Y, Vec3::Z] {
                let (_, off) = nearest_axis(back * v);
                assert!(off < 2.0, "{x} {y} {z}: {v} lands {off:.1}° off an axis");
            }
            assert!(l.why().contains(l.onto.as_str()));
        }
    }
}
