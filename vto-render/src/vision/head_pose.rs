//! Head pose: a similarity transform (rotation, translation, uniform scale) that carries
//! vto's rigid face template onto the 468 landmarks, solved in closed form (Horn's unit
//! quaternion method, which gives the same least-squares answer as Umeyama's SVD and never a
//! reflection).
//!
//! # Frames
//! - **Model frame** (the face template, `data/face_template.json`, made by
//!   `scripts/make_face_template.py` from MediaPipe 0.10.14's face mesh of a frontal photo):
//!   centimetres, origin at the centroid of the 468 points, +X from the right eye's outer
//!   corner (33) to the left one's (263), i.e. towards image right for a frontal face, +Y up
//!   (chin 152 → forehead 10), +Z out of the face towards the camera. The outer eye corners
//!   are 8.9 cm apart (adult biocular width, an anthropometric average): the scale of the
//!   metric frame rests on that assumption.
//! - **Pose frame**: image pixels with the y axis flipped so the frame is right-handed and
//!   matches the model's: +X right, +Y up, +Z towards the camera. A landmark `(x, y, z)` of
//!   [`super::face::Face`] (y down, z negative towards the camera) is `(x, -y, -z)` here.
//!
//! `pose_point = scale · rotation · model_point + translation`. The camera model is weak
//! perspective (orthographic plus scale): `scale` is pixels per centimetre at the face, and
//! `translation` is where the model origin lands (`[x, -y, z]` of an image pixel position).
//! A frontal, upright face has rotation ≈ identity; yaw > 0 turns the face towards image
//! right (the subject's left), pitch > 0 tilts the face down (the nose towards -Y), roll > 0
//! turns the face counter-clockwise on screen.

use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

#[derive(Deserialize)]
struct CanonicalDoc {
    vertices: Vec<[f32; 3]>,
}

/// The 468 face-template vertices (centimetres, model frame of the module docs).
pub fn canonical_face() -> &'static [[f32; 3]] {
    static FACE: OnceLock<Vec<[f32; 3]>> = OnceLock::new();
    FACE.get_or_init(|| {
        serde_json::from_str::<CanonicalDoc>(include_str!("../../data/face_template.json"))
            .map(|d| d.vertices)
            .unwrap_or_default()
    })
}

/// A head pose (see the module docs for the frames).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeadPose {
    /// Row-major 3×3 rotation from the model frame to the pose frame.
    pub rotation: [[f32; 3]; 3],
    /// Where the model origin lands, pose frame (pixels).
    pub translation: [f32; 3],
    /// Pixels per centimetre.
    pub scale: f32,
    /// Yaw, pitch, roll in degrees, with `rotation = Ry(yaw) · Rx(pitch) · Rz(roll)`.
    pub yaw_pitch_roll_deg: [f32; 3],
    /// Root-mean-square residual of the fit, in centimetres.
    pub rms_error_cm: f32,
}

/// Fits the face template to 468 landmarks given in image pixels (`x` right, `y` down, `z`
/// in pixel scale, negative towards the camera). `None` for a wrong count or a degenerate set.
pub fn estimate(landmarks: &[[f32; 3]]) -> Option<HeadPose> {
    let model = canonical_face();
    if landmarks.len() != model.len() || model.is_empty() {
        return None;
    }
    let target: Vec<[f64; 3]> = landmarks
        .iter()
        .map(|p| [f64::from(p[0]), -f64::from(p[1]), -f64::from(p[2])])
        .collect();
    let source: Vec<[f64; 3]> = model.iter().map(|p| p.map(f64::from)).collect();
    let (r, s, t, rms) = similarity(&source, &target)?;
    let rotation = r.map(|row| row.map(|v| v as f32));
    let pitch = (-r[1][2]).clamp(-1.0, 1.0).asin();
    let roll = r[1][0].atan2(r[1][1]);
    let yaw = r[0][2].atan2(r[2][2]);
    Some(HeadPose {
        rotation,
        translation: t.map(|v| v as f32),
        scale: s as f32,
        yaw_pitch_roll_deg: [yaw, pitch, roll].map(|a| a.to_degrees() as f32),
        rms_error_cm: (rms / s) as f32,
    })
}

type Mat3 = [[f64; 3]; 3];

fn mean(p: &[[f64; 3]]) -> [f64; 3] {
    let n = p.len() as f64;
    let mut m = [0.0; 3];
    for q in p {
        for k in 0..3 {
            m[k] += q[k] / n;
        }
    }
    m
}

