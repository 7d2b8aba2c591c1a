//! The crate's 3D maths: `glam` (the maths crate of the wgpu ecosystem) re-exported, plus the
//! few helpers the scene stages share. Geometry in the scene, camera, product and try-on code
//! is written with these types, plus a small `f64` eigensolver for symmetric matrices
//! ([`symmetric_eigen`]: Horn's quaternion method in the head-pose solver needs a 4×4 one,
//! a band's principal axes a 3×3 one, and glam provides none).

pub use glam::{DMat4, DVec4, Mat3, Quat, Vec2, Vec3};

/// The eigenvalues (ascending) and unit eigenvectors (`vectors[i]` belongs to `values[i]`)
/// of the symmetric matrix `a`, by cyclic Jacobi rotations (at most 50 sweeps).
pub fn symmetric_eigen<const N: usize>(mut a: [[f64; N]; N]) -> ([f64; N], [[f64; N]; N]) {
    let mut v = [[0.0f64; N]; N];
    for (i, row) in v.iter_mut().enumerate() {
        row[i] = 1.0;
    }
    for _sweep in 0..50 {
        let off: f64 = (0..N)
            .flat_map(|i| (0..N).filter(move |&j| j != i).map(move |j| (i, j)))
            .map(|(i, j)| a[i][j] * a[i][j])
            .sum();
        if off < 1e-24 {
            break;
        }
        for p in 0..N {
            for q in p + 1..N {
                if a[p][q].abs() < 1e-300 {
                    continue;
                }
                let theta = (a[q][q] - a[p][p]) / (2.0 * a[p][q]);
                let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
                let t = if theta == 0.0 { 1.0 } else { t };
                let c = 1.0 / (t * t + 1.0).sqrt();
                let s = t * c;
                for row in a.iter_mut() {
                    let (akp, akq) = (row[p], row[q]);
                    row[p] = c * akp - s * akq;
                    row[q] = s * akp + c * akq;
                }
                let (rp, rq) = (a[p], a[q]);
                a[p] = std::array::from_fn(|k| c * rp[k] - s * rq[k]);
                a[q] = std::array::from_fn(|k| s * rp[k] + c * rq[k]);
                for row in v.iter_mut() {
                    let (vp, vq) = (row[p], row[q]);
                    row[p] = c * vp - s * vq;
                    row[q] = s * vp + c * vq;
                }
            }
        }
    }
    let mut order: [usize; N] = std::array::from_fn(|i| i);
    order.sort_by(|&i, &j| a[i][i].total_cmp(&a[j][j]));
    let values = order.map(|i| a[i][i]);
    let vectors = order.map(|i| {
        let e: [f64; N] = std::array::from_fn(|k| v[k][i]);
        let norm = e.iter().map(|x| x * x).sum::<f64>().sqrt();
        if norm > 0.0 {
            e.map(|x| x / norm)
        } else {
            e
        }
    });
    (values, vectors)
}

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
