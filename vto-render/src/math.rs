//! The crate's 3D maths: `glam` (the maths crate of the wgpu ecosystem) re-exported, plus the
//! few helpers the scene stages share. Geometry in the scene, camera, product and try-on code
//! is written with these types; the head-pose solver keeps its own `f64` eigen-solver (Horn's
//! quaternion method needs a 4×4 symmetric eigenvector, which glam does not provide).

pub use glam::{DMat4, DVec4, Mat3, Vec2, Vec3};

/// `v` normalised, or `fallback` when `v` is (nearly) zero or not finite.
pub fn normalize_or(v: Vec3, fallback: Vec3) -> Vec3 {
    let l = v.length();
    if l > 1e-20 && l.is_finite() {
        v / l
    } else {
        fallback
    }
}

/// The image-plane distance between two landmarks (x, y; z ignored).
pub fn dist_xy(a: [f32; 3], b: [f32; 3]) -> f32 {
    Vec2::new(a[0] - b[0], a[1] - b[1]).length()
}

/// Solves the 4×4 linear system `a · x = b` (normal equations of small least-squares fits);
/// `None` when `a` is singular.
pub fn solve4(a: [[f64; 4]; 4], b: [f64; 4]) -> Option<[f64; 4]> {
    // glam matrices are column-major: the columns of `a` are its rows transposed.
    let m = DMat4::from_cols_array_2d(&a).transpose();
    let det = m.determinant();
    if !det.is_finite() || det.abs() < 1e-18 {
        return None;
    }
    let x = m.inverse() * DVec4::from_array(b);
    x.is_finite().then(|| x.to_array())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solve4_solves_and_refuses_singular_systems() {
        let a = [
            [4.0, 1.0, 0.0, 0.0],
            [1.0, 3.0, 1.0, 0.0],
            [0.0, 1.0, 2.0, 0.5],
            [0.0, 0.0, 0.5, 1.0],
        ];
        let x = [1.0, -2.0, 0.5, 3.0];
        let b = std::array::from_fn(|i| (0..4).map(|j| a[i][j] * x[j]).sum());
        let got = solve4(a, b).unwrap();
        for i in 0..4 {
            assert!((got[i] - x[i]).abs() < 1e-9, "{got:?}");
        }
        assert!(solve4([[1.0; 4]; 4], [1.0; 4]).is_none());
    }

    #[test]
    fn normalize_or_falls_back_on_zero() {
        assert_eq!(normalize_or(Vec3::ZERO, Vec3::Y), Vec3::Y);
        assert!((normalize_or(Vec3::new(3.0, 4.0, 0.0), Vec3::Y).length() - 1.0).abs() < 1e-6);
    }
}