/// Least-squares similarity `target ≈ s·R·source + t`; returns (R, s, t, rms residual).
pub(crate) fn similarity(
    source: &[[f64; 3]],
    target: &[[f64; 3]],
) -> Option<(Mat3, f64, [f64; 3], f64)> {
    let (ms, mt) = (mean(source), mean(target));
    let mut m = [[0.0f64; 3]; 3]; // Σ a bᵀ
    let mut var_s = 0.0;
    for (a, b) in source.iter().zip(target) {
        let a = [a[0] - ms[0], a[1] - ms[1], a[2] - ms[2]];
        let b = [b[0] - mt[0], b[1] - mt[1], b[2] - mt[2]];
        for i in 0..3 {
            for j in 0..3 {
                m[i][j] += a[i] * b[j];
            }
        }
        var_s += a[0] * a[0] + a[1] * a[1] + a[2] * a[2];
    }
    if var_s <= 0.0 || !var_s.is_finite() {
        return None;
    }
    let [[sxx, sxy, sxz], [syx, syy, syz], [szx, szy, szz]] = m;
    let n = [
        [sxx + syy + szz, syz - szy, szx - sxz, sxy - syx],
        [syz - szy, sxx - syy - szz, sxy + syx, szx + sxz],
        [szx - sxz, sxy + syx, -sxx + syy - szz, syz + szy],
        [sxy - syx, szx + sxz, syz + szy, -sxx - syy + szz],
    ];
    let q = top_eigenvector(n)?;
    let [w, x, y, z] = q;
    let r = [
        [
            w * w + x * x - y * y - z * z,
            2.0 * (x * y - w * z),
            2.0 * (x * z + w * y),
        ],
        [
            2.0 * (x * y + w * z),
            w * w - x * x + y * y - z * z,
            2.0 * (y * z - w * x),
        ],
        [
            2.0 * (x * z - w * y),
            2.0 * (y * z + w * x),
            w * w - x * x - y * y + z * z,
        ],
    ];
    let rot = |p: [f64; 3]| -> [f64; 3] {
        [
            r[0][0] * p[0] + r[0][1] * p[1] + r[0][2] * p[2],
            r[1][0] * p[0] + r[1][1] * p[1] + r[1][2] * p[2],
            r[2][0] * p[0] + r[2][1] * p[1] + r[2][2] * p[2],
        ]
    };
    let mut dot = 0.0;
    for (a, b) in source.iter().zip(target) {
        let ra = rot([a[0] - ms[0], a[1] - ms[1], a[2] - ms[2]]);
        dot += ra[0] * (b[0] - mt[0]) + ra[1] * (b[1] - mt[1]) + ra[2] * (b[2] - mt[2]);
    }
    let s = dot / var_s;
    if s.is_nan() || s <= 0.0 {
        return None;
    }
    let rms_ = rot(ms);
    let t = [
        mt[0] - s * rms_[0],
        mt[1] - s * rms_[1],
        mt[2] - s * rms_[2],
    ];
    let mut err = 0.0;
    for (a, b) in source.iter().zip(target) {
        let ra = rot(*a);
        for k in 0..3 {
            err += (s * ra[k] + t[k] - b[k]).powi(2);
        }
    }
    Some((r, s, t, (err / source.len() as f64).sqrt()))
}

/// The unit eigenvector of the largest eigenvalue of a symmetric 4×4 matrix.
fn top_eigenvector(a: [[f64; 4]; 4]) -> Option<[f64; 4]> {
    let (_, vectors) = crate::math::symmetric_eigen(a);
    let e = vectors[3];
    let norm = e.iter().map(|x| x * x).sum::<f64>().sqrt();
    if norm.is_nan() || norm <= 0.0 {
        return None;
    }
    Some(e.map(|x| x / norm))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_face_has_468_vertices() {
        assert_eq!(canonical_face().len(), 468);
    }

    #[test]
    fn recovers_a_known_similarity_transform() {
        let (yaw, pitch, roll) = (25f64.to_radians(), -10f64.to_radians(), 5f64.to_radians());
        let ry = [
            [yaw.cos(), 0.0, yaw.sin()],
            [0.0, 1.0, 0.0],
            [-yaw.sin(), 0.0, yaw.cos()],
        ];
        let rx = [
            [1.0, 0.0, 0.0],
            [0.0, pitch.cos(), -pitch.sin()],
            [0.0, pitch.sin(), pitch.cos()],
        ];
        let rz = [
            [roll.cos(), -roll.sin(), 0.0],
            [roll.sin(), roll.cos(), 0.0],
            [0.0, 0.0, 1.0],
        ];
        let mul = |a: Mat3, b: Mat3| {
            let mut c = [[0.0; 3]; 3];
            for i in 0..3 {
                for j in 0..3 {
                    c[i][j] = (0..3).map(|k| a[i][k] * b[k][j]).sum();
                }
            }
            c
        };
        let r = mul(ry, mul(rx, rz));
        let (s, t) = (12.0, [300.0, -200.0, 40.0]);
        // Landmarks in image pixels: pose frame (x, -y, -z).
        let landmarks: Vec<[f32; 3]> = canonical_face()
            .iter()
            .map(|p| {
                let p = p.map(f64::from);
                let q: Vec<f64> = (0..3)
                    .map(|i| s * (r[i][0] * p[0] + r[i][1] * p[1] + r[i][2] * p[2]) + t[i])
                    .collect();
                [q[0] as f32, -q[1] as f32, -q[2] as f32]
            })
            .collect();
        let pose = estimate(&landmarks).unwrap();
        assert!((pose.scale - 12.0).abs() < 1e-3, "{}", pose.scale);
        let [y, p, ro] = pose.yaw_pitch_roll_deg;
        assert!((y - 25.0).abs() < 1e-3 && (p + 10.0).abs() < 1e-3 && (ro - 5.0).abs() < 1e-3);
        assert!((pose.translation[0] - 300.0).abs() < 1e-2);
        assert!(pose.rms_error_cm < 1e-4);
        assert!(estimate(&landmarks[..10]).is_none());
    }
}
