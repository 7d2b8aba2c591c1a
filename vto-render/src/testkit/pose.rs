//! The poses a subject stands in: local bone rotations (rest frame) of the MakeHuman rig.

use std::collections::HashMap;

use glam::{EulerRot, Quat, Vec3};

use super::body::BaseBody;

/// A subject's pose and view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pose {
    /// Standing, facing the camera, arms down about 20° from the body.
    Front,
    /// A walking stance: the left foot ahead, the right pushing off, arms swinging.
    Walking,
    /// Standing as in [`Pose::Front`], turned about 35° towards the image's left.
    ThreeQuarter,
    /// Weight on the right leg, the left knee bent and the foot out, shoulders countering the
    /// hips, the head tilted.
    Contrapposto,
}

impl Pose {
    /// Every pose.
    pub const ALL: [Pose; 4] = [
        Pose::Front,
        Pose::Walking,
        Pose::ThreeQuarter,
        Pose::Contrapposto,
    ];

    /// A short name (file names, reports).
    pub fn name(self) -> &'static str {
        match self {
            Pose::Front => "front",
            Pose::Walking => "walking",
            Pose::ThreeQuarter => "three_quarter",
            Pose::Contrapposto => "contrapposto",
        }
    }

    /// The body's turn about the vertical axis (radians, positive turns the person's front
    /// towards the image's left).
    pub fn yaw(self) -> f32 {
        match self {
            Pose::ThreeQuarter => (-35f32).to_radians(),
            Pose::Walking => (-8f32).to_radians(),
            _ => 0.0,
        }
    }
}

/// Rotation (degrees) about the rest frame's x (left), y (up), z (forward) axes.
fn rot(x: f32, y: f32, z: f32) -> Quat {
    Quat::from_euler(
        EulerRot::ZYX,
        z.to_radians(),
        y.to_radians(),
        x.to_radians(),
    )
}

/// Local rotations of `pose` for `body`.
pub fn rotations(body: &BaseBody, pose: Pose) -> HashMap<usize, Quat> {
    let mut r: Vec<(&str, Quat)> = Vec::new();
    // Arms: from the rest A-pose (≈ 45° from the body) down to `down`° in the frontal plane.
    let arm = |side: &str, down: f32, swing: f32| -> Quat {
        let s = if side == "L" { 1.0 } else { -1.0 };
        let sh = body.head(&format!("upperarm01.{side}"));
        let el = body.head(&format!("lowerarm01.{side}"));
        let from = (el - sh).normalize_or_zero();
        let a = down.to_radians();
        let to = Vec3::new(s * a.sin(), -a.cos(), 0.0).normalize();
        rot(swing, 0.0, 0.0) * Quat::from_rotation_arc(from, to)
    };
    // Elbow flexion: the forearm turns forward about the upper arm's rest hinge.
    let bend = |side: &str, deg: f32| -> Quat {
        let sh = body.head(&format!("upperarm01.{side}"));
        let el = body.head(&format!("lowerarm01.{side}"));
        let axis = (el - sh).cross(Vec3::Z).normalize_or(Vec3::X);
        Quat::from_axis_angle(axis, deg.to_radians())
    };
    match pose {
        Pose::Front | Pose::ThreeQuarter => {
            r.push(("upperarm01.L", arm("L", 20.0, 0.0)));
            r.push(("upperarm01.R", arm("R", 20.0, 0.0)));
            r.push(("upperleg01.L", rot(0.0, 0.0, -4.0)));
            r.push(("upperleg01.R", rot(0.0, 0.0, 4.0)));
        }
        Pose::Walking => {
            r.push(("upperarm01.L", arm("L", 14.0, 14.0)));
            r.push(("upperarm01.R", arm("R", 14.0, -16.0)));
            r.push(("lowerarm01.R", bend("R", 20.0)));
            r.push(("upperleg01.L", rot(-20.0, 0.0, -3.0)));
            r.push(("lowerleg01.L", rot(8.0, 0.0, 0.0)));
            r.push(("foot.L", rot(4.0, 0.0, 0.0)));
            r.push(("upperleg01.R", rot(14.0, 0.0, 3.0)));
            r.push(("lowerleg01.R", rot(20.0, 0.0, 0.0)));
            r.push(("foot.R", rot(-14.0, 0.0, 0.0)));
        }
        Pose::Contrapposto => {
            r.push(("upperarm01.L", arm("L", 24.0, -6.0)));
            r.push(("lowerarm01.L", bend("L", 35.0)));
            r.push(("upperarm01.R", arm("R", 16.0, 4.0)));
            r.push(("spine05", rot(0.0, 0.0, -3.0)));
            r.push(("upperleg01.R", rot(0.0, 0.0, 3.0)));
            r.push(("upperleg01.L", rot(-8.0, -10.0, 4.0)));
            r.push(("lowerleg01.L", rot(18.0, 0.0, 0.0)));
            r.push(("foot.L", rot(-6.0, 0.0, -6.0)));
            r.push(("spine02", rot(0.0, 0.0, 4.0)));
            r.push(("neck01", rot(0.0, 6.0, -5.0)));
        }
    }
    r.into_iter()
        .filter_map(|(name, q)| Some((body.bone(name)?, q)))
        .collect()
}
