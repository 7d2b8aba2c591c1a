//! Earrings: one model, worn on each visible ear lobe (mirrored on the subject's right).
//!
//! The lobe ([`lobe_in_camera`]) lies [`LOBE_BELOW_CM`] under the face's side at the tragus
//! (landmarks 234 / 454, where the photo shows them), [`LOBE_BEHIND_CM`] behind it and
//! [`LOBE_OUT_CM`] outward, in the head's frame (so it turns with the head pose). An ear whose outward
//! direction turns away from the camera (more than [`HIDDEN_BEYOND_DEG`] past profile)
//! shows no earring; the head occluder hides whatever of the others passes behind the head.
//!
//! A stud is turned with the head, its front facing outward and forward
//! ([`EARRING_FACING`]); hoops and drops hang with gravity: their up axis is the photo's up,
//! their front the stud's front made horizontal.

use super::JewelPlacement;
use crate::math::{Vec2, Vec3};
use crate::scene::camera::HeadCamera;
use crate::scene::CameraMesh;
use crate::vision::head_pose::canonical_face;
use crate::vision::Face;

/// The lobe's piercing lies this far (cm) under landmark 234 / 454.
pub const LOBE_BELOW_CM: f32 = 2.3;
/// … this far (cm) behind it.
pub const LOBE_BEHIND_CM: f32 = 0.8;
/// … and this far (cm) outward.
pub const LOBE_OUT_CM: f32 = 0.2;
/// An ear turned more than this past profile (its outward direction away from the camera)
/// shows no earring.
pub const HIDDEN_BEYOND_DEG: f32 = 10.0;
/// The direction an earring's front faces, head frame, for the +X ear (x is mirrored on the
/// other): outward and forward.
pub const EARRING_FACING: [f32; 3] = [0.6, 0.0, 0.8];

/// The lobe's offset from the face's side at the tragus (landmark 234 for `side` < 0, the
/// template's −X side, the subject's right; 454 otherwise), head frame (cm).
pub fn lobe_offset(side: f32) -> Vec3 {
    Vec3::new(side.signum() * LOBE_OUT_CM, -LOBE_BELOW_CM, -LOBE_BEHIND_CM)
}

/// The lobe point of the `side` ear on the canonical head (head frame, cm).
pub fn lobe_point(side: f32) -> Option<Vec3> {
    let tragus = canonical_face().get(if side < 0.0 { 234 } else { 454 })?;
    Some(Vec3::from(*tragus) + lobe_offset(side))
}

/// The lobe of the `side` ear of `face` in camera space: the face's own landmark 234 / 454
/// where the photo shows it (at its depth relative to the nose bridge), plus
/// [`lobe_offset`] turned with the head. Anchoring on the landmark keeps the camera model's
/// assumptions (the focal length) out of all but the few centimetres of the offset.
pub fn lobe_in_camera(face: &Face, cam: &HeadCamera, side: f32) -> Option<Vec3> {
    let l = face.landmarks.get(if side < 0.0 { 234 } else { 454 })?;
    let bridge = face.landmarks.get(168)?;
    let depth = cam.focal() / cam.scale() + (l[2] - bridge[2]) / cam.scale();
    if depth.is_nan() || depth <= 1.0 {
        return None;
    }
    let tragus = cam.camera().unproject(Vec2::new(l[0], l[1]), depth);
    Some(tragus + cam.dir_to_camera(lobe_offset(side)))
}

/// One ear's outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct Ear {
    /// −1 for the template's −X ear (the subject's right), +1 for the other.
    pub side: f32,
    /// The lobe point, projected.
    pub lobe_px: [f32; 2],
    /// Whether the earring is drawn.
    pub visible: bool,
    /// How far the ear's outward direction is turned from the camera, degrees (90: profile).
    pub turned_deg: f32,
}

/// Places one earring model on both ears: appends the visible ones to `mesh` and returns
/// the ears. `hanging`: hoops and drops (gravity) rather than studs (turned with the head).
/// `place.origin`, `place.k`: the model's piercing point and asset units → cm.
pub fn place(
    face: &Face,
    cam: &HeadCamera,
    product: &crate::product::Product,
    place: &JewelPlacement,
    hanging: bool,
    mesh: &mut CameraMesh,
) -> Vec<Ear> {
    let mut ears = Vec::new();
    for side in [-1.0f32, 1.0] {
        let Some(lobe_cam) = lobe_in_camera(face, cam, side) else {
            continue;
        };
        let facing_head = Vec3::new(
            side * EARRING_FACING[0],
            EARRING_FACING[1],
            EARRING_FACING[2],
        )
        .normalize();
        let out_cam = cam.dir_to_camera(Vec3::new(side, 0.0, 0.0));
        let to_camera = (-lobe_cam).normalize_or(Vec3::NEG_Z);
        let turned_deg = out_cam.dot(to_camera).clamp(-1.0, 1.0).acos().to_degrees();
        let visible = turned_deg <= 90.0 + HIDDEN_BEYOND_DEG;
        ears.push(Ear {
            side,
            lobe_px: cam.project(lobe_cam).to_array(),
            visible,
            turned_deg,
        });
        if !visible {
            continue;
        }
        // The earring's frame in camera space: x, up, front.
        let (x_axis, up, front) = if hanging {
            let up = Vec3::new(0.0, -1.0, 0.0);
            let f = cam.dir_to_camera(facing_head);
            let f = (f - up * f.dot(up)).normalize_or(Vec3::NEG_Z);
            (up.cross(f), up, f)
        } else {
            let up = cam.dir_to_camera(Vec3::Y);
            let f = cam.dir_to_camera(facing_head);
            (up.cross(f), up, f)
        };
        // The model is worn as made on the +X ear and mirrored on the other.
        let mirror = if side < 0.0 { -1.0 } else { 1.0 };
        let base = mesh.triangles.len();
        mesh.push_product(product, |q, n| {
            let d = (q - place.origin) * place.k;
            let p = lobe_cam + x_axis * (mirror * d.x) + up * d.y + front * d.z;
            let nn = x_axis * (mirror * n.x) + up * n.y + front * n.z;
            (p, nn)
        });
        if mirror < 0.0 {
            // Mirroring flips the winding: restore it.
            for t in &mut mesh.triangles[base..] {
                t.swap(1, 2);
            }
        }
    }
    ears
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lobes_are_below_and_behind_the_tragus_on_both_sides() {
        let (l, r) = (lobe_point(-1.0).unwrap(), lobe_point(1.0).unwrap());
        let m = canonical_face();
        assert!(l.x < m[234][0] && r.x > m[454][0]);
        assert!(l.y < m[234][1] - 2.0 && l.z < m[234][2]);
        // Below the jaw corner's level (landmark 132) but not the chin's.
        assert!(l.y > m[152][1] && (l.y - m[132][1]).abs() < 1.0);
    }
}
